"""The overlap checker on partitions written as the faults can write them (no broker needed)."""

from __future__ import annotations

from .checker import Record, analyse

MS = 20  # one record every 20 ms: 50 records/s, as the fault tests' sources


def written(*pieces: tuple[int, int, int]) -> list[Record]:
    """Records in partition order from (first seqno, count, start ms) pieces, each piece one writer's batch."""
    records: list[Record] = []
    for first, count, start_ms in pieces:
        for k in range(count):
            records.append(Record(len(records), first + k, start_ms + k * MS))
    return records


def test_a_restart_replaying_from_its_committed_offset_is_one_writer() -> None:
    # 0..99, crash, a new instance 4 s later from the committed offset 60
    report = analyse(0, written((0, 100, 0), (60, 100, 6000)))
    assert report.overlaps == [] and report.missing == [] and report.highest == 159
    assert [r.first for r in report.starts_after(6000)] == [60]


def test_a_replay_that_happens_to_resume_an_abandoned_run_is_one_writer() -> None:
    # 0..99, then 50..120 from a commit at 50, then 100.. from a commit at 100: seqno 100 follows run one's
    # 99, but two seconds later; the runs follow each other in time
    report = analyse(0, written((0, 100, 0), (50, 71, 4000), (100, 50, 8000)))
    assert report.overlaps == [] and report.missing == []


def test_two_writers_interleaved_are_caught_with_how_long_they_overlapped() -> None:
    # writer A at 0.., writer B started at 4 s from the committed 150; both write batches of 10 records
    pieces = [(0, 200, 0)]
    for k in range(20):
        pieces.append((150 + 10 * k, 10, 4000 + 200 * k))
        pieces.append((200 + 10 * k, 10, 4000 + 200 * k))
    report = analyse(0, written(*pieces))
    assert report.worst_overlap_s >= 3.5, report.overlaps


def test_a_frozen_writers_buffered_records_are_no_overlap_but_its_writes_after_resuming_are() -> None:
    # A writes 0..99 (the last 10 still buffered at the freeze), B takes over at 90 from 6 s, A resumes at
    # 10 s: its buffered 90..99 arrive, then it writes 100..149 for a second more before stopping
    buffered_only = written((0, 90, 0), (90, 100, 6000), (90, 10, 1800), (190, 50, 8000))
    assert analyse(0, buffered_only).overlaps == []
    report = analyse(0, written((0, 90, 0), (90, 100, 6000), (90, 10, 1800), (100, 50, 10000), (190, 150, 8000)))
    assert 0.5 < report.worst_overlap_s < 2.5, report.overlaps


def test_a_lost_record_is_reported() -> None:
    assert analyse(0, written((0, 10, 0), (11, 5, 220))).missing == [10]
