"""SourceTaskRunner without a broker (a stand-in for confluent-kafka's Producer): what it sends, and the
offset-commit bookkeeping of at-least-once delivery (offsets stored only for what the broker acknowledged,
the latest per source partition, SourceTask.commit() after each commit)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from confluent_kafka import KafkaError

from runtime.api import ConnectError, SourceRecord, SourceRecordBatch, SourceTask
from runtime.api.data import INT64_SCHEMA, STRING_SCHEMA
from runtime.converters.json import JsonConverter
from runtime.distributed.statuses import GenerationStatuses
from runtime.storage.base import InstanceStatus, StatusStore
from runtime.storage.files import MemoryOffsetStore
from runtime.storage.offset_codec import decode_key, decode_value
from runtime.storage.states import State, TargetState
from runtime.worker.source_runner import SourceTaskRunner


class Message:
    def __init__(self, topic: str) -> None:
        self._topic = topic

    def topic(self) -> str:
        return self._topic


class FakeProducer:
    """confluent-kafka's Producer as the runner uses it. `unacknowledged` is what `flush` reports as not
    acknowledged in time; `refused` errors are delivered (to the runner's on_delivery) at the next flush."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.on_delivery = settings["on_delivery"]
        self.sent: list[tuple[str, int, bytes | None, bytes | None]] = []
        self.timestamps: list[int] = []  # of each message sent (0: none, the producer's clock)
        self.unacknowledged = 0
        self.refused: list[KafkaError] = []

    def produce_batch(self, topic: str, messages: list[dict[str, Any]], partition: int = -1) -> int:
        self.sent += [(topic, partition, m["key"], m["value"]) for m in messages]
        self.timestamps += [0] * len(messages)
        return len(messages)

    def produce(
        self, topic: str, value: bytes | None, key: bytes | None, partition: int, timestamp: int = 0, **_: Any
    ) -> None:
        self.sent.append((topic, partition, key, value))
        self.timestamps.append(timestamp)

    def poll(self, timeout: float = 0) -> int:
        return 0

    def flush(self, timeout: float | None = None) -> int:
        for error in self.refused:
            self.on_delivery(error, Message(self.sent[-1][0]))
        self.refused.clear()
        return self.unacknowledged

    def __len__(self) -> int:
        return self.unacknowledged


class CommitCounting(SourceTask):
    def __init__(self) -> None:
        self.commits = 0

    def start(self, props: dict[str, str]) -> None:
        pass

    def poll(self) -> None:
        return None

    def commit(self) -> None:
        self.commits += 1

    def stop(self) -> None:
        pass


def json_converter(is_key: bool) -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, is_key)
    return converter


class Harness:
    """A runner initialized with a CommitCounting task, a memory offset store and a FakeProducer."""

    def __init__(
        self,
        connector_config: dict[str, str] | None = None,
        statuses: StatusStore | None = None,
        task_class: type[SourceTask] = CommitCounting,
    ) -> None:
        self.store = MemoryOffsetStore()
        self.task = CommitCounting()
        self.runner = SourceTaskRunner(
            "c",
            0,
            task_class,
            {},
            connector_config or {},
            TargetState.STARTED,
            statuses or StatusStore(),
            "w",
            producer_config={},
            offset_store=self.store,
            key_converter=json_converter(True),
            value_converter=json_converter(False),
            header_converter=None,
            flush_interval_ms=60000,
            flush_timeout_ms=5000,
            create_producer=FakeProducer,
        )
        self.runner.initialize(self.task)

    @property
    def producer(self) -> FakeProducer:
        assert isinstance(self.runner.producer, FakeProducer), "nothing sent yet"
        return self.runner.producer

    def committed(self) -> dict[str, Any]:
        """The stored offsets, by the source partition's "file" (this connector's only)."""
        result = {}
        for raw_key, raw_value in self.store.items():
            decoded = decode_key(raw_key)
            assert decoded is not None and decoded[0] == "c"
            result[decoded[1]["file"]] = decode_value(raw_value)
        return result


def records(file: str, *positions: int) -> list[SourceRecord]:
    return [SourceRecord({"file": file}, {"pos": p}, "t", None, "k", p, STRING_SCHEMA, INT64_SCHEMA) for p in positions]


def batch(kafka_partition: int | None = None, timestamps: list[int | None] | None = None) -> SourceRecordBatch:
    return SourceRecordBatch(
        {"file": "a"},
        [{"pos": 1}, {"pos": 2}, {"pos": 3}],
        "t",
        [10, 20, 30],
        key="k",
        key_schema=STRING_SCHEMA,
        value_schema=INT64_SCHEMA,
        kafka_partition=kafka_partition,
        timestamps=timestamps,
    )


# ---- sending ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("partition", "timestamps"), [(None, None), (1, None), (None, [5, None, 7])])
def test_the_worker_sends_a_batch_as_it_sends_its_records(partition: int | None, timestamps: list[int] | None) -> None:
    columns, one_by_one = Harness(), Harness()
    columns.runner.send(batch(partition, timestamps))
    one_by_one.runner.send(list(batch(partition, timestamps)))
    assert columns.producer.sent == one_by_one.producer.sent and len(columns.producer.sent) == 3
    assert (
        columns.producer.timestamps
        == one_by_one.producer.timestamps
        == ([0, 0, 0] if timestamps is None else [5, 0, 7])
    )
    assert columns.runner.counters.source_records_written == one_by_one.runner.counters.source_records_written == 3
    assert columns.runner.commit_offsets() and one_by_one.runner.commit_offsets()
    assert columns.committed() == one_by_one.committed() == {"a": {"pos": 3}}


def test_a_value_the_converter_refuses_takes_the_record_path_with_its_errors_handling() -> None:
    harness = Harness({"errors.tolerance": "all"})
    bad = SourceRecordBatch(
        {"file": "a"},
        [{"pos": 1}, {"pos": 2}, {"pos": 3}],
        "t",
        [1, "not a number", 3],
        key="k",
        key_schema=STRING_SCHEMA,
        value_schema=INT64_SCHEMA,
    )
    harness.runner.send(bad)
    # errors.tolerance=all skips the bad record; the others go out, and the batch's last offset counts
    assert [value for _, _, _, value in harness.producer.sent] == [
        b'{"schema":{"type":"int64","optional":false},"payload":1}',
        b'{"schema":{"type":"int64","optional":false},"payload":3}',
    ]
    assert harness.runner.error_counters.total_records_skipped == 1
    assert harness.runner.commit_offsets() and harness.committed() == {"a": {"pos": 3}}


# ---- statuses ------------------------------------------------------------------------------------


class FencedAtStart(CommitCounting):
    """Fails in start() once `fence` is set: its producer was fenced by the task's new instance elsewhere."""

    fence = threading.Event()

    def start(self, props: dict[str, str]) -> None:
        assert self.fence.wait(5)
        raise ConnectError("its producer was fenced out by a newer producer with the same transactional id")


def test_a_task_failing_after_another_worker_took_it_over_in_a_newer_generation_leaves_that_workers_status() -> None:
    """The reference's onFailure writes safely: a zombie's failure (a worker frozen while the group moved its
    task) must not hide the new owner's RUNNING; else its shutdown's UNASSIGNED, safe against its own FAILED,
    overwrote the owner's status for good (issue 25: a task UNASSIGNED on the worker running it)."""
    store = StatusStore()
    zombie = Harness(statuses=GenerationStatuses(store, lambda: 10), task_class=FencedAtStart)  # type: ignore[arg-type]
    FencedAtStart.fence.clear()
    zombie.runner.start(wait_s=0)
    successor = InstanceStatus(State.RUNNING, "w2", generation=11)
    store.put_task("c", 0, successor)  # the group moved the task meanwhile
    FencedAtStart.fence.set()
    assert zombie.runner.await_stop(5)
    assert store.task("c", 0) == successor
    # with no newer owner, the failure is written as ever
    alone = StatusStore()
    Harness(statuses=GenerationStatuses(alone, lambda: 10), task_class=FencedAtStart).runner.start()  # type: ignore[arg-type]
    failed = alone.task("c", 0)
    assert failed is not None and failed.state is State.FAILED and "fenced out" in str(failed.trace)


# ---- committing offsets -----------------------------------------------------------------------------


def test_a_commit_stores_the_latest_offset_of_each_source_partition_then_tells_the_task() -> None:
    harness = Harness()
    harness.runner.send([*records("a", 1, 2), *records("b", 7), *records("a", 3)])
    assert harness.committed() == {}  # nothing before the commit
    assert harness.runner.commit_offsets() is True
    assert harness.committed() == {"a": {"pos": 3}, "b": {"pos": 7}}
    assert harness.task.commits == 1 and harness.runner.counters.offset_commits == 1
    harness.runner.send(records("b", 8))
    assert harness.runner.commit_offsets() is True
    assert harness.committed() == {"a": {"pos": 3}, "b": {"pos": 8}}


def test_offsets_of_records_not_acknowledged_in_time_wait_for_the_next_commit() -> None:
    harness = Harness()
    harness.runner.send(records("a", 1, 2))
    harness.producer.unacknowledged = 1  # offset.flush.timeout.ms passed with one record in flight
    assert harness.runner.commit_offsets() is False
    assert harness.committed() == {} and harness.task.commits == 0
    assert harness.runner.counters.offset_commit_failures == 1
    harness.producer.unacknowledged = 0
    assert harness.runner.commit_offsets() is True
    assert harness.committed() == {"a": {"pos": 2}} and harness.task.commits == 1


def test_a_record_the_broker_refused_fails_the_commit_and_stores_nothing() -> None:
    harness = Harness()
    harness.runner.send(records("a", 1, 2))
    harness.producer.refused.append(KafkaError(KafkaError.MSG_SIZE_TOO_LARGE))
    with pytest.raises(ConnectError, match="Unrecoverable exception from producer send callback"):
        harness.runner.commit_offsets()
    assert harness.committed() == {} and harness.task.commits == 0


def test_under_tolerance_all_a_refused_record_is_skipped_and_its_offset_still_counts() -> None:
    # KIP-779: a record the producer could not send is an error like others, tolerated and processed
    harness = Harness({"errors.tolerance": "all"})
    harness.runner.send(records("a", 1, 2))
    harness.producer.refused.append(KafkaError(KafkaError.MSG_SIZE_TOO_LARGE))
    assert harness.runner.commit_offsets() is True
    assert harness.committed() == {"a": {"pos": 2}}
    assert harness.runner.error_counters.total_records_skipped == 1
