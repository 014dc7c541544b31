"""Sink tasks: consume from the connector's group, convert, put, flush and commit."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition

from ..api.errors import ConnectError, RetriableError
from ..api.records import TIMESTAMP_TYPES, Header, SinkRecord, SinkRecordBatch, TopicPartition
from ..api.task import ErrantRecordReporter, SinkTask, SinkTaskContext, Task
from ..converters.base import Converter, HeaderConverter
from .clients import create_client
from .dead_letter_queue import DeadLetterQueueReporter
from .error_handling import (
    ErrorContext,
    ErrorSettings,
    FailedRecord,
    RetryWithTolerance,
    Stage,
    build_operator,
    class_name,
)
from .task_runner import TaskRunner

log = logging.getLogger(__name__)

_UNSET = object()
# librdkafka's names for auto.offset.reset; 'error' (and anything else) is left to librdkafka
_RESET_POSITIONS = {
    "earliest": OFFSET_BEGINNING,
    "smallest": OFFSET_BEGINNING,
    "beginning": OFFSET_BEGINNING,
    "latest": OFFSET_END,
    "largest": OFFSET_END,
    "end": OFFSET_END,
}
_IMMUTABLE = (str, bytes, int, float, bool, type(None))


class _Context(SinkTaskContext):
    def __init__(self, runner: SinkTaskRunner) -> None:
        self._runner = runner

    def configs(self) -> dict[str, str]:
        return dict(self._runner.config)

    def offsets(self, offsets: dict[TopicPartition, int]) -> None:
        with self._runner.lock:
            self._runner.pending_seeks.update(offsets)

    def timeout(self, timeout_ms: int) -> None:
        self._runner.retry_backoff_s = timeout_ms / 1000

    def assignment(self) -> set[TopicPartition]:
        return set(self._runner.assignment)

    def pause(self, *partitions: TopicPartition) -> None:
        self._runner.task_paused.update(partitions)
        self._runner.apply_pauses()

    def resume(self, *partitions: TopicPartition) -> None:
        self._runner.task_paused.difference_update(partitions)
        self._runner.apply_pauses()

    def request_commit(self) -> None:
        self._runner.commit_requested = True

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        return self._runner.errant_reporter


class _ErrantRecordReporter(ErrantRecordReporter):
    """KIP-610: records the task reports go through the connector's error handling at stage TASK_PUT. As
    in the reference, a record no longer known as consumed is serialised again with the task's converters."""

    def __init__(self, runner: SinkTaskRunner) -> None:
        self._runner = runner

    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        runner = self._runner
        topic = record.topic
        try:
            key = runner.key_converter.from_connect_data(topic, record.key_schema, record.key)
            value = runner.value_converter.from_connect_data(topic, record.value_schema, record.value)
            convert = runner.header_converter.from_connect_header
            headers = [(h.key, convert(topic, h.key, h.schema, h.value)) for h in record.headers or []]
        except Exception as exc:  # noqa: BLE001 - the report still goes to the log and the counters
            log.warning("Task %s: could not serialise a reported record again: %s", runner.id, exc)
            key = value = None
            headers = []
        failed = FailedRecord(
            topic, record.kafka_partition, getattr(record, "kafka_offset", None), key, value, headers, record.timestamp
        )
        assert runner.errors is not None
        runner.errors.handle(ErrorContext(Stage.TASK_PUT, class_name(runner.task_class), error, failed))
        done: Future[None] = Future()
        runner.reports_in_flight.append(done)  # completed once the queue has acknowledged it (commit)
        return done


class SinkTaskRunner(TaskRunner[SinkTask]):
    COMMITTED_TIMEOUT_S = 10.0

    def __init__(
        self,
        *args: Any,
        consumer_config: dict[str, str],
        key_converter: Converter,
        value_converter: Converter,
        header_converter: HeaderConverter,
        flush_interval_ms: int,
        batch_size: int,
        dlq_producer_config: dict[str, str] | None = None,
        dlq_admin_config: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.consumer_config = consumer_config
        self.dlq_producer_config = dlq_producer_config or {}
        self.dlq_admin_config = dlq_admin_config or {}
        self.errors: RetryWithTolerance | None = None
        self.errant_reporter: _ErrantRecordReporter | None = None
        self.reports_in_flight: list[Future[None]] = []
        self.key_converter = key_converter
        self.value_converter = value_converter
        self.header_converter = header_converter
        self.flush_interval_s = flush_interval_ms / 1000
        self.batch_size = batch_size
        self.consumer: Consumer | None = None
        self.lock = threading.Lock()
        self.pending_seeks: dict[TopicPartition, int] = {}
        self.assignment: set[TopicPartition] = set()
        self.task_paused: set[TopicPartition] = set()
        self.current: dict[TopicPartition, int] = {}  # next offset to consume, per partition delivered to put()
        self.committed: dict[TopicPartition, int] = {}
        self.commit_requested = False
        self.retry_backoff_s = 0.0

    # ---- setup ----------------------------------------------------------------------------------

    def initialize(self, task: Task) -> None:
        assert isinstance(task, SinkTask)
        self.errors = build_operator(
            self.connector, self.id, self.connector_config, self.error_counters, self._stopping, self._dead_letter_queue
        )
        self.errant_reporter = _ErrantRecordReporter(self)
        config = {
            "client.id": f"connector-consumer-{self.id}",
            **self.consumer_config,
            "stats_cb": self.on_client_stats,
        }
        self.consumer = create_client(Consumer, config, f"consumer of {self.id}")
        topics = [t.strip() for t in self.connector_config.get("topics", "").split(",") if t.strip()]
        regex = self.connector_config.get("topics.regex", "").strip()
        subscription = topics if topics else ["^" + regex.lstrip("^")] if regex else []
        if not subscription:
            raise ConnectError("Sink task has neither 'topics' nor 'topics.regex' configured")
        if regex and not topics:
            re.compile(regex)
        self.consumer.subscribe(subscription, on_assign=self._on_assign, on_revoke=self._on_revoke)
        task.initialize(_Context(self))

    def _dead_letter_queue(self, settings: ErrorSettings) -> DeadLetterQueueReporter:
        return DeadLetterQueueReporter(
            settings, self.dlq_producer_config, self.dlq_admin_config, self.connector, self.index, self.error_counters
        )

    def _on_assign(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        added = [TopicPartition(p.topic, p.partition) for p in partitions]
        self.assignment.update(added)
        if self.task is not None:
            self.task.open(added)
        # Offsets the task asked for in open() (or before) are where consumption starts: set them in
        # the assignment itself so no record from the committed position is delivered first.
        with self.lock:
            seeks = {tp: self.pending_seeks.pop(tp) for tp in added if tp in self.pending_seeks}
        for p in partitions:
            offset = seeks.get(TopicPartition(p.topic, p.partition))
            if offset is not None:
                p.offset = offset
                self.current[TopicPartition(p.topic, p.partition)] = offset
        self._resolve_start_offsets(consumer, [p for p in partitions if p.offset < 0])
        # eager rebalancing (the worker drops partition.assignment.strategy, a Java class list), so the
        # whole assignment; pauses the task asked for in open() are applied to it below
        consumer.assign(partitions)
        if self.paused or self.task_paused:
            self.apply_pauses()

    def _resolve_start_offsets(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        """Start each partition at the group's committed offset, or where auto.offset.reset says.

        Left to itself, librdkafka does the same, but only on its next timer tick: the first fetch after
        a rebalance then comes about 100 ms later (the reference's consumer, asked for its position on
        assignment, fetches at once). An error leaves the partitions to librdkafka's own lookup."""
        if not partitions:
            return
        try:
            committed = consumer.committed(
                [KafkaTopicPartition(p.topic, p.partition) for p in partitions], timeout=self.COMMITTED_TIMEOUT_S
            )
        except KafkaException as exc:
            log.debug("Task %s: committed offsets not read on assignment (%s); librdkafka looks them up", self.id, exc)
            return
        reset = _RESET_POSITIONS.get(str(self.consumer_config.get("auto.offset.reset", "latest")).lower())
        for p, c in zip(partitions, committed, strict=True):
            if c.error is None and c.offset >= 0:
                p.offset = c.offset
            elif c.error is None and reset is not None:
                p.offset = reset

    def _on_revoke(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        revoked = [TopicPartition(p.topic, p.partition) for p in partitions]
        try:
            self.commit(revoked_only=set(revoked))
        except Exception as exc:  # noqa: BLE001 - the commit runs the task's flush/pre_commit: revocation goes on
            log.warning("Task %s: commit on revocation failed: %s", self.id, exc)
        if self.task is not None:
            try:
                self.task.close(revoked)
            except Exception as exc:  # noqa: BLE001 - a task's own close() may raise anything: revocation goes on
                log.warning("Task %s: close() threw: %s", self.id, exc)
        for tp in revoked:
            self.assignment.discard(tp)
            self.current.pop(tp, None)
            self.committed.pop(tp, None)

    def apply_pauses(self) -> None:
        """Pause the consumer for the whole assignment while the task is PAUSED, else for what the task paused."""
        consumer = self.consumer
        if consumer is None or not self.assignment:
            return
        to_pause = self.assignment if self.paused else (self.task_paused & self.assignment)
        to_resume = set() if self.paused else self.assignment - self.task_paused
        if to_pause:
            consumer.pause([KafkaTopicPartition(t, p) for t, p in to_pause])
        if to_resume:
            consumer.resume([KafkaTopicPartition(t, p) for t, p in to_resume])

    # ---- loop -----------------------------------------------------------------------------------

    def execute(self) -> None:
        task = self.task
        consumer = self.consumer
        assert isinstance(task, SinkTask) and consumer is not None
        key_conv = self.key_converter.to_connect_data
        value_conv = self.value_converter.to_connect_data
        next_commit = time.monotonic() + self.flush_interval_s
        was_paused = False
        while not self.stopping:
            if self.paused != was_paused:
                was_paused = self.paused
                self.apply_pauses()
            self._apply_seeks()
            messages = consumer.consume(self.batch_size, 0.2 if not was_paused else 0.5)
            if messages:
                self._process(task, messages, key_conv, value_conv)
            if self.commit_requested or time.monotonic() >= next_commit:
                self.commit_requested = False
                self.commit()
                next_commit = time.monotonic() + self.flush_interval_s

    def _process(self, task: SinkTask, messages: list[Any], key_conv: Any, value_conv: Any) -> None:
        """Convert, transform and put one batch; then the whole batch counts as consumed. Without transforms
        the batch goes to put() as columns (SinkRecordBatch), with no SinkRecord built unless the task reads
        one."""
        records: list[SinkRecord] = []
        # the columns, when there are no transforms
        kept: list[Any] = []
        keys: list[Any] = []
        values: list[Any] = []
        key_schemas: list[Any] = []
        value_schemas: list[Any] = []
        headers: dict[int, list[Header]] = {}
        # next offset per partition, written once per run of records from the same partition
        positions: dict[tuple[str, int], int] = {}
        run_topic: str | None = None
        run_partition = -1
        last_offset = -1
        transforms = self.transforms
        no_transforms = transforms.empty
        topics_seen = self._topics_seen
        last_raw_key: Any = _UNSET
        last_key_topic: str | None = None
        key_schema: Any = None
        key: Any = None
        for m in messages:
            if m.error() is not None:
                err = m.error()
                if err.fatal():  # the consumer is unusable: the task fails with the cause
                    raise ConnectError(f"Unrecoverable error from the consumer: {err}")
                if err.code() != KafkaError._PARTITION_EOF and not err.retriable():
                    log.warning("Task %s: consumer error %s", self.id, err)
                continue
            topic = m.topic()
            partition = m.partition()
            offset = m.offset()
            if partition != run_partition or topic != run_topic:
                if run_topic is not None:
                    positions[(run_topic, run_partition)] = last_offset + 1
                run_topic, run_partition = topic, partition
                if topic not in topics_seen:
                    self._topic_seen(topic)
            last_offset = offset
            try:
                raw_key = m.key()
                if raw_key != last_raw_key or topic != last_key_topic:  # keys repeat: decode each once
                    key_schema, key = key_conv(topic, raw_key)
                    last_raw_key = raw_key if type(key) in _IMMUTABLE else _UNSET
                    last_key_topic = topic
                value_schema, value = value_conv(topic, m.value())
                raw_headers = m.headers()
                if no_transforms:
                    if raw_headers:
                        headers[len(kept)] = self._headers(topic, raw_headers)
                    kept.append(m)
                    keys.append(key)
                    values.append(value)
                    key_schemas.append(key_schema)
                    value_schemas.append(value_schema)
                    continue
                ts_type, ts = m.timestamp()
                record: SinkRecord | None = transforms.apply(
                    SinkRecord(
                        topic,
                        partition,
                        key,
                        value,
                        offset,
                        key_schema,
                        value_schema,
                        ts if ts_type else None,
                        TIMESTAMP_TYPES.get(ts_type, "CreateTime"),
                        self._headers(topic, raw_headers) if raw_headers else None,
                    )
                )
            except Exception:  # noqa: BLE001 - the slow path finds the failing stage and applies errors.*
                last_raw_key = _UNSET
                record = self._process_failed(m)
                if record is not None and no_transforms:
                    if record.headers:
                        headers[len(kept)] = record.headers
                    kept.append(m)
                    keys.append(record.key)
                    values.append(record.value)
                    key_schemas.append(record.key_schema)
                    value_schemas.append(record.value_schema)
                    continue
            if record is not None:
                records.append(record)
        if run_topic is not None:
            positions[(run_topic, run_partition)] = last_offset + 1
        batch: Sequence[SinkRecord] = (
            SinkRecordBatch(kept, keys, values, key_schemas, value_schemas, headers) if no_transforms else records
        )
        counters = self.counters
        counters.sink_records_read += len(messages)
        counters.sink_records_sent += len(batch)
        if self._deliver(task, batch):
            self.current.update({TopicPartition(t, p): o for (t, p), o in positions.items()})

    def _topic_seen(self, topic: str) -> None:
        self._topics_seen.add(topic)
        if self.on_topic is not None:
            self.on_topic(self.connector, self.index, topic)

    def _process_failed(self, m: Any) -> SinkRecord | None:
        """A record the batch path could not convert or transform, again stage by stage under the
        connector's errors.* settings: retried, then skipped (None) or the task fails."""
        errors = self.errors
        assert errors is not None
        topic, raw_key, raw_value, raw_headers = m.topic(), m.key(), m.value(), m.headers()
        ts_type, ts = m.timestamp()
        failed = FailedRecord(
            topic, m.partition(), m.offset(), raw_key, raw_value, raw_headers, ts if ts_type else None
        )
        ok, key = errors.execute(
            Stage.KEY_CONVERTER, self.key_converter, lambda: self.key_converter.to_connect_data(topic, raw_key), failed
        )
        if not ok:
            return None
        ok, value = errors.execute(
            Stage.VALUE_CONVERTER,
            self.value_converter,
            lambda: self.value_converter.to_connect_data(topic, raw_value),
            failed,
        )
        if not ok:
            return None
        ok, headers = errors.execute(
            Stage.HEADER_CONVERTER,
            self.header_converter,
            lambda: self._headers(topic, raw_headers) if raw_headers else None,
            failed,
        )
        if not ok:
            return None
        assert key is not None and value is not None
        record = SinkRecord(
            topic,
            m.partition(),
            key[1],
            value[1],
            m.offset(),
            key[0],
            value[0],
            ts if ts_type else None,
            TIMESTAMP_TYPES.get(ts_type, "CreateTime"),
            headers,
        )
        return errors.transform(self.transforms, record, failed)

    def _deliver(self, task: SinkTask, records: Sequence[SinkRecord]) -> bool:
        """put() the batch, redelivering after a RetriableError; False if stopped before it went in."""
        if not records:
            return True
        while True:
            try:
                began = time.monotonic()
                task.put(records)
                counters = self.counters
                counters.put_batches += 1
                counters.put_batch_time_ms_total += (time.monotonic() - began) * 1000
                return True
            except RetriableError as exc:
                log.warning("Task %s: retriable error from put(), redelivering: %s", self.id, exc)
                time.sleep(self.retry_backoff_s or 0.5)
                if self.stopping:
                    return False

    def _headers(self, topic: str, raw: list[tuple[str, bytes | None]]) -> list[Header]:
        convert = self.header_converter.to_connect_header
        headers = []
        for key, value in raw:
            schema, converted = convert(topic, key, value)
            headers.append(Header(key, converted, schema))
        return headers

    def _apply_seeks(self) -> None:
        if not self.pending_seeks or self.consumer is None:
            return
        with self.lock:
            seeks = {tp: o for tp, o in self.pending_seeks.items() if tp in self.assignment}
            for tp in seeks:
                del self.pending_seeks[tp]
        for tp, offset in seeks.items():
            try:
                self.consumer.seek(KafkaTopicPartition(tp.topic, tp.partition, offset))
                self.current[tp] = offset
            except Exception as exc:  # noqa: BLE001 - not yet fetchable: try again next loop
                log.debug("Task %s: seek %s to %s deferred: %s", self.id, tp, offset, exc)
                with self.lock:
                    self.pending_seeks.setdefault(tp, offset)

    def commit(self, revoked_only: set[TopicPartition] | None = None) -> None:
        if self._cancelled or self.failed or self.consumer is None or self.task is None or not self.current:
            return
        current = dict(self.current)
        if revoked_only is not None:
            current = {tp: o for tp, o in current.items() if tp in revoked_only}
        to_commit = self.task.pre_commit(current)
        if not to_commit:
            return
        changed = {tp: o for tp, o in to_commit.items() if self.committed.get(tp) != o}
        if not changed:
            return
        began = time.monotonic()
        self._flush_error_reports()
        try:
            self.consumer.commit(
                offsets=[KafkaTopicPartition(t, p, o) for (t, p), o in changed.items()], asynchronous=False
            )
        except KafkaException as exc:
            # as the reference: a failed commit (broker away, coordinator moving) is retried at the next
            # interval; the records stay written, so at worst they are delivered again after a crash
            log.warning("Task %s: commit of offsets failed, will retry at the next commit: %s", self.id, exc)
            self.counters.offset_commit_failures += 1
            return
        self.committed.update(changed)
        self.counters.offset_commits += 1
        self.counters.offset_commit_time_ms_total += (time.monotonic() - began) * 1000

    def _flush_error_reports(self) -> None:
        """Offsets of records sent to the dead letter queue are committed only once the queue has them."""
        if self.errors is None:
            return
        self.errors.flush(self.flush_interval_s + 30)
        in_flight, self.reports_in_flight = self.reports_in_flight, []
        for done in in_flight:
            done.set_result(None)

    def finish(self) -> None:
        # the task must still be alive for the final flush, so it is stopped after committing
        consumer = self.consumer
        if consumer is None:
            self.stop_task()
            return
        if not self._cancelled and not self.failed:
            try:
                self.commit()
            except Exception as exc:  # noqa: BLE001 - the commit runs the task's flush/pre_commit: closing goes on
                log.error("Task %s: final offset commit failed: %s", self.id, exc)
        try:
            if self.task is not None and self.assignment and not self._cancelled:
                self.task.close(sorted(self.assignment))
        except Exception as exc:  # noqa: BLE001 - a task's own close() may raise anything: closing goes on
            log.warning("Task %s: close() threw: %s", self.id, exc)
        self.stop_task()
        if self.errors is not None:
            self.errors.close()
        try:
            consumer.close()
        except KafkaException as exc:
            log.warning("Task %s: closing the consumer failed: %s", self.id, exc)
        self.consumer = None
