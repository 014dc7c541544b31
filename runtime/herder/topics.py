"""The topics each connector's tasks have used (KIP-558), as both herders keep them: in memory
(standalone, as the reference's MemoryStatusBackingStore) or as `status-topic-` records of the status topic
(distributed). The worker is given `record` at construction and calls it from task threads (and task
processes) the first time a task meets a topic; `topic.tracking.enable=false` records nothing."""

from __future__ import annotations

import threading
import time
from typing import Protocol

from ..storage.kafka_status_store import KafkaStatusStore
from ..storage.status_codec import TopicStatus
from ..worker_config import WorkerConfig


class ActiveTopics(Protocol):
    def record(self, connector: str, task: int, topic: str) -> None: ...

    def topics(self, connector: str) -> list[str]: ...

    def reset(self, connector: str) -> None: ...


class MemoryTopics:
    """Standalone: per connector, in the order first seen. They outlive the connector, as in the reference,
    until a reset."""

    def __init__(self, config: WorkerConfig) -> None:
        self._enabled = config.get_bool("topic.tracking.enable")
        self._lock = threading.Lock()
        self._topics: dict[str, list[str]] = {}

    def record(self, connector: str, task: int, topic: str) -> None:
        if not self._enabled:
            return
        with self._lock:
            topics = self._topics.setdefault(connector, [])
            if topic not in topics:
                topics.append(topic)

    def topics(self, connector: str) -> list[str]:
        with self._lock:
            return list(self._topics.get(connector, []))

    def reset(self, connector: str) -> None:
        with self._lock:
            self._topics.pop(connector, None)


class StatusTopics:
    """Distributed: `status-topic-<topic>:connector-<c>` records, shared by every worker (contract 3.2)."""

    def __init__(self, config: WorkerConfig, store: KafkaStatusStore) -> None:
        self._enabled = config.get_bool("topic.tracking.enable")
        self.store = store

    def record(self, connector: str, task: int, topic: str) -> None:
        if self._enabled and self.store.topic(connector, topic) is None:
            self.store.put_topic(TopicStatus(topic, connector, task, int(time.time() * 1000)))

    def topics(self, connector: str) -> list[str]:
        return sorted(status.topic for status in self.store.topics(connector))

    def reset(self, connector: str) -> None:
        for status in self.store.topics(connector):
            self.store.delete_topic(connector, status.topic)
