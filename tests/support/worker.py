"""Run a real worker process (`python -m runtime.cli ...`) for black-box tests."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx

from runtime.embedded_broker import free_port

from .process import ServiceProcess

REPO_ROOT = Path(__file__).resolve().parents[2]


def write_properties(path: Path, props: dict[str, Any]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


class WorkerProcess(ServiceProcess):
    """A worker in its own process: `start()`, `.url`, `.client`, `stop()`, `kill()` (SIGKILL)."""

    def __init__(
        self,
        workdir: Path,
        bootstrap_servers: str | None,
        props: dict[str, Any] | None = None,
        connector_files: Iterable[Path] = (),
        mode: str = "standalone",
        port: int | None = None,
    ) -> None:
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        super().__init__(self.workdir / f"worker-{self.port}.log")
        self.mode = mode
        defaults: dict[str, Any] = {
            "listeners": f"http://127.0.0.1:{self.port}",
            "offset.storage.file.filename": str(self.workdir / "connect.offsets"),
            "offset.flush.interval.ms": 1000,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            # Sink tasks' consumer groups: on Tansu a group's join takes about session.timeout.ms / 2, and every
            # sink start, restart and move joins. librdkafka heartbeats from its own thread, so a busy worker
            # keeps its session; fault tests that need longer set their own.
            "consumer.session.timeout.ms": 3000,
            "consumer.heartbeat.interval.ms": 500,
        }
        if bootstrap_servers:
            defaults["bootstrap.servers"] = bootstrap_servers
        self.props = {**defaults, **(props or {})}
        self.connector_files = [Path(p) for p in connector_files]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30)

    def start(self, timeout_s: float = 60.0, wait_healthy: bool = True) -> WorkerProcess:
        props_file = write_properties(self.workdir / "worker.properties", self.props)
        self.launch(
            [sys.executable, "-m", "runtime.cli", self.mode, str(props_file), *map(str, self.connector_files)],
            self.url + ("/health" if wait_healthy else "/"),
            timeout_s,
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            what="worker",
        )
        return self

    def __enter__(self) -> WorkerProcess:
        return self.start()

    def describe(self, connectors: Iterable[str], log_lines: int = 80) -> str:
        """The connectors' statuses (or why the worker gave none) and the log's tail: for a failure's message."""
        parts = []
        for name in connectors:
            try:
                shown: Any = httpx.get(f"{self.url}/connectors/{name}/status", timeout=10).json()
            except (httpx.HTTPError, ValueError) as exc:
                shown = f"no answer: {type(exc).__name__}: {exc}"
            parts.append(f"GET /connectors/{name}/status: {shown}")
        parts.append(f"--- the worker's log ({self.log_path}), last {log_lines} lines:\n{self.log_tail(log_lines)}")
        return "\n".join(parts)


def wait_for(predicate, timeout_s: float = 30.0, interval_s: float = 0.1, what: str = "condition") -> Any:
    """Poll `predicate` until it returns a truthy value; return it, or fail after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except Exception as exc:  # noqa: BLE001 - keep polling through transient errors
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(interval_s)  # the poll interval: what the tests wait on is `predicate`, never time
    raise AssertionError(f"timed out after {timeout_s}s waiting for {what}; last: {last!r}")


def connector_json(path: Path, name: str, config: dict[str, Any], initial_state: str | None = None) -> Path:
    body: dict[str, Any] = {"name": name, "config": config}
    if initial_state:
        body["initial_state"] = initial_state
    path.write_text(json.dumps(body))
    return path
