"""Connector config validation: the framework's keys plus the connector's own (ConfigInfos).

The same result serves `PUT /connector-plugins/{p}/config/validate` and the check before every
create or update, whose 400 message lists the errors as the reference does.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

from ..api.config import (
    NO_DEFAULT,
    ConfigDef,
    ConfigKey,
    ConfigValue,
    Importance,
    NonEmptyString,
    Range,
    Type,
    Validator,
    ValidString,
    Width,
    format_value,
)
from ..api.connector import Connector, SinkConnector, SourceConnector
from ..api.errors import ConfigError, ConnectError
from ..api.transactions import ConnectorTransactionBoundaries, ExactlyOnceSupport, TransactionBoundary
from ..control import restart_backoff
from ..control.errors import BadRequest
from ..plugins import Plugins
from ..worker.transform_chain import validate_transforms

log = logging.getLogger(__name__)

NULL_VALUE_MESSAGE = "Null value can not be supplied as the configuration value."

# The reference's framework keys (names, types, defaults, documentation, groups, order) as its validate
# endpoint shows them, so that clients see the same definitions; validators are ours.
_FRAMEWORK = json.loads((Path(__file__).with_name("framework_keys.json")).read_text(encoding="utf-8"))


def _unique_aliases(name: str, value: Any) -> None:
    aliases = list(value or [])
    if len(aliases) > len(set(aliases)):
        raise ConfigError(
            f"Invalid value [{', '.join(map(str, aliases))}] for configuration {name}: Duplicate alias provided."
        )


def _connector_name(name: str, value: Any) -> None:
    NonEmptyString()(name, value)
    if value in (".", ".."):
        raise ConfigError(f"Invalid value {value} for configuration {name}: Connector names may not be '.' or '..'")
    if "/" in value:
        # a REST path cannot carry it (an encoded %2F is decoded before routing), so such a connector
        # could be created but never read, changed or deleted
        raise ConfigError(f"Invalid value {value} for configuration {name}: Connector names may not contain '/'")


_VALIDATORS: dict[str, Validator] = {
    "topic.creation.groups": _unique_aliases,
    "name": _connector_name,
    "tasks.max": Range.at_least(1),
    "config.action.reload": ValidString.of("none", "restart", case_insensitive=True),
    "errors.tolerance": ValidString.of("none", "all", case_insensitive=True),
    "exactly.once.support": ValidString.of("requested", "required", case_insensitive=True),
    "transaction.boundary": ValidString.of("poll", "interval", "connector", case_insensitive=True),
    "transaction.boundary.interval.ms": Range.at_least(0),
}


def _definition(kind: str) -> ConfigDef:
    d = ConfigDef()
    for key in _FRAMEWORK[kind]["keys"]:
        default = NO_DEFAULT if key["required"] else key["default_value"]
        d.define_key(
            ConfigKey(
                key["name"],
                Type(key["type"]),
                default,
                _VALIDATORS.get(key["name"]),
                Importance(key["importance"]),
                key["documentation"],
                key["group"],
                key["order"],
                Width(key["width"]),
                key["display_name"],
            )
        )
    d.groups = list(_FRAMEWORK[kind]["groups"])
    return d


def source_definition() -> ConfigDef:
    return _definition("source")


def sink_definition() -> ConfigDef:
    return _definition("sink")


def framework_definition(connector_cls: type) -> ConfigDef:
    return sink_definition() if issubclass(connector_cls, SinkConnector) else source_definition()


def plugin_config_keys(plugin_cls: type) -> list[dict[str, Any]]:
    """`GET /connector-plugins/{p}/config`: the plugin's own keys first, then the framework's."""
    instance = plugin_cls()
    own = instance.config()
    if issubclass(plugin_cls, Connector):
        merged = own.merged_with(framework_definition(plugin_cls))
    else:
        merged = own
    return [key.to_info() for key in merged.keys.values() if not key.internal]


def _value_info(key: ConfigKey | None, value: ConfigValue) -> dict[str, Any]:
    type_ = key.type if key is not None else Type.STRING
    raw = value.value
    return {
        "name": value.name,
        "value": format_value(raw, type_) if raw is not None else None,
        "recommended_values": [str(v) for v in value.recommended_values],
        "errors": list(value.errors),
        "visible": value.visible,
    }


def _check_class(plugins: Plugins, name: str, value: ConfigValue, header: bool) -> None:
    if value.value in (None, ""):
        return
    try:
        plugins.converter_class(str(value.value), header=header)
    except ConnectError as exc:
        value.add_error(f"Invalid value {value.value} for configuration {value.name}: {exc}")


def _converter_configs(plugins: Plugins, config: dict[str, Any], prefix: str, header: bool) -> list[dict[str, Any]]:
    """ConfigInfos of a converter the connector names itself (`key.converter.*` etc.), as the reference
    validates them; nothing when the connector relies on the worker's converter."""
    class_name = config.get(prefix)
    if not class_name:
        return []
    try:
        converter = plugins.converter_class(str(class_name), header=header)()
        definition = converter.config()
    except Exception:  # noqa: BLE001 - the class itself is reported on the framework key
        return []
    if definition is None:
        return []
    dot = prefix + "."
    settings: dict[str, Any] = {k[len(dot) :]: v for k, v in config.items() if k.startswith(dot) and v is not None}
    if not header:
        settings.setdefault("converter.type", "key" if prefix == "key.converter" else "value")
    result = []
    for value in definition.validate(settings):
        key = definition.keys[value.name]
        if value.name not in settings and not value.errors:
            continue
        info = _value_info(key, value)
        info["name"] = dot + value.name
        definition_info = key.to_info()
        definition_info["name"] = dot + key.name
        result.append({"definition": definition_info, "value": info})
    return result


def _sink_checks(values: dict[str, ConfigValue], config: dict[str, Any]) -> None:
    topics = [t.strip() for t in str(config.get("topics") or "").split(",") if t.strip()]
    regex = str(config.get("topics.regex") or "").strip()
    if topics and regex:
        message = "topics and topics.regex are mutually exclusive options, but both are set."
        values["topics"].add_error(message)
        values["topics.regex"].add_error(message)
    elif not topics and not regex:
        message = "Must configure one of topics or topics.regex"
        values["topics"].add_error(message)
        values["topics.regex"].add_error(message)
    if regex:
        try:
            re.compile(regex)
        except re.error as exc:
            values["topics.regex"].add_error(f"Invalid value {regex} for configuration topics.regex: {exc}")
    dlq = str(config.get("errors.deadletterqueue.topic.name") or "").strip()
    if dlq and dlq in topics:
        values["errors.deadletterqueue.topic.name"].add_error(
            f"The DLQ topic '{dlq}' may not be included in the list of topics ('topics={config.get('topics')}') consumed by the connector"
        )
    elif dlq and regex and _safe_match(regex, dlq):
        values["errors.deadletterqueue.topic.name"].add_error(
            f"The DLQ topic '{dlq}' may not be included in the regex matching the topics ('topics.regex={regex}') consumed by the connector"
        )


def _safe_match(regex: str, text: str) -> bool:
    try:
        return re.fullmatch(regex, text) is not None
    except re.error:
        return False


def validate_connector_config(plugins: Plugins, config: dict[str, Any]) -> dict[str, Any]:
    """ConfigInfos for `config`; raises BadRequest when there is no usable `connector.class`."""
    class_name = config.get("connector.class")
    if class_name is None or (isinstance(class_name, str) and not class_name.strip()):
        raise BadRequest(f"Connector config {_java_map(config)} contains no connector type")
    try:
        desc = plugins.connector_desc(str(class_name))
    except ConnectError as exc:
        raise BadRequest(str(exc)) from None
    connector = desc.cls()
    framework = framework_definition(desc.cls)
    present = {k: v for k, v in config.items() if v is not None}
    framework_values = {v.name: v for v in framework.validate(present)}
    for name, header in (("key.converter", False), ("value.converter", False), ("header.converter", True)):
        _check_class(plugins, name, framework_values[name], header)
    if issubclass(desc.cls, SinkConnector):
        _sink_checks(framework_values, present)
    transforms = validate_transforms(present, plugins.resolve)
    for name, messages in transforms.alias_errors.items():
        if name in framework_values:
            framework_values[name].errors.extend(messages)
    try:
        own_def = connector.config()
        if own_def is None:
            raise BadRequest(f"{desc.class_name}.config() must return a ConfigDef that is not null.")
        own_values = connector.validate({k: str(v) for k, v in present.items()})
    except BadRequest:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken plugin is the request's problem, not the worker's
        raise BadRequest(f"{type(exc).__name__}: {exc}") from None
    if own_values is None:
        raise BadRequest(f"{desc.class_name}.validate() must return a Config that is not null.")
    configs: list[dict[str, Any]] = []
    groups: list[str] = []
    for key_name, key in framework.keys.items():
        configs.append({"definition": key.to_info(), "value": _value_info(key, framework_values[key_name])})
    for key, value in transforms.entries:
        configs.append({"definition": key.to_info(), "value": _value_info(key, value)})
    for group in framework.groups + transforms.groups + own_def.groups:
        if group not in groups:
            groups.append(group)
    own_values_by_name = {v.name: v for v in own_values}
    for key_name, key in own_def.keys.items():
        if key_name in framework.keys or key.internal:
            continue
        value = own_values_by_name.pop(key_name, None)
        configs.append({"definition": key.to_info(), "value": _value_info(key, value) if value else None})
    for name, value in own_values_by_name.items():
        if name not in framework.keys:
            configs.append({"definition": None, "value": _value_info(None, value)})
    for prefix, header in (("key.converter", False), ("value.converter", False), ("header.converter", True)):
        if not framework_values[prefix].errors:
            configs.extend(_converter_configs(plugins, present, prefix, header))
    for name, message in restart_backoff.problems(present).items():  # self-healing's settings (an extension)
        configs.append(
            {
                "definition": None,
                "value": {
                    "name": name,
                    "value": present[name],
                    "recommended_values": [],
                    "errors": [message],
                    "visible": True,
                },
            }
        )
    for name, raw in config.items():
        if raw is None:
            configs.append(
                {
                    "definition": None,
                    "value": {
                        "name": name,
                        "value": None,
                        "recommended_values": [],
                        "errors": [NULL_VALUE_MESSAGE],
                        "visible": True,
                    },
                }
            )
    error_count = sum(len(c["value"]["errors"]) for c in configs if c["value"])
    return {"name": str(class_name), "error_count": error_count, "groups": groups, "configs": configs}


# ---- exactly-once source (KIP-618): distributed mode only, as the reference's DistributedHerder ----------

EXACTLY_ONCE_SUPPORT = "exactly.once.support"
TRANSACTION_BOUNDARY = "transaction.boundary"
WORKER_NOT_ENABLED = "This worker does not have exactly-once source support enabled."
SUPPORT_UNKNOWN = (
    "The connector does not implement the API required for preflight validation of exactly-once source support. "
    "Please consult the documentation for the connector to determine whether it supports exactly-once semantics, "
    'and then consider reconfiguring the connector to use the value "requested" for this property (which will '
    "disable this preflight check and allow the connector to be created)."
)
SUPPORT_REFUSED = "The connector does not support exactly-once semantics with the provided configuration."
BOUNDARIES_NULL = (
    "This connector has returned a null value from its canDefineTransactionBoundaries method, which is not "
    "permitted. The connector will be treated as if it cannot define its own transaction boundaries, and cannot "
    "be configured with 'transaction.boundary' set to 'connector'."
)
BOUNDARIES_REFUSED = (
    "The connector does not support connector-defined transaction boundaries with the given configuration. "
    "Please reconfigure it to use a different transaction boundary definition."
)


def check_source_exactly_once(
    plugins: Plugins, infos: dict[str, Any], config: dict[str, Any], worker_enabled: bool
) -> None:
    """Add the distributed reference's checks of `exactly.once.support` and `transaction.boundary` to a
    validation result, for a source connector whose keys passed their own validation: `required` needs the
    worker's `exactly.once.source.support=enabled` and the connector's `exactly_once_support()` SUPPORTED;
    `connector` needs its `can_define_transaction_boundaries()` SUPPORTED. `config` is resolved (what the
    connector would be given)."""
    try:
        cls = plugins.connector_desc(str(config.get("connector.class", ""))).cls
    except ConnectError:
        return  # the class is reported on connector.class
    if not issubclass(cls, SourceConnector):
        return
    raw = {k: str(v) for k, v in config.items() if v is not None}
    values = {c["value"]["name"]: c["value"] for c in infos["configs"] if c["value"]}
    support = values.get(EXACTLY_ONCE_SUPPORT)
    connector: SourceConnector | None = None
    if support is not None and not support["errors"] and str(support["value"]).strip().lower() == "required":
        if not worker_enabled:
            _add_error(infos, support, WORKER_NOT_ENABLED)
        connector = cls()
        message = _preflight(connector.exactly_once_support, raw, ExactlyOnceSupport, SUPPORT_UNKNOWN, SUPPORT_REFUSED)
        if message:
            _add_error(infos, support, message)
    boundary = values.get(TRANSACTION_BOUNDARY)
    if (
        boundary is not None
        and not boundary["errors"]
        and _boundary(boundary["value"]) is TransactionBoundary.CONNECTOR
    ):
        connector = connector or cls()
        message = _preflight(
            connector.can_define_transaction_boundaries,
            raw,
            ConnectorTransactionBoundaries,
            BOUNDARIES_NULL,
            BOUNDARIES_REFUSED,
            unexpected_is_refusal=True,
        )
        if message:
            _add_error(infos, boundary, message)


def _boundary(value: Any) -> TransactionBoundary | None:
    try:
        return TransactionBoundary.from_property(str(value))
    except ValueError:
        return None


def _preflight(
    ask: Any,
    config: dict[str, str],
    answers: type[ExactlyOnceSupport] | type[ConnectorTransactionBoundaries],
    when_none: str,
    when_refused: str,
    unexpected_is_refusal: bool = False,
) -> str | None:
    """The connector's answer as the reference words it: None when SUPPORTED, else the error to report."""
    try:
        answer = ask(config)
        if answer is None:
            return when_none
        try:
            answer = answers(str(answer.value if isinstance(answer, answers) else answer).upper())
        except ValueError:
            if unexpected_is_refusal:
                return when_refused
            raise ConnectError(
                f"Unexpected value returned from SourceConnector::exactlyOnceSupport: {answer}"
            ) from None
        return None if answer is answers.SUPPORTED else when_refused
    except Exception as exc:  # a broken connector is reported in the result, as the reference does
        log.error("Failed while validating connector support for %s", ask.__name__, exc_info=exc)
        detail = str(exc).strip()
        return "An unexpected error occurred during validation" + (
            f": {detail}" if detail else "; please see the worker logs for more details."
        )


def _add_error(infos: dict[str, Any], value: dict[str, Any], message: str) -> None:
    value["errors"].append(message)
    infos["error_count"] += 1


def error_messages(infos: dict[str, Any]) -> list[str]:
    return [error for c in infos["configs"] if c["value"] for error in c["value"]["errors"]]


def invalid_config_message(infos: dict[str, Any]) -> str:
    errors = error_messages(infos)
    lines = [
        f"Connector configuration is invalid and contains the following {len(errors)} error(s):",
        *errors,
        "You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`",
    ]
    return "\n".join(lines)


def _java_map(config: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in config.items()) + "}"
