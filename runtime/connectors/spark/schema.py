"""Connect data <-> Arrow/Spark: schemas and column building for both Spark connectors.

The sink turns a batch of record values into a pyarrow Table (Spark builds a DataFrame from Arrow
without per-row pickling); the source turns Arrow rows back into Connect STRUCT values.
"""

from __future__ import annotations

import datetime as _dt
import decimal
from collections.abc import Callable, Iterable
from typing import Any

from ...api.data import Schema, SchemaBuilder
from ...api.errors import DataError


class _LazyPyarrow:
    """pyarrow (and numpy with it) adds ~40 MiB to a process: it is imported when a Spark connector first
    uses it, not when the worker registers its plugins."""

    def __getattr__(self, name: str) -> Any:
        import pyarrow

        globals()["pa"] = pyarrow  # later lookups reach the module directly
        return getattr(pyarrow, name)


pa: Any = _LazyPyarrow()

TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
DECIMAL = "org.apache.kafka.connect.data.Decimal"

_PRIMITIVE_TYPES = ("int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string", "bytes")


def _primitive(type_name: str) -> Any:
    return {
        "int8": pa.int8,
        "int16": pa.int16,
        "int32": pa.int32,
        "int64": pa.int64,
        "float32": pa.float32,
        "float64": pa.float64,
        "boolean": pa.bool_,
        "string": pa.string,
        "bytes": pa.binary,
    }[type_name]()


_EPOCH = _dt.date(1970, 1, 1)

KAFKA_COLUMNS = ("kafka_topic", "kafka_partition", "kafka_offset")


def arrow_type(schema: Schema) -> pa.DataType:
    """The Arrow type of a Connect schema (logical types included)."""
    if schema.name == TIMESTAMP:
        return pa.timestamp("ms", tz="UTC")
    if schema.name == DATE:
        return pa.date32()
    if schema.name == TIME:
        return pa.time32("ms")
    if schema.name == DECIMAL:
        params = dict(schema.parameters or ())
        scale = int(params.get("scale", "0"))
        # the writer's precision when it said one (Avro, Protobuf) and Spark can hold it, else Spark's widest
        precision = int(params.get("connect.decimal.precision", "38"))
        return pa.decimal128(precision if scale <= precision <= 38 else 38, scale)
    if schema.type in _PRIMITIVE_TYPES:
        return _primitive(schema.type)
    if schema.type == "array":
        return pa.list_(arrow_field("element", schema.value_schema))
    if schema.type == "map":
        if schema.key_schema is None:
            raise DataError("A map schema has no key schema")
        return pa.map_(arrow_type(schema.key_schema), arrow_field("value", schema.value_schema))
    if schema.type == "struct":
        return pa.struct([arrow_field(f.name, f.schema) for f in schema.fields])
    raise DataError(f"Unsupported Connect schema type {schema.type}")


def arrow_field(name: str, schema: Schema | None) -> pa.Field:
    if schema is None:
        raise DataError(f"Field {name} has no schema")
    return pa.field(name, arrow_type(schema), nullable=True)


def _logical_value(schema: Schema, value: Any) -> Any:
    """Connect logical values may arrive as their wire form (millis, days, scaled bytes)."""
    if value is None:
        return None
    if schema.name == TIMESTAMP and isinstance(value, int):
        return _dt.datetime.fromtimestamp(value / 1000, tz=_dt.UTC)
    if schema.name == DATE and isinstance(value, int):
        return _EPOCH + _dt.timedelta(days=value)
    if schema.name == TIME and isinstance(value, int):
        return (_dt.datetime.min + _dt.timedelta(milliseconds=value)).time()
    if schema.name == DECIMAL and isinstance(value, (bytes, bytearray)):
        scale = int(dict(schema.parameters or ()).get("scale", "0"))
        return decimal.Decimal(int.from_bytes(value, "big", signed=True)).scaleb(-scale)
    return value


def _has_logical(schema: Schema) -> bool:
    if schema.name in (TIMESTAMP, DATE, TIME, DECIMAL):
        return True
    if schema.type == "struct":
        return any(_has_logical(f.schema) for f in schema.fields)
    return False


def _fix(schema: Schema, value: Any) -> Any:
    if value is None:
        return None
    if schema.type == "struct" and schema.name is None:
        return {f.name: _fix(f.schema, value.get(f.name)) for f in schema.fields}
    return _logical_value(schema, value)


def records_to_table(
    values: list[Any], value_schema: Schema | None, extra: dict[str, list[Any]] | None = None
) -> pa.Table:
    """A pyarrow Table of record values: STRUCT schema -> one column per field; schemaless dicts
    -> columns inferred by Arrow; anything else -> a single `value` column."""
    extra = extra or {}
    if value_schema is not None and value_schema.type == "struct":
        columns, fields = {}, []
        for f in value_schema.fields:
            column = [None if v is None else v.get(f.name) for v in values]
            if _has_logical(f.schema):
                column = [_fix(f.schema, v) for v in column]
            columns[f.name] = column
            fields.append(arrow_field(f.name, f.schema))
        try:
            arrays = [pa.array(columns[field.name], type=field.type) for field in fields]
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise DataError(f"Record values do not match their schema: {exc}") from exc
        table = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    elif value_schema is None and values and all(isinstance(v, dict) for v in values):
        try:
            table = pa.Table.from_pylist(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise DataError(f"Cannot infer one schema for these schemaless values: {exc}") from exc
    else:
        value_type = arrow_type(value_schema) if value_schema is not None else None
        table = pa.table({"value": pa.array(values, type=value_type)})
    for name, column in extra.items():
        table = table.append_column(name, pa.array(column))
    return table


# ---- Arrow/Spark -> Connect (the source side) ---------------------------------------------------


def connect_schema(arrow_schema: pa.Schema, name: str | None = None) -> Schema:
    """A Connect STRUCT schema for rows of `arrow_schema` (all fields optional, as Spark's are)."""
    builder = SchemaBuilder.struct()
    if name:
        builder.name(name)
    for field in arrow_schema:
        builder.field(field.name, _connect_type(field.type))
    return builder.optional().build()


def _connect_type(t: pa.DataType) -> Schema:
    opt = lambda type_, **kw: Schema(type_, optional=True, **kw)  # noqa: E731
    if pa.types.is_int8(t):
        return opt("int8")
    if pa.types.is_int16(t):
        return opt("int16")
    if pa.types.is_int32(t):
        return opt("int32")
    if pa.types.is_integer(t):
        return opt("int64")
    if pa.types.is_float32(t):
        return opt("float32")
    if pa.types.is_floating(t):
        return opt("float64")
    if pa.types.is_boolean(t):
        return opt("boolean")
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return opt("string")
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return opt("bytes")
    if pa.types.is_timestamp(t):
        return opt("int64", name=TIMESTAMP, version=1)
    if pa.types.is_date(t):
        return opt("int32", name=DATE, version=1)
    if pa.types.is_decimal(t):
        return opt("float64")
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return opt("array", value_schema=_connect_type(t.value_type))
    if pa.types.is_map(t):
        return opt("map", key_schema=_connect_type(t.key_type), value_schema=_connect_type(t.item_type))
    if pa.types.is_struct(t):
        builder = SchemaBuilder.struct().optional()
        for i in range(t.num_fields):
            builder.field(t.field(i).name, _connect_type(t.field(i).type))
        return builder.build()
    return opt("string")


def table_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Rows of an Arrow table as Connect values (timestamps -> epoch millis, dates -> epoch days)."""
    converters = {f.name: _value_converter(f.type) for f in table.schema}
    rows = table.to_pylist()
    active = {k: c for k, c in converters.items() if c is not None}
    if active:
        for row in rows:
            for k, convert in active.items():
                row[k] = convert(row[k])
    return rows


def _value_converter(t: pa.DataType) -> Callable[[Any], Any] | None:
    if pa.types.is_timestamp(t):

        def ts(v: Any) -> Any:
            if v is None:
                return None
            if v.tzinfo is None:
                v = v.replace(tzinfo=_dt.UTC)
            return int(v.timestamp() * 1000)

        return ts
    if pa.types.is_date(t):
        return lambda v: None if v is None else (v - _EPOCH).days
    if pa.types.is_decimal(t):
        return lambda v: None if v is None else float(v)
    if pa.types.is_map(t):
        return lambda v: None if v is None else dict(v)
    return None


def iter_chunks(items: list[Any], size: int) -> Iterable[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
