"""Config definitions: the typed, documented keys a plugin accepts (Java's ConfigDef).

They power `GET /connector-plugins/{p}/config`, the validate endpoint and `parse()` inside plugins.
Messages follow Kafka's wording so that clients matching on them keep working.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .errors import ConfigError


class Type(str, enum.Enum):
    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    INT = "INT"
    SHORT = "SHORT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"
    CLASS = "CLASS"
    PASSWORD = "PASSWORD"


class Importance(str, enum.Enum):
    HIGH = "HIGH"
    MEDIUM = "MEDIUM"
    LOW = "LOW"


class Width(str, enum.Enum):
    NONE = "NONE"
    SHORT = "SHORT"
    MEDIUM = "MEDIUM"
    LONG = "LONG"


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()
HIDDEN = "[hidden]"


class Password:
    """A secret value: printed as `[hidden]` everywhere, read with `.value`."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return HIDDEN

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Password) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)


class Validator(Protocol):
    def __call__(self, name: str, value: Any) -> None:
        """Raise ConfigError when `value` is not acceptable for `name`."""


_INT_RANGES = {Type.INT: (-(2**31), 2**31 - 1), Type.SHORT: (-(2**15), 2**15 - 1), Type.LONG: (-(2**63), 2**63 - 1)}
_TYPE_NAMES = {Type.INT: "32-bit integer", Type.SHORT: "16-bit integer", Type.LONG: "64-bit integer"}


def parse_type(name: str, value: Any, type_: Type) -> Any:
    """Convert a raw (usually string) value to the Python value of `type_`, as Kafka's ConfigDef does."""
    if value is None:
        return None
    trimmed = value.strip() if isinstance(value, str) else value
    try:
        if type_ is Type.BOOLEAN:
            if isinstance(trimmed, bool):
                return trimmed
            if isinstance(trimmed, str) and trimmed.lower() in ("true", "false"):
                return trimmed.lower() == "true"
            raise ConfigError(name, value, "Expected value to be either true or false")
        if type_ is Type.PASSWORD:
            if isinstance(value, Password):
                return value
            if isinstance(value, str):
                return Password(value)
            raise ConfigError(name, value, "Expected value to be a string, but it was a " + type(value).__name__)
        if type_ is Type.STRING:
            if isinstance(trimmed, str):
                return trimmed
            raise ConfigError(name, value, "Expected value to be a string, but it was a " + type(value).__name__)
        if type_ in _INT_RANGES:
            if isinstance(trimmed, bool):
                raise ValueError
            number = int(trimmed) if isinstance(trimmed, (int, str)) else None
            if number is None:
                raise ValueError
            low, high = _INT_RANGES[type_]
            if not low <= number <= high:
                raise ValueError
            return number
        if type_ is Type.DOUBLE:
            if isinstance(trimmed, bool):
                raise ValueError
            return float(trimmed)
        if type_ is Type.LIST:
            if isinstance(value, (list, tuple)):
                return list(value)
            if isinstance(trimmed, str):
                return [] if trimmed == "" else [part.strip() for part in trimmed.split(",")]
            raise ConfigError(name, value, "Expected a comma separated list.")
        if type_ is Type.CLASS:
            if isinstance(value, type):
                return value
            if isinstance(trimmed, str):
                return trimmed
            raise ConfigError(name, value, "Expected a Class instance or class name.")
    except ValueError:
        if type_ in _TYPE_NAMES:
            raise ConfigError(name, value, f"Not a number of type {type_.value}") from None
        raise ConfigError(name, value, f"Not a number of type {type_.value}") from None
    raise ConfigError(f"Unknown type {type_}")  # pragma: no cover - all enum members handled


def format_value(value: Any, type_: Type) -> str | None:
    """Render a parsed value the way Kafka's REST layer shows it (lists comma-joined, passwords hidden)."""
    if value is None or value is NO_DEFAULT:
        return None
    if type_ is Type.PASSWORD or isinstance(value, Password):
        return HIDDEN
    if type_ is Type.LIST and isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    if type_ is Type.BOOLEAN and isinstance(value, bool):
        return "true" if value else "false"
    if type_ is Type.CLASS and isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    return str(value)


# ---- validators -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Range:
    """Numeric bounds, inclusive (`Range.at_least(1)`, `Range.between(0, 10)`)."""

    min: float | None = None
    max: float | None = None

    @classmethod
    def at_least(cls, minimum: float) -> Range:
        return cls(minimum, None)

    @classmethod
    def between(cls, minimum: float, maximum: float) -> Range:
        return cls(minimum, maximum)

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigError(name, None, "Value must be non-null")
        if self.min is not None and value < self.min:
            raise ConfigError(name, value, f"Value must be at least {_num(self.min)}")
        if self.max is not None and value > self.max:
            raise ConfigError(name, value, f"Value must be no more than {_num(self.max)}")

    def __str__(self) -> str:
        if self.max is None:
            return f"[{_num(self.min)},...]"
        if self.min is None:
            return f"[...,{_num(self.max)}]"
        return f"[{_num(self.min)},...,{_num(self.max)}]"


def _num(x: float | None) -> str:
    return str(int(x)) if isinstance(x, float) and x.is_integer() else str(x)


def _java_string_hash(text: str) -> int:
    h = 0
    raw = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(raw), 2):
        h = (31 * h + (raw[i] << 8 | raw[i + 1])) & 0xFFFFFFFF
    return h


def _hashmap_capacity(size: int) -> int:
    capacity = 16
    while size > capacity * 3 // 4:
        capacity *= 2
    return capacity


def java_hash_order(keys: Iterable[str]) -> list[str]:
    """The strings in the order a java.util.HashMap (or HashSet) filled with them in this order iterates them:
    by bucket, and within a bucket in insertion order. Kafka's messages and stored records list such sets."""
    keys = list(keys)
    mask = _hashmap_capacity(len(keys)) - 1
    buckets: dict[int, list[str]] = {}
    for key in keys:
        h = _java_string_hash(key)
        buckets.setdefault((h ^ (h >> 16)) & mask, []).append(key)
    return [k for index in sorted(buckets) for k in buckets[index]]


@dataclass(frozen=True)
class ValidString:
    """The value must be one of `choices` (case-insensitive when asked)."""

    choices: tuple[str, ...]
    case_insensitive: bool = False

    @classmethod
    def of(cls, *choices: str, case_insensitive: bool = False) -> ValidString:
        return cls(tuple(choices), case_insensitive)

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigError(name, None, "Value must be non-null")
        options = [c.lower() for c in self.choices] if self.case_insensitive else list(self.choices)
        probe = value.lower() if self.case_insensitive and isinstance(value, str) else value
        if probe not in options:
            raise ConfigError(
                name,
                value,
                f"String must be one of{' (case insensitive)' if self.case_insensitive else ''}: {', '.join(self._shown())}",
            )

    def _shown(self) -> list[str]:
        """Kafka's CaseInsensitiveValidString keeps the choices upper-cased in a HashSet: shown so."""
        if self.case_insensitive:
            return java_hash_order(dict.fromkeys(c.upper() for c in self.choices))
        return list(self.choices)

    def __str__(self) -> str:
        shown = "[" + ", ".join(self._shown()) + "]"
        return f"(case insensitive) {shown}" if self.case_insensitive else shown


class NonEmptyString:
    """Non-empty string without ISO control characters (Kafka's NonEmptyStringWithoutControlChars)."""

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigError(name, None, "String may not be null")
        if value == "":
            raise ConfigError(name, value, "String may not be empty")
        controls = [c for c in value if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F]
        if controls:
            codes = ", ".join(str(ord(c)) for c in controls)
            raise ConfigError(
                name, value, f"String may not contain control sequences but had the following ASCII chars: {codes}"
            )

    def __str__(self) -> str:
        return "non-empty string without ISO control characters"


class NonNull:
    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigError(name, None, "Value must be non-null")

    def __str__(self) -> str:
        return "non-null"


@dataclass(frozen=True)
class ValidList:
    """Every list element must be one of `choices`."""

    choices: tuple[str, ...]

    def __call__(self, name: str, value: Any) -> None:
        for element in value or []:
            ValidString(self.choices)(name, element)

    def __str__(self) -> str:
        return "[" + ", ".join(self.choices) + "]"


@dataclass(frozen=True)
class ValidRegex:
    """The value must compile as a regular expression."""

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            return
        try:
            re.compile(value)
        except re.error as exc:
            raise ConfigError(name, value, f"Invalid regex: {exc}") from None


# ---- keys, values, definitions -----------------------------------------------------------------


@dataclass
class ConfigKey:
    name: str
    type: Type
    default: Any = NO_DEFAULT
    validator: Callable[[str, Any], None] | None = None
    importance: Importance = Importance.MEDIUM
    documentation: str = ""
    group: str | None = None
    order_in_group: int = -1
    width: Width = Width.NONE
    display_name: str | None = None
    dependents: list[str] = field(default_factory=list)
    internal: bool = False

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    def to_info(self) -> dict[str, Any]:
        """The ConfigKeyInfo shape of `GET /connector-plugins/{p}/config`."""
        return {
            "name": self.name,
            "type": self.type.value,
            "required": not self.has_default,
            "default_value": format_value(self.default, self.type) if self.has_default else None,
            "importance": self.importance.value,
            "documentation": self.documentation,
            "group": self.group,
            "order": self.order_in_group,
            "width": self.width.value,
            "display_name": self.display_name or self.name,
            "dependents": list(self.dependents),
        }


@dataclass
class ConfigValue:
    """A validated value with its errors (Java's ConfigValue)."""

    name: str
    value: Any = None
    recommended_values: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    visible: bool = True

    def add_error(self, message: str) -> None:
        self.errors.append(message)


class ConfigDef:
    """An ordered set of ConfigKeys; `define()` chains like Kafka's."""

    def __init__(self, keys: Iterable[ConfigKey] = ()) -> None:
        self._keys: dict[str, ConfigKey] = {}
        self.groups: list[str] = []
        for key in keys:
            self.define_key(key)

    def define_key(self, key: ConfigKey) -> ConfigDef:
        if key.name in self._keys:
            raise ConfigError(f"Configuration {key.name} is defined twice.")
        if key.has_default and key.default is not None:
            key.default = parse_type(key.name, key.default, key.type)
            if key.validator is not None:
                key.validator(key.name, key.default)
        self._keys[key.name] = key
        if key.group and key.group not in self.groups:
            self.groups.append(key.group)
        return self

    def define(
        self,
        name: str,
        type: Type,
        default: Any = NO_DEFAULT,
        validator: Callable[[str, Any], None] | None = None,
        importance: Importance = Importance.MEDIUM,
        documentation: str = "",
        group: str | None = None,
        order_in_group: int = -1,
        width: Width = Width.NONE,
        display_name: str | None = None,
        dependents: Sequence[str] = (),
    ) -> ConfigDef:
        return self.define_key(
            ConfigKey(
                name,
                type,
                default,
                validator,
                importance,
                documentation,
                group,
                order_in_group,
                width,
                display_name,
                list(dependents),
            )
        )

    def define_internal(
        self, name: str, type: Type, default: Any = NO_DEFAULT, importance: Importance = Importance.LOW
    ) -> ConfigDef:
        return self.define_key(ConfigKey(name, type, default, None, importance, internal=True))

    @property
    def keys(self) -> dict[str, ConfigKey]:
        return self._keys

    def names(self) -> list[str]:
        return list(self._keys)

    def __contains__(self, name: str) -> bool:
        return name in self._keys

    def merged_with(self, other: ConfigDef) -> ConfigDef:
        """This definition plus the keys of `other` that it does not define yet."""
        merged = ConfigDef(list(self._keys.values()))
        for key in other._keys.values():
            if key.name not in merged:
                merged._keys[key.name] = key
                if key.group and key.group not in merged.groups:
                    merged.groups.append(key.group)
        return merged

    def parse_value(self, key: ConfigKey, raw: Any, present: bool) -> Any:
        if present:
            value = parse_type(key.name, raw, key.type)
        elif key.has_default:
            value = key.default
        else:
            raise ConfigError(f'Missing required configuration "{key.name}" which has no default value.')
        # an optional key (default None) left unset is not validated, as Kafka's null-tolerant validators do
        if key.validator is not None and not (value is None and key.has_default and key.default is None):
            key.validator(key.name, value)
        return value

    def parse(self, props: Mapping[str, Any]) -> dict[str, Any]:
        """Typed values for every defined key; raises ConfigError on the first problem."""
        return {key.name: self.parse_value(key, props.get(key.name), key.name in props) for key in self._keys.values()}

    def validate(self, props: Mapping[str, Any]) -> list[ConfigValue]:
        """One ConfigValue per defined key, errors collected rather than raised."""
        results = []
        for key in self._keys.values():
            config_value = ConfigValue(key.name)
            present = key.name in props
            try:
                parsed = self.parse_value(key, props.get(key.name), present)
                config_value.value = parsed
            except ConfigError as exc:
                config_value.add_error(str(exc))
                config_value.value = props.get(key.name)
            results.append(config_value)
        return results


class AbstractConfig:
    """Parsed values of a ConfigDef, with typed getters (Java's AbstractConfig)."""

    def __init__(self, definition: ConfigDef, originals: Mapping[str, Any]) -> None:
        self.definition = definition
        self.originals = dict(originals)
        self.values = definition.parse(originals)

    def get(self, name: str) -> Any:
        if name not in self.values:
            raise ConfigError(f"Unknown configuration '{name}'")
        return self.values[name]

    def get_str(self, name: str) -> str | None:
        return self.get(name)

    def get_int(self, name: str) -> int:
        return self.get(name)

    def get_bool(self, name: str) -> bool:
        return self.get(name)

    def get_list(self, name: str) -> list[str]:
        return self.get(name) or []

    def get_password(self, name: str) -> str | None:
        value = self.get(name)
        return value.value if isinstance(value, Password) else value

    def originals_with_prefix(self, prefix: str, strip: bool = True) -> dict[str, Any]:
        return {(k[len(prefix) :] if strip else k): v for k, v in self.originals.items() if k.startswith(prefix)}
