"""A Java source task's batch read back (runtime/java/source_batch.py): columns of runs give the records that
one envelope per record gives. The batches here are written as the helper's SourceBatch.java writes them,
with this runtime's JsonConverter (a byte-exact port of Kafka's); tests/integration/java runs the Java side."""

from __future__ import annotations

from typing import Any

import orjson

from runtime.api.data import INT64_SCHEMA, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA, Schema, SchemaBuilder
from runtime.api.records import Header, SourceRecord, SourceRecordBatch
from runtime.converters.json import JsonConverter
from runtime.java.source_batch import decode

KEY_SCHEMA = SchemaBuilder.struct().field("id", INT64_SCHEMA).build()


def envelopes() -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, False)
    return converter


def java_batch(first: int, records: list[SourceRecord]) -> bytes:
    """What SourceBatch.encode answers for `records` (runs: topic, partition, schemas, source partition)."""
    converter = envelopes()
    runs: list[list[SourceRecord]] = []
    for record in records:
        head = runs[-1][0] if runs else None
        if head is not None and (head.topic, head.kafka_partition, head.source_partition) == (
            record.topic,
            record.kafka_partition,
            record.source_partition,
        ):
            if head.key_schema is record.key_schema and head.value_schema is record.value_schema:
                runs[-1].append(record)
                continue
        runs.append([record])

    def column(topic: str, schema: Schema | None, values: list[Any]) -> bytes:
        array = None if schema is None else SchemaBuilder.array(schema).build()
        encoded = converter.from_connect_data(topic, array, values)
        assert encoded is not None
        return encoded

    meta, columns = [], []
    for run in runs:
        head = run[0]
        headers = None
        if any(r.headers for r in run):
            headers = [
                None
                if not r.headers
                else [
                    [h.key, (converter.from_connect_data(r.topic, h.schema, h.value) or b"").decode()]
                    for h in r.headers
                ]
                for r in run
            ]
        meta.append(
            {
                "n": len(run),
                "topic": head.topic,
                "partition": head.kafka_partition,
                "sourcePartition": head.source_partition,
                "offsets": [r.source_offset for r in run],
                "timestamps": [r.timestamp for r in run],
                "headers": headers,
            }
        )
        no_keys = head.key_schema is None and all(r.key is None for r in run)
        columns.append(b"null" if no_keys else column(head.topic, head.key_schema, [r.key for r in run]))
        columns.append(column(head.topic, head.value_schema, [r.value for r in run]))
    return b"\n".join([orjson.dumps({"first": first, "runs": meta}), *columns])


def fields(record: SourceRecord) -> tuple[Any, ...]:
    headers = [(h.key, h.value, h.schema) for h in record.headers or []]
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
        headers,
    )


def lines(count: int) -> list[SourceRecord]:
    """What Kafka's FileStreamSourceTask polls: no key, a string value, a timestamp."""
    partition = {"filename": "/data/in.txt"}
    return [
        SourceRecord(
            partition, {"position": 10 * (i + 1)}, "out", None, None, f"line {i}", None, STRING_SCHEMA, 1000 + i
        )
        for i in range(count)
    ]


def test_lines_of_one_source_partition_come_as_columns_holding_the_records_polled() -> None:
    polled = lines(3)
    first, batch = decode(java_batch(7, polled), envelopes(), columns_allowed=True)
    assert first == 7
    assert isinstance(batch, SourceRecordBatch) and batch.timestamps == [1000, 1001, 1002]
    assert [fields(r) for r in batch] == [fields(r) for r in polled]


def test_a_task_that_wants_its_records_back_gets_records_not_columns() -> None:
    polled = lines(2)
    _, records = decode(java_batch(0, polled), envelopes(), columns_allowed=False)
    assert isinstance(records, list) and [fields(r) for r in records] == [fields(r) for r in polled]


def test_keys_headers_schemas_and_partitions_cross_record_by_record() -> None:
    polled = [
        SourceRecord({"db": "a"}, {"lsn": 1}, "t1", 0, {"id": 1}, "x", KEY_SCHEMA, OPTIONAL_STRING_SCHEMA),
        SourceRecord({"db": "a"}, {"lsn": 2}, "t1", 0, {"id": 2}, None, KEY_SCHEMA, OPTIONAL_STRING_SCHEMA, 5),
        SourceRecord(
            {"db": "a"}, {"lsn": 3}, "t2", None, "k", 3, None, INT64_SCHEMA, None, [Header("op", "c", STRING_SCHEMA)]
        ),
        SourceRecord({"db": "b"}, {"lsn": 4}, "t2", None, {"free": [1, "a"]}, None, None, None),
    ]
    first, records = decode(java_batch(3, polled), envelopes(), columns_allowed=True)
    assert first == 3 and isinstance(records, list)
    assert [fields(r) for r in records] == [fields(r) for r in polled]
