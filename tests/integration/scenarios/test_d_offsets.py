"""Section 4 group D: the KIP-875 offsets API on a standalone worker.

Source offsets come from SequenceSource (`{"task.id": "<c>-<i>"} -> {"saved": N}`, N = records produced);
sink offsets are the consumer-group offsets of `connect-<name>`, fed with records produced here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.broker import unique
from tests.support.worker import wait_for

from .helpers import (
    DEFINITE_ALTERED,
    DEFINITE_RESET,
    POSSIBLE_ALTERED,
    POSSIBLE_RESET,
    Api,
    Kafka,
    assert_error,
    not_stopped_message,
    read_jsonl,
    sink_config,
    sink_offsets,
    source_config,
    source_offsets,
    values_by_key,
)

pytestmark = pytest.mark.integration

# sink records are plain JSON produced here, so no schema envelope
PLAIN_JSON = {
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
}
NEED_OFFSETS = "Partitions / offsets need to be provided for an alter offsets request"


def fill(kafka: Kafka, topic: str, partitions: int, per_partition: int, start: int = 0) -> None:
    for p in range(partitions):
        kafka.produce(topic, [{"p": p, "n": n} for n in range(start, start + per_partition)], partition=p)


def sink_at(api: Api, name: str, expected: dict[tuple[str, int], int], timeout_s: float = 45.0) -> None:
    api.wait_offsets(name, lambda o: sink_offsets(o) == expected, timeout_s, what=f"sink offsets {expected}")


def start_sink(api: Api, kafka: Kafka, name: str, out: Path, partitions: int, records: int, **extra) -> str:
    topic = kafka.create_topic(unique("sink-topic"), partitions)
    fill(kafka, topic, partitions, records)
    api.create(name, sink_config(topic, out, tasks=2, **PLAIN_JSON, **extra))
    sink_at(api, name, {(topic, p): records for p in range(partitions)})
    return topic


def test_unknown_connector_offsets_are_404(api) -> None:
    # 51, 54
    c = unique("non-existent-connector")
    assert_error(api.get(f"/connectors/{c}/offsets"), 404, f"Connector {c} not found")
    body = {"offsets": [{"partition": {"task.id": "x"}, "offset": {"saved": 1}}]}
    assert_error(api.patch(f"/connectors/{c}/offsets", body), 404, f"Connector {c} not found")
    assert_error(api.delete(f"/connectors/{c}/offsets"), 404, f"Connector {c} not found")
    # an empty request is rejected before the existence check
    assert_error(api.patch(f"/connectors/{c}/offsets", {"offsets": []}), 400, NEED_OFFSETS)


def test_sink_offsets_follow_the_consumer_group(api, kafka, name, out_file) -> None:
    # 52: five partitions at 10, then 20; readable while RUNNING; stored in group connect-<name>
    topic = start_sink(api, kafka, name, out_file, partitions=5, records=10)
    assert api.status(name)["connector"]["state"] == "RUNNING"
    fill(kafka, topic, 5, 10, start=10)
    sink_at(api, name, {(topic, p): 20 for p in range(5)})
    assert kafka.group_offsets(f"connect-{name}") == {(topic, p): 20 for p in range(5)}
    assert len(read_jsonl(out_file)) >= 100
    entry = api.offsets(name)[0]
    assert set(entry) == {"partition", "offset"} and set(entry["partition"]) == {"kafka_topic", "kafka_partition"}


def test_sink_offsets_with_group_override(api, kafka, name, out_file) -> None:
    # 52 variant: consumer.override.group.id decides the group, and only that group exists
    group = unique("custom-group")
    topic = start_sink(api, kafka, name, out_file, partitions=1, records=10, **{"consumer.override.group.id": group})
    assert kafka.group_offsets(group) == {(topic, 0): 10}
    assert kafka.group_offsets(f"connect-{name}") == {}


def test_sink_with_no_committed_offset_starts_where_auto_offset_reset_says(api, kafka, name, out_file) -> None:
    # The worker places a partition with no committed offset itself on assignment (earliest is the worker's
    # default, so start_sink above reads from 0); an override to latest skips what was there before.
    topic = kafka.create_topic(unique("sink-topic"))
    fill(kafka, topic, 1, 10)
    api.create(name, sink_config(topic, out_file, **PLAIN_JSON, **{"consumer.override.auto.offset.reset": "latest"}))
    api.wait_state(name, "RUNNING", tasks=1)
    # the assignment's moment is not visible from outside: keep producing until something arrives
    produced = [10]

    def delivered() -> bool:
        if read_jsonl(out_file):
            return True
        fill(kafka, topic, 1, 1, start=produced[0])
        produced[0] += 1
        return False

    wait_for(delivered, 60, interval_s=0.5, what="a record produced after the assignment")
    assert min(r["value"]["n"] for r in read_jsonl(out_file)) >= 10


def test_source_offsets_and_raising_the_limit(api, kafka, name) -> None:
    # 53
    topic = kafka.create_topic(unique("src-topic"))
    api.create(name, source_config(topic, tasks=2, messages_per_task=10))
    api.wait_offsets(name, lambda o: source_offsets(o) == {f"{name}-0": 10, f"{name}-1": 10}, what="saved 10")
    assert api.put(f"/connectors/{name}/config", source_config(topic, tasks=2, messages_per_task=20)).status_code == 200
    api.wait_offsets(name, lambda o: source_offsets(o) == {f"{name}-0": 20, f"{name}-1": 20}, what="saved 20")


def test_modifying_offsets_needs_stopped(api, kafka, name) -> None:
    # 55: RUNNING -> 400, PAUSED -> 400, for PATCH and DELETE
    api.create(name, source_config(kafka.create_topic(unique("src-topic")), tasks=1, messages_per_task=5))
    api.wait_state(name, "RUNNING", 1)
    body = {"offsets": [{"partition": {"task.id": f"{name}-0"}, "offset": {"saved": 1}}]}
    assert_error(api.patch(f"/connectors/{name}/offsets", body), 400, not_stopped_message(name))
    assert_error(api.delete(f"/connectors/{name}/offsets"), 400, not_stopped_message(name))
    assert api.put(f"/connectors/{name}/pause").status_code == 202
    assert_error(api.patch(f"/connectors/{name}/offsets", body), 400, not_stopped_message(name))
    assert_error(api.delete(f"/connectors/{name}/offsets"), 400, not_stopped_message(name))


def test_sink_alter_then_resume_reprocesses(api, kafka, name, out_file) -> None:
    # 56
    topic = start_sink(api, kafka, name, out_file, partitions=3, records=10)
    api.stop(name)
    body = {
        "offsets": [
            {"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": None},
            {"partition": {"kafka_topic": topic, "kafka_partition": 1}, "offset": {"kafka_offset": 5}},
            {
                "partition": {"kafka_topic": topic, "kafka_partition": "2"},
                "offset": {"kafka_offset": "5"},
            },  # numeric strings
        ]
    }
    response = api.alter_offsets_retrying(name, body)
    assert response.status_code == 200, response.text
    assert response.json() == {"message": POSSIBLE_ALTERED}
    assert sink_offsets(api.offsets(name)) == {(topic, 1): 5, (topic, 2): 5}

    # the hook now answers true: the "definite" message; the config change keeps it STOPPED
    config = sink_config(topic, out_file, tasks=2, **PLAIN_JSON, **{"alter.offsets": "true"})
    assert api.put(f"/connectors/{name}/config", config).status_code == 200
    assert api.status(name)["connector"]["state"] == "STOPPED"
    body = {
        "offsets": [
            {"partition": {"kafka_topic": topic, "kafka_partition": p}, "offset": {"kafka_offset": 3}} for p in (1, 2)
        ]
    }
    response = api.alter_offsets_retrying(name, body)
    assert response.status_code == 200, response.text
    assert response.json() == {"message": DEFINITE_ALTERED}
    assert sink_offsets(api.offsets(name)) == {(topic, 1): 3, (topic, 2): 3}

    before = len(read_jsonl(out_file))
    api.resume(name)
    sink_at(api, name, {(topic, p): 10 for p in range(3)})
    # reprocessed: partition 0 from the start, partitions 1-2 from offset 3
    wait_for(lambda: len(read_jsonl(out_file)) - before >= 10 + 7 + 7, 20, what="reprocessed records written")
    again = read_jsonl(out_file)[before:]
    assert sorted((r["partition"], r["offset"]) for r in again) == sorted(
        [(0, o) for o in range(10)] + [(p, o) for p in (1, 2) for o in range(3, 10)]
    )


def test_sink_reset_twice_then_resume_reprocesses_everything(api, kafka, name, out_file) -> None:
    # 61
    topic = start_sink(api, kafka, name, out_file, partitions=2, records=10)
    api.stop(name)
    for _ in range(2):
        response = api.alter_offsets_retrying(name, None, method="DELETE")
        assert response.status_code == 200, response.text
        assert response.json() == {"message": POSSIBLE_RESET}
        assert api.offsets(name) == []
    api.resume(name)
    sink_at(api, name, {(topic, p): 10 for p in range(2)})
    wait_for(lambda: len(read_jsonl(out_file)) >= 40, 20, what="every record written twice")
    seen = [(r["partition"], r["offset"]) for r in read_jsonl(out_file)]
    assert all(seen.count((p, o)) == 2 for p in range(2) for o in range(10)), seen


SINK_BAD_BODIES = [
    ({}, NEED_OFFSETS),
    ({"offsets": []}, NEED_OFFSETS),
    ({"offsets": [{}]}, "The partition for a sink connector offset cannot be null or missing"),
    (
        {"offsets": [{"partition": None, "offset": None}]},
        "The partition for a sink connector offset cannot be null or missing",
    ),
    (
        {"offsets": [{"partition": {}, "offset": None}]},
        "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'",
    ),
    (
        {"offsets": [{"partition": {"kafka_topic": None, "kafka_partition": 0}, "offset": None}]},
        "Kafka topic names must be valid strings and may not be null",
    ),
    (
        {"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": None}, "offset": None}]},
        "Kafka partitions must be valid numbers and may not be null",
    ),
    (
        {"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": "not a number"}, "offset": None}]},
        "Failed to parse the following Kafka partition value in the provided offsets: 'not a number'. "
        "Partition values for sink connectors need to be integers.",
    ),
    (
        {"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {}}]},
        "The offset for a sink connector should either be null or contain the key 'kafka_offset'",
    ),
    (
        {
            "offsets": [
                {"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": "not a number"}}
            ]
        },
        "Failed to parse the following Kafka offset value in the provided offsets: 'not a number'. "
        "Offset values for sink connectors need to be integers.",
    ),
    (
        {"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": None}}]},
        "null",
    ),
]


def test_sink_invalid_offset_bodies_are_400(api, kafka, name, out_file) -> None:
    # 58 (sink connector created STOPPED, so no consumer group join is needed)
    topic = kafka.create_topic(unique("sink-topic"))
    api.create(name, sink_config(topic, out_file, **PLAIN_JSON), initial_state="STOPPED")
    for body, message in SINK_BAD_BODIES:
        assert_error(api.patch(f"/connectors/{name}/offsets", body), 400, message)


SOURCE_BAD_BODIES = [
    ("[]", None),
    ("{}", NEED_OFFSETS),
    ('{"key": []}', "key"),
    ('{"offsets": []}', NEED_OFFSETS),
    ('{"offsets": {}}', "offsets"),
    ('{"offsets": [123]}', None),
    ('{"offsets": [{"key": "val"}]}', "key"),
    ('{"offsets": [{"partition": []]}', None),
    (
        '{"offsets": [{"partition": {"task.id": {"nested": 1}}, "offset": {"saved": 1}}]}',
        "Offsets may only contain primitive types as values, but field task.id contains",
    ),
    (
        '{"offsets": [{"partition": {"task.id": "x"}, "offset": {"saved": [1, 2]}}]}',
        "Offsets may only contain primitive types as values, but field saved contains",
    ),
]


def test_source_invalid_offset_bodies_are_400(api, kafka, name) -> None:
    # 59 with section 0: every bad body and every format violation is a 400, never a 500
    api.create(name, source_config(kafka.create_topic(unique("src-topic"))), initial_state="STOPPED")
    for content, message in SOURCE_BAD_BODIES:
        response = api.patch(
            f"/connectors/{name}/offsets", content=content, headers={"Content-Type": "application/json"}
        )
        assert_error(response, 400, message)
    assert api.offsets(name) == []


def test_source_alter_then_resume_continues_from_altered(api, kafka, name) -> None:
    # 60
    topic = kafka.create_topic(unique("src-topic"))
    api.create(name, source_config(topic, tasks=2, messages_per_task=10))
    tasks = [f"{name}-0", f"{name}-1"]
    api.wait_offsets(name, lambda o: source_offsets(o) == {t: 10 for t in tasks}, what="saved 10")
    api.stop(name)

    def alter(saved: int) -> dict:
        body = {"offsets": [{"partition": {"task.id": t}, "offset": {"saved": saved}} for t in tasks]}
        response = api.patch(f"/connectors/{name}/offsets", body)
        assert response.status_code == 200, response.text
        return response.json()

    assert alter(5) == {"message": POSSIBLE_ALTERED}
    assert source_offsets(api.offsets(name)) == {t: 5 for t in tasks}
    config = source_config(topic, tasks=2, messages_per_task=10, **{"alter.offsets": "true"})
    assert api.put(f"/connectors/{name}/config", config).status_code == 200
    assert alter(7) == {"message": DEFINITE_ALTERED}
    assert source_offsets(api.offsets(name)) == {t: 7 for t in tasks}

    api.resume(name)
    api.wait_offsets(name, lambda o: source_offsets(o) == {t: 10 for t in tasks}, what="saved back to 10")
    # the tasks resumed at seqno 7: 0..9 first, then 7, 8, 9 again
    by_key = wait_for(
        lambda: (lambda g: g if all(len(g.get(t, [])) == 13 for t in tasks) else None)(
            values_by_key(kafka.read_all(topic))
        ),
        20,
        interval_s=0.5,
        what="13 records per task",
    )
    for i, t in enumerate(tasks):
        assert [v["seqno"] for v in by_key[t]] == list(range(10)) + [7, 8, 9]
        assert all(v["task"] == i for v in by_key[t])


def test_source_reset_twice_then_resume_starts_over(api, kafka, name) -> None:
    # 62
    topic = kafka.create_topic(unique("src-topic"))
    api.create(name, source_config(topic, tasks=2, messages_per_task=10))
    tasks = [f"{name}-0", f"{name}-1"]
    api.wait_offsets(name, lambda o: source_offsets(o) == {t: 10 for t in tasks}, what="saved 10")
    api.stop(name)
    for _ in range(2):
        response = api.delete(f"/connectors/{name}/offsets")
        assert response.status_code == 200, response.text
        assert response.json() == {"message": POSSIBLE_RESET}
        assert api.offsets(name) == []
    api.resume(name)
    api.wait_offsets(name, lambda o: source_offsets(o) == {t: 10 for t in tasks}, what="saved 10 again")
    by_key = wait_for(
        lambda: (lambda g: g if all(len(g.get(t, [])) == 20 for t in tasks) else None)(
            values_by_key(kafka.read_all(topic))
        ),
        20,
        interval_s=0.5,
        what="20 records per task",
    )
    for t in tasks:
        assert [v["seqno"] for v in by_key[t]] == list(range(10)) * 2


@pytest.mark.parametrize(
    "hook, status, message",
    [
        ("true", 200, DEFINITE_RESET),
        (
            "unsupported",
            500,
            "Failed to modify offsets for connector {name} because it doesn't support external modification of offsets",
        ),
        ("error", 500, None),
    ],
)
def test_alter_offsets_hook_outcomes(api, kafka, name, hook, status, message) -> None:
    api.create(
        name, source_config(kafka.create_topic(unique("src-topic")), **{"alter.offsets": hook}), initial_state="STOPPED"
    )
    response = api.delete(f"/connectors/{name}/offsets")
    if status == 200:
        assert response.status_code == 200 and response.json() == {"message": message}
    else:
        assert_error(response, status, message.format(name=name) if message else None)


def test_sink_failing_on_first_record_commits_nothing_until_fixed(api, kafka, name, out_file) -> None:
    # 63: the converter fails on the first record; offsets stay empty; after a fix via PUT they reach 1
    topic = kafka.create_topic(unique("sink-topic"))
    kafka_producer_raw(kafka, topic, b"this is not json")
    strict = {
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    }
    api.create(name, sink_config(topic, out_file, **strict))
    api.wait_state(name, "RUNNING", 1, "FAILED", timeout_s=45)
    assert api.offsets(name) == []
    fixed = sink_config(
        topic, out_file, **{**strict, "value.converter": "org.apache.kafka.connect.storage.StringConverter"}
    )
    assert api.put(f"/connectors/{name}/config", fixed).status_code == 200
    sink_at(api, name, {(topic, 0): 1})
    api.wait_state(name, "RUNNING", 1)


def kafka_producer_raw(kafka: Kafka, topic: str, value: bytes) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    producer.produce(topic, value=value, partition=0)
    assert producer.flush(30) == 0


def test_zombie_sink_task_blocks_offset_changes(api, kafka, name, out_file) -> None:
    # 57: a task stuck in stop() keeps its group membership; altering then is a retriable 500
    topic = start_sink(api, kafka, name, out_file, partitions=1, records=5, **{"task.stop.block.ms": 20000})
    api.stop(name)
    body = {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 1}}]}
    response = api.patch(f"/connectors/{name}/offsets", body)
    assert_error(response, 500, "zombie sink task")


def test_offsets_with_clients_pointing_at_another_cluster(api, fresh_broker, name, out_file) -> None:
    # 52, 53 variants: producer/consumer/admin overrides send a connector to another Kafka cluster, and
    # its offsets are read from there
    other = Kafka(fresh_broker.bootstrap_servers)
    elsewhere = fresh_broker.bootstrap_servers
    topic = other.create_topic(unique("other-cluster"), 2)
    fill(other, topic, 2, 10)
    sink = sink_config(
        topic,
        out_file,
        **PLAIN_JSON,
        **{"consumer.override.bootstrap.servers": elsewhere, "admin.override.bootstrap.servers": elsewhere},
    )
    api.create(name, sink)
    sink_at(api, name, {(topic, p): 10 for p in range(2)})
    assert other.group_offsets(f"connect-{name}") == {(topic, p): 10 for p in range(2)}

    source = unique("other-src")
    src_topic = other.create_topic(unique("other-src-topic"))
    api.create(
        source,
        source_config(
            src_topic,
            tasks=2,
            messages_per_task=10,
            **{"producer.override.bootstrap.servers": elsewhere, "admin.override.bootstrap.servers": elsewhere},
        ),
    )
    api.wait_offsets(source, lambda o: source_offsets(o) == {f"{source}-0": 10, f"{source}-1": 10}, what="saved 10")
    by_key = values_by_key(other.read_all(src_topic))
    assert {k: len(v) for k, v in by_key.items()} == {f"{source}-0": 10, f"{source}-1": 10}
