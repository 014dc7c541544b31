"""Connect schemas and values <-> Protobuf, with the mapping of Confluent's ProtobufConverter.

Schemas (Connect -> proto3): the value schema must be a struct; it becomes one message named after the
schema (`ConnectDefault1` when unnamed) in the package of its namespace. Fields are numbered from 1 in
order (`io.confluent.connect.protobuf.Tag` overrides). int8/int16 are int32 fields annotated with
`(confluent.field_meta).params["connect.type"]`; int32, int64, float, double, bool, string and bytes as
themselves; Decimal is `confluent.type.Decimal` (with `precision`/`scale` params), Date `google.type.Date`,
Time `google.type.TimeOfDay`, Timestamp `google.protobuf.Timestamp`; arrays are repeated fields, maps
repeated `<Field>Entry` messages (proto3 maps where the key allows it), structs nested messages.
Proto3 -> Connect reverses this the way Confluent's converter reads it: messages, enums, repeated fields
and maps are optional, enums are strings with `io.confluent.connect.protobuf.Enum` parameters, oneofs are
`io.confluent.connect.protobuf.Union.<name>` structs, and unset scalars read as proto3 defaults.

The schema travels as a base64 `FileDescriptorProto`, as confluent-kafka's serializer registers it;
well-known and Confluent types are imports the reader already knows (no registry references).
"""

from __future__ import annotations

import datetime as _dt
import decimal
from collections.abc import Callable
from typing import Any

from confluent_kafka.schema_registry.common.protobuf import decimal_to_protobuf, protobuf_to_decimal
from confluent_kafka.schema_registry.confluent import meta_pb2
from google.protobuf import descriptor_pb2, message_factory
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message

from ...api.data import Field, Schema
from ...api.errors import DataError
from ..logical_types import (
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    DECIMAL_SCALE_PARAMETER,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
    decimal_scale,
    decimal_schema,
)

NAMESPACE = "io.confluent.connect.protobuf"
DEFAULT_SCHEMA_NAME = "ConnectDefault"
PROTOBUF_TYPE_ENUM = NAMESPACE + ".Enum"
PROTOBUF_TYPE_UNION_PREFIX = NAMESPACE + ".Union."
PROTOBUF_TYPE_TAG = NAMESPACE + ".Tag"
CONNECT_TYPE_PROP = "connect.type"
CONNECT_PRECISION_PROP = "connect.decimal.precision"
DECIMAL_TYPE = "confluent.type.Decimal"
DATE_TYPE = "google.type.Date"
TIME_TYPE = "google.type.TimeOfDay"
TIMESTAMP_TYPE = "google.protobuf.Timestamp"
_IMPORTS = {
    DECIMAL_TYPE: "confluent/type/decimal.proto",
    DATE_TYPE: "google/type/date.proto",
    TIME_TYPE: "google/type/timeofday.proto",
    TIMESTAMP_TYPE: "google/protobuf/timestamp.proto",
}
META_IMPORT = "confluent/meta.proto"
_LOGICAL = {
    DECIMAL_LOGICAL_NAME: DECIMAL_TYPE,
    DATE_LOGICAL_NAME: DATE_TYPE,
    TIME_LOGICAL_NAME: TIME_TYPE,
    TIMESTAMP_LOGICAL_NAME: TIMESTAMP_TYPE,
}
F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "int8": F.TYPE_INT32,
    "int16": F.TYPE_INT32,
    "int32": F.TYPE_INT32,
    "int64": F.TYPE_INT64,
    "float32": F.TYPE_FLOAT,
    "float64": F.TYPE_DOUBLE,
    "boolean": F.TYPE_BOOL,
    "string": F.TYPE_STRING,
    "bytes": F.TYPE_BYTES,
}
_MAP_KEYS = {"int8", "int16", "int32", "int64", "boolean", "string"}
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
# The `(confluent.field_meta)` option. confluent-kafka ships meta_pb2 without a .pyi, and the generated
# module defines its names at import time, where the checker cannot see them.
_FIELD_META = meta_pb2.field_meta  # type: ignore[attr-defined]


# ---- Connect -> FileDescriptorProto -------------------------------------------------------------


def connect_to_file_descriptor(schema: Schema) -> tuple[descriptor_pb2.FileDescriptorProto, str]:
    """A proto3 file holding the message for a struct schema, and the message's full name."""
    if schema.type != "struct":
        raise DataError(f"Unsupported root schema of type {schema.type}: the Protobuf converter writes structs")
    full = schema.name or DEFAULT_SCHEMA_NAME + "1"
    package, _, name = full.rpartition(".")
    file = descriptor_pb2.FileDescriptorProto(name=f"{full}.proto", syntax="proto3")
    if package:
        file.package = package
    builder = _FileBuilder(file)
    file.message_type.append(builder.message(_proto_name(name), schema, f".{full}"))
    file.dependency.extend(sorted(builder.imports))
    return file, full


class _FileBuilder:
    def __init__(self, file: descriptor_pb2.FileDescriptorProto) -> None:
        self.file = file
        self.imports: set[str] = set()

    def message(self, name: str, schema: Schema, full_name: str) -> descriptor_pb2.DescriptorProto:
        message = descriptor_pb2.DescriptorProto(name=name)
        number = 1
        for field in schema.fields:
            tag = dict(field.schema.parameters or ()).get(PROTOBUF_TYPE_TAG)
            if tag is not None:
                field_number = int(tag)
            else:
                field_number, number = number, number + 1
            self.field(message, full_name, _proto_name(field.name), field.schema, field_number)
        return message

    def field(
        self, message: descriptor_pb2.DescriptorProto, scope: str, name: str, schema: Schema, number: int
    ) -> None:
        proto = message.field.add(name=name, number=number, label=F.LABEL_OPTIONAL)
        if schema.type == "array":
            proto.label = F.LABEL_REPEATED
            schema = schema.value_schema or _missing()
            if schema.type in ("array", "map"):
                raise DataError("Array cannot be nested: Protobuf has no repeated repeated fields")
        params: dict[str, str] = {}
        logical = _LOGICAL.get(schema.name or "")
        if logical is not None:
            proto.type = F.TYPE_MESSAGE
            proto.type_name = "." + logical
            self.imports.add(_IMPORTS[logical])
            if logical == DECIMAL_TYPE:
                connect_params = dict(schema.parameters or ())
                if CONNECT_PRECISION_PROP in connect_params:
                    params["precision"] = connect_params[CONNECT_PRECISION_PROP]
                if DECIMAL_SCALE_PARAMETER in connect_params:
                    params["scale"] = connect_params[DECIMAL_SCALE_PARAMETER]
        elif schema.type == "map":
            proto.label = F.LABEL_REPEATED
            entry_name = name[:1].upper() + name[1:] + "Entry"
            entry = descriptor_pb2.DescriptorProto(name=entry_name)
            key, value = schema.key_schema or _missing(), schema.value_schema or _missing()
            if key.type in _MAP_KEYS and not key.name and value.type != "array":
                entry.options.map_entry = True
            self.field(entry, f"{scope}.{entry_name}", "key", key, 1)
            self.field(entry, f"{scope}.{entry_name}", "value", value, 2)
            message.nested_type.append(entry)
            proto.type = F.TYPE_MESSAGE
            proto.type_name = f"{scope}.{entry_name}"
        elif schema.type == "struct":
            if (schema.name or "").startswith(PROTOBUF_TYPE_UNION_PREFIX):
                raise DataError("Writing Protobuf oneofs from Connect unions is not supported")
            nested = _proto_name((schema.name or name[:1].upper() + name[1:]).rsplit(".", 1)[-1])
            if nested == name:
                nested += "Message"
            if not any(m.name == nested for m in message.nested_type):
                message.nested_type.append(self.message(nested, schema, f"{scope}.{nested}"))
            proto.type = F.TYPE_MESSAGE
            proto.type_name = f"{scope}.{nested}"
        else:
            proto.type = _SCALARS[schema.type]
            if schema.type in ("int8", "int16"):
                params[CONNECT_TYPE_PROP] = schema.type
        if params:
            self.imports.add(META_IMPORT)
            proto.options.Extensions[_FIELD_META].params.update(params)


# ---- Descriptor -> Connect ---------------------------------------------------------------------


def descriptor_to_connect(descriptor: Descriptor, version: int | None) -> Schema:
    schema = _message_schema(descriptor, set())
    return Schema("struct", name=schema.name, version=version, fields=schema.fields)


def _message_schema(descriptor: Descriptor, seen: set[str]) -> Schema:
    if descriptor.full_name in seen:
        raise DataError(f"Recursive Protobuf message {descriptor.full_name} cannot be a Connect schema")
    seen = seen | {descriptor.full_name}
    fields: list[Field] = []
    for oneof in descriptor.oneofs:
        if _is_synthetic(oneof):
            continue
        members = tuple(Field(f.name, i, _field_schema(f, seen)) for i, f in enumerate(oneof.fields))
        fields.append(
            Field(
                f"{oneof.name}_{oneof.index}",
                len(fields),
                Schema("struct", optional=True, name=PROTOBUF_TYPE_UNION_PREFIX + oneof.name, fields=members),
            )
        )
    for f in descriptor.fields:
        if f.containing_oneof is not None and not _is_synthetic(f.containing_oneof):
            continue
        fields.append(Field(f.name, len(fields), _field_schema(f, seen)))
    return Schema("struct", name=descriptor.name, fields=tuple(fields))


def _field_schema(f: FieldDescriptor, seen: set[str]) -> Schema:
    t = f.type
    params = _field_params(f)
    if t in (F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32):
        connect_type = params.get(CONNECT_TYPE_PROP, "int32")
        schema = Schema(connect_type if connect_type in ("int8", "int16") else "int32")
    elif t in (
        F.TYPE_UINT32,
        F.TYPE_FIXED32,
        F.TYPE_INT64,
        F.TYPE_UINT64,
        F.TYPE_SINT64,
        F.TYPE_FIXED64,
        F.TYPE_SFIXED64,
    ):
        schema = Schema("int64")
    elif t == F.TYPE_FLOAT:
        schema = Schema("float32")
    elif t == F.TYPE_DOUBLE:
        schema = Schema("float64")
    elif t == F.TYPE_BOOL:
        schema = Schema("boolean")
    elif t == F.TYPE_STRING:
        schema = Schema("string")
    elif t == F.TYPE_BYTES:
        schema = Schema("bytes")
    elif t == F.TYPE_ENUM:
        enum = _enum_of(f)
        enum_params = [(PROTOBUF_TYPE_ENUM, enum.name)] + [
            (f"{PROTOBUF_TYPE_ENUM}.{v.name}", str(v.number)) for v in enum.values
        ]
        schema = Schema("string", optional=True, name=enum.name, parameters=tuple(enum_params))
    elif t == F.TYPE_MESSAGE:
        message_type = _message_of(f)
        full = message_type.full_name
        if full == DECIMAL_TYPE:
            base = decimal_schema(int(params.get("scale", 0)))
            extra = (("connect.decimal.precision", params["precision"]),) if "precision" in params else ()
            schema = Schema(
                "bytes", optional=True, name=base.name, version=1, parameters=(base.parameters or ()) + extra
            )
        elif full in (DATE_TYPE, TIME_TYPE, TIMESTAMP_TYPE):
            name = {DATE_TYPE: DATE_LOGICAL_NAME, TIME_TYPE: TIME_LOGICAL_NAME, TIMESTAMP_TYPE: TIMESTAMP_LOGICAL_NAME}[
                full
            ]
            schema = Schema("int64" if full == TIMESTAMP_TYPE else "int32", optional=True, name=name, version=1)
        elif message_type.GetOptions().map_entry or _is_map_entry(f):
            entry = message_type
            key, value = entry.fields_by_name["key"], entry.fields_by_name["value"]
            return Schema(
                "map",
                optional=True,
                name=entry.name[: -len("Entry")] if entry.name.endswith("Entry") else None,
                key_schema=_field_schema(key, seen),
                value_schema=_field_schema(value, seen),
            )
        else:
            message = _message_schema(message_type, seen)
            schema = Schema("struct", optional=True, name=message.name, fields=message.fields)
    else:
        raise DataError(f"Unknown Connect schema type: {t}")
    if f.is_repeated:
        element = (
            schema
            if schema.optional
            else Schema(
                schema.type,
                True,
                None,
                schema.name,
                schema.version,
                schema.doc,
                schema.parameters,
                schema.fields,
                schema.key_schema,
                schema.value_schema,
            )
        )
        return Schema("array", optional=True, value_schema=element)
    return schema


def _field_params(f: FieldDescriptor) -> dict[str, str]:
    options = f.GetOptions()
    try:
        if options.HasExtension(_FIELD_META):
            return dict(options.Extensions[_FIELD_META].params)
    except KeyError:  # the extension is not in this pool: no params
        pass
    return {}


def _is_synthetic(oneof: Any) -> bool:
    """proto3 `optional` fields sit in a synthetic oneof that is not a union."""
    fields = oneof.fields
    return len(fields) == 1 and oneof.name == "_" + fields[0].name


def _is_map_entry(f: FieldDescriptor) -> bool:
    entry = _message_of(f)
    return f.is_repeated and entry.name.endswith("Entry") and [x.name for x in entry.fields] == ["key", "value"]


def _message_of(fd: FieldDescriptor) -> Descriptor:
    """The message type of a field of type message (the descriptor has one exactly then)."""
    if fd.message_type is None:
        raise DataError(f"Protobuf field {fd.full_name} is not a message")
    return fd.message_type


def _enum_of(fd: FieldDescriptor) -> EnumDescriptor:
    """The enum type of a field of type enum."""
    if fd.enum_type is None:
        raise DataError(f"Protobuf field {fd.full_name} is not an enum")
    return fd.enum_type


# ---- values --------------------------------------------------------------------------------------


def to_message(descriptor: Descriptor, schema: Schema) -> Callable[[Any], Message]:
    """A function filling a new message of type `descriptor` from a Connect struct value."""
    message_class = message_factory.GetMessageClass(descriptor)
    fill = _struct_filler(descriptor, schema)

    def build(value: Any) -> Message:
        message = message_class()
        fill(message, value)
        return message

    return build


def _struct_filler(descriptor: Descriptor, schema: Schema) -> Callable[[Any, Any], None]:
    setters = []
    for field in schema.fields:
        fd = descriptor.fields_by_name.get(_proto_name(field.name))
        if fd is None:
            raise DataError(f"Cannot find field with name {field.name}")
        setters.append((field.name, fd.name, _setter(fd, field.schema)))

    def fill(message: Any, value: Any) -> None:
        if not isinstance(value, dict):
            raise DataError(f"Invalid type for STRUCT: {type(value)}")
        for connect_name, proto_name, setter in setters:
            item = value.get(connect_name)
            if item is not None:
                setter(message, proto_name, item)

    return fill


def _setter(fd: FieldDescriptor, schema: Schema) -> Callable[[Any, str, Any], None]:
    if fd.is_repeated and schema.type == "array":
        element = schema.value_schema or _missing()
        if fd.type == F.TYPE_MESSAGE:
            fill = _message_filler(fd, element)

            def set_messages(message: Any, name: str, value: Any) -> None:
                target = getattr(message, name)
                for item in value:
                    fill(target.add(), item)

            return set_messages
        return lambda message, name, value: getattr(message, name).extend(value)
    if schema.type == "map":
        entry = _message_of(fd)
        key_fd, value_fd = entry.fields_by_name["key"], entry.fields_by_name["value"]
        value_schema = schema.value_schema or _missing()
        if entry.GetOptions().map_entry:
            if value_fd.type == F.TYPE_MESSAGE:
                fill = _message_filler(value_fd, value_schema)

                def set_message_map(message: Any, name: str, value: Any) -> None:
                    target = getattr(message, name)
                    for k, v in value.items():
                        if v is not None:
                            fill(target[k], v)

                return set_message_map
            return lambda message, name, value: getattr(message, name).update(value)
        key_set, value_set = _setter(key_fd, schema.key_schema or _missing()), _setter(value_fd, value_schema)

        def set_entries(message: Any, name: str, value: Any) -> None:
            target = getattr(message, name)
            for k, v in value.items():
                item = target.add()
                if k is not None:
                    key_set(item, "key", k)
                if v is not None:
                    value_set(item, "value", v)

        return set_entries
    if fd.type == F.TYPE_MESSAGE:
        fill = _message_filler(fd, schema)
        return lambda message, name, value: fill(getattr(message, name), value)
    if fd.type == F.TYPE_ENUM:
        enum = _enum_of(fd)

        def set_enum(message: Any, name: str, value: Any) -> None:
            enum_value = enum.values_by_name.get(value)
            if enum_value is None:
                raise DataError(f"Invalid enum symbol {value!r} for {enum.full_name}")
            setattr(message, name, enum_value.number)

        return set_enum
    return setattr


def _message_filler(fd: FieldDescriptor, schema: Schema) -> Callable[[Any, Any], None]:
    message_type = _message_of(fd)
    full = message_type.full_name
    if full == DECIMAL_TYPE:
        scale = decimal_scale(schema)

        def fill_decimal(target: Any, value: Any) -> None:
            if not isinstance(value, decimal.Decimal):
                raise DataError(f"Invalid type for Decimal, expected BigDecimal but was {type(value)}")
            if value.as_tuple().exponent != -scale:
                raise DataError("BigDecimal has mismatching scale value for given Decimal schema")
            # The target's class comes from this converter's descriptor pool, not confluent-kafka's.
            target.MergeFromString(decimal_to_protobuf(value, scale).SerializeToString())

        return fill_decimal
    if full == DATE_TYPE:

        def fill_date(target: Any, value: Any) -> None:
            if isinstance(value, int):
                value = _dt.date(1970, 1, 1) + _dt.timedelta(days=value)
            if isinstance(value, _dt.datetime):
                value = value.date()
            target.year, target.month, target.day = value.year, value.month, value.day

        return fill_date
    if full == TIME_TYPE:

        def fill_time(target: Any, value: Any) -> None:
            if isinstance(value, int):
                value = (_dt.datetime(1970, 1, 1) + _dt.timedelta(milliseconds=value)).time()
            target.hours, target.minutes, target.seconds = value.hour, value.minute, value.second
            target.nanos = (value.microsecond // 1000) * 1_000_000

        return fill_time
    if full == TIMESTAMP_TYPE:

        def fill_timestamp(target: Any, value: Any) -> None:
            if isinstance(value, _dt.datetime):
                aware = value if value.tzinfo else value.replace(tzinfo=_dt.UTC)
                millis = (aware - _EPOCH) // _dt.timedelta(milliseconds=1)
            else:
                millis = int(value)
            target.seconds, rest = divmod(millis, 1000)
            target.nanos = rest * 1_000_000

        return fill_timestamp
    return _struct_filler(message_type, schema)


def from_message(schema: Schema, descriptor: Descriptor) -> Callable[[Any], Any]:
    """A function turning a parsed message into the Connect value of `schema` (from `descriptor_to_connect`)."""
    readers = [(f.name, _reader(f.schema, f.name, descriptor)) for f in schema.fields]

    def read(message: Any) -> Any:
        return {name: reader(message) for name, reader in readers}

    return read


def _reader(schema: Schema, name: str, descriptor: Descriptor) -> Callable[[Any], Any]:
    schema_name = schema.name or ""
    if schema.type == "struct" and schema_name.startswith(PROTOBUF_TYPE_UNION_PREFIX):
        oneof = schema_name[len(PROTOBUF_TYPE_UNION_PREFIX) :]
        members = {f.name: _value(f.schema, descriptor.fields_by_name[f.name]) for f in schema.fields}

        def read_union(message: Any) -> Any:
            chosen = message.WhichOneof(oneof)
            if chosen is None:
                return None
            return {m: (members[m](getattr(message, m)) if m == chosen else None) for m in members}

        return read_union
    fd = descriptor.fields_by_name[name]
    convert = _value(schema, fd)
    if not fd.is_repeated and (fd.type == F.TYPE_MESSAGE or fd.has_presence):
        # unset message fields (and proto3 `optional` scalars) are null, as in Confluent's converter
        return lambda message: convert(getattr(message, name)) if message.HasField(name) else None
    return lambda message: convert(getattr(message, name))


def _value(schema: Schema, fd: FieldDescriptor) -> Callable[[Any], Any]:
    name, t = schema.name, schema.type
    if t == "array":
        element = _value(schema.value_schema or _missing(), fd)  # what is read of fd is the same per element
        return lambda v: [element(x) for x in v]
    if name == DECIMAL_LOGICAL_NAME:
        return lambda m: protobuf_to_decimal(m)
    if name == DATE_LOGICAL_NAME:
        return lambda m: _dt.date(m.year, m.month, m.day)
    if name == TIME_LOGICAL_NAME:
        return lambda m: _dt.time(m.hours, m.minutes, m.seconds, (m.nanos // 1_000_000) * 1000)
    if name == TIMESTAMP_LOGICAL_NAME:
        return lambda m: _EPOCH + _dt.timedelta(milliseconds=m.seconds * 1000 + m.nanos // 1_000_000)
    if t == "string" and fd.type == F.TYPE_ENUM:
        symbols = {v.number: v.name for v in _enum_of(fd).values}
        return lambda v: symbols.get(v, str(v))
    if t == "map":
        entry = _message_of(fd)
        key = _value(schema.key_schema or _missing(), entry.fields_by_name["key"])
        value = _value(schema.value_schema or _missing(), entry.fields_by_name["value"])

        def read_map(v: Any) -> Any:
            if hasattr(v, "items"):
                return {key(k): value(x) for k, x in v.items()}
            return {key(e.key): value(e.value) for e in v}

        return read_map
    if t == "struct":
        return from_message(schema, _message_of(fd))
    if t == "bytes":
        return bytes
    return lambda v: v


def _proto_name(name: str) -> str:
    """Protobuf identifiers: letters, digits and underscores, starting with a letter (Confluent's scrub)."""
    cleaned = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in name)
    return cleaned if cleaned[:1].isalpha() else "x" + cleaned


def _missing() -> Schema:
    raise DataError("Invalid schema: a map or array schema without its key or value schema")
