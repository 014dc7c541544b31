"""Section 4 group E: KIP-980 `initial_state` on create, on a standalone worker (plus its CLI files)."""

from __future__ import annotations

import pytest

from tests.support.broker import unique
from tests.support.worker import WorkerProcess, connector_json, wait_for

from .helpers import Api, assert_error, read_jsonl, sink_config, sink_offsets, source_config, values_by_key

pytestmark = pytest.mark.integration


def test_created_paused_has_no_tasks_until_resumed(api, kafka, name) -> None:
    # 64
    created = api.create(
        name, source_config(kafka.create_topic(unique("t")), tasks=3, messages_per_task=0), initial_state="PAUSED"
    )
    assert created["tasks"] == []
    status = api.status(name)
    assert status["connector"]["state"] == "PAUSED" and status["tasks"] == []
    assert api.get(f"/connectors/{name}/tasks").json() == []
    api.resume(name)
    api.wait_state(name, "RUNNING", 3)


def test_created_stopped_source_starts_from_altered_offsets(api, kafka, name) -> None:
    # 65
    topic = kafka.create_topic(unique("t"))
    created = api.create(name, source_config(topic, tasks=1, messages_per_task=10), initial_state="STOPPED")
    assert created["tasks"] == []
    status = api.status(name)
    assert status["connector"]["state"] == "STOPPED" and status["tasks"] == []
    assert api.offsets(name) == []
    body = {"offsets": [{"partition": {"task.id": f"{name}-0"}, "offset": {"saved": 5}}]}
    response = api.patch(f"/connectors/{name}/offsets", body)
    assert response.status_code == 200, response.text
    api.resume(name)
    api.wait_state(name, "RUNNING", 1)
    api.wait_offsets(name, lambda o: o and o[0]["offset"] == {"saved": 10}, what="saved 10")
    records = wait_for(
        lambda: (lambda g: g if len(g.get(f"{name}-0", [])) >= 5 else None)(values_by_key(kafka.read_all(topic))),
        20,
        interval_s=0.5,
        what="5 records",
    )
    assert [v["seqno"] for v in records[f"{name}-0"]] == [5, 6, 7, 8, 9]  # only 5 records in the topic


def test_created_stopped_sink_consumes_from_altered_offset(api, kafka, name, out_file) -> None:
    # 66
    topic = kafka.create_topic(unique("t"))
    kafka.produce(topic, [{"n": n} for n in range(10)], partition=0)
    config = sink_config(
        topic,
        out_file,
        **{
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
        },
    )
    api.create(name, config, initial_state="STOPPED")
    body = {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 5}}]}
    response = api.patch(f"/connectors/{name}/offsets", body)
    assert response.status_code == 200, response.text
    api.resume(name)
    api.wait_offsets(name, lambda o: sink_offsets(o) == {(topic, 0): 10}, 45, what="sink caught up to 10")
    assert sorted(r["offset"] for r in read_jsonl(out_file)) == [5, 6, 7, 8, 9]
    assert [r["value"] for r in sorted(read_jsonl(out_file), key=lambda r: r["offset"])] == [
        {"n": n} for n in range(5, 10)
    ]
    api.wait_state(name, "RUNNING", 1)


def test_paused_or_stopped_connectors_can_be_deleted(api, name) -> None:
    # 67
    for state in ("PAUSED", "STOPPED"):
        api.create(name, source_config(unique("t"), messages_per_task=0), initial_state=state)
        assert api.status(name)["connector"]["state"] == state
        assert api.delete(f"/connectors/{name}").status_code == 204
        assert name not in api.get("/connectors").json()
        assert_error(api.get(f"/connectors/{name}/status"), 404)


def test_created_stopped_then_resumed_has_four_tasks(api, name) -> None:
    # 68
    api.create(name, source_config(unique("t"), tasks=4, messages_per_task=0), initial_state="STOPPED")
    status = api.status(name)
    assert status["connector"]["state"] == "STOPPED" and status["tasks"] == [] and status["type"] == "source"
    api.resume(name)
    api.wait_state(name, "RUNNING", 4)


@pytest.mark.parametrize(
    "given, state", [("running", "RUNNING"), ("Paused", "PAUSED"), ("stopped", "STOPPED"), ("PAUSED", "PAUSED")]
)
def test_initial_state_any_case(api, name, given, state) -> None:
    # 69 with section 8
    api.create(name, source_config(unique("t"), messages_per_task=0), initial_state=given)
    assert api.status(name)["connector"]["state"] == state


def test_invalid_initial_state_is_400_and_creates_nothing(api, name) -> None:
    # 69 with section 0
    response = api.post("/connectors", {"name": name, "config": source_config("t"), "initial_state": "SLEEPING"})
    message = assert_error(response, 400, "SLEEPING")["message"]
    assert "initial_state" in message or "initial state" in message, message
    assert api.get(f"/connectors/{name}").status_code == 404


def test_initial_state_on_existing_connector_is_409_and_not_applied(api, name) -> None:
    api.create(name, source_config(unique("t"), messages_per_task=0))
    api.wait_state(name, "RUNNING", 1)
    response = api.post("/connectors", {"name": name, "config": source_config("t"), "initial_state": "STOPPED"})
    assert_error(response, 409, f"Connector {name} already exists")
    assert api.status(name)["connector"]["state"] == "RUNNING"


def test_cli_connector_file_honours_initial_state(bootstrap_servers, tmp_path) -> None:
    # section 6: the standalone CLI reads `initial_state` from POST-shaped JSON files
    name = unique("cli-stopped")
    path = connector_json(
        tmp_path / "c.json", name, source_config(unique("t"), tasks=2, messages_per_task=0), "STOPPED"
    )
    with WorkerProcess(tmp_path / "w", bootstrap_servers, connector_files=[path]) as worker:
        api = Api(worker.url)
        status = api.status(name)
        assert status["connector"]["state"] == "STOPPED" and status["tasks"] == []
        api.resume(name)
        api.wait_state(name, "RUNNING", 2)
        api.close()
