"""Destinations for the dlt sink's tests: one PostgreSQL server per module (a dataset per test), DuckDB files."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.postgres import PostgresServer, postgres_server


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    yield from postgres_server()
