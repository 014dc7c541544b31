"""The target-state machine both herders follow (runtime/control/target_states.py)."""

from __future__ import annotations

import pytest

from runtime.control import target_states
from runtime.control.errors import BadRequest
from runtime.storage.base import ConnectorState, InstanceStatus
from runtime.storage.states import State, TargetState

RUNNING = ConnectorState({"name": "c"}, TargetState.STARTED, [{"task": "0"}])


@pytest.mark.parametrize(
    "given, expected",
    [
        (None, None),
        ("running", TargetState.STARTED),
        ("PAUSED", TargetState.PAUSED),
        ("Stopped", TargetState.STOPPED),
    ],
)
def test_initial_target(given, expected):
    assert target_states.initial_target(given) is expected


def test_unknown_initial_state_is_a_bad_request():
    with pytest.raises(BadRequest, match="initial_state"):
        target_states.initial_target("STARTED")


def test_created_defaults_to_started_without_tasks():
    assert target_states.created({"a": "b"}, None) == ConnectorState({"a": "b"}, TargetState.STARTED, [])
    assert target_states.created({}, TargetState.STOPPED).target_state is TargetState.STOPPED


def test_stop_drops_the_task_set_pause_and_resume_keep_it():
    assert target_states.transitioned(RUNNING, TargetState.STOPPED).task_configs == []
    assert target_states.transitioned(RUNNING, TargetState.PAUSED).task_configs == RUNNING.task_configs
    assert target_states.transitioned(RUNNING, TargetState.STARTED).task_configs == RUNNING.task_configs


def test_offsets_need_stopped_without_tasks():
    target_states.require_stopped("c", ConnectorState({}, TargetState.STOPPED, []))
    for state in (RUNNING, ConnectorState({}, TargetState.PAUSED, []), ConnectorState({}, TargetState.STOPPED, [{}])):
        with pytest.raises(BadRequest):
            target_states.require_stopped("c", state)


def test_stopped_connector_takes_only_an_empty_task_set():
    stopped = ConnectorState({}, TargetState.STOPPED, [])
    target_states.require_task_configs_allowed("c", stopped, [])
    target_states.require_task_configs_allowed("c", RUNNING, [{}])
    with pytest.raises(BadRequest, match="stopped connector c"):
        target_states.require_task_configs_allowed("c", stopped, [{}])


def test_task_targets():
    assert target_states.task_target(TargetState.PAUSED) is TargetState.PAUSED
    assert target_states.task_target(TargetState.STARTED) is TargetState.STARTED
    assert not target_states.tasks_run(TargetState.STOPPED) and target_states.tasks_run(TargetState.PAUSED)
    assert target_states.generates_tasks(TargetState.STARTED) and not target_states.generates_tasks(TargetState.PAUSED)


def status(state: State) -> InstanceStatus:
    return InstanceStatus(state, "w:1")


def test_target_reached():
    reached = target_states.target_reached
    assert reached(TargetState.STOPPED, status(State.STOPPED), [], 0, False)
    assert not reached(TargetState.STOPPED, status(State.STOPPED), [], 0, True)
    assert reached(TargetState.PAUSED, status(State.PAUSED), [status(State.FAILED)], 1, True)
    assert not reached(TargetState.STARTED, status(State.RUNNING), [], 1, False)
    assert not reached(TargetState.STARTED, None, [], 0, False)
