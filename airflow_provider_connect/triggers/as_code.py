"""An event trigger for Airflow 3's AssetWatcher: fires when a cluster no longer matches its desired state.

It plans the desired state (a folder of connector files the triggerer can read) against the cluster every
`poll_interval` seconds, as `ConnectorsApplyOperator` would (one request), and yields one event naming the
connectors to create, update, pause, resume, stop or delete, then ends; the triggerer starts it again.
So a DAG scheduled on its asset applies a folder as soon as someone changes a file, and also when someone
changes the cluster by hand. FAILED instances alone do not fire it (`restart_failed_connectors_on_failure`
is for those), nor does an unreadable folder (the next scheduled apply fails and says why).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseEventTrigger, TriggerEvent

from airflow_provider_connect.as_code.desired import DesiredStateError, load_desired_state
from airflow_provider_connect.as_code.plan import Step, live_connectors, make_plan
from airflow_provider_connect.errors import ConnectApiError
from airflow_provider_connect.hooks.async_connect import AsyncConnectHook
from airflow_provider_connect.hooks.base import DEFAULT_CONN_ID


class DesiredStateDriftTrigger(BaseEventTrigger):
    def __init__(
        self,
        desired_state: str,
        kafka_connect_conn_id: str = DEFAULT_CONN_ID,
        prune: bool = False,
        poll_interval: float = 60.0,
    ) -> None:
        super().__init__()
        self.desired_state = str(desired_state)
        self.kafka_connect_conn_id = kafka_connect_conn_id
        self.prune = bool(prune)
        self.poll_interval = float(poll_interval)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "desired_state": self.desired_state,
                "kafka_connect_conn_id": self.kafka_connect_conn_id,
                "prune": self.prune,
                "poll_interval": self.poll_interval,
            },
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        hook = AsyncConnectHook(self.kafka_connect_conn_id)
        while True:
            try:
                desired = await asyncio.to_thread(load_desired_state, self.desired_state)
                expanded = await hook.get("/connectors", params=[("expand", "status"), ("expand", "info")])
            except DesiredStateError as exc:
                self.log.warning("The desired state cannot be read: %s", exc)
            except ConnectApiError as exc:  # the cluster is away: keep watching
                self.log.warning("Could not read the connectors: %s", exc)
            else:
                plan = make_plan(desired, live_connectors(expanded or {}), prune=self.prune)
                drifted = [c.name for c in plan.connectors if set(c.steps) - {Step.RESTART}]
                if drifted:
                    message = f"{self.kafka_connect_conn_id} differs from {self.desired_state}: {plan.summary()}"
                    self.log.info("%s", message)
                    yield TriggerEvent({"status": "drift", "connectors": drifted, "message": message})
                    return
            await asyncio.sleep(self.poll_interval)


__all__ = ["DesiredStateDriftTrigger"]
