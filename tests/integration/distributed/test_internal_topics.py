"""Internal topics of a distributed worker: created compacted (with the configured partition counts) when
missing, checked when present: a worker refuses to start on a non-compacted one (exit code 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from tests.support.cluster import Cluster
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.integration


def test_topics_are_created_compacted_with_the_configured_partitions(bootstrap_servers: str, tmp_path: Path) -> None:
    cluster = Cluster(tmp_path, bootstrap_servers, 1)
    try:
        cluster.start()
        admin = AdminClient({"bootstrap.servers": bootstrap_servers})
        metadata = admin.list_topics(timeout=10).topics
        expected = {
            cluster.props["config.storage.topic"]: 1,
            cluster.props["offset.storage.topic"]: 3,
            cluster.props["status.storage.topic"]: 3,
        }
        for topic, partitions in expected.items():
            assert len(metadata[topic].partitions) == partitions, topic
            resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
            configs = next(iter(admin.describe_configs([resource]).values())).result(10)
            assert configs["cleanup.policy"].value == "compact", topic
    finally:
        cluster.stop()


def test_a_non_compacted_status_topic_stops_the_worker(bootstrap_servers: str, tmp_path: Path) -> None:
    cluster = Cluster(tmp_path, bootstrap_servers, 1)
    status_topic = cluster.props["status.storage.topic"]
    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    admin.create_topics([NewTopic(status_topic, 1, 1, config={"cleanup.policy": "delete"})])[status_topic].result(10)
    worker: WorkerProcess = cluster.workers[0]
    with pytest.raises(RuntimeError, match="worker exited with 2") as failure:
        worker.start(timeout_s=60)
    assert "status.storage.topic" in str(failure.value) and "cleanup.policy=compact" in str(failure.value)
    worker.stop()
