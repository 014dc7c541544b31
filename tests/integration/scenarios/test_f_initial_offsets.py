"""KIP-995 on a standalone worker: `initial_offsets` on `POST /connectors`.

The offsets are written before any task starts (a source's offsets store, a sink's consumer group), so the
tasks start exactly there: SequenceSource continues at the seqno its offset says, RecordingSink reads from the
given partition offsets. They replace whatever offsets a deleted namesake left. The 201 answer carries
`offsets_status`, the message PATCH would give; bad offsets are PATCH's 400s and nothing is created.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.broker import unique
from tests.support.worker import wait_for

from .helpers import (
    INFO_KEYS,
    POSSIBLE_ALTERED,
    Api,
    Kafka,
    assert_error,
    read_jsonl,
    sink_config,
    source_config,
    source_offsets,
    values_by_key,
)
from .test_d_offsets import NEED_OFFSETS, PLAIN_JSON, SINK_BAD_BODIES, fill, sink_at

pytestmark = pytest.mark.integration


def saved(name: str, task: int, value: int) -> dict[str, Any]:
    return {"partition": {"task.id": f"{name}-{task}"}, "offset": {"saved": value}}


def seqnos(kafka: Kafka, topic: str, counts: dict[str, int]) -> dict[str, list[int]]:
    """The seqnos each task key wrote to `topic`, once each has written `counts[key]` records."""
    by_key = wait_for(
        lambda: (lambda g: g if all(len(g.get(k, [])) >= n for k, n in counts.items()) else None)(
            values_by_key(kafka.read_all(topic))
        ),
        30,
        interval_s=0.5,
        what=f"records {counts} in {topic}",
    )
    return {k: [v["seqno"] for v in by_key.get(k, [])] for k in counts}


def test_created_source_starts_at_its_initial_offsets(api: Api, kafka: Kafka, name: str) -> None:
    topic = kafka.create_topic(unique("t"))
    created = api.create(
        name,
        source_config(topic, tasks=2, messages_per_task=10),
        initial_offsets=[saved(name, 0, 5), saved(name, 1, 8)],
    )
    assert set(created) == INFO_KEYS | {"offsets_status"}
    assert created["offsets_status"] == POSSIBLE_ALTERED  # SequenceSource's alter_offsets hook answers false
    api.wait_offsets(name, lambda o: source_offsets(o) == {f"{name}-0": 10, f"{name}-1": 10}, what="saved 10")
    # exactly from the given offsets: nothing before them was ever produced
    assert seqnos(kafka, topic, {f"{name}-0": 5, f"{name}-1": 2}) == {
        f"{name}-0": [5, 6, 7, 8, 9],
        f"{name}-1": [8, 9],
    }


def test_created_sink_starts_at_its_initial_offsets(api: Api, kafka: Kafka, name: str, out_file) -> None:
    topic = kafka.create_topic(unique("t"), 2)
    fill(kafka, topic, partitions=2, per_partition=10)
    offsets = [
        {"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 5}},
        {"partition": {"kafka_topic": topic, "kafka_partition": 1}, "offset": {"kafka_offset": 8}},
    ]
    created = api.create(name, sink_config(topic, out_file, tasks=2, **PLAIN_JSON), initial_offsets=offsets)
    assert created["offsets_status"] == POSSIBLE_ALTERED
    sink_at(api, name, {(topic, 0): 10, (topic, 1): 10})
    assert sorted((r["partition"], r["offset"]) for r in read_jsonl(out_file)) == [(0, o) for o in range(5, 10)] + [
        (1, 8),
        (1, 9),
    ]


def test_initial_offsets_replace_a_deleted_namesakes(api: Api, kafka: Kafka, name: str) -> None:
    # offsets outlive a connector: its namesake, created with offsets for task 1 only, finds task 0's reset
    first = kafka.create_topic(unique("t"))
    api.create(name, source_config(first, tasks=2, messages_per_task=10))
    api.wait_offsets(name, lambda o: source_offsets(o) == {f"{name}-0": 10, f"{name}-1": 10}, what="saved 10")
    assert api.delete(f"/connectors/{name}").status_code == 204
    second = kafka.create_topic(unique("t"))
    api.create(name, source_config(second, tasks=2, messages_per_task=3), initial_offsets=[saved(name, 1, 1)])
    api.wait_offsets(name, lambda o: source_offsets(o) == {f"{name}-0": 3, f"{name}-1": 3}, what="saved 3")
    assert seqnos(kafka, second, {f"{name}-0": 3, f"{name}-1": 2}) == {f"{name}-0": [0, 1, 2], f"{name}-1": [1, 2]}


def test_created_stopped_with_offsets_shows_them(api: Api, kafka: Kafka, name: str) -> None:
    config = source_config(kafka.create_topic(unique("t")), tasks=1, messages_per_task=10, **{"alter.offsets": "true"})
    created = api.create(name, config, initial_state="STOPPED", initial_offsets=[saved(name, 0, 7)])
    assert created["offsets_status"] == "The offsets for this connector have been altered successfully"
    assert created["tasks"] == []
    assert api.status(name)["connector"]["state"] == "STOPPED"
    assert api.offsets(name) == [saved(name, 0, 7)]
    # without offsets, the answer is the reference's ConnectorInfo, exactly
    other = unique("plain")
    assert set(api.create(other, config, initial_state="STOPPED")) == INFO_KEYS


SOURCE_BAD_OFFSETS: list[tuple[Any, str | None]] = [
    ([], NEED_OFFSETS),
    ([{}], "The partition for a source connector offset cannot be null or missing"),
    ([{"key": "val"}], "key"),
    ([123], None),
    ({}, "initial_offsets"),
    (
        [{"partition": {"task.id": {"nested": 1}}, "offset": {"saved": 1}}],
        "Offsets may only contain primitive types as values, but field task.id contains",
    ),
]


def test_bad_initial_offsets_are_patchs_400s_and_create_nothing(api: Api, kafka: Kafka, name: str, out_file) -> None:
    sink = sink_config(kafka.create_topic(unique("t")), out_file, **PLAIN_JSON)
    cases = [(sink, body["offsets"], message) for body, message in SINK_BAD_BODIES if "offsets" in body]
    cases += [(source_config(unique("t")), offsets, message) for offsets, message in SOURCE_BAD_OFFSETS]
    for config, offsets, message in cases:
        response = api.post("/connectors", {"name": name, "config": config, "initial_offsets": offsets})
        assert_error(response, 400, message)
        assert_error(api.get(f"/connectors/{name}"), 404)
    assert name not in api.get("/connectors").json()
    assert kafka.group_offsets(f"connect-{name}") == {}
