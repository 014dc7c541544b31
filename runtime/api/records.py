"""Records that cross the boundary between the runtime and connector tasks."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple, Protocol, TypeVar, overload

from .data import Schema


class TopicPartition(NamedTuple):
    topic: str
    partition: int


class Header(NamedTuple):
    key: str
    value: Any
    schema: Schema | None = None


class ConnectRecord:
    """Fields shared by source and sink records. Slots keep the hot path cheap."""

    __slots__ = ("headers", "kafka_partition", "key", "key_schema", "timestamp", "topic", "value", "value_schema")

    def __init__(
        self,
        topic: str,
        kafka_partition: int | None,
        key: Any,
        value: Any,
        key_schema: Schema | None = None,
        value_schema: Schema | None = None,
        timestamp: int | None = None,
        headers: list[Header] | None = None,
    ) -> None:
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key = key
        self.value = value
        self.key_schema = key_schema
        self.value_schema = value_schema
        self.timestamp = timestamp
        self.headers = headers

    def __repr__(self) -> str:
        names = [n for cls in reversed(type(self).__mro__) for n in getattr(cls, "__slots__", ())]
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__name__}({fields})"

    def new_record(self, **changes: Any) -> ConnectRecord:
        """A copy with some fields replaced (transforms use this); source/sink fields are kept."""
        clone = object.__new__(type(self))
        for cls in type(self).__mro__:
            for name in getattr(cls, "__slots__", ()):
                setattr(clone, name, changes[name] if name in changes else getattr(self, name))
        unknown = set(changes) - {n for cls in type(self).__mro__ for n in getattr(cls, "__slots__", ())}
        if unknown:
            raise TypeError(f"unknown record fields: {sorted(unknown)}")
        return clone


class SourceRecord(ConnectRecord):
    """A record a source task produced, with the source partition and offset it came from.

    `source_partition` and `source_offset` are flat maps with string keys and primitive values;
    the runtime stores the offset once the broker has acknowledged the record.
    """

    __slots__ = ("source_offset", "source_partition")

    def __init__(
        self,
        source_partition: dict[str, Any] | None,
        source_offset: dict[str, Any] | None,
        topic: str,
        kafka_partition: int | None = None,
        key: Any = None,
        value: Any = None,
        key_schema: Schema | None = None,
        value_schema: Schema | None = None,
        timestamp: int | None = None,
        headers: list[Header] | None = None,
    ) -> None:
        # every slot assigned here rather than through super().__init__: records are built per message
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key = key
        self.value = value
        self.key_schema = key_schema
        self.value_schema = value_schema
        self.timestamp = timestamp
        self.headers = headers
        self.source_partition = source_partition
        self.source_offset = source_offset


class SourceRecordBatch(Sequence[SourceRecord]):
    """What a high-volume source task may return from `poll()` instead of a list: records of one source
    partition, sent to one topic (and partition) with one key and one pair of schemas, held as columns
    (the values, their source offsets and, optionally, their timestamps).

    Read as a sequence it is an ordinary list of SourceRecords, each built on demand, so transforms and
    the errors path see the records the task would have built. When nothing needs the records (no
    transforms), the runtime converts and sends the values straight from the column, which saves building
    a Python object per record, a large share of the cost of a fast source. Not in Kafka Connect's API.
    """

    __slots__ = (
        "kafka_partition",
        "key",
        "key_schema",
        "source_offsets",
        "source_partition",
        "timestamps",
        "topic",
        "value_schema",
        "values",
    )

    def __init__(
        self,
        source_partition: dict[str, Any] | None,
        source_offsets: Sequence[dict[str, Any] | None],
        topic: str,
        values: Sequence[Any],
        key: Any = None,
        key_schema: Schema | None = None,
        value_schema: Schema | None = None,
        kafka_partition: int | None = None,
        timestamps: Sequence[int | None] | None = None,
    ) -> None:
        if len(source_offsets) != len(values):
            raise ValueError(
                f"a source record batch needs one offset per value: {len(source_offsets)} offsets, {len(values)} values"
            )
        if timestamps is not None and len(timestamps) != len(values):
            raise ValueError(
                f"a source record batch needs one timestamp per value: {len(timestamps)} timestamps, {len(values)} values"
            )
        self.source_partition = source_partition
        self.source_offsets = source_offsets
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key = key
        self.values = values
        self.key_schema = key_schema
        self.value_schema = value_schema
        self.timestamps = timestamps  # None: no record has one

    def __len__(self) -> int:
        return len(self.values)

    def _record(self, i: int) -> SourceRecord:
        return SourceRecord(
            self.source_partition,
            self.source_offsets[i],
            self.topic,
            self.kafka_partition,
            self.key,
            self.values[i],
            self.key_schema,
            self.value_schema,
            None if self.timestamps is None else self.timestamps[i],
        )

    @overload
    def __getitem__(self, index: int) -> SourceRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[SourceRecord]: ...

    def __getitem__(self, index: int | slice) -> SourceRecord | list[SourceRecord]:
        if isinstance(index, slice):
            return [self._record(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("source record batch index out of range")
        return self._record(index)

    def __iter__(self) -> Iterator[SourceRecord]:
        return (self._record(i) for i in range(len(self)))

    def __repr__(self) -> str:
        return f"SourceRecordBatch(topic={self.topic!r}, partition={self.source_partition!r}, records={len(self)})"


class SinkRecord(ConnectRecord):
    """A record consumed from Kafka and handed to a sink task's `put`."""

    __slots__ = ("kafka_offset", "timestamp_type")
    kafka_partition: int  # a consumed record always has its partition

    def __init__(
        self,
        topic: str,
        kafka_partition: int,
        key: Any,
        value: Any,
        kafka_offset: int,
        key_schema: Schema | None = None,
        value_schema: Schema | None = None,
        timestamp: int | None = None,
        timestamp_type: str = "CreateTime",
        headers: list[Header] | None = None,
    ) -> None:
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key = key
        self.value = value
        self.key_schema = key_schema
        self.value_schema = value_schema
        self.timestamp = timestamp
        self.headers = headers
        self.kafka_offset = kafka_offset
        self.timestamp_type = timestamp_type


# librdkafka's timestamp type codes (a consumed message's timestamp()[0]) as Kafka Connect names them
TIMESTAMP_TYPES = {0: "NoTimestampType", 1: "CreateTime", 2: "LogAppendTime"}


class ConsumedMessage(Protocol):
    """What SinkRecordBatch reads of a consumed message (confluent-kafka's Message has these)."""

    def topic(self) -> str | None: ...
    def partition(self) -> int | None: ...
    def offset(self) -> int | None: ...
    def timestamp(self) -> tuple[int, int]: ...


_T = TypeVar("_T")


def _consumed(value: _T | None) -> _T:
    """A consumed message's topic, partition or offset: confluent-kafka's Message leaves them None only on
    error events, which the consumer loop handles and never puts in a batch."""
    if value is None:
        raise ValueError("a sink record batch holds consumed messages only, not error events")
    return value


class SinkRecordBatch(Sequence[SinkRecord]):
    """What a sink task's `put()` gets when the worker has no transforms to apply: the consumed records as
    columns (converted keys and values with their schemas; topics, partitions, offsets and timestamps read
    from the messages when asked for).

    Read as a sequence it is the list of SinkRecords, built once on first access, so any sink works with
    it unchanged. A sink that reads the columns instead (FileStreamSink writes `values`) saves building a
    Python object per record, a large share of the cost of a fast sink. Not in Kafka Connect's API.
    """

    __slots__ = ("_headers", "_messages", "_records", "key_schemas", "keys", "value_schemas", "values")

    def __init__(
        self,
        messages: Sequence[ConsumedMessage],
        keys: Sequence[Any],
        values: Sequence[Any],
        key_schemas: Sequence[Schema | None],
        value_schemas: Sequence[Schema | None],
        headers: dict[int, list[Header]] | None = None,
    ) -> None:
        if not len(messages) == len(keys) == len(values) == len(key_schemas) == len(value_schemas):
            raise ValueError("a sink record batch needs one key, value and pair of schemas per message")
        self._messages = messages
        self.keys = keys
        self.values = values
        self.key_schemas = key_schemas
        self.value_schemas = value_schemas
        self._headers = headers or {}  # converted headers of the records that have any, by index
        self._records: list[SinkRecord] | None = None

    def topics(self) -> list[str]:
        return [_consumed(m.topic()) for m in self._messages]

    def partitions(self) -> list[int]:
        return [_consumed(m.partition()) for m in self._messages]

    def offsets(self) -> list[int]:
        return [_consumed(m.offset()) for m in self._messages]

    def records(self) -> list[SinkRecord]:
        """The batch as SinkRecords (the same objects on every call: a task may keep or report them)."""
        if self._records is None:
            records = []
            headers = self._headers
            for i, m in enumerate(self._messages):
                ts_type, ts = m.timestamp()
                records.append(
                    SinkRecord(
                        _consumed(m.topic()),
                        _consumed(m.partition()),
                        self.keys[i],
                        self.values[i],
                        _consumed(m.offset()),
                        self.key_schemas[i],
                        self.value_schemas[i],
                        ts if ts_type else None,
                        TIMESTAMP_TYPES.get(ts_type, "CreateTime"),
                        headers.get(i),
                    )
                )
            self._records = records
        return self._records

    def __len__(self) -> int:
        return len(self._messages)

    @overload
    def __getitem__(self, index: int) -> SinkRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[SinkRecord]: ...

    def __getitem__(self, index: int | slice) -> SinkRecord | list[SinkRecord]:
        return self.records()[index]

    def __iter__(self) -> Iterator[SinkRecord]:
        return iter(self.records())

    def __repr__(self) -> str:
        return f"SinkRecordBatch(records={len(self)})"


class RecordMetadata(NamedTuple):
    """What the broker acknowledged for a produced record."""

    topic: str
    partition: int
    offset: int
