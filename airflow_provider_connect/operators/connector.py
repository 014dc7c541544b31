"""Connector lifecycle operators. Each is idempotent, so Airflow retries are always safe."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any, ClassVar

from airflow.configuration import conf
from airflow.sdk import Context

from airflow_provider_connect.errors import ConnectNotFoundError, ConnectorConflictError
from airflow_provider_connect.hooks.base import normalise_config
from airflow_provider_connect.offsets_at_create import CreatedWithOffsets, create_with_offsets
from airflow_provider_connect.operators.base import ConnectOperatorBase, info_summary, load_config, load_offsets
from airflow_provider_connect.sensors.connector import handle_trigger_event
from airflow_provider_connect.status import (
    CATCHING_UP_STATES,
    NON_TERMINAL_STATES,
    ConnectState,
    Verdict,
    evaluate_status,
)
from airflow_provider_connect.triggers.connector import ConnectorStateTrigger


class _WaitsForState(ConnectOperatorBase):
    """An operator that may wait for a connector state after its request: polling in the worker slot, or,
    with `deferrable` (default: `[operators] default_deferrable`), in the triggerer."""

    def __init__(
        self,
        *,
        connector_name: str,
        wait_timeout: float = 300.0,
        poll_interval: float = 2.0,
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        **kwargs: Any,
    ) -> None:
        super().__init__(connector_name=connector_name, **kwargs)
        self.wait_timeout = wait_timeout
        self.poll_interval = poll_interval
        self.deferrable = deferrable

    def wait_for(
        self, target: ConnectState, result: Any, transitional: Iterable[ConnectState] = NON_TERMINAL_STATES
    ) -> Any:
        """Wait until `target` (connector and tasks), then return `result` (through the trigger's event when
        deferred); states in `transitional` are waited through, any other fails the task."""
        if not self.deferrable:
            self.hook.wait_for_state(
                self.connector_name,
                target,
                include_tasks=True,
                timeout=self.wait_timeout,
                poll_interval=self.poll_interval,
                transitional=transitional,
            )
            return result
        status = self.hook.get_connector_status_or_none(self.connector_name)
        if evaluate_status(status, target, include_tasks=True).verdict is Verdict.SUCCESS:
            return result  # already there: no need to occupy the triggerer
        self.defer(
            trigger=ConnectorStateTrigger(
                connector_name=self.connector_name,
                target_state=target.value,
                deadline=time.time() + self.wait_timeout,
                kafka_connect_conn_id=self.kafka_connect_conn_id,
                include_tasks=True,
                transitional_states=sorted(s.value for s in transitional),
                poll_interval=self.poll_interval,
            ),
            method_name="execute_complete",
            kwargs={"result": result},
            timeout=timedelta(seconds=self.wait_timeout),
        )

    def execute_complete(self, context: Context, event: Mapping[str, Any] | None = None, result: Any = None) -> Any:
        handle_trigger_event(event)  # raises on a failed, timed-out or unexpected state
        self.log.info("Connector %s reached the state it waited for", self.connector_name)
        return result


class ConnectorCreateOperator(_WaitsForState):
    """Create a connector (optionally in `initial_state` RUNNING/PAUSED/STOPPED, KIP-980), optionally starting
    from `offsets` (PATCH offsets' entries; JSON allowed).

    With offsets the connector is created STOPPED with them where the cluster supports KIP-995, else created
    STOPPED and its offsets PATCHed (Apache Kafka Connect 3.9), then moved to `initial_state`: found out from
    the create's answer, never configured (see offsets_at_create).

    With `wait_for_state`, wait until the connector and its tasks are in `initial_state` (RUNNING by
    default), in the worker slot or, with `deferrable`, in the triggerer.

    An existing connector with the identical config counts as success (a retried task, or a create whose
    answer was lost): with offsets, one still STOPPED gets them, one already moving is never rewound. A
    different existing config is an error unless `update_if_different=True`, which replaces it (its target
    state and offsets are kept, as Connect does on config updates). Returns a redacted summary (with offsets:
    how they were written and the cluster's message).
    """

    template_fields: Sequence[str] = ("connector_name", "kafka_connect_conn_id", "config", "initial_state", "offsets")
    template_ext: Sequence[str] = (".json",)
    template_fields_renderers: ClassVar[dict[str, str]] = {"config": "json", "offsets": "json"}

    def __init__(
        self,
        *,
        connector_name: str,
        config: Any,
        initial_state: str | None = None,
        offsets: Any = None,
        update_if_different: bool = False,
        wait_for_state: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(connector_name=connector_name, **kwargs)
        self.config = config
        self.initial_state = initial_state
        self.offsets = offsets
        self.update_if_different = update_if_different
        self.wait_for_state = wait_for_state

    def execute(self, context: Context) -> dict[str, Any]:
        summary = self._create()
        if self.wait_for_state:
            return self.wait_for(self._state(), summary)
        return summary

    def _state(self) -> ConnectState:
        return ConnectState.parse(self.initial_state or ConnectState.RUNNING.value)

    def _create(self) -> dict[str, Any]:
        config = load_config(self.config)
        name = self.connector_name
        offsets = load_offsets(self.offsets)
        if offsets:
            try:
                outcome = create_with_offsets(self.hook, name, config, offsets, self._state())
            except ConnectorConflictError:
                info = self.hook.get_connector(name)
            else:
                return self._with_offsets(outcome)
        else:
            info, created = self.hook.create_connector(name, config, self.initial_state or None)
            if created:
                self.log.info("Created connector %s", name)
                return info_summary(info, created=True, updated=False)
        existing, desired = dict(info.get("config") or {}), normalise_config(name, config)
        if existing == desired:
            self.log.info("Connector %s already exists with the same config; nothing to do", name)
            return info_summary(info, created=False, updated=False)
        differing = sorted(k for k in set(existing) | set(desired) if existing.get(k) != desired.get(k))
        if not self.update_if_different:
            raise ConnectorConflictError(
                f"Connector {name} already exists with a different config (differing keys: {', '.join(differing)}); "
                "pass update_if_different=True to replace it"
            )
        updated, _ = self.hook.put_connector_config(name, desired)
        self.log.info("Connector %s existed with a different config; updated keys: %s", name, ", ".join(differing))
        if offsets:
            self.log.warning("Connector %s existed: its offsets were left as they are", name)
        return info_summary(updated, created=False, updated=True)

    def _with_offsets(self, outcome: CreatedWithOffsets) -> dict[str, Any]:
        name = self.connector_name
        if not outcome.offsets_written:
            self.log.warning(
                "Connector %s already exists, same config, and has left STOPPED: offsets not written", name
            )
        elif outcome.created:
            how = "in the create (KIP-995)" if outcome.in_create else "by PATCH while STOPPED"
            self.log.info("Created connector %s with its offsets, written %s: %s", name, how, outcome.message)
        written = "create" if outcome.in_create else "patch" if outcome.patched else None
        return info_summary(
            outcome.info,
            created=outcome.created,
            updated=False,
            offsets={"written": written, "message": outcome.message},
        )


class ConnectorUpdateConfigOperator(ConnectOperatorBase):
    """Replace a connector's config (PUT; creates it if missing) or, with `patch=True`, PATCH it
    (a null value removes the key). The target state (running/paused/stopped) is unchanged."""

    template_fields: Sequence[str] = ("connector_name", "kafka_connect_conn_id", "config")
    template_ext: Sequence[str] = (".json",)
    template_fields_renderers: ClassVar[dict[str, str]] = {"config": "json"}

    def __init__(self, *, connector_name: str, config: Any, patch: bool = False, **kwargs: Any) -> None:
        super().__init__(connector_name=connector_name, **kwargs)
        self.config = config
        self.patch = patch

    def execute(self, context: Context) -> dict[str, Any]:
        config = load_config(self.config)
        if self.patch:
            info = self.hook.patch_connector_config(self.connector_name, config)
            return info_summary(info, created=False, updated=True)
        info, created = self.hook.put_connector_config(
            self.connector_name, normalise_config(self.connector_name, config)
        )
        return info_summary(info, created=created, updated=not created)


class ConnectorDeleteOperator(ConnectOperatorBase):
    """Delete a connector; with `reset_offsets=True` first stop it and reset its offsets (stop, reset,
    delete), so a future connector of the same name starts from scratch. Missing = success by default."""

    def __init__(
        self,
        *,
        connector_name: str,
        reset_offsets: bool = False,
        missing_ok: bool = True,
        stop_timeout: float = 120.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(connector_name=connector_name, **kwargs)
        self.reset_offsets = reset_offsets
        self.missing_ok = missing_ok
        self.stop_timeout = stop_timeout

    def execute(self, context: Context) -> dict[str, Any]:
        name = self.connector_name
        reset_message = None
        if self.reset_offsets:
            try:
                self.hook.ensure_stopped(name, timeout=self.stop_timeout)
                reset_message = self.hook.reset_offsets(name)
                self.log.info("Reset offsets of %s: %s", name, reset_message)
            except ConnectNotFoundError:
                if not self.missing_ok:
                    raise
                self.log.info("Connector %s does not exist; nothing to reset", name)
        deleted = self.hook.delete_connector(name, missing_ok=self.missing_ok)
        self.log.info("Connector %s %s", name, "deleted" if deleted else "was already absent")
        return {"name": name, "deleted": deleted, "offsets_reset": reset_message}


class _StateChangeOperator(_WaitsForState):
    target: ConnectState

    def __init__(self, *, connector_name: str, wait_for_state: bool = False, **kwargs: Any) -> None:
        super().__init__(connector_name=connector_name, **kwargs)
        self.wait_for_state = wait_for_state

    def change(self) -> None:
        raise NotImplementedError

    def execute(self, context: Context) -> str:
        self.change()
        self.log.info("Requested %s for connector %s", self.target.value, self.connector_name)
        if self.wait_for_state:  # the state it was in is the worker catching up (it answers before moving)
            return self.wait_for(self.target, self.target.value, CATCHING_UP_STATES)
        return self.target.value


class ConnectorPauseOperator(_StateChangeOperator):
    """PUT pause (202; idempotent). With `wait_for_state`, wait for PAUSED connector and tasks."""

    target = ConnectState.PAUSED

    def change(self) -> None:
        self.hook.pause_connector(self.connector_name)


class ConnectorResumeOperator(_StateChangeOperator):
    """PUT resume (202; idempotent). With `wait_for_state`, wait for RUNNING connector and tasks."""

    target = ConnectState.RUNNING

    def change(self) -> None:
        self.hook.resume_connector(self.connector_name)


class ConnectorStopOperator(_StateChangeOperator):
    """PUT stop (204; idempotent, KIP-875). With `wait_for_state`, wait for STOPPED with no tasks."""

    target = ConnectState.STOPPED

    def change(self) -> None:
        self.hook.stop_connector(self.connector_name)


class ConnectorRestartOperator(_WaitsForState):
    """POST restart (KIP-745) with `include_tasks` / `only_failed`; optionally wait until RUNNING.

    Returns the restarted instances (`["connector", "task-0", ...]`) as read from the server's plan.
    """

    def __init__(
        self,
        *,
        connector_name: str,
        include_tasks: bool = False,
        only_failed: bool = False,
        wait_for_running: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(connector_name=connector_name, **kwargs)
        self.include_tasks = include_tasks
        self.only_failed = only_failed
        self.wait_for_running = wait_for_running

    def execute(self, context: Context) -> dict[str, Any]:
        plan = self.hook.restart_connector(self.connector_name, self.include_tasks, self.only_failed)
        restarted = restarted_instances(plan) if plan is not None else ["connector"]
        self.log.info("Restart of %s: %s", self.connector_name, ", ".join(restarted) or "nothing to restart")
        result = {"name": self.connector_name, "restarted": restarted}
        if self.wait_for_running:
            return self.wait_for(ConnectState.RUNNING, result)
        return result


def restarted_instances(plan: dict[str, Any]) -> list[str]:
    """Instances shown RESTARTING in a KIP-745 restart plan."""
    out = []
    if (plan.get("connector") or {}).get("state") == ConnectState.RESTARTING.value:
        out.append("connector")
    out += [f"task-{t.get('id')}" for t in plan.get("tasks") or [] if t.get("state") == ConnectState.RESTARTING.value]
    return out
