"""Connector config validation: the framework's keys plus the connector's own (ConfigInfos).

The same result serves `PUT /connector-plugins/{p}/config/validate` and the check before every
create or update, whose 400 message lists the errors as the reference does.
"""
from __future__ import annotations

import re
from typing import Any

from ..api.config import (
    ConfigDef, ConfigKey, ConfigValue, Importance, NonEmptyString, Range, Type, ValidString, Width, format_value,
)
from ..api.connector import Connector, SinkConnector
from ..api.errors import ConnectError
from ..plugins import Plugins
from .errors import BadRequest

COMMON = "Common"
TRANSFORMS = "Transforms"
PREDICATES = "Predicates"
ERRORS = "Error Handling"
TOPIC_CREATION = "Topic Creation"
EXACTLY_ONCE = "Exactly Once Support"
OFFSETS_TOPIC = "offsets.storage"
NULL_VALUE_MESSAGE = "Null value can not be supplied as the configuration value."


def _common() -> ConfigDef:
    d = ConfigDef()
    d.define("name", Type.STRING, validator=NonEmptyString(), importance=Importance.HIGH,
             documentation="Globally unique name to use for this connector.", group=COMMON, order_in_group=1,
             width=Width.MEDIUM, display_name="Connector name")
    d.define("connector.class", Type.STRING, importance=Importance.HIGH,
             documentation="Name or alias of the class for this connector: a dotted Python path, the class name, "
                           "or the class name without its 'Connector' suffix.",
             group=COMMON, order_in_group=2, width=Width.LONG, display_name="Connector class")
    d.define("tasks.max", Type.INT, 1, Range.at_least(1), Importance.HIGH,
             "Maximum number of tasks to use for this connector.", COMMON, 3, Width.SHORT, "Tasks max")
    d.define("tasks.max.enforce", Type.BOOLEAN, True, None, Importance.LOW,
             "(Deprecated) Whether to enforce that the tasks.max property is respected by the connector.",
             COMMON, 4, Width.SHORT, "Enforce tasks max")
    d.define("key.converter", Type.CLASS, None, None, Importance.LOW,
             "Converter class used for the keys of records this connector reads or writes; overrides the worker's.",
             COMMON, 5, Width.SHORT, "Key converter class")
    d.define("value.converter", Type.CLASS, None, None, Importance.LOW,
             "Converter class used for record values; overrides the worker's.", COMMON, 6, Width.SHORT,
             "Value converter class")
    d.define("header.converter", Type.CLASS, None, None, Importance.LOW,
             "HeaderConverter class used for record headers; overrides the worker's.", COMMON, 7, Width.SHORT,
             "Header converter class")
    d.define("config.action.reload", Type.STRING, "restart", ValidString.of("none", "restart", case_insensitive=True),
             Importance.LOW, "What to do when external configuration providers' data changes.", COMMON, 8,
             Width.MEDIUM, "Reload Action")
    d.define("transforms", Type.LIST, "", None, Importance.LOW, "Aliases for the transformations to be applied to records.",
             TRANSFORMS, 1, Width.LONG, "Transforms")
    d.define("predicates", Type.LIST, "", None, Importance.LOW, "Aliases for the predicates used by transformations.",
             PREDICATES, 1, Width.LONG, "Predicates")
    d.define("errors.retry.timeout", Type.LONG, 0, None, Importance.MEDIUM,
             "Maximum duration in milliseconds that a failed operation will be reattempted.", ERRORS, 1, Width.MEDIUM,
             "Retry Timeout for Errors")
    d.define("errors.retry.delay.max.ms", Type.LONG, 60000, None, Importance.MEDIUM,
             "Maximum duration in milliseconds between consecutive retry attempts.", ERRORS, 2, Width.MEDIUM,
             "Maximum Delay Between Retries for Errors")
    d.define("errors.tolerance", Type.STRING, "none", ValidString.of("none", "all", case_insensitive=True),
             Importance.MEDIUM, "Behavior for tolerating errors during connector operation.", ERRORS, 3,
             Width.SHORT, "Error Tolerance")
    d.define("errors.log.enable", Type.BOOLEAN, False, None, Importance.MEDIUM,
             "If true, write each error and the details of the failed operation to the log.", ERRORS, 4,
             Width.SHORT, "Log Errors")
    d.define("errors.log.include.messages", Type.BOOLEAN, False, None, Importance.MEDIUM,
             "Whether to include in the log the records that resulted in a failure.", ERRORS, 5, Width.SHORT,
             "Log Error Details")
    return d


def source_definition() -> ConfigDef:
    d = _common()
    d.define("topic.creation.groups", Type.LIST, "", None, Importance.LOW,
             "Groups of configurations for topics created by source connectors", TOPIC_CREATION, 1, Width.LONG,
             "Topic Creation Groups")
    d.define("exactly.once.support", Type.STRING, "requested", ValidString.of("requested", "required", case_insensitive=True),
             Importance.MEDIUM, "Permitted values are requested, required.", EXACTLY_ONCE, 1, Width.SHORT,
             "Exactly once support")
    d.define("transaction.boundary", Type.STRING, "poll", ValidString.of("poll", "interval", "connector", case_insensitive=True),
             Importance.MEDIUM, "Permitted values are: poll, interval, connector.", EXACTLY_ONCE, 2, Width.SHORT,
             "Transaction Boundary")
    d.define("transaction.boundary.interval.ms", Type.LONG, None, Range.at_least(0), Importance.LOW,
             "If 'transaction.boundary' is set to 'interval', determines the interval for producer transaction commits.",
             EXACTLY_ONCE, 3, Width.SHORT, "Transaction boundary interval ms")
    d.define("offsets.storage.topic", Type.STRING, None, None, Importance.LOW,
             "The name of a separate offsets topic to use for this connector.", OFFSETS_TOPIC, 1, Width.LONG,
             "Offsets topic")
    return d


def sink_definition() -> ConfigDef:
    d = _common()
    d.define("topics", Type.LIST, "", None, Importance.HIGH, "List of topics to consume, separated by commas",
             COMMON, 4, Width.LONG, "Topics")
    d.define("topics.regex", Type.STRING, "", None, Importance.HIGH,
             "Regular expression giving topics to consume.", COMMON, 4, Width.LONG, "Topics regex")
    d.define("errors.deadletterqueue.topic.name", Type.STRING, "", None, Importance.MEDIUM,
             "The name of the topic to be used as the dead letter queue (DLQ) for messages that result in an error.",
             ERRORS, 6, Width.MEDIUM, "Dead Letter Queue Topic Name")
    d.define("errors.deadletterqueue.topic.replication.factor", Type.SHORT, 3, None, Importance.MEDIUM,
             "Replication factor used to create the dead letter queue topic when it doesn't already exist.",
             ERRORS, 7, Width.MEDIUM, "Dead Letter Queue Topic Replication Factor")
    d.define("errors.deadletterqueue.context.headers.enable", Type.BOOLEAN, False, None, Importance.MEDIUM,
             "If true, add headers containing error context to the messages written to the dead letter queue.",
             ERRORS, 8, Width.MEDIUM, "Enable Error Context Headers")
    return d


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
            f"The DLQ topic '{dlq}' may not be included in the list of topics ('topics={config.get('topics')}') consumed by the connector")
    elif dlq and regex and _safe_match(regex, dlq):
        values["errors.deadletterqueue.topic.name"].add_error(
            f"The DLQ topic '{dlq}' may not be included in the regex matching the topics ('topics.regex={regex}') consumed by the connector")


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
    try:
        own_def = connector.config()
        own_values = connector.validate({k: str(v) for k, v in present.items()})
    except Exception as exc:  # noqa: BLE001 - a broken plugin is the request's problem, not the worker's
        raise BadRequest(f"{type(exc).__name__}: {exc}") from None
    if own_def is None:
        raise BadRequest(f"{desc.class_name}.config() must return a ConfigDef that is not null.")
    if own_values is None:
        raise BadRequest(f"{desc.class_name}.validate() must return a Config that is not null.")
    configs: list[dict[str, Any]] = []
    groups: list[str] = []
    for key_name, key in framework.keys.items():
        configs.append({"definition": key.to_info(), "value": _value_info(key, framework_values[key_name])})
    for group in framework.groups + own_def.groups:
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
    for name, raw in config.items():
        if raw is None:
            configs.append({"definition": None, "value": {"name": name, "value": None, "recommended_values": [],
                                                          "errors": [NULL_VALUE_MESSAGE], "visible": True}})
    error_count = sum(len(c["value"]["errors"]) for c in configs if c["value"])
    return {"name": str(class_name), "error_count": error_count, "groups": groups, "configs": configs}


def error_messages(infos: dict[str, Any]) -> list[str]:
    return [error for c in infos["configs"] if c["value"] for error in c["value"]["errors"]]


def invalid_config_message(infos: dict[str, Any]) -> str:
    errors = error_messages(infos)
    lines = [f"Connector configuration is invalid and contains the following {len(errors)} error(s):", *errors,
             "You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"]
    return "\n".join(lines)


def _java_map(config: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in config.items()) + "}"
