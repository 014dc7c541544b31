"""A Python process's handle on its JVM host process (host.py): started on first use, started again after
it died, calls answered through futures, and the host's callbacks (offset reads, reconfiguration requests,
errors raised by a connector) routed to the Python instance they concern."""

from __future__ import annotations

import itertools
import logging
import os
import shlex
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from multiprocessing.connection import Connection
from typing import Any, ClassVar, Protocol

from .. import log_context
from ..api.errors import ConnectError, RetriableError
from ..log_levels import LOG_LEVELS
from .jvm import class_path
from .protocol import (
    Create,
    Exit,
    InstanceKind,
    Invoke,
    JavaFailure,
    OffsetsAnswer,
    OffsetsQuestion,
    RaiseError,
    Ready,
    Reconfigure,
    Release,
    Result,
    SetLogLevel,
    Start,
    ToHost,
    ToPython,
)

log = logging.getLogger(__name__)

START_TIMEOUT_S = 120.0


class JavaError(ConnectError):
    """A Java plugin's call failed: the message is the Java exception's trace, as Java prints it."""

    def __init__(self, failure: JavaFailure) -> None:
        super().__init__(failure.trace.rstrip())
        self.failure = failure


class RetriableJavaError(RetriableError):
    """A Java plugin threw a RetriableException: the runtime retries as the reference does."""

    def __init__(self, failure: JavaFailure) -> None:
        super().__init__(failure.trace.rstrip())
        self.failure = failure


def java_error(failure: JavaFailure) -> ConnectError:
    return RetriableJavaError(failure) if failure.retriable else JavaError(failure)


def _log_format() -> str:
    """This process's log.format (its root handler's formatter tells), for the host's log lines."""
    json_lines = any(isinstance(h.formatter, log_context.JsonLineFormatter) for h in logging.getLogger().handlers)
    return "json" if json_lines else "text"


class HostedInstance(Protocol):
    """What the JVM host's callbacks reach: a connector or task proxy of this process."""

    def offsets(self, partitions_json: str) -> str: ...

    def on_reconfigure(self) -> None: ...

    def on_error(self, trace: str) -> None: ...

    def on_host_exit(self, reason: str) -> None: ...


class _Process:
    """One JVM host process and the thread reading what it sends."""

    def __init__(self, host: JvmHost, start: Start) -> None:
        self._host = host
        ours, theirs = socket.socketpair()
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "runtime.java.host", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        self.conn = Connection(ours.detach())
        self._send_lock = threading.Lock()
        self.send(start)
        self.ready: Future[None] = Future()
        self.closing = False
        threading.Thread(target=self._read, name=f"jvm-host-{self.popen.pid}-reader", daemon=True).start()

    @property
    def pid(self) -> int:
        return self.popen.pid

    def send(self, message: ToHost) -> bool:
        try:
            with self._send_lock:
                self.conn.send(message)
            return True
        except (OSError, ValueError):
            return False

    def _read(self) -> None:
        while True:
            try:
                message: ToPython = self.conn.recv()
            except (EOFError, OSError):
                break
            if isinstance(message, Ready):
                if message.failure is not None:
                    self.ready.set_exception(JavaError(message.failure))
                else:
                    self.ready.set_result(None)
                continue
            handler = JvmHost.HANDLERS.get(type(message))
            if handler is None:
                log.warning("JVM host %d sent an unknown message %r; ignored", self.pid, message)
                continue
            try:
                handler(self._host, message)
            except Exception:
                log.exception("Could not handle %s from JVM host %d", type(message).__name__, self.pid)
        code = self.popen.wait()
        reason = f"the JVM host process {self.pid} exited (exit code {code})"
        if not self.ready.done():
            self.ready.set_exception(ConnectError(reason))
        self._host.lost(self, reason)

    def close(self, timeout_s: float) -> None:
        self.closing = True
        self.send(Exit())
        try:
            self.popen.wait(timeout_s)
        except subprocess.TimeoutExpired:
            log.warning("JVM host %d did not exit in %.1fs; killing it", self.pid, timeout_s)
            self.popen.kill()
            self.popen.wait(10)
        self.conn.close()


class JvmHost:
    """The JVM host of this process for a set of plugin locations (one per process: `for_locations`)."""

    _instances_lock = threading.Lock()
    _by_locations: ClassVar[dict[tuple[str, ...], JvmHost]] = {}

    @classmethod
    def for_locations(cls, locations: tuple[str, ...]) -> JvmHost:
        with cls._instances_lock:
            host = cls._by_locations.get(locations)
            if host is None:
                host = cls._by_locations[locations] = cls(locations)
            return host

    def __init__(self, locations: tuple[str, ...]) -> None:
        self.locations = locations
        self._lock = threading.Lock()
        self._process: _Process | None = None
        self._calls = itertools.count(1)
        self._waiting: dict[int, tuple[_Process, Future[Any]]] = {}
        self._instances: dict[str, HostedInstance] = {}
        self._handles: dict[int, _Process] = {}
        self._offset_reads = threading.Semaphore(8)
        LOG_LEVELS.add_listener(self._on_log_level)

    # ---- the process ----------------------------------------------------------------------------

    def _running(self) -> _Process:
        """The live process, started (and waited for) when there is none."""
        with self._lock:
            process = self._process
            if process is None or process.popen.poll() is not None:
                java, jars = class_path()
                options = tuple(shlex.split(os.environ.get("KAFKA_HEAP_OPTS", ""))) + tuple(
                    shlex.split(os.environ.get("KAFKA_OPTS", ""))
                )
                start = Start(
                    tuple(jars),
                    str(java.libjvm),
                    options,
                    self.locations,
                    _log_format(),
                    tuple(LOG_LEVELS.explicit()),
                )
                process = self._process = _Process(self, start)
                log.info(
                    "Started JVM host process %d (Java %d) for plugin.path %s",
                    process.pid,
                    java.version,
                    self.locations,
                )
        process.ready.result(START_TIMEOUT_S)
        return process

    def lost(self, process: _Process, reason: str) -> None:
        """A process ended: what waited on it fails, and the instances it held are told."""
        with self._lock:
            if self._process is process:
                self._process = None
            waiting = [(c, f) for c, (p, f) in self._waiting.items() if p is process]
            for call, _ in waiting:
                del self._waiting[call]
            instances = list(self._instances.values())
        for _, future in waiting:
            future.set_exception(ConnectError(reason))
        if not process.closing:
            log.error("%s; its Java connectors and tasks fail", reason)
            for instance in instances:
                instance.on_host_exit(reason)

    def close(self, timeout_s: float = 10.0) -> None:
        LOG_LEVELS.remove_listener(self._on_log_level)
        with self._lock:
            process, self._process = self._process, None
        if process is not None:
            process.close(timeout_s)

    # ---- calls ----------------------------------------------------------------------------------

    def _request(self, process: _Process, make: Callable[[int], ToHost]) -> Future[Any]:
        call = next(self._calls)
        future: Future[Any] = Future()
        with self._lock:
            self._waiting[call] = (process, future)
        if not process.send(make(call)):
            with self._lock:
                self._waiting.pop(call, None)
            future.set_exception(ConnectError(f"the JVM host process {process.pid} is gone"))
        return future

    def create(self, kind: InstanceKind, plugin: str, class_name: str, instance: HostedInstance, name: str) -> int:
        """A new Java instance in the host; `instance` hears the host's callbacks about it (as `name`)."""
        process = self._running()
        with self._lock:
            self._instances[name] = instance
        handle = self._request(process, lambda call: Create(call, kind, plugin, class_name, name)).result()
        with self._lock:
            self._handles[handle] = process
        return int(handle)

    def call(self, handle: int | None, method: str, *args: Any, timeout_s: float | None = None) -> Any:
        """A method of an instance (or, with handle None, of the host's plugin index); JavaError when it threw."""
        return self.submit(handle, method, *args).result(timeout_s)

    def submit(self, handle: int | None, method: str, *args: Any) -> Future[Any]:
        """`call` without waiting: the future of its answer (an instance's calls run in the order sent)."""
        if handle is None:
            process = self._running()
        else:
            with self._lock:
                known = self._handles.get(handle)
            if known is None or known.popen.poll() is not None:
                raise ConnectError("this instance's JVM host process is gone; restart it")
            process = known
        return self._request(process, lambda call: Invoke(call, handle, method, args))

    def release(self, handle: int, name: str) -> None:
        with self._lock:
            process = self._handles.pop(handle, None)
            self._instances.pop(name, None)
        if process is not None:
            process.send(Release(handle))

    # ---- from the process ---------------------------------------------------------------------

    def _on_result(self, message: Result) -> None:
        with self._lock:
            _, future = self._waiting.pop(message.call, (None, None))
        if future is None:
            return
        if message.failure is not None:
            future.set_exception(java_error(message.failure))
        else:
            future.set_result(message.value)

    def _instance(self, name: str) -> HostedInstance | None:
        with self._lock:
            return self._instances.get(name)

    def _on_offsets_question(self, message: OffsetsQuestion) -> None:
        # a read may wait on Kafka: not on the reader thread, which must stay free for results
        def answer() -> None:
            with self._offset_reads:
                instance = self._instance(message.instance)
                with self._lock:
                    process = self._process
                try:
                    if instance is None:
                        raise ConnectError(f"no instance {message.instance} in this process")
                    reply = OffsetsAnswer(message.call, instance.offsets(message.partitions_json), None)
                except Exception as exc:  # noqa: BLE001 - the Java caller gets it as a ConnectException
                    reply = OffsetsAnswer(message.call, None, f"{type(exc).__name__}: {exc}")
                if process is not None:
                    process.send(reply)

        threading.Thread(target=answer, name=f"jvm-offsets-{message.instance}", daemon=True).start()

    def _on_reconfigure(self, message: Reconfigure) -> None:
        instance = self._instance(message.instance)
        if instance is not None:
            instance.on_reconfigure()

    def _on_raise_error(self, message: RaiseError) -> None:
        instance = self._instance(message.instance)
        if instance is not None:
            instance.on_error(message.trace)

    HANDLERS: ClassVar[Mapping[type, Callable[[JvmHost, Any], None]]] = {
        Result: _on_result,
        OffsetsQuestion: _on_offsets_question,
        Reconfigure: _on_reconfigure,
        RaiseError: _on_raise_error,
    }

    def _on_log_level(self, namespace: str, number: int) -> None:
        with self._lock:
            process = self._process
        if process is not None:
            process.send(SetLogLevel(namespace, number))


__all__ = ["HostedInstance", "JavaError", "JvmHost", "RetriableJavaError", "java_error"]
