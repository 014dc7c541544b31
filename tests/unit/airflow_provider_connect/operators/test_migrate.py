import httpx
import pytest

from airflow_provider_connect.errors import ConnectApiError, ConnectorConflictError, ConnectorStateError
from airflow_provider_connect.operators.migrate import ConnectorMigrateOperator

CONFIG = {"connector.class": "SequenceSourceConnector", "tasks.max": "2", "topic": "t"}
OFFSETS = [
    {"partition": {"task.id": "c-0"}, "offset": {"saved": 41}},
    {"partition": {"task.id": "c-1"}, "offset": {"saved": 40}},
]


def migrate(**kw):
    kw.setdefault("connector_name", "c")
    return ConnectorMigrateOperator(
        task_id="m", source_conn_id="source", target_conn_id="target", poll_interval=0, **kw
    )


def mutations(fake):
    return [c for c in fake.calls if c[0] != "GET"]


FALLBACK = [("PUT", "/connectors/c/stop"), ("PATCH", "/connectors/c/offsets"), ("PUT", "/connectors/c/resume")]


@pytest.mark.parametrize(
    "kip995, requests, step",
    [
        # KIP-995: the offsets go in the create (STOPPED, so that a server ignoring them could do no harm)
        ("support", [("POST", "/connectors"), ("PUT", "/connectors/c/resume")], "created on target with its offsets"),
        # Apache Kafka Connect 3.9 refuses the unknown field and creates nothing: KIP-980's recipe
        ("refuse", [("POST", "/connectors"), ("POST", "/connectors"), *FALLBACK], "altered offsets on target"),
        # a server that drops the field silently: the answer lacks offsets_status, so the offsets are PATCHed
        ("ignore", [("POST", "/connectors"), *FALLBACK], "altered offsets on target"),
    ],
)
def test_full_migration_with_offsets_at_create_where_the_target_has_them(fake, fake_target, kip995, requests, step):
    fake_target.initial_offsets = kip995
    fake.add("c", CONFIG, state="RUNNING", tasks=2, offsets=OFFSETS)
    result = migrate().execute({})
    assert result["offsets"] == 2
    assert any(s.startswith(step) for s in result["steps"]), result["steps"]
    assert mutations(fake) == [("PUT", "/connectors/c/stop"), ("DELETE", "/connectors/c")]
    assert mutations(fake_target) == requests
    # offsets were read only after the source had stopped
    assert fake.calls.index(("GET", "/connectors/c/offsets")) > fake.calls.index(("PUT", "/connectors/c/stop"))
    moved = fake_target.connectors["c"]
    assert moved["offsets"] == OFFSETS and moved["state"] == "RUNNING" and moved["config"] == {**CONFIG, "name": "c"}
    assert "c" not in fake.connectors


def test_overrides_keep_stop_and_target_name(fake, fake_target):
    fake.add("c", CONFIG, offsets=OFFSETS)
    migrate(target_connector_name="c2", config_overrides='{"topic": "t2"}', on_source="stop").execute({})
    assert fake.connectors["c"]["state"] == "STOPPED"
    assert fake_target.connectors["c2"]["config"]["topic"] == "t2"
    assert fake_target.connectors["c2"]["config"]["name"] == "c2"


STEPS = [
    ("target", ("POST", "/connectors")),
    ("target", ("PATCH", "/connectors/c/offsets")),
    ("target", ("PUT", "/connectors/c/resume")),
    ("source", ("DELETE", "/connectors/c")),
]


@pytest.mark.parametrize(
    "kip995, fail_at",
    # where the offsets go in the create (KIP-995) there is no PATCH to fail
    [("refuse", step) for step in STEPS] + [("support", step) for step in STEPS if step[1][0] != "PATCH"],
)
def test_retry_after_failure_at_any_step_completes_once(fake, fake_target, kip995, fail_at):
    side, call = fail_at
    fake_target.initial_offsets = kip995
    fake.add("c", CONFIG, state="RUNNING", tasks=2, offsets=OFFSETS)
    broken = fake_target if side == "target" else fake
    original = broken.route

    def fail_once(method, path, params, body, _state={"done": False}):
        if (method, path) == call and not _state["done"]:
            _state["done"] = True
            original(method, path, params, body)  # the change lands, but the answer is an error
            return httpx.Response(400, json={"error_code": 400, "message": "injected"})
        return original(method, path, params, body)

    broken.route = fail_once
    with pytest.raises(ConnectApiError):
        migrate().execute({})
    migrate().execute({})  # Airflow's retry
    moved = fake_target.connectors["c"]
    assert moved["state"] == "RUNNING" and moved["offsets"] == OFFSETS
    assert "c" not in fake.connectors
    patches = fake_target.calls.count(("PATCH", "/connectors/c/offsets"))
    if kip995 == "refuse":
        assert patches == (2 if call == ("PATCH", "/connectors/c/offsets") else 1)
    else:  # only a retry that finds the STOPPED copy of a create whose answer was lost PATCHes
        assert patches == (1 if call == ("POST", "/connectors") else 0)


def test_running_target_offsets_are_never_overwritten(fake, fake_target):
    fake.add("c", CONFIG, state="STOPPED", offsets=OFFSETS)
    progressed = [{"partition": {"task.id": "c-0"}, "offset": {"saved": 99}}]
    fake_target.add("c", CONFIG, state="RUNNING", offsets=progressed)
    assert migrate().execute({})["steps"] == ["deleted on source"]
    assert fake_target.connectors["c"]["offsets"] == progressed


def test_already_migrated_and_missing_everywhere(fake, fake_target):
    fake_target.add("c", CONFIG, state="RUNNING")
    assert migrate().execute({})["steps"] == ["already migrated"]
    with pytest.raises(ConnectorStateError, match="neither"):
        migrate(connector_name="nope").execute({})


def test_conflicting_stopped_target_is_refused(fake, fake_target):
    fake.add("c", CONFIG, offsets=OFFSETS)
    fake_target.add("c", {**CONFIG, "topic": "other"}, state="STOPPED")
    with pytest.raises(ConnectorConflictError, match="topic"):
        migrate().execute({})
    assert ("PATCH", "/connectors/c/offsets") not in fake_target.calls


def test_bad_arguments():
    with pytest.raises(ValueError, match="on_source"):
        migrate(on_source="explode").execute({})
    with pytest.raises(ValueError, match="same connector"):
        ConnectorMigrateOperator(task_id="m", connector_name="c", source_conn_id="x", target_conn_id="x").execute({})


def test_deferrable_migration_waits_for_the_source_stop_in_the_triggerer(fake, fake_target):
    """With `deferrable`, the slow stop on the source is waited for by a trigger; back from it the operator
    carries on from where the move is and finishes it once."""
    from airflow.sdk.exceptions import TaskDeferred

    from airflow_provider_connect.triggers.connector import ConnectorStateTrigger

    fake.add("c", CONFIG, state="RUNNING", tasks=2, offsets=OFFSETS)
    plain_route = fake.route

    def slow_stop(method, path, params, body):  # a running connector stops; its tasks are still being revoked
        was_running = fake.connectors.get("c", {}).get("state") == "RUNNING"
        response = plain_route(method, path, params, body)
        if (method, path) == ("PUT", "/connectors/c/stop") and was_running:
            fake.connectors["c"]["tasks"] = ["UNASSIGNED", "UNASSIGNED"]
        return response

    fake.route = slow_stop
    operator = migrate(deferrable=True)
    with pytest.raises(TaskDeferred) as deferred:
        operator.execute({})
    trigger = deferred.value.trigger
    assert isinstance(trigger, ConnectorStateTrigger)
    assert (trigger.kafka_connect_conn_id, trigger.target_state) == ("source", "STOPPED")
    assert ("GET", "/connectors/c/offsets") not in fake.calls  # offsets are read only once it has stopped
    assert mutations(fake_target) == []

    fake.connectors["c"]["tasks"] = []  # what the trigger saw: STOPPED with no tasks
    event = {"status": "success", "connector": "c", "state": "STOPPED", "message": "c is STOPPED"}
    result = operator.execute_complete({}, event, **deferred.value.kwargs)
    assert result["offsets"] == 2 and "deleted on source" in result["steps"]
    moved = fake_target.connectors["c"]
    assert moved["offsets"] == OFFSETS and moved["state"] == "RUNNING"
    assert "c" not in fake.connectors
