"""KIP-618's race on a real worker: a zombie's producer init fences the task the group runs here (a worker frozen
between its check that the task is its own and its producer's init, woken after the group moved the task).
The reference leaves that task FAILED. Here the worker that owns it restarts it, which fences the zombie back,
and the task resumes from its committed offsets: every seqno exactly once. Once per placement of the group, so
a second fence in the same placement leaves it FAILED, for a person to restart (runtime/herder/local_work.py).

The zombie is a bare producer with the task's transactional id: what a zombie worker's init does to the broker.
Where Tansu forces a workaround: the zombie's init lands while the connector is paused, between two of the task's
transactions, and the task meets the fence when it resumes. A fence that lands on a commit in flight sometimes
leaves that transaction on Tansu with neither marker, for good, so every read_committed reader of the offsets
topic (the restarted task's first of all) waits on it; Apache Kafka's fence aborts or completes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaException, Producer

from tests.support.cluster import Cluster
from tests.support.worker import wait_for

from .faults.workload import Sequence
from .test_exactly_once_failover import seqnos_by_partition
from .test_zombie_fencing import cannot_commit

pytestmark = pytest.mark.integration


def init_zombie(bootstrap: str, transactional_id: str) -> Producer:
    zombie = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id})
    zombie.init_transactions(30)
    return zombie


def task_status(cluster: Cluster, name: str) -> dict[str, Any] | None:
    body = cluster.status(name)
    return body["tasks"][0] if body is not None and body["tasks"] else None


def test_a_task_a_zombie_fenced_restarts_fences_it_back_and_loses_nothing(
    bootstrap_servers: str, tmp_path: Path
) -> None:
    cluster = Cluster(tmp_path, bootstrap_servers, 1, **{"exactly.once.source.support": "enabled"}).start()
    try:
        seq = Sequence.create(
            cluster,
            bootstrap_servers,
            1,
            **{"exactly.once.support": "required", "transaction.boundary": "poll"},
        )
        cluster.wait_state(seq.name, "RUNNING", 1, timeout_s=60)
        floor = seq.wait_committed_past(cluster, {})
        transactional_id = f"{cluster.props['group.id']}-{seq.name}-0"

        log = cluster.workers[0].log_path

        def logged(line: str) -> None:
            wait_for(lambda: line in log.read_text(), 30, 0.2, f"the worker's log to say {line!r}")

        def fence_the_task() -> Producer:
            """A zombie's init, between two of the task's transactions; the task meets the fence as it resumes."""
            api = cluster.api(0)
            assert api.put(f"/connectors/{seq.name}/pause").status_code == 202
            cluster.wait_state(seq.name, "PAUSED", 1, task_state="PAUSED")
            zombie = init_zombie(bootstrap_servers, transactional_id)
            assert api.put(f"/connectors/{seq.name}/resume").status_code == 202
            return zombie

        zombie = fence_the_task()
        logged("restarting it, which fences the zombie")
        floor = seq.wait_committed_past(cluster, seq.committed(cluster))  # the new instance commits
        zombie.begin_transaction()
        zombie.produce(seq.topic, value=b"from a zombie")
        with pytest.raises(KafkaException) as failure:
            zombie.commit_transaction(10)
        assert cannot_commit(failure.value), failure.value  # the restarted task's init fenced it back
        zombie.purge()  # what it holds can never be sent: destroying it must not wait for it

        # a second fence in the same placement: the task stays FAILED, saying why, until someone restarts it
        fence_the_task()
        logged("leaving it FAILED")
        failed = task_status(cluster, seq.name)
        assert failed is not None and failed["state"] == "FAILED", failed
        assert f"(transactional id {transactional_id}) was fenced out" in failed["trace"], failed
        assert cluster.api(0).post(f"/connectors/{seq.name}/tasks/0/restart").status_code == 204
        floor = seq.wait_committed_past(cluster, floor)

        assert cluster.api(0).put(f"/connectors/{seq.name}/stop").status_code == 204
        cluster.wait_state(seq.name, "STOPPED", 0)
        last = seq.committed(cluster)[0]
        # every seqno once, none missing: each instance resumed from the offsets the one before it committed
        assert seqnos_by_partition(bootstrap_servers, seq) == {0: list(range(last))}
    finally:
        cluster.stop()
