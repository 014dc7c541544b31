"""KIP-298 error handling of sinks, black-box: a topic holding good and malformed JSON records.

With errors.tolerance=all and a dead letter queue every good record reaches put(), every bad one lands in
the queue as it was consumed, with the reference's `__connect.errors.*` headers, and the task-error metrics
count them; with errors.tolerance=none the task fails with the converter's error in its trace.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.integration.scenarios.helpers import Api, Kafka, read_jsonl, sink_config
from tests.support.broker import unique
from tests.support.worker import wait_for

from .metrics_reader import sample

pytestmark = pytest.mark.integration

GOOD = 20
SCHEMALESS_JSON = {
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
}


def _write_mixed(bootstrap_servers: str, topic: str) -> dict[int, bytes]:
    """GOOD valid JSON records and, after every fifth, a malformed one; the malformed ones by offset."""
    producer = Producer({"bootstrap.servers": bootstrap_servers})
    bad: list[bytes] = []
    for i in range(GOOD):
        producer.produce(topic, json.dumps({"n": i}).encode(), key=f"k{i}".encode())
        if i % 5 == 0:
            payload = b"{not json " + str(i).encode()
            bad.append(payload)
            producer.produce(topic, payload, key=f"bad{i}".encode(), headers=[("origin", b"test")])
    assert producer.flush(30) == 0
    # offsets follow the write order on a fresh single-partition topic
    offsets, offset = {}, 0
    for i in range(GOOD):
        offset += 1
        if i % 5 == 0:
            offsets[offset] = bad[len(offsets)]
            offset += 1
    return offsets


def _read(bootstrap_servers: str, topic: str, count: int) -> list[Any]:
    """The first `count` records of a one-partition topic, headers included (waits for them to arrive)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap_servers,
            "group.id": uuid.uuid4().hex,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    found: list[Any] = []

    def enough() -> bool:
        found.extend(m for m in consumer.consume(100, 0.5) if m.error() is None)
        return len(found) >= count

    try:
        wait_for(enough, 60, 0, f"{count} records in {topic}")
    finally:
        consumer.close()
    return found


def test_bad_records_go_to_the_dead_letter_queue_with_context_headers(
    api: Api, kafka: Kafka, bootstrap_servers: str, tmp_path: Path
) -> None:
    topic = kafka.create_topic(unique("mixed"))
    bad_by_offset = _write_mixed(bootstrap_servers, topic)
    dlq = unique("dlq")  # created by the worker
    name = unique("tolerant")
    out = tmp_path / "out.jsonl"
    config = sink_config(topic, out, **SCHEMALESS_JSON)
    config.update(
        {
            "errors.tolerance": "all",
            "errors.log.enable": "true",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        }
    )
    assert api.post("/connectors", {"name": name, "config": config}).status_code == 201

    delivered = wait_for(lambda: (r := read_jsonl(out)) and len(r) >= GOOD and r, 60, what="every good record")
    assert sorted(r["value"]["n"] for r in delivered) == list(range(GOOD))

    queued = _read(bootstrap_servers, dlq, len(bad_by_offset))
    assert len(queued) == len(bad_by_offset)
    for message in queued:
        headers = {k: (v.decode() if v is not None else None) for k, v in message.headers()}
        offset = int(headers["__connect.errors.offset"])
        assert message.value() == bad_by_offset[offset]  # the record as it was consumed
        assert message.key().decode().startswith("bad")
        assert headers["origin"] == "test"  # its own headers are kept
        assert headers["__connect.errors.topic"] == topic
        assert headers["__connect.errors.partition"] == "0"
        assert headers["__connect.errors.connector.name"] == name
        assert headers["__connect.errors.task.id"] == "0"
        assert headers["__connect.errors.stage"] == "VALUE_CONVERTER"
        assert headers["__connect.errors.class.name"].endswith("JsonConverter")
        assert headers["__connect.errors.exception.class.name"].endswith("DataError")
        assert headers["__connect.errors.exception.message"].startswith(
            "Converting byte[] to Kafka Connect data failed due to serialization error"
        )
        assert "Traceback" in headers["__connect.errors.exception.stacktrace"]

    bad = len(bad_by_offset)
    labels = {"connector": name, "task": "0"}
    wait_for(
        lambda: sample(api, "kafka_connect_task_error_deadletterqueue_produce_requests", **labels) == bad,
        30,
        what="the dead letter queue requests counted",
    )
    assert sample(api, "kafka_connect_task_error_total_record_errors", **labels) == bad
    assert sample(api, "kafka_connect_task_error_total_record_failures", **labels) == bad
    assert sample(api, "kafka_connect_task_error_total_records_skipped", **labels) == bad
    assert sample(api, "kafka_connect_task_error_total_errors_logged", **labels) == bad
    assert sample(api, "kafka_connect_task_error_deadletterqueue_produce_failures", **labels) == 0
    assert sample(api, "kafka_connect_task_error_last_error_timestamp", **labels) > 0
    assert sample(api, "kafka_connect_sink_task_sink_record_read_total", **labels) == GOOD + bad
    assert sample(api, "kafka_connect_sink_task_sink_record_send_total", **labels) == GOOD
    api.delete(f"/connectors/{name}")


def test_without_tolerance_the_task_fails_with_the_converter_error(
    api: Api, kafka: Kafka, bootstrap_servers: str, tmp_path: Path
) -> None:
    topic = kafka.create_topic(unique("mixed"))
    _write_mixed(bootstrap_servers, topic)
    name = unique("intolerant")
    out = tmp_path / "out.jsonl"
    config = sink_config(topic, out, **SCHEMALESS_JSON)
    assert api.post("/connectors", {"name": name, "config": config}).status_code == 201
    status = api.wait_state(name, "RUNNING", 1, "FAILED", timeout_s=60)
    trace = status["tasks"][0]["trace"]
    assert "Tolerance exceeded in error handler" in trace
    assert "Converting byte[] to Kafka Connect data failed due to serialization error" in trace
    # nothing after the malformed record (the second one) reached put()
    assert [r["value"]["n"] for r in read_jsonl(out)] in ([], [0])
    wait_for(
        lambda: sample(api, "kafka_connect_worker_connector_failed_task_count", connector=name) == 1,
        30,
        what="the failed task counted",
    )
    api.delete(f"/connectors/{name}")


def test_records_reported_by_the_task_reach_the_dead_letter_queue(
    api: Api, kafka: Kafka, bootstrap_servers: str, tmp_path: Path
) -> None:
    """KIP-610: a sink task reports records it cannot handle; they go to the queue at stage TASK_PUT."""
    topic = kafka.create_topic(unique("reported"))
    kafka.produce(topic, [{"n": i, "bad": i % 4 == 0} for i in range(GOOD)])
    dlq = unique("dlq")
    name = unique("reporting")
    out = tmp_path / "out.jsonl"
    config = sink_config(topic, out, **SCHEMALESS_JSON)
    config.update(
        {
            "connector.class": "tests.integration.plugins.reporting_sink.ReportingSinkConnector",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        }
    )
    assert api.post("/connectors", {"name": name, "config": config}).status_code == 201
    reported = [i for i in range(GOOD) if i % 4 == 0]
    queued = _read(bootstrap_servers, dlq, len(reported))
    assert sorted(json.loads(m.value())["n"] for m in queued) == reported
    for message in queued:
        headers = {k: v.decode() for k, v in message.headers()}
        assert headers["__connect.errors.stage"] == "TASK_PUT"
        assert headers["__connect.errors.exception.message"].startswith("rejected by the task")
        assert headers["__connect.errors.connector.name"] == name
    delivered = wait_for(
        lambda: (r := read_jsonl(out)) and len(r) >= GOOD - len(reported) and r, 30, what="the accepted records"
    )
    assert sorted(r["value"]["n"] for r in delivered) == [i for i in range(GOOD) if i % 4]
    labels = {"connector": name, "task": "0"}
    wait_for(
        lambda: sample(api, "kafka_connect_task_error_deadletterqueue_produce_requests", **labels) == len(reported),
        30,
        what="the reported records counted",
    )
    # the sink's offsets are committed past the reported records once the queue has them
    wait_for(
        lambda: kafka.group_offsets(f"connect-{name}").get((topic, 0)) == GOOD,
        30,
        what="the sink's committed offset at the end",
    )
    api.delete(f"/connectors/{name}")
