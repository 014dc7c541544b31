"""Debezium's PostgreSQL connector (pgoutput, streaming) hosted in this runtime against the same Debezium
jars in the reference Kafka Connect 3.9 (the oracle), side by side in one run, on one Debian PostgreSQL.

    .venv/bin/python bench/debezium_bench.py [--rows 20000] [--changes 50] [--repeat 3]

Each round creates a table and a connector that streams it (snapshot.mode no_data), waits for streaming to
have begun (a marker row arrives), then measures, with a consumer tailing the topic on this machine:
  latency     --changes single-row transactions, 40 ms apart: from each commit's return in PostgreSQL to
              its change event read from Kafka (median and 95th percentile)
  throughput  --rows rows inserted in one transaction: rows/s from its commit to the last event read
Both sides run the same connector config (JsonConverter with schemas, poll.interval.ms 100); rounds
alternate sides; the best round of each side is shown. Writes bench/results/debezium_bench.json. Nothing
here asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402
import orjson  # noqa: E402
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition  # noqa: E402

from bench import _support as s  # noqa: E402
from bench.run import compare, create_connector, delete_connector, oracle_props  # noqa: E402
from runtime.embedded_broker import EmbeddedBroker  # noqa: E402
from runtime.java.layout import lay_out  # noqa: E402
from tests.support.oracle import OracleProcess  # noqa: E402
from tests.support.postgres import LOGICAL_DECODING, PostgresServer  # noqa: E402
from tests.support.worker import WorkerProcess  # noqa: E402

POSTGRES = "io.debezium.connector.postgresql.PostgresConnector"
DATABASE = "bench"
CHANGE_GAP_S = 0.04


class Tail:
    """A consumer reading one topic from its start on a thread: when each row's change event was read."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.arrived: dict[int, float] = {}  # row id -> time.time() its event was read
        self._stop = threading.Event()
        self._consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": s.unique("dbz-tail"),
                "enable.auto.commit": False,
                "fetch.wait.max.ms": 5,
            }
        )
        self._consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        self._thread = threading.Thread(target=self._run, name="dbz-tail", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            messages = self._consumer.consume(1000, 0.05)
            now = time.time()
            for message in messages:
                value = message.value()
                if message.error() is None and value:
                    after = orjson.loads(value)["payload"]["after"]
                    if after is not None:
                        self.arrived.setdefault(after["id"], now)

    def wait_for(self, ids: range, timeout_s: float) -> float:
        """The time the last of `ids` was read."""
        s.wait_until(lambda: all(i in self.arrived for i in ids), timeout_s, interval_s=0.01, what=f"rows {ids}")
        return max(self.arrived[i] for i in ids)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self._consumer.close()


def connector_config(pg: PostgresServer, table: str, prefix: str) -> dict[str, str]:
    return {
        "connector.class": POSTGRES,
        "tasks.max": "1",
        "database.hostname": "127.0.0.1",
        "database.port": str(pg.port),
        "database.user": pg.user,
        "database.password": "unused",  # trust authentication on loopback
        "database.dbname": DATABASE,
        "topic.prefix": prefix,
        "plugin.name": "pgoutput",
        "slot.name": prefix.replace("-", "_"),
        "publication.name": f"pub_{prefix.replace('-', '_')}",
        "publication.autocreate.mode": "filtered",
        "table.include.list": f"public.{table}",
        "snapshot.mode": "no_data",
        "poll.interval.ms": "100",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    }


def bench_round(pg: PostgresServer, bootstrap: str, url: str, side: str, rows: int, changes: int) -> dict[str, float]:
    prefix = s.unique(f"dbz-{side}")
    table = prefix.replace("-", "_")
    pg.execute(DATABASE, f"CREATE TABLE {table} (id integer PRIMARY KEY, item text NOT NULL)")
    topic = f"{prefix}.public.{table}"
    s.create_topic(bootstrap, topic)
    tail = Tail(bootstrap, topic)
    connection = pg.connect(DATABASE)
    try:
        create_connector(url, prefix, connector_config(pg, table, prefix))
        with connection.cursor() as cursor:
            # streaming has begun once a marker row arrives (rows before the slot existed are never read)
            marker = -1

            def marker_arrived() -> bool:
                nonlocal marker
                marker -= 1
                cursor.execute(f"INSERT INTO {table} VALUES (%s, 'marker')", (marker,))
                return s.wait_until(lambda: tail.arrived, 1, interval_s=0.01, what="a marker") is not None

            s.wait_until(marker_arrived, 180, interval_s=0, what=f"{side}: Debezium streaming")
            latencies = []
            for row in range(1, changes + 1):
                cursor.execute(f"INSERT INTO {table} VALUES (%s, 'change')", (row,))
                committed = time.time()
                latencies.append(tail.wait_for(range(row, row + 1), 60) - committed)
                time.sleep(CHANGE_GAP_S)
            first = changes + 1
            cursor.execute(
                f"INSERT INTO {table} SELECT g, repeat('x', 100) FROM generate_series({first}, {first + rows - 1}) g"
            )
            committed = time.time()
            last = tail.wait_for(range(first, first + rows), max(180, rows / 500))
    finally:
        connection.close()
        tail.close()
        delete_connector(url, prefix)
    latencies.sort()
    return {
        "throughput": rows / (last - committed),
        "latency_p50_ms": statistics.median(latencies) * 1000,
        "latency_p95_ms": latencies[max(0, round(0.95 * len(latencies)) - 1)] * 1000,
    }


def best(runs: list[dict[str, float]]) -> dict[str, float]:
    """Each metric's best round (highest throughput, lowest latencies)."""
    return {
        "throughput": max(r["throughput"] for r in runs),
        "latency_p50_ms": min(r["latency_p50_ms"] for r in runs),
        "latency_p95_ms": min(r["latency_p95_ms"] for r in runs),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--changes", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    load_before = s.load_average()
    ours_runs: list[dict[str, float]] = []
    oracle_runs: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="dbz-bench-") as tmp, PostgresServer(settings=LOGICAL_DECODING) as pg:
        pg.create_database(DATABASE)
        workdir = Path(tmp)
        plugins = workdir / "plugins"
        lay_out(plugins, ("debezium-connector-postgres",))
        broker = EmbeddedBroker().start()
        bootstrap = broker.bootstrap_servers
        worker = oracle = None
        try:
            props = {**oracle_props(bootstrap), "plugin.path": str(plugins)}
            worker = WorkerProcess(workdir / "ours", bootstrap, props=props).start()
            oracle = OracleProcess(workdir / "oracle", bootstrap, props=props).start()

            def listed() -> bool:
                try:
                    return any(p["class"] == POSTGRES for p in httpx.get(f"{worker.url}/connector-plugins").json())
                except httpx.HTTPError:
                    return False

            s.wait_until(listed, 180, interval_s=0.5, what="Debezium listed by our worker")

            def ours(i: int) -> dict[str, float]:
                ours_runs.append(bench_round(pg, bootstrap, worker.url, "ours", args.rows, args.changes))
                return ours_runs[-1]

            def theirs(i: int) -> dict[str, float]:
                oracle_runs.append(bench_round(pg, bootstrap, oracle.url, "oracle", args.rows, args.changes))
                return oracle_runs[-1]

            compare(args.repeat, ours, theirs)
        finally:
            for process in (worker, oracle):
                if process is not None:
                    process.stop()
            broker.stop()
    load_after = s.load_average()
    our_best, oracle_best = best(ours_runs), best(oracle_runs)
    print(
        f"\nDebezium PostgreSQL streaming, {args.rows:,} rows in one transaction and {args.changes} single-row "
        f"commits, best of {args.repeat}; {platform.machine()}, load {load_before:.1f} before, {load_after:.1f} after"
    )
    print(f"{'':<34}{'ours (Java, hosted)':>22}{'oracle 3.9':>14}{'ours/oracle':>13}")
    labels = {
        "throughput": "rows/s, commit to last event",
        "latency_p50_ms": "latency ms, median",
        "latency_p95_ms": "latency ms, 95th percentile",
    }
    for metric, label in labels.items():
        ratio = our_best[metric] / oracle_best[metric]
        print(f"{label:<34}{our_best[metric]:>22,.1f}{oracle_best[metric]:>14,.1f}{ratio:>13.2f}")
    for side, runs in (("ours", ours_runs), ("oracle", oracle_runs)):
        print(f"  {side} rounds: " + "; ".join(", ".join(f"{k} {v:,.1f}" for k, v in r.items()) for r in runs))
    results = REPO / "bench" / "results"
    results.mkdir(exist_ok=True)
    (results / "debezium_bench.json").write_text(
        json.dumps(
            {
                "rows": args.rows,
                "changes": args.changes,
                "repeat": args.repeat,
                "ours": ours_runs,
                "oracle": oracle_runs,
                "load": [load_before, load_after],
                "at": time.strftime("%Y-%m-%dT%H:%M:%S"),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
