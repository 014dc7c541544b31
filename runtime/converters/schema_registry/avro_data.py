"""Connect schemas and values <-> Avro, with the mapping of Confluent's AvroConverter (`AvroData`).

Schemas (Connect -> Avro):
- int8/int16 are Avro ints annotated `"connect.type": "int8"|"int16"`; int32 int, int64 long, float32 float,
  float64 double, boolean, string, bytes as themselves.
- Decimal is `bytes` with `logicalType: decimal`, `scale` and `precision` (`connect.decimal.precision`,
  default 64); Date is `int`/`date`, Time `int`/`time-millis`, Timestamp `long`/`timestamp-millis`.
- A map with non-optional string keys is an Avro map; any other map is an array of
  `io.confluent.connect.avro.MapEntry` records with `key` and `value` fields.
- A struct is a record named after the schema (unnamed ones are `io.confluent.connect.avro.ConnectDefault`,
  then `ConnectDefault2`, ... as Avro forbids redefining a name).
- An optional schema is a union with null: `["null", T]`, or `[T, "null"]` when it has a default, since an
  Avro default must match the first branch. Optional fields without a default default to null.
- With `connect.meta.data` (default on), `connect.doc`, `connect.version`, `connect.parameters`,
  `connect.default` and `connect.name` keep what Avro itself cannot say.
Avro -> Connect reverses this; enums become strings with `io.confluent.connect.avro.Enum*` parameters,
other unions become `io.confluent.connect.avro.Union` structs, and the registry's version is the schema's
version when `connect.version` is absent.

Values: fastavro already writes and reads Connect's Python values (dicts for structs, `Decimal`, `date`,
`time`, aware `datetime`), so a schema only gets a value converter where the two differ: exact-scale
decimals, naive timestamps (UTC here, local time in fastavro), non-string-keyed maps and general unions.
"""

from __future__ import annotations

import copy
import datetime as _dt
import re
from collections.abc import Callable, Sequence
from typing import Any

from ...api.data import Field, Schema
from ...api.errors import DataError
from ..logical_types import (
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    DECIMAL_SCALE_PARAMETER,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
    date_to_days,
    decimal_from_bytes,
    decimal_scale,
    decimal_to_bytes,
    time_to_millis,
    timestamp_to_millis,
)

NAMESPACE = "io.confluent.connect.avro"
DEFAULT_SCHEMA_NAME = "ConnectDefault"
MAP_ENTRY_TYPE_NAME = "MapEntry"
CONNECT_NAME_PROP = "connect.name"
CONNECT_DOC_PROP = "connect.doc"
CONNECT_VERSION_PROP = "connect.version"
CONNECT_DEFAULT_VALUE_PROP = "connect.default"
CONNECT_PARAMETERS_PROP = "connect.parameters"
CONNECT_INTERNAL_TYPE_NAME = "connect.internal.type"
CONNECT_TYPE_PROP = "connect.type"
AVRO_RECORD_DOC_PROP = NAMESPACE + ".record.doc"
AVRO_FIELD_DOC_PREFIX_PROP = NAMESPACE + ".field.doc."
AVRO_FIELD_DEFAULT_FLAG_PROP = NAMESPACE + ".field.default"
AVRO_ENUM_DOC_PREFIX_PROP = NAMESPACE + ".enum.doc."
AVRO_ENUM_DEFAULT_PREFIX_PROP = NAMESPACE + ".enum.default."
AVRO_TYPE_UNION = NAMESPACE + ".Union"
AVRO_TYPE_ENUM = NAMESPACE + ".Enum"
CONNECT_AVRO_DECIMAL_PRECISION_PROP = "connect.decimal.precision"
DEFAULT_DECIMAL_PRECISION = 64

_PRIMITIVE_AVRO = {
    "int32": "int",
    "int64": "long",
    "float32": "float",
    "float64": "double",
    "boolean": "boolean",
    "string": "string",
    "bytes": "bytes",
    "int8": "int",
    "int16": "int",
}
_AVRO_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
_DEFAULT_NAME = re.compile(re.escape(NAMESPACE) + r"\." + DEFAULT_SCHEMA_NAME + r"\d*")


# ---- Connect -> Avro schema ------------------------------------------------------------------------


class _FromConnect:
    def __init__(self, meta: bool) -> None:
        self.meta = meta
        self.defined: dict[Schema, str] = {}  # non-optional named schemas already written -> full name
        self.default_names = 0

    def convert(self, schema: Schema, ignore_optional: bool = False) -> Any:
        if not schema.optional and schema.name and schema.type == "struct" and schema in self.defined:
            return self.defined[schema]
        namespace, name = _split(schema.name) if schema.name else (NAMESPACE, None)
        connect_type = None
        t = schema.type
        base: Any
        if t in ("int8", "int16"):
            connect_type = t
            base = {"type": "int"}
        elif t in _PRIMITIVE_AVRO:
            base = {"type": _PRIMITIVE_AVRO[t]}
            if t == "bytes" and schema.name == DECIMAL_LOGICAL_NAME:
                params = dict(schema.parameters or ())
                base["scale"] = int(params[DECIMAL_SCALE_PARAMETER])
                base["precision"] = int(params.get(CONNECT_AVRO_DECIMAL_PRECISION_PROP, DEFAULT_DECIMAL_PRECISION))
        elif t == "array":
            base = {"type": "array", "items": self.convert(_require(schema.value_schema))}
        elif t == "map":
            key, value = _require(schema.key_schema), _require(schema.value_schema)
            if key.type == "string" and not key.optional:
                base = {"type": "map", "values": self.convert(value)}
            else:
                entry: dict[str, Any] = {
                    "type": "record",
                    "name": name or MAP_ENTRY_TYPE_NAME,
                    "namespace": namespace,
                    "fields": [self.field("key", key, None), self.field("value", value, None)],
                }
                if name:
                    entry[CONNECT_INTERNAL_TYPE_NAME] = MAP_ENTRY_TYPE_NAME
                base = {"type": "array", "items": entry}
        elif t == "struct":
            if schema.name == AVRO_TYPE_UNION:
                members = ["null"] if schema.optional else []
                members += [self.convert(_non_optional(f.schema), ignore_optional=True) for f in schema.fields]
                return members
            if schema.optional and not ignore_optional:
                return ["null", self.convert(_non_optional(schema))]
            if name is None:
                self.default_names += 1
                name = DEFAULT_SCHEMA_NAME + ("" if self.default_names == 1 else str(self.default_names))
            params = dict(schema.parameters or ())
            base = {"type": "record", "name": name}
            if namespace:
                base["namespace"] = namespace
            if params.get(AVRO_RECORD_DOC_PROP) is not None:
                base["doc"] = params[AVRO_RECORD_DOC_PROP]
            base["fields"] = [
                self.field(f.name, f.schema, params.get(AVRO_FIELD_DOC_PREFIX_PROP + f.name)) for f in schema.fields
            ]
        else:
            raise DataError(f"Unknown schema type: {t}")
        self._annotate(schema, base, connect_type)
        if len(base) == 1 and base["type"] in _AVRO_PRIMITIVES:
            base = base["type"]  # written plainly, as Avro prints a primitive without properties
        final: Any = base
        if schema.optional and not ignore_optional:
            final = [base, "null"] if schema.default is not None else ["null", base]
        if t == "struct" and schema.name and not schema.optional:
            self.defined[schema] = schema.name  # its namespace and name, joined again
        return final

    def field(self, name: str, schema: Schema, doc: str | None) -> dict[str, Any]:
        node: dict[str, Any] = {"name": name, "type": self.convert(schema)}
        if doc is not None:
            node["doc"] = doc
        if schema.default is not None:
            node["default"] = default_to_avro(schema, schema.default)
        elif schema.optional:
            node["default"] = None
        return node

    def _annotate(self, schema: Schema, base: dict[str, Any], connect_type: str | None) -> None:
        params = dict(schema.parameters or ())
        if self.meta:
            if schema.doc is not None:
                base[CONNECT_DOC_PROP] = schema.doc
            if schema.version is not None:
                base[CONNECT_VERSION_PROP] = schema.version
            if params:
                base[CONNECT_PARAMETERS_PROP] = params
            if schema.default is not None and AVRO_FIELD_DEFAULT_FLAG_PROP not in params:
                base[CONNECT_DEFAULT_VALUE_PROP] = default_to_avro(schema, schema.default)
            if schema.name is not None:
                base[CONNECT_NAME_PROP] = schema.name
            if connect_type is not None:
                base[CONNECT_TYPE_PROP] = connect_type
        logical = {
            DECIMAL_LOGICAL_NAME: "decimal",
            DATE_LOGICAL_NAME: "date",
            TIME_LOGICAL_NAME: "time-millis",
            TIMESTAMP_LOGICAL_NAME: "timestamp-millis",
        }.get(schema.name or "")
        if logical is not None:
            base["logicalType"] = logical
        for key, value in params.items():
            if key.startswith("avro"):
                base[key] = value


def connect_to_avro_schema(schema: Schema, connect_meta_data: bool = True) -> Any:
    """The Avro schema (as parsed JSON) Confluent's AvroConverter writes for a Connect schema."""
    return _FromConnect(connect_meta_data).convert(schema)


def default_to_avro(schema: Schema, value: Any) -> Any:
    """A Connect default value in Avro's JSON encoding (bytes as ISO-8859-1 strings)."""
    if value is None:
        return None
    name = schema.name
    if name == DECIMAL_LOGICAL_NAME:
        return decimal_to_bytes(value, decimal_scale(schema)).decode("latin-1")
    if name == DATE_LOGICAL_NAME:
        return date_to_days(value)
    if name == TIME_LOGICAL_NAME:
        return time_to_millis(value)
    if name == TIMESTAMP_LOGICAL_NAME:
        return timestamp_to_millis(value)
    t = schema.type
    if t == "bytes":
        return bytes(value).decode("latin-1")
    if t == "array":
        return [default_to_avro(_require(schema.value_schema), v) for v in value]
    if t == "map":
        key, val = _require(schema.key_schema), _require(schema.value_schema)
        if key.type == "string" and not key.optional:
            return {k: default_to_avro(val, v) for k, v in value.items()}
        return [{"key": default_to_avro(key, k), "value": default_to_avro(val, v)} for k, v in value.items()]
    if t == "struct":
        return {f.name: default_to_avro(f.schema, value.get(f.name)) for f in schema.fields}
    return value


# ---- Avro -> Connect schema ------------------------------------------------------------------------


class _ToConnect:
    def __init__(self, meta: bool) -> None:
        self.meta = meta
        self.named: dict[str, Any] = {}  # full name -> definition (dict)
        self.in_progress: set[str] = set()

    def convert(
        self,
        avro: Any,
        namespace: str | None,
        optional: bool = False,
        field_default: Any = None,
        has_field_default: bool = False,
        version: int | None = None,
    ) -> Schema:
        if isinstance(avro, str):
            if avro in _AVRO_PRIMITIVES:
                avro = {"type": avro}
            else:
                full = avro if "." in avro or namespace is None else f"{namespace}.{avro}"
                definition = self.named.get(full) or self.named.get(avro)
                if definition is None:
                    raise DataError(f"Unknown Avro type name {avro!r}")
                if (definition.get("_full")) in self.in_progress:
                    raise DataError(f"Recursive Avro schema {definition['_full']} cannot be a Connect schema")
                avro = definition
        if isinstance(avro, list):
            return self._union(avro, namespace, optional)
        if not isinstance(avro, dict):
            raise DataError(f"Invalid Avro schema: {avro!r}")
        kind = avro.get("type")
        if isinstance(kind, (dict, list)) or (
            isinstance(kind, str)
            and kind not in _AVRO_PRIMITIVES
            and kind not in ("record", "enum", "fixed", "array", "map", "error")
        ):
            return self.convert(kind, namespace, optional, field_default, has_field_default, version)
        logical = avro.get("logicalType")
        connect_type = avro.get(CONNECT_TYPE_PROP)
        name: str | None = None
        doc: str | None = None
        params: dict[str, str] = {}
        fields: tuple[Field, ...] = ()
        key_schema = value_schema = None
        schema_version: int | None = None
        if kind == "boolean":
            t = "boolean"
        elif kind in ("bytes", "fixed"):
            t = "bytes"
            if kind == "fixed":
                self._define(avro, namespace)
            if logical == "decimal":
                scale = avro.get("scale", 0)
                if not isinstance(scale, int):
                    raise DataError("scale must be specified and must be a number.")
                name, schema_version = DECIMAL_LOGICAL_NAME, 1
                params[DECIMAL_SCALE_PARAMETER] = str(scale)
                precision = avro.get("precision")
                if precision is not None:
                    if not isinstance(precision, int):
                        raise DataError("precision property must be a JSON Integer.")
                    if precision != DEFAULT_DECIMAL_PRECISION:
                        params[CONNECT_AVRO_DECIMAL_PRECISION_PROP] = str(precision)
        elif kind == "double":
            t = "float64"
        elif kind == "float":
            t = "float32"
        elif kind == "int":
            if logical == "date":
                t, name, schema_version = "int32", DATE_LOGICAL_NAME, 1
            elif logical == "time-millis":
                t, name, schema_version = "int32", TIME_LOGICAL_NAME, 1
            elif connect_type in ("int8", "int16"):
                t = connect_type
            elif connect_type is not None and logical is None:
                raise DataError("Connect type annotation for Avro int field is null")
            else:
                t = "int32"
        elif kind == "long":
            if logical == "timestamp-millis":
                t, name, schema_version = "int64", TIMESTAMP_LOGICAL_NAME, 1
            else:
                t = "int64"
        elif kind == "string":
            t = "string"
        elif kind == "array":
            items = avro.get("items")
            entry = self._resolve(items, namespace)
            if _is_map_entry(entry):
                names = [f.get("name") for f in entry.get("fields", [])]
                if sorted(names) != ["key", "value"]:
                    raise DataError(
                        "Found map encoded as array of key-value pairs, but array elements do not "
                        "match the expected format."
                    )
                self._define(entry, namespace)
                entry_ns = _namespace_of(entry, namespace)
                by_name = {f["name"]: f for f in entry["fields"]}
                t = "map"
                key_schema = self.convert(by_name["key"]["type"], entry_ns)
                value_schema = self.convert(by_name["value"]["type"], entry_ns)
            else:
                t = "array"
                value_schema = self.convert(items, namespace)
        elif kind == "map":
            t = "map"
            key_schema = Schema("string")
            value_schema = self.convert(avro.get("values"), namespace)
        elif kind in ("record", "error"):
            t = "struct"
            full = self._define(avro, namespace)
            record_ns = _namespace_of(avro, namespace)
            self.in_progress.add(full)
            if self.meta and avro.get("doc") is not None:
                params[AVRO_RECORD_DOC_PROP] = avro["doc"]
            built = []
            for index, f in enumerate(avro.get("fields", [])):
                if self.meta and f.get("doc") is not None:
                    params[AVRO_FIELD_DOC_PREFIX_PROP + f["name"]] = f["doc"]
                built.append(
                    Field(
                        f["name"],
                        index,
                        self.convert(
                            f["type"], record_ns, field_default=f.get("default"), has_field_default="default" in f
                        ),
                    )
                )
            self.in_progress.discard(full)
            fields = tuple(built)
            name = full
        elif kind == "enum":
            t = "string"
            full = self._define(avro, namespace)
            simple = full.rsplit(".", 1)[-1]
            if self.meta:
                if avro.get("doc") is not None:
                    params[AVRO_ENUM_DOC_PREFIX_PROP + simple] = avro["doc"]
                if avro.get("default") is not None:
                    params[AVRO_ENUM_DEFAULT_PREFIX_PROP + simple] = avro["default"]
            params[AVRO_TYPE_ENUM] = full
            for symbol in avro.get("symbols", []):
                params[f"{AVRO_TYPE_ENUM}.{symbol}"] = symbol
            name = full
        elif kind == "null":
            raise DataError("Standalone null schemas are not supported by this converter")
        else:
            raise DataError(f"Couldn't translate unsupported schema type {kind}.")

        if self.meta and avro.get(CONNECT_DOC_PROP) is not None:
            doc = avro[CONNECT_DOC_PROP]
        connect_version = avro.get(CONNECT_VERSION_PROP)
        if connect_version is not None:
            if not isinstance(connect_version, int):
                raise DataError(f"Invalid Connect version found: {connect_version}")
            schema_version = connect_version
        elif version is not None and schema_version is None:
            schema_version = version
        connect_params = avro.get(CONNECT_PARAMETERS_PROP)
        if self.meta and connect_params is not None:
            if not isinstance(connect_params, dict):
                raise DataError(f"Expected JSON object for schema parameters but found: {connect_params}")
            for key, value in connect_params.items():
                if not isinstance(value, str):
                    raise DataError(f"Expected schema parameter values to be strings but found: {value}")
                params[key] = value
        for key, value in avro.items():
            if key.startswith("avro"):
                params[key] = value if isinstance(value, str) else str(value)
        connect_name = avro.get(CONNECT_NAME_PROP)
        if connect_name is not None:
            if not isinstance(connect_name, str):
                raise DataError(f"Invalid schema name: {connect_name}")
            name = connect_name
        if name is not None and _DEFAULT_NAME.fullmatch(name):
            name = None
        default = None
        connect_default = avro.get(CONNECT_DEFAULT_VALUE_PROP)
        if has_field_default:
            if connect_default is None:
                params[AVRO_FIELD_DEFAULT_FLAG_PROP] = "true"
            default = field_default
        else:
            default = connect_default
        schema = Schema(
            t,
            optional=optional,
            name=name,
            version=schema_version,
            doc=doc,
            parameters=tuple(params.items()) or None,
            fields=fields,
            key_schema=key_schema,
            value_schema=value_schema,
        )
        if default is not None:
            schema = _with_default(schema, default_from_avro(schema, default))
        return schema

    def _union(self, members: list[Any], namespace: str | None, optional: bool) -> Schema:
        if len(members) == 2 and "null" in members:
            other = members[1] if members[0] == "null" else members[0]
            return self.convert(other, namespace, optional=True)
        fields: list[Field] = []
        seen: set[str] = set()
        nullable = False
        for member in members:
            if member == "null":
                nullable = True
                continue
            resolved = self._resolve(member, namespace)
            field_name = _union_member_name(resolved)
            if field_name in seen:
                raise DataError("Multiple union schemas map to the Connect union field name")
            seen.add(field_name)
            fields.append(Field(field_name, len(fields), self.convert(member, namespace, optional=True)))
        return Schema("struct", optional=nullable or optional, name=AVRO_TYPE_UNION, fields=tuple(fields))

    def _resolve(self, avro: Any, namespace: str | None) -> Any:
        if isinstance(avro, str) and avro not in _AVRO_PRIMITIVES:
            full = avro if "." in avro or namespace is None else f"{namespace}.{avro}"
            return self.named.get(full) or self.named.get(avro) or avro
        if isinstance(avro, dict) and isinstance(avro.get("type"), (dict, list)):
            return avro["type"]
        return avro

    def _define(self, avro: dict[str, Any], namespace: str | None) -> str:
        full = _full_name(avro, namespace)
        avro["_full"] = full
        self.named.setdefault(full, avro)
        return full


def avro_to_connect_schema(
    avro: Any, version: int | None = None, connect_meta_data: bool = True, references: Sequence[Any] = ()
) -> Schema:
    """The Connect schema Confluent's AvroConverter reads from an Avro schema (as parsed JSON), whose named
    types may be defined by `references` (the referenced schemas, dependencies first)."""
    converter = _ToConnect(connect_meta_data)
    for referenced in references:
        converter.convert(copy.deepcopy(referenced), None)  # defines its named types
    return converter.convert(copy.deepcopy(avro), None, version=version)


def default_from_avro(schema: Schema, value: Any) -> Any:
    """An Avro JSON default as the Connect value of `schema`."""
    if value is None:
        return None
    name = schema.name
    if name == DECIMAL_LOGICAL_NAME:
        raw = value.encode("latin-1") if isinstance(value, str) else bytes(value)
        return decimal_from_bytes(raw, decimal_scale(schema))
    if name == DATE_LOGICAL_NAME:
        return _dt.date(1970, 1, 1) + _dt.timedelta(days=int(value))
    if name == TIME_LOGICAL_NAME:
        return (_dt.datetime(1970, 1, 1) + _dt.timedelta(milliseconds=int(value))).time()
    if name == TIMESTAMP_LOGICAL_NAME:
        return _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC) + _dt.timedelta(milliseconds=int(value))
    t = schema.type
    if t in ("int8", "int16", "int32", "int64"):
        return int(value)
    if t in ("float32", "float64"):
        return float(value)
    if t == "bytes":
        return value.encode("latin-1") if isinstance(value, str) else bytes(value)
    if t == "array":
        return [default_from_avro(_require(schema.value_schema), v) for v in value]
    if t == "map":
        key, val = _require(schema.key_schema), _require(schema.value_schema)
        if isinstance(value, dict):
            return {k: default_from_avro(val, v) for k, v in value.items()}
        return {default_from_avro(key, e["key"]): default_from_avro(val, e["value"]) for e in value}
    if t == "struct":
        if schema.name == AVRO_TYPE_UNION:
            first = schema.fields[0]
            return {f.name: (default_from_avro(first.schema, value) if f is first else None) for f in schema.fields}
        return {f.name: default_from_avro(f.schema, value.get(f.name)) for f in schema.fields}
    return value


# ---- values --------------------------------------------------------------------------------------

ValueFn = Callable[[Any], Any]


def to_avro_value(schema: Schema) -> ValueFn | None:
    """A function turning a Connect value of `schema` into what fastavro writes; None when none is needed."""
    fn = _to_avro(schema)
    return fn


def _to_avro(schema: Schema) -> ValueFn | None:
    name, t = schema.name, schema.type
    inner: ValueFn | None
    if name == DECIMAL_LOGICAL_NAME:
        scale = decimal_scale(schema)

        def inner(v: Any) -> Any:
            return decimal_to_bytes(v, scale)
    elif name == TIMESTAMP_LOGICAL_NAME:
        inner = timestamp_to_millis
    elif name == DATE_LOGICAL_NAME:
        inner = date_to_days
    elif name == TIME_LOGICAL_NAME:
        inner = time_to_millis
    elif t == "array":
        item = _to_avro(_require(schema.value_schema))
        inner = None if item is None else (lambda v: [item(x) for x in v])
    elif t == "map":
        key, val = _require(schema.key_schema), _require(schema.value_schema)
        kf, vf = _to_avro(key), _to_avro(val)
        if key.type == "string" and not key.optional:
            inner = None if vf is None else (lambda v: {k: vf(x) for k, x in v.items()})
        else:
            kf2, vf2 = kf or _identity, vf or _identity
            inner = lambda v: [{"key": kf2(k), "value": vf2(x)} for k, x in v.items()]  # noqa: E731
    elif t == "struct" and schema.name == AVRO_TYPE_UNION:
        members = [(f.name, _to_avro(f.schema) or _identity) for f in schema.fields]

        def inner(v: Any) -> Any:
            for field_name, fn in members:
                member = v.get(field_name)
                if member is not None:
                    return fn(member)
            return None
    elif t == "struct":
        converters = [(f.name, fn) for f in schema.fields if (fn := _to_avro(f.schema)) is not None]
        if not converters:
            inner = None
        else:

            def inner(v: Any) -> Any:
                if not isinstance(v, dict):
                    raise DataError(f"Invalid type for STRUCT: {type(v)}")
                out = dict(v)
                for field_name, fn in converters:
                    x = out.get(field_name)
                    if x is not None:
                        out[field_name] = fn(x)
                return out
    else:
        inner = None
    if inner is None:
        return None
    fn = inner
    return lambda v: None if v is None else fn(v)


def _timestamp_value(v: Any) -> _dt.datetime:
    return v if isinstance(v, _dt.datetime) else _EPOCH + _dt.timedelta(milliseconds=v)


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)


def to_connect_value(schema: Schema) -> ValueFn | None:
    """A function turning what fastavro read into the Connect value of `schema`; None when none is needed."""
    t = schema.type
    inner: ValueFn | None
    if schema.name == TIMESTAMP_LOGICAL_NAME:
        inner = _timestamp_value
    elif t == "array":
        item = to_connect_value(_require(schema.value_schema))
        inner = None if item is None else (lambda v: [item(x) for x in v])
    elif t == "map":
        key, val = _require(schema.key_schema), _require(schema.value_schema)
        kf, vf = to_connect_value(key), to_connect_value(val)
        if key.type == "string" and not key.optional:
            inner = None if vf is None else (lambda v: {k: vf(x) for k, x in v.items()})
        else:
            kf2, vf2 = kf or _identity, vf or _identity
            inner = lambda v: {kf2(e["key"]): vf2(e["value"]) for e in v}  # noqa: E731
    elif t == "struct" and schema.name == AVRO_TYPE_UNION:
        members = [(f.name, f.schema, to_connect_value(f.schema) or _identity) for f in schema.fields]

        def inner(v: Any) -> Any:
            for field_name, member_schema, fn in members:
                if _fits(member_schema, v):
                    return {f: (fn(v) if f == field_name else None) for f, _, _ in members}
            raise DataError(f"Did not find matching union field for data: {v}")
    elif t == "struct":
        converters = [(f.name, fn) for f in schema.fields if (fn := to_connect_value(f.schema)) is not None]
        if not converters:
            inner = None
        else:

            def inner(v: Any) -> Any:
                for field_name, fn in converters:
                    v[field_name] = fn(v[field_name])
                return v
    else:
        inner = None
    if inner is None:
        return None
    fn = inner
    return lambda v: None if v is None else fn(v)


def _fits(schema: Schema, value: Any) -> bool:
    t = schema.type
    if t in ("int8", "int16", "int32", "int64"):
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            schema.name in (DATE_LOGICAL_NAME, TIME_LOGICAL_NAME, TIMESTAMP_LOGICAL_NAME)
            and isinstance(value, (_dt.date, _dt.time))
        )
    if t in ("float32", "float64"):
        return isinstance(value, float)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "string":
        return isinstance(value, str)
    if t == "bytes":
        return isinstance(value, (bytes, bytearray)) or (
            schema.name == DECIMAL_LOGICAL_NAME and not isinstance(value, (str, dict, list))
        )
    if t == "array":
        return isinstance(value, list)
    return isinstance(value, dict)


# ---- helpers -------------------------------------------------------------------------------------


def _identity(value: Any) -> Any:
    return value


def _require(schema: Schema | None) -> Schema:
    if schema is None:
        raise DataError("Invalid schema: a map or array schema without its key or value schema")
    return schema


def _non_optional(schema: Schema) -> Schema:
    return Schema(
        schema.type,
        False,
        schema.default,
        schema.name,
        schema.version,
        schema.doc,
        schema.parameters,
        schema.fields,
        schema.key_schema,
        schema.value_schema,
    )


def _with_default(schema: Schema, default: Any) -> Schema:
    return Schema(
        schema.type,
        schema.optional,
        default,
        schema.name,
        schema.version,
        schema.doc,
        schema.parameters,
        schema.fields,
        schema.key_schema,
        schema.value_schema,
    )


def _split(full_name: str) -> tuple[str | None, str]:
    namespace, _, name = full_name.rpartition(".")
    return (namespace or None), name


def _full_name(avro: dict[str, Any], namespace: str | None) -> str:
    name = avro.get("name")
    if not isinstance(name, str):
        raise DataError(f"Invalid Avro schema: a named type without a name: {avro!r}")
    if "." in name:
        return name
    ns = avro.get("namespace", namespace)
    return f"{ns}.{name}" if ns else name


def _namespace_of(avro: dict[str, Any], namespace: str | None) -> str | None:
    return _full_name(avro, namespace).rpartition(".")[0] or None


def _is_map_entry(avro: Any) -> bool:
    if not isinstance(avro, dict) or avro.get("type") != "record":
        return False
    return (
        avro.get(CONNECT_INTERNAL_TYPE_NAME) == MAP_ENTRY_TYPE_NAME
        or (avro.get("name") == MAP_ENTRY_TYPE_NAME and avro.get("namespace") == NAMESPACE)
        or avro.get("name") == f"{NAMESPACE}.{MAP_ENTRY_TYPE_NAME}"
    )


def _union_member_name(avro: Any) -> str:
    if isinstance(avro, str):
        return avro.rsplit(".", 1)[-1]
    kind = avro.get("type")
    if kind in ("record", "enum", "error") and isinstance(avro.get("name"), str):
        return avro["name"].rsplit(".", 1)[-1]
    return kind if isinstance(kind, str) else "union"
