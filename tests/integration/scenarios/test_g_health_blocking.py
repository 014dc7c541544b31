"""Section 4 group G (standalone variants): /health during and after startup, blocking connectors and
request timeouts (with the worker's `rest.request.timeout.ms` lowered so a timeout costs seconds).

Not covered: 77-78 (distributed, brokers down) and 79 (the test connectors have no knob to block in
validate() or config()).
"""

from __future__ import annotations

import threading
import time

import pytest

from tests.support.broker import unique
from tests.support.worker import WorkerProcess, connector_json, wait_for

from .helpers import Api, assert_error, source_config, source_offsets

pytestmark = pytest.mark.integration

READY = {"status": "healthy", "message": "Worker has completed startup and is ready to handle requests."}


def test_health_is_ready_on_a_started_worker(api) -> None:
    response = api.get("/health")
    assert response.status_code == 200
    assert response.json() == READY


def test_health_reports_starting_until_cli_connectors_are_up(bootstrap_servers, tmp_path) -> None:
    # 75: a CLI connector whose start() blocks keeps the worker "starting" (503 after the 10 s health wait)
    name = unique("blocking-cli")
    block_ms = 18000  # > the 10 s the health check may wait before answering "starting" + a slow process start
    path = connector_json(
        tmp_path / "c.json",
        name,
        source_config(unique("t"), messages_per_task=0, **{"connector.start.block.ms": block_ms}),
    )
    worker = WorkerProcess(tmp_path / "w", bootstrap_servers, connector_files=[path])
    began = time.monotonic()
    worker.start(wait_healthy=False)
    try:
        api = Api(worker.url, timeout_s=20)
        # the REST server answers long before the blocked connector is up
        assert time.monotonic() - began < 7, "the REST server came up only after the CLI connectors"
        response = api.get("/health")
        assert response.status_code == 503, response.text
        body = response.json()
        assert body["status"] == "starting" and "Worker is still starting up" in body["message"], body
        ready = wait_for(lambda: (r := api.get("/health")).status_code == 200 and r, 40, interval_s=0.5, what="healthy")
        assert ready.json() == READY
        api.wait_state(name, "RUNNING", 1)
        api.close()
    finally:
        worker.stop()


def test_blocking_connector_start_leaves_others_serving(api, name) -> None:
    # 80 (standalone part): while one connector's start() blocks, the worker keeps serving the others
    other = unique("healthy")
    api.create(other, source_config(unique("t"), tasks=1, throughput=100))
    api.wait_state(other, "RUNNING", 1)

    result: dict = {}
    creator = threading.Thread(
        target=lambda: result.setdefault(
            "r",
            Api(api.base_url, 60).post(
                "/connectors",
                {
                    "name": name,
                    "config": source_config(unique("t"), messages_per_task=0, **{"connector.start.block.ms": 5000}),
                },
            ),
        )
    )
    creator.start()
    try:
        time.sleep(0.5)
        began = time.monotonic()
        status = api.get(f"/connectors/{other}/status")
        assert status.status_code == 200 and status.json()["connector"]["state"] == "RUNNING"
        assert api.get("/connectors").status_code == 200
        assert time.monotonic() - began < 2, "reads were blocked behind a connector's start()"
        # the other connector's task keeps producing meanwhile
        first = source_offsets(api.offsets(other)).get(f"{other}-0") or 0
        wait_for(
            lambda: (source_offsets(api.offsets(other)).get(f"{other}-0") or 0) > first,
            10,
            interval_s=0.5,
            what="other connector progressing",
        )
    finally:
        creator.join(60)
    assert result["r"].status_code == 201, result["r"].text
    api.wait_state(name, "RUNNING", 1)


@pytest.mark.parametrize("kind", ["source", "sink"])
def test_task_blocking_in_stop_does_not_block_delete(api, name, kind, tmp_path, kafka) -> None:
    # 81: a task stuck in stop() does not keep DELETE from succeeding, nor others from running
    from .helpers import sink_config

    other = unique("healthy")
    api.create(other, source_config(unique("t"), tasks=1, throughput=100))
    topic = kafka.create_topic(unique("t"))
    if kind == "source":
        config = source_config(topic, throughput=50, **{"task.stop.block.ms": 60000})
    else:
        config = sink_config(topic, tmp_path / "out.jsonl", **{"task.stop.block.ms": 60000})
    api.create(name, config)
    api.wait_state(name, "RUNNING", 1)
    began = time.monotonic()
    response = api.delete(f"/connectors/{name}")
    assert response.status_code == 204, response.text
    assert time.monotonic() - began < 20, "DELETE waited for a blocked task stop()"
    assert_error(api.get(f"/connectors/{name}/status"), 404)
    api.wait_state(other, "RUNNING", 1)
    first = source_offsets(api.offsets(other)).get(f"{other}-0") or 0
    wait_for(
        lambda: (source_offsets(api.offsets(other)).get(f"{other}-0") or 0) > first,
        10,
        interval_s=0.5,
        what="other connector progressing",
    )


def test_request_timeout_while_a_connector_start_blocks(bootstrap_servers, tmp_path) -> None:
    # 76 and 80 (standalone): a create whose connector start() blocks times out with the stage in the
    # message, /health then reports the worker as unable to handle requests, and both recover afterwards
    block_s = 13  # > the 10 s health wait plus the 1.5 s request timeout, with a margin
    worker = WorkerProcess(tmp_path / "w", bootstrap_servers, props={"rest.request.timeout.ms": 1500})
    with worker:
        api = Api(worker.url, timeout_s=30)
        name = unique("blocking")
        began = time.monotonic()
        response = api.post(
            "/connectors",
            {
                "name": name,
                "config": source_config(
                    unique("t"), messages_per_task=0, **{"connector.start.block.ms": block_s * 1000}
                ),
            },
        )
        assert time.monotonic() - began < 5, "the request did not time out"
        message = assert_error(response, 500, "Request timed out")["message"]
        assert "The worker is currently starting the connector" in message, message

        health = api.get("/health")
        assert time.monotonic() - began < block_s, "health answered only after the connector unblocked"
        assert health.status_code == 500, health.text
        assert health.json()["status"] == "unhealthy"
        assert (
            "Worker was unable to handle this request and may be unable to handle other requests."
            in health.json()["message"]
        )

        # the create still completes once start() returns
        api.wait_state(name, "RUNNING", 1, timeout_s=block_s + 10)
        assert api.get("/health").json() == READY
        api.close()


def test_request_timeout_while_validation_blocks(bootstrap_servers, tmp_path) -> None:
    # 79 (standalone): a connector whose validate() blocks makes the create time out with the stage in the
    # message; reads keep working meanwhile and the worker recovers once validation returns
    worker = WorkerProcess(tmp_path / "w", bootstrap_servers, props={"rest.request.timeout.ms": 1500})
    with worker:
        api = Api(worker.url, timeout_s=30)
        name = unique("slow-validate")
        response = api.post(
            "/connectors",
            {
                "name": name,
                "config": source_config(unique("t"), messages_per_task=0, **{"connector.validate.block.ms": 4000}),
            },
        )
        message = assert_error(response, 500, "Request timed out")["message"]
        assert "The worker is currently performing multi-property validation for the connector" in message, message
        began = time.monotonic()
        assert api.get("/connectors").status_code == 200
        assert time.monotonic() - began < 1, "reads waited for the blocked validation"
        # once validate() returns, the herder applies the create it had started
        api.wait_state(name, "RUNNING", 1, timeout_s=15)
        api.close()
