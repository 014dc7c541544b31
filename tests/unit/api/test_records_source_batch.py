"""SourceRecordBatch: read as a sequence it is the list of SourceRecords a task would have built, and the
worker sends it from its columns with exactly the bytes and offsets of the record-by-record path."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from runtime.api import SourceRecord, SourceRecordBatch
from runtime.api.data import INT64_SCHEMA, STRING_SCHEMA
from runtime.converters.json import JsonConverter
from runtime.storage.base import OffsetStore, StatusStore
from runtime.storage.states import TargetState
from runtime.worker.error_handling import build_operator
from runtime.worker.source_runner import SourceTaskRunner


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


class MemoryOffsets(OffsetStore):
    def __init__(self) -> None:
        self.entries: dict[bytes, bytes | None] = {}

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        return {k: self.entries.get(k) for k in keys}

    def set(self, entries: Any) -> None:
        self.entries.update(entries)

    def items(self) -> list[tuple[bytes, bytes]]:
        return [(k, v) for k, v in self.entries.items() if v is not None]


class CapturingProducer:
    """Stands in for confluent-kafka's Producer: keeps what produce_batch was given."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, int, bytes | None, bytes | None]] = []

    def produce_batch(self, topic: str, messages: list[dict[str, Any]], partition: int = -1) -> int:
        self.sent += [(topic, partition, m["key"], m["value"]) for m in messages]
        return len(messages)

    def poll(self, timeout: float = 0) -> int:
        return 0

    def __len__(self) -> int:
        return 0


def runner() -> SourceTaskRunner:
    def converter(is_key: bool) -> JsonConverter:
        c = JsonConverter()
        c.configure({"schemas.enable": "true"}, is_key)
        return c

    r = SourceTaskRunner(
        "c",
        0,
        object,
        {},
        {},
        TargetState.STARTED,
        StatusStore(),
        "w",
        producer_config={},
        offset_store=MemoryOffsets(),
        key_converter=converter(True),
        value_converter=converter(False),
        header_converter=None,
        flush_interval_ms=60000,
        flush_timeout_ms=5000,
    )
    r.producer = CapturingProducer()  # type: ignore[assignment]
    r._topics_seen.add("t")
    return r


@pytest.mark.parametrize("partition", [None, 1])
def test_the_worker_sends_a_batch_as_it_sends_its_records(partition: int | None) -> None:
    columns, records = runner(), runner()
    columns.send(batch(kafka_partition=partition))
    records.send(list(batch(kafka_partition=partition)))
    assert columns.producer.sent == records.producer.sent  # type: ignore[union-attr]
    assert len(columns.producer.sent) == 3  # type: ignore[union-attr]
    assert columns._pending == records._pending and len(columns._pending) == 1
    assert columns.counters.source_records_written == records.counters.source_records_written == 3


def test_a_value_the_converter_refuses_takes_the_record_path_with_its_errors_handling() -> None:
    r = runner()
    r.errors = build_operator("c", "c-0", {"errors.tolerance": "all"}, r.error_counters, threading.Event())
    bad = SourceRecordBatch(
        {"file": "a"},
        [{"pos": 1}, {"pos": 2}, {"pos": 3}],
        "t",
        [1, "not a number", 3],
        key="k",
        key_schema=STRING_SCHEMA,
        value_schema=INT64_SCHEMA,
    )
    r.send(bad)
    # errors.tolerance=all skips the bad record; the others go out, and the batch's last offset counts
    assert [value for _, _, _, value in r.producer.sent] == [  # type: ignore[union-attr]
        b'{"schema":{"type":"int64","optional":false},"payload":1}',
        b'{"schema":{"type":"int64","optional":false},"payload":3}',
    ]
    assert list(r._pending.values()) == [{"pos": 3}]
    assert r.error_counters.total_records_skipped == 1
