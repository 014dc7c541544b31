"""A compacted Kafka topic read to its end and then tailed: the backbone of the distributed stores.

Like the reference's KafkaBasedLog: the topic is created when missing (cleanup.policy=compact) and
checked when present; a consumer with every partition assigned (no group membership, no commits)
replays it from the beginning on a background thread, calling `on_record` for each record in log
order; writes go through a producer with acks=all, one request in flight (so a retry cannot reorder
records) and Java's murmur2 partitioner (so a key lands in the partition a Java worker puts it in,
which compaction and readers of either implementation rely on).

Reading "to the end" has two strategies:
- "watermark" (default, writes nothing): take every partition's latest offset (ListOffsets) and consume
  until each position reaches it, then drain what the client has already fetched. The drain matters on
  brokers such as Tansu whose high watermark is the *base offset of the last batch* + 1: the rest of that
  batch arrives in the same fetch response, so it is in the client's queue by the time the batch's first
  record is consumed. On Apache Kafka the drain is a no-op.
- "sentinel" (robust on any broker): write a tombstone with a private key prefix to every partition and
  consume until each comes back. Readers of this module skip those keys; the Java reference logs one
  "invalid key" line per marker and ignores it; compaction removes them.
Own writes are made visible without either: `send()` returns the offsets the broker acknowledged and
`wait_until_consumed()` waits for the reader to pass them.

A log whose consumer settings say `isolation.level=read_committed` (the offsets topics) is read as a
read_committed consumer of Apache Kafka reads it, on any broker: from its record batches and their
transaction markers (`committed_view`), since some brokers (Tansu) leave aborted records visible to
read_committed consumers. Its position then stops before the first open transaction, so reading such a log
to its end waits for the transactions open at that moment to end, as the reference's readToEnd does.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, OffsetSpec

if TYPE_CHECKING:  # imported where a read_committed log starts: it loads kafka-python (0.25 s of CPU), which
    # a worker without exactly-once, and every task process, would otherwise pay at start
    from .committed_view import CommittedReader

log = logging.getLogger(__name__)

_Client = TypeVar("_Client", Producer, AdminClient)  # what _require hands back, started

SENTINEL_PREFIX = b"__connect-read-to-end-marker-"


def _position(msg: Message) -> tuple[int, int]:
    """(partition, offset) of a delivery report; -1 where unknown, as Kafka's RecordMetadata (a successful
    report always has both)."""
    partition, offset = msg.partition(), msg.offset()
    return (-1 if partition is None else partition, -1 if offset is None else offset)


RecordCallback = Callable[[bytes | None, bytes | None, int, int], None]


class KafkaStoreError(RuntimeError):
    """A Kafka-backed store could not read or write its topic."""


class TopicConfigError(KafkaStoreError):
    """An existing internal topic does not have the settings the store needs."""


@dataclass(frozen=True)
class TopicSpec:
    """An internal topic and the worker property that named it (for messages)."""

    name: str
    partitions: int
    replication_factor: int = -1  # -1: the broker's default
    setting: str = ""
    purpose: str = "the Connect cluster's state"
    single_partition: bool = False


PRODUCER_SETTINGS = {
    "acks": "all",
    "max.in.flight.requests.per.connection": "1",
    "partitioner": "murmur2_random",  # Java's default partitioner for keyed records
    "linger.ms": "0",
}
CONSUMER_SETTINGS = {
    "enable.auto.commit": "false",
    "enable.auto.offset.store": "false",
    "auto.offset.reset": "earliest",
    "fetch.queue.backoff.ms": "0",
}
# How long a fetch may wait at the broker for new records. Apache Kafka answers a waiting fetch as soon as
# a record arrives, but some brokers (Tansu) hold it for the whole wait: with librdkafka's 500 ms default,
# every hop through an internal topic (a write read back, a status seen by the leader) then costs ~250 ms
# on average. 100 ms bounds that at a small cost: idle fetches of a few partitions, 10 per second.
# The worker's client settings may override it.
FETCH_WAIT_MAX_MS = "100"
# The reader thread's poll timeout: also how soon it notices a drain request (see read_to_end).
READER_POLL_S = 0.02
CONSUME_BATCH = 1000  # records per poll of the reader


def ensure_topic(admin: AdminClient, spec: TopicSpec, timeout_s: float = 30.0) -> int:
    """Create the topic when missing; check cleanup.policy (and the partition count); return it."""
    partitions = _partition_count(admin, spec.name, timeout_s)
    if partitions is None:
        topic = NewTopic(
            spec.name,
            num_partitions=spec.partitions,
            replication_factor=spec.replication_factor,
            config={"cleanup.policy": "compact"},
        )
        try:
            admin.create_topics([topic], operation_timeout=timeout_s)[spec.name].result(timeout_s)
            log.info(
                "Created topic %s (partitions=%d, replication factor=%d, cleanup.policy=compact)",
                spec.name,
                spec.partitions,
                spec.replication_factor,
            )
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:  # another worker won the race
                raise KafkaStoreError(f"Could not create topic {spec.name}: {exc.args[0].str()}") from exc
        partitions = _wait_for_partitions(admin, spec.name, timeout_s)
    _check_cleanup_policy(admin, spec, timeout_s)
    if spec.single_partition and partitions != 1:
        raise TopicConfigError(
            f"Topic '{spec.name}' supplied via the '{spec.setting}' property is required to have a single partition "
            f"in order to guarantee consistency of connector configurations, but it has {partitions} partitions."
        )
    return partitions


def _partition_count(admin: AdminClient, topic: str, timeout_s: float) -> int | None:
    # all-topics metadata: asking for one topic by name could auto-create it with broker defaults
    metadata = admin.list_topics(timeout=timeout_s)
    found = metadata.topics.get(topic)
    if found is None or found.error is not None or not found.partitions:
        return None
    return len(found.partitions)


def _wait_for_partitions(admin: AdminClient, topic: str, timeout_s: float) -> int:
    deadline = time.monotonic() + timeout_s
    while True:
        count = _partition_count(admin, topic, timeout_s)
        if count:
            return count
        if time.monotonic() > deadline:
            raise KafkaStoreError(f"Topic {topic} was created but its metadata did not appear within {timeout_s}s")
        time.sleep(0.05)


def _check_cleanup_policy(admin: AdminClient, spec: TopicSpec, timeout_s: float) -> None:
    try:
        future = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, spec.name)])
        entries = next(iter(future.values())).result(timeout_s)
    except Exception as exc:  # noqa: BLE001 - brokers without DescribeConfigs: warn, as the reference does
        log.warning("Could not verify the cleanup.policy of topic %s: %s", spec.name, exc)
        return
    entry = entries.get("cleanup.policy")
    if entry is None or entry.value is None:
        return
    policies = {p.strip().lower() for p in entry.value.split(",") if p.strip()}
    if policies != {"compact"}:
        raise TopicConfigError(
            f"Topic '{spec.name}' supplied via the '{spec.setting}' property is required to have "
            f"'cleanup.policy=compact' to guarantee consistency and durability of {spec.purpose}, but found the "
            f"topic currently has 'cleanup.policy={entry.value}'. Continuing would likely result in eventually "
            f"losing {spec.purpose} and problems restarting this Connect cluster in the future. Change the "
            f"'{spec.setting}' property in the Connect worker configurations to use a topic with "
            "'cleanup.policy=compact'."
        )


class KafkaBasedLog:
    """One internal topic: `start()` replays it, a thread tails it, `send()` appends durably."""

    def __init__(
        self,
        spec: TopicSpec,
        client_config: dict[str, str],
        on_record: RecordCallback,
        *,
        producer_config: dict[str, str] | None = None,
        consumer_config: dict[str, str] | None = None,
        admin_config: dict[str, str] | None = None,
        read_strategy: str = "watermark",
        client_id: str | None = None,
    ) -> None:
        if read_strategy not in ("watermark", "sentinel"):
            raise ValueError(f"read_strategy must be 'watermark' or 'sentinel', not {read_strategy!r}")
        self.spec = spec
        self.read_strategy = read_strategy
        self._on_record = on_record
        base = {k: str(v) for k, v in client_config.items()}
        client_id = client_id or base.get("client.id") or f"connect-{spec.name}"
        self._producer_conf = {**base, **PRODUCER_SETTINGS, "client.id": client_id, **(producer_config or {})}
        self._consumer_conf = {
            "fetch.wait.max.ms": FETCH_WAIT_MAX_MS,
            **base,
            **CONSUMER_SETTINGS,
            "client.id": client_id,
            "group.id": base.get("group.id", client_id),
            **(consumer_config or {}),
        }
        self._admin_conf: dict[str, str | int | float | bool] = {**base, "client.id": client_id, **(admin_config or {})}
        self._admin_conf.pop("group.id", None)
        self._producer_conf.pop("group.id", None)
        # read_committed: from the record batches and their markers, the same view on every broker
        self.read_committed = self._consumer_conf.get("isolation.level") == "read_committed"
        self._admin: AdminClient | None = None
        self._producer: Producer | None = None
        self._consumer: Consumer | None = None
        self._committed: CommittedReader | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._cond = threading.Condition()
        self._positions: dict[int, int] = {}  # next offset to consume, per partition
        self._drains_requested = 0
        self._drains_done = 0
        self._failure: BaseException | None = None
        self.partitions = 0

    # ---- lifecycle -----------------------------------------------------------------------------

    def start(self, timeout_s: float = 60.0) -> None:
        """Create/check the topic, replay it to the end, and keep tailing it in the background."""
        self._admin = AdminClient(self._admin_conf)
        self.partitions = ensure_topic(self._admin, self.spec, timeout_s)
        self._producer = Producer(self._producer_conf)
        self._positions = {p: 0 for p in range(self.partitions)}
        self._complete: dict[int, int] = {}  # positions as of the last poll that emptied the fetch queue
        if self.read_committed:
            from .committed_view import CommittedReader

            self._committed = CommittedReader(
                self.spec.name,
                range(self.partitions),
                self._consumer_conf,
                self._consumer_conf["client.id"],
                max_wait_ms=int(self._consumer_conf.get("fetch.wait.max.ms", FETCH_WAIT_MAX_MS)),
                timeout_s=timeout_s,
            )
        else:
            self._consumer = Consumer(self._consumer_conf)
            # From offset 0 rather than OFFSET_BEGINNING: the latter makes librdkafka look the offset up, which
            # it first defers (by 500 ms) while it has no partition leader yet, and a fresh consumer never has
            # one. Should the log not start at 0 any more, auto.offset.reset=earliest moves the reader to its
            # start.
            self._consumer.assign([TopicPartition(self.spec.name, p, 0) for p in range(self.partitions)])
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name=f"KafkaBasedLog-{self.spec.name}", daemon=True)
        self._thread.start()
        self.read_to_end(timeout_s)
        log.info("Started KafkaBasedLog for topic %s (%d partitions)", self.spec.name, self.partitions)

    def stop(self, timeout_s: float = 30.0) -> None:
        if self._producer is not None:
            remaining = self._producer.flush(timeout_s)
            if remaining:
                log.error("%d records for topic %s were still unsent at shutdown", remaining, self.spec.name)
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
        if self._committed is not None:
            self._committed.close()
            self._committed = None
        self._producer = None
        self._admin = None

    # ---- writing -------------------------------------------------------------------------------

    def send(
        self, records: Sequence[tuple[bytes | None, bytes | None]], timeout_s: float = 30.0
    ) -> list[tuple[int, int]]:
        """Append records in order; return (partition, offset) of each once all are acknowledged (acks=all)."""
        producer = self._require(self._producer)
        results: list[tuple[int, int] | KafkaError | None] = [None] * len(records)

        def delivered(index: int) -> Callable[[KafkaError | None, Message], None]:
            def callback(err: KafkaError | None, msg: Message) -> None:
                results[index] = err if err is not None else _position(msg)

            return callback

        for i, (key, value) in enumerate(records):
            self._produce(producer, key, value, delivered(i))
        deadline = time.monotonic() + timeout_s
        while any(r is None for r in results):
            producer.flush(max(0.0, deadline - time.monotonic()))
            if time.monotonic() >= deadline and any(r is None for r in results):
                raise KafkaStoreError(f"Timed out after {timeout_s}s writing to topic {self.spec.name}")
        errors = [r for r in results if isinstance(r, KafkaError)]
        if errors:
            raise KafkaStoreError(f"Failed to write to topic {self.spec.name}: {errors[0].str()}")
        return [r for r in results if isinstance(r, tuple)]

    def send_async(
        self,
        key: bytes | None,
        value: bytes | None,
        callback: Callable[[KafkaError | None, int, int], None] | None = None,
    ) -> None:
        """Append one record without waiting; `callback(error, partition, offset)` runs on delivery."""
        producer = self._require(self._producer)

        def on_delivery(err: KafkaError | None, msg: Message) -> None:
            if callback is not None:
                callback(err, *_position(msg))
            elif err is not None:
                log.error("Failed to write to topic %s: %s", self.spec.name, err.str())

        self._produce(producer, key, value, on_delivery)
        producer.poll(0)

    def flush(self, timeout_s: float = 30.0) -> None:
        if self._producer is not None and self._producer.flush(timeout_s):
            raise KafkaStoreError(f"Timed out after {timeout_s}s flushing writes to topic {self.spec.name}")

    def _produce(
        self,
        producer: Producer,
        key: bytes | None,
        value: bytes | None,
        on_delivery: Callable[[KafkaError | None, Message], None],
        partition: int | None = None,
    ) -> None:
        # -1: librdkafka's unassigned partition, the partitioner chooses (produce()'s default)
        partition = -1 if partition is None else partition
        while True:
            try:
                producer.produce(self.spec.name, value=value, key=key, partition=partition, on_delivery=on_delivery)
                return
            except BufferError:  # local queue full: let deliveries drain, then retry
                producer.poll(0.1)

    # ---- reading -------------------------------------------------------------------------------

    def read_to_end(self, timeout_s: float = 30.0) -> None:
        """Return once every record written before the call has been passed to `on_record`."""
        if self.read_strategy == "sentinel":
            producer = self._require(self._producer)
            key = SENTINEL_PREFIX + uuid.uuid4().hex.encode()
            results: dict[int, tuple[int, int] | KafkaError] = {}  # per partition: where its marker went, or why not

            def delivered(partition: int) -> Callable[[KafkaError | None, Message], None]:
                def callback(err: KafkaError | None, msg: Message) -> None:
                    results[partition] = err if err is not None else _position(msg)

                return callback

            for p in range(self.partitions):
                self._produce(producer, key, None, delivered(p), partition=p)
            producer.flush(timeout_s)
            written = [r for r in results.values() if isinstance(r, tuple)]
            if len(written) < self.partitions:
                raise KafkaStoreError(f"Could not write read-to-end markers to topic {self.spec.name}: {results}")
            self.wait_until_consumed(written, timeout_s)
            return
        admin = self._require(self._admin)
        request = {TopicPartition(self.spec.name, p): OffsetSpec.latest() for p in range(self.partitions)}
        try:
            answers = admin.list_offsets(request, request_timeout=timeout_s)
            ends = {tp.partition: f.result(timeout_s).offset for tp, f in answers.items()}
        except KafkaException as exc:
            raise KafkaStoreError(f"Could not read the end offsets of topic {self.spec.name}: {exc}") from exc
        targets = [(p, end - 1) for p, end in ends.items() if end > 0]
        self.wait_until_consumed(targets, timeout_s)
        with self._cond:
            if all(self._complete.get(p, 0) > o for p, o in targets):
                return  # delivered by a poll that emptied the fetch queue: the rest of its batch came with it
        with self._cond:  # pick up the rest of a batch whose base offset is the watermark - 1 (Tansu)
            self._drains_requested += 1
            wanted = self._drains_requested
            self._wait(lambda: self._drains_done >= wanted, timeout_s, "draining fetched records")

    def wait_until_consumed(self, offsets: Iterable[tuple[int, int]], timeout_s: float = 30.0) -> None:
        """Wait until the reader has passed each (partition, offset)."""
        targets = list(offsets)
        with self._cond:
            self._wait(
                lambda: all(self._positions.get(p, 0) > o for p, o in targets),
                timeout_s,
                f"reading topic {self.spec.name} to offsets {targets}",
            )

    def _wait(self, predicate: Callable[[], bool], timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while not predicate():
            if self._failure is not None:
                raise KafkaStoreError(f"The reader of topic {self.spec.name} failed: {self._failure}")
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self._thread is None:
                raise KafkaStoreError(f"Timed out after {timeout_s}s {what}")
            self._cond.wait(min(remaining, 0.5))

    def _run(self) -> None:
        try:
            if self._committed is not None:
                self._run_committed(self._committed)
            else:
                self._run_consumer()
        except BaseException as exc:
            log.exception("The reader of topic %s stopped", self.spec.name)
            with self._cond:
                self._failure = exc
                self._cond.notify_all()

    def _run_committed(self, reader: CommittedReader) -> None:
        while not self._stopping.is_set():
            for record in reader.poll():
                self._apply(record.key, record.value, record.partition, record.offset)
            producer = self._producer
            if producer is not None:
                producer.poll(0)
            with self._cond:
                # each fetch returns whole batches: what is decided is complete
                self._positions = reader.positions()
                self._complete = dict(self._positions)
                self._cond.notify_all()

    def _run_consumer(self) -> None:
        consumer = self._consumer
        assert consumer is not None
        while not self._stopping.is_set():
            self._deliver(consumer.consume(CONSUME_BATCH, timeout=READER_POLL_S))
            producer = self._producer
            if producer is not None:
                # serve delivery reports of asynchronous writes even when no further write comes to do it
                producer.poll(0)
            with self._cond:
                drain = self._drains_requested > self._drains_done
                wanted = self._drains_requested
            if drain:
                while batch := consumer.consume(CONSUME_BATCH, timeout=0):
                    self._deliver(batch)
                with self._cond:
                    self._drains_done = wanted
                    self._cond.notify_all()

    def _deliver(self, messages: list) -> None:
        if not messages:
            with self._cond:  # nothing queued: whatever was delivered before is complete
                self._complete = dict(self._positions)
            return
        for msg in messages:
            err = msg.error()
            if err is not None:
                if err.code() != KafkaError._PARTITION_EOF:
                    log.warning("Error reading topic %s: %s", self.spec.name, err.str())
                continue
            self._apply(msg.key(), msg.value(), msg.partition(), msg.offset())
            with self._cond:
                self._positions[msg.partition()] = msg.offset() + 1
        with self._cond:
            if len(messages) < CONSUME_BATCH:
                # this poll emptied librdkafka's queue, and a fetched batch is queued whole: every batch seen
                # so far has been delivered completely
                self._complete = dict(self._positions)
            self._cond.notify_all()

    def _apply(self, key: bytes | None, value: bytes | None, partition: int, offset: int) -> None:
        if key and key.startswith(SENTINEL_PREFIX):
            return
        try:
            self._on_record(key, value, partition, offset)
        except Exception:
            log.exception("Skipping a record of topic %s that could not be applied", self.spec.name)

    def _require(self, client: _Client | None) -> _Client:
        if client is None:
            raise KafkaStoreError(f"The log for topic {self.spec.name} is not started")
        return client
