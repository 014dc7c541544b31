"""The connector target-state machine, decided once for both herders (KIP-52 pause/resume, KIP-875 stop and
offsets, KIP-980 initial states).

Only rules live here: what a connector's stored state becomes on a create or a target-state change, which
target its tasks run in, what may change while it is STOPPED, and which statuses show a target reached.
How a change is stored and applied (a local file and the herder thread; the config topic and every
worker's tick thread) is each herder's business.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..storage.base import ConnectorState, InstanceStatus
from ..storage.states import INITIAL_STATES, State, TargetState
from . import offset_requests
from .errors import BadRequest

# the instance states that show a PAUSED or STARTED target reached (a failure settles it too)
_SETTLED = {
    TargetState.PAUSED: (State.PAUSED, State.FAILED),
    TargetState.STARTED: (State.RUNNING, State.FAILED),
}


def initial_target(initial_state: str | None) -> TargetState | None:
    """KIP-980's `initial_state` (any case), None when absent; 400 for anything else (section 0)."""
    if initial_state is None:
        return None
    target = INITIAL_STATES.get(initial_state.upper())
    if target is None:
        raise BadRequest(
            f"Invalid value {initial_state} for field initial_state: must be one of RUNNING, PAUSED, STOPPED (any case)"
        )
    return target


def created(config: dict[str, str], initial: TargetState | None) -> ConnectorState:
    """A new connector: in its KIP-980 initial state (STARTED when none), with no tasks yet."""
    return ConnectorState(config, initial or TargetState.STARTED, [])


def reconfigured(existing: ConnectorState, config: dict[str, str]) -> ConnectorState:
    """A config change keeps the target state and the tasks (its owner regenerates them)."""
    return ConnectorState(config, existing.target_state, existing.task_configs)


def transitioned(state: ConnectorState, target: TargetState) -> ConnectorState:
    """The stored state after a pause, resume or stop: a stop drops the task set (KIP-875), so nothing runs
    and offsets can change; a pause or resume keeps the tasks."""
    if clears_tasks(target):
        return ConnectorState(state.config, target, [])
    return ConnectorState(state.config, target, state.task_configs)


def clears_tasks(target: TargetState) -> bool:
    """Moving to `target` first writes an empty task set (KIP-875's stop)."""
    return target is TargetState.STOPPED


def tasks_run(target: TargetState) -> bool:
    """Whether a connector in `target` has tasks running (a STOPPED one has none; statuses of its removed
    tasks are deleted, not set UNASSIGNED)."""
    return target is not TargetState.STOPPED


def task_target(target: TargetState) -> TargetState:
    """The target a running task of a connector in `target` is in (tasks are never STOPPED: they are removed)."""
    return TargetState.PAUSED if target is TargetState.PAUSED else TargetState.STARTED


def generates_tasks(target: TargetState) -> bool:
    """Only a STARTED connector is asked for task configs."""
    return target is TargetState.STARTED


def require_stopped(name: str, state: ConnectorState) -> None:
    """Offsets change only while the connector is STOPPED with no tasks (KIP-875): 400 otherwise."""
    if state.target_state is not TargetState.STOPPED or state.task_configs:
        raise BadRequest(offset_requests.not_stopped_message(name))


def require_task_configs_allowed(name: str, state: ConnectorState, configs: list) -> None:
    """A STOPPED connector takes only an empty task set (the internal `POST /connectors/{c}/tasks`)."""
    if configs and state.target_state is TargetState.STOPPED:
        raise BadRequest(f"Cannot submit non-empty set of task configs for stopped connector {name}")


def target_reached(
    target: TargetState,
    connector: InstanceStatus | None,
    tasks: Iterable[InstanceStatus],
    task_count: int,
    any_task_status: bool,
) -> bool:
    """Whether the statuses show `target` reached: STOPPED once the connector reports STOPPED and no task
    reports anything; PAUSED or STARTED once the connector and each of its `task_count` current tasks report
    the matching state (or FAILED)."""
    if connector is None:
        return False
    if target is TargetState.STOPPED:
        return connector.state is State.STOPPED and not any_task_status
    wanted = _SETTLED[target]
    current = list(tasks)
    return connector.state in wanted and len(current) == task_count and all(t.state in wanted for t in current)
