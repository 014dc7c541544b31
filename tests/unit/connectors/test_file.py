"""FileStream source and sink driven directly through the plugin API (no runtime)."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from runtime.api import ConfigDef, ConnectError, SinkRecord, SourceRecord, TopicPartition
from runtime.api.data import STRING_SCHEMA
from runtime.connectors import file as filemod
from runtime.connectors.file import (
    FileStreamSinkConnector,
    FileStreamSinkTask,
    FileStreamSourceConnector,
    FileStreamSourceTask,
    LineSplitter,
    make_record,
)
from tests.support.clock import FakeClock

REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def quick_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every poll that finds no new data waits; keep the suite fast.
    monkeypatch.setattr(filemod, "IDLE_WAIT_S", 0.01)


def source(start_source, path: Path, **extra: str) -> FileStreamSourceTask:
    return start_source(FileStreamSourceTask, {"name": "fs", "file": str(path), "topic": "lines", **extra})


# ---- source task: lines, positions, batches ------------------------------------------------------


def test_source_emits_each_line_with_null_key_string_schema_and_byte_position(tmp_path, start_source, drain):
    path = tmp_path / "in.txt"
    path.write_bytes(b"alpha\nbeta\n\ngamma\n")
    records = drain(source(start_source, path))
    assert [r.value for r in records] == ["alpha", "beta", "", "gamma"]
    assert [r.source_offset for r in records] == [{"position": 6}, {"position": 11}, {"position": 12}, {"position": 18}]
    for r in records:
        assert r.key is None and r.key_schema is None
        assert r.value_schema == STRING_SCHEMA
        assert r.topic == "lines"
        assert r.source_partition == {"filename": str(path)}


def test_source_respects_batch_size(tmp_path, start_source):
    path = tmp_path / "in.txt"
    path.write_text("".join(f"{i}\n" for i in range(25)))
    task = source(start_source, path, **{"batch.size": "10"})
    sizes = [len(task.poll()) for _ in range(3)]
    assert sizes == [10, 10, 5]
    assert not task.poll()


def test_a_task_with_everything_committed_waits_until_its_file_grows(tmp_path, start_source, monkeypatch):
    # An idle task does not wake on its own (thousands of them would cost a core): one thread checks every
    # waiting task's file (file_growth.py) and wakes the task whose file grew.
    monkeypatch.setattr(filemod, "WATCHED_WAIT_S", 3600)
    path = tmp_path / "in.txt"
    path.write_text("one\n")
    task = source(start_source, path)
    assert [r.value for r in task.poll()] == ["one"]
    task.commit()  # what the runtime calls once the offsets are stored
    polled: list = []
    poller = threading.Thread(target=lambda: polled.append(task.poll()))
    poller.start()
    with path.open("a") as f:
        f.write("two\n")
    poller.join(30)
    assert not poller.is_alive(), "the file grew but the waiting task was not woken"
    records = polled[0] or task.poll()  # the line, or the wait for it ended and the next poll reads it
    assert [r.value for r in records] == ["two"]


@pytest.mark.parametrize("batch_size", ["0", "-3"])
def test_batch_size_below_one_still_makes_progress(tmp_path, start_source, batch_size):
    path = tmp_path / "in.txt"
    path.write_text("a\nb\n")
    task = source(start_source, path, **{"batch.size": batch_size})
    assert [[r.value for r in task.poll()] for _ in range(2)] == [["a"], ["b"]]


def test_partial_last_line_waits_for_its_newline(tmp_path, start_source, drain):
    path = tmp_path / "in.txt"
    path.write_bytes(b"one\ntw")
    task = source(start_source, path)
    first = drain(task)
    assert [(r.value, r.source_offset["position"]) for r in first] == [("one", 4)]
    with path.open("ab") as f:
        f.write(b"o\nthree")
    second = drain(task)
    assert [(r.value, r.source_offset["position"]) for r in second] == [("two", 8)]
    with path.open("ab") as f:
        f.write(b"\n")
    assert [(r.value, r.source_offset["position"]) for r in drain(task)] == [("three", 14)]


def test_crlf_and_lone_cr_end_lines_as_in_kafka(tmp_path, start_source, drain):
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\r\nb\rc\n\r\nd\r")
    task = source(start_source, path)
    records = drain(task)
    # "d\r" is held back: the '\r' may be the first half of "\r\n".
    assert [(r.value, r.source_offset["position"]) for r in records] == [("a", 3), ("b", 5), ("c", 7), ("", 9)]
    with path.open("ab") as f:
        f.write(b"\ne\n")
    assert [(r.value, r.source_offset["position"]) for r in drain(task)] == [("d", 12), ("e", 14)]


def test_positions_count_bytes_for_multibyte_utf8(tmp_path, start_source, drain, offsets):
    path = tmp_path / "in.txt"
    path.write_bytes("héllo\n日本\nend\n".encode())
    records = drain(source(start_source, path))
    assert [r.value for r in records] == ["héllo", "日本", "end"]
    assert [r.source_offset["position"] for r in records] == [7, 14, 18]
    # Resuming at a position in bytes lands exactly on the next line.
    offsets.commit({"filename": str(path)}, {"position": 7})
    assert [r.value for r in drain(source(start_source, path))] == ["日本", "end"]


def test_resumes_from_the_committed_position(tmp_path, start_source, drain, offsets):
    path = tmp_path / "in.txt"
    path.write_bytes(b"first\nsecond\nthird\n")
    offsets.commit({"filename": str(path)}, {"position": 13})
    records = drain(source(start_source, path))
    assert [(r.value, r.source_offset["position"]) for r in records] == [("third", 19)]
    assert offsets.reads == [{"filename": str(path)}]


def test_committed_offset_of_wrong_type_fails_the_task(tmp_path, start_source, offsets):
    path = tmp_path / "in.txt"
    path.write_bytes(b"x\n")
    offsets.commit({"filename": str(path)}, {"position": "13"})
    with pytest.raises(ConnectError, match="Offset position is the incorrect type"):
        source(start_source, path).poll()


def test_waits_for_a_missing_file_to_appear(tmp_path, start_source, drain, monkeypatch):
    path = tmp_path / "later.txt"
    clock = FakeClock()
    task = start_source(lambda: FileStreamSourceTask(clock), {"name": "fs", "file": str(path), "topic": "lines"})
    assert task.poll() is None
    clock.on_wait = task.stop  # the worker stops the task while it waits for the file
    assert task.poll() is None
    assert clock.waits == [1.0, 1.0] and clock.woken == [False, True]  # a second between tries, cut short by stop()
    task2 = source(start_source, path)
    path.write_bytes(b"now\n")
    assert [r.value for r in drain(task2)] == ["now"]


def test_stop_ends_polling(tmp_path, start_source):
    path = tmp_path / "in.txt"
    path.write_bytes(b"x\n")
    task = source(start_source, path)
    task.stop()
    assert task.poll() is None


def test_lines_longer_than_a_read_chunk(tmp_path, start_source, drain, monkeypatch):
    monkeypatch.setattr(filemod, "READ_CHUNK", 7)
    path = tmp_path / "in.txt"
    long_line = "x" * 50
    path.write_bytes(f"{long_line}\r\nshort\n".encode())
    records = drain(source(start_source, path))
    assert [(r.value, r.source_offset["position"]) for r in records] == [(long_line, 52), ("short", 58)]


@pytest.mark.parametrize("terminators", [["\n", "\r\n", "\r"], ["\r\n"], ["\n"], ["\n", "\r\n"]])
@pytest.mark.parametrize("seed", range(4))
def test_splitter_gives_the_same_lines_for_any_chunking(seed, terminators):
    rng = random.Random(seed)
    pieces = ["plain", "é", "日本語", "", "tab\there"]
    text = "".join(rng.choice(pieces) + rng.choice(terminators) for _ in range(200)) + "tail"
    data = text.encode()
    whole_lines, whole_ends = LineSplitter(0).feed(data)
    splitter = LineSplitter(0)
    lines, ends, i = [], [], 0
    while i < len(data):
        step = rng.randint(1, 9)
        got_lines, got_ends = splitter.feed(data[i : i + step])
        lines += got_lines
        ends += got_ends
        i += step
    assert (lines, ends) == (whole_lines, whole_ends)
    assert lines == text.replace("\r\n", "\n").replace("\r", "\n").split("\n")[:-1]
    # Each line ends right after its terminator (CRLF counted once); the data ends with "tail", so
    # no final '\r' is left undecided.
    assert ends == [m.end() for m in re.finditer(rb"\r\n|\r|\n", data)]
    assert splitter.pending_bytes == len(b"tail")


def test_reads_stdin_without_tracking_positions():
    # A real child process whose stdin is a pipe: the task reads fd 0 when `file` is unset.
    script = (
        "import runtime.connectors.file as fm\n"
        "from runtime.api import SourceTaskContext\n"
        "from runtime.clock import SystemClock\n"
        "class Recording(SystemClock):\n"  # waits as the system clock does, and remembers each wait
        "    waits = []\n"
        "    def wait(self, event, timeout):\n"
        "        self.waits.append(timeout)\n"
        "        return super().wait(event, timeout)\n"
        "fm.IDLE_WAIT_S = 0.05\n"
        "clock = Recording()\n"
        "t = fm.FileStreamSourceTask(clock); t.initialize(SourceTaskContext()); t.start({'topic': 't'})\n"
        "out = []\n"
        "for _ in range(50):\n"
        "    out += t.poll() or []\n"
        "    if len(out) == 2: break\n"
        "print([(r.value, r.source_partition, r.source_offset) for r in out])\n"
        "before = len(clock.waits); after_eof = t.poll()\n"
        "print(after_eof, clock.waits[before:] == [fm.IDLE_WAIT_S])\n"  # at EOF poll waits instead of spinning
    )
    result = subprocess.run(
        [sys.executable, "-c", script], input=b"one\ntwo\n", capture_output=True, cwd=REPO_ROOT, timeout=60
    )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().splitlines() == [
        "[('one', {'filename': None}, {'position': None}), ('two', {'filename': None}, {'position': None})]",
        "None True",
    ]


def test_fast_records_are_complete_source_records():
    fast = make_record({"filename": "f"}, {"position": 3}, "t", "k", "v", STRING_SCHEMA, STRING_SCHEMA)
    plain = SourceRecord({"filename": "f"}, {"position": 3}, "t", None, "k", "v", STRING_SCHEMA, STRING_SCHEMA)
    assert isinstance(fast, SourceRecord)
    slots = {s for cls in SourceRecord.__mro__ for s in getattr(cls, "__slots__", ())}
    assert {s: getattr(fast, s) for s in slots} == {s: getattr(plain, s) for s in slots}


# ---- source connector ------------------------------------------------------------------------------


def test_source_connector_runs_a_single_task_with_its_config():
    connector = FileStreamSourceConnector()
    props = {"name": "fs", "file": "/tmp/x", "topic": "t"}
    connector.start(props)
    assert connector.task_class() is FileStreamSourceTask
    assert connector.task_configs(5) == [props]
    connector.stop()


def test_source_config_definition_matches_kafka():
    definition = FileStreamSourceConnector().config()
    assert isinstance(definition, ConfigDef)
    infos = {k.name: k.to_info() for k in definition.keys.values()}
    assert list(infos) == ["file", "topic", "batch.size"]
    assert infos["file"]["required"] is False and infos["file"]["default_value"] is None
    assert infos["file"]["importance"] == "HIGH"
    assert infos["file"]["documentation"] == "Source filename. If not specified, the standard input will be used"
    assert infos["topic"]["required"] is True and infos["topic"]["importance"] == "HIGH"
    assert infos["batch.size"] == {**infos["batch.size"], "type": "INT", "default_value": "2000", "importance": "LOW"}


@pytest.mark.parametrize(
    "props, key, message",
    [
        ({"file": "f"}, "topic", 'Missing required configuration "topic"'),
        ({"file": "f", "topic": ""}, "topic", "String may not be empty"),
        ({"file": "f", "topic": "t", "batch.size": "many"}, "batch.size", "Not a number of type INT"),
    ],
)
def test_source_config_validation_errors(props, key, message):
    errors = {v.name: v.errors for v in FileStreamSourceConnector().validate(props)}
    assert any(message in e for e in errors[key]), errors
    assert sum(len(e) for e in errors.values()) == 1


def test_source_connector_start_rejects_a_config_without_topic():
    with pytest.raises(ConnectError, match="topic"):
        FileStreamSourceConnector().start({"file": "f"})


def test_exactly_once_support_depends_on_a_real_file():
    connector = FileStreamSourceConnector()
    assert connector.exactly_once_support({"file": "f", "topic": "t"}) == "SUPPORTED"
    assert connector.exactly_once_support({"topic": "t"}) == "UNSUPPORTED"
    assert connector.exactly_once_support({"file": "", "topic": "t"}) == "UNSUPPORTED"


# ---- source alter_offsets (Kafka 3.9 validation, answers True) ----------------------------------------

CFG = {"name": "fs", "file": "/data/in.txt", "topic": "t"}


def test_source_alter_offsets_accepts_valid_offsets_and_tombstones():
    connector = FileStreamSourceConnector()
    assert connector.alter_offsets(CFG, [({"filename": "/data/in.txt"}, {"position": 42})]) is True
    assert connector.alter_offsets(CFG, [({"filename": "/data/in.txt"}, {"position": 0})]) is True
    # Tombstones are allowed for anything, so garbage can be cleaned up.
    assert connector.alter_offsets(CFG, [({"garbage": 1}, None)]) is True


@pytest.mark.parametrize(
    "partition, offset, message",
    [
        ({"filename": "f"}, {}, "Offset objects should either be null or contain the key 'position'"),
        ({"filename": "f"}, {"pos": 1}, "Offset objects should either be null or contain the key 'position'"),
        (
            {"filename": "f"},
            {"position": "10"},
            "The value for the 'position' key in the offset is expected to be a Long value",
        ),
        (
            {"filename": "f"},
            {"position": 1.5},
            "The value for the 'position' key in the offset is expected to be a Long value",
        ),
        (
            {"filename": "f"},
            {"position": True},
            "The value for the 'position' key in the offset is expected to be a Long value",
        ),
        (
            {"filename": "f"},
            {"position": None},
            "The value for the 'position' key in the offset is expected to be a Long value",
        ),
        (
            {"filename": "f"},
            {"position": -1},
            "The value for the 'position' key in the offset should be a non-negative value",
        ),
        (None, {"position": 1}, "Partition objects cannot be null"),
        ({"file": "f"}, {"position": 1}, "Partition objects should contain the key 'filename'"),
    ],
)
def test_source_alter_offsets_rejects_bad_offsets(partition, offset, message):
    with pytest.raises(ConnectError) as info:
        FileStreamSourceConnector().alter_offsets(CFG, [(partition, offset)])
    assert str(info.value) == message


def test_source_alter_offsets_refuses_stdin():
    with pytest.raises(ConnectError, match="Offsets cannot be modified if the 'file' configuration is unspecified"):
        FileStreamSourceConnector().alter_offsets({"name": "fs", "topic": "t"}, [({"filename": None}, None)])


# ---- sink ------------------------------------------------------------------------------------------


def sink_record(value, offset=0) -> SinkRecord:
    return SinkRecord("in", 0, None, value, offset)


def test_sink_writes_one_value_per_line_and_flushes(tmp_path, start_sink):
    path = tmp_path / "out.txt"
    path.write_text("existing\n")
    task = start_sink(FileStreamSinkTask, {"name": "sink", "file": str(path), "topics": "in"})
    task.put([sink_record("a", 0), sink_record("b", 1), sink_record(None, 2)])
    task.put([sink_record(7, 3), sink_record(True, 4), sink_record({"k": 1}, 5)])
    task.put([])
    task.flush({TopicPartition("in", 0): 6})
    assert path.read_text() == 'existing\na\nb\nnull\n7\ntrue\n{"k":1}\n'
    task.put([sink_record("later", 6)])
    assert task.pre_commit({TopicPartition("in", 0): 7}) == {TopicPartition("in", 0): 7}
    assert path.read_text().endswith("later\n")


def test_sink_roundtrip_through_source(tmp_path, start_sink, start_source, drain):
    path = tmp_path / "out.txt"
    sink = start_sink(FileStreamSinkTask, {"file": str(path)})
    values = [f"line {i} ü" for i in range(1000)]
    sink.put([sink_record(v, i) for i, v in enumerate(values)])
    sink.flush({})
    records = drain(source(start_source, path))
    assert [r.value for r in records] == values
    assert records[-1].source_offset["position"] == path.stat().st_size


def test_sink_connector_configs_and_alter_offsets():
    connector = FileStreamSinkConnector()
    props = {"name": "sink", "file": "/tmp/o", "topics": "a"}
    connector.start(props)
    assert connector.task_class() is FileStreamSinkTask
    assert connector.task_configs(3) == [props, props, props]
    assert connector.alter_offsets(props, {TopicPartition("a", 0): 5, TopicPartition("a", 1): None}) is True
    keys = connector.config().keys
    assert list(keys) == ["file"]
    assert keys["file"].to_info()["documentation"] == (
        "Destination filename. If not specified, the standard output will be used"
    )


def test_sink_start_fails_for_an_unwritable_file(tmp_path, start_sink):
    with pytest.raises(ConnectError, match="Couldn't find or create file"):
        start_sink(FileStreamSinkTask, {"file": str(tmp_path / "missing-dir" / "out.txt")})
