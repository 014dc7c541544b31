"""Reading what the dlt sink loaded, straight from each destination (not through the sink or dlt)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.postgres import PostgresServer


class Destination:
    """One dataset in one destination: the sink's config for it, and queries on it."""

    name: str

    def config(self) -> dict[str, str]:
        raise NotImplementedError

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def column_types(self, table: str) -> dict[str, str]:
        raise NotImplementedError

    def rows(self, table: str, columns: str = "*", order: str = "") -> list[tuple[Any, ...]]:
        return self.query(f"SELECT {columns} FROM {self.dataset}.{table}" + (f" ORDER BY {order}" if order else ""))

    def count(self, table: str) -> int:
        return self.query(f"SELECT count(*) FROM {self.dataset}.{table}")[0][0]


class DuckDb(Destination):
    name = "duckdb"

    def __init__(self, path: Path, dataset: str) -> None:
        self.path, self.dataset = path, dataset

    def config(self) -> dict[str, str]:
        return {"destination": "duckdb", "destination.credentials": str(self.path), "dataset.name": self.dataset}

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        import duckdb

        with duckdb.connect(str(self.path), read_only=True) as connection:
            return connection.execute(sql).fetchall()

    def column_types(self, table: str) -> dict[str, str]:
        rows = self.query(
            "SELECT column_name, data_type FROM information_schema.columns "
            f"WHERE table_schema = '{self.dataset}' AND table_name = '{table}'"
        )
        return dict(rows)


class Filesystem(Destination):
    """dlt's filesystem destination writing parquet files into a local folder, read with DuckDB."""

    name = "filesystem"

    def __init__(self, root: Path, dataset: str) -> None:
        self.root, self.dataset = root, dataset

    def config(self) -> dict[str, str]:
        return {
            "destination": "filesystem",
            "destination.bucket_url": self.root.as_uri(),
            "dataset.name": self.dataset,
            "loader.file.format": "parquet",
        }

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        """`sql` with <dataset>.<table> read from the table's parquet files."""
        import re

        import duckdb

        def files(match: re.Match[str]) -> str:
            return f"read_parquet('{self.root / self.dataset / match.group(1)}/*.parquet')"

        with duckdb.connect() as connection:
            return connection.execute(re.sub(rf"\b{self.dataset}\.(\w+)", files, sql)).fetchall()


class Postgres(Destination):
    """The server trusts loopback connections, so any password opens it; dlt's postgres needs one."""

    name = "postgres"
    password = "dlt-sink-pw-4711"

    def __init__(self, server: PostgresServer, dataset: str, database: str = "postgres") -> None:
        self.server, self.dataset, self.database = server, dataset, database

    def config(self) -> dict[str, str]:
        return {
            "destination": "postgres",
            "destination.credentials": self.server.url(self.database, driver="postgresql").replace(
                "@", f":{self.password}@", 1
            ),
            "dataset.name": self.dataset,
        }

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        connection = self.server.connect(self.database)
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql)
                return cursor.fetchall()
        finally:
            connection.close()

    def column_types(self, table: str) -> dict[str, str]:
        rows = self.query(
            "SELECT column_name, CASE WHEN data_type = 'numeric' "
            "THEN format('numeric(%s,%s)', numeric_precision, numeric_scale) ELSE data_type END "
            f"FROM information_schema.columns WHERE table_schema = '{self.dataset}' AND table_name = '{table}'"
        )
        return dict(rows)

    def nullable(self, table: str) -> dict[str, bool]:
        rows = self.query(
            "SELECT column_name, is_nullable FROM information_schema.columns "
            f"WHERE table_schema = '{self.dataset}' AND table_name = '{table}'"
        )
        return {name: flag == "YES" for name, flag in rows}
