"""TimestampConverter$Key / $Value: convert timestamps between strings, Unix epochs and Date/Time/Timestamp.

Connect's logical types are Python values here: Timestamp a `datetime.datetime` (UTC), Date a
`datetime.date`, Time a `datetime.time`. Conversions go through epoch milliseconds, as Kafka's go through
java.util.Date, so instants a datetime cannot hold (past year 9999) still convert: a Timestamp or Date
outside datetime's range comes out as its encoded number (epoch millis, epoch days), which the converters
accept for those logical types.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from typing import Any

from ..api.config import ConfigDef, Importance, Type, ValidString
from ..api.data import INT64_SCHEMA, OPTIONAL_INT64_SCHEMA, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA, Schema
from ..api.errors import ConfigError, ConnectError, DataError
from ..api.records import ConnectRecord
from ..data.java_date_format import DateFormat, ParseError, millis_of
from ..data.logical_schemas import DATE_LOGICAL_NAME, TIME_LOGICAL_NAME, TIMESTAMP_LOGICAL_NAME
from ._util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    REPLACE_NULL_WITH_DEFAULT_DOC,
    KeyOrValue,
    SchemaCache,
    class_name_of,
    field_value,
    java_schema_str,
    key_and_value,
    parse_config,
    require_map,
    require_struct,
    struct_schema,
)

OVERVIEW_DOC = (
    "Convert timestamps between different formats such as Unix epoch, strings, and Connect Date/Timestamp "
    "types.Applies to individual fields or to the entire value.<p/>Use the concrete transformation type "
    "designed for the record key (<code>org.apache.kafka.connect.transforms.TimestampConverter$Key</code>) "
    "or value (<code>org.apache.kafka.connect.transforms.TimestampConverter$Value</code>)."
)
_PURPOSE = "converting timestamp formats"
TYPE_STRING, TYPE_UNIX, TYPE_DATE, TYPE_TIME, TYPE_TIMESTAMP = "string", "unix", "Date", "Time", "Timestamp"
_PRECISIONS = ("nanoseconds", "microseconds", "milliseconds", "seconds")
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_MS = _dt.timedelta(milliseconds=1)

_SCHEMAS = {
    TYPE_STRING: (STRING_SCHEMA, OPTIONAL_STRING_SCHEMA),
    TYPE_UNIX: (INT64_SCHEMA, OPTIONAL_INT64_SCHEMA),
    TYPE_DATE: (
        Schema("int32", name=DATE_LOGICAL_NAME, version=1),
        Schema("int32", optional=True, name=DATE_LOGICAL_NAME, version=1),
    ),
    TYPE_TIME: (
        Schema("int32", name=TIME_LOGICAL_NAME, version=1),
        Schema("int32", optional=True, name=TIME_LOGICAL_NAME, version=1),
    ),
    TYPE_TIMESTAMP: (
        Schema("int64", name=TIMESTAMP_LOGICAL_NAME, version=1),
        Schema("int64", optional=True, name=TIMESTAMP_LOGICAL_NAME, version=1),
    ),
}


def config_def() -> ConfigDef:
    return (
        ConfigDef()
        .define(
            "field",
            Type.STRING,
            "",
            importance=Importance.HIGH,
            documentation="The field containing the timestamp, or empty if the entire value is a timestamp",
        )
        .define(
            "target.type",
            Type.STRING,
            validator=ValidString.of(TYPE_STRING, TYPE_UNIX, TYPE_DATE, TYPE_TIME, TYPE_TIMESTAMP),
            importance=Importance.HIGH,
            documentation="The desired timestamp representation: string, unix, Date, Time, or Timestamp",
        )
        .define(
            "format",
            Type.STRING,
            "",
            importance=Importance.MEDIUM,
            documentation="A SimpleDateFormat-compatible format for the timestamp. Used to generate the output "
            "when type=string or used to parse the input if the input is a string.",
        )
        .define(
            "unix.precision",
            Type.STRING,
            "milliseconds",
            ValidString.of(*_PRECISIONS),
            importance=Importance.LOW,
            documentation="The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, "
            "or nanoseconds. Used to generate the output when type=unix or used to parse the "
            "input if the input is a Long.Note: This SMT will cause precision loss during "
            "conversions from, and to, values with sub-millisecond components.",
        )
        .define(
            REPLACE_NULL_WITH_DEFAULT_CONFIG,
            Type.BOOLEAN,
            True,
            importance=Importance.MEDIUM,
            documentation=REPLACE_NULL_WITH_DEFAULT_DOC,
        )
    )


_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_MILLIS_PER_DAY = 86_400_000
_EPOCH_DATE = _dt.date(1970, 1, 1)


def _saturated(value: int) -> int:
    """TimeUnit conversions clamp to the long range instead of overflowing."""
    return max(_LONG_MIN, min(_LONG_MAX, value))


def _millis(kind: str, value: Any) -> int | None:
    """Epoch millis of a logical type's Python value (or of its encoded number), as java.util.Date holds it."""
    if isinstance(value, _dt.datetime):
        return millis_of(value)
    if isinstance(value, _dt.date):
        return (value - _EPOCH_DATE).days * _MILLIS_PER_DAY
    if isinstance(value, _dt.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
    if isinstance(value, int) and not isinstance(value, bool):
        return value * _MILLIS_PER_DAY if kind == TYPE_DATE else value
    return None


def _java_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as TimeUnit conversions do."""
    q = abs(a) // b
    return q if a >= 0 else -q


class TimestampConverter(KeyOrValue):
    __doc__ = OVERVIEW_DOC

    def configure(self, configs: dict[str, Any]) -> None:
        values = parse_config(config_def(), configs)
        self.field = values["field"]
        self.target_type = values["target.type"]
        self.unix_precision = values["unix.precision"]
        self.replace_null_with_default = values[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        pattern = values["format"]
        if self.target_type == TYPE_STRING and not (pattern or "").strip():
            raise ConfigError("TimestampConverter requires format option to be specified when using string timestamps")
        self.format: DateFormat | None = None
        if (pattern or "").strip():
            try:
                self.format = DateFormat(pattern)
            except ValueError as exc:
                # Kafka passes SimpleDateFormat's exception as the ConfigException's "value"
                raise ConfigError(
                    f"Invalid value java.lang.IllegalArgumentException: {exc} for configuration "
                    "TimestampConverter requires a SimpleDateFormat-compatible pattern for string "
                    f"timestamps: {pattern}"
                ) from None
        self._schemas = SchemaCache()
        self._to_raw: dict[str, Callable[[Any], int]] = {
            TYPE_STRING: self._string_to_raw,
            TYPE_UNIX: self._unix_to_raw,
            TYPE_DATE: self._logical_to_raw(TYPE_DATE),
            TYPE_TIME: self._logical_to_raw(TYPE_TIME),
            TYPE_TIMESTAMP: self._logical_to_raw(TYPE_TIMESTAMP),
        }

    def config(self) -> ConfigDef:
        return config_def()

    # ---- translators ------------------------------------------------------------------------------

    def _string_to_raw(self, value: Any) -> int:
        if not isinstance(value, str):
            raise DataError(f"Expected string timestamp to be a String, but found {class_name_of(value)}")
        pattern = self.format.pattern if self.format is not None else "null"
        try:
            if self.format is None:
                raise ParseError(value)
            return self.format.parse_millis(value)
        except ParseError:
            raise DataError(f"Could not parse timestamp: value ({value}) does not match pattern ({pattern})") from None

    def _unix_to_raw(self, value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise DataError(f"Expected Unix timestamp to be a Long, but found {class_name_of(value)}")
        return {
            "seconds": _saturated(value * 1000),
            "microseconds": _java_div(value, 1000),
            "nanoseconds": _java_div(value, 1_000_000),
        }.get(self.unix_precision, value)

    @staticmethod
    def _logical_to_raw(kind: str) -> Callable[[Any], int]:
        def to_raw(value: Any) -> int:
            millis = _millis(kind, value)
            if millis is None:
                raise DataError(f"Expected {kind} to be a java.util.Date, but found {class_name_of(value)}")
            return millis

        return to_raw

    def _to_type(self, millis: int) -> Any:
        target = self.target_type
        if target == TYPE_STRING:
            if self.format is None:  # configure refuses target.type=string without a format
                raise ConfigError(
                    "TimestampConverter requires format option to be specified when using string timestamps"
                )
            return self.format.format_millis(millis)
        if target == TYPE_UNIX:
            return {
                "seconds": _java_div(millis, 1000),
                "microseconds": _saturated(millis * 1000),
                "nanoseconds": _saturated(millis * 1_000_000),
            }.get(self.unix_precision, millis)
        if target == TYPE_TIME:
            seconds, ms = divmod(millis % _MILLIS_PER_DAY, 1000)
            return _dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, ms * 1000)
        try:
            if target == TYPE_DATE:
                return _EPOCH_DATE + _dt.timedelta(days=millis // _MILLIS_PER_DAY)
            return _EPOCH + millis * _MS
        except OverflowError:  # past what datetime holds: the encoded number (days or millis)
            return millis // _MILLIS_PER_DAY if target == TYPE_DATE else millis

    def _type_schema(self, optional: bool) -> Schema:
        required, optional_schema = _SCHEMAS[self.target_type]
        return optional_schema if optional else required

    @staticmethod
    def _infer_type(value: Any) -> str:
        if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
            return TYPE_TIMESTAMP
        if isinstance(value, int) and not isinstance(value, bool):
            return TYPE_UNIX
        if isinstance(value, str):
            return TYPE_STRING
        raise DataError(f"TimestampConverter does not support {class_name_of(value)} objects as timestamps")

    @staticmethod
    def _type_from_schema(schema: Schema) -> str:
        if schema.name == TIMESTAMP_LOGICAL_NAME:
            return TYPE_TIMESTAMP
        if schema.name == DATE_LOGICAL_NAME:
            return TYPE_DATE
        if schema.name == TIME_LOGICAL_NAME:
            return TYPE_TIME
        if schema.type == "string":
            return TYPE_STRING
        if schema.type == "int64":
            return TYPE_UNIX
        raise ConnectError(f"Schema {java_schema_str(schema)} does not correspond to a known timestamp type format")

    def convert(self, value: Any, source_type: str | None = None) -> Any:
        if value is None:
            return None
        raw = self._to_raw[source_type or self._infer_type(value)](value)
        return self._to_type(raw)

    # ---- records ----------------------------------------------------------------------------------

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            if value is None or not self.field:
                return self.new_record(record, None, self.convert(value))
            updated = dict(require_map(value, _PURPOSE))
            updated[self.field] = self.convert(updated.get(self.field))
            return self.new_record(record, None, updated)
        if not self.field:
            return self.new_record(
                record, self._type_schema(schema.optional), self.convert(value, self._type_from_schema(schema))
            )
        struct = None if value is None else require_struct(value, schema, _PURPOSE)
        updated_schema = self._schemas.get_or_build(schema, self._updated_schema)
        return self.new_record(record, updated_schema, self._convert_struct(struct, schema))

    def _convert_struct(self, struct: dict | None, schema: Schema) -> dict | None:
        if struct is None:
            return None
        updated = {}
        for field in schema.fields:
            v = field_value(struct, field, self.replace_null_with_default)
            updated[field.name] = (
                self.convert(v, self._type_from_schema(field.schema)) if field.name == self.field else v
            )
        return updated

    def _updated_schema(self, schema: Schema) -> Schema:
        fields = [
            (f.name, self._type_schema(f.schema.optional) if f.name == self.field else f.schema) for f in schema.fields
        ]
        default = self._convert_struct(schema.default, schema) if schema.default is not None else None
        return struct_schema(fields, basics=schema, optional=schema.optional, default=default)

    def close(self) -> None:
        self._schemas = SchemaCache()


TimestampConverterKey, TimestampConverterValue = key_and_value(TimestampConverter, __name__)
