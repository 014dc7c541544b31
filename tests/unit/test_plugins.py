"""Plugin resolution (runtime.plugins): the names Kafka Connect accepts for connector.class and converters."""

from __future__ import annotations

import sys
import textwrap

import pytest

from runtime.api.errors import ConnectError
from runtime.connectors.file import FileStreamSinkConnector, FileStreamSourceConnector
from runtime.connectors.testing import RecordingSinkConnector, SequenceSourceConnector
from runtime.converters.bytearray import ByteArrayConverter
from runtime.converters.headers import SimpleHeaderConverter
from runtime.converters.json import JsonConverter
from runtime.converters.string import StringConverter
from runtime.plugins import Plugins


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    return Plugins()


@pytest.mark.parametrize(
    "name, cls",
    [
        ("runtime.connectors.testing.SequenceSourceConnector", SequenceSourceConnector),
        ("runtime.connectors.testing:SequenceSourceConnector", SequenceSourceConnector),
        ("SequenceSourceConnector", SequenceSourceConnector),
        ("SequenceSource", SequenceSourceConnector),
        ("  SequenceSource  ", SequenceSourceConnector),
        ("RecordingSink", RecordingSinkConnector),
        ("FileStreamSource", FileStreamSourceConnector),
        ("FileStreamSinkConnector", FileStreamSinkConnector),
        ("org.apache.kafka.connect.file.FileStreamSourceConnector", FileStreamSourceConnector),
        ("org.apache.kafka.connect.file.FileStreamSinkConnector", FileStreamSinkConnector),
    ],
)
def test_connector_names(plugins, name, cls):
    desc = plugins.connector_desc(name)
    assert desc.cls is cls
    assert desc.type == ("sink" if "Sink" in cls.__name__ else "source")
    assert isinstance(plugins.new_connector(name), cls)


@pytest.mark.parametrize(
    "name, cls",
    [
        ("org.apache.kafka.connect.json.JsonConverter", JsonConverter),
        ("org.apache.kafka.connect.storage.StringConverter", StringConverter),
        ("org.apache.kafka.connect.converters.ByteArrayConverter", ByteArrayConverter),
        ("runtime.converters.json.JsonConverter", JsonConverter),
        ("StringConverter", StringConverter),
    ],
)
def test_converter_names(plugins, name, cls):
    assert plugins.converter_class(name) is cls


def test_header_converter_names(plugins):
    assert (
        plugins.converter_class("org.apache.kafka.connect.storage.SimpleHeaderConverter", header=True)
        is SimpleHeaderConverter
    )
    assert plugins.converter_class("SimpleHeaderConverter", header=True) is SimpleHeaderConverter
    with pytest.raises(ConnectError):
        plugins.converter_class("SimpleHeaderConverter")  # not a plain Converter


@pytest.mark.parametrize(
    "name",
    [
        "Nope",
        "com.example.NopeConnector",
        "json.JSONDecoder",
        "StringConverter",
        "runtime.api.connector.SourceConnector",
        "",
    ],
)
def test_unknown_connector_lists_available(plugins, name):
    with pytest.raises(ConnectError) as info:
        plugins.connector_desc(name)
    message = str(info.value)
    assert f"Failed to find any class that implements Connector and which name matches {name}" in message
    assert "available connectors are: " in message
    available = [d.class_name for d in plugins.connectors()]
    assert {
        "runtime.connectors.testing.SequenceSourceConnector",
        "runtime.connectors.testing.RecordingSinkConnector",
    } <= set(available)
    assert any(n.endswith("FileStreamSinkConnector") for n in available)
    assert message.endswith("available connectors are: " + ", ".join(available))


def test_connector_is_not_a_converter(plugins):
    with pytest.raises(ConnectError, match="SequenceSource"):
        plugins.converter_class("SequenceSource")


def test_listing_order_and_info(plugins):
    descs = plugins.all()
    types = [d.type for d in descs]
    order = ["sink", "source", "transformation", "predicate", "converter", "header_converter"]
    assert types == sorted(types, key=order.index)
    names = [d.class_name for d in plugins.connectors()]
    assert "runtime.connectors.testing.SequenceSourceConnector" in names
    assert all(d.type in ("sink", "source") for d in plugins.connectors())
    info = plugins.connector_desc("SequenceSource").info()
    assert info["class"] == "runtime.connectors.testing.SequenceSourceConnector" and info["type"] == "source"


def test_plugin_path_folder_and_dotted_path_of_unregistered_class(tmp_path):
    module = "h8_folder_plugin"
    (tmp_path / f"{module}.py").write_text(
        textwrap.dedent("""
        from runtime.api import ConfigDef, SourceConnector, SourceTask

        class FolderTask(SourceTask):
            def start(self, props): pass
            def poll(self): return None
            def stop(self): pass

        class FolderSourceConnector(SourceConnector):
            def start(self, props): pass
            def task_class(self): return FolderTask
            def task_configs(self, max_tasks): return [{}]
            def stop(self): pass
            def config(self): return ConfigDef()
        """)
    )
    try:
        plugins = Plugins([str(tmp_path)])
        with pytest.raises(ConnectError):
            plugins.connector_desc("FolderSource")  # not registered: only its dotted path finds it
        desc = plugins.connector_desc(f"{module}.FolderSourceConnector")
        assert desc.type == "source" and desc.class_name == f"{module}.FolderSourceConnector"
        # once imported it is known by its short names too, and listed
        assert plugins.connector_desc("FolderSource") is desc or plugins.connector_desc("FolderSource").cls is desc.cls
        assert f"{module}.FolderSourceConnector" in [d.class_name for d in plugins.connectors()]
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(module, None)
