"""KIP-618's control plane on the test broker: `PUT /connectors/{c}/fence` runs a real round of zombie
fencing (a live producer of the previous task generation can no longer commit)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from tests.integration.scenarios.helpers import Kafka, source_config
from tests.support.broker import unique
from tests.support.cluster import Cluster

pytestmark = pytest.mark.integration


def config_records(bootstrap_servers: str, topic: str, until: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The config topic's records (key -> last value) once `until` holds for them (30 s at most)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap_servers,
            "group.id": f"reader-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    records: dict[str, Any] = {}
    deadline = time.monotonic() + 30
    try:
        while not until(records):
            assert time.monotonic() < deadline, f"config topic {topic} never showed what was expected: {records}"
            for msg in consumer.consume(100, 0.2):
                if msg.error() is None and msg.key() is not None:
                    records[msg.key().decode()] = None if msg.value() is None else orjson.loads(msg.value())
    finally:
        consumer.close()
    return records


def cannot_commit(error: KafkaException) -> bool:
    """A fenced producer's commit: PRODUCER_FENCED (fatal) on Apache Kafka. Tansu never answers the EndTxn of
    a fenced epoch: the commit times out (retriable, and so on each retry), and the transaction stays
    uncommitted; a fenced producer's next transaction is refused (_FENCED, fatal) on both."""
    kafka_error = error.args[0]
    return kafka_error.fatal() or kafka_error.code() == KafkaError._TIMED_OUT


def test_the_fence_endpoint_fences_a_live_producer_of_the_previous_task_generation(
    bootstrap_servers: str, tmp_path: Path
) -> None:
    # exactly.once.source.support=disabled: no round runs unless asked for, as in the reference, which runs
    # one for `PUT /fence` whatever that setting says
    cluster = Cluster(tmp_path, bootstrap_servers, 1).start()
    try:
        group, config_topic = cluster.props["group.id"], cluster.props["config.storage.topic"]
        topic = Kafka(bootstrap_servers).create_topic(unique("fence-out"))
        name = unique("fenced")
        config = source_config(topic, tasks=2, **{"messages.per.task": 0})
        api = cluster.api(0)
        assert api.post("/connectors", json={"name": name, "config": config}).status_code == 201
        cluster.wait_state(name, "RUNNING", 2)
        # a first round fences nothing (no task count record yet) and records the task count
        assert api.put(f"/connectors/{name}/fence").status_code == 204
        config_records(bootstrap_servers, config_topic, lambda r: r.get(f"tasks-fencing-{name}") == {"task-count": 2})
        # a zombie task 1 of that generation, in the middle of a transaction
        zombie = Producer({"bootstrap.servers": bootstrap_servers, "transactional.id": f"{group}-{name}-1"})
        zombie.init_transactions(30)
        zombie.begin_transaction()
        zombie.produce(topic, value=b"from a zombie")
        zombie.flush(30)
        # the next generation has one task: a round fences both tasks of the previous one
        assert api.put(f"/connectors/{name}/config", json={**config, "tasks.max": "1"}).status_code == 200
        cluster.wait_state(name, "RUNNING", 1)
        assert api.put(f"/connectors/{name}/fence").status_code == 204
        with pytest.raises(KafkaException) as failure:
            zombie.commit_transaction(10)
        assert cannot_commit(failure.value), failure.value
        config_records(bootstrap_servers, config_topic, lambda r: r.get(f"tasks-fencing-{name}") == {"task-count": 1})
        # the same again changes nothing: every earlier generation is fenced
        assert api.put(f"/connectors/{name}/fence").status_code == 204
        assert api.put("/connectors/nope/fence").status_code == 404
    finally:
        cluster.stop()
