"""A real Prometheus server (Debian's `prometheus` package) on loopback, scraping given targets every second."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import httpx

from runtime.embedded_broker import free_port

from .env import require
from .process import ServiceProcess


class PrometheusServer(ServiceProcess):
    """`start()`, `.url`, `query(promql)` (the instant vector's samples), `stop()`."""

    def __init__(self, workdir: Path, targets: list[str], metrics_path: str = "/metrics") -> None:
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        super().__init__(self.workdir / "prometheus.log")
        self.port = free_port()
        self.targets = targets
        self.metrics_path = metrics_path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 60.0) -> PrometheusServer:
        binary = shutil.which("prometheus")
        require(binary is not None, "Prometheus (Debian's prometheus package)")
        assert binary is not None
        config = self.workdir / "prometheus.yml"
        quoted = ", ".join(f"'{t}'" for t in self.targets)
        config.write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            f"scrape_configs:\n  - job_name: connect\n    metrics_path: {self.metrics_path}\n"
            f"    static_configs:\n      - targets: [{quoted}]\n"
        )
        self.launch(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={self.workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--log.level=warn",
            ],
            self.url + "/-/ready",
            timeout_s,
            what="prometheus",
        )
        return self

    def query(self, promql: str) -> list[dict[str, Any]]:
        response = httpx.get(self.url + "/api/v1/query", params={"query": promql}, timeout=10)
        response.raise_for_status()
        body = response.json()
        assert body["status"] == "success", body
        return body["data"]["result"]

    def __enter__(self) -> PrometheusServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
