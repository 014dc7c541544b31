"""Exactly-once source in a mixed cluster: reference workers (Kafka Connect 3.9, distributed) and ours, all
with `exactly.once.source.support=enabled`, in one group on the same internal topics, hand an exactly-once
FileStreamSource (both ship it) to each other in both directions. Ours runs it and leads; a reference worker
joins; ours stops and the reference worker continues from our committed offset; another of ours joins (and
leads again once the reference worker is gone); the reference worker stops and ours continues from its
offset. Each side writes the records and offsets in transactions of the same transactional id
(`${group.id}-${connector}-0`) and reads the other's task configs, task count records and offsets. In the
committed view of the data topic every line of the file is there exactly once, in order.

Tansu forces two things here (tests/support/broker.py):
- the committed view is worked out from the record batches' transaction markers (tests/support/committed.py),
  as its read_committed consumers still see records of aborted transactions;
- the workers stop gracefully, each after its task committed what it read: the reference's read_committed
  offsets reader on Tansu would also see the offsets of a killed worker's aborted transaction and resume past
  records never committed, which on Apache Kafka it would not (test_exactly_once_failover.py kills ours).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import httpx
import orjson
import pytest

from tests.integration.scenarios.helpers import Kafka
from tests.support.broker import unique
from tests.support.committed import committed_records, committed_transactions
from tests.support.oracle import FAST_START_JAVA, OracleProcess, require_oracle
from tests.support.worker import wait_for

from .test_oracle_cluster_compat import cluster_props, offsets_of, our_worker

pytestmark = [pytest.mark.integration, pytest.mark.oracle, pytest.mark.timeout(240)]

NAME = "eos-file"


def append(path: Path, lines: list[str]) -> int:
    """Append `lines` to the source file; its new size (the position its task commits once it read them)."""
    with path.open("a") as out:
        out.write("".join(f"{line}\n" for line in lines))
    return path.stat().st_size


def task_runs_on(api: httpx.Client, worker_id: str) -> bool:
    response = api.get(f"/connectors/{NAME}/status")
    tasks = response.json()["tasks"] if response.status_code == 200 else []
    return [(t["state"], t["worker_id"]) for t in tasks] == [("RUNNING", worker_id)]


def continue_on(api: httpx.Client, worker_id: str, source: Path, lines: list[str], log: Callable[[], str]) -> None:
    """The task RUNNING on `worker_id`, the new lines appended, and their position committed."""
    wait_for(lambda: task_runs_on(api, worker_id), 60, 0.3, f"{NAME}'s task RUNNING on {worker_id}\n{log()}")
    position = append(source, lines)
    partition = {"filename": str(source)}
    wait_for(
        lambda: offsets_of(api, NAME) == [{"partition": partition, "offset": {"position": position}}],
        60,
        0.3,
        f"{NAME} committing position {position} on {worker_id}\n{log()}",
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
    reference = OracleProcess(
        tmp_path / "reference",
        bootstrap_servers,
        props,
        tool=tool,
        mode="distributed",
        java_options=FAST_START_JAVA,
    )
    ours_again = our_worker(tmp_path / "ours-again", props)

    with ExitStack() as running:
        for worker in (ours, reference, ours_again):
            running.callback(worker.stop)
        ours.start()
        api = running.enter_context(ours.client)
        created = api.post("/connectors", json={"name": NAME, "config": config})
        assert created.status_code == 201, created.text
        continue_on(api, f"127.0.0.1:{ours.port}", source, phases[0], ours.log_tail)

        reference.start()  # joins the group our worker leads
        ref = running.enter_context(httpx.Client(base_url=reference.url, timeout=30))
        ours.stop()
        continue_on(ref, f"127.0.0.1:{reference.port}", source, phases[1], reference.log_tail)

        ours_again.start()  # joins the group the reference worker leads now
        api = running.enter_context(ours_again.client)
        reference.stop()
        continue_on(api, f"127.0.0.1:{ours_again.port}", source, phases[2], ours_again.log_tail)
        # stopped, the task's producer is closed: nothing more can reach the topic while it is read
        assert api.put(f"/connectors/{NAME}/stop").status_code == 204
        wait_for(lambda: api.get(f"/connectors/{NAME}/status").json()["tasks"] == [], 30, 0.2, f"{NAME} stopped")

    lines = [orjson.loads(r.value)["payload"] for r in committed_records(bootstrap_servers, topic, 1)]
    assert lines == [line for phase in phases for line in phase]
    # every side wrote transactionally: at least one committed transaction per phase
    assert committed_transactions(bootstrap_servers, topic, 1) >= len(phases)
