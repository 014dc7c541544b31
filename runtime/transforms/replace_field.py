"""ReplaceField$Key / ReplaceField$Value: filter (include/exclude) and rename fields."""

from __future__ import annotations

import logging
from typing import Any

from ..api.config import ConfigDef, Importance, Type
from ..api.data import Field, Schema
from ..api.records import ConnectRecord
from ._util import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    REPLACE_NULL_WITH_DEFAULT_DOC,
    KeyOrValue,
    Lambda,
    SchemaCache,
    invalid,
    key_and_value,
    parse_config,
    require_map,
    require_struct,
    struct_schema,
    unique_fields,
)

OVERVIEW_DOC = (
    "Filter or rename fields.<p/>Use the concrete transformation type designed for the record key "
    "(<code>org.apache.kafka.connect.transforms.ReplaceField$Key</code>) or value "
    "(<code>org.apache.kafka.connect.transforms.ReplaceField$Value</code>)."
)
_PURPOSE = "field replacement"
log = logging.getLogger(__name__)


def parse_rename_mappings(mappings: list[str]) -> dict[str, str]:
    renames: dict[str, str] = {}
    for mapping in mappings:
        parts = [p for p in mapping.split(":")]
        while parts and parts[-1] == "":  # Java's String.split drops trailing empty strings
            parts.pop()
        if len(parts) != 2:
            raise invalid("renames", mappings, f"Invalid rename mapping: {mapping}")
        renames[parts[0]] = parts[1]
    return renames


def config_def() -> ConfigDef:
    return (
        ConfigDef()
        .define(
            "exclude",
            Type.LIST,
            [],
            importance=Importance.MEDIUM,
            documentation="Fields to exclude. This takes precedence over the fields to include.",
        )
        .define(
            "blacklist", Type.LIST, None, importance=Importance.LOW, documentation="Deprecated. Use exclude instead."
        )
        .define(
            "include",
            Type.LIST,
            [],
            importance=Importance.MEDIUM,
            documentation="Fields to include. If specified, only these fields will be used.",
        )
        .define(
            "whitelist", Type.LIST, None, importance=Importance.LOW, documentation="Deprecated. Use include instead."
        )
        .define(
            "renames",
            Type.LIST,
            [],
            Lambda(
                lambda name, value: parse_rename_mappings(value or []),
                "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>",
            ),
            importance=Importance.MEDIUM,
            documentation="Field rename mappings.",
        )
        .define(
            REPLACE_NULL_WITH_DEFAULT_CONFIG,
            Type.BOOLEAN,
            True,
            importance=Importance.MEDIUM,
            documentation=REPLACE_NULL_WITH_DEFAULT_DOC,
        )
    )


_DEPRECATED = {"include": "whitelist", "exclude": "blacklist"}


def translate_deprecated(configs: dict[str, Any]) -> dict[str, Any]:
    """Kafka's ConfigUtils.translateDeprecatedConfigs: an old name's value serves the new name unless that is set."""
    out = dict(configs)
    for new, old in _DEPRECATED.items():
        if old not in out:
            continue
        value = out.pop(old)
        if new in out:
            log.error(
                "%s was configured, as well as the deprecated alias(es) %s.  Using the value of %s", new, old, new
            )
        else:
            log.warning(
                "Configuration key %s is deprecated and may be removed in the future.  Please update your "
                "configuration to use %s instead.",
                old,
                new,
            )
            out[new] = value
    return out


class ReplaceField(KeyOrValue):
    __doc__ = OVERVIEW_DOC

    def configure(self, configs: dict[str, Any]) -> None:
        values = parse_config(config_def(), translate_deprecated(configs))
        self.exclude = set(values["exclude"])
        self.include = set(values["include"])
        self.renames = parse_rename_mappings(values["renames"])
        self.reverse_renames = {new: old for old, new in self.renames.items()}
        self.replace_null_with_default = values[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._schemas = SchemaCache()

    def config(self) -> ConfigDef:
        return config_def()

    def _keep(self, name: str) -> bool:
        return name not in self.exclude and (not self.include or name in self.include)

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            value = require_map(value, _PURPOSE)
            updated = {self.renames.get(k, k): v for k, v in value.items() if self._keep(k)}
            return self.new_record(record, None, updated)
        value = require_struct(value, schema, _PURPOSE)
        updated_schema, sources = self._schemas.get_or_build(schema, self._updated_schema)
        updated = {}
        for name, source in sources:
            v = value.get(source.name)
            if v is None and self.replace_null_with_default:
                v = source.schema.default
            updated[name] = v
        return self.new_record(record, updated_schema, updated)

    def _updated_schema(self, schema: Schema) -> tuple[Schema, list[tuple[str, Field]]]:
        """The updated schema, and each of its fields with the field of `schema` its value comes from."""
        updated = struct_schema(
            unique_fields((self.renames.get(f.name, f.name), f.schema) for f in schema.fields if self._keep(f.name)),
            basics=schema,
        )
        by_name = {f.name: f for f in schema.fields}
        return updated, [(f.name, by_name[self.reverse_renames.get(f.name, f.name)]) for f in updated.fields]

    def close(self) -> None:
        self._schemas = SchemaCache()


ReplaceFieldKey, ReplaceFieldValue = key_and_value(ReplaceField, __name__)
