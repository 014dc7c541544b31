"""Hook, operators, sensors and triggers against a real worker process (no mocks, no Airflow DB)."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from airflow.sdk.exceptions import TaskDeferred

from airflow_provider_connect.errors import ConnectApiError, ConnectNotFoundError, ConnectorStateError
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.operators.connector import ConnectorCreateOperator, ConnectorDeleteOperator
from airflow_provider_connect.operators.offsets import ConnectorAlterOffsetsOperator
from airflow_provider_connect.sensors.connector import ConnectorStateSensor, SinkOffsetsSensor
from tests.support.broker import unique
from tests.support.worker import WorkerProcess, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.airflow, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def worker(tmp_path_factory, bootstrap_servers):
    process = WorkerProcess(tmp_path_factory.mktemp("live"), bootstrap_servers).start()
    yield process
    process.stop()


@pytest.fixture
def conn(worker, monkeypatch):
    monkeypatch.setenv(
        "AIRFLOW_CONN_KAFKA_CONNECT_DEFAULT", json.dumps({"conn_type": "kafka_connect", "host": worker.url})
    )
    return ConnectHook()


def first_event(trigger):
    async def run():
        async for event in trigger.run():
            return event.payload

    return asyncio.run(run())


def test_lifecycle_offsets_and_errors(conn):
    name, topic = unique("live"), unique("live-t")
    secret = "live-secret-4242"
    config = {
        "connector.class": "SequenceSourceConnector",
        "topic": topic,
        "tasks.max": "2",
        "messages.per.task": "20",
        "db.password": secret,
    }
    created = ConnectorCreateOperator(task_id="c", connector_name=name, config=config, initial_state="STOPPED").execute(
        {}
    )
    assert created["created"] and created["config"]["db.password"] == "***"
    assert ConnectorCreateOperator(task_id="c", connector_name=name, config=config).execute({})["created"] is False
    assert conn.get_connector_status(name)["connector"]["state"] == "STOPPED"

    # KIP-980: start from altered offsets
    ConnectorAlterOffsetsOperator(
        task_id="a",
        connector_name=name,
        offsets=json.dumps([{"partition": {"task.id": f"{name}-0"}, "offset": {"saved": 15}}]),
    ).execute({})
    conn.resume_connector(name)
    conn.wait_for_state(name, "RUNNING", timeout=60, poll_interval=0.2, min_tasks=2)
    wait_for(
        lambda: (
            {o["partition"]["task.id"]: o["offset"]["saved"] for o in conn.get_offsets(name)}
            == {f"{name}-0": 20, f"{name}-1": 20}
        ),
        what="both tasks to reach 20",
    )

    with pytest.raises(ConnectorStateError, match="STOPPED"):
        ConnectorAlterOffsetsOperator(
            task_id="a", connector_name=name, offsets='[{"partition": {"task.id": "x"}, "offset": null}]'
        ).execute({})
    plan = conn.restart_connector(name, include_tasks=True, only_failed=False)
    assert plan["connector"]["state"] == "RESTARTING"
    assert conn.get_server_info()["version"]
    assert name in conn.list_connectors() and name in conn.list_connectors(expand=["status"])
    assert any(p["class"].endswith("SequenceSourceConnector") for p in conn.list_connector_plugins())

    with pytest.raises(ConnectApiError) as info:
        conn.put_connector_config(name, {**config, "name": name, "connector.class": "NoSuchConnector"})
    assert info.value.status_code == 400 and secret not in str(info.value)

    result = ConnectorDeleteOperator(task_id="d", connector_name=name, reset_offsets=True).execute({})
    assert result["deleted"] and "reset" in result["offsets_reset"]
    with pytest.raises(ConnectNotFoundError):
        conn.get_connector(name)


def test_state_sensor_and_trigger_live(conn):
    name, topic = unique("sens"), unique("sens-t")
    conn.create_connector(
        name, {"connector.class": "SequenceSourceConnector", "topic": topic, "tasks.max": "1", "task.start.fail": "0"}
    )
    sensor = ConnectorStateSensor(task_id="s", connector_name=name, poke_interval=0.2, timeout=30, deferrable=True)
    wait_for(lambda: conn.get_connector_status(name)["tasks"], what="task status")
    with pytest.raises(ConnectorStateError, match="FAILED"):
        sensor.execute({})  # fails closed at once instead of deferring
    conn.put_connector_config(name, {"connector.class": "SequenceSourceConnector", "topic": topic, "tasks.max": "1"})
    conn.restart_connector(name, include_tasks=True, only_failed=True)
    from airflow_provider_connect.triggers.connector import ConnectorStateTrigger

    event = first_event(
        ConnectorStateTrigger(connector_name=name, target_state="RUNNING", deadline=time.time() + 30, poll_interval=0.2)
    )
    assert event["status"] == "success", event
    conn.pause_connector(name)
    stopped = first_event(
        ConnectorStateTrigger(connector_name=name, target_state="STOPPED", deadline=time.time() + 5, poll_interval=0.2)
    )
    assert stopped["status"] == "failed" and "PAUSED" in stopped["message"]
    conn.delete_connector(name)


def test_sink_offsets_sensor_live(conn, tmp_path):
    topic, source, sink = unique("so-t"), unique("so-src"), unique("so-sink")
    conn.create_connector(
        source,
        {"connector.class": "SequenceSourceConnector", "topic": topic, "tasks.max": "1", "messages.per.task": "25"},
    )
    wait_for(
        lambda: conn.get_offsets(source) and conn.get_offsets(source)[0]["offset"]["saved"] == 25,
        what="source to finish",
    )
    conn.create_connector(
        sink, {"connector.class": "RecordingSinkConnector", "topics": topic, "output.file": str(tmp_path / "out.jsonl")}
    )
    # one key, so all 25 records sit in one partition; the sink's own offsets say which
    wait_for(
        lambda: sum(o["offset"]["kafka_offset"] for o in conn.get_offsets(sink)) == 25,
        timeout_s=60,
        what="sink to commit 25 records",
    )
    partition = conn.get_offsets(sink)[0]["partition"]["kafka_partition"]
    sensor = SinkOffsetsSensor(
        task_id="s",
        connector_name=sink,
        target_offsets={f"{topic}:{partition}": 25},
        poke_interval=0.2,
        timeout=30,
        deferrable=True,
    )
    assert sensor.execute({}) is None  # already there: no deferral
    ahead = SinkOffsetsSensor(
        task_id="s",
        connector_name=sink,
        target_offsets={f"{topic}:{partition}": 26},
        poke_interval=0.2,
        timeout=1,
        deferrable=True,
    )
    with pytest.raises(TaskDeferred) as info:
        ahead.execute({})
    assert first_event(info.value.trigger)["status"] == "timeout"
    conn.delete_connector(sink)
    conn.delete_connector(source)
