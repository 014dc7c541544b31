"""InsertField$Key / InsertField$Value: add fields from the record's metadata or a static value."""

from __future__ import annotations

import datetime as _dt
from typing import Any, NamedTuple

from ..api.config import ConfigDef, Importance, Type
from ..api.data import (
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Schema,
)
from ..api.errors import ConfigError
from ..api.records import ConnectRecord
from ..data.logical_schemas import TIMESTAMP_LOGICAL_NAME
from ._util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    REPLACE_NULL_WITH_DEFAULT_DOC,
    KeyOrValue,
    SchemaCache,
    field_value,
    invalid,
    key_and_value,
    parse_config,
    require_map,
    require_sink_record,
    require_struct,
    struct_schema,
    unique_fields,
)

OVERVIEW_DOC = (
    "Insert field(s) using attributes from the record metadata or a configured static value."
    "<p/>Use the concrete transformation type designed for the record key "
    "(<code>org.apache.kafka.connect.transforms.InsertField$Key</code>) or value "
    "(<code>org.apache.kafka.connect.transforms.InsertField$Value</code>)."
)
_OPTIONALITY_DOC = (
    "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."
)
_PURPOSE = "field insertion"
_TIMESTAMP = Schema("int64", name=TIMESTAMP_LOGICAL_NAME, version=1)
_OPTIONAL_TIMESTAMP = Schema("int64", optional=True, name=TIMESTAMP_LOGICAL_NAME, version=1)


def config_def() -> ConfigDef:
    return (
        ConfigDef()
        .define(
            "topic.field",
            Type.STRING,
            None,
            importance=Importance.MEDIUM,
            documentation="Field name for Kafka topic. " + _OPTIONALITY_DOC,
        )
        .define(
            "partition.field",
            Type.STRING,
            None,
            importance=Importance.MEDIUM,
            documentation="Field name for Kafka partition. " + _OPTIONALITY_DOC,
        )
        .define(
            "offset.field",
            Type.STRING,
            None,
            importance=Importance.MEDIUM,
            documentation="Field name for Kafka offset - only applicable to sink connectors.<br/>" + _OPTIONALITY_DOC,
        )
        .define(
            "timestamp.field",
            Type.STRING,
            None,
            importance=Importance.MEDIUM,
            documentation="Field name for record timestamp. " + _OPTIONALITY_DOC,
        )
        .define(
            "static.field",
            Type.STRING,
            None,
            importance=Importance.MEDIUM,
            documentation="Field name for static data field. " + _OPTIONALITY_DOC,
        )
        .define(
            "static.value",
            Type.STRING,
            None,
            importance=Importance.MEDIUM,
            documentation="Static field value, if field name configured.",
        )
        .define(
            REPLACE_NULL_WITH_DEFAULT_CONFIG,
            Type.BOOLEAN,
            True,
            importance=Importance.MEDIUM,
            documentation=REPLACE_NULL_WITH_DEFAULT_DOC,
        )
    )


class _Spec(NamedTuple):
    name: str
    optional: bool

    @classmethod
    def parse(cls, spec: str | None) -> _Spec | None:
        if spec is None:
            return None
        if spec.endswith("?"):
            return cls(spec[:-1], True)
        if spec.endswith("!"):
            return cls(spec[:-1], False)
        return cls(spec, True)

    def __str__(self) -> str:  # Kafka prints the spec object in one message; the name is what matters
        return self.name


class InsertField(KeyOrValue):
    __doc__ = OVERVIEW_DOC

    def configure(self, configs: dict[str, Any]) -> None:
        values = parse_config(config_def(), configs)
        self.topic_field = _Spec.parse(values["topic.field"])
        self.partition_field = _Spec.parse(values["partition.field"])
        self.offset_field = _Spec.parse(values["offset.field"])
        self.timestamp_field = _Spec.parse(values["timestamp.field"])
        self.static_field = _Spec.parse(values["static.field"])
        self.static_value = values["static.value"]
        self.replace_null_with_default = values[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        if not any(
            (self.topic_field, self.partition_field, self.offset_field, self.timestamp_field, self.static_field)
        ):
            raise ConfigError("No field insertion configured")
        if self.static_field is not None and self.static_value is None:
            raise invalid("static.value", None, f"No value specified for static field: {self.static_field}")
        self._schemas = SchemaCache()

    def config(self) -> ConfigDef:
        return config_def()

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        if self.operating_value(record) is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            return self._apply_schemaless(record)
        return self._apply_with_schema(record, schema)

    def _insert(self, record: ConnectRecord, updated: dict, timestamp: Any) -> None:
        if self.topic_field is not None:
            updated[self.topic_field.name] = record.topic
        if self.partition_field is not None and record.kafka_partition is not None:
            updated[self.partition_field.name] = record.kafka_partition
        if self.offset_field is not None:
            updated[self.offset_field.name] = require_sink_record(record, _PURPOSE).kafka_offset
        if self.timestamp_field is not None and record.timestamp is not None:
            updated[self.timestamp_field.name] = timestamp
        if self.static_field is not None and self.static_value is not None:
            updated[self.static_field.name] = self.static_value

    def _apply_schemaless(self, record: ConnectRecord) -> ConnectRecord:
        updated = dict(require_map(self.operating_value(record), _PURPOSE))
        self._insert(record, updated, record.timestamp)
        return self.new_record(record, None, updated)

    def _apply_with_schema(self, record: ConnectRecord, schema: Schema) -> ConnectRecord:
        value = require_struct(self.operating_value(record), schema, _PURPOSE)
        updated_schema = self._schemas.get_or_build(schema, self._updated_schema)
        updated = {f.name: field_value(value, f, self.replace_null_with_default) for f in schema.fields}
        timestamp = None
        if record.timestamp is not None:
            timestamp = _dt.datetime.fromtimestamp(record.timestamp / 1000, _dt.UTC)
        self._insert(record, updated, timestamp)
        return self.new_record(record, updated_schema, updated)

    def _updated_schema(self, schema: Schema) -> Schema:
        fields = [(f.name, f.schema) for f in schema.fields]
        extra = (
            (self.topic_field, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA),
            (self.partition_field, OPTIONAL_INT32_SCHEMA, INT32_SCHEMA),
            (self.offset_field, OPTIONAL_INT64_SCHEMA, INT64_SCHEMA),
            (self.timestamp_field, _OPTIONAL_TIMESTAMP, _TIMESTAMP),
            (self.static_field, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA),
        )
        for spec, optional, required in extra:
            if spec is not None:
                fields.append((spec.name, optional if spec.optional else required))
        return struct_schema(unique_fields(fields), basics=schema)

    def close(self) -> None:
        self._schemas = SchemaCache()


InsertFieldKey, InsertFieldValue = key_and_value(InsertField, __name__)
