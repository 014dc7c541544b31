"""Connectors as code: the plan from the desired state and the cluster's, and its redacted diff."""

import json

from airflow_provider_connect.as_code.desired import load_desired_state
from airflow_provider_connect.as_code.plan import LiveConnector, make_plan
from airflow_provider_connect.status import ConnectState
from tests.unit.airflow_provider_connect.bodies import source_config

SECRET = "s3cr3t-pass-77"


def live(name, state=ConnectState.RUNNING, failed=(), **config):
    return LiveConnector(
        name, {**{k: str(v) for k, v in source_config().items()}, **config, "name": name}, state, failed
    )


def test_the_plan_covers_every_step_and_leaves_the_rest():
    desired = load_desired_state(
        {
            "new": {"config": source_config(), "offsets": [{"partition": {"f": 1}, "offset": {"p": 3}}]},
            "same": {"config": source_config()},
            "changed": {"config": source_config(**{"tasks.max": 2, "batch.size": 10})},
            "to-pause": {"config": source_config(), "state": "PAUSED"},
            "to-resume": {"config": source_config()},
            "to-stop": {"config": source_config(), "state": "STOPPED"},
            "failed": {"config": source_config()},
            "failed-paused": {"config": source_config(), "state": "PAUSED"},
            "moving": {"config": source_config(), "state": "PAUSED"},
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
            "db": {
                "config": source_config(
                    **{"connection.password": SECRET, "connection.url": f"jdbc:pg://u:{SECRET}@h/db"}
                )
            },
            "kept": {"config": source_config(**{"db.password": "new-pass-1234"})},
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
