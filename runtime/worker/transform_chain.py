"""Transformation chains built from a connector's `transforms` / `predicates` settings, and their validation.

Config shape (Kafka Connect's ConnectorConfig):
    transforms=a,b                      aliases, applied in order
    transforms.a.type=<class>           resolved with `resolve(name, "transformation")`
    transforms.a.<setting>=...          the transform's own settings (prefix stripped)
    transforms.a.predicate=p            optional: apply `a` only to records `p` matches...
    transforms.a.negate=true            ...or, negated, only to records it does not match
    predicates=p
    predicates.p.type=<class>           resolved with `resolve(name, "predicate")`
    predicates.p.<setting>=...

`validate_transforms` reproduces what Kafka's validate endpoint reports for these keys (ConnectorConfig.enrich
followed by ConfigDef.validateAll): one entry per `<prefix>type` plus the plugin's own keys embedded under the
alias prefix, with Kafka's messages.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..api.config import NO_DEFAULT, ConfigDef, ConfigKey, ConfigValue, Importance, Type, Width, parse_type
from ..api.errors import ConfigError, ConnectError
from ..api.records import ConnectRecord
from ..api.transforms import Predicate, Transformation

# What a plugin name names (None: nothing); _check_class rejects anything but a class of the right kind.
Resolve = Callable[[str, str], object]
# A transformation returns the kind of record it was given (Kafka's Transformation<R extends ConnectRecord<R>>)
R = TypeVar("R", bound=ConnectRecord)

log = logging.getLogger(__name__)

TRANSFORMS_CONFIG = "transforms"
PREDICATES_CONFIG = "predicates"
PREDICATE_CONFIG = "predicate"
NEGATE_CONFIG = "negate"
_KINDS = {  # kind -> (alias list key, group prefix, base class, Kafka's simple name of the base)
    "transformation": (TRANSFORMS_CONFIG, "Transforms", Transformation, "Transformation"),
    "predicate": (PREDICATES_CONFIG, "Predicates", Predicate, "Predicate"),
}


def _aliases(config: Mapping[str, Any], key: str) -> list[str]:
    raw = config.get(key)
    if raw is None:
        return []
    return parse_type(key, raw, Type.LIST)


def _with_prefix(config: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    return {k[len(prefix) :]: v for k, v in config.items() if k.startswith(prefix)}


def _java_class(cls: type) -> str:
    return f"class {cls.__module__}.{cls.__qualname__}"


# ---- the chain --------------------------------------------------------------------------------


@dataclass
class TransformationStage:
    """One transform, optionally guarded by a predicate (Kafka's TransformationStage)."""

    alias: str
    transformation: Transformation
    predicate: Predicate | None = None
    negate: bool = False

    def apply(self, record: R) -> R | None:
        if self.predicate is not None and self.negate == bool(self.predicate.test(record)):
            return record
        return self.transformation.apply(record)

    def close(self) -> None:
        try:
            self.transformation.close()
        finally:
            if self.predicate is not None:
                self.predicate.close()


class TransformationChain:
    """The configured transforms in order. `apply` returns the transformed record, or None when dropped.

    Runners should test `chain.empty` once and skip `apply` entirely when there is nothing to do.
    """

    def __init__(self, config: Mapping[str, Any], resolve: Resolve) -> None:
        self.stages: list[TransformationStage] = []
        try:
            for alias in _aliases(config, TRANSFORMS_CONFIG):
                self.stages.append(self._stage(config, alias, resolve))
        except Exception:
            self.close()
            raise
        self.empty = not self.stages

    @staticmethod
    def _stage(config: Mapping[str, Any], alias: str, resolve: Resolve) -> TransformationStage:
        prefix = f"{TRANSFORMS_CONFIG}.{alias}."
        transformation = _instantiate(config, prefix, "transformation", resolve)
        settings = _with_prefix(config, prefix)
        predicate_alias = settings.pop(PREDICATE_CONFIG, None)
        negate = settings.pop(NEGATE_CONFIG, None)
        _configure(transformation, settings, prefix)
        if predicate_alias is None:
            return TransformationStage(alias, transformation)
        predicate_prefix = f"{PREDICATES_CONFIG}.{str(predicate_alias).strip()}."
        predicate = _instantiate(config, predicate_prefix, "predicate", resolve)
        _configure(predicate, _with_prefix(config, predicate_prefix), predicate_prefix)
        return TransformationStage(alias, transformation, predicate, str(negate).strip().lower() == "true")

    def apply(self, record: R) -> R | None:
        for stage in self.stages:
            transformed = stage.apply(record)
            if transformed is None:
                return None
            record = transformed
        return record

    def close(self) -> None:
        for stage in self.stages:
            try:
                stage.close()
            except Exception:  # a plugin's close: one failing must not leave the others open
                log.exception("Failed to close the %s transformation", stage.alias)

    def __len__(self) -> int:
        return len(self.stages)

    def __repr__(self) -> str:
        return "TransformationChain{" + ", ".join(type(s.transformation).__name__ for s in self.stages) + "}"


def _instantiate(config: Mapping[str, Any], prefix: str, kind: str, resolve: Resolve) -> Any:
    name = config.get(prefix + "type")
    if name is None:
        raise ConfigError(f'Missing required configuration "{prefix}type" which has no default value.')
    cls = _check_class(str(name).strip(), kind, resolve, prefix + "type")
    if isinstance(cls, str):
        raise ConfigError(cls)
    try:
        return cls()
    except Exception as exc:
        raise ConnectError(f"Could not instantiate {kind} {name}: {exc}") from exc


def _configure(plugin: Any, settings: dict[str, Any], prefix: str) -> None:
    try:
        plugin.configure(settings)
    except Exception as exc:
        raise ConnectError(f"Invalid configuration of {prefix.rstrip('.')} ({type(plugin).__name__}): {exc}") from exc


def _check_class(name: str, kind: str, resolve: Resolve, key: str) -> type | str:
    """The class for `name`, or the message Kafka gives for a missing, wrong-kind or abstract class."""
    base, base_name = _KINDS[kind][2], _KINDS[kind][3]
    try:
        cls = resolve(name, kind)
    except Exception:  # noqa: BLE001 - a plugin whose import raises anything cannot be loaded: "not found"
        cls = None
    if cls is None:
        return f"Invalid value {name} for configuration {key}: Class {name} could not be found."
    if not isinstance(cls, type) or not issubclass(cls, base):
        return (
            f"Class {_java_class(cls) if isinstance(cls, type) else cls} does not implement the {base_name} interface"
        )
    if inspect.isabstract(cls):
        return "This class is abstract and cannot be created."
    return cls


# ---- validation -------------------------------------------------------------------------------


@dataclass
class TransformValidation:
    """What the validate endpoint adds for transforms and predicates.

    `entries` are (definition, value) pairs for `transforms.<a>.type`, `predicates.<p>.type` and the keys
    embedded from each plugin's ConfigDef, in Kafka's order; `alias_errors` are errors of the framework's own
    `transforms` / `predicates` keys (duplicate aliases); `groups` are the extra groups ("Transforms: a").
    """

    entries: list[tuple[ConfigKey, ConfigValue]] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    alias_errors: dict[str, list[str]] = field(default_factory=dict)

    def errors(self) -> list[tuple[str, str]]:
        found = [(key, message) for key, messages in self.alias_errors.items() for message in messages]
        found += [(value.name, message) for _, value in self.entries for message in value.errors]
        return found


def validate_transform_configs(config: Mapping[str, Any], resolve: Resolve) -> list[tuple[str, str]]:
    """(config key, error message) pairs for the transform and predicate settings of a connector config."""
    return validate_transforms(config, resolve).errors()


def validate_transforms(config: Mapping[str, Any], resolve: Resolve) -> TransformValidation:
    result = TransformValidation()
    present = {k: v for k, v in config.items() if v is not None}
    predicate_aliases: list[str] = []
    for kind in ("transformation", "predicate"):
        alias_key, group_prefix, _, base_name = _KINDS[kind]
        try:
            aliases = _aliases(present, alias_key)
        except ConfigError:
            continue  # the framework's own validation of the list reports this
        if kind == "predicate":
            predicate_aliases = aliases
        if len(aliases) > len(set(aliases)):
            result.alias_errors.setdefault(alias_key, []).append(
                f"Invalid value [{', '.join(aliases)}] for configuration {alias_key}: Duplicate alias provided."
            )
        for alias in dict.fromkeys(aliases):
            _validate_alias(result, present, kind, alias, f"{group_prefix}: {alias}", base_name, resolve)
    _check_predicate_references(result, present, predicate_aliases)
    return result


def _validate_alias(
    result: TransformValidation,
    config: Mapping[str, Any],
    kind: str,
    alias: str,
    group: str,
    base_name: str,
    resolve: Resolve,
) -> None:
    alias_key = _KINDS[kind][0]
    prefix = f"{alias_key}.{alias}."
    type_key = prefix + "type"
    key = ConfigKey(
        type_key,
        Type.CLASS,
        NO_DEFAULT,
        None,
        Importance.HIGH,
        f"Class for the '{alias}' {kind}.",
        group,
        0,
        Width.LONG,
        f"{base_name} type for {alias}",
    )
    value = ConfigValue(type_key, config.get(type_key))
    result.groups.append(group)
    result.entries.append((key, value))
    raw = config.get(type_key)
    if raw is None:
        value.add_error(f'Missing required configuration "{type_key}" which has no default value.')
        return
    cls = _check_class(str(raw).strip(), kind, resolve, type_key)
    if isinstance(cls, str):
        value.add_error(cls)
        return
    definition, problem = _plugin_definition(cls, type_key, base_name)
    # Kafka's type validator: the negate check first, then the class's own checks
    negate_problem = None
    if kind == "transformation" and prefix + NEGATE_CONFIG in config and prefix + PREDICATE_CONFIG not in config:
        negate_problem = (
            f"Config '{prefix}{NEGATE_CONFIG}' was provided but there is no config "
            f"'{prefix}{PREDICATE_CONFIG}' defining a predicate to be negated."
        )
    if negate_problem or problem:
        value.add_error(negate_problem or problem or "")
    if definition is None:
        return
    child = ConfigDef()
    if kind == "transformation":
        child.define(
            PREDICATE_CONFIG,
            Type.STRING,
            None,
            importance=Importance.MEDIUM,
            documentation="The alias of a predicate used to determine whether to apply this transformation.",
        )
        child.define(
            NEGATE_CONFIG,
            Type.BOOLEAN,
            False,
            importance=Importance.MEDIUM,
            documentation="Whether the configured predicate should be negated.",
        )
    for own in definition.keys.values():
        if own.name not in child:  # the implicit predicate/negate keys mask the plugin's own of that name
            child.define_key(own)
    child.groups = [g for g in definition.groups]
    for order, own in enumerate(_sorted_keys(child), start=1):
        embedded_group = group + (f": {own.group}" if own.group else "")
        if embedded_group not in result.groups:
            result.groups.append(embedded_group)
        embedded = ConfigKey(
            prefix + own.name,
            own.type,
            own.default,
            own.validator,
            own.importance,
            own.documentation,
            embedded_group,
            order,
            own.width,
            own.display_name,
            [prefix + d for d in own.dependents],
            own.internal,
        )
        result.entries.append((embedded, _validate_embedded(embedded, own.name, config)))


def _plugin_definition(cls: type, key: str, base_name: str) -> tuple[ConfigDef | None, str | None]:
    try:
        instance = cls()
    except Exception as exc:  # noqa: BLE001 - a plugin's constructor: whatever it raises is a validation error
        return None, (
            f"Invalid value {_java_class(cls)} for configuration {key}: Error getting config definition "
            f"from {base_name}: {exc}"
        )
    try:
        definition = instance.config()
    except Exception as exc:  # noqa: BLE001 - a plugin's config(): whatever it raises is a validation error
        return None, f"Invalid value {_java_class(cls)} for configuration {key}: {exc}"
    if definition is None:
        return None, f"{cls.__module__}.{cls.__qualname__}.config() must return a ConfigDef that is not null."
    return definition, None


_IMPORTANCE_ORDER = {Importance.HIGH: 0, Importance.MEDIUM: 1, Importance.LOW: 2}


def _sorted_keys(definition: ConfigDef) -> list[ConfigKey]:
    """ConfigDef.sortedConfigs: by group, order in group, required first, importance, then name."""
    group_order = {g: i for i, g in enumerate(definition.groups)}

    def sort_key(key: ConfigKey) -> tuple:
        group_rank = -1 if key.group is None else group_order.get(key.group, len(group_order))
        return (group_rank, key.order_in_group, key.has_default, _IMPORTANCE_ORDER[key.importance], key.name)

    return sorted(definition.keys.values(), key=sort_key)


def _validate_embedded(key: ConfigKey, short_name: str, config: Mapping[str, Any]) -> ConfigValue:
    """ConfigDef.validate of one embedded key: parse errors name the prefixed key, validators the plain one."""
    value = ConfigValue(key.name)
    present = key.name in config
    try:
        if present:
            parsed = parse_type(key.name, config[key.name], key.type)
        elif key.has_default:
            parsed = key.default
        else:
            raise ConfigError(f'Missing required configuration "{key.name}" which has no default value.')
        value.value = parsed
        if key.validator is not None and not (parsed is None and key.has_default and key.default is None):
            key.validator(short_name, parsed)
    except ConfigError as exc:
        value.add_error(str(exc))
        if value.value is None:
            value.value = config.get(key.name)
    return value


def _check_predicate_references(
    result: TransformValidation, config: Mapping[str, Any], predicate_aliases: list[str]
) -> None:
    """This runtime's addition: a transform naming a predicate that is defined nowhere is an error now, not when
    the task starts (Kafka accepts an alias missing from `predicates` if `predicates.<p>.type` is set)."""
    try:
        transform_aliases = _aliases(config, TRANSFORMS_CONFIG)
    except ConfigError:
        return
    entries = {value.name: value for _, value in result.entries}
    for alias in dict.fromkeys(transform_aliases):
        key = f"{TRANSFORMS_CONFIG}.{alias}.{PREDICATE_CONFIG}"
        predicate = config.get(key)
        if predicate is None or not str(predicate).strip():
            continue
        predicate = str(predicate).strip()
        if predicate in predicate_aliases or f"{PREDICATES_CONFIG}.{predicate}.type" in config:
            continue
        message = (
            f"Invalid value {predicate} for configuration {key}: Predicate alias '{predicate}' is not "
            f"defined; list it in '{PREDICATES_CONFIG}' and set '{PREDICATES_CONFIG}.{predicate}.type'"
        )
        if key in entries:
            entries[key].add_error(message)
        else:
            value = ConfigValue(key, predicate)
            value.add_error(message)
            result.entries.append(
                (
                    ConfigKey(
                        key,
                        Type.STRING,
                        None,
                        importance=Importance.MEDIUM,
                        documentation="The alias of a predicate used to determine whether to "
                        "apply this transformation.",
                    ),
                    value,
                )
            )
