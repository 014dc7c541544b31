"""Helpers shared by the bundled transforms: Kafka's Requirements, SchemaUtil and SimpleConfig, plus the
struct conventions of this runtime (a STRUCT value is a plain dict keyed by field name).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

from ..api.config import ConfigDef
from ..api.data import Field, Schema
from ..api.errors import ConfigError, DataError
from ..api.records import ConnectRecord, SinkRecord
from ..api.transforms import Transformation

REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
REPLACE_NULL_WITH_DEFAULT_DOC = (
    "Whether to replace fields that have a default value and that are null to the default value. "
    "When set to true, the default value is used, otherwise null is used."
)


# ---- messages ---------------------------------------------------------------------------------


def java_str(value: Any) -> str:
    """`String.valueOf` of a config value as Java would print it (lists as `[a, b]`, null, true)."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(java_str(v) for v in value) + "]"
    return str(value)


def invalid(name: str, value: Any, message: str) -> ConfigError:
    """Kafka's `new ConfigException(name, value, message)`."""
    return ConfigError(f"Invalid value {java_str(value)} for configuration {name}: {message}")


_JAVA_INTEGERS = {"int8": "java.lang.Byte", "int16": "java.lang.Short", "int32": "java.lang.Integer"}


def java_class_name(value: Any, schema: Schema | None = None) -> str:
    """`value.getClass().getName()` of the object the reference holds for `value`, for messages that print it.

    Integers and floats take their width from `schema` (schemaless JSON numbers are Long and Double in Kafka).
    """
    if value is None:
        return "null"
    kind = schema.type if schema is not None else None
    if isinstance(value, bool):
        return "java.lang.Boolean"
    if isinstance(value, int):
        return _JAVA_INTEGERS.get(kind or "", "java.lang.Long")
    if isinstance(value, float):
        return "java.lang.Float" if kind == "float32" else "java.lang.Double"
    if isinstance(value, str):
        return "java.lang.String"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "[B"
    if isinstance(value, dict):
        return "org.apache.kafka.connect.data.Struct" if kind == "struct" else "java.util.HashMap"
    if isinstance(value, (list, tuple)):
        return "java.util.ArrayList"
    if isinstance(value, decimal.Decimal):
        return "java.math.BigDecimal"
    if isinstance(value, (_dt.date, _dt.time)):
        return "java.util.Date"
    if isinstance(value, SinkRecord):
        return "org.apache.kafka.connect.sink.SinkRecord"
    if isinstance(value, ConnectRecord):
        return "org.apache.kafka.connect.source.SourceRecord"
    return f"{type(value).__module__}.{type(value).__qualname__}"


def class_name_of(value: Any, schema: Schema | None = None) -> str:
    """What Kafka's messages print for `value.getClass()` (`class java.lang.Long`), or `null`."""
    return "null" if value is None else f"class {java_class_name(value, schema)}"


def java_schema_str(schema: Schema | None) -> str:
    """ConnectSchema.toString: `Schema{NAME:TYPE}` or `Schema{TYPE}`."""
    if schema is None:
        return "null"
    kind = schema.type.upper()
    return f"Schema{{{schema.name}:{kind}}}" if schema.name else f"Schema{{{kind}}}"


class SchemaBuilderError(DataError):
    """Kafka's SchemaBuilderException (a DataException): e.g. two fields of one name."""


def unique_fields(fields: Iterable[tuple[str, Schema]]) -> list[tuple[str, Schema]]:
    """`fields` as SchemaBuilder.field accepts them: a repeated name fails as it does in Kafka."""
    seen: set[str] = set()
    out = []
    for name, schema in fields:
        if name in seen:
            raise SchemaBuilderError(f"Cannot create field because of field name duplication {name}")
        seen.add(name)
        out.append((name, schema))
    return out


class NonEmptyString:
    """ConfigDef.NonEmptyString, with Kafka's message (the framework's own validator words it differently)."""

    def __call__(self, name: str, value: Any) -> None:
        if value is not None and not str(value).strip():
            raise invalid(name, value, "String must be non-empty")

    def __str__(self) -> str:
        return "non-empty string"


# ---- validators (Kafka's transforms.util) -----------------------------------------------------


class NonEmptyList:
    def __call__(self, name: str, value: Any) -> None:
        if value is None or len(value) == 0:
            raise invalid(name, value, "Empty list")

    def __str__(self) -> str:
        return "non-empty list"


class RegexValidator:
    def __call__(self, name: str, value: Any) -> None:
        try:
            re.compile(java_regex(value))
        except (re.error, TypeError) as exc:
            raise invalid(name, value, f"Invalid regex: {exc}") from None

    def __str__(self) -> str:
        return "valid regex"


class Composite:
    def __init__(self, *validators: Callable[[str, Any], None]) -> None:
        self.validators = validators

    def __call__(self, name: str, value: Any) -> None:
        for validator in self.validators:
            validator(name, value)

    def __str__(self) -> str:
        return ", ".join(str(v) for v in self.validators)


class Lambda:
    """Kafka's LambdaValidator: a check plus the text shown as `valid values`."""

    def __init__(self, check: Callable[[str, Any], object], text: str) -> None:  # what check returns is unused
        self.check = check
        self.text = text

    def __call__(self, name: str, value: Any) -> None:
        self.check(name, value)

    def __str__(self) -> str:
        return self.text


def parse_config(definition: ConfigDef, props: Mapping[str, Any]) -> dict[str, Any]:
    """Kafka's SimpleConfig: typed values of `definition`, raising ConfigError on the first problem."""
    return definition.parse(props)


# ---- regular expressions ----------------------------------------------------------------------

_NAMED_GROUP = re.compile(r"\(\?<(?=[A-Za-z])")
_POSSESSIVE = re.compile(r"(?<!\\)([*+?}])\+")


def java_regex(pattern: str) -> str:
    """A java.util.regex pattern in Python's dialect (named groups, possessive quantifiers, \\Q..\\E)."""
    out = _NAMED_GROUP.sub("(?P<", pattern)
    out = _POSSESSIVE.sub(r"\1", out)
    if "\\Q" in out:
        out = re.sub(r"\\Q(.*?)(?:\\E|$)", lambda m: re.escape(m.group(1)), out, flags=re.S)
    return out


def java_replacement(replacement: str) -> Callable[[re.Match[str]], str]:
    """`Matcher.replaceFirst` replacement text (`$1`, `${name}`, `\\$`) as a function of the match."""
    parts: list[str | tuple[str, str]] = []  # literal text, or ("digits" | "name", reference)
    literal: list[str] = []
    i = 0
    while i < len(replacement):
        c = replacement[i]
        if c == "\\":
            if i + 1 >= len(replacement):
                raise ValueError("character to be escaped is missing")
            literal.append(replacement[i + 1])
            i += 2
            continue
        if c != "$":
            literal.append(c)
            i += 1
            continue
        if literal:
            parts.append("".join(literal))
            literal = []
        i += 1
        if i < len(replacement) and replacement[i] == "{":
            end = replacement.find("}", i)
            if end < 0:
                raise ValueError("named capturing group is missing trailing '}'")
            parts.append(("name", replacement[i + 1 : end]))
            i = end + 1
            continue
        digits = re.match(r"\d+", replacement[i:])
        if digits is None:
            raise ValueError("Illegal group reference")
        parts.append(("digits", digits.group(0)))
        i += len(digits.group(0))
    if literal:
        parts.append("".join(literal))

    def reference(match: re.Match[str], kind: str, ref: str) -> str:
        if kind == "name":
            if ref not in match.re.groupindex:
                raise ValueError(f"No group with name {{{ref}}}")
            return match.group(ref) or ""
        # Java reads the first digit, then more digits only while they still name an existing group
        number, used = int(ref[0]), 1
        while used < len(ref) and number * 10 + int(ref[used]) <= match.re.groups:
            number, used = number * 10 + int(ref[used]), used + 1
        if number > match.re.groups:
            raise IndexError(f"No group {number}")  # Matcher.start(int)
        return (match.group(number) or "") + ref[used:]

    def expand(match: re.Match[str]) -> str:
        return "".join(p if isinstance(p, str) else reference(match, *p) for p in parts)

    return expand


# ---- requirements ----------------------------------------------------------------------------


def require_map(value: Any, purpose: str) -> dict:
    if not isinstance(value, dict):
        raise DataError(
            f"Only Map objects supported in absence of schema for [{purpose}], found: {java_class_name(value)}"
        )
    return value


def require_struct(value: Any, schema: Schema | None, purpose: str) -> dict:
    if not isinstance(value, dict) or schema is None or schema.type != "struct":
        raise DataError(f"Only Struct objects supported for [{purpose}], found: {java_class_name(value, schema)}")
    return value


def require_schema(schema: Schema | None, purpose: str) -> Schema:
    if schema is None:
        raise DataError(f"Schema required for [{purpose}]")
    return schema


def require_sink_record(record: ConnectRecord, purpose: str) -> SinkRecord:
    if not isinstance(record, SinkRecord):
        raise DataError(f"Only SinkRecord supported for [{purpose}], found: {java_class_name(record)}")
    return record


# ---- structs and schemas ----------------------------------------------------------------------


def field_value(struct: Mapping[str, Any], field: Field, with_default: bool = True) -> Any:
    """Struct.get (null falls back to the field's default) or getWithoutDefault."""
    value = struct.get(field.name)
    if value is None and with_default:
        return field.schema.default
    return value


def struct_schema(
    fields: Iterable[tuple[str, Schema]], basics: Schema | None = None, optional: bool = False, default: Any = None
) -> Schema:
    """A STRUCT schema with `fields`, copying name/version/doc/parameters from `basics` (copySchemaBasics)."""
    built = tuple(Field(name, index, schema) for index, (name, schema) in enumerate(fields))
    if basics is None:
        return Schema("struct", optional=optional, default=default, fields=built)
    return Schema(
        "struct",
        optional=optional,
        default=default,
        name=basics.name,
        version=basics.version,
        doc=basics.doc,
        parameters=basics.parameters,
        fields=built,
    )


def copy_basics(source: Schema, type_: str, optional: bool = False, default: Any = None) -> Schema:
    """copySchemaBasics onto a fresh builder of `type_` (array keeps its element schema)."""
    return Schema(
        type_,
        optional=optional,
        default=default,
        name=source.name,
        version=source.version,
        doc=source.doc,
        parameters=source.parameters,
        value_schema=source.value_schema if type_ == "array" else None,
    )


class SchemaCache:
    """Kafka's LRUCache(16) of schema translations, keyed by identity (schemas may hold unhashable defaults)."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self._entries: OrderedDict[int, tuple[Schema, Any]] = OrderedDict()

    def get(self, schema: Schema) -> Any:
        entry = self._entries.get(id(schema))
        if entry is None or entry[0] is not schema:
            return None
        self._entries.move_to_end(id(schema))
        return entry[1]

    def put(self, schema: Schema, translated: Any) -> None:
        self._entries[id(schema)] = (schema, translated)  # holding `schema` keeps its id from being reused
        self._entries.move_to_end(id(schema))
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def get_or_build(self, schema: Schema, build: Callable[[Schema], Any]) -> Any:
        found = self.get(schema)
        if found is None:
            found = build(schema)
            self.put(schema, found)
        return found


# ---- Key/Value variants ----------------------------------------------------------------------


class KeyOrValue(Transformation):
    """Base of the `$Key`/`$Value` pairs: which side of the record a transform reads and rewrites."""

    # The family's two classes (Kafka's `Cast$Key` is `Cast.Key`), set by key_and_value.
    Key: ClassVar[type]
    Value: ClassVar[type]

    def operating_schema(self, record: ConnectRecord) -> Schema | None:
        raise NotImplementedError

    def operating_value(self, record: ConnectRecord) -> Any:
        raise NotImplementedError

    def new_record(self, record: ConnectRecord, schema: Schema | None, value: Any, **changes: Any) -> ConnectRecord:
        raise NotImplementedError


class OnKey:
    def operating_schema(self, record: ConnectRecord) -> Schema | None:
        return record.key_schema

    def operating_value(self, record: ConnectRecord) -> Any:
        return record.key

    def new_record(self, record: ConnectRecord, schema: Schema | None, value: Any, **changes: Any) -> ConnectRecord:
        return record.new_record(key_schema=schema, key=value, **changes)


class OnValue:
    def operating_schema(self, record: ConnectRecord) -> Schema | None:
        return record.value_schema

    def operating_value(self, record: ConnectRecord) -> Any:
        return record.value

    def new_record(self, record: ConnectRecord, schema: Schema | None, value: Any, **changes: Any) -> ConnectRecord:
        return record.new_record(value_schema=schema, value=value, **changes)


def key_and_value(base: type[KeyOrValue], module: str) -> tuple[type, type]:
    """The `<Base>Key` and `<Base>Value` classes of a family, also reachable as `Base.Key`/`Base.Value`."""
    key = type(
        f"{base.__name__}Key",
        (OnKey, base),
        {"__module__": module, "__doc__": f"{base.__name__}$Key: applies to the record key."},
    )
    value = type(
        f"{base.__name__}Value",
        (OnValue, base),
        {"__module__": module, "__doc__": f"{base.__name__}$Value: applies to the record value."},
    )
    base.Key, base.Value = key, value
    return key, value
