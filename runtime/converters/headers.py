"""Header converters.

`SimpleHeaderConverter` is Kafka's default `header.converter`, simplified on the reading side:
- writing: None -> no value; str as UTF-8; booleans `true`/`false`; ints in decimal; floats as Java
  prints them (`1.0E7`); bytes base64; lists and dicts as compact JSON; dates, times and decimals in
  their ISO/plain text form.
- reading: Kafka's `Values.parseString` (runtime/data/values_parser.py): `null` is no value, booleans, the
  narrowest integer type, float32/float64/Decimal, ISO dates/times/timestamps, arrays and maps with inferred
  element schemas; anything else a string. Bytes that are not UTF-8 come back as raw bytes with a bytes schema, as
  Kafka falls back to.

`ConverterHeaderConverter` adapts any key/value Converter (JSON, String, ByteArray) to the header
interface, the way Kafka's JsonConverter and StringConverter implement both roles.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import logging
from typing import Any

from ..api.config import ConfigDef
from ..api.data import BYTES_SCHEMA, Schema
from ..api.errors import DataError
from ..data.java_numbers import Float32, java_double_str, java_float_str
from ..data.values_parser import parse_string
from .base import Converter, HeaderConverter
from .bytearray import ByteArrayConverter
from .json import JsonConverter, _b64, dumps_schemaless
from .string import StringConverter

log = logging.getLogger(__name__)


def header_value_to_string(schema: Schema | None, value: Any) -> str:
    """Text form of a header value (SimpleHeaderConverter's writing rules above)."""
    if isinstance(value, str):
        return value
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        single = isinstance(value, Float32) or (schema is not None and schema.type == "float32")
        return java_float_str(value) if single else java_double_str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _b64(value)
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (list, tuple, dict)):
        return dumps_schemaless(value).decode("utf-8")
    raise DataError(f"Header value of type {type(value)} cannot be converted to a string")


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
            log.warning(
                "Failed to deserialize value for header '%s' on topic '%s', so using byte array", header_key, topic
            )
            return BYTES_SCHEMA, bytes(value)
        return parse_string(text)


class ConverterHeaderConverter(HeaderConverter):
    """A HeaderConverter backed by a key/value Converter (configured as a value-side converter)."""

    def __init__(self, converter: Converter) -> None:
        self.converter = converter

    def configure(self, configs: dict[str, Any]) -> None:
        self.converter.configure(configs, False)

    def config(self) -> ConfigDef:
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
