import asyncio
import importlib
import time
from datetime import timedelta

import httpx
import pytest
from airflow.sdk.exceptions import AirflowException, AirflowSensorTimeout, TaskDeferred

from airflow_provider_connect.errors import ConnectorStateError
from airflow_provider_connect.sensors.connector import ConnectorStateSensor, SinkOffsetsSensor
from airflow_provider_connect.triggers.connector import ConnectorStateTrigger, SinkOffsetsTrigger
from tests.unit.airflow_provider_connect.conftest import BASE

STATUS_URL = f"{BASE}/connectors/c/status"
OFFSETS_URL = f"{BASE}/connectors/c/offsets"


def status(state, tasks=(), trace="java.lang.IllegalStateException: broken sink"):
    return {
        "name": "c",
        "connector": {"state": state, "worker_id": "w:1"},
        "tasks": [
            {"id": i, "state": s, "worker_id": "w:1", **({"trace": trace} if s == "FAILED" else {})}
            for i, s in enumerate(tasks)
        ],
        "type": "sink",
    }


def offsets(*values):
    return {
        "offsets": [
            {"partition": {"kafka_topic": "t", "kafka_partition": p}, "offset": {"kafka_offset": o}}
            for p, o in enumerate(values)
        ]
    }


def state_sensor(**kw):
    return ConnectorStateSensor(task_id="s", connector_name="c", poke_interval=0.01, timeout=30, **kw)


def offsets_sensor(**kw):
    return SinkOffsetsSensor(
        task_id="s", connector_name="c", target_offsets={"t:0": 10, "t:1": 10}, poke_interval=0.01, timeout=30, **kw
    )


def run_trigger(trigger):
    async def first_event():
        async for event in trigger.run():
            return event.payload

    return asyncio.run(first_event())


# ---- ConnectorStateSensor: poke / reschedule ----------------------------------------------------


def test_state_sensor_poke(router):
    router.get(STATUS_URL).mock(
        side_effect=[
            httpx.Response(404, json={"error_code": 404, "message": "No status found for connector c"}),
            httpx.Response(200, json=status("RUNNING", ["UNASSIGNED"])),
            httpx.Response(200, json=status("RUNNING", ["RUNNING"])),
        ]
    )
    sensor = state_sensor()
    assert [sensor.poke({}) for _ in range(3)] == [False, False, True]


@pytest.mark.parametrize(
    "st,match",
    [
        (status("RUNNING", ["RUNNING", "FAILED"]), "(?s)task c-1 is FAILED.*broken sink"),
        (status("PAUSED", ["PAUSED"]), "is PAUSED, expected RUNNING"),
    ],
)
def test_state_sensor_fails_closed(router, st, match):
    router.get(STATUS_URL).respond(200, json=st)
    with pytest.raises(ConnectorStateError, match=match):
        state_sensor().poke({})


def test_state_sensor_poke_mode_execute_loops_until_done(router):
    route = router.get(STATUS_URL).mock(
        side_effect=[
            httpx.Response(200, json=status("STOPPED")),
            httpx.Response(200, json=status("STOPPED")),
            httpx.Response(200, json=status("RUNNING", ["RUNNING"])),
        ]
    )
    sensor = state_sensor(transitional_states=["STOPPED"])  # e.g. right after a resume
    sensor.execute({})
    assert route.call_count == 3


def test_state_sensor_reschedule_mode(router):
    from airflow.sdk.exceptions import AirflowRescheduleException

    router.get(STATUS_URL).respond(200, json=status("UNASSIGNED"))
    from types import SimpleNamespace

    sensor = state_sensor(mode="reschedule")
    ti = SimpleNamespace(get_first_reschedule_date=lambda context: None)
    with pytest.raises(AirflowRescheduleException):
        sensor.execute({"ti": ti})


# ---- deferrable ---------------------------------------------------------------------------------


def test_state_sensor_defers_with_wall_clock_deadline(router):
    route = router.get(STATUS_URL).respond(200, json=status("UNASSIGNED"))
    sensor = state_sensor(deferrable=True, target_state="PAUSED")
    before = time.time()
    with pytest.raises(TaskDeferred) as info:
        sensor.execute({})
    trigger = info.value.trigger
    assert isinstance(trigger, ConnectorStateTrigger) and info.value.method_name == "execute_complete"
    assert info.value.timeout == timedelta(seconds=30)
    assert before + 30 <= trigger.deadline <= time.time() + 30
    assert trigger.target_state == "PAUSED" and route.call_count == 1


def test_state_sensor_deferrable_returns_at_once_when_already_there(router):
    router.get(STATUS_URL).respond(200, json=status("RUNNING", ["RUNNING"]))
    assert state_sensor(deferrable=True).execute({}) == "RUNNING"


@pytest.mark.parametrize(
    "event,outcome",
    [
        ({"status": "success", "state": "RUNNING", "message": "ok"}, "RUNNING"),
        ({"status": "failed", "message": "task c-0 is FAILED"}, ConnectorStateError),
        ({"status": "timeout", "message": "deadline passed"}, AirflowSensorTimeout),
        ({"status": "error", "message": "HTTP 500"}, AirflowException),
        (None, AirflowException),
    ],
)
@pytest.mark.parametrize("make", [state_sensor, offsets_sensor])
def test_execute_complete_for_every_event(event, outcome, make):
    sensor = make()
    if isinstance(outcome, type):
        with pytest.raises(outcome):
            sensor.execute_complete({}, event)
    else:
        assert sensor.execute_complete({}, event) == outcome


# ---- ConnectorStateTrigger ----------------------------------------------------------------------


def state_trigger(deadline_in=30.0, **kw):
    return ConnectorStateTrigger(
        connector_name="c", target_state="RUNNING", deadline=time.time() + deadline_in, poll_interval=0.01, **kw
    )


def test_state_trigger_serializes_round_trip():
    trigger = state_trigger(include_tasks=False, min_tasks=2)
    path, kwargs = trigger.serialize()
    module, _, name = path.rpartition(".")
    clone = getattr(importlib.import_module(module), name)(**kwargs)
    assert clone.serialize() == (path, kwargs)


def test_state_trigger_success_after_polling(router):
    route = router.get(STATUS_URL).mock(
        side_effect=[
            httpx.Response(200, json=status("RESTARTING", ["RESTARTING"])),
            httpx.Response(200, json=status("RUNNING", ["RUNNING"])),
        ]
    )
    event = run_trigger(state_trigger())
    assert event["status"] == "success" and event["state"] == "RUNNING" and route.call_count == 2
    assert all(call.request.method == "GET" for call in route.calls)


def test_state_trigger_failed_and_unexpected_states(router):
    router.get(STATUS_URL).mock(
        side_effect=[
            httpx.Response(200, json=status("RUNNING", ["FAILED"])),
            httpx.Response(200, json=status("STOPPED")),
        ]
    )
    failed = run_trigger(state_trigger())
    assert failed["status"] == "failed" and "broken sink" in failed["message"]
    assert run_trigger(state_trigger())["status"] == "failed"


def test_state_trigger_honours_deadline(router):
    router.get(STATUS_URL).respond(200, json=status("UNASSIGNED"))
    started = time.monotonic()
    event = run_trigger(state_trigger(deadline_in=0.2))
    assert event["status"] == "timeout" and "deadline passed" in event["message"]
    assert time.monotonic() - started < 5


def test_state_trigger_reports_http_errors(router):
    router.get(STATUS_URL).respond(401, json={"error_code": 401, "message": "Unauthorized"})
    event = run_trigger(state_trigger())
    assert event["status"] == "error" and "401" in event["message"]


# ---- SinkOffsetsSensor and trigger -------------------------------------------------------------


def test_offsets_sensor_poke(router):
    router.get(OFFSETS_URL).mock(
        side_effect=[httpx.Response(200, json=offsets(10, 3)), httpx.Response(200, json=offsets(10, 10))]
    )
    router.get(STATUS_URL).respond(200, json=status("RUNNING", ["RUNNING"]))
    sensor = offsets_sensor()
    assert sensor.poke({}) is False and sensor.poke({}) is True


def test_offsets_sensor_fails_when_sink_failed(router):
    router.get(OFFSETS_URL).respond(200, json=offsets(3, 3))
    router.get(STATUS_URL).respond(200, json=status("RUNNING", ["FAILED"]))
    with pytest.raises(ConnectorStateError, match="(?s)cannot catch up.*broken sink"):
        offsets_sensor().poke({})


def test_offsets_sensor_defers_with_concrete_targets(router):
    router.get(OFFSETS_URL).respond(200, json=offsets(1, 1))
    router.get(STATUS_URL).respond(200, json=status("RUNNING", ["RUNNING"]))
    with pytest.raises(TaskDeferred) as info:
        offsets_sensor(deferrable=True).execute({})
    trigger = info.value.trigger
    assert isinstance(trigger, SinkOffsetsTrigger)
    assert trigger.target_offsets == [["t", 0, 10], ["t", 1, 10]]


def test_offsets_sensor_topic_ends_resolved_once(monkeypatch, router):
    calls = []
    monkeypatch.setattr(
        "airflow_provider_connect.sensors.connector.fetch_topic_ends",
        lambda cfg, topics: calls.append(topics) or {("t", 0): 4},
    )
    router.get(OFFSETS_URL).mock(
        side_effect=[httpx.Response(200, json=offsets(2)), httpx.Response(200, json=offsets(4))]
    )
    router.get(STATUS_URL).respond(200, json=status("RUNNING", ["RUNNING"]))
    sensor = SinkOffsetsSensor(
        task_id="s",
        connector_name="c",
        topics=["t"],
        kafka_config={"bootstrap.servers": "b:9092"},
        poke_interval=0.01,
        timeout=30,
    )
    sensor.execute({})
    assert calls == [["t"]]


def test_offsets_sensor_argument_checks():
    with pytest.raises(ValueError, match="exactly one"):
        SinkOffsetsSensor(task_id="s", connector_name="c")
    with pytest.raises(ValueError, match="kafka_config"):
        SinkOffsetsSensor(task_id="s", connector_name="c", topics=["t"])


def test_offsets_trigger_events(router):
    router.get(OFFSETS_URL).mock(
        side_effect=[
            httpx.Response(200, json=offsets(5, 5)),
            httpx.Response(200, json=offsets(10, 12)),
            httpx.Response(200, json=offsets(5, 5)),
            httpx.Response(200, json=offsets(5, 5)),
        ]
    )
    router.get(STATUS_URL).mock(
        side_effect=[
            httpx.Response(200, json=status("RUNNING", ["RUNNING"])),
            httpx.Response(200, json=status("FAILED")),
            httpx.Response(200, json=status("RUNNING", ["RUNNING"])),
        ]
    )

    def trigger(deadline_in=30.0):
        return SinkOffsetsTrigger(
            connector_name="c",
            target_offsets=[["t", 0, 10], ["t", 1, 10]],
            deadline=time.time() + deadline_in,
            poll_interval=0.01,
        )

    assert run_trigger(trigger())["status"] == "success"
    assert run_trigger(trigger())["status"] == "failed"
    assert run_trigger(trigger(deadline_in=-1))["status"] == "timeout"
    path, kwargs = trigger().serialize()
    assert path.endswith("SinkOffsetsTrigger") and kwargs["target_offsets"] == [["t", 0, 10], ["t", 1, 10]]


# ---- the failure watcher (AssetWatcher) -----------------------------------------------------------


def test_failure_trigger_fires_with_the_failed_connectors(router):
    from airflow.triggers.base import BaseEventTrigger

    from airflow_provider_connect.triggers.failures import ConnectorFailedTrigger

    healthy = {"status": {"name": "ok", "connector": {"state": "RUNNING"}, "tasks": [{"id": 0, "state": "RUNNING"}]}}
    broken = {
        "status": {
            "name": "bad",
            "connector": {"state": "RUNNING"},
            "tasks": [{"id": 0, "state": "RUNNING"}, {"id": 1, "state": "FAILED", "trace": "Boom"}],
        }
    }
    listing = router.get(f"{BASE}/connectors", params={"expand": "status"})
    listing.side_effect = [
        httpx.Response(200, json={"ok": healthy}),
        httpx.Response(200, json={"ok": healthy, "bad": broken}),
    ]
    trigger = ConnectorFailedTrigger(poll_interval=0)
    assert isinstance(trigger, BaseEventTrigger)  # usable with AssetWatcher
    event = run_trigger(trigger)  # the event's payload
    assert event["status"] == "failed"
    assert event["connectors"] == [{"name": "bad", "connector_failed": False, "failed_tasks": [1]}]
    assert listing.call_count == 2  # it kept watching while everything was healthy
    path, kwargs = trigger.serialize()
    assert path == "airflow_provider_connect.triggers.failures.ConnectorFailedTrigger"
    assert type(trigger)(**kwargs).serialize() == (path, kwargs)
