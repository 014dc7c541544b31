"""The status store a distributed worker's connectors and tasks write through: every status carries the
generation of the assignment under which it was written (contract 3.2), so readers can tell a stale
report of a previous owner from the current one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..storage.base import InstanceStatus, StatusStore
from ..storage.kafka_status_store import KafkaStatusStore


class GenerationStatuses(StatusStore):
    def __init__(self, store: KafkaStatusStore, generation: Callable[[], int]) -> None:
        super().__init__()
        self.store = store
        self._generation = generation

    def _stamp(self, status: InstanceStatus) -> InstanceStatus:
        return replace(status, generation=self._generation())

    def put_connector(self, name: str, status: InstanceStatus) -> None:
        self.store.put_connector(name, self._stamp(status))

    def put_task(self, name: str, index: int, status: InstanceStatus) -> None:
        self.store.put_task(name, index, self._stamp(status))

    def put_connector_safe(self, name: str, status: InstanceStatus) -> None:
        self.store.put_connector_safe(name, self._stamp(status))

    def put_task_safe(self, name: str, index: int, status: InstanceStatus) -> None:
        self.store.put_task_safe(name, index, self._stamp(status))

    def connector(self, name: str) -> InstanceStatus | None:
        return self.store.connector(name)

    def task(self, name: str, index: int) -> InstanceStatus | None:
        return self.store.task(name, index)

    def tasks(self, name: str) -> dict[int, InstanceStatus]:
        return self.store.tasks(name)

    def remove_task(self, name: str, index: int) -> None:
        self.store.remove_task(name, index)

    def remove_connector(self, name: str) -> None:
        self.store.remove_connector(name)
