"""Kafka's own FileStream connectors and Debezium's PostgreSQL connector, as jars in plugin.path, hosted by
this runtime beside the reference 3.9 (the oracle) running the same jars: the same plugin listing,
configuration definitions, validation answers, topic contents and offsets; failures of Java code fail only
its tasks."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import psutil
import pytest

from tests.integration.scenarios.helpers import Api, Kafka
from tests.support.broker import unique
from tests.support.worker import wait_for

from .conftest import FILE_SINK, FILE_SOURCE, POSTGRES

pytestmark = pytest.mark.integration


def task_states(api: Api, name: str) -> list[str]:
    response = api.get(f"/connectors/{name}/status")
    return [t["state"] for t in response.json().get("tasks", [])] if response.status_code == 200 else []


def jvm_hosts(api: Api) -> list[psutil.Process]:
    pid = api.process.process.pid  # type: ignore[attr-defined]
    return [p for p in psutil.Process(pid).children(recursive=True) if "runtime.java.host" in " ".join(p.cmdline())]


def test_java_plugins_are_listed_with_their_classes_versions_and_types(worker: Api) -> None:
    connectors = {p["class"]: p for p in worker.get("/connector-plugins").json()}
    assert connectors[FILE_SOURCE] == {"class": FILE_SOURCE, "type": "source", "version": "3.9.0"}
    assert connectors[FILE_SINK] == {"class": FILE_SINK, "type": "sink", "version": "3.9.0"}
    assert connectors[POSTGRES] == {"class": POSTGRES, "type": "source", "version": "3.0.7.Final"}
    everything = {p["class"]: p for p in worker.get("/connector-plugins?connectorsOnly=false").json()}
    assert everything["io.debezium.transforms.ByLogicalTableRouter"]["type"] == "transformation"
    assert everything["io.debezium.converters.BinaryDataConverter"]["type"] == "converter"


@pytest.mark.parametrize("plugin", [POSTGRES, "PostgresConnector", FILE_SOURCE])
def test_a_java_plugins_config_definition_equals_the_oracles(worker: Api, oracle: Api, plugin: str) -> None:
    ours, theirs = worker.get(f"/connector-plugins/{plugin}/config"), oracle.get(f"/connector-plugins/{plugin}/config")
    assert ours.status_code == theirs.status_code == 200
    assert ours.json() == theirs.json()


@pytest.mark.parametrize(
    "config",
    [
        {"connector.class": POSTGRES, "name": "pg"},
        {"connector.class": POSTGRES, "name": "pg", "database.hostname": "127.0.0.1", "database.port": "x"},
        {"connector.class": FILE_SOURCE, "name": "f", "batch.size": "many"},
    ],
    ids=["postgres-missing", "postgres-bad-port", "file-bad-batch"],
)
def test_java_validation_errors_equal_the_oracles(worker: Api, oracle: Api, config: dict[str, str]) -> None:
    plugin = config["connector.class"].rsplit(".", 1)[-1]
    ours = worker.put(f"/connector-plugins/{plugin}/config/validate", config)
    theirs = oracle.put(f"/connector-plugins/{plugin}/config/validate", config)
    assert ours.status_code == theirs.status_code == 200
    assert ours.json() == theirs.json()
    assert ours.json()["error_count"] > 0


def test_filestream_jars_give_the_oracles_topic_contents_files_and_offsets(
    worker: Api, oracle: Api, bootstrap_servers: str, tmp_path: Path
) -> None:
    lines = [f"line {i} \u00e9\u4e2d {'x' * (i % 50)}" for i in range(3000)]
    source_file = tmp_path / "in.txt"
    source_file.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    kafka = Kafka(bootstrap_servers)
    topics = {}
    for name, api in (("ours", worker), ("oracle", oracle)):
        topics[name] = kafka.create_topic(unique(f"java-file-{name}"))
        config = {"connector.class": FILE_SOURCE, "file": str(source_file), "topic": topics[name], "tasks.max": "1"}
        assert api.put(f"/connectors/{unique('src')}-{name}/config", config).status_code == 201
    wait_for(lambda: len(kafka.read_all(topics["ours"])) == len(lines), 90, what="our records")
    wait_for(lambda: len(kafka.read_all(topics["oracle"])) == len(lines), 90, what="the oracle's records")
    ours, theirs = kafka.read_all(topics["ours"]), kafka.read_all(topics["oracle"])
    assert [(k, v) for _, _, k, v in ours] == [(k, v) for _, _, k, v in theirs]

    # the sink writes the file back, byte for byte
    out = tmp_path / "out.txt"
    sink = {"connector.class": FILE_SINK, "file": str(out), "topics": topics["ours"], "tasks.max": "1"}
    sink["errors.tolerance"] = "all"  # the markers read_all() wrote after the lines are not JSON: skipped
    assert worker.put(f"/connectors/{unique('snk')}/config", sink).status_code == 201
    wait_for(lambda: out.exists() and out.read_bytes() == source_file.read_bytes(), 90, what="the sink's file")

    # the same offsets, in the same form (KIP-875), once each source has committed its last line
    # (FileStreamSourceTask counts characters, not bytes)
    position = len(source_file.read_text(encoding="utf-8"))
    expected = [{"partition": {"filename": str(source_file)}, "offset": {"position": position}}]
    for name, api in (("ours", worker), ("oracle", oracle)):
        (connector,) = [c for c in api.get("/connectors").json() if c.endswith(f"-{name}")]
        offsets = lambda api=api, connector=connector: api.get(f"/connectors/{connector}/offsets").json()["offsets"]
        wait_for(lambda offsets=offsets: offsets() == expected, 30, what=f"{name}: {expected}, not {offsets()}")


def test_a_failing_java_task_is_failed_with_the_java_trace_and_restarts(worker: Api, tmp_path: Path) -> None:
    name = unique("bad-sink")
    missing = tmp_path / "no" / "such" / "dir" / "out.txt"
    config = {"connector.class": FILE_SINK, "file": str(missing), "topics": unique("t"), "tasks.max": "1"}
    assert worker.put(f"/connectors/{name}/config", config).status_code == 201
    wait_for(lambda: task_states(worker, name) == ["FAILED"], 60, what="the task FAILED")
    trace = worker.get(f"/connectors/{name}/tasks/0/status").json()["trace"]
    assert "org.apache.kafka.connect.errors.ConnectException: Couldn't find or create file" in trace
    assert "at org.apache.kafka.connect.file.FileStreamSinkTask.start" in trace
    missing.parent.mkdir(parents=True)
    assert worker.post(f"/connectors/{name}/tasks/0/restart").status_code == 204
    wait_for(lambda: task_states(worker, name) == ["RUNNING"], 60, what="the task RUNNING after the restart")
    assert worker.delete(f"/connectors/{name}").status_code == 204


def test_a_killed_jvm_fails_its_tasks_not_the_worker_and_they_restart(worker: Api, tmp_path: Path) -> None:
    source_file = tmp_path / "in.txt"
    source_file.write_text("a\nb\n")
    name = unique("src")
    config = {"connector.class": FILE_SOURCE, "file": str(source_file), "topic": unique("java-kill"), "tasks.max": "1"}
    assert worker.put(f"/connectors/{name}/config", config).status_code == 201
    wait_for(lambda: task_states(worker, name) == ["RUNNING"], 60, what="the task RUNNING")
    (host,) = jvm_hosts(worker)
    os.kill(host.pid, signal.SIGKILL)
    wait_for(lambda: task_states(worker, name) == ["FAILED"], 60, what="the task FAILED")
    assert "JVM host process" in worker.get(f"/connectors/{name}/tasks/0/status").json()["trace"]
    assert worker.get("/").status_code == 200
    response = worker.post(f"/connectors/{name}/restart?includeTasks=true&onlyFailed=false")
    assert response.status_code == 202, response.text
    wait_for(
        lambda: (
            worker.get(f"/connectors/{name}/status").json()["connector"]["state"] == "RUNNING"
            and task_states(worker, name) == ["RUNNING"]
        ),
        60,
        what="the connector and task RUNNING in a new JVM",
    )
    assert worker.delete(f"/connectors/{name}").status_code == 204


def test_a_java_task_hanging_in_poll_holds_up_nothing_else(worker: Api, tmp_path: Path) -> None:
    """FileStreamSource opening a FIFO nobody writes blocks in poll() for good: deleting it returns after the
    graceful stop timeout, and the worker, its JVM host and its other connectors carry on."""
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)
    hung, healthy = unique("hung"), unique("healthy")
    config = {"connector.class": FILE_SOURCE, "file": str(fifo), "topic": unique("java-hung"), "tasks.max": "1"}
    assert worker.put(f"/connectors/{hung}/config", config).status_code == 201
    wait_for(lambda: task_states(worker, hung) == ["RUNNING"], 60, what="the hanging task RUNNING")
    assert worker.delete(f"/connectors/{hung}").status_code == 204
    wait_for(lambda: worker.get(f"/connectors/{hung}/status").status_code == 404, 30, what="the hung connector gone")
    source_file = tmp_path / "in.txt"
    source_file.write_text("still here\n")
    config = {**config, "file": str(source_file), "topic": unique("java-healthy")}
    assert worker.put(f"/connectors/{healthy}/config", config).status_code == 201
    wait_for(lambda: task_states(worker, healthy) == ["RUNNING"], 60, what="another Java task RUNNING")
    expected = [{"partition": {"filename": str(source_file)}, "offset": {"position": 11}}]
    wait_for(
        lambda: worker.get(f"/connectors/{healthy}/offsets").json()["offsets"] == expected, 60, what="its line read"
    )
    assert worker.delete(f"/connectors/{healthy}").status_code == 204
    with open(fifo, "w"):  # let the abandoned poll() finish
        pass


def test_log_levels_set_through_the_rest_api_reach_java_loggers(worker: Api, tmp_path: Path) -> None:
    """/admin/loggers sets a level for a Java namespace in the JVM host: FileStreamSourceTask's DEBUG lines
    appear in the worker's log only after it."""
    log_path = worker.process.log_path  # type: ignore[attr-defined]
    source_file = tmp_path / "in.txt"
    source_file.write_text("one\n")
    response = worker.put("/admin/loggers/org.apache.kafka.connect.file", {"level": "DEBUG"})
    assert response.status_code == 200, response.text
    name = unique("debug-src")
    config = {"connector.class": FILE_SOURCE, "file": str(source_file), "topic": unique("java-debug"), "tasks.max": "1"}
    assert worker.put(f"/connectors/{name}/config", config).status_code == 201
    wait_for(
        lambda: any(
            " DEBUG " in line and "(org.apache.kafka.connect.file." in line
            for line in log_path.read_text(errors="replace").splitlines()
        ),
        60,
        what="a DEBUG line of org.apache.kafka.connect.file in the worker's log",
    )
    assert worker.put("/admin/loggers/org.apache.kafka.connect.file", {"level": "INFO"}).status_code == 200
    assert worker.delete(f"/connectors/{name}").status_code == 204
