"""Kafka Connect's group protocol formats: a worker's metadata in JoinGroup and its assignment in SyncGroup.

The byte layouts are the reference's (ConnectProtocol for version 0, "default"; the incremental
cooperative protocol for versions 1 and 2, "compatible" and "sessioned"), so Kafka's tools and the
reference's workers read our members as Connect workers. They are written with kafka-python's protocol
types (`kafka.protocol.old.types`: Int16/Int32/Int64, String, Bytes, Array), the same primitives the
broker protocol uses:

    metadata v0      version int16, url string, config_offset int64
    metadata v1, v2  version int16, url string, config_offset int64, allocation nullable bytes
                     (the worker's current assignment, serialised as below, or null when it holds nothing)
    assignment v0    version int16, error int16, leader string, leader_url string, config_offset int64,
                     assignment [connector string, tasks [int32]]
    assignment v1+   the same, then revoked [connector string, tasks [int32]], delay int32

Task id -1 stands for the connector itself. Versions 1+ tolerate missing trailing fields (the
reference reads them with defaults), and so does this reader.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from kafka.protocol.old.types import Array, Bytes, Int16, Int32, Int64, Schema, String

PROTOCOL_TYPE = "connect"
CONNECTOR_TASK = -1
NO_ERROR, CONFIG_MISMATCH = 0, 1
# protocol name -> version, as the reference's ConnectProtocolCompatibility names them
PROTOCOL_VERSIONS = {"default": 0, "compatible": 1, "sessioned": 2}

TaskId = tuple[str, int]

_HEADER = Schema(("version", Int16))
_CONFIG_STATE = Schema(("url", String("utf-8")), ("config_offset", Int64))
_UNITS = Array(("connector", String("utf-8")), ("tasks", Array(Int32)))
_ASSIGNMENT_HEAD = Schema(
    ("error", Int16), ("leader", String("utf-8")), ("leader_url", String("utf-8")), ("config_offset", Int64)
)


class ProtocolError(ValueError):
    """Bytes that are not a Connect metadata or assignment of a version this worker reads."""


@dataclass(frozen=True)
class ConnectAssignment:
    """What the leader gives one member: with versions 1+, what it gains and what it must stop."""

    leader: str  # the leader's member id
    leader_url: str
    config_offset: int
    connectors: frozenset[str] = frozenset()
    tasks: frozenset[TaskId] = frozenset()
    revoked_connectors: frozenset[str] = frozenset()
    revoked_tasks: frozenset[TaskId] = frozenset()
    delay_ms: int = 0
    error: int = NO_ERROR
    version: int = 1

    def is_empty(self) -> bool:
        return not (self.connectors or self.tasks or self.revoked_connectors or self.revoked_tasks)


@dataclass(frozen=True)
class WorkerState:
    """A member's metadata: where it answers, how far it has read the config topic, what it holds."""

    url: str
    config_offset: int
    connectors: frozenset[str] = field(default_factory=frozenset)
    tasks: frozenset[TaskId] = field(default_factory=frozenset)


def _encode_units(connectors: frozenset[str], tasks: frozenset[TaskId]) -> bytes:
    by_connector: dict[str, list[int]] = {c: [CONNECTOR_TASK] for c in sorted(connectors)}
    for name, index in sorted(tasks):
        by_connector.setdefault(name, []).append(index)
    return _UNITS.encode([(name, ids) for name, ids in by_connector.items()])


def _decode_units(data: io.BytesIO) -> tuple[frozenset[str], frozenset[TaskId]]:
    entries = _UNITS.decode(data) or []
    connectors = {name for name, ids in entries if CONNECTOR_TASK in (ids or [])}
    tasks = {(name, i) for name, ids in entries for i in (ids or []) if i != CONNECTOR_TASK}
    return frozenset(connectors), frozenset(tasks)


def encode_assignment(assignment: ConnectAssignment) -> bytes:
    body = _HEADER.encode([assignment.version]) + _ASSIGNMENT_HEAD.encode(
        [assignment.error, assignment.leader, assignment.leader_url, assignment.config_offset]
    )
    body += _encode_units(assignment.connectors, assignment.tasks)
    if assignment.version >= 1:
        body += _encode_units(assignment.revoked_connectors, assignment.revoked_tasks)
        body += Int32.encode(assignment.delay_ms)
    return body


def decode_assignment(raw: bytes | None) -> ConnectAssignment | None:
    """The assignment in `raw` (None for an empty one); ProtocolError when it is not one."""
    if not raw:
        return None
    data = io.BytesIO(raw)
    try:
        (version,) = _HEADER.decode(data)
        if version < 0:
            raise ProtocolError(f"Unsupported assignment version {version}")
        error, leader, leader_url, config_offset = _ASSIGNMENT_HEAD.decode(data)
        connectors, tasks = _decode_units(data)
        revoked_connectors: frozenset[str] = frozenset()
        revoked_tasks: frozenset[TaskId] = frozenset()
        delay = 0
        if version >= 1 and data.tell() < len(raw):
            revoked_connectors, revoked_tasks = _decode_units(data)
            if data.tell() < len(raw):
                delay = Int32.decode(data)
    except ProtocolError:
        raise
    except Exception as exc:  # noqa: BLE001 - struct.error, a short buffer, bad UTF-8
        raise ProtocolError(f"Malformed Connect assignment: {exc}") from None
    return ConnectAssignment(
        leader or "",
        leader_url or "",
        config_offset,
        connectors,
        tasks,
        revoked_connectors,
        revoked_tasks,
        delay,
        error,
        version,
    )


def encode_metadata(state: WorkerState, version: int) -> bytes:
    body = _HEADER.encode([version]) + _CONFIG_STATE.encode([state.url, state.config_offset])
    if version >= 1:
        allocation = None
        if state.connectors or state.tasks:
            allocation = encode_assignment(
                ConnectAssignment("", "", state.config_offset, state.connectors, state.tasks, version=version)
            )
        body += Bytes.encode(allocation)
    return body


def decode_metadata(raw: bytes) -> WorkerState:
    """A member's metadata; ProtocolError when it is not Connect's."""
    data = io.BytesIO(raw)
    try:
        (version,) = _HEADER.decode(data)
        if version < 0:
            raise ProtocolError(f"Unsupported subscription version {version}")
        url, config_offset = _CONFIG_STATE.decode(data)
        allocation = Bytes.decode(data) if version >= 1 and data.tell() < len(raw) else None
    except ProtocolError:
        raise
    except Exception as exc:  # noqa: BLE001 - struct.error, a short buffer, bad UTF-8
        raise ProtocolError(f"Malformed Connect worker metadata: {exc}") from None
    held = decode_assignment(allocation)
    if held is None:
        return WorkerState(url or "", config_offset)
    return WorkerState(url or "", config_offset, held.connectors, held.tasks)
