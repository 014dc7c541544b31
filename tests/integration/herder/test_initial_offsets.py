"""KIP-995 through a real standalone herder: what the REST scenarios cannot reach (a create whose config write
fails after its offsets were written; connector files that carry offsets)."""

from __future__ import annotations

import errno
import json

import pytest

from runtime.connector_files import ConnectorFileError, parse_connector_file
from runtime.control.errors import ServerError

from .conftest import new_name, source_config
from .test_cli_files import apply

pytestmark = pytest.mark.integration


def saved(name: str, value: int) -> dict:
    return {"partition": {"task.id": f"{name}-0"}, "offset": {"saved": value}}


def test_a_create_whose_config_write_fails_takes_its_offsets_back(harness, monkeypatch):
    h = harness.herder
    name = new_name()
    config = source_config(name, tasks=1)

    def full_disk(*_args: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(h.config_store, "save", full_disk)
    with pytest.raises(ServerError, match="nothing was changed"):
        h.put_connector_config(name, config, False, "STOPPED", [saved(name, 5)])
    assert name not in h.connector_names()
    assert h.offsets.source_offsets(name, config) == []  # written first, then reset: nothing was created


def test_connector_files_set_offsets_only_when_they_create(harness, tmp_path):
    name = new_name("file")
    path = tmp_path / "c.json"

    def write(offset: int) -> None:
        body = {"name": name, "config": source_config(name, tasks=1), "initial_state": "STOPPED"}
        path.write_text(json.dumps({**body, "initial_offsets": [saved(name, offset)]}))

    write(5)
    apply(harness, path)
    assert harness.herder.connector_offsets(name) == {"offsets": [saved(name, 5)]}
    write(9)  # the file applied again at the next start: the connector exists, its offsets are left alone
    apply(harness, path)
    assert harness.herder.connector_offsets(name) == {"offsets": [saved(name, 5)]}


def test_connector_file_offsets_must_be_a_list_of_objects(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"name": "c", "config": {"connector.class": "X"}, "initial_offsets": {"a": 1}}))
    with pytest.raises(ConnectorFileError, match="'initial_offsets' at .* must be a list"):
        parse_connector_file(path)
