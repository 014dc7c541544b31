"""SinkRecordBatch: read as a sequence it is the list of SinkRecords the worker would have built (the same
objects on every read), and the sinks that read its columns write exactly what they write from records."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from runtime.api import Header, SinkRecord, SinkRecordBatch
from runtime.api.data import STRING_SCHEMA
from runtime.connectors.file import FileStreamSinkTask
from runtime.connectors.testing import batch_lines, record_line


@dataclass
class Message:
    """The part of confluent-kafka's Message a batch reads (its constructor is not public)."""

    _topic: str
    _partition: int
    _offset: int
    _timestamp: tuple[int, int] = (1, 1_700_000_000_000)

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def timestamp(self) -> tuple[int, int]:
        return self._timestamp


def fields(record: SinkRecord) -> tuple[Any, ...]:
    return (
        record.topic,
        record.kafka_partition,
        record.kafka_offset,
        record.key,
        record.value,
        record.key_schema,
        record.value_schema,
        record.timestamp,
        record.timestamp_type,
        record.headers,
    )


def batch() -> SinkRecordBatch:
    messages = [Message("a", 0, 5), Message("a", 0, 6, (0, -1)), Message("b", 3, 9, (2, 42))]
    return SinkRecordBatch(
        messages,
        ["k", "k", None],
        ["x", {"n": 1}, None],
        [STRING_SCHEMA, STRING_SCHEMA, None],
        [STRING_SCHEMA, None, None],
        {1: [Header("h", "v", STRING_SCHEMA)]},
    )


def test_a_batch_reads_as_the_sink_records_it_holds() -> None:
    b = batch()
    assert len(b) == 3
    assert [fields(r) for r in b] == [
        ("a", 0, 5, "k", "x", STRING_SCHEMA, STRING_SCHEMA, 1_700_000_000_000, "CreateTime", None),
        ("a", 0, 6, "k", {"n": 1}, STRING_SCHEMA, None, None, "NoTimestampType", [Header("h", "v", STRING_SCHEMA)]),
        ("b", 3, 9, None, None, None, None, 42, "LogAppendTime", None),
    ]
    assert b[0] is b[0] and list(b)[2] is b[-1]  # built once: a task may keep, compare or report them
    assert [r.kafka_offset for r in b[1:]] == [6, 9]
    assert (b.topics(), b.partitions(), b.offsets()) == (["a", "a", "b"], [0, 0, 3], [5, 6, 9])
    with pytest.raises(IndexError):
        b[3]


def test_a_batch_needs_one_key_value_and_schema_pair_per_message() -> None:
    with pytest.raises(ValueError, match="one key, value and pair of schemas per message"):
        SinkRecordBatch([Message("a", 0, 1)], ["k"], [], [None], [None])


def test_recording_sink_lines_from_the_columns_are_those_from_the_records() -> None:
    b = batch()
    assert batch_lines(b) == b"".join(record_line(r) for r in b)


def test_file_stream_sink_writes_the_same_lines_from_a_batch_as_from_records(tmp_path: Path) -> None:
    def written(records: Any, name: str) -> str:
        task = FileStreamSinkTask()
        task.start({"file": str(tmp_path / name)})
        task.put(records)
        task.stop()
        return (tmp_path / name).read_text()

    values = SinkRecordBatch(
        [Message("t", 0, i) for i in range(3)], [None] * 3, ["one", "two", "three"], [None] * 3, [STRING_SCHEMA] * 3
    )
    assert written(values, "batch.txt") == written(list(values), "records.txt") == "one\ntwo\nthree\n"
