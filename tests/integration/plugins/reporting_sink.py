"""A sink connector for tests, loaded by dotted path: it records what it accepts as RecordingSink does and
reports every record whose value has `"bad": true` through KIP-610's errant record reporter."""

from __future__ import annotations

from runtime.api import DataError, SinkRecord, Task
from runtime.connectors.testing import RecordingSinkConnector, RecordingSinkTask


class ReportingSinkConnector(RecordingSinkConnector):
    def task_class(self) -> type[Task]:
        return ReportingSinkTask


class ReportingSinkTask(RecordingSinkTask):
    def put(self, records: list[SinkRecord]) -> None:
        reporter = self.context.errant_record_reporter()
        assert reporter is not None, "this runtime offers an errant record reporter"
        accepted = []
        for record in records:
            if isinstance(record.value, dict) and record.value.get("bad"):
                reporter.report(record, DataError(f"rejected by the task: {record.value}"))
            else:
                accepted.append(record)
        super().put(accepted)
