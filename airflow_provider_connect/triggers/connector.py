"""Deferrable waits: poll Connect's REST API (GET only) until a state or offsets are reached.

Events: {"status": "success" | "failed" | "timeout" | "error", "message": str, ...}. Deadlines are wall-clock
epoch seconds so they survive a triggerer restart.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from airflow_provider_connect.errors import ConnectApiError
from airflow_provider_connect.hooks.async_connect import AsyncConnectHook
from airflow_provider_connect.hooks.base import DEFAULT_CONN_ID
from airflow_provider_connect.offsets import evaluate_offsets, parse_targets
from airflow_provider_connect.status import NON_TERMINAL_STATES, Evaluation, Verdict, evaluate_status


class _PollingTrigger(BaseTrigger):
    def __init__(self, kafka_connect_conn_id: str, connector_name: str, deadline: float, poll_interval: float) -> None:
        super().__init__()
        self.kafka_connect_conn_id = kafka_connect_conn_id
        self.connector_name = connector_name
        self.deadline = float(deadline)
        self.poll_interval = float(poll_interval)

    def _kwargs(self) -> dict[str, Any]:
        return {
            "kafka_connect_conn_id": self.kafka_connect_conn_id,
            "connector_name": self.connector_name,
            "deadline": self.deadline,
            "poll_interval": self.poll_interval,
        }

    async def check(self, hook: AsyncConnectHook) -> tuple[Evaluation, dict[str, Any]]:
        raise NotImplementedError

    async def run(self) -> AsyncIterator[TriggerEvent]:
        hook = AsyncConnectHook(self.kafka_connect_conn_id)
        base = {"connector": self.connector_name}
        while True:
            try:
                evaluation, extra = await self.check(hook)
            except ConnectApiError as exc:  # the hook already retried transient failures
                yield TriggerEvent({**base, "status": "error", "message": str(exc)})
                return
            if evaluation.verdict is Verdict.SUCCESS:
                yield TriggerEvent({**base, **extra, "status": "success", "message": evaluation.message})
                return
            if evaluation.verdict is Verdict.FAILED:
                yield TriggerEvent({**base, **extra, "status": "failed", "message": evaluation.message})
                return
            remaining = self.deadline - time.time()
            if remaining <= 0:
                yield TriggerEvent(
                    {
                        **base,
                        **extra,
                        "status": "timeout",
                        "message": f"deadline passed; last check: {evaluation.message}",
                    }
                )
                return
            self.log.info("%s", evaluation.message)
            await asyncio.sleep(min(self.poll_interval, remaining))


class ConnectorStateTrigger(_PollingTrigger):
    """Fires when the connector (and optionally its tasks) reaches `target_state`, or fails closed."""

    def __init__(
        self,
        connector_name: str,
        target_state: str,
        deadline: float,
        kafka_connect_conn_id: str = DEFAULT_CONN_ID,
        include_tasks: bool = True,
        min_tasks: int | None = None,
        transitional_states: list[str] | None = None,
        poll_interval: float = 5.0,
    ) -> None:
        super().__init__(kafka_connect_conn_id, connector_name, deadline, poll_interval)
        self.target_state = target_state
        self.include_tasks = include_tasks
        self.min_tasks = min_tasks
        self.transitional_states = (
            list(transitional_states)
            if transitional_states is not None
            else sorted(s.value for s in NON_TERMINAL_STATES)
        )

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                **self._kwargs(),
                "target_state": self.target_state,
                "include_tasks": self.include_tasks,
                "min_tasks": self.min_tasks,
                "transitional_states": self.transitional_states,
            },
        )

    async def check(self, hook: AsyncConnectHook) -> tuple[Evaluation, dict[str, Any]]:
        status = await hook.get_connector_status_or_none(self.connector_name)
        evaluation = evaluate_status(
            status,
            self.target_state,
            include_tasks=self.include_tasks,
            min_tasks=self.min_tasks,
            transitional=self.transitional_states,
        )
        state = ((status or {}).get("connector") or {}).get("state")
        return evaluation, {"state": state}


class SinkOffsetsTrigger(_PollingTrigger):
    """Fires when a sink connector's committed offsets reach `target_offsets` ([[topic, partition, offset]])."""

    def __init__(
        self,
        connector_name: str,
        target_offsets: list[list[Any]],
        deadline: float,
        kafka_connect_conn_id: str = DEFAULT_CONN_ID,
        fail_on_failed_state: bool = True,
        poll_interval: float = 5.0,
    ) -> None:
        super().__init__(kafka_connect_conn_id, connector_name, deadline, poll_interval)
        self.target_offsets = [list(t) for t in target_offsets]
        self.fail_on_failed_state = fail_on_failed_state

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                **self._kwargs(),
                "target_offsets": self.target_offsets,
                "fail_on_failed_state": self.fail_on_failed_state,
            },
        )

    async def check(self, hook: AsyncConnectHook) -> tuple[Evaluation, dict[str, Any]]:
        offsets = await hook.get_offsets(self.connector_name)
        evaluation = evaluate_offsets(offsets, parse_targets(self.target_offsets))
        if evaluation.verdict is Verdict.WAITING and self.fail_on_failed_state:
            # A FAILED sink never catches up: fail now instead of waiting for the deadline.
            status = await hook.get_connector_status_or_none(self.connector_name)
            failed = sink_failure(status)
            if failed:
                return Evaluation(Verdict.FAILED, failed), {}
        return evaluation, {}


def sink_failure(status: dict[str, Any] | None) -> str | None:
    """A message when the connector or any task is FAILED (with traces), else None."""
    from airflow_provider_connect.status import ConnectState, failure_summary

    if not status:
        return None
    states = [(status.get("connector") or {}).get("state")] + [t.get("state") for t in status.get("tasks") or []]
    if ConnectState.FAILED.value in states:
        return f"connector {status.get('name')} cannot catch up:\n{failure_summary(status)}"
    return None
