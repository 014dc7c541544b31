"""Kafka's own FileStream connectors and Debezium's PostgreSQL connector, as jars in plugin.path, hosted by
this runtime beside the reference 3.9 (the oracle) running the same jars: the same plugin listing,
configuration definitions, validation answers, topic contents and offsets; failures of Java code fail only
its tasks."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
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


@pytest.fixture
def python_beside(worker: Api) -> Iterator[str]:
    """A Python source connector producing beside the Java one a test breaks: it must not notice."""
    name = unique("python-beside")
    config = {"connector.class": "SequenceSourceConnector", "topic": unique("beside"), "throughput": "50"}
    assert worker.put(f"/connectors/{name}/config", {**config, "tasks.max": "1"}).status_code == 201
    wait_for(lambda: produced(worker, name) > 0, 60, what="the Python connector producing")
    yield name
    assert worker.delete(f"/connectors/{name}").status_code == 204


def produced(api: Api, name: str) -> int:
    """How many records the SequenceSource task has committed (its offset)."""
    offsets = api.get(f"/connectors/{name}/offsets").json()["offsets"]
    return offsets[0]["offset"]["saved"] if offsets else 0


def assert_still_producing(api: Api, name: str) -> None:
    before = produced(api, name)
    wait_for(
        lambda: task_states(api, name) == ["RUNNING"] and produced(api, name) > before,
        30,
        what=f"the Python connector {name} still RUNNING and producing",
    )


def restarted(api: Api, name: str) -> None:
    """POST /connectors/{name}/restart?includeTasks=true, then the connector and its task RUNNING."""
    response = api.post(f"/connectors/{name}/restart?includeTasks=true")
    assert response.status_code == 202, response.text
    wait_for(
        lambda: (
            api.get(f"/connectors/{name}/status").json()["connector"]["state"] == "RUNNING"
            and task_states(api, name) == ["RUNNING"]
        ),
        60,
        what=f"{name} and its task RUNNING again",
    )


def test_a_killed_jvm_fails_its_tasks_not_the_worker_and_they_restart(
    worker: Api, python_beside: str, tmp_path: Path
) -> None:
    """kill -9 of the JVM host process running a Java connector and its task: both FAILED with the exit in
    their traces, the worker and a Python connector beside them carry on, and a restart runs them again."""
    source_file = tmp_path / "in.txt"
    source_file.write_text("a\nb\n")
    name = unique("src")
    config = {"connector.class": FILE_SOURCE, "file": str(source_file), "topic": unique("java-kill"), "tasks.max": "1"}
    assert worker.put(f"/connectors/{name}/config", config).status_code == 201
    wait_for(lambda: task_states(worker, name) == ["RUNNING"], 60, what="the task RUNNING")
    (host,) = jvm_hosts(worker)
    os.kill(host.pid, signal.SIGKILL)
    wait_for(lambda: task_states(worker, name) == ["FAILED"], 60, what="the task FAILED")
    status = worker.get(f"/connectors/{name}/status").json()
    assert status["connector"]["state"] == "FAILED"
    for trace in (status["connector"]["trace"], status["tasks"][0]["trace"]):
        assert f"the JVM host process {host.pid} exited (exit code -9)" in trace
    assert_still_producing(worker, python_beside)

    restarted(worker, name)
    (new_host,) = jvm_hosts(worker)
    assert new_host.pid != host.pid
    source_file.write_text("a\nb\nc\n")  # the new task reads on from the committed position
    expected = [{"partition": {"filename": str(source_file)}, "offset": {"position": 6}}]
    wait_for(lambda: worker.get(f"/connectors/{name}/offsets").json()["offsets"] == expected, 60, what="c read")
    assert worker.delete(f"/connectors/{name}").status_code == 204


def test_a_java_task_hanging_in_poll_is_replaced_by_a_restart(worker: Api, python_beside: str, tmp_path: Path) -> None:
    """FileStreamSource opening a FIFO nobody writes blocks in poll() for good. As in the reference (which
    gives poll() no deadline) the task stays RUNNING; a restart abandons the hung instance once
    task.shutdown.graceful.timeout.ms has passed and runs a new one; the worker, its JVM host and a Python
    connector beside it carry on."""
    log_path = worker.process.log_path  # type: ignore[attr-defined]
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    hung = unique("hung")
    config = {"connector.class": FILE_SOURCE, "file": str(fifo), "topic": unique("java-hung"), "tasks.max": "1"}
    assert worker.put(f"/connectors/{hung}/config", config).status_code == 201
    wait_for(lambda: task_states(worker, hung) == ["RUNNING"], 60, what="the hanging task RUNNING")
    (host,) = jvm_hosts(worker)
    abandoned = f"Graceful stop of task {hung}-0 failed"

    restarted(worker, hung)
    assert log_path.read_text(errors="replace").count(abandoned) == 1
    assert_still_producing(worker, python_beside)
    assert jvm_hosts(worker) == [host]
    # a writer lets both instances' open() return (FileStreamSource never reads a FIFO: its reader is never
    # ready()): the new instance, no longer hung, stops in time when deleted, the abandoned one lets go
    with open(fifo, "w"):
        assert worker.delete(f"/connectors/{hung}").status_code == 204
    assert log_path.read_text(errors="replace").count(abandoned) == 1


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
