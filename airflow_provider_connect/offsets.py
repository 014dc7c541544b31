"""Sink offset targets: parsing what users write, and deciding whether a sink has caught up.

Shared by SinkOffsetsSensor (poke/reschedule) and SinkOffsetsTrigger (deferrable).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from airflow_provider_connect.status import Evaluation, Verdict

TopicPartitionKey = tuple[str, int]


def parse_targets(targets: Any) -> dict[TopicPartitionKey, int]:
    """Accept `{"topic:partition": offset}`, `[{"topic", "partition", "offset"}]`, `[[topic, partition, offset]]`
    or Connect's own `[{"partition": {"kafka_topic", "kafka_partition"}, "offset": {"kafka_offset"}}]`."""
    out: dict[TopicPartitionKey, int] = {}
    if isinstance(targets, Mapping):
        for key, offset in targets.items():
            topic, _, partition = str(key).rpartition(":")
            if not topic or not partition.lstrip("-").isdigit():
                raise ValueError(f"Target key {key!r} must look like 'topic:partition'")
            out[(topic, int(partition))] = int(offset)
        return out
    for entry in targets or []:
        if isinstance(entry, (list, tuple)) and len(entry) == 3:
            out[(str(entry[0]), int(entry[1]))] = int(entry[2])
        elif isinstance(entry, Mapping) and "topic" in entry:
            out[(str(entry["topic"]), int(entry["partition"]))] = int(entry["offset"])
        elif isinstance(entry, Mapping) and isinstance(entry.get("partition"), Mapping):
            partition, offset = entry["partition"], entry.get("offset") or {}
            out[(str(partition["kafka_topic"]), int(partition["kafka_partition"]))] = int(offset["kafka_offset"])
        else:
            raise ValueError(f"Cannot read offset target {entry!r}")
    return out


def to_wire(targets: Mapping[TopicPartitionKey, int]) -> list[list[Any]]:
    """JSON-serialisable form (trigger kwargs)."""
    return [[t, p, o] for (t, p), o in sorted(targets.items())]


def committed_sink_offsets(offsets: Iterable[Mapping[str, Any]]) -> dict[TopicPartitionKey, int]:
    """Committed positions from GET /connectors/{c}/offsets of a sink (entries without an offset skipped)."""
    out: dict[TopicPartitionKey, int] = {}
    for entry in offsets:
        partition = entry.get("partition") or {}
        offset = entry.get("offset") or {}
        if "kafka_topic" not in partition or offset.get("kafka_offset") is None:
            continue
        out[(str(partition["kafka_topic"]), int(partition["kafka_partition"]))] = int(offset["kafka_offset"])
    return out


def evaluate_offsets(offsets: Sequence[Mapping[str, Any]], targets: Mapping[TopicPartitionKey, int]) -> Evaluation:
    """SUCCESS when every target partition's committed offset (next offset to read) is >= its target."""
    if not targets:
        return Evaluation(Verdict.SUCCESS, "no partitions to wait for")
    committed = committed_sink_offsets(offsets)
    behind = {tp: (committed.get(tp), want) for tp, want in targets.items() if committed.get(tp, -1) < want}
    if not behind:
        return Evaluation(Verdict.SUCCESS, f"all {len(targets)} partition(s) reached their target offsets")
    detail = ", ".join(f"{t}:{p} at {have} < {want}" for (t, p), (have, want) in sorted(behind.items())[:10])
    return Evaluation(Verdict.WAITING, f"{len(behind)} partition(s) behind: {detail}")


def fetch_topic_ends(
    kafka_config: Mapping[str, Any], topics: Sequence[str], timeout: float = 30.0
) -> dict[TopicPartitionKey, int]:
    """High watermarks of every partition of `topics` (the offsets a caught-up sink will have committed)."""
    try:  # optional: only this step reads Kafka itself (the provider's `kafka` extra)
        from confluent_kafka import Consumer, TopicPartition
    except ImportError as exc:
        raise ImportError(
            "Waiting for the ends of topics reads them from Kafka and needs confluent-kafka: "
            "pip install 'airflow-provider-connect[kafka]' (or give target offsets instead)"
        ) from exc

    consumer = Consumer(
        {"group.id": "airflow-provider-connect-probe", "enable.auto.commit": False, **dict(kafka_config)}
    )
    try:
        metadata = consumer.list_topics(timeout=timeout)
        ends: dict[TopicPartitionKey, int] = {}
        for topic in topics:
            meta = metadata.topics.get(topic)
            if meta is None or meta.error is not None:
                raise ValueError(f"Topic {topic!r} not found: {getattr(meta, 'error', None)}")
            for partition in meta.partitions:
                _low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=timeout)
                ends[(topic, partition)] = int(high)
        return ends
    finally:
        consumer.close()
