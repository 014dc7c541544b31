"""Helpers for the Kafka-backed store tests (real Tansu broker via the `bootstrap_servers` fixture)."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from runtime.storage.kafka_log import TopicSpec
from tests.support.broker import unique


def read_raw(bootstrap: str, topic: str, partitions: int, expect_at_least: int, timeout_s: float = 10.0):
    """Every record of `topic` as (partition, key, value), in offset order per partition."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("raw"), "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    records = []
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is None:
                if len(records) >= expect_at_least:
                    break
                continue
            if msg.error():
                continue
            records.append((msg.partition(), msg.key(), msg.value()))
    finally:
        consumer.close()
    return records


def produce_raw(bootstrap: str, topic: str, records, partition: int | None = None, linger_ms: int = 0) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": linger_ms, "partitioner": "murmur2_random"})
    for key, value in records:
        kwargs = {} if partition is None else {"partition": partition}
        producer.produce(topic, key=key, value=value, **kwargs)
    assert producer.flush(10) == 0


@pytest.fixture
def client(bootstrap_servers: str) -> dict[str, str]:
    return {"bootstrap.servers": bootstrap_servers, "group.id": unique("connect-test")}


def spec(kind: str, partitions: int) -> TopicSpec:
    return TopicSpec(unique(f"connect-{kind}"), partitions, 1, f"{kind}.storage.topic")
