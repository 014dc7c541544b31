"""Soak test of a standalone worker: a bounded loop of create, stop, alter, resume, restart and delete over
many connectors while data flows, then checks that nothing was lost or leaked.

    .venv/bin/python bench/soak.py                      # 200 operations over 10 source/sink pairs
    .venv/bin/python bench/soak.py --iterations 50 --pairs 4 --bootstrap-servers host:9092

Each pair is a SequenceSource writing its own topic and a RecordingSink reading it into a file. Random
operations hit random connectors of the pairs. At the end every connector is resumed, the sources are
stopped (which flushes their offsets: a committed offset N means seqnos 0..N-1 were acknowledged), the
sinks drain, and every acknowledged seqno of every source task must be in its sink's file (duplicates are
allowed: delivery is at-least-once). Thread and file descriptor counts of the worker process are taken
idle before and after (all connectors deleted), and with the pairs running before and after the loop; RSS
is sampled during the loop. Exit code 0 when no record is lost, nothing leaked and RSS stayed flat.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from runtime.embedded_broker import EmbeddedBroker
from tests.support.worker import WorkerProcess

SOURCE = "runtime.connectors.testing.SequenceSourceConnector"
SINK = "runtime.connectors.testing.RecordingSinkConnector"
THREAD_SLACK = 4  # the REST thread pool and librdkafka may keep a few idle threads around
FD_SLACK = 8
RSS_GROWTH_LIMIT = 0.25  # the last quarter's mean RSS may be at most 25% above the second quarter's
# The Tansu test broker wedges a consumer group that members join and leave several times within a second
# (reproduced with bare confluent-kafka consumers: the next member never gets an assignment), so each sink
# is cycled at most once per this interval; sources have no group and are cycled freely.
SINK_OP_SPACING_S = 8.0
ITERATION_PAUSE_S = 0.15  # keeps the loop long enough for data to flow through every phase


def log(message: str) -> None:
    print(f"[soak {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def wait(predicate: Callable[[], Any], timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except Exception as exc:  # noqa: BLE001 - keep polling through transient errors
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(0.2)
    raise TimeoutError(f"timed out after {timeout_s}s waiting for {what}; last: {last!r}")


class Pair:
    def __init__(self, index: int, run_id: str, workdir: Path) -> None:
        self.topic = f"soak-{run_id}-{index}"
        self.source = f"soak-src-{index}"
        self.sink = f"soak-sink-{index}"
        self.output = workdir / f"sink-{index}.jsonl"

    def source_config(self, rng: random.Random) -> dict[str, str]:
        return {
            "connector.class": SOURCE,
            "topic": self.topic,
            "tasks.max": str(rng.choice([1, 2])),
            "throughput": str(rng.choice([50, 100, 200])),
            "batch.size": "50",
        }

    def sink_config(self) -> dict[str, str]:
        return {
            "connector.class": SINK,
            "topics": self.topic,
            "output.file": str(self.output),
            "consumer.override.session.timeout.ms": "6000",
        }


class Soak:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rng = random.Random(args.seed)
        self.workdir = Path(tempfile.mkdtemp(prefix="connect-soak-"))
        self.broker: EmbeddedBroker | None = None
        self.worker: WorkerProcess | None = None
        self.http: httpx.Client | None = None
        self.errors: list[str] = []
        self.op_counts: dict[str, int] = {}

    # ---- plumbing ---------------------------------------------------------------------------------

    def call(self, method: str, path: str, ok: tuple[int, ...], **kwargs: Any) -> httpx.Response:
        assert self.http is not None
        answer = self.http.request(method, path, **kwargs)
        if answer.status_code not in ok:
            self.errors.append(f"{method} {path}: {answer.status_code} {answer.text[:300]}")
        return answer

    def process(self) -> psutil.Process:
        assert self.worker is not None and self.worker.process is not None
        return psutil.Process(self.worker.process.pid)

    def resources(self) -> dict[str, int]:
        process = self.process()
        return {
            "threads": process.num_threads(),
            "fds": process.num_fds(),
            "rss_mb": process.memory_info().rss // 2**20,
        }

    def settle(self, seconds: float = 12.0) -> dict[str, int]:
        # idle REST pool threads and closed clients' threads go away within a few seconds
        time.sleep(seconds)
        return self.resources()

    def create(self, name: str, config: dict[str, str]) -> None:
        self.call("POST", "/connectors", (201,), json={"name": name, "config": config})

    # ---- phases -----------------------------------------------------------------------------------

    def start(self) -> None:
        bootstrap = self.args.bootstrap_servers
        if not bootstrap:
            self.broker = EmbeddedBroker().start()
            bootstrap = self.broker.bootstrap_servers
        self.worker = WorkerProcess(self.workdir / "worker", bootstrap, props={"offset.flush.interval.ms": 500}).start()
        self.http = httpx.Client(base_url=self.worker.url, timeout=120)
        self.run_id = f"{int(time.time())}"
        self.pairs = [Pair(i, self.run_id, self.workdir) for i in range(self.args.pairs)]
        log(f"worker {self.worker.url}, broker {bootstrap}, workdir {self.workdir}")

    def create_all(self) -> None:
        for pair in self.pairs:
            self.create(pair.sink, pair.sink_config())
            self.create(pair.source, pair.source_config(self.rng))

    def all_running(self) -> bool:
        names = {n for p in self.pairs for n in (p.source, p.sink)}
        expanded = self.http.get("/connectors", params={"expand": "status"}).json()  # type: ignore[union-attr]
        for name in names:
            status = expanded.get(name, {}).get("status")
            if not status or status["connector"]["state"] != "RUNNING" or not status["tasks"]:
                return False
            if any(t["state"] != "RUNNING" for t in status["tasks"]):
                return False
        return True

    def churn(self) -> list[int]:
        rss: list[int] = []
        ops = ["stop", "resume", "pause", "resume", "alter", "restart", "restart-tasks", "recreate"]
        last_sink_op: dict[str, float] = {}
        for i in range(self.args.iterations):
            time.sleep(ITERATION_PAUSE_S)
            pair = self.rng.choice(self.pairs)
            is_source = self.rng.random() < 0.6
            if not is_source and time.monotonic() - last_sink_op.get(pair.sink, -1e9) < SINK_OP_SPACING_S:
                is_source = True
            if not is_source:
                last_sink_op[pair.sink] = time.monotonic()
            name = pair.source if is_source else pair.sink
            op = self.rng.choice(ops)
            self.op_counts[op] = self.op_counts.get(op, 0) + 1
            path = f"/connectors/{name}"
            if op in ("stop", "pause", "resume"):
                self.call("PUT", f"{path}/{op}", (202, 204))
            elif op == "alter":
                config = pair.source_config(self.rng) if is_source else {**pair.sink_config(), "batch.note": str(i)}
                self.call("PUT", f"{path}/config", (200,), json=config)
            elif op == "restart":
                self.call("POST", f"{path}/restart", (204,))
            elif op == "restart-tasks":
                self.call("POST", f"{path}/restart", (202,), params={"includeTasks": "true"})
            else:
                self.call("DELETE", path, (204,))
                self.create(name, pair.source_config(self.rng) if is_source else pair.sink_config())
            if i % 10 == 0:
                rss.append(self.resources()["rss_mb"])
                log(f"iteration {i}/{self.args.iterations}: rss {rss[-1]} MB, errors so far {len(self.errors)}")
        return rss

    def resume_all(self) -> None:
        for pair in self.pairs:
            for name in (pair.source, pair.sink):
                self.call("PUT", f"/connectors/{name}/resume", (202,))
        wait(self.all_running, 90, "every connector to run again")

    def check_delivery(self) -> dict[str, int]:
        """Stop the sources, then every acknowledged seqno must reach the sink's file."""
        for pair in self.pairs:
            self.call("PUT", f"/connectors/{pair.source}/stop", (204,))
        committed: dict[tuple[str, int], int] = {}
        for pair in self.pairs:
            offsets = self.http.get(f"/connectors/{pair.source}/offsets").json()["offsets"]  # type: ignore[union-attr]
            for entry in offsets:
                task_id = entry["partition"]["task.id"]  # "<connector>-<task>"
                if entry["offset"]:
                    committed[(pair.topic, int(task_id.rsplit("-", 1)[1]))] = int(entry["offset"]["saved"])

        def missing() -> dict[tuple[str, int], int]:
            seen: dict[tuple[str, int], set[int]] = {}
            for pair in self.pairs:
                for value in read_values(pair.output):
                    seen.setdefault((pair.topic, int(value["task"])), set()).add(int(value["seqno"]))
            return {
                key: n - len(seen.get(key, set()) & set(range(n)))
                for key, n in committed.items()
                if len(seen.get(key, set()) & set(range(n))) < n
            }

        try:
            wait(lambda: not missing(), 120, "the sinks to write every acknowledged record")
        except TimeoutError:
            pass
        lost = missing()
        return {
            "acknowledged": sum(committed.values()),
            "lost": sum(lost.values()),
            "lost_by_task": {f"{t}/{k}": v for (t, k), v in lost.items()},
        }  # type: ignore[dict-item]

    def delete_all(self) -> None:
        for pair in self.pairs:
            for name in (pair.source, pair.sink):
                self.call("DELETE", f"/connectors/{name}", (204,))

    def stop(self) -> None:
        if self.http is not None:
            self.http.close()
        if self.worker is not None:
            self.worker.stop()
        if self.broker is not None:
            self.broker.stop()


def read_values(path: Path) -> list[dict[str, Any]]:
    values = []
    if not path.exists():
        return values
    for line in path.read_text(errors="replace").splitlines():
        try:
            value = json.loads(line)["value"]
        except (ValueError, KeyError, TypeError):
            continue
        if isinstance(value, dict) and "payload" in value and "schema" in value:
            value = value["payload"]
        if isinstance(value, dict) and "seqno" in value:
            values.append(value)
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--pairs", type=int, default=10, help="source/sink pairs (connectors = 2 x pairs)")
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--bootstrap-servers", default=None, help="default: an embedded Tansu broker")
    args = parser.parse_args(argv)

    soak = Soak(args)
    began = time.monotonic()
    try:
        soak.start()
        idle_before = soak.settle(3)
        soak.create_all()
        wait(soak.all_running, 90, "every connector to run")
        running_before = soak.settle()
        log(f"{len(soak.pairs) * 2} connectors running: {running_before}")
        rss = soak.churn()
        soak.resume_all()
        running_after = soak.settle()
        delivery = soak.check_delivery()
        soak.delete_all()
        idle_after = soak.settle()
        alive = soak.worker is not None and soak.worker.process is not None and soak.worker.process.poll() is None
    finally:
        soak.stop()

    half = max(1, len(rss) // 4)
    early, late = (
        (statistics.mean(rss[half : 2 * half]) if len(rss) >= 2 * half else rss[0]),
        statistics.mean(rss[-half:]),
    )
    growth = (late - early) / early if early else 0.0
    # samples are every 10 operations: the fitted slope says how fast memory creeps, which a long run shows
    slope = statistics.linear_regression(range(len(rss)), rss).slope * 10 if len(rss) >= 2 else 0.0
    report = {
        "iterations": args.iterations,
        "connectors": 2 * args.pairs,
        "seconds": round(time.monotonic() - began, 1),
        "operations": soak.op_counts,
        "unexpected_answers": len(soak.errors),
        "records_acknowledged": delivery["acknowledged"],
        "records_lost": delivery["lost"],
        "threads": {
            "idle_before": idle_before["threads"],
            "idle_after": idle_after["threads"],
            "running_before": running_before["threads"],
            "running_after": running_after["threads"],
        },
        "fds": {
            "idle_before": idle_before["fds"],
            "idle_after": idle_after["fds"],
            "running_before": running_before["fds"],
            "running_after": running_after["fds"],
        },
        "rss_mb_samples": rss,
        "rss_growth": round(growth, 3),
        "rss_slope_mb_per_100_ops": round(slope, 2),
        "worker_alive": alive,
    }
    print(json.dumps(report, indent=1))
    for error in soak.errors[:20]:
        print("unexpected answer:", error, file=sys.stderr)
    if delivery["lost"]:
        print("lost records by topic/task:", delivery["lost_by_task"], file=sys.stderr)
    problems = []
    if delivery["lost"]:
        problems.append(f"{delivery['lost']} records lost")
    if soak.errors:
        problems.append(f"{len(soak.errors)} unexpected answers")
    if idle_after["threads"] > idle_before["threads"] + THREAD_SLACK:
        problems.append(f"threads leaked: {idle_before['threads']} -> {idle_after['threads']}")
    if idle_after["fds"] > idle_before["fds"] + FD_SLACK:
        problems.append(f"file descriptors leaked: {idle_before['fds']} -> {idle_after['fds']}")
    if running_after["threads"] > running_before["threads"] + THREAD_SLACK + 2 * args.pairs:
        problems.append(
            f"threads grew with the same connectors running: {running_before['threads']} -> {running_after['threads']}"
        )
    if growth > RSS_GROWTH_LIMIT:
        problems.append(f"RSS grew {growth:.0%} during the loop")
    if not alive:
        problems.append("the worker died")
    print("OK" if not problems else "FAILED: " + "; ".join(problems))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
