"""ProtobufConverter: Confluent's `io.confluent.connect.protobuf.ProtobufConverter`, wire-compatible.

Messages are built and parsed with the protobuf runtime from descriptors in a private pool per
converter; confluent-kafka supplies the pool of well-known and Confluent types, the resolution of
registry references and the decimal message codec (its `common.protobuf` helpers, which its own
serializers use: no maintained public API offers them).
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from typing import Any

from confluent_kafka.schema_registry import Schema as RegistrySchema
from confluent_kafka.schema_registry._sync.protobuf import _resolve_named_schema
from confluent_kafka.schema_registry.common.protobuf import _create_index_array, _init_pool, _str_to_proto
from confluent_kafka.schema_registry.common.serde import SchemaId
from google.protobuf import descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor

from ...api.data import Schema
from ...api.errors import DataError
from .protobuf_data import connect_to_file_descriptor, descriptor_to_connect, from_message, to_message
from .serde import Reader, SchemaRegistryConverter, WriterSchema


def _new_pool() -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    _init_pool(pool)
    return pool


class ProtobufConverter(SchemaRegistryConverter):
    schema_type = "PROTOBUF"
    format_name = "Protobuf"

    def writer_schema(self, schema: Schema) -> WriterSchema:
        file, full_name = connect_to_file_descriptor(schema)
        text = base64.standard_b64encode(file.SerializeToString()).decode("ascii")
        return WriterSchema(RegistrySchema(text, "PROTOBUF"), full_name)

    def make_writer(
        self, schema: Schema, registered: RegistrySchema, writer_schema: WriterSchema
    ) -> tuple[Callable[[Any], bytes], list[int] | None]:
        pool = _new_pool()
        _resolve_named_schema(registered, self.client, pool)
        file = _str_to_proto(f"{writer_schema.record_name}.proto", registered.schema_str)
        pool.Add(file)
        descriptor = pool.FindMessageTypeByName(writer_schema.record_name)
        build = to_message(message_factory.GetMessageClass(descriptor), schema)

        def encode(value: Any) -> bytes:
            return build(value).SerializeToString()

        return encode, _create_index_array(descriptor)

    def _fetch_schema(self, schema_id: int) -> RegistrySchema:
        return self.client.get_schema(schema_id, fmt="serialized")

    def make_reader(self, registered: RegistrySchema, version: int | None) -> Reader:
        pool = _new_pool()
        _resolve_named_schema(registered, self.client, pool)
        pool.Add(_str_to_proto("default", registered.schema_str))
        file = pool.FindFileByName("default")
        by_indexes: dict[tuple[int, ...], tuple[Schema, type, Callable[[Any], Any]]] = {}

        def message_for(indexes: tuple[int, ...]) -> tuple[Schema, type, Callable[[Any], Any]]:
            known = by_indexes.get(indexes)
            if known is None:
                descriptor = _descriptor_at(file, indexes)
                connect = descriptor_to_connect(descriptor, version)
                known = (connect, message_factory.GetMessageClass(descriptor), from_message(connect, descriptor))
                by_indexes[indexes] = known
            return known

        first = message_for((0,))

        def read(body: memoryview) -> tuple[Schema, Any]:
            if body[:1] == b"\x00":  # the common case: the file's first message
                connect, cls, convert = first
                payload = body[1:]
            else:
                buffer = io.BytesIO(body)
                indexes = tuple(SchemaId._read_index_array(buffer, zigzag=True))
                connect, cls, convert = message_for(indexes)
                payload = body[buffer.tell() :]
            message = cls()
            message.ParseFromString(payload)
            return connect, convert(message)

        return Reader(first[0], lambda body: read(body)[1], read)


def _descriptor_at(file: Any, indexes: tuple[int, ...]) -> Descriptor:
    try:
        descriptor = list(file.message_types_by_name.values())[indexes[0]]
        for index in indexes[1:]:
            descriptor = descriptor.nested_types[index]
    except IndexError:
        raise DataError(f"No message at index {list(indexes)} of the writer's Protobuf schema") from None
    return descriptor
