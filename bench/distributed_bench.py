"""Distributed mode, side by side with the reference Kafka Connect 3.9 (the oracle), in one run on one broker.

    .venv/bin/python bench/distributed_bench.py                 # 5 rounds of the REST measures, 3 joins
    .venv/bin/python bench/distributed_bench.py --repeat 3 --joins 2 --no-oracle

For each side, a group of workers on the same embedded Tansu broker, then (medians of the rounds):
  1. POST /connectors (FileStreamSource, tasks.max=1)  -> connector and its task RUNNING in GET .../status
  2. PUT /connectors/{name}/stop                       -> connector STOPPED with zero tasks
  3. PATCH /connectors/{name}/offsets (while stopped)  -> the 200 answer
  4. a worker joining a group of N-1 running 4 FileStreamSink connectors x 2 tasks -> GET /connectors?expand=status
     shows N workers, each owning its share (connectors and tasks each spread within one of even), all RUNNING.
     Timed from spawning the process (a cold start: JVM or interpreter, then the group join and rebalance).
     Between rounds the joined worker is stopped and the group rebalanced back to N-1. Before each spawn and
     before each stop the bench waits consumer.session.timeout.ms, so that the sink consumers have joined
     their groups (see settle()).
Goal (issue 5): ours / oracle <= 0.2 for each. Prints a table; writes JSON to bench/results/distributed.json.
Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from bench import _support as s  # noqa: E402
from runtime.embedded_broker import EmbeddedBroker, free_port  # noqa: E402
from tests.support.cluster import group_topics  # noqa: E402
from tests.support.oracle import oracle_tool  # noqa: E402
from tests.support.process import ServiceProcess  # noqa: E402
from tests.support.worker import WorkerProcess, write_properties  # noqa: E402

TARGET = 0.2  # ours / oracle, at most
POLL_S = 0.02
SOURCE_CLASS = "org.apache.kafka.connect.file.FileStreamSourceConnector"
SINK_CLASS = "org.apache.kafka.connect.file.FileStreamSinkConnector"
STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"
JOIN_CONNECTORS, JOIN_TASKS = 4, 2


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def group_props(bootstrap: str) -> dict[str, Any]:
    """The same distributed settings for both sides: one group, its own internal topics."""
    group = s.unique("bench-dist")
    return {
        "bootstrap.servers": bootstrap,
        **group_topics(group),
        "offset.storage.partitions": 3,
        "status.storage.partitions": 3,
        "session.timeout.ms": 6000,  # Tansu: a first join takes about half of this
        "heartbeat.interval.ms": 1000,
        "scheduled.rebalance.max.delay.ms": 0,  # a worker leaving between join rounds is rebalanced at once
        "offset.flush.interval.ms": 1000,
        "key.converter": STRING_CONVERTER,
        "value.converter": STRING_CONVERTER,
        "consumer.session.timeout.ms": 6000,
    }


# ---- workers of either side ----------------------------------------------------------------------


class Member(Protocol):
    port: int

    @property
    def url(self) -> str: ...
    def start(self) -> Any: ...
    def stop(self) -> Any: ...


class OracleMember(ServiceProcess):
    """`kafka-connect-oracle distributed worker.properties` as a process of its own (process group, for the JVM)."""

    process_group = True

    def __init__(self, tool: Path, workdir: Path, props: dict[str, Any]) -> None:
        self.port = free_port()
        self.tool, self.workdir = tool, workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        super().__init__(workdir / f"oracle-{self.port}.log")
        # the vendored reflections library is too old for the default plugin scan
        self.props = {**props, "listeners": f"http://127.0.0.1:{self.port}", "plugin.discovery": "service_load"}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 180.0) -> OracleMember:
        props_file = write_properties(self.workdir / f"worker-{self.port}.properties", self.props)
        self.launch([str(self.tool), "distributed", str(props_file)], self.url + "/health", timeout_s, what="oracle")
        return self

    def stop(self, timeout_s: float = 60.0) -> int | None:
        return super().stop(timeout_s)


@dataclass
class Side:
    name: str  # "ours" | "oracle"
    workdir: Path
    props: dict[str, Any]
    new_member: Callable[[Path, dict[str, Any]], Member]
    members: list[Member] = field(default_factory=list)

    def spawn(self) -> Member:
        return self.new_member(self.workdir / f"w{len(self.members)}-{free_port()}", self.props)

    def add(self) -> Member:
        member = self.spawn()
        member.start()
        self.members.append(member)
        return member

    @property
    def url(self) -> str:
        return self.members[0].url

    def worker_ids(self) -> set[str]:
        return {f"127.0.0.1:{m.port}" for m in self.members}

    def stop(self) -> None:
        for member in reversed(self.members):
            member.stop()
        self.members.clear()


def make_side(name: str, workdir: Path, bootstrap: str, tool: Path | None) -> Side:
    props = group_props(bootstrap)
    if name == "ours":
        return Side(
            name,
            workdir,
            {**props, "log.level": "WARN"},
            lambda d, p: WorkerProcess(d, bootstrap, props=p, mode="distributed"),
        )
    assert tool is not None
    return Side(name, workdir, props, lambda d, p: OracleMember(tool, d, p))


# ---- the measures --------------------------------------------------------------------------------


def wait(predicate: Callable[[], Any], timeout_s: float, what: str) -> float:
    """Poll until true; the perf_counter of the first true answer."""
    s.wait_until(predicate, timeout_s, interval_s=POLL_S, what=what)
    return time.perf_counter()


def status(client: httpx.Client, name: str) -> dict[str, Any] | None:
    response = client.get(f"/connectors/{name}/status")
    return response.json() if response.status_code == 200 else None


def all_running(body: dict[str, Any] | None, tasks: int) -> bool:
    return (
        body is not None
        and body["connector"]["state"] == "RUNNING"
        and len(body["tasks"]) == tasks
        and all(t["state"] == "RUNNING" for t in body["tasks"])
    )


def stopped(body: dict[str, Any] | None) -> bool:
    return body is not None and body["connector"]["state"] == "STOPPED" and body["tasks"] == []


SETTLE_BEFORE_SECOND_PATCH_S = 2.0


def rest_round(side: Side, client: httpx.Client, bootstrap: str, source_file: Path) -> dict[str, float]:
    """One connector through create -> RUNNING, stop -> STOPPED, alter offsets; seconds for each."""
    name = s.unique(f"src-{side.name}")
    config = {"connector.class": SOURCE_CLASS, "tasks.max": "1", "file": str(source_file), "topic": f"{name}-out"}
    t0 = time.perf_counter()
    response = client.post("/connectors", json={"name": name, "config": config})
    if response.status_code != 201:
        raise RuntimeError(f"create {name}: {response.status_code} {response.text}")
    running = wait(lambda: all_running(status(client, name), 1), 120, f"{name} RUNNING")

    t1 = time.perf_counter()
    response = client.put(f"/connectors/{name}/stop")
    if response.status_code not in (202, 204):
        raise RuntimeError(f"stop {name}: {response.status_code} {response.text}")
    done = wait(lambda: stopped(status(client, name)), 120, f"{name} STOPPED")

    body = {"offsets": [{"partition": {"filename": str(source_file)}, "offset": {"position": 0}}]}
    t2 = time.perf_counter()
    response = client.patch(f"/connectors/{name}/offsets", json=body)
    t3 = time.perf_counter()
    if response.status_code != 200:
        raise RuntimeError(f"alter offsets of {name}: {response.status_code} {response.text}")
    # the same request on a group that has had time to settle: the first PATCH right after the stop also
    # waits for the rebalance the stop caused (ours ~0.1 s after the stop began; the reference's is long over)
    time.sleep(SETTLE_BEFORE_SECOND_PATCH_S)
    t4 = time.perf_counter()
    response = client.patch(f"/connectors/{name}/offsets", json=body)
    t5 = time.perf_counter()
    if response.status_code != 200:
        raise RuntimeError(f"alter offsets of {name} again: {response.status_code} {response.text}")
    client.delete(f"/connectors/{name}")
    return {
        "create": running - t0,
        "stop": done - t1,
        "offsets": t3 - t2,
        "offsets_settled": t5 - t4,
        "stop_then_offsets": t3 - t1,
    }


def owners(client: httpx.Client, names: list[str]) -> tuple[dict[str, int], dict[str, int]] | None:
    """Per worker id, the connectors and the tasks it runs; None while any is not RUNNING."""
    body = client.get("/connectors?expand=status").json()
    connectors: dict[str, int] = {}
    tasks: dict[str, int] = {}
    for name in names:
        st = body.get(name, {}).get("status")
        if not all_running(st, JOIN_TASKS):
            return None
        connectors[st["connector"]["worker_id"]] = connectors.get(st["connector"]["worker_id"], 0) + 1
        for task in st["tasks"]:
            tasks[task["worker_id"]] = tasks.get(task["worker_id"], 0) + 1
    return connectors, tasks


def balanced(client: httpx.Client, names: list[str], ids: set[str]) -> bool:
    """Every worker of `ids` (and no other) owns its share of connectors and of tasks, all RUNNING."""
    seen = owners(client, names)
    if seen is None:
        return False
    for counts in seen:
        if set(counts) - ids:
            return False
        total = sum(counts.values())
        low, high = total // len(ids), -(-total // len(ids))
        if any(not low <= counts.get(i, 0) <= high for i in ids):
            return False
    return True


def settle(side: Side) -> None:
    """Give the sink tasks' consumers time to finish joining their groups. RUNNING statuses come before
    that, and a first join takes about half of session.timeout.ms on Tansu: a worker joining right away
    would time how long the revoked tasks' consumers take to leave groups they are still joining, and a
    group that a member joins and leaves within a moment can wedge on Tansu. (Tansu groups that lost
    members can stay in rebalance longer: a revoked sink task's consumer.close() then waits for its
    pending JoinGroup, 1-3 s, which makes some join rounds slower than others; hence medians.)"""
    time.sleep(int(side.props["consumer.session.timeout.ms"]) / 1000)


def join_rounds(
    side: Side, client: httpx.Client, bootstrap: str, size: int, rounds: int
) -> tuple[list[float], list[float]]:
    """Seconds from spawning worker number `size` to a balanced assignment, and to its /health answering
    (the process start-up part, for reading the first), `rounds` times."""
    topic = s.unique(f"join-{side.name}")
    s.create_topic(bootstrap, topic, partitions=JOIN_TASKS)
    names = [f"{topic}-c{i}" for i in range(JOIN_CONNECTORS)]
    for name in names:
        config = {
            "connector.class": SINK_CLASS,
            "tasks.max": str(JOIN_TASKS),
            "topics": topic,
            "file": str(side.workdir / f"{name}.txt"),
        }
        response = client.post("/connectors", json={"name": name, "config": config})
        if response.status_code != 201:
            raise RuntimeError(f"create {name}: {response.status_code} {response.text}")
    wait(lambda: balanced(client, names, side.worker_ids()), 180, f"{side.name}: {len(names)} sinks balanced")
    times: list[float] = []
    startups: list[float] = []
    for i in range(rounds):
        settle(side)
        member = side.spawn()
        errors: list[BaseException] = []
        healthy: list[float] = []

        def start(m: Member = member) -> None:
            try:
                m.start()
                healthy.append(time.perf_counter())
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        # started in a thread: the assignment may settle before the newcomer's /health answers
        t0 = time.perf_counter()
        starter = threading.Thread(target=start)
        starter.start()
        ids = side.worker_ids() | {f"127.0.0.1:{member.port}"}
        try:
            done = wait(lambda: errors or balanced(client, names, ids), 240, f"{side.name}: balanced on {size} workers")
            starter.join()
            if errors:
                raise errors[0]
        except BaseException:
            starter.join()
            member.stop()
            raise
        times.append(done - t0)
        startups.append(healthy[0] - t0)
        log(
            f"{side.name}: worker {size} joined, balanced after {done - t0:.2f}s, /health after "
            f"{healthy[0] - t0:.2f}s (round {i + 1})"
        )
        settle(side)  # the newcomer's sink consumers join their groups before it leaves
        member.stop()  # leaves the group; its share goes back to the others
        wait(lambda: balanced(client, names, side.worker_ids()), 240, f"{side.name}: balanced back on {size - 1}")
    return times, startups


def run_side(side: Side, bootstrap: str, size: int, repeat: int, joins: int) -> dict[str, list[float]]:
    log(f"{side.name}: starting {size - 1} workers")
    source_file = side.workdir / "input.txt"
    side.workdir.mkdir(parents=True, exist_ok=True)
    source_file.write_text("one\ntwo\nthree\n")
    results: dict[str, list[float]] = {
        "create": [],
        "stop": [],
        "offsets": [],
        "offsets_settled": [],
        "stop_then_offsets": [],
        "join": [],
        "startup": [],
    }
    try:
        side.add()  # the first creates the internal topics; the others then join it
        for _ in range(size - 2):
            side.add()
        with httpx.Client(base_url=side.url, timeout=120) as client:
            for i in range(repeat):
                for key, value in rest_round(side, client, bootstrap, source_file).items():
                    results[key].append(value)
                log(
                    f"{side.name}: REST round {i + 1}: "
                    + ", ".join(f"{k} {v[-1]:.3f}s" for k, v in results.items() if v)
                )
            if joins:
                results["join"], results["startup"] = join_rounds(side, client, bootstrap, size, joins)
    finally:
        side.stop()
    return results


# ---- driver --------------------------------------------------------------------------------------

MEASURES = [
    ("create", "POST /connectors -> connector + task RUNNING"),
    ("stop", "PUT /stop -> STOPPED with zero tasks"),
    ("offsets", "PATCH /offsets (stopped) -> 200"),
    ("offsets_settled", "  (the same PATCH again, 2 s later)"),
    ("stop_then_offsets", "  (PUT /stop -> STOPPED, then PATCH -> 200)"),
    ("join", "worker {n} joins -> balanced assignment"),
    ("startup", "  (worker {n}: spawn -> its /health 200)"),
]


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def print_table(results: dict[str, dict[str, list[float]]], size: int) -> list[dict[str, Any]]:
    def fmt(v: float | None) -> str:
        return "-" if v is None else f"{v * 1000:,.0f}"

    header = (
        f"{'measure (median of rounds)':50} {'rounds':>6} {'ours ms':>10} {'oracle ms':>10} {'ratio':>6} {'target':>7}"
    )
    print(header)
    print("-" * len(header))
    rows = []
    for key, label in MEASURES:
        ours = results.get("ours", {}).get(key, [])
        oracle = results.get("oracle", {}).get(key, [])
        o, b = median(ours), median(oracle)
        ratio = o / b if o is not None and b else None
        flag = "" if ratio is None or ratio <= TARGET else " ABOVE"
        print(
            f"{label.format(n=size):50} {max(len(ours), len(oracle)):>6} {fmt(o):>10} {fmt(b):>10} "
            f"{'-' if ratio is None else f'{ratio:.2f}':>6} {f'<={TARGET}':>7}{flag}"
        )
        rows.append(
            {
                "measure": key,
                "label": label.format(n=size),
                "ours_s": ours,
                "oracle_s": oracle,
                "ours_median_s": o,
                "oracle_median_s": b,
                "ratio": ratio,
                "target_max": TARGET,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="rounds of create/stop/alter offsets per side")
    parser.add_argument("--joins", type=int, default=3, help="rounds of the worker-join measure per side (0: skip)")
    parser.add_argument("--workers", type=int, default=3, help="group size once the last worker has joined")
    parser.add_argument("--only", choices=["ours", "oracle"], help="one side only")
    parser.add_argument("--no-oracle", action="store_true", help="skip the Java reference")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "distributed.json")
    args = parser.parse_args(argv)
    if args.workers < 2:
        parser.error("--workers must be at least 2")
    tool = oracle_tool()
    use_oracle = not args.no_oracle and args.only != "ours" and tool is not None and shutil.which("java") is not None
    if not use_oracle and args.only != "ours":
        log("oracle not available (or --no-oracle): ours only")
    sides = [n for n in ("ours", "oracle") if (n == "ours" and args.only != "oracle") or (n == "oracle" and use_oracle)]

    load_before = s.load_average()
    workdir = Path(tempfile.mkdtemp(prefix="connect-dist-bench-"))
    broker = EmbeddedBroker().start()
    bootstrap = broker.bootstrap_servers
    log(f"broker {bootstrap}, workdir {workdir}")
    results: dict[str, dict[str, list[float]]] = {}
    errors: dict[str, str] = {}
    try:
        for name in sides:
            side = make_side(name, workdir / name, bootstrap, tool)
            try:
                results[name] = run_side(side, bootstrap, args.workers, args.repeat, args.joins)
            except Exception as exc:  # noqa: BLE001 - one side failing must not cost the other's numbers
                errors[name] = f"{type(exc).__name__}: {exc}"
                log(f"{name} failed: {errors[name]}")
    finally:
        broker.stop()

    rows = print_table(results, args.workers)
    load_after = s.load_average()
    print(
        f"load average {load_before:.1f} before, {load_after:.1f} after, on {os.cpu_count()} CPUs; "
        f"{args.repeat} REST rounds, {args.joins} joins ({args.workers - 1} -> {args.workers} workers) per side"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "workers": args.workers,
                "repeat": args.repeat,
                "joins": args.joins,
                "python": platform.python_version(),
                "cpus": os.cpu_count(),
                "load_average": [load_before, load_after],
                "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "rows": rows,
                "errors": errors,
            },
            indent=2,
        )
        + "\n"
    )
    log(f"wrote {args.out}")
    for name, message in errors.items():
        print(f"({name}) FAILED: {message}")
    if not errors:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
