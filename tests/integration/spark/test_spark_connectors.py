"""The Spark connectors in a real standalone worker process, against a real broker."""
from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from pathlib import Path

import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pyarrow as pa
import pytest

from tests.support.broker import unique
from tests.support.env import have_java, require
from tests.support.worker import WorkerProcess, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.spark]

SINK = "runtime.connectors.spark.sink.SparkSinkConnector"
SOURCE = "runtime.connectors.spark.source.SparkSourceConnector"
SCHEMA = {"type": "struct", "name": "order", "optional": False, "fields": [
    {"field": "id", "type": "int64", "optional": False},
    {"field": "region", "type": "string", "optional": False},
    {"field": "qty", "type": "int32", "optional": False}]}
ALTERED = "The offsets for this connector have been altered successfully"
RESET = "The offsets for this connector have been reset successfully"


@pytest.fixture(autouse=True)
def _java():
    require(have_java(), "Java (the worker's Spark session)")


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)


def produce(bootstrap: str, topic: str, ids: range, partitions: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in ids:
        value = {"schema": SCHEMA, "payload": {"id": i, "region": "eu" if i % 2 else "us", "qty": i % 7}}
        producer.produce(topic, json.dumps(value).encode(), partition=i % partitions)
    assert producer.flush(30) == 0


def dataset_ids(root: Path) -> list[int]:
    """Ids of the visible rows (pyarrow skips `_`/`.` paths, as Spark's readers do)."""
    if not root.exists() or not any(p.suffix == ".parquet" for p in root.rglob("*.parquet") if "_connect_staging" not in p.parts):
        return []
    return pads.dataset(str(root), format="parquet", partitioning="hive").to_table(columns=["id"]).column("id").to_pylist()


def wait_rows(root: Path, count: int, timeout_s: float = 120) -> list[int]:
    return wait_for(lambda: (ids := dataset_ids(root)) and len(ids) >= count and ids, timeout_s, 0.5,
                    f"{count} rows in {root}")


def sink_config(topic: str, root: Path, **extra: str) -> dict[str, str]:
    return {"connector.class": SINK, "topics": topic, "tasks.max": "2", "path": str(root), "flush.size": "100",
            "flush.interval.ms": "500", "spark.master": "local[2]", **extra}


def worker(tmp_path: Path, bootstrap: str) -> WorkerProcess:
    return WorkerProcess(tmp_path / "worker", bootstrap, {"offset.flush.interval.ms": 500})


def status(client, name: str) -> dict:
    return client.get(f"/connectors/{name}/status").json()


def stop_and_wait(client, name: str) -> None:
    assert client.put(f"/connectors/{name}/stop").status_code == 204
    wait_for(lambda: status(client, name)["connector"]["state"] == "STOPPED", 60, what="STOPPED")


def patch_offsets(client, name: str, body: dict) -> dict:
    # The runtime may answer 500 "can be safely retried" while the stopped tasks leave the group.
    def attempt():
        response = client.patch(f"/connectors/{name}/offsets", json=body)
        return response if response.status_code == 200 else None
    return wait_for(attempt, 60, 1, "offsets altered").json()


def test_rows_written_equal_records_produced(tmp_path, bootstrap_servers):
    topic, root, name = unique("orders"), tmp_path / "ds", unique("spark-sink")
    create_topic(bootstrap_servers, topic, 2)
    produce(bootstrap_servers, topic, range(1000), 2)
    with worker(tmp_path, bootstrap_servers) as w, w.client as client:
        assert client.post("/connectors", json={"name": name, "config": sink_config(topic, root)}).status_code == 201
        ids = wait_rows(root, 1000)
        time.sleep(2)  # anything extra would show up now
        assert sorted(dataset_ids(root)) == list(range(1000)), Counter(ids).most_common(3)
        offsets = client.get(f"/connectors/{name}/offsets").json()["offsets"]
        assert sorted(o["offset"]["kafka_offset"] for o in offsets) == [500, 500]


def test_kill_9_mid_batch_loses_and_duplicates_nothing(tmp_path, bootstrap_servers):
    topic, root, name = unique("orders"), tmp_path / "ds", unique("spark-sink")
    create_topic(bootstrap_servers, topic, 2)
    produce(bootstrap_servers, topic, range(3000), 2)
    w = worker(tmp_path, bootstrap_servers)
    w.start()
    with w.client as client:
        client.post("/connectors", json={"name": name, "config": sink_config(topic, root, **{"flush.size": "50"})})
    wait_rows(root, 1)  # some batches are committed, others are being written right now
    w.kill()
    written_before = len(dataset_ids(root))
    assert written_before < 3000, "the crash came too late to test anything"
    w.start()  # the connector config survives the restart (persisted standalone state)
    try:
        wait_rows(root, 3000, 180)
        time.sleep(2)
        ids = dataset_ids(root)
        assert sorted(ids) == list(range(3000)), f"duplicates: {[i for i, n in Counter(ids).items() if n > 1][:5]}"
    finally:
        w.stop()


def test_alter_and_reset_change_what_is_written_next(tmp_path, bootstrap_servers):
    topic, root, name = unique("orders"), tmp_path / "ds", unique("spark-sink")
    create_topic(bootstrap_servers, topic, 1)
    produce(bootstrap_servers, topic, range(20), 1)
    with worker(tmp_path, bootstrap_servers) as w, w.client as client:
        client.post("/connectors", json={"name": name, "config": sink_config(topic, root, **{"tasks.max": "1"})})
        wait_rows(root, 20)
        stop_and_wait(client, name)
        body = patch_offsets(client, name, {"offsets": [
            {"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 15}}]})
        assert body["message"] == ALTERED
        assert client.put(f"/connectors/{name}/resume").status_code == 202
        ids = wait_rows(root, 25)
        time.sleep(2)
        assert Counter(dataset_ids(root)) == Counter(list(range(20)) + list(range(15, 20)))

        stop_and_wait(client, name)
        response = wait_for(lambda: (r := client.delete(f"/connectors/{name}/offsets")).status_code == 200 and r,
                            60, 1, "offsets reset")
        assert response.json()["message"] == RESET
        assert client.put(f"/connectors/{name}/resume").status_code == 202
        wait_rows(root, 45)
        time.sleep(2)
        assert Counter(dataset_ids(root)) == Counter(2 * list(range(20)) + list(range(15, 20)))
        assert ids is not None


def consume_values(bootstrap: str, topic: str, count: int, timeout_s: float = 120) -> list[dict]:
    """Read the topic from the start until `count` values arrived, then briefly for any extras."""
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False, "session.timeout.ms": 6000})
    consumer.subscribe([topic])
    values: list[dict] = []
    deadline, settle = time.monotonic() + timeout_s, None
    try:
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and not message.error():
                values.append(json.loads(message.value())["payload"])
            if len(values) >= count:
                settle = settle or time.monotonic() + 3
                if time.monotonic() > settle:
                    break
    finally:
        consumer.close()
    return values


def write_file(root: Path, name: str, ids: range) -> None:
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".{name}.tmp"
    pq.write_table(pa.table({"id": pa.array(list(ids), pa.int64()), "label": [f"r{i}" for i in ids]}), tmp)
    tmp.rename(root / name)  # appear whole, as a committed file would


@pytest.mark.parametrize("mode", ["files", "incrementing"])
def test_source_picks_up_new_files_and_rows_only(tmp_path, bootstrap_servers, mode):
    topic, root, name = unique("rows"), tmp_path / "ds", unique("spark-source")
    create_topic(bootstrap_servers, topic, 1)
    write_file(root, "a.parquet", range(0, 50))
    config = {"connector.class": SOURCE, "topic": topic, "path": str(root), "mode": mode,
              "incrementing.column": "id", "poll.interval.ms": "200", "spark.master": "local[2]"}
    with worker(tmp_path, bootstrap_servers) as w, w.client as client:
        assert client.post("/connectors", json={"name": name, "config": config}).status_code == 201
        assert sorted(v["id"] for v in consume_values(bootstrap_servers, topic, 50)) == list(range(50))
        write_file(root, "b.parquet", range(50, 80))
        values = consume_values(bootstrap_servers, topic, 80)
        assert sorted(v["id"] for v in values) == list(range(80))
        assert {v["label"] for v in values} == {f"r{i}" for i in range(80)}
