"""Connector files applied to a herder as the standalone CLI does, on top of persisted state (contract 0 and 6)."""

from __future__ import annotations

import json

import pytest

from runtime.bootstrap.standalone import StandaloneRuntime
from runtime.bootstrap.startup import StartupError
from runtime.connector_files import parse_connector_file

from .conftest import new_name, states

pytestmark = pytest.mark.integration


def apply(harness, *paths) -> None:
    runtime = StandaloneRuntime(harness.herder.config)
    runtime.herder = harness.herder
    runtime.apply_connector_files([parse_connector_file(p) for p in paths])


def test_files_are_applied_over_persisted_state(make_herder, tmp_path):
    state_dir = tmp_path / "state"
    a, b = new_name("a"), new_name("b")
    a_file = tmp_path / "a.json"
    a_file.write_text(
        json.dumps(
            {
                "name": a,
                "config": {
                    "connector.class": "SequenceSource",
                    "tasks.max": "2",
                    "topic": f"{a}-t",
                    "messages.per.task": "0",
                },
                "initial_state": "paused",
            }
        )
    )
    b_file = tmp_path / "b.properties"
    b_file.write_text(f"name={b}\nconnector.class=SequenceSource\ntasks.max=1\ntopic={b}-t\nmessages.per.task=0\n")

    first = make_herder(folder=state_dir)
    apply(first, a_file, b_file)
    assert states(first.herder, a) == ("PAUSED", [])
    assert states(first.herder, b) == ("RUNNING", ["RUNNING"])
    first.herder.resume_connector(a)
    first.herder.stop_connector(b)
    first.herder.stop()

    # restart with the same files, b's file now asking for 3 tasks
    b_file.write_text(f"name={b}\nconnector.class=SequenceSource\ntasks.max=3\ntopic={b}-t\nmessages.per.task=0\n")
    second = make_herder(folder=state_dir)
    apply(second, a_file, b_file)
    assert states(second.herder, a) == ("RUNNING", ["RUNNING", "RUNNING"])  # initial_state only applies on creation
    assert states(second.herder, b) == ("STOPPED", [])  # the config update keeps the persisted target state
    assert second.herder.connector_config(b)["tasks.max"] == "3"
    second.herder.resume_connector(b)
    assert states(second.herder, b) == ("RUNNING", ["RUNNING"] * 3)


def test_invalid_connector_file_stops_with_exit_code_3(harness, tmp_path):
    name = new_name()
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"name": name, "connector.class": "NoSuchConnector"}))
    with pytest.raises(StartupError) as info:
        apply(harness, path)
    assert info.value.code == 3
    assert "Stopping after connector error" in str(info.value)
    assert "NoSuchConnector" in str(info.value)
    assert name not in harness.herder.connector_names()
