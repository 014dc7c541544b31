"""The sink's offsets, kept in the destination with the rows they cover.

Every load carries, beside the rows, one row per topic partition it covers in the `_connect_offsets` table
(table, topic, partition, epoch, the next offset to consume). dlt writes a load's `_dlt_loads` entry only
once every job of the load has completed: that entry is the commit of the rows and their offsets together.
Offsets of loads without one are ignored; rows of such a load (a crash mid-load) are deleted before the
records they hold are loaded again: `remove_uncommitted` for the partitions a task has just claimed,
`remove_load` for a load of its own that failed.

Epochs make ownership and KIP-875's alter and reset definite without trusting clocks: a partition's
committed offset is the highest offset of its highest epoch. A task opening a partition claims it at the
highest epoch + 1, and `alter_offsets` writes the new offsets (None for a reset) there too; fence.py makes
a load of an older epoch (a task still loading after its partitions moved) unable to commit. Each commit
deletes the rows it supersedes, so the table holds about one row per partition.

Deleting the remains of a crashed load needs the destination's own storage: SQL destinations (through
dlt's SQL client) and the filesystem destination (default layout, parquet or jsonl files). Elsewhere the
sink is at least once, and says so when it starts.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, cast

from ...api.records import TopicPartition
from .rows import ROW_ID

if TYPE_CHECKING:  # dlt itself is imported when a load runs (its import takes seconds)
    from dlt.common.schema.typing import TColumnSchema

log = logging.getLogger(__name__)

OFFSETS_TABLE = "_connect_offsets"
LOADS_TABLE = "_dlt_loads"
LOAD_ID = "_dlt_load_id"
OFFSET_COLUMNS: dict[str, dict[str, Any]] = {
    "table_name": {"data_type": "text", "nullable": False},
    "kafka_topic": {"data_type": "text", "nullable": False},
    "kafka_partition": {"data_type": "bigint", "nullable": False},
    "epoch": {"data_type": "bigint", "nullable": False},
    "kafka_offset": {"data_type": "bigint", "nullable": True},  # null: no offset (reset)
}


def column_schemas(hints: Mapping[str, Mapping[str, Any]]) -> dict[str, TColumnSchema]:
    """Column hints, built here as plain dicts of dlt's column schema keys, as dlt's `columns` argument."""
    return cast("dict[str, TColumnSchema]", {name: dict(hint) for name, hint in hints.items()})


_FILE_LOAD_ID = re.compile(r"^(\d+(?:\.\d+)?)\.")


@dataclass(frozen=True)
class Committed:
    epoch: int
    offset: int | None  # the next offset to consume; None after a reset or before any record


Key = tuple[str, TopicPartition]  # (table, topic partition)


def offset_rows(states: Mapping[Key, Committed]) -> list[dict[str, Any]]:
    return [
        {
            "table_name": table,
            "kafka_topic": tp.topic,
            "kafka_partition": tp.partition,
            "epoch": state.epoch,
            "kafka_offset": state.offset,
        }
        for (table, tp), state in sorted(states.items(), key=lambda kv: (kv[0][0], kv[0][1]))
    ]


def fold(rows: Iterable[Sequence[Any]]) -> dict[Key, Committed]:
    """Committed state from (table, topic, partition, epoch, offset) rows: per key, the highest offset of
    the highest epoch (null offsets, a reset, count only where no other row of that epoch has one)."""
    result: dict[Key, Committed] = {}
    for table, topic, partition, epoch, offset in rows:
        key = (str(table), TopicPartition(str(topic), int(partition)))
        state = Committed(int(epoch), None if offset is None else int(offset))
        known = result.get(key)
        if (
            known is None
            or state.epoch > known.epoch
            or (
                state.epoch == known.epoch
                and state.offset is not None
                and (known.offset is None or known.offset < state.offset)
            )
        ):
            result[key] = state
    return result


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def keys_condition(keys: Iterable[Key], alias: str = "") -> str:
    """A SQL condition matching the offsets rows of `keys` (one term per table and topic)."""
    prefix = f"{alias}." if alias else ""
    partitions: dict[tuple[str, str], set[int]] = {}
    for table, tp in keys:
        partitions.setdefault((table, tp.topic), set()).add(tp.partition)
    terms = [
        f"({prefix}table_name = {literal(table)} AND {prefix}kafka_topic = {literal(topic)} "
        f"AND {prefix}kafka_partition IN ({', '.join(str(p) for p in sorted(parts))}))"
        for (table, topic), parts in sorted(partitions.items())
    ]
    return "(" + " OR ".join(terms) + ")" if terms else "(1 = 0)"


def _existing(pipeline: Any, names: Iterable[str]) -> set[str]:
    with pipeline.destination_client() as client:
        return {name for name, columns in client.get_storage_tables(list(names)) if columns}


def read_committed(pipeline: Any, tables: Iterable[str] | None = None) -> dict[Key, Committed]:
    """The committed offsets in the destination, of `tables` (normalized names) or of every table."""
    if _existing(pipeline, [OFFSETS_TABLE, LOADS_TABLE]) != {OFFSETS_TABLE, LOADS_TABLE}:
        return {}
    where = ""
    if tables is not None:
        names = sorted(set(tables))
        if not names:
            return {}
        where = " AND o.table_name IN (" + ", ".join(literal(t) for t in names) + ")"
    query = (
        "SELECT o.table_name, o.kafka_topic, o.kafka_partition, o.epoch, MAX(o.kafka_offset) AS kafka_offset "
        f"FROM {OFFSETS_TABLE} AS o JOIN {LOADS_TABLE} AS l ON o.{LOAD_ID} = l.load_id "
        f"WHERE l.status = 0{where} "
        "GROUP BY o.table_name, o.kafka_topic, o.kafka_partition, o.epoch"
    )
    return fold(pipeline.dataset()(query).fetchall())


def is_committed(pipeline: Any, load_id: str) -> bool:
    """Whether the load has its `_dlt_loads` entry (a load whose commit was answered with an error may)."""
    if LOADS_TABLE not in _existing(pipeline, [LOADS_TABLE]):
        return False
    query = f"SELECT count(*) FROM {LOADS_TABLE} WHERE load_id = {literal(load_id)}"
    return bool(pipeline.dataset()(query).fetchall()[0][0])


def _like_prefix(prefix: str) -> str:
    return re.sub(r"([!%_])", r"!\1", prefix)


def remove_load(pipeline: Any, load_id: str, tables: Iterable[str]) -> bool:
    """Delete every row of a load that will never commit (one of this task's own, failed or fenced).
    False when the destination offers no way to."""
    from dlt.destinations.impl.filesystem.filesystem import FilesystemClient
    from dlt.destinations.sql_client import WithSqlClient

    names = [*sorted(set(tables)), OFFSETS_TABLE]
    with pipeline.destination_client() as client:
        existing = {name for name, columns in client.get_storage_tables(names) if columns}
        if isinstance(client, FilesystemClient):
            for table in existing:
                for path in client.list_table_files(table):
                    if PurePosixPath(path).name.startswith(load_id + "."):
                        client.fs_client.rm(path)
            return True
        if not isinstance(client, WithSqlClient):
            return False
    with pipeline.sql_client() as sql:
        column = sql.escape_column_name(LOAD_ID)
        for table in existing:
            sql.execute_sql(f"DELETE FROM {sql.make_qualified_table_name(table)} WHERE {column} = {literal(load_id)}")
    return True


def remove_uncommitted(pipeline: Any, prefixes_by_table: Mapping[str, list[str]]) -> bool:
    """Delete the rows of loads that never committed whose row ids start with one of the table's prefixes
    (`<topic>/<partition>/`). Only for partitions the caller has claimed: a load of theirs still under way
    elsewhere can no longer commit. False when the destination offers no way to (the sink is then at least
    once)."""
    from dlt.destinations.impl.filesystem.filesystem import FilesystemClient
    from dlt.destinations.sql_client import WithSqlClient

    tables = {t: p for t, p in prefixes_by_table.items() if p}
    if not tables:
        return True
    with pipeline.destination_client() as client:
        existing = {name for name, columns in client.get_storage_tables([LOADS_TABLE, *tables]) if columns}
        if LOADS_TABLE not in existing:
            return True  # nothing was ever committed, so nothing was loaded either
        if isinstance(client, FilesystemClient):
            committed = {row[0] for row in pipeline.dataset()(f"SELECT load_id FROM {LOADS_TABLE}").fetchall()}
            for table in tables.keys() & existing:
                _remove_files(client, table, committed, tuple(tables[table]))
            return True
        if not isinstance(client, WithSqlClient):
            return False
    with pipeline.sql_client() as sql:
        loads = sql.make_qualified_table_name(LOADS_TABLE)
        load_id = sql.escape_column_name("load_id")
        row_id, row_load = sql.escape_column_name(ROW_ID), sql.escape_column_name(LOAD_ID)
        for table in tables.keys() & existing:
            matches = " OR ".join(f"{row_id} LIKE {literal(_like_prefix(p) + '%')} ESCAPE '!'" for p in tables[table])
            sql.execute_sql(
                f"DELETE FROM {sql.make_qualified_table_name(table)} "
                f"WHERE ({matches}) AND {row_load} NOT IN (SELECT {load_id} FROM {loads})"
            )
    return True


def file_load_id(path: str) -> str | None:
    """The load id in a data file's name (dlt's default layout: <table>/<load_id>.<file_id>.<format>)."""
    match = _FILE_LOAD_ID.match(PurePosixPath(path).name)
    return match.group(1) if match else None


def _remove_files(client: Any, table: str, committed: set[str], prefixes: tuple[str, ...]) -> None:
    """Files of uncommitted loads holding a row of one of `prefixes` (each file holds one load of one task,
    whose partitions have all moved on if one of them did)."""
    fs = client.fs_client
    for path in client.list_table_files(table):
        load_id = file_load_id(path)
        if load_id is None or load_id in committed:
            continue
        if any(str(row.get(ROW_ID)).startswith(prefixes) for row in read_file_rows(fs, path, [ROW_ID])):
            log.info("Removing %s, written by a load that did not commit", path)
            fs.rm(path)


def read_file_rows(fs: Any, path: str, columns: list[str]) -> list[dict[str, Any]]:
    """`columns` of every row of a parquet or (gzipped) jsonl file the filesystem destination wrote."""
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        with fs.open(path, "rb") as f:
            return pq.read_table(f, columns=columns).to_pylist()
    with fs.open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    rows = (json.loads(line) for line in data.splitlines() if line.strip())
    return [{c: row.get(c) for c in columns} for row in rows]
