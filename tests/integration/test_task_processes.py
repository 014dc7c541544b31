"""Tasks in child processes (`task.processes`): the same REST API, statuses, offsets and metrics as task
threads, with the task work done by processes of their own (so a worker can use more than one core)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import psutil
import pytest

from tests.integration.errors.metrics_reader import sample
from tests.integration.scenarios.helpers import Api, read_jsonl, sink_config, source_config
from tests.support.broker import unique
from tests.support.worker import WorkerProcess, wait_for

pytestmark = pytest.mark.integration

RECORDS = 20_000  # per source task


def task_states(api: Api, name: str) -> list[str]:
    response = api.get(f"/connectors/{name}/status")
    return [t["state"] for t in response.json().get("tasks", [])] if response.status_code == 200 else []


def task_processes(worker: WorkerProcess) -> list[psutil.Process]:
    """The worker's task processes (multiprocessing's spawned children, not its resource tracker)."""
    assert worker.process is not None
    return [
        p
        for p in psutil.Process(worker.process.pid).children()
        if p.is_running() and "spawn_main" in " ".join(p.cmdline())
    ]


def test_tasks_run_in_task_processes_with_the_same_statuses_offsets_and_metrics(
    bootstrap_servers: str, tmp_path: Path
) -> None:
    with WorkerProcess(tmp_path / "w", bootstrap_servers, props={"task.processes": 2}) as worker:
        api = Api(worker.url)
        try:
            topic = unique("procs")
            source, sink = unique("src"), unique("snk")
            out = tmp_path / "out.jsonl"
            assert (
                api.post(
                    "/connectors",
                    {"name": source, "config": source_config(topic, tasks=2, **{"messages.per.task": RECORDS})},
                ).status_code
                == 201
            )
            assert (
                api.post("/connectors", {"name": sink, "config": sink_config(topic, out, tasks=2)}).status_code == 201
            )
            wait_for(lambda: task_states(api, source) == ["RUNNING"] * 2, 60, what="both source tasks RUNNING")
            wait_for(lambda: len(read_jsonl(out)) >= 2 * RECORDS, 120, what="every record in the sink")
            seqnos = sorted((r["key"], r["value"]["seqno"]) for r in read_jsonl(out))
            assert seqnos == sorted((f"{source}-{t}", n) for t in range(2) for n in range(RECORDS))

            # the work ran in two task processes, not in the worker process
            children = task_processes(worker)
            assert len(children) == 2, children
            assert all(c.cpu_times().user > 0.2 for c in children), [c.cpu_times() for c in children]

            # metrics come back from the task processes
            wait_for(
                lambda: (
                    (
                        sample(api, "kafka_connect_source_task_source_record_write_total", connector=source, task="0")
                        or 0
                    )
                    >= RECORDS
                ),
                30,
                what="source write totals",
            )
            wait_for(
                lambda: (
                    (sample(api, "kafka_connect_sink_task_sink_record_read_total", connector=sink, task="1") or 0) > 0
                ),
                30,
                what="sink read totals",
            )

            # pause and resume reach the tasks
            assert api.put(f"/connectors/{source}/pause").status_code == 202
            wait_for(lambda: task_states(api, source) == ["PAUSED"] * 2, 30, what="source tasks PAUSED")
            assert api.put(f"/connectors/{source}/resume").status_code == 202
            wait_for(lambda: task_states(api, source) == ["RUNNING"] * 2, 30, what="source tasks RUNNING again")

            # offsets committed by the tasks are the worker's (KIP-875 read after a stop)
            assert api.put(f"/connectors/{source}/stop").status_code == 204
            wait_for(
                lambda: api.get(f"/connectors/{source}/status").json()["connector"]["state"] == "STOPPED",
                30,
                what="source STOPPED",
            )
            offsets = api.get(f"/connectors/{source}/offsets").json()["offsets"]
            assert sorted((o["partition"]["task.id"], o["offset"]["saved"]) for o in offsets) == [
                (f"{source}-0", RECORDS),
                (f"{source}-1", RECORDS),
            ]
        finally:
            api.close()
            worker.stop()
    # the worker's stop ends its task processes too
    assert worker.process is None


def test_a_task_process_that_dies_fails_its_tasks_until_they_are_restarted(
    bootstrap_servers: str, tmp_path: Path
) -> None:
    with WorkerProcess(tmp_path / "w", bootstrap_servers, props={"task.processes": 1}) as worker:
        api = Api(worker.url)
        try:
            topic, source = unique("procs-kill"), unique("src")
            assert (
                api.post(
                    "/connectors", {"name": source, "config": source_config(topic, tasks=2, throughput=50)}
                ).status_code
                == 201
            )
            wait_for(lambda: task_states(api, source) == ["RUNNING"] * 2, 60, what="source tasks RUNNING")
            (child,) = task_processes(worker)
            os.kill(child.pid, signal.SIGKILL)
            wait_for(lambda: task_states(api, source) == ["FAILED"] * 2, 30, what="both tasks FAILED")
            trace = api.get(f"/connectors/{source}/tasks/0/status").json()["trace"]
            assert "task process" in trace and "exited" in trace
            response = api.post(f"/connectors/{source}/restart?includeTasks=true&onlyFailed=true")
            assert response.status_code == 202, response.text
            wait_for(lambda: task_states(api, source) == ["RUNNING"] * 2, 60, what="tasks RUNNING in a new process")
            (replacement,) = task_processes(worker)
            assert replacement.pid != child.pid
        finally:
            api.close()
            worker.stop()


def test_log_levels_set_through_the_rest_api_reach_the_task_processes(bootstrap_servers: str, tmp_path: Path) -> None:
    """/admin/loggers changes the worker's levels and those of its task processes, running or started
    later. The source task's offset commits log at DEBUG, and they happen only in the task process."""
    marker = "finished commitOffsets successfully"
    props = {"task.processes": 1, "offset.flush.interval.ms": 200}
    with WorkerProcess(tmp_path / "w", bootstrap_servers, props=props) as worker:
        api = Api(worker.url)
        commits = lambda: worker.log_path.read_text(errors="replace").count(marker)
        try:
            topic, source = unique("procs-levels"), unique("src")
            assert (
                api.post(
                    "/connectors", {"name": source, "config": source_config(topic, tasks=1, throughput=50)}
                ).status_code
                == 201
            )
            wait_for(lambda: task_states(api, source) == ["RUNNING"], 60, what="the source task RUNNING")
            response = api.put("/admin/loggers/runtime.worker.source_runner", {"level": "DEBUG"})
            assert response.status_code == 200, response.text
            wait_for(lambda: commits() > 0, 30, what="the task process logging its commits at DEBUG")

            # a task process started after the change starts with the worker's levels
            (child,) = task_processes(worker)
            os.kill(child.pid, signal.SIGKILL)
            wait_for(lambda: task_states(api, source) == ["FAILED"], 30, what="the task FAILED")
            before = commits()  # the killed process writes no more
            assert api.post(f"/connectors/{source}/restart?includeTasks=true&onlyFailed=true").status_code == 202
            wait_for(lambda: task_states(api, source) == ["RUNNING"], 60, what="the task RUNNING in a new process")
            wait_for(lambda: commits() > before, 30, what="the new task process logging its commits at DEBUG")

            # and back: once INFO, the commits are no longer logged (counted across a later restart)
            assert api.put("/admin/loggers/runtime.worker", {"level": "INFO"}).status_code == 200
            assert api.post(f"/connectors/{source}/tasks/0/restart").status_code == 204
            wait_for(lambda: task_states(api, source) == ["RUNNING"], 60, what="the task RUNNING again")
            quiet = commits()
            written = lambda: (
                sample(
                    api,
                    "kafka_connect_source_task_source_record_write_total",
                    connector=source,
                    task="0",
                )
                or 0
            )
            base = written()
            wait_for(lambda: written() >= base + 25, 30, what="records written (and committed) since")
            assert commits() == quiet
        finally:
            api.close()
            worker.stop()


def test_active_topics_of_tasks_in_task_processes(bootstrap_servers: str, tmp_path: Path) -> None:
    """KIP-558: the topic a task in a task process writes shows in /connectors/{c}/topics (sinks report
    theirs the same way), and a reset reaches the process: the task reports its topic again."""
    with WorkerProcess(tmp_path / "w", bootstrap_servers, props={"task.processes": 1}) as worker:
        api = Api(worker.url)
        topics = lambda name: api.get(f"/connectors/{name}/topics").json()[name]["topics"]
        try:
            topic, source = unique("procs-topics"), unique("src")
            config = source_config(topic, tasks=1, throughput=50)
            assert api.post("/connectors", {"name": source, "config": config}).status_code == 201
            wait_for(lambda: topics(source) == [topic], 60, what="the source's topic")
            # the task has seen its topic: only the reset, reaching its process, makes it report it again
            assert api.put(f"/connectors/{source}/topics/reset").status_code == 202
            wait_for(lambda: topics(source) == [topic], 30, what="the source's topic reported again")
        finally:
            api.close()
            worker.stop()


def test_task_processes_must_be_a_non_negative_number(tmp_path: Path) -> None:
    props = tmp_path / "bad.properties"
    props.write_text("task.processes=-1\nlisteners=http://127.0.0.1:0\n")
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "runtime.cli", "standalone", str(props)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.returncode != 0
    assert "task.processes" in (result.stdout + result.stderr)


def test_distributed_workers_run_tasks_in_task_processes(bootstrap_servers: str, tmp_path: Path) -> None:
    """Two distributed workers with a task process each: tasks RUNNING on both, their offsets in the
    offsets topic (read back by KIP-875 after a stop), statuses in the status topic."""
    from tests.integration.scenarios.helpers import SOURCE, Kafka
    from tests.support.cluster import running_cluster

    with running_cluster(tmp_path, bootstrap_servers, 2, **{"task.processes": 1}) as cluster:
        topic = Kafka(bootstrap_servers).create_topic(unique("dist-procs"), partitions=2)
        name = unique("src")
        response = cluster.api(0).post(
            "/connectors",
            json={
                "name": name,
                "config": {
                    "connector.class": SOURCE,
                    "topic": topic,
                    "tasks.max": "2",
                    "messages.per.task": "500",
                    "task.own.partition": "true",
                },
            },
        )
        assert response.status_code == 201, response.text
        status = cluster.wait_state(name, "RUNNING", 2, via=1)
        assert sorted(t["worker_id"] for t in status["tasks"]) == sorted(cluster.worker_id(i) for i in range(2))
        for worker in cluster.workers:
            assert len(task_processes(worker)) == 1
        # the tasks committed every record they sent: stop, then read the offsets from the offsets topic
        wait_for(
            lambda: (
                cluster.api(0).get(f"/connectors/{name}/offsets").status_code == 200
                and sorted(
                    o["offset"]["saved"] for o in cluster.api(0).get(f"/connectors/{name}/offsets").json()["offsets"]
                )
                == [500, 500]
            ),
            60,
            what="every record's offset committed",
        )
        assert cluster.api(1).put(f"/connectors/{name}/stop").status_code == 204
        cluster.wait_state(name, "STOPPED", 0)
        offsets = cluster.api(1).get(f"/connectors/{name}/offsets").json()["offsets"]
        assert sorted((o["partition"]["task.id"], o["offset"]["saved"]) for o in offsets) == [
            (f"{name}-0", 500),
            (f"{name}-1", 500),
        ]


def test_task_processes_of_a_killed_worker_stop_on_their_own(bootstrap_servers: str, tmp_path: Path) -> None:
    worker = WorkerProcess(tmp_path / "w", bootstrap_servers, props={"task.processes": 2}).start()
    api = Api(worker.url)
    try:
        topic, source = unique("procs-orphan"), unique("src")
        assert (
            api.post(
                "/connectors", {"name": source, "config": source_config(topic, tasks=2, throughput=50)}
            ).status_code
            == 201
        )
        wait_for(lambda: task_states(api, source) == ["RUNNING"] * 2, 60, what="source tasks RUNNING")
        children = task_processes(worker)
        assert len(children) == 2
        worker.kill()
        _, alive = psutil.wait_procs(children, timeout=30)
        assert alive == [], f"task processes still running after their worker was killed: {alive}"
    finally:
        api.close()
        worker.stop()
