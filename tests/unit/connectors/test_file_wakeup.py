"""A stop or pause reaches a FileStreamSource task that is waiting for new lines (task_runner's WAKEUP_HOOK)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from runtime.api.task import OffsetStorageReader, SourceTask, SourceTaskContext, Task
from runtime.connectors import file as filemod
from runtime.connectors.file import FileStreamSourceTask
from runtime.storage.base import StatusStore
from runtime.storage.states import TargetState
from runtime.worker.task_runner import TaskRunner


class NoOffsets(OffsetStorageReader):
    def offsets(self, partitions):
        return [(p, None) for p in partitions]


class Context(SourceTaskContext):
    def __init__(self, config: dict[str, str]) -> None:
        self._config = config

    def configs(self) -> dict[str, str]:
        return dict(self._config)

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return NoOffsets()


class PollingRunner(TaskRunner):
    """The task thread of a source runner without the producer: poll until stopped, keep what comes."""

    def __init__(self, props: dict[str, str]) -> None:
        super().__init__("fs", 0, FileStreamSourceTask, props, props, TargetState.STARTED, StatusStore(), "w1")
        self.records: list = []
        self.stopped_on: list[str] = []
        self.pauses_seen = threading.Event()
        self._read = threading.Condition()  # notified whenever records arrive

    def initialize(self, task: Task) -> None:
        assert isinstance(task, SourceTask)
        task.initialize(Context(self.config))

    def execute(self) -> None:
        assert isinstance(self.task, SourceTask)
        while not self.stopping:
            if self.paused:
                self.pauses_seen.set()
                self.wait_while_paused()
                continue
            records = self.task.poll()
            if records:
                with self._read:
                    self.records.extend(records)
                    self._read.notify_all()
                self.task.commit()  # as the runtime does once their offsets are stored

    def stop_task(self) -> None:
        self.stopped_on.append(threading.current_thread().name)
        super().stop_task()

    def lines_read(self, count: int) -> list[str]:
        """The values read, once there are `count` of them (or after 30 s)."""
        with self._read:
            self._read.wait_for(lambda: len(self.records) >= count, timeout=30)
            return [r.value for r in self.records]


def tailing_runner(tmp_path: Path, text: str) -> PollingRunner:
    path = tmp_path / "in.txt"
    path.write_text(text)
    runner = PollingRunner({"name": "fs", "file": str(path), "topic": "lines"})
    runner.start()
    return runner


def test_stop_request_ends_an_idle_wait_and_stop_still_runs_on_the_task_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # an idle wait far longer than the stop allows: only the wake-up can end it in time
    monkeypatch.setattr(filemod, "WATCHED_WAIT_S", 3600)
    runner = tailing_runner(tmp_path, "one\ntwo\n")
    assert runner.lines_read(2) == ["one", "two"]

    runner.stop()  # the task is now waiting for new lines
    assert runner.await_stop(30), "the stop request did not end the task's wait for new lines"
    assert runner.stopped_on == ["task-fs-0"]  # Task.stop() on the task's own thread, as in the reference
    assert [r.value for r in runner.records] == ["one", "two"]


def test_pause_and_resume_end_an_idle_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # the loop sees a new target state only once poll() returns: the wake-up makes that now, not after the wait
    monkeypatch.setattr(filemod, "WATCHED_WAIT_S", 3600)
    runner = tailing_runner(tmp_path, "one\n")
    assert runner.lines_read(1) == ["one"]

    runner.transition_to(TargetState.PAUSED)  # the task is now waiting for new lines
    assert runner.pauses_seen.wait(30), "the pause did not end the task's wait for new lines"
    runner.transition_to(TargetState.STARTED)
    with (tmp_path / "in.txt").open("a") as f:
        f.write("two\n")
    # resumed: the task waits for its file again, and the growth watcher wakes it for the new line
    assert runner.lines_read(2) == ["one", "two"]
    runner.stop()
    assert runner.await_stop(30)
