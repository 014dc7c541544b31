"""Tell a replay from two concurrent writers in one SequenceSource partition (`task.own.partition=true`).

Task i writes seqnos 0, 1, 2, ... into partition i, each record stamped (CreateTime) by its worker's
producer; every worker runs on this host, so the stamps share one clock. A partition read in offset
order is cut into runs: a record extends a run ending at seqno - 1 (the most recently extended one),
else it starts a new run. One writer at a time gives runs that follow each other in time: a restarted
task going back to its committed offset is an at-least-once replay, not a second writer. Two workers
running the task at once give two runs interleaved in the partition whose time spans overlap; that
overlap is what we bound.

A run is also cut where its producer stamped nothing for `GAP_MS`: a worker frozen with its records
still buffered and sent after SIGCONT must not look as if it ran through the freeze (cutting a run never
creates an overlap, since both halves come from one writer, one after the other).
"""

from __future__ import annotations

from dataclasses import dataclass, field

GAP_MS = 1000


@dataclass(frozen=True)
class Record:
    offset: int
    seqno: int
    ts_ms: int


@dataclass
class Run:
    records: list[Record] = field(default_factory=list)

    @property
    def first(self) -> int:
        return self.records[0].seqno

    @property
    def last(self) -> int:
        return self.records[-1].seqno

    @property
    def start_ms(self) -> int:
        return min(r.ts_ms for r in self.records)

    @property
    def end_ms(self) -> int:
        return max(r.ts_ms for r in self.records)

    def __repr__(self) -> str:
        return (
            f"Run(seqnos {self.first}..{self.last}, offsets {self.records[0].offset}..{self.records[-1].offset}, "
            f"ms {self.start_ms}..{self.end_ms})"
        )


@dataclass(frozen=True)
class Overlap:
    a: Run
    b: Run
    seconds: float


@dataclass
class PartitionReport:
    partition: int
    runs: list[Run]
    overlaps: list[Overlap]
    missing: list[int]  # seqnos below the highest one written that never appear
    highest: int  # -1 when the partition holds no sequence record

    @property
    def worst_overlap_s(self) -> float:
        return max((o.seconds for o in self.overlaps), default=0.0)

    def starts_after(self, ms: int) -> list[Run]:
        """Runs begun at or after `ms`: task instances (or their continuations) started after a fault."""
        return [run for run in self.runs if run.start_ms >= ms]


def split_runs(records: list[Record], gap_ms: int = GAP_MS) -> list[Run]:
    runs: list[Run] = []
    open_ends: dict[int, list[Run]] = {}  # last seqno -> runs ending there, most recently extended last
    for record in records:
        candidates = open_ends.get(record.seqno - 1, [])
        run = next((r for r in reversed(candidates) if record.ts_ms - r.records[-1].ts_ms <= gap_ms), None)
        if run is None:
            run = Run()
            runs.append(run)
        else:
            candidates.remove(run)
        run.records.append(record)
        open_ends.setdefault(record.seqno, []).append(run)
    return runs


def overlaps(runs: list[Run]) -> list[Overlap]:
    """Pairs of runs interleaved in the partition whose time spans intersect, with the intersection."""
    found = []
    for i, a in enumerate(runs):
        a_offsets = (a.records[0].offset, a.records[-1].offset)
        for b in runs[i + 1 :]:
            if b.records[0].offset > a_offsets[1]:
                continue  # b wholly after a in the partition: they followed each other
            both_ms = min(a.end_ms, b.end_ms) - max(a.start_ms, b.start_ms)
            if both_ms > 0:
                found.append(Overlap(a, b, both_ms / 1000))
    return found


def analyse(partition: int, records: list[Record]) -> PartitionReport:
    runs = split_runs(records)
    seen = {r.seqno for r in records}
    highest = max(seen, default=-1)
    return PartitionReport(partition, runs, overlaps(runs), sorted(set(range(highest + 1)) - seen), highest)
