"""A PostgreSQL server for tests: Debian's `postgresql` binaries, a throwaway data directory, loopback only.

PostgreSQL refuses to run as root, so under root the server runs as the `postgres` system user the
Debian package creates (`runuser`), with its data and socket directories owned by that user.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def postgres_bin() -> Path | None:
    """The newest installed PostgreSQL's bin directory (Debian keeps them under /usr/lib/postgresql/N/bin)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Logical decoding (pgoutput) for change data capture: Debezium's PostgreSQL connector
LOGICAL_DECODING = {"wal_level": "logical", "max_replication_slots": "10", "max_wal_senders": "10"}


class PostgresServer:
    """`with PostgresServer() as pg: pg.url("airflow")` gives a SQLAlchemy URL of a fresh database."""

    def __init__(self, user: str = "connect_test", settings: dict[str, str] | None = None) -> None:
        """`settings`: server settings on top of the defaults (`LOGICAL_DECODING` for change data capture)."""
        bin_dir = postgres_bin()
        if bin_dir is None:
            raise RuntimeError("PostgreSQL is not installed (Debian package `postgresql`)")
        self.bin = bin_dir
        self.user = user
        self.port = _free_port()
        # Not under pytest's tmp_path: the `postgres` user cannot traverse root's private directories.
        self.root = Path(tempfile.mkdtemp(prefix="connect-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self._as_root = os.geteuid() == 0
        self.settings = dict(settings or {})

    def _run(self, *args: str, **kwargs: Any) -> subprocess.CompletedProcess:
        command = list(args)
        if self._as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, check=True, capture_output=True, text=True, timeout=120, **kwargs)

    def start(self) -> PostgresServer:
        if self._as_root:
            shutil.chown(self.root, "postgres", "postgres")
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            self.user,
            "--auth=trust",
            "--encoding=UTF8",
            "--no-sync",
        )
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-w",
            "-t",
            "60",
            "-o",
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
            + "".join(f" -c {name}={value}" for name, value in self.settings.items()),
            "start",
        )
        return self

    def create_database(self, name: str) -> str:
        self._run(str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user, name)
        return self.url(name)

    def psql(self, database: str, sql: str) -> str:
        """Run `sql` (statements separated by semicolons) in `database`; what psql printed, unaligned."""
        done = self._run(
            str(self.bin / "psql"),
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            self.user,
            "-d",
            database,
            "-v",
            "ON_ERROR_STOP=1",
            "-A",
            "-t",
            "-c",
            sql,
        )
        return done.stdout

    def url(self, database: str, driver: str = "postgresql+psycopg2") -> str:
        return f"{driver}://{self.user}@127.0.0.1:{self.port}/{database}"

    def connect(self, database: str = "postgres") -> Any:
        """A psycopg2 connection to `database` in autocommit mode (each statement is committed at once)."""
        import psycopg2

        connection = psycopg2.connect(host="127.0.0.1", port=self.port, user=self.user, dbname=database)
        connection.autocommit = True
        return connection

    def execute(self, database: str, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        """Run one statement in `database`; the rows it returns (none for statements without a result)."""
        connection = self.connect(database)
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql, params)
                return cursor.fetchall() if cursor.description is not None else []
        finally:
            connection.close()

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")
        except subprocess.SubprocessError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def postgres_server() -> Iterator[PostgresServer]:
    """A started server for a module or session fixture (`yield from postgres_server()`): skipped where
    PostgreSQL is not installed, a failure in CI."""
    from .env import require

    require(postgres_bin() is not None, "PostgreSQL (Debian package postgresql)")
    with PostgresServer() as server:
        yield server
