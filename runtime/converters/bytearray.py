"""Kafka's ByteArrayConverter: raw bytes through unchanged."""

from __future__ import annotations

from typing import Any

from ..api.data import OPTIONAL_BYTES_SCHEMA, Schema
from ..api.errors import DataError
from .base import Converter


class ByteArrayConverter(Converter):
    """org.apache.kafka.connect.converters.ByteArrayConverter. Reads give an optional bytes schema."""

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if schema is not None and schema.type != "bytes":
            raise DataError(f"Invalid schema type for ByteArrayConverter: {schema.type.upper()}")
        if value is None:
            return None
        if type(value) is bytes:
            return value
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        raise DataError(f"ByteArrayConverter is not compatible with objects of type {type(value)}")

    def to_connect_data(self, topic: str, value: bytes | None) -> tuple[Schema | None, Any]:
        return OPTIONAL_BYTES_SCHEMA, value
