"""PostgreSQL tables -> Singer tap (a source connector) -> Kafka -> dlt sink -> DuckDB, driven with
airflow_provider_connect, ending when DuckDB holds every row of the tables.

Steps (each one safe to retry):
  1. `pipeline_configs`  the two connector configs (`source` and `sink`): the tap's config from the
                         `postgres_conn_id` connection (host, port, login, schema as the database) with
                         `tap_password`, a config provider reference the workers resolve (never the
                         password itself: connector configs are stored and shown as they are given);
  2. `create_source`     ConnectorCreateOperator: a SingerSourceConnector running `tap` on `streams`,
                         one topic per stream (`topic_prefix` + stream id), incremental on
                         `replication_keys`, the others read in full at each run of the tap (every
                         `poll_interval_s`); waits until it and its task are RUNNING;
  3. `create_sink`       ConnectorCreateOperator: a DltSinkConnector loading those topics into the DuckDB
                         file `duckdb_path`, dataset `dataset`, a table per topic, merged on the record
                         key (the tables' primary keys), so rows read again replace themselves; waits
                         until RUNNING;
  4. `wait_loaded`       a sensor: every stream's table in DuckDB holds as many rows as its PostgreSQL
                         table, or more (taps replicate no deletes: rows deleted in PostgreSQL stay);
                         it reads DuckDB between the sink's loads (a DuckDB file has one writing process
                         or readers, never both), and says what it waits for: the file, a table, rows;
  5. `report`            the row count of each DuckDB table.

Both connectors keep running after the run: later changes keep flowing (incremental streams by their
replication key), and a new run finds the connectors in place (an identical config counts as created).

Trigger it with a config, e.g.
    airflow dags trigger postgres_to_duckdb --conf '{"streams": ["public-orders"],
        "replication_keys": {"public-orders": "updated_at"}}'

Connections: `conn_id` (type kafka_connect), the Connect REST API, and `postgres_conn_id` (type postgres),
the source database (its password is used only to count rows in step 4), e.g.
    AIRFLOW_CONN_KAFKA_CONNECT_DEFAULT='{"conn_type": "kafka_connect", "host": "http://localhost:8083"}'
    AIRFLOW_CONN_POSTGRES_SOURCE='postgresql://reader:secret@db:5432/shop'
The workers need the tap (e.g. `meltanolabs-tap-postgres` in a virtualenv of its own, named by path in
`tap`), the `dlt` extra, and a file config provider for the password reference:
    config.providers=file
    config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
Airflow's environment needs `duckdb` and `psycopg2` (both come with airflow-provider-connect[dlt]).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pendulum
from airflow.sdk import BaseHook, Param, PokeReturnValue, dag, task

from airflow_provider_connect.operators.connector import ConnectorCreateOperator

SOURCE_CLASS = "SingerSourceConnector"
SINK_CLASS = "runtime.connectors.dlt.DltSinkConnector"
CONN = "{{ params.conn_id }}"
# how long a read of the DuckDB file waits for a load of the sink writing it, and how often it tries meanwhile
LOCK_WAIT_S = 30
LOCK_RETRY_S = 0.1


@dag(
    dag_id="postgres_to_duckdb",
    description="PostgreSQL -> Singer tap -> Kafka -> dlt -> DuckDB, until DuckDB holds every row",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    tags=["kafka-connect", "singer", "dlt"],
    doc_md=__doc__,
    params={
        "conn_id": Param("kafka_connect_default", type="string", description="kafka_connect connection"),
        "postgres_conn_id": Param("postgres_source", type="string", description="the source database"),
        "tap_password": Param(
            "${file:/etc/kafka-connect/secrets.properties:postgres_password}",
            type="string",
            description="What the tap's config gets as password: a config provider reference the workers "
            "resolve; empty for none",
        ),
        "tap": Param("tap-postgres", type="string", minLength=1, description="the tap executable or its path"),
        "streams": Param(["public-orders"], type="array", items={"type": "string"}, minItems=1),
        "replication_keys": Param({}, type="object", description='{"<stream>": "<column>"}: incremental'),
        "topic_prefix": Param("pg.", type="string", minLength=1),
        "poll_interval_s": Param(30, type="integer", minimum=0),
        "source_connector": Param("postgres-source", type="string", minLength=1),
        "sink_connector": Param("duckdb-sink", type="string", minLength=1),
        "duckdb_path": Param("/tmp/connect-demo/warehouse.duckdb", type="string", minLength=1),
        "dataset": Param("shop", type="string", minLength=1),
        "sink_overrides": Param({}, type="object", description="Extra sink config (batch.size, ...)"),
    },
)
def postgres_to_duckdb() -> None:
    @task(multiple_outputs=True)
    def pipeline_configs(params: dict[str, Any] | None = None) -> dict[str, dict[str, str]]:
        p = params or {}
        db = BaseHook.get_connection(p["postgres_conn_id"])
        tap_config: dict[str, Any] = {
            "host": db.host,
            "port": db.port or 5432,
            "user": db.login,
            "database": db.schema,
            "filter_schemas": sorted({stream_table(s)[0] for s in p["streams"]}),  # discovery skips the rest
        }
        if p["tap_password"]:
            tap_config["password"] = p["tap_password"]
        source = {
            "connector.class": SOURCE_CLASS,
            "tap": p["tap"],
            "tap.config": json.dumps(tap_config),
            "streams": ",".join(p["streams"]),
            "replication.keys": ",".join(f"{s}={c}" for s, c in sorted(p["replication_keys"].items())),
            "topic.prefix": p["topic_prefix"],
            "poll.interval.ms": str(p["poll_interval_s"] * 1000),
        }
        sink = {
            "connector.class": SINK_CLASS,
            "topics": ",".join(p["topic_prefix"] + s for s in p["streams"]),
            "destination": "duckdb",
            "destination.credentials": p["duckdb_path"],
            "dataset.name": p["dataset"],
            "write.disposition": "merge",
            **{k: str(v) for k, v in p["sink_overrides"].items()},
        }
        return {"source": source, "sink": sink}

    configs = pipeline_configs()
    create_source = ConnectorCreateOperator(
        task_id="create_source",
        kafka_connect_conn_id=CONN,
        connector_name="{{ params.source_connector }}",
        config=configs["source"],
        update_if_different=True,
        wait_for_state=True,
        wait_timeout=600,  # the tap discovers its catalog when the connector starts
    )
    create_sink = ConnectorCreateOperator(
        task_id="create_sink",
        kafka_connect_conn_id=CONN,
        connector_name="{{ params.sink_connector }}",
        config=configs["sink"],
        update_if_different=True,
        wait_for_state=True,
    )

    @task.sensor(poke_interval=5, timeout=3600, mode="poke")
    def wait_loaded(params: dict[str, Any] | None = None) -> PokeReturnValue:
        p = params or {}
        path, dataset = p["duckdb_path"], p["dataset"]
        expected = source_counts(p["postgres_conn_id"], p["streams"])
        try:
            loaded = duckdb_counts(path, dataset, [p["topic_prefix"] + s for s in p["streams"]], wait_s=LOCK_WAIT_S)
        except DuckDBBusy as exc:
            print(exc)
            return PokeReturnValue(is_done=False)
        if loaded is None:
            print(
                f"No DuckDB file at {path} yet: the sink has loaded nothing so far. If this lasts, see "
                f"GET /connectors/{p['sink_connector']}/status (a FAILED task has a trace) and the workers' logs"
            )
            return PokeReturnValue(is_done=False)
        waiting = {}
        for stream, rows in expected.items():
            topic = p["topic_prefix"] + stream
            count = loaded[topic]
            if count is None:
                waiting[stream] = f"no table {dataset}.{table_name(topic)} yet (no record of topic {topic} loaded)"
            elif count < rows:
                waiting[stream] = f"{count} of {rows} rows"
        print(f"DuckDB holds every row of PostgreSQL's tables but: {waiting}" if waiting else "DuckDB holds every row")
        return PokeReturnValue(is_done=not waiting)

    @task
    def report(params: dict[str, Any] | None = None) -> dict[str, Any]:
        p = params or {}
        topics = [p["topic_prefix"] + s for s in p["streams"]]
        counts = duckdb_counts(p["duckdb_path"], p["dataset"], topics, wait_s=120) or {}
        return {"duckdb": p["duckdb_path"], "tables": {table_name(t): counts.get(t) for t in topics}}

    configs >> create_source >> create_sink >> wait_loaded() >> report()


def stream_table(stream: str) -> tuple[str, str]:
    """tap-postgres' stream ids are <schema>-<table>."""
    schema, _, table = stream.partition("-")
    return schema, table


def table_name(topic: str) -> str:
    """The dlt sink's table for a topic: dlt's snake_case naming, which for topic names (letters, digits,
    '.', '_', '-') is lower case with every other run of characters one '_'."""
    return re.sub(r"[^a-z0-9]+", "_", topic.lower()).strip("_")


def source_counts(conn_id: str, streams: list[str]) -> dict[str, int]:
    import psycopg2
    from psycopg2 import sql

    db = BaseHook.get_connection(conn_id)
    with psycopg2.connect(
        host=db.host, port=db.port or 5432, user=db.login, password=db.password, dbname=db.schema
    ) as connection:
        with connection.cursor() as cursor:
            counts = {}
            for stream in streams:
                cursor.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(*stream_table(stream))))
                counts[stream] = cursor.fetchone()[0]
    connection.close()
    return counts


class DuckDBBusy(Exception):
    """The DuckDB file stayed locked by another process (the sink's loads) for as long as a read waits."""


def duckdb_counts(path: str, dataset: str, topics: list[str], wait_s: float) -> dict[str, int | None] | None:
    """Rows per topic's table (None: no such table yet), or None when there is no DuckDB file yet.

    A DuckDB file has one writing process or any number of reading ones, never both: while a load of the
    sink writes, a read waits, trying again every `LOCK_RETRY_S` for up to `wait_s` (DuckDBBusy after that).
    A read is short, since the sink's loads cannot write meanwhile (they are tried again later)."""
    import os
    import time

    import duckdb

    if not os.path.exists(path):
        return None
    deadline = time.monotonic() + wait_s
    while True:
        try:
            with duckdb.connect(path, read_only=True) as connection:
                tables = {
                    row[0]
                    for row in connection.execute(
                        "SELECT table_name FROM information_schema.tables WHERE table_schema = ?", [dataset]
                    ).fetchall()
                }
                return {
                    t: connection.execute(f'SELECT count(*) FROM "{dataset}"."{table_name(t)}"').fetchone()[0]
                    if table_name(t) in tables
                    else None
                    for t in topics
                }
        except duckdb.IOException as exc:
            if time.monotonic() >= deadline:
                raise DuckDBBusy(
                    f"Could not read {path} for {wait_s:.0f} s ({exc}). The sink holds the file only while a load "
                    "writes: if this lasts, the process named above keeps it open (another program), or the sink "
                    "loads back to back (a higher offset.flush.interval.ms on the workers spaces its loads)"
                ) from exc
            time.sleep(LOCK_RETRY_S)


dag = postgres_to_duckdb()
