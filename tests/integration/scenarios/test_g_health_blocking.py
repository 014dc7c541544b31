"""Section 4 group G (standalone variants): /health during and after startup, blocking connectors and
request timeouts (with the worker's `rest.request.timeout.ms` lowered so a timeout costs seconds).

A connector blocks at a gate (`connector.start.block.until.file` and the like) that the test opens: an
answer that comes while the gate is closed did not wait for the connector, with no clock involved.

Not covered here: 77-78 (distributed, brokers down).
"""

from __future__ import annotations

import threading

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
    name, gate = unique("blocking-cli"), tmp_path / "gate"
    path = connector_json(
        tmp_path / "c.json",
        name,
        source_config(unique("t"), messages_per_task=0, **{"connector.start.block.until.file": str(gate)}),
    )
    worker = WorkerProcess(tmp_path / "w", bootstrap_servers, connector_files=[path])
    # the REST server answers (start() waits for "/") while the CLI connector is held at its gate
    worker.start(wait_healthy=False)
    try:
        api = Api(worker.url, timeout_s=20)
        response = api.get("/health")
        assert response.status_code == 503, response.text
        body = response.json()
        assert body["status"] == "starting" and "Worker is still starting up" in body["message"], body
        gate.touch()
        ready = wait_for(lambda: (r := api.get("/health")).status_code == 200 and r, 40, interval_s=0.5, what="healthy")
        assert ready.json() == READY
        api.wait_state(name, "RUNNING", 1)
        api.close()
    finally:
        gate.touch()
        worker.stop()


def test_blocking_connector_start_leaves_others_serving(api, name, tmp_path) -> None:
    # 80 (standalone part): while one connector's start() blocks, the worker keeps serving the others
    other = unique("healthy")
    api.create(other, source_config(unique("t"), tasks=1, throughput=100))
    api.wait_state(other, "RUNNING", 1)

    gate, starts = tmp_path / "gate", tmp_path / "starts"
    result: dict = {}
    creator = threading.Thread(
        target=lambda: result.setdefault(
            "r",
            Api(api.base_url, 60).post(
                "/connectors",
                {
                    "name": name,
                    "config": source_config(
                        unique("t"),
                        messages_per_task=0,
                        **{"connector.start.block.until.file": str(gate), "connector.starts.file": str(starts)},
                    ),
                },
            ),
        )
    )
    creator.start()
    try:
        wait_for(starts.exists, 20, 0.05, what="the connector's start() to begin (it then waits at its gate)")
        # answered while start() is held: reads do not queue behind it
        status = api.get(f"/connectors/{other}/status")
        assert status.status_code == 200 and status.json()["connector"]["state"] == "RUNNING"
        assert api.get("/connectors").status_code == 200
        # the other connector's task keeps producing meanwhile
        first = source_offsets(api.offsets(other)).get(f"{other}-0") or 0
        wait_for(
            lambda: (source_offsets(api.offsets(other)).get(f"{other}-0") or 0) > first,
            10,
            interval_s=0.5,
            what="other connector progressing",
        )
    finally:
        gate.touch()
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
    # stop() blocks longer than the client waits for an answer (30 s): a DELETE that waited for it fails
    if kind == "source":
        config = source_config(topic, throughput=50, **{"task.stop.block.ms": 60000})
    else:
        config = sink_config(topic, tmp_path / "out.jsonl", **{"task.stop.block.ms": 60000})
    api.create(name, config)
    api.wait_state(name, "RUNNING", 1)
    response = api.delete(f"/connectors/{name}")
    assert response.status_code == 204, response.text
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
    worker = WorkerProcess(tmp_path / "w", bootstrap_servers, props={"rest.request.timeout.ms": 1500})
    gate = tmp_path / "gate"
    with worker:
        api = Api(worker.url, timeout_s=30)
        name = unique("blocking")
        try:
            # both answers come while start() is held at its gate: the create timed out, health did not wait
            response = api.post(
                "/connectors",
                {
                    "name": name,
                    "config": source_config(
                        unique("t"), messages_per_task=0, **{"connector.start.block.until.file": str(gate)}
                    ),
                },
            )
            message = assert_error(response, 500, "Request timed out")["message"]
            assert "The worker is currently starting the connector" in message, message

            health = api.get("/health")
            assert health.status_code == 500, health.text
            assert health.json()["status"] == "unhealthy"
            assert (
                "Worker was unable to handle this request and may be unable to handle other requests."
                in health.json()["message"]
            )
        finally:
            gate.touch()

        # the create still completes once start() returns
        api.wait_state(name, "RUNNING", 1, timeout_s=30)
        assert api.get("/health").json() == READY
        api.close()


def test_request_timeout_while_validation_blocks(bootstrap_servers, tmp_path) -> None:
    # 79 (standalone): a connector whose validate() blocks makes the create time out with the stage in the
    # message; reads keep working meanwhile and the worker recovers once validation returns
    worker = WorkerProcess(tmp_path / "w", bootstrap_servers, props={"rest.request.timeout.ms": 1500})
    gate = tmp_path / "gate"
    with worker:
        api = Api(worker.url, timeout_s=30)
        name = unique("slow-validate")
        try:
            response = api.post(
                "/connectors",
                {
                    "name": name,
                    "config": source_config(
                        unique("t"), messages_per_task=0, **{"connector.validate.block.until.file": str(gate)}
                    ),
                },
            )
            message = assert_error(response, 500, "Request timed out")["message"]
            assert "The worker is currently performing multi-property validation for the connector" in message
            assert api.get("/connectors").status_code == 200  # answered while validate() is held at its gate
        finally:
            gate.touch()
        # once validate() returns, the herder applies the create it had started
        api.wait_state(name, "RUNNING", 1, timeout_s=15)
        api.close()
