"""Connector and task states, and the one place that decides "done, failed, or still moving".

Sensors (poke/reschedule) and triggers (deferrable) both call `evaluate_status`, so they can never disagree.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from airflow_provider_connect.errors import TRACE_LIMIT
from airflow_provider_connect.redaction import truncate


class ConnectState(str, enum.Enum):
    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    FAILED = "FAILED"
    RESTARTING = "RESTARTING"
    STOPPED = "STOPPED"

    @classmethod
    def parse(cls, value: object) -> ConnectState:
        """A state from a REST body or a user's argument, any case; anything else (None too) raises ValueError."""
        try:
            return cls(str(value.value if isinstance(value, ConnectState) else value).upper())
        except ValueError:
            raise ValueError(
                f"Unknown Kafka Connect state {value!r}; expected one of {[s.value for s in cls]}"
            ) from None


# States an instance settles in until someone acts on it.
TERMINAL_STATES: frozenset[ConnectState] = frozenset(
    {ConnectState.RUNNING, ConnectState.PAUSED, ConnectState.STOPPED, ConnectState.FAILED}
)
# States an instance passes through on its way to a terminal one; waiting on them is worthwhile.
NON_TERMINAL_STATES: frozenset[ConnectState] = frozenset({ConnectState.UNASSIGNED, ConnectState.RESTARTING})
FAILED_STATES: frozenset[ConnectState] = frozenset({ConnectState.FAILED})
# Targets a caller may wait for (FAILED is never a goal).
WAITABLE_STATES: frozenset[ConnectState] = frozenset({ConnectState.RUNNING, ConnectState.PAUSED, ConnectState.STOPPED})
# After a pause, resume, stop or restart request: Kafka Connect answers before its instances move, so the
# state they were in (or another target state on the way) is the worker catching up, not a failure.
CATCHING_UP_STATES: frozenset[ConnectState] = NON_TERMINAL_STATES | WAITABLE_STATES


class Verdict(str, enum.Enum):
    SUCCESS = "success"
    WAITING = "waiting"
    FAILED = "failed"


@dataclass(frozen=True)
class Evaluation:
    verdict: Verdict
    message: str

    @property
    def done(self) -> bool:
        return self.verdict is not Verdict.WAITING


def failure_summary(status: Mapping[str, Any], limit: int = TRACE_LIMIT) -> str:
    """One line per FAILED instance with its (truncated) trace, for exceptions and logs."""
    lines = []
    name = status.get("name", "?")
    connector = status.get("connector") or {}
    if connector.get("state") == ConnectState.FAILED.value:
        lines.append(
            f"connector {name} FAILED on {connector.get('worker_id')}: {truncate(connector.get('trace'), limit)}"
        )
    for task in status.get("tasks") or []:
        if task.get("state") == ConnectState.FAILED.value:
            lines.append(
                f"task {name}-{task.get('id')} FAILED on {task.get('worker_id')}: {truncate(task.get('trace'), limit)}"
            )
    return "\n".join(lines)


def evaluate_status(
    status: Mapping[str, Any] | None,
    target: ConnectState | str,
    include_tasks: bool = True,
    min_tasks: int | None = None,
    transitional: Iterable[ConnectState | str] = NON_TERMINAL_STATES,
) -> Evaluation:
    """Judge a ConnectorStateInfo against a target state.

    SUCCESS when the connector (and, with `include_tasks`, every task) is in `target`; FAILED as soon as
    any considered instance is FAILED or in a state that is neither the target nor `transitional`
    (fail closed: an unexpected state never counts as progress); WAITING otherwise. A missing status
    (`None`, i.e. HTTP 404) is WAITING: Connect creates statuses asynchronously.
    With tasks included, at least `min_tasks` tasks must be listed (default 1 for RUNNING, 0 for PAUSED:
    a connector created PAUSED has none); STOPPED connectors have no tasks, so a STOPPED target requires an empty task list.
    """
    goal = ConnectState.parse(target)
    if goal not in WAITABLE_STATES:
        raise ValueError(f"Cannot wait for {goal.value}; choose one of {sorted(s.value for s in WAITABLE_STATES)}")
    moving = {ConnectState.parse(s) for s in transitional}
    if status is None:
        return Evaluation(Verdict.WAITING, "no status yet")
    name = status.get("name", "?")
    instances = [(f"connector {name}", (status.get("connector") or {}).get("state"))]
    tasks = list(status.get("tasks") or [])
    if include_tasks:
        instances += [(f"task {name}-{t.get('id')}", t.get("state")) for t in tasks]

    for label, raw in instances:
        try:
            state = ConnectState.parse(raw)
        except ValueError:
            return Evaluation(Verdict.FAILED, f"{label} is in unknown state {raw!r}")
        if state is goal:
            continue
        if state is ConnectState.FAILED:
            return Evaluation(Verdict.FAILED, f"{label} is FAILED\n{failure_summary(status)}")
        if state not in moving:
            return Evaluation(Verdict.FAILED, f"{label} is {state.value}, expected {goal.value}")

    pending = [label for label, raw in instances if raw != goal.value]
    if pending:
        return Evaluation(Verdict.WAITING, f"waiting for {', '.join(pending)} to reach {goal.value}")
    if include_tasks:
        if goal is ConnectState.STOPPED and tasks:
            return Evaluation(Verdict.WAITING, f"{len(tasks)} task(s) of stopped connector {name} still listed")
        if min_tasks is not None and goal is not ConnectState.STOPPED:
            needed = min_tasks
        else:
            needed = 1 if goal is ConnectState.RUNNING else 0
        if len(tasks) < needed:
            return Evaluation(Verdict.WAITING, f"connector {name} has {len(tasks)} task(s), waiting for {needed}")
    return Evaluation(
        Verdict.SUCCESS, f"connector {name} is {goal.value}" + (f" with {len(tasks)} task(s)" if include_tasks else "")
    )
