"""SparkSourceTask in both modes, driven directly with a real Spark session and an in-memory offset store."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from runtime.api.errors import ConnectError
from runtime.connectors.spark.source import SparkSourceConnector, SparkSourceTask, encode_files

from .conftest import MemorySourceContext

pytestmark = pytest.mark.spark


def write_rows(root, name: str, ids: range) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": pa.array(list(ids), pa.int64()), "label": [f"r{i}" for i in ids]}), path)


def start_task(root, store=None, **overrides) -> tuple[SparkSourceTask, MemorySourceContext]:
    config = {
        "name": "src",
        "path": str(root),
        "topic": "out",
        "poll.interval.ms": "0",
        "spark.master": "local[2]",
        **overrides,
    }
    context = MemorySourceContext(config, store)
    task = SparkSourceTask()
    task.initialize(context)
    task.start(config)
    return task, context


def drain(task: SparkSourceTask, context: MemorySourceContext) -> list:
    """Poll until nothing new, acknowledging everything as the runtime would."""
    out = []
    while batch := task.poll():
        context.commit(batch)
        out.extend(batch)
    return out


def test_files_mode_emits_each_new_file_once(spark, tmp_path):
    write_rows(tmp_path, "a.parquet", range(0, 3))
    write_rows(tmp_path, "day=2/b.parquet", range(3, 5))
    (tmp_path / "_connect_staging").mkdir()
    write_rows(tmp_path, "_connect_staging/hidden.parquet", range(100, 101))  # uncommitted: never read
    task, context = start_task(tmp_path)
    records = drain(task, context)
    assert sorted(r.value["id"] for r in records) == [0, 1, 2, 3, 4]
    assert {r.value["day"] for r in records if r.value["id"] >= 3} == {2}  # partition column kept
    first = records[0]
    assert (first.topic, first.source_partition) == ("out", {"path": str(tmp_path)})
    assert [f.name for f in first.value_schema.fields] == ["id", "label"]
    assert json.loads(records[-1].source_offset["files"]) == ["a.parquet", "day=2/b.parquet"]

    write_rows(tmp_path, "c.parquet", range(5, 7))
    assert [r.value["id"] for r in drain(task, context)] == [5, 6]  # only the new file

    restarted, context = start_task(tmp_path, context.store)
    assert drain(restarted, context) == []  # committed offsets: nothing is read twice


def test_a_file_is_only_marked_done_by_its_last_row(spark, tmp_path):
    write_rows(tmp_path, "a.parquet", range(0, 5))
    task, context = start_task(tmp_path, **{"batch.size": "2"})
    batch = task.poll()
    context.commit(batch)  # the worker dies after acknowledging 2 of the 5 rows
    assert [r.value["id"] for r in batch] == [0, 1]
    restarted, context = start_task(tmp_path, context.store)
    assert sorted(r.value["id"] for r in drain(restarted, context)) == [0, 1, 2, 3, 4]  # re-read, not lost


def test_altered_files_offset_rereads_or_skips(spark, tmp_path):
    for name, ids in (("a.parquet", range(0, 2)), ("b.parquet", range(2, 4)), ("c.parquet", range(4, 6))):
        write_rows(tmp_path, name, ids)
    config = {"path": str(tmp_path), "topic": "out"}
    offset = {"files": encode_files(["a.parquet", "c.parquet"])}
    assert SparkSourceConnector().alter_offsets(config, [({"path": str(tmp_path)}, offset)]) is True
    store = {json.dumps({"path": str(tmp_path)}): offset}
    task, context = start_task(tmp_path, store)
    assert [r.value["id"] for r in drain(task, context)] == [2, 3]


def test_incrementing_mode_emits_new_rows_only(spark, tmp_path):
    write_rows(tmp_path, "p1.parquet", range(1, 6))
    task, context = start_task(tmp_path, mode="incrementing", **{"incrementing.column": "id", "batch.size": "3"})
    assert [r.value["id"] for r in drain(task, context)] == [1, 2, 3, 4, 5]
    write_rows(tmp_path, "p2.parquet", range(6, 9))
    records = drain(task, context)
    assert [r.value["id"] for r in records] == [6, 7, 8]
    assert records[-1].source_offset == {"incrementing": 8}

    store = {json.dumps({"path": str(tmp_path)}): {"incrementing": 3}}  # as altered through REST
    restarted, context = start_task(tmp_path, store, mode="incrementing", **{"incrementing.column": "id"})
    assert [r.value["id"] for r in drain(restarted, context)] == [4, 5, 6, 7, 8]


def test_json_datasets_are_read_too(spark, tmp_path):
    (tmp_path / "x.json").write_text('{"id": 1, "label": "a"}\n{"id": 2, "label": "b"}\n')
    task, context = start_task(tmp_path, format="json")
    assert [(r.value["id"], r.value["label"]) for r in drain(task, context)] == [(1, "a"), (2, "b")]


@pytest.mark.parametrize(
    "partition, offset, mode",
    [
        ({"path": "/elsewhere"}, {"files": "[]"}, "files"),
        ({"path": "P"}, {"files": "not json"}, "files"),
        ({"path": "P"}, {"incrementing": 5}, "files"),
        ({"path": "P"}, {"files": "[]"}, "incrementing"),
        ({"path": "P"}, {"incrementing": True}, "incrementing"),
    ],
)
def test_alter_offsets_rejects_shapes_the_task_cannot_use(partition, offset, mode):
    config = {"path": "P", "topic": "out", "mode": mode, "incrementing.column": "id"}
    with pytest.raises(ConnectError):
        SparkSourceConnector().alter_offsets(config, [(partition, offset)])
    assert SparkSourceConnector().alter_offsets(config, [({"path": "P"}, None)]) is True  # reset
