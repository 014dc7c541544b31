"""Flatten, SetSchemaMetadata, Filter, HeaderFrom, InsertHeader, DropHeaders and the predicates."""

from __future__ import annotations

import pytest

from runtime.api.data import (
    BOOLEAN_SCHEMA,
    INT8_SCHEMA,
    INT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
)
from runtime.api.errors import ConfigError, DataError
from runtime.api.records import Header
from runtime.transforms.filter import Filter
from runtime.transforms.flatten import FlattenKey, FlattenValue
from runtime.transforms.headers import DropHeaders, HeaderFromKey, HeaderFromValue, InsertHeader
from runtime.transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches
from runtime.transforms.set_schema_metadata import SetSchemaMetadataKey, SetSchemaMetadataValue

from .conftest import make, sink, source, struct


def test_flatten_schemaless_nested_maps() -> None:
    out = make(FlattenValue).apply(sink({"a": {"b": {"c": 1}, "d": [1, 2]}, "e": None, "f": "x"}))
    assert out.value == {"a.b.c": 1, "a.d": [1, 2], "e": None, "f": "x"}
    assert make(FlattenKey, delimiter="_").apply(sink(None, key={"k": {"id": 1}})).key == {"k_id": 1}


def test_flatten_with_schema_propagates_optionality() -> None:
    inner = struct(("x", INT32_SCHEMA), ("y", STRING_SCHEMA), optional=True)
    schema = struct(("id", INT32_SCHEMA), ("inner", inner), name="outer")
    out = make(FlattenValue).apply(sink({"id": 1, "inner": {"x": 2, "y": "z"}}, schema))
    assert out.value == {"id": 1, "inner.x": 2, "inner.y": "z"}
    fields = [(f.name, f.schema.type, f.schema.optional) for f in out.value_schema.fields]
    assert fields == [("id", "int32", False), ("inner.x", "int32", True), ("inner.y", "string", True)]
    assert out.value_schema.name == "outer"
    assert make(FlattenValue).apply(sink({"id": 1, "inner": None}, schema)).value == {"id": 1}
    map_schema = struct(("m", SchemaBuilder.map(STRING_SCHEMA, STRING_SCHEMA).build()))
    with pytest.raises(
        DataError, match=r"Flatten transformation does not support MAP for record with schemas \(for field m\)"
    ):
        make(FlattenValue).apply(sink({"m": {}}, map_schema))


def test_set_schema_metadata() -> None:
    schema = struct(("a", INT32_SCHEMA), name="old")
    out = make(SetSchemaMetadataValue, **{"schema.name": "new.Name", "schema.version": "3"}).apply(
        sink({"a": 1}, schema)
    )
    assert (out.value_schema.name, out.value_schema.version, out.value) == ("new.Name", 3, {"a": 1})
    key_schema = struct(("k", INT32_SCHEMA))
    key_out = make(SetSchemaMetadataKey, **{"schema.version": "2"}).apply(
        sink(None, key={"k": 5}, key_schema=key_schema)
    )
    assert key_out.key_schema.version == 2 and key_out.key_schema.type == "struct"
    # Kafka 3.9 copies schema.fields() into the renamed schema, so every non-struct schema fails
    with pytest.raises(DataError, match="Cannot list fields on non-struct type"):
        make(SetSchemaMetadataKey, **{"schema.version": "2"}).apply(sink(None, key=5, key_schema=INT32_SCHEMA))
    with pytest.raises(DataError, match=r"Schema required for \[updating schema metadata\]"):
        make(SetSchemaMetadataValue, **{"schema.name": "x"}).apply(sink({"a": 1}))
    with pytest.raises(ConfigError, match="Neither schema name nor version configured"):
        make(SetSchemaMetadataValue)


def test_filter_drops_everything() -> None:
    assert make(Filter).apply(sink({"a": 1})) is None


def test_insert_and_drop_headers() -> None:
    record = sink(1, headers=[Header("keep", "k"), Header("drop", "d"), Header("drop", "d2")])
    inserted = make(InsertHeader, header="n", **{"value.literal": "42"}).apply(record)
    assert inserted.headers[-1] == Header("n", 42, INT8_SCHEMA)
    assert make(InsertHeader, header="s", **{"value.literal": "hello"}).apply(sink(1)).headers == [
        Header("s", "hello", STRING_SCHEMA)
    ]
    dropped = make(DropHeaders, headers="drop,absent").apply(inserted)
    assert [h.key for h in dropped.headers] == ["keep", "n"]
    assert len(record.headers) == 3  # the input is not modified


def test_header_from_schemaless_move_and_copy() -> None:
    record = sink({"a": 1, "b": "x"}, headers=[Header("h0", 0)])
    moved = make(HeaderFromValue, fields="a,b", headers="ha,hb", operation="move").apply(record)
    assert moved.value == {} and [(h.key, h.value) for h in moved.headers] == [("h0", 0), ("ha", 1), ("hb", "x")]
    copied = make(HeaderFromKey, fields="id", headers="key-id", operation="copy").apply(sink(1, key={"id": 9}))
    assert copied.key == {"id": 9} and copied.headers == [Header("key-id", 9, None)]
    with pytest.raises(ConfigError, match="'fields' config must have the same number of elements as 'headers' config."):
        make(HeaderFromValue, fields="a,b", headers="h", operation="move")
    with pytest.raises(ConfigError, match="String must be one of: move, copy"):
        make(HeaderFromValue, fields="a", headers="h", operation="cut")


def test_header_from_with_schema() -> None:
    schema = struct(("a", INT32_SCHEMA), ("b", OPTIONAL_STRING_SCHEMA), ("c", BOOLEAN_SCHEMA))
    out = make(HeaderFromValue, fields="b", headers="hb", operation="move").apply(
        sink({"a": 1, "b": "x", "c": True}, schema)
    )
    assert [f.name for f in out.value_schema.fields] == ["a", "c"] and out.value == {"a": 1, "c": True}
    assert out.headers == [Header("hb", "x", OPTIONAL_STRING_SCHEMA)]


def test_predicates() -> None:
    matches = make(TopicNameMatches, pattern="orders-.*")
    assert matches.test(sink(1, topic="orders-eu")) and not matches.test(sink(1, topic="x-orders-eu"))
    with pytest.raises(ConfigError, match="Invalid regex"):
        make(TopicNameMatches, pattern="[")
    with pytest.raises(ConfigError, match="String must be non-empty"):
        make(TopicNameMatches, pattern="")
    has = make(HasHeaderKey, name="trace")
    assert has.test(source(1, headers=[Header("trace", None)])) and not has.test(source(1))
    tomb = make(RecordIsTombstone)
    assert tomb.test(sink(None, key="k")) and not tomb.test(sink({"a": 1}))
