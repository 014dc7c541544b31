"""InsertField, ReplaceField, MaskField, ValueToKey, HoistField, ExtractField."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from runtime.api.data import (
    BOOLEAN_SCHEMA,
    FLOAT64_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Schema,
)
from runtime.api.errors import ConfigError, DataError
from runtime.transforms.extract_field import ExtractFieldKey, ExtractFieldValue
from runtime.transforms.hoist_field import HoistFieldKey, HoistFieldValue
from runtime.transforms.insert_field import InsertField, InsertFieldKey, InsertFieldValue
from runtime.transforms.mask_field import MaskFieldValue
from runtime.transforms.replace_field import ReplaceFieldKey, ReplaceFieldValue
from runtime.transforms.value_to_key import ValueToKey

from .conftest import make, sink, source, struct

TS = "org.apache.kafka.connect.data.Timestamp"


# ---- InsertField ------------------------------------------------------------------------------


def test_insert_field_schemaless_adds_metadata_and_static_value() -> None:
    t = make(
        InsertFieldValue,
        **{
            "topic.field": "t",
            "partition.field": "p",
            "offset.field": "o!",
            "timestamp.field": "ts",
            "static.field": "s",
            "static.value": "v",
        },
    )
    out = t.apply(sink({"a": 1}))
    assert out.value == {"a": 1, "t": "orders", "p": 3, "o": 42, "ts": 1_700_000_000_123, "s": "v"}
    assert out.value_schema is None and out.kafka_offset == 42


def test_insert_field_with_schema_builds_fields_with_optionality() -> None:
    schema = struct(("a", INT32_SCHEMA), name="my.Value")
    t = make(InsertFieldValue, **{"topic.field": "t!", "offset.field": "o", "timestamp.field": "ts"})
    out = t.apply(sink({"a": 5}, schema))
    names = [(f.name, f.schema.type, f.schema.optional) for f in out.value_schema.fields]
    assert names == [("a", "int32", False), ("t", "string", False), ("o", "int64", True), ("ts", "int64", True)]
    assert out.value_schema.name == "my.Value"
    assert out.value_schema.field("ts").schema.name == TS
    assert out.value["ts"] == dt.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=dt.UTC)
    assert out.value["a"] == 5 and out.value["t"] == "orders"
    # the translated schema is cached per input schema
    assert t.apply(sink({"a": 6}, schema)).value_schema is out.value_schema


def test_insert_field_key_variant_and_null_passthrough() -> None:
    t = make(InsertFieldKey, **{"topic.field": "t"})
    out = t.apply(sink({"v": 1}, key={"k": 1}))
    assert out.key == {"k": 1, "t": "orders"} and out.value == {"v": 1}
    tombstone_key = sink({"v": 1}, key=None)
    assert t.apply(tombstone_key) is tombstone_key


def test_insert_field_offset_requires_sink_record_and_config_errors() -> None:
    t = make(InsertFieldValue, **{"offset.field": "o"})
    with pytest.raises(DataError, match=r"Only SinkRecord supported for \[field insertion\]"):
        t.apply(source({"a": 1}))
    with pytest.raises(ConfigError, match="No field insertion configured"):
        make(InsertFieldValue)
    with pytest.raises(ConfigError, match="No value specified for static field: s"):
        make(InsertFieldValue, **{"static.field": "s"})
    with pytest.raises(
        DataError,
        match=r"Only Map objects supported in absence of schema for \[field insertion\], found: java.lang.String",
    ):
        t.apply(sink("text"))
    assert InsertField.Value is InsertFieldValue


# ---- ReplaceField -----------------------------------------------------------------------------


def test_replace_field_schemaless_include_exclude_rename() -> None:
    t = make(ReplaceFieldValue, include="a,b,c", exclude="c", renames="a:alpha,b:beta")
    assert t.apply(sink({"a": 1, "b": 2, "c": 3, "d": 4})).value == {"alpha": 1, "beta": 2}


def test_replace_field_with_schema_renames_and_applies_defaults() -> None:
    schema = struct(("a", INT32_SCHEMA), ("b", Schema("string", optional=True, default="dflt")), ("c", BOOLEAN_SCHEMA))
    out = make(ReplaceFieldValue, exclude="c", renames="b:bee").apply(sink({"a": 1, "b": None, "c": True}, schema))
    assert [f.name for f in out.value_schema.fields] == ["a", "bee"]
    assert out.value == {"a": 1, "bee": "dflt"}
    raw = make(ReplaceFieldValue, renames="b:bee", **{"replace.null.with.default": "false"})
    assert raw.apply(sink({"a": 1, "b": None, "c": True}, schema)).value["bee"] is None


def test_replace_field_key_and_invalid_renames() -> None:
    assert make(ReplaceFieldKey, exclude="x").apply(sink(1, key={"x": 1, "y": 2})).key == {"y": 2}
    with pytest.raises(ConfigError, match="Invalid rename mapping: ab"):
        make(ReplaceFieldValue, renames="ab")


# ---- MaskField --------------------------------------------------------------------------------


def test_mask_field_schemaless_masks_with_type_null_values() -> None:
    t = make(MaskFieldValue, fields="i,f,b,s,l,m,d,ts,missing")
    value = {
        "i": 7,
        "f": 1.5,
        "b": True,
        "s": "secret",
        "l": [1],
        "m": {"k": 1},
        "d": decimal.Decimal("3.2"),
        "ts": dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
        "keep": "x",
    }
    out = t.apply(sink(value)).value
    assert out == {
        "i": 0,
        "f": 0.0,
        "b": False,
        "s": "",
        "l": [],
        "m": {},
        "d": decimal.Decimal(0),
        "ts": dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
        "keep": "x",
        "missing": None,
    }
    assert value["s"] == "secret"  # the input record is untouched


def test_mask_field_with_schema_and_replacement() -> None:
    schema = struct(("n", INT64_SCHEMA), ("s", STRING_SCHEMA), ("x", FLOAT64_SCHEMA))
    out = make(MaskFieldValue, fields="n,s", replacement="123").apply(sink({"n": 5, "s": "abc", "x": 1.0}, schema))
    assert out.value == {"n": 123, "s": "123", "x": 1.0} and out.value_schema is schema
    with pytest.raises(DataError, match="Unable to convert abc"):
        make(MaskFieldValue, fields="n", replacement="abc").apply(sink({"n": 5}, schema))
    with pytest.raises(DataError, match="Cannot mask value of type"):
        make(MaskFieldValue, fields="b", replacement="1").apply(sink({"b": True}))
    with pytest.raises(ConfigError, match="Empty list"):
        make(MaskFieldValue, fields="")


# ---- ValueToKey -------------------------------------------------------------------------------


def test_value_to_key_schemaless_and_schema() -> None:
    t = make(ValueToKey, fields="id,region")
    assert t.apply(sink({"id": 1, "region": "eu", "x": 0})).key == {"id": 1, "region": "eu"}
    schema = struct(("id", INT32_SCHEMA), ("region", OPTIONAL_STRING_SCHEMA), ("x", INT32_SCHEMA))
    out = t.apply(sink({"id": 1, "region": None, "x": 0}, schema))
    assert out.key == {"id": 1, "region": None}
    assert [(f.name, f.schema) for f in out.key_schema.fields] == [
        ("id", INT32_SCHEMA),
        ("region", OPTIONAL_STRING_SCHEMA),
    ]
    with pytest.raises(DataError, match="Field does not exist: nope"):
        make(ValueToKey, fields="nope").apply(sink({"id": 1}, struct(("id", INT32_SCHEMA))))


# ---- HoistField -------------------------------------------------------------------------------


def test_hoist_field_wraps_value_or_key() -> None:
    assert make(HoistFieldValue, field="line").apply(sink("hello")).value == {"line": "hello"}
    out = make(HoistFieldKey, field="id").apply(sink("v", key=7, key_schema=INT64_SCHEMA))
    assert out.key == {"id": 7}
    assert out.key_schema.type == "struct" and out.key_schema.field("id").schema == INT64_SCHEMA


# ---- ExtractField -----------------------------------------------------------------------------


def test_extract_field_schemaless_and_schema() -> None:
    assert make(ExtractFieldValue, field="a").apply(sink({"a": 1, "b": 2})).value == 1
    assert make(ExtractFieldKey, field="id").apply(sink(None, key={"id": "k"})).key == "k"
    schema = struct(("a", OPTIONAL_INT64_SCHEMA), ("b", STRING_SCHEMA))
    out = make(ExtractFieldValue, field="a").apply(sink({"a": 9, "b": "x"}, schema))
    assert out.value == 9 and out.value_schema == OPTIONAL_INT64_SCHEMA
    with pytest.raises(ValueError, match="Unknown field: zz"):
        make(ExtractFieldValue, field="zz").apply(sink({"a": 9, "b": "x"}, schema))
    # a null value passes through with the field's schema
    assert make(ExtractFieldValue, field="a").apply(sink(None, schema)).value_schema == OPTIONAL_INT64_SCHEMA


def test_extract_field_nested_v2_paths() -> None:
    inner = struct(("c", INT32_SCHEMA), ("d.e", STRING_SCHEMA))
    schema = struct(("a", struct(("b", inner))))
    value = {"a": {"b": {"c": 5, "d.e": "dotted"}}}
    v2 = {"field.syntax.version": "v2"}
    assert make(ExtractFieldValue, field="a.b.c", **v2).apply(sink(value, schema)).value == 5
    out = make(ExtractFieldValue, field="a.b.`d.e`", **v2).apply(sink(value, schema))
    assert out.value == "dotted" and out.value_schema == STRING_SCHEMA
    assert make(ExtractFieldValue, field="a.b.c", **v2).apply(sink({"a": {"b": {"c": 3}}})).value == 3
    assert make(ExtractFieldValue, field="a.x.c", **v2).apply(sink({"a": {"b": {"c": 3}}})).value is None
    # V1 (the default) treats the dotted name as one top-level field
    assert make(ExtractFieldValue, field="a.b").apply(sink({"a.b": 1, "a": {"b": 2}})).value == 1
    with pytest.raises(ConfigError, match=r"Incomplete backtick pair in path: \[`a.b\]"):
        make(ExtractFieldValue, field="`a.b", **v2)
    with pytest.raises(ConfigError, match=r"String must be one of \(case insensitive\): V1, V2"):
        make(ExtractFieldValue, field="a", **{"field.syntax.version": "v3"})
