"""A source connector's own offsets topic (`offsets.storage.topic`, KIP-618) on a three-worker cluster.

The reference (Worker.offsetStoreForRegularSourceTask, ConnectorOffsetBackingStore): tasks and the
offsets endpoints read offsets from the connector topic (the partition list is the union with the worker's
`offset.storage.topic`); every write goes to the connector topic and a copy of it to the worker topic,
tombstones to the worker topic first (KAFKA-15018). Records keep the worker topic's format: key `["<connector>",{partition}]`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer

from tests.integration.scenarios.helpers import (
    POSSIBLE_ALTERED,
    POSSIBLE_RESET,
    Api,
    Kafka,
    source_config,
    source_offsets,
    values_by_key,
)
from tests.support.broker import unique
from tests.support.cluster import Cluster, running_cluster
from tests.support.worker import wait_for

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cluster(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running_cluster(tmp_path_factory.mktemp("offsets-topic"), bootstrap_servers, 3) as group:
        yield group


@pytest.fixture(scope="module")
def api(cluster: Cluster) -> Iterator[Api]:
    client = Api(cluster.workers[1].url)  # a follower: offsets changes are forwarded to the leader
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(autouse=True)
def _logs_on_failure(request: pytest.FixtureRequest, cluster: Cluster) -> Iterator[None]:
    yield
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        print(cluster.logs())


def offset_key(name: str, task: str) -> bytes:
    return json.dumps([name, {"task.id": task}], separators=(",", ":")).encode()


def stored(kafka: Kafka, topic: str, name: str) -> dict[str, Any]:
    """The latest value of each of `name`'s offset records in `topic` (None: a tombstone), checking the key bytes."""
    latest: dict[str, Any] = {}
    for _, _, key, value in kafka.read_all(topic):
        try:
            decoded = json.loads(key) if key else None
        except ValueError:
            continue  # read_all's own markers
        if not (isinstance(decoded, list) and len(decoded) == 2 and decoded[0] == name):
            continue
        task = decoded[1]["task.id"]
        assert key == offset_key(name, task), key
        latest[task] = json.loads(value) if value is not None else None
    return latest


def write_offset(kafka: Kafka, topic: str, name: str, task: str, offset: dict[str, Any]) -> None:
    """Write an offset record as a Java worker would (murmur2: the partition the workers use for that key)."""
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers, "partitioner": "murmur2_random"})
    producer.produce(topic, key=offset_key(name, task), value=json.dumps(offset, separators=(",", ":")).encode())
    assert producer.flush(30) == 0


def seqnos(kafka: Kafka, topic: str, tasks: list[str], count: int) -> dict[str, list[int]]:
    by_key = wait_for(
        lambda: (lambda g: g if all(len(g.get(t, [])) == count for t in tasks) else None)(
            values_by_key(kafka.read_all(topic))
        ),
        30,
        interval_s=0.5,
        what=f"{count} records per task",
    )
    return {t: [v["seqno"] for v in by_key[t]] for t in tasks}


def test_offsets_live_in_the_connector_topic_with_a_copy_in_the_worker_topic(
    cluster: Cluster, api: Api, bootstrap_servers: str
) -> None:
    kafka = Kafka(bootstrap_servers)
    worker_topic = cluster.props["offset.storage.topic"]
    own_topic = unique("own-offsets")  # created by the workers
    data = kafka.create_topic(unique("src-topic"))
    name = unique("own-offsets-src")
    tasks = [f"{name}-0", f"{name}-1"]
    api.create(name, source_config(data, tasks=2, messages_per_task=10, **{"offsets.storage.topic": own_topic}))

    # 53 with a custom offsets topic
    api.wait_offsets(name, lambda o: source_offsets(o) == {t: 10 for t in tasks}, what="saved 10")
    assert stored(kafka, own_topic, name) == {t: {"saved": 10} for t in tasks}
    wait_for(
        lambda: stored(kafka, worker_topic, name) == {t: {"saved": 10} for t in tasks},
        20,
        0.5,
        "the copy in the worker's offsets topic",
    )

    # 60 with a custom offsets topic: both topics get the altered offsets
    api.stop(name)
    body = {"offsets": [{"partition": {"task.id": t}, "offset": {"saved": 5}} for t in tasks]}
    response = api.patch(f"/connectors/{name}/offsets", body)
    assert response.status_code == 200, response.text
    assert response.json() == {"message": POSSIBLE_ALTERED}
    assert source_offsets(api.offsets(name)) == {t: 5 for t in tasks}
    assert stored(kafka, own_topic, name) == {t: {"saved": 5} for t in tasks}
    assert stored(kafka, worker_topic, name) == {t: {"saved": 5} for t in tasks}

    # offsets come from the connector topic: a different worker-topic value is not used
    write_offset(kafka, worker_topic, name, tasks[0], {"saved": 2})
    assert source_offsets(api.offsets(name)) == {t: 5 for t in tasks}
    api.resume(name)
    api.wait_offsets(name, lambda o: source_offsets(o) == {t: 10 for t in tasks}, what="saved back to 10")
    assert seqnos(kafka, data, tasks, 15) == {t: list(range(10)) + list(range(5, 10)) for t in tasks}
    wait_for(
        lambda: stored(kafka, worker_topic, name) == {t: {"saved": 10} for t in tasks},
        20,
        0.5,
        "the worker topic's copy back at 10",
    )

    # 62 with a custom offsets topic: tombstones in both topics, then the tasks start over
    api.stop(name)
    for _ in range(2):
        response = api.delete(f"/connectors/{name}/offsets")
        assert response.status_code == 200, response.text
        assert response.json() == {"message": POSSIBLE_RESET}
        assert api.offsets(name) == []
    assert stored(kafka, own_topic, name) == {t: None for t in tasks}
    assert stored(kafka, worker_topic, name) == {t: None for t in tasks}
    api.resume(name)
    api.wait_offsets(name, lambda o: source_offsets(o) == {t: 10 for t in tasks}, what="saved 10 again")
    assert seqnos(kafka, data, tasks, 25) == {t: list(range(10)) + list(range(5, 10)) + list(range(10)) for t in tasks}
    assert stored(kafka, own_topic, name) == {t: {"saved": 10} for t in tasks}


def test_offsets_only_in_the_worker_topic_are_not_used(cluster: Cluster, api: Api, bootstrap_servers: str) -> None:
    # `offsets.storage.topic` added to a connector that committed offsets in the worker topic: as Kafka Connect
    # 3.9 (checked against it), the partition is listed with no offset and the task starts it over
    kafka = Kafka(bootstrap_servers)
    worker_topic = cluster.props["offset.storage.topic"]
    own_topic = unique("own-offsets")
    data = kafka.create_topic(unique("src-topic"))
    name = unique("moved-src")
    task = f"{name}-0"
    write_offset(kafka, worker_topic, name, task, {"saved": 3})
    api.create(
        name,
        source_config(data, tasks=1, messages_per_task=10, **{"offsets.storage.topic": own_topic}),
        initial_state="STOPPED",
    )
    assert api.offsets(name) == [{"partition": {"task.id": task}, "offset": None}]
    api.resume(name)
    api.wait_offsets(name, lambda o: source_offsets(o) == {task: 10}, what="saved 10")
    assert seqnos(kafka, data, [task], 10) == {task: list(range(10))}
    assert stored(kafka, own_topic, name) == {task: {"saved": 10}}


def test_the_connector_topic_lives_on_the_cluster_the_connector_writes_to(
    cluster: Cluster, api: Api, bootstrap_servers: str, fresh_broker
) -> None:
    # 53/60 "other cluster": producer, consumer and admin overrides point at another Kafka cluster; its
    # offsets topic is created there, and the worker's own offsets topic (on the worker's cluster) gets the copy
    other = Kafka(fresh_broker.bootstrap_servers)
    kafka = Kafka(bootstrap_servers)
    worker_topic = cluster.props["offset.storage.topic"]
    own_topic = unique("own-offsets")
    data = other.create_topic(unique("src-topic"))
    name = unique("other-cluster-src")
    task = f"{name}-0"
    overrides = {
        f"{client}.override.bootstrap.servers": other.bootstrap_servers for client in ("producer", "consumer", "admin")
    }
    api.create(
        name, source_config(data, tasks=1, messages_per_task=10, **{"offsets.storage.topic": own_topic, **overrides})
    )
    api.wait_offsets(name, lambda o: source_offsets(o) == {task: 10}, what="saved 10")
    assert stored(other, own_topic, name) == {task: {"saved": 10}}
    assert own_topic not in kafka.admin.list_topics(timeout=10).topics
    wait_for(
        lambda: stored(kafka, worker_topic, name) == {task: {"saved": 10}}, 20, 0.5, "the copy on the worker's cluster"
    )

    api.stop(name)
    response = api.patch(
        f"/connectors/{name}/offsets", {"offsets": [{"partition": {"task.id": task}, "offset": {"saved": 4}}]}
    )
    assert response.status_code == 200, response.text
    assert stored(other, own_topic, name) == {task: {"saved": 4}}
    api.resume(name)
    api.wait_offsets(name, lambda o: source_offsets(o) == {task: 10}, what="saved back to 10")
    assert seqnos(other, data, [task], 16) == {task: list(range(10)) + list(range(4, 10))}
