"""Source tasks: poll, convert, produce; commit offsets only for records the broker acknowledged."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from ..api.errors import ConnectError
from ..api.records import RecordMetadata, SourceRecord, SourceRecordBatch
from ..api.task import OffsetStorageReader, SourceTask, SourceTaskContext, Task
from ..api.transactions import TransactionContext
from ..converters.base import Converter, HeaderConverter
from ..storage.base import OffsetStore
from ..storage.offset_codec import decode_value, encode_key, encode_value
from .clients import create_client
from .error_handling import ErrorContext, FailedRecord, RetryWithTolerance, Stage, build_operator, class_name
from .task_runner import TaskRunner

log = logging.getLogger(__name__)

_UNSET = object()
_IMMUTABLE = (str, bytes, int, float, bool)
# delivery errors of records a transaction's abort took back
_PURGED = (KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT)


class StoreOffsetReader(OffsetStorageReader):
    """Committed offsets of one connector's source partitions."""

    def __init__(self, connector: str, store: OffsetStore, transient: bool = False) -> None:
        self.connector = connector
        self.store = store
        self.transient = transient  # start and stop the store around each read

    def offsets(self, partitions: Iterable[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        partitions = list(partitions)
        keys = [encode_key(self.connector, p) for p in partitions]
        if self.transient:
            self.store.start()
            try:
                found = self.store.get(keys)
            finally:
                self.store.stop()
        else:
            found = self.store.get(keys)
        return [(p, decode_value(found.get(k))) for p, k in zip(partitions, keys, strict=True)]


class WorkerSourceTaskContext(SourceTaskContext):
    def __init__(
        self, config: dict[str, str], reader: OffsetStorageReader, transactions: TransactionContext | None = None
    ) -> None:
        self._config = config
        self._reader = reader
        self._transactions = transactions

    def configs(self) -> dict[str, str]:
        return dict(self._config)

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader

    def transaction_context(self) -> TransactionContext | None:
        return self._transactions


class SourceTaskRunner(TaskRunner[SourceTask]):
    """At least once: offsets are committed every `offset.flush.interval.ms` for the records the broker has
    acknowledged by then (the reference's WorkerSourceTask). `transactional_source.ExactlyOnceSourceTaskRunner`
    changes the hooks below to write records and offsets in transactions."""

    is_source = True

    def __init__(
        self,
        *args: Any,
        producer_config: dict[str, str],
        offset_store: OffsetStore,
        key_converter: Converter,
        value_converter: Converter,
        header_converter: HeaderConverter,
        flush_interval_ms: int,
        flush_timeout_ms: int,
        create_producer: Callable[[dict[str, Any]], Producer] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.producer_config = producer_config
        # the task's producer from its settings (a unit test passes a stand-in for confluent-kafka's)
        self._create_producer = create_producer or self._new_producer
        self.offset_store = offset_store
        self.key_converter = key_converter
        self.value_converter = value_converter
        self.header_converter = header_converter
        self.flush_interval_s = flush_interval_ms / 1000
        self.flush_timeout_s = flush_timeout_ms / 1000
        self.producer: Producer | None = None  # created by the first send (see _open_producer)
        self._producer_settings: dict[str, Any] | None = None  # set by initialize()
        # source partition key bytes -> latest offset map of a produced record, not yet committed
        self._pending: dict[bytes, dict[str, Any] | None] = {}
        self._send_error: KafkaError | None = None
        self._store_started = False
        self.errors: RetryWithTolerance | None = None
        # a stop came while records waited for room in the producer's queue (broker away): they were never
        # sent, so no offset may be committed any more (they are polled again after a restart)
        self._abandoned_sends = False
        # the task overrides commit_record: each record is then sent with a delivery callback that hands it
        # back with its metadata (tasks that do not pay nothing per record)
        self._commit_records = False
        self._next_commit = 0.0
        self.source_task: SourceTask | None = None  # the task, typed (set by initialize)

    def _on_delivery_error(self, err: KafkaError | None, msg: Any) -> None:
        """A record the broker refused for good (librdkafka has done its own retries by then)."""
        if err is None or err.code() in _PURGED:
            return  # purged by a transaction's abort: its records are meant to go
        errors = self.errors
        if errors is not None and errors.settings.tolerate_all:
            # KIP-779: tolerated like any other failed record; its offset still counts as processed
            self._produce_failed(msg.topic(), err)
        elif self._send_error is None:
            self._send_error = err

    def _produce_failed(self, topic: str | None, err: KafkaError) -> None:
        """A record that cannot be produced (too large, topic refused, ...): skipped under tolerance all,
        else the task fails with the cause."""
        errors = self.errors
        assert errors is not None
        self.error_counters.total_record_failures += 1
        errors.handle(ErrorContext(Stage.KAFKA_PRODUCE, class_name(Producer), KafkaException(err), FailedRecord(topic)))

    def initialize(self, task: Task) -> None:
        assert isinstance(task, SourceTask)
        self.source_task = task
        self._commit_records = type(task).commit_record is not SourceTask.commit_record
        config: dict[str, Any] = dict(self.producer_config)
        # only failed deliveries call back (per-record callbacks would cost more than the send itself), unless
        # the task wants each acknowledged record back
        config["delivery.report.only.error"] = not self._commit_records
        config["on_delivery"] = self._on_delivery_error
        config["stats_cb"] = self.on_client_stats
        config.setdefault("client.id", f"connector-producer-{self.id}")  # the reference's client id
        self.errors = build_operator(
            self.connector, self.id, self.connector_config, self.error_counters, self._stopping
        )
        self._producer_settings = self.prepare_producer(config)
        # the task's own view of its offsets (a connector-specific topic, KIP-618): read it before the task starts
        self.offset_store.start()
        self._store_started = True
        task.initialize(self.task_context(StoreOffsetReader(self.connector, self.offset_store)))

    def prepare_producer(self, config: dict[str, Any]) -> dict[str, Any]:
        """The producer's settings; before the task's offsets are read and the task is started."""
        return config

    def task_context(self, reader: OffsetStorageReader) -> SourceTaskContext:
        return WorkerSourceTaskContext(self.config, reader)

    def active_records(self) -> int:
        producer = self.producer
        return len(producer) if producer is not None else 0

    def _open_producer(self) -> Producer:
        """The task's producer, created when its first records are sent: a task that has produced
        nothing costs no client (each librdkafka client keeps threads and timers; a worker may run
        thousands of idle tasks)."""
        if self.producer is None:
            assert self._producer_settings is not None, "send before initialize"
            self.producer = self._create_producer(self._producer_settings)
        return self.producer

    def _new_producer(self, settings: dict[str, Any]) -> Producer:
        return create_client(Producer, settings, f"producer of {self.id}")

    def execute(self) -> None:
        task = self.task
        assert isinstance(task, SourceTask)
        self.enter_loop()
        while not self.stopping:
            if self.paused:
                self.on_pause()
                self.wait_while_paused()
                self.enter_loop()
                continue
            began = time.monotonic()
            records = task.poll()
            counters = self.counters
            counters.poll_batches += 1
            counters.poll_batch_time_ms_total += (time.monotonic() - began) * 1000
            if records:
                counters.source_records_polled += len(records)
            self.dispatch(records)

    # ---- the loop's hooks (at least once here) --------------------------------------------------

    def enter_loop(self) -> None:
        """The loop starts, or resumes after a pause."""
        self._next_commit = time.monotonic() + self.flush_interval_s

    def on_pause(self) -> None:
        self.commit_offsets()

    def dispatch(self, records: list[Any] | SourceRecordBatch | None) -> None:
        """Send what one poll returned; commit offsets when it is time."""
        if records:
            self.send(records)
        elif self._commit_records and self.producer is not None:
            self.producer.poll(0)  # hand back what was acknowledged meanwhile, though nothing new is sent
        if time.monotonic() >= self._next_commit:
            self.commit_offsets()
            self._next_commit = time.monotonic() + self.flush_interval_s

    def record_written(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        """`record` (as polled) is acknowledged, or (metadata None) was dropped: hand it to commit_record."""
        self.commit_record(record, metadata)

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        assert self.source_task is not None
        try:
            self.source_task.commit_record(record, metadata)
        except Exception as exc:  # the reference only logs a failing commitRecord()
            log.error("Task %s threw in commit_record(): %s", self.id, exc, exc_info=exc)

    def _acknowledged(self, record: SourceRecord) -> Any:
        """The delivery callback of one record sent for a task that overrides commit_record."""

        def on_delivery(err: KafkaError | None, msg: Any) -> None:
            if err is not None:
                self._on_delivery_error(err, msg)
            else:
                self.record_written(record, RecordMetadata(msg.topic(), msg.partition(), msg.offset()))

        return on_delivery

    def send(self, records: list[Any] | SourceRecordBatch) -> None:
        """Convert and hand a batch to the producer; remember each source partition's latest offset.

        Batches go through `produce_batch` (one call per topic), about twice as fast as a call per
        record; records with headers take the per-record path, which supports them.
        """
        producer = self._open_producer()
        commit_records = self._commit_records
        if (
            type(records) is SourceRecordBatch
            and self.transforms.empty
            and not commit_records
            and self._send_columns(records)
        ):
            return
        key_conv = self.key_converter.from_connect_data
        value_conv = self.value_converter.from_connect_data
        pending = self._pending
        connector = self.connector
        # produce_batch sends a whole batch to one partition (or lets the partitioner choose): batches are
        # kept per (topic, partition), -1 standing for "by key" (librdkafka's unassigned partition)
        by_topic: dict[tuple[str, int], list[dict[str, Any]]] = {}
        current_topic: tuple[str, int] | None = None
        current_batch: list[dict[str, Any]] = []
        # Keys repeat (one per source partition, typically): reuse the bytes of an identical immutable key.
        last_key_obj: Any = _UNSET
        last_key_schema: Any = _UNSET
        last_key_bytes: bytes | None = None
        # Only the last offset of each source partition matters: it is stored once per run of records
        # from the same partition rather than once per record.
        run_partition: Any = _UNSET
        run_offset: Any = None
        transforms = self.transforms
        has_transforms = not transforms.empty
        sent = 0
        for original in records:
            source_partition = original.source_partition
            if source_partition is not run_partition and source_partition != run_partition:
                if run_partition is not _UNSET and run_partition is not None:
                    pending[encode_key(connector, run_partition)] = run_offset
                run_partition = source_partition
            run_offset = original.source_offset
            record = original
            if has_transforms:
                try:
                    record = transforms.apply(original)
                except Exception:  # noqa: BLE001 - the slow path finds the failing transform and applies errors.*
                    record = self._transform_failed(original)
                if record is None:  # filtered out or skipped: its offset still counts as processed
                    if commit_records:
                        self.record_written(original, None)
                    continue
            topic = record.topic
            key = record.key
            try:
                if key is last_key_obj and record.key_schema is last_key_schema:
                    key_bytes = last_key_bytes
                else:
                    key_bytes = key_conv(topic, record.key_schema, key)
                    if key is None or type(key) in _IMMUTABLE:
                        last_key_obj, last_key_schema, last_key_bytes = key, record.key_schema, key_bytes
                value_bytes = value_conv(topic, record.value_schema, record.value)
            except Exception:  # noqa: BLE001 - the slow path finds the failing converter and applies errors.*
                last_key_obj = _UNSET
                converted = self._convert_failed(record)
                if converted is None:
                    if commit_records:
                        self.record_written(original, None)
                    continue  # skipped: its offset still counts as processed, as with the reference
                key_bytes, value_bytes = converted
            if record.headers or record.timestamp is not None:
                # produce_batch takes neither headers nor timestamps: send this one on its own, after
                # everything before it
                self._flush_batches(by_topic)
                current_topic = None
                self._produce_one(
                    topic, value_bytes, key_bytes, record, self._acknowledged(original) if commit_records else None
                )
                sent += 1
                continue
            destination = (topic, -1 if record.kafka_partition is None else record.kafka_partition)
            if destination != current_topic:
                current_topic = destination
                current_batch = by_topic.get(destination) or by_topic.setdefault(destination, [])
                if topic not in self._topics_seen:
                    self._topic_seen(topic)
            if commit_records:
                current_batch.append({"value": value_bytes, "key": key_bytes, "callback": self._acknowledged(original)})
            else:
                current_batch.append({"value": value_bytes, "key": key_bytes})
            sent += 1
        if run_partition is not _UNSET and run_partition is not None:
            pending[encode_key(connector, run_partition)] = run_offset
        self._flush_batches(by_topic)
        producer.poll(0)
        self.counters.source_records_written += sent
        if self._send_error is not None:
            raise ConnectError(f"Unrecoverable exception from producer send callback: {self._send_error}")

    def _send_columns(self, batch: SourceRecordBatch) -> bool:
        """Send a batch straight from its columns: the key converted once, each value converted into the
        producer's message list, no record objects. False (nothing sent) when a conversion fails: the
        record-by-record path then applies errors.* to each record."""
        topic = batch.topic
        producer = self.producer
        assert producer is not None  # opened by send()
        try:
            key_bytes = self.key_converter.from_connect_data(topic, batch.key_schema, batch.key)
            value_conv, value_schema = self.value_converter.from_connect_data, batch.value_schema
            if batch.timestamps is None:
                messages = [{"value": value_conv(topic, value_schema, v), "key": key_bytes} for v in batch.values]
            else:
                values = [value_conv(topic, value_schema, v) for v in batch.values]
        except Exception:  # noqa: BLE001 - a converter may raise anything: the slow path applies errors.* to it
            return False
        if topic not in self._topics_seen:
            self._topic_seen(topic)
        partition = -1 if batch.kafka_partition is None else batch.kafka_partition
        if batch.timestamps is None:
            self._flush_batches({(topic, partition): messages})
        else:
            # produce_batch refuses timestamps (confluent-kafka 2.16: "not currently supported in batch mode"):
            # one produce() each, in a loop as lean as it can be; a full queue or a refusal takes _produce
            self.ready_to_produce()
            produce = producer.produce
            for value, timestamp in zip(values, batch.timestamps, strict=True):
                try:
                    produce(topic, value, key_bytes, partition, timestamp=timestamp or 0)
                except (BufferError, KafkaException):
                    self._produce(topic, value, key_bytes, partition, timestamp or 0)
        if batch.source_partition is not None and len(batch):
            self._pending[encode_key(self.connector, batch.source_partition)] = batch.source_offsets[-1]
        producer.poll(0)
        self.counters.source_records_written += len(batch)
        if self._send_error is not None:
            raise ConnectError(f"Unrecoverable exception from producer send callback: {self._send_error}")
        return True

    def _transform_failed(self, original: Any) -> Any:
        """Transform one record stage by stage under errors.*: the result, or None when skipped."""
        assert self.errors is not None
        return self.errors.transform(self.transforms, original, FailedRecord(source_record=original))

    def _convert_failed(self, record: Any) -> tuple[bytes | None, bytes | None] | None:
        """Convert one record's key and value under errors.*: the bytes, or None when skipped."""
        errors = self.errors
        assert errors is not None
        failed = FailedRecord(source_record=record)
        topic = record.topic
        ok, key = errors.execute(
            Stage.KEY_CONVERTER,
            self.key_converter,
            lambda: self.key_converter.from_connect_data(topic, record.key_schema, record.key),
            failed,
        )
        if not ok:
            return None
        ok, value = errors.execute(
            Stage.VALUE_CONVERTER,
            self.value_converter,
            lambda: self.value_converter.from_connect_data(topic, record.value_schema, record.value),
            failed,
        )
        return (key, value) if ok else None

    def ready_to_produce(self) -> None:
        """Called before a batch's first record goes to the producer, after its records were converted (an
        exactly-once task settles its previous commit and begins a transaction here)."""

    def _flush_batches(self, by_topic: dict[tuple[str, int], list[dict[str, Any]]]) -> None:
        if not by_topic:
            return
        self.ready_to_produce()
        producer = self.producer
        assert producer is not None
        for (topic, partition), messages in by_topic.items():
            while messages:
                queued = producer.produce_batch(topic, messages, partition=partition)
                if queued == len(messages):
                    break
                # keep the unsent ones, in order, while the queue is full; a record refused for good (e.g.
                # over message.max.bytes) is never queued: retrying it would spin forever
                if self.stopping:
                    self._abandon_sends()
                    break
                unsent = []
                for m in messages:
                    err = m.pop("_error", None)
                    if err is None:
                        continue
                    if err.code() == KafkaError._QUEUE_FULL:
                        unsent.append(m)
                    else:
                        self._produce_failed(topic, err)
                messages = unsent
                if messages:
                    producer.poll(0.05)
        by_topic.clear()

    def _produce_one(
        self, topic: str, value: bytes | None, key: bytes | None, record: Any, on_delivery: Any = None
    ) -> None:
        headers = self._headers(topic, record.headers) if record.headers else None
        partition = record.kafka_partition if record.kafka_partition is not None else -1
        if topic not in self._topics_seen:
            self._topic_seen(topic)
        self._produce(topic, value, key, partition, record.timestamp or 0, headers, on_delivery)

    def _produce(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None,
        partition: int,
        timestamp: int,
        headers: list[Any] | None = None,
        on_delivery: Any = None,
    ) -> None:
        """One record to the producer (timestamp 0: the producer's clock), waiting while its queue is full."""
        self.ready_to_produce()
        producer = self.producer
        assert producer is not None
        callback = {"on_delivery": on_delivery} if on_delivery is not None else {}
        while True:
            try:
                producer.produce(topic, value, key, partition, timestamp=timestamp, headers=headers, **callback)
                return
            except BufferError:
                if self.stopping:
                    self._abandon_sends()
                    return
                producer.poll(0.05)  # queue full: let deliveries drain
            except KafkaException as exc:  # refused for good before sending (e.g. over message.max.bytes)
                self._produce_failed(topic, exc.args[0])
                return

    def _abandon_sends(self) -> None:
        if not self._abandoned_sends:
            log.warning(
                "Task %s: stopping with records the producer could not queue (is the broker reachable?); "
                "no further offsets are committed, so they are polled again after a restart",
                self.id,
            )
        self._abandoned_sends = True

    def _headers(self, topic: str, headers: list[Any]) -> list[tuple[str, str | bytes | None]]:
        convert = self.header_converter.from_connect_header
        return [(h.key, convert(topic, h.key, h.schema, h.value)) for h in headers]

    def _topic_seen(self, topic: str) -> None:
        self._topics_seen.add(topic)
        if self.on_topic is not None:
            self.on_topic(self.connector, self.index, topic)

    def commit_offsets(self) -> bool:
        """Wait for outstanding sends, then store the offsets of everything sent before the wait."""
        if self._producer_settings is None or self._cancelled or self._abandoned_sends:
            return False
        began = time.monotonic()
        snapshot = dict(self._pending)
        remaining = self.producer.flush(self.flush_timeout_s) if self.producer is not None else 0
        if remaining:
            self.counters.offset_commit_failures += 1
            log.warning(
                "Task %s: %d records not acknowledged within offset.flush.timeout.ms; offsets not committed this time",
                self.id,
                remaining,
            )
            return False
        if self._send_error is not None:
            raise ConnectError(f"Unrecoverable exception from producer send callback: {self._send_error}")
        if snapshot and not self._cancelled:
            self.offset_store.set({k: encode_value(v) for k, v in snapshot.items()})
            for key, value in snapshot.items():
                if self._pending.get(key) is value:
                    del self._pending[key]
        took_ms = (time.monotonic() - began) * 1000
        self.counters.offset_commits += 1
        self.counters.offset_commit_time_ms_total += took_ms
        log.debug("Task %s: finished commitOffsets successfully in %d ms", self.id, took_ms)
        self.commit_task()
        return True

    def commit_task(self) -> None:
        """SourceTask.commit(): offsets are committed."""
        assert self.source_task is not None
        try:
            self.source_task.commit()
        except Exception as exc:  # noqa: BLE001 - the reference only logs a failing commit()
            log.warning("Task %s threw in commit(): %s", self.id, exc)

    def close_resources(self) -> None:
        try:
            self._close_producer()
        finally:
            if self._store_started:
                self._store_started = False
                try:
                    self.offset_store.stop()
                except Exception as exc:  # noqa: BLE001 - closing goes on whatever the store's clients raise
                    log.warning("Task %s: closing its offset store threw: %s", self.id, exc)

    def _close_producer(self) -> None:
        if self._producer_settings is None:
            return  # never initialized
        if not self._cancelled and not self.failed:
            try:
                self.commit_offsets()
            except Exception as exc:  # noqa: BLE001 - closing goes on whatever the producer or store raise
                log.error("Task %s: final offset commit failed: %s", self.id, exc)
        elif not self._cancelled and self.failed:
            # records acknowledged before the failure are safe to commit; others are retried on restart
            try:
                if self.producer is not None:
                    self.producer.flush(self.flush_timeout_s)
                if self._send_error is None and self._pending and not self._abandoned_sends:
                    self.offset_store.set({k: encode_value(v) for k, v in self._pending.items()})
            except Exception as exc:  # noqa: BLE001 - closing goes on whatever the producer or store raise
                log.error("Task %s: offset commit after failure failed: %s", self.id, exc)
        self.producer = None
        self._producer_settings = None  # closed: no further commits

    def on_cancel(self) -> None:
        self._pending.clear()
