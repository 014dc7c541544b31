"""Exactly-once source (KIP-618) against the same source without it, side by side in one run on one broker.

    .venv/bin/python bench/exactly_once.py                      # 500,000 records, best of 2 rounds per side
    .venv/bin/python bench/exactly_once.py --records 100000 --repeat 1

Two one-worker distributed clusters on one embedded Tansu broker, the same settings but
`exactly.once.source.support`: `disabled` on one, `enabled` on the other. On each, a SequenceSource
(tasks.max=1, `messages.per.task`=N, JsonConverter) runs to its end:
  - without exactly-once (the baseline),
  - exactly once with `transaction.boundary=poll` (a transaction per poll batch of 1,000 records),
  - exactly once with `transaction.boundary=interval` and `transaction.boundary.interval.ms=100`.
Timed from just before the POST to the CreateTime of the last record, and from the first record's to the
last's; and records per CPU-second of the worker process. Exactly-once rows also check that the committed
view of the topic (what a read_committed consumer reads: tests/support/committed.py) holds each seqno
exactly once. A last row compares raw confluent-kafka loops, transactional (a commit per 1,000 records) and
plain: librdkafka's own cost of transactions. Target (issue 25): exactly-once / without >= 0.8.

Then the reference: a distributed Apache Kafka Connect 3.9 worker (tests/support/oracle.py, no fast-start JVM
options) with `exactly.once.source.support=enabled` in a group of its own on the same broker, and our
exactly-once worker, each read the same file of N ~100-byte lines with an exactly-once FileStreamSource
(tasks.max=1, `exactly.once.support=required`, `transaction.boundary=poll`, StringConverter), timed the same
way on both sides as above (CPU: the worker's process tree, the reference's JVM included); the committed view
of each side's topic must hold each line exactly once, in order. Target (issue 25): ours / reference >= 1.5.
`--no-oracle` leaves that row out. `--bootstrap` (default $CONNECT_TEST_BOOTSTRAP_SERVERS) runs it all on that
cluster instead of an embedded Tansu broker (bench/README.md).
Prints a table; writes JSON to bench/results/exactly_once.json. Nothing here asserts a timing.

Needs the exactly-once control plane of issue 25 (a distributed worker that starts with
`exactly.once.source.support=enabled` and starts source tasks with their transactional ids); until then
the exactly-once cluster refuses to start and the run says so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402
import orjson  # noqa: E402
import psutil  # noqa: E402
from confluent_kafka import Producer  # noqa: E402

from bench import _support as s  # noqa: E402
from runtime.embedded_broker import EmbeddedBroker  # noqa: E402
from runtime.worker.clients import PRODUCER_DEFAULTS  # noqa: E402
from tests.support.cluster import Cluster, group_topics  # noqa: E402
from tests.support.committed import committed_records  # noqa: E402
from tests.support.oracle import OracleProcess, oracle_tool  # noqa: E402

TARGET = 0.8  # exactly-once / without, at least
FILE_TARGET = 1.5  # our exactly-once FileStreamSource / the reference's, at least
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"
Metrics = dict[str, float]
MEASURES = (  # the Metrics keys, what each times, its unit
    ("total", "create to last record", "records/s"),
    ("stream", "first to last record", "records/s"),
    ("cpu", "per CPU-second", "records/cpu-s"),
)
VARIANTS: dict[str, dict[str, str]] = {
    "poll": {"transaction.boundary": "poll"},
    "interval 100 ms": {"transaction.boundary": "interval", "transaction.boundary.interval.ms": "100"},
}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run_once(cluster: Cluster, bootstrap: str, n: int, extra: dict[str, str], exactly_once: bool) -> Metrics:
    worker = cluster.workers[0]
    name = s.unique("seq")
    topic = f"{name}-data"
    s.create_topic(bootstrap, topic)
    config = {
        "connector.class": "SequenceSource",
        "tasks.max": "1",
        "topic": topic,
        "messages.per.task": str(n),
        "key.converter": JSON_CONVERTER,
        "value.converter": JSON_CONVERTER,
        **extra,
    }
    if exactly_once:
        config["exactly.once.support"] = "required"
    cpu0 = s.cpu_seconds(worker.process.pid)
    created = time.time()
    response = httpx.post(f"{worker.url}/connectors", json={"name": name, "config": config}, timeout=60)
    if response.status_code != 201:
        raise RuntimeError(f"create {name}: {response.status_code} {response.text}")

    def done() -> bool:
        answer = httpx.get(f"{worker.url}/connectors/{name}/offsets", timeout=30)
        return answer.status_code == 200 and any(o["offset"].get("saved") == n for o in answer.json()["offsets"])

    s.wait_until(done, max(120, n / 2000), interval_s=0.2, what=f"{name} offset saved={n}")
    cpu = s.cpu_seconds(worker.process.pid) - cpu0
    if exactly_once:
        # the committed view: each seqno once (records of aborted transactions and markers left out)
        records = committed_records(bootstrap, topic, timeout_s=120)
        seqnos = [orjson.loads(r.value)["payload"]["seqno"] for r in records]
        if seqnos != list(range(n)):
            raise RuntimeError(f"{name}: the committed view does not hold seqnos 0..{n - 1} exactly once")
        first_ms, last_ms = records[0].timestamp, records[-1].timestamp
    else:
        first_ms, last_ms = s.record_timestamps_ms(bootstrap, topic, [0, n - 1])
    httpx.delete(f"{worker.url}/connectors/{name}", timeout=60)
    return {
        "total": n / (last_ms / 1000 - created),
        "stream": n / max((last_ms - first_ms) / 1000, 1e-3),
        "cpu": n / cpu,
    }


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of a process and its children: the reference's launcher is a shell script over a JVM."""
    root = psutil.Process(pid)
    total = 0.0
    for proc in [root, *root.children(recursive=True)]:
        try:
            times = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def file_source_once(url: str, pid: int, bootstrap: str, source: Path, lines: list[str]) -> Metrics:
    """One exactly-once FileStreamSource over `source` on the worker at `url` (ours or the reference's), run
    until its committed offset is the file's end; the committed view must hold each line once, in order."""
    name = s.unique("eos-file")
    topic = f"{name}-data"
    s.create_topic(bootstrap, topic)
    size = source.stat().st_size
    config = {
        "connector.class": "FileStreamSource",
        "tasks.max": "1",
        "file": str(source),
        "topic": topic,
        "exactly.once.support": "required",
        "transaction.boundary": "poll",
        "key.converter": STRING_CONVERTER,
        "value.converter": STRING_CONVERTER,
    }
    cpu0 = tree_cpu_seconds(pid)
    created = time.time()
    response = httpx.post(f"{url}/connectors", json={"name": name, "config": config}, timeout=60)
    if response.status_code != 201:
        raise RuntimeError(f"create {name} on {url}: {response.status_code} {response.text}")

    def done() -> bool:
        answer = httpx.get(f"{url}/connectors/{name}/offsets", timeout=30)
        return answer.status_code == 200 and any(o["offset"].get("position") == size for o in answer.json()["offsets"])

    s.wait_until(done, max(120, len(lines) / 1000), interval_s=0.2, what=f"{name} offset position={size}")
    cpu = tree_cpu_seconds(pid) - cpu0
    records = committed_records(bootstrap, topic, 1, timeout_s=120)
    if [r.value.decode() for r in records] != lines:
        raise RuntimeError(f"{name} on {url}: the committed view does not hold each line of {source} once")
    httpx.delete(f"{url}/connectors/{name}", timeout=60)
    n = len(lines)
    first_ms, last_ms = records[0].timestamp, records[-1].timestamp
    return {
        "total": n / (last_ms / 1000 - created),
        "stream": n / max((last_ms - first_ms) / 1000, 1e-3),
        "cpu": n / cpu,
    }


def reference_worker(workdir: Path, bootstrap: str) -> OracleProcess:
    """A distributed reference worker with exactly-once source enabled, in a group of its own; no fast-start
    JVM options: this is a benchmark."""
    group = s.unique("eos-reference")
    props = {
        **group_topics(group),
        "session.timeout.ms": 6000,  # Tansu answers a first JoinGroup after about half of it
        "heartbeat.interval.ms": 1000,
        "scheduled.rebalance.max.delay.ms": 0,
        "exactly.once.source.support": "enabled",
    }
    return OracleProcess(workdir, bootstrap, props, tool=oracle_tool(), mode="distributed")


def raw_loop(bootstrap: str, n: int, transactional: bool) -> tuple[float, float]:
    """Records per second (wall) and per CPU-second of a raw confluent-kafka loop sending what SequenceSource
    sends (the worker's producer settings, JsonConverter values), plain or in a transaction per 1,000 records:
    librdkafka's and the broker's own cost of transactions, before the runtime does anything (the wall ratio
    is the floor under the `poll` row's: the task commits each poll batch of 1,000 the same way)."""
    topic = s.unique("raw-eos" if transactional else "raw")
    s.create_topic(bootstrap, topic)
    codec = s.JsonCodec(True)
    settings: dict[str, Any] = {"bootstrap.servers": bootstrap, **PRODUCER_DEFAULTS, "delivery.report.only.error": True}
    if transactional:
        settings["transactional.id"] = topic
    producer = Producer(settings)
    if transactional:
        producer.init_transactions(60)
    key, value_of = codec.key_bytes(topic, "raw-0"), codec.value_encoder(topic)
    cpu0, wall0 = s.cpu_seconds(), time.perf_counter()
    for n0 in range(0, n, 1000):
        if transactional:
            producer.begin_transaction()
        batch = [{"value": value_of(seqno), "key": key} for seqno in range(n0, min(n0 + 1000, n))]
        while batch:
            queued = producer.produce_batch(topic, batch)
            batch = batch[queued:] if queued < len(batch) else []
            producer.poll(0.05 if batch else 0)
        if transactional:
            producer.commit_transaction(60)
    if producer.flush(120):
        raise RuntimeError("raw loop: records not delivered")
    return n / (time.perf_counter() - wall0), n / (s.cpu_seconds() - cpu0)


def best(runs: list[Metrics]) -> Metrics:
    return {k: max(r[k] for r in runs) for k in runs[0]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=2, help="rounds per side; the best of each is kept")
    parser.add_argument("--no-oracle", action="store_true", help="leave out the reference FileStreamSource row")
    parser.add_argument(
        "--bootstrap",
        default=os.environ.get("CONNECT_TEST_BOOTSTRAP_SERVERS"),
        help="a running cluster to use instead of an embedded Tansu broker",
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "exactly_once.json")
    args = parser.parse_args()
    n = args.records
    load_before = s.load_average()
    broker = None if args.bootstrap else EmbeddedBroker().start()
    bootstrap = broker.bootstrap_servers if broker is not None else args.bootstrap
    work = Path(tempfile.mkdtemp(prefix="eos-bench-"))
    plain = Cluster(work / "plain", bootstrap, 1, **{"exactly.once.source.support": "disabled"})
    eos = Cluster(work / "eos", bootstrap, 1, **{"exactly.once.source.support": "enabled"})
    reference = None if args.no_oracle else reference_worker(work / "reference", bootstrap)
    if reference is not None and oracle_tool() is None:
        log("no kafka-connect-oracle here: the reference FileStreamSource row is left out")
        reference = None
    rows: list[dict[str, Any]] = []
    try:
        plain.start()
        try:
            eos.start()
        except Exception as exc:  # noqa: BLE001 - said plainly: the rest of the run needs it
            log(f"the exactly-once worker did not start ({exc}); it needs issue 25's control plane")
            print(eos.workers[0].log_tail(20))
            return 2
        baseline_runs: list[Metrics] = []
        variant_runs: dict[str, list[Metrics]] = {v: [] for v in VARIANTS}
        for round_ in range(args.repeat):
            log(f"round {round_ + 1}: without exactly-once, {n} records")
            baseline_runs.append(run_once(plain, bootstrap, n, {}, False))
            for variant, extra in VARIANTS.items():
                log(f"round {round_ + 1}: exactly once, {variant}, {n} records")
                variant_runs[variant].append(run_once(eos, bootstrap, n, extra, True))
        log(f"raw confluent-kafka loops, plain and transactional, {n} records")
        raw_plain = [raw_loop(bootstrap, n, False) for _ in range(args.repeat)]
        raw_transactional = [raw_loop(bootstrap, n, True) for _ in range(args.repeat)]
        for index, (what, unit) in enumerate([("wall clock", "records/s"), ("per CPU-second", "records/cpu-s")]):
            with_txn, without = max(r[index] for r in raw_transactional), max(r[index] for r in raw_plain)
            rows.append(
                {
                    "measure": f"raw confluent-kafka loop, a transaction per 1,000 records, {what}",
                    "unit": unit,
                    "exactly_once": with_txn,
                    "without": without,
                    "ratio": with_txn / without,
                    "target": None,
                }
            )
        if reference is not None:
            log("starting the reference's exactly-once worker")
            reference.start(timeout_s=240)
            assert reference.process is not None and eos.workers[0].process is not None
            source = work / "lines.txt"
            s.write_lines_file(source, n)
            lines = source.read_text().splitlines()
            ours_file: list[Metrics] = []
            reference_file: list[Metrics] = []
            for round_ in range(args.repeat):
                log(f"round {round_ + 1}: exactly-once FileStreamSource, ours, {n} lines")
                ours_file.append(
                    file_source_once(eos.workers[0].url, eos.workers[0].process.pid, bootstrap, source, lines)
                )
                log(f"round {round_ + 1}: exactly-once FileStreamSource, the reference, {n} lines")
                reference_file.append(file_source_once(reference.url, reference.process.pid, bootstrap, source, lines))
            ours, theirs = best(ours_file), best(reference_file)
            for key, what, unit in MEASURES:
                rows.append(
                    {
                        "measure": f"FileStreamSource exactly once, ours vs the reference's, {what}",
                        "unit": unit,
                        "exactly_once": ours[key],
                        "without": theirs[key],
                        "ratio": ours[key] / theirs[key],
                        "target": FILE_TARGET,
                    }
                )
        baseline = best(baseline_runs)
        for variant, runs in variant_runs.items():
            ours = best(runs)
            for key, what, unit in MEASURES:
                rows.append(
                    {
                        "measure": f"SequenceSource exactly once ({variant}), {what}",
                        "unit": unit,
                        "exactly_once": ours[key],
                        "without": baseline[key],
                        "ratio": ours[key] / baseline[key],
                        "target": TARGET,
                    }
                )
    finally:
        for running in (reference, eos, plain):
            try:
                if running is not None:
                    running.stop()
            except Exception as exc:  # noqa: BLE001
                log(f"stopping a worker: {exc}")
        if broker is not None:
            broker.stop()
    load_after = s.load_average()
    header = f"{'measure':<72} {'unit':<14} {'exactly once':>12} {'without/ref':>11} {'ratio':>6} {'target':>7}"
    print(header)
    print("-" * len(header))
    for r in rows:
        target = r["target"]
        flag = "" if target is None or r["ratio"] >= target else " BELOW"
        print(
            f"{r['measure']:<72} {r['unit']:<14} {r['exactly_once']:>12,.0f} {r['without']:>11,.0f} "
            f"{r['ratio']:>6.2f} {'-' if target is None else '>=' + str(target):>7}{flag}"
        )
    print(
        f"({n:,} records, best of {args.repeat} round(s) per side; load average {load_before:.1f} before, "
        f"{load_after:.1f} after, on {os.cpu_count()} CPUs)"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "rows": rows,
                "records": n,
                "repeat": args.repeat,
                "load_average": [load_before, load_after],
                "cpus": os.cpu_count(),
                "machine": platform.platform(),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
