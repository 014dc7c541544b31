"""Building and running a worker process, for either mode: `run()` is what the CLI calls.

startup.py holds the steps both modes take (worker file, logging, Kafka, REST listeners, process tuning),
worker_runtime.py the order a worker's parts are built and stopped in, standalone.py and distributed.py what
each mode adds (its checks, its stores and herder)."""

from __future__ import annotations

import logging
from pathlib import Path

from ..connector_files import ConnectorFileError, ConnectorRequest, parse_connector_file
from .startup import StartupError, load_worker_config

log = logging.getLogger("runtime.bootstrap")

__all__ = ["StartupError", "run"]


def run(mode: str, worker_file: Path, connector_files: list[Path]) -> int:
    """Run a worker of `mode` ("standalone" or "distributed") until SIGTERM/SIGINT; StartupError when it
    cannot start (its code is the exit code).

    Any other failure is a StartupError with exit code 2 in both modes, as the reference's CLI ("Stopping
    due to error", Exit.exit(2)); the message names the error in one line, the traceback is logged at
    DEBUG."""
    try:
        if mode == "distributed":
            return _run_distributed(worker_file)
        return _run_standalone(worker_file, connector_files)
    except StartupError:
        raise
    except Exception as exc:
        log.debug("The worker stopped on an unexpected error", exc_info=True)
        raise StartupError(f"Stopping due to error: {type(exc).__name__}: {exc}", 2) from None


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
    from .distributed import DistributedRuntime
    from .worker_runtime import run_worker

    return run_worker(DistributedRuntime(load_worker_config(worker_file)))
