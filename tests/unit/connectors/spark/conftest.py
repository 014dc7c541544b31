"""A real local SparkSession shared by the whole test session (it takes 10-15 s to start)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from runtime.api.records import TopicPartition
from runtime.api.task import OffsetStorageReader, SinkTaskContext, SourceTaskContext
from tests.support.env import have_java, require


@pytest.fixture(scope="session")
def spark():
    require(have_java(), "Java (for a local Spark session)")
    try:
        import pyspark  # noqa: F401
    except ImportError:
        require(False, "pyspark")
    from runtime.connectors.spark.session import get_spark, stop_spark

    # The module-level session the connectors use, so tasks under test share it.
    # C1-only JIT: the JVM starts about twice as fast, and these batches are tiny.
    session = get_spark(
        {
            "spark.master": "local[2]",
            "spark.log.level": "ERROR",
            "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        }
    )
    yield session
    # stop it while logging still works: py4j's finalizers otherwise log into closed streams at exit
    stop_spark()
    logging.getLogger("py4j").setLevel(logging.ERROR)  # its late finalizers' INFO lines too


class RecordingSinkContext(SinkTaskContext):
    """A real (in-memory) sink context: remembers seeks and the assignment."""

    def __init__(self, config: dict[str, str], assignment: set[TopicPartition] = frozenset()) -> None:
        self._config = config
        self._assignment = set(assignment)
        self.seeks: dict[TopicPartition, int] = {}
        self.commit_requested = False

    def configs(self) -> dict[str, str]:
        return self._config

    def offsets(self, offsets: dict[TopicPartition, int]) -> None:
        self.seeks.update(offsets)

    def timeout(self, timeout_ms: int) -> None:
        pass

    def assignment(self) -> set[TopicPartition]:
        return set(self._assignment)

    def pause(self, *partitions: TopicPartition) -> None:
        pass

    def resume(self, *partitions: TopicPartition) -> None:
        pass

    def request_commit(self) -> None:
        self.commit_requested = True


class DictOffsetReader(OffsetStorageReader):
    def __init__(self, store: dict[str, dict[str, Any]]) -> None:
        self.store = store

    def offsets(self, partitions):
        import json

        return [(p, self.store.get(json.dumps(p, sort_keys=True))) for p in partitions]


class MemorySourceContext(SourceTaskContext):
    """A real source context over an in-memory offset store (what the runtime would have committed)."""

    def __init__(self, config: dict[str, str], store: dict[str, dict[str, Any]] | None = None) -> None:
        self._config = config
        self.store = store if store is not None else {}

    def configs(self) -> dict[str, str]:
        return self._config

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return DictOffsetReader(self.store)

    def commit(self, records) -> None:
        """What the runtime does once records are acknowledged: keep each partition's last offset."""
        import json

        for record in records:
            self.store[json.dumps(record.source_partition, sort_keys=True)] = record.source_offset
