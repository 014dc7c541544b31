"""Self-healing in the status bodies: an instance of a connector that asks for it (its connector or a task)
carries `auto_restart` while it has a count of automatic restarts or is FAILED:

    "auto_restart": {"count": 2, "max_restarts": 5, "last_restart": "2026-01-31T12:00:00.000Z",
                     "next_restart": "2026-01-31T12:06:00.000Z", "exhausted": false}

(`max_restarts` null: no maximum; `next_restart` null unless FAILED with restarts left). This runtime's
extension: the status of every other connector is the reference's body, exactly."""

from __future__ import annotations

from typing import Any

from ..control.errors import NotFound
from ..herder.auto_restart import AutoRestarter
from ..herder.interface import Herder
from ..storage.restart_records import Instance


class StatusAnnotator:
    def __init__(self, herder: Herder, restarter: AutoRestarter | None) -> None:
        self.herder = herder
        self.restarter = restarter

    def _views(self, name: str, states: dict[Instance, str]) -> dict[Instance, dict[str, Any]]:
        if self.restarter is None:
            return {}
        try:
            config = self.herder.connector_config(name)
        except NotFound:  # deleted meanwhile
            return {}
        return self.restarter.view(name, config, states)

    def connector_status(self, body: dict[str, Any]) -> dict[str, Any]:
        """`GET /connectors/{c}/status` (and each `status` of `?expand=status`)."""
        name = body["name"]
        states: dict[Instance, str] = {(name, None): body["connector"]["state"]}
        states.update({(name, task["id"]): task["state"] for task in body["tasks"]})
        views = self._views(name, states)
        if not views:
            return body
        connector = dict(body["connector"])
        if (name, None) in views:
            connector["auto_restart"] = views[(name, None)]
        tasks = [
            {**t, "auto_restart": views[(name, t["id"])]} if (name, t["id"]) in views else t for t in body["tasks"]
        ]
        return {**body, "connector": connector, "tasks": tasks}

    def listing(self, body: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """`GET /connectors?expand=status`."""
        return {
            name: {**entry, "status": self.connector_status(entry["status"])} if "status" in entry else entry
            for name, entry in body.items()
        }

    def task_status(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        """`GET /connectors/{c}/tasks/{t}/status`."""
        view = self._views(name, {(name, body["id"]): body["state"]}).get((name, body["id"]))
        return body if view is None else {**body, "auto_restart": view}
