"""Three distributed workers on one broker: membership, leader routing and a balanced assignment
(contract 1.9, 2.1-2.3 distributed parts, section 4 B-D run across workers)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.scenarios.helpers import (
    POSSIBLE_ALTERED,
    SINK,
    SOURCE,
    Kafka,
    source_offsets,
    values_by_key,
)
from tests.support.broker import unique
from tests.support.cluster import Cluster, running_cluster
from tests.support.worker import wait_for

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def shared_group(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running_cluster(tmp_path_factory.mktemp("group"), bootstrap_servers, 3) as cluster:
        yield cluster


@pytest.fixture
def group(shared_group: Cluster) -> Iterator[Cluster]:
    """Three workers shared by the tests that leave every worker running (starting a group takes longer than
    most of those tests): each starts with no connectors, and what it created is deleted after it. Tests that
    stop, add or kill workers take a `cluster` of their own."""
    yield shared_group
    for name in shared_group.api(0).get("/connectors").json():
        shared_group.api(0).delete(f"/connectors/{name}")
    for i in range(len(shared_group.workers)):
        wait_for(lambda i=i: shared_group.api(i).get("/connectors").json() == [], 30, 0.1, f"worker {i} to list none")


def owners(status: dict) -> set[str]:
    return {status["connector"]["worker_id"], *(t["worker_id"] for t in status["tasks"])}


def test_create_via_idle_worker_spreads_work_and_every_worker_agrees(group: Cluster, bootstrap_servers: str) -> None:
    topic = Kafka(bootstrap_servers).create_topic(unique("dist-seq"), partitions=3)
    first = unique("first")
    created = group.api(0).post(
        "/connectors",
        json={
            "name": first,
            "config": {"connector.class": SOURCE, "topic": topic, "tasks.max": "1", "throughput": "20"},
        },
    )
    assert created.status_code == 201, created.text
    busy = owners(group.wait_state(first, "RUNNING", 1))
    idle = next(i for i in range(3) if group.worker_id(i) not in busy)

    # a worker that runs nothing takes the request (forwarding it to the leader when it is not the leader)
    name = unique("spread")
    response = group.api(idle).post(
        "/connectors",
        json={
            "name": name,
            "config": {"connector.class": SOURCE, "topic": topic, "tasks.max": "3", "throughput": "20"},
        },
    )
    assert response.status_code == 201, response.text
    assert response.json()["name"] == name
    assert response.headers["location"].endswith(f"/connectors/{name}")
    status = group.wait_state(name, "RUNNING", 3, via=idle)
    # three tasks over three workers: one each
    assert sorted(t["worker_id"] for t in status["tasks"]) == sorted(group.worker_id(i) for i in range(3)), status

    for i in range(3):  # every worker answers reads the same way
        assert sorted(group.api(i).get("/connectors").json()) == sorted([first, name])
        group.wait_state(name, "RUNNING", 3, via=i)
        tasks = group.api(i).get(f"/connectors/{name}/tasks").json()
        assert [t["id"] for t in tasks] == [{"connector": name, "task": j} for j in range(3)]

    # a name that exists is a 409 whichever worker is asked
    again = group.api((idle + 1) % 3).post(
        "/connectors", json={"name": name, "config": {"connector.class": SOURCE, "topic": topic, "tasks.max": "3"}}
    )
    assert again.status_code == 409, again.text
    assert again.json()["message"] == f"Connector {name} already exists"

    # a config change through another worker reaches the tasks: 3 -> 2 tasks
    update = group.api((idle + 2) % 3).put(
        f"/connectors/{name}/config",
        json={"connector.class": SOURCE, "topic": topic, "tasks.max": "2", "throughput": "20"},
    )
    assert update.status_code == 200, update.text
    group.wait_state(name, "RUNNING", 2, via=idle)

    # delete through a follower: gone everywhere
    assert group.api(2).delete(f"/connectors/{name}").status_code == 204
    for i in range(3):
        wait_for(
            lambda i=i: group.api(i).get(f"/connectors/{name}/status").status_code == 404,
            15,
            0.1,
            f"status of {name} gone on worker {i}",
        )
        assert name not in group.api(i).get("/connectors").json()

    # distributed validation: a sink's consumer group may not be the worker group
    worker_group = group.props["group.id"]
    clash_name = unique("clash")
    clash = {
        "connector.class": SINK,
        "name": clash_name,
        "topics": topic,
        "output.file": "/dev/null",
        "consumer.override.group.id": worker_group,
    }
    infos = group.api(1).put(f"/connector-plugins/{SINK}/config/validate", json=clash).json()
    assert infos["error_count"] == 1, infos
    rejected = group.api(1).post("/connectors", json={"name": clash_name, "config": clash})
    assert rejected.status_code == 400, rejected.text
    assert (
        f"Consumer group {worker_group} conflicts with Connect worker group {worker_group}"
        in rejected.json()["message"]
    )


def test_pause_resume_stop_offsets_and_restart_through_any_worker(group: Cluster, bootstrap_servers: str) -> None:
    topic = Kafka(bootstrap_servers).create_topic(unique("dist-life"), partitions=1)
    name = unique("life")
    config = {"connector.class": SOURCE, "topic": topic, "tasks.max": "2", "messages.per.task": "50"}
    assert group.api(1).post("/connectors", json={"name": name, "config": config}).status_code == 201
    group.wait_state(name, "RUNNING", 2, via=2)

    # pause and resume are written by whichever worker receives them
    assert group.api(2).put(f"/connectors/{name}/pause").status_code == 202
    group.wait_state(name, "PAUSED", 2, "PAUSED", via=0)
    assert group.api(1).put(f"/connectors/{name}/resume").status_code == 202
    group.wait_state(name, "RUNNING", 2, via=0)

    # offsets of a running connector can be read anywhere but not changed
    wait_for(
        lambda: (
            source_offsets(group.api(0).get(f"/connectors/{name}/offsets").json()["offsets"])
            == {f"{name}-0": 50, f"{name}-1": 50}
        ),
        30,
        0.2,
        "all 50 records of each task committed",
    )
    # KIP-558: the tasks' topic is tracked in the status topic, so every worker reports it
    for i in range(3):
        wait_for(
            lambda i=i: group.api(i).get(f"/connectors/{name}/topics").json() == {name: {"topics": [topic]}},
            15,
            0.2,
            f"active topics on worker {i}",
        )
    running = group.api(2).patch(
        f"/connectors/{name}/offsets",
        json={"offsets": [{"partition": {"task.id": f"{name}-0"}, "offset": {"saved": 10}}]},
    )
    assert running.status_code == 400, running.text
    assert "must be in the STOPPED state" in running.json()["message"]

    # stop from every worker (leader-only: followers forward); idempotent
    for i in (2, 0):
        assert group.api(i).put(f"/connectors/{name}/stop").status_code == 204
    for i in range(3):
        body = group.wait_state(name, "STOPPED", 0, via=i)
        assert body["tasks"] == []
        assert group.api(i).get(f"/connectors/{name}").json()["tasks"] == []

    altered = group.api(1).patch(
        f"/connectors/{name}/offsets",
        json={"offsets": [{"partition": {"task.id": f"{name}-0"}, "offset": {"saved": 40}}]},
    )
    assert altered.status_code == 200, altered.text
    assert altered.json()["message"] == POSSIBLE_ALTERED
    for i in range(3):
        assert source_offsets(group.api(i).get(f"/connectors/{name}/offsets").json()["offsets"])[f"{name}-0"] == 40

    # resume: tasks come back on the cluster and task 0 continues from the altered offset
    assert group.api(0).put(f"/connectors/{name}/resume").status_code == 202
    group.wait_state(name, "RUNNING", 2, via=1)
    wait_for(
        lambda: (
            source_offsets(group.api(2).get(f"/connectors/{name}/offsets").json()["offsets"])
            == {f"{name}-0": 50, f"{name}-1": 50}
        ),
        30,
        0.2,
        "task 0 back at 50",
    )
    # task 0 produced 0..49, then 40..49 again from the altered offset; task 1 nothing more
    by_key = values_by_key(Kafka(bootstrap_servers).read_all(topic))
    assert sorted(v["seqno"] for v in by_key[f"{name}-0"]) == sorted([*range(50), *range(40, 50)])
    assert sorted(v["seqno"] for v in by_key[f"{name}-1"]) == list(range(50))

    # restarts reach the owning workers wherever they are sent
    restart = group.api(1).post(f"/connectors/{name}/restart", params={"includeTasks": "true"})
    assert restart.status_code == 202, restart.text
    body = restart.json()
    assert body["connector"]["state"] == "RESTARTING"
    assert [t["state"] for t in body["tasks"]] == ["RESTARTING", "RESTARTING"]
    group.wait_state(name, "RUNNING", 2, via=0)
    status = group.status(name)
    owner_of_task1 = status["tasks"][1]["worker_id"]
    elsewhere = next(i for i in range(3) if group.worker_id(i) != owner_of_task1)
    assert group.api(elsewhere).post(f"/connectors/{name}/tasks/1/restart").status_code == 204
    assert group.api(elsewhere).post(f"/connectors/{name}/restart").status_code == 204
    group.wait_state(name, "RUNNING", 2, via=elsewhere)
    assert group.api(elsewhere).post(f"/connectors/{name}/tasks/7/restart").status_code == 404

    # unknown connectors are 404 on every route and worker
    missing = unique("missing")
    for i in range(3):
        assert group.api(i).put(f"/connectors/{missing}/pause").status_code == 404
        assert group.api(i).put(f"/connectors/{missing}/stop").status_code == 404
        assert group.api(i).delete(f"/connectors/{missing}").status_code == 404


def test_sink_offsets_reset_through_a_follower(group: Cluster, bootstrap_servers: str, tmp_path: Path) -> None:
    kafka = Kafka(bootstrap_servers)
    topic = kafka.create_topic(unique("dist-sink"), partitions=2)
    source, sink = unique("feed"), unique("sink")
    out = tmp_path / "sink.jsonl"
    assert (
        group.api(0)
        .post(
            "/connectors",
            json={
                "name": source,
                "config": {"connector.class": SOURCE, "topic": topic, "tasks.max": "1", "messages.per.task": "10"},
            },
        )
        .status_code
        == 201
    )
    assert (
        group.api(1)
        .post(
            "/connectors",
            json={
                "name": sink,
                "config": {"connector.class": SINK, "topics": topic, "tasks.max": "2", "output.file": str(out)},
            },
        )
        .status_code
        == 201
    )
    group.wait_state(sink, "RUNNING", 2)

    def committed() -> int:
        offsets = group.api(2).get(f"/connectors/{sink}/offsets").json()["offsets"]
        return sum(o["offset"]["kafka_offset"] for o in offsets)

    wait_for(lambda: committed() == 10, 60, 0.5, "sink offsets committed for all 10 records")
    assert group.api(2).put(f"/connectors/{sink}/stop").status_code == 204
    deadline = time.monotonic() + 30
    while True:  # the group's members may take a moment to leave (scenario 56)
        reset = group.api(2).delete(f"/connectors/{sink}/offsets")
        if reset.status_code != 500 or time.monotonic() > deadline:
            break
        time.sleep(0.5)  # the interval between retries of a reset the group still refuses
    assert reset.status_code == 200, reset.text
    assert group.api(0).get(f"/connectors/{sink}/offsets").json() == {"offsets": []}


def test_join_is_sticky_and_a_leaving_leader_hands_over(cluster: Cluster, bootstrap_servers: str) -> None:
    topic = Kafka(bootstrap_servers).create_topic(unique("dist-join"), partitions=1)
    name = unique("six")
    config = {"connector.class": SOURCE, "topic": topic, "tasks.max": "6", "throughput": "5"}
    assert cluster.api(0).post("/connectors", json={"name": name, "config": config}).status_code == 201
    before = {t["id"]: t["worker_id"] for t in cluster.wait_state(name, "RUNNING", 6)["tasks"]}
    assert sorted(Counter(before.values()).values()) == [2, 2, 2], before

    # a fourth worker joins: it gets a fair share, taken from the others; nothing else moves
    cluster.workers.append(cluster.new_worker(3))
    cluster.workers[3].start()
    newcomer = cluster.worker_id(3)

    def rebalanced() -> dict[int, str] | None:
        body = cluster.status(name, via=3)
        if body is None or len(body["tasks"]) != 6 or any(t["state"] != "RUNNING" for t in body["tasks"]):
            return None
        placed = {t["id"]: t["worker_id"] for t in body["tasks"]}
        return placed if newcomer in placed.values() and max(Counter(placed.values()).values()) == 2 else None

    after = wait_for(rebalanced, 30, 0.2, "six tasks over four workers")
    assert sorted(Counter(after.values()).values()) == [1, 1, 2, 2], after
    moved = [i for i in before if before[i] != after[i]]
    assert all(after[i] == newcomer for i in moved), (before, after)

    # the leader (the longest-running worker, worker 0) leaves gracefully: it sends a LeaveGroup, so the others
    # rebalance at once rather than after its session times out, its work moves and a follower becomes the leader
    cluster.workers[0].stop()
    leaver = cluster.worker_id(0)
    assert "LeaveGroup request for group" in cluster.workers[0].log_path.read_text(errors="replace"), (
        "the leaving worker's LeaveGroup was not answered (it left without one, or the broker refused it)"
    )
    cluster.wait_state(name, "RUNNING", 6, via=1, exclude_worker=leaver, timeout_s=30)

    # a follower still rejoining forwards to the leader that left (409, retriable): send the create once every
    # remaining worker has taken up the same new generation (the moved tasks may run before the last one has)
    def settled() -> bool:
        epochs = {cluster.rebalance_epoch(i) for i in (1, 2, 3)}
        return None not in epochs and len(epochs) == 1

    wait_for(settled, 30, 0.1, "the remaining workers to settle on one generation")
    other = unique("after-leader")
    response = cluster.api(2).post(
        "/connectors",
        json={
            "name": other,
            "config": {"connector.class": SOURCE, "topic": topic, "tasks.max": "1", "throughput": "5"},
        },
    )
    assert response.status_code == 201, response.text
    cluster.wait_state(other, "RUNNING", 1, via=3)


def test_full_cluster_restart_keeps_connectors_and_target_states(cluster: Cluster, bootstrap_servers: str) -> None:
    topic = Kafka(bootstrap_servers).create_topic(unique("dist-restart"), partitions=1)
    paused, running = unique("paused"), unique("running")
    for name in (paused, running):
        assert (
            cluster.api(0)
            .post(
                "/connectors",
                json={
                    "name": name,
                    "config": {"connector.class": SOURCE, "topic": topic, "tasks.max": "2", "throughput": "5"},
                },
            )
            .status_code
            == 201
        )
        cluster.wait_state(name, "RUNNING", 2)
    assert cluster.api(1).put(f"/connectors/{paused}/pause").status_code == 202
    cluster.wait_state(paused, "PAUSED", 2, "PAUSED")

    cluster.stop_one_by_one()  # every worker, gracefully (see there for Tansu)
    cluster.restart()
    for i in range(3):
        cluster.wait_state(paused, "PAUSED", 2, "PAUSED", via=i)
        cluster.wait_state(running, "RUNNING", 2, via=i)
    assert cluster.api(2).put(f"/connectors/{paused}/resume").status_code == 202
    cluster.wait_state(paused, "RUNNING", 2, via=0)


def test_rebalance_metrics_agree_across_the_group(group: Cluster) -> None:
    """connect-worker-rebalance-metrics at /metrics: every worker applied the same generation from the same
    leader and none is rebalancing once the group has settled."""
    from prometheus_client.parser import text_string_to_metric_families

    def rebalance_view(index: int) -> tuple[float, str, float, float] | None:
        values: dict[str, float] = {}
        leader = ""
        for family in text_string_to_metric_families(group.api(index).get("/metrics").text):
            for s in family.samples:
                if s.name.startswith("kafka_connect_worker_rebalance_"):
                    values[s.name] = s.value
                    leader = s.labels.get("leader_name", leader)
        if values.get("kafka_connect_worker_rebalance_rebalancing") != 0:
            return None
        return (
            values["kafka_connect_worker_rebalance_epoch"],
            leader,
            values["kafka_connect_worker_rebalance_completed_rebalances_total"],
            values["kafka_connect_worker_rebalance_time_since_last_rebalance_ms"],
        )

    def agreed() -> list[tuple[float, str, float, float]] | None:
        views = [rebalance_view(i) for i in range(len(group.workers))]
        if any(v is None for v in views) or len({(v[0], v[1]) for v in views}) != 1:  # type: ignore[index]
            return None
        return views  # type: ignore[return-value]

    name = unique("rebalanced")
    response = group.api(1).post(
        "/connectors",
        json={"name": name, "config": {"connector.class": SOURCE, "topic": unique("t"), "tasks.max": "2"}},
    )
    assert response.status_code == 201, response.text
    group.wait_state(name, "RUNNING", 2)  # placing its work took an assignment from the leader
    views = wait_for(agreed, 60, what="every worker on one generation")
    epoch, leader, _, _ = views[0]
    # a generation applied (-1: none); the workers start side by side, so the first one (0) may hold all three
    assert epoch >= 0 and leader in {group.worker_id(i) for i in range(len(group.workers))}
    assert all(completed >= 1 and since >= 0 for _, _, completed, since in views)
