"""TimestampRouter: rename the topic from the original topic and the record timestamp."""

from __future__ import annotations

from typing import Any

from ..api.config import ConfigDef, Importance, Type
from ..api.errors import DataError
from ..api.records import ConnectRecord
from ..api.transforms import Transformation
from ..data.java_date_format import DateFormat
from ._util import parse_config

OVERVIEW_DOC = (
    "Update the record's topic field as a function of the original topic value and the record timestamp."
    "<p/>This is mainly useful for sink connectors, since the topic field is often used to determine the "
    "equivalent entity name in the destination system(e.g. database table or search index name)."
)


def config_def() -> ConfigDef:
    return (
        ConfigDef()
        .define(
            "topic.format",
            Type.STRING,
            "${topic}-${timestamp}",
            importance=Importance.HIGH,
            documentation="Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> "
            "as placeholders for the topic and timestamp, respectively.",
        )
        .define(
            "timestamp.format",
            Type.STRING,
            "yyyyMMdd",
            importance=Importance.HIGH,
            documentation="Format string for the timestamp that is compatible with "
            "<code>java.text.SimpleDateFormat</code>.",
        )
    )


class TimestampRouter(Transformation):
    __doc__ = OVERVIEW_DOC

    def configure(self, configs: dict[str, Any]) -> None:
        values = parse_config(config_def(), configs)
        self.topic_format = values["topic.format"]
        # Kafka builds its SimpleDateFormat on first use, so a bad pattern fails records, not configure()
        self.timestamp_format: DateFormat | None = None
        self._format_error: str | None = None
        try:
            self.timestamp_format = DateFormat(values["timestamp.format"])
        except ValueError as exc:
            self._format_error = str(exc)

    def config(self) -> ConfigDef:
        return config_def()

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        if record.timestamp is None:
            raise DataError(f"Timestamp missing on record: {record}")
        if self.timestamp_format is None:
            raise ValueError(self._format_error)
        formatted = self.timestamp_format.format_millis(record.timestamp)
        topic = self.topic_format.replace("${topic}", record.topic).replace("${timestamp}", formatted)
        return record.new_record(topic=topic)
