"""Workers started at the same instant on an empty cluster (a fresh group, its internal topics not yet
created): they race to create the topics and to lead. One group must come out of it, with the topics
as configured, one placement every worker reports, and every task run once. Two start together and the
third joins them (as the issue puts it), and, the wider race, all three together."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from confluent_kafka.admin import AdminClient

from tests.support.cluster import Cluster, start_together

from .workload import Sequence, check_after_fault, now_ms

TASKS = 6


@pytest.mark.parametrize("together", [2, 3])
def test_workers_started_at_the_same_instant_on_an_empty_cluster(
    new_cluster: Callable[..., Cluster], bootstrap_servers: str, together: int
) -> None:
    cluster = new_cluster(bootstrap_servers)
    fault_ms = now_ms()
    start_together(cluster.workers[:together])
    for worker in cluster.workers[together:]:
        worker.start()
    topics = AdminClient({"bootstrap.servers": bootstrap_servers}).list_topics(timeout=10).topics
    expected = {
        cluster.props["config.storage.topic"]: 1,
        cluster.props["offset.storage.topic"]: 3,
        cluster.props["status.storage.topic"]: 3,
    }
    assert {name: len(topics[name].partitions) for name in expected if name in topics} == expected
    seq = Sequence.create(cluster, bootstrap_servers, TASKS, via=1)
    # one placement, as every worker reports it, with every worker running tasks: one group, not two
    placements = [cluster.wait_state(seq.name, "RUNNING", TASKS, via=i, timeout_s=60) for i in range(3)]
    assert all(p == placements[0] for p in placements), placements
    assert {t["worker_id"] for t in placements[0]["tasks"]} == {cluster.worker_id(i) for i in range(3)}
    check_after_fault(cluster, bootstrap_servers, [seq], [0, 1, 2], {seq.name: {}}, fault_ms)
