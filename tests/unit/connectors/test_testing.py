"""SequenceSource and RecordingSink, and their fault knobs, driven directly through the plugin API."""

from __future__ import annotations

import base64
import json
import logging
import threading
from pathlib import Path

import pytest

from runtime.api import ConnectError, SinkRecord, TopicPartition, UnsupportedOperationError
from runtime.api.data import STRING_SCHEMA
from runtime.connectors import testing as testingmod
from runtime.connectors.testing import (
    RecordingSinkConnector,
    RecordingSinkTask,
    SequenceSourceConnector,
    SequenceSourceTask,
)
from tests.support.clock import FakeClock


@pytest.fixture(autouse=True)
def quick_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(testingmod, "IDLE_WAIT_S", 0.01)


def seq_props(**extra: str) -> dict[str, str]:
    return {"name": "seq", "topic": "numbers", "task.index": "0", **extra}


def sink_props(path: Path, **extra: str) -> dict[str, str]:
    return {"name": "rec", "topics": "in", "output.file": str(path), "task.index": "0", **extra}


def commit_last(offsets, records) -> None:
    """What the runtime does once the records are acknowledged: store the latest offset of each partition."""
    for record in records:
        offsets.commit(record.source_partition, record.source_offset)


# ---- SequenceSource -----------------------------------------------------------------------------------


def test_sequence_records_carry_key_struct_value_partition_and_offset(start_source):
    task = start_source(SequenceSourceTask, seq_props(**{"task.index": "2", "batch.size": "5"}))
    batch = task.poll()
    assert len(batch) == 5
    for n, record in enumerate(batch):
        assert record.topic == "numbers"
        assert record.key == "seq-2" and record.key_schema == STRING_SCHEMA
        assert record.value == {"task": 2, "seqno": n}
        assert record.source_partition == {"task.id": "seq-2"}
        assert record.source_offset == {"saved": n + 1}
    schema = batch[0].value_schema
    assert schema.type == "struct" and schema.name == "runtime.testing.Sequence"
    assert [(f.name, f.schema.type) for f in schema.fields] == [("task", "int32"), ("seqno", "int64")]
    assert [r.value["seqno"] for r in task.poll()] == [5, 6, 7, 8, 9]


def test_sequence_stops_at_messages_per_task(start_source, drain):
    clock = FakeClock()
    task = start_source(lambda: SequenceSourceTask(clock), seq_props(**{"messages.per.task": "25", "batch.size": "10"}))
    records = drain(task)
    assert [r.value["seqno"] for r in records] == list(range(25))
    assert task.poll() is None
    # each empty poll (drain's last one, and this one) waited for the runtime's wake-up: not a busy loop
    assert clock.waits == [testingmod.IDLE_WAIT_S] * 2


def test_a_finished_sequence_polls_for_the_commit_then_waits_until_woken(start_source, drain, monkeypatch):
    # Thousands of finished tasks must not each wake once a second (issue 10's idle cluster): once the
    # runtime has committed what the task produced (SourceTask.commit()), only the runtime's wake-up ends
    # its wait; before that it returns once a second so the runtime's loop can commit.
    monkeypatch.setattr(testingmod, "FINISHED_WAIT_S", 3600.0)
    clock = FakeClock()
    task = start_source(lambda: SequenceSourceTask(clock), seq_props(**{"messages.per.task": "3"}))
    assert [r.value["seqno"] for r in drain(task)] == [0, 1, 2]
    assert clock.waits == [testingmod.IDLE_WAIT_S]  # drain's last poll: nothing committed yet
    task.commit()
    assert task.poll() is None
    assert clock.waits == [testingmod.IDLE_WAIT_S, 3600.0]

    task = start_source(SequenceSourceTask, seq_props(**{"messages.per.task": "0"}))  # the system clock
    polled: list = []
    poller = threading.Thread(target=lambda: polled.append(task.poll()))
    poller.start()
    task._connect_wakeup()  # what the runtime calls for a stop, pause or resume
    poller.join(30)
    assert not poller.is_alive() and polled == [None], "the wake-up did not end a finished task's wait"


def test_a_sequence_that_never_produced_waits_until_woken(start_source, monkeypatch):
    monkeypatch.setattr(testingmod, "FINISHED_WAIT_S", 3600.0)
    clock = FakeClock()
    task = start_source(lambda: SequenceSourceTask(clock), seq_props(**{"messages.per.task": "0"}))
    assert task.poll() is None
    assert clock.waits == [3600.0]


def test_sequence_resumes_from_the_committed_offset(start_source, offsets, drain):
    props = seq_props(**{"messages.per.task": "10", "batch.size": "3"})
    first = start_source(SequenceSourceTask, props)
    produced = [*first.poll(), *first.poll()]
    commit_last(offsets, produced)
    first.stop()
    second = start_source(SequenceSourceTask, props)
    rest = drain(second)
    assert [r.value["seqno"] for r in rest] == [6, 7, 8, 9]
    assert rest[0].source_offset == {"saved": 7}


def test_sequence_continues_from_an_altered_offset_after_restart(start_source, offsets, drain):
    props = seq_props(**{"messages.per.task": "10"})
    task = start_source(SequenceSourceTask, props)
    commit_last(offsets, drain(task))
    task.stop()
    assert offsets.committed[json.dumps({"task.id": "seq-0"})] == {"saved": 10}
    # An offsets PATCH {"task.id": "seq-0"} -> {"saved": 5} while stopped, then a resume:
    connector = SequenceSourceConnector()
    assert connector.alter_offsets(props, [({"task.id": "seq-0"}, {"saved": 5})]) is False
    offsets.commit({"task.id": "seq-0"}, {"saved": 5})
    resumed = drain(start_source(SequenceSourceTask, props))
    assert [r.value["seqno"] for r in resumed] == [5, 6, 7, 8, 9]
    # A reset (tombstone) starts over from 0.
    offsets.commit({"task.id": "seq-0"}, None)
    assert [r.value["seqno"] for r in drain(start_source(SequenceSourceTask, props))] == list(range(10))


def test_sequence_rejects_a_corrupt_committed_offset(start_source, offsets):
    offsets.commit({"task.id": "seq-0"}, {"saved": "five"})
    with pytest.raises(ConnectError, match="invalid 'saved' value"):
        start_source(SequenceSourceTask, seq_props())


def test_sequence_throughput_is_respected(start_source):
    clock = FakeClock()
    task = start_source(lambda: SequenceSourceTask(clock), seq_props(**{"throughput": "200"}))
    produced, started = 0, clock.monotonic()
    while clock.monotonic() - started < 0.5:
        produced += len(task.poll() or [])
    # 200/s for 0.5 s is 100 records, plus the first one at once (float rounding may move the last one)
    assert 100 <= produced <= 102, produced
    # it waited for each next record in short slices (a stop is seen at once), never a busy loop
    assert all(0 < wait <= testingmod.SLEEP_SLICE_S for wait in clock.waits) and len(clock.waits) >= 100


def test_throttled_poll_returns_promptly_on_stop(start_source):
    clock = FakeClock()
    task = start_source(lambda: SequenceSourceTask(clock), seq_props(**{"throughput": "1"}))
    assert len(task.poll()) == 1  # the first record goes out at once
    clock.on_wait = task.stop  # the worker stops the task while the poll waits for its next record
    assert task.poll() is None  # would wait up to THROTTLE_MAX_WAIT_S (1 s) for the next record
    assert clock.woken == [True]  # the stop ended the first wait


def test_throttle_counts_from_the_first_poll(start_source):
    clock = FakeClock()
    task = start_source(lambda: SequenceSourceTask(clock), seq_props(**{"throughput": "100"}))
    clock.advance(0.3)  # a slow worker between start() and the first poll must not cause a burst
    assert len(task.poll()) == 1


def test_sequence_connector_gives_each_task_its_index():
    connector = SequenceSourceConnector()
    props = {"name": "seq", "topic": "numbers", "tasks.max": "3"}
    connector.start(props)
    assert connector.task_class() is SequenceSourceTask
    configs = connector.task_configs(3)
    assert [c["task.index"] for c in configs] == ["0", "1", "2"]
    assert all(c["name"] == "seq" and c["topic"] == "numbers" for c in configs)
    assert "task.index" not in props
    connector.stop()


def test_tasks_of_one_connector_produce_independent_sequences(start_source):
    connector = SequenceSourceConnector()
    connector.start({"name": "multi", "topic": "t", "batch.size": "2"})
    tasks = [start_source(SequenceSourceTask, cfg) for cfg in connector.task_configs(2)]
    batches = [t.poll() for t in tasks]
    assert [[(r.key, r.value) for r in b] for b in batches] == [
        [("multi-0", {"task": 0, "seqno": 0}), ("multi-0", {"task": 0, "seqno": 1})],
        [("multi-1", {"task": 1, "seqno": 0}), ("multi-1", {"task": 1, "seqno": 1})],
    ]


def test_sequence_partitions_by_key_unless_each_task_owns_a_partition(start_source):
    by_key = start_source(SequenceSourceTask, seq_props(**{"task.index": "2", "batch.size": "3"}))
    assert [r.kafka_partition for r in by_key.poll()] == [None] * 3  # the producer partitions by key
    own = start_source(
        SequenceSourceTask, seq_props(**{"task.index": "2", "batch.size": "3", "task.own.partition": "true"})
    )
    assert [r.kafka_partition for r in own.poll()] == [2] * 3


# ---- config definitions and validation -------------------------------------------------------------


def test_sequence_config_definition():
    keys = SequenceSourceConnector().config().keys
    assert {
        "topic",
        "messages.per.task",
        "throughput",
        "batch.size",
        "connector.start.fail",
        "connector.stop.fail",
        "connector.start.block.ms",
        "connector.stop.block.ms",
        "connector.validate.block.ms",
        "task.start.fail",
        "task.fail.after.records",
        "task.stop.block.ms",
        "task.fail.times",
        "task.start.block.ms",
        "alter.offsets",
        "task.own.partition",
        "connector.start.block.until.file",
        "connector.stop.block.until.file",
        "connector.starts.file",
        "connector.validate.block.until.file",
        "transaction.every.records",
        "transaction.abort.every",
    } == set(keys)
    info = {name: key.to_info() for name, key in keys.items()}
    assert info["topic"]["required"] is True
    assert info["messages.per.task"]["default_value"] == "-1"
    assert info["throughput"]["default_value"] == "-1"
    assert info["batch.size"]["default_value"] == "1000"
    assert info["alter.offsets"]["default_value"] == "false"
    assert all(i["documentation"] and i["group"] for i in info.values())


def test_recording_config_definition():
    keys = RecordingSinkConnector().config().keys
    assert "output.file" in keys and keys["output.file"].to_info()["required"] is True
    assert "alter.offsets" in keys and "task.fail.after.records" in keys
    assert "topics" not in keys  # a framework key, defined by the runtime


@pytest.mark.parametrize(
    "extra, key, message",
    [
        ({"topic": None}, "topic", 'Missing required configuration "topic"'),
        ({"throughput": "-5"}, "throughput", "Value must be at least -1"),
        ({"batch.size": "0"}, "batch.size", "Value must be at least 1"),
        ({"messages.per.task": "lots"}, "messages.per.task", "Not a number of type LONG"),
        ({"alter.offsets": "maybe"}, "alter.offsets", "String must be one of"),
        ({"connector.start.fail": "yes"}, "connector.start.fail", "Expected value to be either true or false"),
        ({"task.stop.block.ms": "-1"}, "task.stop.block.ms", "Value must be at least 0"),
    ],
)
def test_sequence_config_validation_errors(extra, key, message):
    props = {k: v for k, v in {"name": "seq", "topic": "t", **extra}.items() if v is not None}
    errors = {v.name: v.errors for v in SequenceSourceConnector().validate(props)}
    assert len(errors[key]) == 1 and message in errors[key][0], errors
    assert sum(len(e) for e in errors.values()) == 1


def test_recording_sink_requires_output_file():
    errors = {v.name: v.errors for v in RecordingSinkConnector().validate({"name": "rec", "topics": "in"})}
    assert errors["output.file"] == ['Missing required configuration "output.file" which has no default value.']
    with pytest.raises(ConnectError, match="output.file"):
        RecordingSinkConnector().start({"name": "rec", "topics": "in"})


# ---- fault knobs ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "connector_class, props",
    [
        (SequenceSourceConnector, {"name": "c", "topic": "t"}),
        (RecordingSinkConnector, {"name": "c", "topics": "t", "output.file": "/tmp/unused"}),
    ],
)
def test_connector_knobs(connector_class, props, tmp_path):
    connector_class().start(props)  # defaults: no faults
    with pytest.raises(ConnectError, match="connector.start.fail=true"):
        connector_class().start({**props, "connector.start.fail": "true"})
    failing_stop = connector_class()
    failing_stop.start({**props, "connector.stop.fail": "true"})
    with pytest.raises(ConnectError, match="connector.stop.fail=true"):
        failing_stop.stop()
    clock = FakeClock()
    connector_class(clock).start({**props, "connector.start.block.ms": "200"})
    assert clock.sleeps == [0.2]
    starts = tmp_path / "starts"
    for _ in range(2):
        connector_class().start({**props, "connector.starts.file": str(starts)})
    assert len(starts.read_text().splitlines()) == 2


@pytest.mark.parametrize("method", ["start", "stop", "validate"])
def test_connector_waits_for_its_gate_file(method, tmp_path, caplog):
    gate = tmp_path / "gate"
    connector = SequenceSourceConnector()
    props = {"name": "c", "topic": "t", f"connector.{method}.block.until.file": str(gate)}
    if method == "stop":
        connector.start(props)
    waiting = threading.Event()

    class Waiting(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if f"{method}() waits until {gate} exists" in record.getMessage():
                waiting.set()

    handler = Waiting()
    testingmod.log.addHandler(handler)
    call = {
        "start": lambda: connector.start(props),
        "stop": connector.stop,
        "validate": lambda: connector.validate(props),
    }
    caller = threading.Thread(target=call[method])
    try:
        caplog.set_level(logging.INFO, logger=testingmod.log.name)
        caller.start()
        assert waiting.wait(10), f"{method}() did not say it waits for its gate file"
        assert caller.is_alive()
        gate.touch()
        caller.join(10)
        assert not caller.is_alive(), f"{method}() went on waiting once the gate file existed"
    finally:
        testingmod.log.removeHandler(handler)
        gate.touch()


@pytest.mark.parametrize(
    "setting, failing",
    [
        ("all", {0, 1, 2}),
        ("1", {1}),
        ("0,2", {0, 2}),
        ("c-2", {2}),
        ("", set()),
        ("other-1", set()),
    ],
)
@pytest.mark.parametrize("task_class", [SequenceSourceTask, RecordingSinkTask])
def test_task_start_fail_selects_tasks(task_class, setting, failing, start_source, start_sink, tmp_path):
    for index in range(3):
        props = {
            "name": "c",
            "topic": "t",
            "topics": "t",
            "output.file": str(tmp_path / "o"),
            "task.index": str(index),
            "task.start.fail": setting,
        }
        start = start_source if task_class is SequenceSourceTask else start_sink
        if index in failing:
            with pytest.raises(ConnectError, match=f"task.start.fail={setting}.*task c-{index}"):
                start(task_class, props)
        else:
            start(task_class, props)


def test_source_task_fails_after_records(start_source):
    task = start_source(SequenceSourceTask, seq_props(**{"task.fail.after.records": "7", "batch.size": "5"}))
    assert len(task.poll()) == 5
    assert [r.value["seqno"] for r in task.poll()] == [5, 6]
    with pytest.raises(ConnectError, match="task.fail.after.records=7"):
        task.poll()


def test_fail_after_records_counts_per_task_instance(start_source, offsets):
    props = seq_props(**{"task.fail.after.records": "3"})
    first = start_source(SequenceSourceTask, props)
    records = first.poll()
    commit_last(offsets, records)
    with pytest.raises(ConnectError):
        first.poll()
    # A restarted instance counts afresh, from where the last one's offset left off.
    second = start_source(SequenceSourceTask, props)
    assert [r.value["seqno"] for r in second.poll()] == [3, 4, 5]


def test_fail_times_lets_a_restarted_instance_run_on(start_source, offsets):
    # the count is per worker process and task id: a name of its own keeps other tests' failures out
    props = seq_props(
        **{"name": "fail-once", "task.fail.after.records": "3", "task.fail.times": "1", "batch.size": "3"}
    )
    first = start_source(SequenceSourceTask, props)
    commit_last(offsets, first.poll())
    with pytest.raises(ConnectError, match="task.fail.after.records=3"):
        first.poll()
    second = start_source(SequenceSourceTask, props)  # the restart: no limit any more
    assert [r.value["seqno"] for r in [*second.poll(), *second.poll()]] == list(range(3, 9))


@pytest.mark.parametrize("task_class", [SequenceSourceTask, RecordingSinkTask])
def test_task_stop_blocks(task_class, start_source, start_sink, tmp_path):
    props = {**seq_props(), "topics": "t", "output.file": str(tmp_path / "o"), "task.stop.block.ms": "300"}
    clock = FakeClock()
    task = (start_source if task_class is SequenceSourceTask else start_sink)(lambda: task_class(clock), props)
    assert clock.sleeps == []
    task.stop()
    assert clock.sleeps == [0.3]


@pytest.mark.parametrize(
    "connector_class, offsets",
    [
        (SequenceSourceConnector, [({"task.id": "c-0"}, {"saved": 5})]),
        (RecordingSinkConnector, {TopicPartition("t", 0): 5}),
    ],
)
def test_alter_offsets_knob(connector_class, offsets):
    base = {"name": "c", "topic": "t", "topics": "t", "output.file": "/tmp/unused"}
    connector = connector_class()
    assert connector.alter_offsets(base, offsets) is False
    assert connector.alter_offsets({**base, "alter.offsets": "false"}, offsets) is False
    assert connector.alter_offsets({**base, "alter.offsets": "true"}, offsets) is True
    assert connector.alter_offsets({**base, "alter.offsets": "TRUE"}, offsets) is True
    with pytest.raises(UnsupportedOperationError, match="alter.offsets=unsupported"):
        connector.alter_offsets({**base, "alter.offsets": "unsupported"}, offsets)
    with pytest.raises(ConnectError, match="alter.offsets=error") as info:
        connector.alter_offsets({**base, "alter.offsets": "error"}, offsets)
    assert not isinstance(info.value, UnsupportedOperationError)


# ---- RecordingSink ------------------------------------------------------------------------------------


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_recording_sink_line_format(tmp_path, start_sink):
    path = tmp_path / "rec.jsonl"
    task = start_sink(RecordingSinkTask, sink_props(path))
    task.put(
        [
            SinkRecord("in", 0, "k", {"task": 1, "seqno": 2}, 10),
            SinkRecord("in", 1, None, "text", 11),
            SinkRecord("other", 2, 5, [1.5, True, None], 12),
            SinkRecord("in", 0, b"\x00\xffkey", {"nested": b"bin"}, 13),
        ]
    )
    assert read_lines(path) == [
        {"topic": "in", "partition": 0, "offset": 10, "key": "k", "value": {"task": 1, "seqno": 2}},
        {"topic": "in", "partition": 1, "offset": 11, "key": None, "value": "text"},
        {"topic": "other", "partition": 2, "offset": 12, "key": 5, "value": [1.5, True, None]},
        {
            "topic": "in",
            "partition": 0,
            "offset": 13,
            "key": base64.b64encode(b"\x00\xffkey").decode(),
            "value": {"nested": base64.b64encode(b"bin").decode()},
        },
    ]


def test_recording_sink_data_is_in_the_file_before_offsets_are_committed(tmp_path, start_sink):
    path = tmp_path / "rec.jsonl"
    path.write_text("")
    task = start_sink(RecordingSinkTask, sink_props(path))
    task.put([SinkRecord("in", 0, None, i, i) for i in range(3)])
    committed = task.pre_commit({TopicPartition("in", 0): 3})
    assert committed == {TopicPartition("in", 0): 3}
    # Read through a separate descriptor: what a crash right after the commit would leave behind.
    assert [line["offset"] for line in read_lines(path)] == [0, 1, 2]


def test_recording_sink_tasks_share_a_file_safely(tmp_path, start_sink):
    path = tmp_path / "rec.jsonl"
    tasks = [start_sink(RecordingSinkTask, sink_props(path, **{"task.index": str(i)})) for i in range(4)]
    value = "v" * 300  # long lines make torn writes visible

    def feed(partition: int, task: RecordingSinkTask) -> None:
        for batch in range(50):
            task.put([SinkRecord("in", partition, None, value, batch * 20 + i) for i in range(20)])

    threads = [threading.Thread(target=feed, args=(i, t)) for i, t in enumerate(tasks)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = read_lines(path)
    assert len(lines) == 4 * 50 * 20
    for partition in range(4):
        assert [l["offset"] for l in lines if l["partition"] == partition] == list(range(1000))


def test_recording_sink_fails_after_records(tmp_path, start_sink):
    path = tmp_path / "rec.jsonl"
    task = start_sink(RecordingSinkTask, sink_props(path, **{"task.fail.after.records": "5"}))
    task.put([SinkRecord("in", 0, None, i, i) for i in range(3)])
    with pytest.raises(ConnectError, match="task.fail.after.records=5"):
        task.put([SinkRecord("in", 0, None, i, i) for i in range(3, 8)])
    # Exactly five records were accepted before the failure.
    assert [line["offset"] for line in read_lines(path)] == [0, 1, 2, 3, 4]


def test_recording_sink_connector_task_configs(tmp_path):
    connector = RecordingSinkConnector()
    props = sink_props(tmp_path / "o")
    del props["task.index"]
    connector.start(props)
    assert connector.task_class() is RecordingSinkTask
    assert [c["task.index"] for c in connector.task_configs(2)] == ["0", "1"]
    connector.stop()


def test_recording_sink_start_fails_for_an_unwritable_path(tmp_path, start_sink):
    with pytest.raises(ConnectError, match="Couldn't open or create"):
        start_sink(RecordingSinkTask, sink_props(tmp_path / "no-such-dir" / "rec.jsonl"))
