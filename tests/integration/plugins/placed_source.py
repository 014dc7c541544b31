"""A source connector for tests, loaded by dotted path: it chooses each record's Kafka partition and
timestamp, which the bundled connectors never do."""

from __future__ import annotations

import threading

from runtime.api import SourceConnector, SourceRecord, SourceTask, Task
from runtime.api.data import STRING_SCHEMA

TIMESTAMP_MS = 1_700_000_000_000


class PlacedSourceConnector(SourceConnector):
    """`topic`, `partitions`, `records`: record n goes to partition n % partitions; odd ones carry a timestamp."""

    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return PlacedSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass


class PlacedSourceTask(SourceTask):
    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self.topic = props["topic"]
        self.partitions = int(props["partitions"])
        self.remaining = int(props["records"])
        self.sent = 0
        self.stopping = threading.Event()

    def poll(self) -> list[SourceRecord] | None:
        if self.remaining <= 0:
            self.stopping.wait(0.2)
            return None
        batch = []
        for _ in range(min(self.remaining, 50)):
            n = self.sent
            batch.append(
                SourceRecord(
                    {"source": "placed"},
                    {"n": n + 1},
                    self.topic,
                    n % self.partitions,
                    None,
                    f"record-{n}",
                    None,
                    STRING_SCHEMA,
                    TIMESTAMP_MS + n if n % 2 else None,
                )
            )
            self.sent += 1
            self.remaining -= 1
        return batch

    def stop(self) -> None:
        self.stopping.set()
