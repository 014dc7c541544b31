"""The leader's assignor (runtime/distributed/assignor.py) without a broker: what it remembers from one
rebalance to the next (departed workers and the KIP-415 delay, revoked units, units claimed twice) with a
clock the test moves, as Kafka's IncrementalCooperativeAssignorTest does with MockTime."""

from __future__ import annotations

from collections import Counter

import pytest

from runtime.distributed.assignment import Assignment, TaskId
from runtime.distributed.assignor import LeaderAssignor
from runtime.distributed.connect_protocol import WorkerState
from runtime.storage.base import InstanceStatus, StatusStore
from runtime.storage.config_codec import ConnectorState
from runtime.storage.kafka_config_store import ClusterConfig
from runtime.storage.states import State

DELAY_S = 10.0


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def config_of(**tasks: int) -> ClusterConfig:
    """A config topic with these connectors, each with that many tasks."""
    return ClusterConfig(
        connectors={
            name: ConnectorState({"name": name}, task_configs=[{"i": str(i)} for i in range(n)])
            for name, n in tasks.items()
        }
    )


def url(worker: str) -> str:
    return f"http://{worker}"


def member(worker: str, held: Assignment | None = None) -> WorkerState:
    """A member's JoinGroup metadata: it holds its share of `held`."""
    held = held or Assignment()
    return WorkerState(url(worker), 0, frozenset(held.connectors_of(worker)), frozenset(held.tasks_of(worker)))


def members(*workers: str, held: Assignment | None = None) -> dict[str, WorkerState]:
    return {f"m-{w}": member(w, held) for w in workers}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def assignor(clock: FakeClock) -> LeaderAssignor:
    return LeaderAssignor("w1", url("w1"), DELAY_S, clock)


def running(placement: Assignment, generation: int) -> StatusStore:
    """The statuses the owners of `placement` wrote once they started its units."""
    statuses = StatusStore()
    for (name, index), worker in placement.tasks.items():
        statuses.put_task(name, index, InstanceStatus(State.RUNNING, worker, generation=generation))
    for name, worker in placement.connectors.items():
        statuses.put_connector(name, InstanceStatus(State.RUNNING, worker, generation=generation))
    return statuses


def loads(placement: Assignment) -> list[int]:
    return sorted(Counter([*placement.connectors.values(), *placement.tasks.values()]).values())


def test_a_first_rebalance_places_everything_evenly_and_tells_each_member_its_share(assignor) -> None:
    config = config_of(a=4, b=2)
    plan = assignor.rebalance(5, Assignment(), members("w1", "w2", "w3"), config)
    placement = plan.placement
    assert placement.group_generation == 5 and placement.generation == 1 and placement.leader == "w1"
    assert set(placement.tasks) == {("a", i) for i in range(4)} | {("b", 0), ("b", 1)}
    assert loads(placement) == [2, 3, 3]
    assert placement.urls == {w: url(w) for w in ("w1", "w2", "w3")}
    answers = plan.member_assignments("m-w1", config_offset=42)
    assert plan.delay_ms == 0
    for member_id, answer in answers.items():
        worker = member_id[2:]
        assert answer.leader == "m-w1" and answer.leader_url == url("w1") and answer.config_offset == 42
        assert answer.connectors == placement.connectors_of(worker) and answer.tasks == placement.tasks_of(worker)
        assert not (answer.revoked_connectors or answer.revoked_tasks)


def test_a_departed_workers_units_wait_for_the_delay_then_go_to_the_others(assignor, clock) -> None:
    config = config_of(a=6)
    first = assignor.rebalance(1, Assignment(), members("w1", "w2", "w3"), config).placement
    lost = first.tasks_of("w3") | {(c, -1) for c in first.connectors_of("w3")}
    assert lost
    clock.sleep(1.0)
    second = assignor.rebalance(2, first, members("w1", "w2", held=first), config)
    # kept for w3 (scheduled.rebalance.max.delay.ms), which stays in the URLs for forwarding
    assert second.placement.tasks == first.tasks and second.placement.connectors == first.connectors
    assert "w3" in second.placement.urls and second.delay_ms == int(DELAY_S * 1000)
    assert not assignor.rejoin_due()
    clock.sleep(DELAY_S / 2)
    assert assignor.update(second.placement, second.placement.generation, config, StatusStore()) is None
    clock.sleep(DELAY_S)
    assert assignor.rejoin_due() and not assignor.rejoin_due()  # the leader asks for one rebalance, once
    third = assignor.rebalance(3, second.placement, members("w1", "w2", held=second.placement), config).placement
    assert "w3" not in third.owners() and "w3" not in third.urls
    assert set(third.tasks) == set(first.tasks) and loads(third) == [3, 4]


def test_a_worker_back_within_the_delay_keeps_its_units(assignor, clock) -> None:
    config = config_of(a=6)
    first = assignor.rebalance(1, Assignment(), members("w1", "w2", "w3"), config).placement
    second = assignor.rebalance(2, first, members("w1", "w2", held=first), config).placement
    clock.sleep(DELAY_S / 2)
    back = assignor.rebalance(3, second, members("w1", "w2", "w3", held=first), config)
    assert back.placement.tasks == first.tasks and back.delay_ms == 0
    assert assignor.departed() == frozenset()
    assert not any(a.revoked_tasks for a in back.member_assignments("m-w1", 0).values())


def test_a_joining_worker_gets_units_only_once_their_owners_report_them_stopped(assignor) -> None:
    config = config_of(a=6)
    first = assignor.rebalance(1, Assignment(), members("w1", "w2"), config).placement
    statuses = running(first, 1)
    plan = assignor.rebalance(2, first, members("w1", "w2", "w3", held=first), config)
    revoked = {t for a in plan.member_assignments("m-w1", 0).values() for t in a.revoked_tasks}
    assert revoked and "w3" not in plan.placement.tasks.values()  # revoked, not handed out yet
    assert assignor.update(plan.placement, plan.placement.generation, config, statuses) is None
    # the owners report what they stopped: UNASSIGNED, in this generation
    for name, index in revoked:
        statuses.put_task(name, index, InstanceStatus(State.UNASSIGNED, first.tasks[(name, index)], generation=2))
    updated = assignor.update(plan.placement, plan.placement.generation, config, statuses)
    assert updated is not None and updated.generation == plan.placement.generation + 1
    assert updated.group_generation == 2
    assert {t for t, w in updated.tasks.items() if w == "w3"} == revoked
    assert all(updated.tasks[t] == w for t, w in plan.placement.tasks.items())  # nothing else moved


def test_a_stale_stopped_report_does_not_release_a_revoked_unit(assignor) -> None:
    config = config_of(a=4)
    first = assignor.rebalance(1, Assignment(), members("w1"), config).placement
    statuses = running(first, 1)
    plan = assignor.rebalance(2, first, members("w1", "w2", held=first), config)
    (task, *_) = sorted(t for a in plan.member_assignments("m-w1", 0).values() for t in a.revoked_tasks)
    statuses.put_task(*task, InstanceStatus(State.UNASSIGNED, "w1", generation=1))  # an earlier generation's
    assert assignor.update(plan.placement, plan.placement.generation, config, statuses) is None
    statuses.put_task(*task, InstanceStatus(State.RUNNING, "w1", generation=2))
    assert assignor.update(plan.placement, plan.placement.generation, config, statuses) is None


def test_units_two_members_claim_are_revoked_from_both_until_the_next_rebalance(assignor) -> None:
    config = config_of(a=2, b=1)
    claims = {
        "m-w1": WorkerState(url("w1"), 0, frozenset({"a"}), frozenset({("a", 0), ("b", 0)})),
        "m-w2": WorkerState(url("w2"), 0, frozenset({"a"}), frozenset({("a", 1), ("b", 0)})),
    }
    plan = assignor.rebalance(4, Assignment(), claims, config)
    assert "a" not in plan.placement.connectors and ("b", 0) not in plan.placement.tasks
    answers = plan.member_assignments("m-w1", 0)
    assert all("a" in a.revoked_connectors and ("b", 0) in a.revoked_tasks for a in answers.values())
    statuses = StatusStore()  # even with nothing reported, they wait for the next rebalance
    updated = assignor.update(plan.placement, plan.placement.generation, config_of(a=2, b=1, c=1), statuses)
    assert updated is not None and "c" in updated.connectors and ("c", 0) in updated.tasks
    assert "a" not in updated.connectors and ("b", 0) not in updated.tasks
    stopped = {
        "m-w1": WorkerState(url("w1"), 0, frozenset(), frozenset({("a", 0)})),
        "m-w2": WorkerState(url("w2"), 0, frozenset(), frozenset({("a", 1)})),
    }
    settled = assignor.rebalance(5, updated, stopped, config).placement
    assert "a" in settled.connectors and ("b", 0) in settled.tasks


def test_between_rebalances_new_units_go_to_the_least_loaded_and_deleted_ones_go(assignor) -> None:
    config = config_of(a=2)
    first = assignor.rebalance(1, Assignment(), members("w1", "w2"), config).placement
    statuses = StatusStore()
    assert assignor.update(first, first.generation, config, statuses) is None  # nothing new
    grown = config_of(a=2, b=3)
    updated = assignor.update(first, first.generation, grown, statuses)
    assert updated is not None
    assert {t: w for t, w in updated.tasks.items() if t[0] == "a"} == first.tasks
    assert loads(updated) == [3, 4]
    assert assignor.update(updated, updated.generation, grown, statuses) is None  # the same inputs again
    shrunk = assignor.update(updated, updated.generation, config_of(b=3), statuses)
    assert shrunk is not None and set(shrunk.connectors) == {"b"}
    assert {t: w for t, w in shrunk.tasks.items()} == {t: w for t, w in updated.tasks.items() if t[0] == "b"}


def test_connectors_with_inconsistent_task_configs_place_no_tasks(assignor) -> None:
    config = config_of(a=2, b=2)
    config.inconsistent.add("b")
    placement = assignor.rebalance(1, Assignment(), members("w1", "w2"), config).placement
    tasks: set[TaskId] = set(placement.tasks)
    assert tasks == {("a", 0), ("a", 1)} and set(placement.connectors) == {"a", "b"}
