"""SparkSinkConnector: writes records into a parquet/orc/json/csv dataset, exactly once.

Each flushed batch is written by Spark into a staging dir and committed with the offsets it covers
in the dataset's commit log (see commit_log.py). Tasks seek to the logged offsets when partitions
are assigned and report only logged offsets from `pre_commit`, so the consumer group never runs
ahead of the data: a crash anywhere neither loses nor duplicates rows.

Why Spark writes the files (rather than pyarrow alone): Spark is the engine users point at a cluster
(`spark.master`), and it writes every supported format with its own partitioning and naming. The
batch crosses into Spark as one Arrow table (no per-row pickling), which keeps us near a plain
Spark job's speed.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...api.config import AbstractConfig, ConfigDef, Importance, Range, Type
from ...api.connector import SinkConnector
from ...api.errors import ConnectError
from ...api.records import SinkRecord, TopicPartition
from ...api.task import SinkTask
from .commit_log import CommitConflict, CommitLog
from .config import FORMAT, PATH, common_config
from .dataset import local_root
from .schema import KAFKA_COLUMNS, records_to_table
from .session import get_spark

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

FLUSH_SIZE = "flush.size"
FLUSH_INTERVAL_MS = "flush.interval.ms"
PARTITION_BY = "partition.by"
KAFKA_METADATA = "kafka.metadata.columns"
WRITER_ID = "task.writer.id"


def sink_config() -> ConfigDef:
    return (
        common_config()
        .define(
            PARTITION_BY,
            Type.LIST,
            "",
            importance=Importance.MEDIUM,
            documentation="Columns to partition the dataset by (directories `col=value`).",
        )
        .define(
            FLUSH_SIZE,
            Type.INT,
            10000,
            Range.at_least(1),
            Importance.MEDIUM,
            "Records buffered before a batch is written and committed.",
        )
        .define(
            FLUSH_INTERVAL_MS,
            Type.LONG,
            10000,
            Range.at_least(0),
            Importance.MEDIUM,
            "Longest time a record waits in the buffer before its batch is committed.",
        )
        .define(
            KAFKA_METADATA,
            Type.BOOLEAN,
            False,
            importance=Importance.LOW,
            documentation="Add kafka_topic, kafka_partition and kafka_offset columns to every row.",
        )
    )


class SparkSinkConnector(SinkConnector):
    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)
        AbstractConfig(sink_config(), props)  # fail fast on a bad config

    def task_class(self) -> type[SinkTask]:
        return SparkSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        name = self._props.get("name", "spark-sink")
        return [{**self._props, WRITER_ID: f"{name}-{i}"} for i in range(max_tasks)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return sink_config()

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[TopicPartition, int | None]) -> bool:
        """The offsets that count are in the dataset's commit log: rewrite them there.

        All None (a reset) clears every logged offset, so tasks start from the consumer's position
        (earliest once the runtime deleted the group); otherwise each partition is set or removed.
        """
        root = local_root(AbstractConfig(sink_config(), connector_config).get(PATH))
        commit_log = CommitLog(root)
        if not offsets or all(v is None for v in offsets.values()):
            commit_log.append({}, writer="reset-offsets", reset=True)
        else:
            commit_log.append(dict(offsets), writer="alter-offsets")
        return True


class SparkSinkTask(SinkTask):
    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(sink_config(), props)
        self._format = config.get(FORMAT).lower()
        self._partition_by = config.get_list(PARTITION_BY)
        self._flush_size = config.get_int(FLUSH_SIZE)
        self._flush_interval_s = config.get(FLUSH_INTERVAL_MS) / 1000
        self._metadata = config.get_bool(KAFKA_METADATA)
        self._writer = props.get(WRITER_ID) or f"{props.get('name', 'spark-sink')}-{os.getpid()}"
        self._root = local_root(config.get(PATH))
        self._root.mkdir(parents=True, exist_ok=True)
        self._log = CommitLog(self._root)
        self._log.recover(self._writer)
        self._buffer: list[SinkRecord] = []
        self._buffer_since = time.monotonic()
        self._spark_props = props
        self._spark: SparkSession | None = None
        # Boot the worker's shared JVM while the consumer joins its group, so the first batch does
        # not wait for both one after the other (get_spark is thread-safe; a failure shows at write).
        threading.Thread(target=self._warm_up, name=f"{self._writer}-spark-warm-up", daemon=True).start()

    def _warm_up(self) -> None:
        try:
            get_spark(self._spark_props)
        except Exception as exc:  # noqa: BLE001 - the first write starts it again and reports the error
            log.warning("Could not start the Spark session ahead of the first batch: %s", exc)

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            self._spark = get_spark(self._spark_props)
        return self._spark

    # ---- partition lifecycle -----------------------------------------------------------------------
    def open(self, partitions: list[TopicPartition]) -> None:
        self._log.recover(self._writer)
        committed = self._log.offsets
        seeks = {tp: committed[tp] for tp in partitions if tp in committed}
        if seeks:
            self.context.offsets(seeks)

    def close(self, partitions: list[TopicPartition]) -> None:
        # Commit what we have so the next owner does not redo it; records of partitions that are
        # leaving and could not be committed are dropped: the log's offsets say where to resume.
        try:
            self._flush_buffer()
        except Exception:
            log.exception("Could not commit the buffered batch while closing partitions")
        leaving = set(partitions)
        self._buffer = [r for r in self._buffer if _partition_of(r) not in leaving]

    # ---- data path -----------------------------------------------------------------------------------
    def put(self, records: Sequence[SinkRecord]) -> None:
        if records:
            if not self._buffer:
                self._buffer_since = time.monotonic()
            self._buffer.extend(records)
        if len(self._buffer) >= self._flush_size:
            self._flush_buffer(full_batches_only=not self._interval_due())
        elif self._buffer and self._interval_due():
            self._flush_buffer()

    def _interval_due(self) -> bool:
        return time.monotonic() - self._buffer_since >= self._flush_interval_s

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        if self._buffer and self._interval_due():
            self._flush_buffer()
        committed = self._log.offsets
        return {tp: committed[tp] for tp in current_offsets if tp in committed}

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        self._flush_buffer()

    def stop(self) -> None:
        pass  # buffered records are not committed, so they are consumed again: nothing to save

    def _flush_buffer(self, full_batches_only: bool = False) -> None:
        """Write and commit the buffer in batches of flush.size, retrying on conflicts."""
        while self._buffer and (not full_batches_only or len(self._buffer) >= self._flush_size):
            chunk = self._buffer[: self._flush_size]
            for _attempt in range(5):
                try:
                    self._commit_batch(chunk)
                    break
                except CommitConflict as exc:
                    log.warning("Batch not committed, rebuilding it (%s)", exc)
            else:
                raise ConnectError("Could not commit a batch after 5 attempts: the dataset's offsets keep moving")
            del self._buffer[: len(chunk)]
        self._buffer_since = time.monotonic()

    def _commit_batch(self, records: list[SinkRecord]) -> None:
        state = self._log.refresh()
        # Drop what the log already holds: a zombie's late batch after the new owner committed, or an
        # alter_offsets that moved the log past a buffered batch. (The runtime starts each assignment
        # at the offsets open() asked for, so records from before them are never delivered.)
        fresh = [r for r in records if r.kafka_offset >= state.offsets.get(_partition_of(r), -1)]
        next_offsets: dict[TopicPartition, int] = {}
        for r in records:
            tp = _partition_of(r)
            next_offsets[tp] = max(next_offsets.get(tp, 0), r.kafka_offset + 1)
        expected = {tp: state.offsets.get(tp) for tp in next_offsets}
        # Offsets only move forward: never let a late batch rewind a partition.
        next_offsets = {
            tp: off for tp, off in next_offsets.items() if (committed := expected[tp]) is None or off > committed
        }
        if not next_offsets:
            return
        staging = self._log.new_staging(self._writer)
        files = self._write(fresh, staging)
        try:
            self._log.append(next_offsets, files, staging, self._writer, expected=expected)
        except BaseException:
            shutil.rmtree(self._root / staging, ignore_errors=True)
            raise
        self._log.publish()

    def _write(self, records: list[SinkRecord], staging: str) -> list[str]:
        """Write `records` below `staging` with Spark; return the data files, relative to staging."""
        files: list[str] = []
        for index, (schema, run) in enumerate(_runs_by_schema(r for r in records if r.value is not None)):
            extra: dict[str, list[Any]] | None = None
            if self._metadata:
                extra = {
                    KAFKA_COLUMNS[0]: [r.topic for r in run],
                    KAFKA_COLUMNS[1]: [r.kafka_partition for r in run],
                    KAFKA_COLUMNS[2]: [r.kafka_offset for r in run],
                }
            table = records_to_table([r.value for r in run], schema, extra)
            target = self._root / staging / f"g{index}"
            writer = self.spark.createDataFrame(table).write.format(self._format).mode("overwrite")
            if self._partition_by:
                writer = writer.partitionBy(*self._partition_by)
            if self._format == "csv":
                writer = writer.option("header", "true")
            writer.save(str(target))
            for dirpath, dirnames, filenames in os.walk(target):
                dirnames[:] = [d for d in dirnames if not d.startswith((".", "_"))]
                for name in filenames:
                    if not name.startswith((".", "_")):
                        files.append(os.path.relpath(os.path.join(dirpath, name), target))
            # Group dirs are flattened into the staging root so that final paths mirror staging paths.
            _flatten(target, self._root / staging)
        return files


def _flatten(group_dir: os.PathLike[str], staging_root: os.PathLike[str]) -> None:
    """Move a group's visible files up into the staging root (same relative paths), drop the rest."""
    group_dir, staging_root = Path(group_dir), Path(staging_root)
    for dirpath, dirnames, filenames in os.walk(group_dir):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "_"))]
        for name in filenames:
            if name.startswith((".", "_")):
                continue
            source = Path(dirpath) / name
            target = staging_root / source.relative_to(group_dir)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.rename(source, target)
    shutil.rmtree(group_dir, ignore_errors=True)


def _runs_by_schema(records: Any) -> list[tuple[Any, list[SinkRecord]]]:
    """Consecutive records sharing a value schema (schemaless records form runs of None)."""
    runs: list[tuple[Any, list[SinkRecord]]] = []
    for record in records:
        if runs and runs[-1][0] == record.value_schema:
            runs[-1][1].append(record)
        else:
            runs.append((record.value_schema, [record]))
    return runs


def _partition_of(record: SinkRecord) -> TopicPartition:
    # A consumed record always has its partition; the attribute is ConnectRecord's, where it may be None.
    if record.kafka_partition is None:
        raise ConnectError(f"A record of topic {record.topic} reached the Spark sink without its partition")
    return TopicPartition(record.topic, record.kafka_partition)
