"""TransactionFilter: a partition's record batches in, what a read_committed consumer reads out."""

from __future__ import annotations

from dataclasses import dataclass, field

from runtime.storage.committed_view import TransactionFilter


@dataclass
class Record:
    offset: int
    key: bytes | None = None
    value: bytes | None = None
    timestamp: int = 0
    commit: bool = False  # control records only
    abort: bool = False


@dataclass
class Batch:
    """The attributes of kafka-python's DefaultRecordBatch the filter reads."""

    base_offset: int
    records: list[Record] = field(default_factory=list)
    producer_id: int = -1
    producer_epoch: int = 0
    is_transactional: bool = False
    is_control_batch: bool = False

    @property
    def next_offset(self) -> int:
        return self.base_offset + len(self.records)

    def __iter__(self):
        return iter(self.records)


def data(base: int, count: int, producer: int | None = None, epoch: int = 0) -> Batch:
    records = [Record(base + i, value=f"v{base + i}".encode()) for i in range(count)]
    return Batch(base, records, producer if producer is not None else -1, epoch, producer is not None)


def marker(offset: int, producer: int, commit: bool) -> Batch:
    return Batch(offset, [Record(offset, commit=commit, abort=not commit)], producer, 0, True, True)


def offsets(released) -> list[int]:
    return [r.offset for r in released]


def test_committed_records_appear_at_their_commit_and_aborted_ones_never() -> None:
    f = TransactionFilter(0)
    assert offsets(f.add(data(0, 2, producer=7))) == []
    assert f.stable_offset == 0 and f.open_transactions == 1
    assert offsets(f.add(marker(2, 7, commit=True))) == [0, 1]
    assert offsets(f.add(data(3, 3, producer=7))) == []
    assert offsets(f.add(marker(6, 7, commit=False))) == []
    assert (f.committed_transactions, f.aborted_transactions, f.aborted) == (1, 1, 3)
    assert f.stable_offset == f.next_offset == 7


def test_an_open_transaction_holds_back_everything_after_it_as_the_last_stable_offset_does() -> None:
    f = TransactionFilter(0)
    f.add(data(0, 1, producer=1))  # open
    assert offsets(f.add(data(1, 2))) == []  # plain records after it wait too
    assert offsets(f.add(data(3, 1, producer=2))) == []
    assert offsets(f.add(marker(4, 2, commit=True))) == []  # decided, but behind producer 1's
    assert f.stable_offset == 0
    assert offsets(f.add(marker(5, 1, commit=True))) == [0, 1, 2, 3]
    assert f.stable_offset == 6


def test_a_fencing_abort_ends_the_transaction_of_any_earlier_epoch() -> None:
    # kafka-python's batch carries the epoch too; a newer epoch's abort marker (written when a newer producer
    # with the same transactional id fences the old one) ends whatever that producer id had open
    f = TransactionFilter(0)
    f.add(data(0, 2, producer=5))
    assert offsets(f.add(marker(2, 5, commit=False))) == []
    assert offsets(f.add(data(3, 1, producer=5))) == []
    assert offsets(f.add(marker(4, 5, commit=True))) == [3]


def test_plain_records_pass_at_once_and_a_batch_seen_before_is_skipped() -> None:
    f = TransactionFilter(0)
    assert offsets(f.add(data(0, 3))) == [0, 1, 2]
    assert offsets(f.add(data(0, 3))) == []  # fetched again (a fetch may start inside a batch)
    assert offsets(f.add(marker(3, 9, commit=True))) == []  # a marker with nothing open: nothing changes
    assert f.next_offset == 4


def test_reading_from_inside_a_batch_skips_the_records_before_the_start() -> None:
    f = TransactionFilter(0, start=2)
    assert offsets(f.add(data(0, 4))) == [2, 3]


def test_a_fenced_producers_write_before_its_successors_records_is_not_committed_by_the_successors_marker() -> None:
    # Tansu sometimes accepts a write from a producer that a newer epoch is fencing (its InitProducerId is not
    # atomic with Produce): the write lands with no marker of its own, and the successor's commit would
    # otherwise take it in (a source task's records twice). Apache Kafka refuses such writes.
    f = TransactionFilter(0)
    assert offsets(f.add(data(0, 3, producer=5, epoch=1))) == []  # the fenced instance's, unmarked
    assert offsets(f.add(data(3, 2, producer=5, epoch=2))) == []  # its successor's
    assert f.stable_offset == 3  # the older epoch's records no longer hold anything back
    assert offsets(f.add(marker(5, 5, commit=True))) == [3, 4]
    assert (f.fenced_writes, f.aborted, f.committed_transactions) == (3, 3, 1)


def test_a_fenced_producers_write_after_its_successors_records_is_dropped_at_once() -> None:
    f = TransactionFilter(0)
    f.add(data(0, 2, producer=5, epoch=2))
    assert offsets(f.add(data(2, 1))) == []  # a plain record waits behind the open transaction
    f.add(data(3, 2, producer=5, epoch=1))
    assert offsets(f.add(marker(5, 5, commit=True))) == [0, 1, 2]
    assert f.fenced_writes == 2 and f.stable_offset == 6


def test_each_transaction_of_a_producer_starts_at_its_own_epoch() -> None:
    # epochs may move between transactions (a bump on each commit, as Kafka's second transaction protocol
    # does): only records of one open transaction are compared
    f = TransactionFilter(0)
    f.add(data(0, 1, producer=5, epoch=3))
    assert offsets(f.add(marker(1, 5, commit=True))) == [0]
    f.add(data(2, 1, producer=5, epoch=4))
    assert offsets(f.add(marker(3, 5, commit=True))) == [2]
    assert f.fenced_writes == 0
