"""A rolling restart of all three workers (SIGTERM, start again on the same port, so the same worker id),
one at a time, each back in the group and running tasks before the next goes: the leader moves along,
and the tasks of each stopped worker resume elsewhere from their committed offsets, then come back."""

from __future__ import annotations

from collections.abc import Callable

from tests.support.cluster import Cluster
from tests.support.worker import wait_for

from .workload import Sequence, check_after_fault, now_ms

TASKS = 6


def test_a_rolling_restart_of_every_worker(new_cluster: Callable[..., Cluster], bootstrap_servers: str) -> None:
    cluster = new_cluster(bootstrap_servers).start()
    seq = Sequence.create(cluster, bootstrap_servers, TASKS)
    cluster.wait_state(seq.name, "RUNNING", TASKS, timeout_s=60)
    before = seq.wait_committed_past(cluster, {})
    fault_ms = now_ms()
    for i in range(len(cluster.workers)):
        other = (i + 1) % len(cluster.workers)
        cluster.workers[i].stop()
        cluster.wait_state(seq.name, "RUNNING", TASKS, via=other, timeout_s=60, exclude_worker=cluster.worker_id(i))
        cluster.clients.pop(i).close()  # a new process: a new connection
        cluster.workers[i].start()
        # back: the balanced assignment hands it tasks again, and they run
        wait_for(
            lambda: seq.owners(cluster, other).get(cluster.worker_id(i)), 60, 0.25, f"worker {i} running tasks again"
        )
        cluster.wait_state(seq.name, "RUNNING", TASKS, via=other, timeout_s=60)
    check_after_fault(cluster, bootstrap_servers, [seq], [0, 1, 2], {seq.name: before}, fault_ms)
