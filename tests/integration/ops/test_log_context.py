"""Log lines of connector and task threads carry the reference's context prefix; `log.format=json` gives one
JSON object per line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.scenarios.helpers import Api, source_config
from tests.support.broker import unique
from tests.support.worker import WorkerProcess, wait_for

pytestmark = pytest.mark.integration


def _fail_a_task(worker: WorkerProcess) -> str:
    api = Api(worker.url)
    name = unique("logged")
    assert (
        api.post(
            "/connectors", {"name": name, "config": source_config(unique("t"), **{"task.start.fail": "all"})}
        ).status_code
        == 201
    )
    api.wait_state(name, "RUNNING", 1, "FAILED")
    api.close()
    return name


def test_task_lines_carry_the_connector_context(bootstrap_servers: str, tmp_path: Path) -> None:
    with WorkerProcess(tmp_path, bootstrap_servers) as worker:
        try:
            name = _fail_a_task(worker)
            line = wait_for(
                lambda: next(
                    (l for l in worker.log_path.read_text().splitlines() if "unrecoverable exception" in l), None
                ),
                30,
                what="the task's failure line",
            )
            assert f" ERROR [{name}|task-0] Task {name}-0 threw" in line
            assert any(f"[{name}|worker]" in l for l in worker.log_path.read_text().splitlines())
        finally:
            worker.stop()


def test_json_log_format_writes_one_object_per_line(bootstrap_servers: str, tmp_path: Path) -> None:
    with WorkerProcess(tmp_path, bootstrap_servers, props={"log.format": "json"}) as worker:
        try:
            name = _fail_a_task(worker)

            def failure_entry() -> dict | None:
                for line in worker.log_path.read_text().splitlines():
                    if line.startswith("{"):
                        entry = json.loads(line)
                        if "unrecoverable exception" in entry["message"]:
                            return entry
                return None

            entry = wait_for(failure_entry, 30, what="the task's failure as JSON")
            assert (entry["level"], entry["connector"], entry["scope"]) == ("ERROR", name, "task-0")
            assert "Injected failure" in entry["exception"]
            # every line of Python's logging is JSON (librdkafka writes its own lines to stderr)
            assert not [l for l in worker.log_path.read_text().splitlines() if l.startswith("[20")]
        finally:
            worker.stop()
