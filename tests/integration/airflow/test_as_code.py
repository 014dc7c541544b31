"""Connectors as code against live clusters: our worker and the reference Apache Kafka Connect 3.9, one each.

A fleet of FileStreamSource connectors (both runtimes ship it; each reads an empty file of its own) in the
three target states, some starting from declared offsets: the dry run plans a create for each and changes
nothing, the apply reaches every declared state, the second apply plans nothing, a change of config, state
and membership with `prune` applies exactly that, and the diff never shows a secret.

AS_CODE_CONNECTORS connectors in the fleet (default 50, the README's figure; at least 9, the change step's;
fewer for a quick run, e.g. `AS_CODE_CONNECTORS=12 pytest tests/integration/airflow/test_as_code.py`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from airflow_provider_connect.operators.as_code import ConnectorsApplyOperator
from tests.support.broker import unique
from tests.support.oracle import FAST_START_JAVA, OracleProcess, require_oracle
from tests.support.worker import WorkerProcess, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.airflow, pytest.mark.timeout(300)]

COUNT = max(9, int(os.environ.get("AS_CODE_CONNECTORS", "50")))
STATES = ("RUNNING", "PAUSED", "STOPPED")
SECRET = "as-code-secret-3141"


@pytest.fixture(scope="module")
def ours(tmp_path_factory, bootstrap_servers) -> Iterator[str]:
    worker = WorkerProcess(tmp_path_factory.mktemp("as-code-ours"), bootstrap_servers).start()
    yield worker.url
    worker.kill()  # nothing to check in its shutdown; stopping a fleet of connectors one by one takes a while


@pytest.fixture(scope="module")
def oracle(tmp_path_factory, bootstrap_servers) -> Iterator[str]:
    tool = require_oracle()
    process = OracleProcess(
        tmp_path_factory.mktemp("as-code-oracle"), bootstrap_servers, tool=tool, java_options=FAST_START_JAVA
    ).start()
    yield process.url
    process.kill()


@pytest.fixture(params=["ours", "oracle"])
def cluster(request, monkeypatch) -> str:
    url = request.getfixturevalue(request.param)
    monkeypatch.setenv("AIRFLOW_CONN_AS_CODE", json.dumps({"conn_type": "kafka_connect", "host": url}))
    return url


def desired_state(folder: Path, data: Path, topic: str) -> dict[str, dict]:
    """Connector i: state STATES[i % 3]; every STOPPED one (and its file) starts at position i."""
    connectors = {}
    for i in range(COUNT):
        name, file = f"fleet-{i:02d}", data / f"in-{i:02d}.txt"
        file.touch()
        spec: dict = {
            "config": {"connector.class": "FileStreamSource", "file": str(file), "topic": topic, "tasks.max": 1}
        }
        spec["state"] = STATES[i % 3]
        if spec["state"] == "STOPPED":
            spec["offsets"] = [{"partition": {"filename": str(file)}, "offset": {"position": i}}]
        connectors[name] = spec
    connectors["fleet-00"]["config"]["db.password"] = SECRET  # an extra key the connector ignores
    return connectors


def write(folder: Path, connectors: dict[str, dict]) -> None:
    """One file per connector, JSON and YAML alternately (YAML written as JSON, which YAML reads too)."""
    for old in folder.iterdir():
        old.unlink()
    for i, (name, spec) in enumerate(sorted(connectors.items())):
        (folder / f"{name}.{'json' if i % 2 else 'yaml'}").write_text(json.dumps(spec))


def apply(folder: Path, capfd, **kw) -> tuple[dict, str]:
    operator = ConnectorsApplyOperator(
        task_id="apply", desired_state=str(folder), kafka_connect_conn_id="as_code", poll_interval=0.2, **kw
    )
    result = operator.execute({})
    return result, "".join(capfd.readouterr())


def states(url: str) -> dict[str, tuple[str, int | None]]:
    """Connector state and task count (None for PAUSED: a connector created PAUSED has not made its tasks)."""
    expanded = httpx.get(f"{url}/connectors", params={"expand": "status"}, timeout=30).json()
    out: dict[str, tuple[str, int | None]] = {}
    for name, entry in expanded.items():
        state, tasks = entry["status"]["connector"]["state"], entry["status"]["tasks"]
        if name.startswith("fleet-"):
            out[name] = (state, None if state == "PAUSED" else len(tasks))
    return out


def expected(spec: dict) -> tuple[str, int | None]:
    return spec["state"], {"RUNNING": 1, "PAUSED": None, "STOPPED": 0}[spec["state"]]


def test_plan_apply_reapply_change_and_prune_a_fleet(cluster: str, tmp_path: Path, capfd) -> None:
    folder, data = tmp_path / "connectors", tmp_path / "data"
    folder.mkdir(), data.mkdir()
    connectors = desired_state(folder, data, unique("fleet"))
    write(folder, connectors)

    planned, log = apply(folder, capfd, dry_run=True)
    assert planned["plan"]["summary"]["create"] == COUNT and planned["applied"] == []
    assert states(cluster) == {}
    assert "+ fleet-00 (create, RUNNING)" in log and "    + db.password: ***" in log
    assert SECRET not in log and SECRET not in json.dumps(planned)

    applied, _ = apply(folder, capfd)
    assert sorted(applied["applied"]) == sorted(f"create {name}" for name in connectors)
    # the operator waited: every connector is in its state, with its task unless STOPPED
    assert states(cluster) == {name: expected(spec) for name, spec in connectors.items()}
    for name, spec in connectors.items():
        if "offsets" in spec:
            offsets = httpx.get(f"{cluster}/connectors/{name}/offsets", timeout=30).json()["offsets"]
            assert offsets == spec["offsets"], name

    again, log = apply(folder, capfd)
    assert (again["plan"]["connectors"], again["applied"]) == ([], [])
    assert f"no changes ({COUNT} unchanged)" in log

    # a change of config, of states and of membership; prune deletes what is no longer declared
    connectors["fleet-01"]["config"]["topic"] = unique("moved")
    connectors["fleet-03"]["state"] = "PAUSED"  # from RUNNING
    connectors["fleet-04"]["state"] = "RUNNING"  # from PAUSED
    connectors["fleet-05"]["state"] = "RUNNING"  # from STOPPED
    connectors["fleet-06"]["state"] = "STOPPED"  # from RUNNING
    del connectors["fleet-07"], connectors["fleet-08"]
    write(folder, connectors)
    changed, log = apply(folder, capfd, prune=True)
    assert sorted(changed["applied"]) == [
        "delete fleet-07",
        "delete fleet-08",
        "pause fleet-03",
        "resume fleet-04",
        "resume fleet-05",
        "stop fleet-06",
        "update fleet-01",
    ]
    assert "~ fleet-03\n    state: RUNNING -> PAUSED (pause)" in log
    assert "- fleet-07 (delete; it is PAUSED and not declared)" in log
    now = states(cluster)
    assert "fleet-07" not in now and "fleet-08" not in now and len(now) == COUNT - 2
    assert now == {name: expected(spec) for name, spec in connectors.items()}
    final, _ = apply(folder, capfd, prune=True)
    assert final["plan"]["connectors"] == []


def test_a_failed_task_is_restarted_by_the_next_apply(ours: str, monkeypatch, tmp_path: Path, capfd) -> None:
    """Our worker only: the reference ships no connector that fails on demand."""
    monkeypatch.setenv("AIRFLOW_CONN_AS_CODE", json.dumps({"conn_type": "kafka_connect", "host": ours}))
    name = "fleet-flaky"
    (tmp_path / f"{name}.yaml").write_text(
        "config:\n  connector.class: SequenceSourceConnector\n  topic: "
        + unique("flaky")
        + "\n  tasks.max: 1\n  throughput: 20\n  task.fail.after.records: 3\n  task.fail.times: 1\n"
    )
    # its first task instance fails after 3 records
    assert apply(tmp_path, capfd, wait_for_states=False)[0]["applied"] == [f"create {name}"]
    wait_for(lambda: states(ours)[name] == ("RUNNING", 1) and _task_failed(ours, name), 60, 0.2, "the task to fail")
    restarted, log = apply(tmp_path, capfd)
    assert restarted["applied"] == [f"restart {name}"] and "! restart the FAILED task-0" in log
    assert states(ours)[name] == ("RUNNING", 1) and not _task_failed(ours, name)
    assert apply(tmp_path, capfd)[0]["applied"] == []
    httpx.delete(f"{ours}/connectors/{name}", timeout=30)


def _task_failed(url: str, name: str) -> bool:
    status = httpx.get(f"{url}/connectors/{name}/status", timeout=30).json()
    return any(task["state"] == "FAILED" for task in status["tasks"])
