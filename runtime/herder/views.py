"""The REST bodies both herders build from their state: ConnectorInfo, TaskInfo, ConnectorStateInfo."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ..control.errors import NotFound
from ..control.restart import RestartPlan
from ..storage.base import ConnectorState, InstanceStatus
from ..storage.states import State

log = logging.getLogger(__name__)


def connector_info(name: str, state: ConnectorState, connector_type: str) -> dict[str, Any]:
    return {
        "name": name,
        "config": dict(state.config),
        "tasks": [{"connector": name, "task": i} for i in range(len(state.task_configs))],
        "type": connector_type,
    }


def task_infos(name: str, state: ConnectorState) -> list[dict[str, Any]]:
    return [{"id": {"connector": name, "task": i}, "config": dict(cfg)} for i, cfg in enumerate(state.task_configs)]


def tasks_config(name: str, state: ConnectorState, empty_is_missing: bool = True) -> dict[str, dict[str, str]]:
    """The deprecated `GET .../tasks-config` body. The standalone reference keys "not found" off an empty
    task map, so a connector without tasks is 404 there (`empty_is_missing`); distributed answers `{}`."""
    log.warning(
        "The 'GET /connectors/{connector}/tasks-config' endpoint is deprecated and will be removed in a "
        "future release; use 'GET /connectors/{connector}/tasks' instead"
    )
    if empty_is_missing and not state.task_configs:
        raise NotFound(f"Connector {name} not found")
    return {f"{name}-{i}": dict(cfg) for i, cfg in enumerate(state.task_configs)}


def status_body(status: InstanceStatus) -> dict[str, Any]:
    body: dict[str, Any] = {"state": status.state.value, "worker_id": status.worker_id}
    if status.trace:
        body["trace"] = status.trace
    return body


def connector_state_info(
    name: str,
    connector: InstanceStatus,
    tasks: Mapping[int, InstanceStatus],
    connector_type: str,
    plan: RestartPlan | None = None,
    task_count: int | None = None,
) -> dict[str, Any]:
    """ConnectorStateInfo; instances a restart plan will restart show as RESTARTING (KIP-745).
    Task statuses beyond `task_count` (left from a larger config, being removed) are not shown."""
    restarting = State.RESTARTING.value
    connector_body = status_body(connector)
    if plan is not None and plan.connector:
        connector_body = {"state": restarting, "worker_id": connector.worker_id}
    task_bodies = []
    for index, task in sorted(tasks.items()):
        if task_count is not None and index >= task_count:
            continue
        if plan is not None and index in plan.tasks:
            task_bodies.append({"id": index, "state": restarting, "worker_id": task.worker_id})
        else:
            task_bodies.append({"id": index, **status_body(task)})
    return {"name": name, "connector": connector_body, "tasks": task_bodies, "type": connector_type}
