"""The distributed worker's status store (runtime/distributed/statuses.py) is the store whole, with the
writes stamped with the group generation: what it does not define itself (reads, removals, topic records,
`all_statuses` for the metrics) is the wrapped store's."""

from __future__ import annotations

from runtime.distributed.statuses import GenerationStatuses
from runtime.storage.base import InstanceStatus, StatusStore
from runtime.storage.states import State


def test_writes_carry_the_generation_and_everything_else_is_the_stores() -> None:
    store = StatusStore()
    generation = [3]
    statuses = GenerationStatuses(store, lambda: generation[0])  # type: ignore[arg-type]  # any status store
    statuses.put_connector("c", InstanceStatus(State.RUNNING, "w1"))
    statuses.put_task("c", 0, InstanceStatus(State.RUNNING, "w1"))
    generation[0] = 4
    statuses.put_task("c", 1, InstanceStatus(State.FAILED, "w1", "trace"))
    assert store.connector("c") == InstanceStatus(State.RUNNING, "w1", generation=3)
    assert statuses.tasks("c") == {
        0: InstanceStatus(State.RUNNING, "w1", generation=3),
        1: InstanceStatus(State.FAILED, "w1", "trace", generation=4),
    }
    # the metrics collector's read: every status, as the store has them
    connectors, tasks = statuses.all_statuses()
    assert connectors == {"c": store.connector("c")} and tasks[("c", 1)].state is State.FAILED
    statuses.remove_connector("c")
    assert store.all_statuses() == ({}, {})


def test_a_worker_out_of_the_group_writes_no_unassigned_or_failed_over_what_the_group_gave_others() -> None:
    """Issue 25's frozen follower: woken, its zombie task fails on its fenced producer before it has read the
    new owner's RUNNING; that FAILED, then its UNASSIGNED, hid the new owner's status for good."""
    store = StatusStore()
    out = [True]
    statuses = GenerationStatuses(store, lambda: 9, lambda: out[0])  # type: ignore[arg-type]
    statuses.put_task_safe("c", 0, InstanceStatus(State.FAILED, "w1", "fenced"))
    statuses.put_task_safe("c", 1, InstanceStatus(State.UNASSIGNED, "w1"))
    statuses.put_connector_safe("c", InstanceStatus(State.UNASSIGNED, "w1"))
    assert store.all_statuses() == ({}, {})
    out[0] = False
    statuses.put_task_safe("c", 0, InstanceStatus(State.FAILED, "w1", "trace"))
    assert store.task("c", 0) == InstanceStatus(State.FAILED, "w1", "trace", generation=9)
