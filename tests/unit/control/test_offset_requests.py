"""Offsets REST bodies: Kafka's exact messages (SinkUtils, OffsetUtils, Worker) and this project's 400s."""

from __future__ import annotations

import pytest

from runtime.api.records import TopicPartition
from runtime.control.offset_requests import (
    ALTERED_DEFINITE_MESSAGE,
    ALTERED_POSSIBLE_MESSAGE,
    OFFSETS_REQUIRED_MESSAGE,
    RESET_DEFINITE_MESSAGE,
    RESET_POSSIBLE_MESSAGE,
    BadRequest,
    not_stopped_message,
    parse_sink_offsets,
    parse_source_offsets,
    require_offsets,
    success_message,
)


def sink_bad(entries) -> str:
    with pytest.raises(BadRequest) as info:
        parse_sink_offsets(entries)
    assert info.value.status == 400
    return info.value.message


def test_messages():
    assert OFFSETS_REQUIRED_MESSAGE == "Partitions / offsets need to be provided for an alter offsets request"
    assert (
        success_message(True, False)
        == ALTERED_DEFINITE_MESSAGE
        == "The offsets for this connector have been altered successfully"
    )
    assert (
        success_message(True, True)
        == RESET_DEFINITE_MESSAGE
        == "The offsets for this connector have been reset successfully"
    )
    assert (
        success_message(False, False)
        == ALTERED_POSSIBLE_MESSAGE
        == (
            "The Connect framework-managed offsets for this connector have been altered successfully. However, if this "
            "connector manages offsets externally, they will need to be manually altered in the system that the connector uses."
        )
    )
    assert (
        success_message(False, True) == RESET_POSSIBLE_MESSAGE == ALTERED_POSSIBLE_MESSAGE.replace("altered", "reset")
    )
    assert not_stopped_message("my-conn") == (
        "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the "
        "specified connector by issuing a 'PUT' request to the '/connectors/my-conn/stop' endpoint"
    )


@pytest.mark.parametrize("entries", [None, []])
def test_empty_offsets(entries):
    with pytest.raises(BadRequest, match=OFFSETS_REQUIRED_MESSAGE):
        require_offsets(entries)
    with pytest.raises(BadRequest, match=OFFSETS_REQUIRED_MESSAGE):
        parse_sink_offsets(entries)
    with pytest.raises(BadRequest, match=OFFSETS_REQUIRED_MESSAGE):
        parse_source_offsets(entries)


def test_sink_offsets_parse_numbers_numeric_strings_and_deletes():
    parsed = parse_sink_offsets(
        [
            {"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": None},
            {"partition": {"kafka_topic": "t", "kafka_partition": "1"}, "offset": {"kafka_offset": 5}},
            {"partition": {"kafka_topic": "t", "kafka_partition": 2}, "offset": {"kafka_offset": "9000000000"}},
            {"partition": {"kafka_topic": 7, "kafka_partition": 3}},
        ]
    )
    assert parsed == {
        TopicPartition("t", 0): None,
        TopicPartition("t", 1): 5,
        TopicPartition("t", 2): 9000000000,
        TopicPartition("7", 3): None,
    }


def test_sink_partition_errors():
    missing = "The partition for a sink connector offset cannot be null or missing"
    assert sink_bad([{}]) == missing
    assert sink_bad([{"partition": None, "offset": None}]) == missing
    assert sink_bad([{"partition": {}, "offset": None}]) == (
        "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"
    )
    assert sink_bad([{"partition": {"kafka_topic": None, "kafka_partition": 0}}]) == (
        "Kafka topic names must be valid strings and may not be null"
    )
    assert sink_bad([{"partition": {"kafka_topic": "t", "kafka_partition": None}}]) == (
        "Kafka partitions must be valid numbers and may not be null"
    )
    assert sink_bad([{"partition": {"kafka_topic": "t", "kafka_partition": "not a number"}}]) == (
        "Failed to parse the following Kafka partition value in the provided offsets: 'not a number'. "
        "Partition values for sink connectors need to be integers."
    )


@pytest.mark.parametrize(
    "value,shown", [(1.5, "1.5"), (True, "true"), (" 1", " 1"), (2**31, "2147483648"), (2.0, "2.0")]
)
def test_sink_partition_must_parse_as_java_int(value, shown):
    message = sink_bad([{"partition": {"kafka_topic": "t", "kafka_partition": value}}])
    assert f"value in the provided offsets: '{shown}'. Partition values" in message


def test_sink_offset_errors():
    partition = {"kafka_topic": "t", "kafka_partition": 0}
    assert sink_bad([{"partition": partition, "offset": {}}]) == (
        "The offset for a sink connector should either be null or contain the key 'kafka_offset'"
    )
    assert sink_bad([{"partition": partition, "offset": {"kafka_offset": "not a number"}}]) == (
        "Failed to parse the following Kafka offset value in the provided offsets: 'not a number'. "
        "Offset values for sink connectors need to be integers."
    )
    # Contract section 0: {"kafka_offset": null} is a 400 with null in the message.
    assert sink_bad([{"partition": partition, "offset": {"kafka_offset": None}}]) == (
        "Failed to parse the following Kafka offset value in the provided offsets: 'null'. "
        "Offset values for sink connectors need to be integers."
    )


def test_source_offsets_are_validated_and_normalised():
    parsed = parse_source_offsets(
        [
            {"partition": {"task.id": "c-0"}, "offset": {"saved": 5}},
            {"partition": {"task.id": "c-1"}, "offset": None},
            {"partition": {"task.id": "c-0"}, "offset": {"saved": 7, "raw": b"\x01"}},
        ]
    )
    assert parsed == [({"task.id": "c-0"}, {"saved": 7, "raw": "AQ=="}), ({"task.id": "c-1"}, None)]


def test_source_partition_is_required():
    for entry in ({}, {"partition": None, "offset": {"saved": 1}}):
        with pytest.raises(BadRequest) as info:
            parse_source_offsets([entry])
        assert info.value.message == "The partition for a source connector offset cannot be null or missing"


def test_source_format_violations_are_bad_requests():
    with pytest.raises(BadRequest) as info:
        parse_source_offsets([{"partition": {"f": [1]}, "offset": None}])
    assert info.value.message == "Offsets may only contain primitive types as values, but field f contains ARRAY"
    with pytest.raises(BadRequest) as info:
        parse_source_offsets([{"partition": {"f": "x"}, "offset": {"o": {"n": 1}}}])
    assert info.value.message == "Offsets may only contain primitive types as values, but field o contains MAP"
    with pytest.raises(BadRequest) as info:
        parse_source_offsets([{"partition": {1: "x"}, "offset": None}])
    assert info.value.message == "Offsets may only use String keys"
