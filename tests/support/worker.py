"""Run a real worker process (`python -m runtime.cli ...`) for black-box tests."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterable

import httpx

from runtime.embedded_broker import free_port

REPO_ROOT = Path(__file__).resolve().parents[2]


def write_properties(path: Path, props: dict[str, Any]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


class WorkerProcess:
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
        self.mode = mode
        defaults: dict[str, Any] = {
            "listeners": f"http://127.0.0.1:{self.port}",
            "offset.storage.file.filename": str(self.workdir / "connect.offsets"),
            "offset.flush.interval.ms": 1000,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "consumer.session.timeout.ms": 6000,
        }
        if bootstrap_servers:
            defaults["bootstrap.servers"] = bootstrap_servers
        self.props = {**defaults, **(props or {})}
        self.connector_files = [Path(p) for p in connector_files]
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = self.workdir / f"worker-{self.port}.log"
        self._log = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30)

    def start(self, timeout_s: float = 60.0, wait_healthy: bool = True) -> "WorkerProcess":
        props_file = write_properties(self.workdir / "worker.properties", self.props)
        self._log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "runtime.cli", self.mode, str(props_file), *map(str, self.connector_files)],
            cwd=REPO_ROOT, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"worker exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                response = httpx.get(self.url + ("/health" if wait_healthy else "/"), timeout=15)
                if response.status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"worker did not become ready in {timeout_s}s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, timeout_s: float = 30.0) -> int | None:
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        code = self.process.returncode
        self.process = None
        if self._log:
            self._log.close()
            self._log = None
        return code

    def kill(self) -> None:
        """SIGKILL: no shutdown hooks, no final flush (crash-safety tests)."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None
        if self._log:
            self._log.close()
            self._log = None

    def __enter__(self) -> "WorkerProcess":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


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
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s}s waiting for {what}; last: {last!r}")


def connector_json(path: Path, name: str, config: dict[str, Any], initial_state: str | None = None) -> Path:
    body: dict[str, Any] = {"name": name, "config": config}
    if initial_state:
        body["initial_state"] = initial_state
    path.write_text(json.dumps(body))
    return path
