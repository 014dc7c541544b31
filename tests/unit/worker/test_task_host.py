"""A task process's side of the pipe (TaskHost), served on a thread of the test against the other end of a
real pipe: what it answers to the worker's messages, without a broker."""

from __future__ import annotations

import logging
import multiprocessing
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from runtime.storage.states import State, TargetState
from runtime.worker import task_protocol as p
from runtime.worker.task_host import OffsetStoreRelay, TaskHost

PROPS = {"bootstrap.servers": "127.0.0.1:9", "offset.storage.file.filename": "/dev/null"}


class Worker:
    """The worker's end of the pipe."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def send(self, message: p.ToHost) -> None:
        self.conn.send(message)

    def receive(self, kind: type, timeout_s: float = 10.0) -> Any:
        """The next message of `kind` (StatsReports and others in between are skipped)."""
        while self.conn.poll(timeout_s):
            message = self.conn.recv()
            if isinstance(message, kind):
                return message
        raise AssertionError(f"no {kind.__name__} within {timeout_s}s")


@pytest.fixture
def host() -> Iterator[tuple[TaskHost, Worker, threading.Thread]]:
    worker_end, host_end = multiprocessing.Pipe(duplex=True)
    host = TaskHost(host_end, p.HostSettings(PROPS, "w:8083", "INFO", "text"))
    serving = threading.Thread(target=host.serve, daemon=True)
    serving.start()
    worker = Worker(worker_end)
    assert isinstance(worker.receive(p.Hello), p.Hello)
    yield host, worker, serving
    if serving.is_alive():
        worker.send(p.Exit())
        serving.join(10)
    worker_end.close()


def test_a_task_that_cannot_be_built_is_failed_with_its_trace(host: tuple[TaskHost, Worker, Any]) -> None:
    _, worker, _ = host
    config = {"connector.class": "no.such.Connector"}
    worker.send(p.StartTask(("c", 0), {"task.class": "no.such.Task"}, config, TargetState.STARTED))
    status = worker.receive(p.TaskStatus)
    assert status.key == ("c", 0) and status.status.state is State.FAILED
    assert "no.such.Connector" in status.status.trace
    assert worker.receive(p.TaskStarted) == p.TaskStarted(("c", 0), False)
    # stopping a task it does not run answers at once
    worker.send(p.StopTask(("c", 0), 1.0))
    assert worker.receive(p.TaskStopped) == p.TaskStopped(("c", 0), True)


def test_a_log_level_set_in_the_worker_is_set_here(host: tuple[TaskHost, Worker, Any]) -> None:
    _, worker, _ = host
    logger = logging.getLogger("tests.unit.worker.a_task_logger")
    worker.send(p.SetLogLevel("tests.unit.worker.a_task_logger", logging.DEBUG))
    worker.send(p.StopTask(("c", 9), 1.0))  # messages are handled in order: once this is answered...
    worker.receive(p.TaskStopped)
    assert logger.level == logging.DEBUG  # ...the level is set


def test_offset_store_calls_go_to_the_worker_and_return_its_answer(host: tuple[TaskHost, Worker, Any]) -> None:
    task_host, worker, _ = host
    relay = OffsetStoreRelay(task_host.calls, ("c", 0))
    results: dict[str, Any] = {}
    reading = threading.Thread(target=lambda: results.update(read=relay.get([b"k"])))
    reading.start()
    call = worker.receive(p.OffsetCall)
    assert (call.key, call.operation, call.args) == (("c", 0), "get", ([b"k"],))
    worker.send(p.OffsetReply(call.call, {b"k": b"v"}, None))
    reading.join(10)
    assert results == {"read": {b"k": b"v"}}

    failing = threading.Thread(target=lambda: results.update(error=_error(lambda: relay.set({b"k": None}))))
    failing.start()
    call = worker.receive(p.OffsetCall)
    worker.send(p.OffsetReply(call.call, None, "KafkaException: broker down"))
    failing.join(10)
    assert "broker down" in results["error"]


def test_a_gone_worker_fails_waiting_offset_calls_and_ends_the_process(
    host: tuple[TaskHost, Worker, threading.Thread],
) -> None:
    task_host, worker, serving = host
    relay = OffsetStoreRelay(task_host.calls, ("c", 0))
    results: dict[str, Any] = {}
    waiting = threading.Thread(target=lambda: results.update(error=_error(relay.items)))
    waiting.start()
    worker.receive(p.OffsetCall)
    worker.conn.close()
    waiting.join(10)
    serving.join(10)
    assert "worker process is gone" in results["error"]
    assert not serving.is_alive()


def test_exit_ends_the_process_and_unknown_messages_are_ignored(
    host: tuple[TaskHost, Worker, threading.Thread],
) -> None:
    _, worker, serving = host
    worker.send(("start", ("c", 0)))  # an old-style tuple: logged, ignored
    worker.send(p.Exit())
    serving.join(10)
    assert not serving.is_alive()


def _error(call: Any) -> str:
    try:
        call()
    except RuntimeError as exc:
        return str(exc)
    return "no error"
