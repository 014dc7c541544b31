"""AvroConverter: Confluent's `io.confluent.connect.avro.AvroConverter`, wire-compatible.

Values are encoded and decoded by fastavro with the writer's parsed schema; the registry client, the
subject strategies and the wire format live in `serde`, the schema and value mapping in `avro_data`.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import fastavro
from confluent_kafka.schema_registry import Schema as RegistrySchema

from ...api.data import Schema
from .avro_data import avro_to_connect_schema, connect_to_avro_schema, to_avro_value, to_connect_value
from .serde import Reader, SchemaRegistryConverter, WriterSchema, schema_text


class AvroConverter(SchemaRegistryConverter):
    schema_type = "AVRO"
    format_name = "Avro"

    def writer_schema(self, schema: Schema) -> WriterSchema:
        avro = connect_to_avro_schema(schema, self.settings.connect_meta_data)
        record_name = None
        if isinstance(avro, dict) and avro.get("type") == "record":
            record_name = f"{avro['namespace']}.{avro['name']}" if avro.get("namespace") else avro["name"]
        return WriterSchema(RegistrySchema(json.dumps(avro, separators=(",", ":")), "AVRO"), record_name)

    def make_writer(
        self, schema: Schema, registered: RegistrySchema, writer_schema: WriterSchema
    ) -> tuple[Callable[[Any], bytes], list[int] | None]:
        named: dict[str, Any] = {}
        for referenced in self._references(registered):
            fastavro.parse_schema(referenced, named_schemas=named)
        parsed = fastavro.parse_schema(json.loads(schema_text(registered)), named_schemas=named)
        convert = to_avro_value(schema)
        write = fastavro.schemaless_writer
        if convert is None:

            def encode(value: Any) -> bytes:
                buffer = io.BytesIO()
                write(buffer, parsed, value)
                return buffer.getvalue()
        else:

            def encode(value: Any) -> bytes:
                buffer = io.BytesIO()
                write(buffer, parsed, convert(value))
                return buffer.getvalue()

        return encode, None

    def make_reader(self, registered: RegistrySchema, version: int | None) -> Reader:
        avro = json.loads(schema_text(registered))
        references = self._references(registered)
        connect = avro_to_connect_schema(avro, version, self.settings.connect_meta_data, references)
        named: dict[str, Any] = {}
        for referenced in references:
            fastavro.parse_schema(referenced, named_schemas=named)
        parsed = fastavro.parse_schema(avro, named_schemas=named)
        convert = to_connect_value(connect)
        read = fastavro.schemaless_reader

        if convert is None:

            def decode(body: memoryview) -> Any:
                return read(io.BytesIO(body), parsed, None)
        else:

            def decode(body: memoryview) -> Any:
                return convert(read(io.BytesIO(body), parsed, None))

        return Reader(connect, decode)

    def _references(self, registered: RegistrySchema) -> list[Any]:
        """The schemas `registered` references (Avro named types in other subjects), dependencies first."""
        return [json.loads(schema_text(referenced)) for _, referenced in self.referenced_schemas(registered)]
