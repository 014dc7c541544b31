"""Connectors as code against the in-memory REST API: loading, planning, the redacted diff, applying."""

import asyncio
import json
import runpy
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from airflow_provider_connect.as_code.apply import ConnectorsApplyError
from airflow_provider_connect.as_code.desired import DesiredStateError, load_desired_state
from airflow_provider_connect.as_code.plan import LiveConnector, make_plan
from airflow_provider_connect.operators.as_code import ConnectorsApplyOperator
from airflow_provider_connect.status import ConnectState

SECRET = "s3cr3t-pass-77"


def source(**extra):
    return {"connector.class": "FileStreamSource", "topic": "t", "tasks.max": 1, **extra}


def apply(desired, **kw):
    operator = ConnectorsApplyOperator(task_id="apply", desired_state=desired, poll_interval=0, **kw)
    return operator.execute({})


def mutating(fake):
    return [call for call in fake.calls if call[0] != "GET"]


# ---- the desired state ------------------------------------------------------------------------------


def test_a_folder_of_json_and_yaml_files(tmp_path):
    (tmp_path / "orders.json").write_text(json.dumps({"config": source(), "state": "paused"}))
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "two.yaml").write_text(
        "name: a\nconfig: {connector.class: X, tasks.max: 2}\n---\nname: b\nconfig: {connector.class: Y}\n"
        "initial_state: STOPPED\noffsets:\n  - {partition: {p: 1}, offset: {o: 5}}\n"
    )
    (tmp_path / "notes.txt").write_text("not a connector")
    desired = load_desired_state(tmp_path)
    assert sorted(desired) == ["a", "b", "orders"]
    assert desired["orders"].state is ConnectState.PAUSED  # the name comes from the file
    assert desired["a"].normalised_config == {"connector.class": "X", "tasks.max": "2", "name": "a"}
    assert desired["b"].state is ConnectState.STOPPED
    assert desired["b"].offsets_payload() == [{"partition": {"p": 1}, "offset": {"o": 5}}]


@pytest.mark.parametrize(
    "spec,message",
    [
        ({"config": source(), "state": "FAILED"}, "state must be one of"),
        ({"config": source(), "state": "SLEEPING"}, "Unknown Kafka Connect state"),
        ({"config": {"k": None}}, "null"),
        ({"config": source(name="other")}, "is not the connector's name"),
        ({"config": source(), "replicas": 2}, "replicas"),
        ({"config": source(), "offsets": [{"partition": {}}]}, "offsets.0.offset"),
    ],
)
def test_a_bad_connector_is_named_with_what_is_wrong(tmp_path, spec, message):
    (tmp_path / "c.json").write_text(json.dumps(spec))
    with pytest.raises(DesiredStateError, match=message) as info:
        load_desired_state(tmp_path)
    assert "c.json" in str(info.value)


def test_a_name_declared_twice_names_both_files(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps({"name": "x", "config": source()}))
    (tmp_path / "b.yaml").write_text("name: x\nconfig: {connector.class: Y}\n")
    with pytest.raises(DesiredStateError, match=r"'x' is declared twice: in .*a.json and .*b.yaml"):
        load_desired_state(tmp_path)
    with pytest.raises(DesiredStateError, match="neither a folder nor a file"):
        load_desired_state(tmp_path / "missing")


# ---- the plan ----------------------------------------------------------------------------------------


def live(name, state=ConnectState.RUNNING, failed=(), **config):
    return LiveConnector(name, {**{k: str(v) for k, v in source().items()}, **config, "name": name}, state, failed)


def test_the_plan_covers_every_step_and_leaves_the_rest():
    desired = load_desired_state(
        {
            "new": {"config": source(), "offsets": [{"partition": {"f": 1}, "offset": {"p": 3}}]},
            "same": {"config": source()},
            "changed": {"config": source(**{"tasks.max": 2, "batch.size": 10})},
            "to-pause": {"config": source(), "state": "PAUSED"},
            "to-resume": {"config": source()},
            "to-stop": {"config": source(), "state": "STOPPED"},
            "failed": {"config": source()},
            "failed-paused": {"config": source(), "state": "PAUSED"},
            "moving": {"config": source(), "state": "PAUSED"},
        }
    )
    cluster = {
        c.name: c
        for c in [
            live("same"),
            live("changed"),
            live("to-pause"),
            live("to-resume", ConnectState.STOPPED),
            live("to-stop", ConnectState.PAUSED),
            live("failed", ConnectState.RUNNING, ("task-1",)),
            live("failed-paused", ConnectState.FAILED, ("connector",)),
            live("moving", ConnectState.UNASSIGNED),
            live("undeclared"),
        ]
    }
    plan = make_plan(desired, cluster)
    steps = {c.name: [s.value for s in c.steps] for c in plan.connectors}
    assert steps == {
        "new": ["create"],
        "changed": ["update"],
        "to-pause": ["pause"],
        "to-resume": ["resume"],
        "to-stop": ["stop"],
        "failed": ["restart"],
        "failed-paused": ["pause", "restart"],
    }
    assert plan.unchanged == 2  # same, and moving (on its way somewhere: left to arrive)
    assert make_plan(desired, cluster, prune=True).counts["delete"] == 1
    changed = next(c for c in plan.connectors if c.name == "changed")
    assert [(x.key, x.old, x.new) for x in changed.changes] == [("batch.size", None, "10"), ("tasks.max", "1", "2")]


def test_the_diff_and_the_xcom_never_show_a_secret():
    desired = load_desired_state(
        {
            "db": {"config": source(**{"connection.password": SECRET, "connection.url": f"jdbc:pg://u:{SECRET}@h/db"})},
            "kept": {"config": source(**{"db.password": "new-pass-1234"})},
        }
    )
    cluster = {"kept": live("kept", **{"db.password": "old-pass-5678"}), "gone": live("gone")}
    plan = make_plan(desired, cluster, prune=True, where="prod")
    text = plan.render()
    dumped = json.dumps(plan.to_dict())
    for secret in (SECRET, "new-pass-1234", "old-pass-5678"):
        assert secret not in text and secret not in dumped
    assert "+ db (create, RUNNING)" in text
    assert "    + connection.password: ***" in text
    assert "    + connection.url: jdbc:pg://u:***@h/db" in text  # the value scrubbed wherever it appears
    assert "~ kept\n    ~ db.password: *** -> ***" in text  # a changed secret shows that it changed
    assert "- gone (delete; it is RUNNING and not declared)" in text
    assert text.startswith("Plan for prod: 1 to create, 1 to update, 1 to delete (0 unchanged)")


# ---- the operator ------------------------------------------------------------------------------------


def test_dry_run_plans_and_changes_nothing(fake):
    fake.add("old", {k: str(v) for k, v in source().items()})
    result = apply({"a": {"config": source()}}, prune=True, dry_run=True)
    assert result["dry_run"] and result["applied"] == []
    assert result["plan"]["summary"]["create"] == 1 and result["plan"]["summary"]["delete"] == 1
    assert mutating(fake) == [] and list(fake.connectors) == ["old"]


def test_apply_reaches_the_desired_state_and_a_second_apply_changes_nothing(fake):
    fake.add("stays", {k: str(v) for k, v in source().items()}, state="PAUSED")
    fake.add("flaky", {k: str(v) for k, v in source().items()}, task_states=["RUNNING", "FAILED"], tasks=2)
    fake.add("undeclared", {"connector.class": "X"})
    desired = {
        "stays": {"config": source()},
        "flaky": {"config": source()},
        **{
            f"c{i}": {"config": source(topic=f"t{i}"), "state": ["RUNNING", "PAUSED", "STOPPED"][i % 3]}
            for i in range(9)
        },
    }
    first = apply(desired, prune=True)
    assert sorted(first["applied"]) == sorted(
        [f"create c{i}" for i in range(9)] + ["resume stays", "restart flaky", "delete undeclared"]
    )
    assert {n: c["state"] for n, c in fake.connectors.items()} == {
        "stays": "RUNNING",
        "flaky": "RUNNING",
        **{f"c{i}": ["RUNNING", "PAUSED", "STOPPED"][i % 3] for i in range(9)},
    }
    assert fake.connectors["flaky"]["tasks"] == ["RUNNING", "RUNNING"]
    before = len(mutating(fake))
    second = apply(desired, prune=True)
    assert second["plan"]["connectors"] == [] and second["applied"] == []
    assert len(mutating(fake)) == before


def test_offsets_are_written_between_a_stopped_create_and_the_target_state(fake):
    offsets = [{"partition": {"filename": "/in"}, "offset": {"position": 7}}]
    apply({"a": {"config": source(), "state": "PAUSED", "offsets": offsets}})
    assert mutating(fake) == [
        ("POST", "/connectors"),
        ("PATCH", "/connectors/a/offsets"),
        ("PUT", "/connectors/a/pause"),
    ]
    assert fake.connectors["a"]["offsets"] == offsets and fake.connectors["a"]["state"] == "PAUSED"


def test_each_step_has_the_hooks_retries(fake):
    fake.fail("PUT", "/connectors/a/config", httpx.Response(503), httpx.Response(409, json={"message": "rebalance"}))
    fake.add("a", {"connector.class": "X"})
    assert apply({"a": {"config": source()}})["applied"] == ["update a"]
    assert fake.connectors["a"]["config"]["topic"] == "t"


def test_a_failure_midway_says_what_was_applied_and_what_was_not(fake):
    fake.add("old", {"connector.class": "X"})
    fake.fail("PUT", "/connectors/b/config", httpx.Response(400, json={"error_code": 400, "message": f"bad {SECRET}"}))
    fake.add("b", {"connector.class": "X"})
    desired = {"a": {"config": source()}, "b": {"config": source(**{"db.password": SECRET})}}
    with pytest.raises(ConnectorsApplyError) as info:
        apply(desired, prune=True, max_concurrency=1)
    error = info.value
    assert error.applied == ["create a"] and error.not_tried == ["delete old"]
    assert error.failed[0].startswith("b: PUT /connectors/b/config failed with HTTP 400")
    assert SECRET not in str(error) and "old" in fake.connectors  # nothing is pruned after a failure
    assert apply(desired, prune=True, dry_run=True)["plan"]["summary"] == {
        **dict.fromkeys(["create", "update", "resume", "pause", "stop", "restart", "delete"], 0),
        "update": 1,
        "delete": 1,
    }


def test_a_connector_that_fails_after_apply_fails_the_task_with_its_trace(fake, router):
    fake.add("a", {"connector.class": "X"})
    status = {
        "name": "a",
        "connector": {"state": "RUNNING", "worker_id": "w"},
        "tasks": [{"id": 0, "state": "FAILED", "worker_id": "w", "trace": "boom: bad credentials"}],
    }
    fake.fail("GET", "/connectors", *[httpx.Response(200, json={"a": {"status": status, "info": {"config": {}}}})] * 2)
    from airflow_provider_connect.errors import ConnectorStateError

    with pytest.raises(ConnectorStateError, match="boom: bad credentials"):
        apply({"a": {"config": source()}})


def test_a_relative_folder_is_read_beside_the_dag_file(fake, tmp_path):
    (tmp_path / "connectors").mkdir()
    (tmp_path / "connectors" / "a.yaml").write_text("config: {connector.class: X}\n")
    operator = ConnectorsApplyOperator(task_id="apply", desired_state="connectors", dry_run="{{ params.dry }}")
    operator.plan_only = "False"  # as rendered from a template
    result = operator.execute({"dag": SimpleNamespace(fileloc=str(tmp_path / "dag.py"))})
    assert result["applied"] == ["create a"] and "a" in fake.connectors


def test_the_wait_outlasts_a_status_that_lags_behind_a_pause(fake):
    config = {k: str(v) for k, v in source().items()}
    fake.add("a", config)
    lagging = {"a": {"status": fake._status("a"), "info": fake._info("a")}}  # RUNNING, as before the pause
    fake.fail("GET", "/connectors", httpx.Response(200, json=lagging), httpx.Response(200, json=lagging))
    assert apply({"a": {"config": source(), "state": "PAUSED"}})["applied"] == ["pause a"]
    assert fake.calls.count(("GET", "/connectors")) == 3  # the plan's read, the lagging poll, the settled one


# ---- on a change: the DAG and its watcher's trigger ----------------------------------------------------


def first_event(trigger, timeout=10):
    async def run():
        async for event in trigger.run():
            return event.payload

    return asyncio.run(asyncio.wait_for(run(), timeout))


def test_the_drift_trigger_fires_on_a_change_not_on_a_failure(fake, tmp_path):
    from airflow_provider_connect.triggers.as_code import DesiredStateDriftTrigger

    config = {k: str(v) for k, v in source().items()}
    fake.add("a", config, task_states=["FAILED"])
    (tmp_path / "a.json").write_text(json.dumps({"config": source()}))
    trigger = DesiredStateDriftTrigger(str(tmp_path), poll_interval=0)
    with pytest.raises(TimeoutError):  # only a FAILED task: restart_failed_connectors_on_failure's job
        first_event(trigger, timeout=0.5)
    (tmp_path / "b.yaml").write_text(f"config: {json.dumps(source(**{'db.password': SECRET}))}\n")
    event = first_event(trigger)
    assert event["status"] == "drift" and event["connectors"] == ["b"]
    assert "1 to create" in event["message"] and SECRET not in json.dumps(event)
    assert DesiredStateDriftTrigger(**trigger.serialize()[1]).serialize() == trigger.serialize()


def test_the_dag_applies_the_folder_hourly_and_when_the_watcher_fires(monkeypatch, tmp_path):
    from airflow.sdk import CronTriggerTimetable

    from airflow_provider_connect.triggers.as_code import DesiredStateDriftTrigger

    monkeypatch.setenv("KAFKA_CONNECT_DESIRED_STATE", str(tmp_path))
    monkeypatch.setenv("KAFKA_CONNECT_AS_CODE_PRUNE", "true")
    dag = runpy.run_path(str(Path(__file__).resolve().parents[4] / "dags" / "connectors_as_code.py"))["dag"]
    (task,) = dag.tasks
    assert isinstance(task, ConnectorsApplyOperator) and task.desired_state == str(tmp_path) and task.prune
    assert isinstance(dag.timetable.timetable, CronTriggerTimetable)
    (trigger,) = [w.trigger for asset in dag.timetable.asset_condition.objects for w in asset.watchers]
    assert isinstance(trigger, DesiredStateDriftTrigger) and trigger.desired_state == str(tmp_path) and trigger.prune
