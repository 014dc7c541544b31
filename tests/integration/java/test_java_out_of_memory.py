"""An OutOfMemoryError in hosted Java code fails only its task: the worker (and its JVM host's other work)
carries on, and a restart runs the task again.

The heap comes from KAFKA_HEAP_OPTS, as for Kafka's own scripts; Kafka's FileStreamSourceTask doubles its
line buffer until it finds a newline, so a file that is one long line exhausts a small heap, a real
OutOfMemoryError from unmodified connector code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.scenarios.helpers import Api
from tests.support.broker import unique
from tests.support.worker import WorkerProcess, wait_for

from .conftest import FILE_SOURCE
from .test_java_connectors import assert_still_producing, produced, task_states

pytestmark = pytest.mark.integration

HEAP = "-Xmx64m"
LINE_BYTES = 40 * 1024 * 1024  # the buffer doubles to 32M chars (64 MB) on its way: more than the heap


def test_an_out_of_memory_error_fails_only_its_task_and_a_restart_runs_it_again(
    java_plugin_path: Path, bootstrap_servers: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAFKA_HEAP_OPTS", HEAP)  # the worker's JVM host process takes it
    props = {"plugin.path": str(java_plugin_path), "task.shutdown.graceful.timeout.ms": 3000}
    with WorkerProcess(tmp_path / "worker", bootstrap_servers, props=props) as process:
        api = Api(process.url)
        try:
            beside = unique("python-beside")
            config = {"connector.class": "SequenceSourceConnector", "topic": unique("beside"), "throughput": "50"}
            assert api.put(f"/connectors/{beside}/config", {**config, "tasks.max": "1"}).status_code == 201
            wait_for(lambda: produced(api, beside) > 0, 60, what="the Python connector producing")

            one_line = tmp_path / "one-line.txt"
            with one_line.open("wb") as handle:
                handle.truncate(LINE_BYTES)  # NUL characters, no newline: one line as long as the file
            name = unique("greedy")
            source = {"connector.class": FILE_SOURCE, "file": str(one_line), "topic": unique("oom"), "tasks.max": "1"}
            assert api.put(f"/connectors/{name}/config", source).status_code == 201
            wait_for(lambda: task_states(api, name) == ["FAILED"], 120, what="the greedy task FAILED")
            trace = api.get(f"/connectors/{name}/tasks/0/status").json()["trace"]
            assert "java.lang.OutOfMemoryError" in trace, trace
            assert api.get(f"/connectors/{name}/status").json()["connector"]["state"] == "RUNNING"
            assert_still_producing(api, beside)

            one_line.write_text("short\nlines\n")
            assert api.post(f"/connectors/{name}/tasks/0/restart").status_code == 204
            wait_for(lambda: task_states(api, name) == ["RUNNING"], 60, what="the task RUNNING after the restart")
            expected = [{"partition": {"filename": str(one_line)}, "offset": {"position": 12}}]
            wait_for(lambda: api.get(f"/connectors/{name}/offsets").json()["offsets"] == expected, 60, what="read")
        finally:
            api.close()
