"""Every `listeners` entry is served; `admin.listeners` moves /admin/* to its own listeners, or (empty) turns
the admin endpoints off, as in the reference; `metrics.listeners` serve /metrics alone."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from runtime.embedded_broker import free_port
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.integration


def test_admin_endpoints_answer_only_on_the_admin_listeners(bootstrap_servers: str, tmp_path: Path) -> None:
    main, second, admin, metrics = free_port(), free_port(), free_port(), free_port()
    props = {
        "listeners": f"http://127.0.0.1:{main},http://127.0.0.1:{second}",
        "admin.listeners": f"http://127.0.0.1:{admin}",
        "metrics.listeners": f"http://127.0.0.1:{metrics}",
    }
    with WorkerProcess(tmp_path, bootstrap_servers, props=props, port=main) as worker:
        try:
            for port in (main, second):
                url = f"http://127.0.0.1:{port}"
                assert httpx.get(url + "/").status_code == 200
                assert httpx.get(url + "/connectors").json() == []
                response = httpx.get(url + "/admin/loggers")
                assert response.status_code == 404
                assert response.json()["error_code"] == 404
            admin_url = f"http://127.0.0.1:{admin}"
            loggers = httpx.get(admin_url + "/admin/loggers")
            assert loggers.status_code == 200 and "root" in loggers.json()
            assert httpx.put(admin_url + "/admin/loggers/runtime.worker", json={"level": "DEBUG"}).status_code == 200
            assert httpx.get(admin_url + "/admin/loggers/runtime.worker").json()["level"] == "DEBUG"
            assert httpx.get(admin_url + "/connectors").status_code == 404
            metrics_url = f"http://127.0.0.1:{metrics}"
            scrape = httpx.get(metrics_url + "/metrics")
            assert scrape.status_code == 200 and "kafka_connect_worker_connector_count" in scrape.text
            assert httpx.get(metrics_url + "/connectors").status_code == 404
            assert httpx.get(metrics_url + "/admin/loggers").status_code == 404
        finally:
            worker.stop()


def test_an_empty_admin_listeners_turns_the_admin_endpoints_off(bootstrap_servers: str, tmp_path: Path) -> None:
    with WorkerProcess(tmp_path, bootstrap_servers, props={"admin.listeners": ""}) as worker:
        try:
            assert worker.client.get("/admin/loggers").status_code == 404
            assert worker.client.get("/connectors").status_code == 200
        finally:
            worker.stop()
