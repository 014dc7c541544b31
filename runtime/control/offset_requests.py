"""Parsing and checking the bodies of `PATCH`/`DELETE /connectors/{c}/offsets` (KIP-875).

Messages are Kafka's (ConnectorsResource, SinkUtils.parseSinkConnectorOffsets, OffsetUtils.validateFormat,
Worker). Where this project differs (contract section 0): source-offset format violations are 400, not
500, and a source entry without a partition is a 400
(`The partition for a source connector offset cannot be null or missing`); Kafka has no such check and
would write a useless `["<c>",null]` key that every reader then ignores.
"""

from __future__ import annotations

import re
from typing import Any, overload

import orjson

from ..api.errors import DataError
from ..api.records import TopicPartition
from ..converters.json import dumps_schemaless
from ..data.java_numbers import java_double_str
from ..storage.offset_codec import encode_key, validate_source_offsets_format

KAFKA_TOPIC_KEY = "kafka_topic"
KAFKA_PARTITION_KEY = "kafka_partition"
KAFKA_OFFSET_KEY = "kafka_offset"

OFFSETS_REQUIRED_MESSAGE = "Partitions / offsets need to be provided for an alter offsets request"
ALTERED_DEFINITE_MESSAGE = "The offsets for this connector have been altered successfully"
RESET_DEFINITE_MESSAGE = "The offsets for this connector have been reset successfully"
ALTERED_POSSIBLE_MESSAGE = (
    "The Connect framework-managed offsets for this connector have been altered successfully. However, if this "
    "connector manages offsets externally, they will need to be manually altered in the system that the connector uses."
)
RESET_POSSIBLE_MESSAGE = (
    "The Connect framework-managed offsets for this connector have been reset successfully. However, if this "
    "connector manages offsets externally, they will need to be manually reset in the system that the connector uses."
)
SINK_PARTITION_MISSING_MESSAGE = "The partition for a sink connector offset cannot be null or missing"
SINK_PARTITION_KEYS_MESSAGE = (
    f"The partition for a sink connector offset must contain the keys '{KAFKA_TOPIC_KEY}' and '{KAFKA_PARTITION_KEY}'"
)
SINK_TOPIC_NULL_MESSAGE = "Kafka topic names must be valid strings and may not be null"
SINK_PARTITION_NULL_MESSAGE = "Kafka partitions must be valid numbers and may not be null"
SINK_OFFSET_KEY_MESSAGE = (
    f"The offset for a sink connector should either be null or contain the key '{KAFKA_OFFSET_KEY}'"
)
SOURCE_PARTITION_MISSING_MESSAGE = "The partition for a source connector offset cannot be null or missing"

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
_JAVA_INTEGER = re.compile(r"[+-]?\d+")  # Integer.parseInt / Long.parseLong: sign and digits, nothing else


class BadRequest(Exception):
    """A client error in an offsets request; the REST layer answers `status` with `message`."""

    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def success_message(definite: bool, reset: bool) -> str:
    """The 200 body message: `definite` when the connector's alter_offsets hook returned True."""
    if definite:
        return RESET_DEFINITE_MESSAGE if reset else ALTERED_DEFINITE_MESSAGE
    return RESET_POSSIBLE_MESSAGE if reset else ALTERED_POSSIBLE_MESSAGE


def not_stopped_message(connector: str) -> str:
    return (
        "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the "
        f"specified connector by issuing a 'PUT' request to the '/connectors/{connector}/stop' endpoint"
    )


def require_offsets(entries: list[Any] | None) -> list[Any]:
    """The first check of an alter request, before the connector is even looked up."""
    if not entries:
        raise BadRequest(OFFSETS_REQUIRED_MESSAGE)
    return entries


def java_string(value: Any) -> str:
    """`String.valueOf` of a JSON-decoded value, as Kafka's messages embed it."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_str(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{java_string(k)}={java_string(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(java_string(v) for v in value) + "]"
    return str(value)


def _parse_java_integer(value: Any, bounds: tuple[int, int]) -> int | None:
    """Integer.parseInt / Long.parseLong of String.valueOf(value); None when Java would throw."""
    if type(value) is int:
        number = value
    elif isinstance(value, str) and _JAVA_INTEGER.fullmatch(value):
        number = int(value)
    else:
        return None  # floats print as "5.0", booleans as "true": neither parses
    return number if bounds[0] <= number <= bounds[1] else None


def parse_sink_offsets(entries: list[dict[str, Any]]) -> dict[TopicPartition, int | None]:
    """Sink connector offsets by topic partition; None means "delete the committed offset"."""
    require_offsets(entries)
    parsed: dict[TopicPartition, int | None] = {}
    for entry in entries:
        partition = entry.get("partition") if isinstance(entry, dict) else None
        if partition is None:
            raise BadRequest(SINK_PARTITION_MISSING_MESSAGE)
        if not isinstance(partition, dict) or KAFKA_TOPIC_KEY not in partition or KAFKA_PARTITION_KEY not in partition:
            raise BadRequest(SINK_PARTITION_KEYS_MESSAGE)
        topic, raw_partition = partition[KAFKA_TOPIC_KEY], partition[KAFKA_PARTITION_KEY]
        if topic is None:
            raise BadRequest(SINK_TOPIC_NULL_MESSAGE)
        if raw_partition is None:
            raise BadRequest(SINK_PARTITION_NULL_MESSAGE)
        number = _parse_java_integer(raw_partition, _INT32)
        if number is None:
            raise BadRequest(
                f"Failed to parse the following Kafka partition value in the provided offsets: "
                f"'{java_string(raw_partition)}'. Partition values for sink connectors need to be integers."
            )
        tp = TopicPartition(java_string(topic), number)
        offset = entry.get("offset")
        if offset is None:
            parsed[tp] = None
            continue
        if not isinstance(offset, dict) or KAFKA_OFFSET_KEY not in offset:
            raise BadRequest(SINK_OFFSET_KEY_MESSAGE)
        raw_offset = offset[KAFKA_OFFSET_KEY]
        value = _parse_java_integer(raw_offset, _INT64)
        if value is None:
            raise BadRequest(
                f"Failed to parse the following Kafka offset value in the provided offsets: "
                f"'{java_string(raw_offset)}'. Offset values for sink connectors need to be integers."
            )
        parsed[tp] = value
    return parsed


@overload
def normalize_source_offset_map(data: dict[str, Any]) -> dict[str, Any]: ...
@overload
def normalize_source_offset_map(data: None) -> None: ...
def normalize_source_offset_map(data: dict[str, Any] | None) -> dict[str, Any] | None:
    """The map as it reads back from the offsets store (Kafka's JsonConverter round trip)."""
    if data is None:
        return None
    return orjson.loads(dumps_schemaless(data))


def parse_source_offsets(entries: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Validated, normalised (partition, offset) pairs; an offset of None resets that partition.

    A partition given twice keeps its last offset (Kafka collects the entries into a map).
    """
    require_offsets(entries)
    by_key: dict[bytes, tuple[dict[str, Any], dict[str, Any] | None]] = {}
    for entry in entries:
        partition = entry.get("partition") if isinstance(entry, dict) else None
        if partition is None:
            raise BadRequest(SOURCE_PARTITION_MISSING_MESSAGE)
        offset = entry.get("offset")
        try:
            validate_source_offsets_format(partition)
            validate_source_offsets_format(offset)
            normalized = (normalize_source_offset_map(partition), normalize_source_offset_map(offset))
        except DataError as exc:
            raise BadRequest(str(exc)) from None
        by_key[encode_key("", normalized[0])] = normalized
    return list(by_key.values())
