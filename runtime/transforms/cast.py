"""Cast$Key / Cast$Value: cast fields, or the whole key/value, to another primitive type."""

from __future__ import annotations

import base64
import datetime as _dt
import decimal
import math
import re
import struct
from typing import Any

from ..api.config import ConfigDef, Importance, Type
from ..api.data import Schema
from ..api.errors import ConfigError, DataError
from ..api.records import ConnectRecord
from ..data.java_numbers import java_double_str, java_float_str
from ..data.logical_schemas import DATE_LOGICAL_NAME, TIME_LOGICAL_NAME, TIMESTAMP_LOGICAL_NAME
from ._util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    REPLACE_NULL_WITH_DEFAULT_DOC,
    KeyOrValue,
    Lambda,
    SchemaCache,
    class_name_of,
    copy_basics,
    field_value,
    invalid,
    key_and_value,
    parse_config,
    require_map,
    require_struct,
    struct_schema,
)

OVERVIEW_DOC = (
    "Cast fields or the entire key or value to a specific type, e.g. to force an integer field to a "
    "smaller width. Cast from integers, floats, boolean and string to any other type, and cast binary to "
    "string (base64 encoded).<p/>Use the concrete transformation type designed for the record key "
    "(<code>org.apache.kafka.connect.transforms.Cast$Key</code>) or value "
    "(<code>org.apache.kafka.connect.transforms.Cast$Value</code>)."
)
_PURPOSE = "cast types"
_INPUT_TYPES = ("int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string", "bytes")
_OUTPUT_TYPES = _INPUT_TYPES[:-1]
_ALL_TYPES = (*_INPUT_TYPES, "array", "map", "struct")
_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_JAVA_INT = re.compile(r"[+-]?\d+")
_JAVA_FLOAT = re.compile(r"[+-]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?)")
_WHOLE_VALUE = None  # the spec key of a whole-value cast, as Kafka uses an otherwise invalid field name
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_MILLIS_PER_DAY = 86_400_000


def _types_text(types: tuple[str, ...]) -> str:
    return "[" + ", ".join(t.upper() for t in types) + "]"


def _type_of(text: str) -> str:
    name = text.strip().lower()
    if name not in _ALL_TYPES:
        # Kafka passes the enum lookup's exception as the ConfigException's "value", so it reads this way round
        raise ConfigError(
            f"Invalid value java.lang.IllegalArgumentException: No enum constant "
            f"org.apache.kafka.connect.data.Schema.Type.{text.strip().upper()} for configuration "
            f"Invalid type found in casting spec: {text.strip()}"
        )
    if name not in _OUTPUT_TYPES:
        raise ConfigError(
            f"Cast transformation does not support casting to {name.upper()}; supported types are "
            f"{_types_text(_OUTPUT_TYPES)}"
        )
    return name


def parse_field_types(mappings: list[str]) -> dict[str | None, str]:
    casts: dict[str | None, str] = {}
    whole_value = False
    for mapping in mappings:
        parts = mapping.split(":")
        while len(parts) > 1 and parts[-1] == "":
            parts.pop()
        if len(parts) > 2:
            raise invalid("renames", mappings, f"Invalid rename mapping: {mapping}")  # sic, as Kafka reports it
        if len(parts) == 1:
            casts[_WHOLE_VALUE] = _type_of(parts[0])
            whole_value = True
        else:
            casts[parts[0].strip()] = _type_of(parts[1])
    if whole_value and len(mappings) > 1:
        raise ConfigError(
            "Cast transformations that specify a type to cast the entire value to may only specify a "
            "single cast in their spec"
        )
    return casts


def _check_spec(name: str, value: Any) -> None:
    if not value:
        raise ConfigError("Must specify at least one field to cast.")
    parse_field_types(value)


def config_def() -> ConfigDef:
    return (
        ConfigDef()
        .define(
            "spec",
            Type.LIST,
            validator=Lambda(_check_spec, "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"),
            importance=Importance.HIGH,
            documentation="List of fields and the type to cast them to of the form field1:type,field2:type to "
            "cast fields of Maps or Structs. A single type to cast the entire value. Valid types "
            "are int8, int16, int32, int64, float32, float64, boolean, and string. Note that "
            "binary fields can only be cast to string.",
        )
        .define(
            REPLACE_NULL_WITH_DEFAULT_CONFIG,
            Type.BOOLEAN,
            True,
            importance=Importance.MEDIUM,
            documentation=REPLACE_NULL_WITH_DEFAULT_DOC,
        )
    )


# ---- value casts (Java's Number.xxxValue, parseXxx and toString semantics) ----------------------


def _infer_type(value: Any) -> str | None:
    """ConnectSchema.schemaType of a schemaless value's class."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "bytes"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "map"
    return None


def _wrap(number: int, bits: int) -> int:
    mask = (1 << bits) - 1
    number &= mask
    return number - (1 << bits) if number >> (bits - 1) else number


def _float_to_int(value: float, bits: int) -> int:
    """Java's narrowing of a double: to int (or long) with saturation, NaN -> 0, then wrap to `bits`."""
    if math.isnan(value):
        return 0
    width = 64 if bits == 64 else 32
    low, high = -(1 << (width - 1)), (1 << (width - 1)) - 1
    number = low if value == -math.inf else high if value == math.inf else int(value)
    return _wrap(max(low, min(high, number)), bits)


def _to_float32(value: float) -> float:
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def _cast_int(value: Any, bits: int) -> int:
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, int):
        return _wrap(value, bits)
    if isinstance(value, float):
        return _float_to_int(value, bits)
    if isinstance(value, decimal.Decimal):
        return _wrap(int(value), bits) if value.is_finite() else 0
    if isinstance(value, str):
        if not _JAVA_INT.fullmatch(value):
            raise ValueError(value)
        number = int(value)
        if _wrap(number, bits) != number:
            raise ValueError(value)
        return number
    raise DataError(f"Unexpected type in Cast transformation: {class_name_of(value)}")


def _cast_float(value: Any, single: bool) -> float:
    if isinstance(value, bool):
        result = 1.0 if value else 0.0
    elif isinstance(value, (int, float, decimal.Decimal)):
        result = float(value)
    elif isinstance(value, str):
        text = value.strip()
        if not _JAVA_FLOAT.fullmatch(text):
            raise ValueError(value)
        result = float(text.rstrip("fFdD").replace("Infinity", "inf"))
    else:
        raise DataError(f"Unexpected type in Cast transformation: {class_name_of(value)}")
    return _to_float32(result) if single else result


def _cast_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float, decimal.Decimal)):
        if isinstance(value, float) and math.isnan(value):
            return False
        return _cast_int(value, 64) != 0
    if isinstance(value, str):
        return value.lower() == "true"
    raise DataError(f"Unexpected type in Cast transformation: {class_name_of(value)}")


def _date_string(value: Any) -> str:
    """Values.dateFormatFor: time-of-day, date, or full ISO-8601 timestamp in UTC."""
    if isinstance(value, _dt.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=_dt.UTC)
        millis = (aware - _EPOCH) // _dt.timedelta(milliseconds=1)
    elif isinstance(value, _dt.date):
        millis = (value - _EPOCH.date()).days * _MILLIS_PER_DAY
    else:
        millis = ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
    moment = _EPOCH + _dt.timedelta(milliseconds=millis)
    if millis < _MILLIS_PER_DAY:  # Java checks this first, so the epoch day and earlier print as a time
        return moment.strftime("%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    if millis % _MILLIS_PER_DAY == 0:
        return moment.strftime("%Y-%m-%d")
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _cast_string(value: Any, schema: Schema | None) -> str:
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return _date_string(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_float_str(value) if schema is not None and schema.type == "float32" else java_double_str(value)
    return str(value)


def _encode_logical(schema: Schema, value: Any) -> Any:
    """Date -> days, Time -> millis of day, Timestamp -> epoch millis (the logical types' int encodings)."""
    if schema.name == DATE_LOGICAL_NAME and isinstance(value, _dt.date):
        day = value.date() if isinstance(value, _dt.datetime) else value
        return (day - _EPOCH.date()).days
    if schema.name == TIME_LOGICAL_NAME and isinstance(value, _dt.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
    if schema.name == TIMESTAMP_LOGICAL_NAME and isinstance(value, _dt.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=_dt.UTC)
        return (aware - _EPOCH) // _dt.timedelta(milliseconds=1)
    return value


def cast_value(schema: Schema | None, value: Any, target: str) -> Any:
    if value is None:
        return None
    inferred = schema.type if schema is not None else _infer_type(value)
    if inferred is None:
        raise DataError(
            f"Cast transformation was passed a value of type {class_name_of(value)} which is not "
            "supported by Connect's data API"
        )
    if inferred not in _INPUT_TYPES:
        raise DataError(
            f"Cast transformation does not support casting from {inferred.upper()}; supported types are "
            f"{_types_text(_INPUT_TYPES)}"
        )
    if schema is not None and schema.name is not None and target != "string":
        value = _encode_logical(schema, value)
    try:
        if target in _BITS:
            return _cast_int(value, _BITS[target])
        if target in ("float32", "float64"):
            return _cast_float(value, target == "float32")
        if target == "boolean":
            return _cast_boolean(value)
        return _cast_string(value, schema)
    except ValueError:
        raise DataError(f"Value ({value}) was out of range for requested data type") from None


class Cast(KeyOrValue):
    __doc__ = OVERVIEW_DOC

    def configure(self, configs: dict[str, Any]) -> None:
        values = parse_config(config_def(), configs)
        self.casts = parse_field_types(values["spec"])
        self.whole_value_type = self.casts.get(_WHOLE_VALUE)
        self.replace_null_with_default = values[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._schemas = SchemaCache()

    def config(self) -> ConfigDef:
        return config_def()

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            if self.whole_value_type is not None:
                return self.new_record(record, None, cast_value(None, value, self.whole_value_type))
            value = require_map(value, _PURPOSE)
            updated = dict(value)
            for name, target in self.casts.items():
                updated[name] = cast_value(None, value.get(name), target)
            return self.new_record(record, None, updated)
        if self.whole_value_type is None and schema.type != "struct":
            raise DataError("Cannot list fields on non-struct type")  # Kafka reads the schema's fields first
        updated_schema = self._schemas.get_or_build(schema, self._updated_schema)
        if self.whole_value_type is not None:
            return self.new_record(record, updated_schema, cast_value(schema, value, self.whole_value_type))
        value = require_struct(value, schema, _PURPOSE)
        updated = {}
        for field in schema.fields:
            original = field_value(value, field, self.replace_null_with_default)
            cast_to = self.casts.get(field.name)
            updated[field.name] = cast_value(field.schema, original, cast_to) if cast_to else original
        return self.new_record(record, updated_schema, updated)

    def _updated_schema(self, schema: Schema) -> Schema:
        whole = self.whole_value_type
        if whole is not None:
            default = cast_value(schema, schema.default, whole) if schema.default is not None else None
            return copy_basics(schema, whole, optional=schema.optional, default=default)
        fields = []
        for field in schema.fields:
            target = self.casts.get(field.name)
            if target is None:
                fields.append((field.name, field.schema))
                continue
            default = None
            if field.schema.default is not None:
                default = cast_value(field.schema, field.schema.default, target)
            fields.append((field.name, Schema(target, optional=field.schema.optional, default=default)))
        default = None
        if schema.default is not None:  # a struct default: cast its fields too
            default = {
                f.name: cast_value(f.schema, schema.default.get(f.name), self.casts[f.name])
                if f.name in self.casts
                else schema.default.get(f.name)
                for f in schema.fields
            }
        return struct_schema(fields, basics=schema, optional=schema.optional, default=default)

    def close(self) -> None:
        self._schemas = SchemaCache()


CastKey, CastValue = key_and_value(Cast, __name__)
