"""KIP-915 in the distributed worker: internal topics seeded with records from an imagined future version
(unknown record types, extra fields, a `state.v2` this version does not know, values it cannot parse)
load without error. What this version understands is applied, the rest is skipped with a log line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.scenarios.helpers import SOURCE, Kafka, values_by_key
from tests.support.broker import unique
from tests.support.cluster import Cluster
from tests.support.worker import wait_for

pytestmark = pytest.mark.integration

SOURCE_TASK = "runtime.connectors.testing.SequenceSourceTask"


def seed(bootstrap_servers: str, topic: str, partitions: int, records: list[tuple[bytes, bytes | None]]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    admin.create_topics([NewTopic(topic, partitions, 1, config={"cleanup.policy": "compact"})])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap_servers})
    for key, value in records:
        producer.produce(topic, key=key, value=value, partition=0)
    assert producer.flush(30) == 0


def js(value: object) -> bytes:
    # compact, as Kafka's JsonConverter writes: offsets are looked up by their key's exact bytes
    return json.dumps(value, separators=(",", ":")).encode()


def test_a_worker_loads_topics_written_by_a_future_version(bootstrap_servers: str, tmp_path: Path) -> None:
    cluster = Cluster(tmp_path, bootstrap_servers, 1)
    props = cluster.props
    topic = Kafka(bootstrap_servers).create_topic(unique("future-data"))
    paused, stopped = unique("paused"), unique("stopped")
    config = {"connector.class": SOURCE, "topic": topic, "tasks.max": "1", "throughput": "50"}
    seed(
        bootstrap_servers,
        props["config.storage.topic"],
        1,
        [
            (b"quota-limits-" + paused.encode(), js({"records-per-second": 5})),  # a record type from the future
            (f"connector-{paused}".encode(), js({"properties": {**config, "name": paused}, "owner": "team-a"})),
            (f"target-state-{paused}".encode(), js({"state": "PAUSED", "state.v2": "HIBERNATING", "since": 1})),
            (
                f"task-{paused}-0".encode(),
                js(
                    {
                        "properties": {**config, "name": paused, "task.index": "0", "task.class": SOURCE_TASK},
                        "checksum": "x",
                    }
                ),
            ),
            (f"commit-{paused}".encode(), js({"tasks": 1, "epoch": 7})),
            (f"connector-{stopped}".encode(), js({"properties": {**config, "name": stopped}})),
            (f"target-state-{stopped}".encode(), js({"state": "PAUSED", "state.v2": "STOPPED", "by": "airflow"})),
            (b"connector-garbage", b"\x00not json"),  # unparseable value
            (b"target-state-" + stopped.encode() + b"-typo", js({"state": 5})),  # wrong field type
            (
                b"session-key",
                js({"key": "c2VjcmV0", "algorithm": "HmacSHA512", "creation-timestamp": 1, "rotation": "x"}),
            ),
        ],
    )
    seed(
        bootstrap_servers,
        props["offset.storage.topic"],
        3,
        [
            (js([paused, {"task.id": f"{paused}-0"}]), js({"saved": 3, "source-version": "v9"})),
            (js({"connector": paused, "partition": {"task.id": f"{paused}-0"}}), js({"saved": 99})),  # a new key shape
            (js([paused, {"task.id": f"{paused}-0"}, "extra"]), js({"saved": 98})),
        ],
    )
    seed(
        bootstrap_servers,
        props["status.storage.topic"],
        3,
        [
            (
                f"status-connector-{paused}".encode(),
                js({"state": "RUNNING", "trace": None, "worker_id": "gone:1", "generation": 1, "uptime": 5}),
            ),
            (b"status-shard-7", js({"state": "RUNNING"})),
            (f"status-task-{paused}-0".encode(), b"{broken"),
        ],
    )

    try:
        cluster.start()
        api = cluster.api(0)
        assert sorted(api.get("/connectors").json()) == sorted([paused, stopped])
        # the unknown state.v2 falls back to `state`; a known one wins over it
        cluster.wait_state(paused, "PAUSED", 1, "PAUSED")
        cluster.wait_state(stopped, "STOPPED", 0)
        assert api.get(f"/connectors/{paused}/config").json() == {**config, "name": paused}
        assert api.get(f"/connectors/{stopped}/tasks").json() == []
        assert api.get(f"/connectors/{paused}/offsets").json() == {
            "offsets": [{"partition": {"task.id": f"{paused}-0"}, "offset": {"saved": 3, "source-version": "v9"}}]
        }
        logs = cluster.workers[0].log_tail(400)
        assert f"Discarding config update record with invalid key: quota-limits-{paused}" in logs

        # and the connector carries on from the offset it found
        assert api.put(f"/connectors/{paused}/resume").status_code == 202
        cluster.wait_state(paused, "RUNNING", 1)
        seqnos = wait_for(
            lambda: [
                v["seqno"] for v in values_by_key(Kafka(bootstrap_servers).read_all(topic)).get(f"{paused}-0", [])
            ],
            30,
            0.5,
            "records from the resumed task",
        )
        assert seqnos[0] == 3, seqnos[:5]
    finally:
        cluster.stop()
