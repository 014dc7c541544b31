"""The status store a distributed worker's connectors and tasks write through: every status carries the
generation of the group under which it was written (contract 3.2), so readers can tell a stale report of a
previous owner from the current one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..storage.base import InstanceStatus
from ..storage.kafka_status_store import KafkaStatusStore

# For type checkers this is the store it wraps; at run time it delegates every attribute it does not define
# itself to that store, so no method can be forgotten (one was: `all_statuses`, which left every status
# metric of a distributed worker empty).
_Base: Any = KafkaStatusStore if TYPE_CHECKING else object


class GenerationStatuses(_Base):
    """The status store, whole, with the writes of statuses stamped with the current generation."""

    def __init__(
        self, store: KafkaStatusStore, generation: Callable[[], int], out_of_group: Callable[[], bool] = lambda: False
    ) -> None:
        """`out_of_group`: whether this worker is fenced out of the group now (GroupMember.fenced)."""
        self.store = store
        self._generation = generation
        self._out_of_group = out_of_group

    def __getattr__(self, name: str) -> Any:
        # only reached for names this class does not define: everything the store offers
        return getattr(self.store, name)

    def _stamp(self, status: InstanceStatus) -> InstanceStatus:
        return replace(status, generation=self._generation())

    def put_connector(self, name: str, status: InstanceStatus) -> None:
        self.store.put_connector(name, self._stamp(status))

    def put_task(self, name: str, index: int, status: InstanceStatus) -> None:
        self.store.put_task(name, index, self._stamp(status))

    # The safe writes (UNASSIGNED after a stop, FAILED) are skipped while this worker is out of the group: the
    # group may have given the unit to another worker, whose statuses this one may not have read yet (it has
    # just run again after a freeze, its zombie task failing on its fenced producer). It stops everything then,
    # and reports afresh what it is given when it has joined again.

    def put_connector_safe(self, name: str, status: InstanceStatus) -> None:
        if not self._out_of_group():
            self.store.put_connector_safe(name, self._stamp(status))

    def put_task_safe(self, name: str, index: int, status: InstanceStatus) -> None:
        if not self._out_of_group():
            self.store.put_task_safe(name, index, self._stamp(status))
