"""The connector operators against the in-memory REST API: create, update, delete, state changes and their waits."""

import inspect
import json
import time
from datetime import timedelta

import httpx
import pytest
from airflow.configuration import conf
from airflow.sdk.exceptions import TaskDeferred

from airflow_provider_connect.errors import ConnectApiError, ConnectorConflictError, ConnectorStateError
from airflow_provider_connect.operators.base import load_config
from airflow_provider_connect.operators.connector import (
    ConnectorCreateOperator,
    ConnectorDeleteOperator,
    ConnectorPauseOperator,
    ConnectorRestartOperator,
    ConnectorResumeOperator,
    ConnectorStopOperator,
    ConnectorUpdateConfigOperator,
)
from airflow_provider_connect.triggers.connector import ConnectorStateTrigger
from tests.unit.airflow_provider_connect.conftest import BASE

CONFIG = {
    "connector.class": "SequenceSourceConnector",
    "tasks.max": 2,
    "topic": "t",
    "connection.password": "pg-secret-77",
}
OFFSETS = [{"partition": {"task.id": "c-0"}, "offset": {"saved": 5}}]


def create(**kw):
    return ConnectorCreateOperator(task_id="create", connector_name="c", config=kw.pop("config", CONFIG), **kw)


def test_create_new_connector_returns_redacted_summary(fake):
    result = create(initial_state="STOPPED").execute({})
    assert result["created"] and result["config"]["connection.password"] == "***"
    assert "pg-secret-77" not in json.dumps(result)
    assert fake.connectors["c"]["state"] == "STOPPED"
    assert fake.connectors["c"]["config"]["tasks.max"] == "2"


def test_create_is_idempotent_when_identical(fake):
    create().execute({})
    result = create().execute({})  # a retry
    assert result == {**result, "created": False, "updated": False}
    assert fake.calls.count(("POST", "/connectors")) == 2 and ("PUT", "/connectors/c/config") not in fake.calls


def test_create_different_existing_is_an_error_unless_asked_to_update(fake):
    create().execute({})
    changed = {**CONFIG, "tasks.max": 3}
    with pytest.raises(ConnectorConflictError, match="differing keys: tasks.max") as info:
        create(config=changed).execute({})
    assert "pg-secret-77" not in str(info.value)
    result = create(config=changed, update_if_different=True).execute({})
    assert result["updated"] and fake.connectors["c"]["config"]["tasks.max"] == "3"


def test_create_after_lost_answer_counts_as_success(fake):
    fake.fail_next = [httpx.ReadTimeout("answer lost")]
    # the server did create it before the answer was lost:
    fake.add("c", {k: str(v) for k, v in CONFIG.items()}, state="RUNNING")
    assert create().execute({})["created"] is False
    assert fake.calls.count(("POST", "/connectors")) == 1


@pytest.mark.parametrize("kip995, in_create", [("support", True), ("refuse", False), ("ignore", False)])
def test_create_with_offsets_writes_them_before_the_connector_leaves_stopped(fake, kip995, in_create):
    fake.initial_offsets = kip995
    seen = []
    plain = fake.route

    def watch(method, path, params, body):  # the state the connector is in whenever its offsets change
        if (path.endswith("/offsets") and method == "PATCH") or (method == "POST" and body.get("initial_offsets")):
            seen.append(body.get("initial_state") or fake.connectors["c"]["state"])
        return plain(method, path, params, body)

    fake.route = watch
    result = create(offsets=json.dumps(OFFSETS), initial_state="PAUSED").execute({})
    assert result["created"] and result["offsets"]["written"] == ("create" if in_create else "patch")
    assert result["offsets"]["message"] == "The offsets for this connector have been altered successfully"
    assert fake.connectors["c"]["offsets"] == OFFSETS and fake.connectors["c"]["state"] == "PAUSED"
    assert seen and set(seen) == {"STOPPED"}


def test_create_with_offsets_never_rewinds_a_connector_that_already_moved_on(fake):
    fake.initial_offsets = "support"
    moved_on = [{"partition": {"task.id": "c-0"}, "offset": {"saved": 99}}]
    fake.add("c", {k: str(v) for k, v in CONFIG.items()}, state="RUNNING", offsets=moved_on)
    result = create(offsets={"offsets": OFFSETS}).execute({})  # GET offsets' body is taken too
    assert result["created"] is False and result["offsets"]["written"] is None
    assert fake.connectors["c"]["offsets"] == moved_on
    fake.connectors["c"]["state"] = "STOPPED"  # an earlier try's copy, never started: it gets them
    assert create(offsets=OFFSETS).execute({})["offsets"]["written"] == "patch"
    assert fake.connectors["c"]["offsets"] == OFFSETS and fake.connectors["c"]["state"] == "RUNNING"
    with pytest.raises(ConnectorConflictError, match="differing keys: tasks.max"):
        create(config={**CONFIG, "tasks.max": 3}, offsets=OFFSETS).execute({})
    with pytest.raises(ValueError, match="offsets must be a list"):
        create(offsets='{"partition": {}}').execute({})


def test_config_from_json_string_and_file(tmp_path, fake):
    assert load_config(json.dumps(CONFIG)) == CONFIG
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"name": "c", "config": CONFIG}))
    assert load_config(str(path)) == CONFIG
    with pytest.raises(ValueError, match="not valid JSON"):
        load_config("{nope")
    with pytest.raises(ValueError, match="JSON object"):
        load_config("[1]")
    create(config=str(path)).execute({})
    assert fake.connectors["c"]["config"]["topic"] == "t"


def test_config_is_a_templated_json_field_with_json_extension():
    op = create()
    assert "config" in op.template_fields and ".json" in op.template_ext
    assert op.template_fields_renderers["config"] == "json"


def test_update_config_put_and_patch(fake):
    result = ConnectorUpdateConfigOperator(task_id="u", connector_name="c", config=CONFIG).execute({})
    assert result["created"]
    fake.connectors["c"]["state"] = "STOPPED"
    ConnectorUpdateConfigOperator(task_id="u", connector_name="c", config={"tasks.max": "4"}, patch=False).execute({})
    assert fake.connectors["c"]["config"] == {"tasks.max": "4", "name": "c"}
    assert fake.connectors["c"]["state"] == "STOPPED"


def test_delete_missing_is_success_and_reset_first_orders_calls(fake):
    assert ConnectorDeleteOperator(task_id="d", connector_name="gone").execute({})["deleted"] is False
    with pytest.raises(ConnectApiError):
        ConnectorDeleteOperator(task_id="d", connector_name="gone", missing_ok=False).execute({})
    fake.add("c", {"connector.class": "X"}, offsets=OFFSETS)
    fake.calls.clear()
    result = ConnectorDeleteOperator(task_id="d", connector_name="c", reset_offsets=True).execute({})
    assert result["deleted"] and "reset" in result["offsets_reset"]
    mutating = [c for c in fake.calls if c[0] != "GET"]
    assert mutating == [("PUT", "/connectors/c/stop"), ("DELETE", "/connectors/c/offsets"), ("DELETE", "/connectors/c")]


@pytest.mark.parametrize(
    "op_cls,state",
    [(ConnectorPauseOperator, "PAUSED"), (ConnectorResumeOperator, "RUNNING"), (ConnectorStopOperator, "STOPPED")],
)
def test_state_changes_are_idempotent_and_can_wait(fake, op_cls, state):
    fake.add("c", {"connector.class": "X"}, state="PAUSED" if state == "RUNNING" else "RUNNING", tasks=2)
    for _ in range(2):
        assert op_cls(task_id="x", connector_name="c", wait_for_state=True, poll_interval=0).execute({}) == state
    assert fake.connectors["c"]["state"] == state


def test_resume_wait_fails_on_failed_task(router):
    router.put(f"{BASE}/connectors/c/resume").respond(202)
    router.get(f"{BASE}/connectors/c/status").respond(
        200,
        json={
            "name": "c",
            "connector": {"state": "RUNNING", "worker_id": "w"},
            "tasks": [{"id": 0, "state": "FAILED", "worker_id": "w", "trace": "Boom"}],
        },
    )
    with pytest.raises(ConnectorStateError, match="Boom"):
        ConnectorResumeOperator(task_id="x", connector_name="c", wait_for_state=True, poll_interval=0).execute({})


def test_resume_wait_goes_through_the_state_the_connector_was_in(router):
    # Kafka Connect answers a resume before the connector moves (a distributed worker, or the reference
    # resuming a STOPPED connector): PAUSED or STOPPED shown meanwhile is catching up, not a failure
    router.put(f"{BASE}/connectors/c/resume").respond(202)
    shown = [
        {"name": "c", "connector": {"state": state, "worker_id": "w"}, "tasks": tasks}
        for state, tasks in (
            ("STOPPED", []),
            ("PAUSED", [{"id": 0, "state": "PAUSED", "worker_id": "w"}]),
            ("RUNNING", [{"id": 0, "state": "RUNNING", "worker_id": "w"}]),
        )
    ]
    status = router.get(f"{BASE}/connectors/c/status").mock(side_effect=[httpx.Response(200, json=s) for s in shown])
    resume = ConnectorResumeOperator(task_id="x", connector_name="c", wait_for_state=True, poll_interval=0)
    assert resume.execute({}) == "RUNNING" and status.call_count == 3


def test_restart_reports_plan_and_waits(router):
    plan = {
        "name": "c",
        "connector": {"state": "RUNNING", "worker_id": "w"},
        "tasks": [{"id": 0, "state": "RUNNING", "worker_id": "w"}, {"id": 1, "state": "RESTARTING", "worker_id": "w"}],
    }
    restart = router.post(f"{BASE}/connectors/c/restart").respond(202, json=plan)
    router.get(f"{BASE}/connectors/c/status").mock(
        side_effect=[
            httpx.Response(200, json=plan),
            httpx.Response(200, json={**plan, "tasks": [{**t, "state": "RUNNING"} for t in plan["tasks"]]}),
        ]
    )
    result = ConnectorRestartOperator(
        task_id="r", connector_name="c", include_tasks=True, only_failed=True, wait_for_running=True, poll_interval=0
    ).execute({})
    assert result == {"name": "c", "restarted": ["task-1"]}
    assert dict(restart.calls.last.request.url.params) == {"includeTasks": "true", "onlyFailed": "true"}


def test_plain_restart(router):
    router.post(f"{BASE}/connectors/c/restart").respond(204)
    assert ConnectorRestartOperator(task_id="r", connector_name="c").execute({})["restarted"] == ["connector"]


def test_config_template_renders_from_json_file_with_params(tmp_path, fake):
    from airflow.sdk import DAG

    (tmp_path / "connector.json").write_text(
        '{"connector.class": "SequenceSourceConnector", "topic": "{{ params.topic }}", "tasks.max": 2}'
    )
    with DAG("render", schedule=None, template_searchpath=[str(tmp_path)], params={"topic": "orders"}):
        op = ConnectorCreateOperator(task_id="create", connector_name="{{ params.topic }}-src", config="connector.json")
    op.render_template_fields({"params": {"topic": "orders"}})
    assert op.connector_name == "orders-src"
    assert load_config(op.config) == {"connector.class": "SequenceSourceConnector", "topic": "orders", "tasks.max": 2}
    op.execute({})
    assert fake.connectors["orders-src"]["config"]["topic"] == "orders"


def test_secrets_never_reach_logs(fake, caplog, capsys):
    secret = "pg-secret-77"
    fake.fail_next = [httpx.Response(500, json={"error_code": 500, "message": f"cannot connect with {secret}"})] * 2 + [
        httpx.Response(400, json={"error_code": 400, "message": f"bad password {secret}"})
    ]
    with caplog.at_level("DEBUG"):
        with pytest.raises(ConnectApiError) as info:
            create().execute({})
    out = capsys.readouterr()
    assert secret not in str(info.value)
    assert secret not in caplog.text and secret not in out.out and secret not in out.err
    assert "HTTP 500" in caplog.text + out.out + out.err  # the retries were logged, just not the secret


# ---- deferrable waits (Airflow's convention: `deferrable`, default [operators] default_deferrable) ---------

RESTART_PLAN = {
    "name": "c",
    "connector": {"state": "RUNNING", "worker_id": "w"},
    "tasks": [{"id": 0, "state": "RUNNING", "worker_id": "w"}, {"id": 1, "state": "RESTARTING", "worker_id": "w"}],
}


def test_restart_defers_its_wait_to_the_triggerer_and_returns_the_plan(router):
    router.post(f"{BASE}/connectors/c/restart").respond(202, json=RESTART_PLAN)
    router.get(f"{BASE}/connectors/c/status").respond(200, json=RESTART_PLAN)  # still restarting
    op = ConnectorRestartOperator(
        task_id="r",
        connector_name="c",
        include_tasks=True,
        wait_for_running=True,
        deferrable=True,
        wait_timeout=60,
        poll_interval=3,
    )
    before = time.time()
    with pytest.raises(TaskDeferred) as info:
        op.execute({})
    trigger = info.value.trigger
    assert isinstance(trigger, ConnectorStateTrigger)
    assert (trigger.target_state, trigger.include_tasks, trigger.poll_interval) == ("RUNNING", True, 3)
    assert before + 60 <= trigger.deadline <= time.time() + 60
    assert info.value.timeout == timedelta(seconds=60) and info.value.method_name == "execute_complete"
    result = {"name": "c", "restarted": ["task-1"]}
    assert info.value.kwargs == {"result": result}
    event = {"status": "success", "connector": "c", "state": "RUNNING", "message": "c is RUNNING"}
    assert op.execute_complete({}, event, **info.value.kwargs) == result
    with pytest.raises(ConnectorStateError, match="Boom"):
        op.execute_complete(
            {}, {"status": "failed", "connector": "c", "message": "task 1 FAILED: Boom"}, **info.value.kwargs
        )


def test_deferrable_state_change_returns_at_once_when_already_there(fake):
    fake.add("c", {"connector.class": "X"}, state="RUNNING", tasks=1)
    op = ConnectorStopOperator(task_id="s", connector_name="c", wait_for_state=True, deferrable=True)
    assert op.execute({}) == "STOPPED"  # the fake stops at once: nothing to wait for in the triggerer


@pytest.mark.parametrize(
    "op_cls", [ConnectorPauseOperator, ConnectorResumeOperator, ConnectorStopOperator, ConnectorRestartOperator]
)
def test_waiting_operators_default_deferrable_from_airflow_config(op_cls):
    waiting_base = next(c for c in op_cls.__mro__ if c.__name__ == "_WaitsForState")
    default = inspect.signature(waiting_base.__init__).parameters["deferrable"].default
    assert default is conf.getboolean("operators", "default_deferrable", fallback=False)
    assert op_cls(task_id="x", connector_name="c").deferrable is default


def test_create_can_wait_for_its_initial_state_in_the_triggerer(router):
    router.post(f"{BASE}/connectors").respond(
        201, json={"name": "c", "config": {**CONFIG, "name": "c"}, "tasks": [], "type": "source"}
    )
    router.get(f"{BASE}/connectors/c/status").respond(404, json={"error_code": 404, "message": "not yet"})
    op = create(wait_for_state=True, deferrable=True)
    with pytest.raises(TaskDeferred) as info:
        op.execute({})
    assert info.value.trigger.target_state == "RUNNING"
    assert info.value.kwargs["result"]["created"] is True


def test_create_waits_for_a_stopped_initial_state_here(fake):
    result = create(initial_state="STOPPED", wait_for_state=True, poll_interval=0).execute({})
    assert result["created"] and fake.connectors["c"]["state"] == "STOPPED"
