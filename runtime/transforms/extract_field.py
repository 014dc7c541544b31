"""ExtractField$Key / ExtractField$Value: replace the key or value with one of its (possibly nested) fields."""

from __future__ import annotations

from typing import Any

from ..api.config import ConfigDef, Importance, Type
from ..api.records import ConnectRecord
from ._util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    REPLACE_NULL_WITH_DEFAULT_DOC,
    KeyOrValue,
    key_and_value,
    parse_config,
    require_map,
    require_struct,
)
from .field_path import SingleFieldPath, append_syntax_version, syntax_version

OVERVIEW_DOC = (
    "Extract the specified field from a Struct when schema present, or a Map in the case of schemaless "
    "data. Any null values are passed through unmodified.<p/>Use the concrete transformation type "
    "designed for the record key (<code>org.apache.kafka.connect.transforms.ExtractField$Key</code>) or "
    "value (<code>org.apache.kafka.connect.transforms.ExtractField$Value</code>)."
)
_PURPOSE = "field extraction"


def config_def() -> ConfigDef:
    return append_syntax_version(
        ConfigDef()
        .define("field", Type.STRING, importance=Importance.MEDIUM, documentation="Field name to extract.")
        .define(
            REPLACE_NULL_WITH_DEFAULT_CONFIG,
            Type.BOOLEAN,
            True,
            importance=Importance.MEDIUM,
            documentation=REPLACE_NULL_WITH_DEFAULT_DOC,
        )
    )


class ExtractField(KeyOrValue):
    __doc__ = OVERVIEW_DOC

    def configure(self, configs: dict[str, Any]) -> None:
        values = parse_config(config_def(), configs)
        self.original_path = values["field"]
        self.path = SingleFieldPath(self.original_path, syntax_version(values))
        self.replace_null_with_default = values[REPLACE_NULL_WITH_DEFAULT_CONFIG]

    def config(self) -> ConfigDef:
        return config_def()

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            mapping = None if value is None else require_map(value, _PURPOSE)
            return self.new_record(record, None, self.path.value_from_map(mapping))
        struct = None if value is None else require_struct(value, schema, _PURPOSE)
        field = self.path.field_from(schema)
        if field is None:
            raise ValueError(f"Unknown field: {self.original_path}")  # Kafka: IllegalArgumentException
        extracted = self.path.value_from_struct(struct, schema, self.replace_null_with_default)
        return self.new_record(record, field.schema, extracted)


ExtractFieldKey, ExtractFieldValue = key_and_value(ExtractField, __name__)
