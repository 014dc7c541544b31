"""Sensors: wait for a connector state, or for a sink to reach offsets. Modes poke, reschedule, deferrable."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import timedelta
from functools import cached_property
from typing import Any

from airflow.configuration import conf
from airflow.sdk import BaseSensorOperator, Context
from airflow.sdk.exceptions import AirflowException, AirflowSensorTimeout

from airflow_provider_connect.errors import ConnectorStateError
from airflow_provider_connect.hooks.base import DEFAULT_CONN_ID
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.offsets import evaluate_offsets, fetch_topic_ends, parse_targets, to_wire
from airflow_provider_connect.status import NON_TERMINAL_STATES, ConnectState, Verdict, evaluate_status
from airflow_provider_connect.triggers.connector import ConnectorStateTrigger, SinkOffsetsTrigger, sink_failure


def handle_trigger_event(event: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """Turn a trigger event into success (returned) or the matching exception."""
    if not event:
        raise AirflowException("Trigger ended without an event")
    status = event.get("status")
    message = event.get("message", "")
    if status == "success":
        return event
    if status == "failed":
        raise ConnectorStateError(message)
    if status == "timeout":
        raise AirflowSensorTimeout(message)
    raise AirflowException(f"Waiting on connector {event.get('connector')!r} failed: {message}")


class _ConnectSensor(BaseSensorOperator):
    def __init__(
        self,
        *,
        connector_name: str,
        kafka_connect_conn_id: str = DEFAULT_CONN_ID,
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.connector_name = connector_name
        self.kafka_connect_conn_id = kafka_connect_conn_id
        self.deferrable = deferrable

    @cached_property
    def hook(self) -> ConnectHook:
        return ConnectHook(self.kafka_connect_conn_id)

    def _deadline(self) -> float:
        return time.time() + float(self.timeout)

    def _defer_with(self, trigger: Any) -> None:
        self.defer(trigger=trigger, method_name="execute_complete", timeout=timedelta(seconds=float(self.timeout)))

    def execute_complete(self, context: Context, event: Mapping[str, Any] | None = None) -> Any:
        result = handle_trigger_event(event)
        self.log.info("%s", result.get("message"))
        return result.get("state")


class ConnectorStateSensor(_ConnectSensor):
    """Wait until a connector (and, with `include_tasks`, all its tasks) reaches `target_state`.

    Fails at once on FAILED or any state that is neither the target nor transitional (UNASSIGNED,
    RESTARTING by default), with the FAILED instances' traces (truncated) in the error.
    """

    template_fields: Sequence[str] = ("connector_name", "target_state", "kafka_connect_conn_id")

    def __init__(
        self,
        *,
        connector_name: str,
        target_state: str = ConnectState.RUNNING.value,
        include_tasks: bool = True,
        min_tasks: int | None = None,
        transitional_states: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(connector_name=connector_name, **kwargs)
        self.target_state = target_state
        self.include_tasks = include_tasks
        self.min_tasks = min_tasks
        self.transitional_states = (
            list(transitional_states)
            if transitional_states is not None
            else sorted(s.value for s in NON_TERMINAL_STATES)
        )

    def poke(self, context: Context) -> bool:
        status = self.hook.get_connector_status_or_none(self.connector_name)
        evaluation = evaluate_status(
            status,
            self.target_state,
            include_tasks=self.include_tasks,
            min_tasks=self.min_tasks,
            transitional=self.transitional_states,
        )
        if evaluation.verdict is Verdict.FAILED:
            raise ConnectorStateError(evaluation.message)
        self.log.info("%s", evaluation.message)
        return evaluation.verdict is Verdict.SUCCESS

    def execute(self, context: Context) -> Any:
        if not self.deferrable:
            return super().execute(context)
        if self.poke(context):  # already there: no need to occupy a triggerer
            return self.target_state
        self._defer_with(
            ConnectorStateTrigger(
                connector_name=self.connector_name,
                target_state=self.target_state,
                deadline=self._deadline(),
                kafka_connect_conn_id=self.kafka_connect_conn_id,
                include_tasks=self.include_tasks,
                min_tasks=self.min_tasks,
                transitional_states=self.transitional_states,
                poll_interval=float(self.poke_interval),
            )
        )


class SinkOffsetsSensor(_ConnectSensor):
    """Wait until a sink connector's committed offsets reach `target_offsets`, or the ends of `topics`.

    `target_offsets`: `{"topic:partition": offset}` or a list (see offsets.parse_targets); an offset is the
    next one to consume, so "all of a 10-record partition processed" is 10. With `topics` instead, the
    topics' end offsets are read once per execution via `kafka_config` (confluent-kafka settings such as
    `bootstrap.servers`) and become the targets.
    """

    template_fields: Sequence[str] = ("connector_name", "target_offsets", "topics", "kafka_connect_conn_id")

    def __init__(
        self,
        *,
        connector_name: str,
        target_offsets: Any = None,
        topics: Sequence[str] | None = None,
        kafka_config: Mapping[str, Any] | None = None,
        fail_on_failed_state: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(connector_name=connector_name, **kwargs)
        if (target_offsets is None) == (topics is None):
            raise ValueError("Give exactly one of target_offsets or topics")
        if topics is not None and not kafka_config:
            raise ValueError("Waiting for topic ends needs kafka_config (at least bootstrap.servers)")
        self.target_offsets = target_offsets
        self.topics = topics
        self.kafka_config = dict(kafka_config or {})
        self.fail_on_failed_state = fail_on_failed_state
        self._targets: dict[tuple[str, int], int] | None = None

    def resolve_targets(self) -> dict[tuple[str, int], int]:
        if self._targets is None:
            if self.topics is not None:
                self._targets = fetch_topic_ends(self.kafka_config, list(self.topics))
            else:
                self._targets = parse_targets(self.target_offsets)
        return self._targets

    def poke(self, context: Context) -> bool:
        evaluation = evaluate_offsets(self.hook.get_offsets(self.connector_name), self.resolve_targets())
        if evaluation.verdict is Verdict.SUCCESS:
            return True
        if self.fail_on_failed_state:
            failed = sink_failure(self.hook.get_connector_status_or_none(self.connector_name))
            if failed:
                raise ConnectorStateError(failed)
        self.log.info("%s", evaluation.message)
        return False

    def execute(self, context: Context) -> Any:
        self._targets = None  # ends are measured afresh on each execution (incl. each reschedule)
        if not self.deferrable:
            return super().execute(context)
        if self.poke(context):
            return None
        self._defer_with(
            SinkOffsetsTrigger(
                connector_name=self.connector_name,
                target_offsets=to_wire(self.resolve_targets()),
                deadline=self._deadline(),
                kafka_connect_conn_id=self.kafka_connect_conn_id,
                fail_on_failed_state=self.fail_on_failed_state,
                poll_interval=float(self.poke_interval),
            )
        )
