"""Connectors for tests and benchmarks: a numbered-sequence source and a recording sink, with fault knobs.

SequenceSourceConnector (alias SequenceSource)
    Task i of connector C uses source partition {"task.id": "C-i"} and offset {"saved": N}, N being the
    number of records the task has produced (a record's offset is its seqno + 1). On start it reads its
    committed offset and continues at seqno N. Key "C-i" (STRING); value {"task": i, "seqno": n} with the
    STRUCT schema `runtime.testing.Sequence` (task int32, seqno int64). `messages.per.task` bounds the
    seqno (-1 = unlimited), `throughput` caps records/s per task (-1 = unthrottled), `batch.size` is the
    number of records per poll.
    Exactly once (KIP-618): it supports it (a sequence is a pure function of its committed offset). With
    `transaction.every.records=N` > 0 it also defines its transaction boundaries (for
    `transaction.boundary=connector`): each transaction holds seqnos [kN, (k+1)N), and with
    `transaction.abort.every=K` > 0 every K-th of them (k+1 a multiple of K) is aborted instead (its records
    never appear to read_committed consumers; its offsets are committed all the same).

RecordingSinkConnector (alias RecordingSink)
    Appends every record `put` to `output.file` as one JSON line
    {"topic", "partition", "offset", "key", "value"} (plus "value_schema" with `record.schemas=true`,
    as JsonConverter writes schemas); keys and values appear as the converter delivered
    them (maps, lists, strings, numbers, booleans, null). Bytes (at any depth) are written as base64
    strings, as Kafka's JsonConverter encodes them; other non-JSON values (e.g. Decimal) via str().
    Each batch is one append-mode write, so several tasks can share the file; everything is written to
    the OS before `put` returns, hence before offsets are committed.

Fault knobs (both connectors; all errors are ConnectErrors naming the knob):
    connector.start.fail=true     Connector.start() raises.
    connector.stop.fail=true      Connector.stop() raises.
    connector.start.block.ms=N    Connector.start() sleeps N ms first.
    connector.stop.block.ms=N     Connector.stop() sleeps N ms first (for hang tests).
    connector.start.block.until.file=PATH
                                  Connector.start() first waits until PATH exists (the test creates it to
                                  let the start go on); it logs that it waits before it does.
    connector.stop.block.until.file=PATH
                                  Connector.stop() likewise.
    connector.starts.file=PATH    Connector.start() appends a line to PATH first: a test counts the
                                  connector's starts (restarts) from outside the worker.
    connector.validate.block.ms=N Connector.validate() sleeps N ms first (request-timeout tests).
    connector.validate.block.until.file=PATH
                                  Connector.validate() first waits until PATH exists, as start() above.
    task.start.fail=IDS           Task.start() raises for the listed tasks: ids are indexes ("0,2") or
                                  full task ids ("C-0"), or `all`.
    task.fail.after.records=N     A task instance handles exactly N records (source: produces; sink:
                                  accepts in put) and raises when asked for more.
    task.fail.times=N             Only the first N instances of each task fail so (a restart recovers);
                                  counted per worker process.
    task.start.block.ms=N         Task.start() sleeps N ms first (the task is not RUNNING until then).
    task.stop.block.ms=N          Task.stop() blocks N ms (for hang tests).
    alter.offsets=V               alter_offsets: true -> True, false -> False (default),
                                  unsupported -> UnsupportedOperationError, error -> ConnectError.
"""

from __future__ import annotations

import base64
import logging
import os
import threading
from collections.abc import Sequence
from typing import Any

import orjson

from ..api import (
    AbstractConfig,
    ConfigDef,
    ConfigValue,
    ConnectError,
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    Importance,
    NonEmptyString,
    Range,
    SinkConnector,
    SinkRecord,
    SinkTask,
    SourceConnector,
    SourceRecordBatch,
    SourceTask,
    Task,
    Type,
    UnsupportedOperationError,
    ValidString,
)
from ..api.data import INT32_SCHEMA, INT64_SCHEMA, STRING_SCHEMA, SchemaBuilder
from ..api.records import SinkRecordBatch, TopicPartition
from ..clock import SYSTEM_CLOCK, Clock
from ..converters.json import JsonConverter

log = logging.getLogger(__name__)

TASK_INDEX_CONFIG = "task.index"  # put into each task config by the connectors

CONNECTOR_START_FAIL = "connector.start.fail"
CONNECTOR_STOP_FAIL = "connector.stop.fail"
CONNECTOR_START_BLOCK_MS = "connector.start.block.ms"
CONNECTOR_STOP_BLOCK_MS = "connector.stop.block.ms"
CONNECTOR_VALIDATE_BLOCK_MS = "connector.validate.block.ms"
CONNECTOR_START_BLOCK_FILE = "connector.start.block.until.file"
CONNECTOR_STOP_BLOCK_FILE = "connector.stop.block.until.file"
CONNECTOR_VALIDATE_BLOCK_FILE = "connector.validate.block.until.file"
CONNECTOR_STARTS_FILE = "connector.starts.file"
TASK_START_FAIL = "task.start.fail"
TASK_FAIL_AFTER_RECORDS = "task.fail.after.records"
TASK_FAIL_TIMES = "task.fail.times"
TASK_STOP_BLOCK_MS = "task.stop.block.ms"
TASK_START_BLOCK_MS = "task.start.block.ms"
ALTER_OFFSETS = "alter.offsets"

TOPIC_CONFIG = "topic"
MESSAGES_PER_TASK_CONFIG = "messages.per.task"
THROUGHPUT_CONFIG = "throughput"
BATCH_SIZE_CONFIG = "batch.size"
OWN_PARTITION_CONFIG = "task.own.partition"
TRANSACTION_RECORDS_CONFIG = "transaction.every.records"
TRANSACTION_ABORT_CONFIG = "transaction.abort.every"
OUTPUT_FILE_CONFIG = "output.file"
RECORD_SCHEMAS_CONFIG = "record.schemas"

TASK_ID_FIELD = "task.id"
SAVED_FIELD = "saved"

SEQUENCE_VALUE_SCHEMA = (
    SchemaBuilder.struct()
    .name("runtime.testing.Sequence")
    .field("task", INT32_SCHEMA)
    .field("seqno", INT64_SCHEMA)
    .build()
)

# Throttling and idle waits sleep in slices this long, so stop() is honoured promptly.
SLEEP_SLICE_S = 0.05
# poll() returns None after waiting this long when the task may produce nothing now (as Kafka's
# FileStreamSource waits 1 s); the runtime's wake-up (a stop, pause or resume) ends the wait at once.
IDLE_WAIT_S = 1.0
# A finished sequence whose records are all committed has nothing left to do until the runtime wakes it
# (stop, pause, resume): it waits this long instead, so thousands of finished tasks cost no wake-ups
# (each Python thread that wakes costs about 15 µs of CPU). Finite only as a safety net.
FINISHED_WAIT_S = 60.0
# A throttled poll waits at most this long for its next record before returning None.
THROTTLE_MAX_WAIT_S = 1.0

_FAULTS_GROUP = "Fault injection"


def _define_faults(definition: ConfigDef) -> ConfigDef:
    g = _FAULTS_GROUP
    return (
        definition.define(
            CONNECTOR_START_FAIL,
            Type.BOOLEAN,
            False,
            None,
            Importance.LOW,
            "If true, the connector's start() raises an error.",
            g,
            1,
        )
        .define(
            CONNECTOR_STOP_FAIL,
            Type.BOOLEAN,
            False,
            None,
            Importance.LOW,
            "If true, the connector's stop() raises an error.",
            g,
            2,
        )
        .define(
            CONNECTOR_START_BLOCK_MS,
            Type.LONG,
            0,
            Range.at_least(0),
            Importance.LOW,
            "Milliseconds the connector's start() sleeps before returning.",
            g,
            3,
        )
        .define(
            CONNECTOR_STOP_BLOCK_MS,
            Type.LONG,
            0,
            Range.at_least(0),
            Importance.LOW,
            "Milliseconds the connector's stop() sleeps before returning.",
            g,
            3,
        )
        .define(
            CONNECTOR_VALIDATE_BLOCK_MS,
            Type.LONG,
            0,
            Range.at_least(0),
            Importance.LOW,
            "Milliseconds the connector's validate() sleeps before validating.",
            g,
            3,
        )
        .define(
            CONNECTOR_START_BLOCK_FILE,
            Type.STRING,
            "",
            None,
            Importance.LOW,
            "A file the connector's start() waits for before it goes on (empty: no wait).",
            g,
            3,
        )
        .define(
            CONNECTOR_STOP_BLOCK_FILE,
            Type.STRING,
            "",
            None,
            Importance.LOW,
            "A file the connector's stop() waits for before it goes on (empty: no wait).",
            g,
            3,
        )
        .define(
            CONNECTOR_VALIDATE_BLOCK_FILE,
            Type.STRING,
            "",
            None,
            Importance.LOW,
            "A file the connector's validate() waits for before it validates (empty: no wait).",
            g,
            3,
        )
        .define(
            CONNECTOR_STARTS_FILE,
            Type.STRING,
            "",
            None,
            Importance.LOW,
            "A file the connector's start() appends a line to each time it is called (empty: none).",
            g,
            3,
        )
        .define(
            TASK_START_FAIL,
            Type.LIST,
            "",
            None,
            Importance.LOW,
            "Tasks whose start() raises an error: task indexes (e.g. '0,2'), full task ids "
            "('<connector>-<index>'), or 'all'.",
            g,
            4,
        )
        .define(
            TASK_FAIL_AFTER_RECORDS,
            Type.LONG,
            -1,
            Range.at_least(-1),
            Importance.LOW,
            "Each task instance handles exactly this many records, then raises an error when asked for "
            "more (-1 = never).",
            g,
            5,
        )
        .define(
            TASK_FAIL_TIMES,
            Type.LONG,
            -1,
            Range.at_least(-1),
            Importance.LOW,
            "How many instances of each task fail by task.fail.after.records; later instances (after a "
            "restart) run on without failing (-1 = every instance). Counted per worker process.",
            g,
            5,
        )
        .define(
            TASK_STOP_BLOCK_MS,
            Type.LONG,
            0,
            Range.at_least(0),
            Importance.LOW,
            "Milliseconds a task's stop() blocks before returning.",
            g,
            6,
        )
        .define(
            TASK_START_BLOCK_MS,
            Type.LONG,
            0,
            Range.at_least(0),
            Importance.LOW,
            "Milliseconds a task's start() blocks before returning (the task is not RUNNING until then).",
            g,
            6,
        )
        .define(
            ALTER_OFFSETS,
            Type.STRING,
            "false",
            ValidString.of("true", "false", "unsupported", "error", case_insensitive=True),
            Importance.LOW,
            "What the alter_offsets hook does: 'true' (the connector applied the change itself), "
            "'false' (the runtime manages the offsets), 'unsupported' (offsets may not be modified) or "
            "'error' (the hook fails).",
            g,
            7,
        )
    )


SEQUENCE_CONFIG_DEF = _define_faults(
    ConfigDef()
    .define(
        TOPIC_CONFIG,
        Type.STRING,
        validator=NonEmptyString(),
        importance=Importance.HIGH,
        documentation="The topic the sequence records are written to.",
        group="Sequence",
        order_in_group=1,
    )
    .define(
        MESSAGES_PER_TASK_CONFIG,
        Type.LONG,
        -1,
        Range.at_least(-1),
        Importance.MEDIUM,
        "Each task stops producing once its sequence number reaches this count (-1 = unlimited).",
        "Sequence",
        2,
    )
    .define(
        THROUGHPUT_CONFIG,
        Type.LONG,
        -1,
        Range.at_least(-1),
        Importance.MEDIUM,
        "Maximum records per second per task (-1 = unthrottled).",
        "Sequence",
        3,
    )
    .define(
        BATCH_SIZE_CONFIG,
        Type.INT,
        1000,
        Range.at_least(1),
        Importance.LOW,
        "Maximum number of records returned by one poll.",
        "Sequence",
        4,
    )
    .define(
        OWN_PARTITION_CONFIG,
        Type.BOOLEAN,
        False,
        None,
        Importance.LOW,
        "Write task i's records to Kafka partition i (the topic needs tasks.max partitions) instead of "
        "partitioning by key, so that each partition has a single producer.",
        "Sequence",
        5,
    )
    .define(
        TRANSACTION_RECORDS_CONFIG,
        Type.LONG,
        0,
        Range.at_least(0),
        Importance.LOW,
        "With transaction.boundary=connector on an exactly-once worker: each transaction holds this many "
        "consecutive seqnos, from a multiple of it (0: the connector defines no boundaries).",
        "Sequence",
        6,
    )
    .define(
        TRANSACTION_ABORT_CONFIG,
        Type.LONG,
        0,
        Range.at_least(0),
        Importance.LOW,
        "With transaction.every.records: abort every transaction whose number (seqno // records + 1) is a "
        "multiple of this, instead of committing it (0: never).",
        "Sequence",
        7,
    )
)

RECORDING_CONFIG_DEF = _define_faults(
    ConfigDef()
    .define(
        OUTPUT_FILE_CONFIG,
        Type.STRING,
        validator=NonEmptyString(),
        importance=Importance.HIGH,
        documentation="File every record is appended to, one JSON line "
        '{"topic", "partition", "offset", "key", "value"} per record; bytes are base64.',
        group="Recording",
        order_in_group=1,
    )
    .define(
        RECORD_SCHEMAS_CONFIG,
        Type.BOOLEAN,
        False,
        importance=Importance.LOW,
        documentation='Also write each value\'s schema ("value_schema", as JsonConverter writes schemas).',
        group="Recording",
        order_in_group=2,
    )
)


class Faults:
    """The parsed fault knobs, with the actions they trigger."""

    def __init__(self, config: AbstractConfig, owner: str, clock: Clock) -> None:
        self.owner = owner
        self._clock = clock
        self.connector_start_fail: bool = config.get_bool(CONNECTOR_START_FAIL)
        self.connector_stop_fail: bool = config.get_bool(CONNECTOR_STOP_FAIL)
        self.connector_start_block_ms: int = config.get_int(CONNECTOR_START_BLOCK_MS)
        self.connector_stop_block_ms: int = config.get_int(CONNECTOR_STOP_BLOCK_MS)
        self.connector_start_block_file: str = config.get_str(CONNECTOR_START_BLOCK_FILE) or ""
        self.connector_stop_block_file: str = config.get_str(CONNECTOR_STOP_BLOCK_FILE) or ""
        self.connector_starts_file: str = config.get_str(CONNECTOR_STARTS_FILE) or ""
        self.task_start_fail: list[str] = config.get_list(TASK_START_FAIL)
        self.task_fail_after_records: int = config.get_int(TASK_FAIL_AFTER_RECORDS)
        self.task_fail_times: int = config.get_int(TASK_FAIL_TIMES)
        self.task_stop_block_ms: int = config.get_int(TASK_STOP_BLOCK_MS)
        self.task_start_block_ms: int = config.get_int(TASK_START_BLOCK_MS)

    def on_connector_start(self) -> None:
        if self.connector_starts_file:
            with open(self.connector_starts_file, "a") as starts:
                starts.write(f"{self.owner}.start()\n")
        if self.connector_start_block_ms > 0:
            self._clock.sleep(self.connector_start_block_ms / 1000)
        _wait_for_file(self.connector_start_block_file, f"{self.owner}.start()", self._clock)
        if self.connector_start_fail:
            raise ConnectError(f"Injected failure: {CONNECTOR_START_FAIL}=true made {self.owner}.start() fail")

    def on_connector_stop(self) -> None:
        if self.connector_stop_block_ms > 0:
            self._clock.sleep(self.connector_stop_block_ms / 1000)
        _wait_for_file(self.connector_stop_block_file, f"{self.owner}.stop()", self._clock)
        if self.connector_stop_fail:
            raise ConnectError(f"Injected failure: {CONNECTOR_STOP_FAIL}=true made {self.owner}.stop() fail")

    def on_task_start(self, connector: str, index: int) -> None:
        if self.task_start_block_ms > 0:
            self._clock.sleep(self.task_start_block_ms / 1000)
        task_id = f"{connector}-{index}"
        chosen = {entry.strip() for entry in self.task_start_fail}
        if "all" in chosen or str(index) in chosen or task_id in chosen:
            raise ConnectError(
                f"Injected failure: {TASK_START_FAIL}={','.join(self.task_start_fail)} "
                f"made task {task_id} fail to start"
            )

    def records_allowed(self, handled: int, wanted: int, task_id: str) -> int:
        """How many of `wanted` more records a task that has handled `handled` may take; raises at the limit."""
        limit = self.task_fail_after_records
        if limit < 0 or 0 <= self.task_fail_times <= _injected_failures(task_id):
            return wanted
        if handled >= limit and wanted > 0:
            _injected_failures(task_id, add=1)
            raise ConnectError(
                f"Injected failure: {TASK_FAIL_AFTER_RECORDS}={limit} made task {task_id} fail after {handled} records"
            )
        return min(wanted, limit - handled)

    def on_task_stop(self) -> None:
        if self.task_stop_block_ms > 0:
            self._clock.sleep(self.task_stop_block_ms / 1000)


def _wait_for_file(path: str, what: str, clock: Clock) -> None:
    """Block until `path` exists, a gate the test opens by creating it (nothing to wait for when empty)."""
    if not path:
        return
    log.info("%s waits until %s exists", what, path)
    while not os.path.exists(path):
        clock.sleep(SLEEP_SLICE_S)


_FAILURES_LOCK = threading.Lock()
_FAILURES: dict[str, int] = {}  # task id -> instances failed by task.fail.after.records, in this process


def _injected_failures(task_id: str, add: int = 0) -> int:
    with _FAILURES_LOCK:
        _FAILURES[task_id] = _FAILURES.get(task_id, 0) + add
        return _FAILURES[task_id]


def _block_in_validate(connector_configs: dict[str, str], clock: Clock) -> None:
    """connector.validate.block.ms and .block.until.file: validate() waits first (an unparsable value is
    left to validation)."""
    try:
        delay_ms = int(connector_configs.get(CONNECTOR_VALIDATE_BLOCK_MS, "0"))
    except ValueError:
        delay_ms = 0
    if delay_ms > 0:
        clock.sleep(delay_ms / 1000)
    _wait_for_file(connector_configs.get(CONNECTOR_VALIDATE_BLOCK_FILE, ""), "validate()", clock)


def _alter_offsets_answer(connector_config: dict[str, str], definition: ConfigDef, owner: str) -> bool:
    mode = str(AbstractConfig(definition, connector_config).get(ALTER_OFFSETS)).lower()
    if mode == "true":
        return True
    if mode == "unsupported":
        raise UnsupportedOperationError(f"{owner} does not support modifying offsets ({ALTER_OFFSETS}=unsupported)")
    if mode == "error":
        raise ConnectError(f"Injected failure: {ALTER_OFFSETS}=error made {owner}.alter_offsets() fail")
    return False


def _task_configs(props: dict[str, str], max_tasks: int) -> list[dict[str, str]]:
    return [{**props, TASK_INDEX_CONFIG: str(i)} for i in range(max_tasks)]


def _task_identity(props: dict[str, str], default_name: str) -> tuple[str, int]:
    try:
        index = int(props.get(TASK_INDEX_CONFIG, "0"))
    except ValueError:
        raise ConnectError(f"Invalid {TASK_INDEX_CONFIG}: {props.get(TASK_INDEX_CONFIG)!r}") from None
    return props.get("name") or default_name, index


# ---- the connectors' shared lifecycle, with the fault knobs -----------------------------------------


class _FaultyConnector:
    """start/stop/task_configs/validate/config of both testing connectors (fault knobs included)."""

    definition: ConfigDef

    def __init__(self, clock: Clock = SYSTEM_CLOCK) -> None:
        self._clock = clock  # what the delay knobs sleep on (a test's clock measures them)

    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(self.definition, props)
        self._faults = Faults(config, type(self).__name__, self._clock)
        self._props = dict(props)
        self._faults.on_connector_start()

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return _task_configs(self._props, max_tasks)

    def stop(self) -> None:
        faults = getattr(self, "_faults", None)
        if faults is not None:
            faults.on_connector_stop()

    def validate(self, connector_configs: dict[str, str]) -> list[ConfigValue]:
        _block_in_validate(connector_configs, self._clock)
        return self.config().validate(connector_configs)

    def config(self) -> ConfigDef:
        return self.definition


# ---- SequenceSource -----------------------------------------------------------------------------


class SequenceSourceConnector(_FaultyConnector, SourceConnector):
    """Each task produces its own numbered sequence, resumable from the committed offset."""

    definition = SEQUENCE_CONFIG_DEF

    def task_class(self) -> type[Task]:
        return SequenceSourceTask

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport:
        # The sequence is a pure function of the committed offset, so replays are exact.
        return ExactlyOnceSupport.SUPPORTED

    def can_define_transaction_boundaries(self, connector_config: dict[str, str]) -> ConnectorTransactionBoundaries:
        records = AbstractConfig(SEQUENCE_CONFIG_DEF, connector_config).get_int(TRANSACTION_RECORDS_CONFIG)
        return ConnectorTransactionBoundaries.SUPPORTED if records > 0 else ConnectorTransactionBoundaries.UNSUPPORTED

    def alter_offsets(
        self, connector_config: dict[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        return _alter_offsets_answer(connector_config, SEQUENCE_CONFIG_DEF, type(self).__name__)


class _SequenceOffsets(Sequence[dict[str, int]]):
    """The source offsets of `count` records from seqno `first` ({"saved": seqno + 1}), built when read."""

    __slots__ = ("first", "length")  # not `count`: Sequence.count() is a method

    def __init__(self, first: int, length: int) -> None:
        self.first, self.length = first, length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.length))]
        if index < 0:
            index += self.length
        if not 0 <= index < self.length:
            raise IndexError("offset index out of range")
        return {SAVED_FIELD: self.first + index + 1}


class SequenceSourceTask(SourceTask):
    def __init__(self, clock: Clock = SYSTEM_CLOCK) -> None:
        self._clock = clock  # the throughput cap's and the idle waits' (a test's clock asserts the pacing)
        self._stopping = threading.Event()
        self._wake = threading.Event()  # ends an idle wait (the runtime's wake-up, or stop())
        self._uncommitted = False  # records were polled since the runtime's last offset commit

    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(SEQUENCE_CONFIG_DEF, props)
        self._faults = Faults(config, type(self).__name__, self._clock)
        connector, self.index = _task_identity(props, "sequence")
        self.task_id = f"{connector}-{self.index}"
        self._faults.on_task_start(connector, self.index)
        self.topic: str = config.get_str(TOPIC_CONFIG) or ""
        self.limit: int = config.get_int(MESSAGES_PER_TASK_CONFIG)
        self.throughput: int = config.get_int(THROUGHPUT_CONFIG)
        self.batch_size: int = config.get_int(BATCH_SIZE_CONFIG)
        self.kafka_partition: int | None = self.index if config.get_bool(OWN_PARTITION_CONFIG) else None
        # connector-defined transactions: only when the runtime gives a transaction context
        self.transactions = self.context.transaction_context()
        self.transaction_records: int = config.get_int(TRANSACTION_RECORDS_CONFIG) if self.transactions else 0
        self.abort_every: int = config.get_int(TRANSACTION_ABORT_CONFIG)
        self._partition = {TASK_ID_FIELD: self.task_id}
        offset = self.context.offset_storage_reader.offset(self._partition)
        saved = offset.get(SAVED_FIELD) if offset else None
        if saved is not None and (not isinstance(saved, int) or isinstance(saved, bool) or saved < 0):
            raise ConnectError(f"Committed offset of {self.task_id} has an invalid '{SAVED_FIELD}' value: {saved!r}")
        self.seqno: int = saved or 0  # the next sequence number
        self.produced = 0  # by this instance, for throttling and task.fail.after.records
        self._started_at: float | None = None  # set by the first poll, so a slow worker start adds no burst
        self._stopping.clear()
        self._wake.clear()
        self._uncommitted = False
        log.info("Sequence task %s starting at seqno %d", self.task_id, self.seqno)

    def _throttled_count(self, wanted: int) -> int:
        """How many records the throughput cap allows now, waiting (in slices) for at least one."""
        if self.throughput <= 0:
            return wanted
        deadline = self._clock.monotonic() + THROTTLE_MAX_WAIT_S
        if self._started_at is None:
            self._started_at = self._clock.monotonic()
        while not self._stopping.is_set():
            now = self._clock.monotonic()
            # +1: the first record of an instance goes out at once.
            allowed = int((now - self._started_at) * self.throughput) + 1 - self.produced
            if allowed > 0:
                return min(wanted, allowed)
            if now >= deadline:
                return 0
            wait = self.produced / self.throughput - (now - self._started_at)
            self._clock.wait(self._stopping, min(max(wait, 0.001), SLEEP_SLICE_S))
        return 0

    def poll(self) -> SourceRecordBatch | None:
        if self._stopping.is_set():
            return None
        wanted = self.batch_size
        if self.limit >= 0:
            wanted = min(wanted, self.limit - self.seqno)
            if wanted <= 0:
                # finished: wake once a second (for the runtime's offset commit) until it has committed
                # everything this instance produced, then until woken
                self._clock.wait(self._wake, IDLE_WAIT_S if self._uncommitted else FINISHED_WAIT_S)
                self._wake.clear()
                return None
        if self.transaction_records:  # a batch ends where a transaction does
            wanted = min(wanted, self.transaction_records - self.seqno % self.transaction_records)
        wanted = self._faults.records_allowed(self.produced, wanted, self.task_id)
        count = self._throttled_count(wanted)
        if count <= 0:
            return None
        first = self.seqno
        self.seqno = first + count
        self.produced += count
        self._uncommitted = True
        if self.transactions is not None and self.transaction_records and self.seqno % self.transaction_records == 0:
            number = self.seqno // self.transaction_records  # of the transaction this batch ends, from 1
            if self.abort_every and number % self.abort_every == 0:
                self.transactions.abort_transaction()
            else:
                self.transactions.commit_transaction()
        index = self.index
        # columns rather than records: the runtime sends them without a SourceRecord per message
        return SourceRecordBatch(
            self._partition,
            _SequenceOffsets(first, count),
            self.topic,
            [{"task": index, "seqno": n} for n in range(first, first + count)],
            self.task_id,
            STRING_SCHEMA,
            SEQUENCE_VALUE_SCHEMA,
            self.kafka_partition,
        )

    def commit(self) -> None:
        """The runtime committed the offsets of every record polled before this call."""
        self._uncommitted = False

    def _connect_wakeup(self) -> None:
        """The runtime needs the task thread (runtime/worker/task_runner.py WAKEUP_HOOK): end an idle wait."""
        self._wake.set()

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()
        faults = getattr(self, "_faults", None)
        if faults is not None:
            faults.on_task_stop()


# ---- RecordingSink ------------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    """orjson's fallback for values it cannot encode natively."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    return str(value)


_JSON_OPTIONS = orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS


def record_line(record: SinkRecord, schemas: JsonConverter | None = None) -> bytes:
    """The JSON line RecordingSink writes for one record (with its value schema when given `schemas`)."""
    line = {
        "topic": record.topic,
        "partition": record.kafka_partition,
        "offset": record.kafka_offset,
        "key": record.key,
        "value": record.value,
    }
    if schemas is not None:
        line["value_schema"] = schemas.as_json_schema(record.value_schema)
    return orjson.dumps(line, default=_jsonable, option=_JSON_OPTIONS)


def batch_lines(batch: SinkRecordBatch) -> bytes:
    """record_line for every record of a batch without transforms, read from its columns (no SinkRecords)."""
    dumps = orjson.dumps
    return b"".join(
        [
            dumps(
                {"topic": t, "partition": p, "offset": o, "key": k, "value": v}, default=_jsonable, option=_JSON_OPTIONS
            )
            for t, p, o, k, v in zip(
                batch.topics(), batch.partitions(), batch.offsets(), batch.keys, batch.values, strict=True
            )
        ]
    )


class RecordingSinkConnector(_FaultyConnector, SinkConnector):
    """Records everything its tasks receive into one JSON-lines file."""

    definition = RECORDING_CONFIG_DEF

    def task_class(self) -> type[Task]:
        return RecordingSinkTask

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[TopicPartition, int | None]) -> bool:
        return _alter_offsets_answer(connector_config, RECORDING_CONFIG_DEF, type(self).__name__)


class RecordingSinkTask(SinkTask):
    def __init__(self, clock: Clock = SYSTEM_CLOCK) -> None:
        self._clock = clock  # what the delay knobs sleep on
        self._fd: int | None = None
        self._lock = threading.Lock()

    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(RECORDING_CONFIG_DEF, props)
        self._faults = Faults(config, type(self).__name__, self._clock)
        connector, index = _task_identity(props, "recording")
        self.task_id = f"{connector}-{index}"
        self._faults.on_task_start(connector, index)
        self.path: str = config.get_str(OUTPUT_FILE_CONFIG) or ""
        # a converter of its own per task: the schema JSON exactly as Kafka's JsonConverter writes it
        self.schemas = JsonConverter() if config.get(RECORD_SCHEMAS_CONFIG) else None
        self.received = 0  # by this instance, for task.fail.after.records
        try:
            # O_APPEND makes each write land at the end even when several tasks share the file.
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise ConnectError(f"Couldn't open or create '{self.path}' for {type(self).__name__}: {exc}") from exc

    def put(self, records: Sequence[SinkRecord]) -> None:
        if not records:
            return
        allowed = self._faults.records_allowed(self.received, len(records), self.task_id)
        accepted = records[:allowed] if allowed < len(records) else records
        if isinstance(accepted, SinkRecordBatch) and self.schemas is None:
            self._write(batch_lines(accepted))
        else:
            self._write(b"".join([record_line(r, self.schemas) for r in accepted]))
        self.received += len(accepted)
        if len(accepted) < len(records):
            # Consistent with the source: exactly N records are handled, then the task fails.
            self._faults.records_allowed(self.received, len(records) - len(accepted), self.task_id)

    def _write(self, data: bytes) -> None:
        with self._lock:
            if self._fd is None:
                raise ConnectError(f"{type(self).__name__} {self.task_id} is stopped")
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        # put() hands every batch to the OS before returning, so nothing is buffered here.
        pass

    def stop(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
        faults = getattr(self, "_faults", None)
        if faults is not None:
            faults.on_task_stop()
