"""A connector's converters: the connector's own when it names a class (with its settings alone, none of
the worker's), else the worker's class with the worker's settings, as the reference's Plugins.newConverter."""

from __future__ import annotations

from runtime.api.data import STRING_SCHEMA
from runtime.converters.base import HeaderConverter
from runtime.converters.json import JsonConverter
from runtime.converters.string import StringConverter
from runtime.plugins import Plugins
from runtime.worker.converter_setup import build_converter, build_header_converter
from runtime.worker_config import WorkerConfig

JSON = "org.apache.kafka.connect.json.JsonConverter"
WORKER = WorkerConfig(
    {
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": JSON,
        "value.converter.schemas.enable": "false",
    }
)


def test_without_a_converter_of_its_own_a_connector_uses_the_workers_class_and_settings() -> None:
    value = build_converter(Plugins(), "value.converter", WORKER, {"name": "c"})
    assert isinstance(value, JsonConverter)
    assert value.from_connect_data("t", STRING_SCHEMA, "x") == b'"x"'  # schemas.enable=false from the worker
    assert isinstance(build_converter(Plugins(), "key.converter", WORKER, {"name": "c"}), StringConverter)


def test_a_connectors_own_converter_takes_its_own_settings_only() -> None:
    value = build_converter(Plugins(), "value.converter", WORKER, {"value.converter": JSON})
    # the worker's value.converter.schemas.enable=false is not carried over: JsonConverter's default applies
    assert (
        value.from_connect_data("t", STRING_SCHEMA, "x")
        == b'{"schema":{"type":"string","optional":false},"payload":"x"}'
    )
    quiet = build_converter(
        Plugins(), "value.converter", WORKER, {"value.converter": JSON, "value.converter.schemas.enable": "false"}
    )
    assert quiet.from_connect_data("t", STRING_SCHEMA, "x") == b'"x"'


def test_a_plain_converter_serves_as_a_header_converter_of_its_own_settings() -> None:
    # JsonConverter is a HeaderConverter in the reference: a header's value is converted as a record's value
    headers = build_header_converter(
        Plugins(), WORKER, {"header.converter": JSON, "header.converter.schemas.enable": "false"}
    )
    assert isinstance(headers, HeaderConverter)
    assert headers.from_connect_header("t", "h", STRING_SCHEMA, "x") == b'"x"'
