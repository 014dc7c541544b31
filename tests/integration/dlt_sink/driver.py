"""Driving the dlt sink's task in this process, through the plugin API, as the worker does."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import Future
from typing import Any

from runtime.api import ErrantRecordReporter, SinkRecord, SinkTaskContext, TopicPartition
from runtime.clock import SYSTEM_CLOCK, Clock
from runtime.connectors.dlt import DltSinkConnector, DltSinkTask


class Reporter(ErrantRecordReporter):
    """errors.tolerance=all without a queue: remembers what was reported."""

    def __init__(self) -> None:
        self.reported: list[tuple[SinkRecord, BaseException]] = []

    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        self.reported.append((record, error))
        done: Future[None] = Future()
        done.set_result(None)
        return done


class Context(SinkTaskContext):
    def __init__(self, config: dict[str, str], reporter: ErrantRecordReporter | None) -> None:
        self._config = config
        self._reporter = reporter
        self.seeks: dict[TopicPartition, int] = {}
        self.timeouts: list[int] = []

    def configs(self) -> dict[str, str]:
        return self._config

    def offsets(self, offsets: dict[TopicPartition, int]) -> None:
        self.seeks.update(offsets)

    def timeout(self, timeout_ms: int) -> None:
        self.timeouts.append(timeout_ms)

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        return self._reporter


class SinkDriver:
    """A connector config, and tasks of it started one after the other (each a new task incarnation)."""

    def __init__(self, name: str, topic: str, destination: dict[str, str], **extra: str) -> None:
        self.topic = topic
        self.clock: Clock = SYSTEM_CLOCK  # the clock of the tasks started from then on
        connector = DltSinkConnector()
        self.props = {"name": name, "topics": topic, **destination, **extra}
        connector.start(self.props)
        self.connector = connector
        self.task_props = connector.task_configs(1)[0]
        self.reporter = Reporter()
        self.task: DltSinkTask | None = None
        self.context: Context | None = None

    def start(self, partitions: int = 1) -> dict[TopicPartition, int]:
        """A new task, assigned the topic's partitions; returns where it asked the consumer to start."""
        self.stop()
        self.task, self.context = self.new_task(range(partitions))
        return dict(self.context.seeks)

    def new_task(self, partitions: Iterable[int]) -> tuple[DltSinkTask, Context]:
        """Another started task of this connector, assigned `partitions` (beside any other task: a zombie)."""
        context = Context(self.task_props, self.reporter)
        task = DltSinkTask(self.clock)
        task.initialize(context)
        task.start(self.task_props)
        task.open([TopicPartition(self.topic, p) for p in partitions])
        return task, context

    def load(self, records: list[SinkRecord], task: DltSinkTask | None = None) -> dict[TopicPartition, int]:
        """put() then an offset commit; returns the offsets the task reports as safe to commit."""
        task = task or self.task
        assert task is not None
        task.put(records)
        current: dict[TopicPartition, int] = {}
        for r in records:
            tp = TopicPartition(r.topic, r.kafka_partition)
            current[tp] = max(current.get(tp, 0), r.kafka_offset + 1)
        return task.pre_commit(current)

    def stop(self) -> None:
        if self.task is not None:
            self.task.stop()
            self.task = None

    def alter(self, offsets: dict[int, int | None]) -> bool:
        return self.connector.alter_offsets(self.props, {TopicPartition(self.topic, p): o for p, o in offsets.items()})


def records(
    topic: str,
    values: list[Any],
    schema: Any = None,
    start: int = 0,
    keys: list[Any] | None = None,
    key_schema: Any = None,
    partition: int = 0,
) -> list[SinkRecord]:
    return [
        SinkRecord(topic, partition, keys[i] if keys else None, v, start + i, key_schema, schema)
        for i, v in enumerate(values)
    ]
