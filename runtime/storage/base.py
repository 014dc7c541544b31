"""Store interfaces: one each for source offsets, connector configs and statuses.

Standalone uses the memory and file implementations; distributed mode adds Kafka-backed ones
behind the same interfaces.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .config_codec import ConnectorState
from .states import State, TargetState


class OffsetStore(ABC):
    """Raw source offsets: key and value bytes exactly as the reference stores them."""

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    @abstractmethod
    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]: ...

    @abstractmethod
    def set(self, entries: Mapping[bytes, bytes | None]) -> None:
        """Durable when it returns; a None value is a tombstone."""

    @abstractmethod
    def items(self) -> list[tuple[bytes, bytes]]:
        """Every live (non-tombstoned) entry."""


class ConfigStore(ABC):
    """Connector configs, task configs and target states."""

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    @abstractmethod
    def load(self) -> dict[str, ConnectorState]:
        """Everything stored, read with KIP-915 tolerance."""

    @abstractmethod
    def save(self, name: str, state: ConnectorState | None) -> None:
        """Store one connector's state (None removes it); durable when it returns."""


@dataclass(frozen=True)
class InstanceStatus:
    state: State
    worker_id: str
    trace: str | None = None
    generation: int = 0


class TaskStatuses(dict[tuple[str, int], InstanceStatus]):
    """(connector, task index) -> status, indexed by connector too: a listing reads the tasks of every
    connector, which must not cost a scan of every task in the cluster each time."""

    def __init__(self) -> None:
        super().__init__()
        self._by_connector: dict[str, dict[int, InstanceStatus]] = {}

    def __setitem__(self, key: tuple[str, int], value: InstanceStatus) -> None:
        super().__setitem__(key, value)
        self._by_connector.setdefault(key[0], {})[key[1]] = value

    def __delitem__(self, key: tuple[str, int]) -> None:
        super().__delitem__(key)
        self._unindex(key)

    def pop(self, key: tuple[str, int], *default: Any) -> Any:
        if key in self:
            self._unindex(key)
        return super().pop(key, *default)

    def _unindex(self, key: tuple[str, int]) -> None:
        tasks = self._by_connector.get(key[0])
        if tasks is not None:
            tasks.pop(key[1], None)
            if not tasks:
                del self._by_connector[key[0]]

    def of(self, connector: str) -> dict[int, InstanceStatus]:
        return dict(self._by_connector.get(connector, {}))

    def remove_connector(self, connector: str) -> None:
        for index in self._by_connector.pop(connector, {}):
            super().__delitem__((connector, index))


def _can_write_safely(current: InstanceStatus | None, status: InstanceStatus) -> bool:
    """The reference's putSafe rule: `status` may replace `current` (none, the same worker's, or older)."""
    return current is None or current.worker_id == status.worker_id or current.generation <= status.generation


class StatusStore:
    """Connector and task statuses; thread-safe since task threads report their own failures."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connectors: dict[str, InstanceStatus] = {}
        self._tasks = TaskStatuses()

    def put_connector(self, name: str, status: InstanceStatus) -> None:
        with self._lock:
            self._connectors[name] = status

    def put_task(self, name: str, index: int, status: InstanceStatus) -> None:
        with self._lock:
            self._tasks[(name, index)] = status

    # The reference's putSafe, for a failure and the UNASSIGNED after a stop: written unless the stored status
    # is another worker's of a newer generation (a zombie's must never hide its successor's).

    def put_connector_safe(self, name: str, status: InstanceStatus) -> None:
        with self._lock:
            if not _can_write_safely(self._connectors.get(name), status):
                return
        self.put_connector(name, status)

    def put_task_safe(self, name: str, index: int, status: InstanceStatus) -> None:
        with self._lock:
            if not _can_write_safely(self._tasks.get((name, index)), status):
                return
        self.put_task(name, index, status)

    def connector(self, name: str) -> InstanceStatus | None:
        with self._lock:
            return self._connectors.get(name)

    def task(self, name: str, index: int) -> InstanceStatus | None:
        with self._lock:
            return self._tasks.get((name, index))

    def tasks(self, name: str) -> dict[int, InstanceStatus]:
        with self._lock:
            return self._tasks.of(name)

    def all_statuses(self) -> tuple[dict[str, InstanceStatus], dict[tuple[str, int], InstanceStatus]]:
        """Copies of every connector and task status (for metrics scrapes)."""
        with self._lock:
            return dict(self._connectors), dict(self._tasks)

    def remove_task(self, name: str, index: int) -> None:
        with self._lock:
            self._tasks.pop((name, index), None)

    def remove_connector(self, name: str) -> None:
        with self._lock:
            self._connectors.pop(name, None)
            self._tasks.remove_connector(name)


__all__ = ["ConfigStore", "ConnectorState", "InstanceStatus", "OffsetStore", "State", "StatusStore", "TargetState"]
