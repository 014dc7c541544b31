"""ProtobufConverter: Confluent's `io.confluent.connect.protobuf.ProtobufConverter`, wire-compatible.

Messages are built and parsed with the protobuf runtime from descriptors in a private pool per schema,
holding the well-known and Confluent files every writer may import, then the schema's registry references
(fetched as Confluent's serializers fetch them), then the schema itself. confluent-kafka supplies the
header codec (`SchemaId`) and the decimal message codec; its helpers for the rest are private, so the
little they do is done here.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from typing import Any

import google.type.calendar_period_pb2
import google.type.color_pb2
import google.type.date_pb2
import google.type.datetime_pb2
import google.type.dayofweek_pb2
import google.type.expr_pb2
import google.type.fraction_pb2
import google.type.latlng_pb2
import google.type.money_pb2
import google.type.month_pb2
import google.type.postal_address_pb2
import google.type.quaternion_pb2
import google.type.timeofday_pb2
from confluent_kafka.schema_registry import Schema as RegistrySchema
from confluent_kafka.schema_registry.common.serde import SchemaId
from confluent_kafka.schema_registry.confluent import meta_pb2
from confluent_kafka.schema_registry.confluent.type import decimal_pb2, variant_pb2
from confluent_kafka.schema_registry.confluent.types import decimal_pb2 as legacy_decimal_pb2
from google.protobuf import (
    any_pb2,
    api_pb2,
    descriptor_pb2,
    descriptor_pool,
    duration_pb2,
    empty_pb2,
    field_mask_pb2,
    message_factory,
    source_context_pb2,
    struct_pb2,
    timestamp_pb2,
    type_pb2,
    wrappers_pb2,
)
from google.protobuf.descriptor import Descriptor, FileDescriptor

from ...api.data import Schema
from ...api.errors import DataError
from .protobuf_data import connect_to_file_descriptor, descriptor_to_connect, from_message, to_message
from .serde import Reader, SchemaRegistryConverter, WriterSchema, schema_text

# The files a writer imports without a registry reference (Confluent's serializers treat google/protobuf/,
# google/type/ and confluent/ as built in), in an order that adds each after its own imports. The same
# list as confluent-kafka's readers use (its `_init_pool`, private; tests/unit/converters compares them):
# kept here so no private name of the library is imported.
_BUILTIN_FILES = (
    any_pb2,
    source_context_pb2,
    type_pb2,
    api_pb2,
    descriptor_pb2,
    duration_pb2,
    empty_pb2,
    field_mask_pb2,
    struct_pb2,
    timestamp_pb2,
    wrappers_pb2,
    google.type.calendar_period_pb2,
    google.type.color_pb2,
    google.type.date_pb2,
    google.type.datetime_pb2,
    google.type.dayofweek_pb2,
    google.type.expr_pb2,
    google.type.fraction_pb2,
    google.type.latlng_pb2,
    google.type.money_pb2,
    google.type.month_pb2,
    google.type.postal_address_pb2,
    google.type.quaternion_pb2,
    google.type.timeofday_pb2,
    meta_pb2,
    decimal_pb2,
    variant_pb2,
    legacy_decimal_pb2,  # confluent.type.Decimal's former path, which re-exports it: after decimal_pb2
)


def new_pool() -> descriptor_pool.DescriptorPool:
    """A descriptor pool holding the built-in files (one per schema: every writer's file is "default")."""
    pool = descriptor_pool.DescriptorPool()
    for module in _BUILTIN_FILES:
        pool.AddSerializedFile(module.DESCRIPTOR.serialized_pb)
    return pool


class ProtobufConverter(SchemaRegistryConverter):
    schema_type = "PROTOBUF"
    format_name = "Protobuf"
    schema_format = "serialized"  # a base64 FileDescriptorProto, whatever form it was registered in

    def writer_schema(self, schema: Schema) -> WriterSchema:
        file, full_name = connect_to_file_descriptor(schema)
        text = base64.standard_b64encode(file.SerializeToString()).decode("ascii")
        return WriterSchema(RegistrySchema(text, "PROTOBUF"), full_name)

    def make_writer(
        self, schema: Schema, registered: RegistrySchema, writer_schema: WriterSchema
    ) -> tuple[Callable[[Any], bytes], list[int] | None]:
        name = writer_schema.record_name or ""  # connect_to_file_descriptor always names the message
        pool = self._pool(registered)
        pool.Add(_file_proto(f"{name}.proto", registered))
        descriptor = pool.FindMessageTypeByName(name)
        build = to_message(descriptor, schema)

        def encode(value: Any) -> bytes:
            return build(value).SerializeToString()

        return encode, _message_indexes(descriptor)

    def make_reader(self, registered: RegistrySchema, version: int | None) -> Reader:
        pool = self._pool(registered)
        pool.Add(_file_proto("default", registered))
        file = pool.FindFileByName("default")
        by_indexes: dict[tuple[int, ...], tuple[Schema, Callable[[bytes], Any], Callable[[Any], Any]]] = {}

        def message_for(indexes: tuple[int, ...]) -> tuple[Schema, Callable[[bytes], Any], Callable[[Any], Any]]:
            known = by_indexes.get(indexes)
            if known is None:
                descriptor = _descriptor_at(file, indexes)
                connect = descriptor_to_connect(descriptor, version)
                parse = message_factory.GetMessageClass(descriptor).FromString
                known = (connect, parse, from_message(connect, descriptor))
                by_indexes[indexes] = known
            return known

        first = message_for((0,))

        def read(value: memoryview) -> tuple[Schema, Any]:
            if value[5] == 0:  # the common case: message indexes [0], the file's first message
                connect, parse, convert = first
                payload = value[6:]
            else:
                buffer = io.BytesIO(value)
                header = SchemaId(self.schema_type)
                header.from_bytes(buffer)  # the magic byte, the id, then the message indexes
                connect, parse, convert = message_for(tuple(header.message_indexes or (0,)))
                payload = value[buffer.tell() :]
            return connect, convert(parse(bytes(payload)))

        return Reader(first[0], lambda value: read(value)[1], read)

    def _pool(self, registered: RegistrySchema) -> descriptor_pool.DescriptorPool:
        """A pool with the built-in files and those `registered` imports through registry references."""
        pool = new_pool()
        for name, referenced in self.referenced_schemas(registered, skip=lambda name: _has_file(pool, name)):
            pool.Add(_file_proto(name, referenced))
        return pool


def _file_proto(name: str, registered: RegistrySchema) -> descriptor_pb2.FileDescriptorProto:
    """The file of a registered Protobuf schema (a base64 FileDescriptorProto), under `name` in its pool."""
    file = descriptor_pb2.FileDescriptorProto.FromString(base64.standard_b64decode(schema_text(registered)))
    file.name = name
    return file


def _has_file(pool: descriptor_pool.DescriptorPool, name: str) -> bool:
    try:
        pool.FindFileByName(name)
    except KeyError:
        return False
    return True


def _descriptor_at(file: FileDescriptor, indexes: tuple[int, ...]) -> Descriptor:
    """The message at `indexes` (Confluent's message indexes: top-level message, then nested ones)."""
    try:
        descriptor = list(file.message_types_by_name.values())[indexes[0]]
        for index in indexes[1:]:
            descriptor = descriptor.nested_types[index]
    except IndexError:
        raise DataError(f"No message at index {list(indexes)} of the writer's Protobuf schema") from None
    return descriptor


def _message_indexes(descriptor: Descriptor) -> list[int]:
    """The message indexes of `descriptor` in its file: the inverse of `_descriptor_at`."""
    indexes: list[int] = []
    while descriptor.containing_type is not None:
        parent = descriptor.containing_type
        indexes.append(list(parent.nested_types).index(descriptor))
        descriptor = parent
    indexes.append(list(descriptor.file.message_types_by_name.values()).index(descriptor))
    return indexes[::-1]
