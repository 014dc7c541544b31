"""Header transforms: InsertHeader, DropHeaders, and HeaderFrom$Key / HeaderFrom$Value."""

from __future__ import annotations

from typing import Any

from ..api.config import ConfigDef, Importance, NonNull, Type, ValidString
from ..api.data import Schema
from ..api.errors import ConfigError
from ..api.records import ConnectRecord, Header
from ..api.transforms import Transformation
from ..data.values_parser import parse_string
from ._util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    REPLACE_NULL_WITH_DEFAULT_DOC,
    KeyOrValue,
    NonEmptyList,
    SchemaCache,
    key_and_value,
    parse_config,
    require_map,
    require_struct,
    struct_schema,
)

INSERT_HEADER_DOC = "Add a header to each record."
DROP_HEADERS_DOC = "Removes one or more headers from each record."
HEADER_FROM_DOC = (
    "Moves or copies fields in the key/value of a record into that record's headers. Corresponding "
    "elements of <code>fields</code> and <code>headers</code> together identify a field and the header "
    "it should be moved or copied to. Use the concrete transformation type designed for the record key "
    "(<code>org.apache.kafka.connect.transforms.HeaderFrom$Key</code>) or value "
    "(<code>org.apache.kafka.connect.transforms.HeaderFrom$Value</code>)."
)


def insert_header_config_def() -> ConfigDef:
    return (
        ConfigDef()
        .define(
            "header",
            Type.STRING,
            validator=NonNull(),
            importance=Importance.HIGH,
            documentation="The name of the header.",
        )
        .define(
            "value.literal",
            Type.STRING,
            validator=NonNull(),
            importance=Importance.HIGH,
            documentation="The literal value that is to be set as the header value on all records.",
        )
    )


class InsertHeader(Transformation):
    __doc__ = INSERT_HEADER_DOC

    def configure(self, configs: dict[str, Any]) -> None:
        values = parse_config(insert_header_config_def(), configs)
        self.header = values["header"]
        # Values.parseString: the literal gets the schema its text implies (int8, boolean, string, ...)
        schema, value = parse_string(values["value.literal"])
        self.literal = Header(self.header, value, schema)

    def config(self) -> ConfigDef:
        return insert_header_config_def()

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        return record.new_record(headers=[*(record.headers or ()), self.literal])


def drop_headers_config_def() -> ConfigDef:
    return ConfigDef().define(
        "headers",
        Type.LIST,
        validator=NonEmptyList(),
        importance=Importance.HIGH,
        documentation="The name of the headers to be removed.",
    )


class DropHeaders(Transformation):
    __doc__ = DROP_HEADERS_DOC

    def configure(self, configs: dict[str, Any]) -> None:
        self.headers = set(parse_config(drop_headers_config_def(), configs)["headers"])

    def config(self) -> ConfigDef:
        return drop_headers_config_def()

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        kept = [h for h in record.headers or () if h.key not in self.headers]
        return record.new_record(headers=kept)


def header_from_config_def() -> ConfigDef:
    return (
        ConfigDef()
        .define(
            "fields",
            Type.LIST,
            validator=NonEmptyList(),
            importance=Importance.HIGH,
            documentation="Field names in the record whose values are to be copied or moved to headers.",
        )
        .define(
            "headers",
            Type.LIST,
            validator=NonEmptyList(),
            importance=Importance.HIGH,
            documentation="Header names, in the same order as the field names listed in the fields "
            "configuration property.",
        )
        .define(
            "operation",
            Type.STRING,
            validator=ValidString.of("move", "copy"),
            importance=Importance.HIGH,
            documentation="Either <code>move</code> if the fields are to be moved to the headers (removed from "
            "the key/value), or <code>copy</code> if the fields are to be copied to the headers "
            "(retained in the key/value).",
        )
        .define(
            REPLACE_NULL_WITH_DEFAULT_CONFIG,
            Type.BOOLEAN,
            True,
            importance=Importance.MEDIUM,
            documentation=REPLACE_NULL_WITH_DEFAULT_DOC,
        )
    )


class HeaderFrom(KeyOrValue):
    __doc__ = HEADER_FROM_DOC

    def configure(self, configs: dict[str, Any]) -> None:
        values = parse_config(header_from_config_def(), configs)
        self.fields = values["fields"]
        self.headers = values["headers"]
        if len(self.fields) != len(self.headers):
            raise ConfigError("'fields' config must have the same number of elements as 'headers' config.")
        self.operation = values["operation"]
        self.replace_null_with_default = values[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._schemas = SchemaCache()

    def config(self) -> ConfigDef:
        return header_from_config_def()

    def _get(self, struct: dict, schema: Schema, name: str) -> Any:
        field = schema.field(name)
        if field is None:
            return None
        value = struct.get(name)
        return field.schema.default if value is None and self.replace_null_with_default else value

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        headers = list(record.headers or ())
        if schema is None:
            value = require_map(value, f"header {self.operation}")
            updated = dict(value)
            for field, header in zip(self.fields, self.headers, strict=False):
                if self.operation == "move":
                    updated.pop(field, None)
                headers.append(Header(header, value.get(field), None))
            return self.new_record(record, None, updated, headers=headers)
        struct = require_struct(value, schema, f"header {self.operation}")
        if self.operation == "move":
            updated_schema = self._schemas.get_or_build(
                schema,
                lambda s: struct_schema(((f.name, f.schema) for f in s.fields if f.name not in self.fields), basics=s),
            )
            updated_value = {f.name: self._get(struct, schema, f.name) for f in updated_schema.fields}
        else:
            updated_schema, updated_value = schema, struct
        for field, header in zip(self.fields, self.headers, strict=False):
            found = schema.field(field)
            if found is None:  # Kafka fails here with a NullPointerException; say which field is missing
                raise ValueError(f"Field {field} does not exist in the {schema} schema")
            headers.append(Header(header, self._get(struct, schema, field), found.schema))
        return self.new_record(record, updated_schema, updated_value, headers=headers)


HeaderFromKey, HeaderFromValue = key_and_value(HeaderFrom, __name__)
