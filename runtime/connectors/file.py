"""FileStream connectors: the Python twins of Apache Kafka's connect-file plugins.

Same configs, offsets and behaviour as Kafka's FileStreamSourceConnector / FileStreamSinkConnector:
- source: `file` (stdin when unset or empty), `topic`, `batch.size` (default 2000). One task. Each line
  becomes a record with a null key and a STRING value; source partition `{"filename": <file>}`, offset
  `{"position": <byte offset just past the line and its terminator>}`. Lines end at `\\n`, `\\r\\n` or a
  lone `\\r` (a trailing `\\r` waits for the next byte, as Kafka does); an unterminated last line is not
  emitted until its terminator arrives. On start the task resumes from its committed position.
  One deliberate refinement: positions are counted in bytes (Kafka counts decoded chars but seeks in
  bytes, which only agree for ASCII input).
- sink: `file` (stdout when unset or empty); writes each record's value on its own line (append mode),
  flushes on `flush()`.
Both `alter_offsets` hooks answer True (the 3.9 behaviour), the source after validating the offsets.
"""

from __future__ import annotations

import json
import logging
import os
import re
import select
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from ..api import (
    AbstractConfig,
    ConfigDef,
    ConnectError,
    ExactlyOnceSupport,
    Importance,
    NonEmptyString,
    SinkConnector,
    SinkRecord,
    SinkTask,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Task,
    Type,
)
from ..api.data import STRING_SCHEMA
from ..api.records import SinkRecordBatch, TopicPartition
from ..clock import SYSTEM_CLOCK, Clock
from ..version import KAFKA_COMPAT_VERSION
from .file_growth import GrowthWatcher

log = logging.getLogger(__name__)

FILE_CONFIG = "file"
TOPIC_CONFIG = "topic"
TASK_BATCH_SIZE_CONFIG = "batch.size"
DEFAULT_TASK_BATCH_SIZE = 2000

FILENAME_FIELD = "filename"
POSITION_FIELD = "position"

# Bytes read per system call: large reads keep the per-line cost low on big files.
READ_CHUNK = 1 << 20
# How soon new data is seen: a waiting task's file is checked this often for growth (by one thread for
# all tasks: file_growth.py; stdin by the task itself). Kafka's task reads again after 1 s.
IDLE_WAIT_S = 0.5
# A task waiting for its file to grow, with every line it read committed by the runtime, waits at most this
# long on its own (a safety net): the growth watcher, or the runtime's wake-up for a stop or pause, ends
# the wait. With lines not yet committed it returns after IDLE_WAIT_S, so the runtime's loop can commit.
WATCHED_WAIT_S = 30.0
_GROWTH = GrowthWatcher(lambda: IDLE_WAIT_S)

SOURCE_CONFIG_DEF = (
    ConfigDef()
    .define(
        FILE_CONFIG,
        Type.STRING,
        None,
        None,
        Importance.HIGH,
        "Source filename. If not specified, the standard input will be used",
    )
    .define(
        TOPIC_CONFIG,
        Type.STRING,
        validator=NonEmptyString(),
        importance=Importance.HIGH,
        documentation="The topic to publish data to",
    )
    .define(
        TASK_BATCH_SIZE_CONFIG,
        Type.INT,
        DEFAULT_TASK_BATCH_SIZE,
        None,
        Importance.LOW,
        "The maximum number of records the source task can read from the file each time it is polled",
    )
)

SINK_CONFIG_DEF = ConfigDef().define(
    FILE_CONFIG,
    Type.STRING,
    None,
    None,
    Importance.HIGH,
    "Destination filename. If not specified, the standard output will be used",
)

# One line terminator, longest first so that CRLF counts once.
_TERMINATOR = re.compile(rb"(\r\n|\r|\n)")


class FastSourceRecord(SourceRecord):
    """A SourceRecord built with a single Python call: record creation dominates the hot path."""

    __slots__ = ()

    def __init__(
        self,
        source_partition: dict[str, Any] | None,
        source_offset: dict[str, Any] | None,
        topic: str,
        key: Any,
        value: Any,
        key_schema: Any,
        value_schema: Any,
    ) -> None:
        self.source_partition = source_partition
        self.source_offset = source_offset
        self.topic = topic
        self.kafka_partition = None
        self.key = key
        self.value = value
        self.key_schema = key_schema
        self.value_schema = value_schema
        self.timestamp = None
        self.headers = None

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in sorted(_slots(SourceRecord)))
        return f"SourceRecord({fields})"


def _slots(cls: type) -> set[str]:
    return {slot for klass in cls.__mro__ for slot in getattr(klass, "__slots__", ())}


def _plain_record(
    source_partition: dict[str, Any] | None,
    source_offset: dict[str, Any] | None,
    topic: str,
    key: Any,
    value: Any,
    key_schema: Any,
    value_schema: Any,
) -> SourceRecord:
    return SourceRecord(source_partition, source_offset, topic, None, key, value, key_schema, value_schema)


# Should the API's record grow a field, fall back to its own constructor rather than leave it unset.
make_record: Callable[[dict[str, Any] | None, dict[str, Any] | None, str, Any, Any, Any, Any], SourceRecord] = (
    _plain_record
)
if _slots(SourceRecord) == {
    "topic",
    "kafka_partition",
    "key",
    "value",
    "key_schema",
    "value_schema",
    "timestamp",
    "headers",
    "source_partition",
    "source_offset",
}:
    make_record = FastSourceRecord


def _is_long(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class FileStreamSourceConnector(SourceConnector):
    """Reads lines from a file (or stdin) into one topic, with a single task."""

    def version(self) -> str:
        return KAFKA_COMPAT_VERSION  # a port of Apache Kafka 3.9's connect-file, shown as that version

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)
        filename = AbstractConfig(SOURCE_CONFIG_DEF, props).get_str(FILE_CONFIG)
        log.info("Starting file source connector reading from %s", filename or "standard input")

    def task_class(self) -> type[Task]:
        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        # Only one input stream makes sense.
        return [dict(self._props)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return SOURCE_CONFIG_DEF

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport:
        # Exactly once holds for a real, append-only file; stdin offsets are not even tracked.
        filename = AbstractConfig(SOURCE_CONFIG_DEF, connector_config).get_str(FILE_CONFIG)
        return ExactlyOnceSupport.SUPPORTED if filename else ExactlyOnceSupport.UNSUPPORTED

    def alter_offsets(
        self, connector_config: dict[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        filename = AbstractConfig(SOURCE_CONFIG_DEF, connector_config).get_str(FILE_CONFIG)
        if not filename:
            raise ConnectError(
                f"Offsets cannot be modified if the '{FILE_CONFIG}' configuration is unspecified. "
                "This is because stdin is used for input and offsets are not tracked."
            )
        # Checks in Kafka's order; tombstones are always allowed so that garbage can be cleaned up.
        for partition, offset in offsets:
            if offset is None:
                continue
            if POSITION_FIELD not in offset:
                raise ConnectError(f"Offset objects should either be null or contain the key '{POSITION_FIELD}'")
            position = offset[POSITION_FIELD]
            if not _is_long(position):
                raise ConnectError(
                    f"The value for the '{POSITION_FIELD}' key in the offset is expected to be a Long value"
                )
            if position < 0:
                raise ConnectError(
                    f"The value for the '{POSITION_FIELD}' key in the offset should be a non-negative value"
                )
            if partition is None:
                raise ConnectError("Partition objects cannot be null")
            if FILENAME_FIELD not in partition:
                raise ConnectError(f"Partition objects should contain the key '{FILENAME_FIELD}'")
        # The task checks on startup whether the position makes sense for the file.
        return True


class LineSplitter:
    """Splits a byte stream into complete lines, tracking the byte position after each one.

    `feed(data)` returns (lines, end_positions); an incomplete tail is kept until more data arrives.
    Positions are None when `position` is None (stdin: nothing is tracked).
    """

    def __init__(self, position: int | None) -> None:
        self.position = position
        self._pending = b""

    @property
    def pending_bytes(self) -> int:
        return len(self._pending)

    def feed(self, data: bytes) -> tuple[list[str], list[int] | None]:
        buf = self._pending + data if self._pending else data
        has_cr = b"\r" in buf
        # Lone '\r' terminators (or a final '\r' that may start a "\r\n") need the general splitter;
        # plain '\n' and CRLF files take the fast path below, which does all per-byte work in C.
        if has_cr and (buf.endswith(b"\r") or buf.count(b"\r") != buf.count(b"\r\n")):
            return self._split_general(buf)
        cut = buf.rfind(b"\n") + 1
        if cut == 0:
            self._pending = buf
            return [], ([] if self.position is not None else None)
        complete, self._pending = buf[:cut], buf[cut:]
        # '\n' and '\r' never occur inside a multi-byte UTF-8 sequence, so str and bytes split alike.
        text = complete.decode("utf-8", "replace")
        if has_cr:
            text = text.replace("\r\n", "\n")
        lines = text.split("\n")
        lines.pop()  # the empty string after the last terminator
        if self.position is None:
            return lines, None
        if not has_cr and complete.isascii():
            sizes = [len(line) + 1 for line in lines]
        else:
            sizes = [len(part) + 1 for part in complete.split(b"\n")]
            sizes.pop()
        return lines, self._advance(sizes)

    def _split_general(self, buf: bytes) -> tuple[list[str], list[int] | None]:
        # A final '\r' may be the first half of '\r\n': hold it back until the next byte is known.
        work = buf[:-1] if buf.endswith(b"\r") else buf
        parts = _TERMINATOR.split(work)
        self._pending = parts[-1] + buf[len(work) :]
        raw_lines = parts[0:-1:2]
        lines = [raw.decode("utf-8", "replace") for raw in raw_lines]
        if self.position is None:
            return lines, None
        sizes = [len(raw) + len(sep) for raw, sep in zip(raw_lines, parts[1::2], strict=False)]
        return lines, self._advance(sizes)

    def _advance(self, sizes: list[int]) -> list[int]:
        ends: list[int] = []
        position = self.position
        assert position is not None
        append = ends.append
        for size in sizes:
            position += size
            append(position)
        self.position = position
        return ends


class FileStreamSourceTask(SourceTask):
    """Reads a file (or stdin) in large chunks and emits each complete line as a record."""

    def version(self) -> str:
        return KAFKA_COMPAT_VERSION  # a port of Apache Kafka 3.9's connect-file, shown as that version

    def __init__(self, clock: Clock = SYSTEM_CLOCK) -> None:
        self._clock = clock  # the waits for data (a test's clock asserts them)
        self._stopping = threading.Event()
        self._wake = threading.Event()  # ends a wait for data (the runtime's wake-up, or stop())
        self._uncommitted = False  # lines were polled since the runtime's last offset commit
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._splitter: LineSplitter | None = None
        self._lines: list[str] = []
        self._ends: list[int] | None = None
        self._next = 0

    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(SOURCE_CONFIG_DEF, props)
        self.filename: str | None = config.get_str(FILE_CONFIG)
        self.topic: str = config.get_str(TOPIC_CONFIG) or ""
        # Kafka has no validator here and still returns one line per poll when batch.size < 1.
        self.batch_size: int = max(1, config.get_int(TASK_BATCH_SIZE_CONFIG))
        self._partition = {FILENAME_FIELD: self.filename}
        self._stopping.clear()
        self._wake.clear()
        self._uncommitted = False
        if not self.filename:
            # Tracking offsets for stdin makes no sense.
            self._fd = 0  # stdin; never closed by this task
            self._splitter = LineSplitter(None)

    def _open(self) -> bool:
        """Open the file at its committed position; False (after a wait) while the file does not exist."""
        assert self.filename
        try:
            fd = os.open(self.filename, os.O_RDONLY)
        except FileNotFoundError:
            log.warning(
                "Couldn't find file %s for FileStreamSourceTask, sleeping to wait for it to be created", self.filename
            )
            self._idle(1.0)
            return False
        except OSError as exc:
            raise ConnectError(f"Error while trying to open file {self.filename}: {exc}") from exc
        try:
            offset = self.context.offset_storage_reader.offset(self._partition)
            position = offset.get(POSITION_FIELD) if offset else None
            if position is not None and not _is_long(position):
                raise ConnectError("Offset position is the incorrect type")
            position = position or 0
            if position:
                log.debug("Found previous offset, skipping to file offset %d", position)
                os.lseek(fd, position, os.SEEK_SET)
        except BaseException:
            os.close(fd)
            raise
        with self._lock:
            if self._stopping.is_set():
                os.close(fd)
                return False
            self._fd = fd
        self._splitter = LineSplitter(position)
        return True

    def _read(self) -> bytes | None:
        """One chunk of new bytes; b'' at end of data; None once stopped."""
        fd = self._fd
        if fd is None:
            return None
        if not self.filename:
            # stdin may be a terminal or pipe: never block; poll() waits (interruptibly) instead.
            ready, _, _ = select.select([fd], [], [], 0)
            if not ready:
                return b""
        with self._lock:
            if self._fd is None:
                return None
            try:
                return os.read(self._fd, READ_CHUNK)
            except OSError as exc:
                if self._stopping.is_set():
                    return None
                raise ConnectError(f"Error while reading {self.filename or 'stdin'}: {exc}") from exc

    def poll(self) -> list[SourceRecord] | None:
        if self._stopping.is_set():
            return None
        if self._splitter is None and not self._open():
            return None
        while self._next >= len(self._lines):
            data = self._read()
            if data is None:
                return None
            if not data:
                self._await_data()
                return None
            assert self._splitter is not None
            lines, ends = self._splitter.feed(data)
            self._lines, self._ends, self._next = lines, ends, 0
        return self._batch()

    def _batch(self) -> list[SourceRecord]:
        self._uncommitted = True
        start = self._next
        stop = min(start + self.batch_size, len(self._lines))
        self._next = stop
        lines = self._lines[start:stop]
        partition, topic, make = self._partition, self.topic, make_record
        if self._ends is None:
            offset = {POSITION_FIELD: None}
            return [make(partition, offset, topic, None, line, None, STRING_SCHEMA) for line in lines]
        return [
            make(partition, {POSITION_FIELD: end}, topic, None, line, None, STRING_SCHEMA)
            for line, end in zip(lines, self._ends[start:stop], strict=False)
        ]

    def _await_data(self) -> None:
        """Wait until the file grows past what was read, the runtime wakes the task, or WATCHED_WAIT_S
        passes. stdin, and anything without a position (a named pipe), is polled every IDLE_WAIT_S."""
        fd = self._fd
        try:
            position = os.lseek(fd, 0, os.SEEK_CUR) if fd is not None and self.filename else None
        except OSError:
            position = None
        if fd is None or position is None:
            self._idle(IDLE_WAIT_S)
            return
        token = _GROWTH.watch(fd, position, self._wake)
        try:
            self._idle(IDLE_WAIT_S if self._uncommitted else WATCHED_WAIT_S)
        finally:
            _GROWTH.unwatch(token)

    def _idle(self, seconds: float) -> None:
        """Wait for new data; a wake-up that came since the last wait ends this one at once."""
        self._clock.wait(self._wake, seconds)
        self._wake.clear()

    def commit(self) -> None:
        """The runtime committed the offsets of every line polled before this call."""
        self._uncommitted = False

    def _connect_wakeup(self) -> None:
        """The runtime needs the task thread (a stop, a pause: runtime/worker/task_runner.py WAKEUP_HOOK),
        from another thread: end a wait for new data now. stop() follows on the task thread and closes the file."""
        self._wake.set()

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()
        with self._lock:
            fd, self._fd = self._fd, None
            if fd is not None and self.filename:
                try:
                    os.close(fd)
                except OSError as exc:  # pragma: no cover - closing a read-only fd hardly fails
                    log.error("Failed to close FileStreamSourceTask stream: %s", exc)


class FileStreamSinkConnector(SinkConnector):
    """Writes the values of records from its topics to a file (or stdout), one per line."""

    def version(self) -> str:
        return KAFKA_COMPAT_VERSION  # a port of Apache Kafka 3.9's connect-file, shown as that version

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)
        filename = AbstractConfig(SINK_CONFIG_DEF, props).get_str(FILE_CONFIG)
        log.info("Starting file sink connector writing to %s", filename or "standard output")

    def task_class(self) -> type[Task]:
        return FileStreamSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return SINK_CONFIG_DEF

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[TopicPartition, int | None]) -> bool:
        # Offsets are not managed externally and need no custom validation.
        return True


def format_value(value: Any) -> str:
    """A record value as one line of text: strings as they are, None as "null" (as Java's println),
    booleans as true/false, bytes decoded as UTF-8, maps and lists as JSON, anything else with str()."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, (dict, list)):
        return json.dumps(value, default=str, separators=(",", ":"))
    return str(value)


class FileStreamSinkTask(SinkTask):
    def version(self) -> str:
        return KAFKA_COMPAT_VERSION  # a port of Apache Kafka 3.9's connect-file, shown as that version

    def __init__(self) -> None:
        self._out: TextIO | None = None
        self._owns_out = False
        self.filename: str | None = None

    def start(self, props: dict[str, str]) -> None:
        self.filename = AbstractConfig(SINK_CONFIG_DEF, props).get_str(FILE_CONFIG)
        if not self.filename:
            self._out, self._owns_out = sys.stdout, False
            return
        try:
            # newline="" keeps '\n' as written, like Java's println on Linux.
            self._out = open(self.filename, "a", encoding="utf-8", newline="", buffering=1 << 16)
            self._owns_out = True
        except OSError as exc:
            raise ConnectError(f"Couldn't find or create file '{self.filename}' for FileStreamSinkTask") from exc

    def put(self, records: Sequence[SinkRecord]) -> None:
        if not records or self._out is None:
            return
        # One write per batch: the join is far cheaper than a write call per record. The batch reaches the
        # file before put returns, as the reference's unbuffered PrintStream writes each line through (a
        # reader tailing the file does not wait for the next offset commit).
        values = records.values if isinstance(records, SinkRecordBatch) else [r.value for r in records]
        try:
            text = "\n".join(values)  # the common case: every value is already a string
        except TypeError:
            text = "\n".join([format_value(v) for v in values])
        self._out.write(text + "\n")
        self._out.flush()

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        if self._out is not None:
            self._out.flush()

    def stop(self) -> None:
        out, self._out = self._out, None
        if out is not None and self._owns_out:
            out.close()
