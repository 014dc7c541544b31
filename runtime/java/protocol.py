"""The messages between a Python process and its JVM host process (runtime/java/host.py), both directions.

Pickled over a socket pair (multiprocessing's Connection); each side dispatches on the message's type
through one table (JvmHost.HANDLERS in client.py, HostProcess.HANDLERS in host.py). What a plugin call
carries is JSON text or bytes, one message per call: a source task's poll() answers a whole batch.

To the JVM host (ToHost):
  Start          the plugin locations and log levels; the host starts its JVM and answers Ready
  Create         a new connector or task instance of a Java class: answered by a Result with its handle
  Invoke         a method of the host's plugin index (handle None) or of an instance: answered by a Result
  Release        forget an instance (after its stop())
  OffsetsAnswer  the answer to an OffsetsQuestion
  SetLogLevel    /admin/loggers set a level: the same for the JVM's loggers
  Exit           end the process
From the JVM host (ToPython):
  Ready          the JVM runs (or JavaFailure: it could not start)
  Result         a Create's or an Invoke's outcome
  OffsetsQuestion  a task or connector reads committed source offsets (the runtime's offset store)
  Reconfigure    a connector asked for new task configs
  RaiseError     a connector failed on a thread of its own
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

InstanceKind = Literal["connector", "source_task", "sink_task"]


@dataclass(frozen=True)
class JavaFailure:
    """A Java exception: its class (and its causes'), message and trace as Java prints it."""

    class_name: str
    message: str
    trace: str
    retriable: bool  # a RetriableException (or subclass), anywhere in its causes


# ---- to the JVM host --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Start:
    class_path: tuple[str, ...]
    libjvm: str
    jvm_options: tuple[str, ...]
    locations: tuple[str, ...]
    log_format: str  # the starting process's log.format: text or json
    levels: tuple[tuple[str, int], ...]  # its loggers with a level of their own, root first


@dataclass(frozen=True)
class Create:
    call: int
    kind: InstanceKind
    plugin: str  # the connector class, whose plugin's class loader loads the instance's class
    class_name: str
    instance: str  # how callbacks name it ("connector-name" or "connector-name-task")


@dataclass(frozen=True)
class Invoke:
    call: int
    handle: int | None  # None: the host's plugin index
    method: str
    args: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Release:
    handle: int


@dataclass(frozen=True)
class OffsetsAnswer:
    call: int
    offsets_json: str | None
    error: str | None


@dataclass(frozen=True)
class SetLogLevel:
    namespace: str
    level: int


@dataclass(frozen=True)
class Exit:
    pass


ToHost = Start | Create | Invoke | Release | OffsetsAnswer | SetLogLevel | Exit

# ---- from the JVM host ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ready:
    pid: int
    failure: JavaFailure | None = None


@dataclass(frozen=True)
class Result:
    call: int
    value: Any = None
    failure: JavaFailure | None = None


@dataclass(frozen=True)
class OffsetsQuestion:
    call: int
    instance: str
    partitions_json: str


@dataclass(frozen=True)
class Reconfigure:
    instance: str


@dataclass(frozen=True)
class RaiseError:
    instance: str
    trace: str


ToPython = Ready | Result | OffsetsQuestion | Reconfigure | RaiseError

TO_HOST: tuple[type, ...] = get_args(ToHost)
TO_PYTHON: tuple[type, ...] = get_args(ToPython)

__all__ = [
    "TO_HOST",
    "TO_PYTHON",
    "Create",
    "Exit",
    "InstanceKind",
    "Invoke",
    "JavaFailure",
    "OffsetsAnswer",
    "OffsetsQuestion",
    "RaiseError",
    "Ready",
    "Reconfigure",
    "Release",
    "Result",
    "SetLogLevel",
    "Start",
    "ToHost",
    "ToPython",
]
