"""Status-topic records: the reference's exact bytes, and KIP-915 tolerance when reading."""

import orjson

from runtime.storage.base import InstanceStatus
from runtime.storage.states import State
from runtime.storage.status_codec import (
    TopicStatus,
    connector_key,
    decode_status,
    decode_topic_status,
    encode_status,
    encode_topic_status,
    parse_task_key,
    parse_topic_key,
    task_key,
    topic_key,
)


def test_status_value_bytes_match_the_reference():
    # bytes copied from a status topic written by Kafka Connect 3.9
    status = InstanceStatus(State.RUNNING, "127.0.0.1:48723", None, 1)
    assert encode_status(status) == b'{"state":"RUNNING","trace":null,"worker_id":"127.0.0.1:48723","generation":1}'
    assert decode_status("k", encode_status(status)) == status


def test_destroyed_is_a_tombstone():
    assert encode_status(InstanceStatus(State.DESTROYED, "w:1", None, 3)) is None


def test_topic_status_bytes_match_the_reference():
    status = TopicStatus("data-a", "src-a", 0, 1795361083658)
    raw = b'{"topic":{"name":"data-a","connector":"src-a","task":0,"discoverTimestamp":1795361083658}}'
    assert encode_topic_status(status) == raw
    assert decode_topic_status("k", raw) == status


def test_keys_round_trip_with_dashes_in_names():
    assert connector_key("my-conn") == "status-connector-my-conn"
    assert task_key("my-conn", 12) == "status-task-my-conn-12"
    assert parse_task_key("status-task-my-conn-12") == ("my-conn", 12)
    assert topic_key("my-conn", "t.1") == "status-topic-t.1:connector-my-conn"
    assert parse_topic_key("status-topic-t.1:connector-my-conn") == ("t.1", "my-conn")


def test_bad_keys_are_rejected_not_raised():
    assert parse_task_key("status-task-x") is None
    assert parse_task_key("status-task-x-notanumber") is None
    assert parse_topic_key("status-topic-nodelimiter") is None
    assert parse_topic_key("status-topic-:connector-c") is None


def test_reader_ignores_unknown_fields_and_skips_unreadable_values():
    future = orjson.dumps(
        {
            "state": "PAUSED",
            "trace": None,
            "worker_id": "w:1",
            "generation": 7,
            "version": "9.9",
            "something": {"new": True},
        }
    )
    assert decode_status("k", future) == InstanceStatus(State.PAUSED, "w:1", None, 7)
    for bad in (
        b"not json",
        b"[1,2]",
        orjson.dumps({"state": "HIBERNATING", "generation": 1}),
        orjson.dumps({"state": "RUNNING", "generation": "1"}),
    ):
        assert decode_status("k", bad) is None
    assert decode_topic_status("k", b'{"topic": 3}') is None
