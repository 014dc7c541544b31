"""What the worker gives an exactly-once source task: its transactional id, its producer settings, where its
offsets go, and where its transactions end (TransactionBoundaries with an injected clock)."""

from __future__ import annotations

import logging

import pytest

from runtime.api.records import SourceRecord
from runtime.api.transactions import TransactionBoundary
from runtime.worker.clients import exactly_once_producer_config
from runtime.worker.exactly_once import (
    Decision,
    ExactlyOnceStart,
    ExactlyOnceTask,
    IllegalTransactionRequest,
    TransactionBoundaries,
    WorkerTransactionContext,
    task_transactional_id,
)
from runtime.worker_config import WorkerConfig

WORKER = {
    "bootstrap.servers": "a:9092,b:9092",
    "group.id": "connect-cluster",
    "offset.storage.topic": "connect-offsets",
    "offset.flush.interval.ms": "30000",
}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def record(n: int) -> SourceRecord:
    return SourceRecord({"p": 0}, {"o": n}, "t", value=n)


def test_the_transactional_id_is_the_reference_s() -> None:
    assert task_transactional_id("connect-cluster", "my-source", 3) == "connect-cluster-my-source-3"


def test_the_producer_is_idempotent_with_its_transactional_id_whatever_the_overrides(caplog) -> None:
    given = {"bootstrap.servers": "x", "enable.idempotence": "false", "transactional.id": "mine", "acks": "all"}
    with caplog.at_level(logging.WARNING):
        config = exactly_once_producer_config(given, "g-c-0")
    assert config["enable.idempotence"] == "true" and config["transactional.id"] == "g-c-0"
    assert given["transactional.id"] == "mine"  # not changed in place
    assert "The value 'false' for Kafka client property 'enable.idempotence' will be ignored" in caplog.text
    assert "The value 'mine' for Kafka client property 'transactional.id' will be ignored" in caplog.text


@pytest.mark.parametrize(
    "connector, topics, elsewhere",
    [
        ({}, ("connect-offsets",), None),
        ({"offsets.storage.topic": "connect-offsets"}, ("connect-offsets",), None),
        ({"offsets.storage.topic": "own"}, ("own", "connect-offsets"), None),  # both in the transaction
        (  # the connector's producer writes to another cluster: the worker's copy after the commit
            {"offsets.storage.topic": "own", "producer.override.bootstrap.servers": "other:9092"},
            ("own",),
            "connect-offsets",
        ),
        ({"producer.override.bootstrap.servers": "b:9092, a:9092"}, ("connect-offsets",), None),
    ],
)
def test_where_a_task_writes_its_offsets(connector: dict, topics: tuple, elsewhere: str | None) -> None:
    task = ExactlyOnceTask.for_task(WorkerConfig(WORKER), connector, ExactlyOnceStart("g-c-0"))
    assert (task.offsets_topics, task.worker_topic_elsewhere) == (topics, elsewhere)


def test_boundary_and_interval_come_from_the_connector_else_the_flush_interval() -> None:
    worker = WorkerConfig(WORKER)
    default = ExactlyOnceTask.for_task(worker, {}, ExactlyOnceStart("t"))
    assert (default.boundary, default.interval_s) == (TransactionBoundary.POLL, 30.0)
    interval = ExactlyOnceTask.for_task(worker, {"transaction.boundary": "Interval"}, ExactlyOnceStart("t"))
    assert (interval.boundary, interval.interval_s) == (TransactionBoundary.INTERVAL, 30.0)
    own = ExactlyOnceTask.for_task(
        worker, {"transaction.boundary": "interval", "transaction.boundary.interval.ms": "100"}, ExactlyOnceStart("t")
    )
    assert own.interval_s == 0.1


def test_poll_commits_after_every_batch_and_at_the_end() -> None:
    b = TransactionBoundaries(TransactionBoundary.POLL, 10.0, None, Clock())
    assert b.after_record(record(1)) is None
    assert b.after_batch() is Decision.COMMIT
    assert b.at_end() is Decision.COMMIT


def test_interval_commits_after_the_first_batch_once_the_interval_passed() -> None:
    clock = Clock()
    b = TransactionBoundaries(TransactionBoundary.INTERVAL, 10.0, None, clock)
    clock.now += 9.9
    assert b.after_batch() is None
    clock.now += 0.1
    assert b.after_batch() is Decision.COMMIT
    assert b.after_batch() is None  # counted again from that commit
    clock.now += 5
    b.start()  # resumed after a pause: a new cycle
    clock.now += 9
    assert b.after_batch() is None
    assert b.at_end() is Decision.COMMIT


def test_connector_boundaries_do_what_the_task_asked_once() -> None:
    context = WorkerTransactionContext()
    b = TransactionBoundaries(TransactionBoundary.CONNECTOR, 10.0, context, Clock())
    assert b.after_batch() is None and b.at_end() is None
    context.commit_transaction()
    assert b.after_batch() is Decision.COMMIT
    assert b.after_batch() is None
    context.abort_transaction()
    assert b.at_end() is Decision.ABORT
    first, second = record(1), record(1)  # equal, but not the same record
    context.commit_transaction(first)
    assert context.names_records
    assert b.after_record(second) is None
    assert b.after_record(first) is Decision.COMMIT
    assert b.after_record(first) is None
    context.abort_transaction(second)
    assert b.after_record(second) is Decision.ABORT


def test_asking_for_both_commit_and_abort_fails_the_task() -> None:
    context = WorkerTransactionContext()
    context.commit_transaction()
    context.abort_transaction()
    with pytest.raises(IllegalTransactionRequest, match="both commit and abort of same transaction"):
        context.batch_request()
    r = record(1)
    context.commit_transaction(r)
    context.abort_transaction(r)
    with pytest.raises(
        IllegalTransactionRequest, match="both commit and abort of same record against topic/partition t/None"
    ):
        context.record_request(r)


def test_connector_boundaries_need_a_context() -> None:
    with pytest.raises(ValueError, match="Transaction context must be provided"):
        TransactionBoundaries(TransactionBoundary.CONNECTOR, 1.0, None)
