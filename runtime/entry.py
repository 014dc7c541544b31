"""The `connect-runtime` console script: checks that the worker runtime's dependencies are installed (they
come with the `runtime` extra; the base install is the Airflow provider alone), then runs the CLI."""

from __future__ import annotations

import sys
from importlib.util import find_spec

# import name -> distribution, for the message
RUNTIME_MODULES = {
    "confluent_kafka": "confluent-kafka",
    "fastapi": "fastapi",
    "uvicorn": "uvicorn",
    "pydantic": "pydantic",
    "orjson": "orjson",
    "fastavro": "fastavro",
    "prometheus_client": "prometheus-client",
    "kafka": "kafka-python",
}


def missing_runtime_dependencies() -> list[str]:
    return [dist for module, dist in RUNTIME_MODULES.items() if find_spec(module) is None]


def main(argv: list[str] | None = None) -> int:
    missing = missing_runtime_dependencies()
    if missing:
        print(
            f"connect-runtime: the worker runtime is not installed (missing {', '.join(missing)}); install it "
            "with: pip install 'airflow-provider-connect[runtime]'",
            file=sys.stderr,
        )
        return 2
    from .cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
