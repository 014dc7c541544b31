"""Failover: kill -9 the leader, a worker that runs a SequenceSource task and a RecordingSink task; within one session
timeout plus one rebalance both run on other workers, and every seqno reaches the sink (duplicates only
from what one offset-flush interval can replay)."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest

from tests.integration.scenarios.helpers import SINK, SOURCE, Kafka, sink_offsets, source_offsets
from tests.integration.test_crash_safety import parse_output, seqnos_by_task
from tests.support.broker import unique
from tests.support.cluster import SESSION_TIMEOUT_MS, Cluster
from tests.support.worker import wait_for

pytestmark = pytest.mark.integration

TASKS = 3
THROUGHPUT = 200  # records per second per source task
FLUSH_MS = 1000
MAX_DUPLICATES_PER_TASK = int(THROUGHPUT * FLUSH_MS / 1000 * 2 * 2)
# detection (one session timeout) + the leader's tick + revocation-free reassignment + task start
FAILOVER_BUDGET_S = SESSION_TIMEOUT_MS / 1000 + 6


def test_kill_minus_nine_moves_tasks_and_loses_nothing(
    cluster: Cluster, bootstrap_servers: str, tmp_path: Path
) -> None:
    topic = Kafka(bootstrap_servers).create_topic(unique("failover"), partitions=TASKS)
    out = tmp_path / "sink.jsonl"
    source, sink = unique("fo-src"), unique("fo-sink")
    assert (
        cluster.api(0)
        .post(
            "/connectors",
            json={
                "name": sink,
                "config": {"connector.class": SINK, "topics": topic, "tasks.max": str(TASKS), "output.file": str(out)},
            },
        )
        .status_code
        == 201
    )
    assert (
        cluster.api(1)
        .post(
            "/connectors",
            json={
                "name": source,
                "config": {
                    "connector.class": SOURCE,
                    "topic": topic,
                    "tasks.max": str(TASKS),
                    "throughput": str(THROUGHPUT),
                    # one partition per task: the Tansu broker used in tests can hide records from a consumer tailing a
                    # partition that several producers write at once (81 of 500k in a 20 s probe; Apache Kafka cannot)
                    "task.own.partition": "true",
                },
            },
        )
        .status_code
        == 201
    )
    source_status = cluster.wait_state(source, "RUNNING", TASKS)
    sink_status = cluster.wait_state(sink, "RUNNING", TASKS)
    wait_for(lambda: out.exists() and len(parse_output(out)) > THROUGHPUT * TASKS, 60, 0.5, "sink output")

    # the duplicate bound assumes commits are flowing: on Tansu a new sink group keeps rebalancing for a few
    # seconds (each join takes session.timeout.ms/2) and commits made meanwhile are refused, so first wait
    # until the group has committed offsets for every partition, then for a later flush of each
    def sink_committed() -> dict:
        response = cluster.api(1).get(f"/connectors/{sink}/offsets")
        committed = sink_offsets(response.json()["offsets"]) if response.status_code == 200 else {}
        return committed if len(committed) == TASKS and all((o or 0) > 0 for o in committed.values()) else {}

    first = wait_for(sink_committed, 60, 0.5, "sink offsets committed for every partition")

    def flushed_again() -> dict | None:
        now = sink_committed()
        return now if now and all((now[p] or 0) > (first[p] or 0) for p in first) else None

    wait_for(flushed_again, 30, 0.2, "a later sink offset flush of every partition")

    # the victim is worker 0, the leader (the longest-running worker): the harder case, since the group
    # must also agree on a new leader before anything is reassigned; three tasks each over three workers
    # means it runs one task of each connector
    victim, victim_id = 0, cluster.worker_id(0)
    assert victim_id in {t["worker_id"] for t in source_status["tasks"]}, source_status
    assert victim_id in {t["worker_id"] for t in sink_status["tasks"]}, sink_status
    survivor = (victim + 1) % 3
    cluster.workers[victim].kill()

    # within one session timeout plus a rebalance: the waits' budget (shared), not a stopwatch
    deadline = time.monotonic() + FAILOVER_BUDGET_S
    moved_source = cluster.wait_state(
        source, "RUNNING", TASKS, via=survivor, timeout_s=FAILOVER_BUDGET_S, exclude_worker=victim_id
    )
    moved_sink = cluster.wait_state(
        sink, "RUNNING", TASKS, via=survivor, timeout_s=max(0.5, deadline - time.monotonic()), exclude_worker=victim_id
    )
    survivors = {cluster.worker_id(i) for i in range(3) if i != victim}
    assert {t["worker_id"] for t in moved_source["tasks"] + moved_sink["tasks"]} <= survivors

    # the stream goes on: then stop the source and check the sink has every seqno
    written = len(parse_output(out))
    wait_for(lambda: len(parse_output(out)) > written + THROUGHPUT * TASKS, 60, 0.5, "output after failover")
    assert cluster.api(survivor).put(f"/connectors/{source}/stop").status_code == 204
    final = source_offsets(cluster.api(survivor).get(f"/connectors/{source}/offsets").json()["offsets"])
    assert set(final) == {f"{source}-{i}" for i in range(TASKS)}, final
    last = {i: final[f"{source}-{i}"] for i in range(TASKS)}

    def sink_has_everything() -> bool:
        seen = seqnos_by_task(parse_output(out))
        return all(max(seen.get(i, [-1])) >= last[i] - 1 for i in range(TASKS))

    wait_for(sink_has_everything, 60, 0.5, f"sink to reach seqnos {last}")
    seen = seqnos_by_task(parse_output(out))
    for i in range(TASKS):
        counts = Counter(seen[i])
        missing = sorted(set(range(last[i])) - set(counts))
        assert not missing, f"task {i}: {len(missing)} seqnos lost, first {missing[:10]}"
        duplicates = sum(c - 1 for c in counts.values())
        print(f"task {i}: {last[i]} records, {duplicates} duplicates")
        assert duplicates <= MAX_DUPLICATES_PER_TASK, f"task {i}: {duplicates} duplicates > {MAX_DUPLICATES_PER_TASK}"


def test_a_worker_busy_longer_than_the_session_timeout_stays_in_the_group(
    cluster: Cluster, bootstrap_servers: str
) -> None:
    # heartbeats have their own thread: a connector whose start() blocks the herder for longer than the
    # session timeout must not make its worker look dead (which would run its tasks twice)
    topic = Kafka(bootstrap_servers).create_topic(unique("busy"), partitions=1)
    steady = unique("steady")
    assert (
        cluster.api(0)
        .post(
            "/connectors",
            json={
                "name": steady,
                "config": {"connector.class": SOURCE, "topic": topic, "tasks.max": "3", "throughput": "5"},
            },
        )
        .status_code
        == 201
    )
    placed = {t["id"]: t["worker_id"] for t in cluster.wait_state(steady, "RUNNING", 3)["tasks"]}

    slow = unique("slow")
    block_ms = SESSION_TIMEOUT_MS + 2500
    assert (
        cluster.api(1)
        .post(
            "/connectors",
            json={
                "name": slow,
                "config": {
                    "connector.class": SOURCE,
                    "topic": topic,
                    "tasks.max": "1",
                    "throughput": "5",
                    "connector.start.block.ms": str(block_ms),
                },
            },
        )
        .status_code
        == 201
    )
    deadline = time.monotonic() + block_ms / 1000 + 1
    while time.monotonic() < deadline:
        body = cluster.status(steady, via=2)
        assert body is not None and {t["id"]: t["worker_id"] for t in body["tasks"]} == placed, body
        time.sleep(0.25)  # the poll interval of the watch for a placement that must not change
    cluster.wait_state(slow, "RUNNING", 1, timeout_s=30)
    assert {t["id"]: t["worker_id"] for t in cluster.wait_state(steady, "RUNNING", 3)["tasks"]} == placed
