"""Move a connector, with its offsets, from one Connect cluster to another.

Steps: stop on the source (which flushes its last offsets), read the offsets, create the connector on the
target starting from them, move it to its final state, then delete (or leave stopped) the source copy.
Offsets are read after the stop, not before: read first and a running source could move on, and the
target would repeat what the source did in between. Where the target supports KIP-995 the offsets go in the
create itself; elsewhere (Apache Kafka Connect 3.9) KIP-980's recipe: created STOPPED, offsets PATCHed,
resumed. Which one is found out from the create's answer, never configured (offsets_at_create).

Every step is idempotent and the operator first looks at both clusters to see how far an earlier try
got, so an Airflow retry after a failure at any step finishes the move without repeating or losing work:
- target absent or STOPPED: (re)do stop / read / create with offsets or alter / resume (all repeatable while
  the source is stopped, because the source's offsets no longer move);
- target already running or paused: its offsets were transferred and it may have moved on, so they are
  never touched again; only the source clean-up remains;
- source already deleted: the move had completed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import timedelta
from functools import cached_property
from typing import Any, ClassVar

from airflow.configuration import conf
from airflow.sdk import BaseOperator, Context

from airflow_provider_connect.errors import ConnectorConflictError, ConnectorStateError
from airflow_provider_connect.hooks.base import normalise_config
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.lineage import operator_lineage
from airflow_provider_connect.links import ConnectorLink
from airflow_provider_connect.offsets_at_create import create_with_offsets, set_target_state
from airflow_provider_connect.operators.base import load_config
from airflow_provider_connect.redaction import secret_values
from airflow_provider_connect.sensors.connector import handle_trigger_event
from airflow_provider_connect.status import CATCHING_UP_STATES, ConnectState, Verdict, evaluate_status
from airflow_provider_connect.triggers.connector import ConnectorStateTrigger

SOURCE_ACTIONS = ("delete", "stop")


class ConnectorMigrateOperator(BaseOperator):
    """Migrate `connector_name` from `source_conn_id` to `target_conn_id`, continuing from its offsets.

    :param target_connector_name: name on the target (default: the same name). Note for sinks: the
        consumer group is `connect-<name>`, so a new name on the same Kafka cluster is a new group, which
        is fine because the offsets are written to it explicitly.
    :param config_overrides: keys to change on the target (templated; JSON allowed), e.g. a new
        `bootstrap.servers`-style setting of the connector itself.
    :param on_source: "delete" (default) or "stop" (keep the source STOPPED, e.g. for a rollback).
    :param target_state: state to leave the target in: RUNNING (default), PAUSED or STOPPED.
    :param wait_timeout: seconds to wait for stops and, with `wait_for_running`, for the target to run.
    :param deferrable: wait for the source's stop and the target's start in the triggerer, not in a worker
        slot (default: `[operators] default_deferrable`). After each wait the operator runs again from the
        top: every step is idempotent and it looks at both clusters first, so it carries on where it was.
    Returns a summary: the steps done in this try, the number of offsets moved.
    """

    template_fields: Sequence[str] = (
        "connector_name",
        "target_connector_name",
        "source_conn_id",
        "target_conn_id",
        "config_overrides",
        "on_source",
        "target_state",
    )
    template_fields_renderers: ClassVar[dict[str, str]] = {"config_overrides": "json"}
    ui_color = "#fdf0dc"
    operator_extra_links = (ConnectorLink(),)  # the connector on the target cluster

    def __init__(
        self,
        *,
        connector_name: str,
        source_conn_id: str,
        target_conn_id: str,
        target_connector_name: str | None = None,
        config_overrides: Any = None,
        on_source: str = "delete",
        target_state: str = ConnectState.RUNNING.value,
        wait_for_running: bool = True,
        wait_timeout: float = 300.0,
        poll_interval: float = 1.0,
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.connector_name = connector_name
        self.target_connector_name = target_connector_name
        self.source_conn_id = source_conn_id
        self.target_conn_id = target_conn_id
        self.config_overrides = config_overrides
        self.on_source = on_source
        self.target_state = target_state
        self.wait_for_running = wait_for_running
        self.wait_timeout = wait_timeout
        self.poll_interval = poll_interval
        self.deferrable = deferrable

    def pre_execute(self, context: Any) -> None:
        ConnectorLink.persist(context, self.target.connector_url(self.target_connector_name or self.connector_name))

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """The moved connector's datasets, as it is now on the target."""
        return operator_lineage(self.target, self.target_connector_name or self.connector_name)

    @cached_property
    def source(self) -> ConnectHook:
        return ConnectHook(self.source_conn_id)

    @cached_property
    def target(self) -> ConnectHook:
        return ConnectHook(self.target_conn_id)

    def execute(self, context: Context) -> dict[str, Any]:
        if self.on_source not in SOURCE_ACTIONS:
            raise ValueError(f"on_source must be one of {SOURCE_ACTIONS}, not {self.on_source!r}")
        final_state = ConnectState.parse(self.target_state)
        src_name = self.connector_name
        dst_name = self.target_connector_name or src_name
        if self.source_conn_id == self.target_conn_id and src_name == dst_name:
            raise ValueError("Source and target are the same connector on the same connection")
        steps: list[str] = []
        moved = 0

        source_info = self.source.get_connector_or_none(src_name)
        target_status = self.target.get_connector_status_or_none(dst_name)
        target_exists = self.target.get_connector_or_none(dst_name) is not None
        target_state = ((target_status or {}).get("connector") or {}).get("state")

        if source_info is None:
            if not target_exists:
                raise ConnectorStateError(f"Connector {src_name} exists on neither the source nor the target")
            self.log.info(
                "Source %s is gone and target %s exists: an earlier try completed the move", src_name, dst_name
            )
            return {"connector": dst_name, "steps": ["already migrated"], "offsets": None}

        transferred = target_exists and target_state not in (None, ConnectState.STOPPED.value)
        if transferred and final_state is not ConnectState.STOPPED:
            self.log.info("Target %s is already %s: offsets were transferred by an earlier try", dst_name, target_state)
        else:
            moved = self._transfer(src_name, dst_name, source_info, target_exists, final_state, steps)

        if self.on_source == "delete":
            if self.source.delete_connector(src_name, missing_ok=True):
                steps.append("deleted on source")
        else:
            self.source.ensure_stopped(src_name, timeout=self.wait_timeout, poll_interval=self.poll_interval)
            steps.append("left stopped on source")
        self.log.info("Migration of %s -> %s done: %s", src_name, dst_name, "; ".join(steps))
        return {"connector": dst_name, "steps": steps, "offsets": moved}

    def _transfer(
        self,
        src_name: str,
        dst_name: str,
        source_info: Mapping[str, Any],
        target_exists: bool,
        final_state: ConnectState,
        steps: list[str],
    ) -> int:
        # 1-2. Stop on the source (tasks commit their last offsets on stop), then read those offsets.
        self._ensure_stopped_on_source(src_name)
        steps.append("stopped on source")
        offsets = self.source.get_offsets(src_name)
        steps.append(f"read {len(offsets)} offset(s) from source")

        config = {k: v for k, v in (source_info.get("config") or {}).items() if k != "name"}
        self.source.remember_secrets(secret_values(config))
        if self.config_overrides:
            config.update(load_config(self.config_overrides))
        desired = normalise_config(dst_name, config)

        # 3-5. Create it on the target starting from those offsets, then move it to its final state: the offsets
        # go in the create where the target supports KIP-995, else they are PATCHed into the STOPPED connector
        # (detected from the create's answer: offsets_at_create). Or finish the STOPPED copy of an earlier try.
        entries = [_entry(o) for o in offsets]
        if target_exists:
            existing = self.target.get_connector_config(dst_name)
            if existing != desired:
                raise ConnectorConflictError(
                    f"Target already has a stopped connector {dst_name} with a different config "
                    f"(differing keys: {', '.join(sorted(k for k in set(existing) | set(desired) if existing.get(k) != desired.get(k)))})"
                )
            steps.append("found stopped copy on target")
            self.target.ensure_stopped(dst_name, timeout=self.wait_timeout, poll_interval=self.poll_interval)
            if entries:  # repeatable: the source's offsets are frozen
                self.log.info("%s", self.target.alter_offsets(dst_name, entries))
                steps.append("altered offsets on target")
            set_target_state(self.target, dst_name, final_state)
        elif entries:
            outcome = create_with_offsets(self.target, dst_name, config, entries, final_state)
            if not outcome.offsets_written:
                raise ConnectorStateError(f"Target connector {dst_name} appeared meanwhile and is not STOPPED")
            if outcome.in_create:
                steps.append("created on target with its offsets (KIP-995)")
            else:
                steps += ["created stopped on target", "altered offsets on target"]
        else:
            info, created = self.target.create_connector(dst_name, config, final_state.value)
            if not created and dict(info.get("config") or {}) != desired:
                raise ConnectorConflictError(f"Target connector {dst_name} appeared with a different config")
            steps.append("created on target")
        if final_state is ConnectState.RUNNING:
            steps.append("resumed on target")
            if self.wait_for_running:
                self._wait_running_on_target(dst_name, steps, len(offsets))
        elif final_state is ConnectState.PAUSED:
            steps.append("paused on target")
        return len(offsets)

    # ---- waits: here, or in the triggerer (deferrable) ---------------------------------------------

    def _ensure_stopped_on_source(self, name: str) -> None:
        if not self.deferrable:
            self.source.ensure_stopped(name, timeout=self.wait_timeout, poll_interval=self.poll_interval)
            return
        self.source.stop_connector(name)
        if not self._reached(self.source, name, ConnectState.STOPPED):
            self._defer_until(self.source_conn_id, name, ConnectState.STOPPED, {})

    def _wait_running_on_target(self, name: str, steps: list[str], moved: int) -> None:
        if not self.deferrable:
            self.target.wait_for_state(
                name,
                ConnectState.RUNNING,
                include_tasks=True,
                timeout=self.wait_timeout,
                poll_interval=self.poll_interval,
                transitional=CATCHING_UP_STATES,  # resumed from STOPPED: still shown STOPPED for a moment
            )
        elif not self._reached(self.target, name, ConnectState.RUNNING):
            self._defer_until(self.target_conn_id, name, ConnectState.RUNNING, {"earlier_steps": steps, "moved": moved})

    @staticmethod
    def _reached(hook: ConnectHook, name: str, state: ConnectState) -> bool:
        status = hook.get_connector_status_or_none(name)
        return evaluate_status(status, state, include_tasks=True).verdict is Verdict.SUCCESS

    def _defer_until(self, conn_id: str, name: str, state: ConnectState, kwargs: dict[str, Any]) -> None:
        self.defer(
            trigger=ConnectorStateTrigger(
                connector_name=name,
                target_state=state.value,
                deadline=time.time() + self.wait_timeout,
                kafka_connect_conn_id=conn_id,
                include_tasks=True,
                transitional_states=sorted(s.value for s in CATCHING_UP_STATES),  # each follows a request
                poll_interval=self.poll_interval,
            ),
            method_name="execute_complete",
            kwargs=kwargs,
            timeout=timedelta(seconds=self.wait_timeout),
        )

    def execute_complete(
        self,
        context: Context,
        event: Mapping[str, Any] | None = None,
        earlier_steps: list[str] | None = None,
        moved: int | None = None,
    ) -> dict[str, Any]:
        """Back from the triggerer: the state was reached (or this raises); carry on from where the move is."""
        handle_trigger_event(event)
        result = self.execute(context)
        if earlier_steps:
            result["steps"] = [*earlier_steps, *result["steps"]]
        if moved is not None:
            result["offsets"] = moved
        return result


def _entry(offset: Mapping[str, Any]) -> dict[str, Any]:
    return {"partition": offset["partition"], "offset": offset.get("offset")}
