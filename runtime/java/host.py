"""The JVM host process: a Python process holding one JVM (through JPype), its Java plugins' instances
and their threads, for the process that started it (a worker or a task process; client.py is that side).

The JVM never runs inside a worker: a JVM that crashes, or a plugin that brings it down, ends this process
only, and the instances it held fail (FAILED, with the cause) in the process that used them. The JVM starts
with -Xrs, so signals stay Python's. Each instance's calls run in order on a thread of their own (its stop()
on another, so a stop reaches a task blocked in poll()); JPype releases the GIL while Java runs.

    python -m runtime.java.host FD      (started by client.py with one end of a socket pair)
"""

from __future__ import annotations

import itertools
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from multiprocessing.connection import Connection
from typing import Any, ClassVar

from .. import log_context
from ..daemon_executor import KeyedDaemonExecutor
from ..log_levels import apply_exact
from .protocol import (
    Create,
    Exit,
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

# what Python may call, per kind of target (the JVM's other methods stay out of reach)
METHODS: Mapping[str, frozenset[str]] = {
    "host": frozenset({"describe", "configDef", "validate", "commitsRecords"}),
    "connector": frozenset(
        {
            "version",
            "initialize",
            "start",
            "taskClass",
            "taskConfigs",
            "stop",
            "exactlyOnceSupport",
            "canDefineTransactionBoundaries",
            "alterSourceOffsets",
            "alterSinkOffsets",
        }
    ),
    "source_task": frozenset({"version", "start", "poll", "commit", "commitRecords", "stop"}),
    "sink_task": frozenset({"version", "start", "put", "preCommit", "open", "close", "stop"}),
}


def failure(error: BaseException) -> JavaFailure:
    """A JavaFailure for what a call raised (a Java exception, or a Python one in this process)."""
    java: Any = getattr(error, "__javaobject__", None) or (error if hasattr(error, "getStackTrace") else None)
    if java is None:
        return JavaFailure(type(error).__name__, str(error), f"{type(error).__name__}: {error}", False)
    import jpype

    writer = jpype.JClass("java.io.StringWriter")()
    java.printStackTrace(jpype.JClass("java.io.PrintWriter")(writer))
    retriable_class = jpype.JClass("org.apache.kafka.connect.errors.RetriableException")
    retriable, cause, seen = False, java, 0
    while cause is not None and seen < 20:
        retriable = retriable or isinstance(cause, retriable_class)
        cause, seen = cause.getCause(), seen + 1
    return JavaFailure(str(java.getClass().getName()), str(java.getMessage() or ""), str(writer.toString()), retriable)


class HostProcess:
    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._send_lock = threading.Lock()
        self._handles: dict[int, tuple[str, Any]] = {}
        self._ids = itertools.count(1)
        self._calls = KeyedDaemonExecutor("jvm-call")
        self._questions = itertools.count(1)
        self._answers: dict[int, Future[str]] = {}
        self._answers_lock = threading.Lock()
        self._host: Any = None
        self._callbacks: Any = None

    def send(self, message: ToPython) -> None:
        try:
            with self._send_lock:
                self._conn.send(message)
        except (OSError, ValueError):
            pass  # the other process is gone: serve() sees its end closed and exits

    # ---- start ----------------------------------------------------------------------------------

    def start_jvm(self, start: Start) -> None:
        import jpype

        jpype.startJVM(
            start.libjvm,
            "-Xrs",  # the JVM installs no signal handlers: Python's stay in charge
            *start.jvm_options,
            classpath=list(start.class_path),
            convertStrings=False,
        )
        logs = jpype.JClass("runtimejava.logging.PythonLogs")
        for name, level in start.levels:
            logs.setLevel(name, level)
        threading.Thread(target=self._drain_logs, args=(logs,), name="jvm-logs", daemon=True).start()
        self._callbacks = self._new_callbacks()
        self._host = jpype.JClass("runtimejava.Host")(jpype.JArray(jpype.JString)(list(start.locations)))

    def _new_callbacks(self) -> Any:
        from jpype import JImplements, JOverride

        process = self

        @JImplements("runtimejava.Callbacks")
        class Callbacks:
            @JOverride
            def requestTaskReconfiguration(self, instance: Any) -> None:
                process.send(Reconfigure(str(instance)))

            @JOverride
            def raiseError(self, instance: Any, trace: Any) -> None:
                process.send(RaiseError(str(instance), str(trace)))

            @JOverride
            def offsets(self, instance: Any, partitions_json: Any) -> str:
                return process.ask_offsets(str(instance), str(partitions_json))

        return Callbacks()

    def ask_offsets(self, instance: str, partitions_json: str) -> str:
        """On a plugin's thread: the committed offsets of `partitions_json`, from the other process."""
        call = next(self._questions)
        future: Future[str] = Future()
        with self._answers_lock:
            self._answers[call] = future
        self.send(OffsetsQuestion(call, instance, partitions_json))
        return future.result(timeout=120)

    def _drain_logs(self, logs: Any) -> None:
        """SLF4J's events, into the Python logger of the same name (the worker's log, its levels)."""
        while True:
            event = logs.take(1000)
            if event is None:
                continue
            name, level, message, trace = (None if part is None else str(part) for part in event)
            text = message if trace is None else f"{message}\n{trace}"
            logging.getLogger(name).log(int(level or logging.INFO), "%s", text)

    # ---- calls ----------------------------------------------------------------------------------

    def _on_create(self, message: Create) -> None:
        def create() -> Any:
            import jpype

            kinds = {
                "connector": ("runtimejava.ConnectorHandle", (message.class_name, message.instance, self._callbacks)),
                "source_task": (
                    "runtimejava.SourceTaskHandle",
                    (message.plugin, message.class_name, message.instance, self._callbacks),
                ),
                "sink_task": ("runtimejava.SinkTaskHandle", (message.plugin, message.class_name)),
            }
            class_name, args = kinds[message.kind]
            instance = jpype.JClass(class_name)(self._host, *args)
            handle = next(self._ids)
            self._handles[handle] = (message.kind, instance)
            return handle

        self._run(("create", message.call), message.call, create)

    def _on_invoke(self, message: Invoke) -> None:
        if message.handle is None:
            kind, target = "host", self._host
        else:
            kind, target = self._handles.get(message.handle, ("released", None))
        if message.method not in METHODS.get(kind, ()):
            self.send(Result(message.call, None, JavaFailure("ValueError", "no such method", message.method, False)))
            return

        def invoke() -> Any:
            value = getattr(target, message.method)(*message.args)
            if value is None:
                return None
            if message.method == "poll":
                return memoryview(value).tobytes()  # one copy of the batch, through the buffer protocol
            if isinstance(value, (bool, int, float)):
                return value
            return str(value)

        # an instance's calls in order, its stop() beside them (a task may block in poll())
        lane = "stop" if message.method == "stop" else "calls"
        key = ("host", message.call) if message.handle is None else (message.handle, lane)
        self._run(key, message.call, invoke)

    def _run(self, key: Any, call: int, job: Callable[[], Any]) -> None:
        def run() -> None:
            try:
                result = Result(call, job())
            except BaseException as error:  # noqa: BLE001 - every failure goes back to the caller
                result = Result(call, None, failure(error))
            self.send(result)

        self._calls.submit(key, run)

    def _on_release(self, message: Release) -> None:
        self._handles.pop(message.handle, None)

    def _on_offsets_answer(self, message: OffsetsAnswer) -> None:
        with self._answers_lock:
            future = self._answers.pop(message.call, None)
        if future is None:
            return
        if message.error is not None:
            future.set_exception(RuntimeError(message.error))
        else:
            future.set_result(message.offsets_json or "[]")

    def _on_log_level(self, message: SetLogLevel) -> None:
        import jpype

        logging.getLogger(None if message.namespace.lower() == "root" else message.namespace).setLevel(message.level)
        jpype.JClass("runtimejava.logging.PythonLogs").setLevel(message.namespace, message.level)

    def _on_exit(self, message: Exit) -> None:
        pass  # serve() ends after it

    def _on_start(self, message: Start) -> None:
        pass  # the first message only (serve() handles it)

    HANDLERS: ClassVar[Mapping[type, Callable[[HostProcess, Any], None]]] = {
        Start: _on_start,
        Create: _on_create,
        Invoke: _on_invoke,
        Release: _on_release,
        OffsetsAnswer: _on_offsets_answer,
        SetLogLevel: _on_log_level,
        Exit: _on_exit,
    }

    def serve(self) -> None:
        start = self._conn.recv()
        assert isinstance(start, Start), start
        for handler in logging.getLogger().handlers:
            log_context.install(handler, start.log_format.strip().lower())
        apply_exact(list(start.levels))
        try:
            self.start_jvm(start)
        except BaseException as error:  # noqa: BLE001 - the other process reports it
            self.send(Ready(os.getpid(), failure(error)))
            return
        self.send(Ready(os.getpid()))
        while True:
            try:
                message: ToHost = self._conn.recv()
            except (EOFError, OSError):
                break  # the process that started this one is gone: so is the reason to run
            on_message = self.HANDLERS.get(type(message))
            if on_message is None:
                log.warning("JVM host: unknown message %r; ignored", message)
                continue
            on_message(self, message)
            if isinstance(message, Exit):
                break


def main(argv: list[str]) -> None:
    # the process that started this one decides when it ends (a Ctrl-C reaches the whole process group)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=logging.INFO, stream=sys.stdout)
    HostProcess(Connection(int(argv[0]))).serve()
    # plugin threads (non-daemon Java threads) must not keep a host whose user is gone alive
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
