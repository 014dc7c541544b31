"""Status-topic records in the reference's format (contract section 3.2), with KIP-915 reading rules.

Keys are UTF-8 strings:
- `status-connector-<c>`                 -> `{"state", "trace", "worker_id", "generation"}`
- `status-task-<c>-<n>`                  -> the same fields
- `status-topic-<topic>:connector-<c>`   -> `{"topic": {"name", "connector", "task", "discoverTimestamp"}}`

DESTROYED is never written as a value: it is a tombstone. Readers skip what they cannot parse (with a
log line), ignore fields they do not know and never raise.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, TypeGuard

import orjson

from .base import InstanceStatus
from .states import State

log = logging.getLogger(__name__)

CONNECTOR_STATUS_PREFIX = "status-connector-"
TASK_STATUS_PREFIX = "status-task-"
TOPIC_STATUS_PREFIX = "status-topic-"
TOPIC_STATUS_SEPARATOR = ":connector-"


@dataclass(frozen=True)
class TopicStatus:
    """KIP-558: a topic a connector's task has produced to or consumed from."""

    topic: str
    connector: str
    task: int
    discover_timestamp: int


# ---- keys ----------------------------------------------------------------------------------------


def connector_key(name: str) -> str:
    return CONNECTOR_STATUS_PREFIX + name


def task_key(name: str, index: int) -> str:
    return f"{TASK_STATUS_PREFIX}{name}-{index}"


def topic_key(connector: str, topic: str) -> str:
    return f"{TOPIC_STATUS_PREFIX}{topic}{TOPIC_STATUS_SEPARATOR}{connector}"


def parse_task_key(key: str) -> tuple[str, int] | None:
    """(connector, task) the reference's way: split on '-', >= 4 parts, last part the task number."""
    parts = key.split("-")
    if len(parts) < 4:
        return None
    try:
        index = int(parts[-1])
    except ValueError:
        return None
    return "-".join(parts[2:-1]), index


def parse_topic_key(key: str) -> tuple[str, str] | None:
    """(topic, connector), or None for a key the reference would also discard."""
    rest = key[len(TOPIC_STATUS_PREFIX) :]
    topic, sep, connector = rest.partition(TOPIC_STATUS_SEPARATOR)
    if not sep or not topic or not connector:
        return None
    return topic, connector


# ---- values --------------------------------------------------------------------------------------


def encode_status(status: InstanceStatus) -> bytes | None:
    """Value bytes as the reference writes them (field order included); DESTROYED is a tombstone."""
    if status.state is State.DESTROYED:
        return None
    return orjson.dumps(
        {
            "state": status.state.value,
            "trace": status.trace,
            "worker_id": status.worker_id,
            "generation": status.generation,
        }
    )


def decode_status(key: str, raw: bytes | None) -> InstanceStatus | None:
    """The status in `raw`, or None (logged) when it cannot be read; extra fields are ignored."""
    if raw is None:
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        log.error("Failed to deserialize status record %s: not JSON", key)
        return None
    if not isinstance(value, dict):
        log.error("Invalid status type %s in record %s", type(value).__name__, key)
        return None
    raw_state, trace, worker, generation = (value.get(f) for f in ("state", "trace", "worker_id", "generation"))
    try:
        state = State(raw_state)
    except ValueError:
        log.error("Ignoring status record %s with unknown state %r", key, raw_state)
        return None
    if not isinstance(generation, int) or isinstance(generation, bool):
        log.error("Ignoring status record %s with invalid generation %r", key, generation)
        return None
    if trace is not None and not isinstance(trace, str):
        log.error("Ignoring status record %s with invalid trace %r", key, trace)
        return None
    if worker is not None and not isinstance(worker, str):
        log.error("Ignoring status record %s with invalid worker_id %r", key, worker)
        return None
    return InstanceStatus(state=state, worker_id=worker or "", trace=trace, generation=generation)


def encode_topic_status(status: TopicStatus | None) -> bytes | None:
    if status is None:
        return None
    return orjson.dumps(
        {
            "topic": {
                "name": status.topic,
                "connector": status.connector,
                "task": status.task,
                "discoverTimestamp": status.discover_timestamp,
            }
        }
    )


def decode_topic_status(key: str, raw: bytes | None) -> TopicStatus | None:
    if raw is None:
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        log.error("Failed to deserialize topic status record %s: not JSON", key)
        return None
    inner: Any = value.get("topic") if isinstance(value, dict) else None
    if not isinstance(inner, dict):
        log.error("Invalid topic status value %r for field topic in record %s", inner, key)
        return None
    name, connector, task, ts = (inner.get(f) for f in ("name", "connector", "task", "discoverTimestamp"))
    if not (isinstance(name, str) and isinstance(connector, str) and _is_int(task) and _is_int(ts)):
        log.error("Failed to parse topic status record %s: %r", key, inner)
        return None
    return TopicStatus(name, connector, task, ts)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
