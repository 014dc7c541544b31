"""Throughput of the Singer source against a plain loop reading the same tap's stdout into a producer.

The tap is meltanolabs-tap-postgres (in its own virtualenv, tests/support/tool_venvs.py) reading a table of
--rows rows from Debian's PostgreSQL, INCREMENTAL on its primary key, started from no state by each run:
- raw: the tap's stdout read line by line, each RECORD's record (orjson) produced to a topic with
  confluent-kafka, timed from the tap's start;
- ours: a SingerSourceConnector on a standalone worker (JSON values without schemas, as the raw loop writes),
  given the catalog (no discovery, as the raw loop does none), timed from the create request.
Both end when a consumer (started before, the same on both sides) has read the N-th record from the topic,
and both include the tap's own run (its start-up and its reads), which is most of the time: the ratio says
how much the connector adds to it. The worker commits offsets every 60 s (Kafka's default): this runtime's
commit waits for every record in flight (producer.flush) on the task's thread, a stall a short interval
would add to every run. Three rounds, alternating which side runs first; best of each side.

    .venv/bin/python bench/singer_bench.py [--rows 100000] [--repeat 3] [--bootstrap host:port]

Without --bootstrap (or $CONNECT_TEST_BOOTSTRAP_SERVERS) an embedded Tansu broker is started. Prints the
command, the load average before and after, rows/s of each run and ours / raw (the goal: >= 0.9).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._support import create_topic
from runtime.embedded_broker import EmbeddedBroker
from tests.support.postgres import PostgresServer
from tests.support.tool_venvs import TAP_POSTGRES, tool_venv
from tests.support.worker import WorkerProcess

STREAM = "public-events"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def load_table(pg: PostgresServer, database: str, rows: int) -> None:
    pg.create_database(database)
    pg.execute(
        database,
        "CREATE TABLE events (id bigint PRIMARY KEY, name text, amount double precision, at timestamptz, note text)",
    )
    pg.execute(
        database,
        "INSERT INTO events SELECT i, 'event-' || i, i * 0.5, '2024-01-01'::timestamptz + i * interval '1 second', "
        "repeat('x', 40) FROM generate_series(1, %s) i",
        (rows,),
    )


def catalog_for(tap: str, config_path: str) -> dict[str, Any]:
    out = subprocess.run([tap, "--config", config_path, "--discover"], check=True, capture_output=True, timeout=300)
    catalog = orjson.loads(out.stdout)
    [entry] = [e for e in catalog["streams"] if e["tap_stream_id"] == STREAM]
    for item in entry["metadata"]:
        if item["breadcrumb"] == []:
            item["metadata"].update({"selected": True, "replication-method": "INCREMENTAL", "replication-key": "id"})
    entry.update({"replication_method": "INCREMENTAL", "replication_key": "id"})
    return {"streams": [entry]}


class TopicCounter:
    """Reads `topic` from its start in a thread of its own until `rows` records came; `done_at` is then set."""

    def __init__(self, bootstrap: str, topic: str, rows: int) -> None:
        create_topic(bootstrap, topic)
        self.done_at: float | None = None
        self._consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": f"count-{topic}", "enable.auto.commit": False}
        )
        self._consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        self._rows = rows
        self._thread = threading.Thread(target=self._count, daemon=True)
        self._thread.start()

    def _count(self) -> None:
        seen = 0
        while seen < self._rows:
            seen += sum(1 for m in self._consumer.consume(10_000, 0.2) if not m.error())
        self.done_at = time.monotonic()
        self._consumer.close()

    def wait(self, timeout_s: float) -> float:
        self._thread.join(timeout_s)
        if self.done_at is None:
            raise RuntimeError(f"not every record reached the topic within {timeout_s} s")
        return self.done_at


def raw_run(tap: str, config_path: str, catalog_path: str, bootstrap: str, topic: str, rows: int) -> float:
    """The plain loop: the tap's stdout into a producer, one message per RECORD."""
    counter = TopicCounter(bootstrap, topic, rows)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.num.messages": 10000})
    started = time.monotonic()
    proc = subprocess.Popen(
        [tap, "--config", config_path, "--catalog", catalog_path],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    sent = 0
    for line in proc.stdout:
        message = orjson.loads(line)
        if message.get("type") != "RECORD":
            continue
        value = orjson.dumps(message["record"])
        while True:
            try:
                producer.produce(topic, value)
                break
            except BufferError:
                producer.poll(0.05)
        sent += 1
        producer.poll(0)
    if proc.wait() != 0:
        raise RuntimeError(f"the tap exited with {proc.returncode}")
    producer.flush(120)
    if sent != rows:
        raise RuntimeError(f"raw loop: {sent} records, expected {rows}")
    return rows / (counter.wait(900) - started)


def ours_run(
    tap: str, tap_config: str, catalog: dict[str, Any], url: str, bootstrap: str, name: str, rows: int
) -> float:
    """The connector: create it, wait for the last record on the topic."""
    config = {
        "connector.class": "SingerSourceConnector",
        "tap": tap,
        "tap.config": tap_config,
        "tap.catalog": json.dumps(catalog),
        "streams": STREAM,
        "replication.keys": f"{STREAM}=id",
        "topic.prefix": name + ".",
        "poll.interval.ms": "3600000",
    }
    counter = TopicCounter(bootstrap, f"{name}.{STREAM}", rows)
    started = time.monotonic()
    response = httpx.post(f"{url}/connectors", json={"name": name, "config": config}, timeout=120)
    if response.status_code != 201:
        raise RuntimeError(f"create {name}: {response.status_code} {response.text}")
    elapsed = counter.wait(900) - started
    httpx.delete(f"{url}/connectors/{name}", timeout=60)
    return rows / elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--bootstrap", default=os.environ.get("CONNECT_TEST_BOOTSTRAP_SERVERS"))
    args = parser.parse_args(argv)
    # a SIGTERM ends the run through the with-blocks below: the PostgreSQL server and the worker are stopped
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    print("command:", " ".join([Path(sys.executable).name, *sys.argv]))
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    broker = None
    bootstrap = args.bootstrap
    if not bootstrap:
        broker = EmbeddedBroker().start()
        bootstrap = broker.bootstrap_servers
    tap = str(tool_venv("tap-postgres", TAP_POSTGRES) / "bin" / "tap-postgres")
    work = Path(tempfile.mkdtemp(prefix="singer-bench-"))
    raw_rates: list[float] = []
    our_rates: list[float] = []
    try:
        with PostgresServer() as pg:
            log(f"loading {args.rows} rows")
            load_table(pg, "bench", args.rows)
            config = {"host": "127.0.0.1", "port": pg.port, "user": pg.user, "password": "x", "database": "bench"}
            config["filter_schemas"] = ["public"]
            tap_config = json.dumps(config)
            config_path = work / "config.json"
            config_path.write_text(tap_config)
            catalog = catalog_for(tap, str(config_path))
            catalog_path = work / "catalog.json"
            catalog_path.write_text(json.dumps(catalog))
            props = {
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable": "false",
                "offset.flush.interval.ms": 60_000,
            }
            with WorkerProcess(work / "worker", bootstrap, props=props) as worker:
                for i in range(args.repeat):
                    sides = [("raw", raw_rates), ("ours", our_rates)]
                    for side, rates in sides if i % 2 == 0 else sides[::-1]:
                        log(f"round {i + 1}: {side}")
                        if side == "raw":
                            rate = raw_run(tap, str(config_path), str(catalog_path), bootstrap, f"raw-{i}", args.rows)
                        else:
                            rate = ours_run(tap, tap_config, catalog, worker.url, bootstrap, f"ours-{i}", args.rows)
                        rates.append(rate)
                        log(f"round {i + 1}: {side} {rate:,.0f} rows/s")
                worker.stop()
    finally:
        if broker is not None:
            broker.stop()
    print(f"rows: {args.rows}, tap: meltanolabs-tap-postgres ({TAP_POSTGRES[0]}), INCREMENTAL on id")
    print(f"{'round':>5} {'raw rows/s':>12} {'ours rows/s':>12} {'ours/raw':>9}")
    for i, (raw, ours) in enumerate(zip(raw_rates, our_rates, strict=True)):
        print(f"{i + 1:>5} {raw:>12,.0f} {ours:>12,.0f} {ours / raw:>9.3f}")
    best_raw, best_ours = max(raw_rates), max(our_rates)
    print(f"{'best':>5} {best_raw:>12,.0f} {best_ours:>12,.0f} {best_ours / best_raw:>9.3f}   (goal >= 0.9)")
    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
