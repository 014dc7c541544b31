"""A source record's own Kafka partition and timestamp reach the broker (a worker that batches sends must not
drop them: confluent-kafka's produce_batch ignores a message's partition and refuses timestamps)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from tests.integration.plugins.placed_source import TIMESTAMP_MS
from tests.integration.scenarios.helpers import Kafka
from tests.support.broker import unique
from tests.support.worker import WorkerProcess, wait_for

pytestmark = pytest.mark.integration

PARTITIONS = 3
RECORDS = 120


def test_records_land_in_their_partition_with_their_timestamp(bootstrap_servers: str, tmp_path: Path) -> None:
    topic = Kafka(bootstrap_servers).create_topic(unique("placed"), PARTITIONS)
    props = {"value.converter": "org.apache.kafka.connect.storage.StringConverter"}
    with WorkerProcess(tmp_path / "w", bootstrap_servers, props=props) as worker:
        config = {
            "connector.class": "tests.integration.plugins.placed_source.PlacedSourceConnector",
            "topic": topic,
            "partitions": str(PARTITIONS),
            "records": str(RECORDS),
            "tasks.max": "1",
        }
        assert worker.client.post("/connectors", json={"name": unique("placed"), "config": config}).status_code == 201
        consumer = Consumer(
            {
                "bootstrap.servers": bootstrap_servers,
                "group.id": uuid.uuid4().hex,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        seen: dict[int, tuple[int, tuple[int, int]]] = {}

        def all_arrived() -> bool:
            for message in consumer.consume(500, 0.5):
                if message.error() is None:
                    n = int(message.value().decode().split("-")[1])
                    seen[n] = (message.partition(), message.timestamp())
            return len(seen) == RECORDS

        try:
            wait_for(all_arrived, 60, 0, "every record")
        finally:
            consumer.close()
    for n, (partition, (kind, timestamp)) in seen.items():
        assert partition == n % PARTITIONS, (n, partition)
        if n % 2:
            assert (kind, timestamp) == (1, TIMESTAMP_MS + n), (n, kind, timestamp)  # 1: CreateTime, as set
