"""SetSchemaMetadata$Key / $Value: set the schema name and/or version of the key or value schema."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..api.config import ConfigDef, Importance, Type
from ..api.errors import ConfigError, DataError
from ..api.records import ConnectRecord
from ._util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    REPLACE_NULL_WITH_DEFAULT_DOC,
    KeyOrValue,
    field_value,
    key_and_value,
    parse_config,
    require_schema,
)

OVERVIEW_DOC = (
    "Set the schema name, version or both on the record's key "
    "(<code>org.apache.kafka.connect.transforms.SetSchemaMetadata$Key</code>) or value "
    "(<code>org.apache.kafka.connect.transforms.SetSchemaMetadata$Value</code>) schema."
)


def config_def() -> ConfigDef:
    return (
        ConfigDef()
        .define("schema.name", Type.STRING, None, importance=Importance.HIGH, documentation="Schema name to set.")
        .define("schema.version", Type.INT, None, importance=Importance.HIGH, documentation="Schema version to set.")
        .define(
            REPLACE_NULL_WITH_DEFAULT_CONFIG,
            Type.BOOLEAN,
            True,
            importance=Importance.MEDIUM,
            documentation=REPLACE_NULL_WITH_DEFAULT_DOC,
        )
    )


class SetSchemaMetadata(KeyOrValue):
    __doc__ = OVERVIEW_DOC

    def configure(self, configs: dict[str, Any]) -> None:
        values = parse_config(config_def(), configs)
        self.schema_name = values["schema.name"]
        self.schema_version = values["schema.version"]
        self.replace_null_with_default = values[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        if self.schema_name is None and self.schema_version is None:
            raise ConfigError("Neither schema name nor version configured")

    def config(self) -> ConfigDef:
        return config_def()

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        if value is None and schema is None:
            return record
        schema = require_schema(schema, "updating schema metadata")
        if schema.type != "struct":
            # Kafka 3.9 copies schema.fields() into the new schema, which fails for every non-struct schema
            raise DataError("Cannot list fields on non-struct type")
        updated_schema = dataclasses.replace(
            schema,
            name=self.schema_name if self.schema_name is not None else schema.name,
            version=self.schema_version if self.schema_version is not None else schema.version,
        )
        if isinstance(value, dict) and schema.type == "struct":
            # Kafka rebuilds the Struct against the renamed schema; nulls may take their fields' defaults
            value = {f.name: field_value(value, f, self.replace_null_with_default) for f in updated_schema.fields}
        return self.new_record(record, updated_schema, value)


SetSchemaMetadataKey, SetSchemaMetadataValue = key_and_value(SetSchemaMetadata, __name__)
