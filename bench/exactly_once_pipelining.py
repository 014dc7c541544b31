"""Exactly-once commits pipelined against commits waited for on the task thread (issue 25), in one process.

The same exactly-once SequenceSource task (JsonConverters, batches of 1,000) runs through the real runner
(`ExactlyOnceSourceTaskRunner`) on one broker, alternately with `pipeline_commits` True (the runtime's way:
the next batch is polled and converted while the previous transaction commits) and False (the reference's
order: commit, then poll again), for `transaction.boundary=poll` and `interval`. Each round measures records
per second from the first to the last record's timestamp in the committed view, which it also checks (every
seqno once, in order). No worker process, REST or group: only the task's own path, so that the difference is
the pipelining's.

    .venv/bin/python bench/exactly_once_pipelining.py --records 100000 --rounds 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import orjson  # noqa: E402

from bench import _support as s  # noqa: E402
from runtime.api.transactions import TransactionBoundary  # noqa: E402
from runtime.embedded_broker import EmbeddedBroker  # noqa: E402
from tests.integration.exactly_once.conftest import Harness  # noqa: E402
from tests.support.committed import committed_records  # noqa: E402

BOUNDARIES = {"poll": TransactionBoundary.POLL, "interval 100 ms": TransactionBoundary.INTERVAL}


def one_round(bootstrap: str, n: int, boundary: TransactionBoundary, pipelined: bool) -> float:
    """Records per second, first to last committed record, of one task sending `n` records."""
    harness = Harness(bootstrap)
    try:
        runner = harness.runner(
            boundary=boundary,
            interval_s=0.1,
            pipeline_commits=pipelined,
            **{"messages.per.task": str(n), "batch.size": "1000"},
        )
        harness.start(runner)
        s.wait_until(lambda: harness.committed_offset() == {"saved": n}, 300, interval_s=0.01, what="the last commit")
        harness.stop(runner)
        records = committed_records(bootstrap, harness.topic, timeout_s=120)
        if [orjson.loads(r.value)["payload"]["seqno"] for r in records] != list(range(n)):
            raise RuntimeError("the committed view does not hold every seqno exactly once")
        return n / max((records[-1].timestamp - records[0].timestamp) / 1000, 1e-3)
    finally:
        harness.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--bootstrap", default=os.environ.get("CONNECT_TEST_BOOTSTRAP_SERVERS"))
    args = parser.parse_args()
    load_before = s.load_average()
    broker = None if args.bootstrap else EmbeddedBroker().start()
    bootstrap = broker.bootstrap_servers if broker is not None else args.bootstrap
    rates: dict[tuple[str, bool], list[float]] = {(b, p): [] for b in BOUNDARIES for p in (False, True)}
    try:
        for round_ in range(args.rounds):
            for (name, pipelined), runs in rates.items():
                runs.append(one_round(bootstrap, args.records, BOUNDARIES[name], pipelined))
                print(
                    f"[{time.strftime('%H:%M:%S')}] round {round_ + 1}, {name}, "
                    f"{'pipelined' if pipelined else 'waited'}: {runs[-1]:,.0f} records/s",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        if broker is not None:
            broker.stop()
    print(f"{'boundary':<18} {'waited (median)':>16} {'pipelined (median)':>19} {'ratio':>6}  per round")
    for name in BOUNDARIES:
        waited, pipelined = rates[(name, False)], rates[(name, True)]
        per_round = " ".join(f"{p / w:.2f}" for w, p in zip(waited, pipelined, strict=True))
        ratio = statistics.median(pipelined) / statistics.median(waited)
        print(
            f"{name:<18} {statistics.median(waited):>16,.0f} {statistics.median(pipelined):>19,.0f} "
            f"{ratio:>6.2f}  {per_round}"
        )
    print(
        f"({args.records:,} records, records/s first to last committed record, {args.rounds} alternating rounds; "
        f"load average {load_before:.1f} before, {s.load_average():.1f} after, on {os.cpu_count()} CPUs)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
