"""The DAGs under a real Airflow 3 deployment: api-server, scheduler, dag-processor and triggerer as separate
processes, LocalExecutor, the metadata database on PostgreSQL (tests/support/airflow_deployment.py),
driven through Airflow's REST API, against two live Connect workers.

- `connector_migration` moves a running source between the workers with deferrable sensors: the run
  succeeds, the sensor waited in the triggerer (its trigger fired the event that resumed it), the
  migration's OpenLineage COMPLETE event names the topic, and the source continues exactly where it
  stopped (every task's sequence is 0..N-1 once in the topic);
- `restart_failed_connectors_on_failure` runs on the FAILED event of its AssetWatcher (the triggerer polls
  the cluster) and restarts the failed task;
- `connectors_as_code` applies its folder when a file changes (its AssetWatcher's trigger sees the cluster
  differ from the folder): the connectors reach their declared states and offsets, and the task log shows
  the plan as a diff with the secret redacted;
- the provider's Kafka Connect page, opened from Airflow's navigation in Chromium, lists both workers'
  connectors, shows a task failed on purpose with its trace, restarts it with one click and shows it
  RUNNING; a viewer (who may not read the connections) sees no cluster and may not act.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.integration.airflow.browser import chromium, log_in, view_frame
from tests.integration.airflow.test_dags import create, saved_by_task, states
from tests.integration.scenarios.helpers import Kafka
from tests.support.airflow_deployment import AirflowDeployment
from tests.support.broker import unique
from tests.support.env import require
from tests.support.postgres import PostgresServer, postgres_bin
from tests.support.process import run_side_by_side
from tests.support.worker import WorkerProcess, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.airflow, pytest.mark.timeout(900)]

MIGRATION = "connector_migration"
ON_FAILURE = "restart_failed_connectors_on_failure"
AS_CODE = "connectors_as_code"


@dataclass
class Stack:
    deployment: AirflowDeployment
    old: WorkerProcess
    new: WorkerProcess


@pytest.fixture(scope="module")
def desired_folder(tmp_path_factory) -> Path:
    """connectors_as_code's folder: empty until a test writes connector files into it."""
    return tmp_path_factory.mktemp("desired-state")


@pytest.fixture(scope="module")
def stack(tmp_path_factory, bootstrap_servers, desired_folder) -> Iterator[Stack]:
    """The two Connect workers and the Airflow deployment. The workers, PostgreSQL and Airflow's schema
    migration start side by side, and all but PostgreSQL stop side by side: none needs another to start or
    stop (Airflow's processes only need the workers' URLs)."""
    try:
        import airflow  # noqa: F401
    except ImportError:
        require(False, "Apache Airflow")
    require(postgres_bin() is not None, "PostgreSQL (Debian package postgresql)")
    workers_root = tmp_path_factory.mktemp("deployment-workers")
    old = WorkerProcess(workers_root / "old", bootstrap_servers)
    new = WorkerProcess(workers_root / "new", bootstrap_servers)

    def connection(url: str) -> str:  # the extra names the workers' Kafka cluster, for lineage
        return json.dumps(
            {"conn_type": "kafka_connect", "host": url, "extra": {"kafka_bootstrap_servers": bootstrap_servers}}
        )

    env = {
        "AIRFLOW_CONN_KAFKA_CONNECT_SOURCE": connection(old.url),
        "AIRFLOW_CONN_KAFKA_CONNECT_TARGET": connection(new.url),
        "AIRFLOW_CONN_KAFKA_CONNECT_DEFAULT": connection(old.url),
        "KAFKA_CONNECT_WATCH_INTERVAL_S": "1",
        "KAFKA_CONNECT_DESIRED_STATE": str(desired_folder),
        "KAFKA_CONNECT_AS_CODE_INTERVAL_S": "1",
    }
    pg = PostgresServer()
    airflow_deployment = AirflowDeployment(
        tmp_path_factory.mktemp("airflow-deployment"),
        pg.url("airflow"),
        ["connector_migration.py", "restart_failed_connectors_on_failure.py", "connectors_as_code.py"],
        env,
        users={"viewer": "viewer"},
    )

    def database() -> None:
        pg.start()
        pg.create_database("airflow")
        airflow_deployment.migrate_db()

    try:
        run_side_by_side([old.start, new.start, database])
        airflow_deployment.start()
        yield Stack(airflow_deployment, old, new)
    finally:
        run_side_by_side([airflow_deployment.stop, old.stop, new.stop])
        pg.stop()


@pytest.fixture(scope="module")
def connect_workers(stack: Stack) -> tuple[WorkerProcess, WorkerProcess]:
    return stack.old, stack.new


@pytest.fixture(scope="module")
def deployment(stack: Stack) -> AirflowDeployment:
    return stack.deployment


def sequences(kafka: Kafka, topic: str) -> dict[int, list[int]]:
    """Seqnos per SequenceSource task, in topic order (JsonConverter with schemas)."""
    per_task: dict[int, list[int]] = defaultdict(list)
    for _, _, _, value in sorted(kafka.read_all(topic), key=lambda r: (r[0], r[1])):
        payload = json.loads(value)["payload"]
        per_task[payload["task"]].append(payload["seqno"])
    return per_task


def lineage_outputs(deployment: AirflowDeployment, job: str, run_id: str) -> set[tuple[str, str]]:
    """(namespace, name) of the outputs in the COMPLETE events of a task's job, in the given DAG run."""
    if not deployment.lineage_file.exists():
        return set()
    outputs: set[tuple[str, str]] = set()
    for line in deployment.lineage_file.read_text().splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a line being written
        in_run = run_id in json.dumps(event.get("run"))  # the run's `airflow` facet names the DAG run
        if event.get("eventType") == "COMPLETE" and event.get("job", {}).get("name") == job and in_run:
            outputs.update((o["namespace"], o["name"]) for o in event.get("outputs") or [])
    return outputs


def test_migration_runs_under_the_scheduler_with_deferred_sensors(
    deployment: AirflowDeployment, connect_workers, bootstrap_servers: str
) -> None:
    old, new = connect_workers
    kafka = Kafka(bootstrap_servers)
    topic, source = kafka.create_topic(unique("deploy"), partitions=2), unique("seq")
    # Tasks that take 15 s to start: the sensor's first check finds the moved connector's tasks not yet
    # RUNNING, so it defers to the triggerer (a deferrable sensor checks once before deferring).
    create(
        old,
        source,
        {
            "connector.class": "SequenceSourceConnector",
            "topic": topic,
            "tasks.max": "2",
            "throughput": "40",
            "task.own.partition": "true",
            "task.start.block.ms": "15000",
        },
    )
    wait_for(
        lambda: len(saved_by_task(old, source)) == 2 and min(saved_by_task(old, source).values()) >= 20,
        90,
        0.2,
        "the source to run on old",
    )
    deployment.wait_dag(MIGRATION)

    run_id = deployment.trigger(MIGRATION, {"connector": source})
    run = deployment.wait_run(MIGRATION, run_id)
    assert run["state"] == "success", deployment.log("scheduler")[-4000:]
    assert deployment.task_states(MIGRATION, run_id) == {
        "migrate": "success",
        "wait_running_on_target": "success",
        "report": "success",
    }
    # the sensor deferred: it left its worker slot, and the triggerer ran its trigger and fired the event
    events = [
        e["event"] + " " + str(e.get("result", ""))
        for e in deployment.task_log(MIGRATION, run_id, "wait_running_on_target")
    ]
    assert any(e.startswith("Pausing task as DEFERRED") for e in events), events
    assert any(
        e.startswith("Trigger fired event") and "'state': 'RUNNING', 'status': 'success'" in e for e in events
    ), events
    assert source not in httpx.get(old.url + "/connectors", timeout=30).json()
    # OpenLineage: the migration's COMPLETE event names the moved source's topic as its output
    namespace = "kafka://" + bootstrap_servers.split(",")[0]
    wait_for(
        lambda: (namespace, topic) in lineage_outputs(deployment, f"{MIGRATION}.migrate", run_id),
        60,
        0.5,
        f"an OpenLineage COMPLETE event of {MIGRATION}.migrate with output {namespace} {topic}",
    )
    moved_from = saved_by_task(new, source)

    wait_for(
        lambda: min(saved_by_task(new, source).values()) >= max(moved_from.values()) + 20,
        90,
        0.2,
        "the source to continue on the new worker",
    )
    assert httpx.put(f"{new.url}/connectors/{source}/stop", timeout=30).status_code == 204
    wait_for(lambda: states(new, source) == ("STOPPED", []), 60, 0.2, "the source to stop")
    final = saved_by_task(new, source)
    per_task = sequences(kafka, topic)
    for task_id, saved in final.items():
        index = int(task_id.rsplit("-", 1)[1])
        assert per_task[index] == list(range(saved)), f"task {index}: a gap or a repeat across the move"


def test_a_failed_task_is_restarted_by_the_failure_event(
    deployment: AirflowDeployment, connect_workers, bootstrap_servers: str
) -> None:
    old, _ = connect_workers
    kafka = Kafka(bootstrap_servers)
    topic, name = kafka.create_topic(unique("fails")), unique("flaky")
    deployment.wait_dag(ON_FAILURE)
    before = {run["dag_run_id"] for run in deployment.runs(ON_FAILURE)}
    # the task's first instance produces 5 records and fails; the event-driven DAG restarts it, and the
    # restarted instance runs on
    create(
        old,
        name,
        {
            "connector.class": "SequenceSourceConnector",
            "topic": topic,
            "tasks.max": "1",
            "task.fail.after.records": "5",
            "task.fail.times": "1",
            "throughput": "50",
        },
    )

    def a_finished_new_run() -> dict | None:
        for run in deployment.runs(ON_FAILURE):
            if run["dag_run_id"] not in before and run["state"] in ("success", "failed"):
                return run
        return None

    try:
        run = wait_for(a_finished_new_run, 240, 1, f"{ON_FAILURE} to run on the FAILED event")
        tasks = deployment.task_states(ON_FAILURE, run["dag_run_id"])
        assert (run["run_type"], run["state"], tasks) == (
            "asset_triggered",
            "success",
            {"find_failed": "success", "restart_failed": "success", "report": "success"},
        ), (run, tasks)
        # the event came from the triggerer: the watcher's trigger (it belongs to no task) fired for this
        # connector's failed task
        assert any("task_id=None" in line and name in line for line in deployment.fired_trigger_events())
        # restarted, the task runs on from its committed offset: 0, 1, 2, ... with no gap
        wait_for(
            lambda: (
                states(old, name) == ("RUNNING", ["RUNNING"]) and saved_by_task(old, name).get(f"{name}-0", 0) >= 20
            ),
            120,
            0.5,
            "the restarted task to run on",
        )
        seqnos = sequences(kafka, topic)[0]
        assert seqnos[:20] == list(range(20)), seqnos[:40]
    finally:
        httpx.delete(f"{old.url}/connectors/{name}", timeout=30)


def test_connectors_as_code_applies_the_folder_when_a_file_changes(
    deployment: AirflowDeployment, connect_workers, desired_folder: Path, bootstrap_servers: str
) -> None:
    old, _ = connect_workers
    topic, data = unique("as-code"), desired_folder.parent / "as-code-data"
    data.mkdir()
    secret = "deploy-secret-2718"
    deployment.wait_dag(AS_CODE)
    before = {run["dag_run_id"] for run in deployment.runs(AS_CODE)}
    files = {}
    for name, state in (("code-running", "RUNNING"), ("code-paused", "PAUSED"), ("code-stopped", "STOPPED")):
        files[name] = data / f"{name}.txt"
        files[name].write_text("one\ntwo\n")
        spec = {"config": {"connector.class": "FileStreamSource", "file": str(files[name]), "topic": topic}}
        spec["state"] = state
        if state == "STOPPED":
            spec["offsets"] = [{"partition": {"filename": str(files[name])}, "offset": {"position": 4}}]
        if state == "RUNNING":
            spec["config"]["db.password"] = secret
        (desired_folder / f"{name}.yaml").write_text(json.dumps(spec))

    def the_first_new_run_finished() -> dict | None:
        # the watcher may fire again while the first run applies; that later run finds nothing to do
        new = sorted(
            (r for r in deployment.runs(AS_CODE) if r["dag_run_id"] not in before), key=lambda r: r["run_after"]
        )
        return new[0] if new and new[0]["state"] in ("success", "failed") else None

    run = wait_for(the_first_new_run_finished, 180, 1, f"{AS_CODE} to run on the change")
    assert (run["run_type"], run["state"]) == ("asset_triggered", "success"), run
    try:
        assert {name: states(old, name)[0] for name in files} == {
            "code-running": "RUNNING",
            "code-paused": "PAUSED",
            "code-stopped": "STOPPED",
        }
        stopped = httpx.get(f"{old.url}/connectors/code-stopped/offsets", timeout=30).json()["offsets"]
        assert stopped == [{"partition": {"filename": str(files["code-stopped"])}, "offset": {"position": 4}}]
        log = json.dumps(deployment.task_log(AS_CODE, run["dag_run_id"], "apply"))
        assert "+ code-running (create, RUNNING)" in log and "db.password: ***" in log
        assert "+ code-stopped (create, STOPPED, offsets for 1 partition(s))" in log
        assert secret not in log
    finally:
        for name in files:
            (desired_folder / f"{name}.yaml").unlink()
            httpx.delete(f"{old.url}/connectors/{name}", timeout=30)


VIEW = "/kafka-connect"


def test_the_kafka_connect_view_shows_a_failed_task_and_restarts_it_with_one_click(
    deployment: AirflowDeployment, connect_workers, bootstrap_servers: str, tmp_path: Path
) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    old, new = connect_workers
    kafka = Kafka(bootstrap_servers)
    healthy, flaky, paused = unique("view-ok"), unique("view-flaky"), unique("view-paused")
    source = {"connector.class": "SequenceSourceConnector", "tasks.max": "1", "throughput": "5"}
    create(old, healthy, {**source, "topic": kafka.create_topic(unique("view"))})
    # on the worker no failure watcher looks at: the page, not a DAG, restarts it
    create(
        new,
        flaky,
        {**source, "topic": kafka.create_topic(unique("view")), "task.fail.after.records": "3", "task.fail.times": "1"},
    )
    body = {"name": paused, "config": {**source, "topic": unique("view")}, "initial_state": "PAUSED"}
    assert httpx.post(f"{new.url}/connectors", json=body, timeout=30).status_code == 201
    wait_for(lambda: states(new, flaky) == ("RUNNING", ["FAILED"]), 60, 0.2, "the task to fail on purpose")

    def row(name: str):
        return browser.find_element(By.CSS_SELECTOR, f"tr[data-connector='{name}']")

    def task_states(name: str) -> list[str]:
        return [t.get_attribute("data-state") for t in row(name).find_elements(By.CSS_SELECTOR, ".task")]

    try:
        with chromium(tmp_path / "chromium") as browser:
            log_in(browser, deployment.url, "admin", deployment.passwords["admin"])
            browser.get(deployment.url + "/plugin/kafka-connect")  # the view's place in Airflow's navigation
            frame = WebDriverWait(browser, 60).until(lambda b: view_frame(b, VIEW))
            browser.switch_to.frame(frame)
            # the view re-renders as it refreshes: an element found just before goes stale, and is found again
            wait = WebDriverWait(browser, 60, poll_frequency=0.2, ignored_exceptions=[StaleElementReferenceException])
            wait.until(lambda b: task_states(flaky) == ["FAILED"] and task_states(healthy) == ["RUNNING"])
            assert row(paused).get_attribute("data-state") == "PAUSED"
            sections = {s.get_attribute("data-conn-id") for s in browser.find_elements(By.CSS_SELECTOR, "section")}
            assert {"kafka_connect_source", "kafka_connect_target"} <= sections
            assert "on 127.0.0.1:" in row(flaky).text  # the task's worker
            row(flaky).find_element(By.CSS_SELECTOR, ".task details summary").click()
            assert "task.fail.after.records=3" in row(flaky).find_element(By.CSS_SELECTOR, ".task pre").text

            Select(browser.find_element(By.ID, "state-filter")).select_by_value("FAILED")
            shown = [
                r.get_attribute("data-connector") for r in browser.find_elements(By.CSS_SELECTOR, "tr[data-connector]")
            ]
            assert shown == [flaky], shown
            browser.switch_to.default_content()
            browser.save_screenshot(str(tmp_path / "kafka-connect-view.png"))  # kept with the test's files
            browser.switch_to.frame(frame)

            row(flaky).find_element(By.CSS_SELECTOR, "button[data-action='restart-failed']").click()
            Select(browser.find_element(By.ID, "state-filter")).select_by_value("RUNNING")
            wait.until(lambda b: task_states(flaky) == ["RUNNING"])
            assert "Restarting task 0 of " + flaky in browser.find_element(By.ID, "message").text
        assert states(new, flaky) == ("RUNNING", ["RUNNING"])

        # A viewer may not read the Kafka Connect connections: no cluster on the page, no action
        assert deployment.api("GET", f"{VIEW}/api/overview", user="viewer").json() == {"connections": []}
        denied = deployment.api(
            "POST",
            f"{VIEW}/api/connections/kafka_connect_target/connectors/{flaky}/stop",
            user="viewer",
            headers={"X-Kafka-Connect-View": "1"},
        )
        assert denied.status_code == 403 and states(new, flaky)[0] == "RUNNING"
        assert httpx.get(f"{deployment.url}{VIEW}/api/overview", timeout=30).status_code == 401  # no user at all
    finally:
        for worker, name in ((old, healthy), (new, flaky), (new, paused)):
            httpx.delete(f"{worker.url}/connectors/{name}", timeout=30)
