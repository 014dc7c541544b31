"""Exactly-once source across a mixed cluster: the reference (Kafka Connect 3.9, distributed) and our worker,
both with `exactly.once.source.support=enabled`, on the same group and internal topics, hand one exactly-once
FileStreamSource (both ship it) to each other in both directions: ours runs it, stops; the reference continues
from our committed offset, stops; ours continues from the reference's. Each side writes the records and
offsets in transactions of the same transactional id (`${group.id}-${connector}-0`) and reads the other's
task configs, task count record and offsets. In the committed view of the data topic every line of the file
is there exactly once, in order.

Tansu forces two things here (tests/support/broker.py):
- the committed view is worked out from the record batches' transaction markers (tests/support/committed.py),
  as its read_committed consumers still see records of aborted transactions;
- the workers stop gracefully, each after its task committed the whole file: the reference's read_committed
  offsets reader on Tansu would also see the offsets of a killed worker's aborted transaction and resume past
  records that were never committed, which on Apache Kafka it would not (tests/integration/distributed/
  test_exactly_once_failover.py kills our own workers).
The workers run one after the other, as in test_oracle_cluster_compat.py: each takes over the group the other
left.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import orjson
import pytest

from tests.integration.scenarios.helpers import Kafka
from tests.support.broker import unique
from tests.support.committed import committed_records, committed_transactions
from tests.support.oracle import FAST_START_JAVA_OPTIONS, OracleProcess, require_oracle
from tests.support.worker import wait_for

from .test_oracle_cluster_compat import cluster_props, offsets_of, our_worker, state_of

pytestmark = [pytest.mark.integration, pytest.mark.oracle, pytest.mark.timeout(240)]

NAME = "eos-file"


def append(path: Path, lines: list[str]) -> int:
    """Append `lines` to the source file; its new size (the position its task commits once it read them)."""
    with path.open("a") as out:
        out.write("".join(f"{line}\n" for line in lines))
    return path.stat().st_size


def run_until_committed(api: httpx.Client, source: Path, lines: list[str], log: Callable[[], str]) -> None:
    """The connector RUNNING on this side, the new lines appended, and their position committed."""
    wait_for(lambda: state_of(api, NAME) == ("RUNNING", ["RUNNING"]), 60, 0.3, f"{NAME} RUNNING\n{log()}")
    position = append(source, lines)
    partition = {"filename": str(source)}
    wait_for(
        lambda: offsets_of(api, NAME) == [{"partition": partition, "offset": {"position": position}}],
        60,
        0.3,
        f"{NAME} committing position {position}\n{log()}",
    )


def test_exactly_once_source_handed_between_the_reference_and_our_workers(
    bootstrap_servers: str, tmp_path: Path
) -> None:
    tool = require_oracle()
    # a shorter session than cluster_props': Tansu answers a first JoinGroup after session.timeout.ms / 2
    props = {**cluster_props(bootstrap_servers), "session.timeout.ms": 4000, "exactly.once.source.support": "enabled"}
    topic = Kafka(bootstrap_servers).create_topic(unique("eos-mixed"), partitions=1)
    source = tmp_path / "input.txt"
    source.touch()
    config = {
        "connector.class": "FileStreamSource",
        "file": str(source),
        "topic": topic,
        "tasks.max": "1",
        "exactly.once.support": "required",
    }
    phases = [[f"{side}-{i}" for i in range(3)] for side in ("ours", "reference", "ours-again")]

    ours = our_worker(tmp_path / "ours", props)
    try:
        ours.start()
        with ours.client as api:
            created = api.post("/connectors", json={"name": NAME, "config": config})
            assert created.status_code == 201, created.text
            run_until_committed(api, source, phases[0], ours.log_tail)
    finally:
        ours.stop()

    reference = OracleProcess(
        tmp_path / "reference",
        bootstrap_servers,
        props,
        tool=tool,
        mode="distributed",
        java_options=FAST_START_JAVA_OPTIONS,
    )
    with reference, httpx.Client(base_url=reference.url, timeout=30) as api:
        run_until_committed(api, source, phases[1], reference.log_tail)

    ours = our_worker(tmp_path / "ours-again", props)
    try:
        ours.start()
        with ours.client as api:
            run_until_committed(api, source, phases[2], ours.log_tail)
            # stopped, the task's producer is closed: nothing more can reach the topic while it is read
            assert api.put(f"/connectors/{NAME}/stop").status_code == 204
            wait_for(lambda: state_of(api, NAME) == ("STOPPED", []), 30, 0.2, f"{NAME} STOPPED")
    finally:
        ours.stop()

    lines = [orjson.loads(r.value)["payload"] for r in committed_records(bootstrap_servers, topic, 1)]
    assert lines == [line for phase in phases for line in phase]
    # every side wrote transactionally: at least one committed transaction per phase
    assert committed_transactions(bootstrap_servers, topic, 1) >= len(phases)
