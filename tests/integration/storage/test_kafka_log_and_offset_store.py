"""KafkaBasedLog and KafkaOffsetStore on a real broker (Tansu)."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from runtime.storage import offset_codec
from runtime.storage.kafka_log import KafkaBasedLog, TopicConfigError, TopicSpec, ensure_topic
from runtime.storage.kafka_offset_store import KafkaOffsetStore
from tests.support.broker import unique

from .conftest import produce_raw, read_raw, spec

pytestmark = pytest.mark.integration


def java_partition(key: bytes, partitions: int) -> int:
    """Kafka's default partitioner for keyed records: murmur2(key) & 0x7fffffff % partitions."""
    m, r, length = 0x5BD1E995, 24, len(key)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    for i in range(0, length - length % 4, 4):
        k = int.from_bytes(key[i : i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    tail = length % 4
    base = length - tail
    if tail == 3:
        h ^= key[base + 2] << 16
    if tail >= 2:
        h ^= key[base + 1] << 8
    if tail >= 1:
        h ^= key[base]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return (h & 0x7FFFFFFF) % partitions


@pytest.mark.parametrize("strategy", ["watermark", "sentinel"])
def test_read_to_end_sees_every_record_of_batched_writes(bootstrap_servers, client, strategy):
    # Tansu's high watermark is the last batch's base offset + 1: a lingering producer writes batches of
    # many records, and the log must still hand over all of them before start()/read_to_end() return.
    topic = spec("log", 3)
    seen: list[bytes] = []
    log = KafkaBasedLog(topic, client, lambda k, v, p, o: seen.append(k), read_strategy=strategy)
    log.start()
    try:
        produce_raw(bootstrap_servers, topic.name, [(b"a%03d" % i, b"x") for i in range(60)], linger_ms=50)
        log.read_to_end(10)
        assert sorted(seen) == sorted(b"a%03d" % i for i in range(60))
        produce_raw(bootstrap_servers, topic.name, [(b"b%03d" % i, b"y") for i in range(40)], linger_ms=50)
        log.read_to_end(10)
        assert len(seen) == 100
    finally:
        log.stop()
    # a fresh log replays everything on start (markers of the sentinel strategy are not records)
    replayed: list[bytes] = []
    again = KafkaBasedLog(topic, client, lambda k, v, p, o: replayed.append(k), read_strategy=strategy)
    again.start()
    again.stop()
    assert sorted(replayed) == sorted(seen)


def test_topics_are_created_compacted_and_checked_when_present(bootstrap_servers, client):
    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    created = spec("offset", 25)
    assert ensure_topic(admin, created) == 25
    assert ensure_topic(admin, created) == 25  # present and fine: no error
    from confluent_kafka.admin import ConfigResource

    entries = next(iter(admin.describe_configs([ConfigResource("topic", created.name)]).values())).result(10)
    assert entries["cleanup.policy"].value == "compact"

    deleting = unique("connect-delete-policy")
    admin.create_topics([NewTopic(deleting, 1, 1, config={"cleanup.policy": "delete"})])[deleting].result(10)
    with pytest.raises(TopicConfigError, match="cleanup.policy=compact"):
        ensure_topic(admin, TopicSpec(deleting, 1, 1, "offset.storage.topic"))

    two = unique("connect-two-partitions")
    admin.create_topics([NewTopic(two, 2, 1, config={"cleanup.policy": "compact"})])[two].result(10)
    with pytest.raises(TopicConfigError, match="single partition"):
        ensure_topic(admin, TopicSpec(two, 1, 1, "config.storage.topic", single_partition=True))


def test_offsets_round_trip_with_reference_bytes_and_partitioning(bootstrap_servers, client):
    topic = spec("offset", 25)
    store = KafkaOffsetStore(topic, client)
    store.start()
    keys = {f"file-{i}": offset_codec.encode_key("conn-a", {"filename": f"/data/file-{i}.txt"}) for i in range(5)}
    try:
        store.set({k: offset_codec.encode_value({"position": i * 10}) for i, k in enumerate(keys.values())})
        store.set({keys["file-4"]: None})  # reset of one partition
        assert store.get([keys["file-0"], keys["file-4"]]) == {keys["file-0"]: b'{"position":0}', keys["file-4"]: None}
    finally:
        store.stop()

    assert keys["file-1"] == b'["conn-a",{"filename":"/data/file-1.txt"}]'
    raw = read_raw(bootstrap_servers, topic.name, 25, expect_at_least=6)
    assert len(raw) == 6
    for partition, key, _ in raw:  # where a Java worker would have written (and compacted) the same key
        assert partition == java_partition(key, 25)
    assert (java_partition(keys["file-4"], 25), keys["file-4"], None) in raw

    reopened = KafkaOffsetStore(topic, client)
    reopened.start()
    try:
        assert dict(reopened.items()) == {keys[f"file-{i}"]: b'{"position":%d}' % (i * 10) for i in range(4)}
    finally:
        reopened.stop()


def test_offset_reader_skips_foreign_records(bootstrap_servers, client):
    topic = spec("offset", 2)
    store = KafkaOffsetStore(topic, client)
    store.start()
    try:
        good = offset_codec.encode_key("c", {"p": 1})
        produce_raw(bootstrap_servers, topic.name, [(None, b"{}"), (b"garbage", b"\x00\x01"), (good, b'{"o":1}')])
        assert dict(store.items())[good] == b'{"o":1}'
    finally:
        store.stop()
