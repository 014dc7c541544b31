"""SparkSinkTask driven directly with a real local Spark session and a small real context."""

from __future__ import annotations

import pytest

from runtime.api.data import INT32_SCHEMA, INT64_SCHEMA, STRING_SCHEMA, SchemaBuilder
from runtime.api.records import SinkRecord, TopicPartition
from runtime.connectors.spark.commit_log import CommitLog
from runtime.connectors.spark.dataset import data_files
from runtime.connectors.spark.sink import SparkSinkConnector, SparkSinkTask

from .conftest import RecordingSinkContext

pytestmark = pytest.mark.spark

VALUE_SCHEMA = (
    SchemaBuilder.struct()
    .name("order")
    .field("id", INT64_SCHEMA)
    .field("region", STRING_SCHEMA)
    .field("qty", INT32_SCHEMA)
    .build()
)
TP0, TP1 = TopicPartition("orders", 0), TopicPartition("orders", 1)


def records(tp: TopicPartition, start: int, end: int, schema=VALUE_SCHEMA) -> list[SinkRecord]:
    return [
        SinkRecord(
            tp.topic,
            tp.partition,
            None,
            {"id": tp.partition * 1_000_000 + o, "region": "eu" if o % 2 else "us", "qty": o},
            o,
            value_schema=schema,
        )
        for o in range(start, end)
    ]


def make_task(root, **overrides) -> tuple[SparkSinkTask, RecordingSinkContext]:
    config = {
        "name": "s",
        "path": str(root),
        "flush.size": "10",
        "flush.interval.ms": "600000",
        "spark.master": "local[2]",
        **overrides,
    }
    task = SparkSinkTask()
    context = RecordingSinkContext(config, {TP0, TP1})
    task.initialize(context)
    task.start(config)
    task.open([TP0, TP1])
    return task, context


def read_ids(spark, root, fmt="parquet") -> list[int]:
    reader = spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    return sorted(r["id"] for r in reader.load(str(root)).select("id").collect())


def expected_ids(*ranges: tuple[TopicPartition, int, int]) -> list[int]:
    return sorted(tp.partition * 1_000_000 + o for tp, a, b in ranges for o in range(a, b))


def test_batches_commit_rows_with_their_offsets(spark, tmp_path):
    task, _ = make_task(tmp_path)
    task.put(records(TP0, 0, 7) + records(TP1, 0, 6))  # 13 >= flush.size: one batch of 10, 3 buffered
    assert task.pre_commit({TP0: 7, TP1: 6}) == {TP0: 7, TP1: 3}  # only what the log covers
    task.flush({TP0: 7, TP1: 6})
    assert task.pre_commit({TP0: 7, TP1: 6}) == {TP0: 7, TP1: 6}
    assert read_ids(spark, tmp_path) == expected_ids((TP0, 0, 7), (TP1, 0, 6))
    row = spark.read.parquet(str(tmp_path)).where("id = 3").first()
    assert (row["region"], row["qty"]) == ("eu", 3)
    assert dict(spark.read.parquet(str(tmp_path)).dtypes) == {"id": "bigint", "region": "string", "qty": "int"}


def test_interval_flushes_a_small_buffer(spark, tmp_path):
    task, _ = make_task(tmp_path, **{"flush.interval.ms": "0"})
    task.put(records(TP0, 0, 2))
    assert read_ids(spark, tmp_path) == expected_ids((TP0, 0, 2))


def test_crash_after_files_before_entry_loses_and_duplicates_nothing(spark, tmp_path):
    task, _ = make_task(tmp_path)
    task.put(records(TP0, 0, 10))  # committed: offsets 0-9
    staging = task._log.new_staging(task._writer)
    task._write(records(TP0, 10, 20), staging)  # the next batch's files exist... and the worker dies
    assert read_ids(spark, tmp_path) == expected_ids((TP0, 0, 10))  # readers ignore them

    restarted, context = make_task(tmp_path)
    assert context.seeks == {TP0: 10}  # resume exactly after the last committed batch
    restarted.put(records(TP0, 10, 20))
    assert read_ids(spark, tmp_path) == expected_ids((TP0, 0, 20))
    assert not (tmp_path / "_connect_staging" / "s-0").exists() or not any(
        (tmp_path / "_connect_staging").rglob("*.parquet")
    )


def test_crash_after_entry_before_publish_loses_and_duplicates_nothing(spark, tmp_path, monkeypatch):
    task, _ = make_task(tmp_path)
    monkeypatch.setattr(CommitLog, "publish", lambda self: 0)  # the worker dies right after the entry
    task.put(records(TP0, 0, 10))
    assert data_files(tmp_path) == []
    monkeypatch.undo()

    restarted, context = make_task(tmp_path)
    assert context.seeks == {TP0: 10}
    restarted.put(records(TP0, 5, 20))  # an overlap (a rewound consumer, a zombie) is dropped
    restarted.flush({TP0: 20})
    assert read_ids(spark, tmp_path) == expected_ids((TP0, 0, 20))


def test_a_zombie_batch_is_not_committed_twice(spark, tmp_path):
    old, _ = make_task(tmp_path)
    new, _ = make_task(tmp_path, **{"task.writer.id": "s-1"})
    old.put(records(TP0, 0, 5))  # buffered by the old owner
    new.put(records(TP0, 0, 10))  # the new owner commits 0-9
    old.flush({TP0: 5})  # the old owner's late flush must not write 0-4 again
    assert read_ids(spark, tmp_path) == expected_ids((TP0, 0, 10))
    assert old.pre_commit({TP0: 5}) == {TP0: 10}


def test_alter_offsets_rewrites_the_log_and_the_next_task_seeks_there(spark, tmp_path):
    task, _ = make_task(tmp_path)
    task.put(records(TP0, 0, 10) + records(TP1, 0, 10))
    config = {"name": "s", "path": str(tmp_path)}
    assert SparkSinkConnector().alter_offsets(config, {TP0: 4, TP1: None}) is True
    _, context = make_task(tmp_path)
    assert context.seeks == {TP0: 4}  # TP1 falls back to the consumer's own position
    assert SparkSinkConnector().alter_offsets(config, {TP0: None, TP1: None}) is True
    _, context = make_task(tmp_path)
    assert context.seeks == {}


def test_after_a_rewind_the_rows_are_written_again(spark, tmp_path):
    task, _ = make_task(tmp_path)
    task.put(records(TP0, 0, 10))
    SparkSinkConnector().alter_offsets({"name": "s", "path": str(tmp_path)}, {TP0: 5})
    again, context = make_task(tmp_path)
    again.put(records(TP0, context.seeks[TP0], 15))
    again.flush({TP0: 15})
    assert read_ids(spark, tmp_path) == sorted(
        expected_ids((TP0, 0, 10)) + expected_ids((TP0, 5, 10)) + expected_ids((TP0, 10, 15))
    )


@pytest.mark.parametrize("fmt", ["orc", "json", "csv"])
def test_other_formats_and_partitioning(spark, tmp_path, fmt):
    task, _ = make_task(tmp_path, format=fmt, **{"partition.by": "region"})
    task.put(records(TP0, 0, 10))
    assert read_ids(spark, tmp_path, fmt) == expected_ids((TP0, 0, 10))
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("_")) == ["region=eu", "region=us"]


def test_schemaless_values_and_kafka_columns(spark, tmp_path):
    task, _ = make_task(tmp_path, **{"kafka.metadata.columns": "true"})
    rows = [SinkRecord("orders", 1, None, {"id": o, "note": f"n{o}"}, 100 + o) for o in range(10)]
    rows.append(SinkRecord("orders", 1, None, None, 110))  # tombstone: no row, offset still covered
    task.put(rows)
    task.flush({TP1: 111})
    df = spark.read.parquet(str(tmp_path))
    assert sorted((r["id"], r["note"], r["kafka_offset"]) for r in df.collect()) == [
        (o, f"n{o}", 100 + o) for o in range(10)
    ]
    assert task.pre_commit({TP1: 111}) == {TP1: 111}
