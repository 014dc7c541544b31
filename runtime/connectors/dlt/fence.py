"""Fencing: a load commits only while the partitions it covers are where its task left them.

dlt commits a load by writing its `_dlt_loads` entry once every job has completed (`complete_load` of the
destination's job client). dlt has no hook between the jobs and that entry, so the sink hands dlt its
destination with a job client that, right before the entry is written, compares the committed offsets of
each partition in the load with the ones the task's load extends (a compare-and-set; `LoadFenced` when
another writer moved one), and deletes the offsets rows the load supersedes. A task opening partitions
first commits a claim (a new epoch at the committed offset), so from then on a load of the previous owner
(a zombie still loading after its partitions moved) fails the check, never gets its `_dlt_loads` entry,
and its rows are deleted as those of any load that did not commit. An alter or reset commits unchecked.

How atomic the check and the entry are depends on the destination:
- PostgreSQL: one transaction holding a lock on `_connect_offsets`: a claim and a zombie's commit are
  serialized, so the zombie's never lands (`ATOMIC`).
- DuckDB: one transaction; two commits of one partition both delete its committed offsets row, so the
  later one aborts on the write conflict (and a DuckDB file has one writing process) (`ATOMIC`).
- Other SQL destinations: one transaction without a lock (`CHECKED`): a zombie's commit at the same
  instant as the claim could still pass.
- filesystem: checked just before the `_dlt_loads` file is written (object stores have no conditional
  write dlt uses): the same narrow window (`CHECKED`).
- Anything else: not fenced (`NONE`; the task says so when it starts).

Merge loads apply their upserts in a job before the entry: a zombie's merge cannot duplicate a row, but
can set a key back to the value of a record both tasks loaded until that key's next record (say so).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...api.errors import ConnectError
from ...api.records import TopicPartition
from .offsets import (
    LOAD_ID,
    LOADS_TABLE,
    OFFSETS_TABLE,
    Committed,
    Key,
    file_load_id,
    fold,
    keys_condition,
    literal,
    read_file_rows,
)

if TYPE_CHECKING:  # the job clients the mixins below extend (dlt is imported only when a sink starts)
    from dlt.destinations.impl.filesystem.filesystem import FilesystemClient as _FilesystemClient
    from dlt.destinations.job_client_impl import SqlJobClientBase as _SqlClient
else:
    _FilesystemClient = _SqlClient = object


class Guarantee(enum.Enum):
    ATOMIC = "atomic"  # a fenced load can never commit
    CHECKED = "checked"  # checked at commit, not atomically with it
    NONE = "none"


class LoadFenced(ConnectError):
    """The load's partitions moved since the task's last commit: it did not commit."""

    def __init__(self, moved: Mapping[Key, Committed | None]) -> None:
        self.moved = dict(moved)
        names = ", ".join(f"{tp.topic}-{tp.partition}" for _, tp in sorted(self.moved, key=lambda k: (k[0], k[1])))
        super().__init__(
            f"Not committed: partitions {names} are owned by another task now (or their offsets were altered)"
        )


@dataclass(frozen=True)
class Commit:
    """What a load commits: per partition key, the committed state it replaces (None: no state yet)."""

    expected: Mapping[Key, Committed | None]
    checked: bool = True  # False: an alter or reset, definite whatever the state


class Fence:
    """The commit the task's current load makes; the job client reads it in `complete_load`."""

    def __init__(self) -> None:
        self.pending: Commit | None = None

    @contextmanager
    def committing(self, commit: Commit) -> Iterator[None]:
        self.pending = commit
        try:
            yield
        finally:
            self.pending = None


def _moved(commit: Commit, state: Mapping[Key, Committed]) -> dict[Key, Committed | None]:
    if not commit.checked:
        return {}
    return {key: state.get(key) for key, expected in commit.expected.items() if state.get(key) != expected}


class _SqlCommit(_SqlClient):
    """complete_load of SQL job clients: check, compaction and the `_dlt_loads` row in one transaction."""

    fence: Fence
    lock_offsets: bool

    def complete_load(self, load_id: str) -> None:
        commit = self.fence.pending
        if commit is None:
            super().complete_load(load_id)
            return
        sql = self.sql_client
        offsets, loads = sql.make_qualified_table_name(OFFSETS_TABLE), sql.make_qualified_table_name(LOADS_TABLE)
        with sql.begin_transaction():
            if self.lock_offsets:
                sql.execute_sql(f"LOCK TABLE {offsets} IN SHARE ROW EXCLUSIVE MODE")
            rows = sql.execute_sql(
                "SELECT o.table_name, o.kafka_topic, o.kafka_partition, o.epoch, MAX(o.kafka_offset) "
                f"FROM {offsets} o JOIN {loads} l ON o.{LOAD_ID} = l.load_id "
                f"WHERE l.status = 0 AND {keys_condition(commit.expected, 'o')} "
                "GROUP BY o.table_name, o.kafka_topic, o.kafka_partition, o.epoch"
            )
            moved = _moved(commit, fold(rows or []))
            if moved:
                raise LoadFenced(moved)
            # this load's rows supersede every other row of its partitions (older commits, dead loads)
            sql.execute_sql(
                f"DELETE FROM {offsets} WHERE {LOAD_ID} <> {literal(load_id)} AND {keys_condition(commit.expected)}"
            )
            super().complete_load(load_id)


class _FilesystemCommit(_FilesystemClient):
    """complete_load of the filesystem client: check from the offsets files, write the entry, then delete
    the offsets files this load supersedes."""

    fence: Fence

    def complete_load(self, load_id: str) -> None:
        commit = self.fence.pending
        if commit is None:
            super().complete_load(load_id)
            return
        fs = self.fs_client
        committed = {_loads_entry_id(path) for path in self.list_table_files(LOADS_TABLE)}
        columns = ["table_name", "kafka_topic", "kafka_partition", "epoch", "kafka_offset"]
        files: dict[str, list[tuple[Any, ...]]] = {}
        for path in self.list_table_files(OFFSETS_TABLE):
            if file_load_id(path) != load_id:
                files[path] = [tuple(row[c] for c in columns) for row in read_file_rows(fs, path, columns)]
        state = fold(row for path, rows in files.items() if file_load_id(path) in committed for row in rows)
        moved = _moved(commit, state)
        if moved:
            raise LoadFenced(moved)
        super().complete_load(load_id)

        def superseded(row: tuple[Any, ...]) -> bool:
            key = _key(row)
            return key in commit.expected or state.get(key) != Committed(int(row[3]), _offset(row[4]))

        # A file goes once none of its rows is a partition's current state; a file of a load that did not
        # commit (yet) only if it holds nothing but this load's partitions (another task's load may be
        # under way).
        for path, rows in files.items():
            done = file_load_id(path) in committed
            if all(superseded(row) if done else _key(row) in commit.expected for row in rows):
                fs.rm(path)


def _offset(value: Any) -> int | None:
    return None if value is None else int(value)


def _key(row: tuple[Any, ...]) -> Key:
    return (str(row[0]), TopicPartition(str(row[1]), int(row[2])))


def _loads_entry_id(path: str) -> str:
    # the filesystem destination's _dlt_loads entries are <schema name>__<load id>.jsonl
    name = path.rsplit("/", 1)[-1]
    return name.rsplit("__", 1)[-1].removesuffix(".jsonl")


def fenced_destination(factory: Any, fence: Fence) -> tuple[Any, Guarantee]:
    """`factory` (a dlt destination) with a job client whose commits go through `fence`.

    Hand-written: dlt offers no hook between a load's jobs and its commit, so the factory and its job client
    are subclassed, overriding only the client class and `complete_load`."""
    from dlt.destinations.impl.filesystem.filesystem import FilesystemClient
    from dlt.destinations.job_client_impl import SqlJobClientBase

    client: type = factory.client_class
    destination_type = factory.destination_type
    attributes: dict[str, Any] = {"fence": fence, "__module__": client.__module__}
    if issubclass(client, SqlJobClientBase):
        mixin: type = _SqlCommit
        postgres = destination_type == "dlt.destinations.postgres"
        duckdb = destination_type in ("dlt.destinations.duckdb", "dlt.destinations.motherduck")
        attributes["lock_offsets"] = postgres
        guarantee = Guarantee.ATOMIC if postgres or duckdb else Guarantee.CHECKED
    elif issubclass(client, FilesystemClient):
        mixin, guarantee = _FilesystemCommit, Guarantee.CHECKED
    else:
        return factory, Guarantee.NONE
    fenced_client = type(client.__name__, (mixin, client), attributes)
    factory_class = type(factory)
    fenced_class = type(
        factory_class.__name__,
        (factory_class,),
        {
            "__module__": factory_class.__module__,
            "client_class": property(_constant(fenced_client)),
            "destination_type": property(_constant(destination_type)),
        },
    )
    fenced: Any = object.__new__(fenced_class)
    fenced.__dict__.update(factory.__dict__)
    return fenced, guarantee


def _constant(value: Any) -> Callable[[Any], Any]:
    return lambda _self: value
