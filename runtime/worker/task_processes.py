"""Tasks in child processes (`task.processes` > 0), the worker's side.

Python threads share one interpreter lock, so task threads of one worker process use about one core
between them. With `task.processes` = N the worker starts N task processes with itself (and replaces one
that died when a task next needs it) and places each task in the one running the fewest; a task process
builds and runs the task's runner exactly as the worker would (task_builder.py, in task_host.py).
Everything else stays here: the herder, the REST API, connectors, the status store and the offset store.
A task's status reports and the topics it sees (KIP-558) are relayed to the worker, a source task's offset
reads and writes go to the store this process opened for it, and its counters and client statistics come
back once a second for the metrics layer, so statuses, topics, offsets, metrics and the REST API are the
same as with task threads.

The messages are the typed ones of task_protocol.py, which both sides import; each side dispatches them
through one table by type.

A task process that exits unexpectedly fails its tasks (FAILED, with the exit code); they restart like any
failed task (restart endpoints, KIP-745), in a new process. A process left by a worker killed with kill -9
sees its pipe close and stops its tasks on its own.
"""

from __future__ import annotations

import concurrent.futures
import logging
import multiprocessing
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ..log_levels import LOG_LEVELS
from ..storage.base import InstanceStatus, OffsetStore, StatusStore
from ..storage.states import State, TargetState
from . import task_host
from .counters import ErrorCounters, TaskCounters
from .task_builder import TopicListener
from .task_protocol import (
    OFFSET_OPERATIONS,
    Exit,
    ForgetTopics,
    Hello,
    HostSettings,
    OffsetCall,
    OffsetReply,
    SetLogLevel,
    StartTask,
    StatsReport,
    StopTask,
    TaskKey,
    TaskStarted,
    TaskStats,
    TaskStatus,
    TaskStopped,
    ToHost,
    TopicSeen,
    ToWorker,
    TransitionTask,
)

log = logging.getLogger(__name__)

# a fresh process imports the runtime and its clients before its first task starts
FIRST_START_WAIT_S = 30.0
START_WAIT_S = 5.0


class RemoteTaskRunner:
    """The worker's handle on a task running in a task process: the interface of TaskRunner that the
    worker, the herder and the metrics layer use."""

    def __init__(self, process: TaskProcess, start: StartTask, offset_store: OffsetStore | None) -> None:
        self.process = process
        self.key: TaskKey = start.key
        self.connector, self.index = start.key
        self.id = f"{self.connector}-{self.index}"
        self.is_source = offset_store is not None
        self.offset_store = offset_store
        self.created_at = time.monotonic()
        self.counters = TaskCounters()
        self.error_counters = ErrorCounters()
        self.client_stats: dict[str, Any] | None = None
        self.failed = False
        self._active_records = 0
        self._target = start.target
        self._start_message: StartTask | None = start
        self._started = threading.Event()
        self._stopped = threading.Event()
        self._stop_ok = True

    # ---- the worker's calls ------------------------------------------------------------------

    def start(self, wait_s: float | None = None) -> None:
        message, self._start_message = self._start_message, None
        assert message is not None, "start() twice"
        if not self.process.send(message):
            self.failed = True
            self.process.statuses.put_task(
                self.connector,
                self.index,
                InstanceStatus(
                    State.FAILED,
                    self.process.worker_id,
                    "org.apache.kafka.connect.errors.ConnectException: the task "
                    f"process for task {self.id} is not running; restart the task to run it in a new process",
                ),
            )
            self.finish(False)
            return
        self._started.wait(
            wait_s if wait_s is not None else (FIRST_START_WAIT_S if not self.process.ready else START_WAIT_S)
        )

    def transition_to(self, target: TargetState) -> None:
        if self.failed or target is self._target:
            return
        self._target = target
        self.process.send(TransitionTask(self.key, target))

    def stop(self) -> None:
        self.process.send(StopTask(self.key, self.process.graceful_timeout_s))

    def await_stop(self, timeout_s: float) -> bool:
        # the process waits out the graceful timeout itself (and abandons the task after it): allow for
        # the round trip on top
        if not self._stopped.wait(timeout_s + 1.0):
            log.error("Graceful stop of task %s failed: its task process did not answer in %.1fs", self.id, timeout_s)
            self.finish(False)
            return False
        return self._stop_ok

    def forget_seen_topics(self) -> None:
        self.process.send(ForgetTopics(self.key))

    def active_records(self) -> int:
        return self._active_records

    @property
    def paused(self) -> bool:
        return self._target is TargetState.PAUSED

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    # ---- from the process --------------------------------------------------------------------------

    def on_started(self, ok: bool) -> None:
        self.failed = self.failed or not ok
        self._started.set()

    def on_stats(self, stats: TaskStats) -> None:
        self.counters, self.error_counters = stats.counters, stats.error_counters
        if stats.client_stats is not None:
            self.client_stats = stats.client_stats
        self._active_records = stats.active_records

    def finish(self, ok: bool) -> None:
        """The task stopped (ok: within its timeout) or is lost; nothing more comes from it."""
        self._stop_ok = ok
        self._started.set()
        self._stopped.set()
        self.process.forget(self.key)


class TaskProcess:
    """One task process and the thread that reads what it sends."""

    def __init__(
        self,
        number: int,
        settings: HostSettings,
        statuses: StatusStore,
        on_topic: TopicListener,
        graceful_timeout_s: float,
        offset_calls: concurrent.futures.Executor,
    ) -> None:
        self.number = number
        self.statuses = statuses
        self.worker_id = settings.worker_id
        self.on_topic = on_topic
        self.graceful_timeout_s = graceful_timeout_s
        self.runners: dict[TaskKey, RemoteTaskRunner] = {}
        self.ready = False  # set by the first message from the process (it has imported everything)
        self.closing = False
        self._offset_calls = offset_calls
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()
        context = multiprocessing.get_context("spawn")  # fork would copy the worker's threads' locks
        self._conn, child_conn = context.Pipe(duplex=True)
        self.process = context.Process(
            target=task_host.run, name=f"connect-task-process-{number}", daemon=True, args=(child_conn, settings)
        )
        self.process.start()
        child_conn.close()
        self._reader = threading.Thread(target=self._read_loop, name=f"task-process-{number}-reader", daemon=True)
        self._reader.start()

    @property
    def alive(self) -> bool:
        return self.process.is_alive() and not self.closing

    def send(self, message: ToHost) -> bool:
        try:
            with self._send_lock:
                self._conn.send(message)
            return True
        except (OSError, ValueError) as exc:  # the process is gone; the reader fails its tasks
            log.debug("Task process %d: could not send %s: %s", self.number, type(message).__name__, exc)
            return False

    def add(self, runner: RemoteTaskRunner) -> None:
        with self._lock:
            self.runners[runner.key] = runner

    def forget(self, key: TaskKey) -> None:
        with self._lock:
            self.runners.pop(key, None)

    def load(self) -> int:
        with self._lock:
            return len(self.runners)

    def _runner(self, key: TaskKey) -> RemoteTaskRunner | None:
        with self._lock:
            return self.runners.get(key)

    # ---- what the process sends --------------------------------------------------------------------

    def _read_loop(self) -> None:
        while True:
            try:
                message: ToWorker = self._conn.recv()
            except (EOFError, OSError):
                break
            self.ready = True
            handler = self.HANDLERS.get(type(message))
            if handler is None:
                log.warning("Task process %d sent an unknown message %r; ignored", self.number, message)
                continue
            try:
                handler(self, message)
            except Exception:
                log.exception("Task process %d: could not handle %s", self.number, type(message).__name__)
        self._on_exit()

    def _on_started(self, message: TaskStarted) -> None:
        runner = self._runner(message.key)
        if runner is not None:
            runner.on_started(message.ok)

    def _on_stopped(self, message: TaskStopped) -> None:
        runner = self._runner(message.key)
        if runner is not None:
            runner.finish(message.ok)

    def _on_status(self, message: TaskStatus) -> None:
        runner = self._runner(message.key)
        if runner is not None and message.status.state is State.FAILED:
            runner.failed = True
        self.statuses.put_task(*message.key, message.status)

    def _on_topic_seen(self, message: TopicSeen) -> None:
        self.on_topic(*message.key, message.topic)

    def _on_stats(self, message: StatsReport) -> None:
        for key, stats in message.stats.items():
            runner = self._runner(key)
            if runner is not None:
                runner.on_stats(stats)

    def _on_offset_call(self, message: OffsetCall) -> None:
        # offset reads may wait on Kafka: never on this reader thread
        self._offset_calls.submit(self._offset_call, message)

    def _on_hello(self, message: Hello) -> None:
        pass  # `ready` is set by the first message, whichever it is

    # what the process sends (task_protocol.ToWorker), by type
    HANDLERS: ClassVar[Mapping[type, Callable[[TaskProcess, Any], None]]] = {
        Hello: _on_hello,
        TaskStarted: _on_started,
        TaskStopped: _on_stopped,
        TaskStatus: _on_status,
        TopicSeen: _on_topic_seen,
        OffsetCall: _on_offset_call,
        StatsReport: _on_stats,
    }

    def _offset_call(self, message: OffsetCall) -> None:
        """A source task's offset store operation, on the store this process opened for it."""
        runner = self._runner(message.key)
        try:
            if runner is None or runner.offset_store is None:
                raise RuntimeError(f"task {message.key[0]}-{message.key[1]} has no offset store in the worker")
            if message.operation not in OFFSET_OPERATIONS:
                raise ValueError(f"unknown offset store operation {message.operation!r}")
            result = getattr(runner.offset_store, message.operation)(*message.args)
            self.send(OffsetReply(message.call, result, None))
        except Exception as exc:  # noqa: BLE001 - the task sees the error, as it would with its own store
            self.send(OffsetReply(message.call, None, f"{type(exc).__name__}: {exc}"))

    def _on_exit(self) -> None:
        """The pipe closed: the process ended. Its tasks failed, unless the worker was stopping them."""
        self.process.join(5)
        code = self.process.exitcode
        with self._lock:
            orphans = list(self.runners.values())
        for runner in orphans:
            if not self.closing and not runner.stopped:
                runner.failed = True
                trace = (
                    f"org.apache.kafka.connect.errors.ConnectException: the task process running task "
                    f"{runner.id} exited (exit code {code}); restart the task to run it in a new process"
                )
                self.statuses.put_task(
                    runner.connector, runner.index, InstanceStatus(State.FAILED, self.worker_id, trace)
                )
                log.error("Task process %d exited with code %s; task %s is FAILED", self.number, code, runner.id)
                if runner.offset_store is not None:  # the task cannot close it any more
                    try:
                        runner.offset_store.stop()
                    except Exception as exc:  # noqa: BLE001 - the monitor thread must not die over a store's close
                        log.warning("Could not close the offset store of task %s: %s", runner.id, exc)
            runner.finish(self.closing)

    def close(self, timeout_s: float) -> None:
        self.closing = True
        self.send(Exit())
        self.process.join(timeout_s)
        if self.process.is_alive():
            log.warning("Task process %d did not exit in %.1fs; terminating it", self.number, timeout_s)
            self.process.terminate()
            self.process.join(5)
        self._reader.join(5)
        try:
            self._conn.close()
        except OSError:
            pass


class TaskProcessPool:
    """`size` task processes; each task goes to the live process running the fewest."""

    def __init__(
        self,
        size: int,
        worker_props: dict[str, str],
        worker_id: str,
        statuses: StatusStore,
        on_topic: TopicListener,
        graceful_timeout_s: float,
    ) -> None:
        self.size = size
        # the processes build their tasks from the same properties, as threads of their own
        self._props = {**worker_props, "task.processes": "0"}
        self._worker_id = worker_id
        self._statuses = statuses
        self._on_topic = on_topic
        self._graceful_timeout_s = graceful_timeout_s
        self._processes: list[TaskProcess] = []
        self._count = 0
        self._lock = threading.Lock()
        self._closed = False
        # offset reads may wait on Kafka: never on a process's reader thread
        self._offset_calls = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="task-offsets")
        # started now, while the worker starts too: a process imports the runtime and its clients (about a
        # second) before it can run a task, which the first tasks would otherwise wait for
        LOG_LEVELS.add_listener(self._on_log_level)
        with self._lock:
            for _ in range(size):
                self._spawn()

    def _spawn(self) -> TaskProcess:
        # under self._lock, as _on_log_level: a level set while this process starts is either in its
        # starting levels or sent to it
        self._count += 1
        process = TaskProcess(
            self._count,
            self._host_settings(),
            self._statuses,
            self._on_topic,
            self._graceful_timeout_s,
            self._offset_calls,
        )
        self._processes.append(process)
        return process

    def _on_log_level(self, namespace: str, number: int) -> None:
        with self._lock:
            processes = list(self._processes)
        for process in processes:
            process.send(SetLogLevel(namespace, number))

    def _host_settings(self) -> HostSettings:
        return HostSettings(
            self._props,
            self._worker_id,
            str(self._props.get("log.level", "INFO")),
            str(self._props.get("log.format", "text")),
            tuple(LOG_LEVELS.explicit()),
        )

    def _process_for_next_task(self) -> TaskProcess:
        with self._lock:
            if self._closed:
                raise RuntimeError("the worker is stopping")
            self._processes = [p for p in self._processes if p.alive]
            if len(self._processes) < self.size:  # one died: its replacement takes the next task
                return self._spawn()
            return min(self._processes, key=lambda p: p.load())

    def task_runner(
        self,
        connector: str,
        index: int,
        task_config: dict[str, str],
        connector_config: dict[str, str],
        target: TargetState,
        offset_store: OffsetStore | None,
    ) -> RemoteTaskRunner:
        """The handle of a task placed in a task process (not started: the worker calls start())."""
        process = self._process_for_next_task()
        start = StartTask((connector, index), dict(task_config), dict(connector_config), target)
        runner = RemoteTaskRunner(process, start, offset_store)
        process.add(runner)
        return runner

    def pids(self) -> list[int]:
        with self._lock:
            return [p.process.pid for p in self._processes if p.alive and p.process.pid is not None]

    def close(self, timeout_s: float) -> None:
        LOG_LEVELS.remove_listener(self._on_log_level)
        with self._lock:
            self._closed = True
            processes, self._processes = self._processes, []
        for process in processes:
            process.close(timeout_s + 5.0)
        self._offset_calls.shutdown(wait=False, cancel_futures=True)


__all__ = ["RemoteTaskRunner", "TaskProcess", "TaskProcessPool"]
