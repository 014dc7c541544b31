"""ValueToKey: replace the record key with a new key formed from fields of the value."""

from __future__ import annotations

from typing import Any

from ..api.config import ConfigDef, Importance, Type
from ..api.data import Schema
from ..api.errors import DataError
from ..api.records import ConnectRecord
from ..api.transforms import Transformation
from ._util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    REPLACE_NULL_WITH_DEFAULT_DOC,
    NonEmptyList,
    SchemaCache,
    parse_config,
    require_map,
    require_struct,
    struct_schema,
)

OVERVIEW_DOC = "Replace the record key with a new key formed from a subset of fields in the record value."
_PURPOSE = "copying fields from value to key"


def config_def() -> ConfigDef:
    return (
        ConfigDef()
        .define(
            "fields",
            Type.LIST,
            validator=NonEmptyList(),
            importance=Importance.HIGH,
            documentation="Field names on the record value to extract as the record key.",
        )
        .define(
            REPLACE_NULL_WITH_DEFAULT_CONFIG,
            Type.BOOLEAN,
            True,
            importance=Importance.MEDIUM,
            documentation=REPLACE_NULL_WITH_DEFAULT_DOC,
        )
    )


class ValueToKey(Transformation):
    __doc__ = OVERVIEW_DOC

    def configure(self, configs: dict[str, Any]) -> None:
        values = parse_config(config_def(), configs)
        self.fields = values["fields"]
        self.replace_null_with_default = values[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._schemas = SchemaCache()

    def config(self) -> ConfigDef:
        return config_def()

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema = record.value_schema
        if schema is None:
            value = require_map(record.value, _PURPOSE)
            return record.new_record(key_schema=None, key={f: value.get(f) for f in self.fields})
        value = require_struct(record.value, schema, _PURPOSE)
        key_schema = self._schemas.get_or_build(schema, self._key_schema)
        key = {}
        for field in key_schema.fields:
            v = value.get(field.name)
            key[field.name] = field.schema.default if v is None and self.replace_null_with_default else v
        return record.new_record(key_schema=key_schema, key=key)

    def _key_schema(self, schema: Schema) -> Schema:
        fields = []
        for name in self.fields:
            field = schema.field(name)
            if field is None:
                raise DataError(f"Field does not exist: {name}")
            fields.append((name, field.schema))
        return struct_schema(fields)

    def close(self) -> None:
        self._schemas = SchemaCache()
