"""Connect's data model: schemas for record keys and values.

A value with a STRUCT schema is a plain `dict` of field name to value; arrays are lists and maps are
dicts. Schemas are optional everywhere: schemaless data is plain JSON-like Python values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PRIMITIVE_TYPES = ("int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string", "bytes")
TYPES = (*PRIMITIVE_TYPES, "array", "map", "struct")


@dataclass(frozen=True)
class Field:
    name: str
    index: int
    schema: Schema


@dataclass(frozen=True)
class Schema:
    """Kafka Connect's Schema: a type plus optional name, version, doc, parameters and children."""

    type: str
    optional: bool = False
    default: Any = None
    name: str | None = None
    version: int | None = None
    doc: str | None = None
    parameters: tuple[tuple[str, str], ...] | None = None
    fields: tuple[Field, ...] = ()
    key_schema: Schema | None = None
    value_schema: Schema | None = None

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"Unknown schema type {self.type!r}")

    def field(self, name: str) -> Field | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None


@dataclass
class SchemaBuilder:
    """Fluent construction of a Schema, mirroring Kafka's SchemaBuilder."""

    type: str
    _optional: bool = False
    _default: Any = None
    _name: str | None = None
    _version: int | None = None
    _doc: str | None = None
    _parameters: dict[str, str] = field(default_factory=dict)
    _fields: list[Field] = field(default_factory=list)
    _key: Schema | None = None
    _value: Schema | None = None

    @classmethod
    def struct(cls) -> SchemaBuilder:
        return cls("struct")

    @classmethod
    def array(cls, value_schema: Schema) -> SchemaBuilder:
        return cls("array", _value=value_schema)

    @classmethod
    def map(cls, key_schema: Schema, value_schema: Schema) -> SchemaBuilder:
        return cls("map", _key=key_schema, _value=value_schema)

    def optional(self) -> SchemaBuilder:
        self._optional = True
        return self

    def name(self, name: str) -> SchemaBuilder:
        self._name = name
        return self

    def version(self, version: int) -> SchemaBuilder:
        self._version = version
        return self

    def doc(self, doc: str) -> SchemaBuilder:
        self._doc = doc
        return self

    def default_value(self, value: Any) -> SchemaBuilder:
        self._default = value
        return self

    def parameter(self, key: str, value: str) -> SchemaBuilder:
        self._parameters[key] = value
        return self

    def field(self, name: str, schema: Schema) -> SchemaBuilder:
        self._fields.append(Field(name, len(self._fields), schema))
        return self

    def build(self) -> Schema:
        return Schema(
            self.type,
            self._optional,
            self._default,
            self._name,
            self._version,
            self._doc,
            tuple(self._parameters.items()) if self._parameters else None,
            tuple(self._fields),
            self._key,
            self._value,
        )


def _primitive(type_: str, optional: bool = False) -> Schema:
    return Schema(type_, optional=optional)


INT8_SCHEMA = _primitive("int8")
INT16_SCHEMA = _primitive("int16")
INT32_SCHEMA = _primitive("int32")
INT64_SCHEMA = _primitive("int64")
FLOAT32_SCHEMA = _primitive("float32")
FLOAT64_SCHEMA = _primitive("float64")
BOOLEAN_SCHEMA = _primitive("boolean")
STRING_SCHEMA = _primitive("string")
BYTES_SCHEMA = _primitive("bytes")
OPTIONAL_INT32_SCHEMA = _primitive("int32", True)
OPTIONAL_INT64_SCHEMA = _primitive("int64", True)
OPTIONAL_FLOAT64_SCHEMA = _primitive("float64", True)
OPTIONAL_BOOLEAN_SCHEMA = _primitive("boolean", True)
OPTIONAL_STRING_SCHEMA = _primitive("string", True)
OPTIONAL_BYTES_SCHEMA = _primitive("bytes", True)
