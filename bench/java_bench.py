"""Kafka's own FileStreamSource jar hosted in this runtime (a JVM host process, batches crossing as JSON)
against the same connector in the reference Kafka Connect 3.9 (the oracle), side by side in one run.

    .venv/bin/python bench/java_bench.py [--lines 300000] [--repeat 3]

Both read the same file of ~100-byte lines (StringConverter, batch.size 2000) into a fresh topic of the
same broker; timed from the create to the CreateTime of the last record, and over the first to last
record (the steady stream). (bench/run.py's records per CPU second counts a worker's own process, not the
JVM host process that does the Java half here, so it is left out.)
Best of --repeat rounds per side, the sides alternating. The issue's target: ours >= 0.8 x the oracle.
Writes bench/results/java_bench.json. Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from bench import _support as s  # noqa: E402
from bench.run import bench_file_source, compare, oracle_props  # noqa: E402
from runtime.embedded_broker import EmbeddedBroker  # noqa: E402
from runtime.java.layout import lay_out  # noqa: E402
from tests.support.oracle import OracleProcess  # noqa: E402
from tests.support.worker import WorkerProcess  # noqa: E402

TARGET = 0.8
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


def wait_java_plugins(url: str) -> None:
    """Our worker finds its Java plugins while it starts (a JVM host process): wait for them."""

    def listed() -> bool:
        try:
            plugins = httpx.get(f"{url}/connector-plugins", timeout=30).json()
        except httpx.HTTPError:
            return False
        return any(p["class"] == FILE_SOURCE and p.get("version") == "3.9.0" for p in plugins)

    s.wait_until(listed, 180, interval_s=0.5, what="the Java FileStreamSource listed")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    load_before = s.load_average()
    with tempfile.TemporaryDirectory(prefix="java-bench-") as tmp:
        workdir = Path(tmp)
        path = workdir / "input.txt"
        size = s.write_lines_file(path, args.lines)
        plugins = workdir / "plugins"
        lay_out(plugins, ("kafka-connect-file",))
        broker = EmbeddedBroker().start()
        bootstrap = broker.bootstrap_servers
        worker = oracle = None
        try:
            props = {**oracle_props(bootstrap), "plugin.path": str(plugins)}
            worker = WorkerProcess(workdir / "ours", bootstrap, props=props).start()
            wait_java_plugins(worker.url)
            oracle = OracleProcess(workdir / "oracle", bootstrap, props=oracle_props(bootstrap)).start()
            assert worker.process is not None and oracle.process is not None
            ours_pid, oracle_pid = worker.process.pid, oracle.process.pid

            def ours(i: int) -> dict[str, float]:
                return bench_file_source(bootstrap, worker.url, ours_pid, "ours", path, size, args.lines)

            def theirs(i: int) -> dict[str, float]:
                return bench_file_source(bootstrap, oracle.url, oracle_pid, "oracle", path, size, args.lines)

            our_best, oracle_best = compare(args.repeat, ours, theirs)
        finally:
            for process in (worker, oracle):
                if process is not None:
                    process.stop()
            broker.stop()
    load_after = s.load_average()
    print(
        f"\nFileStreamSource jar, {args.lines:,} lines, best of {args.repeat}; {platform.machine()}, "
        f"load {load_before:.1f} before, {load_after:.1f} after"
    )
    print(f"{'lines/s':<28}{'ours (Java, hosted)':>22}{'oracle 3.9':>14}{'ours/oracle':>13}  target")
    labels = {"total": "create to last record", "stream": "first to last record"}
    for metric, label in labels.items():
        ratio = our_best[metric] / oracle_best[metric]
        print(f"{label:<28}{our_best[metric]:>22,.0f}{oracle_best[metric]:>14,.0f}{ratio:>13.2f}  >= {TARGET}")
    results = REPO / "bench" / "results"
    results.mkdir(exist_ok=True)
    (results / "java_bench.json").write_text(
        json.dumps(
            {
                "lines": args.lines,
                "repeat": args.repeat,
                "ours": {k: v for k, v in our_best.items() if k in labels},
                "oracle": {k: v for k, v in oracle_best.items() if k in labels},
                "load": [load_before, load_after],
                "at": time.strftime("%Y-%m-%dT%H:%M:%S"),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
