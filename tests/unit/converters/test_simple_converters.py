"""StringConverter, ByteArrayConverter and the header converters."""

from __future__ import annotations

import pytest

from runtime.api.data import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_BYTES_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Schema,
)
from runtime.api.errors import ConfigError, DataError
from runtime.converters.bytearray import ByteArrayConverter
from runtime.converters.headers import JsonHeaderConverter, SimpleHeaderConverter, StringHeaderConverter
from runtime.converters.string import StringConverter
from runtime.data.java_numbers import to_float32


def test_string_converter_utf8_default():
    c = StringConverter()
    c.configure({}, False)
    assert c.from_connect_data("t", None, "héllo") == "héllo".encode()
    assert c.to_connect_data("t", "héllo".encode()) == (OPTIONAL_STRING_SCHEMA, "héllo")
    assert c.from_connect_data("t", None, None) is None
    assert c.to_connect_data("t", None) == (OPTIONAL_STRING_SCHEMA, None)


def test_string_converter_uses_str_for_other_values_and_configured_encoding():
    c = StringConverter()
    c.configure({"converter.encoding": "UTF-16"}, True)
    assert c.from_connect_data("t", None, 42) == "42".encode("utf-16")
    assert c.to_connect_data("t", "42".encode("utf-16"))[1] == "42"
    latin = StringConverter()
    latin.configure({"converter.encoding": "ISO-8859-1"}, False)
    assert latin.from_connect_data("t", None, "é€") == b"\xe9?"  # unmappable -> '?', as Java


def test_string_converter_replaces_malformed_input_and_rejects_unknown_encoding():
    c = StringConverter()
    assert c.to_connect_data("t", b"a\xffb")[1] == "a\ufffdb"
    with pytest.raises(ConfigError, match="converter.encoding"):
        c.configure({"converter.encoding": "no-such-charset"}, False)
    assert "converter.encoding" in c.config()


def test_bytearray_converter():
    c = ByteArrayConverter()
    assert c.from_connect_data("t", None, b"\x00\x01") == b"\x00\x01"
    assert c.from_connect_data("t", BYTES_SCHEMA, bytearray(b"ab")) == b"ab"
    assert c.from_connect_data("t", None, memoryview(b"cd")) == b"cd"
    assert c.from_connect_data("t", None, None) is None
    assert c.to_connect_data("t", b"raw") == (OPTIONAL_BYTES_SCHEMA, b"raw")
    with pytest.raises(DataError) as info:
        c.from_connect_data("t", None, "text")
    assert str(info.value) == "ByteArrayConverter is not compatible with objects of type <class 'str'>"
    with pytest.raises(DataError, match="Invalid schema type for ByteArrayConverter: STRING"):
        c.from_connect_data("t", STRING_SCHEMA, b"x")


@pytest.mark.parametrize(
    "text,schema,value",
    [
        ("", STRING_SCHEMA, ""),
        ("true", BOOLEAN_SCHEMA, True),
        ("12", INT8_SCHEMA, 12),
        ("300", INT16_SCHEMA, 300),
        ("1.5", FLOAT32_SCHEMA, 1.5),
        ("0.1", FLOAT32_SCHEMA, to_float32(0.1)),
        ("1e3", INT16_SCHEMA, 1000),
        ("9999999999", INT64_SCHEMA, 9999999999),
        ("hello", STRING_SCHEMA, "hello"),
        ("[1,2]", Schema("array", value_schema=INT8_SCHEMA), [1, 2]),
        ('{"a":1}', Schema("map", key_schema=STRING_SCHEMA, value_schema=INT8_SCHEMA), {"a": 1}),
        ("[not json", STRING_SCHEMA, "[not json"),
        ("null", None, None),
    ],
)
def test_simple_header_converter_reads_like_kafka(text, schema, value):
    assert SimpleHeaderConverter().to_connect_header("t", "h", text.encode()) == (schema, value)


def test_simple_header_converter_writes_text_forms():
    h = SimpleHeaderConverter()
    assert h.from_connect_header("t", "h", None, None) is None
    assert h.from_connect_header("t", "h", None, "v") == b"v"
    assert h.from_connect_header("t", "h", None, True) == b"true"
    assert h.from_connect_header("t", "h", None, 1e7) == b"1.0E7"
    assert h.from_connect_header("t", "h", None, [1, "a"]) == b'[1,"a"]'
    assert h.from_connect_header("t", "h", None, b"\x01\x02") == b"AQI="
    assert h.to_connect_header("t", "h", b"\xff\xfe") == (BYTES_SCHEMA, b"\xff\xfe")


def test_converter_backed_header_converters():
    j = JsonHeaderConverter()
    j.configure({"schemas.enable": "false"})
    assert j.from_connect_header("t", "h", None, {"a": 1}) == b'{"a":1}'
    assert j.to_connect_header("t", "h", b'{"a":1}') == (None, {"a": 1})
    s = StringHeaderConverter()
    s.configure({})
    assert s.to_connect_header("t", "h", b"x") == (OPTIONAL_STRING_SCHEMA, "x")
