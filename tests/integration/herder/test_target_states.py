"""KIP-52/875/980 target states on a real standalone herder: the status right after each call returns."""

from __future__ import annotations

import pytest

from runtime.control.errors import BadRequest, NotFound

from .conftest import new_name, source_config, states

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    "initial, expected",
    [
        (None, "RUNNING"),
        ("RUNNING", "RUNNING"),
        ("running", "RUNNING"),
        ("Paused", "PAUSED"),
        ("PAUSED", "PAUSED"),
        ("stopped", "STOPPED"),
        ("STOPPED", "STOPPED"),
    ],
)
def test_create_in_each_initial_state(harness, initial, expected):
    h = harness.herder
    name = new_name()
    created, info = h.put_connector_config(name, source_config(name, tasks=3), False, initial)
    assert created is True
    task_count = 3 if expected == "RUNNING" else 0  # PAUSED/STOPPED on create: tasks only generated on resume
    assert info["tasks"] == [{"connector": name, "task": i} for i in range(task_count)]
    assert info["type"] == "source"
    assert states(h, name) == (expected, ["RUNNING"] * task_count)
    assert len(h.task_infos(name)) == task_count
    h.resume_connector(name)
    assert states(h, name) == ("RUNNING", ["RUNNING"] * 3)
    assert len(h.connector_info(name)["tasks"]) == 3


def test_invalid_initial_state_is_a_bad_request_and_creates_nothing(harness):
    h = harness.herder
    name = new_name()
    with pytest.raises(BadRequest):
        h.put_connector_config(name, source_config(name), False, "SLEEPING")
    assert name not in h.connector_names()


def test_pause_stop_resume_cycle(harness):
    """ConnectWorkerIntegrationTest.testPauseStopResume, one status check per step."""
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=4), False)
    assert states(h, name) == ("RUNNING", ["RUNNING"] * 4)

    for _ in range(2):  # idempotent
        h.stop_connector(name)
        assert states(h, name) == ("STOPPED", [])
        assert h.connector_info(name)["tasks"] == []
        assert h.task_infos(name) == []

    for _ in range(2):
        h.resume_connector(name)
        assert states(h, name) == ("RUNNING", ["RUNNING"] * 4)

    for _ in range(2):
        h.pause_connector(name)
        assert states(h, name) == ("PAUSED", ["PAUSED"] * 4)
        assert len(h.connector_info(name)["tasks"]) == 4

    h.stop_connector(name)  # PAUSED -> STOPPED
    assert states(h, name) == ("STOPPED", [])

    h.pause_connector(name)  # STOPPED -> PAUSED: no tasks come back
    assert states(h, name) == ("PAUSED", [])
    assert h.connector_info(name)["tasks"] == []

    h.resume_connector(name)  # tasks regenerated
    assert states(h, name) == ("RUNNING", ["RUNNING"] * 4)
    assert len(h.task_infos(name)) == 4

    h.delete_connector(name)
    assert name not in h.connector_names()
    with pytest.raises(NotFound):
        h.connector_status(name)


def test_resume_of_running_connector_keeps_its_tasks(harness):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=2), False)
    runners = {i: harness.worker.tasks[(name, i)] for i in range(2)}
    h.resume_connector(name)
    assert states(h, name) == ("RUNNING", ["RUNNING", "RUNNING"])
    assert {i: harness.worker.tasks[(name, i)] for i in range(2)} == runners


@pytest.mark.parametrize("action", ["pause_connector", "resume_connector", "stop_connector"])
def test_target_state_change_of_unknown_connector_is_not_found(harness, action):
    with pytest.raises(NotFound) as info:
        getattr(harness.herder, action)("no-such-connector")
    assert "no-such-connector" in info.value.message


def test_failed_connector_can_only_be_stopped(harness):
    """A FAILED connector ignores pause/resume (still FAILED); stop gives STOPPED; a fix + resume runs it."""
    h = harness.herder
    name = new_name()
    config = source_config(name, tasks=2, **{"connector.start.fail": "true"})
    h.put_connector_config(name, config, False)
    body = h.connector_status(name)
    assert body["connector"]["state"] == "FAILED"
    assert "connector.start.fail" in body["connector"]["trace"]
    assert body["tasks"] == []

    h.pause_connector(name)
    assert states(h, name) == ("FAILED", [])
    h.resume_connector(name)
    assert states(h, name) == ("FAILED", [])

    h.stop_connector(name)
    assert states(h, name) == ("STOPPED", [])
    assert "trace" not in h.connector_status(name)["connector"]

    fixed = dict(config, **{"connector.start.fail": "false"})
    created, info = h.put_connector_config(name, fixed, True)
    assert created is False
    assert info["tasks"] == []
    assert states(h, name) == ("STOPPED", [])  # config edits keep the target state

    h.resume_connector(name)
    assert states(h, name) == ("RUNNING", ["RUNNING", "RUNNING"])


def test_throwing_stop_still_gives_stopped_and_resume_runs_again(harness):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=2, **{"connector.stop.fail": "true"}), False)
    assert states(h, name) == ("RUNNING", ["RUNNING", "RUNNING"])
    h.stop_connector(name)
    assert states(h, name) == ("STOPPED", [])
    assert h.connector_info(name)["tasks"] == []
    h.resume_connector(name)
    assert states(h, name) == ("RUNNING", ["RUNNING", "RUNNING"])
    h.pause_connector(name)
    assert states(h, name) == ("PAUSED", ["PAUSED", "PAUSED"])


@pytest.mark.parametrize("target", ["PAUSED", "STOPPED"])
def test_config_edits_keep_the_target_state(harness, target):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=2), False)
    (h.pause_connector if target == "PAUSED" else h.stop_connector)(name)

    h.put_connector_config(name, source_config(name, tasks=3), True)
    assert h.connector_status(name)["connector"]["state"] == target
    h.patch_connector_config(name, {"tasks.max": "4"})
    assert h.connector_status(name)["connector"]["state"] == target
    assert h.connector_config(name)["tasks.max"] == "4"
    if target == "STOPPED":
        assert states(h, name) == ("STOPPED", [])
        assert h.connector_info(name)["tasks"] == []

    h.resume_connector(name)  # the edit made while not running takes effect now
    assert states(h, name) == ("RUNNING", ["RUNNING"] * 4)


def test_tasks_max_changes_replace_the_tasks(harness):
    """Scenario 19: tasks.max 1 -> 5 -> 3, exactly that many tasks right after each PUT."""
    h = harness.herder
    name = new_name()
    for count in (1, 5, 3):
        h.put_connector_config(name, source_config(name, tasks=count), True)
        assert states(h, name) == ("RUNNING", ["RUNNING"] * count)
        assert [t["task"] for t in h.connector_info(name)["tasks"]] == list(range(count))
        assert sorted(i for c, i in harness.worker.tasks if c == name) == list(range(count))


def test_patch_changes_tasks_max_and_deletes_keys(harness):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=2, **{"to-be-deleted-key": "x"}), False)
    info = h.patch_connector_config(name, {"tasks.max": "3", "to-be-added-key": "value", "to-be-deleted-key": None})
    assert len(info["tasks"]) == 3
    config = h.connector_config(name)
    assert config["tasks.max"] == "3" and config["to-be-added-key"] == "value" and "to-be-deleted-key" not in config
    assert config["name"] == name
    assert states(h, name) == ("RUNNING", ["RUNNING"] * 3)


def test_create_existing_is_conflict_and_changes_nothing(harness):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=2), False)
    with pytest.raises(Exception) as info:
        h.put_connector_config(name, source_config(name, tasks=5), False, "STOPPED")
    assert getattr(info.value, "status", None) == 409
    assert info.value.message == f"Connector {name} already exists"
    assert states(h, name) == ("RUNNING", ["RUNNING", "RUNNING"])
    assert h.connector_config(name)["tasks.max"] == "2"


def test_created_paused_or_stopped_can_be_deleted(harness):
    h = harness.herder
    name = new_name()
    for initial in ("PAUSED", "STOPPED"):
        h.put_connector_config(name, source_config(name), False, initial)
        h.delete_connector(name)
        assert name not in h.connector_names()
        with pytest.raises(NotFound):
            h.connector_info(name)
        with pytest.raises(NotFound):
            h.connector_status(name)


def test_config_edit_of_paused_connector_keeps_its_paused_tasks(harness):
    """Reference: PUT config stops only the connector; tasks are regenerated on resume, so a PAUSED connector
    keeps its (old) tasks, PAUSED (contract 2.1: "existing tasks stay allocated and go PAUSED")."""
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=2), False)
    h.pause_connector(name)
    h.put_connector_config(name, source_config(name, tasks=3), True)
    assert states(h, name) == ("PAUSED", ["PAUSED", "PAUSED"])
    assert len(h.connector_info(name)["tasks"]) == 2
    h.resume_connector(name)
    assert states(h, name) == ("RUNNING", ["RUNNING"] * 3)


def test_identical_config_put_does_not_restart_tasks(harness):
    """Reference (StandaloneHerder.updateConnectorTasks): tasks are replaced only when their configs change."""
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=2), False)
    before = {i: harness.worker.tasks[(name, i)] for i in range(2)}
    created, info = h.put_connector_config(name, source_config(name, tasks=2), True)
    assert created is False and len(info["tasks"]) == 2
    assert states(h, name) == ("RUNNING", ["RUNNING", "RUNNING"])
    assert {i: harness.worker.tasks[(name, i)] for i in range(2)} == before


def test_unknown_connector_reads_and_edits_are_not_found(harness):
    h = harness.herder
    for call in (
        lambda: h.connector_info("ghost"),
        lambda: h.connector_config("ghost"),
        lambda: h.task_infos("ghost"),
        lambda: h.connector_status("ghost"),
        lambda: h.task_status("ghost", 0),
        lambda: h.patch_connector_config("ghost", {"tasks.max": "2"}),
        lambda: h.delete_connector("ghost"),
    ):
        with pytest.raises(NotFound):
            call()
    assert "ghost" not in h.connector_names()


def test_fixing_a_failed_connector_with_put_runs_it(harness):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=2, **{"connector.start.fail": "true"}), False)
    assert states(h, name) == ("FAILED", [])
    h.put_connector_config(name, source_config(name, tasks=2), True)
    assert states(h, name) == ("RUNNING", ["RUNNING", "RUNNING"])


def test_task_restart_of_paused_connector_keeps_it_paused(harness):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=2), False)
    h.pause_connector(name)
    h.restart_task(name, 0)
    assert states(h, name) == ("PAUSED", ["PAUSED", "PAUSED"])
