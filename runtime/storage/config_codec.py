"""Connector config records in the reference's config-topic format, with KIP-915's reading rules.

The standalone config file and (later) the distributed config topic hold the same records:
`connector-<c>` `{"properties": {...}}`, `task-<c>-<n>` `{"properties": {...}}`, `commit-<c>`
`{"tasks": N}`, `target-state-<c>` `{"state": ..., "state.v2": ...}` and others. Readers skip what
they do not understand with a log line and carry on; writers stay downgrade-safe (STOPPED is
written as `state: PAUSED` plus `state.v2: STOPPED`, so an older reader falls back to PAUSED).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from .states import TargetState

log = logging.getLogger(__name__)

CONNECTOR_PREFIX = "connector-"
TASK_PREFIX = "task-"
COMMIT_PREFIX = "commit-"
TARGET_STATE_PREFIX = "target-state-"
RESTART_PREFIX = "restart-connector-"
TASKS_FENCING_PREFIX = "tasks-fencing-"
SESSION_KEY = "session-key"
LOGGER_CLUSTER_PREFIX = "logger-cluster-"


@dataclass
class ConnectorState:
    config: dict[str, str]
    target_state: TargetState = TargetState.STARTED
    task_configs: list[dict[str, str]] = field(default_factory=list)


@dataclass
class ConfigSnapshot:
    """What a reader has assembled from the records so far."""

    connectors: dict[str, ConnectorState] = field(default_factory=dict)
    # target states seen before their connector config (creation writes the state first)
    pending_target_states: dict[str, TargetState] = field(default_factory=dict)
    pending_tasks: dict[str, dict[int, dict[str, str]]] = field(default_factory=dict)
    inconsistent: set[str] = field(default_factory=set)


# ---- writing -------------------------------------------------------------------------------------


def connector_record(name: str, config: dict[str, str] | None) -> tuple[str, dict[str, Any] | None]:
    return CONNECTOR_PREFIX + name, None if config is None else {"properties": dict(config)}


def task_record(name: str, index: int, config: dict[str, str]) -> tuple[str, dict[str, Any]]:
    return f"{TASK_PREFIX}{name}-{index}", {"properties": dict(config)}


def commit_record(name: str, task_count: int) -> tuple[str, dict[str, Any]]:
    return COMMIT_PREFIX + name, {"tasks": task_count}


def target_state_record(name: str, state: TargetState | None) -> tuple[str, dict[str, Any] | None]:
    if state is None:
        return TARGET_STATE_PREFIX + name, None
    legacy = TargetState.PAUSED if state is TargetState.STOPPED else state
    return TARGET_STATE_PREFIX + name, {"state": legacy.value, "state.v2": state.value}


def connector_records(name: str, state: ConnectorState) -> list[tuple[str, dict[str, Any] | None]]:
    """All records describing one connector, in the order the reference writes them."""
    records = [target_state_record(name, state.target_state), connector_record(name, state.config)]
    records += [task_record(name, i, cfg) for i, cfg in enumerate(state.task_configs)]
    records.append(commit_record(name, len(state.task_configs)))
    return records


# ---- reading -------------------------------------------------------------------------------------


def parse_target_state(value: Any) -> TargetState | None:
    """`state.v2` wins when it is a known state; otherwise `state`; unknown values give None."""
    if not isinstance(value, dict):
        return None
    for field_name in ("state.v2", "state"):
        raw = value.get(field_name)
        if isinstance(raw, str):
            try:
                return TargetState(raw)
            except ValueError:
                log.warning("Ignoring unknown target state %r in field %s; falling back", raw, field_name)
    return None


def _properties(key: str, value: Any) -> dict[str, str] | None:
    if not isinstance(value, dict) or not isinstance(value.get("properties"), dict):
        log.error("Ignoring config record %s: its value has no 'properties' object", key)
        return None
    props = value["properties"]
    return {str(k): str(v) for k, v in props.items() if v is not None}


def _task_key(key: str) -> tuple[str, int] | None:
    name, _, index = key[len(TASK_PREFIX) :].rpartition("-")
    if not name or not index.isdigit():
        return None
    return name, int(index)


def apply_record(snapshot: ConfigSnapshot, key: str, value: Any) -> None:
    """Apply one record; anything unknown or malformed is logged and skipped (KIP-915).

    A changed connector gets a new ConnectorState rather than being changed in place, so a shallow copy
    of `snapshot.connectors` taken earlier stays as it was (readers share such copies).
    """
    if key.startswith(TARGET_STATE_PREFIX):
        name = key[len(TARGET_STATE_PREFIX) :]
        if value is None:
            snapshot.pending_target_states.pop(name, None)
            if name in snapshot.connectors:
                snapshot.connectors[name] = replace(snapshot.connectors[name], target_state=TargetState.STARTED)
            return
        state = parse_target_state(value)
        if state is None:
            log.error("Ignoring target state record %s with unreadable value %r", key, value)
            return
        if name in snapshot.connectors:
            snapshot.connectors[name] = replace(snapshot.connectors[name], target_state=state)
        else:
            snapshot.pending_target_states[name] = state
    elif key.startswith(CONNECTOR_PREFIX):
        name = key[len(CONNECTOR_PREFIX) :]
        if value is None:
            snapshot.connectors.pop(name, None)
            snapshot.pending_tasks.pop(name, None)
            return
        props = _properties(key, value)
        if props is None:
            return
        existing = snapshot.connectors.get(name)
        if existing is not None:
            snapshot.connectors[name] = replace(existing, config=props)
        else:
            state = snapshot.pending_target_states.pop(name, TargetState.STARTED)
            snapshot.connectors[name] = ConnectorState(props, state)
    elif key.startswith(TASK_PREFIX):
        parsed = _task_key(key)
        if parsed is None:
            log.error("Ignoring task config record with invalid key %s", key)
            return
        if value is None:
            log.error("Ignoring null task config record %s", key)
            return
        props = _properties(key, value)
        if props is not None:
            snapshot.pending_tasks.setdefault(parsed[0], {})[parsed[1]] = props
    elif key.startswith(COMMIT_PREFIX):
        name = key[len(COMMIT_PREFIX) :]
        count = value.get("tasks") if isinstance(value, dict) else None
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            log.error("Ignoring task commit record %s with invalid value %r", key, value)
            return
        pending = snapshot.pending_tasks.pop(name, {})
        if name not in snapshot.connectors:
            return  # commit for a removed connector (compaction edge case)
        if all(i in pending for i in range(count)):
            snapshot.connectors[name] = replace(
                snapshot.connectors[name], task_configs=[pending[i] for i in range(count)]
            )
            snapshot.inconsistent.discard(name)
        else:
            log.error("Connector %s has an inconsistent set of task configs; its tasks read as empty", name)
            snapshot.connectors[name] = replace(snapshot.connectors[name], task_configs=[])
            snapshot.inconsistent.add(name)
    elif key.startswith((RESTART_PREFIX, TASKS_FENCING_PREFIX, LOGGER_CLUSTER_PREFIX)) or key == SESSION_KEY:
        return  # meaningful only to a distributed worker's live loop, never to a snapshot
    else:
        log.error("Discarding config update record with invalid key: %s", key)


def read_records(records: Iterable[tuple[str, Any]]) -> ConfigSnapshot:
    snapshot = ConfigSnapshot()
    for key, value in records:
        if not isinstance(key, str):
            log.error("Discarding config record with a non-string key %r", key)
            continue
        apply_record(snapshot, key, value)
    return snapshot
