"""The combined offset store of a source connector with its own offsets topic (KIP-618, KAFKA-15018),
and the choice of store per connector (Worker.offsetStoreForRegularSource*)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from runtime.storage.connector_offset_store import ConnectorOffsetStore
from runtime.storage.files import MemoryOffsetStore
from runtime.storage.kafka_log import TopicSpec
from runtime.storage.kafka_offset_store import KafkaOffsetStore
from runtime.worker.offsets import OffsetsManager, SourceOffsetStores
from runtime.worker_config import WorkerConfig


class RecordingStore(MemoryOffsetStore):
    """A memory store that logs each write (into a log shared by both stores) and can refuse writes."""

    def __init__(self, label: str, journal: list[tuple[str, dict[bytes, bytes | None]]]) -> None:
        super().__init__()
        self.label = label
        self.journal = journal
        self.fail = False
        self.started = 0
        self.stopped = 0

    def start(self) -> None:
        self.started += 1

    def stop(self) -> None:
        self.stopped += 1

    def set(self, entries: Mapping[bytes, bytes | None]) -> None:
        if self.fail:
            raise RuntimeError(f"{self.label} is down")
        self.journal.append((self.label, dict(entries)))
        super().set(entries)


@pytest.fixture
def journal() -> list[tuple[str, dict[bytes, bytes | None]]]:
    return []


@pytest.fixture
def worker(journal) -> RecordingStore:
    return RecordingStore("worker", journal)


@pytest.fixture
def connector(journal) -> RecordingStore:
    return RecordingStore("connector", journal)


def test_reads_come_from_the_connector_store_and_list_the_partitions_of_both(worker, connector) -> None:
    # as Kafka Connect 3.9: the connector store answers for every key, so a partition known only to the
    # worker store is listed (union) but has no offset
    worker.set({b"a": b"1", b"b": b"2"})
    connector.set({b"b": b"20", b"c": b"30"})
    store = ConnectorOffsetStore(worker, connector, "own-topic")
    assert store.get([b"a", b"b", b"c", b"d"]) == {b"a": None, b"b": b"20", b"c": b"30", b"d": None}
    assert dict(store.items()) == {b"a": b"1", b"b": b"20", b"c": b"30"}
    assert ConnectorOffsetStore.worker_only(worker).get([b"a", b"d"]) == {b"a": b"1", b"d": None}


def test_offsets_requests_list_worker_only_partitions_without_an_offset(worker, connector) -> None:
    from runtime.storage.offset_codec import encode_key, encode_value

    worker.set(
        {encode_key("c", {"p": 1}): encode_value({"n": 1}), encode_key("other", {"p": 1}): encode_value({"n": 9})}
    )
    connector.set({encode_key("c", {"p": 2}): encode_value({"n": 2})})
    manager = OffsetsManager(WorkerConfig(WORKER_PROPS), worker)
    listed = manager._source_partitions("c", ConnectorOffsetStore(worker, connector, "own-topic"))
    assert sorted(listed, key=lambda e: e[0]["p"]) == [({"p": 1}, None), ({"p": 2}, {"n": 2})]
    assert manager._source_partitions("c") == [({"p": 1}, {"n": 1})]


def test_regular_writes_go_to_the_connector_store_then_a_copy_to_the_worker_store(worker, connector, journal) -> None:
    ConnectorOffsetStore(worker, connector, "own-topic").set({b"a": b"1"})
    assert journal == [("connector", {b"a": b"1"}), ("worker", {b"a": b"1"})]


def test_tombstones_reach_the_worker_store_first(worker, connector, journal) -> None:
    worker.set({b"a": b"1", b"b": b"2"})
    journal.clear()
    store = ConnectorOffsetStore(worker, connector, "own-topic")
    store.set({b"a": None, b"b": b"5"})
    assert journal == [("worker", {b"a": None}), ("connector", {b"a": None, b"b": b"5"}), ("worker", {b"b": b"5"})]
    assert store.get([b"a", b"b"]) == {b"a": None, b"b": b"5"}


def test_a_failed_tombstone_write_to_the_worker_store_fails_the_whole_write(worker, connector, journal) -> None:
    worker.fail = True
    with pytest.raises(RuntimeError, match="worker is down"):
        ConnectorOffsetStore(worker, connector, "own-topic").set({b"a": None, b"b": b"5"})
    assert journal == []  # the connector store was never written


def test_a_failed_copy_of_regular_offsets_is_only_logged(worker, connector, journal) -> None:
    worker.fail = True
    ConnectorOffsetStore(worker, connector, "own-topic").set({b"b": b"5"})
    assert journal == [("connector", {b"b": b"5"})]


def test_a_failed_connector_write_fails_and_skips_the_copy(worker, connector, journal) -> None:
    connector.fail = True
    with pytest.raises(RuntimeError, match="connector is down"):
        ConnectorOffsetStore(worker, connector, "own-topic").set({b"b": b"5"})
    assert journal == []


def test_only_the_connector_store_is_started_and_stopped(worker, connector) -> None:
    store = ConnectorOffsetStore(worker, connector, "own-topic")
    store.start()
    store.stop()
    assert (connector.started, connector.stopped) == (1, 1) and (worker.started, worker.stopped) == (0, 0)
    alone = ConnectorOffsetStore.worker_only(worker)
    alone.start()
    alone.stop()
    alone.set({b"x": b"1"})
    assert (worker.started, worker.stopped) == (0, 0) and worker.get([b"x"]) == {b"x": b"1"}


WORKER_PROPS = {"bootstrap.servers": "broker-a:9092,broker-b:9092", "group.id": "g"}
WORKER_TOPIC = TopicSpec("connect-offsets", 7, 2, "offset.storage.topic")


def stores(worker_store, topic: TopicSpec | None = WORKER_TOPIC) -> SourceOffsetStores:
    return SourceOffsetStores(WorkerConfig(WORKER_PROPS), worker_store, topic, dict(WORKER_PROPS))


def test_without_the_key_or_in_standalone_mode_a_connector_uses_the_worker_store(worker) -> None:
    assert not stores(worker).for_connector("c", {}).has_connector_store
    assert not stores(worker).for_connector("c", {"offsets.storage.topic": "  "}).has_connector_store
    assert not stores(worker, topic=None).for_connector("c", {"offsets.storage.topic": "own"}).has_connector_store


def test_the_worker_topic_on_the_worker_cluster_is_just_the_worker_store(worker) -> None:
    config = {
        "offsets.storage.topic": "connect-offsets",
        "producer.override.bootstrap.servers": "broker-b:9092,broker-a:9092",
    }
    assert not stores(worker).for_connector("c", config).has_connector_store


def test_a_connector_topic_lives_on_the_producer_cluster_with_the_worker_topic_settings(worker) -> None:
    config = {
        "offsets.storage.topic": "connect-offsets",
        "producer.override.bootstrap.servers": "other:9092",
        "admin.override.socket.timeout.ms": "1234",
        "producer.override.linger.ms": "7",
        "producer.override.max.request.size": "100",
    }  # Java-only: librdkafka would refuse the config
    store = stores(worker).for_connector("c", config)
    assert store.has_connector_store and store.worker_store is worker
    kafka_store = store.connector_store
    assert isinstance(kafka_store, KafkaOffsetStore)
    log = kafka_store.log
    assert (log.spec.name, log.spec.partitions, log.spec.replication_factor, log.spec.setting) == (
        "connect-offsets",
        7,
        2,
        "offsets.storage.topic",
    )
    assert log._producer_conf["bootstrap.servers"] == "other:9092" and log._producer_conf["linger.ms"] == "7"
    assert "max.request.size" not in log._producer_conf
    assert log._admin_conf["bootstrap.servers"] == "other:9092" and log._admin_conf["socket.timeout.ms"] == "1234"
    assert log._consumer_conf["bootstrap.servers"] == "other:9092"


def test_a_connector_store_that_fails_to_start_is_closed(worker, connector) -> None:
    def refuse() -> None:
        raise RuntimeError("cannot create the topic")

    connector.start = refuse  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="cannot create the topic"):
        ConnectorOffsetStore(worker, connector, "own-topic").start()
    assert connector.stopped == 1
