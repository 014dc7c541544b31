"""The Spark sink with a delivery journal, loaded by the real worker as a plugin (by its dotted path).

It records, per task life, the partitions opened with the offsets the task asked to seek to, and
every (partition, offset) handed to put(). The sink's own commit log would hide a runtime that
delivers records from before the seek position (it drops them), so the journal is what lets a test
check the runtime itself: after open(), each partition's first record is the seek position and the
following ones are consecutive, never repeated.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from runtime.api.records import SinkRecord, TopicPartition
from runtime.api.task import SinkTask
from runtime.connectors.spark.sink import SparkSinkConnector, SparkSinkTask

JOURNAL = "test.delivery.journal"


class JournalingSparkSinkConnector(SparkSinkConnector):
    def task_class(self) -> type[SinkTask]:
        return JournalingSparkSinkTask


class JournalingSparkSinkTask(SparkSinkTask):
    def start(self, props: dict[str, str]) -> None:
        self._journal = Path(props[JOURNAL])
        super().start(props)
        self._note({"event": "start"})

    def open(self, partitions: list[TopicPartition]) -> None:
        super().open(partitions)
        logged = self._log.offsets  # what open() asked the runtime to seek to
        self._note(
            {
                "event": "open",
                "partitions": [tp.partition for tp in partitions],
                "seeks": {str(tp.partition): logged[tp] for tp in partitions if tp in logged},
            }
        )

    def put(self, records: list[SinkRecord]) -> None:
        if records:
            self._note({"event": "put", "records": [[r.kafka_partition, r.kafka_offset] for r in records]})
        super().put(records)

    def _note(self, event: dict) -> None:
        with open(self._journal, "a") as out:
            out.write(json.dumps(event) + "\n")
            out.flush()
            os.fsync(out.fileno())


def delivery_problems(journal: Path) -> list[str]:
    """Deliveries that break "start at the seek, then consecutive offsets" within one assignment."""
    problems: list[str] = []
    expected: dict[int, int | None] = {}  # partition -> next offset due (None: any first offset)
    for line in journal.read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "start":
            expected = {}
        elif event["event"] == "open":
            for partition in event["partitions"]:
                expected[partition] = event["seeks"].get(str(partition))
        else:
            for partition, offset in event["records"]:
                due = expected.get(partition)
                if due is not None and offset != due:
                    problems.append(f"partition {partition}: delivered offset {offset}, expected {due}")
                expected[partition] = offset + 1
    return problems
