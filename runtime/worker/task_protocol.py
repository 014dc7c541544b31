"""The messages between the worker and its task processes (`task.processes` > 0), both directions.

The pipe carries these objects pickled (multiprocessing's Connection); each side dispatches on the
message's type through one table (TaskProcess._handlers in task_processes.py, TaskHost._handlers in
task_host.py), and `tests/unit/worker/test_task_protocol.py` checks that every message has a handler.
Both sides import this module and nothing of each other's.

Worker -> task process (ToHost):
  StartTask       build and start a task's runner from its resolved configs, in a target state
  TransitionTask  pause or resume a running task
  StopTask        stop a task, waiting at most `timeout_s` for it (then abandon it)
  ForgetTopics    the task reports each topic again the next time it sees one (KIP-558 reset)
  SetLogLevel     /admin/loggers set a level in the worker: the same here
  OffsetReply     the answer to an OffsetCall
  Exit            stop every task and end the process
Task process -> worker (ToWorker):
  Hello           the process has imported the runtime and serves (its first message)
  TaskStarted     a StartTask ran (ok: the task's runner is running)
  TaskStopped     a StopTask ran (ok: the task stopped within its timeout)
  TaskStatus      a task's status report, for the worker's status store
  TopicSeen       a task used a topic for the first time (KIP-558 active topics)
  OffsetCall      a source task's offset store operation, on the store the worker opened for it
  StatsReport     every running task's counters and client statistics (once a second)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from ..storage.base import InstanceStatus
from ..storage.states import TargetState
from .counters import ErrorCounters, TaskCounters

TaskKey = tuple[str, int]  # (connector, task index)
OffsetOperation = Literal["start", "stop", "get", "set", "items"]
OFFSET_OPERATIONS: frozenset[str] = frozenset(get_args(OffsetOperation))


@dataclass(frozen=True)
class HostSettings:
    """What a task process starts with: the worker's properties and its logging as it is at the time."""

    worker_props: dict[str, str]
    worker_id: str
    log_level: str
    log_format: str
    # the worker's loggers with a level of their own when this process started (/admin/loggers changes)
    levels: tuple[tuple[str, int], ...] = ()


@dataclass
class TaskStats:
    """What the metrics layer reads of a task, as its process last reported it."""

    counters: TaskCounters = field(default_factory=TaskCounters)
    error_counters: ErrorCounters = field(default_factory=ErrorCounters)
    client_stats: dict[str, Any] | None = None  # None: unchanged since the last report
    active_records: int = 0


# ---- worker -> task process ---------------------------------------------------------------------------


@dataclass(frozen=True)
class StartTask:
    key: TaskKey
    task_config: dict[str, str]
    connector_config: dict[str, str]
    target: TargetState


@dataclass(frozen=True)
class TransitionTask:
    key: TaskKey
    target: TargetState


@dataclass(frozen=True)
class StopTask:
    key: TaskKey
    timeout_s: float


@dataclass(frozen=True)
class ForgetTopics:
    key: TaskKey


@dataclass(frozen=True)
class SetLogLevel:
    namespace: str
    level: int


@dataclass(frozen=True)
class OffsetReply:
    call: int
    result: Any
    error: str | None  # set: the operation raised this (type and message)


@dataclass(frozen=True)
class Exit:
    pass


ToHost = StartTask | TransitionTask | StopTask | ForgetTopics | SetLogLevel | OffsetReply | Exit

# ---- task process -> worker ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Hello:
    pid: int


@dataclass(frozen=True)
class TaskStarted:
    key: TaskKey
    ok: bool


@dataclass(frozen=True)
class TaskStopped:
    key: TaskKey
    ok: bool


@dataclass(frozen=True)
class TaskStatus:
    key: TaskKey
    status: InstanceStatus


@dataclass(frozen=True)
class TopicSeen:
    key: TaskKey
    topic: str


@dataclass(frozen=True)
class OffsetCall:
    call: int
    key: TaskKey
    operation: OffsetOperation
    args: tuple[Any, ...]


@dataclass(frozen=True)
class StatsReport:
    stats: dict[TaskKey, TaskStats]


ToWorker = Hello | TaskStarted | TaskStopped | TaskStatus | TopicSeen | OffsetCall | StatsReport

TO_HOST: tuple[type, ...] = get_args(ToHost)
TO_WORKER: tuple[type, ...] = get_args(ToWorker)

__all__ = [
    "OFFSET_OPERATIONS",
    "TO_HOST",
    "TO_WORKER",
    "Exit",
    "ForgetTopics",
    "Hello",
    "HostSettings",
    "OffsetCall",
    "OffsetOperation",
    "OffsetReply",
    "SetLogLevel",
    "StartTask",
    "StatsReport",
    "StopTask",
    "TaskKey",
    "TaskStarted",
    "TaskStats",
    "TaskStatus",
    "TaskStopped",
    "ToHost",
    "ToWorker",
    "TopicSeen",
    "TransitionTask",
]
