"""The dlt sink in a real worker process (its tasks in a task process) against a real broker and PostgreSQL:
JSON records through a transform with bad ones in the dead letter queue, Avro records through the Schema
Registry, kill -9 of the loading task process and, in a distributed cluster, of the worker running it,
without a duplicate or a missing row, and KIP-875's alter and reset answered as definite over REST.

One worker and one PostgreSQL server serve the module (the distributed test starts a cluster of its own);
each test has its own topic, connector and dataset.
Waits poll the destination for a definite end (the committed offsets reaching the produced ends)."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator

import pytest

from tests.integration.dlt_sink.destinations import Postgres
from tests.support.broker import unique
from tests.support.cluster import running_cluster
from tests.support.worker import WorkerProcess, wait_for

pytestmark = pytest.mark.integration

SINK = "runtime.connectors.dlt.DltSinkConnector"
ALTERED = "The offsets for this connector have been altered successfully"
RESET = "The offsets for this connector have been reset successfully"
SCHEMA = {
    "type": "struct",
    "optional": False,
    "fields": [{"field": "id", "type": "int64", "optional": False}, {"field": "label", "type": "string"}],
}
# The suite's run kills the task process 3 times; DLT_SINK_KILL_CYCLES=10 is the longer run (see the README).
KILL_CYCLES = int(os.environ.get("DLT_SINK_KILL_CYCLES", "3"))


@pytest.fixture(scope="module")
def worker(tmp_path_factory, bootstrap_servers) -> Iterator[WorkerProcess]:
    props = {"offset.flush.interval.ms": 500, "task.processes": 1}
    with WorkerProcess(tmp_path_factory.mktemp("dlt-worker"), bootstrap_servers, props) as w:
        yield w


@pytest.fixture
def client(worker):
    with worker.client as c:
        before = set(c.get("/connectors").json())
        yield c
    if worker.process is not None:
        with worker.client as c:
            for name in set(c.get("/connectors").json()) - before:
                c.delete(f"/connectors/{name}")


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the topic exists
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)


def produce(bootstrap: str, topic: str, values: list[bytes], partitions: int) -> dict[int, int]:
    """Value i to partition i % partitions; each partition's end (last acked offset + 1)."""
    from confluent_kafka import Producer

    ends: dict[int, int] = {}
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})

    def delivered(err, msg) -> None:
        assert err is None, err
        ends[msg.partition()] = max(ends.get(msg.partition(), 0), msg.offset() + 1)

    for i, value in enumerate(values):
        producer.produce(topic, value, partition=i % partitions, on_delivery=delivered)
    assert producer.flush(30) == 0
    return ends


def rows(ids: range) -> list[bytes]:
    return [json.dumps({"schema": SCHEMA, "payload": {"id": i, "label": f"r{i}"}}).encode() for i in ids]


def committed_in(destination: Postgres, table: str) -> dict[int, int]:
    """Each partition's committed offset, read from the destination (the offsets of committed loads)."""
    found = destination.query(
        f"SELECT o.kafka_partition, o.epoch, max(o.kafka_offset) FROM {destination.dataset}._connect_offsets o "
        f"JOIN {destination.dataset}._dlt_loads l ON o._dlt_load_id = l.load_id "
        f"WHERE o.table_name = '{table}' GROUP BY 1, 2"
    )
    latest: dict[int, tuple[int, int]] = {}
    for partition, epoch, offset in found:
        if partition not in latest or epoch > latest[partition][0]:
            latest[partition] = (epoch, offset)
    return {p: o for p, (_, o) in latest.items()}


def wait_loaded(destination: Postgres, table: str, ends: dict[int, int], timeout_s: float = 180) -> None:
    def done() -> bool:
        try:
            got = committed_in(destination, table)
        except Exception:  # noqa: BLE001 - the dataset does not exist yet
            return False
        return all(got.get(p, -1) >= end for p, end in ends.items())

    wait_for(done, timeout_s, 0.5, f"{table} loaded up to {ends}")


def sink_config(topic: str, destination: Postgres, **extra: str) -> dict[str, str]:
    return {"connector.class": SINK, "topics": topic, "tasks.max": "1", **destination.config(), **extra}


def ids_in(destination: Postgres, table: str) -> list[int]:
    return [r[0] for r in destination.rows(table, "id")]


def test_json_records_through_a_transform_with_bad_ones_in_the_dead_letter_queue(
    bootstrap_servers, client, postgres, worker
):
    topic, dlq, name = unique("orders"), unique("orders-dlq"), unique("dlt")
    destination = Postgres(postgres, name.replace("-", "_"))
    create_topic(bootstrap_servers, topic, 1)
    ends = produce(bootstrap_servers, topic, [*rows(range(0, 50)), b"{not json", *rows(range(50, 100))], 1)
    config = sink_config(
        topic,
        destination,
        **{
            "transforms": "origin",
            "transforms.origin.type": "org.apache.kafka.connect.transforms.InsertField$Value",
            "transforms.origin.static.field": "origin",
            "transforms.origin.static.value": "kafka",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
        },
    )
    assert client.post("/connectors", json={"name": name, "config": config}).status_code == 201
    table = topic.replace("-", "_")
    wait_loaded(destination, table, ends)
    assert sorted(ids_in(destination, table)) == list(range(100))
    assert destination.query(f"SELECT DISTINCT origin FROM {destination.dataset}.{table}") == [("kafka",)]
    assert destination.column_types(table)["id"] == "bigint"

    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": unique("dlq-reader")})
    consumer.assign([TopicPartition(dlq, 0, OFFSET_BEGINNING)])
    try:
        bad = wait_for(lambda: [m.value() for m in consumer.consume(10, 0.5) if not m.error()], 60, 0, "the DLQ")
    finally:
        consumer.close()
    assert bad == [b"{not json"]
    # the password of the destination's credentials never reaches the worker's log
    assert Postgres.password not in worker.log_path.read_text()


@pytest.fixture(scope="module")
def registry_url() -> Iterator[str]:
    """The Schema Registry CONNECT_TEST_SCHEMA_REGISTRY_URL names, or the fixture one on loopback."""
    from tests.support.schema_registry import SchemaRegistryServer, registry_url_from_env

    url = registry_url_from_env()
    if url is not None:
        yield url
        return
    with SchemaRegistryServer() as server:
        yield server.url


ORDER_AVRO = {
    "type": "record",
    "name": "Order",
    "namespace": "io.example",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "placed_at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "note", "type": ["null", "string"], "default": None},
    ],
}
ORDER_AVRO_FIELDS = [f["name"] for f in ORDER_AVRO["fields"]]


def test_avro_records_through_the_schema_registry_land_in_their_column_types(
    bootstrap_servers, client, postgres, registry_url
):
    import datetime as dt
    import decimal

    from confluent_kafka import Producer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    topic, name = unique("avro-orders"), unique("dlt-avro")
    destination = Postgres(postgres, name.replace("-", "_"))
    table = topic.replace("-", "_")
    create_topic(bootstrap_servers, topic, 1)
    serialize = AvroSerializer(SchemaRegistryClient({"url": registry_url}), json.dumps(ORDER_AVRO))
    utc = dt.UTC
    orders = [
        {
            "id": i,
            "amount": decimal.Decimal(123456 + i).scaleb(-2),
            "day": dt.date(2025, 3, 1) + dt.timedelta(days=i),
            "placed_at": dt.datetime(2025, 3, 1, 12, 30, 15, 250000, tzinfo=utc) + dt.timedelta(hours=i),
            "note": None if i % 2 else f"n{i}",
        }
        for i in range(6)
    ]
    producer = Producer({"bootstrap.servers": bootstrap_servers})
    for order in orders:
        producer.produce(topic, serialize(order, SerializationContext(topic, MessageField.VALUE)))
    assert producer.flush(30) == 0
    config = sink_config(
        topic,
        destination,
        **{
            "value.converter": "io.confluent.connect.avro.AvroConverter",
            "value.converter.schema.registry.url": registry_url,
        },
    )
    assert client.post("/connectors", json={"name": name, "config": config}).status_code == 201
    wait_loaded(destination, table, {0: len(orders)})

    types = destination.column_types(table)
    assert {c: t for c, t in types.items() if not c.startswith("_")} == {
        "id": "bigint",
        "amount": "numeric(9,2)",
        "day": "date",
        "placed_at": "timestamp with time zone",
        "note": "character varying",
    }
    loaded = destination.rows(table, "id, amount, day, placed_at, note", "id")
    assert [dict(zip(ORDER_AVRO_FIELDS, row, strict=True)) for row in loaded] == orders


def test_kill_9_during_loads_loads_every_record_once(bootstrap_servers, client, postgres, worker):
    """Kill -9 the task process (where the loads run) while loads are under way; the FAILED task restarts
    over REST and resumes from the destination. (A killed worker: the distributed test below.)"""
    topic, name = unique("events"), unique("dlt-crash")
    destination = Postgres(postgres, name.replace("-", "_"))
    table = topic.replace("-", "_")
    create_topic(bootstrap_servers, topic, 2)
    total = 150 * (KILL_CYCLES + 1)
    ends = produce(bootstrap_servers, topic, rows(range(total)), 2)
    config = sink_config(
        topic,
        destination,
        **{
            # many small loads (a poll of 50 records is one load), so the kills land in one
            "batch.size": "50",
            "consumer.override.max.poll.records": "50",
            # the killed task's consumer leaves the group sooner, so its successor joins sooner
            "consumer.override.session.timeout.ms": "3000",
            "consumer.override.heartbeat.interval.ms": "500",
        },
    )
    assert client.post("/connectors", json={"name": name, "config": config}).status_code == 201
    for cycle in range(1, KILL_CYCLES + 1):
        # kill once this cycle's share is loaded: more loads are under way (records keep arriving)
        wait_for(lambda: destination_count(destination, table) >= cycle * total // (KILL_CYCLES + 2), 180, 0.05, "rows")
        kill_task_process(worker, client, name)
        print(f"cycle {cycle}: rows of uncommitted loads right after the kill: {uncommitted(destination, table)}")
    wait_loaded(destination, table, ends, 300)
    ids = ids_in(destination, table)
    duplicates = [i for i, n in Counter(ids).items() if n > 1]
    assert not duplicates, f"{len(duplicates)} duplicates, first {sorted(duplicates)[:5]}"
    assert sorted(ids) == list(range(total))
    # every commit replaced the offsets rows before it, those of crashed loads too
    assert destination.count("_connect_offsets") == 2


def kill_task_process(worker: WorkerProcess, client, name: str) -> None:
    import signal

    import psutil

    assert worker.process is not None
    (child,) = [p for p in psutil.Process(worker.process.pid).children() if "spawn_main" in " ".join(p.cmdline())]
    os.kill(child.pid, signal.SIGKILL)

    def states() -> list[str]:
        return [t["state"] for t in client.get(f"/connectors/{name}/status").json()["tasks"]]

    wait_for(lambda: states() == ["FAILED"], 60, 0.2, "the task FAILED")
    assert client.post(f"/connectors/{name}/restart?includeTasks=true&onlyFailed=true").status_code == 202


def uncommitted(destination: Postgres, table: str) -> int:
    return destination.query(
        f"SELECT count(*) FROM {destination.dataset}.{table} "
        f"WHERE _dlt_load_id NOT IN (SELECT load_id FROM {destination.dataset}._dlt_loads)"
    )[0][0]


def test_a_killed_workers_sink_resumes_on_another_from_the_destination(bootstrap_servers, postgres, tmp_path):
    """Distributed mode: kill -9 the worker running the sink's task; the task starts on the other worker from
    the offsets committed in the destination (the killed worker's orphaned task process, still loading for
    a moment, can no longer commit)."""
    topic, name = unique("moving"), unique("dlt-moving")
    destination = Postgres(postgres, name.replace("-", "_"))
    table = topic.replace("-", "_")
    create_topic(bootstrap_servers, topic, 2)
    ends = produce(bootstrap_servers, topic, rows(range(400)), 2)
    config = sink_config(topic, destination, **{"batch.size": "50", "consumer.override.max.poll.records": "50"})
    with running_cluster(tmp_path, bootstrap_servers, 2, **{"task.processes": 1}) as cluster:
        assert cluster.api(0).post("/connectors", json={"name": name, "config": config}).status_code == 201
        status = cluster.wait_state(name, "RUNNING", 1, timeout_s=90)
        owner = cluster.index_of(status["tasks"][0]["worker_id"])
        wait_for(lambda: destination_count(destination, table) >= 100, 180, 0.05, "the first loads")
        cluster.workers[owner].kill()
        survivor = 1 - owner
        cluster.wait_state(name, "RUNNING", 1, via=survivor, timeout_s=90, exclude_worker=cluster.worker_id(owner))
        wait_loaded(destination, table, ends)
    ids = ids_in(destination, table)
    assert sorted(ids) == list(range(400)), f"{len(ids) - len(set(ids))} duplicates, {400 - len(set(ids))} missing"


def destination_count(destination: Postgres, table: str) -> int:
    try:
        return destination.count(table)
    except Exception:  # noqa: BLE001 - not created yet
        return 0


def test_alter_and_reset_over_rest_are_definite(bootstrap_servers, client, postgres):
    topic, name = unique("items"), unique("dlt-offsets")
    destination = Postgres(postgres, name.replace("-", "_"))
    table = topic.replace("-", "_")
    create_topic(bootstrap_servers, topic, 1)
    ends = produce(bootstrap_servers, topic, rows(range(20)), 1)
    assert client.post("/connectors", json={"name": name, "config": sink_config(topic, destination)}).status_code == 201
    wait_loaded(destination, table, ends)

    def stop() -> None:
        assert client.put(f"/connectors/{name}/stop").status_code == 204
        wait_for(lambda: client.get(f"/connectors/{name}/status").json()["tasks"] == [], 60, 0.2, "STOPPED")

    def retried(call, what: str):  # 500 "can be safely retried" while the stopped task leaves the group
        return wait_for(lambda: (r := call()).status_code == 200 and r, 60, 0.5, what)

    stop()
    body = {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 15}}]}
    assert retried(lambda: client.patch(f"/connectors/{name}/offsets", json=body), "alter").json()["message"] == ALTERED
    assert committed_in(destination, table) == {0: 15}
    assert client.put(f"/connectors/{name}/resume").status_code == 202
    wait_loaded(destination, table, ends)
    assert Counter(ids_in(destination, table)) == Counter([*range(20), *range(15, 20)])

    stop()
    assert retried(lambda: client.delete(f"/connectors/{name}/offsets"), "reset").json()["message"] == RESET
    assert committed_in(destination, table) == {0: None}
    assert client.put(f"/connectors/{name}/resume").status_code == 202
    wait_loaded(destination, table, ends)
    assert Counter(ids_in(destination, table)) == Counter([*range(20), *range(15, 20), *range(20)])
