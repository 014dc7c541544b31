"""The Singer source with a real tap: meltanolabs-tap-postgres (in a virtualenv of its own, named by path as
users do) reading Debian's PostgreSQL, through a real worker and broker.

One PostgreSQL server and one standalone worker (its tasks in a task process, the tap's password through a
config provider) for the module; the failover test runs two distributed workers of its own. Singer's
incremental bookmarks are inclusive (`>=`), so the row at a bookmark is read again by the next run: the
tests allow exactly that row, and no other committed row, to come again.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.scenarios.helpers import Api, Kafka, assert_error
from tests.support.broker import unique
from tests.support.cluster import running_cluster
from tests.support.env import require
from tests.support.postgres import PostgresServer, postgres_bin
from tests.support.tool_venvs import TAP_POSTGRES, tool_venv
from tests.support.worker import WorkerProcess, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.tool_venvs("tap-postgres")]

SINGER = "SingerSourceConnector"
PASSWORD = "tap-s3cret-pw"  # trust authentication accepts any; it must never show up anywhere


@pytest.fixture(scope="module")
def pg() -> Iterator[PostgresServer]:
    require(postgres_bin() is not None, "PostgreSQL (Debian's postgresql package)")
    with PostgresServer() as server:
        yield server


@pytest.fixture(scope="module")
def tap() -> str:
    return str(tool_venv("tap-postgres", TAP_POSTGRES) / "bin" / "tap-postgres")


@pytest.fixture(scope="module")
def secrets_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("secrets") / "pg.properties"
    path.write_text(f"password={PASSWORD}\n")
    return path


CONFIG_PROVIDERS = {
    "config.providers": "file",
    "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
}


@pytest.fixture(scope="module")
def worker(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    props = {"task.processes": 1, **CONFIG_PROVIDERS}
    with WorkerProcess(tmp_path_factory.mktemp("worker"), bootstrap_servers, props=props) as proc:
        yield proc
        proc.stop()


@pytest.fixture(scope="module")
def api(worker: WorkerProcess) -> Iterator[Api]:
    client = Api(worker.url, timeout_s=120)  # a create waits for the tap's discovery
    yield client
    client.close()


@pytest.fixture(scope="module")
def kafka(bootstrap_servers: str) -> Kafka:
    return Kafka(bootstrap_servers)


def new_database(pg: PostgresServer) -> str:
    """A database with `users` (incremental on updated_at) and `plans` (full table)."""
    database = unique("shop").replace("-", "_")
    pg.create_database(database)
    pg.execute(
        database,
        "CREATE TABLE users (id integer PRIMARY KEY, name text NOT NULL, score numeric(8, 2), "
        "born date, updated_at timestamptz NOT NULL)",
    )
    pg.execute(database, "CREATE TABLE plans (id integer PRIMARY KEY, title text)")
    for i in range(1, 5):
        add_user(pg, database, i, f"2024-01-0{i}T00:00:00+00:00")
    pg.execute(database, "INSERT INTO plans VALUES (1, 'free'), (2, 'pro')")
    return database


def add_user(pg: PostgresServer, database: str, i: int, updated_at: str) -> None:
    pg.execute(
        database,
        "INSERT INTO users VALUES (%s, %s, %s, '1990-05-17', %s)",
        (i, f"user-{i}", i * 1.25, updated_at),
    )


def tap_config(pg: PostgresServer, database: str, password: str, **extra: Any) -> str:
    config = {
        "host": "127.0.0.1",
        "port": pg.port,
        "user": pg.user,
        "password": password,
        "database": database,
        "filter_schemas": ["public"],  # discovery skips information_schema and pg_catalog
        **extra,
    }
    return json.dumps(config)


def singer_config(tap: str, config: str, prefix: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": SINGER,
        "tap": tap,
        "tap.config": config,
        "streams": "public-users,public-plans",
        "replication.keys": "public-users=updated_at",
        "topic.prefix": prefix,
        "poll.interval.ms": "1000",
        **extra,
    }


def payloads(kafka: Kafka, topic: str) -> list[dict[str, Any]]:
    """The record values of `topic` (JSON converter with schemas: the payloads)."""
    return [json.loads(value)["payload"] for _, _, _, value in kafka.read_all(topic, timeout_s=60)]


def wait_rows(kafka: Kafka, topic: str, predicate, what: str, timeout_s: float = 120) -> list[dict[str, Any]]:
    return wait_for(lambda: (rows := payloads(kafka, topic)) and predicate(rows) and rows, timeout_s, 1.0, what)


def bookmark(api: Api, name: str) -> dt.datetime | None:
    """The committed bookmark of the users stream (tap-postgres writes it as ISO 8601 text)."""
    for entry in api.offsets(name):
        if entry["partition"] == {"stream": "public-users"}:
            value = (entry["offset"] or {}).get("replication_key_value")
            return dt.datetime.fromisoformat(value) if value else None
    return None


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def test_rows_then_updates_reach_their_topics_and_a_restart_resumes_from_the_bookmark(
    pg: PostgresServer, tap: str, secrets_file: Path, worker: WorkerProcess, api: Api, kafka: Kafka
) -> None:
    database = new_database(pg)
    name, prefix = unique("singer"), unique("pg") + "."
    password = "${file:" + str(secrets_file) + ":password}"
    config = singer_config(
        tap,
        tap_config(pg, database, password),
        prefix,
        **{
            "transforms": "origin",
            "transforms.origin.type": "org.apache.kafka.connect.transforms.InsertField$Value",
            "transforms.origin.static.field": "origin",
            "transforms.origin.static.value": "postgres",
        },
    )
    api.create(name, config)
    users, plans = prefix + "public-users", prefix + "public-plans"

    # every row of both tables, with their types mapped and the transform applied
    rows = wait_rows(kafka, users, lambda r: {u["id"] for u in r} >= {1, 2, 3, 4}, "the users rows")
    first = next(r for r in rows if r["id"] == 1)
    assert first == {
        "id": 1,
        "name": "user-1",
        "score": 1.25,
        "born": 7441,  # Connect's Date: days since the epoch (1990-05-17)
        "updated_at": 1704067200000,  # Connect's Timestamp: milliseconds (2024-01-01T00:00:00Z)
        "origin": "postgres",
    }
    schema = json.loads(kafka.read_all(users)[0][3])["schema"]
    assert {f["field"]: (f["type"], f.get("name")) for f in schema["fields"]} == {
        "id": ("int64", None),
        "name": ("string", None),
        "score": ("double", None),
        "born": ("int32", "org.apache.kafka.connect.data.Date"),
        "updated_at": ("int64", "org.apache.kafka.connect.data.Timestamp"),
        "origin": ("string", None),
    }
    wait_rows(kafka, plans, lambda r: {p["title"] for p in r} == {"free", "pro"}, "the plans rows")
    # keyed by the table's primary key (key and value of the same record: the topic may have several partitions)
    record = next(r for r in kafka.read_all(users) if json.loads(r[3])["payload"]["id"] == 1)
    assert json.loads(record[2])["payload"] == {"id": 1}

    # the bookmark is the connector's offset
    wait_for(lambda: bookmark(api, name) == at("2024-01-04T00:00:00+00:00"), 60, 0.5, "the users bookmark")

    # an update and an insert: only they (and the row at the bookmark) are read again
    pg.execute(database, "UPDATE users SET name = 'renamed', updated_at = '2024-02-01T00:00:00+00:00' WHERE id = 2")
    add_user(pg, database, 5, "2024-02-02T00:00:00+00:00")
    rows = wait_rows(
        kafka, users, lambda r: {"renamed", "user-5"} <= {u["name"] for u in r}, "the updated and inserted rows"
    )
    counts = Counter(u["id"] for u in rows)
    assert counts[1] == counts[3] == 1, counts  # never read again
    wait_for(lambda: bookmark(api, name) == at("2024-02-02T00:00:00+00:00"), 60, 0.5, "the bookmark after the update")

    # a restarted task starts the tap from the committed bookmark: rows 1 to 4 are not read again
    before = Counter(u["id"] for u in payloads(kafka, users))
    response = api.post(f"/connectors/{name}/restart?includeTasks=true")
    assert response.status_code in (202, 204), response.text
    api.wait_state(name, "RUNNING", 1, timeout_s=60)
    add_user(pg, database, 6, "2024-03-01T00:00:00+00:00")
    rows = wait_rows(kafka, users, lambda r: 6 in {u["id"] for u in r}, "the row inserted after the restart")
    after = Counter(u["id"] for u in rows)
    assert all(after[i] == before[i] for i in (1, 2, 3, 4)), (before, after)

    # resync one stream (PATCH null) and then all (DELETE): every row is read again
    api.stop(name)
    api.wait_state(name, "STOPPED", 0, None, timeout_s=60)
    response = api.patch(
        f"/connectors/{name}/offsets", {"offsets": [{"partition": {"stream": "public-users"}, "offset": None}]}
    )
    assert response.status_code == 200, response.text
    assert response.json()["message"] == "The offsets for this connector have been altered successfully"
    assert bookmark(api, name) is None
    response = api.delete(f"/connectors/{name}/offsets")
    assert response.status_code == 200, response.text
    assert response.json()["message"] == "The offsets for this connector have been reset successfully"
    assert api.offsets(name) == []
    api.resume(name)
    rows = wait_rows(
        kafka, users, lambda r: Counter(u["id"] for u in r)[1] == 2, "every row read again after the reset"
    )
    assert {u["id"] for u in rows} == {1, 2, 3, 4, 5, 6}

    # the password went through the config provider: in no response and no log line
    assert PASSWORD not in api.get(f"/connectors/{name}").text
    assert PASSWORD not in api.get(f"/connectors/{name}/tasks").text
    assert PASSWORD not in worker.log_path.read_text()
    api.delete(f"/connectors/{name}")


def test_a_failing_tap_fails_its_task_with_the_tap_stderr(pg: PostgresServer, tap: str, api: Api) -> None:
    name = unique("singer-fail")
    # a given catalog: the connector does not discover, so the tap first meets the missing database in its run
    catalog = {
        "streams": [
            {
                "tap_stream_id": "public-users",
                "stream": "public-users",
                "table_name": "users",
                "replication_method": "",
                "key_properties": ["id"],
                "schema": {"type": "object", "properties": {"id": {"type": ["integer"]}}},
                "metadata": [{"breadcrumb": [], "metadata": {"schema-name": "public"}}],
            }
        ]
    }
    config = singer_config(
        tap, tap_config(pg, "no_such_database", PASSWORD), "fail.", **{"tap.catalog": json.dumps(catalog)}
    )
    config["streams"] = "public-users"
    config["replication.keys"] = ""
    api.create(name, config)
    status = api.wait_state(name, "RUNNING", 1, "FAILED", timeout_s=120)
    trace = status["tasks"][0]["trace"]
    assert "The tap " in trace and "exited with code 1" in trace, trace
    assert 'database "no_such_database" does not exist' in trace, trace
    assert PASSWORD not in trace
    api.delete(f"/connectors/{name}")


def test_validation_fails_with_the_tap_discovery_error(pg: PostgresServer, tap: str, api: Api) -> None:
    config = singer_config(tap, tap_config(pg, "no_such_database", PASSWORD), "bad.")
    assert_error(
        api.post("/connectors", {"name": unique("singer-bad"), "config": config}),
        400,
        'database "no_such_database" does not exist',
    )
    body = api.put(f"/connector-plugins/{SINGER}/config/validate", {**config, "name": "singer-bad"}).json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in body["configs"] if c["value"] and c["value"]["errors"]}
    assert list(errors) == ["tap.config"] and "--discover" in errors["tap.config"][0], errors
    assert PASSWORD not in json.dumps(body)


def test_a_killed_workers_tap_resumes_on_another_from_the_committed_bookmark(
    pg: PostgresServer, tap: str, bootstrap_servers: str, kafka: Kafka, tmp_path: Path
) -> None:
    database = new_database(pg)
    name, prefix = unique("singer-moved"), unique("pgd") + "."
    users = prefix + "public-users"
    with running_cluster(tmp_path, bootstrap_servers, 2) as cluster:
        client = Api(cluster.workers[0].url, timeout_s=120)
        try:
            client.create(name, singer_config(tap, tap_config(pg, database, PASSWORD), prefix))
            status = cluster.wait_state(name, "RUNNING", 1, timeout_s=60)
            wait_rows(kafka, users, lambda r: {u["id"] for u in r} >= {1, 2, 3, 4}, "the users rows")
            wait_for(lambda: bookmark(client, name) == at("2024-01-04T00:00:00+00:00"), 60, 0.5, "the bookmark")
            before = Counter(u["id"] for u in payloads(kafka, users))

            owner = cluster.index_of(status["tasks"][0]["worker_id"])
            survivor = 1 - owner
            cluster.workers[owner].kill()
            moved = cluster.wait_state(
                name, "RUNNING", 1, via=survivor, timeout_s=90, exclude_worker=cluster.worker_id(owner)
            )
            assert moved["tasks"][0]["worker_id"] == cluster.worker_id(survivor)
            add_user(pg, database, 5, "2024-02-02T00:00:00+00:00")
            rows = wait_rows(kafka, users, lambda r: 5 in {u["id"] for u in r}, "the row inserted after the failover")
            after = Counter(u["id"] for u in rows)
            assert all(after[i] == before[i] for i in (1, 2, 3)), (before, after)
        finally:
            client.close()
