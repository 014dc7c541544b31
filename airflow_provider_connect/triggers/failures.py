"""An event trigger for Airflow 3's AssetWatcher: fires when a connector or one of its tasks is FAILED.

Used as `Asset(..., watchers=[AssetWatcher(name=..., trigger=ConnectorFailedTrigger(...))])`, it lets a DAG
such as `restart_failed_connectors_on_failure` run when something fails instead of on a schedule. It polls
`GET /connectors?expand=status` (one request for the whole cluster) and yields one event naming every
connector with FAILED instances, then ends; the triggerer starts it again for the next failure. A failure
still present then (a restart under way) fires again: the DAG runs one at a time and restarts only what is
FAILED when it looks, so a repeated event costs a run, never a second restart of a healthy instance.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseEventTrigger, TriggerEvent

from airflow_provider_connect.errors import ConnectApiError
from airflow_provider_connect.hooks.async_connect import AsyncConnectHook
from airflow_provider_connect.hooks.base import DEFAULT_CONN_ID
from airflow_provider_connect.remediation import failed_instances


class ConnectorFailedTrigger(BaseEventTrigger):
    def __init__(
        self,
        kafka_connect_conn_id: str = DEFAULT_CONN_ID,
        connectors: list[str] | None = None,
        poll_interval: float = 15.0,
    ) -> None:
        super().__init__()
        self.kafka_connect_conn_id = kafka_connect_conn_id
        self.connectors = list(connectors or [])
        self.poll_interval = float(poll_interval)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "kafka_connect_conn_id": self.kafka_connect_conn_id,
                "connectors": self.connectors,
                "poll_interval": self.poll_interval,
            },
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        hook = AsyncConnectHook(self.kafka_connect_conn_id)
        while True:
            try:
                expanded = await hook.get("/connectors", params=[("expand", "status")])
            except ConnectApiError as exc:  # the cluster is away: keep watching, it is not a connector failure
                self.log.warning("Could not read the connectors' statuses: %s", exc)
            else:
                failed = failed_instances(expanded or {}, self.connectors)
                if failed:
                    names = [entry["name"] for entry in failed]
                    self.log.info("FAILED instances in %s", names)
                    yield TriggerEvent(
                        {"status": "failed", "connectors": failed, "message": f"FAILED instances in {', '.join(names)}"}
                    )
                    return
            await asyncio.sleep(self.poll_interval)


__all__ = ["ConnectorFailedTrigger"]
