"""A task process (`task.processes` > 0): runs the tasks the worker places in it, as threads, with the
same runners as the worker itself (see task_processes.py for the worker's side and the messages)."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import itertools
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..daemon_executor import KeyedDaemonExecutor
from ..log_levels import LEVELS, LOG_LEVELS, apply_exact
from ..storage.base import InstanceStatus, OffsetStore, StatusStore
from ..storage.states import State, TargetState
from .task_processes import TaskKey, TaskStats
from .task_runner import TaskRunner, format_trace

log = logging.getLogger(__name__)

STATS_INTERVAL_S = 1.0


@dataclass(frozen=True)
class HostSettings:
    worker_props: dict[str, str]
    worker_id: str
    log_level: str
    log_format: str
    # the worker's loggers with a level of their own when this process started (/admin/loggers changes)
    levels: tuple[tuple[str, int], ...] = ()


class _Calls:
    """Calls to the worker that wait for its reply (offset store operations)."""

    def __init__(self, send: Callable[[tuple[Any, ...]], bool]) -> None:
        self._send = send
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._waiting: dict[int, concurrent.futures.Future[Any]] = {}
        self._closed: str | None = None

    def call(self, *message: Any) -> Any:
        call_id = next(self._ids)
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        with self._lock:
            if self._closed is not None:
                raise RuntimeError(self._closed)
            self._waiting[call_id] = future
        if not self._send(("offsets", call_id, *message)):
            self.reply(call_id, None, "the worker process is gone")
        return future.result()

    def reply(self, call_id: int, result: Any, error: str | None) -> None:
        with self._lock:
            future = self._waiting.pop(call_id, None)
        if future is None:
            return
        if error is not None:
            future.set_exception(RuntimeError(f"offset store in the worker: {error}"))
        else:
            future.set_result(result)

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
        self._calls.call(self._key, "start", ())

    def stop(self) -> None:
        self._calls.call(self._key, "stop", ())

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        return self._calls.call(self._key, "get", (list(keys),))

    def set(self, entries: Mapping[bytes, bytes | None]) -> None:
        self._calls.call(self._key, "set", (dict(entries),))

    def items(self) -> list[tuple[bytes, bytes]]:
        return self._calls.call(self._key, "items", ())


class StatusRelay(StatusStore):
    """Task status reports, sent to the worker's status store (the only call a task runner makes)."""

    def __init__(self, send: Callable[[tuple[Any, ...]], bool]) -> None:
        super().__init__()
        self._send = send

    def put_task(self, name: str, index: int, status: InstanceStatus) -> None:
        self._send(("status", (name, index), status))


class TaskHost:
    def __init__(self, conn: Any, settings: HostSettings) -> None:
        from ..plugins import Plugins
        from ..worker_config import WorkerConfig
        from .worker import Worker

        self._conn = conn
        self._send_lock = threading.Lock()
        self._stopping = threading.Event()
        self.calls = _Calls(self.send)
        config = WorkerConfig(settings.worker_props)
        calls = self.calls

        class HostedWorker(Worker):
            def task_offset_store(self, name: str, index: int, connector_config: dict[str, str]) -> OffsetStore:
                # a source task's offsets live in the store the worker opened for it, not in this process
                return OffsetStoreRelay(calls, (name, index))

        self.worker = HostedWorker(
            config,
            Plugins(config.get_list("plugin.path")),
            _NoOffsetStore(),
            StatusRelay(self.send),
            settings.worker_id,
            on_topic=self._on_topic,
        )
        # a task's jobs one after the other (its stop after its start), tasks side by side (a slow start
        # holds up no other task's stop); each key's thread ends when it has nothing queued
        self._jobs = KeyedDaemonExecutor("task-host")
        self._last_client_stats: dict[TaskKey, int] = {}

    def send(self, message: tuple[Any, ...]) -> bool:
        try:
            with self._send_lock:
                self._conn.send(message)
            return True
        except (OSError, ValueError):  # the worker is gone: serve() sees the pipe closed and stops the tasks
            return False

    def _on_topic(self, connector: str, index: int, topic: str) -> None:
        self.send(("topic", (connector, index), topic))

    # ---- commands ------------------------------------------------------------------------------

    def _start(
        self, key: TaskKey, task_config: dict[str, str], connector_config: dict[str, str], target: TargetState
    ) -> None:
        ok = True
        try:
            runner = self.worker.build_task_runner(key[0], key[1], task_config, connector_config, target)
        except Exception as exc:
            log.error("Failed to start task %s-%s", key[0], key[1], exc_info=exc)
            self.worker.statuses.put_task(
                key[0], key[1], InstanceStatus(State.FAILED, self.worker.worker_id, format_trace(exc))
            )
            ok = False
        else:
            self.worker.tasks[key] = runner
            runner.start()
            ok = not runner.failed
        self.send(("started", key, ok))

    def _stop(self, key: TaskKey, timeout_s: float) -> None:
        runner = self.worker.tasks.pop(key, None)
        ok = True
        if runner is not None:
            runner.stop()
            ok = runner.await_stop(timeout_s)
        self._last_client_stats.pop(key, None)
        self.send(("stopped", key, ok))

    def _transition(self, key: TaskKey, target: TargetState) -> None:
        runner = self.worker.tasks.get(key)
        if runner is not None:
            runner.transition_to(target)

    def _stats(self) -> dict[TaskKey, TaskStats]:
        out: dict[TaskKey, TaskStats] = {}
        for key, runner in list(self.worker.tasks.items()):
            assert isinstance(runner, TaskRunner)
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
                self.send(("stats", self._stats()))

    # ---- the loop -------------------------------------------------------------------------------

    def serve(self) -> None:
        threading.Thread(target=self._report_stats, name="task-host-stats", daemon=True).start()
        self.send(("hello", os.getpid()))
        while True:
            try:
                message = self._conn.recv()
            except (EOFError, OSError):
                log.warning("The worker of this task process is gone; stopping its tasks")
                # their offsets cannot be committed any more: they are polled again after a restart
                self.calls.fail_all("the worker process is gone")
                break
            kind = message[0]
            if kind == "reply":
                self.calls.reply(*message[1:])
            elif kind == "start":
                _, key, task_config, connector_config, target = message
                self._submit(key, lambda k=key, t=task_config, c=connector_config, s=target: self._start(k, t, c, s))
            elif kind == "stop":
                _, key, timeout_s = message
                self._submit(key, lambda k=key, t=timeout_s: self._stop(k, t))
            elif kind == "transition":
                _, key, target = message
                self._submit(key, lambda k=key, t=target: self._transition(k, t))
            elif kind == "log_level":  # /admin/loggers changed a level in the worker: the same here
                LOG_LEVELS.set(message[1], message[2])
            elif kind == "forget_topics":
                runner = self.worker.tasks.get(message[1])
                if runner is not None:
                    runner.forget_seen_topics()
            elif kind == "exit":
                break
            else:
                log.warning("Unknown message %r from the worker; ignored", kind)
        self.shutdown()

    def _submit(self, key: TaskKey, job: Callable[[], None]) -> None:
        def log_failure(future: concurrent.futures.Future[None]) -> None:
            if not future.cancelled() and future.exception() is not None:
                log.error("Task process job for %s failed", key, exc_info=future.exception())

        self._jobs.submit(key, job).add_done_callback(log_failure)

    def shutdown(self) -> None:
        self._stopping.set()
        try:
            self.worker.stop_tasks(list(self.worker.tasks))
        finally:
            self.calls.fail_all("the task process is stopping")
            self._jobs.shutdown()


class _NoOffsetStore(OffsetStore):
    """The worker-wide store a task process never uses (each source task gets a relay)."""

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        raise RuntimeError("no worker offset store in a task process")

    def set(self, entries: Mapping[bytes, bytes | None]) -> None:
        raise RuntimeError("no worker offset store in a task process")

    def items(self) -> list[tuple[bytes, bytes]]:
        raise RuntimeError("no worker offset store in a task process")


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


__all__ = ["HostSettings", "TaskHost", "run"]
