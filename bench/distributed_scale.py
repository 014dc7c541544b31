"""Distributed mode at scale (issue 10): three workers, N connectors of 5 idle tasks each, on one broker.

    .venv/bin/python bench/distributed_scale.py --connectors 100 1000
    .venv/bin/python bench/distributed_scale.py --connectors 100 --oracle        # and ours vs the reference

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

With --oracle, the same steps (all but `paused`) on three of our workers and then on three reference
Kafka Connect 3.9 workers (the oracle; same broker, a group and internal topics of their own, the same
group settings), with a connector both runtimes ship: --oracle-connectors (100) FileStreamSource
connectors, tasks.max=1, each tailing an empty file of its own (the reference's idle task reads its file
again each second; ours waits until one thread of the worker sees the file grow; the reference has no
SequenceSource). Idle is the last of four 10 s windows. A second table gives ours, the oracle's and ours /
oracle; lower is better on every row. The reference's creates are slow: each new connector (and then its
task configs) makes the group rebalance, and a POST waits for the rebalance in progress (one answered 409
is retried). Either side failing leaves the other's figures in the output. `--sides ours` runs our side
alone, for sizes the reference cannot create here (its creates rebalance the group each time).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402
import psutil  # noqa: E402
from confluent_kafka import Consumer, TopicPartition  # noqa: E402

from bench import _support as s  # noqa: E402
from runtime.embedded_broker import EmbeddedBroker  # noqa: E402
from tests.support.cluster import group_topics  # noqa: E402
from tests.support.oracle import OracleProcess, oracle_tool  # noqa: E402
from tests.support.worker import WorkerProcess  # noqa: E402

TASKS = 5
IDLE_WINDOWS = 6
LIKE_IDLE_WINDOWS = 4
CLIENT_THREADS = 4
SESSION_TIMEOUT_MS = 10000
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"
TARGETS = {
    "create": ("<=", 120.0),
    "listing": ("<=", 1.0),
    "status_p99": ("<=", 0.05),
    "health": ("<=", 1.0),
    "idle_cores": ("<=", 0.1),
    "idle_paused_cores": ("<=", 0.1),
    "max_record_kb": ("<=", 100.0),
    "failover": ("<=", SESSION_TIMEOUT_MS / 1000 + 30),
}


class Member(Protocol):
    """A worker process of either runtime (WorkerProcess or OracleProcess)."""

    port: int
    process: Any

    @property
    def url(self) -> str: ...
    def start(self, timeout_s: float = ...) -> Any: ...
    def stop(self, timeout_s: float = ...) -> Any: ...
    def kill(self) -> None: ...


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def group_props(bootstrap: str) -> dict[str, Any]:
    group = s.unique("scale")
    return {
        "bootstrap.servers": bootstrap,
        **group_topics(group),
        "offset.storage.partitions": 5,
        "status.storage.partitions": 5,
        "session.timeout.ms": SESSION_TIMEOUT_MS,
        "heartbeat.interval.ms": 3000,
        "scheduled.rebalance.max.delay.ms": 0,
        "offset.flush.interval.ms": 10000,
        "rest.request.timeout.ms": 120000,
        "log.level": "WARN",
    }


# ---- measures shared by both runs ----------------------------------------------------------------


def listing(client: httpx.Client) -> dict[str, Any]:
    return client.get("/connectors?expand=status&expand=info", timeout=300).json()


def settled(entry: dict[str, Any], state: str, tasks: int, exclude_worker: str | None = None) -> tuple[bool, int]:
    """(whether a listing entry's connector and all its `tasks` tasks are in `state`, how many of its tasks
    are), not counting tasks on `exclude_worker`."""
    status = entry.get("status") or {}
    in_state = sum(1 for t in status.get("tasks", []) if t["state"] == state and t["worker_id"] != exclude_worker)
    return status.get("connector", {}).get("state") == state and in_state == tasks, in_state


# Tansu workaround: a consumer tailing a partition that several producers write can miss records on Tansu
# (not on Apache Kafka), so the worker asked may keep showing a status its owner has since replaced. After
# this long, an entry the listing still shows unsettled is checked with the workers that own its parts.
OWNER_CHECK_AFTER_S = 30.0


def settled_by_owners(name: str, entry: dict[str, Any], state: str) -> bool:
    """Whether the workers that own `name`'s connector and tasks each report it in `state` (their own view:
    they wrote it), logging the lagging view it corrects."""
    status = entry.get("status") or {}
    parts = [(status.get("connector", {}), f"/connectors/{name}/status", "connector")]
    parts += [(t, f"/connectors/{name}/tasks/{t['id']}/status", "state") for t in status.get("tasks", [])]
    for part, path, field in parts:
        if part.get("state") == state:
            continue
        try:
            owned = httpx.get(f"http://{part.get('worker_id')}{path}", timeout=10).json()
        except (httpx.HTTPError, ValueError):
            return False
        owned_state = owned["connector"]["state"] if field == "connector" else owned.get("state")
        if owned_state != state:
            return False
        log(
            f"{name}: the worker asked still shows {part.get('state')} for {path}, its owner "
            f"{part.get('worker_id')} shows {state} (a status record that worker's consumer missed: Tansu)"
        )
    return True


def wait_all_in_state(
    client: httpx.Client, n: int, state: str, timeout_s: float, tasks: int = TASKS, exclude_worker: str | None = None
) -> float:
    """perf_counter() once all n connectors and their tasks are in `state` (tasks on `exclude_worker` not
    counted); on time-out, logs what is not, as the worker asked sees it."""
    began = time.monotonic()
    deadline = began + timeout_s
    body: dict[str, Any] = {}
    confirmed: set[str] = set()  # unsettled in the listing, settled by their owners (OWNER_CHECK_AFTER_S)
    while time.monotonic() < deadline:
        try:
            body = listing(client)
        except (httpx.HTTPError, ValueError) as exc:  # ValueError: a non-JSON answer mid-rebalance
            log(f"listing failed: {exc}")
        unsettled = [name for name, entry in body.items() if not settled(entry, state, tasks, exclude_worker)[0]]
        if time.monotonic() - began > OWNER_CHECK_AFTER_S and exclude_worker is None and len(unsettled) <= 10:
            confirmed |= {
                name for name in unsettled if name not in confirmed and settled_by_owners(name, body[name], state)
            }
        if len(body) - len(set(unsettled) - confirmed) == n:
            return time.perf_counter()
        time.sleep(0.5)
    counts = [settled(entry, state, tasks, exclude_worker) for entry in body.values()]
    for name, entry in sorted(body.items()):
        if not settled(entry, state, tasks, exclude_worker)[0]:
            log(f"not {state}: {name} {json.dumps(entry.get('status'))}")
    raise TimeoutError(
        f"{sum(ok for ok, _ in counts)}/{n} connectors and {sum(t for _, t in counts)}/{n * tasks} "
        f"tasks {state} after {timeout_s}s"
    )


def tree_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its live descendants (a launcher's JVM, task processes)."""
    process = psutil.Process(pid)
    total = s.cpu_seconds(pid)
    for child in process.children(recursive=True):
        try:
            total += s.cpu_seconds(child.pid)
        except psutil.NoSuchProcess:
            pass
    return total


def cores_over(workers: list[Member], seconds: float) -> float:
    """Cores the workers used together over the next `seconds`."""
    before = sum(tree_cpu_seconds(w.process.pid) for w in workers)
    t0 = time.perf_counter()
    time.sleep(seconds)
    after = sum(tree_cpu_seconds(w.process.pid) for w in workers)
    return (after - before) / (time.perf_counter() - t0)


def rss_mb(workers: list[Member]) -> float:
    return sum(s.rss_mb(w.process.pid) for w in workers)


def post_connector(client: httpx.Client, name: str, config: dict[str, str], timeout_s: float = 600) -> int:
    """POST one connector until it exists; the number of retries. The reference answers 409 while the group
    rebalances (each of its creates starts one), and a retried POST may find its first attempt landed."""
    deadline = time.monotonic() + timeout_s
    retries = 0
    while True:
        try:
            response = client.post("/connectors", json={"name": name, "config": config})
            if response.status_code == 201 or (response.status_code == 409 and "already exists" in response.text):
                return retries
            why = f"{response.status_code} {response.text[:200]}"
        except httpx.HTTPError as exc:
            why = f"{type(exc).__name__}: {exc}"
        if time.monotonic() > deadline:
            raise RuntimeError(f"could not create {name}: {why}")
        retries += 1
        if retries % 20 == 1:
            log(f"create {name}: {why}; retrying")
        time.sleep(0.2)


def create_all(client: httpx.Client, configs: dict[str, dict[str, str]]) -> tuple[float, int]:
    """POST every connector from CLIENT_THREADS threads; (perf_counter of the last answer, retries)."""
    with concurrent.futures.ThreadPoolExecutor(CLIENT_THREADS) as pool:
        retries = sum(pool.map(lambda name: post_connector(client, name, configs[name]), configs))
    return time.perf_counter(), retries


def on_all(names: list[str], call: Callable[[str], Any]) -> None:
    with concurrent.futures.ThreadPoolExecutor(CLIENT_THREADS) as pool:
        list(pool.map(call, names))


def listing_median(client: httpx.Client, n: int, rounds: int = 5) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        body = listing(client)
        times.append(time.perf_counter() - t)
        assert len(body) == n, len(body)
    return statistics.median(times)


def status_percentiles(client: httpx.Client, names: list[str], requests: int = 300) -> tuple[float, float]:
    """(p50, p99) seconds of GET /connectors/{c}/status on random connectors."""
    latencies = []
    for _ in range(requests):
        name = random.choice(names)
        t = time.perf_counter()
        response = client.get(f"/connectors/{name}/status")
        latencies.append(time.perf_counter() - t)
        assert response.status_code == 200, response.text
    latencies.sort()
    return latencies[len(latencies) // 2], latencies[int(len(latencies) * 0.99) - 1]


def health_during_listing(client: httpx.Client, url: str, rounds: int = 5) -> float:
    """The worst GET /health latency, each taken 50 ms into a listing on the same worker."""
    worst = 0.0
    for _ in range(rounds):
        lister = threading.Thread(target=listing, args=(client,))
        lister.start()
        time.sleep(0.05)
        t = time.perf_counter()
        response = httpx.get(url + "/health", timeout=60)
        worst = max(worst, time.perf_counter() - t)
        assert response.status_code == 200, response.text
        lister.join()
    return worst


def max_record_bytes(bootstrap: str, topic: str) -> int:
    """The largest value in `topic`, read from the start up to the high watermarks taken first (task
    statuses and offsets may still be written, so there is no quiet end to wait for; on Tansu the high watermark is the last
    batch's base + 1, so a record of that last batch may be left out)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": s.unique("scale-reader"),
            "enable.auto.commit": "false",
            "auto.offset.reset": "earliest",
        }
    )
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


def max_record_kb(bootstrap: str, props: dict[str, Any]) -> float:
    return (
        max(
            max_record_bytes(bootstrap, props["config.storage.topic"]),
            max_record_bytes(bootstrap, props["status.storage.topic"]),
        )
        / 1024
    )


def failover(client: httpx.Client, victim: Member, n: int, tasks: int) -> float:
    """Seconds from kill -9 of `victim` to every task RUNNING on another worker (`client` not on the victim)."""
    victim_id = f"127.0.0.1:{victim.port}"
    t = time.perf_counter()
    victim.kill()
    return wait_all_in_state(client, n, "RUNNING", 600, tasks, victim_id) - t


def start_group(new_member: Callable[[Path], Member], workdir: Path) -> list[Member]:
    """Three workers, started one after another (the first creates the internal topics)."""
    workers = [new_member(workdir / f"w{i}") for i in range(3)]
    try:
        for worker in workers:
            worker.start(timeout_s=180)
    except BaseException:
        stop_group(workers)
        raise
    return workers


def stop_group(workers: list[Member]) -> None:
    for worker in workers:
        if worker.process is not None:
            worker.stop(60)


# ---- the sizes run: N SequenceSource connectors of 5 idle tasks, ours only --------------------------


def run_size(n: int, workdir: Path, bootstrap: str) -> dict[str, float]:
    props = group_props(bootstrap)
    workers = start_group(lambda d: WorkerProcess(d, bootstrap, props=props, mode="distributed"), workdir)
    results: dict[str, float] = {}
    try:
        client = httpx.Client(base_url=workers[0].url, timeout=300)
        names = [f"seq-{i:05d}" for i in range(n)]
        configs = {
            name: {
                "connector.class": "SequenceSource",
                "tasks.max": str(TASKS),
                "topic": f"{name}-out",
                "messages.per.task": "0",
            }
            for name in names
        }
        log(f"{n} connectors: creating")
        started = time.perf_counter()
        last_create, _ = create_all(client, configs)
        results["create_all_s"] = last_create - started
        results["create"] = wait_all_in_state(client, n, "RUNNING", 900) - last_create
        log(
            f"{n} connectors: all RUNNING {results['create']:.1f}s after the last create "
            f"(creates took {results['create_all_s']:.1f}s)"
        )
        # idle: CPU of the three workers in consecutive 10 s windows after the last task started; start-up
        # work (first offset flushes, the statuses of 5,000 tasks read by every worker) fades within them
        windows = [cores_over(workers, 10) for _ in range(IDLE_WINDOWS)]
        results["idle_cores"] = windows[-1]
        results["rss_mb"] = rss_mb(workers)
        log(
            f"{n} connectors: cores used in 10 s windows after the last start "
            f"{' '.join(f'{c:.3f}' for c in windows)}; idle = the last; rss {results['rss_mb']:.0f} MiB"
        )

        # the same cluster with every connector PAUSED: no task polls, so what is left is the runtime's own
        # idle cost (a finished SequenceSource task waits until the runtime wakes it, so the two should be
        # close; a connector whose idle poll returns every second costs a thread wake-up per task-second)
        def pause(name: str) -> None:
            response = client.put(f"/connectors/{name}/pause")
            assert response.status_code == 202, response.text

        on_all(names, pause)
        wait_all_in_state(client, n, "PAUSED", 600)
        results["idle_paused_cores"] = cores_over(workers, 10)
        on_all(names, lambda name: client.put(f"/connectors/{name}/resume"))
        wait_all_in_state(client, n, "RUNNING", 600)
        log(f"{n} connectors: all PAUSED, {results['idle_paused_cores']:.3f} cores; resumed")

        results["listing"] = listing_median(client, n)
        results["status_p50"], results["status_p99"] = status_percentiles(client, names)
        results["health"] = health_during_listing(client, workers[0].url)
        log(
            f"{n} connectors: listing {results['listing']:.3f}s, status p50 {results['status_p50'] * 1000:.1f} ms "
            f"p99 {results['status_p99'] * 1000:.1f} ms, health during a listing {results['health']:.3f}s"
        )

        results["max_record_kb"] = max_record_kb(bootstrap, props)
        results["failover"] = failover(client, workers[2], n, TASKS)
        log(
            f"{n} connectors: largest record {results['max_record_kb']:.1f} KB; after kill -9 of one worker every "
            f"task RUNNING elsewhere in {results['failover']:.1f}s"
        )
        client.close()
    finally:
        stop_group(workers)
    return results


# ---- like with like: N FileStreamSource connectors (1 task) on ours and on the reference ----------------


def like_props(bootstrap: str) -> dict[str, Any]:
    """The sizes run's group settings, plus String converters (one name both runtimes resolve)."""
    return {**group_props(bootstrap), "key.converter": STRING_CONVERTER, "value.converter": STRING_CONVERTER}


def file_source_configs(n: int, inputs: Path) -> dict[str, dict[str, str]]:
    """N FileStreamSource configs, each tailing an empty file of its own (an idle task)."""
    inputs.mkdir(parents=True, exist_ok=True)
    configs = {}
    for i in range(n):
        name = f"file-{i:05d}"
        (inputs / f"{name}.txt").touch()
        configs[name] = {
            "connector.class": FILE_SOURCE,
            "tasks.max": "1",
            "file": str(inputs / f"{name}.txt"),
            "topic": f"{name}-out",
        }
    return configs


GENERATION = re.compile(r"Joined group at generation (\d+)")


def oracle_generation(worker: Member) -> int | None:
    """The reference worker's latest group generation, from its log (how many rebalances it has been through)."""
    path = getattr(worker, "log_path", None)
    found = GENERATION.findall(path.read_text(errors="replace")) if path is not None else []
    return int(found[-1]) if found else None


def run_like(side: str, n: int, workdir: Path, bootstrap: str) -> dict[str, float]:
    """The sizes run's steps but `paused`, on three workers of `side` ("ours" or "oracle")."""
    props = like_props(bootstrap)
    new_member: Callable[[Path], Member] = (
        (lambda d: WorkerProcess(d, bootstrap, props=props, mode="distributed"))
        if side == "ours"
        else (lambda d: OracleProcess(d, bootstrap, props=props, mode="distributed"))
    )
    log(f"{side}: starting three workers")
    workers = start_group(new_member, workdir)
    results: dict[str, float] = {}
    try:
        client = httpx.Client(base_url=workers[0].url, timeout=300)
        configs = file_source_configs(n, workdir / "inputs")
        names = list(configs)
        log(f"{side}: creating {n} FileStreamSource connectors")
        started = time.perf_counter()
        last_create, retries = create_all(client, configs)
        results["create_all_s"] = last_create - started
        results["create_retries"] = retries
        results["create"] = wait_all_in_state(client, n, "RUNNING", 900, tasks=1) - last_create
        log(
            f"{side}: creates took {results['create_all_s']:.1f}s ({retries} retried POSTs); all RUNNING "
            f"{results['create']:.1f}s after the last"
        )
        if side == "oracle":  # each of its creates rebalances the group (ours places connectors without one)
            generation = oracle_generation(workers[0])
            if generation is not None:
                results["group_generation"] = generation
                log(f"oracle: group generation {generation} once every task is RUNNING")
        windows = [cores_over(workers, 10) for _ in range(LIKE_IDLE_WINDOWS)]
        results["idle_cores"] = windows[-1]
        results["rss_mb"] = rss_mb(workers)
        log(f"{side}: cores in 10 s windows {' '.join(f'{c:.3f}' for c in windows)}; rss {results['rss_mb']:.0f} MiB")
        results["listing"] = listing_median(client, n)
        results["status_p50"], results["status_p99"] = status_percentiles(client, names)
        results["health"] = health_during_listing(client, workers[0].url)
        results["max_record_kb"] = max_record_kb(bootstrap, props)
        log(
            f"{side}: listing {results['listing']:.3f}s, status p50 {results['status_p50'] * 1000:.1f} ms p99 "
            f"{results['status_p99'] * 1000:.1f} ms, health {results['health']:.3f}s, "
            f"record {results['max_record_kb']:.1f} KB"
        )
        results["failover"] = failover(client, workers[2], n, 1)
        log(f"{side}: kill -9 of one worker -> every task RUNNING elsewhere in {results['failover']:.1f}s")
        client.close()
    finally:
        stop_group(workers)
    return results


# ---- output --------------------------------------------------------------------------------------

SIZE_KEYS = [
    "create",
    "listing",
    "status_p50",
    "status_p99",
    "health",
    "idle_cores",
    "idle_paused_cores",
    "rss_mb",
    "max_record_kb",
    "failover",
]

# (key, label, unit, factor from the stored value)
LIKE_ROWS = [
    ("create_all_s", "the N creates (POSTs, 4 threads)", "s", 1),
    ("create", "last create -> every task RUNNING", "s", 1),
    ("listing", "listing ?expand=status&info, median of 5", "s", 1),
    ("status_p50", "GET .../status p50 (300 requests)", "ms", 1000),
    ("status_p99", "GET .../status p99", "ms", 1000),
    ("health", "GET /health during a listing, worst of 5", "ms", 1000),
    ("idle_cores", "idle cores, 3 workers (last 10 s window)", "cores", 1),
    ("rss_mb", "RSS, 3 workers", "MiB", 1),
    ("max_record_kb", "largest config/status record", "KB", 1),
    ("failover", "kill -9 one worker -> tasks RUNNING", "s", 1),
]


def print_sizes(runs: dict[int, dict[str, float]]) -> None:
    base = next(iter(runs.values()))
    header = f"{'measure':16}" + "".join(f"{str(n) + ' conn.':>14}" for n in runs) + f"{'ratio':>8}{'target':>10}"
    print(header)
    print("-" * len(header))
    for key in SIZE_KEYS:
        values = [runs[n].get(key) for n in runs]
        last = values[-1]
        ratio = f"{last / base[key]:.2f}" if last is not None and base.get(key) else "-"
        op, limit = TARGETS.get(key, ("", None))
        flag = "" if limit is None or last is None or last <= limit else " ABOVE"
        print(
            f"{key:16}"
            + "".join(f"{v:>14.3f}" if v is not None else f"{'-':>14}" for v in values)
            + f"{ratio:>8}{(op + str(limit)) if limit is not None else '':>10}{flag}"
        )


def like_rows(like: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    rows = []
    for key, label, unit, factor in LIKE_ROWS:
        ours, oracle = like.get("ours", {}).get(key), like.get("oracle", {}).get(key)
        rows.append(
            {
                "measure": key,
                "label": label,
                "unit": unit,
                "ours": None if ours is None else ours * factor,
                "oracle": None if oracle is None else oracle * factor,
                "ratio": ours / oracle if ours is not None and oracle else None,
            }
        )
    return rows


def print_like(rows: list[dict[str, Any]], n: int) -> None:
    print(
        f"\nlike with like: {n} FileStreamSource connectors x 1 task, 3 workers each side "
        f"(ratio = ours / oracle; lower is better on every row)"
    )
    header = f"{'measure':44}{'unit':>6}{'ours':>11}{'oracle':>11}{'ratio':>8}"
    print(header)
    print("-" * len(header))
    for row in rows:
        cells = [f"{row[k]:>11.3f}" if row[k] is not None else f"{'-':>11}" for k in ("ours", "oracle")]
        ratio = f"{row['ratio']:.3f}" if row["ratio"] is not None else "-"
        print(f"{row['label']:44}{row['unit']:>6}{''.join(cells)}{ratio:>8}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--connectors", type=int, nargs="*", default=[100, 1000], help="sizes of the SequenceSource run (none: skip it)"
    )
    parser.add_argument(
        "--oracle",
        action="store_true",
        help="also run FileStreamSource connectors on ours and on the reference, side by side",
    )
    parser.add_argument("--oracle-connectors", type=int, default=100, help="connectors of the --oracle run")
    parser.add_argument(
        "--sides",
        nargs="+",
        choices=["ours", "oracle"],
        default=["ours", "oracle"],
        help="the sides of the --oracle run (ours alone: sizes the reference cannot create here)",
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "distributed_scale.json")
    args = parser.parse_args(argv)
    if args.oracle and "oracle" in args.sides and (oracle_tool() is None or shutil.which("java") is None):
        parser.error("--oracle needs java and the kafka-connect-oracle launcher")
    load_before = s.load_average()
    workdir = Path(tempfile.mkdtemp(prefix="connect-scale-"))
    broker = EmbeddedBroker().start()
    runs: dict[int, dict[str, float]] = {}
    like: dict[str, dict[str, float]] = {}
    errors: dict[str, str] = {}
    try:
        for n in args.connectors:
            runs[n] = run_size(n, workdir / str(n), broker.bootstrap_servers)
        if args.oracle:
            for side in ("ours", "oracle"):  # one after the other: neither shares the 2 cores with the other
                if side not in args.sides:
                    continue
                try:
                    like[side] = run_like(side, args.oracle_connectors, workdir / side, broker.bootstrap_servers)
                except Exception as exc:  # noqa: BLE001 - one side failing must not cost the other's figures
                    errors[side] = f"{type(exc).__name__}: {exc}"
                    log(f"{side} failed: {errors[side]}")
    finally:
        broker.stop()
    if runs:
        print_sizes(runs)
    rows = like_rows(like) if like else []
    if errors:
        log(f"workdir with the workers' logs: {workdir}")
    if rows:
        print_like(rows, args.oracle_connectors)
    load_after = s.load_average()
    print(
        f"load average {load_before:.1f} before, {load_after:.1f} after, on {os.cpu_count()} CPUs; "
        f"sizes: ratio = last size / first size"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "runs": runs,
                "load_average": [load_before, load_after],
                "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "like_with_like": {
                    "connectors": args.oracle_connectors,
                    "connector.class": FILE_SOURCE,
                    "tasks.max": 1,
                    "sides": like,
                    "rows": rows,
                    "ratio": "ours / oracle, lower is better",
                    "errors": errors,
                }
                if args.oracle
                else None,
            },
            indent=2,
        )
        + "\n"
    )
    for side, message in errors.items():
        print(f"({side}) FAILED: {message}")
    if not errors:  # kept for the logs otherwise
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
