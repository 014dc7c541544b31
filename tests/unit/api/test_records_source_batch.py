"""SourceRecordBatch: read as a sequence it is the list of SourceRecords a task would have built (the worker
sending it from its columns: tests/unit/worker/test_source_runner.py)."""

from __future__ import annotations

from typing import Any

import pytest

from runtime.api import SourceRecord, SourceRecordBatch
from runtime.api.data import INT64_SCHEMA, STRING_SCHEMA


def batch(topic: str = "t", kafka_partition: int | None = None) -> SourceRecordBatch:
    return SourceRecordBatch(
        {"file": "a"},
        [{"pos": 1}, {"pos": 2}, {"pos": 3}],
        topic,
        [10, 20, 30],
        key="k",
        key_schema=STRING_SCHEMA,
        value_schema=INT64_SCHEMA,
        kafka_partition=kafka_partition,
    )


def fields(record: SourceRecord) -> tuple[Any, ...]:
    return (
        record.source_partition,
        record.source_offset,
        record.topic,
        record.kafka_partition,
        record.key,
        record.value,
        record.key_schema,
        record.value_schema,
        record.timestamp,
        record.headers,
    )


def test_a_batch_reads_as_the_records_it_holds() -> None:
    b = batch(kafka_partition=2)
    expected = [
        SourceRecord({"file": "a"}, {"pos": i + 1}, "t", 2, "k", v, STRING_SCHEMA, INT64_SCHEMA)
        for i, v in enumerate([10, 20, 30])
    ]
    assert len(b) == 3
    assert [fields(r) for r in b] == [fields(r) for r in expected]
    assert fields(b[-1]) == fields(expected[2])
    assert [fields(r) for r in b[1:]] == [fields(r) for r in expected[1:]]
    with pytest.raises(IndexError):
        b[3]


def test_a_batch_needs_one_offset_per_value() -> None:
    with pytest.raises(ValueError, match="one offset per value"):
        SourceRecordBatch(None, [{"pos": 1}], "t", [1, 2])
