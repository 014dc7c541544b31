"""Connectors as code: make a cluster's connectors match a declared desired state (plan, then apply)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from airflow.sdk import BaseOperator, Context

from airflow_provider_connect.as_code.apply import SETTLE_TIMEOUT_S, apply_plan, wait_for_targets, wait_until_settled
from airflow_provider_connect.as_code.desired import DesiredConnector, load_desired_state
from airflow_provider_connect.as_code.plan import Plan, Step, live_connectors, make_plan
from airflow_provider_connect.hooks.base import DEFAULT_CONN_ID
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.redaction import secret_values
from airflow_provider_connect.status import ConnectState


class ConnectorsApplyOperator(BaseOperator):
    """Plan the changes that make the cluster's connectors match `desired_state`, show them, apply them.

    :param desired_state: a folder (or file) of JSON/YAML connector files (a relative path is taken from
        the DAG file's folder), a mapping name -> {config, state, offsets}, or a list of such specs with
        `name`. See `airflow_provider_connect.as_code.desired` for the format.
    :param prune: delete the connectors the desired state does not declare.
    :param dry_run: only plan: log the diff and return the plan, change nothing.
    :param wait_for_states: after applying, wait until every connector changed is in its declared state
        (and fail, with the tasks' traces, if one FAILED).
    :param max_concurrency: connectors changed side by side (default 1; raise it only for a distributed
        cluster: a standalone Apache Kafka Connect 3.9 worker can deadlock on concurrent state changes).
    Logs the plan as a diff (secrets redacted) and returns `{"dry_run", "plan", "applied"}`, also redacted.
    Applying an unchanged desired state again plans nothing and changes nothing.
    """

    # `dry_run` is kept as `plan_only`: BaseOperator has a dry_run() method of its own
    template_fields: Sequence[str] = ("desired_state", "kafka_connect_conn_id", "prune", "plan_only")
    template_fields_renderers: ClassVar[dict[str, str]] = {"desired_state": "json"}
    ui_color = "#e3f4e8"

    def __init__(
        self,
        *,
        desired_state: Any,
        kafka_connect_conn_id: str = DEFAULT_CONN_ID,
        prune: bool = False,
        dry_run: bool = False,
        wait_for_states: bool = True,
        wait_timeout: float = 300.0,
        poll_interval: float = 2.0,
        max_concurrency: int = 1,
        sleep: Callable[[float], None] = time.sleep,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.desired_state = desired_state
        self.kafka_connect_conn_id = kafka_connect_conn_id
        self.prune = prune
        self.plan_only = dry_run
        self.wait_for_states = wait_for_states
        self.wait_timeout = wait_timeout
        self.poll_interval = poll_interval
        self.max_concurrency = max_concurrency
        self._sleep = sleep

    @cached_property
    def hook(self) -> ConnectHook:
        return ConnectHook(self.kafka_connect_conn_id)

    def execute(self, context: Context) -> dict[str, Any]:
        desired = load_desired_state(self._source(context))
        dry_run, prune = _flag(self.plan_only), _flag(self.prune)
        for connector in desired.values():  # masked in the task log, scrubbed from the hook's errors
            self.hook.remember_secrets(secret_values(connector.normalised_config))
        plan = self.plan(desired, prune)
        self.log.info("%s", plan.render())
        if dry_run or plan.empty:
            self.log.info("%s", "Dry run: nothing applied" if dry_run else "Nothing to apply")
            return {"dry_run": dry_run, "plan": plan.to_dict(), "applied": []}
        applied = apply_plan(self.hook, plan, desired, self.log, self.max_concurrency, settle=self._settle)
        self.log.info("Applied %d step(s): %s", len(applied), plan.summary())
        if self.wait_for_states:
            targets = {c.name: desired[c.name].state for c in plan.connectors if Step.DELETE not in c.steps}
            wait_for_targets(self.hook, targets, self.wait_timeout, self.poll_interval, self._sleep)
        return {"dry_run": False, "plan": plan.to_dict(), "applied": applied}

    def _settle(self, name: str, state: ConnectState) -> None:
        timeout = min(self.wait_timeout, SETTLE_TIMEOUT_S)
        wait_until_settled(self.hook, name, state, self.log, self.poll_interval, timeout, self._sleep)

    def plan(self, desired: dict[str, DesiredConnector], prune: bool) -> Plan:
        """The plan against the cluster as it is now (one request)."""
        live = live_connectors(self.hook.list_connectors(expand=["status", "info"]))
        where = f"{self.kafka_connect_conn_id} ({self.hook.settings.base_url})"
        return make_plan(desired, live, prune=prune, where=where)

    def _source(self, context: Context) -> Any:
        """A relative path is relative to the folder of the DAG file."""
        if isinstance(self.desired_state, (str, Path)) and not Path(self.desired_state).is_absolute():
            dag = context.get("dag") if context else None
            fileloc = getattr(dag, "fileloc", None)
            if fileloc:
                return Path(fileloc).parent / self.desired_state
        return self.desired_state


def _flag(value: Any) -> bool:
    """A boolean that may arrive as a rendered template ("True", "false")."""
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes", "on")
    return bool(value)
