"""Exactly-once source tasks (KIP-618): what the worker gives such a task, and where its transactions end.

A distributed worker with `exactly.once.source.support=enabled` runs each source task with a transactional
producer whose id is `${group.id}-${connector}-${task}`: one transaction holds records the task polled and
the offsets of those records, in the connector's offsets topic (its `offsets.storage.topic`, else the
worker's), and in the worker's offsets topic as well when the connector has its own on the same cluster (on
another cluster the worker's copy is written after the commit, best effort, as the reference writes it).

The seam with the herder: the herder decides that a task runs exactly once and passes its transactional id
to `Worker.start_task`; holding the start until the earlier generation is fenced is the herder's job. The
task thread then runs `still_current` (the herder's check that the task may still start; raise to refuse),
`init_transactions()` (which fences any earlier producer with the same id and aborts what it left open) and
`still_current` again, before the task's offsets are read and the task is started, as the reference's
ExactlyOnceWorkerSourceTask runs its pre- and post-producer checks. A started task that fails because its
producer was fenced (or a commit's outcome is unknown) calls `on_fenced`: the herder decides whether that was
a zombie's doing and restarts the task (runtime/herder/local_work.py).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from ..api.records import SourceRecord
from ..api.transactions import TransactionBoundary, TransactionContext
from ..worker_config import WorkerConfig
from . import clients
from .offsets import connector_offsets_topic

log = logging.getLogger(__name__)

TRANSACTION_BOUNDARY = "transaction.boundary"
TRANSACTION_BOUNDARY_INTERVAL = "transaction.boundary.interval.ms"


def task_transactional_id(group_id: str, connector: str, task: int) -> str:
    """The transactional id of a source task's producer (the reference's Worker.taskTransactionalId)."""
    return f"{group_id}-{connector}-{task}"


@dataclass(frozen=True)
class ExactlyOnceStart:
    """What the herder passes to `Worker.start_task` for a task it runs exactly once, once the task's earlier
    generation is fenced."""

    transactional_id: str  # task_transactional_id(group.id, connector, task)
    # a check on the task thread, just before the producer fences earlier ones and again just after: raise to
    # refuse the start (the reference's verifyTaskGenerationAndOwnership: the task's generation is still
    # current and the task still this worker's)
    still_current: Callable[[], None] | None = None
    # called on the task thread when the task failed, after it had started, because its producer was fenced
    # or a commit's outcome is unknown (see ExactlyOnceSourceTaskRunner): the herder may restart it
    on_fenced: Callable[[], None] | None = None


@dataclass(frozen=True)
class ExactlyOnceTask:
    """How one source task runs exactly once."""

    transactional_id: str
    boundary: TransactionBoundary
    interval_s: float  # for `interval`: transaction.boundary.interval.ms, else offset.flush.interval.ms
    offsets_topics: tuple[str, ...]  # where each transaction writes the offsets: the connector's topic first
    worker_topic_elsewhere: str | None = None  # the worker's offsets topic, when on another cluster
    still_current: Callable[[], None] | None = None
    on_fenced: Callable[[], None] | None = None

    @classmethod
    def for_task(
        cls,
        worker: WorkerConfig,
        connector_config: dict[str, str],
        start: ExactlyOnceStart,
    ) -> ExactlyOnceTask:
        boundary = TransactionBoundary.from_property(connector_config.get(TRANSACTION_BOUNDARY) or "poll")
        raw_interval = (connector_config.get(TRANSACTION_BOUNDARY_INTERVAL) or "").strip()
        interval_ms = int(raw_interval) if raw_interval else worker.get_int("offset.flush.interval.ms")
        worker_topic = str(worker.get("offset.storage.topic") or "")
        own = connector_offsets_topic(connector_config)
        producer_servers = clients.producer_config(worker, connector_config).get("bootstrap.servers")
        same_cluster = _servers(producer_servers) == _servers(worker.bootstrap_servers)
        if own is None or (own == worker_topic and same_cluster):
            topics: tuple[str, ...] = (worker_topic,)
            elsewhere = None
        elif same_cluster:
            topics, elsewhere = (own, worker_topic), None
        else:
            topics, elsewhere = (own,), worker_topic
        return cls(
            start.transactional_id,
            boundary,
            interval_ms / 1000,
            topics,
            elsewhere,
            start.still_current,
            start.on_fenced,
        )


def _servers(value: str | None) -> set[str]:
    return {s.strip() for s in (value or "").split(",") if s.strip()}


class WorkerTransactionContext(TransactionContext):
    """The TransactionContext tasks of `transaction.boundary=connector` get; thread-safe. Records are named by
    identity (see TransactionContext)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # id -> the record itself: holding it keeps its id from naming another record later
        self._commit_records: dict[int, SourceRecord] = {}
        self._abort_records: dict[int, SourceRecord] = {}
        self._commit_batch = False
        self._abort_batch = False

    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        with self._lock:
            if record is None:
                self._commit_batch = True
            else:
                self._commit_records[id(record)] = record

    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        with self._lock:
            if record is None:
                self._abort_batch = True
            else:
                self._abort_records[id(record)] = record

    @property
    def names_records(self) -> bool:
        """Whether some record is named (the runtime then checks each record of a batch)."""
        return bool(self._commit_records or self._abort_records)

    def batch_request(self) -> Decision | None:
        """The batch-level request (reset by reading it)."""
        with self._lock:
            if self._commit_batch and self._abort_batch:
                raise IllegalTransactionRequest("Connector requested both commit and abort of same transaction")
            decision = Decision.ABORT if self._abort_batch else Decision.COMMIT if self._commit_batch else None
            self._commit_batch = self._abort_batch = False
            return decision

    def record_request(self, record: SourceRecord) -> Decision | None:
        """The request naming `record` (reset by reading it)."""
        key = id(record)
        with self._lock:
            commit = self._commit_records.get(key) is record
            abort = self._abort_records.get(key) is record
            if commit and abort:
                raise IllegalTransactionRequest(
                    "Connector requested both commit and abort of same record against topic/partition "
                    f"{record.topic}/{record.kafka_partition}"
                )
            if commit:
                del self._commit_records[key]
            if abort:
                del self._abort_records[key]
            return Decision.ABORT if abort else Decision.COMMIT if commit else None


class IllegalTransactionRequest(RuntimeError):
    """A task asked for both the commit and the abort of one transaction: the task fails (Java's
    IllegalStateException), since either choice could lose or duplicate data."""


class Decision(Enum):
    COMMIT = "commit"
    ABORT = "abort"  # abort the records, then commit their offsets


class TransactionBoundaries:
    """When a transaction ends, per `transaction.boundary` (the reference's TransactionBoundaryManager):
    `poll` after every batch; `interval` after the first batch once the interval has passed since the last
    commit; `connector` when the task asks (a record's request first). At a stop or a pause `poll` and
    `interval` commit what is open; `connector` only what the task asked for."""

    def __init__(
        self,
        boundary: TransactionBoundary,
        interval_s: float,
        context: WorkerTransactionContext | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if boundary is TransactionBoundary.CONNECTOR and context is None:
            raise ValueError("Transaction context must be provided when using connector-defined transaction boundaries")
        self.boundary = boundary
        self.interval_s = interval_s
        self.context = context
        self._clock = clock
        self._last_commit = clock()

    def start(self) -> None:
        """A new cycle (the loop starts, or resumes after a pause)."""
        self._last_commit = self._clock()

    def after_record(self, record: SourceRecord) -> Decision | None:
        if self.context is None:
            return None
        return self.context.record_request(record)

    def after_batch(self) -> Decision | None:
        if self.boundary is TransactionBoundary.POLL:
            return Decision.COMMIT
        if self.boundary is TransactionBoundary.INTERVAL:
            now = self._clock()
            if now >= self._last_commit + self.interval_s:
                self._last_commit = now
                return Decision.COMMIT
            return None
        assert self.context is not None
        return self.context.batch_request()

    def at_end(self) -> Decision | None:
        if self.boundary is TransactionBoundary.CONNECTOR:
            return self.after_batch()
        return Decision.COMMIT


__all__ = [
    "Decision",
    "ExactlyOnceStart",
    "ExactlyOnceTask",
    "IllegalTransactionRequest",
    "TransactionBoundaries",
    "WorkerTransactionContext",
    "task_transactional_id",
]
