"""Helpers for bench/run.py: topics, raw confluent-kafka loops, record timestamps, line counting, RSS.

The raw loops are the baselines: they do the same work as the worker (same converter class, same
client settings, same records) minus the framework, so a ratio measures the runtime's overhead.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import psutil
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from runtime.api.data import STRING_SCHEMA
from runtime.connectors.testing import SEQUENCE_VALUE_SCHEMA
from runtime.converters.json import JsonConverter
from runtime.worker.clients import CONSUMER_DEFAULTS, PRODUCER_DEFAULTS

# The worker's RecordingSink and our raw loop write the same JSON lines with these options.
_JSON_LINE = orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS
RAW_CONSUME_BATCH = 2000  # the worker's default max.poll.records


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, partitions, 1)], operation_timeout=30)
    for future in futures.values():
        future.result(timeout=30)
    # Metadata can lag creation on some brokers: wait until the topic is listed.
    wait_until(lambda: topic in admin.list_topics(timeout=10).topics, 30, what=f"topic {topic}")


def wait_until(
    predicate: Callable[[], Any], timeout_s: float, interval_s: float = 0.05, what: str = "condition"
) -> Any:
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except Exception as exc:  # noqa: BLE001 - keep polling through transient errors
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(interval_s)
    raise TimeoutError(f"timed out after {timeout_s}s waiting for {what}; last: {last!r}")


def json_converters(schemas_enable: bool) -> tuple[JsonConverter, JsonConverter]:
    key, value = JsonConverter(), JsonConverter()
    key.configure({"schemas.enable": str(schemas_enable).lower()}, is_key=True)
    value.configure({"schemas.enable": str(schemas_enable).lower()}, is_key=False)
    return key, value


class JsonCodec:
    """SequenceSource-shaped records as the worker's JsonConverter writes them (keys and values)."""

    def __init__(self, schemas_enable: bool) -> None:
        self.key_conv, self.value_conv = json_converters(schemas_enable)

    def key_bytes(self, topic: str, key: str) -> bytes:
        return self.key_conv.from_connect_data(topic, STRING_SCHEMA, key)

    def value_encoder(self, topic: str) -> Callable[[int], bytes]:
        convert = self.value_conv.from_connect_data
        return lambda seqno: convert(topic, SEQUENCE_VALUE_SCHEMA, {"task": 0, "seqno": seqno})

    def key_decoder(self) -> Callable[[str, bytes | None], Any]:
        convert = self.key_conv.to_connect_data
        return lambda topic, raw: convert(topic, raw)[1]

    def value_decoder(self) -> Callable[[str, bytes | None], Any]:
        convert = self.value_conv.to_connect_data
        return lambda topic, raw: convert(topic, raw)[1]


def _produce(producer: Producer, topic: str, value: bytes | None, key: bytes | None) -> None:
    while True:
        try:
            producer.produce(topic, value, key)
            return
        except BufferError:
            producer.poll(0.05)  # queue full: let deliveries drain


def raw_sequence_producer(bootstrap: str, topic: str, n: int, task_key: str, codec: Any) -> tuple[float, float]:
    """Produce what SequenceSource task 0 would (same dicts, same serializer, same producer settings),
    converting each record as the worker must. Returns (seconds from the first produce to the end of
    flush, CPU seconds this process spent meanwhile, librdkafka's threads included)."""
    # Only failures are reported, as in the worker: successful deliveries need no bookkeeping here.
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER_DEFAULTS, "delivery.report.only.error": True})
    value_of, produce, poll = codec.value_encoder(topic), producer.produce, producer.poll
    cpu0 = cpu_seconds()
    started = time.perf_counter()
    # The key never changes: converted once, as the worker does for a repeated immutable key.
    key = codec.key_bytes(topic, task_key)
    for n0 in range(0, n, 1000):  # polls once per 1000 records, as the worker does once per batch
        for seqno in range(n0, min(n0 + 1000, n)):
            value = value_of(seqno)
            try:
                produce(topic, value, key)
            except BufferError:
                _produce(producer, topic, value, key)
        poll(0)
    remaining = producer.flush(120)
    elapsed = time.perf_counter() - started
    cpu = cpu_seconds() - cpu0
    if remaining:
        raise RuntimeError(f"raw producer: {remaining} records not delivered")
    return elapsed, cpu


def prefill(bootstrap: str, topic: str, n: int, codec: Any, key: str = "prefill-0") -> None:
    """N SequenceSource-shaped records, for the sink benchmarks."""
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER_DEFAULTS})
    key_bytes = codec.key_bytes(topic, key)
    value_of = codec.value_encoder(topic)
    for seqno in range(n):
        _produce(producer, topic, value_of(seqno), key_bytes)
        if seqno % 10000 == 0:
            producer.poll(0)
    if producer.flush(120):
        raise RuntimeError("prefill: records not delivered")


def prefill_lines(bootstrap: str, topic: str, path: Path) -> int:
    """Each line of `path` as a null-key record (what FileStreamSource with StringConverter sends)."""
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER_DEFAULTS})
    count = 0
    with open(path, "rb") as f:
        for line in f:
            _produce(producer, topic, line.rstrip(b"\n"), None)
            count += 1
            if count % 10000 == 0:
                producer.poll(0)
    if producer.flush(120):
        raise RuntimeError("prefill: records not delivered")
    return count


def raw_recording_consumer(
    bootstrap: str, topic: str, n: int, out_path: Path, codec: Any, group: str, session_timeout_ms: int
) -> tuple[float, float, float]:
    """A consumer loop that does RecordingSink's job: deserialize as the worker's converter does, write the
    same JSON lines. Same client settings and batch size as the worker. Returns (seconds from subscribe to
    the N-th line written, seconds from the first record received to the N-th line written, CPU seconds)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            **CONSUMER_DEFAULTS,
            "session.timeout.ms": str(session_timeout_ms),
        }
    )
    key_to, value_to = codec.key_decoder(), codec.value_decoder()
    fd = os.open(out_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    seen = 0
    first: float | None = None
    cpu0 = cpu_seconds()
    started = time.perf_counter()
    try:
        consumer.subscribe([topic])
        while seen < n:
            messages = consumer.consume(RAW_CONSUME_BATCH, 0.2)
            if not messages:
                continue
            if first is None:
                first = time.perf_counter()
            lines = []
            last_raw_key: Any = None
            key: Any = None
            for m in messages:
                if m.error() is not None:
                    if m.error().code() != KafkaError._PARTITION_EOF:
                        raise RuntimeError(f"raw consumer: {m.error()}")
                    continue
                t = m.topic()
                raw_key = m.key()
                if (
                    raw_key != last_raw_key or raw_key is None
                ):  # keys repeat: decode each distinct one once, as the worker does
                    key = key_to(t, raw_key)
                    last_raw_key = raw_key
                lines.append(
                    orjson.dumps(
                        {
                            "topic": t,
                            "partition": m.partition(),
                            "offset": m.offset(),
                            "key": key,
                            "value": value_to(t, m.value()),
                        },
                        option=_JSON_LINE,
                    )
                )
            os.write(fd, b"".join(lines))
            seen += len(lines)
        done = time.perf_counter()
        cpu = cpu_seconds() - cpu0
    finally:
        os.close(fd)
        consumer.close()
    assert first is not None
    return done - started, done - first, cpu


def group_join_seconds(bootstrap: str, topic: str, session_timeout_ms: int) -> float:
    """Seconds from subscribe to the first record for a bare consumer on a fresh group: the wait every
    sink (ours, the oracle's, a raw loop) has before any work, set by the broker (on Tansu half of
    session.timeout.ms, in whole seconds; on Apache Kafka group.initial.rebalance.delay.ms, which its
    quickstart configuration sets to 0). The probe assigns its partitions at their start itself, so the
    figure holds no client-side wait (librdkafka's own offset lookup waits for a timer tick)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("join-probe"),
            **CONSUMER_DEFAULTS,
            "session.timeout.ms": str(session_timeout_ms),
        }
    )

    def from_the_start(c: Consumer, partitions: list[TopicPartition]) -> None:
        for p in partitions:
            p.offset = OFFSET_BEGINNING
        c.assign(partitions)

    try:
        started = time.perf_counter()
        consumer.subscribe([topic], on_assign=from_the_start)
        while True:
            message = consumer.poll(0.05)
            if message is not None and message.error() is None:
                return time.perf_counter() - started
            if time.perf_counter() - started > 120:
                raise RuntimeError(f"join probe: no record from {topic} within 120 s")
    finally:
        consumer.close()


def record_timestamps_ms(bootstrap: str, topic: str, offsets: list[int], partition: int = 0) -> list[int]:
    """CreateTime of the records at `offsets` (set by the producing client when the record was sent)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-ts", "enable.auto.commit": "false"})
    result = []
    try:
        for offset in offsets:
            consumer.assign([TopicPartition(topic, partition, offset)])
            deadline = time.monotonic() + 30
            while True:
                m = consumer.poll(1.0)
                if m is not None and m.error() is None:
                    if m.offset() != offset:
                        raise RuntimeError(f"{topic}: asked for offset {offset}, got {m.offset()}")
                    result.append(m.timestamp()[1])
                    break
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{topic}: no record at offset {offset}")
    finally:
        consumer.close()
    return result


def read_records(bootstrap: str, topic: str, count: int, partition: int = 0) -> list[tuple[bytes | None, bytes | None]]:
    """The first `count` (key, value) pairs of a partition, to check two producers wrote the same bytes."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-read", "enable.auto.commit": "false"})
    out: list[tuple[bytes | None, bytes | None]] = []
    try:
        consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
        deadline = time.monotonic() + 30
        while len(out) < count and time.monotonic() < deadline:
            for m in consumer.consume(count - len(out), 1.0):
                if m.error() is None:
                    out.append((m.key(), m.value()))
    finally:
        consumer.close()
    return out


class LineCounter:
    """Counts the lines of a growing file incrementally (only new bytes are read)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines = 0
        self._pos = 0

    def update(self) -> int:
        try:
            with open(self.path, "rb") as f:
                f.seek(self._pos)
                while chunk := f.read(1 << 22):
                    self.lines += chunk.count(b"\n")
                    self._pos += len(chunk)
        except FileNotFoundError:
            pass
        return self.lines


def watch_lines(path: Path, n: int, timeout_s: float, interval_s: float = 0.01) -> tuple[float, float]:
    """Wait until `path` has `n` lines; return (perf_counter when the first line appeared, when the n-th did)."""
    counter = LineCounter(path)
    first: float | None = None
    deadline = time.monotonic() + timeout_s
    while True:
        lines = counter.update()
        now = time.perf_counter()
        if lines and first is None:
            first = now
        if lines >= n:
            assert first is not None
            return first, now
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path}: {lines} of {n} lines after {timeout_s}s")
        time.sleep(interval_s)


def write_lines_file(path: Path, n: int) -> int:
    """A text file of `n` distinct ~100-byte lines; returns its size in bytes."""
    pad = "x" * 80
    with open(path, "w") as f:
        for start in range(0, n, 100_000):
            f.write("".join(f"line {i:09d} {pad}\n" for i in range(start, min(start + 100_000, n))))
    return path.stat().st_size


def rss_mb(pid: int) -> float:
    """Resident set size of a process and its children, in MiB."""
    proc = psutil.Process(pid)
    total = proc.memory_info().rss
    for child in proc.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total / (1 << 20)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def cpu_seconds(pid: int | None = None) -> float:
    """User + system CPU time of a process (all its threads; not its children)."""
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def load_average() -> float:
    return os.getloadavg()[0]
