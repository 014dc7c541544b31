"""MaskField$Key / MaskField$Value: replace field values with a type's null value or a replacement."""

from __future__ import annotations

import datetime as _dt
import decimal
import re
from typing import Any

from ..api.config import ConfigDef, Importance, Type
from ..api.data import Schema
from ..api.errors import DataError
from ..api.records import ConnectRecord
from ._util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    REPLACE_NULL_WITH_DEFAULT_DOC,
    KeyOrValue,
    NonEmptyList,
    NonEmptyString,
    class_name_of,
    field_value,
    key_and_value,
    parse_config,
    require_map,
    require_struct,
)

OVERVIEW_DOC = (
    "Mask specified fields with a valid null value for the field type (i.e. 0, false, empty string, and "
    "so on).<p/>For numeric and string fields, an optional replacement value can be specified that is "
    "converted to the correct type.<p/>Use the concrete transformation type designed for the record key "
    "(<code>org.apache.kafka.connect.transforms.MaskField$Key</code>) or value "
    "(<code>org.apache.kafka.connect.transforms.MaskField$Value</code>)."
)
_PURPOSE = "mask fields"
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_INTEGER = re.compile(r"[+-]?\d+")


def config_def() -> ConfigDef:
    return (
        ConfigDef()
        .define(
            "fields",
            Type.LIST,
            validator=NonEmptyList(),
            importance=Importance.HIGH,
            documentation="Names of fields to mask.",
        )
        .define(
            "replacement",
            Type.STRING,
            None,
            NonEmptyString(),
            importance=Importance.LOW,
            documentation="Custom value replacement, that will be applied to all 'fields' values (numeric or "
            "non-empty string values only).",
        )
        .define(
            REPLACE_NULL_WITH_DEFAULT_CONFIG,
            Type.BOOLEAN,
            True,
            importance=Importance.MEDIUM,
            documentation=REPLACE_NULL_WITH_DEFAULT_DOC,
        )
    )


def _null_value(value: Any) -> Any:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return 0
    if isinstance(value, float):
        return 0.0
    if isinstance(value, decimal.Decimal):
        return decimal.Decimal(0)
    if isinstance(value, _dt.datetime):
        return _EPOCH if value.tzinfo is not None else _EPOCH.replace(tzinfo=None)
    if isinstance(value, _dt.date):  # Connect's Date and Time are java.util.Date(0) in Kafka
        return _dt.date(1970, 1, 1)
    if isinstance(value, _dt.time):
        return _dt.time(0)
    if isinstance(value, str):
        return ""
    if isinstance(value, list):
        return []
    if isinstance(value, dict):
        return {}
    raise DataError(f"Cannot mask value of type: {class_name_of(value)}")


def _replacement_value(value: Any, replacement: str, schema: Schema | None = None) -> Any:
    try:
        if isinstance(value, bool):
            raise DataError(f"Cannot mask value of type {class_name_of(value, schema)} with custom replacement.")
        if isinstance(value, int):
            if _INTEGER.fullmatch(replacement.strip()):
                return int(replacement.strip())
            return int(float(replacement))  # Values.convertToLong parses "1.5" as a number, then narrows
        if isinstance(value, float):
            return float(replacement)
        if isinstance(value, decimal.Decimal):
            return decimal.Decimal(replacement)
        if isinstance(value, str):
            return replacement
    except (ValueError, decimal.InvalidOperation):
        raise DataError(f"Unable to convert {replacement} (class java.lang.String) to a number") from None
    raise DataError(f"Cannot mask value of type {class_name_of(value, schema)} with custom replacement.")


class MaskField(KeyOrValue):
    __doc__ = OVERVIEW_DOC

    def configure(self, configs: dict[str, Any]) -> None:
        values = parse_config(config_def(), configs)
        self.masked_fields = list(dict.fromkeys(values["fields"]))
        self.replacement = values["replacement"]
        self.replace_null_with_default = values[REPLACE_NULL_WITH_DEFAULT_CONFIG]

    def config(self) -> ConfigDef:
        return config_def()

    def _masked(self, value: Any, schema: Schema | None = None) -> Any:
        if value is None:
            return None
        if schema is not None and schema.type == "struct":  # a Struct: no null value, no replacement in Kafka
            what = "" if self.replacement is None else " with custom replacement."
            raise DataError(f"Cannot mask value of type{':' if not what else ''} {class_name_of(value, schema)}{what}")
        return _null_value(value) if self.replacement is None else _replacement_value(value, self.replacement, schema)

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema = self.operating_schema(record)
        if schema is None:
            value = require_map(self.operating_value(record), _PURPOSE)
            updated = dict(value)
            for name in self.masked_fields:
                updated[name] = self._masked(value.get(name))
            return self.new_record(record, None, updated)
        value = require_struct(self.operating_value(record), schema, _PURPOSE)
        masked = set(self.masked_fields)
        updated = {}
        for field in schema.fields:
            original = field_value(value, field, self.replace_null_with_default)
            updated[field.name] = self._masked(original, field.schema) if field.name in masked else original
        return self.new_record(record, schema, updated)


MaskFieldKey, MaskFieldValue = key_and_value(MaskField, __name__)
