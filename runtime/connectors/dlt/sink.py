"""DltSinkConnector: loads records into any dlt destination, a table per topic, exactly once.

A task buffers the rows of what `put` gets and loads them with dlt at each offset commit (and whenever
`batch.size` records wait), one load for every table plus the offsets the load covers (offsets.py). When
partitions are assigned it claims them in the destination (a new epoch at their committed offsets, so a
previous owner still loading can no longer commit them: fence.py), deletes what an uncommitted load left
of them, and seeks there; `pre_commit` reports only offsets the destination holds, so the consumer group
never runs ahead of the data. A failed load or claim is retried, `retry.backoff.ms` apart, `max.retries` times
before the task fails (a failed load's rows deleted first): a DuckDB file, for one, takes no write while
another process reads it, and a reader (a dashboard, the DAG's sensor) is no reason to fail.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_fixed

from ...api.config import ConfigDef, ConfigValue
from ...api.connector import SinkConnector
from ...api.errors import ConfigError, ConnectError, DataError, RetriableError
from ...api.records import SinkRecord, SinkRecordBatch, TopicPartition
from ...api.task import SinkTask
from ...clock import SYSTEM_CLOCK, Clock
from .config import (
    DEFAULT_KEY_COLUMN,
    DESTINATION,
    PIPELINE_NAME,
    PK_FIELDS,
    PK_MODE,
    WRITE_DISPOSITION,
    SinkSettings,
    sink_config,
)
from .fence import Commit, Guarantee, LoadFenced
from .offsets import (
    OFFSET_COLUMNS,
    OFFSETS_TABLE,
    Committed,
    Key,
    column_schemas,
    is_committed,
    offset_rows,
    read_committed,
    remove_load,
    remove_uncommitted,
)
from .pipeline import LoadFailed, Workspace, destination, normalize_table
from .rows import DELETED, ROW_ID, VALUE_COLUMN, RowPlan, RowPlans, row_id, row_id_prefix, row_position

log = logging.getLogger(__name__)

CLAIM_ATTEMPTS = 5


def _subscribed(props: dict[str, str], topic: str) -> bool:
    topics = [t.strip() for t in props.get("topics", "").split(",") if t.strip()]
    if topics:
        return topic in topics
    regex = props.get("topics.regex", "").strip()
    return bool(regex) and re.fullmatch(regex, topic) is not None


class DltSinkConnector(SinkConnector):
    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)
        SinkSettings.parse(props)  # fail fast on a bad config

    def task_class(self) -> type[SinkTask]:
        return DltSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        name = self._props.get("name", "dlt-sink")
        return [{**self._props, PIPELINE_NAME: f"{name}_{i}"} for i in range(max_tasks)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return sink_config()

    def validate(self, connector_configs: dict[str, str]) -> list[ConfigValue]:
        values = super().validate(connector_configs)
        by_name = {v.name: v for v in values}
        if not by_name[DESTINATION].errors:
            try:
                destination(SinkSettings.parse(connector_configs))
            except ConfigError as exc:
                by_name[DESTINATION].add_error(str(exc))
            except Exception:  # noqa: BLE001 - another key's error, reported on that key
                pass
        if (
            connector_configs.get(WRITE_DISPOSITION) == "merge"
            and connector_configs.get(PK_MODE) == "record_value"
            and not connector_configs.get(PK_FIELDS, "").strip()
        ):
            by_name[PK_FIELDS].add_error(
                "primary.key.fields must name the key fields when primary.key.mode=record_value"
            )
        return values

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[TopicPartition, int | None]) -> bool:
        """The offsets that count are in the destination: write the new ones there, one epoch up.

        All None (a reset) resets every partition of this connector's tables there too, so tasks start from
        the consumer group's position (the earliest once the runtime deleted the group)."""
        settings = SinkSettings.parse(connector_config)
        workspace = Workspace(settings, f"{connector_config.get('name', 'dlt-sink')}_offsets")
        try:
            pipeline = workspace.pipeline
            committed = read_committed(pipeline)
            changes: dict[tuple[str, TopicPartition], int | None] = {
                (normalize_table(settings.table_for(tp.topic)), tp): offset for tp, offset in offsets.items()
            }
            if all(offset is None for offset in offsets.values()):
                for table, tp in committed:
                    if table == normalize_table(settings.table_for(tp.topic)) and _subscribed(
                        connector_config, tp.topic
                    ):
                        changes.setdefault((table, tp), None)
            new = {
                key: Committed((known.epoch + 1) if (known := committed.get(key)) else 1, offset)
                for key, offset in changes.items()
            }
            if new:
                # definite: committed whatever the state (a task still loading then fails its next commit)
                workspace.load(_offsets_resource(new), Commit({key: None for key in new}, checked=False))
        finally:
            workspace.close()
        return True


def _claim_may_pass_later(error: BaseException) -> bool:
    """A claim that failed in the destination (unreachable, a DuckDB file another process reads), not one whose
    offsets kept moving under it, nor a bad config."""
    return isinstance(error, LoadFailed) or not isinstance(error, ConnectError)


def _offsets_resource(states: dict[Key, Committed]) -> Any:
    import dlt

    return dlt.resource(
        offset_rows(states), name=OFFSETS_TABLE, write_disposition="append", columns=column_schemas(OFFSET_COLUMNS)
    )


@dataclass(frozen=True)
class _FailedLoad:
    load_id: str
    tables: frozenset[str]
    ends: dict[Key, Committed]  # what it would have committed


@dataclass
class _Chunk:
    """The rows of one `put`: kept apart so that a put whose load failed can be taken back and redelivered."""

    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    columns: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    offsets: dict[TopicPartition, int] = field(default_factory=dict)  # next offset, per partition
    tables: dict[TopicPartition, str] = field(default_factory=dict)
    records: int = 0


class DltSinkTask(SinkTask):
    def __init__(self, clock: Clock = SYSTEM_CLOCK) -> None:
        self._clock = clock  # the waits between a failed load or claim and the next try

    def start(self, props: dict[str, str]) -> None:
        self._settings = settings = SinkSettings.parse(props)
        self._workspace = Workspace(settings, props.get(PIPELINE_NAME) or f"{props.get('name', 'dlt')}_{os.getpid()}")
        self._plans = RowPlans()
        self._tables: dict[str, str] = {}
        self._chunks: list[_Chunk] = []
        self._buffered = 0
        # the partitions this task owns, each with its committed state in the destination (its claim's epoch)
        self._state: dict[TopicPartition, Committed] = {}
        self._failures = 0
        self._retry_at = 0.0  # after a failed load, no other is tried before this (the clock's monotonic)
        self._failed_load: _FailedLoad | None = None  # a load of this task that did not commit, rows not deleted
        self._warned_at_least_once = False
        self._pk_columns: dict[str, list[str]] = {}
        if self._workspace.guarantee is Guarantee.NONE:
            log.warning(
                "Destination %s cannot be fenced: a task still loading after its partitions moved to another "
                "task can load their records a second time",
                settings.destination,
            )

    # ---- partitions --------------------------------------------------------------------------------
    def open(self, partitions: list[TopicPartition]) -> None:
        tables = {tp: self._table(tp.topic) for tp in partitions}
        self._claim(tables)
        # Claimed: a load of the partitions' previous owner can no longer commit, so what any uncommitted
        # load left of them can go.
        self._remove_uncommitted(tables)
        seeks = {tp: state.offset for tp in partitions if (state := self._state[tp]).offset is not None}
        if seeks:
            self.context.offsets(seeks)

    def _claim(self, tables: dict[TopicPartition, str]) -> None:
        """Own the partitions in the destination: commit a new epoch for each at its committed offset; a
        failure (not a race with another commit) is retried as a failed load is."""
        settings = self._settings

        def log_retry(state: RetryCallState) -> None:
            log.warning(
                "Claiming partitions failed (try %d of %d), trying again in %d ms: %s",
                state.attempt_number,
                settings.max_retries + 1,
                settings.retry_backoff_ms,
                state.outcome.exception() if state.outcome else None,
            )

        retrying = Retrying(
            stop=stop_after_attempt(settings.max_retries + 1),
            wait=wait_fixed(settings.retry_backoff_ms / 1000),
            sleep=self._clock.sleep,
            retry=retry_if_exception(_claim_may_pass_later),
            before_sleep=log_retry,
            reraise=True,
        )
        retrying(self._claim_once, tables)

    def _claim_once(self, tables: dict[TopicPartition, str]) -> None:
        pipeline = self._workspace.pipeline
        for _attempt in range(CLAIM_ATTEMPTS):
            committed = read_committed(pipeline, set(tables.values()))
            current = {(table, tp): committed.get((table, tp)) for tp, table in tables.items()}
            if self._workspace.guarantee is Guarantee.NONE:
                claims = {key: state or Committed(0, None) for key, state in current.items()}
            else:
                claims = {
                    key: Committed(state.epoch + 1, state.offset) if state else Committed(1, None)
                    for key, state in current.items()
                }
                try:
                    self._workspace.load(_offsets_resource(claims), Commit(current))
                except LoadFailed as exc:
                    if exc.fenced is None:
                        raise
                    log.info("Claim raced another commit, reading the offsets again: %s", exc.fenced)
                    continue
            for (_, tp), state in claims.items():
                self._state[tp] = state
            return
        raise ConnectError(f"Could not claim partitions {sorted(tables)}: their offsets kept moving")

    def close(self, partitions: list[TopicPartition]) -> None:
        # Load what is buffered so the next owner need not; if that fails, drop what is buffered of these
        # partitions: the destination's offsets say where the next owner resumes.
        try:
            self._load()
        except Exception:
            log.exception("Could not load the buffered records while closing partitions")
        closed = set(partitions)
        self._prune(lambda tp, _offset: tp not in closed)
        for tp in partitions:
            self._state.pop(tp, None)

    def _remove_uncommitted(self, tables: dict[TopicPartition, str]) -> None:
        if self._settings.merge:
            return  # loading the same records again merges them to the same rows
        prefixes: dict[str, list[str]] = {}
        for tp, table in tables.items():
            prefixes.setdefault(table, []).append(row_id_prefix(tp.topic, tp.partition))
        if not remove_uncommitted(self._workspace.pipeline, prefixes):
            self._warn_at_least_once()

    def _warn_at_least_once(self) -> None:
        if not self._warned_at_least_once:
            self._warned_at_least_once = True
            log.warning(
                "Destination %s cannot delete the rows of a load that did not complete: after a crash, records "
                "of that load may be loaded twice (at least once)",
                self._settings.destination,
            )

    # ---- data ----------------------------------------------------------------------------------------
    def put(self, records: Sequence[SinkRecord]) -> None:
        chunk = None
        if records:
            chunk = self._rows(records)
            self._chunks.append(chunk)
            self._buffered += chunk.records
        if self._buffered >= self._settings.batch_size and self._clock.monotonic() >= self._retry_at:
            try:
                self._load_with_retries()
            except RetriableError:
                if chunk is not None:  # taken back: the runtime delivers this batch again
                    self._chunks = [c for c in self._chunks if c is not chunk]
                    self._buffered = sum(c.records for c in self._chunks)
                self.context.timeout(self._settings.retry_backoff_ms)
                raise

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        if self._clock.monotonic() >= self._retry_at:  # else the commit reports what is loaded so far
            try:
                self._load_with_retries()
            except RetriableError as exc:
                log.warning("Load failed, tried again in %d ms: %s", self._settings.retry_backoff_ms, exc)
        return {
            tp: state.offset
            for tp in current_offsets
            if (state := self._state.get(tp)) is not None and state.offset is not None
        }

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        self._load()

    def stop(self) -> None:
        self._workspace.close()  # called on the task's own thread, after its last put, flush or close

    # ---- records -> rows -------------------------------------------------------------------------------
    def _table(self, topic: str) -> str:
        table = self._tables.get(topic)
        if table is None:
            table = self._tables[topic] = normalize_table(self._settings.table_for(topic))
        return table

    def _rows(self, records: Sequence[SinkRecord]) -> _Chunk:
        if isinstance(records, SinkRecordBatch):
            topics, partitions, offsets = records.topics(), records.partitions(), records.offsets()
            keys, values = records.keys, records.values
            key_schemas, value_schemas = records.key_schemas, records.value_schemas
        else:
            topics = [r.topic for r in records]
            partitions = [r.kafka_partition for r in records]
            offsets = [r.kafka_offset for r in records]
            keys, values = [r.key for r in records], [r.value for r in records]
            key_schemas, value_schemas = [r.key_schema for r in records], [r.value_schema for r in records]
        chunk = _Chunk(records=len(offsets))
        merge = self._settings.merge
        owned = self._state
        plans = self._plans
        last_schema: Any = object()  # no schema is this: the first value sets `plan`
        plan: RowPlan
        for i, offset in enumerate(offsets):
            topic, partition = topics[i], partitions[i]
            tp = TopicPartition(topic, partition)
            state = owned.get(tp)
            if state is None:
                continue  # not (or no longer) this task's partition: see _handle_fenced
            if state.offset is not None and offset < state.offset:
                continue  # already in the destination (offsets were altered while this was in flight)
            chunk.offsets[tp] = offset + 1
            table = chunk.tables.get(tp) or chunk.tables.setdefault(tp, self._table(topic))
            value = values[i]
            try:
                if value is None:
                    if not merge:
                        continue  # a tombstone deletes nothing in append mode
                    row = self._key_row(keys[i], key_schemas[i], value_schemas[i], None, chunk, table)
                    row[DELETED] = True
                else:
                    schema = value_schemas[i]
                    if schema is not last_schema:
                        plan, last_schema = plans.get(schema), schema
                        if plan.columns:
                            chunk.columns.setdefault(table, {}).update(plan.columns)
                    row = plan.to_row(value)
                    if merge:
                        row.update(self._key_row(keys[i], key_schemas[i], schema, row, chunk, table))
            except (DataError, TypeError, ValueError, AttributeError) as exc:
                self._report(records, i, exc)
                continue
            row[ROW_ID] = row_id(topic, partition, offset, state.epoch)
            rows = chunk.rows.get(table)
            if rows is None:
                rows = chunk.rows[table] = []
            rows.append(row)
        return chunk

    def _key_row(
        self, key: Any, key_schema: Any, value_schema: Any, value_row: dict[str, Any] | None, chunk: _Chunk, table: str
    ) -> dict[str, Any]:
        """The primary key columns of a merged record (from its key, or from its value's named fields)."""
        fields = self._settings.pk_fields
        if self._settings.key_from_value:
            if value_row is not None:
                key_row = {f: value_row.get(f) for f in fields}
            elif isinstance(key, dict):
                key_row = {f: key.get(f) for f in fields}
            elif len(fields) == 1:
                key_row = {fields[0]: key}
            else:
                raise DataError(f"A tombstone's key must hold the primary key fields {list(fields)}")
            if value_schema is not None and value_schema.type == "struct":
                hints = self._plans.get(value_schema).columns
                chunk.columns.setdefault(table, {}).update(
                    {f: {**hints[f], "nullable": False} for f in fields if f in hints}
                )
        else:
            if key is None:
                raise DataError("write.disposition=merge with primary.key.mode=record_key needs a record key")
            plan = self._plans.get(key_schema)
            key_row = plan.to_row(key)
            hints = dict(plan.columns)
            if set(key_row) == {VALUE_COLUMN} and not isinstance(key, dict):
                column = fields[0] if fields else DEFAULT_KEY_COLUMN
                key_row = {column: key_row[VALUE_COLUMN]}
                hints = {column: hints[VALUE_COLUMN]} if VALUE_COLUMN in hints else {}
            elif fields:
                key_row = {f: key_row.get(f) for f in fields}
            if hints:
                chunk.columns.setdefault(table, {}).update(
                    {name: {**hint, "nullable": False} for name, hint in hints.items() if name in key_row}
                )
        if any(v is None for v in key_row.values()):
            raise DataError(f"The primary key {sorted(key_row)} has a null value")
        pk = self._pk_columns.get(table)
        if pk is None:
            self._pk_columns[table] = list(key_row)
        elif pk != list(key_row):
            raise DataError(f"Primary key columns {list(key_row)} differ from this table's {pk}")
        return key_row

    def _report(self, records: Sequence[SinkRecord], index: int, error: BaseException) -> None:
        reporter = self.context.errant_record_reporter()
        if reporter is None:
            raise DataError(f"Record {index} of the batch cannot be loaded: {error}") from error
        reporter.report(records[index], error)

    # ---- loading -----------------------------------------------------------------------------------------
    def _drop_buffer(self) -> None:
        self._chunks.clear()
        self._buffered = 0

    def _load_with_retries(self) -> None:
        try:
            self._load()
        except Exception as exc:
            self._failures += 1
            if self._failures > self._settings.max_retries:
                raise ConnectError(f"Loading into {self._settings.destination} failed {self._failures} times") from exc
            self._retry_at = self._clock.monotonic() + self._settings.retry_backoff_ms / 1000
            raise RetriableError(f"Load into {self._settings.destination} failed: {exc}") from exc
        self._failures = 0

    def _load(self) -> None:
        """Load every buffered row with the offsets they take their partitions to, in one dlt load."""
        import dlt

        if not self._chunks:
            return
        self._resolve_failed_load()

        settings = self._settings
        rows: dict[str, list[dict[str, Any]]] = {}
        columns: dict[str, dict[str, dict[str, Any]]] = {}
        ends: dict[Key, Committed] = {}
        for chunk in self._chunks:
            for table, table_rows in chunk.rows.items():
                rows.setdefault(table, []).extend(table_rows)
            for table, hints in chunk.columns.items():
                columns.setdefault(table, {}).update(hints)
            for tp, offset in chunk.offsets.items():
                ends[(chunk.tables[tp], tp)] = Committed(self._state[tp].epoch, offset)
        if not ends:
            self._drop_buffer()  # every record was already in the destination
            return
        resources = []
        for table, table_rows in rows.items():
            hints = columns.get(table, {})
            if settings.merge:
                table_rows = self._last_per_key(table, table_rows)
                # a delete is staged as a row of its key alone, so every other column takes nulls
                pk = set(self._pk_columns.get(table) or ())
                hints = {c: h if c in pk else {**h, "nullable": True} for c, h in hints.items()}
                hints[DELETED] = {"data_type": "bool", "nullable": True, "hard_delete": True}
            resource = dlt.resource(
                table_rows,
                name=table,
                write_disposition="merge" if settings.merge else "append",
                columns=column_schemas(hints),
                max_table_nesting=0,
            )
            keys = self._pk_columns.get(table) if settings.merge else None
            if keys is not None:
                resource.apply_hints(primary_key=keys)
            resources.append(resource)
        resources.append(_offsets_resource(ends))
        expected = {key: self._state[key[1]] for key in ends}
        try:
            self._workspace.load(resources, Commit(expected))
        except LoadFailed as exc:
            if exc.load_id is not None:
                self._failed_load = _FailedLoad(exc.load_id, frozenset(rows), ends)
            if exc.fenced is None:
                raise
            self._handle_fenced(exc.fenced)
            self._load()  # what is left: the records of partitions this task still owns
            return
        self._advance(ends)
        self._drop_buffer()

    def _advance(self, ends: dict[Key, Committed]) -> None:
        for (_, tp), state in ends.items():
            if tp in self._state:
                self._state[tp] = state

    def _keep_unloaded(self) -> None:
        """Drop the buffered records of partitions this task no longer owns, and those already loaded."""
        self._prune(lambda tp, offset: (state := self._state.get(tp)) is not None and (state.offset or 0) <= offset)

    def _resolve_failed_load(self) -> None:
        """Before loading again: a failed load of this task either committed after all (its answer was lost)
        or never will (its package is dropped): then its rows go, by its load id."""
        failed = self._failed_load
        if failed is None:
            return
        pipeline = self._workspace.pipeline
        if is_committed(pipeline, failed.load_id):
            log.info("Load %s committed although it reported a failure", failed.load_id)
            self._advance(failed.ends)
            self._keep_unloaded()
        elif self._settings.merge:
            pass  # its upserts stay: loading the same records again merges them to the same rows
        elif not remove_load(pipeline, failed.load_id, failed.tables):
            self._warn_at_least_once()
        self._failed_load = None

    def _handle_fenced(self, fenced: LoadFenced) -> None:
        """Partitions moved under a load: another task owns them now (this one is a zombie for them), or the
        committed state is this task's own after all; drop or keep their buffered records accordingly."""
        self._resolve_failed_load()  # the fenced load never committed: its rows go
        for (_, tp), state in fenced.moved.items():
            mine = self._state.get(tp)
            if mine is not None and state is not None and state.epoch == mine.epoch:
                self._state[tp] = state  # this task's own commit, its answer lost earlier
            elif self._state.pop(tp, None) is not None:
                log.warning(
                    "Partition %s-%s was claimed by another task or its offsets were altered: this task's "
                    "buffered records of it are dropped, none of them committed",
                    tp.topic,
                    tp.partition,
                )
        self._keep_unloaded()

    def _prune(self, keep: Callable[[TopicPartition, int], bool]) -> None:
        """Keep only the buffered rows (and offsets) of records `keep(partition, offset)` accepts."""
        for chunk in self._chunks:
            for table, table_rows in chunk.rows.items():
                chunk.rows[table] = [r for r in table_rows if keep(*row_position(r[ROW_ID]))]
            for tp, end in list(chunk.offsets.items()):
                if not keep(tp, end - 1):
                    del chunk.offsets[tp]
        self._chunks = [c for c in self._chunks if c.offsets]
        self._buffered = sum(c.records for c in self._chunks)

    def _last_per_key(self, table: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A merge keeps one row per primary key: the last record's (dlt would pick any one)."""
        pk = self._pk_columns.get(table) or []
        latest: dict[tuple[Any, ...], dict[str, Any]] = {}
        for row in rows:
            key = tuple(row.get(c) for c in pk)
            latest.pop(key, None)  # re-inserted: the rows stay in the order of their last records
            latest[key] = row
        return list(latest.values())
