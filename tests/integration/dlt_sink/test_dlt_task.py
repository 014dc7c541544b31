"""The dlt sink's task driven through the plugin API against real destinations (DuckDB files, a PostgreSQL
server): Connect types to column types, merges with deletes, schema evolution, the remains of a failed load,
claims and loads outlasting another process reading the DuckDB file, definite offset changes, and parquet
files Spark reads. The worker around it: test_dlt_worker.py."""

from __future__ import annotations

import datetime as dt
import decimal
import subprocess
import sys
from pathlib import Path

import pytest

from runtime.api import SchemaBuilder, TopicPartition
from runtime.api.data import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Schema,
)
from tests.integration.dlt_sink.destinations import Destination, DuckDb, Filesystem, Postgres
from tests.integration.dlt_sink.driver import SinkDriver, records
from tests.support.broker import unique
from tests.support.clock import FakeClock

pytestmark = pytest.mark.integration

UTC = dt.UTC
DECIMAL = Schema(
    "bytes",
    name="org.apache.kafka.connect.data.Decimal",
    version=1,
    parameters=(("scale", "2"), ("connect.decimal.precision", "9")),
)
DATE = Schema("int32", name="org.apache.kafka.connect.data.Date", version=1)
TIME = Schema("int32", name="org.apache.kafka.connect.data.Time", version=1)
TIMESTAMP = Schema("int64", name="org.apache.kafka.connect.data.Timestamp", version=1)
ADDRESS = SchemaBuilder.struct().field("city", STRING_SCHEMA).field("zip", INT32_SCHEMA).build()
EVERY_TYPE = (
    SchemaBuilder.struct()
    .name("every_type")
    .field("i8", INT8_SCHEMA)
    .field("i16", INT16_SCHEMA)
    .field("i32", INT32_SCHEMA)
    .field("i64", INT64_SCHEMA)
    .field("f32", FLOAT32_SCHEMA)
    .field("f64", FLOAT64_SCHEMA)
    .field("flag", BOOLEAN_SCHEMA)
    .field("text", STRING_SCHEMA)
    .field("raw", BYTES_SCHEMA)
    .field("price", DECIMAL)
    .field("day", DATE)
    .field("clock", TIME)
    .field("at", TIMESTAMP)
    .field("address", ADDRESS)
    .field("tags", SchemaBuilder.array(STRING_SCHEMA).build())
    .field("counts", SchemaBuilder.map(STRING_SCHEMA, INT64_SCHEMA).build())
    .field("note", OPTIONAL_STRING_SCHEMA)
    .build()
)
ROW = {
    "i8": -8,
    "i16": 1600,
    "i32": 320000,
    "i64": 2**40,
    "f32": 1.5,
    "f64": 2.25,
    "flag": True,
    "text": "héllo",
    "raw": b"\x00\xff",
    "price": decimal.Decimal("1234567.89"),
    "day": dt.date(2025, 3, 1),
    "clock": dt.time(13, 14, 15, 123000),
    "at": dt.datetime(2025, 3, 1, 13, 14, 15, 123000, tzinfo=UTC),
    "address": {"city": "Lyon", "zip": 69001},
    "tags": ["a", "b"],
    "counts": {"x": 1},
    "note": None,
}
COLUMN_TYPES = {
    "duckdb": {
        "i8": "TINYINT",
        "i16": "SMALLINT",
        "i32": "INTEGER",
        "i64": "BIGINT",
        "f32": "DOUBLE",
        "f64": "DOUBLE",
        "flag": "BOOLEAN",
        "text": "VARCHAR",
        "raw": "BLOB",
        "price": "DECIMAL(9,2)",
        "day": "DATE",
        "clock": "TIME",
        "at": "TIMESTAMP WITH TIME ZONE",
        "address": "JSON",
        "tags": "JSON",
        "counts": "JSON",
        "note": "VARCHAR",
    },
    "postgres": {
        "i8": "smallint",
        "i16": "smallint",
        "i32": "integer",
        "i64": "bigint",
        "f32": "double precision",
        "f64": "double precision",
        "flag": "boolean",
        "text": "character varying",
        "raw": "bytea",
        "price": "numeric(9,2)",
        "day": "date",
        "clock": "time without time zone",
        "at": "timestamp with time zone",
        "address": "jsonb",
        "tags": "jsonb",
        "counts": "jsonb",
        "note": "character varying",
    },
}


@pytest.fixture(params=["duckdb", "postgres"])
def destination(request, tmp_path) -> Destination:
    dataset = unique("ds").replace("-", "_")
    if request.param == "duckdb":
        return DuckDb(tmp_path / "sink.duckdb", dataset)
    return Postgres(request.getfixturevalue("postgres"), dataset)


def test_every_connect_type_lands_in_its_column_type(destination: Destination) -> None:
    sink = SinkDriver("types", "every-type", destination.config())
    sink.start()
    # Connect's wire forms of the logical types (epoch days, millis, scaled bytes) as converters may hand them
    wire = {
        **ROW,
        "price": (123456789).to_bytes(4, "big", signed=True),
        "day": (ROW["day"] - dt.date(1970, 1, 1)).days,
        "clock": ((13 * 60 + 14) * 60 + 15) * 1000 + 123,
        "at": int(ROW["at"].timestamp() * 1000),
    }
    assert sink.load(records("every-type", [ROW, wire], EVERY_TYPE)) == {TopicPartition("every-type", 0): 2}
    sink.stop()

    types = destination.column_types("every_type")
    assert {c: t for c, t in types.items() if not c.startswith("_")} == COLUMN_TYPES[destination.name]
    if isinstance(destination, Postgres):
        nullable = destination.nullable("every_type")
        assert nullable["note"] and not nullable["i64"]
    got = destination.rows("every_type", ", ".join(f'"{c}"' for c in COLUMN_TYPES["duckdb"]), "_dlt_id")
    assert len(got) == 2 and got[0] == got[1]  # the wire forms load as the values they stand for
    row = dict(zip(COLUMN_TYPES["duckdb"], got[0], strict=True))
    for json_column in ("address", "tags", "counts"):
        if isinstance(row[json_column], str):
            import json

            row[json_column] = json.loads(row[json_column])
    row["raw"] = bytes(row["raw"])
    row["at"] = row["at"].astimezone(UTC)
    assert row == ROW


KEY = SchemaBuilder.struct().field("id", INT64_SCHEMA).build()
ITEM = SchemaBuilder.struct().field("id", INT64_SCHEMA).field("label", STRING_SCHEMA).build()


def test_merge_upserts_and_deletes_by_the_record_key(destination: Destination) -> None:
    sink = SinkDriver("merge", "items", destination.config(), **{"write.disposition": "merge"})
    sink.start()
    values = [{"id": i, "label": f"v1-{i}"} for i in range(5)]
    sink.load(records("items", values, ITEM, keys=[{"id": i} for i in range(5)], key_schema=KEY))
    # one batch: 1 updated twice (the last wins), 2 deleted, 3 deleted and inserted again, 9 new
    batch = [
        ({"id": 1}, {"id": 1, "label": "v2-1"}),
        ({"id": 2}, None),
        ({"id": 1}, {"id": 1, "label": "v3-1"}),
        ({"id": 3}, None),
        ({"id": 3}, {"id": 3, "label": "v2-3"}),
        ({"id": 9}, {"id": 9, "label": "v1-9"}),
        ({"id": 4}, None),
    ]
    committed = sink.load(
        records("items", [v for _, v in batch], ITEM, start=5, keys=[k for k, _ in batch], key_schema=KEY)
    )
    assert committed == {TopicPartition("items", 0): 12}
    assert destination.rows("items", "id, label", "id") == [(0, "v1-0"), (1, "v3-1"), (3, "v2-3"), (9, "v1-9")]
    # A new task loading the same records again (a replay after a crash) changes nothing
    sink.start()
    sink.load(records("items", [v for _, v in batch], ITEM, start=5, keys=[k for k, _ in batch], key_schema=KEY))
    sink.stop()
    assert destination.rows("items", "id, label", "id") == [(0, "v1-0"), (1, "v3-1"), (3, "v2-3"), (9, "v1-9")]


def test_merge_on_named_value_fields_and_a_record_without_a_key_goes_to_the_reporter(tmp_path: Path) -> None:
    destination = DuckDb(tmp_path / "sink.duckdb", "merge_fields")
    config = {**destination.config(), "write.disposition": "merge", "primary.key.mode": "record_value"}
    sink = SinkDriver("merge-fields", "items", {**config, "primary.key.fields": "id"})
    sink.start()
    sink.load(records("items", [{"id": 1, "label": "a"}, {"id": 1, "label": "b"}, {"id": 2, "label": "c"}], ITEM))
    # a tombstone keyed by a primitive key deletes the row with that id
    sink.load(records("items", [None], ITEM, start=3, keys=[2]))
    # a record whose key field is missing cannot be merged: reported, and the others load
    sink.load(records("items", [{"label": "no id"}, {"id": 3, "label": "d"}], None, start=4))
    sink.stop()
    assert destination.rows("items", "id, label", "id") == [(1, "b"), (3, "d")]
    assert [r.kafka_offset for r, _ in sink.reporter.reported] == [4]


def test_a_new_optional_field_evolves_the_table_and_schemaless_json_is_inferred(tmp_path: Path) -> None:
    destination = DuckDb(tmp_path / "sink.duckdb", "evolve")
    sink = SinkDriver("evolve", "people", destination.config())
    sink.start()
    v1 = SchemaBuilder.struct().field("id", INT64_SCHEMA).field("name", STRING_SCHEMA).build()
    v2 = (
        SchemaBuilder.struct()
        .field("id", INT64_SCHEMA)
        .field("name", STRING_SCHEMA)
        .field("email", OPTIONAL_STRING_SCHEMA)
        .build()
    )
    sink.load(records("people", [{"id": 1, "name": "ann"}], v1))
    assert set(destination.column_types("people")) >= {"id", "name"} and "email" not in destination.column_types(
        "people"
    )
    sink.load(records("people", [{"id": 2, "name": "bob", "email": "bob@example.com"}], v2, start=1))
    # schemaless JSON: dlt infers the columns, nested data in a json column
    sink.load(records("people", [{"id": 3, "name": "cy", "age": 41, "tags": {"vip": True}}], None, start=2))
    sink.stop()
    assert destination.column_types("people")["email"] == "VARCHAR"
    assert destination.column_types("people")["age"] == "BIGINT"
    assert destination.column_types("people")["tags"] == "JSON"
    assert destination.rows("people", "id, name, email, age", "id") == [
        (1, "ann", None, None),
        (2, "bob", "bob@example.com", None),
        (3, "cy", None, 41),
    ]


def test_rows_of_a_load_that_failed_are_deleted_before_its_records_load_again(postgres) -> None:
    """Two tables in one load, the second one's job fails: the first one's rows reached PostgreSQL, but the load
    never committed. The next task deletes them and loads each record once."""
    destination = Postgres(postgres, unique("failed").replace("-", "_"))
    required = SchemaBuilder.struct().field("id", INT64_SCHEMA).field("must", STRING_SCHEMA).build()
    sink = SinkDriver("failed", "good", destination.config(), **{"topics": "good,bad", "max.retries": "0"})
    sink.start()
    assert sink.task is not None
    sink.task.open([TopicPartition("bad", 0)])
    sink.load(records("bad", [{"id": 0, "must": "x"}], required))  # `must` is NOT NULL in PostgreSQL now
    good = records("good", [{"id": i} for i in range(100)], None)
    sink.task.put(good)
    sink.task.put(records("bad", [{"id": 1}], None, start=1))  # no `must`: this table's job fails
    with pytest.raises(Exception, match="failed 1 times"):
        sink.task.pre_commit({TopicPartition("good", 0): 100, TopicPartition("bad", 0): 2})

    assert destination.count("good") > 0  # the failed load's rows, never committed
    seeks = sink.start()  # a new task: nothing of `good` is committed, and what the failed load left goes
    assert TopicPartition("good", 0) not in seeks
    assert destination.count("good") == 0
    sink.load(good)
    sink.stop()
    assert destination.rows("good", "id", "id") == [(i,) for i in range(100)]


class DuckDbReader:
    """Another process reading a DuckDB file (as a dashboard or the DAG's sensor does) until `release()`:
    meanwhile DuckDB lets no other process write it."""

    def __init__(self, path: Path) -> None:
        hold = "import duckdb, sys\nc = duckdb.connect(sys.argv[1], read_only=True)\nprint('open', flush=True)\ninput()"
        self.process = subprocess.Popen(
            [sys.executable, "-c", hold, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None and self.process.stdout.readline() == "open\n"

    def release(self) -> None:
        if self.process.poll() is None:
            self.process.communicate("\n", timeout=30)


def test_a_process_reading_the_duckdb_file_delays_claims_and_loads_by_the_backoff_without_failing_the_task(
    tmp_path: Path,
) -> None:
    destination = DuckDb(tmp_path / "sink.duckdb", "busy")
    tp = TopicPartition("events", 0)
    reader: DuckDbReader | None = None

    class ReaderLeavesAtTheFirstBackoff(FakeClock):
        def sleep(self, seconds: float) -> None:
            super().sleep(seconds)
            if reader is not None:
                reader.release()

    clock = ReaderLeavesAtTheFirstBackoff()
    sink = SinkDriver("busy", "events", destination.config())
    sink.clock = clock
    sink.start()
    assert sink.load(records("events", [{"id": 0}])) == {tp: 1}
    # a new task's claim fails while another process reads the file, and is tried again retry.backoff.ms later
    reader = DuckDbReader(destination.path)
    assert sink.start() == {tp: 1}
    assert clock.sleeps == [3.0]

    # a load fails while the file is read; the commits within the next retry.backoff.ms try none
    reader = DuckDbReader(destination.path)
    assert sink.load(records("events", [{"id": 1}, {"id": 2}], start=1)) == {tp: 1}
    reader.release()
    assert sink.task is not None and sink.task.pre_commit({tp: 3}) == {tp: 1}
    clock.advance(3.0)
    assert sink.task.pre_commit({tp: 3}) == {tp: 3}
    sink.stop()
    assert destination.query("SELECT id FROM busy.events ORDER BY id") == [(0,), (1,), (2,)]


def test_alter_and_reset_are_definite(tmp_path: Path) -> None:
    destination = DuckDb(tmp_path / "sink.duckdb", "offsets")
    sink = SinkDriver("offsets", "events", destination.config())
    sink.start(partitions=2)
    sink.load(records("events", [{"n": i} for i in range(20)], None))
    sink.load(records("events", [{"n": i} for i in range(5)], None, partition=1))
    sink.stop()
    p0, p1 = TopicPartition("events", 0), TopicPartition("events", 1)

    assert sink.alter({0: 15}) is True
    assert sink.start(partitions=2) == {p0: 15, p1: 5}
    # a record the task had before the alter (below the new offset) is not loaded again
    assert sink.load(records("events", [{"n": 14}, {"n": 15}], None, start=14)) == {p0: 16}
    sink.stop()

    assert sink.alter({0: None, 1: None}) is True  # DELETE /offsets: every partition
    assert sink.start(partitions=2) == {}
    assert sink.load(records("events", [{"n": 0}], None)) == {p0: 1}
    sink.stop()
    assert destination.count("events") == 20 + 5 + 1 + 1


@pytest.fixture(params=["duckdb", "postgres", "filesystem"])
def fenced(request, tmp_path) -> Destination:
    dataset = unique("fence").replace("-", "_")
    if request.param == "duckdb":
        return DuckDb(tmp_path / "sink.duckdb", dataset)
    if request.param == "filesystem":
        return Filesystem(tmp_path / "lake", dataset)
    return Postgres(request.getfixturevalue("postgres"), dataset)


def test_a_task_whose_partition_moved_cannot_commit_it_and_offsets_stay_one_row_per_partition(
    fenced: Destination,
) -> None:
    """A zombie: a task still holding records of a partition that a rebalance it has not seen yet gave to
    another task. Its late load commits nothing of that partition; its other partition loads as usual."""
    sink = SinkDriver("zombie", "moves", {**fenced.config(), "batch.size": "1000"})
    p0, p1 = TopicPartition("moves", 0), TopicPartition("moves", 1)
    zombie, _ = sink.new_task([0, 1])
    zombie.put(records("moves", [{"n": i} for i in range(10)], None))
    zombie.put(records("moves", [{"n": 100 + i} for i in range(10)], None, partition=1))  # buffered, not loaded

    owner, context = sink.new_task([0])  # partition 0 moved: the owner claims it at the committed offset
    assert context.seeks == {}
    assert sink.load(records("moves", [{"n": i} for i in range(10)], None), owner) == {p0: 10}

    # the zombie's load: fenced for partition 0, committed for partition 1
    assert zombie.pre_commit({p0: 10, p1: 10}) == {p1: 10}
    # records of partition 0 reaching the zombie before its rebalance are not loaded
    assert sink.load(records("moves", [{"n": 10}], None, start=10), zombie) == {}
    assert sink.load(records("moves", [{"n": 10}, {"n": 11}], None, start=10), owner) == {p0: 12}
    zombie.stop()
    owner.stop()

    assert sorted(r[0] for r in fenced.rows("moves", "n")) == [*range(12), *range(100, 110)]
    offsets = fenced.rows("_connect_offsets", "kafka_partition, kafka_offset", "kafka_partition")
    assert offsets == [(0, 12), (1, 10)]  # each commit replaced the rows before it
    assert sink.new_task([0, 1])[1].seeks == {p0: 12, p1: 10}


@pytest.mark.spark
def test_the_filesystem_destination_writes_parquet_the_spark_pipeline_reads(tmp_path: Path) -> None:
    from tests.support.env import have_java, require

    require(have_java(), "Java (a local Spark session)")
    from runtime.connectors.spark.session import get_spark

    lake = tmp_path / "lake"
    config = {
        "destination": "filesystem",
        "destination.bucket_url": lake.as_uri(),
        "dataset.name": "raw",
        "loader.file.format": "parquet",
    }
    sink = SinkDriver("lake", "orders", config)
    sink.start()
    sink.load(records("orders", [{"id": i, "label": f"r{i}"} for i in range(50)], ITEM))
    sink.load(records("orders", [{"id": i, "label": f"r{i}"} for i in range(50, 80)], ITEM, start=50))
    sink.stop()
    # a crashed load's file is removed when a task opens the partition again: nothing else is touched
    assert sink.start() == {TopicPartition("orders", 0): 80}
    sink.stop()
    spark = get_spark(
        {
            "spark.master": "local[2]",
            "spark.log.level": "ERROR",
            "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        }
    )
    frame = spark.read.parquet(str(lake / "raw" / "orders"))
    assert sorted(r["id"] for r in frame.select("id").collect()) == list(range(80))
    assert dict(frame.dtypes)["id"] == "bigint" and dict(frame.dtypes)["label"] == "string"
