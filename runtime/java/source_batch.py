"""A Java source task's polled batch (runtime/java/helper/runtimejava/SourceBatch.java), read back into this
runtime's records.

Records come in runs (consecutive records with one topic, partition, key and value schemas and source
partition) whose keys and values each cross as one JsonConverter envelope of an array: the envelope
converter decodes a whole column in one call, with the conversions it applies to one record's envelope. A
batch that is one run without keys or headers (a file or log tailer's) becomes a SourceRecordBatch, which
the runner sends from its columns without a Python object per record.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from ..api.data import Schema
from ..api.records import Header, SourceRecord, SourceRecordBatch
from ..converters.json import JsonConverter

NO_KEYS = b"null"  # a run's key column when it has no key schema and no keys


def _column(envelopes: JsonConverter, topic: str, envelope: bytes, n: int) -> tuple[Schema | None, Sequence[Any]]:
    """The records' schema and values of a column (an envelope of an array of that schema)."""
    if envelope == NO_KEYS:
        return None, [None] * n
    schema, values = envelopes.to_connect_data(topic, envelope)
    return (None if schema is None else schema.value_schema), values


def decode(
    batch: bytes, envelopes: JsonConverter, columns_allowed: bool
) -> tuple[int, list[SourceRecord] | SourceRecordBatch]:
    """The first record's sequence number, and the records (a SourceRecordBatch when `columns_allowed` and
    the batch is one run without keys or headers)."""
    meta_line, *columns = batch.split(b"\n")
    meta = orjson.loads(meta_line)
    runs = meta["runs"]
    if columns_allowed and len(runs) == 1 and runs[0]["headers"] is None and columns[0] == NO_KEYS:
        run = runs[0]
        value_schema, values = _column(envelopes, run["topic"], columns[1], run["n"])
        timestamps = run["timestamps"]
        batch_records = SourceRecordBatch(
            run["sourcePartition"],
            run["offsets"],
            run["topic"],
            values,
            value_schema=value_schema,
            kafka_partition=run["partition"],
            timestamps=None if all(ts is None for ts in timestamps) else timestamps,
        )
        return meta["first"], batch_records
    records: list[SourceRecord] = []
    for index, run in enumerate(runs):
        topic, partition, source_partition, n = run["topic"], run["partition"], run["sourcePartition"], run["n"]
        key_schema, keys = _column(envelopes, topic, columns[2 * index], n)
        value_schema, values = _column(envelopes, topic, columns[2 * index + 1], n)
        headers = run["headers"] or [None] * n
        for key, value, offset, timestamp, record_headers in zip(
            keys, values, run["offsets"], run["timestamps"], headers, strict=True
        ):
            records.append(
                SourceRecord(
                    source_partition,
                    offset,
                    topic,
                    partition,
                    key,
                    value,
                    key_schema,
                    value_schema,
                    timestamp,
                    None if record_headers is None else _headers(envelopes, topic, record_headers),
                )
            )
    return meta["first"], records


def _headers(envelopes: JsonConverter, topic: str, rows: list[list[Any]]) -> list[Header]:
    headers = []
    for name, envelope in rows:
        schema, data = envelopes.to_connect_data(topic, envelope.encode()) if envelope is not None else (None, None)
        headers.append(Header(name, data, schema))
    return headers


__all__ = ["decode"]
