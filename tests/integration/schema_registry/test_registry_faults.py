"""Registry outages and refusals, with a registry of the test's own (tests/support/schema_registry.py):

- a registry answering 503, or not answering at all, is a retriable error under KIP-298's
  `errors.retry.timeout`: the task stays RUNNING and delivers everything once the registry is back, or
  fails naming the registry when the retries run out; a request never hangs past its timeout;
- an unknown schema id is this record's error: the task fails naming the id, or with
  `errors.tolerance=all` the record goes to the dead letter queue and the good ones reach put();
- a schema the registry refuses as incompatible fails the source task, saying so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from tests.integration.scenarios.helpers import Api, Kafka, read_jsonl, sink_config
from tests.support.broker import unique
from tests.support.schema_registry import SchemaRegistryServer
from tests.support.worker import wait_for

from .test_formats import converter_config, wait_records

pytestmark = pytest.mark.integration

SCHEMA = {
    "type": "record",
    "name": "Reading",
    "namespace": "io.example",
    "fields": [{"name": "sensor", "type": "string"}, {"name": "value", "type": "double"}],
}
COUNT = 10


def _produce_avro(bootstrap_servers: str, registry: str, topic: str, extra: list[bytes] = ()) -> None:
    serialize = AvroSerializer(SchemaRegistryClient({"url": registry}), json.dumps(SCHEMA))
    producer = Producer({"bootstrap.servers": bootstrap_servers})
    for n in range(COUNT):
        producer.produce(
            topic, serialize({"sensor": f"s{n}", "value": n / 4}, SerializationContext(topic, MessageField.VALUE))
        )
        if n == COUNT // 2:
            for payload in extra:
                producer.produce(topic, payload)
    assert producer.flush(30) == 0


def _task_trace(api: Api, name: str) -> str:
    return api.wait_state(name, "RUNNING", tasks=1, task_state="FAILED", timeout_s=60)["tasks"][0].get("trace", "")


def test_an_unavailable_registry_is_retried_until_it_is_back(
    api: Api, kafka: Kafka, bootstrap_servers: str, fixture_registry: SchemaRegistryServer, name: str, out_file: Path
) -> None:
    topic = kafka.create_topic(unique("outage"))
    _produce_avro(bootstrap_servers, fixture_registry.url, topic)
    fixture_registry.outage("refuse")
    before = fixture_registry.state.requests
    api.create(
        name,
        sink_config(
            topic,
            out_file,
            **converter_config("avro", fixture_registry.url),
            errors_retry_timeout="300000",
            errors_retry_delay_max_ms="500",
        ),
    )
    # the sink keeps asking, and stays RUNNING while the registry refuses
    wait_for(lambda: fixture_registry.state.requests >= before + 3, 60, 0.1, "the sink to retry the registry")
    assert api.status(name)["tasks"][0]["state"] == "RUNNING"
    assert read_jsonl(out_file) == []
    fixture_registry.outage(None)
    assert [r["value"] for r in wait_records(out_file, COUNT)] == [
        {"sensor": f"s{n}", "value": n / 4} for n in range(COUNT)
    ]
    api.delete(f"/connectors/{name}")


def test_a_registry_that_does_not_answer_fails_the_task_after_its_timeout(
    api: Api, kafka: Kafka, bootstrap_servers: str, fixture_registry: SchemaRegistryServer, name: str, out_file: Path
) -> None:
    topic = kafka.create_topic(unique("hang"))
    _produce_avro(bootstrap_servers, fixture_registry.url, topic)
    fixture_registry.outage("hang")
    api.create(
        name,
        sink_config(
            topic,
            out_file,
            **converter_config(
                "avro", fixture_registry.url, **{"value.converter.schema.registry.request.timeout.ms": "1000"}
            ),
        ),
    )
    trace = _task_trace(api, name)
    assert "Schema Registry is unreachable" in trace and "ReadTimeout" in trace, trace
    fixture_registry.outage(None)
    api.delete(f"/connectors/{name}")


def test_an_unknown_schema_id_fails_the_task_or_goes_to_the_dead_letter_queue(
    api: Api, kafka: Kafka, bootstrap_servers: str, fixture_registry: SchemaRegistryServer, name: str, tmp_path: Path
) -> None:
    topic = kafka.create_topic(unique("unknown-id"))
    unknown = b"\x00" + (4242).to_bytes(4, "big") + b"\x02x"
    _produce_avro(bootstrap_servers, fixture_registry.url, topic, extra=[unknown])
    strict = tmp_path / "strict.jsonl"
    api.create(name, sink_config(topic, strict, **converter_config("avro", fixture_registry.url)))
    assert "retrieve the Avro schema of id 4242" in _task_trace(api, name)
    api.delete(f"/connectors/{name}")

    tolerant = tmp_path / "tolerant.jsonl"
    dlq = unique("dlq")
    api.create(
        name + "-all",
        sink_config(
            topic,
            tolerant,
            **converter_config("avro", fixture_registry.url),
            errors_tolerance="all",
            errors_deadletterqueue_topic_name=dlq,
            errors_deadletterqueue_topic_replication_factor="1",
            errors_deadletterqueue_context_headers_enable="true",
        ),
    )
    assert len(wait_records(tolerant, COUNT)) == COUNT
    dead: list = []
    wait_for(lambda: dead.extend(kafka.read_all(dlq, timeout_s=5)) or len(dead) >= 1, 60, 0, "the dead letter")
    assert dead[0][3] == unknown
    api.delete(f"/connectors/{name}-all")


def test_a_schema_the_registry_finds_incompatible_fails_the_source(
    api: Api, kafka: Kafka, fixture_registry: SchemaRegistryServer, name: str
) -> None:
    topic = kafka.create_topic(unique("incompatible"))
    # the subject already holds a schema whose required field the source's records do not have
    old = {
        "type": "record",
        "name": "Sequence",
        "namespace": "runtime.testing",
        "fields": [{"name": "task", "type": "int"}, {"name": "seqno", "type": "long"}],
    }
    client = SchemaRegistryClient({"url": fixture_registry.url})
    client.register_schema(f"{topic}-value", Schema(json.dumps({**old, "fields": old["fields"][:1]}), "AVRO"))
    api.create(
        name,
        {
            "connector.class": "SequenceSource",
            "topic": topic,
            "tasks.max": "1",
            **converter_config("avro", fixture_registry.url),
        },
    )
    trace = _task_trace(api, name)
    assert "incompatible" in trace and f"{topic}-value" in trace, trace
    api.delete(f"/connectors/{name}")
