"""A source record the producer refuses for good (over message.max.bytes) must not leave the task retrying
forever while RUNNING: it fails the task with the cause, or is skipped and counted under tolerance all."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.scenarios.helpers import FILE_SOURCE, Api, Kafka
from tests.support.broker import unique
from tests.support.worker import wait_for

from .metrics_reader import sample

pytestmark = pytest.mark.integration

MAX_BYTES = 1000  # librdkafka's smallest message.max.bytes


def _source(tmp_path: Path, topic: str, **extra: str) -> dict[str, str]:
    lines = tmp_path / "lines.txt"
    lines.write_text("small-1\n" + "x" * (MAX_BYTES * 5) + "\nsmall-2\n")
    return {
        "connector.class": FILE_SOURCE,
        "file": str(lines),
        "topic": topic,
        "tasks.max": "1",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "producer.override.message.max.bytes": str(MAX_BYTES),
        **extra,
    }


def test_a_record_over_message_max_bytes_fails_the_task(api: Api, kafka: Kafka, tmp_path: Path) -> None:
    topic = kafka.create_topic(unique("big"))
    name = unique("too-big")
    assert api.post("/connectors", {"name": name, "config": _source(tmp_path, topic)}).status_code == 201
    status = api.wait_state(name, "RUNNING", 1, "FAILED", timeout_s=30)
    trace = status["tasks"][0]["trace"]
    assert "Tolerance exceeded in error handler" in trace
    assert "MSG_SIZE_TOO_LARGE" in trace
    api.delete(f"/connectors/{name}")


def test_under_tolerance_all_the_record_is_skipped_and_counted(api: Api, kafka: Kafka, tmp_path: Path) -> None:
    topic = kafka.create_topic(unique("big"))
    name = unique("too-big-tolerated")
    config = _source(tmp_path, topic, **{"errors.tolerance": "all"})
    assert api.post("/connectors", {"name": name, "config": config}).status_code == 201
    values = wait_for(
        lambda: (v := sorted(r[3] for r in kafka.read_all(topic))) and len(v) >= 2 and v, 30, what="both small lines"
    )
    assert values == [b"small-1", b"small-2"]
    labels = {"connector": name, "task": "0"}
    assert sample(api, "kafka_connect_task_error_total_records_skipped", **labels) == 1
    assert sample(api, "kafka_connect_task_error_total_record_errors", **labels) == 1
    assert api.status(name)["tasks"][0]["state"] == "RUNNING"
    api.delete(f"/connectors/{name}")
