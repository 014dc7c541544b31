"""ConnectorsApplyOperator against the in-memory REST API: dry runs, applying, retries, failures midway."""

from types import SimpleNamespace

import httpx
import pytest

from airflow_provider_connect.as_code.apply import ConnectorsApplyError
from airflow_provider_connect.operators.as_code import ConnectorsApplyOperator
from tests.unit.airflow_provider_connect.bodies import source_config

SECRET = "s3cr3t-pass-77"


def apply(desired, **kw):
    operator = ConnectorsApplyOperator(task_id="apply", desired_state=desired, poll_interval=0, **kw)
    return operator.execute({})


def mutating(fake):
    return [call for call in fake.calls if call[0] != "GET"]


def test_dry_run_plans_and_changes_nothing(fake):
    fake.add("old", {k: str(v) for k, v in source_config().items()})
    result = apply({"a": {"config": source_config()}}, prune=True, dry_run=True)
    assert result["dry_run"] and result["applied"] == []
    assert result["plan"]["summary"]["create"] == 1 and result["plan"]["summary"]["delete"] == 1
    assert mutating(fake) == [] and list(fake.connectors) == ["old"]


def test_apply_reaches_the_desired_state_and_a_second_apply_changes_nothing(fake):
    fake.add("stays", {k: str(v) for k, v in source_config().items()}, state="PAUSED")
    fake.add("flaky", {k: str(v) for k, v in source_config().items()}, task_states=["RUNNING", "FAILED"], tasks=2)
    fake.add("undeclared", {"connector.class": "X"})
    desired = {
        "stays": {"config": source_config()},
        "flaky": {"config": source_config()},
        **{
            f"c{i}": {"config": source_config(topic=f"t{i}"), "state": ["RUNNING", "PAUSED", "STOPPED"][i % 3]}
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


@pytest.mark.parametrize(
    "kip995, requests",
    [
        ("support", [("POST", "/connectors"), ("PUT", "/connectors/a/pause")]),
        # Apache Kafka Connect 3.9 refuses the field (nothing created); a server may also drop it silently
        *[
            (
                server,
                [
                    ("POST", "/connectors"),
                    *([("POST", "/connectors")] if server == "refuse" else []),
                    ("PUT", "/connectors/a/stop"),
                    ("PATCH", "/connectors/a/offsets"),
                    ("PUT", "/connectors/a/pause"),
                ],
            )
            for server in ("refuse", "ignore")
        ],
    ],
)
def test_offsets_are_written_before_the_connector_leaves_stopped(fake, kip995, requests):
    fake.initial_offsets = kip995
    offsets = [{"partition": {"filename": "/in"}, "offset": {"position": 7}}]
    apply({"a": {"config": source_config(), "state": "PAUSED", "offsets": offsets}})
    assert mutating(fake) == requests
    assert fake.connectors["a"]["offsets"] == offsets and fake.connectors["a"]["state"] == "PAUSED"


def test_each_step_has_the_hooks_retries(fake):
    fake.fail("PUT", "/connectors/a/config", httpx.Response(503), httpx.Response(409, json={"message": "rebalance"}))
    fake.add("a", {"connector.class": "X"})
    assert apply({"a": {"config": source_config()}})["applied"] == ["update a"]
    assert fake.connectors["a"]["config"]["topic"] == "t"


def test_a_failure_midway_says_what_was_applied_and_what_was_not(fake):
    fake.add("old", {"connector.class": "X"})
    fake.fail("PUT", "/connectors/b/config", httpx.Response(400, json={"error_code": 400, "message": f"bad {SECRET}"}))
    fake.add("b", {"connector.class": "X"})
    desired = {"a": {"config": source_config()}, "b": {"config": source_config(**{"db.password": SECRET})}}
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
    # read by the plan, by the wait after the restart step, and by the final wait
    fake.fail("GET", "/connectors", *[httpx.Response(200, json={"a": {"status": status, "info": {"config": {}}}})] * 3)
    from airflow_provider_connect.errors import ConnectorStateError

    with pytest.raises(ConnectorStateError, match="boom: bad credentials"):
        apply({"a": {"config": source_config()}})


def test_a_relative_folder_is_read_beside_the_dag_file(fake, tmp_path):
    (tmp_path / "connectors").mkdir()
    (tmp_path / "connectors" / "a.yaml").write_text("config: {connector.class: X}\n")
    operator = ConnectorsApplyOperator(task_id="apply", desired_state="connectors", dry_run="{{ params.dry }}")
    operator.plan_only = "False"  # as rendered from a template
    result = operator.execute({"dag": SimpleNamespace(fileloc=str(tmp_path / "dag.py"))})
    assert result["applied"] == ["create a"] and "a" in fake.connectors


def test_the_wait_outlasts_a_status_that_lags_behind_a_pause(fake):
    config = {k: str(v) for k, v in source_config().items()}
    fake.add("a", config)
    lagging = {"a": {"status": fake._status("a"), "info": fake._info("a")}}  # RUNNING, as before the pause
    fake.fail("GET", "/connectors", httpx.Response(200, json=lagging), httpx.Response(200, json=lagging))
    assert apply({"a": {"config": source_config(), "state": "PAUSED"}})["applied"] == ["pause a"]
    assert fake.calls.count(("GET", "/connectors")) == 3  # the plan's read, the lagging poll, the settled one


def test_after_a_resume_the_next_change_waits_until_the_connector_has_settled(fake):
    # Apache Kafka Connect 3.9's standalone worker writes a resumed connector's task configs later, holding
    # its herder; a pause or resume arriving meanwhile deadlocks it. So nothing is sent until the resumed
    # connector shows up RUNNING with its tasks (a status read in between).
    for name in ("a", "b"):
        fake.add(name, {k: str(v) for k, v in source_config().items()}, state="PAUSED")
    apply({name: {"config": source_config()} for name in ("a", "b")})
    calls = [(method, path) for method, path in fake.calls if path != "/"]
    resumes = [calls.index(("PUT", f"/connectors/{name}/resume")) for name in ("a", "b")]
    between = calls[min(resumes) + 1 : max(resumes)]
    assert ("GET", "/connectors") in between, calls
