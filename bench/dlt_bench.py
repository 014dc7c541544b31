"""Throughput of the dlt sink against dlt's own `pipeline.run` of the same records, in one run.

The same N JSON records (with schemas, as JsonConverter writes them) are loaded into a fresh dataset twice
per destination (DuckDB, PostgreSQL), side by side:
- plain: a confluent-kafka consumer loop (its own group) decodes each value with orjson and hands batches of
  `--batch` rows to `pipeline.run(rows, table_name=topic)`;
- sink: DltSinkConnector in a standalone worker process (batch.size = `--batch`), timed from the connector's
  creation until its committed offsets in the destination reach the topic's end.
Both load `--batch` rows per dlt load and both pay a consumer group join. Prints rows/s and sink / plain
(the goal is >= 0.8); benchmarks never assert timings.

    .venv/bin/python bench/dlt_bench.py [--records 100000] [--batch 50000] [--runs 3] [--bootstrap host:port]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
import orjson
from confluent_kafka import Consumer, Producer

from bench._support import create_topic, wait_until
from tests.support.postgres import PostgresServer
from tests.support.worker import WorkerProcess

SCHEMA = {
    "type": "struct",
    "optional": False,
    "fields": [
        {"field": "id", "type": "int64", "optional": False},
        {"field": "region", "type": "string", "optional": False},
        {"field": "qty", "type": "int32", "optional": False},
        {"field": "note", "type": "string", "optional": True},
    ],
}


def produce(bootstrap: str, topic: str, n: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 10000})
    for i in range(n):
        value = {"schema": SCHEMA, "payload": {"id": i, "region": "eu" if i % 2 else "us", "qty": i % 7, "note": None}}
        producer.produce(topic, orjson.dumps(value))
        if i % 10000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0


class Target:
    """One destination: the sink's config for a dataset, dlt's destination for the plain loop, a query."""

    def __init__(self, kind: str, root: Path, postgres: PostgresServer | None) -> None:
        self.kind, self.root, self.postgres = kind, root, postgres

    def credentials(self, dataset: str) -> str:
        if self.kind == "duckdb":
            return str(self.root / f"{dataset}-db.duckdb")  # a file named as its dataset confuses DuckDB
        assert self.postgres is not None
        return self.postgres.url("postgres", driver="postgresql").replace("@", ":bench@", 1)

    def committed(self, dataset: str, table: str) -> int:
        sql = (
            f"SELECT coalesce(max(o.kafka_offset), -1) FROM {dataset}._connect_offsets o "
            f"JOIN {dataset}._dlt_loads l ON o._dlt_load_id = l.load_id WHERE o.table_name = '{table}'"
        )
        try:
            if self.kind == "duckdb":
                import duckdb

                with duckdb.connect(self.credentials(dataset), read_only=True) as c:
                    return c.execute(sql).fetchall()[0][0]
            assert self.postgres is not None
            connection = self.postgres.connect("postgres")
            try:
                with connection.cursor() as cursor:
                    cursor.execute(sql)
                    return cursor.fetchall()[0][0]
            finally:
                connection.close()
        except Exception:  # noqa: BLE001 - not created yet, or the file is being written
            return -1


def plain(bootstrap: str, topic: str, n: int, batch: int, target: Target, dataset: str, workdir: Path) -> float:
    os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
    os.environ.setdefault("PROVIDERS__ENABLE_AIRFLOW_SECRETS", "false")
    import dlt
    from dlt.common.destination import Destination

    began = time.perf_counter()
    pipeline = dlt.pipeline(
        pipeline_name=f"plain_{uuid.uuid4().hex[:6]}",
        pipelines_dir=str(workdir),
        destination=Destination.from_reference(target.kind, credentials=target.credentials(dataset)),
        dataset_name=dataset,
    )
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"plain-{uuid.uuid4().hex[:6]}", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    rows: list[dict[str, Any]] = []
    seen = 0
    while seen < n:
        for message in consumer.consume(2000, 1.0):
            if message.error():
                continue
            rows.append(orjson.loads(message.value())["payload"])
            seen += 1
        if len(rows) >= batch or (seen >= n and rows):
            pipeline.run(rows, table_name=topic.replace("-", "_"))
            rows = []
    consumer.close()
    return time.perf_counter() - began


def sink(worker: WorkerProcess, topic: str, n: int, batch: int, target: Target, dataset: str) -> float:
    name = f"bench-{uuid.uuid4().hex[:6]}"
    config = {
        "connector.class": "runtime.connectors.dlt.DltSinkConnector",
        "topics": topic,
        "destination": target.kind,
        "destination.credentials": target.credentials(dataset),
        "dataset.name": dataset,
        "batch.size": str(batch),
    }
    began = time.perf_counter()
    response = httpx.post(f"{worker.url}/connectors", json={"name": name, "config": config}, timeout=60)
    assert response.status_code == 201, response.text
    table = topic.replace("-", "_")
    wait_until(lambda: target.committed(dataset, table) >= n, 900, 0.2, f"{name} to load {n} records")
    elapsed = time.perf_counter() - began
    httpx.delete(f"{worker.url}/connectors/{name}", timeout=60)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bootstrap", default=os.environ.get("CONNECT_TEST_BOOTSTRAP_SERVERS"))
    args = parser.parse_args()

    broker = None
    bootstrap = args.bootstrap
    if not bootstrap:
        from runtime.embedded_broker import EmbeddedBroker

        broker = EmbeddedBroker().start()
        bootstrap = broker.bootstrap_servers
    root = Path(tempfile.mkdtemp(prefix="dlt-bench-"))
    postgres = PostgresServer().start()
    # the worker loads at batch.size; its offset commits (where a partial batch is loaded) stay out of the way
    worker = WorkerProcess(root / "worker", bootstrap, {"offset.flush.interval.ms": 60000}).start()
    results: list[tuple[str, int, float, float]] = []
    try:
        for run in range(1, args.runs + 1):
            topic = f"dlt-bench-{uuid.uuid4().hex[:6]}"
            create_topic(bootstrap, topic)
            produce(bootstrap, topic, args.records)
            for kind in ("duckdb", "postgres"):
                target = Target(kind, root, postgres)
                base = plain(
                    bootstrap, topic, args.records, args.batch, target, f"plain_{run}_{kind}", root / f"p{run}{kind}"
                )
                ours = sink(worker, topic, args.records, args.batch, target, f"sink_{run}_{kind}")
                results.append((kind, run, args.records / base, args.records / ours))
                print(
                    f"run {run} {kind:8s} plain {args.records / base:9.0f} rows/s  sink {args.records / ours:9.0f} "
                    f"rows/s  sink/plain {base / ours:5.2f}",
                    flush=True,
                )
    finally:
        worker.stop()
        postgres.stop()
        if broker is not None:
            broker.stop()
    print(f"load average (1, 5, 15 min): {os.getloadavg()}")


if __name__ == "__main__":
    main()
