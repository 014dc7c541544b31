"""KIP-875 offsets through a real standalone herder: preconditions, hook outcomes, and their effect on resume."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from runtime.control.errors import BadRequest, NotFound
from runtime.control.offset_requests import (
    ALTERED_DEFINITE_MESSAGE,
    ALTERED_POSSIBLE_MESSAGE,
    RESET_DEFINITE_MESSAGE,
    RESET_POSSIBLE_MESSAGE,
    not_stopped_message,
)

from .conftest import new_name, sink_config, source_config, states, wait_for

pytestmark = pytest.mark.integration


def source_entry(name: str, task: int, saved: int | None) -> dict:
    return {"partition": {"task.id": f"{name}-{task}"}, "offset": None if saved is None else {"saved": saved}}


def saved_offsets(h, name) -> dict[str, int]:
    return {e["partition"]["task.id"]: e["offset"]["saved"] for e in h.connector_offsets(name)["offsets"]}


@pytest.mark.parametrize("state", ["RUNNING", "PAUSED"])
def test_offsets_cannot_change_unless_stopped(harness, state):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=1), False)
    if state == "PAUSED":
        h.pause_connector(name)
    with pytest.raises(BadRequest) as info:
        h.alter_offsets(name, [source_entry(name, 0, 5)])
    assert info.value.message == not_stopped_message(name)
    assert info.value.message == (
        "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the "
        f"specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint"
    )
    with pytest.raises(BadRequest) as info:
        h.reset_offsets(name)
    assert info.value.message == not_stopped_message(name)
    assert h.connector_status(name)["connector"]["state"] == state


def test_offsets_of_unknown_connector_are_not_found(harness):
    h = harness.herder
    for call in (
        lambda: h.connector_offsets("ghost"),
        lambda: h.reset_offsets("ghost"),
        lambda: h.alter_offsets("ghost", [source_entry("ghost", 0, 1)]),
    ):
        with pytest.raises(NotFound) as info:
            call()
        assert info.value.message == "Connector ghost not found"


@pytest.mark.parametrize(
    "hook, altered, reset",
    [
        ("false", ALTERED_POSSIBLE_MESSAGE, RESET_POSSIBLE_MESSAGE),
        ("true", ALTERED_DEFINITE_MESSAGE, RESET_DEFINITE_MESSAGE),
    ],
)
def test_source_alter_and_reset_messages(harness, hook, altered, reset):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=2, **{"alter.offsets": hook}), False, "STOPPED")
    assert h.connector_offsets(name) == {"offsets": []}
    assert h.alter_offsets(name, [source_entry(name, 0, 5), source_entry(name, 1, 7)]) == altered
    assert saved_offsets(h, name) == {f"{name}-0": 5, f"{name}-1": 7}
    assert h.alter_offsets(name, [source_entry(name, 1, None)]) == altered  # a null offset removes one partition
    assert saved_offsets(h, name) == {f"{name}-0": 5}
    assert h.reset_offsets(name) == reset
    assert h.connector_offsets(name) == {"offsets": []}
    assert h.reset_offsets(name) == reset  # resetting a reset connector succeeds
    assert states(h, name) == ("STOPPED", [])


@pytest.mark.parametrize(
    "hook, message",
    [
        (
            "unsupported",
            "Failed to modify offsets for connector {name} because it doesn't support external modification of offsets",
        ),
        ("error", "alter.offsets=error"),
    ],
)
def test_source_hook_refusal_is_a_server_error_and_writes_nothing(harness, hook, message):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=1), False, "STOPPED")
    h.alter_offsets(name, [source_entry(name, 0, 3)])
    h.put_connector_config(name, source_config(name, tasks=1, **{"alter.offsets": hook}), True)
    assert states(h, name) == ("STOPPED", [])
    for call in (lambda: h.alter_offsets(name, [source_entry(name, 0, 9)]), lambda: h.reset_offsets(name)):
        with pytest.raises(Exception) as info:
            call()
        assert getattr(info.value, "status", None) == 500
        assert message.format(name=name) in info.value.message
    assert saved_offsets(h, name) == {f"{name}-0": 3}


def test_source_resumes_from_altered_offsets(harness):
    """Scenario 65: created STOPPED, offset altered to 5, resumed: the task produces only seqnos 5..9."""
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=1, **{"messages.per.task": "10"}), False, "STOPPED")
    assert h.alter_offsets(name, [source_entry(name, 0, 5)]) == ALTERED_POSSIBLE_MESSAGE
    h.resume_connector(name)
    assert states(h, name) == ("RUNNING", ["RUNNING"])
    wait_for(lambda: saved_offsets(h, name) == {f"{name}-0": 10}, 20, "offsets to reach 10")
    task = harness.worker.tasks[(name, 0)].task
    assert task.produced == 5


def test_source_reset_then_resume_starts_over(harness):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, source_config(name, tasks=1, **{"messages.per.task": "4"}), False)
    wait_for(lambda: saved_offsets(h, name) == {f"{name}-0": 4}, 20, "offsets to reach 4")
    h.stop_connector(name)
    assert h.reset_offsets(name) == RESET_POSSIBLE_MESSAGE
    assert h.connector_offsets(name) == {"offsets": []}
    h.resume_connector(name)
    wait_for(lambda: saved_offsets(h, name) == {f"{name}-0": 4}, 20, "offsets to reach 4 again")
    assert harness.worker.tasks[(name, 0)].task.produced == 4


def _create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, partitions, 1)])
    futures[topic].result(30)


def sink_entry(topic: str, partition: int, offset: int | None) -> dict:
    return {
        "partition": {"kafka_topic": topic, "kafka_partition": partition},
        "offset": None if offset is None else {"kafka_offset": offset},
    }


def sink_offsets(h, name) -> dict[tuple[str, int], int]:
    return {
        (e["partition"]["kafka_topic"], e["partition"]["kafka_partition"]): e["offset"]["kafka_offset"]
        for e in h.connector_offsets(name)["offsets"]
    }


@pytest.mark.parametrize(
    "hook, altered, reset",
    [
        ("false", ALTERED_POSSIBLE_MESSAGE, RESET_POSSIBLE_MESSAGE),
        ("true", ALTERED_DEFINITE_MESSAGE, RESET_DEFINITE_MESSAGE),
    ],
)
def test_sink_alter_and_reset_messages(harness, bootstrap_servers, tmp_path, hook, altered, reset):
    h = harness.herder
    name = new_name("sink")
    topic = f"{name}-in"
    _create_topic(bootstrap_servers, topic, 3)
    config = sink_config(name, tmp_path / "out.jsonl", tasks=1, **{"alter.offsets": hook})
    h.put_connector_config(name, config, False, "STOPPED")
    assert h.connector_offsets(name) == {"offsets": []}
    assert h.alter_offsets(name, [sink_entry(topic, 1, 5), sink_entry(topic, 2, 5)]) == altered
    assert sink_offsets(h, name) == {(topic, 1): 5, (topic, 2): 5}
    assert h.alter_offsets(name, [sink_entry(topic, 1, None), sink_entry(topic, 2, "3")]) == altered
    assert sink_offsets(h, name) == {(topic, 2): 3}
    assert h.reset_offsets(name) == reset
    assert h.connector_offsets(name) == {"offsets": []}
    assert h.reset_offsets(name) == reset


def test_sink_format_errors_come_after_the_stopped_check(harness, tmp_path):
    h = harness.herder
    name = new_name("sink")
    h.put_connector_config(name, sink_config(name, tmp_path / "out.jsonl", tasks=1), False)
    bad = [{"partition": {"kafka_topic": "t"}, "offset": None}]
    with pytest.raises(BadRequest) as info:
        h.alter_offsets(name, bad)
    assert info.value.message == not_stopped_message(name)
    h.stop_connector(name)
    with pytest.raises(BadRequest) as info:
        h.alter_offsets(name, bad)
    assert info.value.message == (
        "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"
    )


@pytest.mark.parametrize(
    "hook, message",
    [
        (
            "unsupported",
            "Failed to modify offsets for connector {name} because it doesn't support external modification of offsets",
        ),
        ("error", "alter.offsets=error"),
    ],
)
def test_sink_hook_refusal_is_a_server_error(harness, tmp_path, hook, message):
    h = harness.herder
    name = new_name("sink")
    h.put_connector_config(
        name, sink_config(name, tmp_path / "out.jsonl", tasks=1, **{"alter.offsets": hook}), False, "STOPPED"
    )
    for call in (lambda: h.alter_offsets(name, [sink_entry(f"{name}-in", 0, 1)]), lambda: h.reset_offsets(name)):
        with pytest.raises(Exception) as info:
            call()
        assert getattr(info.value, "status", None) == 500
        assert message.format(name=name) in info.value.message
    assert h.connector_offsets(name) == {"offsets": []}


STRING_CONVERTERS = {
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
}


def _produce(bootstrap: str, topic: str, count: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(count):
        producer.produce(topic, value=f"v{i}".encode(), key=f"k{i}".encode(), partition=0)
    assert producer.flush(30) == 0


def _recorded_offsets(path) -> list[int]:
    import json

    if not path.exists():
        return []
    return [json.loads(line)["offset"] for line in path.read_text().splitlines()]


def test_sink_created_stopped_resumes_from_altered_offset_and_reset_reprocesses(harness, bootstrap_servers, tmp_path):
    """Scenarios 66 and 61: alter partition 0 to 5 -> resume reads 5..9 only; reset -> resume reads 0..9 again."""
    h = harness.herder
    name = new_name("sink")
    topic = f"{name}-in"
    _create_topic(bootstrap_servers, topic, 1)
    _produce(bootstrap_servers, topic, 10)
    output = tmp_path / "out.jsonl"
    h.put_connector_config(name, sink_config(name, output, tasks=1, **STRING_CONVERTERS), False, "STOPPED")
    assert h.alter_offsets(name, [sink_entry(topic, 0, 5)]) == ALTERED_POSSIBLE_MESSAGE
    h.resume_connector(name)
    assert states(h, name) == ("RUNNING", ["RUNNING"])
    wait_for(lambda: _recorded_offsets(output) == [5, 6, 7, 8, 9], 30, "records 5..9")
    wait_for(lambda: sink_offsets(h, name) == {(topic, 0): 10}, 20, "committed offset 10")
    assert states(h, name) == ("RUNNING", ["RUNNING"])

    h.stop_connector(name)
    assert h.reset_offsets(name) == RESET_POSSIBLE_MESSAGE
    assert h.connector_offsets(name) == {"offsets": []}
    h.resume_connector(name)
    wait_for(lambda: _recorded_offsets(output) == [5, 6, 7, 8, 9, *range(10)], 30, "records 0..9 again")
    wait_for(lambda: sink_offsets(h, name) == {(topic, 0): 10}, 20, "committed offset 10 again")
    assert states(h, name) == ("RUNNING", ["RUNNING"])


def test_the_alter_offsets_hook_gets_the_config_with_its_provider_references_resolved(make_herder, tmp_path):
    # as the reference: a connector's credentials are often `${file:...}` references, and its alterOffsets
    # (dlt's sink opens its destination there) must see the values, not the references
    secrets = tmp_path / "secrets.properties"
    secrets.write_text("hook=true\n")
    h = make_herder(
        **{
            "config.providers": "file",
            "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
        }
    ).herder
    name = new_name()
    config = source_config(name, tasks=1, **{"alter.offsets": f"${{file:{secrets}:hook}}"})
    h.put_connector_config(name, config, False, "STOPPED")
    assert h.alter_offsets(name, [source_entry(name, 0, 5)]) == ALTERED_DEFINITE_MESSAGE
    assert h.reset_offsets(name) == RESET_DEFINITE_MESSAGE
    assert h.connector_info(name)["config"]["alter.offsets"] == f"${{file:{secrets}:hook}}"  # stored as written
