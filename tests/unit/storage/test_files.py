"""Standalone file stores (runtime.storage.files): atomic rewrites, refusal of corrupt files, KIP-915 tolerance."""

from __future__ import annotations

import json
import logging
import os

import pytest

from runtime.storage.config_codec import ConnectorState
from runtime.storage.files import FORMAT, FileConfigStore, FileOffsetStore, write_atomically
from runtime.storage.states import TargetState

CONFIG = {"name": "c", "connector.class": "SequenceSource", "tasks.max": "2"}


def started(store):
    store.start()
    return store


def test_write_atomically_replaces_and_leaves_no_temp_files(tmp_path):
    path = tmp_path / "sub" / "f.json"
    write_atomically(path, b"one")
    write_atomically(path, b"two")
    assert path.read_bytes() == b"two"
    assert os.listdir(path.parent) == ["f.json"]


def test_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "f.json"
    write_atomically(path, b"old")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_atomically(path, b"new")
    monkeypatch.undo()
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["f.json"]


def test_config_store_round_trip(tmp_path):
    path = tmp_path / "connect.configs"
    store = started(FileConfigStore(path))
    stopped = ConnectorState(dict(CONFIG), TargetState.STOPPED, [])
    paused = ConnectorState(dict(CONFIG, name="p"), TargetState.PAUSED, [{"task.index": "0"}, {"task.index": "1"}])
    store.save("c", stopped)
    store.save("p", paused)
    store.save("gone", ConnectorState(dict(CONFIG, name="gone")))
    store.save("gone", None)
    reloaded = started(FileConfigStore(path))
    assert reloaded.load() == {"c": stopped, "p": paused}
    document = json.loads(path.read_text())
    assert document["format"] == FORMAT
    assert {"key": "target-state-c", "value": {"state": "PAUSED", "state.v2": "STOPPED"}} in document["records"]


def test_failed_config_save_changes_nothing(tmp_path, monkeypatch):
    path = tmp_path / "connect.configs"
    store = started(FileConfigStore(path))
    store.save("c", ConnectorState(dict(CONFIG)))
    before = path.read_bytes()
    monkeypatch.setattr(
        "runtime.storage.files.write_atomically", lambda *_: (_ for _ in ()).throw(OSError("disk full"))
    )
    with pytest.raises(OSError):
        store.save("d", ConnectorState(dict(CONFIG, name="d")))
    assert list(store.load()) == ["c"]
    assert path.read_bytes() == before


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b"\xff\xfe garbage", b""])
@pytest.mark.parametrize("store_cls", [FileConfigStore, FileOffsetStore])
def test_corrupt_file_is_refused_and_not_overwritten(tmp_path, content, store_cls):
    path = tmp_path / "state.file"
    path.write_bytes(content)
    store = store_cls(path)
    with pytest.raises(ValueError) as info:
        store.start()
    assert "refusing to overwrite" in str(info.value)
    assert path.read_bytes() == content


def test_config_file_unknown_fields_and_records_are_skipped(tmp_path, caplog):
    path = tmp_path / "connect.configs"
    path.write_text(
        json.dumps(
            {
                "format": FORMAT,
                "written-by": "a newer version",
                "records": [
                    {"key": "target-state-c", "value": {"state": "PAUSED", "state.v2": "STOPPED"}, "timestamp": 1},
                    {"key": "connector-c", "value": {"properties": CONFIG}},
                    {"key": "some-future-record", "value": {}},
                    {"value": {"no": "key"}},
                    "not even an object",
                ],
            }
        )
    )
    with caplog.at_level(logging.WARNING):
        store = started(FileConfigStore(path))
    assert store.load() == {"c": ConnectorState(CONFIG, TargetState.STOPPED, [])}
    assert "some-future-record" in caplog.text


def test_newer_format_is_still_read(tmp_path, caplog):
    path = tmp_path / "connect.configs"
    path.write_text(
        json.dumps({"format": FORMAT + 1, "records": [{"key": "connector-c", "value": {"properties": CONFIG}}]})
    )
    with caplog.at_level(logging.WARNING, logger="runtime.storage.files"):
        store = started(FileConfigStore(path))
    assert list(store.load()) == ["c"]
    assert "newer version" in caplog.text

    offsets = tmp_path / "connect.offsets"
    offsets.write_text(json.dumps({"format": FORMAT + 5, "offsets": [['["c",{"p":1}]', '{"o":2}']], "extra": 1}))
    assert started(FileOffsetStore(offsets)).items() == [(b'["c",{"p":1}]', b'{"o":2}')]


def test_missing_files_start_empty(tmp_path):
    assert started(FileConfigStore(tmp_path / "none.configs")).load() == {}
    assert started(FileOffsetStore(tmp_path / "none.offsets")).items() == []


def test_offset_store_round_trip_with_tombstones_and_binary(tmp_path):
    path = tmp_path / "connect.offsets"
    store = started(FileOffsetStore(path))
    store.set(
        {
            b'["c",{"task.id":"c-0"}]': b'{"saved":5}',
            b'["c",{"task.id":"c-1"}]': b'{"saved":7}',
            b"\xff\x00bin": b"\x80\x81",
        }
    )
    store.set({b'["c",{"task.id":"c-1"}]': None})
    assert store.get([b'["c",{"task.id":"c-1"}]', b'["c",{"task.id":"c-0"}]']) == {
        b'["c",{"task.id":"c-1"}]': None,
        b'["c",{"task.id":"c-0"}]': b'{"saved":5}',
    }
    reloaded = started(FileOffsetStore(path))
    assert sorted(reloaded.items()) == sorted(
        [(b'["c",{"task.id":"c-0"}]', b'{"saved":5}'), (b"\xff\x00bin", b"\x80\x81")]
    )
    entries = json.loads(path.read_text())["offsets"]
    assert ['["c",{"task.id":"c-1"}]', None] in entries  # tombstones are kept, as the reference's file store does


def test_offset_file_unreadable_entries_are_skipped(tmp_path):
    path = tmp_path / "connect.offsets"
    path.write_text(
        json.dumps(
            {
                "format": FORMAT,
                "offsets": [
                    ['["c",{"p":1}]', '{"o":1}'],
                    ["only-one"],
                    [None, '{"o":2}'],
                    [{"base64": "AAE="}, {"base64": "AgM="}],
                    7,
                ],
            }
        )
    )
    store = started(FileOffsetStore(path))
    assert sorted(store.items()) == sorted([(b'["c",{"p":1}]', b'{"o":1}'), (b"\x00\x01", b"\x02\x03")])


def test_failed_offset_write_changes_nothing(tmp_path, monkeypatch):
    path = tmp_path / "connect.offsets"
    store = started(FileOffsetStore(path))
    store.set({b"k": b"1"})
    monkeypatch.setattr(
        "runtime.storage.files.write_atomically", lambda *_: (_ for _ in ()).throw(OSError("disk full"))
    )
    with pytest.raises(OSError):
        store.set({b"k": b"2"})
    assert store.get([b"k"]) == {b"k": b"1"}
