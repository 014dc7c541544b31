"""Standalone state kept in files (contract section 0): a new herder on the same files brings connectors back."""

from __future__ import annotations

import json

import pytest

from .conftest import new_name, source_config, states, wait_for

pytestmark = pytest.mark.integration


def saved_offsets(h, name) -> dict[str, int]:
    return {e["partition"]["task.id"]: e["offset"]["saved"] for e in h.connector_offsets(name)["offsets"]}


def test_reloaded_herder_restores_target_states_and_offsets(make_herder, tmp_path):
    first = make_herder(folder=tmp_path)
    h = first.herder
    stopped, paused, running, created_paused = (new_name(p) for p in ("stopped", "paused", "running", "cpaused"))
    h.put_connector_config(stopped, source_config(stopped, tasks=2), False)
    h.stop_connector(stopped)
    h.put_connector_config(paused, source_config(paused, tasks=2), False)
    h.pause_connector(paused)
    h.put_connector_config(created_paused, source_config(created_paused, tasks=2), False, "PAUSED")
    h.put_connector_config(running, source_config(running, tasks=1, **{"messages.per.task": "5"}), False)
    wait_for(lambda: saved_offsets(h, running) == {f"{running}-0": 5}, 20, "offsets to reach 5")
    h.stop()

    # the files are the reference's records, readable as the config topic would be
    records = json.loads((tmp_path / "connect.configs").read_text())["records"]
    assert {"key": f"target-state-{stopped}", "value": {"state": "PAUSED", "state.v2": "STOPPED"}} in records
    assert {"key": f"commit-{stopped}", "value": {"tasks": 0}} in records  # STOPPED commits an empty task set
    assert {"key": f"commit-{paused}", "value": {"tasks": 2}} in records

    second = make_herder(folder=tmp_path)
    h2 = second.herder
    assert h2.connector_names() == sorted([stopped, paused, running, created_paused])
    assert states(h2, stopped) == ("STOPPED", [])
    assert h2.connector_info(stopped)["tasks"] == []
    assert states(h2, paused) == ("PAUSED", ["PAUSED", "PAUSED"])
    assert len(h2.task_infos(paused)) == 2
    assert states(h2, created_paused) == ("PAUSED", [])
    assert states(h2, running) == ("RUNNING", ["RUNNING"])
    assert h2.connector_config(running)["messages.per.task"] == "5"

    # the source resumed at its committed offset: the new task instance has nothing left to produce
    task = second.worker.tasks[(running, 0)].task
    assert task.seqno == 5
    assert saved_offsets(h2, running) == {f"{running}-0": 5}
    assert task.produced == 0

    h2.resume_connector(paused)
    assert states(h2, paused) == ("RUNNING", ["RUNNING", "RUNNING"])
    h2.resume_connector(stopped)
    assert states(h2, stopped) == ("RUNNING", ["RUNNING", "RUNNING"])


def test_deleted_connector_stays_deleted_after_reload(make_herder, tmp_path):
    first = make_herder(folder=tmp_path)
    keep, gone = new_name("keep"), new_name("gone")
    first.herder.put_connector_config(keep, source_config(keep), False)
    first.herder.put_connector_config(gone, source_config(gone), False)
    first.herder.delete_connector(gone)
    first.herder.stop()
    second = make_herder(folder=tmp_path)
    assert second.herder.connector_names() == [keep]
    assert states(second.herder, keep) == ("RUNNING", ["RUNNING", "RUNNING"])


def test_config_update_is_persisted(make_herder, tmp_path):
    first = make_herder(folder=tmp_path)
    name = new_name()
    first.herder.put_connector_config(name, source_config(name, tasks=1), False)
    first.herder.patch_connector_config(name, {"tasks.max": "3"})
    first.herder.stop()
    second = make_herder(folder=tmp_path)
    assert second.herder.connector_config(name)["tasks.max"] == "3"
    assert states(second.herder, name) == ("RUNNING", ["RUNNING"] * 3)


def test_memory_herder_keeps_nothing(make_herder):
    first = make_herder(persistent=False)
    name = new_name()
    first.herder.put_connector_config(name, source_config(name), False)
    first.herder.stop()
    assert make_herder(persistent=False).herder.connector_names() == []


def test_stored_connector_whose_plugin_is_gone_comes_back_failed(make_herder, tmp_path):
    """A connector file naming a class this worker cannot load must not stop the worker from starting."""
    from runtime.storage.config_codec import ConnectorState, connector_records
    from runtime.storage.states import TargetState

    good = new_name("good")
    records = connector_records(
        "gone",
        ConnectorState(
            {"name": "gone", "connector.class": "com.example.Removed", "tasks.max": "1"},
            TargetState.STARTED,
            [{"task.class": "x.Y"}],
        ),
    )
    records += connector_records(good, ConnectorState(source_config(good, tasks=1), TargetState.STARTED, []))
    (tmp_path / "connect.configs").write_text(
        json.dumps({"format": 1, "records": [{"key": k, "value": v} for k, v in records]})
    )
    harness = make_herder(folder=tmp_path)
    h = harness.herder
    assert h.connector_names() == sorted(["gone", good])
    body = h.connector_status("gone")
    assert body["connector"]["state"] == "FAILED" and body["type"] == "unknown"
    assert "com.example.Removed" in body["connector"]["trace"]
    assert states(h, good) == ("RUNNING", ["RUNNING"])
    h.delete_connector("gone")
    assert h.connector_names() == [good]
