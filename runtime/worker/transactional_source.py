"""An exactly-once source task (KIP-618): its records and their offsets in producer transactions.

As the reference's ExactlyOnceWorkerSourceTask: the task's producer is transactional (`transactional.id`
from the worker, see `exactly_once`); `init_transactions()` runs on the task thread before the task's offsets
are read and the task starts (fencing whatever earlier producer had the id); records go out inside an open
transaction; at each boundary the offsets of the records polled since the last commit are written in the
same transaction (to the connector's offsets topic, and the worker's when the connector has its own) and
the transaction commits. Nothing is ever written outside a transaction: a failed task's open transaction is
aborted, so its records and offsets never become visible, and the records are polled again after a restart.

Commits are pipelined, beyond the reference (which commits on the task thread, then polls again): at a
boundary the transaction's commit runs on the task's committer thread while the task thread polls and
converts the next batch, whose records go to the producer only once that commit has succeeded
(`ready_to_produce`). The broker's round trips of a commit (the transaction's partitions registered, its
records acknowledged, the transaction ended) then overlap the task's own work instead of adding to it.
Transactions stay strictly ordered and each holds what it holds in the reference, so exactly-once is
unchanged. The task's `commit()` is called once the commit is known, after the next `poll()` has returned
(the committer thread ends an idle poll's wait through the task's wake-up hook). A pause, a stop, an abort
and an explicit commit wait for the commit in flight. Tasks that override `commit_record` commit on the task
thread, as the reference does: a record dropped while converting the next batch would otherwise be handed
back with the previous transaction's.

A task fenced by a newer instance with the same transactional id (PRODUCER_FENCED / _FENCED) fails with a
trace saying so and writes nothing more; INVALID_PRODUCER_EPOCH (the broker aborted the transaction after
`transaction.timeout.ms`) fails it with the reference's advice. A task that fails fenced, or with a commit
whose outcome is unknown, after it started tells the herder (`ExactlyOnceTask.on_fenced`), which restarts it
when the fence was a zombie's doing.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from ..api.errors import ConnectError
from ..api.records import RecordMetadata, SourceRecord, SourceRecordBatch
from ..api.task import OffsetStorageReader, SourceTaskContext
from ..api.transactions import TransactionBoundary
from ..storage.connector_offset_store import ConnectorOffsetStore
from ..storage.offset_codec import encode_value
from .clients import create_client, exactly_once_producer_config
from .exactly_once import (
    Decision,
    ExactlyOnceTask,
    TransactionBoundaries,
    WorkerTransactionContext,
)
from .source_runner import SourceTaskRunner, WorkerSourceTaskContext

log = logging.getLogger(__name__)

FENCED = (KafkaError.PRODUCER_FENCED, KafkaError._FENCED)
DEFAULT_TRANSACTION_TIMEOUT_MS = 60000  # librdkafka's transaction.timeout.ms


class TaskFencedError(ConnectError):
    """A newer producer with this task's transactional id exists: another instance of the task runs."""


class CommitOutcomeUnknownError(ConnectError):
    """A commit got no answer within transaction.timeout.ms: whether the transaction committed is unknown.
    Tansu answers the EndTxn of a fenced producer by dropping the connection, so there a fence shows this way."""


@dataclass(frozen=True)
class _CommitInFlight:
    """A transaction whose commit runs on the committer thread."""

    began: float  # the clock when the commit started (offset-commit-time)
    offsets: dict[bytes, Any]  # the offsets written in it: removed from the pending ones once committed
    size: int  # records in it (transaction-size)
    finished: Future[float]  # the clock when commit_transaction returned


class _Committer:
    """A daemon thread running a task's commits one after another. Not a ThreadPoolExecutor: the interpreter
    joins those threads at exit, so a commit waiting out transaction.timeout.ms would hold up the worker's
    exit, which the task threads (daemons) never do."""

    def __init__(self, name: str) -> None:
        self._work: queue.SimpleQueue[tuple[Callable[[], float], Future[float]] | None] = queue.SimpleQueue()
        threading.Thread(target=self._run, name=name, daemon=True).start()

    def submit(self, commit: Callable[[], float]) -> Future[float]:
        finished: Future[float] = Future()
        self._work.put((commit, finished))
        return finished

    def close(self) -> None:
        self._work.put(None)  # the thread ends after the commit in hand, if any

    def _run(self) -> None:
        while (item := self._work.get()) is not None:
            commit, finished = item
            try:
                finished.set_result(commit())
            except BaseException as exc:  # noqa: BLE001 - handed to the task thread, which raises it
                finished.set_exception(exc)


class ExactlyOnceSourceTaskRunner(SourceTaskRunner):
    def __init__(
        self,
        *args: Any,
        exactly_once: ExactlyOnceTask,
        clock: Callable[[], float] = time.monotonic,
        pipeline_commits: bool = True,
        **kwargs: Any,
    ) -> None:
        """`pipeline_commits` False commits on the task thread, in the reference's order (the benchmark's
        comparison, bench/exactly_once_pipelining.py)."""
        super().__init__(*args, **kwargs)
        self.exactly_once = exactly_once
        self._clock = clock
        self._pipeline_commits = pipeline_commits
        self.transaction_context = (
            WorkerTransactionContext() if exactly_once.boundary is TransactionBoundary.CONNECTOR else None
        )
        self.boundaries = TransactionBoundaries(
            exactly_once.boundary, exactly_once.interval_s, self.transaction_context, clock
        )
        self._transaction_open = False
        self._transaction_size = 0  # records dispatched into the open transaction
        self._transaction_error: KafkaError | None = None  # the first delivery failure of the open transaction
        self._committable: list[tuple[SourceRecord, RecordMetadata | None]] = []  # for commit_record
        self._offset_partitions: dict[str, int] = {}  # offsets topic -> its partition count
        self._commit_timeout_s = DEFAULT_TRANSACTION_TIMEOUT_MS / 1000
        self._in_flight: _CommitInFlight | None = None
        self._committer: _Committer | None = None  # started at the first pipelined commit
        self._fenced = False
        self._looping = False  # the task started and its loop runs: a fence from now on may be a zombie's
        self.counters.transactional = True

    # ---- start ----------------------------------------------------------------------------------

    def prepare_producer(self, config: dict[str, Any]) -> dict[str, Any]:
        """Create the transactional producer and fence earlier ones: before the task's offsets are read."""
        config = exactly_once_producer_config(config, self.exactly_once.transactional_id)
        self._commit_timeout_s = int(config.get("transaction.timeout.ms", DEFAULT_TRANSACTION_TIMEOUT_MS)) / 1000
        check = self.exactly_once.still_current
        if check is not None:
            check()
        if self.stopping:
            # initializing now could fence a newer generation that already started
            log.info("Task %s stopped before its transactional producer was initialized", self.id)
            return config
        producer = create_client(Producer, config, f"transactional producer of {self.id}")
        deadline = self._clock() + self._commit_timeout_s
        while True:
            try:
                producer.init_transactions(max(1.0, deadline - self._clock()))
                break
            except KafkaException as exc:
                err = exc.args[0]
                if err.retriable() and not err.fatal() and self._clock() < deadline and not self.stopping:
                    continue
                raise self._failure("Failed to initialize the transactional producer of task", exc) from exc
        self.producer = producer
        log.info("Task %s: transactional producer %s initialized", self.id, self.exactly_once.transactional_id)
        if check is not None:
            # again (the reference's post-producer check): a worker that lost the task while its producer
            # initialized (frozen past its session, say) must not run it. Its init may have fenced the newer
            # instance elsewhere, which then fails on its next commit; this one must not take its place.
            try:
                check()
            except BaseException:
                self.producer = None
                producer.close()  # nothing was sent through it: no transaction is open
                raise
        return config

    def task_context(self, reader: OffsetStorageReader) -> SourceTaskContext:
        return WorkerSourceTaskContext(self.config, reader, self.transaction_context)

    def _open_producer(self) -> Producer:
        if self.producer is None:
            raise ConnectError(f"Task {self.id} has no transactional producer (it was stopped before it started)")
        return self.producer

    # ---- the loop -------------------------------------------------------------------------------

    def enter_loop(self) -> None:
        self._looping = True
        self.boundaries.start()

    def on_pause(self) -> None:
        # a transaction left open would hang readers, or have the producer fenced by the time the task resumes
        self._end_transaction(self.boundaries.at_end())
        self._settle()

    def dispatch(self, records: list[Any] | SourceRecordBatch | None) -> None:
        if self._cancelled:
            return  # abandoned (see on_cancel): a successor may be taking over the transactional id
        if self._in_flight is not None and self._in_flight.finished.done():
            self._settle()
        if records:
            context = self.transaction_context
            if context is not None and context.names_records:
                self._dispatch_by_record(records)
            else:
                self._send_in_transaction(records)
        self._end_transaction(self.boundaries.after_batch())
        if not records:
            self._settle()  # an idle task's commits are not left in flight: its commit() is called now

    def _dispatch_by_record(self, records: Any) -> None:
        """Split the batch after each record the task named in a commit or abort request."""
        start = 0
        for i, record in enumerate(records):
            decision = self.boundaries.after_record(record)
            if decision is not None:
                self._send_in_transaction(records[start : i + 1])
                self._end_transaction(decision)
                start = i + 1
        if start < len(records):
            self._send_in_transaction(records[start:])

    def _send_in_transaction(self, records: Any) -> None:
        written = self.counters.source_records_written
        self.send(records)  # its transaction begins at ready_to_produce, once its records are converted
        self._transaction_size += self.counters.source_records_written - written

    def ready_to_produce(self) -> None:
        if self._in_flight is not None:
            self._settle()
        if not self._transaction_open:
            self._begin()

    def _begin(self) -> None:
        if not self._transaction_open:
            try:
                self._open_producer().begin_transaction()
            except KafkaException as exc:
                raise self._failure("Failed to begin a transaction for task", exc) from exc
            self._transaction_open = True
            self._transaction_error = None

    def _topic_seen(self, topic: str) -> None:
        if topic == self.exactly_once.offsets_topics[0]:
            # its offsets could never be read: reading them waits for this task's own open transaction
            raise ConnectError(
                "Source tasks may not produce to their own offsets topics when exactly-once support is enabled"
            )
        super()._topic_seen(topic)

    # ---- delivery -------------------------------------------------------------------------------

    def _on_delivery_error(self, err: KafkaError | None, msg: Any) -> None:
        # no tolerance inside a transaction: a failed record fails the commit (commit_transaction reports it)
        if err is not None and err.code() not in (KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT):
            if self._transaction_error is None:
                self._transaction_error = err

    def _produce_failed(self, topic: str | None, err: KafkaError) -> None:
        raise self._failure(f"Unrecoverable exception trying to send to topic {topic} for task", KafkaException(err))

    def record_written(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        self._committable.append((record, metadata))  # handed to commit_record once the transaction commits

    # ---- boundaries -----------------------------------------------------------------------------

    def commit_offsets(self) -> bool:
        """Commit the open transaction with the offsets of what it holds."""
        self._end_transaction(Decision.COMMIT)
        self._settle()
        return True

    def _end_transaction(self, decision: Decision | None) -> None:
        if decision is None or self._cancelled:
            return
        if decision is Decision.ABORT:
            self._abort("as requested by the task")
        self._commit()

    def _abort(self, why: str) -> None:
        self._settle()
        if not self._transaction_open:
            log.warning(
                "Task %s: ignoring request by task to abort transaction as the current transaction is empty", self.id
            )
            return
        log.info("Task %s: aborting transaction %s", self.id, why)
        producer = self._open_producer()
        try:
            producer.abort_transaction(self._commit_timeout_s)
        except KafkaException as exc:
            raise self._failure("Failed to abort the transaction of task", exc) from exc
        producer.poll(0)  # deliver what the abort decided before the records are handed back
        self._transaction_open = False
        self._transaction_size = 0
        self._committable = [(record, None) for record, _ in self._committable]  # never written

    def _commit(self) -> None:
        """Write the offsets of what the open transaction holds into it and start its commit: on the committer
        thread (see the module's docstring), or here for tasks that override commit_record."""
        self._settle()
        began = self._clock()
        pending = dict(self._pending)
        if not self._transaction_open and not pending:
            self._committed(began, began)  # nothing on the framework's side: the task is told all the same
            return
        self._begin()
        producer = self._open_producer()
        try:
            for key, offset in pending.items():
                value = encode_value(offset)
                for topic in self.exactly_once.offsets_topics:
                    producer.produce(topic, value, key, self._offsets_partition(producer, topic, key))
        except KafkaException as exc:
            self.counters.offset_commit_failures += 1
            raise self._failure("Failed to flush offsets and/or records for task", exc, committing=True) from exc
        finished: Future[float]
        waited = self._commit_records or not self._pipeline_commits
        if waited:
            finished = Future()
            try:
                finished.set_result(self._commit_transaction(producer))
            except KafkaException as exc:
                finished.set_exception(exc)
        else:
            if self._committer is None:
                self._committer = _Committer(f"task-{self.id}-commit")
            started = threading.Event()
            finished = self._committer.submit(lambda: self._commit_in_background(producer, started))
            # until the committer thread is inside librdkafka (which runs without the GIL): else it would wait
            # for the GIL while this thread converts the next batch, up to sys.getswitchinterval() (5 ms), and
            # begin the commit only when the task thread waits for it
            started.wait()
        self._in_flight = _CommitInFlight(began, pending, self._transaction_size, finished)
        self._transaction_size = 0
        if waited:
            self._settle()

    def _settle(self) -> None:
        """Wait for the commit in flight, if any, and finish it: the task thread's side of a commit."""
        commit, self._in_flight = self._in_flight, None
        if commit is None:
            return
        producer = self._open_producer()
        try:
            finished = commit.finished.result()
            producer.poll(0)  # the last delivery reports: every record of the transaction is handed back below
        except KafkaException as exc:
            self.counters.offset_commit_failures += 1
            raise self._failure("Failed to flush offsets and/or records for task", exc, committing=True) from exc
        self._transaction_open = False
        for key, offset in commit.offsets.items():
            if self._pending.get(key) is offset:
                del self._pending[key]
        c = self.counters
        size = commit.size
        c.transaction_size_min = size if not c.transactions_committed else min(c.transaction_size_min, size)
        c.transaction_size_max = max(c.transaction_size_max, size)
        c.transaction_size_total += size
        c.transactions_committed += 1
        self._copy_to_worker_topic(commit.offsets)
        self._committed(commit.began, finished)

    def _offsets_partition(self, producer: Producer, topic: str, key: bytes) -> int:
        """The partition a Java worker writes `key` to (murmur2, as KafkaBasedLog's producer picks it)."""
        # kafka-python's murmur2, imported here: every task process imports this module, few run exactly once,
        # and kafka-python costs 0.25 s of CPU to import
        from kafka.partitioner.default import murmur2

        count = self._offset_partitions.get(topic)
        if count is None:  # looked up once the offset store has started (it creates a missing topic)
            metadata = producer.list_topics(topic, timeout=self._commit_timeout_s).topics.get(topic)
            if metadata is None or metadata.error is not None or not metadata.partitions:
                raise ConnectError(f"Task {self.id} cannot find its offsets topic {topic}")
            count = self._offset_partitions[topic] = len(metadata.partitions)
        return (murmur2(key) & 0x7FFFFFFF) % count

    def _commit_in_background(self, producer: Producer, started: threading.Event) -> float:
        started.set()
        try:
            return self._commit_transaction(producer)
        finally:
            self._wake_task()  # a task waiting in an idle poll returns, and its commit is settled at once

    def _commit_transaction(self, producer: Producer) -> float:
        """Commit the open transaction (flushing its records first); the clock when it committed."""
        deadline = self._clock() + self._commit_timeout_s
        while True:
            try:
                producer.commit_transaction(max(1.0, deadline - self._clock()))
                return self._clock()
            except KafkaException as exc:
                err = exc.args[0]
                retry = err.retriable() and not err.fatal() and not err.txn_requires_abort()
                if not retry or self._clock() >= deadline or self._cancelled:
                    raise
                log.info("Task %s: retrying the commit of its transaction after %s", self.id, err.str())

    def _committed(self, began: float, finished: float) -> None:
        took_ms = (finished - began) * 1000
        self.counters.offset_commits += 1
        self.counters.offset_commit_time_ms_total += took_ms
        log.debug("Task %s: finished commitOffsets successfully in %d ms", self.id, took_ms)
        committable, self._committable = self._committable, []
        for record, metadata in committable:
            self.commit_record(record, metadata)
        self.commit_task()

    def _copy_to_worker_topic(self, committed: dict[bytes, Any]) -> None:
        """The worker's offsets topic on another cluster: after the commit, best effort (as the reference's
        secondary write); tombstones are not copied."""
        store = self.offset_store
        if self.exactly_once.worker_topic_elsewhere is None or not isinstance(store, ConnectorOffsetStore):
            return
        regular = {k: encode_value(v) for k, v in committed.items() if v is not None}
        if regular and store.worker_store is not None:
            try:
                store.worker_store.set(regular)
            except Exception as exc:  # noqa: BLE001 - the connector's own topic is the source of truth
                log.warning("Task %s: failed to write offsets to the worker's offsets topic: %s", self.id, exc)

    def _failure(self, what: str, exc: KafkaException, committing: bool = False) -> ConnectError:
        err = exc.args[0] if exc.args and isinstance(exc.args[0], KafkaError) else None
        first = self._transaction_error
        codes = {e.code() for e in (err, first) if e is not None}
        if codes & set(FENCED):
            self._fenced = True
            return TaskFencedError(
                f"{what} {self.id}: its producer (transactional id {self.exactly_once.transactional_id}) was fenced "
                "out by a newer producer with the same transactional id, so a newer instance of this task is "
                "running; this instance stops without writing more"
            )
        if KafkaError.INVALID_PRODUCER_EPOCH in codes:
            return ConnectError(
                f"The task {self.id} was unable to finish writing records to Kafka before its producer transaction "
                "expired. It may be necessary to reconfigure this connector in order for it to run healthily with "
                "exactly-once support. Options for this include: tune the connector's producer configuration for "
                "higher throughput, increase the transaction timeout for the connector's producers, decrease the "
                "offset commit interval (if using interval-based transaction boundaries), or use the 'poll' "
                "transaction boundary (if the connector is not already configured to use it)."
            )
        if committing and KafkaError._TIMED_OUT in codes:
            return CommitOutcomeUnknownError(
                f"{what} {self.id}: its transaction's commit got no answer within transaction.timeout.ms "
                f"({self._commit_timeout_s * 1000:.0f} ms), so whether it committed is unknown"
            )
        return ConnectError(f"{what} {self.id}")

    def _fail(self, exc: BaseException) -> None:
        super()._fail(exc)
        tell = self.exactly_once.on_fenced
        if (
            tell is not None
            and self._looping
            and isinstance(exc, TaskFencedError | CommitOutcomeUnknownError)
            and not self.stopping
            and not self._cancelled
        ):
            tell()  # the herder decides whether this instance was fenced by a zombie, and restarts it then

    def on_cancel(self) -> None:
        """The task outlived its graceful stop: as the reference closes an abandoned task's producer at once,
        nothing it still holds is sent, and nothing it polls later (`dispatch`). Its successor may be
        initializing the same transactional id; a broker fences whatever this one sends meanwhile, and Tansu
        sometimes lets such a write in (see `committed_view`). The task's own thread may be inside the producer
        (a commit), so the producer is purged, which librdkafka allows from any thread, not closed."""
        super().on_cancel()
        producer = self.producer
        if producer is not None:
            try:
                producer.purge(in_queue=True, in_flight=True, blocking=False)
            except Exception as exc:  # noqa: BLE001 - best effort: the producer's epoch is fenced all the same
                log.debug("Task %s: purging its producer: %s", self.id, exc)

    # ---- close ----------------------------------------------------------------------------------

    def _close_producer(self) -> None:
        if self._producer_settings is None:
            return  # never initialized
        producer = self.producer
        if producer is not None and not self._cancelled and not self.failed:
            try:
                self._end_transaction(self.boundaries.at_end())
                self._settle()
            except Exception as exc:  # noqa: BLE001 - the task is stopping: what is open is aborted below
                log.error("Task %s: final transaction commit failed: %s", self.id, exc)
        elif producer is not None:
            # a commit the task started before it failed or was abandoned: wait for it (it may well commit, as
            # it would have before the next poll in the reference) rather than close the producer under it
            try:
                self._settle()
            except Exception as exc:  # noqa: BLE001 - the task is stopping: what is open is aborted below
                log.info("Task %s: its last commit failed: %s", self.id, exc)
        if self._committer is not None:
            self._committer.close()  # idle: nothing is in flight any more
            self._committer = None
        clean = not self._transaction_open
        if producer is not None and self._transaction_open and not self._fenced:
            # never committed: abort rather than leave it open until the transaction times out (readers of the
            # topics wait for it meanwhile); a fenced producer's successor has aborted it already
            try:
                producer.abort_transaction(min(self._commit_timeout_s, self.flush_timeout_s or 1.0))
                clean = True
            except KafkaException as exc:
                log.info("Task %s: its open transaction was not aborted (%s)", self.id, exc.args[0].str())
        if producer is not None and clean:
            # closed now rather than whenever the last reference goes (a log record's traceback may hold it);
            # not with a transaction left open: close() would try to end it, with no time limit
            try:
                producer.close()
            except Exception as exc:  # noqa: BLE001 - nothing is left to write through it
                log.debug("Task %s: closing its producer: %s", self.id, exc)
        self._transaction_open = False
        self.producer = None
        self._producer_settings = None
