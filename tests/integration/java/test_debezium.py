"""Debezium's PostgreSQL connector (pgoutput) against Debian's PostgreSQL, hosted by this runtime: the
snapshot, then streaming of inserts, updates and deletes, with the same change events (keys, values,
schemas) as the same Debezium on the oracle; a worker killed with kill -9 resumes from the stored LSN
without a new snapshot and without losing a change."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from tests.integration.scenarios.helpers import Api, Kafka
from tests.support.broker import unique
from tests.support.cluster import running_cluster
from tests.support.postgres import LOGICAL_DECODING, PostgresServer, postgres_bin
from tests.support.worker import WorkerProcess, wait_for

from .conftest import POSTGRES

pytestmark = pytest.mark.integration

# what differs between two runs of the same change: when and where it was read, and the topic prefix
VOLATILE_SOURCE = {"ts_ms", "ts_us", "ts_ns", "lsn", "txId", "name", "sequence", "snapshot", "xmin"}
VOLATILE_ENVELOPE = {"ts_ms", "ts_us", "ts_ns", "transaction"}


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    from tests.support.env import require

    require(postgres_bin() is not None, "Debian's postgresql")
    with PostgresServer(settings=LOGICAL_DECODING) as server:
        server.create_database("inventory")
        yield server


def debezium_config(pg: PostgresServer, table: str, prefix: str) -> dict[str, str]:
    return {
        "connector.class": POSTGRES,
        "tasks.max": "1",
        "database.hostname": "127.0.0.1",
        "database.port": str(pg.port),
        "database.user": pg.user,
        "database.password": "unused",  # trust authentication on loopback
        "database.dbname": "inventory",
        "topic.prefix": prefix,
        "plugin.name": "pgoutput",
        "slot.name": prefix.replace("-", "_"),
        "publication.name": f"pub_{prefix.replace('-', '_')}",
        "publication.autocreate.mode": "filtered",
        "table.include.list": f"public.{table}",
        "poll.interval.ms": "100",
    }


def events(kafka: Kafka, topic: str, count: int, idle_s: float = 10) -> list[tuple[Any, Any]]:
    """The first `count` change events of `topic` ((key, value) as JsonConverter wrote them, less their
    volatile fields), or fewer if no more come within `idle_s` (short where a wait_for asks again). Read
    without Kafka.read_all()'s markers: Tansu can hide records from a reader of a partition that several
    producers write."""
    consumer = Consumer(
        {"bootstrap.servers": kafka.bootstrap_servers, "group.id": unique("dbz-reader"), "enable.auto.commit": False}
    )
    try:
        partitions = consumer.list_topics(topic, timeout=30).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        out: list[tuple[Any, Any]] = []
        idle_deadline = time.monotonic() + idle_s
        while len(out) < count and time.monotonic() < idle_deadline:
            for message in consumer.consume(100, 0.5):
                if message.error() is None:
                    key, value = message.key(), message.value()
                    out.append(
                        (_unprefixed(json.loads(key)) if key else None, _stable(json.loads(value)) if value else None)
                    )
                    idle_deadline = time.monotonic() + idle_s
        return out[:count]
    finally:
        consumer.close()


def _stable(envelope: dict[str, Any]) -> dict[str, Any]:
    payload = {k: v for k, v in envelope["payload"].items() if k not in VOLATILE_ENVELOPE}
    if "source" in payload:
        payload["source"] = {k: v for k, v in payload["source"].items() if k not in VOLATILE_SOURCE}
    return {"schema": _unprefixed(envelope["schema"]), "payload": payload}


def _unprefixed(schema: Any) -> Any:
    """Schema names carry the topic prefix (`<prefix>.public.t.Value`): compare them without it."""
    if isinstance(schema, dict):
        return {
            k: (v.split(".", 1)[1] if k == "name" and v.count(".") >= 3 else _unprefixed(v)) for k, v in schema.items()
        }
    if isinstance(schema, list):
        return [_unprefixed(s) for s in schema]
    return schema


def ops(changes: list[tuple[Any, Any]]) -> list[str | None]:
    """The operations (None: a tombstone), sorted: a table's events spread over the topic's partitions."""
    return sorted((None if value is None else value["payload"]["op"] for _, value in changes), key=str)


def ops_of(letters: str) -> list[str | None]:
    return ops([(None, {"payload": {"op": op}}) for op in letters])


def by_key(changes: list[tuple[Any, Any]]) -> dict[str, list[Any]]:
    """Each row's events in order (one key, one partition)."""
    rows: dict[str, list[Any]] = {}
    for key, value in changes:
        rows.setdefault(json.dumps(key, sort_keys=True), []).append(value)
    return rows


def rows(changes: list[tuple[Any, Any]]) -> list[list[tuple[str, str]]]:
    """Each row's (op, item) events in order, rows sorted: what a table's change events say happened."""
    return sorted(
        [(v["payload"]["op"], v["payload"]["after"]["item"]) for v in row] for row in by_key(changes).values()
    )


def test_debezium_snapshot_then_streaming_equals_the_oracles(
    worker: Api, oracle: Api, postgres: PostgresServer, bootstrap_servers: str
) -> None:
    table = unique("customers").replace("-", "_")
    postgres.psql(
        "inventory",
        f"CREATE TABLE {table} (id serial PRIMARY KEY, name text NOT NULL, email text, score numeric(6,2));"
        f"ALTER TABLE {table} REPLICA IDENTITY FULL;"
        f"INSERT INTO {table} (name, email, score) VALUES ('ann', 'ann@x', 1.5), ('bob', NULL, 2.25), ('cy', 'c@x', 3);",
    )
    kafka = Kafka(bootstrap_servers)
    prefixes = {"ours": unique("dbz-ours"), "oracle": unique("dbz-oracle")}
    for side, api in (("ours", worker), ("oracle", oracle)):
        response = api.put(f"/connectors/{prefixes[side]}/config", debezium_config(postgres, table, prefixes[side]))
        assert response.status_code == 201, response.text
    topics = {side: f"{prefix}.public.{table}" for side, prefix in prefixes.items()}
    for side in topics:
        wait_for(
            lambda side=side: ops(events(kafka, topics[side], 3, 1)) == ["r"] * 3, 120, what=f"{side}: the snapshot"
        )

    postgres.psql(
        "inventory",
        f"INSERT INTO {table} (name, email, score) VALUES ('dee', 'd@x', 4.75);"
        f"UPDATE {table} SET email = 'bob@x' WHERE name = 'bob';"
        f"DELETE FROM {table} WHERE name = 'ann';",
    )
    streamed = sorted([*ops_of("rrrcud"), None], key=str)  # a delete is followed by its tombstone
    for side in topics:
        seen = lambda side=side: ops(events(kafka, topics[side], len(streamed), 1))
        wait_for(lambda seen=seen: seen() == streamed, 120, what=f"{side}: the changes {streamed}, not {seen()}")
    ours, theirs = events(kafka, topics["ours"], len(streamed)), events(kafka, topics["oracle"], len(streamed))
    assert by_key(ours) == by_key(theirs)
    for side, api in (("ours", worker), ("oracle", oracle)):
        assert api.delete(f"/connectors/{prefixes[side]}").status_code == 204


def orders(postgres: PostgresServer) -> str:
    """A new table with rows a and b, for a connector to snapshot."""
    table = unique("orders").replace("-", "_")
    postgres.psql(
        "inventory",
        f"CREATE TABLE {table} (id serial PRIMARY KEY, item text); INSERT INTO {table} (item) VALUES ('a'), ('b');",
    )
    return table


def snapshot_then_one_change_committed(
    kafka: Kafka, topic: str, postgres: PostgresServer, table: str, offsets: Callable[[], list[dict[str, Any]]]
) -> None:
    """The snapshot of a and b, then c inserted and streamed, and its streaming offset (lsn_proc) committed."""
    wait_for(lambda: ops(events(kafka, topic, 2, 1)) == ["r", "r"], 120, what="the snapshot")
    postgres.psql("inventory", f"INSERT INTO {table} (item) VALUES ('c');")
    wait_for(lambda: ops(events(kafka, topic, 3, 1)) == ops_of("rrc"), 120, what="the insert streamed")
    wait_for(lambda: any("lsn_proc" in o["offset"] for o in offsets()), 60, what="a streaming offset committed")


def change_while_down(postgres: PostgresServer, table: str) -> None:
    postgres.psql(
        "inventory", f"INSERT INTO {table} (item) VALUES ('d'); UPDATE {table} SET item = 'bb' WHERE item = 'b';"
    )


def assert_resumed_without_a_snapshot(kafka: Kafka, topic: str, postgres: PostgresServer, table: str) -> None:
    """The changes made while the task was down come, once; a change made after them comes right after
    them: nothing came twice (a new snapshot would have read every row again)."""
    expected = [[("c", "c")], [("c", "d")], [("r", "a")], [("r", "b"), ("u", "bb")]]
    wait_for(lambda: rows(events(kafka, topic, 5, 1)) == expected, 180, what=f"the changes made meanwhile: {expected}")
    postgres.psql("inventory", f"INSERT INTO {table} (item) VALUES ('e');")
    expected = sorted([*expected, [("c", "e")]])
    wait_for(lambda: rows(events(kafka, topic, 6, 1)) == expected, 60, what=f"e after them: {expected}")


def test_debezium_in_a_task_process_resumes_from_its_stored_lsn_after_kill_9_of_the_process_then_the_worker(
    java_plugin_path: Path, postgres: PostgresServer, bootstrap_servers: str, tmp_path: Path
) -> None:
    """Standalone, the task in a task process (`task.processes=1`) with a JVM host of its own. kill -9 of the
    task process: the task FAILED with the exit, its JVM host gone with it, the connector (in the worker)
    RUNNING; a restart resumes from the stored LSN. Then kill -9 of the worker: started again, it resumes
    likewise. Each change made while something was down comes once; nothing is snapshotted again."""
    table = orders(postgres)
    kafka = Kafka(bootstrap_servers)
    prefix = unique("dbz-kill")
    topic = f"{prefix}.public.{table}"
    props = {"plugin.path": str(java_plugin_path), "offset.flush.interval.ms": 500, "task.processes": 1}
    worker = WorkerProcess(tmp_path / "w", bootstrap_servers, props=props).start()
    try:
        api = Api(worker.url, timeout_s=120)  # a restart answers once a new task process runs the task
        wait_for(
            lambda: (
                api.put(f"/connectors/{prefix}/config", debezium_config(postgres, table, prefix)).status_code
                in (200, 201)
            ),
            180,
            what="the connector created (once the Java plugins are found)",
        )
        status = lambda: api.get(f"/connectors/{prefix}/status").json()
        offsets = lambda: api.get(f"/connectors/{prefix}/offsets").json()["offsets"]
        snapshot_then_one_change_committed(kafka, topic, postgres, table, offsets)
        after_c = offsets()

        assert worker.process is not None
        children = psutil.Process(worker.process.pid).children()
        (task_process,) = [p for p in children if "spawn_main" in " ".join(p.cmdline())]
        hosts = [p for p in task_process.children() if is_jvm_host(p)]
        assert hosts, "the task process has a JVM host of its own"
        task_process.kill()
        wait_for(lambda: status()["tasks"][0]["state"] == "FAILED", 60, what="the task FAILED")
        assert "exited (exit code -9)" in status()["tasks"][0]["trace"]
        assert status()["connector"]["state"] == "RUNNING"
        wait_for(lambda: all(map(exited, hosts)), 30, what="the task process's JVM host gone")
        postgres.psql("inventory", f"INSERT INTO {table} (item) VALUES ('d');")
        assert api.post(f"/connectors/{prefix}/restart?includeTasks=true").status_code == 202
        wait_for(lambda: ops(events(kafka, topic, 4, 1)) == ops_of("rrcc"), 120, what="d, after the restart")
        wait_for(lambda: offsets() not in ([], after_c), 60, what="d's offset committed")

        # the worker dies without a goodbye
        api.close()
        worker.kill()
        postgres.psql("inventory", f"UPDATE {table} SET item = 'bb' WHERE item = 'b';")
        worker = WorkerProcess(tmp_path / "w", bootstrap_servers, props=props, port=worker.port)
        worker.start(timeout_s=180)  # with a task process and its JVM host beside it: slower on a loaded machine
        api = Api(worker.url)
        assert_resumed_without_a_snapshot(kafka, topic, postgres, table)
        assert api.delete(f"/connectors/{prefix}").status_code == 204
        api.close()
    finally:
        worker.stop()


def test_patching_a_stopped_debeziums_offsets_to_an_earlier_lsn_streams_again_from_there(
    worker: Api, postgres: PostgresServer, bootstrap_servers: str
) -> None:
    """KIP-875 on a hosted Java connector: stopped, its offsets PATCHed back to an earlier change's LSN,
    resumed: the changes after that LSN come again (no new snapshot, nothing before it). PostgreSQL never
    sends again what a replication slot has confirmed, so the slot is left to the user (flush.lsn.source
    false), as anyone who moves a Debezium connector's offsets back does."""
    table = unique("items").replace("-", "_")
    postgres.psql(
        "inventory",
        f"CREATE TABLE {table} (id serial PRIMARY KEY, item text); INSERT INTO {table} (item) VALUES ('a');",
    )
    kafka = Kafka(bootstrap_servers)
    name = unique("dbz-patch")
    topic = f"{name}.public.{table}"
    offsets = lambda: worker.get(f"/connectors/{name}/offsets").json()["offsets"]
    config = {**debezium_config(postgres, table, name), "flush.lsn.source": "false"}
    assert worker.put(f"/connectors/{name}/config", config).status_code == 201
    wait_for(lambda: ops(events(kafka, topic, 1, 1)) == ["r"], 120, what="the snapshot")
    postgres.psql("inventory", f"INSERT INTO {table} (item) VALUES ('b');")
    wait_for(lambda: ops(events(kafka, topic, 2, 1)) == ops_of("rc"), 60, what="b streamed")
    (after_b,) = wait_for(
        lambda: [o for o in offsets() if "lsn_proc" in o["offset"]], 60, what="the offset of b committed"
    )
    postgres.psql("inventory", f"INSERT INTO {table} (item) VALUES ('c'); INSERT INTO {table} (item) VALUES ('d');")
    wait_for(lambda: ops(events(kafka, topic, 4, 1)) == ops_of("rccc"), 60, what="c and d streamed")
    wait_for(lambda: offsets() not in ([], [after_b]), 60, what="the offset of d committed")

    assert worker.put(f"/connectors/{name}/stop").status_code == 204
    wait_for(lambda: worker.get(f"/connectors/{name}/status").json()["connector"]["state"] == "STOPPED", 60)
    response = worker.patch(f"/connectors/{name}/offsets", {"offsets": [after_b]})
    assert response.status_code == 200, response.text
    assert offsets() == [after_b]
    assert worker.put(f"/connectors/{name}/resume").status_code == 202
    expected = [[("c", "b")], [("c", "c"), ("c", "c")], [("c", "d"), ("c", "d")], [("r", "a")]]
    wait_for(lambda: rows(events(kafka, topic, 6, 1)) == expected, 120, what=f"c and d again: {expected}")
    # a change made now comes once, after them: nothing else came again
    postgres.psql("inventory", f"INSERT INTO {table} (item) VALUES ('e');")
    expected = sorted([*expected, [("c", "e")]])
    wait_for(lambda: rows(events(kafka, topic, 7, 1)) == expected, 60, what=f"e after them: {expected}")
    assert worker.delete(f"/connectors/{name}").status_code == 204


def is_jvm_host(process: psutil.Process) -> bool:
    return "runtime.java.host" in " ".join(process.cmdline())


def exited(process: psutil.Process) -> bool:
    try:
        return process.status() == psutil.STATUS_ZOMBIE  # gone, but for its parent's wait
    except psutil.NoSuchProcess:
        return True


@pytest.mark.timeout(420)
def test_a_killed_workers_debezium_task_resumes_on_another_worker_from_its_stored_lsn(
    java_plugin_path: Path, postgres: PostgresServer, bootstrap_servers: str, tmp_path: Path
) -> None:
    """Three workers (distributed mode); the one running the Debezium task is killed with kill -9, its JVM
    host goes with it (leaving the replication slot free), and the task resumes on another worker from the
    LSN in the offsets topic."""
    table = orders(postgres)
    kafka = Kafka(bootstrap_servers)
    name = unique("dbz-moved")
    topic = f"{name}.public.{table}"
    with running_cluster(tmp_path, bootstrap_servers, 3, **{"plugin.path": str(java_plugin_path)}) as cluster:
        api = cluster.api(0)
        wait_for(
            lambda: (
                api.put(f"/connectors/{name}/config", json=debezium_config(postgres, table, name)).status_code == 201
            ),
            180,
            what="the connector created (once the Java plugins are found)",
        )
        status = cluster.wait_state(name, "RUNNING", 1, timeout_s=120)
        offsets = lambda: api.get(f"/connectors/{name}/offsets").json()["offsets"]
        snapshot_then_one_change_committed(kafka, topic, postgres, table, offsets)

        owner = status["tasks"][0]["worker_id"]
        killed = cluster.workers[cluster.index_of(owner)]
        assert killed.process is not None
        hosts = [p for p in psutil.Process(killed.process.pid).children() if is_jvm_host(p)]
        assert hosts, "the worker running the task has a JVM host"
        killed.kill()
        wait_for(lambda: all(map(exited, hosts)), 30, what="the killed worker's JVM host gone")
        change_while_down(postgres, table)
        survivor = next(i for i, w in enumerate(cluster.workers) if w is not killed)
        cluster.wait_state(name, "RUNNING", 1, via=survivor, timeout_s=120, exclude_worker=owner)
        assert_resumed_without_a_snapshot(kafka, topic, postgres, table)
        assert cluster.api(survivor).delete(f"/connectors/{name}").status_code == 204
