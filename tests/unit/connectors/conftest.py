"""Small real contexts for driving connectors and tasks directly through the plugin API."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from runtime.api import (
    ConnectorContext,
    OffsetStorageReader,
    SinkTask,
    SinkTaskContext,
    SourceTask,
    SourceTaskContext,
    TopicPartition,
)


def _key(partition: dict[str, Any]) -> str:
    return json.dumps(partition, sort_keys=True)


class MemoryOffsetReader(OffsetStorageReader):
    """Committed source offsets held in a dict, keyed like the runtime keys them (by partition content)."""

    def __init__(self) -> None:
        self.committed: dict[str, dict[str, Any] | None] = {}
        self.reads: list[dict[str, Any]] = []

    def commit(self, partition: dict[str, Any], offset: dict[str, Any] | None) -> None:
        self.committed[_key(partition)] = offset

    def offsets(self, partitions: Iterable[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        result = []
        for partition in partitions:
            self.reads.append(partition)
            result.append((partition, self.committed.get(_key(partition))))
        return result


class MemorySourceTaskContext(SourceTaskContext):
    def __init__(self, reader: MemoryOffsetReader, config: dict[str, str]) -> None:
        self._reader = reader
        self._config = config

    def configs(self) -> dict[str, str]:
        return self._config

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader


class RecordingSinkTaskContext(SinkTaskContext):
    """Records every call a sink task makes to its context."""

    def __init__(self, config: dict[str, str], assignment: set[TopicPartition] | None = None) -> None:
        self._config = config
        self._assignment = assignment or set()
        self.calls: list[tuple[str, Any]] = []

    def configs(self) -> dict[str, str]:
        return self._config

    def offsets(self, offsets: dict[TopicPartition, int]) -> None:
        self.calls.append(("offsets", dict(offsets)))

    def timeout(self, timeout_ms: int) -> None:
        self.calls.append(("timeout", timeout_ms))

    def assignment(self) -> set[TopicPartition]:
        return set(self._assignment)

    def pause(self, *partitions: TopicPartition) -> None:
        self.calls.append(("pause", partitions))

    def resume(self, *partitions: TopicPartition) -> None:
        self.calls.append(("resume", partitions))

    def request_commit(self) -> None:
        self.calls.append(("request_commit", None))


class RecordingConnectorContext(ConnectorContext):
    def __init__(self) -> None:
        self.reconfigurations = 0
        self.errors: list[BaseException] = []

    def request_task_reconfiguration(self) -> None:
        self.reconfigurations += 1

    def raise_error(self, error: BaseException) -> None:
        self.errors.append(error)


@pytest.fixture
def offsets() -> MemoryOffsetReader:
    return MemoryOffsetReader()


@pytest.fixture
def start_source(offsets: MemoryOffsetReader) -> Callable[..., SourceTask]:
    """Start a source task (a class, or anything that makes one: `lambda: Task(clock)`) with `props`, reading
    committed offsets from the `offsets` fixture."""
    started: list[SourceTask] = []

    def start(task_class: Callable[[], SourceTask], props: dict[str, str]) -> SourceTask:
        task = task_class()
        task.initialize(MemorySourceTaskContext(offsets, props))
        task.start(props)
        started.append(task)
        return task

    yield start
    for task in started:
        try:
            task.stop()
        except Exception:  # noqa: BLE001 - a fault-knob test may have made stop() raise already
            pass


@pytest.fixture
def start_sink() -> Callable[..., SinkTask]:
    started: list[SinkTask] = []

    def start(task_class: Callable[[], SinkTask], props: dict[str, str]) -> SinkTask:
        task = task_class()
        task.initialize(RecordingSinkTaskContext(props))
        task.start(props)
        started.append(task)
        return task

    yield start
    for task in started:
        try:
            task.stop()
        except Exception:  # noqa: BLE001 - a fault-knob test may have made stop() raise already
            pass


def _drain(task: SourceTask, max_polls: int = 10_000) -> list:
    records: list = []
    for _ in range(max_polls):
        batch = task.poll()
        if not batch:
            return records
        records.extend(batch)
    raise AssertionError("source task never ran dry")


@pytest.fixture
def drain() -> Callable[..., list]:
    """Poll a source task until a poll returns nothing, collecting every record."""
    return _drain
