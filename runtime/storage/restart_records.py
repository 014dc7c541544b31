"""Self-healing's restart records (this runtime's extension, not Kafka Connect's): for a connector or a task,
how many automatic restarts it has had since it last ran long enough, when the last one was, and the
failure it answered.

Distributed mode keeps them in the status topic, beside the statuses, under keys of their own:

    auto-restart-connector-<c>    -> {"count": n, "last_restart": epoch ms, "worker_id": "host:port", "failure": s}
    auto-restart-task-<c>-<n>     -> the same fields

A tombstone resets the count. Only an instance's owner writes its record (before it restarts it), every
worker reads them all: a task that moves to another worker keeps its count. The reference's workers log and
skip these keys (KIP-915 allows it); readers here skip a record they cannot read, with a log line, and fields
they do not know. Standalone mode keeps them in memory: a worker restart restarts everything anyway.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

import orjson

if TYPE_CHECKING:
    from .kafka_status_store import KafkaStatusStore

log = logging.getLogger(__name__)

RECORD_PREFIX = "auto-restart-"
CONNECTOR_PREFIX = RECORD_PREFIX + "connector-"
TASK_PREFIX = RECORD_PREFIX + "task-"

# a connector (task None) or one of its tasks
Instance = tuple[str, int | None]


@dataclass(frozen=True)
class RestartRecord:
    count: int
    last_restart_ms: int
    worker_id: str
    failure: str


def record_key(instance: Instance) -> str:
    name, task = instance
    return CONNECTOR_PREFIX + name if task is None else f"{TASK_PREFIX}{name}-{task}"


def parse_record_key(key: str) -> Instance | None:
    if key.startswith(CONNECTOR_PREFIX):
        name = key[len(CONNECTOR_PREFIX) :]
        return (name, None) if name else None
    if key.startswith(TASK_PREFIX):
        name, _, task = key[len(TASK_PREFIX) :].rpartition("-")
        return (name, int(task)) if name and task.isdigit() else None
    return None


def encode_record(record: RestartRecord) -> bytes:
    return orjson.dumps(
        {
            "count": record.count,
            "last_restart": record.last_restart_ms,
            "worker_id": record.worker_id,
            "failure": record.failure,
        }
    )


def decode_record(key: str, raw: bytes) -> RestartRecord | None:
    """The record, or None (logged) when it cannot be read: a reader never raises."""
    try:
        data = orjson.loads(raw)
        count, last = data["count"], data["last_restart"]
        if not (type(count) is int and type(last) is int and count >= 0):
            raise ValueError("count and last_restart must be non-negative integers")
        return RestartRecord(count, last, str(data.get("worker_id") or ""), str(data.get("failure") or ""))
    except (ValueError, KeyError, TypeError) as exc:
        log.warning("Skipping restart record %s that cannot be read: %s", key, exc)
        return None


class RestartLedger(ABC):
    """Where restart records are kept; thread-safe."""

    @abstractmethod
    def get(self, instance: Instance) -> RestartRecord | None: ...

    @abstractmethod
    def put(self, instance: Instance, record: RestartRecord | None) -> None:
        """Store (None: remove) the record; durable, and what `get` answers, when it returns."""

    @abstractmethod
    def records(self) -> dict[Instance, RestartRecord]: ...


class MemoryRestartLedger(RestartLedger):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[Instance, RestartRecord] = {}

    def get(self, instance: Instance) -> RestartRecord | None:
        with self._lock:
            return self._records.get(instance)

    def put(self, instance: Instance, record: RestartRecord | None) -> None:
        with self._lock:
            if record is None:
                self._records.pop(instance, None)
            else:
                self._records[instance] = record

    def records(self) -> dict[Instance, RestartRecord]:
        with self._lock:
            return dict(self._records)


class StatusTopicRestartLedger(MemoryRestartLedger):
    """The records in the status topic: read by the status store's reader (replay included: build this before
    the store starts), written through it and read back before `put` returns, so `get` answers in the
    topic's order whoever wrote last."""

    def __init__(self, store: KafkaStatusStore) -> None:
        super().__init__()
        self._store = store
        store.register_prefix(RECORD_PREFIX, self._on_record)

    def put(self, instance: Instance, record: RestartRecord | None) -> None:
        self._store.put_own_record(record_key(instance), None if record is None else encode_record(record))

    def _on_record(self, key: str, raw: bytes | None) -> None:
        instance = parse_record_key(key)
        if instance is None:
            log.warning("Discarding restart record with invalid key %r", key)
            return
        record = None if raw is None else decode_record(key, raw)
        if raw is None or record is not None:
            super().put(instance, record)
