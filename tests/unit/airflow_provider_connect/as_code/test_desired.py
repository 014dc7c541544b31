"""Connectors as code: the desired state read from a folder of JSON and YAML files, or from a dict."""

import json

import pytest

from airflow_provider_connect.as_code.desired import DesiredStateError, load_desired_state
from airflow_provider_connect.status import ConnectState
from tests.unit.airflow_provider_connect.bodies import source_config


def test_a_folder_of_json_and_yaml_files(tmp_path):
    (tmp_path / "orders.json").write_text(json.dumps({"config": source_config(), "state": "paused"}))
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "two.yaml").write_text(
        "name: a\nconfig: {connector.class: X, tasks.max: 2}\n---\nname: b\nconfig: {connector.class: Y}\n"
        "initial_state: STOPPED\noffsets:\n  - {partition: {p: 1}, offset: {o: 5}}\n"
    )
    (tmp_path / "notes.txt").write_text("not a connector")
    desired = load_desired_state(tmp_path)
    assert sorted(desired) == ["a", "b", "orders"]
    assert desired["orders"].state is ConnectState.PAUSED  # the name comes from the file
    assert desired["a"].normalised_config == {"connector.class": "X", "tasks.max": "2", "name": "a"}
    assert desired["b"].state is ConnectState.STOPPED
    assert desired["b"].offsets_payload() == [{"partition": {"p": 1}, "offset": {"o": 5}}]


@pytest.mark.parametrize(
    "spec,message",
    [
        ({"config": source_config(), "state": "FAILED"}, "state must be one of"),
        ({"config": source_config(), "state": "SLEEPING"}, "Unknown Kafka Connect state"),
        ({"config": {"k": None}}, "null"),
        ({"config": source_config(name="other")}, "is not the connector's name"),
        ({"config": source_config(), "replicas": 2}, "replicas"),
        ({"config": source_config(), "offsets": [{"partition": {}}]}, "offsets.0.offset"),
    ],
)
def test_a_bad_connector_is_named_with_what_is_wrong(tmp_path, spec, message):
    (tmp_path / "c.json").write_text(json.dumps(spec))
    with pytest.raises(DesiredStateError, match=message) as info:
        load_desired_state(tmp_path)
    assert "c.json" in str(info.value)


def test_a_name_declared_twice_names_both_files(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps({"name": "x", "config": source_config()}))
    (tmp_path / "b.yaml").write_text("name: x\nconfig: {connector.class: Y}\n")
    with pytest.raises(DesiredStateError, match=r"'x' is declared twice: in .*a.json and .*b.yaml"):
        load_desired_state(tmp_path)
    with pytest.raises(DesiredStateError, match="neither a folder nor a file"):
        load_desired_state(tmp_path / "missing")


def test_a_kip995_create_body_is_a_desired_connector():
    offsets = [{"partition": {"f": 1}, "offset": {"p": 3}}]
    body = {"name": "a", "config": source_config(), "initial_state": "PAUSED", "initial_offsets": offsets}
    desired = load_desired_state([body])["a"]
    assert desired.state is ConnectState.PAUSED and desired.offsets_payload() == offsets
