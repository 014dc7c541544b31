"""SourceTask.commit_record: called once per record poll() returned, with where Kafka stored it (None for a
record that was never written), as the reference's WorkerSourceTask and ExactlyOnceWorkerSourceTask call
commitRecord. With exactly-once, only after the record's transaction committed."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from runtime.api.records import RecordMetadata, SourceRecord
from runtime.connectors.testing import SequenceSourceTask
from tests.support.committed import committed_records

from .conftest import Harness, wait_until

# a Filter transform drops every record whose value is null: such records are never written
DROP_TOMBSTONES = {
    "transforms": "drop",
    "transforms.drop.type": "org.apache.kafka.connect.transforms.Filter",
    "transforms.drop.predicate": "tombstone",
    "predicates": "tombstone",
    "predicates.tombstone.type": "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
}


class AcknowledgedSequence(SequenceSourceTask):
    """A SequenceSource task that returns records (not a batch), every third one a tombstone, and keeps what
    commit_record is given."""

    instances: ClassVar[list[AcknowledgedSequence]] = []
    transactions_committed: ClassVar[Any] = None  # set by the test: the runner's counter, read when a record comes back

    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        self.polled: list[SourceRecord] = []
        self.acknowledged: list[tuple[SourceRecord, RecordMetadata | None, int]] = []
        AcknowledgedSequence.instances.append(self)

    def poll(self) -> list[SourceRecord] | None:  # type: ignore[override]
        batch = super().poll()
        if batch is None:
            return None
        records = list(batch)
        for record in records:
            if record.value["seqno"] % 3 == 2:
                record.value = None
        self.polled.extend(records)
        return records

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        counter = AcknowledgedSequence.transactions_committed
        self.acknowledged.append((record, metadata, counter() if counter else 0))


@pytest.mark.parametrize("exactly_once", [False, True], ids=["at-least-once", "exactly-once"])
def test_commit_record_gets_each_record_with_where_it_was_written(harness: Harness, exactly_once: bool) -> None:
    AcknowledgedSequence.instances = []
    runner = harness.runner(
        task_class=AcknowledgedSequence,
        exactly_once=exactly_once,
        **{"messages.per.task": "15", "batch.size": "5"},
        **DROP_TOMBSTONES,
    )
    if exactly_once:
        AcknowledgedSequence.transactions_committed = lambda: runner.counters.transactions_committed
    harness.start(runner)
    (task,) = AcknowledgedSequence.instances
    wait_until(lambda: len(task.acknowledged) == 15, "15 records handed back")
    harness.stop(runner)

    # the very records poll() returned, each once (a dropped record comes back at once, a written one when
    # Kafka acknowledges it, so not in poll order)
    assert sorted(id(r) for r, _, _ in task.acknowledged) == sorted(id(r) for r in task.polled)
    stored = {r.offset for r in committed_records(harness.bootstrap, harness.topic)}
    assert len(stored) == 10
    for record, metadata, committed in task.acknowledged:
        if record.value is None:
            assert metadata is None, "a dropped record was reported as written"
            continue
        assert metadata is not None
        assert (metadata.topic, metadata.partition) == (harness.topic, 0)
        assert metadata.offset in stored
        if exactly_once:
            # seqno n was in the (n // 5 + 1)-th transaction: handed back once that one committed
            assert committed >= record.value["seqno"] // 5 + 1
    assert sorted(m.offset for _, m, _ in task.acknowledged if m is not None) == sorted(stored)
