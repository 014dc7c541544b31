import pytest

from airflow_provider_connect.offsets import committed_sink_offsets, evaluate_offsets, parse_targets, to_wire
from airflow_provider_connect.redaction import redact_config, scrub, secret_values
from airflow_provider_connect.status import (
    FAILED_STATES,
    NON_TERMINAL_STATES,
    TERMINAL_STATES,
    ConnectState,
    Verdict,
    evaluate_status,
)


def status(state, tasks=()):
    return {
        "name": "c",
        "connector": {"state": state, "worker_id": "w:1"},
        "tasks": [
            {"id": i, "state": s, "worker_id": "w:1", **({"trace": "Boom"} if s == "FAILED" else {})}
            for i, s in enumerate(tasks)
        ],
    }


def test_state_sets_partition_all_states():
    assert TERMINAL_STATES | NON_TERMINAL_STATES == set(ConnectState)
    assert not TERMINAL_STATES & NON_TERMINAL_STATES
    assert FAILED_STATES <= TERMINAL_STATES
    assert ConnectState.parse("running") is ConnectState.RUNNING
    with pytest.raises(ValueError, match="Unknown Kafka Connect state"):
        ConnectState.parse("DESTROYED")


@pytest.mark.parametrize(
    "st,target,include,verdict,fragment",
    [
        (None, "RUNNING", True, Verdict.WAITING, "no status"),
        (status("UNASSIGNED"), "RUNNING", True, Verdict.WAITING, "connector c"),
        (status("RUNNING"), "RUNNING", True, Verdict.WAITING, "0 task(s)"),
        (status("RUNNING"), "RUNNING", False, Verdict.SUCCESS, "is RUNNING"),
        (status("RUNNING", ["RUNNING", "RESTARTING"]), "RUNNING", True, Verdict.WAITING, "task c-1"),
        (status("RUNNING", ["RUNNING", "RUNNING"]), "RUNNING", True, Verdict.SUCCESS, "2 task(s)"),
        (status("RUNNING", ["RUNNING", "FAILED"]), "RUNNING", True, Verdict.FAILED, "Boom"),
        (status("RUNNING", ["RUNNING", "FAILED"]), "RUNNING", False, Verdict.SUCCESS, "is RUNNING"),
        (status("FAILED"), "STOPPED", True, Verdict.FAILED, "FAILED"),
        (status("PAUSED", ["PAUSED"]), "RUNNING", True, Verdict.FAILED, "is PAUSED, expected RUNNING"),
        (status("STOPPED"), "STOPPED", True, Verdict.SUCCESS, "STOPPED"),
        (status("STOPPED", ["RUNNING"]), "STOPPED", True, Verdict.FAILED, "task c-0 is RUNNING"),
        (status("PAUSED"), "PAUSED", True, Verdict.SUCCESS, "PAUSED"),
        (status("WEIRD"), "RUNNING", True, Verdict.FAILED, "unknown state"),
    ],
)
def test_evaluate_status(st, target, include, verdict, fragment):
    result = evaluate_status(st, target, include_tasks=include)
    assert result.verdict is verdict and fragment in result.message


def test_evaluate_status_min_tasks_and_transitional():
    assert evaluate_status(status("RUNNING", ["RUNNING"]), "RUNNING", min_tasks=2).verdict is Verdict.WAITING
    assert evaluate_status(status("STOPPED"), "RUNNING", transitional=["STOPPED"]).verdict is Verdict.WAITING
    with pytest.raises(ValueError, match="Cannot wait for FAILED"):
        evaluate_status(status("FAILED"), "FAILED")


def test_redact_config_hides_secret_looking_values_only():
    config = {
        "connection.password": "pw-1",
        "database.user": "bob",
        "key.converter": "JsonConverter",
        "sasl.jaas.config": "x required password=y;",
        "aws.secret.access.key": "AKIA...",
        "api.key": "k-1",
        "ssl.key.password": "kp",
        "token": "t",
        "vault.password": "${vault:secret/db:pw}",
        "topics": "t1",
        "basic.auth.user.info": "u:p",
    }
    red = redact_config(config)
    hidden = {k for k, v in red.items() if v == "***"}
    assert hidden == {
        "connection.password",
        "sasl.jaas.config",
        "aws.secret.access.key",
        "api.key",
        "ssl.key.password",
        "token",
        "basic.auth.user.info",
    }
    assert red["vault.password"] == "${vault:secret/db:pw}"  # a reference, not a secret
    assert config["connection.password"] == "pw-1"  # input untouched


def test_scrub_removes_secret_values_from_text():
    secrets = secret_values({"db.password": "hunter2-long", "db.host": "h"})
    assert scrub("failed: password hunter2-long rejected", secrets) == "failed: password *** rejected"
    assert scrub(None, secrets) is None


def test_offset_targets_and_evaluation():
    targets = parse_targets({"t:0": 10, "my:topic:1": 5})
    assert targets == {("t", 0): 10, ("my:topic", 1): 5}
    assert parse_targets([{"topic": "t", "partition": 0, "offset": 3}]) == {("t", 0): 3}
    assert parse_targets(to_wire(targets)) == targets
    assert parse_targets(
        [{"partition": {"kafka_topic": "t", "kafka_partition": 2}, "offset": {"kafka_offset": 7}}]
    ) == {("t", 2): 7}
    with pytest.raises(ValueError):
        parse_targets({"no-partition": 1})
    offsets = [
        {"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 10}},
        {"partition": {"kafka_topic": "my:topic", "kafka_partition": 1}, "offset": {"kafka_offset": 4}},
    ]
    assert committed_sink_offsets(offsets) == {("t", 0): 10, ("my:topic", 1): 4}
    waiting = evaluate_offsets(offsets, targets)
    assert waiting.verdict is Verdict.WAITING and "my:topic:1 at 4 < 5" in waiting.message
    offsets[1]["offset"]["kafka_offset"] = 5
    assert evaluate_offsets(offsets, targets).verdict is Verdict.SUCCESS
    assert evaluate_offsets([], {("t", 0): 1}).verdict is Verdict.WAITING
