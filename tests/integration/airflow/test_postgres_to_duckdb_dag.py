"""dags/postgres_to_duckdb.py end to end with Airflow's dag.test(): Debian's PostgreSQL, the real
meltanolabs-tap-postgres (its own virtualenv), a real worker and broker, the dlt sink writing a DuckDB file.

The run ends when DuckDB holds every row of the PostgreSQL tables; the connectors keep running after it,
so an update made afterwards reaches DuckDB too. The tap's password goes through the worker's file config
provider, and shows up in no log, XCom or REST response.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.airflow.conftest import REPO
from tests.support.broker import unique
from tests.support.postgres import PostgresServer, postgres_server
from tests.support.tool_venvs import TAP_POSTGRES, tool_venv
from tests.support.worker import WorkerProcess, wait_for

pytestmark = [
    pytest.mark.integration,
    pytest.mark.airflow,
    pytest.mark.timeout(600),
    pytest.mark.tool_venvs("tap-postgres"),
]

DAG_FILE = "postgres_to_duckdb.py"
PASSWORD = "pg-dag-s3cret"  # the server trusts loopback, so any password works; it must appear nowhere
UTC = dt.UTC


@pytest.fixture(scope="module")
def pg() -> Iterator[PostgresServer]:
    yield from postgres_server()


def shop(pg: PostgresServer) -> str:
    """`orders` (incremental on updated_at, numeric amounts) and `customers` (read in full)."""
    database = unique("shop").replace("-", "_")
    pg.create_database(database)
    pg.execute(
        database,
        "CREATE TABLE orders (id integer PRIMARY KEY, amount numeric(9, 2) NOT NULL, updated_at timestamptz NOT NULL)",
    )
    pg.execute(database, "CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL)")
    for i in range(1, 31):
        pg.execute(
            database,
            "INSERT INTO orders VALUES (%s, %s, %s)",
            (i, decimal.Decimal(i * 101).scaleb(-2), dt.datetime(2025, 1, 1, tzinfo=UTC) + dt.timedelta(hours=i)),
        )
    pg.execute(database, "INSERT INTO customers VALUES (1, 'ada'), (2, 'bob'), (3, 'cy')")
    return database


def duckdb_rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    """Read the sink's DuckDB file, waiting while one of its loads holds the lock."""
    import duckdb

    def read() -> list[tuple[Any, ...]] | None:
        try:
            with duckdb.connect(str(path), read_only=True) as connection:
                return connection.execute(sql).fetchall()
        except duckdb.IOException:
            return None

    return wait_for(lambda: (rows := read()) is not None and rows, 60, 0.5, f"DuckDB to answer {sql}")


def test_dag_syncs_postgres_tables_into_duckdb_through_a_singer_tap_kafka_and_the_dlt_sink(
    airflow_home, pg, bootstrap_servers, tmp_path
):
    tap = tool_venv("tap-postgres", TAP_POSTGRES) / "bin" / "tap-postgres"
    database = shop(pg)
    secrets = tmp_path / "pg.properties"
    secrets.write_text(f"password={PASSWORD}\n")
    props = {
        "config.providers": "file",
        "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
        "offset.flush.interval.ms": 500,
    }
    dag_file = airflow_home.dags / DAG_FILE
    if not dag_file.exists():
        dag_file.symlink_to(REPO / "dags" / DAG_FILE)
    warehouse, prefix = tmp_path / "warehouse.duckdb", unique("pg") + "."
    source, sink = unique("pg-source"), unique("duckdb-sink")
    conf = {
        "postgres_conn_id": "postgres_dag_source",
        "tap_password": "${file:" + str(secrets) + ":password}",
        "tap": str(tap),
        "streams": ["public-orders", "public-customers"],
        "replication_keys": {"public-orders": "updated_at"},
        "topic_prefix": prefix,
        "poll_interval_s": 2,
        "source_connector": source,
        "sink_connector": sink,
        "duckdb_path": str(warehouse),
        "dataset": "shop",
    }
    airflow_home.env["AIRFLOW_CONN_POSTGRES_DAG_SOURCE"] = (
        f"postgresql://{pg.user}:{PASSWORD}@127.0.0.1:{pg.port}/{database}"
    )
    with WorkerProcess(tmp_path / "worker", bootstrap_servers, props) as worker:
        try:
            result = airflow_home.run_dag(DAG_FILE, conf, {"kafka_connect_default": worker.url}, timeout=480)
            assert result["state"] == "success", result["log"][-6000:]
            assert result["tasks"] == {
                t: "success" for t in ("pipeline_configs", "create_source", "create_sink", "wait_loaded", "report")
            }
            tables = {"orders": f"{prefix}public-orders", "customers": f"{prefix}public-customers"}
            names = {k: v.replace(".", "_").replace("-", "_") for k, v in tables.items()}
            assert result["xcom"]["report"] == {
                "duckdb": str(warehouse),
                "tables": {names["orders"]: 30, names["customers"]: 3},
            }
            orders = f"shop.{names['orders']}"
            # tap-postgres types numeric columns as JSON Schema numbers: doubles in Kafka and DuckDB
            expected = [(i, float(a), at) for i, a, at in pg.execute(database, "SELECT * FROM orders ORDER BY id")]
            assert duckdb_rows(warehouse, f"SELECT id, amount, updated_at FROM {orders} ORDER BY id") == expected
            assert duckdb_rows(warehouse, f"SELECT id, name FROM shop.{names['customers']} ORDER BY id") == [
                (1, "ada"),
                (2, "bob"),
                (3, "cy"),
            ]
            column_types = dict(
                duckdb_rows(
                    warehouse,
                    "SELECT column_name, data_type FROM information_schema.columns "
                    f"WHERE table_schema = 'shop' AND table_name = '{names['orders']}'",
                )
            )
            assert column_types["updated_at"] == "TIMESTAMP WITH TIME ZONE"

            # the pipeline keeps running: an update replaces its row (merged on the primary key)
            pg.execute(database, "UPDATE orders SET amount = 99.5, updated_at = '2026-01-01T00:00:00Z' WHERE id = 7")
            wait_for(
                lambda: (
                    duckdb_rows(warehouse, f"SELECT count(*), max(amount) FROM {orders} WHERE id = 7") == [(1, 99.5)]
                ),
                120,
                1.0,
                "the update in DuckDB",
            )
            with worker.client as client:
                shown = client.get(f"/connectors/{source}").text + client.get(f"/connectors/{source}/tasks").text
            assert PASSWORD not in shown
            assert PASSWORD not in json.dumps(result["xcom"])
            assert PASSWORD not in result["log"]
            assert PASSWORD not in worker.log_path.read_text()
        except Exception as exc:  # a failed run or assert says what the connectors and the worker were doing
            raise AssertionError(f"{exc}\n\n{worker.describe([source, sink])}") from exc
        finally:
            airflow_home.env.pop("AIRFLOW_CONN_POSTGRES_DAG_SOURCE", None)
            with worker.client as client:
                for name in (source, sink):
                    client.delete(f"/connectors/{name}")
