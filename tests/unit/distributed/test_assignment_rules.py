"""The pure parts of the worker group (no broker): the assignor's balance, stickiness and two-phase
moves, placements between rebalances, and the assignment record codec."""

from __future__ import annotations

from collections import Counter

from runtime.distributed import assignment as assignment_module
from runtime.distributed.assignment import (
    INVALID,
    OTHER,
    PART,
    Assignment,
    AssignmentReader,
    claimed_placement,
    compute_assignment,
    decode_assignment,
)

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
    for bad in (
        None,
        [],
        {"generation": "1", "connectors": {}, "tasks": []},
        {"generation": 1, "connectors": {"a": 1}, "tasks": []},
        {"generation": 1, "connectors": {}, "tasks": [["a", "0", "w1"]]},
    ):
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


def test_between_rebalances_new_units_go_to_the_least_loaded_and_nothing_moves() -> None:
    # w1 holds everything (a skew only a rebalance may fix); a new connector "c" with two tasks arrives
    current = Assignment(1, "w1", "", {"a": "w1", "b": "w1"}, {t: "w1" for t in TASKS}, 7, {"w1": "u1", "w2": "u2"})
    connectors, tasks = compute_assignment(
        current, ["w1", "w2"], ["a", "b", "c"], [*TASKS, ("c", 0), ("c", 1)], moves=False
    )
    assert {c: w for c, w in connectors.items() if c != "c"} == current.connectors
    assert {t: w for t, w in tasks.items() if t[0] != "c"} == current.tasks  # nothing revoked
    assert connectors["c"] == "w2" and tasks[("c", 0)] == "w2" and tasks[("c", 1)] == "w2"
    # a deleted connector's units disappear, the rest stay where they are
    connectors, tasks = compute_assignment(current, ["w1", "w2"], ["a"], [t for t in TASKS if t[0] == "a"], moves=False)
    assert connectors == {"a": "w1"} and set(tasks.values()) == {"w1"} and len(tasks) == 4


def test_a_unit_two_members_claim_is_kept_by_neither() -> None:
    # w1 is back from a freeze still running ("a", 0) and "b", which w2 and w3 took over meanwhile: keeping
    # either copy while revoking the other would move the unit within one generation
    claims = {"w1": ({"a", "b"}, {("a", 0), ("a", 1)}), "w2": ({"b"}, {("a", 0)}), "w3": (set(), {("b", 0)})}
    connectors, tasks, twice_connectors, twice_tasks = claimed_placement(claims)
    assert connectors == {"a": "w1"} and tasks == {("a", 1): "w1", ("b", 0): "w3"}
    assert twice_connectors == {"b"} and twice_tasks == {("a", 0)}


def test_group_generation_and_urls_round_trip_through_the_records() -> None:
    record = Assignment(3, "w1", "http://w1", {"a": "w1"}, {("a", 0): "w2"}, 12, {"w1": "http://w1", "w2": "http://w2"})
    reader = AssignmentReader("g")
    results = [reader.read(key, value) for key, value in record.records("g")]
    assert results[-1] == record
