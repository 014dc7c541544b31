"""The standalone runtime's benchmarks, side by side with their baselines, in one run on one broker.

    .venv/bin/python bench/run.py            # full: 1,000,000 records / lines, 100 connectors
    .venv/bin/python bench/run.py --quick    # 100,000 records / lines (about two minutes)

Measures (see bench/README.md for how each is timed and why):
  (a) SequenceSource -> Kafka             vs a raw confluent-kafka producer loop sending the same bytes
  (b) Kafka -> RecordingSink              vs a raw consumer loop writing the same JSON lines
  (c) FileStreamSource / FileStreamSink   vs the reference Kafka Connect 3.9 (the oracle), same file
  (d) worker RSS idle and with 100 connectors (and the oracle's)
Prints a table (ours, baseline, ratio) and writes it as JSON to bench/results/latest.json. Targets:
ratio >= 0.8 against the raw loops, >= 1.0 against the oracle. Nothing here asserts a timing.
"""
from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from bench import _support as s  # noqa: E402
from runtime.embedded_broker import EmbeddedBroker  # noqa: E402
from tests.support.oracle import OracleProcess, oracle_tool  # noqa: E402
from tests.support.worker import WorkerProcess  # noqa: E402

SESSION_TIMEOUT_MS = 6000  # Tansu: a first group join takes about half of this
FLUSH_INTERVAL_MS = 1000
STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"


@dataclass
class Row:
    measure: str
    unit: str
    ours: float | None
    baseline: float | None
    baseline_name: str
    target: float | None  # minimum ours/baseline (for RSS: none, lower is better)
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.ours is None or not self.baseline:
            return None
        return self.ours / self.baseline


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ---- REST helpers (shared by our worker and the oracle: same API) --------------------------------

def create_connector(url: str, name: str, config: dict[str, str]) -> float:
    """POST the connector; returns the wall-clock time (time.time()) just before the request."""
    started = time.time()
    response = httpx.post(f"{url}/connectors", json={"name": name, "config": config}, timeout=60)
    if response.status_code != 201:
        raise RuntimeError(f"create {name} at {url}: {response.status_code} {response.text}")
    return started


def delete_connector(url: str, name: str) -> None:
    httpx.delete(f"{url}/connectors/{name}", timeout=60)


def source_offsets(url: str, name: str) -> list[dict[str, Any]]:
    response = httpx.get(f"{url}/connectors/{name}/offsets", timeout=30)
    response.raise_for_status()
    return response.json()["offsets"]


def wait_source_offset(url: str, name: str, field: str, value: int, timeout_s: float) -> None:
    def reached() -> bool:
        return any(o["offset"].get(field) == value for o in source_offsets(url, name))
    s.wait_until(reached, timeout_s, interval_s=0.2, what=f"{name} offset {field}={value}")


def running(url: str, name: str) -> bool:
    response = httpx.get(f"{url}/connectors/{name}/status", timeout=30)
    body = response.json() if response.status_code == 200 else {}
    tasks = body.get("tasks", [])
    return body.get("connector", {}).get("state") == "RUNNING" and bool(tasks) and all(
        t["state"] == "RUNNING" for t in tasks)


# ---- (a) source --------------------------------------------------------------------------------

def bench_sequence_source(bootstrap: str, worker: WorkerProcess, n: int, schemas_enable: bool) -> list[Row]:
    name = s.unique("seq")
    raw_topic, our_topic = f"{name}-raw", f"{name}-ours"
    s.create_topic(bootstrap, raw_topic)
    s.create_topic(bootstrap, our_topic)
    task_key = f"{name}-0"  # SequenceSource keys records with its task id

    log(f"(a) raw producer loop: {n} records")
    raw_s = s.raw_sequence_producer(bootstrap, raw_topic, n, task_key, schemas_enable)
    raw_first, raw_last = s.record_timestamps_ms(bootstrap, raw_topic, [0, n - 1])

    log(f"(a) SequenceSource: {n} records")
    config = {
        "connector.class": "SequenceSource", "tasks.max": "1", "topic": our_topic, "messages.per.task": str(n),
        "key.converter": JSON_CONVERTER, "value.converter": JSON_CONVERTER,
        "key.converter.schemas.enable": str(schemas_enable).lower(),
        "value.converter.schemas.enable": str(schemas_enable).lower(),
    }
    created = create_connector(worker.url, name, config)
    wait_source_offset(worker.url, name, "saved", n, timeout_s=max(120, n / 2000))
    first_ms, last_ms = s.record_timestamps_ms(bootstrap, our_topic, [0, n - 1])
    delete_connector(worker.url, name)

    # Both wrote the same bytes, or the comparison means nothing.
    sample = min(n, 1000)
    if s.read_records(bootstrap, raw_topic, sample) != s.read_records(bootstrap, our_topic, sample):
        raise RuntimeError("(a) the worker and the raw loop did not send the same key/value bytes")

    ours_total = last_ms / 1000 - created
    return [
        Row("(a) SequenceSource -> Kafka, create to last record sent", "records/s", n / ours_total, n / raw_s,
            "raw producer loop (first produce to flushed)", 0.8,
            "ours includes connector+task start and producer creation"),
        Row("(a) SequenceSource -> Kafka, first to last record sent", "records/s",
            n / max((last_ms - first_ms) / 1000, 1e-3), n / max((raw_last - raw_first) / 1000, 1e-3),
            "raw producer loop (first to last record sent)", 0.8, "record CreateTime span on both sides"),
    ]


# ---- (b) sink ----------------------------------------------------------------------------------

def bench_recording_sink(bootstrap: str, worker: WorkerProcess, n: int, schemas_enable: bool, workdir: Path) -> list[Row]:
    name = s.unique("rec")
    topic = f"{name}-in"
    s.create_topic(bootstrap, topic)
    log(f"(b) prefilling {topic} with {n} records")
    s.prefill(bootstrap, topic, n, schemas_enable)

    log(f"(b) raw consumer loop: {n} records")
    raw_out = workdir / f"{name}-raw.jsonl"
    raw_total, raw_stream = s.raw_recording_consumer(bootstrap, topic, n, raw_out, schemas_enable,
                                                     group=f"{name}-raw", session_timeout_ms=SESSION_TIMEOUT_MS)

    log(f"(b) RecordingSink: {n} records")
    our_out = workdir / f"{name}-ours.jsonl"
    config = {
        "connector.class": "RecordingSink", "tasks.max": "1", "topics": topic, "output.file": str(our_out),
        "key.converter": JSON_CONVERTER, "value.converter": JSON_CONVERTER,
        "key.converter.schemas.enable": str(schemas_enable).lower(),
        "value.converter.schemas.enable": str(schemas_enable).lower(),
    }
    created = time.perf_counter()
    create_connector(worker.url, name, config)
    first, last = s.watch_lines(our_out, n, timeout_s=max(120, n / 2000))
    delete_connector(worker.url, name)
    _check_same_lines(raw_out, our_out)
    return [
        Row("(b) Kafka -> RecordingSink, create to last line written", "records/s", n / (last - created), n / raw_total,
            "raw consumer loop (subscribe to last line)", 0.8, "both include the consumer group join"),
        Row("(b) Kafka -> RecordingSink, first to last line written", "records/s", n / (last - first), n / raw_stream,
            "raw consumer loop (first to last line)", 0.8, ""),
    ]


def _check_same_lines(raw: Path, ours: Path, sample: int = 1000) -> None:
    with open(raw, "rb") as a, open(ours, "rb") as b:
        for _ in range(sample):
            if a.readline() != b.readline():
                raise RuntimeError(f"(b) RecordingSink and the raw loop wrote different lines ({raw} vs {ours})")


# ---- (c) FileStream vs the oracle --------------------------------------------------------------

def bench_file_source(bootstrap: str, url: str, runtime: str, path: Path, size: int, lines: int) -> dict[str, float]:
    name = s.unique(f"fsrc-{runtime}")
    topic = f"{name}-out"
    s.create_topic(bootstrap, topic)
    config = {"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "tasks.max": "1",
              "file": str(path), "topic": topic, "batch.size": "2000",
              "key.converter": STRING_CONVERTER, "value.converter": STRING_CONVERTER}
    log(f"(c) FileStreamSource on {runtime}: {lines} lines")
    created = create_connector(url, name, config)
    wait_source_offset(url, name, "position", size, timeout_s=max(180, lines / 2000))
    first_ms, last_ms = s.record_timestamps_ms(bootstrap, topic, [0, lines - 1])
    delete_connector(url, name)
    return {"total": lines / (last_ms / 1000 - created), "stream": lines / max((last_ms - first_ms) / 1000, 1e-3)}


def bench_file_sink(url: str, runtime: str, topic: str, lines: int, workdir: Path) -> dict[str, float]:
    name = s.unique(f"fsink-{runtime}")
    out = workdir / f"{name}.txt"
    config = {"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "tasks.max": "1",
              "file": str(out), "topics": topic,
              "key.converter": STRING_CONVERTER, "value.converter": STRING_CONVERTER}
    log(f"(c) FileStreamSink on {runtime}: {lines} lines")
    created = time.perf_counter()
    create_connector(url, name, config)
    first, last = s.watch_lines(out, lines, timeout_s=max(180, lines / 2000))
    delete_connector(url, name)
    return {"total": lines / (last - created), "stream": lines / (last - first)}


def file_rows(ours_src: dict[str, float], oracle_src: dict[str, float] | None, ours_sink: dict[str, float],
              oracle_sink: dict[str, float] | None) -> list[Row]:
    def get(d: dict[str, float] | None, k: str) -> float | None:
        return d[k] if d else None
    base = "Kafka Connect 3.9 (oracle)"
    return [
        Row("(c) FileStreamSource, create to last record sent", "lines/s", ours_src["total"], get(oracle_src, "total"),
            base, 1.0),
        Row("(c) FileStreamSource, first to last record sent", "lines/s", ours_src["stream"], get(oracle_src, "stream"),
            base, 1.0),
        Row("(c) FileStreamSink, create to last line in file", "lines/s", ours_sink["total"], get(oracle_sink, "total"),
            base, 1.0, "both include the consumer group join"),
        Row("(c) FileStreamSink, first to last line in file", "lines/s", ours_sink["stream"], get(oracle_sink, "stream"),
            base, 1.0),
    ]


# ---- (d) memory --------------------------------------------------------------------------------

def create_many(url: str, count: int, topic: str, workdir: Path) -> None:
    """Half FileStreamSources (each tailing a small file of its own), half FileStreamSinks reading one topic:
    connectors both runtimes ship, so the two numbers compare like with like."""
    for i in range(count):
        if i % 2 == 0:
            src = workdir / f"in-{i}.txt"
            src.write_text("".join(f"line {j}\n" for j in range(10)))
            config = {"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                      "file": str(src), "topic": topic}
        else:
            config = {"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
                      "file": str(workdir / f"out-{i}.txt"), "topics": topic}
        config.update({"tasks.max": "1", "key.converter": STRING_CONVERTER, "value.converter": STRING_CONVERTER})
        create_connector(url, f"c{i:03d}", config)


def all_running(url: str, count: int) -> bool:
    response = httpx.get(f"{url}/connectors?expand=status", timeout=30)
    body = response.json()
    return len(body) >= count and all(
        v["status"]["connector"]["state"] == "RUNNING" and v["status"]["tasks"]
        and all(t["state"] == "RUNNING" for t in v["status"]["tasks"]) for v in body.values())


def rss_idle_and_loaded(bootstrap: str, proc: Any, count: int, workdir: Path) -> tuple[float, float]:
    """RSS of a freshly started worker, then with `count` connectors running (tasks settled)."""
    time.sleep(3)  # let start-up allocations settle
    idle = s.rss_mb(proc.process.pid)
    topic = s.unique("rss")
    s.create_topic(bootstrap, topic)
    create_many(proc.url, count, topic, workdir)
    s.wait_until(lambda: all_running(proc.url, count), 300, interval_s=0.5, what=f"{count} connectors RUNNING")
    time.sleep(10)  # consumers join their groups, sources read their files
    return idle, s.rss_mb(proc.process.pid)


def bench_memory(bootstrap: str, count: int, workdir: Path, use_oracle: bool) -> list[Row]:
    log(f"(d) RSS of our worker: idle, then {count} connectors")
    ours_dir = workdir / "rss-ours"
    with WorkerProcess(ours_dir, bootstrap, props=worker_props(bootstrap)) as worker:
        ours = rss_idle_and_loaded(bootstrap, worker, count, ours_dir)
    oracle: tuple[float, float] | tuple[None, None] = (None, None)
    if use_oracle:
        log(f"(d) RSS of the oracle: idle, then {count} connectors")
        oracle_dir = workdir / "rss-oracle"
        with OracleProcess(oracle_dir, bootstrap, props=oracle_props(bootstrap)) as proc:
            oracle = rss_idle_and_loaded(bootstrap, proc, count, oracle_dir)
    base = "Kafka Connect 3.9 (oracle, -Xms256m -Xmx1g)"
    note = "lower is better; ratio = ours / oracle"
    return [
        Row("(d) worker RSS, idle", "MiB", ours[0], oracle[0], base, None, note),
        Row(f"(d) worker RSS, {count} connectors ({count // 2} FileStreamSource + {count - count // 2} FileStreamSink)",
            "MiB", ours[1], oracle[1], base, None, note),
    ]


# ---- driver ------------------------------------------------------------------------------------

def worker_props(bootstrap: str) -> dict[str, Any]:
    return {"bootstrap.servers": bootstrap, "offset.flush.interval.ms": FLUSH_INTERVAL_MS,
            "consumer.session.timeout.ms": SESSION_TIMEOUT_MS, "log.level": "WARN"}


def print_table(rows: list[Row]) -> None:
    def fmt(v: float | None) -> str:
        return "-" if v is None else f"{v:,.0f}" if v >= 100 else f"{v:,.1f}"
    header = f"{'measure':58} {'unit':10} {'ours':>12} {'baseline':>12} {'ratio':>6} {'target':>7}  baseline"
    print(header)
    print("-" * len(header))
    for r in rows:
        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}"
        target = "-" if r.target is None else f">={r.target:.1f}"
        flag = "" if r.ratio is None or r.target is None or r.ratio >= r.target else " BELOW"
        print(f"{r.measure:58} {r.unit:10} {fmt(r.ours):>12} {fmt(r.baseline):>12} {ratio:>6} {target:>7}  "
              f"{r.baseline_name}{flag}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="100k records/lines instead of 1M")
    parser.add_argument("--records", type=int, help="records for (a) and (b)")
    parser.add_argument("--lines", type=int, help="lines of the file for (c)")
    parser.add_argument("--connectors", type=int, default=100, help="connectors for the RSS measure (d)")
    parser.add_argument("--schemas-enable", choices=["true", "false"], default="true",
                        help="JsonConverter schemas.enable on both sides of (a) and (b)")
    parser.add_argument("--only", default="abcd", help="which measures to run, e.g. 'ab'")
    parser.add_argument("--no-oracle", action="store_true", help="skip the Java oracle")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "latest.json")
    args = parser.parse_args(argv)
    n = args.records or (100_000 if args.quick else 1_000_000)
    lines = args.lines or (100_000 if args.quick else 1_000_000)
    schemas_enable = args.schemas_enable == "true"
    use_oracle = not args.no_oracle and oracle_tool() is not None and shutil.which("java") is not None

    workdir = Path(tempfile.mkdtemp(prefix="connect-bench-"))
    rows: list[Row] = []
    broker = EmbeddedBroker().start()
    bootstrap = broker.bootstrap_servers
    log(f"broker {bootstrap}, workdir {workdir}")
    try:
        if set(args.only) & set("abc"):
            with WorkerProcess(workdir / "worker", bootstrap, props=worker_props(bootstrap)) as worker:
                if "a" in args.only:
                    rows += bench_sequence_source(bootstrap, worker, n, schemas_enable)
                if "b" in args.only:
                    rows += bench_recording_sink(bootstrap, worker, n, schemas_enable, workdir)
                if "c" in args.only:
                    rows += bench_filestream(bootstrap, worker, lines, workdir, use_oracle)
        if "d" in args.only:
            rows += bench_memory(bootstrap, args.connectors, workdir, use_oracle)
    finally:
        broker.stop()

    print_table(rows)
    result = {
        "mode": "quick" if args.quick else "full", "records": n, "lines": lines, "schemas_enable": schemas_enable,
        "connectors": args.connectors, "python": platform.python_version(), "machine": platform.machine(),
        "cpus": __import__("os").cpu_count(), "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "rows": [{**asdict(r), "ratio": r.ratio} for r in rows],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    log(f"wrote {args.out}")
    shutil.rmtree(workdir, ignore_errors=True)
    return 0


def bench_filestream(bootstrap: str, worker: WorkerProcess, lines: int, workdir: Path, use_oracle: bool) -> list[Row]:
    path = workdir / "input.txt"
    size = s.write_lines_file(path, lines)
    topic = s.unique("fsink-in")
    s.create_topic(bootstrap, topic)
    log(f"(c) prefilling {topic} with {lines} lines")
    s.prefill_lines(bootstrap, topic, path)
    ours_src = bench_file_source(bootstrap, worker.url, "ours", path, size, lines)
    ours_sink = bench_file_sink(worker.url, "ours", topic, lines, workdir)
    oracle_src = oracle_sink = None
    if use_oracle:
        oracle = OracleProcess(workdir / "oracle", bootstrap, props=oracle_props(bootstrap))
        with oracle:
            oracle_src = bench_file_source(bootstrap, oracle.url, "oracle", path, size, lines)
            oracle_sink = bench_file_sink(oracle.url, "oracle", topic, lines, workdir)
    return file_rows(ours_src, oracle_src, ours_sink, oracle_sink)


def oracle_props(bootstrap: str) -> dict[str, Any]:
    return {"offset.flush.interval.ms": FLUSH_INTERVAL_MS, "consumer.session.timeout.ms": SESSION_TIMEOUT_MS}


if __name__ == "__main__":
    sys.exit(main())
