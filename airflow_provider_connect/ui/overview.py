"""What the Kafka Connect page shows of one cluster, read through the provider's hook, and what it may do.

One `GET /connectors?expand=status&expand=info` gives every connector's state, tasks, workers and traces;
each connector's topics (KIP-558) and offsets (KIP-875) take one request each, sent a few at a time.
Nothing here returns a config: traces are scrubbed of the connector's secret config values.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from airflow_provider_connect.errors import TRACE_LIMIT, ConnectApiError
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.redaction import scrub, secret_values, truncate
from airflow_provider_connect.status import ConnectState

READ_CONCURRENCY = 8


class Action(str, enum.Enum):
    RESTART_FAILED = "restart-failed"
    PAUSE = "pause"
    RESUME = "resume"
    STOP = "stop"


def perform(hook: ConnectHook, name: str, action: Action) -> str:
    """Do `action` on connector `name`; return what happened, for the page to show."""
    if action is Action.RESTART_FAILED:
        plan = hook.restart_connector(name, include_tasks=True, only_failed=True) or {}
        restarted = (["connector"] if (plan.get("connector") or {}).get("state") == "RESTARTING" else []) + [
            f"task {t.get('id')}" for t in plan.get("tasks") or [] if t.get("state") == "RESTARTING"
        ]
        return f"Restarting {', '.join(restarted)} of {name}" if restarted else f"Nothing of {name} had failed"
    steps: dict[Action, Callable[[str], None]] = {
        Action.PAUSE: hook.pause_connector,
        Action.RESUME: hook.resume_connector,
        Action.STOP: hook.stop_connector,
    }
    steps[action](name)
    return f"Requested {action.value} of {name}"


def cluster_overview(hook: ConnectHook) -> list[dict[str, Any]]:
    """Every connector of the cluster, sorted by name, with its tasks, workers, traces, topics and offsets."""
    expanded: Mapping[str, Any] = hook.list_connectors(expand=["status", "info"]) or {}
    connectors = [_connector(name, entry) for name, entry in sorted(expanded.items())]
    with ThreadPoolExecutor(max_workers=READ_CONCURRENCY, thread_name_prefix="connect-view") as pool:
        topics = pool.map(lambda c: _read(lambda: hook.get_connector_topics(c["name"])), connectors)
        offsets = pool.map(lambda c: _read(lambda: _sorted(hook.get_offsets(c["name"]))), connectors)
        for connector, (topic_list, topics_error), (offset_list, offsets_error) in zip(
            connectors, topics, offsets, strict=True
        ):
            connector.update(topics=topic_list, topics_error=topics_error)
            connector.update(offsets=offset_list, offsets_error=offsets_error)
    return connectors


def _connector(name: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    status, info = entry.get("status") or {}, entry.get("info") or {}
    config = info.get("config") or {}
    hidden = secret_values(config)
    connector = status.get("connector") or {}
    tasks = [
        {
            "id": task.get("id"),
            "state": task.get("state"),
            "worker_id": task.get("worker_id"),
            "trace": _trace(task.get("trace"), hidden),
        }
        for task in sorted(status.get("tasks") or [], key=lambda t: t.get("id", 0))
    ]
    state = connector.get("state")
    return {
        "name": name,
        "type": status.get("type") or info.get("type"),
        "class": config.get("connector.class"),
        "state": state,
        "worker_id": connector.get("worker_id"),
        "trace": _trace(connector.get("trace"), hidden),
        "tasks": tasks,
        "failed": state == ConnectState.FAILED.value or any(t["state"] == ConnectState.FAILED.value for t in tasks),
    }


def _sorted(offsets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(offsets, key=lambda entry: json.dumps(entry.get("partition"), sort_keys=True))


def _trace(trace: str | None, hidden: set[str]) -> str | None:
    return truncate(scrub(trace, hidden), TRACE_LIMIT * 4) if trace else None


def _read(call: Callable[[], Any]) -> tuple[Any, str | None]:
    try:
        return call(), None
    except ConnectApiError as exc:  # shown beside the connector; the rest of the page still loads
        return None, exc.server_message or str(exc)
