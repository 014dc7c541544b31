"""The connector states, and how a status body is judged against a wanted state (sensors, triggers, operators)."""

import pytest

from airflow_provider_connect.status import (
    FAILED_STATES,
    NON_TERMINAL_STATES,
    TERMINAL_STATES,
    ConnectState,
    Verdict,
    evaluate_status,
)


def status(state, tasks=()):
    return {
        "name": "c",
        "connector": {"state": state, "worker_id": "w:1"},
        "tasks": [
            {"id": i, "state": s, "worker_id": "w:1", **({"trace": "Boom"} if s == "FAILED" else {})}
            for i, s in enumerate(tasks)
        ],
    }


def test_state_sets_partition_all_states():
    assert TERMINAL_STATES | NON_TERMINAL_STATES == set(ConnectState)
    assert not TERMINAL_STATES & NON_TERMINAL_STATES
    assert FAILED_STATES <= TERMINAL_STATES
    assert ConnectState.parse("running") is ConnectState.RUNNING
    with pytest.raises(ValueError, match="Unknown Kafka Connect state"):
        ConnectState.parse("DESTROYED")


@pytest.mark.parametrize(
    "st,target,include,verdict,fragment",
    [
        (None, "RUNNING", True, Verdict.WAITING, "no status"),
        (status("UNASSIGNED"), "RUNNING", True, Verdict.WAITING, "connector c"),
        (status("RUNNING"), "RUNNING", True, Verdict.WAITING, "0 task(s)"),
        (status("RUNNING"), "RUNNING", False, Verdict.SUCCESS, "is RUNNING"),
        (status("RUNNING", ["RUNNING", "RESTARTING"]), "RUNNING", True, Verdict.WAITING, "task c-1"),
        (status("RUNNING", ["RUNNING", "RUNNING"]), "RUNNING", True, Verdict.SUCCESS, "2 task(s)"),
        (status("RUNNING", ["RUNNING", "FAILED"]), "RUNNING", True, Verdict.FAILED, "Boom"),
        (status("RUNNING", ["RUNNING", "FAILED"]), "RUNNING", False, Verdict.SUCCESS, "is RUNNING"),
        (status("FAILED"), "STOPPED", True, Verdict.FAILED, "FAILED"),
        (status("PAUSED", ["PAUSED"]), "RUNNING", True, Verdict.FAILED, "is PAUSED, expected RUNNING"),
        (status("STOPPED"), "STOPPED", True, Verdict.SUCCESS, "STOPPED"),
        (status("STOPPED", ["RUNNING"]), "STOPPED", True, Verdict.FAILED, "task c-0 is RUNNING"),
        (status("PAUSED"), "PAUSED", True, Verdict.SUCCESS, "PAUSED"),
        (status("WEIRD"), "RUNNING", True, Verdict.FAILED, "unknown state"),
    ],
)
def test_evaluate_status(st, target, include, verdict, fragment):
    result = evaluate_status(st, target, include_tasks=include)
    assert result.verdict is verdict and fragment in result.message


def test_evaluate_status_min_tasks_and_transitional():
    assert evaluate_status(status("RUNNING", ["RUNNING"]), "RUNNING", min_tasks=2).verdict is Verdict.WAITING
    assert evaluate_status(status("STOPPED"), "RUNNING", transitional=["STOPPED"]).verdict is Verdict.WAITING
    with pytest.raises(ValueError, match="Cannot wait for FAILED"):
        evaluate_status(status("FAILED"), "FAILED")
