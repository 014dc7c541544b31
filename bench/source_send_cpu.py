"""Row (a)'s cost on our side, comparable across commits on a busy machine: SequenceSource (tasks.max=1,
JsonConverter key and value with schemas) sending N records, measured per tree of this repository.

Two ways to run a round:
- in process (default): SequenceSourceTask.poll() + SourceTaskRunner.send() in a child process, no worker,
  no broker. The runner is built as the worker builds it for row (a) (the worker's producer settings from
  runtime/worker/clients.py, no transforms); its confluent-kafka producer points at a closed port, so the
  records wait in librdkafka's queue (500,000 deep) and are purged after the round: convert + produce, not
  the network. CPU seconds: `time.process_time()` around the loop.
- `--worker`: a standalone worker of each tree (`python -m runtime.cli`, as bench/run.py starts it, metrics
  on or off as there) against one embedded broker; the worker's CPU seconds from creating the connector to
  its committed offset saved=N, split by thread name (librdkafka's rdk:* threads; Python's share one name).
  `--profile DIR` has py-spy (`$PY_SPY`) record each round (collapsed stacks per thread).

CPU seconds move with the machine's load by more than the differences looked for; `--instructions` counts
valgrind's Ir instead (user-space instructions of every thread), which the load does not move: in process,
a child with N records less one with none; with `--worker`, the worker runs under callgrind and a round's
count is taken between `callgrind_control -z` and `-d`. Slow (about 40x), so use fewer records.

Runs any tree (`--tree`, e.g. `git worktree add --detach /tmp/old <commit>`) with this tree's virtualenv;
every round runs each tree in turn, alternating which goes first:

    .venv/bin/python bench/source_send_cpu.py --tree /tmp/old --tree . --rounds 5
    .venv/bin/python bench/source_send_cpu.py --tree /tmp/old --tree . --instructions --records 200000
    .venv/bin/python bench/source_send_cpu.py --tree /tmp/old --tree . --worker --rounds 5
    .venv/bin/python bench/source_send_cpu.py --tree /tmp/old --tree . --worker --instructions --records 100000
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
PY_SPY = os.environ.get("PY_SPY", "py-spy")
JSON = "org.apache.kafka.connect.json.JsonConverter"


# ---- in process ------------------------------------------------------------------------------------


def measure(records: int) -> dict[str, float]:
    """One round in this process (the tree first on sys.path): CPU seconds of poll + send for N records."""
    from runtime.connectors.testing import SequenceSourceTask
    from runtime.converters.headers import SimpleHeaderConverter
    from runtime.converters.json import JsonConverter
    from runtime.storage.base import StatusStore
    from runtime.storage.files import MemoryOffsetStore
    from runtime.storage.states import TargetState
    from runtime.worker import clients
    from runtime.worker.source_runner import SourceTaskRunner
    from runtime.worker_config import WorkerConfig

    worker = WorkerConfig({"bootstrap.servers": "127.0.0.1:9", "offset.flush.interval.ms": "60000"})
    producer_config = clients.producer_config(worker, {})
    producer_config["statistics.interval.ms"] = "0"  # no statistics callbacks: nothing but the send path

    def converter(is_key: bool) -> JsonConverter:
        c = JsonConverter()
        c.configure({"schemas.enable": "true"}, is_key)
        return c

    props = {"topic": "t", "messages.per.task": str(records), "name": "seq", "task.index": "0"}
    runner = SourceTaskRunner(
        "seq",
        0,
        SequenceSourceTask,
        props,
        {"connector.class": "SequenceSource", "tasks.max": "1", **props},
        TargetState.STARTED,
        StatusStore(),
        "w",
        producer_config=producer_config,
        offset_store=MemoryOffsetStore(),
        key_converter=converter(True),
        value_converter=converter(False),
        header_converter=SimpleHeaderConverter(),  # the worker's default (SequenceSource sends no headers)
        flush_interval_ms=60000,
        flush_timeout_ms=5000,
    )
    task = SequenceSourceTask()
    runner.initialize(task)
    task.start(props)
    poll, send = task.poll, runner.send
    began = time.process_time()
    sent = 0
    while sent < records:
        batch = poll()
        if batch:
            send(batch)
            sent += len(batch)
    cpu = time.process_time() - began
    producer = runner.producer  # None when nothing was sent (--records 0: the baseline of --instructions)
    queued = len(producer) if producer is not None else 0
    if producer is not None:
        producer.purge()
        producer.flush(5)
    if queued != records:
        raise RuntimeError(f"{queued} records queued, {records} expected")
    return {"cpu": cpu}


def run_child(tree: Path, records: int, under: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*under, sys.executable, str(HERE), "--child", "--records", str(records)],
        cwd=tree,
        env=dict(os.environ, PYTHONPATH=str(tree)),
        check=True,
        capture_output=True,
        text=True,
    )


def child_round(tree: Path, records: int, count_instructions: bool) -> tuple[float, str]:
    if not count_instructions:
        cpu = float(json.loads(run_child(tree, records).stdout.strip().splitlines()[-1])["cpu"])
        return cpu, f"{cpu:.3f}"
    counted = child_instructions(tree, records) - child_instructions(tree, 0)
    return counted, f"{counted:,}"


def child_instructions(tree: Path, records: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        done = run_child(
            tree, records, ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={tmp}/out"]
        )
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count from valgrind:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


# ---- on a worker -----------------------------------------------------------------------------------


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds of a process's threads by thread name, numbers stripped (a client's threads add up)."""
    import psutil

    by_name: dict[str, float] = {}
    for t in psutil.Process(pid).threads():
        try:
            name = Path(f"/proc/{pid}/task/{t.id}/comm").read_text().strip().rstrip("0123456789")
        except OSError:
            continue
        by_name[name] = by_name.get(name, 0.0) + t.user_time + t.system_time
    return by_name


def py_spy(pid: int, out: Path) -> subprocess.Popen[bytes]:
    out.parent.mkdir(parents=True, exist_ok=True)
    argv = [PY_SPY, "record", "--pid", str(pid), "--rate", "200", "--format", "raw", "--threads", "--nonblocking"]
    spy = subprocess.Popen([*argv, "-o", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)  # a pause for py-spy to attach before the round, not a synchronisation of what is measured
    return spy


class WorkerRounds:
    """A worker per tree against one embedded broker; `round(tree, n)` runs row (a)'s connector once."""

    def __init__(
        self, trees: list[Path], records: int, metrics: bool, count_instructions: bool, profile: Path | None
    ) -> None:
        sys.path.insert(0, str(HERE.parents[1]))
        from runtime.embedded_broker import EmbeddedBroker

        self.records, self.metrics, self.count_instructions, self.profile = (
            records,
            metrics,
            count_instructions,
            profile,
        )
        self.tmp = Path(tempfile.mkdtemp(prefix="source-send-"))
        self.broker = EmbeddedBroker().start()
        self.workers: dict[Path, Any] = {}
        try:
            for tree in trees:
                self.workers[tree] = self._start(tree)
        except BaseException:
            self.close()
            raise

    def _start(self, tree: Path) -> Any:
        from bench.run import worker_props
        from tests.support.worker import WorkerProcess, write_properties

        bootstrap = self.broker.bootstrap_servers
        w = WorkerProcess(self.tmp / tree.name, bootstrap, props=worker_props(bootstrap, self.metrics))
        under = []
        if self.count_instructions:
            under = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={self.tmp}/{tree.name}.cg.%p"]
        properties = write_properties(w.workdir / "worker.properties", w.props)
        w.launch(
            [*under, sys.executable, "-m", "runtime.cli", "standalone", str(properties)],
            w.url + "/health",
            900 if self.count_instructions else 60,
            cwd=tree,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(tree)},
            what=f"worker of {tree}",
        )
        return w

    def round(self, tree: Path, number: int) -> tuple[float, str]:
        import httpx

        from bench import _support as s
        from bench.run import scraping, wait_source_offset

        w, records = self.workers[tree], self.records
        pid = w.process.pid
        name = s.unique("seq")
        s.create_topic(self.broker.bootstrap_servers, name)
        config = {"connector.class": "SequenceSource", "tasks.max": "1", "topic": name}
        config |= {"messages.per.task": str(records), "key.converter": JSON, "value.converter": JSON}
        config |= {"key.converter.schemas.enable": "true", "value.converter.schemas.enable": "true"}
        spy = py_spy(pid, self.profile / f"{tree.name}-{number}.txt") if self.profile else None
        with scraping(w.url, self.metrics):
            if self.count_instructions:
                subprocess.run(["callgrind_control", "-z", str(pid)], check=True, capture_output=True)
            cpu0, threads0 = s.cpu_seconds(pid), thread_cpu(pid)
            httpx.post(f"{w.url}/connectors", json={"name": name, "config": config}, timeout=120)
            wait_source_offset(w.url, name, "saved", records, timeout_s=max(300, records / 100))
            cpu, threads = s.cpu_seconds(pid) - cpu0, thread_cpu(pid)
            if self.count_instructions:
                subprocess.run(["callgrind_control", "-d", str(pid)], check=True, capture_output=True)
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(30)
        httpx.delete(f"{w.url}/connectors/{name}", timeout=120)
        used = {k: v - threads0.get(k, 0.0) for k, v in threads.items()}
        split = ", ".join(f"{k} {v:.2f}" for k, v in sorted(used.items(), key=lambda kv: -kv[1]) if v >= 0.05)
        if not self.count_instructions:
            return cpu, f"{cpu:.3f} ({split})"
        dump = max(glob.glob(f"{self.tmp}/{tree.name}.cg.{pid}.*"), key=os.path.getmtime)
        summary = re.search(r"^summary: (\d+)", Path(dump).read_text(), re.M)
        if summary is None:
            raise RuntimeError(f"no summary line in callgrind's dump {dump}")
        counted = int(summary.group(1))
        return counted, f"{counted:,} ({cpu:.1f} CPU s under valgrind)"

    def close(self) -> None:
        for w in self.workers.values():
            w.stop(120)
        self.broker.stop()


# ---- driver ----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, action="append", help="a tree of this repository (repeatable)")
    parser.add_argument("--records", type=int, default=400_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--worker", action="store_true", help="on a standalone worker per tree (embedded broker)")
    parser.add_argument("--metrics", choices=["on", "off"], default="on", help="with --worker: as bench/run.py's")
    parser.add_argument("--profile", type=Path, help="with --worker: py-spy ($PY_SPY) each round into this folder")
    parser.add_argument("--instructions", action="store_true", help="valgrind's instruction counts, not CPU seconds")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        sys.path.insert(0, os.getcwd())
        print(json.dumps(measure(args.records)))
        return
    trees = [t.resolve() for t in (args.tree or [HERE.parents[1]])]
    unit = "instructions" if args.instructions else "CPU s"
    workers = None
    if args.worker:
        workers = WorkerRounds(trees, args.records, args.metrics == "on", args.instructions, args.profile)
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    results: dict[Path, list[float]] = {t: [] for t in trees}
    try:
        for i in range(args.rounds):
            line: list[str] = []
            for tree in trees if i % 2 == 0 else trees[::-1]:
                if workers is not None:
                    value, shown = workers.round(tree, i + 1)
                else:
                    value, shown = child_round(tree, args.records, args.instructions)
                results[tree].append(value)
                line.append(f"{tree.name} {shown}")
            print(f"round {i + 1}: " + "; ".join(line), flush=True)
    finally:
        if workers is not None:
            workers.close()
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    for tree, values in results.items():
        best, median = min(values), statistics.median(values)
        if args.instructions:
            shown = f"best {best:,.0f}, median {median:,.0f}"
            if not args.worker:  # setup subtracted (a round on a worker includes the connector's start)
                shown += f" ({median / max(args.records, 1):,.0f} per record)"
        else:
            shown = f"best {best:.3f}, median {median:.3f}"
        print(f"{tree}: {unit} per {args.records:,} records: {shown}")


if __name__ == "__main__":
    main()
