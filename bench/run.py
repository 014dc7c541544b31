"""The standalone runtime's benchmarks, side by side with their baselines, in one run on one broker.

    .venv/bin/python bench/run.py            # full: 1,000,000 records / lines, 100 connectors, best of 2
    .venv/bin/python bench/run.py --quick    # 100,000 records / lines, one round (2-2.5 minutes)

Measures (see bench/README.md for how each is timed and why):
  (a) SequenceSource -> Kafka             vs a raw confluent-kafka producer loop sending the same bytes
  (b) Kafka -> RecordingSink              vs a raw consumer loop writing the same JSON lines
  (c) FileStreamSource / FileStreamSink   vs the reference Kafka Connect 3.9 (the oracle), same file
  (d) worker RSS idle and with 100 connectors (and the oracle's)
  (e) (a) and (b) with Avro values through a Schema Registry (AvroConverter) vs raw loops using
      confluent-kafka's AvroSerializer / AvroDeserializer on the same records
Prints a table (ours, baseline, ratio) and writes it as JSON to bench/results/latest.json. Targets:
ratio >= 0.9 against the raw loops, >= 1.2 against the oracle (issue 12; FileStreamSink's wall clock from
create to last less the broker's group join, see file_sink_rows). Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from bench import _support as s  # noqa: E402
from bench._avro import AvroCodec, worker_converters  # noqa: E402
from runtime.embedded_broker import EmbeddedBroker  # noqa: E402
from tests.support.oracle import OracleProcess, oracle_tool  # noqa: E402
from tests.support.schema_registry import SchemaRegistryServer  # noqa: E402
from tests.support.worker import WorkerProcess  # noqa: E402

SESSION_TIMEOUT_MS = 6000  # Tansu: a first group join takes about half of this
FLUSH_INTERVAL_MS = 1000
STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
RAW_TARGET = 0.9  # ours / the raw loops doing the same work (issue 12)
ORACLE_TARGET = 1.2  # ours / Kafka Connect 3.9 on the same connectors (issue 12)


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


# ---- one side of a comparison, run several times ------------------------------------------------

Metrics = dict[str, float]  # "total" and "stream" in records/s, "cpu" in records per CPU-second


def best_of(runs: list[Metrics]) -> Metrics:
    """Best of the repetitions, per metric: the run least disturbed by other load on the machine."""
    return {k: max(r[k] for r in runs) for k in runs[0]}


def compare(repeat: int, ours: Callable[[int], Metrics], baseline: Callable[[int], Metrics]) -> tuple[Metrics, Metrics]:
    """Alternate the two sides (baseline first on even rounds, ours first on odd) so that drift in the
    machine's load or the broker's state does not favour one."""
    our_runs: list[Metrics] = []
    base_runs: list[Metrics] = []
    for i in range(repeat):
        order = [(baseline, base_runs), (ours, our_runs)]
        for fn, runs in order if i % 2 == 0 else order[::-1]:
            runs.append(fn(i))
    return best_of(our_runs), best_of(base_runs)


def rows_for(
    label: str,
    unit: str,
    ours: Metrics,
    base: Metrics | None,
    base_name: str,
    target: float,
    spans: tuple[str, str],
    notes: tuple[str, str] = ("", ""),
) -> list[Row]:
    b = base or {}
    return [
        Row(f"{label}, {spans[0]}", unit, ours["total"], b.get("total"), base_name, target, notes[0]),
        Row(f"{label}, {spans[1]}", unit, ours["stream"], b.get("stream"), base_name, target, notes[1]),
        Row(
            f"{label}, per CPU-second",
            f"{unit.split('/')[0]}/cpu-s",
            ours["cpu"],
            b.get("cpu"),
            base_name,
            target,
            "CPU time of the worker process vs the baseline's; steadier than wall-clock on a busy machine",
        ),
    ]


# ---- (a) source --------------------------------------------------------------------------------


def json_converters(schemas_enable: bool) -> dict[str, str]:
    return {
        "key.converter": JSON_CONVERTER,
        "value.converter": JSON_CONVERTER,
        "key.converter.schemas.enable": str(schemas_enable).lower(),
        "value.converter.schemas.enable": str(schemas_enable).lower(),
    }


@dataclass
class Format:
    """How records are serialized on both sides of (a)/(b) (JsonConverter) or (e) (Avro with a registry)."""

    label: str  # "(a) SequenceSource -> Kafka" style prefix
    converters: dict[str, str]  # the worker's
    codec: Any  # the raw loop's, in bench/_support.py (JsonCodec) or bench/_avro.py (AvroCodec)
    producer_suffix: str = ""  # how the raw loops (de)serialize, for the baselines' names
    consumer_suffix: str = ""


def bench_sequence_source(
    bootstrap: str, worker: WorkerProcess, n: int, fmt: Format, repeat: int, label: str = "(a)"
) -> list[Row]:
    converters = fmt.converters
    names = [s.unique("seq") for _ in range(repeat)]

    def raw(i: int) -> Metrics:
        topic = f"{names[i]}-raw"
        s.create_topic(bootstrap, topic)
        log(f"{label} raw producer loop: {n} records")
        started = time.time()
        # SequenceSource keys each record with its task id, "<connector>-0"
        _, cpu = s.raw_sequence_producer(bootstrap, topic, n, f"{names[i]}-0", fmt.codec)
        first_ms, last_ms = s.record_timestamps_ms(bootstrap, topic, [0, n - 1])
        # timed like ours: from the start to the CreateTime of the last record
        return {
            "total": n / (last_ms / 1000 - started),
            "stream": n / max((last_ms - first_ms) / 1000, 1e-3),
            "cpu": n / cpu,
        }

    def ours(i: int) -> Metrics:
        name, topic = names[i], f"{names[i]}-ours"
        s.create_topic(bootstrap, topic)
        log(f"{label} SequenceSource: {n} records")
        config = {
            "connector.class": "SequenceSource",
            "tasks.max": "1",
            "topic": topic,
            "messages.per.task": str(n),
            **converters,
        }
        cpu0 = s.cpu_seconds(worker.process.pid)
        created = create_connector(worker.url, name, config)
        wait_source_offset(worker.url, name, "saved", n, timeout_s=max(120, n / 2000))
        cpu = s.cpu_seconds(worker.process.pid) - cpu0
        first_ms, last_ms = s.record_timestamps_ms(bootstrap, topic, [0, n - 1])
        delete_connector(worker.url, name)
        if i == 0:
            # Both wrote the same bytes, or the comparison means nothing.
            sample = min(n, 1000)
            if s.read_records(bootstrap, f"{name}-raw", sample) != s.read_records(bootstrap, topic, sample):
                raise RuntimeError(f"{label} the worker and the raw loop did not send the same key/value bytes")
        return {
            "total": n / (last_ms / 1000 - created),
            "stream": n / max((last_ms - first_ms) / 1000, 1e-3),
            "cpu": n / cpu,
        }

    # raw first on round 0, so its topic exists for the byte comparison
    ours_m, raw_m = compare(repeat, ours, raw)
    return rows_for(
        f"{label} {fmt.label}SequenceSource -> Kafka",
        "records/s",
        ours_m,
        raw_m,
        f"raw confluent-kafka producer loop{fmt.producer_suffix}",
        RAW_TARGET,
        ("create to last record sent", "first to last record sent"),
        (
            "ours includes connector/task start; raw its producer creation",
            "CreateTime of the first and last record, both sides",
        ),
    )


# ---- (b) sink ----------------------------------------------------------------------------------


def bench_recording_sink(
    bootstrap: str, worker: WorkerProcess, n: int, fmt: Format, workdir: Path, repeat: int, label: str = "(b)"
) -> list[Row]:
    name = s.unique("rec")
    topic = f"{name}-in"
    s.create_topic(bootstrap, topic)
    log(f"{label} prefilling {topic} with {n} records")
    s.prefill(bootstrap, topic, n, fmt.codec)
    outputs: dict[str, Path] = {}

    def raw(i: int) -> Metrics:
        log(f"{label} raw consumer loop: {n} records")
        out = outputs.setdefault("raw", workdir / f"{name}-raw-{i}.jsonl")
        out.unlink(missing_ok=True)
        total, stream, cpu = s.raw_recording_consumer(
            bootstrap, topic, n, out, fmt.codec, group=s.unique(f"{name}-raw"), session_timeout_ms=SESSION_TIMEOUT_MS
        )
        return {"total": n / total, "stream": n / stream, "cpu": n / cpu}

    def ours(i: int) -> Metrics:
        log(f"{label} RecordingSink: {n} records")
        connector = f"{name}-{i}"
        out = outputs.setdefault("ours", workdir / f"{name}-ours.jsonl")
        out.unlink(missing_ok=True)
        config = {
            "connector.class": "RecordingSink",
            "tasks.max": "1",
            "topics": topic,
            "output.file": str(out),
            **fmt.converters,
        }
        cpu0 = s.cpu_seconds(worker.process.pid)
        created = time.perf_counter()
        create_connector(worker.url, connector, config)
        first, last = s.watch_lines(out, n, timeout_s=max(120, n / 2000))
        cpu = s.cpu_seconds(worker.process.pid) - cpu0
        delete_connector(worker.url, connector)
        return {"total": n / (last - created), "stream": n / (last - first), "cpu": n / cpu}

    ours_m, raw_m = compare(repeat, ours, raw)
    _check_same_lines(outputs["raw"], outputs["ours"], label)
    return rows_for(
        f"{label} {fmt.label}Kafka -> RecordingSink",
        "records/s",
        ours_m,
        raw_m,
        f"raw confluent-kafka consumer loop{fmt.consumer_suffix}",
        RAW_TARGET,
        ("create to last line written", "first to last line written"),
        ("both include the consumer group join (~session.timeout.ms/2 on Tansu)", ""),
    )


def _check_same_lines(raw: Path, ours: Path, label: str, sample: int = 1000) -> None:
    with open(raw, "rb") as a, open(ours, "rb") as b:
        for _ in range(sample):
            if a.readline() != b.readline():
                raise RuntimeError(f"{label} RecordingSink and the raw loop wrote different lines ({raw} vs {ours})")


# ---- (c) FileStream vs the oracle --------------------------------------------------------------


def bench_file_source(bootstrap: str, url: str, pid: int, runtime: str, path: Path, size: int, lines: int) -> Metrics:
    name = s.unique(f"fsrc-{runtime}")
    topic = f"{name}-out"
    s.create_topic(bootstrap, topic)
    config = {
        "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "tasks.max": "1",
        "file": str(path),
        "topic": topic,
        "batch.size": "2000",
        "key.converter": STRING_CONVERTER,
        "value.converter": STRING_CONVERTER,
    }
    log(f"(c) FileStreamSource on {runtime}: {lines} lines")
    cpu0 = s.cpu_seconds(pid)
    created = create_connector(url, name, config)
    wait_source_offset(url, name, "position", size, timeout_s=max(180, lines / 2000))
    cpu = s.cpu_seconds(pid) - cpu0
    first_ms, last_ms = s.record_timestamps_ms(bootstrap, topic, [0, lines - 1])
    delete_connector(url, name)
    return {
        "total": lines / (last_ms / 1000 - created),
        "stream": lines / max((last_ms - first_ms) / 1000, 1e-3),
        "cpu": lines / cpu,
    }


def bench_file_sink(bootstrap: str, url: str, pid: int, runtime: str, topic: str, lines: int, workdir: Path) -> Metrics:
    name = s.unique(f"fsink-{runtime}")
    join = s.group_join_seconds(bootstrap, topic, SESSION_TIMEOUT_MS)  # what this round's join will take
    out = workdir / f"{name}.txt"
    config = {
        "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
        "tasks.max": "1",
        "file": str(out),
        "topics": topic,
        "key.converter": STRING_CONVERTER,
        "value.converter": STRING_CONVERTER,
    }
    log(f"(c) FileStreamSink on {runtime}: {lines} lines")
    cpu0 = s.cpu_seconds(pid)
    created = time.perf_counter()
    create_connector(url, name, config)
    first, last = s.watch_lines(out, lines, timeout_s=max(180, lines / 2000))
    cpu = s.cpu_seconds(pid) - cpu0
    delete_connector(url, name)
    out.unlink(missing_ok=True)
    return {
        "total": lines / (last - created),
        "stream": lines / (last - first),
        "cpu": lines / cpu,
        "net": lines / max(last - created - join, 1e-3),
    }


def bench_filestream(
    bootstrap: str, worker: WorkerProcess, lines: int, workdir: Path, use_oracle: bool, repeat: int
) -> list[Row]:
    path = workdir / "input.txt"
    size = s.write_lines_file(path, lines)
    topic = s.unique("fsink-in")
    s.create_topic(bootstrap, topic)
    log(f"(c) prefilling {topic} with {lines} lines")
    s.prefill_lines(bootstrap, topic, path)
    ours_pid = worker.process.pid
    oracle: OracleProcess | None = None
    if use_oracle:
        # Started once and kept idle while ours runs; the JVM warms up on its first round like any deployment.
        oracle = OracleProcess(workdir / "oracle", bootstrap, props=oracle_props(bootstrap)).start()
    try:

        def ours_src(i: int) -> Metrics:
            return bench_file_source(bootstrap, worker.url, ours_pid, "ours", path, size, lines)

        def oracle_src(i: int) -> Metrics:
            assert oracle is not None and oracle.process is not None
            return bench_file_source(bootstrap, oracle.url, oracle.process.pid, "oracle", path, size, lines)

        def ours_sink(i: int) -> Metrics:
            return bench_file_sink(bootstrap, worker.url, ours_pid, "ours", topic, lines, workdir)

        def oracle_sink(i: int) -> Metrics:
            assert oracle is not None and oracle.process is not None
            return bench_file_sink(bootstrap, oracle.url, oracle.process.pid, "oracle", topic, lines, workdir)

        if oracle is not None:
            src = compare(repeat, ours_src, oracle_src)
            sink = compare(repeat, ours_sink, oracle_sink)
        else:
            src = (best_of([ours_src(i) for i in range(repeat)]), None)
            sink = (best_of([ours_sink(i) for i in range(repeat)]), None)
    finally:
        if oracle is not None:
            oracle.stop()
    base = "Kafka Connect 3.9 (oracle)"
    return rows_for(
        "(c) FileStreamSource",
        "lines/s",
        src[0],
        src[1],
        base,
        ORACLE_TARGET,
        ("create to last record sent", "first to last record sent"),
    ) + file_sink_rows(sink[0], sink[1], base)


def file_sink_rows(ours: Metrics, oracle: Metrics | None, base: str) -> list[Row]:
    """FileStreamSink's rows. Its create-to-last time holds the broker's answer to the sink's JoinGroup, the
    same wait on both sides: on Tansu half of session.timeout.ms (3 s here, 3-6 times the oracle's own work
    at 500,000 lines), on Apache Kafka group.initial.rebalance.delay.ms (0 in its quickstart configuration).
    The target applies to that row less the wait (a bare consumer's join, measured before each round); the
    row with the wait is printed as it is, with no target."""
    rows = rows_for(
        "(c) FileStreamSink",
        "lines/s",
        ours,
        oracle,
        base,
        ORACLE_TARGET,
        ("create to last line in file", "first to last line in file"),
    )
    rows[0].target = None
    rows[0].note = "includes the broker's group join (~session.timeout.ms/2 on Tansu), both sides"
    rows.insert(
        1,
        Row(
            "(c) FileStreamSink, create to last line, less the group join",
            "lines/s",
            ours["net"],
            (oracle or {}).get("net"),
            base,
            ORACLE_TARGET,
            "less a bare consumer's join to the same topic, taken before each round (the broker's wait)",
        ),
    )
    return rows


# ---- (d) memory --------------------------------------------------------------------------------


def create_many(url: str, count: int, topic: str, workdir: Path) -> None:
    """Half FileStreamSources (each tailing a small file of its own), half FileStreamSinks reading one topic:
    connectors both runtimes ship, so the two numbers compare like with like."""
    for i in range(count):
        if i % 2 == 0:
            src = workdir / f"in-{i}.txt"
            src.write_text("".join(f"line {j}\n" for j in range(10)))
            config = {
                "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                "file": str(src),
                "topic": topic,
            }
        else:
            config = {
                "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
                "file": str(workdir / f"out-{i}.txt"),
                "topics": topic,
            }
        config.update({"tasks.max": "1", "key.converter": STRING_CONVERTER, "value.converter": STRING_CONVERTER})
        create_connector(url, f"c{i:03d}", config)


def all_running(url: str, count: int) -> bool:
    response = httpx.get(f"{url}/connectors?expand=status", timeout=30)
    body = response.json()
    return len(body) >= count and all(
        v["status"]["connector"]["state"] == "RUNNING"
        and v["status"]["tasks"]
        and all(t["state"] == "RUNNING" for t in v["status"]["tasks"])
        for v in body.values()
    )


def rss_idle_and_loaded(bootstrap: str, proc: Any, count: int, workdir: Path, settle_s: float) -> tuple[float, float]:
    """RSS of a freshly started worker, then with `count` connectors running (tasks settled)."""
    time.sleep(3)  # let start-up allocations settle
    idle = s.rss_mb(proc.process.pid)
    topic = s.unique("rss")
    s.create_topic(bootstrap, topic)
    create_many(proc.url, count, topic, workdir)
    s.wait_until(lambda: all_running(proc.url, count), 300, interval_s=0.5, what=f"{count} connectors RUNNING")
    time.sleep(settle_s)  # consumers join their groups, sources read their files
    return idle, s.rss_mb(proc.process.pid)


def bench_memory(bootstrap: str, count: int, workdir: Path, use_oracle: bool, settle_s: float) -> list[Row]:
    log(f"(d) RSS of our worker: idle, then {count} connectors")
    ours_dir = workdir / "rss-ours"
    with WorkerProcess(ours_dir, bootstrap, props=worker_props(bootstrap)) as worker:
        ours = rss_idle_and_loaded(bootstrap, worker, count, ours_dir, settle_s)
    oracle: tuple[float, float] | tuple[None, None] = (None, None)
    if use_oracle:
        log(f"(d) RSS of the oracle: idle, then {count} connectors")
        oracle_dir = workdir / "rss-oracle"
        with OracleProcess(oracle_dir, bootstrap, props=oracle_props(bootstrap)) as proc:
            oracle = rss_idle_and_loaded(bootstrap, proc, count, oracle_dir, settle_s)
    base = "Kafka Connect 3.9 (oracle, -Xms256m -Xmx1g)"
    note = "lower is better; ratio = ours / oracle"
    return [
        Row("(d) worker RSS, idle", "MiB", ours[0], oracle[0], base, None, note),
        Row(
            f"(d) worker RSS, {count} connectors ({count // 2} src + {count - count // 2} sink, FileStream)",
            "MiB",
            ours[1],
            oracle[1],
            base,
            None,
            note,
        ),
    ]


# ---- driver ------------------------------------------------------------------------------------


def worker_props(bootstrap: str, metrics: bool = True) -> dict[str, Any]:
    # metrics on: librdkafka's statistics every second (the worker's default is 30 s) and /metrics scraped
    # every second (see `scraping`); off: no statistics, no scrapes
    interval = 1000 if metrics else 0
    return {
        "bootstrap.servers": bootstrap,
        "offset.flush.interval.ms": FLUSH_INTERVAL_MS,
        "consumer.session.timeout.ms": SESSION_TIMEOUT_MS,
        "log.level": "WARN",
        "producer.statistics.interval.ms": interval,
        "consumer.statistics.interval.ms": interval,
    }


@contextlib.contextmanager
def scraping(url: str, enabled: bool) -> Iterator[list[int]]:
    """GET /metrics every second while the block runs, as a Prometheus server would; yields the scrape count."""
    done, count = threading.Event(), [0]

    def scrape() -> None:
        with httpx.Client(timeout=10) as client:
            while not done.wait(1.0):
                if client.get(url + "/metrics").status_code == 200:
                    count[0] += 1

    thread = threading.Thread(target=scrape, daemon=True)
    if enabled:
        thread.start()
    try:
        yield count
    finally:
        done.set()
        if enabled:
            thread.join()


def print_table(rows: list[Row]) -> None:
    def fmt(v: float | None) -> str:
        return "-" if v is None else f"{v:,.0f}" if v >= 100 else f"{v:,.1f}"

    header = f"{'measure':62} {'unit':13} {'ours':>12} {'baseline':>12} {'ratio':>6} {'target':>7}  baseline"
    print(header)
    print("-" * len(header))
    for r in rows:
        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}"
        target = "-" if r.target is None else f">={r.target:.1f}"
        flag = "" if r.ratio is None or r.target is None or r.ratio >= r.target else " BELOW"
        print(
            f"{r.measure:62} {r.unit:13} {fmt(r.ours):>12} {fmt(r.baseline):>12} {ratio:>6} {target:>7}  "
            f"{r.baseline_name}{flag}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="100k records/lines instead of 1M")
    parser.add_argument("--records", type=int, help="records for (a) and (b)")
    parser.add_argument("--lines", type=int, help="lines of the file for (c)")
    parser.add_argument("--connectors", type=int, default=100, help="connectors for the RSS measure (d)")
    parser.add_argument(
        "--schemas-enable",
        choices=["true", "false"],
        default="true",
        help="JsonConverter schemas.enable on both sides of (a) and (b)",
    )
    parser.add_argument("--only", default="abcde", help="which measures to run, e.g. 'ab'")
    parser.add_argument(
        "--repeat", type=int, help="rounds per comparison, best of each side kept (default 1 quick, 2 full)"
    )
    parser.add_argument("--no-oracle", action="store_true", help="skip the Java oracle")
    parser.add_argument(
        "--metrics",
        choices=["on", "off"],
        default="on",
        help="on (default): client statistics every second and /metrics scraped every second during "
        "(a)-(c); off: neither. Compare the ratios of one run of each",
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "latest.json")
    args = parser.parse_args(argv)
    n = args.records or (100_000 if args.quick else 1_000_000)
    lines = args.lines or (100_000 if args.quick else 1_000_000)
    schemas_enable = args.schemas_enable == "true"
    repeat = max(1, args.repeat or (1 if args.quick else 2))
    use_oracle = not args.no_oracle and oracle_tool() is not None and shutil.which("java") is not None

    load_before = s.load_average()
    if load_before > (os.cpu_count() or 1):
        log(
            f"warning: load average {load_before:.1f} on {os.cpu_count()} CPUs; wall-clock numbers will be noisy "
            "(the per-CPU-second rows are steadier)"
        )
    workdir = Path(tempfile.mkdtemp(prefix="connect-bench-"))
    rows: list[Row] = []
    broker = EmbeddedBroker().start()
    bootstrap = broker.bootstrap_servers
    log(f"broker {bootstrap}, workdir {workdir}")
    errors: dict[str, str] = {}

    def section(key: str, run: Callable[[], list[Row]]) -> None:
        # One failing measure (say, the oracle not starting) must not cost the others' numbers.
        if key not in args.only:
            return
        try:
            rows.extend(run())
        except Exception as exc:  # noqa: BLE001
            errors[key] = f"{type(exc).__name__}: {exc}"
            log(f"({key}) failed: {errors[key]}")

    try:
        if set(args.only) & set("abce"):
            metrics = args.metrics == "on"
            with (
                WorkerProcess(workdir / "worker", bootstrap, props=worker_props(bootstrap, metrics)) as worker,
                scraping(worker.url, metrics) as scrapes,
            ):
                json_format = Format("", json_converters(schemas_enable), s.JsonCodec(schemas_enable))
                section("a", lambda: bench_sequence_source(bootstrap, worker, n, json_format, repeat))
                section("b", lambda: bench_recording_sink(bootstrap, worker, n, json_format, workdir, repeat))
                if "e" in args.only:
                    with SchemaRegistryServer() as registry:
                        avro = Format(
                            "Avro: ",
                            worker_converters(registry.url),
                            AvroCodec(registry.url),
                            " with AvroSerializer",
                            " with AvroDeserializer",
                        )
                        section(
                            "e",
                            lambda: (
                                bench_sequence_source(bootstrap, worker, n, avro, repeat, "(e)")
                                + bench_recording_sink(bootstrap, worker, n, avro, workdir, repeat, "(e)")
                            ),
                        )
                section("c", lambda: bench_filestream(bootstrap, worker, lines, workdir, use_oracle, repeat))
            log(f"metrics {args.metrics}: {scrapes[0]} scrapes of /metrics")
        section("d", lambda: bench_memory(bootstrap, args.connectors, workdir, use_oracle, 3 if args.quick else 10))
    finally:
        broker.stop()

    print_table(rows)
    load_after = s.load_average()
    print(
        f"metrics {args.metrics}; load average {load_before:.1f} before, {load_after:.1f} after, on {os.cpu_count()} CPUs; "
        f"best of {repeat} round(s) per side"
    )
    result = {
        "mode": "quick" if args.quick else "full",
        "metrics": args.metrics,
        "records": n,
        "lines": lines,
        "schemas_enable": schemas_enable,
        "connectors": args.connectors,
        "repeat": repeat,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": [load_before, load_after],
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "rows": [{**asdict(r), "ratio": r.ratio} for r in rows],
        "errors": errors,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    log(f"wrote {args.out}")
    shutil.rmtree(workdir, ignore_errors=True)
    for key, message in errors.items():
        print(f"({key}) FAILED: {message}")
    return 1 if errors else 0


def oracle_props(bootstrap: str) -> dict[str, Any]:
    return {"offset.flush.interval.ms": FLUSH_INTERVAL_MS, "consumer.session.timeout.ms": SESSION_TIMEOUT_MS}


if __name__ == "__main__":
    sys.exit(main())
