"""Kafka Connect's JsonConverter, byte for byte.

Wire format (org.apache.kafka.connect.json.JsonConverter):
- `schemas.enable=true` (default): `{"schema": <schema JSON>, "payload": <value>}`; schemaless data gets
  `"schema": null`. Schema JSON type names are Kafka's: int8, int16, int32, int64, float (float32),
  double (float64), boolean, string, bytes, array (`items`), map (`keys`, `values`), struct (`fields`,
  each field's schema plus `"field": <name>` last), then `optional`, `name`, `version`, `doc`,
  `parameters`, `default` in that order.
- `schemas.enable=false`: the bare value.
- bytes are base64 strings; maps with non-string keys are arrays of `[key, value]` pairs; doubles are
  written as Java's `Double.toString` does (`1.0E7`, `1.0E-4`), floats (float32 schema, or `Float32`
  values without one) as Java 17's `Float.toString` (both in runtime/data/java_numbers.py), NaN/Infinity as
  quoted strings.
- Logical types by schema name: Decimal (`decimal.Decimal`; `decimal.format` BASE64 or NUMERIC),
  Date (`datetime.date`), Time (`datetime.time`), Timestamp (`datetime.datetime`, naive = UTC). Already
  encoded ints are accepted for Date/Time/Timestamp too, as Python connectors often have them.
- Reading is as lenient as Kafka's: a JSON value of the wrong kind for a primitive schema becomes the
  Jackson default (0, 0.0, False, None) rather than an error; a missing/null value for a required field
  without default is a DataError.

Speed: one converter instance serves one task, so it compiles a per-schema encoder/decoder closure and
the serialized schema JSON once (cached by schema object identity, bounded by `schemas.cache.size`) and
lets orjson do the byte work. Schemaless values go straight to orjson; a cheap scan of its output spots
the rare float notations that differ from Java's and redoes only those values the exact way.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import decimal
import json as _stdjson
import math
import re
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import orjson

from ..api.config import ConfigDef, Importance, Type, ValidString, Width
from ..api.data import Field, Schema
from ..api.errors import DataError
from ..data.java_numbers import Float32, java_double_str, java_float_str
from ..data.logical_schemas import (
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    DECIMAL_SCALE_PARAMETER,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
)
from .base import Converter

SCHEMAS_ENABLE_CONFIG = "schemas.enable"
SCHEMAS_CACHE_SIZE_CONFIG = "schemas.cache.size"
DECIMAL_FORMAT_CONFIG = "decimal.format"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
CONVERTER_TYPE_CONFIG = "converter.type"

ENVELOPE_MESSAGE = (
    'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional '
    "fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter "
    "configuration."
)
_TO_BYTES_FAILED = "Converting Kafka Connect data to byte[] failed due to serialization error: "
_TO_CONNECT_FAILED = "Converting byte[] to Kafka Connect data failed due to serialization error: "

# Connect type -> JSON schema type name (float32/float64 are "float"/"double" on the wire).
_JSON_TYPE_NAMES = {
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "float32": "float",
    "float64": "double",
    "boolean": "boolean",
    "string": "string",
    "bytes": "bytes",
    "array": "array",
    "map": "map",
    "struct": "struct",
}
_CONNECT_TYPES = {v: k for k, v in _JSON_TYPE_NAMES.items()}
_INT_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_MILLIS_PER_DAY = 86_400_000


def converter_config_def() -> ConfigDef:
    """Kafka's ConverterConfig keys shared by every converter (`converter.type`)."""
    return ConfigDef().define(
        CONVERTER_TYPE_CONFIG,
        Type.STRING,
        validator=ValidString.of("key", "value", "header"),
        importance=Importance.LOW,
        documentation="How this converter will be used.",
    )


def json_converter_config_def() -> ConfigDef:
    config = converter_config_def()
    config.define(
        SCHEMAS_ENABLE_CONFIG,
        Type.BOOLEAN,
        True,
        importance=Importance.HIGH,
        documentation="Include schemas within each of the serialized values and keys.",
        group="Schemas",
        order_in_group=0,
        width=Width.MEDIUM,
        display_name="Enable Schemas",
    )
    config.define(
        SCHEMAS_CACHE_SIZE_CONFIG,
        Type.INT,
        1000,
        importance=Importance.HIGH,
        documentation="The maximum number of schemas that can be cached in this converter instance.",
        group="Schemas",
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Schema Cache Size",
    )
    config.define(
        DECIMAL_FORMAT_CONFIG,
        Type.STRING,
        "BASE64",
        validator=ValidString.of("BASE64", "NUMERIC", case_insensitive=True),
        importance=Importance.LOW,
        documentation="Controls which format this converter will serialize decimals in. This value is "
        "case insensitive and can be either 'BASE64' (default) or 'NUMERIC'",
        group="Serialization",
        order_in_group=0,
        width=Width.MEDIUM,
        display_name="Decimal Format",
    )
    config.define(
        REPLACE_NULL_WITH_DEFAULT_CONFIG,
        Type.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="Whether to replace fields that have a default value and that are null to the "
        "default value. When set to true, the default value is used, otherwise null is used.",
        group="Serialization",
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Replace null with default",
    )
    return config


_NON_FINITE = {
    "NaN": orjson.Fragment(b'"NaN"'),
    "Infinity": orjson.Fragment(b'"Infinity"'),
    "-Infinity": orjson.Fragment(b'"-Infinity"'),
}


def _double_json(x: float) -> Any:
    """A float as orjson should write it so the bytes equal Jackson's."""
    magnitude = abs(x)
    if 1e-3 <= magnitude < 1e7 or x == 0:
        return x  # orjson's shortest repr is identical to Java's in this range
    text = java_double_str(x)
    return _NON_FINITE.get(text) or orjson.Fragment(text.encode())


def _float32_json(x: float) -> Any:
    text = java_float_str(x)
    return _NON_FINITE.get(text) or orjson.Fragment(text.encode())


# orjson output that may differ from Java's: exponent notation, >= 8 integer digits, or 0.000x
# (false positives inside strings only cost the exact slow path).
_SUSPICIOUS_FLOAT = re.compile(rb"[0-9](?:e[+-]|[0-9]{7}\.)|0\.000")


# ---- schemaless values ------------------------------------------------------------------------


def _b64(value: bytes | bytearray | memoryview) -> str:
    return base64.b64encode(value).decode("ascii")


def _orjson_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _b64(value)
    raise TypeError


def _no_schema_type(value: Any) -> DataError:
    # Kafka's text names the Java class: logical values are java.util.Date and java.math.BigDecimal there
    if isinstance(value, (_dt.date, _dt.time)):
        name = "java.util.Date"
    elif isinstance(value, decimal.Decimal):
        name = "java.math.BigDecimal"
    else:
        name = f"{type(value).__module__}.{type(value).__qualname__}"
    return DataError(f"Java class class {name} does not have corresponding schema type.")


def infer_json(value: Any) -> Any:
    """Exact JSON-ready form of a schemaless value (Kafka's convertToJson with a null schema)."""
    if value is None or value is True or value is False or type(value) is str:
        return value
    if type(value) is int:
        return value if -(2**63) <= value < 2**63 else orjson.Fragment(str(value).encode())
    if type(value) is float:
        return _double_json(value)
    if type(value) is Float32:  # a Java float: Jackson's FloatNode prints Float.toString
        return _float32_json(value)
    if isinstance(value, dict):
        if all(type(k) is str for k in value):
            return {k: infer_json(v) for k, v in value.items()}
        return [[infer_json(k), infer_json(v)] for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [infer_json(v) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _b64(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return infer_json(int(value))
    if isinstance(value, float):
        return _double_json(float(value))
    if isinstance(value, str):
        return str(value)
    raise _no_schema_type(value)


def dumps_schemaless(value: Any) -> bytes:
    """Serialize a schemaless value exactly as Kafka's JsonConverter (schemas disabled) would."""
    try:
        # dates go to the default hook (and fail there, as in Kafka) instead of orjson's ISO strings
        out = orjson.dumps(value, default=_orjson_default, option=orjson.OPT_PASSTHROUGH_DATETIME)
    except TypeError:
        return orjson.dumps(infer_json(value))
    if _SUSPICIOUS_FLOAT.search(out) is None:
        return out
    return orjson.dumps(infer_json(value))


# ---- JSON node type names used in Kafka's error messages ----------------------------------------


def _node_type(value: Any) -> str:
    if value is None:
        return "NULL"
    if value is True or value is False:
        return "BOOLEAN"
    if isinstance(value, (int, float, decimal.Decimal)):
        return "NUMBER"
    if isinstance(value, str):
        return "STRING"
    if isinstance(value, list):
        return "ARRAY"
    return "OBJECT"


def _schema_type_name(schema: Schema) -> str:
    return schema.type.upper()


# ---- logical types -----------------------------------------------------------------------------


def _decimal_scale(schema: Schema) -> int:
    params = dict(schema.parameters or ())
    try:
        return int(params[DECIMAL_SCALE_PARAMETER])
    except (KeyError, ValueError):
        raise DataError("Invalid Decimal schema: scale parameter not found.") from None


def decimal_to_bytes(value: decimal.Decimal, scale: int) -> bytes:
    """Unscaled value as minimal big-endian two's complement (Java BigInteger.toByteArray)."""
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int) or -exponent != scale:
        # Kafka's Decimal.fromLogical, word for word
        raise DataError(
            f"Decimal value has mismatching scale for given Decimal schema. Schema has scale {scale}, "
            f"value has scale {-exponent if isinstance(exponent, int) else exponent}."
        )
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    length = unscaled.bit_length() // 8 + 1
    return unscaled.to_bytes(length, "big", signed=True)


def decimal_from_bytes(raw: bytes, scale: int) -> decimal.Decimal:
    unscaled = int.from_bytes(raw, "big", signed=True)
    return decimal.Decimal((1 if unscaled < 0 else 0, tuple(int(d) for d in str(abs(unscaled))), -scale))


def _encode_decimal(schema: Schema, numeric: bool) -> Callable[[Any], Any]:
    scale = _decimal_scale(schema)

    def encode(value: Any) -> Any:
        if not isinstance(value, decimal.Decimal):
            raise DataError(f"Invalid type for Decimal, expected BigDecimal but was {type(value)}")
        if numeric:
            decimal_to_bytes(value, scale)  # same scale check as the BASE64 path
            return orjson.Fragment(str(value).encode())
        return _b64(decimal_to_bytes(value, scale))

    return encode


def _encode_date(value: Any) -> Any:
    if isinstance(value, _dt.datetime):
        utc = value if value.tzinfo is None else value.astimezone(_dt.UTC)
        if utc.time() != _dt.time(0):
            raise DataError("Kafka Connect Date type should not have any time fields set to non-zero values.")
        return (utc.date() - _EPOCH_DATE).days
    if isinstance(value, _dt.date):
        return (value - _EPOCH_DATE).days
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise DataError(f"Invalid type for Date, expected Date but was {type(value)}")


def _encode_time(value: Any) -> Any:
    if isinstance(value, _dt.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value <= _MILLIS_PER_DAY:
            raise DataError("Kafka Connect Time type should not have any date fields set to non-zero values.")
        return value
    raise DataError(f"Invalid type for Time, expected Date but was {type(value)}")


def _encode_timestamp(value: Any) -> Any:
    if isinstance(value, _dt.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=_dt.UTC)
        return (aware - _EPOCH) // _dt.timedelta(milliseconds=1)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise DataError(f"Invalid type for Timestamp, expected Date but was {type(value)}")


def _decode_decimal(schema: Schema) -> Callable[[Any], Any]:
    scale = _decimal_scale(schema)

    def decode(value: Any) -> Any:
        if isinstance(value, decimal.Decimal):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return decimal.Decimal(value) if isinstance(value, int) else decimal.Decimal(repr(value))
        if isinstance(value, str):
            try:
                return decimal_from_bytes(base64.b64decode(value, validate=True), scale)
            except (binascii.Error, ValueError):
                raise DataError("Invalid bytes for Decimal field") from None
        raise DataError(
            "Invalid type for Decimal, underlying representation should be numeric or bytes but was "
            + _node_type(value)
        )

    return decode


def _is_int32(value: Any) -> bool:
    return type(value) is int and -(2**31) <= value < 2**31


def _decode_date(value: Any) -> Any:
    if not _is_int32(value):
        raise DataError(
            "Invalid type for Date, underlying representation should be integer but was " + _node_type(value)
        )
    return _EPOCH_DATE + _dt.timedelta(days=value)


def _decode_time(value: Any) -> Any:
    if not _is_int32(value):
        raise DataError(
            "Invalid type for Time, underlying representation should be integer but was " + _node_type(value)
        )
    if not 0 <= value < _MILLIS_PER_DAY:
        raise DataError("Time values must use number of milliseconds greater than 0 and less than 86400000")
    seconds, millis = divmod(value, 1000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return _dt.time(hour, minute, second, millis * 1000)


def _decode_timestamp(value: Any) -> Any:
    if type(value) is not int:
        raise DataError(
            "Invalid type for Timestamp, underlying representation should be integral but was " + _node_type(value)
        )
    return _EPOCH + _dt.timedelta(milliseconds=value)


# ---- primitive decoders mirroring Jackson's xxxValue() ------------------------------------------


def _wrap(value: int, bits: int) -> int:
    mask = (1 << bits) - 1
    value &= mask
    return value - (1 << bits) if value >> (bits - 1) else value


def _int_decoder(bits: int) -> Callable[[Any], Any]:
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def decode(value: Any) -> Any:
        if type(value) is int:
            return value if low <= value <= high else _wrap(value, bits)
        if isinstance(value, (float, decimal.Decimal)) and math.isfinite(value):
            return _wrap(int(value), bits)
        return 0  # Jackson: intValue() of a non-numeric node

    return decode


def _float_decode(value: Any) -> Any:
    if type(value) is float:
        return value
    if isinstance(value, (int, decimal.Decimal)) and not isinstance(value, bool):
        return float(value)
    return 0.0


def _bool_decode(value: Any) -> Any:
    return value is True


def _string_decode(value: Any) -> Any:
    return value if type(value) is str else None


def _bytes_decode(value: Any) -> Any:
    if type(value) is not str:
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise DataError("Invalid bytes field") from None


_PRIMITIVE_DECODERS: dict[str, Callable[[Any], Any]] = {
    "int8": _int_decoder(8),
    "int16": _int_decoder(16),
    "int32": _int_decoder(32),
    "int64": _int_decoder(64),
    "float32": _float_decode,
    "float64": _float_decode,
    "boolean": _bool_decode,
    "string": _string_decode,
    "bytes": _bytes_decode,
}


def _contains_decimal(schema: Schema) -> bool:
    if schema.name == DECIMAL_LOGICAL_NAME:
        return True
    children = [f.schema for f in schema.fields] + [s for s in (schema.key_schema, schema.value_schema) if s]
    return any(_contains_decimal(child) for child in children)


# A parsed schema's decoding: the schema, its decoder, whether it holds decimals (read exactly, from the
# text) and a check that a payload is already what the decoder would build (`_fast_check`).
_DecoderEntry = tuple[Schema, Callable[[Any], Any], bool, Callable[[Any], bool] | None]


def _fast_check(schema: Schema) -> Callable[[Any], bool] | None:
    """For a flat struct of strings, integers and booleans: whether a decoded payload already is the
    value the general decoder would build (same keys in schema order, exact types, in range)."""
    if schema.type != "struct":
        return None
    return _generate_fast_path(schema, replace_null_with_default=True, check_only=True)


def _fast_encoder(schema: Schema, replace_null_with_default: bool) -> Callable[[Any], bytes | None] | None:
    """For the common shapes (a string or integer, or a flat struct of strings, integers and booleans),
    a function that checks the value's exact types and returns orjson's bytes directly, or None to fall
    back to the general encoder. orjson then writes exactly what the general path writes, so the bytes
    are identical; it only skips building an intermediate copy of the value."""
    return _generate_fast_path(schema, replace_null_with_default, check_only=False)


def _generate_fast_path(schema: Schema, replace_null_with_default: bool, check_only: bool) -> Any:
    ok, fail = ("True", "False") if check_only else ("_dumps(value)", "None")

    def check(var: str, field_schema: Schema) -> str | None:
        if field_schema.name is not None or (field_schema.default is not None and replace_null_with_default):
            return None  # logical types and defaults take the general path
        nullable = f"{var} is None or " if field_schema.optional else ""
        if field_schema.type == "string":
            return f"({nullable}type({var}) is str)"
        if field_schema.type == "boolean":
            return f"({nullable}type({var}) is bool)"
        if field_schema.type in _INT_BOUNDS:
            bound = _INT_BOUNDS[field_schema.type]
            return f"({nullable}(type({var}) is int and {-bound} <= {var} < {bound}))"
        return None

    scope: dict[str, Any] = {"_dumps": orjson.dumps, "_MISSING": _MISSING}
    if schema.type == "struct":
        if not schema.fields or (schema.name or "").startswith("org.apache.kafka.connect.data."):
            return None
        names = tuple(f.name for f in schema.fields)
        scope["_NAMES"] = names
        lines = [
            "def fast(value):",
            f"    if type(value) is not dict or len(value) != {len(names)}:",
            f"        return {fail}",
        ]
        conditions = []
        for i, f in enumerate(schema.fields):
            condition = check(f"v{i}", f.schema)
            if condition is None:
                return None
            lines.append(f"    v{i} = value.get({f.name!r}, _MISSING)")
            conditions.append(condition)
        lines.append(f"    if not ({' and '.join(conditions)}) or tuple(value) != _NAMES:")
        lines.append(f"        return {fail}")
        lines.append(f"    return {ok}")
    else:
        condition = check("value", schema)
        if condition is None or schema.optional:
            return None
        lines = ["def fast(value):", f"    return {ok} if {condition} else {fail}"]
    exec("\n".join(lines), scope)
    return scope["fast"]


_INT_BOUNDS = {"int8": 2**7, "int16": 2**15, "int32": 2**31, "int64": 2**63}


class _BoundedCache:
    """Insertion-ordered cache that forgets its oldest entry beyond `size` (Kafka uses an LRU)."""

    __slots__ = ("data", "size")

    def __init__(self, size: int) -> None:
        self.size = max(size, 1)
        self.data: OrderedDict[Any, Any] = OrderedDict()

    def get(self, key: Any) -> Any:
        return self.data.get(key)

    def put(self, key: Any, value: Any) -> None:
        self.data[key] = value
        if len(self.data) > self.size:
            self.data.popitem(last=False)


class JsonConverter(Converter):
    """org.apache.kafka.connect.json.JsonConverter. Usable without configure() (value side, schemas on)."""

    def __init__(self) -> None:
        self.configure({}, False)

    def config(self) -> ConfigDef:
        return json_converter_config_def()

    def configure(self, configs: dict[str, Any], is_key: bool) -> None:
        props = dict(configs)
        props[CONVERTER_TYPE_CONFIG] = "key" if is_key else "value"
        values = json_converter_config_def().parse(props)
        self.is_key = is_key
        self.schemas_enabled: bool = values[SCHEMAS_ENABLE_CONFIG]
        self.cache_size: int = values[SCHEMAS_CACHE_SIZE_CONFIG]
        self.decimal_numeric: bool = values[DECIMAL_FORMAT_CONFIG].upper() == "NUMERIC"
        self.replace_null_with_default: bool = values[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        # id(schema) -> (schema, encoder, envelope head); keeps the schema alive so ids stay unique.
        self._encoders_by_id = _BoundedCache(self.cache_size)
        self._encoders_by_value = _BoundedCache(self.cache_size)
        self._decoders = _BoundedCache(self.cache_size)  # schema JSON bytes -> _DecoderEntry
        self._last_decoder: tuple[Any, _DecoderEntry] | None = None
        self._last_entry: tuple[Any, ...] | None = None
        self._last_envelope: tuple[bytes, _DecoderEntry] | None = None

    # ---- serialization -------------------------------------------------------------------------

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if schema is None:
            if value is None:
                return None
            try:
                body = dumps_schemaless(value)
            except orjson.JSONEncodeError as exc:
                raise DataError(_TO_BYTES_FAILED) from exc
            return b'{"schema":null,"payload":' + body + b"}" if self.schemas_enabled else body
        last = self._last_entry
        entry = last if last is not None and last[0] is schema else self._encoder_entry(schema)
        self._last_entry = entry
        fast = entry[4]
        if fast is not None:
            body = fast(value)
            if body is not None:
                return entry[2] + body + b"}" if self.schemas_enabled else body
        try:
            body = orjson.dumps(entry[1](value))
        except orjson.JSONEncodeError as exc:
            raise DataError(_TO_BYTES_FAILED) from exc
        return entry[2] + body + b"}" if self.schemas_enabled else body

    def as_json_schema(self, schema: Schema | None) -> dict[str, Any] | None:
        """The schema's JSON (as a dict) exactly as Kafka writes it in the envelope."""
        if schema is None:
            return None
        return orjson.loads(self._encoder_entry(schema)[3])

    def _encoder_entry(self, schema: Schema) -> tuple[Schema, Callable[[Any], Any], bytes, bytes, Any]:
        entry = self._encoders_by_id.get(id(schema))
        if entry is not None and entry[0] is schema:
            return entry
        try:
            entry = self._encoders_by_value.get(schema)
        except TypeError:  # a default value that is a dict/list makes the schema unhashable
            entry = None
        if entry is None:
            encoder = self._compile_encoder(schema)
            schema_json = orjson.dumps(self._schema_json(schema))
            entry = (
                schema,
                encoder,
                b'{"schema":' + schema_json + b',"payload":',
                schema_json,
                _fast_encoder(schema, self.replace_null_with_default),
            )
            try:
                self._encoders_by_value.put(schema, entry)
            except TypeError:
                pass
        self._encoders_by_id.put(id(schema), (schema, *entry[1:]))
        return entry

    def _schema_json(self, schema: Schema) -> dict[str, Any]:
        node: dict[str, Any] = {"type": _JSON_TYPE_NAMES[schema.type]}
        # Kafka writes a missing element, key or value schema (Values.parseString makes them) as null
        if schema.type == "array":
            node["items"] = self._child_schema_json(schema.value_schema)
        elif schema.type == "map":
            node["keys"] = self._child_schema_json(schema.key_schema)
            node["values"] = self._child_schema_json(schema.value_schema)
        elif schema.type == "struct":
            fields = []
            for f in schema.fields:
                field_node = self._schema_json(f.schema)
                field_node["field"] = f.name
                fields.append(field_node)
            node["fields"] = fields
        node["optional"] = schema.optional
        if schema.name is not None:
            node["name"] = schema.name
        if schema.version is not None:
            node["version"] = schema.version
        if schema.doc is not None:
            node["doc"] = schema.doc
        if schema.parameters is not None:
            node["parameters"] = dict(schema.parameters)
        if schema.default is not None:
            node["default"] = self._compile_encoder(schema)(schema.default)
        return node

    def _child_schema_json(self, schema: Schema | None) -> dict[str, Any] | None:
        return None if schema is None else self._schema_json(schema)

    def _child_encoder(self, schema: Schema | None) -> Callable[[Any], Any]:
        """The encoder of an element, key or value schema; without one, values are written as schemaless."""
        return infer_json if schema is None else self._compile_encoder(schema)

    def _compile_encoder(self, schema: Schema) -> Callable[[Any], Any]:
        """A function turning a Connect value of `schema` into what orjson writes as Kafka's bytes."""
        base = self._compile_base_encoder(schema)
        optional = schema.optional
        default_json = base(schema.default) if schema.default is not None and self.replace_null_with_default else None

        def encode(value: Any) -> Any:
            if value is None:
                if default_json is not None:
                    return default_json
                if optional:
                    return None
                raise DataError("Conversion error: null value for field that is required and has no default value")
            return base(value)

        return encode

    def _compile_base_encoder(self, schema: Schema) -> Callable[[Any], Any]:
        name = schema.name
        if name == DECIMAL_LOGICAL_NAME:
            return _encode_decimal(schema, self.decimal_numeric)
        if name == DATE_LOGICAL_NAME:
            return _encode_date
        if name == TIME_LOGICAL_NAME:
            return _encode_time
        if name == TIMESTAMP_LOGICAL_NAME:
            return _encode_timestamp
        type_ = schema.type
        label = _schema_type_name(schema)

        def invalid(value: Any) -> DataError:
            return DataError(f"Invalid type for {label}: {type(value)}")

        if type_ in _INT_BITS:
            bits = _INT_BITS[type_]
            low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

            def encode_int(value: Any) -> Any:
                if type(value) is int and low <= value <= high:
                    return value
                if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
                    return int(value)
                raise invalid(value)

            return encode_int
        if type_ == "float64":

            def encode_double(value: Any) -> Any:
                if type(value) is float:
                    return value if 1e-3 <= abs(value) < 1e7 or value == 0 else _double_json(value)
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    return _double_json(float(value))
                raise invalid(value)

            return encode_double
        if type_ == "float32":

            def encode_float(value: Any) -> Any:
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    return _float32_json(float(value))
                raise invalid(value)

            return encode_float
        if type_ == "boolean":

            def encode_bool(value: Any) -> Any:
                if value is True or value is False:
                    return value
                raise invalid(value)

            return encode_bool
        if type_ == "string":

            def encode_string(value: Any) -> Any:
                if type(value) is str:
                    return value
                if isinstance(value, str):
                    return str(value)
                raise invalid(value)

            return encode_string
        if type_ == "bytes":

            def encode_bytes(value: Any) -> Any:
                if isinstance(value, (bytes, bytearray, memoryview)):
                    return _b64(value)
                raise DataError(f"Invalid type for bytes type: {type(value)}")

            return encode_bytes
        if type_ == "array":
            item = self._child_encoder(schema.value_schema)

            def encode_array(value: Any) -> Any:
                if not isinstance(value, (list, tuple)):
                    raise invalid(value)
                return [item(v) for v in value]

            return encode_array
        if type_ == "map":
            if schema.key_schema is None:
                # Kafka cannot write these either (a NullPointerException on the missing key schema)
                def encode_keyless(value: Any) -> Any:
                    raise DataError("Cannot write a map whose schema has no key schema")

                return encode_keyless
            key_schema = schema.key_schema
            key_enc = self._compile_encoder(key_schema)
            val_enc = self._child_encoder(schema.value_schema)
            if key_schema.type == "string":

                def encode_object(value: Any) -> Any:
                    if not isinstance(value, dict):
                        raise invalid(value)
                    return {_as_text(key_enc(k)): val_enc(v) for k, v in value.items()}

                return encode_object

            def encode_pairs(value: Any) -> Any:
                if not isinstance(value, dict):
                    raise invalid(value)
                return [[key_enc(k), val_enc(v)] for k, v in value.items()]

            return encode_pairs
        # struct
        fields = [(f.name, self._compile_encoder(f.schema)) for f in schema.fields]

        def encode_struct(value: Any) -> Any:
            if not isinstance(value, dict):
                raise DataError("Mismatching schema.")
            get = value.get
            return {fname: enc(get(fname)) for fname, enc in fields}

        return encode_struct

    # ---- deserialization -----------------------------------------------------------------------

    def to_connect_data(self, topic: str, value: bytes | None) -> tuple[Schema | None, Any]:
        if value is None:
            return None, None
        envelope = self._last_envelope
        if envelope is not None and value.startswith(envelope[0]) and value.endswith(b"}"):
            # Same compact schema as the previous record (the usual case on a topic): parse only the
            # payload. Anything else after it (an extra field, spacing) fails here and takes the full path.
            try:
                payload = orjson.loads(value[len(envelope[0]) : -1])
            except orjson.JSONDecodeError:
                payload = _MISSING
            if payload is not _MISSING:
                schema, decoder, _, fast_check = envelope[1]
                if fast_check is not None and fast_check(payload):
                    return schema, payload
                return schema, decoder(payload)
        try:
            node = orjson.loads(value)
        except orjson.JSONDecodeError as exc:
            if not bytes(value).strip():
                node = _MISSING  # Jackson reads empty input as a MissingNode
            else:
                raise DataError(_TO_CONNECT_FAILED) from exc
        if not self.schemas_enabled:
            return None, (None if node is _MISSING else node)
        if type(node) is not dict or len(node) != 2 or "schema" not in node or "payload" not in node:
            raise DataError(ENVELOPE_MESSAGE)
        schema_node = node["schema"]
        if schema_node is None:
            return None, node["payload"]
        entry = self._decoder_entry(schema_node)
        schema, decoder, exact_decimals, fast_check = entry
        payload = node["payload"]
        if not exact_decimals:
            prefix = b'{"schema":' + orjson.dumps(schema_node) + b',"payload":'
            self._last_envelope = (prefix, entry) if value.startswith(prefix) else None
        if fast_check is not None and fast_check(payload):
            return schema, payload  # already exactly what the general decoder would build
        if exact_decimals:
            payload = _stdjson.loads(value, parse_float=decimal.Decimal)["payload"]
        return schema, decoder(payload)

    def as_connect_schema(self, schema_node: Any) -> Schema | None:
        """Parse Kafka's schema JSON (a parsed dict) into a Schema."""
        if schema_node is None:
            return None
        return self._decoder_entry(schema_node)[0]

    def _decoder_entry(self, schema_node: Any) -> _DecoderEntry:
        # A topic's records usually share one schema: a C-level dict comparison beats re-serializing it.
        last = self._last_decoder
        if last is not None and last[0] == schema_node:
            return last[1]
        key = orjson.dumps(schema_node)
        entry = self._decoders.get(key)
        if entry is None:
            schema = self._parse_schema(schema_node)
            entry = (schema, self._compile_decoder(schema), _contains_decimal(schema), _fast_check(schema))
            self._decoders.put(key, entry)
        self._last_decoder = (schema_node, entry)
        return entry

    def _parse_schema(self, node: Any) -> Schema:
        if node is None:
            raise DataError("Schema must contain 'type' field")
        type_node = node.get("type") if isinstance(node, dict) else None
        if type(type_node) is not str:
            raise DataError("Schema must contain 'type' field")
        if type_node not in _CONNECT_TYPES:
            raise DataError("Unknown schema type: " + type_node)
        type_ = _CONNECT_TYPES[type_node]
        kwargs: dict[str, Any] = {}
        if type_ == "array":
            items = node.get("items")
            if items is None:
                raise DataError("Array schema did not specify the element type")
            kwargs["value_schema"] = self._parse_schema(items)
        elif type_ == "map":
            if "keys" not in node:
                raise DataError("Map schema did not specify the key type")
            if "values" not in node:
                raise DataError("Map schema did not specify the value type")
            kwargs["key_schema"] = self._parse_schema(node["keys"])
            kwargs["value_schema"] = self._parse_schema(node["values"])
        elif type_ == "struct":
            fields_node = node.get("fields")
            if type(fields_node) is not list:
                raise DataError('Struct schema\'s "fields" argument is not an array.')
            fields = []
            for index, field_node in enumerate(fields_node):
                field_name = field_node.get("field") if isinstance(field_node, dict) else None
                if type(field_name) is not str:
                    raise DataError("Struct schema's field name not specified properly")
                fields.append(Field(field_name, index, self._parse_schema(field_node)))
            kwargs["fields"] = tuple(fields)
        kwargs["optional"] = node.get("optional") is True
        name = node.get("name")
        if type(name) is str:
            kwargs["name"] = name
        version = node.get("version")
        if type(version) is int:
            kwargs["version"] = _wrap(version, 32)
        doc = node.get("doc")
        if type(doc) is str:
            kwargs["doc"] = doc
        params = node.get("parameters")
        if isinstance(params, dict):
            if any(type(v) is not str for v in params.values()):
                raise DataError("Schema parameters must have string values.")
            kwargs["parameters"] = tuple(params.items()) if params else None
        schema = Schema(type_, **kwargs)
        if "default" in node:
            default = self._compile_decoder(schema)(node["default"])
            schema = Schema(type_, default=default, **kwargs)
        return schema

    def _compile_decoder(self, schema: Schema) -> Callable[[Any], Any]:
        base = self._compile_base_decoder(schema)
        default = schema.default if self.replace_null_with_default else None
        optional = schema.optional
        label = _schema_type_name(schema)

        def decode(value: Any) -> Any:
            if value is None:
                if default is not None:
                    return default
                if optional:
                    return None
                raise DataError(f"Invalid null value for required {label} field")
            return base(value)

        return decode

    def _compile_base_decoder(self, schema: Schema) -> Callable[[Any], Any]:
        name = schema.name
        if name == DECIMAL_LOGICAL_NAME:
            return _decode_decimal(schema)
        if name == DATE_LOGICAL_NAME:
            return _decode_date
        if name == TIME_LOGICAL_NAME:
            return _decode_time
        if name == TIMESTAMP_LOGICAL_NAME:
            return _decode_timestamp
        type_ = schema.type
        if type_ in _PRIMITIVE_DECODERS:
            return _PRIMITIVE_DECODERS[type_]
        if type_ == "array":
            item = self._compile_decoder(_require(schema.value_schema, schema))

            def decode_array(value: Any) -> Any:
                if type(value) is list:
                    return [item(v) for v in value]
                if type(value) is dict:  # Jackson's valueStream() over an object
                    return [item(v) for v in value.values()]
                return []

            return decode_array
        if type_ == "map":
            key_schema = _require(schema.key_schema, schema)
            key_dec = self._compile_decoder(key_schema)
            val_dec = self._compile_decoder(_require(schema.value_schema, schema))
            if key_schema.type == "string":

                def decode_object(value: Any) -> Any:
                    if type(value) is not dict:
                        raise DataError(
                            "Maps with string fields should be encoded as JSON objects, but found " + _node_type(value)
                        )
                    return {k: val_dec(v) for k, v in value.items()}

                return decode_object

            def decode_pairs(value: Any) -> Any:
                if type(value) is not list:
                    raise DataError(
                        "Maps with non-string fields should be encoded as JSON array of tuples, but found "
                        + _node_type(value)
                    )
                result = {}
                for pair in value:
                    if type(pair) is not list:
                        raise DataError("Found invalid map entry instead of array tuple: " + _node_type(pair))
                    if len(pair) != 2:
                        raise DataError(f"Found invalid map entry, expected length 2 but found :{len(pair)}")
                    result[_hashable(key_dec(pair[0]))] = val_dec(pair[1])
                return result

            return decode_pairs
        # struct
        fields = []
        for f in schema.fields:
            # Struct.put rejects a null a lenient string/bytes decode produced for a required field.
            check = not f.schema.optional and f.schema.type in ("string", "bytes") and f.schema.name is None
            fields.append((f.name, self._compile_decoder(f.schema), check, f.schema.type.upper()))

        def decode_struct(value: Any) -> Any:
            if type(value) is not dict:
                raise DataError("Structs should be encoded as JSON objects, but found " + _node_type(value))
            get = value.get
            result = {}
            for fname, dec, check, label in fields:
                v = dec(get(fname))
                if check and v is None:
                    raise DataError(f'Invalid value: null used for required field: "{fname}", schema type: {label}')
                result[fname] = v
            return result

        return decode_struct


_MISSING = object()


def _require(child: Schema | None, parent: Schema) -> Schema:
    if child is None:
        raise DataError(f"Couldn't translate unsupported schema type {parent}.")
    return child


def _as_text(key_json: Any) -> str:
    """Jackson's asText() of a map key node (string keys; a null key reads "null")."""
    if type(key_json) is str:
        return key_json
    return "null" if key_json is None else orjson.dumps(key_json).decode()


def _hashable(key: Any) -> Any:
    if isinstance(key, list):
        return tuple(_hashable(k) for k in key)
    if isinstance(key, dict):
        return tuple((k, _hashable(v)) for k, v in key.items())
    return key
