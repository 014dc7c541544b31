"""A worker whose JoinGroup the group coordinator refuses for good (kafka-python's fatal answers, on which the
reference's worker exits) stops at start-up naming the answer and what to change, instead of retrying the join
until its start times out. Here: a consumer group already uses the worker's group.id."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Consumer

from tests.integration.scenarios.helpers import Kafka
from tests.support.broker import unique
from tests.support.cluster import Cluster
from tests.support.worker import wait_for

pytestmark = pytest.mark.integration


def test_a_group_id_a_consumer_group_uses_stops_the_worker_naming_it(bootstrap_servers: str, tmp_path: Path) -> None:
    cluster = Cluster(tmp_path, bootstrap_servers, 1)
    group = cluster.props["group.id"]
    topic = Kafka(bootstrap_servers).create_topic(unique("taken-group"))
    assigned: list[object] = []
    consumer = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": group, "session.timeout.ms": 6000})
    consumer.subscribe([topic], on_assign=lambda c, partitions: assigned.append(partitions))
    try:

        def joined() -> bool:  # a member of the group, with the consumer protocol, from then on
            consumer.poll(0.2)
            return bool(assigned)

        wait_for(joined, 60, 0, "the consumer to join its group")
        worker = cluster.workers[0]
        with pytest.raises(RuntimeError, match="worker exited with 2") as failure:
            worker.start(timeout_s=60)
        message = str(failure.value)
        assert f"This worker cannot join group {group}" in message, message
        assert "INCONSISTENT_GROUP_PROTOCOL" in message and "give this Connect cluster a group.id of its own" in message
        worker.stop()
    finally:
        consumer.close()
