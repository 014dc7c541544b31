"""`connect-runtime standalone WORKER.properties [CONNECTOR ...]` or `connect-runtime distributed
WORKER.properties`: parses the command line and runs the worker (runtime/bootstrap).

Exit codes: 0 after a clean shutdown, 1 for usage errors, 2 when the worker cannot start (bad worker
file, unreachable Kafka) or stops on any other error, in both modes, 3 when a connector file cannot be
applied (as the reference's CLI). Each is one ERROR line naming what is wrong.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from .bootstrap import StartupError, run
from .bootstrap.startup import cap_malloc_arenas

USAGE = "connect-runtime standalone WORKER.properties [CONNECTOR.properties|CONNECTOR.json ...]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="connect-runtime", usage=USAGE, description="Run a Kafka Connect worker written in Python."
    )
    parser.add_argument("mode", choices=["standalone", "distributed"])
    parser.add_argument("worker_properties", type=Path)
    parser.add_argument("connectors", type=Path, nargs="*")
    argv = sys.argv[1:] if argv is None else argv
    cap_malloc_arenas()
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help()
        return 1
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 1 if exc.code else 0
    try:
        if args.mode == "distributed" and args.connectors:
            raise StartupError("Distributed workers take no connector files: create connectors over REST", 1)
        return run(args.mode, args.worker_properties, args.connectors)
    except StartupError as exc:
        logging.getLogger("runtime.cli").error("%s", exc)
        print(f"connect-runtime: {exc}", file=sys.stderr)
        return exc.code


if __name__ == "__main__":
    sys.exit(main())
