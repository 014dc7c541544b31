"""The committed view of a topic: what a read_committed consumer of Apache Kafka reads from it.

Exactly-once tests check what this view holds: every record of a committed transaction, none of an aborted
one. Against a real cluster (CONNECT_TEST_BOOTSTRAP_SERVERS) a plain read_committed consumer gives it. On
Tansu, the test broker, a read_committed consumer still sees the records of ABORTED transactions (its fetch
responses list no aborted transactions), so there the view comes from the partitions' record batches and
their transaction markers (`runtime.storage.committed_view`, built on kafka-python's record classes): this
stands in for Tansu's gap, and is the same code the worker reads its offsets topics with.
"""

from __future__ import annotations

import time
import uuid

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient

from runtime.storage.committed_view import CommittedReader, CommittedRecord

from .broker import EXTERNAL


def partition_count(bootstrap: str, topic: str, timeout_s: float = 10.0) -> int:
    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=timeout_s).topics.get(topic)
    if metadata is None or metadata.error is not None or not metadata.partitions:
        raise AssertionError(f"topic {topic} does not exist")
    return len(metadata.partitions)


def committed_records(
    bootstrap: str, topic: str, partitions: int | None = None, timeout_s: float = 30.0
) -> list[CommittedRecord]:
    """Every record of `topic` a read_committed consumer would read, partition by partition in offset order.
    Waits (up to `timeout_s`, then AssertionError) while a transaction before a partition's end is open."""
    count = partitions if partitions is not None else partition_count(bootstrap, topic)
    if EXTERNAL:
        return _read_committed_consumer(bootstrap, topic, count, timeout_s)
    reader = CommittedReader(topic, range(count), {"bootstrap.servers": bootstrap}, "committed-view-verifier")
    try:
        records = reader.read_to_high_watermark(timeout_s)
    except TimeoutError as exc:
        raise AssertionError(str(exc)) from None
    finally:
        reader.close()
    return sorted(records, key=lambda r: (r.partition, r.offset))


def committed_transactions(bootstrap: str, topic: str, partitions: int) -> int:
    """How many transactions `topic` holds committed, counted from its record batches and their markers (the
    committed view's reader, on any broker)."""
    reader = CommittedReader(topic, range(partitions), {"bootstrap.servers": bootstrap}, "transaction-counter")
    try:
        reader.read_to_high_watermark(30)
    finally:
        reader.close()
    return sum(log_filter.committed_transactions for log_filter in reader.filters.values())


def _read_committed_consumer(bootstrap: str, topic: str, count: int, timeout_s: float) -> list[CommittedRecord]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"committed-view-{uuid.uuid4().hex[:8]}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout_s)[1] for p in range(count)}
        consumer.assign([TopicPartition(topic, p, 0) for p in range(count)])
        records: list[CommittedRecord] = []
        deadline = time.monotonic() + timeout_s
        while True:
            positions = {tp.partition: tp.offset for tp in consumer.position([TopicPartition(topic, p) for p in ends])}
            # a read_committed consumer's position stops before an open transaction and passes markers
            if all(ends[p] == 0 or positions.get(p, -1) >= ends[p] for p in ends):
                return sorted(records, key=lambda r: (r.partition, r.offset))
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"Timed out after {timeout_s}s reading {topic} to its end: read_committed positions {positions} "
                    f"stay before the high watermarks {ends} (an open transaction)"
                )
            for msg in consumer.consume(1000, timeout=0.2):
                if msg.error() is None:
                    records.append(
                        CommittedRecord(msg.partition(), msg.offset(), msg.key(), msg.value(), msg.timestamp()[1])
                    )
    finally:
        consumer.close()
