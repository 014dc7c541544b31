"""Connect schemas and values <-> JSON Schema, with the mapping of Confluent's JsonSchemaConverter.

Schemas (Connect -> JSON Schema): integers are `"type": "integer"` and floats `"type": "number"`, each
with `connect.type` (int8 ... float64); bytes are base64 strings with `connect.type: bytes`; a Decimal is
a number with `connect.type: bytes`; a map with string keys is an object with `additionalProperties`
and `connect.type: map`, other maps arrays of `{key, value}` objects; a struct is an object whose
properties carry `connect.index`. The schema's name is its `title`, its doc its `description`, plus
`connect.version`, `connect.parameters` and `default`. Optional schemas are `oneOf` null and the type.
JSON Schema -> Connect reverses this, reading `"type": [..., "null"]`, local `$ref`s, `enum`s and
`oneOf`/`anyOf` (`io.confluent.connect.json.OneOf` structs) as written by other producers too.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import decimal
from collections.abc import Callable
from typing import Any

from ...api.data import Field, Schema
from ...api.errors import DataError
from ..logical_types import (
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
    date_to_days,
    decimal_from_bytes,
    decimal_scale,
    decimal_to_bytes,
    time_to_millis,
    timestamp_to_millis,
)

NAMESPACE = "io.confluent.connect.json"
CONNECT_TYPE_PROP = "connect.type"
CONNECT_VERSION_PROP = "connect.version"
CONNECT_PARAMETERS_PROP = "connect.parameters"
CONNECT_INDEX_PROP = "connect.index"
JSON_TYPE_ENUM = NAMESPACE + ".Enum"
JSON_TYPE_ONE_OF = NAMESPACE + ".OneOf"
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)

ValueFn = Callable[[Any], Any]


# ---- Connect -> JSON Schema -----------------------------------------------------------------------


def connect_to_json_schema(schema: Schema, numeric_decimals: bool = True) -> dict[str, Any]:
    return _from_connect(schema, None, False, numeric_decimals)


def _from_connect(schema: Schema, index: int | None, ignore_optional: bool, numeric: bool) -> dict[str, Any]:
    t = schema.type
    node: dict[str, Any]
    combined = False
    if t in ("int8", "int16", "int32", "int64"):
        node = {"type": "integer", CONNECT_TYPE_PROP: t}
    elif t in ("float32", "float64"):
        node = {"type": "number", CONNECT_TYPE_PROP: t}
    elif t == "boolean":
        node = {"type": "boolean"}
    elif t == "string":
        params = dict(schema.parameters or ())
        if JSON_TYPE_ENUM in params:
            node = {"type": "string", "enum": [v for k, v in params.items() if k.startswith(JSON_TYPE_ENUM + ".")]}
        else:
            node = {"type": "string"}
    elif t == "bytes":
        is_decimal = schema.name == DECIMAL_LOGICAL_NAME
        node = {"type": "number" if is_decimal and numeric else "string", CONNECT_TYPE_PROP: "bytes"}
    elif t == "array":
        node = {"type": "array", "items": _from_connect(_require(schema.value_schema), None, False, numeric)}
    elif t == "map":
        key, value = _require(schema.key_schema), _require(schema.value_schema)
        if key.type == "string" and not key.optional:
            node = {
                "type": "object",
                "additionalProperties": _from_connect(value, None, False, numeric),
                CONNECT_TYPE_PROP: "map",
            }
        else:
            node = {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "key": _from_connect(key, 0, False, numeric),
                        "value": _from_connect(value, 1, False, numeric),
                    },
                },
                CONNECT_TYPE_PROP: "map",
            }
    elif t == "struct" and schema.name == JSON_TYPE_ONE_OF:
        members = [{"type": "null"}] if schema.optional else []
        members += [_from_connect(_non_optional(f.schema), f.index, True, numeric) for f in schema.fields]
        node, combined = {"oneOf": members}, True
    elif t == "struct" and schema.optional and not ignore_optional:
        node, combined = {"oneOf": [{"type": "null"}, _from_connect(_non_optional(schema), None, False, numeric)]}, True
    elif t == "struct":
        node = {
            "type": "object",
            "properties": {f.name: _from_connect(f.schema, f.index, False, numeric) for f in schema.fields},
        }
    else:
        raise DataError(f"Unsupported type {t}")
    if not combined:
        if schema.name is not None:
            node["title"] = schema.name
        if schema.version is not None:
            node[CONNECT_VERSION_PROP] = schema.version
        if schema.doc is not None:
            node["description"] = schema.doc
        params = {k: v for k, v in (schema.parameters or ()) if not k.startswith(NAMESPACE)}
        if params:
            node[CONNECT_PARAMETERS_PROP] = params
        if schema.default is not None:
            node["default"] = to_json_value(schema, numeric)(schema.default)
        if schema.optional and not ignore_optional:
            node = {"oneOf": [{"type": "null"}, node]}
    if index is not None:
        node[CONNECT_INDEX_PROP] = index
    return node


# ---- JSON Schema -> Connect -----------------------------------------------------------------------


class _ToConnect:
    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.resolving: set[str] = set()

    def convert(self, node: Any, version: int | None = None, optional: bool = False) -> Schema:
        if node is True or node == {}:
            raise DataError("A JSON schema that accepts anything has no Connect schema")
        if not isinstance(node, dict):
            raise DataError(f"Invalid JSON schema: {node!r}")
        if "$ref" in node:
            ref = node["$ref"]
            if ref in self.resolving:
                raise DataError(f"Recursive JSON schema at {ref} cannot be a Connect schema")
            self.resolving.add(ref)
            try:
                return self.convert(self._resolve(ref), version, optional)
            finally:
                self.resolving.discard(ref)
        for combiner in ("oneOf", "anyOf"):
            if combiner in node:
                return self._one_of(node, node[combiner], version, optional)
        if "allOf" in node:
            members = [m for m in node["allOf"] if isinstance(m, dict) and ("type" in m or "$ref" in m)]
            if not members:
                raise DataError(f"Unsupported allOf schema: {node}")
            return self.convert(members[0], version, optional)
        kind = node.get("type")
        if isinstance(kind, list):
            kinds = [k for k in kind if k != "null"]
            if len(kinds) != 1:
                raise DataError(f"Unsupported JSON schema type list {kind}")
            return self.convert({**node, "type": kinds[0]}, version, optional or "null" in kind)
        if kind is None:
            if "properties" in node:
                kind = "object"
            elif "enum" in node:
                kind = "string"
            else:
                raise DataError(f"A JSON schema without a type has no Connect schema: {node}")
        connect_type = node.get(CONNECT_TYPE_PROP)
        params: dict[str, str] = {}
        fields: tuple[Field, ...] = ()
        key_schema = value_schema = None
        if kind == "boolean":
            t = "boolean"
        elif kind == "integer":
            t = connect_type if connect_type in ("int8", "int16", "int32", "int64") else "int64"
        elif kind == "number":
            if connect_type == "bytes":
                t = "bytes"
            else:
                t = (
                    connect_type
                    if connect_type in ("float32", "float64", "int8", "int16", "int32", "int64")
                    else "float64"
                )
        elif kind == "string":
            if "enum" in node:
                t = "string"
                params[JSON_TYPE_ENUM] = ""
                for symbol in node["enum"]:
                    params[f"{JSON_TYPE_ENUM}.{symbol}"] = str(symbol)
            else:
                t = "bytes" if connect_type == "bytes" else "string"
        elif kind == "array":
            items = node.get("items")
            if items is None:
                raise DataError("Array schema did not specify the items type")
            items = self._resolve(items["$ref"]) if isinstance(items, dict) and "$ref" in items else items
            if connect_type == "map" and isinstance(items, dict) and "properties" in items:
                t = "map"
                key_schema = self.convert(items["properties"]["key"])
                value_schema = self.convert(items["properties"]["value"])
            else:
                t = "array"
                value_schema = self.convert(items)
        elif kind == "object":
            if connect_type == "map" or (
                "properties" not in node and isinstance(node.get("additionalProperties"), dict)
            ):
                t = "map"
                key_schema = Schema("string")
                value_schema = self.convert(node.get("additionalProperties"))
            else:
                t = "struct"
                properties = list((node.get("properties") or {}).items())
                order = sorted(
                    range(len(properties)),
                    key=lambda i: (
                        properties[i][1].get(CONNECT_INDEX_PROP, i) if isinstance(properties[i][1], dict) else i,
                        i,
                    ),
                )
                fields = tuple(Field(properties[i][0], n, self.convert(properties[i][1])) for n, i in enumerate(order))
        elif kind == "null":
            raise DataError("Standalone null schemas are not supported by this converter")
        else:
            raise DataError(f"Unsupported JSON schema type {kind}")
        name = node.get("title")
        schema_version = node.get(CONNECT_VERSION_PROP, version)
        raw_params = node.get(CONNECT_PARAMETERS_PROP)
        if isinstance(raw_params, dict):
            params.update({str(k): str(v) for k, v in raw_params.items()})
        schema = Schema(
            t,
            optional=optional,
            name=name,
            version=schema_version,
            doc=node.get("description"),
            parameters=tuple(params.items()) or None,
            fields=fields,
            key_schema=key_schema,
            value_schema=value_schema,
        )
        if node.get("default") is not None:
            schema = _replace(schema, default=to_connect_value(schema)(node["default"]))
        return schema

    def _one_of(self, node: dict[str, Any], members: list[Any], version: int | None, optional: bool) -> Schema:
        non_null = [m for m in members if not (isinstance(m, dict) and m.get("type") == "null")]
        if len(members) == 2 and len(non_null) == 1:
            return self.convert(non_null[0], version, optional=True)
        fields = tuple(
            Field(f"{JSON_TYPE_ONE_OF}.field.{i}", i, self.convert(m, optional=True)) for i, m in enumerate(non_null)
        )
        return Schema("struct", optional=optional or len(non_null) < len(members), name=JSON_TYPE_ONE_OF, fields=fields)

    def _resolve(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise DataError(f"Only local $ref are supported, not {ref}")
        node: Any = self.document
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                raise DataError(f"Unresolvable $ref {ref}")
            node = node[part]
        return node


def json_schema_to_connect(document: dict[str, Any], version: int | None = None) -> Schema:
    return _ToConnect(document).convert(document, version)


# ---- values ----------------------------------------------------------------------------------------


def to_json_value(schema: Schema, numeric_decimals: bool = True) -> ValueFn:
    """Connect value -> JSON-ready Python value (Decimal kept for exact numeric output)."""
    name, t = schema.name, schema.type
    base: ValueFn
    if name == DECIMAL_LOGICAL_NAME:
        scale = decimal_scale(schema)

        def base(v: Any) -> Any:
            raw = decimal_to_bytes(v, scale)  # checks the scale as Connect's Decimal does
            return v if numeric_decimals else base64.b64encode(raw).decode()
    elif name == DATE_LOGICAL_NAME:
        base = date_to_days
    elif name == TIME_LOGICAL_NAME:
        base = time_to_millis
    elif name == TIMESTAMP_LOGICAL_NAME:
        base = timestamp_to_millis
    elif t == "bytes":
        base = lambda v: base64.b64encode(bytes(v)).decode()  # noqa: E731
    elif t in ("int8", "int16", "int32", "int64"):

        def base(v: Any) -> Any:
            if not isinstance(v, int) or isinstance(v, bool):
                raise DataError(f"Invalid type for {t.upper()}: {type(v)}")
            return v
    elif t in ("float32", "float64"):

        def base(v: Any) -> Any:
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                raise DataError(f"Invalid type for {t.upper()}: {type(v)}")
            return v
    elif t == "array":
        item = to_json_value(_require(schema.value_schema), numeric_decimals)
        base = lambda v: [item(x) for x in v]  # noqa: E731
    elif t == "map":
        key, val = _require(schema.key_schema), _require(schema.value_schema)
        kf, vf = to_json_value(key, numeric_decimals), to_json_value(val, numeric_decimals)
        if key.type == "string" and not key.optional:
            base = lambda v: {k: vf(x) for k, x in v.items()}  # noqa: E731
        else:
            base = lambda v: [{"key": kf(k), "value": vf(x)} for k, x in v.items()]  # noqa: E731
    elif t == "struct" and name == JSON_TYPE_ONE_OF:
        members = [(f.name, to_json_value(f.schema, numeric_decimals)) for f in schema.fields]

        def base(v: Any) -> Any:
            for field_name, fn in members:
                if v.get(field_name) is not None:
                    return fn(v[field_name])
            return None
    elif t == "struct":
        members = [(f.name, to_json_value(f.schema, numeric_decimals)) for f in schema.fields]

        def base(v: Any) -> Any:
            if not isinstance(v, dict):
                raise DataError(f"Invalid type for STRUCT: {type(v)}")
            return {field_name: fn(v.get(field_name)) for field_name, fn in members}
    else:
        base = _identity
    optional, default = schema.optional, schema.default
    default_json = base(default) if default is not None else None

    def convert(v: Any) -> Any:
        if v is None:
            if default_json is not None:
                return default_json
            if optional:
                return None
            raise DataError("Conversion error: null value for field that is required and has no default value")
        return base(v)

    return convert


def to_connect_value(schema: Schema) -> ValueFn:
    """Parsed JSON (numbers with a fraction as Decimal) -> the Connect value of `schema`."""
    name, t = schema.name, schema.type
    base: ValueFn
    if name == DECIMAL_LOGICAL_NAME:
        scale = decimal_scale(schema)

        def base(v: Any) -> Any:
            if isinstance(v, (int, decimal.Decimal, float)) and not isinstance(v, bool):
                return decimal.Decimal(v) if not isinstance(v, float) else decimal.Decimal(repr(v))
            if isinstance(v, str):
                try:
                    return decimal_from_bytes(base64.b64decode(v, validate=True), scale)
                except (binascii.Error, ValueError):
                    raise DataError("Invalid bytes for Decimal field") from None
            raise DataError("Invalid type for Decimal, underlying representation should be numeric or bytes")
    elif name == DATE_LOGICAL_NAME:
        base = lambda v: _dt.date(1970, 1, 1) + _dt.timedelta(days=_int(v, "Date"))  # noqa: E731
    elif name == TIME_LOGICAL_NAME:
        base = lambda v: (_dt.datetime(1970, 1, 1) + _dt.timedelta(milliseconds=_int(v, "Time"))).time()  # noqa: E731
    elif name == TIMESTAMP_LOGICAL_NAME:
        base = lambda v: _EPOCH + _dt.timedelta(milliseconds=_int(v, "Timestamp"))  # noqa: E731
    elif t in ("int8", "int16", "int32", "int64"):
        base = lambda v: _int(v, t.upper())  # noqa: E731
    elif t in ("float32", "float64"):

        def base(v: Any) -> Any:
            if isinstance(v, bool) or not isinstance(v, (int, float, decimal.Decimal)):
                raise DataError(f"Invalid value for {t.upper()}: {v!r}")
            return float(v)
    elif t == "boolean":

        def base(v: Any) -> Any:
            if not isinstance(v, bool):
                raise DataError(f"Invalid value for BOOLEAN: {v!r}")
            return v
    elif t == "string":

        def base(v: Any) -> Any:
            if not isinstance(v, str):
                raise DataError(f"Invalid value for STRING: {v!r}")
            return v
    elif t == "bytes":

        def base(v: Any) -> Any:
            try:
                return base64.b64decode(v, validate=True)
            except (binascii.Error, ValueError, TypeError):
                raise DataError("Invalid bytes field") from None
    elif t == "array":
        item = to_connect_value(_require(schema.value_schema))
        base = lambda v: [item(x) for x in _typed(v, list, "ARRAY")]  # noqa: E731
    elif t == "map":
        key, val = _require(schema.key_schema), _require(schema.value_schema)
        kf, vf = to_connect_value(key), to_connect_value(val)
        if key.type == "string" and not key.optional:
            base = lambda v: {k: vf(x) for k, x in _typed(v, dict, "MAP").items()}  # noqa: E731
        else:
            base = lambda v: {kf(e.get("key")): vf(e.get("value")) for e in _typed(v, list, "MAP")}  # noqa: E731
    elif t == "struct" and name == JSON_TYPE_ONE_OF:
        one_of = [(f.name, f.schema, to_connect_value(f.schema)) for f in schema.fields]

        def base(v: Any) -> Any:
            for field_name, member, fn in one_of:
                if _fits(member, v):
                    return {f: (fn(v) if f == field_name else None) for f, _, _ in one_of}
            raise DataError(f"Did not find matching oneof field for data: {v}")
    elif t == "struct":
        fields = [(f.name, to_connect_value(f.schema)) for f in schema.fields]

        def base(v: Any) -> Any:
            v = _typed(v, dict, "STRUCT")
            return {field_name: fn(v.get(field_name)) for field_name, fn in fields}
    else:
        base = _identity
    optional, default = schema.optional, schema.default

    def convert(v: Any) -> Any:
        if v is None:
            if default is not None:
                return default
            if optional:
                return None
            raise DataError(f"Invalid null value for required {t.upper()} field")
        return base(v)

    return convert


def needs_exact_numbers(schema: Schema) -> bool:
    """Whether values of `schema` hold decimals, so JSON must be parsed without going through float."""
    if schema.name == DECIMAL_LOGICAL_NAME:
        return True
    children = [f.schema for f in schema.fields] + [s for s in (schema.key_schema, schema.value_schema) if s]
    return any(needs_exact_numbers(c) for c in children)


def _fits(schema: Schema, v: Any) -> bool:
    t = schema.type
    if t in ("int8", "int16", "int32", "int64"):
        return isinstance(v, int) and not isinstance(v, bool)
    if t in ("float32", "float64"):
        return isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool)
    if t == "boolean":
        return isinstance(v, bool)
    if t in ("string", "bytes"):
        return isinstance(v, str) or (t == "bytes" and isinstance(v, (int, float, decimal.Decimal)))
    if t == "array":
        return isinstance(v, list)
    if t == "map":
        return isinstance(v, (dict, list))
    return isinstance(v, dict) and set(v) <= {f.name for f in schema.fields}


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, decimal.Decimal) and v == v.to_integral_value():
            return int(v)
        raise DataError(f"Invalid value for {what}: {v!r} is not an integer")
    return v


def _typed(v: Any, kind: type, what: str) -> Any:
    if not isinstance(v, kind):
        raise DataError(f"Invalid value for {what}: {type(v).__name__}")
    return v


def _identity(v: Any) -> Any:
    return v


def _require(schema: Schema | None) -> Schema:
    if schema is None:
        raise DataError("Invalid schema: a map or array schema without its key or value schema")
    return schema


def _non_optional(schema: Schema) -> Schema:
    return _replace(schema, optional=False)


def _replace(schema: Schema, **changes: Any) -> Schema:
    values = {
        "type": schema.type,
        "optional": schema.optional,
        "default": schema.default,
        "name": schema.name,
        "version": schema.version,
        "doc": schema.doc,
        "parameters": schema.parameters,
        "fields": schema.fields,
        "key_schema": schema.key_schema,
        "value_schema": schema.value_schema,
    }
    values.update(changes)
    return Schema(**values)
