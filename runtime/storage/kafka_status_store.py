"""Connector, task and topic statuses in the status topic (contract 3.2), as KafkaStatusBackingStore keeps them.

Writes are asynchronous, as in the reference (a status update must never block a task thread on the
broker), but this worker's own writes show in its cache at once, so a state change is visible as soon
as the request that caused it returns. While an own write of a key is in flight, a record of that key
read from the topic may be older or newer than it (the write can be in the log before its acknowledgement
is processed), so the latest such record is held back and applied only if the acknowledged offset shows
it to be newer; once acknowledged, records before its offset are skipped. Reader rules (section 3.2): a tombstone removes the entry (a connector tombstone
its tasks too); a task UNASSIGNED does not replace a RUNNING status of the same or a newer generation,
nor a connector UNASSIGNED another worker's status of a newer generation; another worker's status of a
newer generation than this worker's own write of the key applies even while that write is in flight
(or read back later than the other's record);
`put_*_safe` (UNASSIGNED/FAILED reports) skip the write when the cache holds another worker's status of
a newer generation.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError

from .base import InstanceStatus, StatusStore
from .kafka_log import KafkaBasedLog, TopicSpec
from .states import State
from .status_codec import (
    CONNECTOR_STATUS_PREFIX,
    TASK_STATUS_PREFIX,
    TOPIC_STATUS_PREFIX,
    TopicStatus,
    connector_key,
    decode_status,
    decode_topic_status,
    encode_status,
    encode_topic_status,
    parse_task_key,
    parse_topic_key,
    task_key,
    topic_key,
)

log = logging.getLogger(__name__)


class KafkaStatusStore(StatusStore):
    def __init__(
        self,
        spec: TopicSpec,
        client_config: dict[str, str],
        *,
        read_strategy: str = "watermark",
        read_timeout_s: float = 30.0,
        **log_options: Any,
    ) -> None:
        super().__init__()
        self._topics: dict[str, dict[str, TopicStatus]] = {}  # connector -> topic -> status
        self._inflight: Counter[str] = Counter()
        self._acked: dict[str, int] = {}  # key -> offset of this worker's latest acknowledged write
        # key -> (offset, value) of the latest record read while an own write of the key was in flight
        self._held: dict[str, tuple[int, bytes | None]] = {}
        self._own: dict[str, bytes | None] = {}  # key -> value of this worker's latest write of it
        self._read_timeout_s = read_timeout_s
        self._extra: dict[str, Any] = {}  # key prefix -> handler(key, raw_value), for records of our own
        spec = TopicSpec(
            spec.name,
            spec.partitions,
            spec.replication_factor,
            spec.setting or "status.storage.topic",
            "connector and task statuses",
        )
        self.log = KafkaBasedLog(spec, client_config, self._on_record, read_strategy=read_strategy, **log_options)

    def register_prefix(self, prefix: str, handler: Any) -> None:
        """Send records whose key starts with `prefix` to `handler(key, raw_value)` on the reader thread
        (replay included), e.g. worker heartbeats earlier versions wrote. The Java reference logs and
        skips such keys, which KIP-915 allows."""
        self._extra[prefix] = handler

    def put_own_record(self, key: str, value: bytes | None) -> None:
        """Write a record of a family registered with `register_prefix`; returns once it is acknowledged and
        read back (its handler has seen it, after every record before it)."""
        self.log.wait_until_consumed(self.log.send([(key.encode("utf-8"), value)]), self._read_timeout_s)

    def start(self) -> None:
        self.log.start(self._read_timeout_s)

    def stop(self) -> None:
        self.log.stop()

    def flush(self, timeout_s: float = 30.0) -> None:
        """Wait until every status written so far is acknowledged."""
        self.log.flush(timeout_s)

    def refresh(self) -> None:
        """Read the topic to its end (statuses other workers wrote)."""
        self.log.read_to_end(self._read_timeout_s)

    # ---- writes --------------------------------------------------------------------------------

    def put_connector(self, name: str, status: InstanceStatus) -> None:
        self._send(connector_key(name), encode_status(status), lambda: self._set_connector(name, status))

    def put_task(self, name: str, index: int, status: InstanceStatus) -> None:
        self._send(task_key(name, index), encode_status(status), lambda: self._set_task(name, index, status))

    def remove_task(self, name: str, index: int) -> None:
        self._send(task_key(name, index), None, lambda: self._tasks.pop((name, index), None))

    def remove_connector(self, name: str) -> None:
        """Tombstones for the connector and each of its tasks (the reference's DESTROYED)."""
        for index in sorted(self.tasks(name)):
            self.remove_task(name, index)
        self._send(connector_key(name), None, lambda: self._drop_connector(name))

    def put_topic(self, status: TopicStatus) -> None:
        self._send(
            topic_key(status.connector, status.topic),
            encode_topic_status(status),
            lambda: self._topics.setdefault(status.connector, {}).__setitem__(status.topic, status),
        )

    def delete_topic(self, connector: str, topic: str) -> None:
        self._send(topic_key(connector, topic), None, lambda: self._topics.get(connector, {}).pop(topic, None))

    def _send(self, key: str, value: bytes | None, update_cache: Callable[[], object]) -> None:
        with self._lock:
            update_cache()
            self._inflight[key] += 1
            if value is not None and key.startswith((CONNECTOR_STATUS_PREFIX, TASK_STATUS_PREFIX)):
                self._own[key] = value
            else:
                self._own.pop(key, None)

        def delivered(err: KafkaError | None, partition: int, offset: int) -> None:
            with self._lock:
                self._inflight[key] -= 1
                if err is None:
                    self._acked[key] = max(offset, self._acked.get(key, -1))
                if self._inflight[key] <= 0:
                    del self._inflight[key]
                    held = self._held.pop(key, None)
                    if held is not None and held[0] > self._acked.get(key, -1):
                        try:  # another worker wrote the key after this write
                            self._apply(key, held[1])
                        except Exception:
                            log.exception("Skipping status record %s that could not be applied", key)
            if err is not None:
                log.error("Failed to write status update %s: %s", key, err.str())

        self.log.send_async(key.encode("utf-8"), value, delivered)

    # ---- reads ---------------------------------------------------------------------------------

    def topic(self, connector: str, topic: str) -> TopicStatus | None:
        with self._lock:
            return self._topics.get(connector, {}).get(topic)

    def topics(self, connector: str) -> list[TopicStatus]:
        with self._lock:
            return list(self._topics.get(connector, {}).values())

    def connectors(self) -> set[str]:
        with self._lock:
            return set(self._connectors)

    def _on_record(self, raw_key: bytes | None, raw_value: bytes | None, partition: int, offset: int) -> None:
        try:
            key = raw_key.decode("utf-8") if raw_key is not None else ""
        except UnicodeDecodeError:
            key = ""
        for prefix, handler in self._extra.items():
            if key.startswith(prefix):
                try:
                    handler(key, raw_value)
                except Exception:
                    log.exception("Handler of status record %s failed", key)
                return
        with self._lock:
            if (self._inflight.get(key) or offset < self._acked.get(key, -1)) and not self._supersedes_own(
                key, raw_value
            ):
                if self._inflight.get(key):
                    self._held[key] = (offset, raw_value)  # older or newer than the own write: its ack will tell
                return  # otherwise this worker has already written a newer value of the key
            self._apply(key, raw_value)

    def _supersedes_own(self, key: str, raw_value: bytes | None) -> bool:
        """Whether another worker's status record is newer than this worker's own latest write of the key
        by generation, whatever their order in the topic: a worker that was out of the group (frozen,
        cut off) writes UNASSIGNED for what it lost after the new owner's records. Compared with the own
        write, not with the cache: once one such record has replaced the own write in the cache, the new
        owner's next records (its RUNNING after its UNASSIGNED) must follow it (lock held)."""
        own_raw = self._own.get(key)
        if raw_value is None or own_raw is None:
            return False
        own, status = decode_status(key, own_raw), decode_status(key, raw_value)
        return (
            own is not None
            and status is not None
            and status.worker_id != own.worker_id
            and status.generation > own.generation
        )

    def _apply(self, key: str, raw_value: bytes | None) -> None:
        """A record of the topic into the cache (lock held)."""
        if key.startswith(CONNECTOR_STATUS_PREFIX):
            self._read_connector(key, raw_value)
        elif key.startswith(TASK_STATUS_PREFIX):
            self._read_task(key, raw_value)
        elif key.startswith(TOPIC_STATUS_PREFIX):
            self._read_topic(key, raw_value)
        else:
            log.warning("Discarding record with invalid key %r", key)

    def _read_connector(self, key: str, raw: bytes | None) -> None:
        name = key[len(CONNECTOR_STATUS_PREFIX) :]
        if not name:
            log.warning("Discarding record with invalid connector status key %s", key)
            return
        if raw is None:
            self._drop_connector(name)
            return
        status = decode_status(key, raw)
        if status is None:
            return
        previous = self._connectors.get(name)
        if (
            status.state is State.UNASSIGNED
            and previous is not None
            and previous.worker_id != status.worker_id
            and previous.generation > status.generation
        ):
            log.debug("Ignoring stale status %s in favour of %s", status, previous)
            return  # a late report of a worker that lost the connector to a newer generation's owner
        self._connectors[name] = status

    def _read_task(self, key: str, raw: bytes | None) -> None:
        parsed = parse_task_key(key)
        if parsed is None:
            log.warning("Discarding record with invalid task status key %s", key)
            return
        if raw is None:
            self._tasks.pop(parsed, None)
            return
        status = decode_status(key, raw)
        if status is None:
            log.warning("Failed to parse task status with key %s", key)
            return
        previous = self._tasks.get(parsed)
        if (
            status.state is State.UNASSIGNED
            and previous is not None
            and previous.state is State.RUNNING
            and previous.generation >= status.generation
        ):
            log.debug("Ignoring stale status %s in favour of %s", status, previous)
            return
        self._tasks[parsed] = status

    def _read_topic(self, key: str, raw: bytes | None) -> None:
        parsed = parse_topic_key(key)
        if parsed is None:
            log.warning("Discarding record with invalid topic status key %s", key)
            return
        topic, connector = parsed
        if raw is None:
            self._topics.get(connector, {}).pop(topic, None)
            return
        status = decode_topic_status(key, raw)
        if status is None:
            log.warning("Failed to parse topic status with key %s", key)
            return
        self._topics.setdefault(connector, {})[topic] = status

    # ---- cache updates (lock held) -------------------------------------------------------------

    def _set_connector(self, name: str, status: InstanceStatus) -> None:
        if status.state is State.DESTROYED:  # written as a tombstone
            self._drop_connector(name)
        else:
            self._connectors[name] = status

    def _set_task(self, name: str, index: int, status: InstanceStatus) -> None:
        if status.state is State.DESTROYED:
            self._tasks.pop((name, index), None)
        else:
            self._tasks[(name, index)] = status

    def _drop_connector(self, name: str) -> None:
        self._connectors.pop(name, None)
        self._tasks.remove_connector(name)
