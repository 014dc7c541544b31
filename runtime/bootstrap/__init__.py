"""Building and running a worker process, for either mode: `run()` is what the CLI calls.

startup.py holds the steps both modes take (worker file, logging, Kafka, REST listeners, process tuning),
worker_runtime.py the order a worker's parts are built and stopped in, standalone.py and distributed.py what
each mode adds (its checks, its stores and herder)."""
from __future__ import annotations

import logging
import sys
from pathlib import Path

from ..connector_files import ConnectorFileError, ConnectorRequest, parse_connector_file
from .startup import StartupError, load_worker_config

log = logging.getLogger("runtime.bootstrap")

__all__ = ["StartupError", "run"]


def run(mode: str, worker_file: Path, connector_files: list[Path]) -> int:
    """Run a worker of `mode` ("standalone" or "distributed") until SIGTERM/SIGINT; StartupError when it
    cannot start (its code is the exit code)."""
    if mode == "distributed":
        return _run_distributed(worker_file)
    return _run_standalone(worker_file, connector_files)


def _run_standalone(worker_file: Path, connector_files: list[Path]) -> int:
    from .standalone import StandaloneRuntime
    from .worker_runtime import run_worker

    config = load_worker_config(worker_file)
    return run_worker(StandaloneRuntime(config, _connector_requests(connector_files)))


def _connector_requests(paths: list[Path]) -> list[ConnectorRequest]:
    requests = []
    names: set[str] = set()
    for path in paths:
        try:
            request = parse_connector_file(path)
        except ConnectorFileError as exc:
            raise StartupError(str(exc), 3) from None
        if request.name in names:
            raise StartupError(f"Connector {request.name} is defined twice on the command line (again in '{path}')", 3)
        names.add(request.name)
        requests.append(request)
    return requests


def _run_distributed(worker_file: Path) -> int:
    """As standalone, but any failure, not only a StartupError, is reported as exit code 2 (a distributed
    worker's failure to start is usually a cluster problem worth one line, not a traceback)."""
    from .distributed import DistributedRuntime
    from .worker_runtime import run_worker

    try:
        return run_worker(DistributedRuntime(load_worker_config(worker_file)))
    except StartupError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever stops the worker, say so in its log
        log.exception("The worker stopped on an unexpected error")
        print(f"connect-runtime: {exc}", file=sys.stderr)
        return 2
