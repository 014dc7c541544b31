"""Source offsets as stored in the offsets topic or file (contract section 3.3).

Key: `["<connector>",{<partition>}]`, value: `{<offset>}` or a tombstone, both compact JSON exactly as
Kafka's internal JsonConverter (schemas disabled) writes them. Lookups and log compaction go by the raw
key bytes, and Java re-serializes partition maps from `HashMap`s, so maps are written in Java HashMap
iteration order rather than dict order: the same partition then always has the same key bytes, whatever
order a task built its dict in, and those bytes match what a Java worker writes for it.

Reading is tolerant (OffsetUtils.processPartitionKey): anything that is not a 2-element
`[string, object]` list is logged and skipped.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson

from ..api.config import java_hash_order
from ..api.errors import DataError
from ..converters.json import dumps_schemaless

log = logging.getLogger(__name__)

_PRIMITIVES = (str, int, float, bool, bytes, bytearray)


def java_hashmap_order(data: Any) -> Any:
    """`data` with every string-keyed dict reordered as a Java HashMap built from it would iterate."""
    if isinstance(data, list):
        return [java_hashmap_order(v) for v in data]
    if not isinstance(data, dict):
        return data
    if len(data) <= 1 or not all(type(k) is str for k in data):
        return {k: java_hashmap_order(v) for k, v in data.items()}
    return {k: java_hashmap_order(data[k]) for k in java_hash_order(data)}


def encode_key(connector: str, partition: dict[str, Any]) -> bytes:
    """Offsets-topic key bytes for a connector's source partition."""
    if len(partition) == 1:
        return dumps_schemaless([connector, partition])
    return dumps_schemaless([connector, java_hashmap_order(partition)])


def decode_key(raw: bytes | None) -> tuple[str, dict[str, Any]] | None:
    """(connector, partition) from key bytes, or None (with a warning) when the key is not one of ours."""
    if raw is None:
        log.warning("Ignoring offset partition key with an unexpected null value")
        return None
    try:
        key = orjson.loads(raw)
    except orjson.JSONDecodeError:
        log.warning("Ignoring offset partition key with unknown serialization. Expected json.")
        return None
    if not isinstance(key, list):
        log.warning(
            "Ignoring offset partition key with an unexpected format. Expected type: java.util.List, actual type: %s",
            _type_name(key),
        )
        return None
    if len(key) != 2:
        log.warning(
            "Ignoring offset partition key with an unexpected number of elements. Expected: 2, actual: %d", len(key)
        )
        return None
    if not isinstance(key[0], str):
        log.warning(
            "Ignoring offset partition key with an unexpected format for the first element in the partition "
            "key list. Expected type: java.lang.String, actual type: %s",
            _type_name(key[0]),
        )
        return None
    if not isinstance(key[1], dict):
        if key[1] is not None:  # Kafka skips a null partition silently
            log.warning(
                "Ignoring offset partition key with an unexpected format for the second element in the "
                "partition key list. Expected type: java.util.Map, actual type: %s",
                _type_name(key[1]),
            )
        return None
    return key[0], key[1]


def encode_value(offset: dict[str, Any] | None) -> bytes | None:
    """Offset value bytes; None is a tombstone (the partition's offset is reset)."""
    if offset is None:
        return None
    return dumps_schemaless(java_hashmap_order(offset))


def decode_value(raw: bytes | None) -> dict[str, Any] | None:
    """The offset map, or None for a tombstone or (with a warning) anything that is not a JSON object."""
    if raw is None:
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        log.warning("Ignoring offset value with unknown serialization. Expected json.")
        return None
    if value is None:
        return None
    if not isinstance(value, dict):
        log.warning(
            "Ignoring offset value with an unexpected format. Expected type: java.util.Map, actual type: %s",
            _type_name(value),
        )
        return None
    return value


def validate_source_offsets_format(partition_or_offset: Any) -> None:
    """Kafka's OffsetUtils.validateFormat: string keys and primitive (or null) values only.

    Raises DataError with Kafka's messages; a list value is reported as ARRAY and a dict as MAP, the
    Connect schema types Java finds for them.
    """
    if partition_or_offset is None:
        return
    if not isinstance(partition_or_offset, dict):
        raise DataError("Offsets must be specified as a Map")
    for key, value in partition_or_offset.items():
        if not isinstance(key, str):
            raise DataError("Offsets may only use String keys")
        if value is None or isinstance(value, _PRIMITIVES):
            continue
        if isinstance(value, (list, tuple)):
            kind = "ARRAY"
        elif isinstance(value, dict):
            kind = "MAP"
        else:
            kind = "class " + _type_name(value)
        raise DataError(f"Offsets may only contain primitive types as values, but field {key} contains {kind}")


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    cls = type(value)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
