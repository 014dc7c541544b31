"""HoistField$Key / HoistField$Value: wrap the key or value in a struct (or map) with a single field."""

from __future__ import annotations

from typing import Any

from ..api.config import ConfigDef, Importance, Type
from ..api.records import ConnectRecord
from ._util import KeyOrValue, SchemaCache, key_and_value, parse_config, struct_schema

OVERVIEW_DOC = (
    "Wrap data using the specified field name in a Struct when schema present, or a Map in the case of "
    "schemaless data.<p/>Use the concrete transformation type designed for the record key "
    "(<code>org.apache.kafka.connect.transforms.HoistField$Key</code>) or value "
    "(<code>org.apache.kafka.connect.transforms.HoistField$Value</code>)."
)


def config_def() -> ConfigDef:
    return ConfigDef().define(
        "field",
        Type.STRING,
        importance=Importance.MEDIUM,
        documentation="Field name for the single field that will be created in the resulting Struct or Map.",
    )


class HoistField(KeyOrValue):
    __doc__ = OVERVIEW_DOC

    def configure(self, configs: dict[str, Any]) -> None:
        self.field_name = parse_config(config_def(), configs)["field"]
        self._schemas = SchemaCache()

    def config(self) -> ConfigDef:
        return config_def()

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            return self.new_record(record, None, {self.field_name: value})
        updated_schema = self._schemas.get_or_build(schema, lambda s: struct_schema([(self.field_name, s)]))
        return self.new_record(record, updated_schema, {self.field_name: value})

    def close(self) -> None:
        self._schemas = SchemaCache()


HoistFieldKey, HoistFieldValue = key_and_value(HoistField, __name__)
