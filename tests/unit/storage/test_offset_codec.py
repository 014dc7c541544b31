"""Source offset records: exact key/value bytes, tolerant decoding, Kafka's format validation."""

from __future__ import annotations

import logging

import pytest

from runtime.api.errors import DataError
from runtime.storage.offset_codec import (
    decode_key,
    decode_value,
    encode_key,
    encode_value,
    validate_source_offsets_format,
)


def test_key_is_compact_json_list():
    assert encode_key("my-source", {"filename": "/tmp/in.txt"}) == b'["my-source",{"filename":"/tmp/in.txt"}]'
    assert encode_key("c", {"task.id": "c-0"}) == b'["c",{"task.id":"c-0"}]'


def test_multi_field_partitions_use_java_hashmap_order_whatever_the_dict_order():
    # Order checked against java.util.HashMap on JDK 17 for these keys.
    expected = b'["c",{"a":2,"b":1,"filename":"x","kafka_partition":0,"kafka_topic":"t"}]'
    assert encode_key("c", {"b": 1, "a": 2, "filename": "x", "kafka_topic": "t", "kafka_partition": 0}) == expected
    assert encode_key("c", {"kafka_topic": "t", "kafka_partition": 0, "filename": "x", "a": 2, "b": 1}) == expected


def test_value_encoding_and_tombstone():
    assert encode_value({"position": 42}) == b'{"position":42}'
    assert encode_value({"f": 1e7, "s": "x"}) == b'{"s":"x","f":1.0E7}'  # HashMap order, Java double notation
    assert encode_value(None) is None


def test_round_trip():
    key = encode_key("conn", {"file": "a", "n": 3, "ok": True, "r": 1.5, "none": None})
    assert decode_key(key) == ("conn", {"file": "a", "n": 3, "ok": True, "r": 1.5, "none": None})
    assert decode_value(encode_value({"offset": 10})) == {"offset": 10}
    assert decode_value(None) is None


@pytest.mark.parametrize(
    "raw,log_text",
    [
        (None, "unexpected null value"),
        (b"\x00", "unknown serialization"),
        (b'{"a":1}', "unexpected format"),
        (b'["c",{"a":1},3]', "unexpected number of elements"),
        (b'[1,{"a":1}]', "first element"),
        (b'["c",[1]]', "second element"),
    ],
)
def test_foreign_keys_are_skipped_with_a_warning(raw, log_text, caplog):
    with caplog.at_level(logging.WARNING, logger="runtime.storage.offset_codec"):
        assert decode_key(raw) is None
    assert log_text in caplog.text


def test_null_partition_is_skipped_silently(caplog):
    with caplog.at_level(logging.WARNING, logger="runtime.storage.offset_codec"):
        assert decode_key(b'["c",null]') is None
    assert caplog.text == ""


def test_undecodable_values_are_skipped_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="runtime.storage.offset_codec"):
        assert decode_value(b"not json") is None
        assert decode_value(b"[1]") is None
    assert "unknown serialization" in caplog.text and "unexpected format" in caplog.text
    assert decode_value(b"null") is None


def test_validate_format_accepts_primitives_and_nulls():
    validate_source_offsets_format({"s": "x", "i": 1, "f": 1.5, "b": False, "n": None, "raw": b"\x00"})
    validate_source_offsets_format(None)


def test_validate_format_messages():
    with pytest.raises(DataError) as info:
        validate_source_offsets_format({1: "v"})
    assert str(info.value) == "Offsets may only use String keys"
    with pytest.raises(DataError) as info:
        validate_source_offsets_format({"key": [1, 2]})
    assert str(info.value) == "Offsets may only contain primitive types as values, but field key contains ARRAY"
    with pytest.raises(DataError) as info:
        validate_source_offsets_format({"key": {"nested": 1}})
    assert str(info.value) == "Offsets may only contain primitive types as values, but field key contains MAP"
    with pytest.raises(DataError, match="but field key contains class object"):
        validate_source_offsets_format({"key": object()})
    with pytest.raises(DataError, match="Offsets must be specified as a Map"):
        validate_source_offsets_format([1])
