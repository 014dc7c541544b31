"""Restart what failed: the steps of the `restart_failed_connectors` DAGs (scheduled and event-driven).

Only FAILED instances are restarted (KIP-745 `includeTasks=true&onlyFailed=true`); healthy connectors are
never touched.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from airflow_provider_connect.errors import ConnectApiError, ConnectorStateError
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.status import ConnectState


def failed_instances(expanded: dict[str, Any], wanted: Iterable[str] = ()) -> list[dict[str, Any]]:
    """From `GET /connectors?expand=status`: each connector with a FAILED connector instance or FAILED tasks."""
    wanted = set(wanted)
    failed = []
    for name, entry in sorted(expanded.items()):
        if wanted and name not in wanted:
            continue
        status = entry.get("status") or {}
        connector_failed = (status.get("connector") or {}).get("state") == ConnectState.FAILED.value
        failed_tasks = [t["id"] for t in status.get("tasks") or [] if t.get("state") == ConnectState.FAILED.value]
        if connector_failed or failed_tasks:
            failed.append({"name": name, "connector_failed": connector_failed, "failed_tasks": failed_tasks})
    return failed


def find_failed(hook: ConnectHook, wanted: Iterable[str] = ()) -> list[dict[str, Any]]:
    return failed_instances(hook.list_connectors(expand=["status"]), wanted)


def restart_failed(hook: ConnectHook, failed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    restarted = []
    for entry in failed:
        plan = hook.restart_connector(entry["name"], include_tasks=True, only_failed=True) or {}
        instances = (["connector"] if (plan.get("connector") or {}).get("state") == "RESTARTING" else []) + [
            f"task-{t['id']}" for t in plan.get("tasks") or [] if t.get("state") == "RESTARTING"
        ]
        restarted.append({**entry, "restarted": instances})
    return restarted


def report(hook: ConnectHook, restarted: list[dict[str, Any]], wait_timeout_s: float) -> dict[str, Any]:
    """Wait for each restarted connector and its tasks to be RUNNING: {"healed", "still_failed", "healthy"}."""
    healed, still_failed = [], {}
    for entry in restarted:
        try:
            hook.wait_for_state(
                entry["name"], ConnectState.RUNNING, include_tasks=True, timeout=wait_timeout_s, poll_interval=1.0
            )
            healed.append(entry["name"])
        except (ConnectorStateError, ConnectApiError) as exc:
            still_failed[entry["name"]] = str(exc)
    total = len(hook.list_connectors())
    return {"healed": healed, "still_failed": still_failed, "healthy": total - len(restarted)}


__all__ = ["failed_instances", "find_failed", "report", "restart_failed"]
