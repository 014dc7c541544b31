"""A topic as a read_committed consumer of Apache Kafka sees it, worked out from its record batches and their
transaction markers: records of aborted transactions left out, records of open ones held back (with everything
after them, as a consumer stops at the last stable offset).

Why from the batches: a read_committed consumer relies on the broker listing the aborted transactions in each
fetch response. Apache Kafka does; Tansu (the test broker) does not, so its read_committed consumers still
see the records of ABORTED transactions. The transaction markers themselves (control batches) are in the
log on every broker, so reading them gives the same, correct answer on both: that is what the worker's
offsets reader does when it reads read_committed (`kafka_log.KafkaBasedLog`), and what the tests' verifier
of exactly-once delivery does (`tests/support/committed.py`).

The batches are fetched (read_uncommitted, Fetch v4-v11) and parsed with kafka-python's protocol and record
classes (`kafka.protocol.consumer.FetchRequest`, `kafka.record.MemoryRecords`, `ControlRecord`); librdkafka
does not hand control records to applications. Only the bookkeeping of transactions is written here.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kafka import errors as kafka_errors
from kafka.net.compat import KafkaNetClient
from kafka.protocol.consumer import FetchRequest
from kafka.record import MemoryRecords
from kafka.structs import TopicPartition

log = logging.getLogger(__name__)

FETCH_MAX_VERSION = 11  # v4+ carries isolation levels and transactional batches; v12+ adds nothing needed here
FETCH_MAX_BYTES = 8 << 20
PARTITION_MAX_BYTES = 1 << 20
# the largest response frame accepted: librdkafka's receive.message.max.bytes default (kafka-python's is 1 MiB);
# some brokers (Tansu) answer a fetch with more than its max_bytes
RECEIVE_MAX_BYTES = 100_000_000
# librdkafka's names of the worker's client settings -> kafka-python's
_SETTING_NAMES = {
    "security.protocol": "security_protocol",
    "sasl.username": "sasl_plain_username",
    "sasl.password": "sasl_plain_password",
    "ssl.ca.location": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
}
# partition errors after which the leader is looked up again and the fetch retried
_RETRY_AFTER_METADATA = {
    kafka_errors.NotLeaderForPartitionError.errno,
    kafka_errors.UnknownTopicOrPartitionError.errno,
    kafka_errors.LeaderNotAvailableError.errno,
    kafka_errors.FencedLeaderEpochError.errno,
    kafka_errors.UnknownLeaderEpochError.errno,
    kafka_errors.KafkaStorageError.errno,
    kafka_errors.ReplicaNotAvailableError.errno,
}


def kafka_python_settings(client_config: Mapping[str, Any], client_id: str) -> dict[str, Any]:
    """kafka-python's settings for the brokers and credentials of a librdkafka client config."""
    settings: dict[str, Any] = {
        "bootstrap_servers": str(client_config["bootstrap.servers"]).split(","),
        "client_id": client_id,
        "receive_message_max_bytes": RECEIVE_MAX_BYTES,
    }
    for ours, theirs in _SETTING_NAMES.items():
        if client_config.get(ours):
            settings[theirs] = str(client_config[ours])
    mechanism = client_config.get("sasl.mechanism") or client_config.get("sasl.mechanisms")
    if mechanism:
        settings["sasl_mechanism"] = str(mechanism)
    if str(client_config.get("ssl.endpoint.identification.algorithm", "https")).strip().lower() == "none":
        settings["ssl_check_hostname"] = False
    if "security_protocol" in settings:
        settings["security_protocol"] = settings["security_protocol"].upper()
    return settings


@dataclass(frozen=True, slots=True)
class CommittedRecord:
    """A record a read_committed consumer would be given."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int


class _Held:
    """A record whose transaction is still open (fate None), or decided (True: committed)."""

    __slots__ = ("fate", "producer_id", "record")

    def __init__(self, record: CommittedRecord, producer_id: int | None) -> None:
        self.record = record
        self.producer_id = producer_id
        self.fate: bool | None = None if producer_id is not None else True


class TransactionFilter:
    """One partition's batches in log order in, its committed records out, as a read_committed consumer.

    A record of a transactional batch waits for its producer's next control record: commit releases it,
    abort drops it. Records are released in offset order, so one of an open transaction holds back every
    later record, transactional or not (the consumer's last stable offset). A marker aborts or commits what
    its producer id has open, whatever the epoch: fencing a producer (a newer epoch's abort) ends its
    earlier transaction.

    The records of one transaction all carry one producer epoch (in both of Kafka's transaction protocols).
    Records of an older epoch than records their producer id has open here were written by a producer that
    a newer one with the same transactional id had fenced: Apache Kafka refuses those writes
    (PRODUCER_FENCED), so they are never read; they are dropped here too. Tansu, the test broker, does not
    always refuse them: its InitProducerId aborts the open transaction and only then bumps the epoch, in
    separate steps that a Produce from the fenced producer can fall between; the write then lands with no
    marker of its own, to be ended by the successor's next marker (scripts/tansu_fencing_probe.py).
    """

    def __init__(self, partition: int, start: int = 0) -> None:
        self.partition = partition
        self.next_offset = start  # where the next batch starts: past everything seen, markers included
        self._queue: deque[_Held] = deque()
        self._open: dict[int, list[_Held]] = {}
        self._open_epoch: dict[int, int] = {}  # the epoch of what each producer id has open
        self.aborted = 0  # records dropped so far (fenced writes included)
        self.fenced_writes = 0  # records a fenced producer wrote (refused by Apache Kafka, see above)
        self.committed_transactions = 0
        self.aborted_transactions = 0

    @property
    def stable_offset(self) -> int:
        """Every record below this offset has been released or dropped (the last stable offset)."""
        return self._queue[0].record.offset if self._queue else self.next_offset

    @property
    def open_transactions(self) -> int:
        return len(self._open)

    def add(self, batch: Any) -> list[CommittedRecord]:
        """Take one record batch (kafka-python's); return the records it releases, in offset order."""
        if batch.next_offset <= self.next_offset:
            return []  # seen already (a fetch may start inside a batch it returned before)
        if batch.is_control_batch:
            for control in batch:
                if control.offset >= self.next_offset and (control.commit or control.abort):
                    self._decide(batch.producer_id, control.commit)
        else:
            producer = batch.producer_id if batch.is_transactional else None
            fenced = producer is not None and not self._admit_epoch(producer, batch.producer_epoch)
            dropped = 0
            for r in batch:
                if r.offset < self.next_offset:
                    continue
                held = _Held(CommittedRecord(self.partition, r.offset, r.key, r.value, r.timestamp), producer)
                self._queue.append(held)
                if fenced:
                    held.fate = False
                    dropped += 1
                elif producer is not None:
                    self._open.setdefault(producer, []).append(held)
            if dropped:
                self._count_fenced(dropped, batch.producer_id, batch.producer_epoch)
        self.next_offset = batch.next_offset
        return self._release()

    def _admit_epoch(self, producer_id: int, epoch: int) -> bool:
        """Whether a transactional batch of `producer_id` at `epoch` belongs to its open transaction (False: a
        fenced producer's write); drops the open records of an older epoch (the fenced producer's)."""
        current = self._open_epoch.get(producer_id)
        if current is None or current == epoch or producer_id not in self._open:
            self._open_epoch[producer_id] = epoch
            return True
        if epoch < current:
            return False
        stale = self._open.pop(producer_id)
        for held in stale:
            held.fate = False
        self._count_fenced(len(stale), producer_id, current)
        self._open_epoch[producer_id] = epoch
        return True

    def _count_fenced(self, count: int, producer_id: int, epoch: int) -> None:
        log.warning(
            "Partition %d: %d records of producer id %d at epoch %d were written after a newer epoch fenced that "
            "producer; left out, as Apache Kafka refuses such writes",
            self.partition,
            count,
            producer_id,
            epoch,
        )
        self.fenced_writes += count
        self.aborted += count

    def _decide(self, producer_id: int, commit: bool) -> None:
        records = self._open.pop(producer_id, None)
        self._open_epoch.pop(producer_id, None)
        if records is None:
            return  # a marker of a transaction with nothing left here (or none at all)
        for held in records:
            held.fate = commit
        if commit:
            self.committed_transactions += 1
        else:
            self.aborted_transactions += 1
            self.aborted += len(records)

    def _release(self) -> list[CommittedRecord]:
        out = []
        queue = self._queue
        while queue and queue[0].fate is not None:
            held = queue.popleft()
            if held.fate:
                out.append(held.record)
        return out


class CommittedReader:
    """Reads partitions of one topic from the start with the committed view (`TransactionFilter` each).

    Not thread-safe: one thread polls (the reader thread of a KafkaBasedLog, or a test)."""

    def __init__(
        self,
        topic: str,
        partitions: Iterable[int],
        client_config: Mapping[str, Any],
        client_id: str,
        max_wait_ms: int = 100,
        timeout_s: float = 30.0,
    ) -> None:
        self.topic = topic
        self.filters = {p: TransactionFilter(p) for p in partitions}
        self.high_watermarks: dict[int, int] = {}
        self.max_wait_ms = max_wait_ms
        self.timeout_ms = int(timeout_s * 1000)
        # no warnings about slow steps of the client's IO loop: in a worker it shares the interpreter lock with
        # busy task threads, so a step that takes over kafka-python's 100 ms says nothing about this reader
        self._client = KafkaNetClient(**kafka_python_settings(client_config, client_id), slow_task_threshold_secs=0)
        self._leaders: dict[int, int] = {}
        try:
            self._client.check_version(timeout_ms=self.timeout_ms)
            self._refresh_leaders()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        try:
            self._client.close()
        except Exception as exc:  # noqa: BLE001 - closing sockets of a client being dropped
            log.debug("Closing the batch reader of %s: %s", self.topic, exc)

    def positions(self) -> dict[int, int]:
        """Per partition, the offset below which everything has been decided and returned."""
        return {p: f.stable_offset for p, f in self.filters.items()}

    def fetched(self) -> dict[int, int]:
        """Per partition, how far the log has been read (markers and open transactions included)."""
        return {p: f.next_offset for p, f in self.filters.items()}

    def poll(self) -> list[CommittedRecord]:
        """One fetch from each partition's leader; the records released, in offset order per partition.
        A broker with nothing new holds the fetch up to `max_wait_ms`."""
        by_leader: dict[int, list[int]] = {}
        for partition in self.filters:
            leader = self._leaders.get(partition, -1)
            if leader < 0:
                self._refresh_leaders()
                leader = self._leaders.get(partition, -1)
                if leader < 0:
                    continue
            by_leader.setdefault(leader, []).append(partition)
        released: list[CommittedRecord] = []
        for leader, partitions in by_leader.items():
            released.extend(self._fetch(leader, partitions))
        return released

    def _fetch(self, leader: int, partitions: list[int]) -> list[CommittedRecord]:
        request = FetchRequest(
            max_wait_ms=self.max_wait_ms,
            min_bytes=1,
            max_bytes=FETCH_MAX_BYTES,
            isolation_level=0,  # every batch, markers included: the filter decides
            topics=[
                FetchRequest.FetchTopic(
                    topic=self.topic,
                    partitions=[
                        FetchRequest.FetchTopic.FetchPartition(
                            partition=p,
                            fetch_offset=self.filters[p].next_offset,
                            partition_max_bytes=PARTITION_MAX_BYTES,
                        )
                        for p in partitions
                    ],
                )
            ],
            max_version=FETCH_MAX_VERSION,
        )
        try:
            response = self._client.send_and_receive(leader, request, timeout_ms=self.timeout_ms)
        except kafka_errors.KafkaError as exc:
            log.info("Fetching %s from broker %s failed (%s); looking its leaders up again", self.topic, leader, exc)
            self._leaders.clear()
            return []
        released: list[CommittedRecord] = []
        for topic in response.responses:
            for data in topic.partitions:
                released.extend(self._partition_data(data))
        return released

    def _partition_data(self, data: Any) -> list[CommittedRecord]:
        partition = data.partition_index
        code = data.error_code
        if code in _RETRY_AFTER_METADATA:
            self._leaders.pop(partition, None)
            return []
        log_filter = self.filters.get(partition)
        if log_filter is None:
            return []
        if code == kafka_errors.OffsetOutOfRangeError.errno and data.log_start_offset > log_filter.next_offset:
            # the log's start moved past what was read (retention): carry on from there
            log.warning(
                "Partition %d of %s starts at %d, past %d: records between were deleted",
                partition,
                self.topic,
                data.log_start_offset,
                log_filter.next_offset,
            )
            self.filters[partition] = TransactionFilter(partition, data.log_start_offset)
            return []
        if code:
            raise kafka_errors.for_code(code)(f"fetching partition {partition} of {self.topic}")
        self.high_watermarks[partition] = data.high_watermark
        released: list[CommittedRecord] = []
        records = MemoryRecords(bytes(data.records or b""))
        while records.has_next():
            batch = records.next_batch()
            if batch is None:
                break  # a partial batch at the end of the response: fetched whole next time
            released.extend(log_filter.add(batch))
        return released

    def _refresh_leaders(self) -> None:
        future = self._client.cluster.add_topic(self.topic)
        if future.is_done:  # tracked already: ask for fresh metadata
            future = self._client.cluster.request_update()
        self._client.poll(timeout_ms=self.timeout_ms, future=future)
        for partition in self.filters:
            leader = self._client.cluster.leader_for_partition(TopicPartition(self.topic, partition))
            if leader is not None and leader >= 0:
                self._leaders[partition] = leader

    def read_to_high_watermark(self, timeout_s: float) -> list[CommittedRecord]:
        """Poll until every partition has been read to the high watermark its last fetch reported and no
        transaction before it is open; the records released meanwhile. Raises TimeoutError when a transaction
        stays open (or the broker does not answer) for `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        released = self.poll()
        while not all(
            p in self.high_watermarks and f.stable_offset >= self.high_watermarks[p] for p, f in self.filters.items()
        ):
            if time.monotonic() > deadline:
                behind = {
                    p: (f.stable_offset, self.high_watermarks.get(p), f.open_transactions)
                    for p, f in self.filters.items()
                }
                raise TimeoutError(
                    f"Timed out after {timeout_s}s reading {self.topic} to its end "
                    f"(partition: (stable offset, high watermark, open transactions) {behind})"
                )
            released.extend(self.poll())
        return released


__all__ = ["CommittedReader", "CommittedRecord", "TransactionFilter", "kafka_python_settings"]
