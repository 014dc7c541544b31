"""The task-process protocol: every message has one handler on the side that receives it, and crosses the
pipe (pickled) unchanged."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from runtime.storage.base import InstanceStatus
from runtime.storage.states import State, TargetState
from runtime.worker import task_protocol as p
from runtime.worker.task_host import TaskHost
from runtime.worker.task_processes import TaskProcess


def test_the_worker_handles_every_message_a_task_process_sends_and_nothing_else() -> None:
    assert set(TaskProcess.HANDLERS) == set(p.TO_WORKER)


def test_a_task_process_handles_every_message_the_worker_sends_and_nothing_else() -> None:
    assert set(TaskHost.HANDLERS) == set(p.TO_HOST)


def test_no_message_goes_both_ways() -> None:
    assert set(p.TO_HOST).isdisjoint(p.TO_WORKER)


EXAMPLES = [
    p.StartTask(("c", 0), {"task.class": "x.Task"}, {"connector.class": "x.Connector"}, TargetState.PAUSED),
    p.TransitionTask(("c", 0), TargetState.STARTED),
    p.StopTask(("c", 1), 5.0),
    p.ForgetTopics(("c", 0)),
    p.SetLogLevel("runtime.worker", 10),
    p.OffsetReply(7, {b"k": b"v"}, None),
    p.Exit(),
    p.Hello(1234),
    p.TaskStarted(("c", 0), True),
    p.TaskStopped(("c", 0), False),
    p.TaskStatus(("c", 0), InstanceStatus(State.FAILED, "w:8083", "trace")),
    p.TopicSeen(("c", 0), "t"),
    p.OffsetCall(3, ("c", 0), "set", ({b"k": None},)),
    p.StatsReport({("c", 0): p.TaskStats(active_records=3)}),
]


def test_every_message_has_an_example() -> None:
    assert {type(m) for m in EXAMPLES} == set(p.TO_HOST) | set(p.TO_WORKER)


@pytest.mark.parametrize("message", EXAMPLES, ids=lambda m: type(m).__name__)
def test_a_message_crosses_the_pipe_unchanged(message: object) -> None:
    assert dataclasses.is_dataclass(message)
    assert pickle.loads(pickle.dumps(message)) == message
