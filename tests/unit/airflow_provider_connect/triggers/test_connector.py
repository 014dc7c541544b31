"""ConnectorStateTrigger and SinkOffsetsTrigger: the events they fire, their deadline, their serialization."""

import importlib
import time

import httpx

from airflow_provider_connect.triggers.connector import ConnectorStateTrigger, SinkOffsetsTrigger
from tests.unit.airflow_provider_connect.bodies import OFFSETS_URL, STATUS_URL, offsets, run_trigger, status

# ---- ConnectorStateTrigger -----------------------------------------------------------------------


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
    route = router.get(STATUS_URL).respond(200, json=status("UNASSIGNED"))
    event = run_trigger(state_trigger(deadline_in=0.2))
    assert event["status"] == "timeout" and "deadline passed" in event["message"]
    assert route.call_count > 1  # it polled until the deadline, then gave up


def test_state_trigger_reports_http_errors(router):
    router.get(STATUS_URL).respond(401, json={"error_code": 401, "message": "Unauthorized"})
    event = run_trigger(state_trigger())
    assert event["status"] == "error" and "401" in event["message"]


# ---- SinkOffsetsTrigger --------------------------------------------------------------------------


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
