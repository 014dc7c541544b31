"""Distributed mode at scale (issue 10): three workers, N connectors of 5 idle tasks each, on one broker.

    .venv/bin/python bench/distributed_scale.py --connectors 100 1000

For each size, a fresh group of three worker processes, then:
  create     N x POST /connectors (SequenceSource, tasks.max=5, messages.per.task=0: tasks that stay idle),
             from 4 client threads; seconds from the last 201 to every connector and task RUNNING
  listing    GET /connectors?expand=status&expand=info, median of 5
  status     GET /connectors/{c}/status p50 and p99 over 300 requests on random connectors
  health     GET /health latency while a listing runs (worst of 5)
  idle cpu   cores used by the three workers together in six consecutive 10 s windows after every task
             is RUNNING (all printed); the idle figure is the last window's
  paused     the same over 10 s with every connector PAUSED (no task polls: the runtime's own idle cost)
  rss        resident memory of the three workers together
  record     the largest record value in the config and status topics
  failover   kill -9 of one worker -> every task RUNNING on the other two (session.timeout.ms 10 s,
             scheduled.rebalance.max.delay.ms 0)
Prints the figures and their ratio to the first size's; writes bench/results/distributed_scale.json.
Targets (issue 10, at 1,000 connectors): RUNNING within 120 s, listing < 1 s, status p99 < 50 ms, health < 1 s,
idle < 0.1 core, records < 100 KB, failover < session timeout + 30 s. Nothing here asserts a timing.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402
from confluent_kafka import Consumer, TopicPartition  # noqa: E402

from bench import _support as s  # noqa: E402
from runtime.embedded_broker import EmbeddedBroker  # noqa: E402
from tests.support.worker import WorkerProcess  # noqa: E402

TASKS = 5
IDLE_WINDOWS = 6
SESSION_TIMEOUT_MS = 10000
TARGETS = {"create": ("<=", 120.0), "listing": ("<=", 1.0), "status_p99": ("<=", 0.05), "health": ("<=", 1.0),
           "idle_cores": ("<=", 0.1), "idle_paused_cores": ("<=", 0.1), "max_record_kb": ("<=", 100.0),
           "failover": ("<=", SESSION_TIMEOUT_MS / 1000 + 30)}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def group_props(bootstrap: str) -> dict[str, Any]:
    group = s.unique("scale")
    return {
        "bootstrap.servers": bootstrap, "group.id": group,
        "config.storage.topic": f"{group}-configs", "offset.storage.topic": f"{group}-offsets",
        "status.storage.topic": f"{group}-status",
        "config.storage.replication.factor": 1, "offset.storage.replication.factor": 1,
        "status.storage.replication.factor": 1, "offset.storage.partitions": 5, "status.storage.partitions": 5,
        "session.timeout.ms": SESSION_TIMEOUT_MS, "heartbeat.interval.ms": 3000,
        "scheduled.rebalance.max.delay.ms": 0, "offset.flush.interval.ms": 10000,
        "rest.request.timeout.ms": 120000, "log.level": "WARN",
    }


def listing(client: httpx.Client) -> dict[str, Any]:
    return client.get("/connectors?expand=status&expand=info", timeout=300).json()


def settled(entry: dict[str, Any], state: str, exclude_worker: str | None = None) -> tuple[bool, int]:
    """(whether a listing entry's connector and all its TASKS tasks are in `state`, how many of its tasks
    are), not counting tasks on `exclude_worker`."""
    status = entry.get("status") or {}
    tasks = sum(1 for t in status.get("tasks", []) if t["state"] == state and t["worker_id"] != exclude_worker)
    return status.get("connector", {}).get("state") == state and tasks == TASKS, tasks


def wait_all_in_state(client: httpx.Client, n: int, state: str, timeout_s: float,
                      exclude_worker: str | None = None) -> float:
    """perf_counter() once all n connectors and their tasks are in `state` (tasks on `exclude_worker` not
    counted); on time-out, logs what is not, as the worker asked sees it."""
    deadline = time.monotonic() + timeout_s
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        try:
            body = listing(client)
        except httpx.HTTPError as exc:
            log(f"listing failed: {exc}")
        if sum(settled(entry, state, exclude_worker)[0] for entry in body.values()) == n:
            return time.perf_counter()
        time.sleep(0.5)
    counts = [settled(entry, state, exclude_worker) for entry in body.values()]
    for name, entry in sorted(body.items()):
        if not settled(entry, state, exclude_worker)[0]:
            log(f"not {state}: {name} {json.dumps(entry.get('status'))}")
    raise TimeoutError(f"{sum(ok for ok, _ in counts)}/{n} connectors and {sum(t for _, t in counts)}/{n * TASKS} "
                       f"tasks {state} after {timeout_s}s")


def cores_over(workers: list[WorkerProcess], seconds: float) -> float:
    """Cores the workers used together over the next `seconds`."""
    before = [s.cpu_seconds(w.process.pid) for w in workers]  # type: ignore[union-attr]
    t0 = time.perf_counter()
    time.sleep(seconds)
    after = [s.cpu_seconds(w.process.pid) for w in workers]  # type: ignore[union-attr]
    return (sum(after) - sum(before)) / (time.perf_counter() - t0)


def max_record_bytes(bootstrap: str, topic: str) -> int:
    """The largest value in `topic`, read from the start up to the high watermarks taken first (task
    statuses and offsets may still be written, so there is no quiet end to wait for; on Tansu the high watermark is the last
    batch's base + 1, so a record of that last batch may be left out)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": s.unique("scale-reader"),
                         "enable.auto.commit": "false", "auto.offset.reset": "earliest"})
    try:
        metadata = consumer.list_topics(topic, timeout=10).topics[topic]
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in metadata.partitions}
        consumer.assign([TopicPartition(topic, p, 0) for p, end in ends.items() if end > 0])
        left = {p for p, end in ends.items() if end > 0}
        largest = 0
        deadline = time.monotonic() + 120
        while left and time.monotonic() < deadline:
            for message in consumer.consume(1000, 0.5):
                if message.error() is not None:
                    continue
                if message.value() is not None:
                    largest = max(largest, len(message.value()))
                if message.offset() + 1 >= ends[message.partition()]:
                    left.discard(message.partition())
        return largest
    finally:
        consumer.close()


def run_size(n: int, workdir: Path, bootstrap: str) -> dict[str, float]:
    props = group_props(bootstrap)
    workers = [WorkerProcess(workdir / f"w{i}", bootstrap, props=props, mode="distributed") for i in range(3)]
    results: dict[str, float] = {}
    try:
        for worker in workers:
            worker.start(timeout_s=120)
        client = httpx.Client(base_url=workers[0].url, timeout=300)
        names = [f"seq-{i:05d}" for i in range(n)]

        def create(name: str) -> None:
            config = {"connector.class": "SequenceSource", "tasks.max": str(TASKS), "topic": f"{name}-out",
                      "messages.per.task": "0"}
            for _ in range(5):
                response = client.post("/connectors", json={"name": name, "config": config})
                if response.status_code == 201:
                    return
                log(f"create {name}: {response.status_code} {response.text[:200]}; retrying")
            raise RuntimeError(f"could not create {name}")

        log(f"{n} connectors: creating")
        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(create, names))
        last_create = time.perf_counter()
        results["create_all_s"] = last_create - started
        results["create"] = wait_all_in_state(client, n, "RUNNING", 900) - last_create
        log(f"{n} connectors: all RUNNING {results['create']:.1f}s after the last create "
            f"(creates took {results['create_all_s']:.1f}s)")
        # idle: CPU of the three workers in consecutive 10 s windows after the last task started; start-up
        # work (first offset flushes, the statuses of 5,000 tasks read by every worker) fades within them
        windows = [cores_over(workers, 10) for _ in range(IDLE_WINDOWS)]
        results["idle_cores"] = windows[-1]
        results["rss_mb"] = sum(s.rss_mb(w.process.pid) for w in workers)  # type: ignore[union-attr]
        log(f"{n} connectors: cores used in 10 s windows after the last start "
            f"{' '.join(f'{c:.3f}' for c in windows)}; idle = the last; rss {results['rss_mb']:.0f} MiB")

        # the same cluster with every connector PAUSED: no task polls, so what is left is the runtime's own
        # idle cost (a running idle task's poll wake-ups are the connector's: once a second here)
        def pause(name: str) -> None:
            response = client.put(f"/connectors/{name}/pause")
            assert response.status_code == 202, response.text

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(pause, names))
        wait_all_in_state(client, n, "PAUSED", 600)
        results["idle_paused_cores"] = cores_over(workers, 10)
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda name: client.put(f"/connectors/{name}/resume"), names))
        wait_all_in_state(client, n, "RUNNING", 600)
        log(f"{n} connectors: all PAUSED, {results['idle_paused_cores']:.3f} cores; resumed")

        times = []
        for _ in range(5):
            t = time.perf_counter()
            body = listing(client)
            times.append(time.perf_counter() - t)
            assert len(body) == n, len(body)
        results["listing"] = statistics.median(times)

        latencies = []
        for _ in range(300):
            name = random.choice(names)
            t = time.perf_counter()
            response = client.get(f"/connectors/{name}/status")
            latencies.append(time.perf_counter() - t)
            assert response.status_code == 200, response.text
        latencies.sort()
        results["status_p50"] = latencies[len(latencies) // 2]
        results["status_p99"] = latencies[int(len(latencies) * 0.99) - 1]

        health = []
        for _ in range(5):
            lister = threading.Thread(target=listing, args=(client,))
            lister.start()
            time.sleep(0.05)
            t = time.perf_counter()
            httpx.get(workers[0].url + "/health", timeout=60)
            health.append(time.perf_counter() - t)
            lister.join()
        results["health"] = max(health)
        log(f"{n} connectors: listing {results['listing']:.3f}s, status p50 {results['status_p50'] * 1000:.1f} ms "
            f"p99 {results['status_p99'] * 1000:.1f} ms, health during a listing {results['health']:.3f}s")

        results["max_record_kb"] = max(max_record_bytes(bootstrap, props["config.storage.topic"]),
                                       max_record_bytes(bootstrap, props["status.storage.topic"])) / 1024

        victim = workers[2]
        victim_id = f"127.0.0.1:{victim.port}"
        t = time.perf_counter()
        victim.kill()
        results["failover"] = wait_all_in_state(client, n, "RUNNING", 600, victim_id) - t
        log(f"{n} connectors: largest record {results['max_record_kb']:.1f} KB; after kill -9 of one worker every "
            f"task RUNNING elsewhere in {results['failover']:.1f}s")
        client.close()
    finally:
        for worker in workers:
            if worker.process is not None:
                worker.stop(60)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connectors", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "distributed_scale.json")
    args = parser.parse_args(argv)
    load_before = s.load_average()
    workdir = Path(tempfile.mkdtemp(prefix="connect-scale-"))
    broker = EmbeddedBroker().start()
    runs: dict[int, dict[str, float]] = {}
    try:
        for n in args.connectors:
            runs[n] = run_size(n, workdir / str(n), broker.bootstrap_servers)
    finally:
        broker.stop()
    base = runs[args.connectors[0]]
    keys = ["create", "listing", "status_p50", "status_p99", "health", "idle_cores", "idle_paused_cores", "rss_mb", "max_record_kb",
            "failover"]
    header = f"{'measure':16}" + "".join(f"{str(n) + ' conn.':>14}" for n in runs) + f"{'ratio':>8}{'target':>10}"
    print(header)
    print("-" * len(header))
    for key in keys:
        values = [runs[n].get(key) for n in runs]
        last = values[-1]
        ratio = f"{last / base[key]:.2f}" if last is not None and base.get(key) else "-"
        op, limit = TARGETS.get(key, ("", None))
        flag = "" if limit is None or last is None or last <= limit else " ABOVE"
        print(f"{key:16}" + "".join(f"{v:>14.3f}" if v is not None else f"{'-':>14}" for v in values)
              + f"{ratio:>8}{(op + str(limit)) if limit is not None else '':>10}{flag}")
    print(f"load average {load_before:.1f} before, {s.load_average():.1f} after, on {os.cpu_count()} CPUs; "
          f"ratio = last size / first size")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"runs": runs, "load_average": [load_before, s.load_average()],
                                    "time": time.strftime("%Y-%m-%dT%H:%M:%S%z")}, indent=2) + "\n")
    shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
