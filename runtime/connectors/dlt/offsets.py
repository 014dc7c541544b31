"""The sink's offsets, kept in the destination with the rows they cover.

Every load carries, beside the rows, one row per topic partition it covers in the `_connect_offsets` table
(table, topic, partition, epoch, the next offset to consume). dlt writes a load's `_dlt_loads` entry only
once every job of the load has completed: that entry is the commit of the rows and their offsets together.
Offsets of loads without one are ignored; rows of such a load (a crash mid-load) are deleted before the
records they hold are loaded again: `remove_uncommitted`, for the partitions a task is about to load.

Epochs make KIP-875's alter and reset definite without trusting clocks: `alter_offsets` writes the new
offsets (None for a reset) at the partition's highest epoch + 1, and a partition's committed offset is the
highest offset of its highest epoch. Loads write the epoch their task read, so a load of an older epoch
(a task still running across the alter) can never move a partition again.

Deleting the remains of a crashed load needs the destination's own storage: SQL destinations (through
dlt's SQL client) and the filesystem destination (default layout, parquet or jsonl files). Elsewhere the
sink is at least once, and says so when it starts.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from ...api.records import TopicPartition
from .rows import ROW_ID

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
_FILE_LOAD_ID = re.compile(r"^(\d+(?:\.\d+)?)\.")


@dataclass(frozen=True)
class Committed:
    epoch: int
    offset: int | None  # the next offset to consume; None after a reset


Key = tuple[str, TopicPartition]  # (table, topic partition)


def offset_rows(table: str, offsets: Mapping[TopicPartition, int | None], epochs: Mapping[TopicPartition, int]):
    return [
        {
            "table_name": table,
            "kafka_topic": tp.topic,
            "kafka_partition": tp.partition,
            "epoch": epochs.get(tp, 0),
            "kafka_offset": offset,
        }
        for tp, offset in offsets.items()
    ]


def _existing(pipeline: Any, names: Iterable[str]) -> set[str]:
    with pipeline.destination_client() as client:
        return {name for name, columns in client.get_storage_tables(list(names)) if columns}


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def read_committed(pipeline: Any, tables: Iterable[str] | None = None) -> dict[Key, Committed]:
    """The committed offsets in the destination, of `tables` (normalized names) or of every table."""
    if _existing(pipeline, [OFFSETS_TABLE, LOADS_TABLE]) != {OFFSETS_TABLE, LOADS_TABLE}:
        return {}
    where = ""
    if tables is not None:
        names = sorted(set(tables))
        if not names:
            return {}
        where = " AND o.table_name IN (" + ", ".join(_literal(t) for t in names) + ")"
    query = (
        "SELECT o.table_name, o.kafka_topic, o.kafka_partition, o.epoch, MAX(o.kafka_offset) AS kafka_offset "
        f"FROM {OFFSETS_TABLE} AS o JOIN {LOADS_TABLE} AS l ON o.{LOAD_ID} = l.load_id "
        f"WHERE l.status = 0{where} "
        "GROUP BY o.table_name, o.kafka_topic, o.kafka_partition, o.epoch"
    )
    result: dict[Key, Committed] = {}
    for table, topic, partition, epoch, offset in pipeline.dataset()(query).fetchall():
        key = (table, TopicPartition(topic, int(partition)))
        known = result.get(key)
        if known is None or int(epoch) > known.epoch:
            result[key] = Committed(int(epoch), None if offset is None else int(offset))
    return result


def _like_prefix(prefix: str) -> str:
    return re.sub(r"([!%_])", r"!\1", prefix)


def remove_uncommitted(pipeline: Any, prefixes_by_table: Mapping[str, list[str]]) -> bool:
    """Delete the rows of loads that never committed whose row ids start with one of the table's prefixes
    (`<topic>/<partition>/`). False when the destination offers no way to (the sink is then at least once)."""
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
            matches = " OR ".join(f"{row_id} LIKE {_literal(_like_prefix(p) + '%')} ESCAPE '!'" for p in tables[table])
            sql.execute_sql(
                f"DELETE FROM {sql.make_qualified_table_name(table)} "
                f"WHERE ({matches}) AND {row_load} NOT IN (SELECT {load_id} FROM {loads})"
            )
    return True


def _remove_files(client: Any, table: str, committed: set[str], prefixes: tuple[str, ...]) -> None:
    """Files of uncommitted loads holding a row of one of `prefixes` (each file holds one load of one task,
    whose partitions have all moved on if one of them did)."""
    fs = client.fs_client
    for path in client.list_table_files(table):
        match = _FILE_LOAD_ID.match(PurePosixPath(path).name)
        if match is None or match.group(1) in committed:
            continue
        if any(i.startswith(prefixes) for i in _row_ids(fs, path)):
            log.info("Removing %s, written by a load that did not commit", path)
            fs.rm(path)


def _row_ids(fs: Any, path: str) -> list[str]:
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        with fs.open(path, "rb") as f:
            return [str(v) for v in pq.read_table(f, columns=[ROW_ID]).column(ROW_ID).to_pylist()]
    with fs.open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return [str(json.loads(line).get(ROW_ID)) for line in data.splitlines() if line.strip()]
