"""Tasks: the units of work a connector's `task_configs` describe, each run in its own thread."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from typing import Any

from .records import RecordMetadata, SinkRecord, SourceRecord, SourceRecordBatch, TopicPartition
from .transactions import TransactionContext


class OffsetStorageReader:
    """Reads the committed offsets of source partitions (for this connector only)."""

    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        result = self.offsets([partition])
        return result[0][1] if result else None

    def offsets(self, partitions: Iterable[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """Each partition paired with its committed offset (None when there is none)."""
        raise NotImplementedError


class TaskContext:
    def configs(self) -> dict[str, str]:
        """The task's current config."""
        raise NotImplementedError


class SourceTaskContext(TaskContext):
    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        raise NotImplementedError

    def transaction_context(self) -> TransactionContext | None:
        """Where the task defines its transaction boundaries: only for a connector with
        `transaction.boundary=connector` on a worker running it exactly once (KIP-618); None otherwise."""
        return None


class SinkTaskContext(TaskContext):
    """Lets a sink task steer its consumer."""

    def offset(self, partition: TopicPartition, offset: int) -> None:
        """Rewind or skip: the next record of `partition` fetched will be at `offset`."""
        self.offsets({partition: offset})

    def offsets(self, offsets: dict[TopicPartition, int]) -> None:
        raise NotImplementedError

    def timeout(self, timeout_ms: int) -> None:
        """After a RetriableError from `put`, wait this long before redelivering the batch."""
        raise NotImplementedError

    def assignment(self) -> set[TopicPartition]:
        raise NotImplementedError

    def pause(self, *partitions: TopicPartition) -> None:
        raise NotImplementedError

    def resume(self, *partitions: TopicPartition) -> None:
        raise NotImplementedError

    def request_commit(self) -> None:
        """Commit offsets as soon as possible rather than at the next interval."""
        raise NotImplementedError

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        """KIP-610: where `put` sends a record it cannot process (the connector's `errors.*` handling:
        dead letter queue, error log, tolerance). None on a runtime without one."""
        return None


class ErrantRecordReporter(ABC):
    """KIP-610's reporter, from `SinkTaskContext.errant_record_reporter()`."""

    @abstractmethod
    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        """Report `record` as failed with `error`. Under `errors.tolerance=none` this fails the task (raises).
        The returned future completes once the report is durable; offsets are committed only after that."""


class Task(ABC):
    def version(self) -> str:
        from ..version import __version__

        return __version__

    @abstractmethod
    def start(self, props: dict[str, str]) -> None:
        """Start with the task config."""

    @abstractmethod
    def stop(self) -> None:
        """Signal the task to stop; may be called from another thread."""


class SourceTask(Task):
    context: SourceTaskContext

    def initialize(self, context: SourceTaskContext) -> None:
        self.context = context

    @abstractmethod
    def poll(self) -> list[SourceRecord] | SourceRecordBatch | None:
        """Return new records (a batch), or None/[] when there is nothing now. Should not block long.
        A SourceRecordBatch (records of one source partition with one topic, key and schemas) is the
        cheaper form for a task that produces many records."""

    def commit(self) -> None:
        """Called after offsets up to the last acknowledged records were committed."""

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        """Called for each record `poll()` returned once Kafka has acknowledged it, with where it was written;
        with None for a record that was never written (dropped by a transform, skipped under
        `errors.tolerance=all`, or in a transaction the task aborted). `record` is the record as `poll()`
        returned it, before transforms. Called on the task's thread; when the connector runs exactly once,
        only after the transaction holding the record committed. A task that does not override it costs
        the runtime nothing per record."""


class SinkTask(Task):
    context: SinkTaskContext

    def initialize(self, context: SinkTaskContext) -> None:
        self.context = context

    @abstractmethod
    def put(self, records: Sequence[SinkRecord]) -> None:
        """Write (or buffer) a batch; raise RetriableError to have it redelivered. Without transforms the
        batch is a SinkRecordBatch: a sequence of SinkRecords whose keys and values can also be read as
        columns."""

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        """Make everything `put` so far durable. Offsets are the next offsets to consume."""

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Return the offsets safe to commit; the default flushes and returns them all."""
        self.flush(current_offsets)
        return current_offsets

    def open(self, partitions: list[TopicPartition]) -> None:
        """Partitions newly assigned to this task."""

    def close(self, partitions: list[TopicPartition]) -> None:
        """Partitions taken away from this task (after a final pre_commit)."""
