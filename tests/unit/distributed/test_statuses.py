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
