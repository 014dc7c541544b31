"""KIP-745 restarts on a real standalone herder: plans, RESTARTING in the returned body, what really restarts."""

from __future__ import annotations

import pytest

from runtime.control.errors import NotFound
from runtime.control.restart import RestartRequest

from .conftest import new_name, settle, source_config, states

pytestmark = pytest.mark.integration

COMBINATIONS = [(False, False), (False, True), (True, False), (True, True)]  # (only_failed, include_tasks)


def runners(harness, name):
    return {i: r for (c, i), r in harness.worker.tasks.items() if c == name}


def body_states(body):
    return body["connector"]["state"], [t["state"] for t in body["tasks"]]


def restarted(before: dict, after: dict) -> list[int]:
    return sorted(i for i in after if before.get(i) is not after[i])


@pytest.mark.parametrize("only_failed, include_tasks", COMBINATIONS)
def test_restart_of_unknown_connector_is_not_found(harness, only_failed, include_tasks):
    with pytest.raises(NotFound) as info:
        harness.herder.restart_connector_and_tasks(RestartRequest("ghost", only_failed, include_tasks))
    assert info.value.message == "Unknown connector: ghost"


def test_legacy_restart_of_unknown_connector_is_not_found(harness):
    with pytest.raises(NotFound) as info:
        harness.herder.restart_connector("ghost")
    assert info.value.message == "Unknown connector: ghost"


@pytest.mark.parametrize(
    "only_failed, include_tasks, body, tasks_restarted",
    [
        (False, False, ("RESTARTING", ["RUNNING"] * 3), []),
        (False, True, ("RESTARTING", ["RESTARTING"] * 3), [0, 1, 2]),
        (True, False, ("RUNNING", ["RUNNING"] * 3), []),
        (True, True, ("RUNNING", ["RUNNING"] * 3), []),
    ],
)
def test_restart_plans_on_a_healthy_connector(harness, only_failed, include_tasks, body, tasks_restarted):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=3), False)
    connector_before = harness.worker.connectors[name]
    before = runners(harness, name)
    answer = h.restart_connector_and_tasks(RestartRequest(name, only_failed, include_tasks))
    assert body_states(answer) == body
    assert answer["name"] == name and answer["type"] == "source"
    assert restarted(before, runners(harness, name)) == tasks_restarted
    assert (harness.worker.connectors[name] is not connector_before) == (not only_failed)
    assert states(h, name) == ("RUNNING", ["RUNNING"] * 3)


def test_legacy_restart_restarts_only_the_connector(harness):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=2), False)
    connector_before = harness.worker.connectors[name]
    before = runners(harness, name)
    h.restart_connector(name)
    assert harness.worker.connectors[name] is not connector_before
    assert restarted(before, runners(harness, name)) == []
    assert states(h, name) == ("RUNNING", ["RUNNING", "RUNNING"])


@pytest.mark.parametrize(
    "only_failed, include_tasks, expected_body, tasks_restarted, connector_restarted",
    [
        # scenario 48
        (False, True, ("RESTARTING", ["RESTARTING"] * 4), [0, 1, 2, 3], True),
        # scenario 46
        (True, True, ("RUNNING", ["RESTARTING"] * 4), [0, 1, 2, 3], False),
        # scenario 47: a no-op plan still answers with the body, nothing RESTARTING
        (True, False, ("RUNNING", ["FAILED"] * 4), [], False),
        # scenario 45 via the plan path: connector only
        (False, False, ("RESTARTING", ["FAILED"] * 4), [], True),
    ],
)
def test_restart_plans_with_all_tasks_failed(
    harness, only_failed, include_tasks, expected_body, tasks_restarted, connector_restarted
):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=4, **{"task.start.fail": "all"}), False)
    settle(h, name, ("RUNNING", ["FAILED"] * 4))
    connector_before = harness.worker.connectors[name]
    before = runners(harness, name)
    answer = h.restart_connector_and_tasks(RestartRequest(name, only_failed, include_tasks))
    assert body_states(answer) == expected_body
    assert restarted(before, runners(harness, name)) == tasks_restarted
    assert (harness.worker.connectors[name] is not connector_before) == connector_restarted
    # the fault is still configured: restarted tasks fail again, others stay as they were
    settle(h, name, ("RUNNING", ["FAILED"] * 4))


def test_only_failed_task_is_restarted(harness):
    """Scenario 49: only task 1 failed; onlyFailed&includeTasks restarts (and shows RESTARTING for) task 1 only."""
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=3, **{"task.start.fail": "1"}), False)
    settle(h, name, ("RUNNING", ["RUNNING", "FAILED", "RUNNING"]))
    before = runners(harness, name)
    answer = h.restart_connector_and_tasks(RestartRequest(name, only_failed=True, include_tasks=True))
    assert body_states(answer) == ("RUNNING", ["RUNNING", "RESTARTING", "RUNNING"])
    assert [t["id"] for t in answer["tasks"]] == [0, 1, 2]
    assert "trace" not in answer["tasks"][1]
    assert restarted(before, runners(harness, name)) == [1]
    settle(h, name, ("RUNNING", ["RUNNING", "FAILED", "RUNNING"]))
    assert "task.start.fail" in h.connector_status(name)["tasks"][1]["trace"]


@pytest.mark.parametrize("only_failed, include_tasks", COMBINATIONS)
def test_restart_of_a_failed_connector(harness, only_failed, include_tasks):
    """Scenarios 43/44: a connector failing on start (0 tasks) is restarted once by every combination."""
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=2, **{"connector.start.fail": "true"}), False)
    assert states(h, name) == ("FAILED", [])
    if not only_failed and not include_tasks:
        h.restart_connector(name)
    else:
        answer = h.restart_connector_and_tasks(RestartRequest(name, only_failed, include_tasks))
        assert body_states(answer) == ("RESTARTING", [])
    body = h.connector_status(name)
    assert body_states(body) == ("FAILED", [])
    assert "connector.start.fail" in body["connector"]["trace"]


def test_restart_of_a_paused_connector_keeps_it_paused(harness):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=2), False)
    h.pause_connector(name)
    answer = h.restart_connector_and_tasks(RestartRequest(name, only_failed=False, include_tasks=True))
    assert body_states(answer) == ("RESTARTING", ["RESTARTING", "RESTARTING"])
    assert states(h, name) == ("PAUSED", ["PAUSED", "PAUSED"])
    h.restart_connector(name)
    assert states(h, name) == ("PAUSED", ["PAUSED", "PAUSED"])


def test_restart_of_a_stopped_connector_keeps_it_stopped(harness):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=2), False)
    h.stop_connector(name)
    answer = h.restart_connector_and_tasks(RestartRequest(name, only_failed=False, include_tasks=True))
    assert body_states(answer) == ("RESTARTING", [])
    assert states(h, name) == ("STOPPED", [])
    h.restart_connector(name)
    assert states(h, name) == ("STOPPED", [])


def test_task_restart(harness):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=2), False)
    before = runners(harness, name)
    h.restart_task(name, 1)
    assert restarted(before, runners(harness, name)) == [1]
    assert states(h, name) == ("RUNNING", ["RUNNING", "RUNNING"])


def test_task_restart_of_unknown_task_is_not_found_and_starts_nothing(harness):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=2), False)
    with pytest.raises(NotFound) as info:
        h.restart_task(name, 5)
    assert info.value.message == f"Unknown task: {name}-5"
    with pytest.raises(NotFound):
        h.task_status(name, 5)
    assert states(h, name) == ("RUNNING", ["RUNNING", "RUNNING"])
    assert sorted(runners(harness, name)) == [0, 1]


def test_task_restart_of_stopped_connector_is_unknown_task(harness):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=2), False, "STOPPED")
    with pytest.raises(NotFound) as info:
        h.restart_task(name, 0)
    assert info.value.message == f"Unknown task: {name}-0"
    assert states(h, name) == ("STOPPED", [])


def test_task_restart_of_unknown_connector_is_not_found(harness):
    with pytest.raises(NotFound) as info:
        harness.herder.restart_task("ghost", 0)
    assert info.value.message == "Unknown connector: ghost"


@pytest.mark.parametrize("failing", ["all", "none"])
def test_task_status_is_final_when_the_call_returns(harness, failing):
    """Contract section 9: in standalone mode a state change is visible as soon as its request returns."""
    h = harness.herder
    expected = ["FAILED" if failing == "all" else "RUNNING"] * 4
    for _ in range(3):
        name = new_name()
        h.put_connector_config(name, source_config(name, tasks=4, **{"task.start.fail": failing}), False)
        assert states(h, name) == ("RUNNING", expected)
        h.restart_connector_and_tasks(RestartRequest(name, only_failed=False, include_tasks=True))
        assert states(h, name) == ("RUNNING", expected)
        h.delete_connector(name)
