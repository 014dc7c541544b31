"""ConnectorStateSensor and SinkOffsetsSensor: poke, reschedule and deferrable modes, and their completions."""

import time
from datetime import timedelta

import httpx
import pytest
from airflow.sdk.exceptions import AirflowException, AirflowSensorTimeout, TaskDeferred

from airflow_provider_connect.errors import ConnectorStateError
from airflow_provider_connect.sensors.connector import ConnectorStateSensor, SinkOffsetsSensor
from airflow_provider_connect.triggers.connector import ConnectorStateTrigger, SinkOffsetsTrigger
from tests.unit.airflow_provider_connect.bodies import OFFSETS_URL, STATUS_URL, offsets, status


def state_sensor(**kw):
    return ConnectorStateSensor(task_id="s", connector_name="c", poke_interval=0.01, timeout=30, **kw)


def offsets_sensor(**kw):
    return SinkOffsetsSensor(
        task_id="s", connector_name="c", target_offsets={"t:0": 10, "t:1": 10}, poke_interval=0.01, timeout=30, **kw
    )


# ---- ConnectorStateSensor: poke / reschedule -----------------------------------------------------


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


# ---- deferrable ----------------------------------------------------------------------------------


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


# ---- SinkOffsetsSensor ---------------------------------------------------------------------------


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
