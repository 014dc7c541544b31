"""Apply a plan with the hook (each request with its retries), then wait until the cluster shows it.

Each connector's steps run in order, one connector after another by default; deletes (prune) come last,
once everything else has succeeded. `max_concurrency` > 1 changes connectors side by side, for distributed
clusters only: Apache Kafka Connect 3.9's standalone worker deadlocks (for good: every later request times
out) when a pause or resume arrives while a stop, create or config update holds its herder (the pause takes
the config store's lock and then the herder's, the others the reverse; seen here with jstack). One at a time
is not enough on its own: after a resume (or restart) that worker writes the connector's task configs later,
from its own thread, holding its herder; a pause or resume sent meanwhile deadlocks it just the same (seen
in CI: resuming a connector created PAUSED, then resuming the next one). So after a resume or restart the
next step waits until that connector has settled (its tasks listed, or FAILED, or `settle` gave up).
Every step is logged as it completes, so a failure midway leaves in the task log what was applied; the
error raised says what was applied, what failed and what was not tried, and a rerun plans only what is left.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import Any

from airflow.sdk.exceptions import AirflowException

from airflow_provider_connect.as_code.desired import DesiredConnector
from airflow_provider_connect.as_code.plan import ConnectorPlan, Plan, Step
from airflow_provider_connect.errors import ConnectorStateError
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.hooks.retries import Log
from airflow_provider_connect.offsets_at_create import create_with_offsets, set_target_state
from airflow_provider_connect.status import CATCHING_UP_STATES, ConnectState, Verdict, evaluate_status


class ConnectorsApplyError(AirflowException):
    """A step failed: carries the steps applied before it, the failure, and the steps never tried."""

    def __init__(self, applied: list[str], failed: list[str], not_tried: list[str]) -> None:
        self.applied, self.failed, self.not_tried = applied, failed, not_tried
        super().__init__(
            f"Applying the plan failed: {'; '.join(failed)}\n"
            f"Applied ({len(applied)}): {', '.join(applied) or 'nothing'}\n"
            f"Not tried ({len(not_tried)}): {', '.join(not_tried) or 'nothing'}"
        )


def create_connector(hook: ConnectHook, connector: DesiredConnector) -> None:
    """Create `connector` in its target state, starting from its declared offsets.

    Without offsets: one POST with KIP-980's `initial_state`. With offsets: `create_with_offsets`, which sends
    them in the create where the cluster supports KIP-995 and PATCHes them where it does not (detected from
    the answer; see offsets_at_create)."""
    name, config = connector.name, connector.normalised_config
    if not connector.offsets:
        state = connector.state if connector.state is not ConnectState.RUNNING else None  # pre-3.5 clusters too
        hook.create_connector(name, config, state.value if state else None)
        return
    outcome = create_with_offsets(hook, name, config, connector.offsets_payload(), connector.state)
    if not outcome.offsets_written:
        # Found, not created, and already moving: someone else created it; never rewind it.
        raise ConnectorStateError(
            f"Connector {name} appeared meanwhile and is not STOPPED; its offsets were not written"
        )


def _run_step(hook: ConnectHook, step: Step, name: str, desired: Mapping[str, DesiredConnector]) -> None:
    if step is Step.CREATE:
        create_connector(hook, desired[name])
    elif step is Step.UPDATE:
        hook.put_connector_config(name, desired[name].normalised_config)
    elif step in (Step.RESUME, Step.PAUSE, Step.STOP):
        set_target_state(hook, name, desired[name].state)
    elif step is Step.RESTART:
        hook.restart_connector(name, include_tasks=True, only_failed=True)
    elif step is Step.DELETE:
        hook.delete_connector(name, missing_ok=True)


# Steps after which a standalone reference worker still writes the connector's task configs on its own.
SETTLING_STEPS = frozenset({Step.RESUME, Step.RESTART})


def apply_plan(
    hook: ConnectHook,
    plan: Plan,
    desired: Mapping[str, DesiredConnector],
    log: Log,
    max_concurrency: int = 1,
    settle: Callable[[str, ConnectState], None] | None = None,
) -> list[str]:
    """Apply every step; return them as applied (`"create orders"`), or raise ConnectorsApplyError.

    `settle(name, state)` is called after each resume or restart, before the next step (see above)."""
    applied: list[str] = []
    lock = threading.Lock()

    def run(connector: ConnectorPlan) -> None:
        for step in connector.steps:
            _run_step(hook, step, connector.name, desired)
            with lock:
                applied.append(f"{step.value} {connector.name}")
            log.info("Applied: %s %s", step.value, connector.name)
            if settle is not None and step in SETTLING_STEPS:
                settle(connector.name, desired[connector.name].state)

    deletes = [c for c in plan.connectors if Step.DELETE in c.steps]
    others = [c for c in plan.connectors if Step.DELETE not in c.steps]
    hook.get_conn()  # one client for every thread
    with ThreadPoolExecutor(max_workers=max(1, max_concurrency), thread_name_prefix="connect-apply") as pool:
        for phase in (others, deletes):
            futures = {pool.submit(run, c): c for c in phase}
            done, pending = wait(futures, return_when=FIRST_EXCEPTION)
            failures = [(futures[f], f.exception()) for f in done if f.exception() is not None]
            if failures:
                for future in pending:
                    future.cancel()
                wait(pending)  # those already running finish their current connector
                failures += [(futures[f], f.exception()) for f in pending if not f.cancelled() and f.exception()]
                raise ConnectorsApplyError(applied, _failed(failures), _not_tried(plan, applied, failures))
    return applied


def _failed(failures: Iterable[tuple[ConnectorPlan, BaseException | None]]) -> list[str]:
    return [f"{connector.name}: {exc}" for connector, exc in failures]


def _not_tried(plan: Plan, applied: list[str], failures: list[tuple[ConnectorPlan, Any]]) -> list[str]:
    failed_names = {connector.name for connector, _ in failures}
    done = set(applied)
    return [
        f"{step.value} {c.name}"
        for c in plan.connectors
        if c.name not in failed_names
        for step in c.steps
        if f"{step.value} {c.name}" not in done
    ]


# A connector that makes no tasks never settles: bound the wait before the next step.
SETTLE_TIMEOUT_S = 30.0


def wait_until_settled(
    hook: ConnectHook,
    name: str,
    state: ConnectState,
    log: Log,
    poll_interval: float,
    timeout: float = SETTLE_TIMEOUT_S,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Wait (at most `timeout`) until `name` is in `state` with its tasks, or FAILED. Never raises for the
    connector's state: whether every connector reached its state is judged once, after the whole plan."""
    try:
        wait_for_targets(hook, {name: state}, timeout, poll_interval, sleep)
    except ConnectorStateError as e:
        log.info("Going on: %s has not settled in %s: %s", name, state.value, e)


def wait_for_targets(
    hook: ConnectHook,
    targets: Mapping[str, ConnectState],
    timeout: float,
    poll_interval: float,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Until each connector (and its tasks) is in its target state: one status request per poll for all.

    Only FAILED fails early: a status still showing the state before a pause, resume or stop is the
    worker catching up (Kafka Connect answers those requests before its instances have moved)."""
    deadline = time.monotonic() + timeout
    pending = dict(targets)
    while True:
        statuses = hook.list_connectors(expand=["status"])
        failed = []
        for name, target in list(pending.items()):
            status = (statuses.get(name) or {}).get("status")
            evaluation = evaluate_status(status, target, include_tasks=True, transitional=CATCHING_UP_STATES)
            if evaluation.verdict is Verdict.SUCCESS:
                del pending[name]
            elif evaluation.verdict is Verdict.FAILED:
                failed.append(evaluation.message)
        if failed:
            raise ConnectorStateError("Applied, but not every connector reached its state:\n" + "\n".join(failed))
        if not pending:
            return
        if time.monotonic() >= deadline:
            raise ConnectorStateError(
                f"Applied, but after {timeout:.0f}s {len(pending)} connector(s) are not yet in their state: "
                + ", ".join(f"{name} ({target.value})" for name, target in sorted(pending.items()))
            )
        sleep(poll_interval)
