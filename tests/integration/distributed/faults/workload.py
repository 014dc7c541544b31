"""The fault tests' workload: SequenceSource connectors with a partition per task, and the checks made
once the cluster is back: configs unchanged, every task RUNNING, offsets kept, no seqno lost, and no
task run by two workers at once for more than MAX_OVERLAP_S."""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from confluent_kafka import Consumer, Producer, TopicPartition

from tests.integration.scenarios.helpers import SOURCE, Kafka, source_offsets
from tests.support.broker import unique
from tests.support.cluster import Cluster
from tests.support.worker import wait_for

from .checker import PartitionReport, Record, analyse

THROUGHPUT = 50  # records per second per task: enough to see two writers interleave, cheap on 2 cores
# "a few seconds": a worker resumed from a freeze may run what was reassigned until it reads the newer
# assignment (package docs: up to one tick) and stops its tasks
MAX_OVERLAP_S = 3.0
CONVERGE_S = 45.0  # from the end of a fault: ten session timeouts
# A worker resumed from SIGSTOP writes UNASSIGNED for the connector and tasks it lost while frozen; both
# bugs below show in every test that freezes a worker owning a connector and tasks.
AGREE_S = 20.0  # once one worker shows everything RUNNING, the others read the same statuses within moments


@contextmanager
def frozen(pid: int) -> Iterator[None]:
    """SIGSTOP `pid` for the block; SIGCONT on the way out, also when the test fails inside it."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class Sequence:
    """One SequenceSource connector writing task i's seqnos into partition i of a topic of its own."""

    name: str
    topic: str
    tasks: int
    config: dict[str, str]

    @classmethod
    def create(cls, cluster: Cluster, bootstrap: str, tasks: int, via: int = 0, **extra: str) -> Sequence:
        seq = cls.define(bootstrap, tasks, **extra)
        response = cluster.api(via).post("/connectors", json={"name": seq.name, "config": seq.config})
        assert response.status_code == 201, response.text
        return seq

    @classmethod
    def define(cls, bootstrap: str, tasks: int, **extra: str) -> Sequence:
        """The topic, created now, and the config; the connector is left to the caller to create."""
        name = unique("seq")
        topic = Kafka(bootstrap).create_topic(unique("faults"), partitions=tasks)
        # a partition per task: besides making each partition one writer's sequence, Tansu can hide records
        # from a consumer tailing a partition several producers write at once (tests/support/broker.py)
        config = {
            "connector.class": SOURCE,
            "topic": topic,
            "tasks.max": str(tasks),
            "throughput": str(THROUGHPUT),
            "batch.size": "10",
            "task.own.partition": "true",
            **extra,
        }
        return cls(name, topic, tasks, config)

    def committed(self, cluster: Cluster, via: int = 0) -> dict[int, int]:
        """Committed offset ("saved": the next seqno) of each task that has one."""
        response = cluster.api(via).get(f"/connectors/{self.name}/offsets")
        assert response.status_code == 200, response.text
        saved = source_offsets(response.json()["offsets"])
        return {int(task.rsplit("-", 1)[1]): value for task, value in saved.items() if value is not None}

    def wait_committed_past(
        self, cluster: Cluster, floor: dict[int, int], via: int = 0, timeout_s: float = 60.0
    ) -> dict[int, int]:
        """Wait until every task has committed beyond `floor` (missing tasks count as -1)."""

        def check() -> dict[int, int] | None:
            now = self.committed(cluster, via)
            return now if len(now) == self.tasks and all(now[t] > floor.get(t, -1) for t in now) else None

        return wait_for(check, timeout_s, 0.25, f"{self.name}: every task committing past {floor}")

    def owners(self, cluster: Cluster, via: int = 0) -> dict[str, int]:
        """Tasks per worker id, from the status."""
        body = cluster.status(self.name, via) or {"tasks": []}
        counts: dict[str, int] = {}
        for task in body["tasks"]:
            counts[task["worker_id"]] = counts.get(task["worker_id"], 0) + 1
        return counts


def wait_all_running(
    cluster: Cluster, sequences: list[Sequence], live: list[int], timeout_s: float = CONVERGE_S
) -> list[str]:
    """Every connector and task RUNNING as the first live worker reports it, then the same statuses shown
    by every other live worker: what they show otherwise is returned, so the data checks still run."""
    problems = []
    for seq in sequences:
        try:
            cluster.wait_state(seq.name, "RUNNING", seq.tasks, via=live[0], timeout_s=timeout_s)
        except AssertionError as exc:
            problems.append(str(exc))
    if problems:
        return problems

    def disagreements() -> list[str]:
        shown = []
        for seq in sequences:
            body = cluster.status(seq.name, live[0])
            for via in live[1:]:
                other = cluster.status(seq.name, via)
                if other != body:
                    shown.append(f"worker {via} shows {seq.name} as {other} while worker {live[0]} shows {body}")
        return shown

    try:  # one deadline for every worker and connector
        wait_for(lambda: not disagreements(), AGREE_S, 0.25, "every live worker to show the same statuses")
    except AssertionError:
        return disagreements()
    return []


def read_partitions(bootstrap: str, topic: str, partitions: int, timeout_s: float = 60.0) -> dict[int, list[Record]]:
    """Every sequence record of `topic` by partition, in offset order, with its CreateTime: a marker is
    written to each partition and read back (Tansu's high watermark cannot be trusted)."""
    marker = f"marker-{uuid.uuid4().hex}".encode()
    producer = Producer({"bootstrap.servers": bootstrap})
    for p in range(partitions):
        producer.produce(topic, value=marker, key=b"__marker__", partition=p)
    assert producer.flush(30) == 0
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("fault-reader"),
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    found: dict[int, list[Record]] = {p: [] for p in range(partitions)}
    pending = set(range(partitions))
    deadline = time.monotonic() + timeout_s
    try:
        while pending and time.monotonic() < deadline:
            for msg in consumer.consume(1000, 0.5):
                if msg.error() or msg.partition() not in pending:
                    continue
                if msg.value() == marker:
                    pending.discard(msg.partition())
                elif msg.key() != b"__marker__":
                    value = json.loads(msg.value())
                    value = value.get("payload", value)
                    found[msg.partition()].append(Record(msg.offset(), int(value["seqno"]), msg.timestamp()[1]))
    finally:
        consumer.close()
    assert not pending, f"markers of partitions {pending} of {topic} not read back in {timeout_s}s"
    return found


def check_after_fault(
    cluster: Cluster,
    bootstrap: str,
    sequences: list[Sequence],
    live: list[int],
    before: dict[str, dict[int, int]],
    fault_ms: int,
) -> dict[str, list[PartitionReport]]:
    """The checks every fault test ends with. `before` holds each connector's committed offsets just
    before the fault began at `fault_ms` (wall clock, as the records' CreateTime)."""
    problems = wait_all_running(cluster, sequences, live)
    via = live[0]
    for seq in sequences:
        for i in live:
            response = cluster.api(i).get(f"/connectors/{seq.name}/config")
            assert response.status_code == 200, response.text
            if response.json() != {**seq.config, "name": seq.name}:
                problems.append(f"worker {i} shows {seq.name} with another config: {response.json()}")
    # the tasks do work again, and commit it
    for seq in sequences:
        seq.wait_committed_past(cluster, seq.committed(cluster, via), via)
    # paused, each partition has one writer again (the marker) while it is read: see read_partitions
    for seq in sequences:
        assert cluster.api(via).put(f"/connectors/{seq.name}/pause").status_code == 202
    reports: dict[str, list[PartitionReport]] = {}
    for seq in sequences:
        cluster.wait_state(seq.name, "PAUSED", seq.tasks, task_state="PAUSED", via=via, timeout_s=60)
        final = seq.committed(cluster, via)
        by_partition = read_partitions(bootstrap, seq.topic, seq.tasks)
        reports[seq.name] = [analyse(p, records) for p, records in sorted(by_partition.items())]
        for report in reports[seq.name]:
            task = report.partition
            print(
                f"{seq.name} task {task}: seqnos 0..{report.highest}, {len(report.runs)} runs, "
                f"committed {before[seq.name].get(task)} before the fault, {final.get(task)} at the end, "
                f"worst overlap {report.worst_overlap_s:.2f}s" + (f"; {report.runs}" if len(report.runs) > 1 else "")
            )
            if report.missing:
                problems.append(f"{seq.name} task {task}: seqnos lost: {report.missing[:20]}")
            if report.worst_overlap_s > MAX_OVERLAP_S:
                problems.append(f"{seq.name} task {task} ran on two workers at once: {report.overlaps}")
            floor = before[seq.name].get(task, 0)
            below = [run for run in report.starts_after(fault_ms) if run.first < floor]
            if below:
                problems.append(f"{seq.name} task {task} went back before its committed {floor}: {below}")
            if not floor <= final.get(task, 0) <= report.highest + 1:
                problems.append(
                    f"{seq.name} task {task}: committed {final.get(task)} outside {floor}..{report.highest + 1}"
                )
    assert not problems, "\n".join(problems)
    return reports
