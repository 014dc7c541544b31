"""Connector files given to the standalone CLI (contract section 6): three formats, tried in order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runtime.connector_files import ConnectorFileError, parse_connector_file


def write(tmp_path: Path, name: str, content: str) -> Path:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


def missing_name(path: Path) -> str:
    return f"Connector configuration at '{path}' is missing the mandatory 'name' configuration"


def test_flat_json_config(tmp_path):
    path = write(
        tmp_path,
        "c.json",
        json.dumps(
            {
                "name": "c1",
                "connector.class": "SequenceSource",
                "tasks.max": 2,
                "flag": True,
                "ratio": 1.5,
                "gone": None,
            }
        ),
    )
    request = parse_connector_file(path)
    assert request.name == "c1"
    assert request.config == {
        "name": "c1",
        "connector.class": "SequenceSource",
        "tasks.max": "2",
        "flag": "true",
        "ratio": "1.5",
    }
    assert request.initial_state is None
    assert request.path == path


def test_flat_json_initial_state_is_just_a_property(tmp_path):
    path = write(tmp_path, "c.json", json.dumps({"name": "c1", "connector.class": "X", "initial_state": "PAUSED"}))
    request = parse_connector_file(path)
    assert request.initial_state is None
    assert request.config["initial_state"] == "PAUSED"


def test_create_request_json(tmp_path):
    path = write(
        tmp_path,
        "c.json",
        json.dumps(
            {
                "name": "c2",
                "config": {"connector.class": "X", "tasks.max": 3},
                "initial_state": "stopped",
                "ignored": {"x": 1},
            }
        ),
    )
    request = parse_connector_file(path)
    assert request.name == "c2"
    assert request.config == {"connector.class": "X", "tasks.max": "3", "name": "c2"}
    assert request.initial_state == "stopped"


def test_create_request_json_with_matching_config_name(tmp_path):
    path = write(tmp_path, "c.json", json.dumps({"name": "c2", "config": {"name": "c2", "connector.class": "X"}}))
    request = parse_connector_file(path)
    assert request.config == {"name": "c2", "connector.class": "X"}
    assert request.initial_state is None


def test_create_request_json_name_mismatch(tmp_path):
    path = write(tmp_path, "c.json", json.dumps({"name": "c2", "config": {"name": "other", "connector.class": "X"}}))
    with pytest.raises(ConnectorFileError) as info:
        parse_connector_file(path)
    assert (
        str(info.value)
        == f"Connector name configuration in 'config' doesn't match the one specified in 'name' at '{path}'"
    )


def test_properties_file(tmp_path):
    path = write(
        tmp_path, "c.properties", "# a connector\nname=c3\nconnector.class=FileStreamSource\nfile=/tmp/in\\\n.txt\n"
    )
    request = parse_connector_file(path)
    assert request.name == "c3"
    assert request.config == {"name": "c3", "connector.class": "FileStreamSource", "file": "/tmp/in.txt"}
    assert request.initial_state is None


@pytest.mark.parametrize(
    "filename, content",
    [
        ("flat.json", json.dumps({"connector.class": "X", "tasks.max": "1"})),
        ("flat-empty.json", json.dumps({"name": "", "connector.class": "X"})),
        ("request.json", json.dumps({"config": {"connector.class": "X"}, "initial_state": "PAUSED"})),
        ("request-config-name-only.json", json.dumps({"config": {"name": "c", "connector.class": "X"}})),
        ("c.properties", "connector.class=X\ntasks.max=1\n"),
        ("blank.properties", "name=   \nconnector.class=X\n"),
        ("empty.properties", ""),
    ],
)
def test_missing_name(tmp_path, filename, content):
    path = write(tmp_path, filename, content)
    with pytest.raises(ConnectorFileError) as info:
        parse_connector_file(path)
    assert str(info.value) == missing_name(path)


@pytest.mark.parametrize(
    "content",
    [
        json.dumps({"name": "c", "config": {"connector.class": "X"}, "initial_state": 3}),
        json.dumps({"name": "c", "config": {"connector.class": "X", "nested": {"a": 1}}}),
    ],
)
def test_unusable_create_requests(tmp_path, content):
    with pytest.raises(ConnectorFileError):
        parse_connector_file(write(tmp_path, "c.json", content))


def test_unreadable_file(tmp_path):
    with pytest.raises(ConnectorFileError) as info:
        parse_connector_file(tmp_path / "missing.json")
    assert "missing.json" in str(info.value)


def test_properties_connector_files_are_iso_8859_1_and_json_files_utf_8(tmp_path):
    props = tmp_path / "c.properties"
    props.write_bytes(b"name=caf\xe9\nconnector.class=FileStreamSource\nfile=/tmp/\xff\n")
    request = parse_connector_file(props)  # bytes that are not UTF-8 read as Java reads them
    assert request.name == "café" and request.config["file"] == "/tmp/ÿ"
    as_json = tmp_path / "c.json"
    as_json.write_bytes('{"name": "café", "connector.class": "FileStreamSource"}'.encode())
    assert parse_connector_file(as_json).name == "café"
