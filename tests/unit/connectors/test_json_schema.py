"""JSON Schema to Connect schemas and values (the schemas of Singer and Airbyte streams)."""

from __future__ import annotations

import datetime as dt

import pytest

from runtime.api import DataError
from runtime.connectors.json_schema import key_converter, record_converter

STREAM = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "price": {"type": ["null", "number"]},
        "airbyte_int": {"type": "number", "airbyte_type": "integer"},
        "at": {"type": "string", "format": "date-time"},
        "naive": {"type": "string", "airbyte_type": "timestamp_without_timezone"},
        "day": {"type": ["string", "null"], "format": "date"},
        "clock": {"type": "string", "format": "time"},
        "ok": {"type": "boolean"},
        "address": {"type": "object", "properties": {"city": {"type": "string"}}},
        "doc": {"type": ["null", "object"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "any": {"type": ["string", "integer"]},
        "choice": {"anyOf": [{"type": "null"}, {"type": "integer"}]},
    },
}


def test_json_schema_maps_to_connect_types_and_values() -> None:
    schema, convert = record_converter(STREAM)
    types = {f.name: (f.schema.type, f.schema.name, f.schema.optional) for f in schema.fields}
    assert types == {
        "id": ("int64", None, True),
        "price": ("float64", None, True),
        "airbyte_int": ("int64", None, True),
        "at": ("int64", "org.apache.kafka.connect.data.Timestamp", True),
        "naive": ("int64", "org.apache.kafka.connect.data.Timestamp", True),
        "day": ("int32", "org.apache.kafka.connect.data.Date", True),
        "clock": ("int32", "org.apache.kafka.connect.data.Time", True),
        "ok": ("boolean", None, True),
        "address": ("struct", None, True),
        "doc": ("string", None, True),
        "tags": ("array", None, True),
        "any": ("string", None, True),
        "choice": ("int64", None, True),
    }
    value = convert(
        {
            "id": 1,
            "price": 2,
            "airbyte_int": 3.0,
            "at": "2024-05-01T10:00:00.123456+02:00",
            "naive": "2024-05-01T10:00:00",
            "day": "2024-05-01T00:00:00+00:00",
            "clock": "10:11:12",
            "ok": True,
            "address": {"city": "Oslo", "zip": "0150"},
            "doc": {"a": [1, 2]},
            "tags": ["x"],
            "any": 7,
            "extra": "dropped",
        }
    )
    assert value == {
        "id": 1,
        "price": 2.0,
        "airbyte_int": 3,
        "at": dt.datetime(2024, 5, 1, 10, 0, 0, 123456, tzinfo=dt.timezone(dt.timedelta(hours=2))),
        "naive": dt.datetime(2024, 5, 1, 10, tzinfo=dt.UTC),
        "day": dt.date(2024, 5, 1),
        "clock": dt.time(10, 11, 12),
        "ok": True,
        "address": {"city": "Oslo"},
        "doc": '{"a":[1,2]}',
        "tags": ["x"],
        "any": "7",
        "choice": None,
    }
    with pytest.raises(DataError, match="Field 'id': Not an integer: 'x'"):
        convert({"id": "x"})
    key_schema, convert_key = key_converter(STREAM, ["id"])
    assert [f.name for f in key_schema.fields] == ["id"] and convert_key({"id": 5, "ok": False}) == {"id": 5}
    assert key_converter(STREAM, []) is None
    with pytest.raises(DataError, match="not properties"):
        key_converter(STREAM, ["nope"])
