"""The pure parts of the worker group (no broker): the assignor's balance, stickiness and two-phase
moves, the assignment record codec, and heartbeat-based liveness and leader choice."""
from __future__ import annotations

from collections import Counter

from runtime.distributed import assignment as assignment_module
from runtime.distributed.assignment import (
    INVALID, OTHER, PART, Assignment, AssignmentReader, compute_assignment, decode_assignment,
)
from runtime.distributed.membership import Heartbeat, Membership, decode_heartbeat

TASKS = [("a", i) for i in range(4)] + [("b", i) for i in range(2)]


def place(current: Assignment, members: list[str], held: set[str] | None = None) -> Assignment:
    connectors, tasks = compute_assignment(current, members, ["a", "b"], TASKS, held)
    return Assignment(current.generation + 1, "w1", "", connectors, tasks)


def test_first_assignment_is_balanced_and_spreads_each_connector() -> None:
    first = place(Assignment(), ["w1", "w2", "w3"])
    assert sorted(Counter(first.tasks.values()).values()) == [2, 2, 2]
    assert sorted(Counter(first.connectors.values()).values()) == [1, 1]
    assert len({first.tasks[("b", 0)], first.tasks[("b", 1)]}) == 2


def test_a_joining_worker_gets_units_only_after_they_were_revoked() -> None:
    start = place(Assignment(), ["w1", "w2"])
    revoking = place(start, ["w1", "w2", "w3"])
    # first generation with w3: units leave their owners but are not handed out yet
    assert "w3" not in revoking.tasks.values()
    assert set(revoking.tasks) < set(start.tasks)
    assert all(start.tasks[t] == w for t, w in revoking.tasks.items())  # nothing else moves
    settled = place(revoking, ["w1", "w2", "w3"])
    assert sorted(Counter(settled.tasks.values()).values()) == [2, 2, 2]
    assert {t for t, w in settled.tasks.items() if w == "w3"} == set(start.tasks) - set(revoking.tasks)
    assert place(settled, ["w1", "w2", "w3"]).tasks == settled.tasks  # stable once balanced


def test_a_dead_workers_units_move_at_once_unless_held() -> None:
    start = place(Assignment(), ["w1", "w2", "w3"])
    lost = {t for t, w in start.tasks.items() if w == "w2"}
    held = place(start, ["w1", "w3"], held={"w2"})
    assert held.tasks == start.tasks  # kept for w2 during scheduled.rebalance.max.delay.ms
    moved = place(start, ["w1", "w3"])
    assert set(moved.tasks) == set(TASKS) and "w2" not in moved.tasks.values()
    assert all(moved.tasks[t] == start.tasks[t] for t in set(TASKS) - lost)
    assert sorted(Counter(moved.tasks.values()).values()) == [3, 3]


def test_removed_units_disappear_and_no_members_keep_nothing_new() -> None:
    start = place(Assignment(), ["w1", "w2"])
    connectors, tasks = compute_assignment(start, ["w1", "w2"], ["a"], [("a", 0)])
    assert set(connectors) == {"a"} and set(tasks) == {("a", 0)}
    assert compute_assignment(Assignment(), [], ["a"], [("a", 0)]) == ({}, {})


def test_assignment_record_round_trip_and_rejects_malformed_values() -> None:
    assignment = place(Assignment(), ["w1", "w2"])
    assert decode_assignment(assignment.encode()) == assignment
    for bad in (None, [], {"generation": "1", "connectors": {}, "tasks": []},
                {"generation": 1, "connectors": {"a": 1}, "tasks": []},
                {"generation": 1, "connectors": {}, "tasks": [["a", "0", "w1"]]}):
        assert decode_assignment(bad) is None


def test_assignment_is_written_in_small_parts_and_read_back(monkeypatch) -> None:
    monkeypatch.setattr(assignment_module, "PART_UNITS", 4)
    assignment = place(Assignment(), ["w1", "w2", "w3"])
    records = assignment.records("grp")
    assert len(records) == 1 + -(-(len(assignment.connectors) + len(assignment.tasks)) // 4)
    assert records[-1][0] == "assignment-grp" and all(k.startswith("assignment-grp.part-") for k, _ in records[:-1])
    reader = AssignmentReader("grp")
    outcomes = [reader.read(key, value) for key, value in records]
    assert outcomes[:-1] == [PART] * (len(records) - 1) and outcomes[-1] == assignment
    # an earlier version's single record is still read; earlier versions reject (log and skip) the new ones
    assert reader.read("assignment-grp", assignment.encode()) == assignment
    assert all(decode_assignment(value) is None for _, value in records)
    # another group's key sharing the prefix, and an assignment whose parts are missing or stale
    assert reader.read("assignment-grp2", assignment.encode()) == OTHER
    newer = Assignment(assignment.generation + 1, "w1", "", assignment.connectors, assignment.tasks)
    assert AssignmentReader("grp").read(*newer.records("grp")[-1]) == INVALID
    assert reader.read(*newer.records("grp")[-1]) == INVALID  # the parts read are generation N, not N+1


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def beat(worker: str, started: int, ts: int = 0, generation: int = 0, incarnation: str = "i") -> Heartbeat:
    return Heartbeat(worker, f"http://{worker}", incarnation, started, ts, generation)


def test_liveness_expires_after_the_session_timeout_and_leader_is_the_oldest() -> None:
    clock = Clock()
    members = Membership(4.0, clock=clock, wall_clock=lambda: 0.0)
    members.observe("w2", beat("w2", started=200))
    members.observe("w1", beat("w1", started=100))
    members.observe("w3", beat("w3", started=300))
    assert set(members.live()) == {"w1", "w2", "w3"}
    assert members.leader().worker_id == "w1"
    clock.now += 3.0
    members.observe("w2", beat("w2", started=200, ts=1))
    members.observe("w3", beat("w3", started=300, ts=1))
    clock.now += 1.5  # w1 silent for 4.5 s
    assert set(members.live()) == {"w2", "w3"}
    assert members.leader().worker_id == "w2"
    members.observe("w3", None)  # graceful leave
    assert set(members.live()) == {"w2"}


def test_replayed_heartbeats_are_aged_by_their_timestamp() -> None:
    clock = Clock()
    members = Membership(4.0, clock=clock, wall_clock=lambda: 100.0)
    members.observe("old", beat("old", 1, ts=90_000), replay=True)  # written 10 s ago
    members.observe("recent", beat("recent", 2, ts=99_000), replay=True)
    assert set(members.live()) == {"recent"}
    assert decode_heartbeat(beat("w", 5, 6, 7).encode()) == beat("w", 5, 6, 7)
    assert decode_heartbeat(b"{}") is None and decode_heartbeat(b"not json") is None
