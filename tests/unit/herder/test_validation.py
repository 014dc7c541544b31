"""Connector config validation (contract sections 1.4, 1.7, 1.8, 4 scenarios 4/13/14/15/23/24, section 0)."""

from __future__ import annotations

import pytest

from runtime.connectors.testing import RECORDING_CONFIG_DEF, SEQUENCE_CONFIG_DEF
from runtime.control.errors import BadRequest
from runtime.herder.validation import (
    NULL_VALUE_MESSAGE,
    error_messages,
    invalid_config_message,
    validate_connector_config,
)
from runtime.plugins import Plugins

SOURCE_FRAMEWORK_KEYS = {
    "name",
    "connector.class",
    "tasks.max",
    "tasks.max.enforce",
    "key.converter",
    "value.converter",
    "header.converter",
    "transforms",
    "predicates",
    "config.action.reload",
    "errors.retry.timeout",
    "errors.retry.delay.max.ms",
    "errors.tolerance",
    "errors.log.enable",
    "errors.log.include.messages",
    "topic.creation.groups",
    "exactly.once.support",
    "transaction.boundary",
    "transaction.boundary.interval.ms",
    "offsets.storage.topic",
}
SINK_FRAMEWORK_KEYS = {
    "name",
    "connector.class",
    "tasks.max",
    "tasks.max.enforce",
    "key.converter",
    "value.converter",
    "header.converter",
    "transforms",
    "predicates",
    "config.action.reload",
    "errors.retry.timeout",
    "errors.retry.delay.max.ms",
    "errors.tolerance",
    "errors.log.enable",
    "errors.log.include.messages",
    "topics",
    "topics.regex",
    "errors.deadletterqueue.topic.name",
    "errors.deadletterqueue.topic.replication.factor",
    "errors.deadletterqueue.context.headers.enable",
}


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    return Plugins()


def source(**extra):
    config = {"name": "src", "connector.class": "SequenceSource", "tasks.max": "1", "topic": "t"}
    config.update(extra)
    return {k: v for k, v in config.items() if v is not ...}


def sink(**extra):
    config = {
        "name": "snk",
        "connector.class": "RecordingSink",
        "tasks.max": "1",
        "topics": "t",
        "output.file": "/tmp/x",
    }
    config.update(extra)
    return {k: v for k, v in config.items() if v is not ...}


def errors_by_key(infos) -> dict[str, list[str]]:
    return {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"] and c["value"]["errors"]}


def definition_names(infos) -> set[str]:
    return {c["definition"]["name"] for c in infos["configs"] if c["definition"]}


def test_valid_source_lists_framework_and_own_keys(plugins):
    infos = validate_connector_config(plugins, source())
    assert infos["error_count"] == 0
    assert infos["name"] == "SequenceSource"
    assert definition_names(infos) == SOURCE_FRAMEWORK_KEYS | set(SEQUENCE_CONFIG_DEF.names())
    assert "Common" in infos["groups"]


def test_valid_sink_lists_framework_and_own_keys(plugins):
    infos = validate_connector_config(plugins, sink())
    assert infos["error_count"] == 0
    assert definition_names(infos) == SINK_FRAMEWORK_KEYS | set(RECORDING_CONFIG_DEF.names())


@pytest.mark.parametrize("topics, regex", [(..., ...), ("", ""), ("a,b", "a.*")])
def test_sink_needs_exactly_one_of_topics_and_regex(plugins, topics, regex):
    infos = validate_connector_config(plugins, sink(topics=topics, **{"topics.regex": regex}))
    assert infos["error_count"] == 2
    by_key = errors_by_key(infos)
    assert set(by_key) == {"topics", "topics.regex"}
    assert by_key["topics"] == by_key["topics.regex"]


@pytest.mark.parametrize("extra", [{"topics": "a,dlq"}, {"topics": ..., "topics.regex": "d.*"}])
def test_dlq_topic_may_not_be_consumed(plugins, extra):
    infos = validate_connector_config(plugins, sink(**{"errors.deadletterqueue.topic.name": "dlq"}, **extra))
    assert infos["error_count"] == 1
    assert list(errors_by_key(infos)) == ["errors.deadletterqueue.topic.name"]


def test_null_value_is_an_error(plugins):
    infos = validate_connector_config(plugins, source(extra=None))
    assert infos["error_count"] == 1
    assert errors_by_key(infos) == {"extra": [NULL_VALUE_MESSAGE]}
    assert NULL_VALUE_MESSAGE == "Null value can not be supplied as the configuration value."


def test_empty_name_is_a_validation_error(plugins):
    infos = validate_connector_config(plugins, source(name=""))
    assert errors_by_key(infos) == {"name": ["Invalid value  for configuration name: String may not be empty"]}


def test_name_with_control_characters_is_a_validation_error(plugins):
    infos = validate_connector_config(plugins, source(name="a\tb\x7f"))
    (message,) = errors_by_key(infos)["name"]
    assert message.endswith("String may not contain control sequences but had the following ASCII chars: 9, 127")
    assert message.startswith("Invalid value a\tb\x7f for configuration name: ")


def test_framework_and_own_errors_are_counted(plugins):
    infos = validate_connector_config(plugins, source(**{"tasks.max": "0", "topic": ..., "errors.tolerance": "some"}))
    by_key = errors_by_key(infos)
    assert set(by_key) == {"tasks.max", "topic", "errors.tolerance"}
    assert infos["error_count"] == 3
    assert by_key["tasks.max"] == ["Invalid value 0 for configuration tasks.max: Value must be at least 1"]
    assert by_key["topic"] == ['Missing required configuration "topic" which has no default value.']


def test_unknown_converter_class_is_one_error(plugins):
    infos = validate_connector_config(plugins, source(**{"key.converter": "no.such.Converter"}))
    assert infos["error_count"] == 1
    assert list(errors_by_key(infos)) == ["key.converter"]


def test_java_converter_names_are_accepted(plugins):
    infos = validate_connector_config(
        plugins,
        source(
            **{
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "header.converter": "org.apache.kafka.connect.storage.SimpleHeaderConverter",
            }
        ),
    )
    assert infos["error_count"] == 0


def test_invalid_config_message_format(plugins):
    infos = validate_connector_config(plugins, source(**{"tasks.max": "0", "topic": ...}))
    assert invalid_config_message(infos) == (
        "Connector configuration is invalid and contains the following 2 error(s):\n"
        "Invalid value 0 for configuration tasks.max: Value must be at least 1\n"
        'Missing required configuration "topic" which has no default value.\n'
        "You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"
    )
    assert error_messages(infos) == invalid_config_message(infos).split("\n")[1:-1]


@pytest.mark.parametrize("cls", [..., None, "", "  "])
def test_missing_connector_class_is_a_bad_request(plugins, cls):
    with pytest.raises(BadRequest) as info:
        validate_connector_config(plugins, source(**{"connector.class": cls}))
    assert info.value.status == 400
    assert "contains no connector type" in info.value.message


def test_unknown_connector_class_names_the_available_connectors(plugins):
    with pytest.raises(BadRequest) as info:
        validate_connector_config(plugins, source(**{"connector.class": "com.example.Nope"}))
    message = info.value.message
    assert "com.example.Nope" in message
    available = [d.class_name for d in plugins.connectors()]
    assert "runtime.connectors.testing.SequenceSourceConnector" in available
    assert any(n.endswith("FileStreamSourceConnector") for n in available)
    for class_name in available:
        assert class_name in message


# ---- through the herder: a config that does not validate creates nothing ------------------------------------


@pytest.fixture
def herder(plugins):
    """A herder on memory stores: validation fails before any Kafka client is made, so no broker is needed."""
    from runtime.herder.standalone import StandaloneHerder
    from runtime.herder.topics import MemoryTopics
    from runtime.storage.base import StatusStore
    from runtime.storage.files import MemoryConfigStore, MemoryOffsetStore
    from runtime.worker.offsets import OffsetsManager
    from runtime.worker.worker import Worker
    from runtime.worker_config import WorkerConfig

    config = WorkerConfig({"bootstrap.servers": "127.0.0.1:9"})
    offsets, statuses = MemoryOffsetStore(), StatusStore()
    worker = Worker(config, plugins, offsets, statuses, "w:1")
    h = StandaloneHerder(
        config,
        plugins,
        worker,
        MemoryConfigStore(),
        statuses,
        OffsetsManager(config, offsets),
        MemoryTopics(config),
        "w:1",
        None,
    )
    h.start()
    yield h
    h.stop()


@pytest.mark.parametrize(
    "config, fragment",
    [
        (source(extra=None), "contains the following 1 error(s):\n" + NULL_VALUE_MESSAGE),
        (source(**{"connector.class": "com.example.Nope"}), "available connectors are:"),
        (source(name=""), "Invalid value  for configuration name: String may not be empty"),
        (sink(topics=...), "contains the following 2 error(s):"),
    ],
)
def test_invalid_create_is_a_bad_request_and_creates_nothing(herder, config, fragment):
    with pytest.raises(BadRequest) as info:
        herder.put_connector_config(config["name"], config, False)
    assert fragment in info.value.message
    assert herder.connector_names() == []


def test_invalid_update_keeps_the_old_config(herder):
    herder.put_connector_config("src", source(), False, "STOPPED")
    with pytest.raises(BadRequest):
        herder.put_connector_config("src", source(**{"connector.class": "Nope"}), True)
    with pytest.raises(BadRequest):
        herder.patch_connector_config("src", {"tasks.max": "0"})
    assert herder.connector_config("src") == source()
    assert herder.connector_status("src")["connector"]["state"] == "STOPPED"


# ---- scenario 23: transforms, predicates and topic creation groups each report their own error -----------------


@pytest.mark.parametrize(
    "extra, key_prefix",
    [
        (
            {
                "transforms": "a,a",
                "transforms.a.type": "org.apache.kafka.connect.transforms.InsertField$Value",
                "transforms.a.static.field": "f",
                "transforms.a.static.value": "v",
            },
            "transforms",
        ),
        ({"transforms": "a"}, "transforms.a."),  # no transforms.a.type
        ({"transforms": "a", "transforms.a.type": "no.such.Transform"}, "transforms.a."),
        ({"predicates": "p"}, "predicates.p."),  # no predicates.p.type
        ({"predicates": "p", "predicates.p.type": "no.such.Predicate"}, "predicates.p."),
        ({"topic.creation.groups": "g,g"}, "topic.creation.groups"),
    ],
)
def test_transform_predicate_and_topic_group_errors(plugins, extra, key_prefix):
    infos = validate_connector_config(plugins, source(**extra))
    assert infos["error_count"] == 1, error_messages(infos)
    (key,) = errors_by_key(infos)
    assert key.startswith(key_prefix)


def test_value_entries_show_given_default_and_unset_values(plugins):
    infos = validate_connector_config(plugins, source(**{"tasks.max": 2}))
    values = {c["value"]["name"]: c["value"] for c in infos["configs"] if c["value"]}
    assert values["tasks.max"] == {
        "name": "tasks.max",
        "value": "2",
        "recommended_values": [],
        "errors": [],
        "visible": True,
    }
    assert values["errors.tolerance"]["value"] == "none"  # defaults are shown
    assert values["tasks.max.enforce"]["value"] == "true"
    assert values["key.converter"]["value"] is None  # optional, unset
    assert values["topic"]["value"] == "t"  # the connector's own key
    assert all(
        c["definition"]["name"] == c["value"]["name"] for c in infos["configs"] if c["definition"] and c["value"]
    )
