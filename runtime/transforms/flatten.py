"""Flatten$Key / Flatten$Value: flatten nested structs (or maps) into one level, joining names."""

from __future__ import annotations

from typing import Any

from ..api.config import ConfigDef, Importance, Type
from ..api.data import Schema
from ..api.errors import DataError
from ..api.records import ConnectRecord
from ._util import (
    KeyOrValue,
    SchemaCache,
    key_and_value,
    parse_config,
    require_map,
    require_struct,
    struct_schema,
    unique_fields,
)

OVERVIEW_DOC = (
    "Flatten a nested data structure, generating names for each field by concatenating the field names at "
    "each level with a configurable delimiter character. Applies to Struct when schema present, or a Map "
    "in the case of schemaless data. Array fields and their contents are not modified. The default "
    "delimiter is '.'.<p/>Use the concrete transformation type designed for the record key "
    "(<code>org.apache.kafka.connect.transforms.Flatten$Key</code>) or value "
    "(<code>org.apache.kafka.connect.transforms.Flatten$Value</code>)."
)
_PURPOSE = "flattening"
_LEAF_TYPES = ("int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string", "bytes", "array")


def config_def() -> ConfigDef:
    return ConfigDef().define(
        "delimiter",
        Type.STRING,
        ".",
        importance=Importance.MEDIUM,
        documentation="Delimiter to insert between field names from the input record when generating field names for "
        "the output record",
    )


class Flatten(KeyOrValue):
    __doc__ = OVERVIEW_DOC

    def configure(self, configs: dict[str, Any]) -> None:
        self.delimiter = parse_config(config_def(), configs)["delimiter"]
        self._schemas = SchemaCache()

    def config(self) -> ConfigDef:
        return config_def()

    def _name(self, prefix: str, name: str) -> str:
        return name if not prefix else prefix + self.delimiter + name

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            flat: dict[str, Any] = {}
            self._flatten_map(require_map(value, _PURPOSE), "", flat)
            return self.new_record(record, None, flat)
        require_struct(value, schema, _PURPOSE)
        updated_schema = self._schemas.get_or_build(schema, self._updated_schema)
        flat = {}
        self._flatten_struct(value, schema, "", flat)
        return self.new_record(record, updated_schema, flat)

    def _flatten_map(self, original: dict, prefix: str, out: dict[str, Any]) -> None:
        for key, value in original.items():
            name = self._name(prefix, key)
            if isinstance(value, dict):
                self._flatten_map(value, name, out)
            else:
                # Kafka rejects values of classes outside Connect's data API; Python's Decimal and datetime are
                # kept as leaves here, since Python connectors commonly produce them
                out[name] = value

    def _flatten_struct(self, struct: dict | None, schema: Schema, prefix: str, out: dict[str, Any]) -> None:
        if struct is None:
            return
        for field in schema.fields:
            name = self._name(prefix, field.name)
            value = struct.get(field.name)
            if value is None:
                value = field.schema.default
            if field.schema.type in _LEAF_TYPES:
                out[name] = value
            elif field.schema.type == "struct":
                self._flatten_struct(value, field.schema, name, out)
            else:
                raise DataError(
                    f"Flatten transformation does not support {field.schema.type.upper()} for record "
                    f"with schemas (for field {name})."
                )

    def _updated_schema(self, schema: Schema) -> Schema:
        fields: list[tuple[str, Schema]] = []
        self._build_schema(schema, "", fields, schema.optional, schema.default)
        return struct_schema(unique_fields(fields), basics=schema)

    def _build_schema(
        self, schema: Schema, prefix: str, fields: list[tuple[str, Schema]], optional: bool, parent_default: dict | None
    ) -> None:
        for field in schema.fields:
            name = self._name(prefix, field.name)
            field_optional = optional or field.schema.optional
            default = field.schema.default
            if default is None and parent_default is not None:
                default = parent_default.get(field.name)
            if field.schema.type in _LEAF_TYPES:
                s = field.schema
                fields.append(
                    (
                        name,
                        Schema(
                            s.type,
                            optional=field_optional,
                            default=default,
                            name=s.name,
                            version=s.version,
                            doc=s.doc,
                            parameters=s.parameters,
                            value_schema=s.value_schema if s.type == "array" else None,
                        ),
                    )
                )
            elif field.schema.type == "struct":
                self._build_schema(field.schema, name, fields, field_optional, default)
            else:
                raise DataError(
                    f"Flatten transformation does not support {field.schema.type.upper()} for record "
                    f"with schemas (for field {name})."
                )

    def close(self) -> None:
        self._schemas = SchemaCache()


FlattenKey, FlattenValue = key_and_value(Flatten, __name__)
