"""Throughput with tasks.max 1, 2 and 4: a worker's tasks as threads (the default), in task processes
(`task.processes`), and the same number of raw confluent-kafka loops, each in a process of its own.

    .venv/bin/python bench/task_scaling.py [--records 300000] [--tasks 1 2 4] [--sides raw threads processes]

Source: SequenceSource with `task.own.partition=true` (task i writes partition i of one topic, N records
each) against T raw producer loops (bench/_support.py's, the same bytes), each writing a topic of its own;
timed from the create (or the loops' start) to the CreateTime of the last record of the last partition.
Sink: RecordingSink reading a topic of T partitions, N records each, against T raw consumer loops in one
group (one partition each) writing the same JSON lines; timed from the create (or subscribe) to the last
line. Aggregate records/s, and the ratio to the raw loops with the same T. The oracle cannot run these
Python connectors, so it has no column. Each side runs on a fresh worker (task.processes = T for the
processes side). Writes bench/results/task_scaling.json. Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
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
import psutil  # noqa: E402
from confluent_kafka import Producer  # noqa: E402

from bench import _support as s  # noqa: E402
from runtime.embedded_broker import EmbeddedBroker  # noqa: E402
from runtime.worker.clients import PRODUCER_DEFAULTS  # noqa: E402
from tests.support.worker import WorkerProcess  # noqa: E402

SESSION_TIMEOUT_MS = 6000
JSON = "org.apache.kafka.connect.json.JsonConverter"
CONVERTERS = {"key.converter": JSON, "value.converter": JSON}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def tree_cpu(pid: int) -> float:
    """CPU seconds of a process and its children (the task processes)."""
    proc = psutil.Process(pid)
    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def wait_children_idle(pid: int, timeout_s: float = 60.0) -> None:
    """Until the worker's task processes have finished importing (their CPU time stops growing), so
    their start-up is not counted in the measure."""
    deadline = time.monotonic() + timeout_s
    last = -1.0
    while time.monotonic() < deadline:
        children = psutil.Process(pid).children(recursive=True)
        now = sum(c.cpu_times().user + c.cpu_times().system for c in children)
        if children and abs(now - last) < 0.02:
            return
        last = now
        time.sleep(0.5)


# ---- raw loops, one process each -------------------------------------------------------------------


def _raw_source(args: tuple[str, str, int, str, float]) -> tuple[float, float]:
    bootstrap, topic, n, key, start_at = args
    codec = s.JsonCodec(True)
    time.sleep(max(0.0, start_at - time.time()))  # every loop starts at the same instant
    started = time.time()
    s.raw_sequence_producer(bootstrap, topic, n, key, codec)
    (last_ms,) = s.record_timestamps_ms(bootstrap, topic, [n - 1])
    return started, last_ms / 1000


def _raw_sink(args: tuple[str, str, int, str, str, float]) -> tuple[float, float]:
    bootstrap, topic, n, out, group, start_at = args
    time.sleep(max(0.0, start_at - time.time()))
    started = time.time()
    total, _, _ = s.raw_recording_consumer(
        bootstrap, topic, n, Path(out), s.JsonCodec(True), group=group, session_timeout_ms=SESSION_TIMEOUT_MS
    )
    return started, started + total


def raw_side(kind: str, bootstrap: str, tasks: int, n: int, workdir: Path, topic: str | None = None) -> float:
    context = multiprocessing.get_context("spawn")
    start_at = time.time() + 3.0  # after the processes have imported everything
    with context.Pool(tasks) as pool:
        if kind == "source":
            base = s.unique("raw-src")
            topics = [f"{base}-{i}" for i in range(tasks)]
            for t in topics:
                s.create_topic(bootstrap, t)
            results = pool.map(_raw_source, [(bootstrap, t, n, f"{base}-{i}", start_at) for i, t in enumerate(topics)])
        else:
            assert topic is not None
            group = s.unique("raw-sink")
            results = pool.map(
                _raw_sink,
                [(bootstrap, topic, n, str(workdir / f"{group}-{i}.jsonl"), group, start_at) for i in range(tasks)],
            )
    began = min(r[0] for r in results)
    ended = max(r[1] for r in results)
    return tasks * n / (ended - began)


# ---- the worker ---------------------------------------------------------------------------------


def worker_side(
    kind: str, worker: WorkerProcess, bootstrap: str, tasks: int, n: int, workdir: Path, topic: str | None = None
) -> tuple[float, float]:
    """(records/s, records per CPU-second of the worker and its task processes)."""
    name = s.unique(f"scale-{kind}")
    assert worker.process is not None
    cpu0 = tree_cpu(worker.process.pid)
    if kind == "source":
        topic = f"{name}-out"
        s.create_topic(bootstrap, topic, partitions=tasks)
        config = {
            "connector.class": "SequenceSource",
            "tasks.max": str(tasks),
            "topic": topic,
            "messages.per.task": str(n),
            "task.own.partition": "true",
            **CONVERTERS,
        }
        created = time.time()
        httpx.post(f"{worker.url}/connectors", json={"name": name, "config": config}, timeout=60).raise_for_status()
        ends = []
        for p in range(tasks):
            ends.append(s.record_timestamps_ms(bootstrap, topic, [n - 1], partition=p)[0] / 1000)
        ended = max(ends)
    else:
        assert topic is not None
        out = workdir / f"{name}.jsonl"
        config = {
            "connector.class": "RecordingSink",
            "tasks.max": str(tasks),
            "topics": topic,
            "output.file": str(out),
            **CONVERTERS,
        }
        created = time.time()
        started = time.perf_counter()
        httpx.post(f"{worker.url}/connectors", json={"name": name, "config": config}, timeout=60).raise_for_status()
        _, last = s.watch_lines(out, tasks * n, timeout_s=max(180, tasks * n / 2000))
        ended = created + (last - started)
    cpu = tree_cpu(worker.process.pid) - cpu0
    httpx.delete(f"{worker.url}/connectors/{name}", timeout=60)
    return tasks * n / (ended - created), tasks * n / cpu


def prefill_partitions(bootstrap: str, topic: str, partitions: int, n: int) -> None:
    codec = s.JsonCodec(True)
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER_DEFAULTS})
    value_of = codec.value_encoder(topic)
    for p in range(partitions):
        key = codec.key_bytes(topic, f"prefill-{p}")
        for seqno in range(n):
            while True:
                try:
                    producer.produce(topic, value_of(seqno), key, partition=p)
                    break
                except BufferError:
                    producer.poll(0.05)
            if seqno % 10000 == 0:
                producer.poll(0)
    if producer.flush(120):
        raise RuntimeError("prefill: records not delivered")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=300_000, help="records per task")
    parser.add_argument("--tasks", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument(
        "--sides", nargs="+", default=["raw", "threads", "processes"], choices=["raw", "threads", "processes"]
    )
    parser.add_argument("--kinds", nargs="+", default=["source", "sink"], choices=["source", "sink"])
    args = parser.parse_args(argv)
    n = args.records
    load_before = os.getloadavg()[0]
    rows: list[dict[str, Any]] = []
    broker = EmbeddedBroker().start()
    bootstrap = broker.bootstrap_servers
    try:
        with tempfile.TemporaryDirectory(prefix="task-scaling-") as tmp:
            workdir = Path(tmp)
            for tasks in args.tasks:
                sink_topic = None
                if "sink" in args.kinds:
                    sink_topic = s.unique("scale-in")
                    s.create_topic(bootstrap, sink_topic, partitions=tasks)
                    log(f"prefilling {sink_topic}: {tasks} partitions x {n} records")
                    prefill_partitions(bootstrap, sink_topic, tasks, n)
                for kind in args.kinds:
                    row: dict[str, Any] = {"kind": kind, "tasks": tasks}
                    if "raw" in args.sides:
                        log(f"{kind}, {tasks} raw loop process(es)")
                        row["raw"] = raw_side(kind, bootstrap, tasks, n, workdir, sink_topic)
                    for side in ("threads", "processes"):
                        if side not in args.sides:
                            continue
                        log(f"{kind}, tasks.max={tasks}, tasks as {side}")
                        props = {
                            "bootstrap.servers": bootstrap,
                            "offset.flush.interval.ms": 1000,
                            "log.level": "WARN",
                            "consumer.session.timeout.ms": SESSION_TIMEOUT_MS,
                            "task.processes": tasks if side == "processes" else 0,
                        }
                        worker = WorkerProcess(workdir / f"{side}-{kind}-{tasks}", bootstrap, props=props).start()
                        assert worker.process is not None
                        if side == "processes":
                            wait_children_idle(worker.process.pid)
                        try:
                            rate, per_cpu = worker_side(kind, worker, bootstrap, tasks, n, workdir, sink_topic)
                        finally:
                            worker.stop()
                        row[side], row[f"{side}_per_cpu"] = rate, per_cpu
                    rows.append(row)
    finally:
        broker.stop()
    load_after = os.getloadavg()[0]
    print(f"\n{n:,} records per task; {os.cpu_count()} CPUs; load {load_before:.1f} before, {load_after:.1f} after")
    header = f"{'':8}{'tasks':>6}{'raw loops':>12}{'threads':>12}{'ratio':>7}{'processes':>12}{'ratio':>7}"
    print(header + "   records/s (aggregate); ratio to the raw loops")
    for row in rows:
        raw = row.get("raw")
        cells = [f"{row['kind']:8}{row['tasks']:>6}", f"{raw:>12,.0f}" if raw else f"{'-':>12}"]
        for side in ("threads", "processes"):
            value = row.get(side)
            cells.append(f"{value:>12,.0f}" if value else f"{'-':>12}")
            cells.append(f"{value / raw:>7.2f}" if value and raw else f"{'-':>7}")
        print("".join(cells))
    results = REPO / "bench" / "results"
    results.mkdir(exist_ok=True)
    (results / "task_scaling.json").write_text(
        json.dumps(
            {
                "records_per_task": n,
                "cpus": os.cpu_count(),
                "machine": platform.platform(),
                "load_before": load_before,
                "load_after": load_after,
                "rows": rows,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
