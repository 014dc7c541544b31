"""JSON Schema (as Singer taps and Airbyte sources describe their streams) to Connect schemas and values.

Hand-written: no maintained library maps JSON Schema to Kafka Connect's types (Confluent's JsonSchemaConverter
reads its own `connect.*` annotations, not the schemas taps emit). The mapping, per property:
- `string` -> STRING; with `format` `date-time` -> Timestamp, `date` -> Date, `time` -> Time (Connect's logical
  types; values parsed from ISO 8601, a naive date-time read as UTC). Airbyte's `airbyte_type`
  `timestamp_without_timezone`/`_with_timezone`, `date` and `time_*` mean the same.
- `integer` (or Airbyte's `airbyte_type: integer`) -> INT64; `number` -> FLOAT64; `boolean` -> BOOLEAN.
- `object` with `properties` -> STRUCT (every field optional: taps omit absent values); `object` without
  properties (free-form, e.g. JSONB) -> STRING holding the value as JSON text.
- `array` -> ARRAY of its `items` (STRING as JSON text when `items` is missing or not one type).
- `["null", T]`, `anyOf`/`oneOf` with one non-null branch -> optional T; several types -> STRING (JSON text for
  anything that is not already a string). A value that does not fit its type (a tap sending "12" for an
  integer) is a DataError naming the field.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson

from ..api import DataError, Schema, SchemaBuilder

# Kafka Connect's logical type names (org.apache.kafka.connect.data): converters encode them natively.
TIMESTAMP_NAME = "org.apache.kafka.connect.data.Timestamp"
DATE_NAME = "org.apache.kafka.connect.data.Date"
TIME_NAME = "org.apache.kafka.connect.data.Time"

ValueConverter = Callable[[Any], Any]

_DATE_TIME_AIRBYTE = {"timestamp_with_timezone", "timestamp_without_timezone"}
_TIME_AIRBYTE = {"time_with_timezone", "time_without_timezone"}


def _json_text(value: Any) -> Any:
    if value is None or type(value) is str:
        return value
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def _to_datetime(value: Any) -> Any:
    if value is None or isinstance(value, dt.datetime):
        return value
    if isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value)
        except ValueError:
            raise DataError(f"Not an ISO 8601 date-time: {value!r}") from None
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=dt.UTC)
    raise DataError(f"Not a date-time: {value!r}")


def _to_date(value: Any) -> Any:
    if value is None or (isinstance(value, dt.date) and not isinstance(value, dt.datetime)):
        return value
    if isinstance(value, str):
        try:
            # taps often write dates as midnight date-times ("2024-05-01T00:00:00+00:00")
            return dt.date.fromisoformat(value) if len(value) == 10 else dt.datetime.fromisoformat(value).date()
        except ValueError:
            raise DataError(f"Not an ISO 8601 date: {value!r}") from None
    raise DataError(f"Not a date: {value!r}")


def _to_time(value: Any) -> Any:
    if value is None or isinstance(value, dt.time):
        return value
    if isinstance(value, str):
        try:
            return dt.time.fromisoformat(value).replace(tzinfo=None)
        except ValueError:
            raise DataError(f"Not an ISO 8601 time: {value!r}") from None
    raise DataError(f"Not a time: {value!r}")


def _to_int(value: Any) -> Any:
    if value is None or type(value) is int:
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    raise DataError(f"Not an integer: {value!r}")


def _to_float(value: Any) -> Any:
    if value is None or type(value) is float:
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    try:  # decimal.Decimal and numbers some taps quote
        return float(value)
    except (TypeError, ValueError):
        raise DataError(f"Not a number: {value!r}") from None


def _to_bool(value: Any) -> Any:
    if value is None or value is True or value is False:
        return value
    raise DataError(f"Not a boolean: {value!r}")


def _types(node: Mapping[str, Any]) -> tuple[list[str], bool]:
    """The non-null JSON types a node allows, and whether it allows null."""
    raw = node.get("type")
    if raw is None:
        for key in ("anyOf", "oneOf"):
            branches = node.get(key)
            if isinstance(branches, list):
                nullable = any(isinstance(b, Mapping) and b.get("type") == "null" for b in branches)
                rest = [b for b in branches if isinstance(b, Mapping) and b.get("type") != "null"]
                if len(rest) == 1:
                    types, inner_null = _types(rest[0])
                    return types, nullable or inner_null
                return ["anyOf"], nullable
        return [], True
    types = [raw] if isinstance(raw, str) else [t for t in raw if isinstance(t, str)]
    return [t for t in types if t != "null"], "null" in types


def _branch(node: Mapping[str, Any]) -> Mapping[str, Any]:
    """The one non-null branch of an anyOf/oneOf node, or the node itself."""
    if "type" not in node:
        for key in ("anyOf", "oneOf"):
            branches = node.get(key)
            if isinstance(branches, list):
                rest = [b for b in branches if isinstance(b, Mapping) and b.get("type") != "null"]
                if len(rest) == 1:
                    return _branch(rest[0])
    return node


def connect_schema(node: Mapping[str, Any], optional: bool = True, name: str | None = None) -> Schema:
    """The Connect schema of a JSON Schema node (see the module docstring)."""
    return _mapped(node, optional, name)[0]


def record_converter(node: Mapping[str, Any], name: str | None = None) -> tuple[Schema, ValueConverter]:
    """A stream's value schema (a struct) and the function turning one of its JSON records into that struct."""
    schema, convert = _mapped(node, False, name)
    if schema.type != "struct":
        raise DataError(f"A stream's schema must be an object with properties, got {dict(node)!r}")
    return schema, convert


def key_converter(
    node: Mapping[str, Any], key_properties: Sequence[str], name: str | None = None
) -> tuple[Schema, ValueConverter] | None:
    """The key schema (a struct of the key properties) and its converter; None without key properties."""
    properties = node.get("properties") or {}
    if not key_properties:
        return None
    missing = [k for k in key_properties if k not in properties]
    if missing:
        raise DataError(f"Key properties {missing} are not properties of the stream's schema")
    return _mapped({"type": "object", "properties": {k: properties[k] for k in key_properties}}, False, name)


def _mapped(node: Mapping[str, Any], optional: bool, name: str | None = None) -> tuple[Schema, ValueConverter]:
    node = _branch(node)
    types, nullable = _types(node)
    optional = optional or nullable
    if len(types) != 1:
        # several types (or none declared): the value as text
        builder = SchemaBuilder("string")
        return (builder.optional() if optional else builder).build(), _json_text
    kind = types[0]
    fmt = node.get("format")
    airbyte_type = node.get("airbyte_type")
    converter: ValueConverter
    if kind == "object":
        properties = node.get("properties")
        if not isinstance(properties, Mapping) or not properties:
            builder = SchemaBuilder("string")
            return (builder.optional() if optional else builder).build(), _json_text
        builder = SchemaBuilder.struct()
        if name:
            builder.name(name)
        fields: list[tuple[str, ValueConverter]] = []
        for field_name, child in properties.items():
            child_schema, child_converter = _mapped(child if isinstance(child, Mapping) else {}, True)
            builder.field(field_name, child_schema)
            fields.append((field_name, child_converter))
        names = tuple(f for f, _ in fields)
        converting = tuple((f, c) for f, c in fields if c is not _IDENTITY)

        def convert_struct(value: Any) -> Any:
            if value is None:
                return None
            if type(value) is not dict:
                raise DataError(f"Not an object: {value!r}")
            get = value.get
            struct = {f: get(f) for f in names}
            for f, c in converting:
                try:
                    struct[f] = c(struct[f])
                except DataError as exc:
                    raise DataError(f"Field {f!r}: {exc}") from None
            return struct

        converter = convert_struct
        schema = (builder.optional() if optional else builder).build()
        return schema, converter
    if kind == "array":
        items = node.get("items")
        if isinstance(items, Mapping):
            item_schema, item_converter = _mapped(items, True)
        else:
            item_schema, item_converter = SchemaBuilder("string").optional().build(), _json_text
        builder = SchemaBuilder.array(item_schema)
        if item_converter is _IDENTITY:

            def convert_array(value: Any) -> Any:
                if value is None or type(value) is list:
                    return value
                raise DataError(f"Not an array: {value!r}")

        else:

            def convert_array(value: Any) -> Any:
                if value is None:
                    return None
                if type(value) is not list:
                    raise DataError(f"Not an array: {value!r}")
                return [item_converter(v) for v in value]

        return (builder.optional() if optional else builder).build(), convert_array
    if kind == "string" or kind == "integer" or kind == "number":
        if fmt == "date-time" or airbyte_type in _DATE_TIME_AIRBYTE:
            return _logical("int64", TIMESTAMP_NAME, optional), _to_datetime
        if fmt == "date" or airbyte_type == "date":
            return _logical("int32", DATE_NAME, optional), _to_date
        if fmt == "time" or airbyte_type in _TIME_AIRBYTE:
            return _logical("int32", TIME_NAME, optional), _to_time
    if kind == "string":
        return Schema("string", optional=optional), _IDENTITY
    if kind == "integer" or airbyte_type == "integer":
        return Schema("int64", optional=optional), _to_int
    if kind == "number":
        return Schema("float64", optional=optional), _to_float
    if kind == "boolean":
        return Schema("boolean", optional=optional), _to_bool
    builder = SchemaBuilder("string")
    return (builder.optional() if optional else builder).build(), _json_text


def _logical(type_: str, name: str, optional: bool) -> Schema:
    return Schema(type_, optional=optional, name=name, version=1)


def _to_str(value: Any) -> Any:
    if value is None or type(value) is str:
        return value
    raise DataError(f"Not a string: {value!r}")


# Strings need no conversion: a struct copies them without a call per field (a value of another type then
# fails in the converter, as any wrongly typed value does).
_IDENTITY: ValueConverter = _to_str
