"""The Spark connectors in a real standalone worker process, against a real broker.

One worker (one Spark JVM) serves the whole module; each test isolates itself with unique topics,
connectors and dataset paths and deletes its connectors. The crash test kills that worker and starts
it again on the same files, as an operator would.
Waits poll for a definite end (committed offsets reaching the produced ends, a marker row) instead of
sleeping: once a sink's committed offsets reach the ends, its commit log says no further batch exists.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest

from runtime.connectors.spark.commit_log import STAGING_DIR
from tests.integration.spark.recording_spark_sink import JOURNAL, delivery_problems
from tests.support.broker import unique
from tests.support.env import have_java, require
from tests.support.worker import WorkerProcess, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.spark]

SINK = "runtime.connectors.spark.sink.SparkSinkConnector"
JOURNALING_SINK = "tests.integration.spark.recording_spark_sink.JournalingSparkSinkConnector"
SOURCE = "runtime.connectors.spark.source.SparkSourceConnector"
SCHEMA = {
    "type": "struct",
    "name": "order",
    "optional": False,
    "fields": [
        {"field": "id", "type": "int64", "optional": False},
        {"field": "region", "type": "string", "optional": False},
        {"field": "qty", "type": "int32", "optional": False},
    ],
}
ALTERED = "The offsets for this connector have been altered successfully"
RESET = "The offsets for this connector have been reset successfully"
WORKER_PROPS = {"offset.flush.interval.ms": 300}
# A JVM that only JIT-compiles with C1 starts Spark about twice as fast; our batches are tiny anyway.
FAST_JVM = {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"}


@pytest.fixture(scope="module")
def worker(tmp_path_factory, bootstrap_servers) -> Iterator[WorkerProcess]:
    require(have_java(), "Java (the worker's Spark session)")
    with WorkerProcess(tmp_path_factory.mktemp("spark-worker"), bootstrap_servers, WORKER_PROPS) as w:
        yield w


@pytest.fixture
def client(worker):
    """A REST client of the shared worker; the connectors a test created are deleted after it."""
    with worker.client as c:
        before = set(c.get("/connectors").json())
        yield c
    if worker.process is not None:
        with worker.client as c:
            for name in set(c.get("/connectors").json()) - before:
                c.delete(f"/connectors/{name}")


# ---- helpers (also used by test_spark_pipeline_dag.py) -------------------------------------------------


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)


def produce(bootstrap: str, topic: str, ids: range, partitions: int) -> dict[int, int]:
    """Produce order `i` to partition i % partitions; return each partition's end (last acked offset + 1)."""
    from confluent_kafka import Producer

    ends: dict[int, int] = {}
    errors: list[str] = []

    def delivered(err, msg) -> None:
        if err is not None:
            errors.append(str(err))
        else:
            ends[msg.partition()] = max(ends.get(msg.partition(), 0), msg.offset() + 1)

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in ids:
        value = {"schema": SCHEMA, "payload": {"id": i, "region": "eu" if i % 2 else "us", "qty": i % 7}}
        producer.produce(topic, json.dumps(value).encode(), partition=i % partitions, on_delivery=delivered)
    assert producer.flush(30) == 0 and not errors, errors[:3]
    return ends


def dataset_ids(root: Path) -> list[int]:
    """Ids of the visible rows (pyarrow skips `_`/`.` paths, as Spark's readers do)."""
    if not any(
        p for p in root.rglob("*.parquet") if not any(s.startswith(("_", ".")) for s in p.relative_to(root).parts)
    ):
        return []
    return (
        pads.dataset(str(root), format="parquet", partitioning="hive").to_table(columns=["id"]).column("id").to_pylist()
    )


def committed(client, name: str) -> dict[int, int]:
    return {
        o["partition"]["kafka_partition"]: o["offset"]["kafka_offset"]
        for o in client.get(f"/connectors/{name}/offsets").json()["offsets"]
    }


def wait_committed(client, name: str, ends: dict[int, int], timeout_s: float = 120) -> None:
    """Until the sink's committed offsets reach `ends` (so every record below them is in the dataset)."""
    wait_for(
        lambda: all(committed(client, name).get(p, -1) >= end for p, end in ends.items()),
        timeout_s,
        0.25,
        f"{name} to commit {ends}",
    )


def sink_config(topic: str, root: Path, **extra: str) -> dict[str, str]:
    return {
        "connector.class": SINK,
        "topics": topic,
        "tasks.max": "2",
        "path": str(root),
        "flush.size": "100",
        "flush.interval.ms": "300",
        "spark.master": "local[2]",
        **FAST_JVM,
        **extra,
    }


def status(client, name: str) -> dict:
    return client.get(f"/connectors/{name}/status").json()


def stop_and_wait(client, name: str) -> None:
    assert client.put(f"/connectors/{name}/stop").status_code == 204
    wait_for(
        lambda: status(client, name)["connector"]["state"] == "STOPPED" and not status(client, name)["tasks"],
        60,
        0.2,
        "STOPPED",
    )


def retried(call, what: str):
    # The runtime may answer 500 "can be safely retried" while the stopped tasks leave the group.
    return wait_for(lambda: (r := call()).status_code == 200 and r, 60, 0.5, what)


# ---- sink ----------------------------------------------------------------------------------------------


def test_rows_written_equal_records_produced(tmp_path, bootstrap_servers, client):
    topic, root, name = unique("orders"), tmp_path / "ds", unique("spark-sink")
    create_topic(bootstrap_servers, topic, 2)
    ends = produce(bootstrap_servers, topic, range(400), 2)
    assert ends == {0: 200, 1: 200}
    assert client.post("/connectors", json={"name": name, "config": sink_config(topic, root)}).status_code == 201
    wait_committed(client, name, ends)
    ids = dataset_ids(root)
    assert sorted(ids) == list(range(400)), Counter(ids).most_common(3)
    assert committed(client, name) == ends


AVRO_ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "io.example",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "region", "type": "string"},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "note", "type": ["null", "string"], "default": None},
    ],
}


def test_avro_records_land_in_typed_columns(tmp_path, bootstrap_servers, client):
    """Records written by confluent-kafka's AvroSerializer, read with the Avro converter: decimals, dates and
    timestamps keep their types in the dataset Spark reads (decimal(9,2), date, timestamp)."""
    import datetime as dt
    import decimal

    from confluent_kafka import Producer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from tests.support.schema_registry import SchemaRegistryServer, registry_url_from_env

    topic, root, name = unique("avro-orders"), tmp_path / "ds", unique("spark-avro")
    create_topic(bootstrap_servers, topic, 1)
    with SchemaRegistryServer() as server:
        url = registry_url_from_env() or server.url
        serialize = AvroSerializer(SchemaRegistryClient({"url": url}), json.dumps(AVRO_ORDER))
        producer = Producer({"bootstrap.servers": bootstrap_servers})
        utc = dt.UTC
        rows = [
            {
                "id": i,
                "region": "eu",
                "price": decimal.Decimal(i).scaleb(-2) + 1,
                "day": dt.date(2025, 1, 1) + dt.timedelta(days=i),
                "at": dt.datetime(2025, 1, 1, tzinfo=utc) + dt.timedelta(milliseconds=i),
                "note": None,
            }
            for i in range(50)
        ]
        for row in rows:
            producer.produce(topic, serialize(row, SerializationContext(topic, MessageField.VALUE)))
        assert producer.flush(30) == 0
        config = sink_config(
            topic,
            root,
            **{
                "tasks.max": "1",
                "value.converter": "io.confluent.connect.avro.AvroConverter",
                "value.converter.schema.registry.url": url,
            },
        )
        assert client.post("/connectors", json={"name": name, "config": config}).status_code == 201
        wait_committed(client, name, {0: 50})
    table = pads.dataset(str(root), format="parquet", partitioning="hive").to_table()
    types = {f.name: f.type for f in table.schema}
    assert types["id"] == pa.int64() and types["region"] == pa.string()
    assert types["price"] == pa.decimal128(9, 2) and types["day"] == pa.date32()
    assert pa.types.is_timestamp(types["at"])  # Spark's TimestampType (stored as Spark writes it)
    got = sorted(table.select(["id", "region", "price", "day", "at", "note"]).to_pylist(), key=lambda r: r["id"])
    for row in got:
        if row["at"].tzinfo is None:  # Spark's timestamps are UTC instants; pyarrow reads INT96 ones as naive
            row["at"] = row["at"].replace(tzinfo=dt.UTC)
    assert got == rows


def test_kill_9_mid_batch_loses_and_duplicates_nothing(tmp_path, bootstrap_servers, worker, client):
    topic, root, name = unique("orders"), tmp_path / "ds", unique("spark-sink")
    create_topic(bootstrap_servers, topic, 2)
    ends = produce(bootstrap_servers, topic, range(800), 2)
    client.post("/connectors", json={"name": name, "config": sink_config(topic, root, **{"flush.size": "50"})})
    wait_for(lambda: dataset_ids(root), 120, 0.1, "a first committed batch")
    # Kill while the next batch's files are being written to staging (or right away if we miss it).
    staging = root / STAGING_DIR
    try:
        wait_for(lambda: any(staging.rglob("*.parquet")), 10, 0.01, "a batch being written")
    except AssertionError:
        pass
    worker.kill()
    try:
        written_before = len(dataset_ids(root))
        assert 0 < written_before < 800, "the crash came too late to test anything"
    finally:
        worker.start()  # same worker, same files: the connector config survives (persisted standalone state)
    with worker.client as c:
        wait_committed(c, name, ends, 180)
    ids = dataset_ids(root)
    assert sorted(ids) == list(range(800)), f"duplicates: {[i for i, n in Counter(ids).items() if n > 1][:5]}"


def test_alter_and_reset_change_what_is_written_next(tmp_path, bootstrap_servers, client):
    topic, root, name = unique("orders"), tmp_path / "ds", unique("spark-sink")
    journal = tmp_path / "deliveries.jsonl"
    create_topic(bootstrap_servers, topic, 1)
    ends = produce(bootstrap_servers, topic, range(20), 1)
    config = sink_config(topic, root, **{"tasks.max": "1", "connector.class": JOURNALING_SINK, JOURNAL: str(journal)})
    assert client.post("/connectors", json={"name": name, "config": config}).status_code == 201
    wait_committed(client, name, ends)
    assert sorted(dataset_ids(root)) == list(range(20))

    stop_and_wait(client, name)
    body = {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 15}}]}
    response = retried(lambda: client.patch(f"/connectors/{name}/offsets", json=body), "offsets altered")
    assert response.json()["message"] == ALTERED
    assert committed(client, name) == {0: 15}
    assert client.put(f"/connectors/{name}/resume").status_code == 202
    wait_committed(client, name, ends)
    assert Counter(dataset_ids(root)) == Counter(list(range(20)) + list(range(15, 20)))

    stop_and_wait(client, name)
    response = retried(lambda: client.delete(f"/connectors/{name}/offsets"), "offsets reset")
    assert response.json()["message"] == RESET
    assert committed(client, name) == {}
    assert client.put(f"/connectors/{name}/resume").status_code == 202
    wait_committed(client, name, ends)
    assert Counter(dataset_ids(root)) == Counter(2 * list(range(20)) + list(range(15, 20)))
    # The runtime started each assignment exactly at the seek: nothing before it, nothing twice.
    assert delivery_problems(journal) == []


def test_a_new_connector_on_a_dataset_continues_where_the_dataset_ends(tmp_path, bootstrap_servers, client):
    """A new connector (a new consumer group, at the earliest offset) seeks to the dataset's offsets
    in open(): the runtime must never deliver the records before them (regression: the first fetch
    came from the group position, the seek only after)."""
    topic, root, journal = unique("orders"), tmp_path / "ds", tmp_path / "deliveries.jsonl"
    create_topic(bootstrap_servers, topic, 2)
    first, second = unique("spark-sink"), unique("spark-sink")
    ends = produce(bootstrap_servers, topic, range(200), 2)
    config = sink_config(topic, root, **{"connector.class": JOURNALING_SINK, JOURNAL: str(journal)})
    assert client.post("/connectors", json={"name": first, "config": config}).status_code == 201
    wait_committed(client, first, ends)
    stop_and_wait(client, first)  # its tasks are gone: nothing below is written by it
    assert client.delete(f"/connectors/{first}").status_code == 204
    ends = produce(bootstrap_servers, topic, range(200, 260), 2)
    journal = tmp_path / "deliveries-second.jsonl"
    config[JOURNAL] = str(journal)
    assert client.post("/connectors", json={"name": second, "config": config}).status_code == 201
    wait_committed(client, second, ends)
    assert sorted(dataset_ids(root)) == list(range(260))
    deliveries = [json.loads(line) for line in journal.read_text().splitlines()]
    delivered = [offset for e in deliveries if e["event"] == "put" for _, offset in e["records"]]
    assert delivered and min(delivered) == 100, "records before the dataset's offsets were delivered"
    assert delivery_problems(journal) == []


# ---- source --------------------------------------------------------------------------------------------


class TopicReader:
    """Reads one partition from the beginning, without a consumer group (no join delay)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

        self.consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": unique("reader"), "enable.auto.commit": False}
        )
        self.consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        self.values: list[dict] = []

    def until(self, done, timeout_s: float = 120) -> list[dict]:
        def poll() -> bool:
            for message in self.consumer.consume(500, 0.2):
                if not message.error():
                    self.values.append(json.loads(message.value())["payload"])
            return done(self.values)

        wait_for(poll, timeout_s, 0, "records on the topic")
        return self.values

    def close(self) -> None:
        self.consumer.close()


def write_file(root: Path, name: str, ids: range) -> None:
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".{name}.tmp"
    pq.write_table(pa.table({"id": pa.array(list(ids), pa.int64()), "label": [f"r{i}" for i in ids]}), tmp)
    tmp.rename(root / name)  # appear whole, as a committed file would


@pytest.mark.parametrize("mode", ["files", "incrementing"])
def test_source_picks_up_new_files_and_rows_only(tmp_path, bootstrap_servers, client, mode):
    topic, root, name = unique("rows"), tmp_path / "ds", unique("spark-source")
    create_topic(bootstrap_servers, topic, 1)
    write_file(root, "a.parquet", range(0, 50))
    config = {
        "connector.class": SOURCE,
        "topic": topic,
        "path": str(root),
        "mode": mode,
        "incrementing.column": "id",
        "poll.interval.ms": "100",
        "spark.master": "local[2]",
        **FAST_JVM,
    }
    assert client.post("/connectors", json={"name": name, "config": config}).status_code == 201
    reader = TopicReader(bootstrap_servers, topic)
    try:
        values = reader.until(lambda v: len(v) >= 50)
        assert sorted(v["id"] for v in values) == list(range(50))
        write_file(root, "b.parquet", range(50, 80))
        reader.until(lambda v: len(v) >= 80)
        # A marker file: the source reads in order, so anything re-read from a or b comes before it.
        write_file(root, "c.parquet", range(80, 81))
        values = reader.until(lambda v: any(x["id"] == 80 for x in v))
    finally:
        reader.close()
    assert sorted(v["id"] for v in values) == list(range(81))
    assert {v["label"] for v in values} == {f"r{i}" for i in range(81)}
