"""Section 4 scenarios that only a cluster has: a fresh cluster (2), a restart sent to a worker running
none of the connector (50, with the failed task in its owner's metrics), and target states surviving a
restart of every worker (37)."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.scenarios.helpers import Kafka, source_config, values_by_key
from tests.support.broker import unique
from tests.support.cluster import Cluster
from tests.support.worker import wait_for

pytestmark = pytest.mark.integration

START_BLOCK_MS = 1500
FAIL_AFTER = 5


def test_fresh_cluster_lists_no_connectors_on_any_worker(cluster: Cluster) -> None:
    # 1, 2 on every worker of a new group (this module's cluster has not been used yet)
    for i in range(len(cluster.workers)):
        assert cluster.api(i).get("/connectors").json() == []
        root = cluster.api(i).get("/").json()
        assert {"version", "commit", "kafka_cluster_id"} <= set(root) and root["kafka_cluster_id"]


def test_a_cluster_scoped_log_level_reaches_every_worker(cluster: Cluster) -> None:
    # KIP-976: scope=cluster answers 204 and writes a logger-cluster- record to the config topic, which
    # every worker, the one asked included, applies when it reads it
    namespace = f"org.example.{unique('kip976').replace('-', '_')}"
    response = cluster.api(1).put(f"/admin/loggers/{namespace}", json={"level": "debug"}, params={"scope": "cluster"})
    assert response.status_code == 204, response.text
    for i in range(len(cluster.workers)):
        wait_for(
            lambda i=i: cluster.api(i).get(f"/admin/loggers/{namespace}").json().get("level") == "DEBUG",
            30,
            what=f"worker {i} applying the cluster's level",
        )
        assert isinstance(cluster.api(i).get("/admin/loggers").json()[namespace]["last_modified"], int)
    # a bad level is refused before anything is written
    response = cluster.api(2).put(f"/admin/loggers/{namespace}", json={"level": "LOUD"}, params={"scope": "cluster"})
    assert response.status_code == 404 and response.json()["message"] == "invalid log level 'LOUD'."


def test_restart_through_a_worker_running_none_of_the_connector(cluster: Cluster, kafka: Kafka, name: str) -> None:
    # 50: the connector's start() blocks START_BLOCK_MS and its task fails after FAIL_AFTER records, so a
    # connector restart shows as a start done before the plain (synchronous) request answers, or as RESTARTING,
    # and every task start as FAIL_AFTER more records with the task's key
    topic = kafka.create_topic(unique("restart-50"))
    config = source_config(
        topic, tasks=1, **{"task.fail.after.records": FAIL_AFTER, "connector.start.block.ms": START_BLOCK_MS}
    )
    assert cluster.api(1).post("/connectors", json={"name": name, "config": config}).status_code == 201
    status = cluster.wait_state(name, "RUNNING", 1, "FAILED", timeout_s=60)
    owners = {cluster.index_of(status["connector"]["worker_id"]), cluster.index_of(status["tasks"][0]["worker_id"])}
    # the failed task's worker says so in its metrics, as Strimzi's failure alerts read them
    task_owner = cluster.index_of(status["tasks"][0]["worker_id"])
    wait_for(
        lambda: task_status_metrics(cluster, task_owner, name) == {("0", "failed"): 1.0},
        20,
        0.2,
        "the failed task in the owner's /metrics",
    )
    idle = next(i for i in range(len(cluster.workers)) if i not in owners)
    starts = lambda: len(values_by_key(kafka.read_all(topic)).get(f"{name}-0", [])) // FAIL_AFTER
    wait_for(lambda: starts() == 1, 20, 0.5, "the task's first FAIL_AFTER records")

    connector_log = cluster.workers[cluster.index_of(status["connector"]["worker_id"])].log_path
    creations = lambda: connector_log.read_text(errors="replace").count(f"Creating connector {name} ")
    created = creations()
    response = cluster.api(idle).post(f"/connectors/{name}/restart")
    assert response.status_code == 204, response.text
    # a plain restart answers once the connector has started again (its start() blocks START_BLOCK_MS)
    assert creations() == created + 1, "the connector was not restarted by the request"
    status = cluster.wait_state(name, "RUNNING", 1, "FAILED", via=idle)
    assert starts() == 1, "a plain restart restarted the task"

    response = cluster.api(idle).post(f"/connectors/{name}/restart", params={"includeTasks": "true"})
    assert response.status_code == 202, response.text
    assert response.json()["connector"]["state"] == "RESTARTING"
    assert [t["state"] for t in response.json()["tasks"]] == ["RESTARTING"]
    wait_for(
        lambda: cluster.status(name, idle)["connector"]["state"] == "RESTARTING",
        20,
        0.05,
        "the owner to report the connector RESTARTING",
    )
    wait_for(lambda: starts() == 2, 30, 0.5, "the task to start a second time")
    cluster.wait_state(name, "RUNNING", 1, "FAILED", via=idle)


def test_target_states_survive_restarting_every_worker(bootstrap_servers: str, tmp_path: Path) -> None:
    # 37 (and the same for STOPPED): state lives in the config topic, not in any worker
    group = Cluster(tmp_path, bootstrap_servers, 3).start()
    try:
        topic = unique("restart-all")
        states = {"paused": "PAUSED", "stopped": "STOPPED", "running": "RUNNING"}
        for prefix, initial in states.items():
            body = {
                "name": f"{prefix}-{topic}",
                "config": source_config(topic, tasks=2, throughput=20),
                "initial_state": initial,
            }
            assert group.api(2).post("/connectors", json=body).status_code == 201
        group.api(1).put(f"/connectors/running-{topic}/pause")  # paused after running, as in the system test
        group.wait_state(f"running-{topic}", "PAUSED", 2, "PAUSED")
        group.stop_one_by_one()  # every worker, gracefully (see there for Tansu)
        group.restart()
        for via in range(3):
            group.wait_state(f"paused-{topic}", "PAUSED", 0, via=via)
            group.wait_state(f"stopped-{topic}", "STOPPED", 0, via=via)
            group.wait_state(f"running-{topic}", "PAUSED", 2, "PAUSED", via=via)
        resumed = group.api(0).put(f"/connectors/running-{topic}/resume")
        assert resumed.status_code == 202
        group.wait_state(f"running-{topic}", "RUNNING", 2)
    finally:
        group.stop()


def task_status_metrics(cluster: Cluster, index: int, name: str) -> dict[tuple[str, str], float]:
    """`kafka_connect_connector_task_status` of connector `name` on worker `index`: (task, status) -> value."""
    text = cluster.api(index).get("/metrics").text
    return {
        (sample.labels["task"], sample.labels["status"]): sample.value
        for family in text_string_to_metric_families(text)
        if family.name == "kafka_connect_connector_task_status"
        for sample in family.samples
        if sample.labels.get("connector") == name
    }
