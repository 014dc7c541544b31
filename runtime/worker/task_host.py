"""A task process (`task.processes` > 0): runs the tasks the worker places in it, as threads, with the
same runners as the worker itself. The worker's side is task_processes.py; the messages both exchange are
task_protocol.py's."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import itertools
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ..daemon_executor import KeyedDaemonExecutor
from ..log_levels import LEVELS, LOG_LEVELS, apply_exact
from ..plugins import Plugins
from ..storage.base import InstanceStatus, OffsetStore, StatusStore
from ..storage.states import State, TargetState
from ..worker_config import WorkerConfig
from .task_builder import TaskBuilder
from .task_protocol import (
    Exit,
    ForgetTopics,
    Hello,
    HostSettings,
    OffsetCall,
    OffsetOperation,
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
from .task_runner import TaskRunner, format_trace

log = logging.getLogger(__name__)

STATS_INTERVAL_S = 1.0

Send = Callable[[ToWorker], bool]


class _Calls:
    """Calls to the worker that wait for its reply (offset store operations)."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._waiting: dict[int, concurrent.futures.Future[Any]] = {}
        self._closed: str | None = None

    def call(self, key: TaskKey, operation: OffsetOperation, *args: Any) -> Any:
        call_id = next(self._ids)
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        with self._lock:
            if self._closed is not None:
                raise RuntimeError(self._closed)
            self._waiting[call_id] = future
        if not self._send(OffsetCall(call_id, key, operation, args)):
            self.reply(OffsetReply(call_id, None, "the worker process is gone"))
        return future.result()

    def reply(self, message: OffsetReply) -> None:
        with self._lock:
            future = self._waiting.pop(message.call, None)
        if future is None:
            return
        if message.error is not None:
            future.set_exception(RuntimeError(f"offset store in the worker: {message.error}"))
        else:
            future.set_result(message.result)

    def fail_all(self, reason: str) -> None:
        """No reply will come any more (the worker is gone, or this process stops): fail what waits, and
        every later call."""
        with self._lock:
            self._closed = reason
            waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            future.set_exception(RuntimeError(reason))


class OffsetStoreRelay(OffsetStore):
    """A source task's offset store: the one the worker opened for the task, reached through the pipe."""

    def __init__(self, calls: _Calls, key: TaskKey) -> None:
        self._calls = calls
        self._key = key

    def start(self) -> None:
        self._calls.call(self._key, "start")

    def stop(self) -> None:
        self._calls.call(self._key, "stop")

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        return self._calls.call(self._key, "get", list(keys))

    def set(self, entries: Mapping[bytes, bytes | None]) -> None:
        self._calls.call(self._key, "set", dict(entries))

    def items(self) -> list[tuple[bytes, bytes]]:
        return self._calls.call(self._key, "items")


class StatusRelay(StatusStore):
    """Task status reports, sent to the worker's status store (the only call a task runner makes)."""

    def __init__(self, send: Send) -> None:
        super().__init__()
        self._send = send

    def put_task(self, name: str, index: int, status: InstanceStatus) -> None:
        self._send(TaskStatus((name, index), status))


class HostedWorker:
    """What a task process is of a worker: its tasks, built as the worker builds them, their statuses
    and seen topics sent to the worker, a source task's offsets in the store the worker opened for it."""

    def __init__(self, settings: HostSettings, send: Send, calls: _Calls) -> None:
        config = WorkerConfig(settings.worker_props)
        self.worker_id = settings.worker_id
        self.graceful_timeout_s = config.get_int("task.shutdown.graceful.timeout.ms") / 1000
        self.statuses = StatusRelay(send)
        self.tasks: dict[TaskKey, TaskRunner] = {}
        self._send = send
        self._builder = TaskBuilder(
            config,
            Plugins(config.get_list("plugin.path"), find_java_now=False),
            self.statuses,
            settings.worker_id,
            self._on_topic,
            lambda name, index, _: OffsetStoreRelay(calls, (name, index)),
        )

    def _on_topic(self, connector: str, index: int, topic: str) -> None:
        self._send(TopicSeen((connector, index), topic))

    def start_task(self, message: StartTask) -> bool:
        name, index = message.key
        try:
            runner = self._builder.build(name, index, message.task_config, message.connector_config, message.target)
        except Exception as exc:
            log.error("Failed to start task %s-%s", name, index, exc_info=exc)
            self.statuses.put_task(name, index, InstanceStatus(State.FAILED, self.worker_id, format_trace(exc)))
            return False
        self.tasks[message.key] = runner
        runner.start()
        return not runner.failed

    def stop_task(self, key: TaskKey, timeout_s: float) -> bool:
        runner = self.tasks.pop(key, None)
        if runner is None:
            return True
        runner.stop()
        return runner.await_stop(timeout_s)

    def transition_task(self, key: TaskKey, target: TargetState) -> None:
        runner = self.tasks.get(key)
        if runner is not None:
            runner.transition_to(target)

    def forget_seen_topics(self, key: TaskKey) -> None:
        runner = self.tasks.get(key)
        if runner is not None:
            runner.forget_seen_topics()

    def stop_all(self) -> None:
        """Signal every task first, then wait for all within one graceful timeout."""
        runners, self.tasks = list(self.tasks.values()), {}
        for runner in runners:
            runner.stop()
        deadline = time.monotonic() + self.graceful_timeout_s
        for runner in runners:
            runner.await_stop(max(0.0, deadline - time.monotonic()))


class TaskHost:
    """The task process's end of the pipe: runs what the worker sends, one task's jobs in order."""

    def __init__(self, conn: Any, settings: HostSettings) -> None:
        self._conn = conn
        self._send_lock = threading.Lock()
        self._stopping = threading.Event()
        self.calls = _Calls(self.send)
        self.worker = HostedWorker(settings, self.send, self.calls)
        # a task's jobs one after the other (its stop after its start), tasks side by side (a slow start
        # holds up no other task's stop); each key's thread ends when it has nothing queued
        self._jobs = KeyedDaemonExecutor("task-host")
        self._last_client_stats: dict[TaskKey, int] = {}

    def send(self, message: ToWorker) -> bool:
        try:
            with self._send_lock:
                self._conn.send(message)
            return True
        except (OSError, ValueError):  # the worker is gone: serve() sees the pipe closed and stops the tasks
            return False

    # ---- commands ------------------------------------------------------------------------------

    def _on_start(self, message: StartTask) -> None:
        def start() -> None:
            self.send(TaskStarted(message.key, self.worker.start_task(message)))

        self._submit(message.key, start)

    def _on_stop(self, message: StopTask) -> None:
        def stop() -> None:
            ok = self.worker.stop_task(message.key, message.timeout_s)
            self._last_client_stats.pop(message.key, None)
            self.send(TaskStopped(message.key, ok))

        self._submit(message.key, stop)

    def _on_transition(self, message: TransitionTask) -> None:
        self._submit(message.key, lambda: self.worker.transition_task(message.key, message.target))

    def _on_forget_topics(self, message: ForgetTopics) -> None:
        self.worker.forget_seen_topics(message.key)

    def _on_log_level(self, message: SetLogLevel) -> None:  # /admin/loggers changed a level in the worker
        LOG_LEVELS.set(message.namespace, message.level)

    def _on_offset_reply(self, message: OffsetReply) -> None:
        self.calls.reply(message)

    def _on_exit(self, message: Exit) -> None:
        pass  # serve() ends after it

    # what the worker sends (task_protocol.ToHost), by type
    HANDLERS: ClassVar[Mapping[type, Callable[[TaskHost, Any], None]]] = {
        StartTask: _on_start,
        StopTask: _on_stop,
        TransitionTask: _on_transition,
        ForgetTopics: _on_forget_topics,
        SetLogLevel: _on_log_level,
        OffsetReply: _on_offset_reply,
        Exit: _on_exit,
    }

    def _submit(self, key: TaskKey, job: Callable[[], None]) -> None:
        def log_failure(future: concurrent.futures.Future[None]) -> None:
            if not future.cancelled() and future.exception() is not None:
                log.error("Task process job for %s failed", key, exc_info=future.exception())

        self._jobs.submit(key, job).add_done_callback(log_failure)

    # ---- statistics ----------------------------------------------------------------------------

    def _stats(self) -> dict[TaskKey, TaskStats]:
        out: dict[TaskKey, TaskStats] = {}
        for key, runner in list(self.worker.tasks.items()):
            stats = runner.client_stats
            new_stats = stats is not None and self._last_client_stats.get(key) != id(stats)
            if new_stats:
                self._last_client_stats[key] = id(stats)
            out[key] = TaskStats(
                dataclasses.replace(runner.counters),
                dataclasses.replace(runner.error_counters),
                stats if new_stats else None,
                runner.active_records(),
            )
        return out

    def _report_stats(self) -> None:
        while not self._stopping.wait(STATS_INTERVAL_S):
            if self.worker.tasks:
                self.send(StatsReport(self._stats()))

    # ---- the loop -------------------------------------------------------------------------------

    def serve(self) -> None:
        threading.Thread(target=self._report_stats, name="task-host-stats", daemon=True).start()
        self.send(Hello(os.getpid()))
        while True:
            try:
                message: ToHost = self._conn.recv()
            except (EOFError, OSError):
                log.warning("The worker of this task process is gone; stopping its tasks")
                # their offsets cannot be committed any more: they are polled again after a restart
                self.calls.fail_all("the worker process is gone")
                break
            handler = self.HANDLERS.get(type(message))
            if handler is None:
                log.warning("Unknown message %r from the worker; ignored", message)
                continue
            handler(self, message)
            if isinstance(message, Exit):
                break
        self.shutdown()

    def shutdown(self) -> None:
        self._stopping.set()
        try:
            self.worker.stop_all()
        finally:
            self.calls.fail_all("the task process is stopping")
            self._jobs.shutdown()


def run(conn: Any, settings: HostSettings) -> None:
    """The task process's entry point."""
    # the worker decides when its tasks stop: a Ctrl-C in the worker's terminal reaches the whole process
    # group, and the worker then stops the tasks through the pipe
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    from .. import log_context

    logging.basicConfig(level=LEVELS.get(settings.log_level.upper(), logging.INFO), stream=sys.stdout)
    for handler in logging.getLogger().handlers:
        log_context.install(handler, settings.log_format.strip().lower())
    apply_exact(list(settings.levels))
    host = TaskHost(conn, settings)
    host.serve()


__all__ = ["HostedWorker", "OffsetStoreRelay", "StatusRelay", "TaskHost", "run"]
