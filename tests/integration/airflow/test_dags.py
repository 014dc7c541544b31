"""The DAG files, run with Airflow's dag.test() against real Connect workers (integration)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.broker import unique
from tests.support.process import run_side_by_side
from tests.support.worker import WorkerProcess, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.airflow, pytest.mark.timeout(600)]

SOURCE_CLASS = "SequenceSourceConnector"
SINK_CLASS = "RecordingSinkConnector"
# One client for the helpers below, which waits poll several times a second: each httpx.get makes a client,
# and loading its TLS trust store costs about 0.1 s of CPU
HTTP = httpx.Client(timeout=30)


def create(worker: WorkerProcess, name: str, config: dict[str, Any]) -> None:
    response = HTTP.post(worker.url + "/connectors", json={"name": name, "config": config})
    assert response.status_code == 201, response.text


def status(worker: WorkerProcess, name: str) -> dict[str, Any]:
    response = HTTP.get(f"{worker.url}/connectors/{name}/status")
    response.raise_for_status()
    return response.json()


def states(worker: WorkerProcess, name: str) -> tuple[str, list[str]]:
    body = status(worker, name)
    return body["connector"]["state"], [t["state"] for t in body["tasks"]]


def offsets(worker: WorkerProcess, name: str) -> list[dict[str, Any]]:
    return HTTP.get(f"{worker.url}/connectors/{name}/offsets").json()["offsets"]


def saved_by_task(worker: WorkerProcess, name: str) -> dict[str, int]:
    return {o["partition"]["task.id"]: o["offset"]["saved"] for o in offsets(worker, name)}


def recorded(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def workers(tmp_path, bootstrap_servers):
    """`workers(*labels)`: a started worker per label, started side by side."""
    started: list[WorkerProcess] = []

    def start(*labels: str) -> list[WorkerProcess]:
        new = [WorkerProcess(tmp_path / label, bootstrap_servers) for label in labels]
        started.extend(new)
        run_side_by_side([worker.start for worker in new])
        return new

    yield start
    for worker in started:
        worker.stop()


def test_migration_dag_moves_source_and_sink_with_offsets(airflow_home, workers, tmp_path):
    old, new = workers("old", "new")
    topic, source, sink = unique("mig"), unique("seq"), unique("rec")
    sink_target = sink + "-moved"  # a new consumer group: only the migrated offsets can place it
    output = tmp_path / "recorded.jsonl"
    create(old, source, {"connector.class": SOURCE_CLASS, "topic": topic, "tasks.max": "2", "throughput": "40"})
    create(old, sink, {"connector.class": SINK_CLASS, "topics": topic, "output.file": str(output)})
    wait_for(lambda: len(recorded(output)) >= 40, timeout_s=90, what="the sink to record on the old worker")
    connections = {"kafka_connect_source": old.url, "kafka_connect_target": new.url}

    result = airflow_home.run_dag("connector_migration.py", {"connector": source}, connections)
    assert result["state"] == "success", result["log"][-5000:]
    assert result["tasks"] == {"migrate": "success", "wait_running_on_target": "success", "report": "success"}
    assert source not in httpx.get(old.url + "/connectors").json()
    moved_from = {o["partition"]["task.id"]: o["offset"]["saved"] for o in result["xcom"]["report"]["offsets"]}
    assert set(moved_from) == {f"{source}-0", f"{source}-1"} and min(moved_from.values()) > 0
    assert result["xcom"]["report"]["state"] == "RUNNING"

    sink_result = airflow_home.run_dag(
        "connector_migration.py", {"connector": sink, "target_connector": sink_target, "on_source": "stop"}, connections
    )
    assert sink_result["state"] == "success", sink_result["log"][-5000:]
    assert states(old, sink)[0] == "STOPPED"
    assert states(new, sink_target) == ("RUNNING", ["RUNNING"])

    # Let both keep running on the new worker, then stop the source and let the sink drain.
    wait_for(
        lambda: min(saved_by_task(new, source).values()) >= max(moved_from.values()) + 40,
        timeout_s=60,
        what="the source to continue on the new worker",
    )
    assert httpx.put(f"{new.url}/connectors/{source}/stop", timeout=30).status_code == 204
    wait_for(lambda: states(new, source) == ("STOPPED", []), what="the source to stop")
    final = saved_by_task(new, source)

    def drained() -> bool:
        seen = {(r["value"]["task"], r["value"]["seqno"]) for r in recorded(output)}
        return all((int(task.rsplit("-", 1)[1]), saved - 1) in seen for task, saved in final.items())

    wait_for(drained, timeout_s=90, what="the moved sink to record every produced record")
    records = recorded(output)

    # Source: every task's sequence is 0..N-1 exactly once, in order: no gap, no repeat across the move.
    per_task: dict[int, list[int]] = defaultdict(list)
    for record in sorted(records, key=lambda r: (r["partition"], r["offset"])):
        per_task[record["value"]["task"]].append(record["value"]["seqno"])
    for task_id, saved in final.items():
        index = int(task_id.rsplit("-", 1)[1])
        assert sorted(per_task[index]) == list(range(saved)), f"task {index}: gap or repeat"
        assert saved > moved_from[task_id]  # it really continued on the new worker
    # Sink: each topic offset recorded exactly once, contiguous from 0 (the new group started at the old one's
    # committed offsets, not at the beginning or the end of the topic).
    by_partition: dict[int, list[int]] = defaultdict(list)
    for record in records:
        by_partition[record["partition"]].append(record["offset"])
    for partition, seen in by_partition.items():
        assert sorted(seen) == list(range(len(seen))), f"partition {partition}: gap or repeat"
    expected = {partition: len(seen) for partition, seen in by_partition.items()}
    wait_for(
        lambda: (
            {o["partition"]["kafka_partition"]: o["offset"]["kafka_offset"] for o in offsets(new, sink_target)}
            == expected
        ),
        what="the moved sink to commit its offsets",
    )


def test_restart_dag_heals_failed_tasks_and_leaves_healthy_alone(airflow_home, workers):
    (worker,) = workers("restart")
    topic = unique("rst")
    flaky, healthy, broken = unique("flaky"), unique("healthy"), unique("broken")
    # Each flaky task instance fails after 10 records; a restarted one continues at 10 and stops at 15.
    create(
        worker,
        flaky,
        {
            "connector.class": SOURCE_CLASS,
            "topic": topic,
            "tasks.max": "2",
            "messages.per.task": "15",
            "task.fail.after.records": "10",
        },
    )
    create(
        worker, healthy, {"connector.class": SOURCE_CLASS, "topic": topic, "tasks.max": "1", "messages.per.task": "5"}
    )
    create(worker, broken, {"connector.class": SOURCE_CLASS, "topic": topic, "tasks.max": "2", "task.start.fail": "0"})
    wait_for(
        lambda: states(worker, flaky) == ("RUNNING", ["FAILED", "FAILED"]), timeout_s=60, what="flaky tasks to fail"
    )
    wait_for(lambda: states(worker, broken) == ("RUNNING", ["FAILED", "RUNNING"]), what="broken task 0 to fail")
    wait_for(lambda: saved_by_task(worker, healthy) == {f"{healthy}-0": 5}, what="healthy connector to finish")
    wait_for(lambda: saved_by_task(worker, flaky) == {f"{flaky}-0": 10, f"{flaky}-1": 10}, what="flaky offsets")

    result = airflow_home.run_dag(
        "restart_failed_connectors.py",
        {"fail_if_unhealed": False, "wait_timeout_s": 30},
        {"kafka_connect_default": worker.url},
    )
    assert result["state"] == "success", result["log"][-5000:]
    found = {entry["name"]: entry for entry in result["xcom"]["find_failed"]}
    assert set(found) == {flaky, broken}
    assert found[flaky]["failed_tasks"] == [0, 1] and found[broken]["failed_tasks"] == [0]
    restarted = {entry["name"]: entry["restarted"] for entry in result["xcom"]["restart_failed"]}
    assert restarted == {flaky: ["task-0", "task-1"], broken: ["task-0"]}
    report = result["xcom"]["report"]
    assert report["healed"] == [flaky] and set(report["still_failed"]) == {broken}
    assert "task.start.fail" in report["still_failed"][broken] or "FAILED" in report["still_failed"][broken]

    assert states(worker, flaky) == ("RUNNING", ["RUNNING", "RUNNING"])
    assert states(worker, healthy) == ("RUNNING", ["RUNNING"])
    # restarted tasks continued from their committed offsets rather than starting over
    wait_for(lambda: saved_by_task(worker, flaky) == {f"{flaky}-0": 15, f"{flaky}-1": 15}, what="flaky to finish")
    assert saved_by_task(worker, healthy) == {f"{healthy}-0": 5}

    # With the default fail_if_unhealed the still-broken connector fails the run.
    strict = airflow_home.run_dag(
        "restart_failed_connectors.py",
        {"connectors": [broken], "wait_timeout_s": 10},
        {"kafka_connect_default": worker.url},
    )
    assert strict["state"] == "failed" and strict["tasks"]["report"] == "failed"
