"""SparkSourceConnector: reads a parquet/orc/json/csv dataset with Spark and emits its rows.

Modes:
- `files`: each new data file is read once. Offset `{"files": "<JSON array of sorted file names>"}`:
  a JSON *string*, because source offsets may only hold primitive values (Kafka's
  OffsetUtils.validateFormat; a list would be rejected by the runtime and by the REST API). Only
  the last row of a file carries an offset naming that file, so a crash mid-file re-reads it
  (at least once, never lost).
- `incrementing`: rows whose `incrementing.column` is above the last value seen, in order.
  Offset `{"incrementing": <value>}`.
The source partition is `{"path": <path config>}`.
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Any

from ...api.config import AbstractConfig, ConfigDef, ConfigValue, Importance, Range, Type, ValidString
from ...api.connector import SourceConnector
from ...api.errors import ConnectError
from ...api.records import SourceRecord
from ...api.task import SourceTask
from .config import FORMAT, PATH, common_config
from .dataset import data_files, local_root
from .schema import connect_schema, table_rows
from .session import get_spark

if TYPE_CHECKING:
    from pyspark.sql import DataFrameReader, SparkSession

log = logging.getLogger(__name__)

MODE = "mode"
INCREMENTING_COLUMN = "incrementing.column"
TOPIC = "topic"
BATCH_SIZE = "batch.size"
POLL_INTERVAL_MS = "poll.interval.ms"
FILES_KEY = "files"
INCREMENTING_KEY = "incrementing"


def source_config() -> ConfigDef:
    return (
        common_config()
        .define(TOPIC, Type.STRING, importance=Importance.HIGH, documentation="Topic the rows are written to.")
        .define(
            MODE,
            Type.STRING,
            "files",
            ValidString.of("files", "incrementing"),
            Importance.HIGH,
            "files: emit the rows of each new data file; incrementing: emit rows whose "
            "incrementing.column is above the last one emitted.",
        )
        .define(
            INCREMENTING_COLUMN,
            Type.STRING,
            "",
            importance=Importance.MEDIUM,
            documentation="Strictly increasing column (numeric or string) used by mode=incrementing.",
        )
        .define(BATCH_SIZE, Type.INT, 2000, Range.at_least(1), Importance.LOW, "Most rows returned by one poll.")
        .define(
            POLL_INTERVAL_MS,
            Type.LONG,
            1000,
            Range.at_least(0),
            Importance.LOW,
            "Pause before looking at the dataset again when nothing new was found.",
        )
    )


def encode_files(files: list[str] | set[str]) -> str:
    return json.dumps(sorted(files), separators=(",", ":"))


def decode_files(value: Any) -> list[str]:
    """The processed files of an offset (a JSON string; a plain list is accepted too)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ConnectError(f"Offset key '{FILES_KEY}' must be a JSON array of file names, got {value!r}") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConnectError(f"Offset key '{FILES_KEY}' must be a JSON array of file names, got {value!r}")
    return sorted(value)


def check_offset(mode: str, offset: dict[str, Any] | None) -> None:
    """Raise ConnectError unless `offset` has the shape `mode` needs (None = reset, always fine)."""
    if offset is None:
        return
    if not isinstance(offset, dict):
        raise ConnectError(f"Offsets of this connector must be objects, got {offset!r}")
    if mode == "files":
        if set(offset) != {FILES_KEY}:
            raise ConnectError(f"Offsets in mode 'files' must contain only the key '{FILES_KEY}', got {sorted(offset)}")
        decode_files(offset[FILES_KEY])
    else:
        if set(offset) != {INCREMENTING_KEY}:
            raise ConnectError(
                f"Offsets in mode 'incrementing' must contain only the key '{INCREMENTING_KEY}', got {sorted(offset)}"
            )
        value = offset[INCREMENTING_KEY]
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ConnectError(f"Offset '{INCREMENTING_KEY}' must be a number or a string, got {value!r}")


class SparkSourceConnector(SourceConnector):
    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)
        AbstractConfig(source_config(), props)

    def task_class(self) -> type[SourceTask]:
        return SparkSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]  # one dataset, one ordered reader

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return source_config()

    def validate(self, connector_configs: dict[str, str]) -> list[ConfigValue]:
        values = super().validate(connector_configs)
        if connector_configs.get(MODE, "files") == "incrementing" and not connector_configs.get(INCREMENTING_COLUMN):
            for value in values:
                if value.name == INCREMENTING_COLUMN:
                    value.add_error("incrementing.column is required when mode=incrementing")
        return values

    def alter_offsets(
        self, connector_config: dict[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        """Accept offsets of this dataset's partition in this mode's shape; the task re-reads or skips
        exactly what they say when it starts."""
        config = AbstractConfig(source_config(), connector_config)
        for partition, offset in offsets:
            if partition != {"path": config.get(PATH)}:
                raise ConnectError(
                    f"This connector only has the source partition {{'path': {config.get(PATH)!r}}}, got {partition!r}"
                )
            check_offset(config.get(MODE), offset)
        return True


class SparkSourceTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(source_config(), props)
        self._props = props
        self._path = config.get(PATH)
        self._root = local_root(self._path)
        self._format = config.get(FORMAT).lower()
        self._mode = config.get(MODE)
        self._column = config.get(INCREMENTING_COLUMN)
        if self._mode == "incrementing" and not self._column:
            raise ConnectError("incrementing.column is required when mode=incrementing")
        self._topic = config.get(TOPIC)
        self._batch_size = config.get_int(BATCH_SIZE)
        self._poll_interval_s = config.get(POLL_INTERVAL_MS) / 1000
        self._partition = {"path": self._path}
        self._stopping = False
        offset = self.context.offset_storage_reader.offset(self._partition)
        check_offset(self._mode, offset)
        self._processed: set[str] = set(decode_files(offset[FILES_KEY])) if offset and self._mode == "files" else set()
        self._last: Any = offset[INCREMENTING_KEY] if offset and self._mode == "incrementing" else None
        self._pending: list[SourceRecord] = []  # rows of the current file not yet returned
        self._spark: SparkSession | None = None

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            self._spark = get_spark(self._props)
        return self._spark

    def stop(self) -> None:
        self._stopping = True

    def poll(self) -> list[SourceRecord] | None:
        if not self._pending:
            self._pending = self._read_files() if self._mode == "files" else self._read_incrementing()
        if not self._pending:
            self._idle()
            return None
        batch, self._pending = self._pending[: self._batch_size], self._pending[self._batch_size :]
        return batch

    def _idle(self) -> None:
        deadline = time.monotonic() + self._poll_interval_s
        while not self._stopping and time.monotonic() < deadline:
            time.sleep(min(0.1, self._poll_interval_s))

    def _reader(self) -> DataFrameReader:
        reader = self.spark.read.format(self._format).option("basePath", str(self._root))
        if self._format == "csv":
            reader = reader.option("header", "true").option("inferSchema", "true")
        return reader

    def _read_files(self) -> list[SourceRecord]:
        """Rows of the next unprocessed file(s) (whole files, up to about batch.size rows)."""
        records: list[SourceRecord] = []
        for name in data_files(self._root):
            if name in self._processed:
                continue
            table = self._reader().load(str(self._root / name)).toArrow()
            before = encode_files(self._processed)
            self._processed.add(name)
            after = encode_files(self._processed)
            schema = connect_schema(table.schema)
            rows = table_rows(table)
            for i, row in enumerate(rows):
                offset = {FILES_KEY: after if i == len(rows) - 1 else before}
                records.append(SourceRecord(self._partition, offset, self._topic, None, None, row, value_schema=schema))
            if len(records) >= self._batch_size:
                break
        return records

    def _read_incrementing(self) -> list[SourceRecord]:
        if not data_files(self._root):
            return []
        from pyspark.sql import functions as F

        df = self._reader().load(str(self._root))
        if self._last is not None:
            df = df.where(F.col(self._column) > F.lit(self._last))
        table = df.orderBy(self._column).limit(self._batch_size).toArrow()
        schema = connect_schema(table.schema)
        records = []
        for row in table_rows(table):
            value = row[self._column]
            if value is None:
                continue  # a row without the column can never be ordered: skip it
            self._last = value
            records.append(
                SourceRecord(
                    self._partition, {INCREMENTING_KEY: value}, self._topic, None, None, row, value_schema=schema
                )
            )
        return records
