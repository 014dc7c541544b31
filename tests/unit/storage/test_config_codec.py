"""Config-topic records (contract section 3.1) and KIP-915 reading rules of runtime.storage.config_codec."""

from __future__ import annotations

import logging

import pytest

from runtime.storage.config_codec import (
    ConnectorState,
    commit_record,
    connector_record,
    connector_records,
    parse_target_state,
    read_records,
    target_state_record,
    task_record,
)
from runtime.storage.states import TargetState

CONFIG = {"name": "c", "connector.class": "SequenceSource"}


def tasks(n: int) -> list[dict[str, str]]:
    return [{"task.index": str(i)} for i in range(n)]


@pytest.mark.parametrize(
    "state, value",
    [
        (TargetState.STARTED, {"state": "STARTED", "state.v2": "STARTED"}),
        (TargetState.PAUSED, {"state": "PAUSED", "state.v2": "PAUSED"}),
        (TargetState.STOPPED, {"state": "PAUSED", "state.v2": "STOPPED"}),  # older readers fall back to PAUSED
    ],
)
def test_target_state_is_written_downgrade_safe(state, value):
    assert target_state_record("my-conn", state) == ("target-state-my-conn", value)
    assert target_state_record("my-conn", None) == ("target-state-my-conn", None)


def test_record_shapes():
    assert connector_record("c", CONFIG) == ("connector-c", {"properties": CONFIG})
    assert connector_record("c", None) == ("connector-c", None)
    assert task_record("a-b", 2, {"x": "1"}) == ("task-a-b-2", {"properties": {"x": "1"}})
    assert commit_record("c", 3) == ("commit-c", {"tasks": 3})


def test_connector_records_order_and_round_trip():
    state = ConnectorState(CONFIG, TargetState.STOPPED, tasks(2))
    records = connector_records("my-conn", state)
    assert [k for k, _ in records] == [
        "target-state-my-conn",
        "connector-my-conn",
        "task-my-conn-0",
        "task-my-conn-1",
        "commit-my-conn",
    ]
    assert read_records(records).connectors == {"my-conn": state}


@pytest.mark.parametrize(
    "value, expected",
    [
        ({"state": "PAUSED", "state.v2": "STOPPED"}, TargetState.STOPPED),
        ({"state": "PAUSED", "state.v2": "HIBERNATING"}, TargetState.PAUSED),  # unknown v2 -> fall back to `state`
        ({"state": "PAUSED", "state.v2": 7}, TargetState.PAUSED),  # v2 not a string -> `state`
        ({"state": "STARTED"}, TargetState.STARTED),  # v0 record
        ({"state": "BOGUS"}, None),
        ({}, None),
        ("PAUSED", None),
    ],
)
def test_parse_target_state(value, expected):
    assert parse_target_state(value) is expected


def test_unknown_v2_state_falls_back_when_reading_records():
    snapshot = read_records(
        [("connector-c", {"properties": CONFIG}), ("target-state-c", {"state": "PAUSED", "state.v2": "FUTURE_STATE"})]
    )
    assert snapshot.connectors["c"].target_state is TargetState.PAUSED


def test_unreadable_target_state_is_ignored_with_a_log(caplog):
    with caplog.at_level(logging.ERROR, logger="runtime.storage.config_codec"):
        snapshot = read_records(
            [
                ("target-state-c", {"state": "PAUSED"}),
                ("connector-c", {"properties": CONFIG}),
                ("target-state-c", {"state": "NOPE"}),
            ]
        )
    assert snapshot.connectors["c"].target_state is TargetState.PAUSED
    assert "target-state-c" in caplog.text


def test_target_state_before_config_applies_on_creation():
    snapshot = read_records(
        [("target-state-c", {"state": "PAUSED", "state.v2": "STOPPED"}), ("connector-c", {"properties": CONFIG})]
    )
    assert snapshot.connectors["c"].target_state is TargetState.STOPPED
    assert snapshot.pending_target_states == {}


def test_new_connector_without_target_state_is_started():
    assert read_records([("connector-c", {"properties": CONFIG})]).connectors["c"].target_state is TargetState.STARTED


def test_target_state_tombstone_resets_to_started():
    snapshot = read_records(
        [("connector-c", {"properties": CONFIG}), ("target-state-c", {"state": "PAUSED"}), ("target-state-c", None)]
    )
    assert snapshot.connectors["c"].target_state is TargetState.STARTED


def test_connector_tombstone_removes_it():
    snapshot = read_records(
        connector_records("c", ConnectorState(CONFIG, TargetState.PAUSED, tasks(1)))
        + [("connector-c", None), ("target-state-c", None)]
    )
    assert snapshot.connectors == {}


def test_unknown_keys_are_skipped_with_a_log(caplog):
    with caplog.at_level(logging.ERROR, logger="runtime.storage.config_codec"):
        snapshot = read_records(
            [("future-record-c", {"x": 1}), ("connector-c", {"properties": CONFIG}), (42, {"x": 1})]
        )
    assert list(snapshot.connectors) == ["c"]
    assert "Discarding config update record with invalid key: future-record-c" in caplog.text


def test_distributed_only_records_are_skipped_quietly(caplog):
    with caplog.at_level(logging.WARNING, logger="runtime.storage.config_codec"):
        snapshot = read_records(
            [
                ("connector-c", {"properties": CONFIG}),
                ("restart-connector-c", {"include-tasks": True, "only-failed": False}),
                ("tasks-fencing-c", {"task-count": 1}),
                ("session-key", {"key": "abc", "algorithm": "HmacSHA256", "creation-timestamp": 1}),
                ("logger-cluster-org.apache", {"level": "DEBUG"}),
            ]
        )
    assert list(snapshot.connectors) == ["c"]
    assert caplog.text == ""


def test_unknown_fields_in_values_are_ignored():
    snapshot = read_records(
        [
            ("connector-c", {"properties": CONFIG, "added-in-v9": {"x": 1}}),
            ("task-c-0", {"properties": {"a": "1"}, "extra": True}),
            ("commit-c", {"tasks": 1, "extra": "y"}),
            ("target-state-c", {"state": "PAUSED", "state.v2": "PAUSED", "state.v3": "X"}),
        ]
    )
    assert snapshot.connectors["c"] == ConnectorState(CONFIG, TargetState.PAUSED, [{"a": "1"}])


def test_malformed_values_are_ignored(caplog):
    with caplog.at_level(logging.ERROR, logger="runtime.storage.config_codec"):
        snapshot = read_records(
            [
                ("connector-c", {"properties": CONFIG}),
                ("connector-c", {"props": {"x": "y"}}),  # no properties: ignored
                ("connector-d", "not an object"),
                ("task-c-0", {"properties": {"a": "1"}}),
                ("task-c-x", {"properties": {}}),  # bad task key
                ("task-c-1", None),  # null task record
                ("commit-c", {"tasks": True}),  # bool is not a count
                ("commit-c", {"tasks": "1"}),
                ("commit-c", {"tasks": 1}),
            ]
        )
    assert snapshot.connectors == {"c": ConnectorState(CONFIG, TargetState.STARTED, [{"a": "1"}])}
    assert caplog.text


def test_task_configs_apply_only_on_commit():
    records = [("connector-c", {"properties": CONFIG}), ("task-c-0", {"properties": {"a": "1"}})]
    assert read_records(records).connectors["c"].task_configs == []
    assert read_records(records + [("commit-c", {"tasks": 1})]).connectors["c"].task_configs == [{"a": "1"}]


def test_dashes_in_connector_names_and_int_like_counts():
    records = [
        ("connector-my-long-name", {"properties": CONFIG}),
        ("task-my-long-name-1", {"properties": {"i": "1"}}),
        ("task-my-long-name-0", {"properties": {"i": "0"}}),
        ("commit-my-long-name", {"tasks": 2}),
    ]
    assert read_records(records).connectors["my-long-name"].task_configs == [{"i": "0"}, {"i": "1"}]


def test_inconsistent_task_set_reads_as_empty_until_a_full_commit(caplog):
    base = [
        ("connector-c", {"properties": CONFIG}),
        ("task-c-0", {"properties": {"i": "0"}}),
        ("commit-c", {"tasks": 1}),
    ]
    with caplog.at_level(logging.ERROR, logger="runtime.storage.config_codec"):
        snapshot = read_records(base + [("task-c-1", {"properties": {"i": "1"}}), ("commit-c", {"tasks": 3})])
    assert snapshot.connectors["c"].task_configs == []
    assert snapshot.inconsistent == {"c"}
    assert "inconsistent" in caplog.text
    healed = read_records(
        base
        + [
            ("task-c-1", {"properties": {"i": "1"}}),
            ("commit-c", {"tasks": 3}),
            ("task-c-0", {"properties": {"i": "0"}}),
            ("task-c-1", {"properties": {"i": "1"}}),
            ("commit-c", {"tasks": 2}),
        ]
    )
    assert healed.connectors["c"].task_configs == [{"i": "0"}, {"i": "1"}]
    assert healed.inconsistent == set()


def test_commit_of_zero_tasks_empties_the_task_list():
    """STOPPED is committed as 0 tasks."""
    snapshot = read_records(
        [
            ("connector-c", {"properties": CONFIG}),
            ("task-c-0", {"properties": {"i": "0"}}),
            ("commit-c", {"tasks": 1}),
            ("commit-c", {"tasks": 0}),
        ]
    )
    assert snapshot.connectors["c"].task_configs == []


def test_commit_for_unknown_connector_is_ignored():
    snapshot = read_records(
        [("task-gone-0", {"properties": {}}), ("commit-gone", {"tasks": 1}), ("connector-gone", {"properties": CONFIG})]
    )
    assert snapshot.connectors["gone"].task_configs == []


def test_null_property_values_are_dropped_and_others_stringified():
    snapshot = read_records([("connector-c", {"properties": {**CONFIG, "n": None, "i": 5}})])
    assert snapshot.connectors["c"].config == {**CONFIG, "i": "5"}
