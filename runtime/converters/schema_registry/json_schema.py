"""JsonSchemaConverter: Confluent's `io.confluent.connect.json.JsonSchemaConverter`, wire-compatible.

Payloads are plain JSON after the 5-byte header (orjson; the standard library's parser only where a
schema holds decimals, so their digits are never rounded through a float).
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Callable
from typing import Any

import orjson
from confluent_kafka.schema_registry import Schema as RegistrySchema

from ...api.config import ConfigDef, Importance, Type, ValidString
from ...api.data import Schema
from ...api.errors import ConfigError
from .json_schema_data import (
    connect_to_json_schema,
    json_schema_to_connect,
    needs_exact_numbers,
    to_connect_value,
    to_json_value,
)
from .serde import Reader, SchemaRegistryConverter, WriterSchema, schema_text

DECIMAL_FORMAT = "decimal.format"


def _exact(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return orjson.Fragment(str(value).encode())
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


class JsonSchemaConverter(SchemaRegistryConverter):
    schema_type = "JSON"
    format_name = "JSON Schema"

    def config(self) -> ConfigDef:
        config = super().config()
        config.define(
            DECIMAL_FORMAT,
            Type.STRING,
            "NUMERIC",
            validator=ValidString.of("BASE64", "NUMERIC", case_insensitive=True),
            importance=Importance.LOW,
            documentation="Write decimals as JSON numbers (NUMERIC) or base64 strings of the unscaled value.",
        )
        return config

    def _configure_format(self, configs: dict[str, Any]) -> None:
        fmt = str(configs.get(DECIMAL_FORMAT) or "NUMERIC").strip().upper()
        if fmt not in ("NUMERIC", "BASE64"):
            raise ConfigError(DECIMAL_FORMAT, fmt, "String must be one of: BASE64, NUMERIC")
        self.numeric_decimals = fmt == "NUMERIC"

    def writer_schema(self, schema: Schema) -> WriterSchema:
        document = connect_to_json_schema(schema, self.numeric_decimals)
        record_name = document.get("title") if schema.type == "struct" else None
        return WriterSchema(RegistrySchema(json.dumps(document, separators=(",", ":")), "JSON"), record_name)

    def make_writer(
        self, schema: Schema, registered: RegistrySchema, writer_schema: WriterSchema
    ) -> tuple[Callable[[Any], bytes], list[int] | None]:
        convert = to_json_value(schema, self.numeric_decimals)
        dumps = orjson.dumps

        def encode(value: Any) -> bytes:
            return dumps(convert(value), default=_exact)

        return encode, None

    def make_reader(self, registered: RegistrySchema, version: int | None) -> Reader:
        connect = json_schema_to_connect(json.loads(schema_text(registered)), version)
        convert = to_connect_value(connect)
        if needs_exact_numbers(connect):

            def decode(body: memoryview) -> Any:
                return convert(json.loads(bytes(body), parse_float=decimal.Decimal))
        else:
            loads = orjson.loads

            def decode(body: memoryview) -> Any:
                return convert(loads(body))

        return Reader(connect, decode)
