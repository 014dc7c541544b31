"""Exactly-once source tasks: what each transaction holds, where it ends, and what a fenced task does.

Every check reads the committed view (tests/support/committed.py): what a read_committed consumer of Apache
Kafka reads. On Tansu that view comes from the record batches' transaction markers, since Tansu's own
read_committed consumers still see aborted records.
"""

from __future__ import annotations

import threading
from typing import ClassVar

import orjson
import pytest

from runtime.api.errors import ConnectError
from runtime.api.records import SourceRecordBatch
from runtime.api.transactions import TransactionBoundary
from runtime.connectors.testing import SequenceSourceTask
from runtime.storage.committed_view import CommittedReader, TransactionFilter
from runtime.storage.offset_codec import decode_value
from runtime.storage.states import State, TargetState
from tests.support.broker import unique
from tests.support.committed import committed_records

from .conftest import Harness, Statuses, create_topic, seqnos, wait_until


def committed_offsets(harness: Harness, topic: str) -> list[dict]:
    """The offsets the task committed to `topic`, in the order they were written."""
    return [decode_value(r.value) for r in committed_records(harness.bootstrap, topic)]


def partition_log(harness: Harness, topic: str) -> TransactionFilter:
    """Partition 0 of `topic` read to its end through the committed view: its markers counted, its end known."""
    reader = CommittedReader(topic, [0], {"bootstrap.servers": harness.bootstrap}, "partition-log")
    try:
        reader.read_to_high_watermark(30)
        return reader.filters[0]
    finally:
        reader.close()


def transactions_in(harness: Harness, topic: str) -> tuple[int, int]:
    """(committed, aborted) transactions on the data topic's partition, counted from its markers."""
    log = partition_log(harness, topic)
    return log.committed_transactions, log.aborted_transactions


def written_to(harness: Harness) -> dict[int, int]:
    """How far the data topic's partition reaches: every record and marker written to it, whatever their fate."""
    return {0: partition_log(harness, harness.topic).next_offset}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.lock = threading.Lock()

    def __call__(self) -> float:
        with self.lock:
            return self.now

    def advance(self, seconds: float) -> None:
        with self.lock:
            self.now += seconds


class EventsTask(SequenceSourceTask):
    """Notes each poll that returned records, and each commit(), in the order the runtime calls them."""

    events: ClassVar[list[str]] = []

    def poll(self) -> SourceRecordBatch | None:
        batch = super().poll()
        if batch:
            self.events.append(f"poll {self.seqno}")
        return batch

    def commit(self) -> None:
        self.events.append("commit")
        super().commit()


@pytest.mark.parametrize(
    ("pipelined", "expected"),
    [
        # the last commit settles after an idle poll, which the committer thread ends (the wake-up hook)
        (True, ["poll 5", "poll 10", "commit", "poll 15", "commit", "commit"]),
        (False, ["poll 5", "commit", "poll 10", "commit", "poll 15", "commit"]),  # the reference's order
    ],
    ids=["pipelined", "waited"],
)
def test_poll_boundary_commits_each_batch_with_the_offsets_of_its_records(
    harness: Harness, pipelined: bool, expected: list[str]
) -> None:
    # Commits are pipelined (runtime/worker/transactional_source.py): the task polls and converts its next
    # batch while the previous transaction commits on the committer thread, and commit() follows that poll.
    # Either way there is one transaction per batch, each with its batch's offset.
    EventsTask.events = []
    runner = harness.start(
        harness.runner(
            task_class=EventsTask, pipeline_commits=pipelined, **{"messages.per.task": "15", "batch.size": "5"}
        )
    )
    wait_until(lambda: EventsTask.events.count("commit") >= 3, "the task told of its three transactions")
    assert EventsTask.events[:6] == expected
    harness.stop(runner)

    assert seqnos(harness.bootstrap, harness.topic) == [(0, n) for n in range(15)]
    assert committed_offsets(harness, harness.offsets_topic) == [{"saved": 5}, {"saved": 10}, {"saved": 15}]
    assert transactions_in(harness, harness.topic) == (3, 0)
    c = runner.counters
    assert (c.transactions_committed, c.transaction_size_min, c.transaction_size_max) == (3, 5, 5)


def test_a_task_failing_in_poll_keeps_the_transaction_it_was_committing(harness: Harness) -> None:
    # The third poll raises, possibly while the second batch's transaction commits: that commit completes
    # (the reference commits it before polling again), and nothing is aborted under it
    runner = harness.runner(**{"messages.per.task": "30", "batch.size": "5", "task.fail.after.records": "10"})
    runner.start(wait_s=30)
    failed = harness.statuses.wait_for(harness.connector, 0, State.FAILED)
    assert "task.fail.after.records" in (failed.trace or "")
    assert runner.await_stop(30), "the failed task's thread did not finish"
    assert runner.producer is None, "the failed task's producer was not closed"

    assert seqnos(harness.bootstrap, harness.topic) == [(0, n) for n in range(10)]
    assert harness.committed_offset() == {"saved": 10}
    assert transactions_in(harness, harness.topic) == (2, 0)
    assert runner.counters.transactions_committed == 2


def test_interval_boundary_commits_once_the_interval_passed_and_at_a_pause(harness: Harness) -> None:
    clock = FakeClock()
    runner = harness.start(
        harness.runner(
            boundary=TransactionBoundary.INTERVAL,
            interval_s=10.0,
            clock=clock,
            **{"messages.per.task": "20", "batch.size": "5"},
        )
    )
    wait_until(lambda: runner.counters.source_records_written == 20, "the 20 records sent")
    assert runner.counters.transactions_committed == 0, "committed before the interval passed"
    assert harness.committed_offset() is None

    clock.advance(10.0)  # the next batch boundary (an empty poll of the finished sequence) commits
    wait_until(lambda: runner.counters.transactions_committed == 1, "the interval's commit")
    assert seqnos(harness.bootstrap, harness.topic) == [(0, n) for n in range(20)]
    assert harness.committed_offset() == {"saved": 20}
    assert runner.counters.transaction_size_max == 20

    # a pause commits what is open at once, interval or not
    more = harness.start(
        harness.runner(
            index=1,
            boundary=TransactionBoundary.INTERVAL,
            interval_s=10.0,
            clock=clock,
            **{"messages.per.task": "7", "batch.size": "7"},
        )
    )
    wait_until(lambda: more.counters.source_records_written == 7, "task 1's records sent")
    more.transition_to(TargetState.PAUSED)
    wait_until(lambda: more.counters.transactions_committed == 1, "the commit at the pause")
    assert harness.committed_offset(1) == {"saved": 7}


def test_connector_boundary_commits_and_aborts_where_the_task_says(harness: Harness) -> None:
    # SequenceSource: a transaction per 4 seqnos, every 3rd aborted: [8, 12) and [20, 24) never appear
    runner = harness.start(
        harness.runner(
            boundary=TransactionBoundary.CONNECTOR,
            **{
                "messages.per.task": "24",
                "batch.size": "10",
                "transaction.every.records": "4",
                "transaction.abort.every": "3",
            },
        )
    )
    wait_until(lambda: harness.committed_offset() == {"saved": 24}, "the last transaction's offset")
    harness.stop(runner)

    expected = [n for n in range(24) if not 8 <= n < 12 and not 20 <= n < 24]
    assert seqnos(harness.bootstrap, harness.topic) == [(0, n) for n in expected]
    # an aborted transaction's offsets are committed all the same (in the next transaction): not polled again
    assert committed_offsets(harness, harness.offsets_topic) == [{"saved": n} for n in (4, 8, 12, 16, 20, 24)]
    # on the data topic, the four committed transactions (an aborted one may never reach it: librdkafka
    # drops unsent records at an abort)
    assert transactions_in(harness, harness.topic)[0] == 4
    assert runner.counters.transactions_committed == 6  # two of them hold only the offsets of aborted records


def test_the_offsets_go_to_the_connector_topic_and_the_worker_topic_in_one_transaction(harness: Harness) -> None:
    own = unique("eos-own-offsets")
    create_topic(harness.bootstrap, own, 2)
    runner = harness.start(
        harness.runner(offsets_topics=(own, harness.offsets_topic), **{"messages.per.task": "6", "batch.size": "3"})
    )
    wait_until(lambda: harness.committed_offset() == {"saved": 6}, "the worker topic's copy")
    harness.stop(runner)
    assert committed_offsets(harness, own) == [{"saved": 3}, {"saved": 6}]
    assert committed_offsets(harness, harness.offsets_topic) == [{"saved": 3}, {"saved": 6}]


def test_a_fenced_task_fails_says_so_and_writes_nothing_more(harness: Harness) -> None:
    # The first instance is paused between two transactions while a newer one with the same transactional id
    # starts (as a worker frozen past its session and its task started elsewhere): when it wakes up, its next
    # transaction is refused. (Fencing it in the middle of a commit also works on Apache Kafka; on Tansu an
    # EndTxn with a fenced epoch makes the broker drop the connection, so the fenced task only fails once its
    # commit has been retried for transaction.timeout.ms, with a trace that cannot say why.)
    settings = {"batch.size": "10", "throughput": "400"}
    zombie_statuses, successor_statuses = Statuses(), Statuses()
    reported: list[str] = []  # the herder hears of a fence (it restarts the task if it still owns it)
    zombie = harness.start(harness.runner(statuses=zombie_statuses, on_fenced=lambda: reported.append("z"), **settings))
    wait_until(lambda: zombie.counters.transactions_committed >= 2, "the first instance's commits")
    zombie.transition_to(TargetState.PAUSED)
    wait_until(lambda: harness.committed_offset() == {"saved": zombie.task.seqno}, "the commit at the pause")

    successor = harness.start(harness.runner(statuses=successor_statuses, **settings))
    wait_until(lambda: successor.counters.transactions_committed >= 2, "the successor's commits")
    # counted now, not at the pause: the commit's offset is readable before its thread counts the commit
    zombie_commits = zombie.counters.transactions_committed
    zombie.transition_to(TargetState.STARTED)  # it polls again, from where it was: the same seqnos again
    failed = zombie_statuses.wait_for(harness.connector, 0, State.FAILED)
    assert failed.trace is not None
    assert "fenced out by a newer producer with the same transactional id" in failed.trace
    assert harness.transactional_id(0) in failed.trace
    assert zombie.counters.transactions_committed == zombie_commits, "the fenced task committed again"
    assert reported == ["z"], "the fence was not reported to the herder once"

    wait_until(lambda: successor.counters.transactions_committed >= 4, "more of the successor's commits")
    harness.stop(successor)
    last = harness.committed_offset()
    assert last is not None
    # every seqno once, none missing: the successor started from the offsets the first instance committed,
    # and nothing the first one sent after it was fenced was committed
    assert seqnos(harness.bootstrap, harness.topic) == [(0, n) for n in range(last["saved"])]


def test_a_task_may_not_produce_to_its_own_offsets_topic(harness: Harness) -> None:
    runner = harness.runner(**{"messages.per.task": "5"})
    runner.config["topic"] = harness.offsets_topic
    runner.start(wait_s=30)  # not harness.start: the task may fail before RUNNING is ever read
    failed = harness.statuses.wait_for(harness.connector, 0, State.FAILED)
    assert "may not produce to their own offsets topics when exactly-once support is enabled" in (failed.trace or "")
    assert harness.committed_offset() is None
    assert orjson.loads(b"[]") == [r.value for r in committed_records(harness.bootstrap, harness.offsets_topic)]


def test_a_task_its_worker_lost_while_its_producer_initialized_does_not_start(harness: Harness) -> None:
    # A worker frozen between the herder's check and its producer's init wakes up without the task (the group
    # gave it to another worker meanwhile). Its init may have fenced that newer instance; this one must not run
    # in its place: the check runs again after the init (the reference's post-producer check).
    checks: list[int] = []

    def still_current() -> None:
        checks.append(len(checks))
        if len(checks) > 1:
            raise ConnectError(f"Task {harness.connector}-0 is no longer assigned to this worker; not starting it")

    reported: list[str] = []
    runner = harness.runner(still_current=still_current, on_fenced=lambda: reported.append("r"), **{"batch.size": "10"})
    runner.start(wait_s=30)
    failed = harness.statuses.wait_for(harness.connector, 0, State.FAILED)
    assert "is no longer assigned to this worker" in (failed.trace or "")
    assert checks == [0, 1], "the check did not run before and after the producer's init"
    assert runner.await_stop(30), "the refused task's thread did not finish"
    assert runner.counters.source_records_polled == 0, "the refused task polled"
    assert runner.producer is None, "the refused task kept its producer"
    assert written_to(harness) == {0: 0}, "the refused task wrote to its topic"
    assert reported == [], "a task that never started reported a fence: the herder would restart it"


class PollBlockedTask(SequenceSourceTask):
    """Blocks in poll until `released` is set, and ignores stop(): a task that outlives its graceful stop and
    then returns a batch all the same."""

    released = threading.Event()

    def poll(self) -> SourceRecordBatch | None:
        self.released.wait(30)
        return super().poll()

    def stop(self) -> None:
        pass


def test_an_abandoned_task_sends_nothing_more(harness: Harness) -> None:
    # A task still in poll() when its graceful stop runs out is abandoned: its successor may start meanwhile,
    # so what the old one polls afterwards is never sent (as the reference closes an abandoned task's producer)
    PollBlockedTask.released.clear()
    runner = harness.start(harness.runner(task_class=PollBlockedTask, **{"batch.size": "10"}))
    runner.stop()
    assert not runner.await_stop(0.2), "the blocked task stopped in time"
    PollBlockedTask.released.set()  # its poll returns a batch now
    assert runner.await_stop(30), "the abandoned task's thread did not finish"
    assert runner.task.seqno > 0, "the task never polled its batch"
    # not handed to the producer (source-record-write-total), so not on the wire either
    assert runner.counters.source_records_written == 0
    assert written_to(harness) == {0: 0}, "the abandoned task wrote to its topic"
