"""Header converters.

`SimpleHeaderConverter` is Kafka's default `header.converter`, simplified on the reading side:
- writing: None -> no value; str as UTF-8; booleans `true`/`false`; ints in decimal; floats as Java
  prints them (`1.0E7`); bytes base64; lists and dicts as compact JSON; dates, times and decimals in
  their ISO/plain text form.
- reading (Kafka's `Values.parseString`, reduced to the unambiguous cases): `""` -> string;
  `true`/`false` -> boolean; an integral literal (`12`, `1e3`) -> the narrowest of int8/int16/int32/int64;
  other decimal literals -> float32 when exactly representable, else float64; text starting with `[` or `{` that is valid JSON -> the parsed list
  or dict (no schema); anything else -> string. Bytes that are not UTF-8 come back as raw bytes with a
  bytes schema, as Kafka falls back to.

`ConverterHeaderConverter` adapts any key/value Converter (JSON, String, ByteArray) to the header
interface, the way Kafka's JsonConverter and StringConverter implement both roles.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import logging
import re
from typing import Any

import orjson

from ..api.data import (BOOLEAN_SCHEMA, BYTES_SCHEMA, FLOAT32_SCHEMA, FLOAT64_SCHEMA, INT8_SCHEMA, INT16_SCHEMA, INT32_SCHEMA,
                        INT64_SCHEMA, STRING_SCHEMA, Schema)
from ..api.errors import DataError
from .base import Converter, HeaderConverter
from .bytearray import ByteArrayConverter
from .json import JsonConverter, _b64, _to_float32, dumps_schemaless, java_double_str, java_float_str
from .string import StringConverter

log = logging.getLogger(__name__)

_INTEGER = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INT_SCHEMAS = ((8, INT8_SCHEMA), (16, INT16_SCHEMA), (32, INT32_SCHEMA), (64, INT64_SCHEMA))


def header_value_to_string(schema: Schema | None, value: Any) -> str:
    """Text form of a header value (SimpleHeaderConverter's writing rules above)."""
    if isinstance(value, str):
        return value
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return java_float_str(value) if schema is not None and schema.type == "float32" else java_double_str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _b64(value)
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (list, tuple, dict)):
        return dumps_schemaless(value).decode("utf-8")
    raise DataError(f"Header value of type {type(value)} cannot be converted to a string")


def parse_header_string(text: str) -> tuple[Schema | None, Any]:
    """Schema and value inferred from a header's text (SimpleHeaderConverter's reading rules above)."""
    if text == "":
        return STRING_SCHEMA, text
    if text == "true" or text == "false":
        return BOOLEAN_SCHEMA, text == "true"
    if _INTEGER.fullmatch(text):
        number = int(text)
        for bits, schema in _INT_SCHEMAS:
            if -(1 << (bits - 1)) <= number < (1 << (bits - 1)):
                return schema, number
        return STRING_SCHEMA, text
    if _FLOAT.fullmatch(text):
        number = decimal.Decimal(text)
        if number.as_tuple().exponent >= 0:  # "1e3" is the integer 1000, as in Kafka
            return parse_header_string(str(int(number)))
        value = float(number)
        return (FLOAT32_SCHEMA if _to_float32(value) == value else FLOAT64_SCHEMA), value
    if text[0] in "[{":
        try:
            return None, orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return STRING_SCHEMA, text


class SimpleHeaderConverter(HeaderConverter):
    """org.apache.kafka.connect.storage.SimpleHeaderConverter (see the module docstring)."""

    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None, value: Any) -> bytes | None:
        if value is None:
            return None
        return header_value_to_string(schema, value).encode("utf-8")

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> tuple[Schema | None, Any]:
        if value is None:
            return None, None
        try:
            text = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            log.warning("Failed to deserialize value for header '%s' on topic '%s', so using byte array",
                        header_key, topic)
            return BYTES_SCHEMA, bytes(value)
        return parse_header_string(text)


class ConverterHeaderConverter(HeaderConverter):
    """A HeaderConverter backed by a key/value Converter (configured as a value-side converter)."""

    def __init__(self, converter: Converter) -> None:
        self.converter = converter

    def configure(self, configs: dict[str, Any]) -> None:
        self.converter.configure(configs, False)

    def config(self):  # type: ignore[no-untyped-def]
        return self.converter.config()

    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None, value: Any) -> bytes | None:
        return self.converter.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> tuple[Schema | None, Any]:
        return self.converter.to_connect_data(topic, value)


class JsonHeaderConverter(ConverterHeaderConverter):
    """`header.converter=org.apache.kafka.connect.json.JsonConverter`."""

    def __init__(self) -> None:
        super().__init__(JsonConverter())


class StringHeaderConverter(ConverterHeaderConverter):
    """`header.converter=org.apache.kafka.connect.storage.StringConverter`."""

    def __init__(self) -> None:
        super().__init__(StringConverter())


class ByteArrayHeaderConverter(ConverterHeaderConverter):
    """`header.converter=org.apache.kafka.connect.converters.ByteArrayConverter`."""

    def __init__(self) -> None:
        super().__init__(ByteArrayConverter())
