"""Section 4 group C: KIP-745 restarts (`POST /connectors/{c}/restart`) on a standalone worker.

Restarts are observed from outside:
- a connector restart: the connector's start() appends a line to a file (`connector.starts.file`). A plain
  restart (204) runs inside the request in both modes, and so does a standalone restart plan, so once the
  answer is in the file has one more line or not. In distributed mode a restart plan (202) is carried out
  afterwards by the owning worker: the line appears, or has not within QUIET_S;
- a task restart: tasks fail after FAIL_AFTER records (`task.fail.after.records`), so every start of a task
  adds exactly FAIL_AFTER records with that task's key to the topic.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.broker import unique
from tests.support.worker import wait_for

from .helpers import Api, Kafka, assert_error, source_config, values_by_key

pytestmark = pytest.mark.integration

QUIET_S = 2.0  # distributed mode: how long a restart plan that restarts nothing is watched for a start
FAIL_AFTER = 5
TASKS = 4


def restart(api: Api, name: str, params: dict[str, str] | None = None):
    return api.post(f"/connectors/{name}/restart", params=params or {})


def connector_starts(starts_file: Path) -> int:
    """How many times the connector's start() ran (`connector.starts.file`)."""
    return len(starts_file.read_text().splitlines()) if starts_file.exists() else 0


def plan_states(body: dict) -> tuple[str, dict[int, str]]:
    return body["connector"]["state"], {t["id"]: t["state"] for t in body["tasks"]}


def task_starts(kafka: Kafka, topic: str, name: str) -> dict[int, int]:
    """How many times each task started, from the records each start produced (FAIL_AFTER per start)."""
    by_key = values_by_key(kafka.read_all(topic))
    counts = {}
    for i in range(TASKS):
        produced = len(by_key.get(f"{name}-{i}", []))
        assert produced % FAIL_AFTER == 0, f"task {i} produced {produced} records, not a multiple of {FAIL_AFTER}"
        counts[i] = produced // FAIL_AFTER
    return counts


def assert_connector_restart(starts_file: Path, before: int, mode: str, restarted: bool) -> None:
    """Whether a 202 restart plan restarted the connector (see the module docstring for how it shows)."""
    wanted = before + 1 if restarted else before
    if mode == "standalone":  # carried out inside the request
        assert connector_starts(starts_file) == wanted, f"{connector_starts(starts_file) - before} restarts"
    elif restarted:
        wait_for(lambda: connector_starts(starts_file) == wanted, 20, 0.05, what="the owner to restart the connector")
    else:
        # Nothing to wait for when nothing happens: watch QUIET_S for a start that should not come.
        deadline = time.monotonic() + QUIET_S
        while time.monotonic() < deadline:
            assert connector_starts(starts_file) == before, "the connector was restarted"
            time.sleep(0.05)  # the poll interval of the watch for a start that must not come


def assert_task_starts(kafka: Kafka, topic: str, name: str, expected: int) -> None:
    # a failed task's last records may still be in flight when FAILED shows, so poll briefly
    want = {i: expected for i in range(TASKS)}
    wait_for(lambda: task_starts(kafka, topic, name) == want, 20, interval_s=0.5, what=f"{want} task starts")


@pytest.fixture
def starts_file(tmp_path: Path) -> Path:
    return tmp_path / "connector-starts"


@pytest.fixture
def running(api: Api, name: str, kafka: Kafka, starts_file: Path) -> str:
    """A RUNNING connector with 4 RUNNING tasks, started once."""
    topic = kafka.create_topic(unique("restart-topic"))
    api.create(name, source_config(topic, tasks=TASKS, throughput=50, **{"connector.starts.file": str(starts_file)}))
    api.wait_state(name, "RUNNING", TASKS)
    assert connector_starts(starts_file) >= 1
    return name


@pytest.fixture
def failed_tasks(api: Api, name: str, kafka: Kafka, starts_file: Path) -> tuple[str, str]:
    """A RUNNING connector, started once, whose 4 tasks each produced FAIL_AFTER records and then FAILED."""
    topic = kafka.create_topic(unique("restart-topic"))
    api.create(
        name,
        source_config(
            topic, tasks=TASKS, **{"task.fail.after.records": FAIL_AFTER, "connector.starts.file": str(starts_file)}
        ),
    )
    api.wait_state(name, "RUNNING", TASKS, "FAILED")
    assert_task_starts(kafka, topic, name, 1)
    assert connector_starts(starts_file) >= 1
    return name, topic


PARAM_COMBOS = [
    None,
    {"onlyFailed": "true"},
    {"includeTasks": "true"},
    {"onlyFailed": "true", "includeTasks": "true"},
    {"onlyFailed": "false", "includeTasks": "false"},
]


@pytest.mark.parametrize("params", PARAM_COMBOS)
def test_restart_unknown_connector_is_404(api, params) -> None:
    # 38 (section 0: 404 `Unknown connector: <c>` with any parameters)
    c = unique("missing")
    response = restart(api, c, params)
    assert_error(response, 404, f"Unknown connector: {c}")


def test_plain_restart_restarts_only_the_connector(api, running, starts_file) -> None:
    # 39
    before = connector_starts(starts_file)
    response = restart(api, running)
    assert response.status_code == 204 and response.content == b""
    assert connector_starts(starts_file) == before + 1, "the connector was not restarted inside the request"
    api.wait_state(running, "RUNNING", TASKS)


def test_restart_include_tasks_restarts_everything(api, running, starts_file, mode) -> None:
    # 40, with a capitalised boolean (section 8)
    before = connector_starts(starts_file)
    response = restart(api, running, {"includeTasks": "True", "onlyFailed": "false"})
    assert response.status_code == 202, response.text
    assert plan_states(response.json()) == ("RESTARTING", {i: "RESTARTING" for i in range(TASKS)})
    assert set(response.json()) == {"name", "connector", "tasks", "type"}
    assert_connector_restart(starts_file, before, mode, restarted=True)
    api.wait_state(running, "RUNNING", TASKS)


@pytest.mark.parametrize("params", [{"onlyFailed": "true"}, {"onlyFailed": "TRUE", "includeTasks": "true"}])
def test_only_failed_on_healthy_connector_is_a_noop(api, running, starts_file, params, mode) -> None:
    # 41, 42: 202 with no RESTARTING anywhere and nothing restarted
    before = connector_starts(starts_file)
    response = restart(api, running, params)
    assert response.status_code == 202, response.text
    assert plan_states(response.json()) == ("RUNNING", {i: "RUNNING" for i in range(TASKS)})
    assert_connector_restart(starts_file, before, mode, restarted=False)
    api.wait_state(running, "RUNNING", TASKS)


def test_includetasks_maybe_reads_as_false(api, running) -> None:
    # section 9: anything but true reads as false -> legacy path 204
    response = restart(api, running, {"includeTasks": "maybe"})
    assert response.status_code == 204


@pytest.mark.parametrize(
    "params, code",
    [(None, 204), ({"includeTasks": "true"}, 202), ({"onlyFailed": "true", "includeTasks": "true"}, 202)],
)
def test_restart_failed_connector(api, name, params, code) -> None:
    # 43, 44: a connector failing on start is restarted (and fails again), no tasks involved
    api.create(name, source_config(unique("topic"), tasks=TASKS, **{"connector.start.fail": "true"}))
    api.wait_state(name, "FAILED", 0)
    response = restart(api, name, params)
    assert response.status_code == code, response.text
    if code == 202:
        assert plan_states(response.json()) == ("RESTARTING", {})
    status = api.wait_state(name, "FAILED", 0)
    assert "connector.start.fail" in status["connector"]["trace"]


def test_plain_restart_with_failed_tasks_leaves_tasks(api, failed_tasks, starts_file, kafka) -> None:
    # 45: connector restarted once, tasks not at all
    name, topic = failed_tasks
    before = connector_starts(starts_file)
    response = restart(api, name)
    assert response.status_code == 204
    assert connector_starts(starts_file) == before + 1
    api.wait_state(name, "RUNNING", TASKS, "FAILED")
    assert_task_starts(kafka, topic, name, 1)


def test_only_failed_include_tasks_restarts_failed_tasks_only(api, failed_tasks, starts_file, kafka, mode) -> None:
    # 46: connector 0 restarts, each task 1
    name, topic = failed_tasks
    before = connector_starts(starts_file)
    response = restart(api, name, {"onlyFailed": "true", "includeTasks": "true"})
    assert response.status_code == 202
    assert plan_states(response.json()) == ("RUNNING", {i: "RESTARTING" for i in range(TASKS)})
    assert_connector_restart(starts_file, before, mode, restarted=False)
    api.wait_state(name, "RUNNING", TASKS, "FAILED")
    assert_task_starts(kafka, topic, name, 2)


def test_only_failed_without_tasks_is_a_noop(api, failed_tasks, starts_file, kafka, mode) -> None:
    # 47
    name, topic = failed_tasks
    before = connector_starts(starts_file)
    response = restart(api, name, {"onlyFailed": "true", "includeTasks": "false"})
    assert response.status_code == 202
    assert plan_states(response.json()) == ("RUNNING", {i: "FAILED" for i in range(TASKS)})
    assert_connector_restart(starts_file, before, mode, restarted=False)
    assert_task_starts(kafka, topic, name, 1)


def test_include_tasks_restarts_connector_and_every_task(api, failed_tasks, starts_file, kafka, mode) -> None:
    # 48
    name, topic = failed_tasks
    before = connector_starts(starts_file)
    response = restart(api, name, {"onlyFailed": "false", "includeTasks": "true"})
    assert response.status_code == 202
    assert plan_states(response.json()) == ("RESTARTING", {i: "RESTARTING" for i in range(TASKS)})
    assert_connector_restart(starts_file, before, mode, restarted=True)
    api.wait_state(name, "RUNNING", TASKS, "FAILED")
    assert_task_starts(kafka, topic, name, 2)


def test_only_the_failed_task_is_restarted(api, name) -> None:
    # 49: only task 1 fails (on start); only it shows RESTARTING, and it fails again
    api.create(name, source_config(unique("topic"), tasks=TASKS, throughput=50, **{"task.start.fail": "1"}))
    wanted = {0: "RUNNING", 1: "FAILED", 2: "RUNNING", 3: "RUNNING"}
    wait_for(lambda: plan_states(api.status(name))[1] == wanted, 30, what="only task 1 FAILED")
    response = restart(api, name, {"onlyFailed": "true", "includeTasks": "true"})
    assert response.status_code == 202
    assert plan_states(response.json()) == ("RUNNING", {**wanted, 1: "RESTARTING"})
    wait_for(lambda: plan_states(api.status(name))[1] == wanted, 30, what="task 1 FAILED again, others RUNNING")
