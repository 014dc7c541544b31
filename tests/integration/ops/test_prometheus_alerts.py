"""A real Prometheus scrapes a worker's /metrics; Strimzi's Kafka Connect alert expressions fire when a
connector or a task fails and clear once it runs again (Strimzi's prometheus-rules.yaml, group `connect`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.scenarios.helpers import Api, source_config
from tests.support.broker import unique
from tests.support.prometheus import PrometheusServer
from tests.support.worker import WorkerProcess, wait_for

pytestmark = pytest.mark.integration

# the alert rules' expressions, as Strimzi ships them
CONNECT_FAILED_CONNECTOR = 'sum(kafka_connect_connector_status{status="failed"}) > 0'
CONNECT_FAILED_TASK = "sum(kafka_connect_worker_connector_failed_task_count) > 0"


@pytest.fixture(scope="module")
def worker(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    with WorkerProcess(tmp_path_factory.mktemp("worker"), bootstrap_servers) as proc:
        try:
            yield proc
        finally:
            proc.stop()


@pytest.fixture(scope="module")
def prometheus(worker: WorkerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusServer]:
    server = PrometheusServer(tmp_path_factory.mktemp("prometheus"), [f"127.0.0.1:{worker.port}"]).start()
    try:
        yield server
    finally:
        server.stop()


def fires(prometheus: PrometheusServer, expr: str) -> bool:
    return bool(prometheus.query(expr))


def test_failed_connector_and_task_alerts_fire_and_clear(
    worker: WorkerProcess, prometheus: PrometheusServer, tmp_path: Path
) -> None:
    api = Api(worker.url)
    wait_for(lambda: prometheus.query('up{job="connect"} == 1'), 60, what="Prometheus scraping the worker")
    assert not fires(prometheus, CONNECT_FAILED_CONNECTOR)
    assert not fires(prometheus, CONNECT_FAILED_TASK)

    broken_connector = unique("broken-connector")
    config = source_config(unique("t"), **{"connector.start.fail": "true"})
    assert api.post("/connectors", {"name": broken_connector, "config": config}).status_code == 201
    api.wait_state(broken_connector, "FAILED", 0, None)
    broken_task = unique("broken-task")
    task_config = source_config(unique("t"), **{"task.start.fail": "all"})
    assert api.post("/connectors", {"name": broken_task, "config": task_config}).status_code == 201
    api.wait_state(broken_task, "RUNNING", 1, "FAILED")

    wait_for(lambda: fires(prometheus, CONNECT_FAILED_CONNECTOR), 30, what="ConnectFailedConnector firing")
    wait_for(lambda: fires(prometheus, CONNECT_FAILED_TASK), 30, what="ConnectFailedTask firing")
    failed = prometheus.query('kafka_connect_connector_status{status="failed"}')
    assert [s["metric"]["connector"] for s in failed] == [broken_connector]

    # fixed and restarted: both alerts clear
    config.pop("connector.start.fail")
    assert api.put(f"/connectors/{broken_connector}/config", config).status_code == 200
    task_config.pop("task.start.fail")
    assert api.put(f"/connectors/{broken_task}/config", task_config).status_code == 200
    assert api.post(f"/connectors/{broken_task}/restart?includeTasks=true&onlyFailed=true").status_code in (
        200,
        202,
        204,
    )
    api.wait_state(broken_connector, "RUNNING", 1, "RUNNING")
    api.wait_state(broken_task, "RUNNING", 1, "RUNNING")
    wait_for(lambda: not fires(prometheus, CONNECT_FAILED_CONNECTOR), 30, what="ConnectFailedConnector clearing")
    wait_for(lambda: not fires(prometheus, CONNECT_FAILED_TASK), 30, what="ConnectFailedTask clearing")
    for name in (broken_connector, broken_task):
        api.delete(f"/connectors/{name}")
    api.close()
