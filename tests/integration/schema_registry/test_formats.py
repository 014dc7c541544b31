"""Avro, Protobuf and JSON Schema through a worker and a Schema Registry HTTP API, both directions:

- records written by confluent-kafka's own serializers reach a sink's put() as the same values, typed by
  the writer's schema (the RecordingSink writes each value's Connect schema next to it);
- records a source of this runtime writes are read back by confluent-kafka's deserializers into the same
  values, for every field type (tests/integration/plugins/typed_source.py);
- `schema.registry.url=mock://scope` lets a source and a sink of one worker share an in-process registry;
- transforms work on the structs these converters deliver (ReplaceField, InsertField).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.common.protobuf import _init_pool, protobuf_to_decimal
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext, StringSerializer
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from tests.integration.plugins import typed_source
from tests.integration.scenarios.helpers import Api, Kafka, read_jsonl, sink_config
from tests.support.broker import unique
from tests.support.worker import wait_for

pytestmark = pytest.mark.integration

CONVERTERS = {
    "avro": "io.confluent.connect.avro.AvroConverter",
    "protobuf": "io.confluent.connect.protobuf.ProtobufConverter",
    "json": "io.confluent.connect.json.JsonSchemaConverter",
}
UTC = dt.UTC
N = 30


def converter_config(fmt: str, url: str, **extra: str) -> dict[str, str]:
    return {
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": CONVERTERS[fmt],
        "value.converter.schema.registry.url": url,
        **extra,
    }


def as_recorded(value: Any) -> Any:
    """A value as RecordingSink writes it (bytes base64, Decimal and the like via str, dates ISO)."""

    def fallback(v: Any) -> Any:
        return base64.b64encode(v).decode() if isinstance(v, (bytes, bytearray)) else str(v)

    return orjson.loads(orjson.dumps(value, default=fallback, option=orjson.OPT_NON_STR_KEYS))


def wait_records(path: Path, count: int, timeout_s: float = 90) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def enough() -> bool:
        found[:] = read_jsonl(path)
        return len(found) >= count

    wait_for(enough, timeout_s, 0, f"{count} records in {path}")
    return sorted(found, key=lambda r: r["offset"])


# ---- confluent-kafka's serializers -> a sink ---------------------------------------------------------

AVRO_SCHEMA = {
    "type": "record",
    "name": "Payment",
    "namespace": "io.example",
    "fields": [
        {"name": "id", "type": "string"},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
        {"name": "when", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["CARD", "CASH"]}},
        {"name": "memo", "type": ["null", "string"], "default": None},
        {"name": "meta", "type": {"type": "map", "values": "long"}},
        {"name": "scores", "type": {"type": "array", "items": "double"}},
        {"name": "blob", "type": "bytes"},
    ],
}
JSON_SCHEMA = {
    "title": "Payment",
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "cents": {"type": "integer"},
        "rate": {"type": "number"},
        "memo": {"type": ["string", "null"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "card": {"type": "object", "properties": {"last4": {"type": "string"}}},
    },
}


def payment_class() -> type:
    F = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="payment.proto", package="io.example", syntax="proto3")
    file.dependency.extend(["google/protobuf/timestamp.proto", "confluent/type/decimal.proto"])
    message = file.message_type.add(name="Payment")
    for number, (name, type_, type_name, repeated) in enumerate(
        [
            ("id", F.TYPE_STRING, "", False),
            ("cents", F.TYPE_SINT64, "", False),
            ("when", F.TYPE_MESSAGE, ".google.protobuf.Timestamp", False),
            ("amount", F.TYPE_MESSAGE, ".confluent.type.Decimal", False),
            ("tags", F.TYPE_STRING, "", True),
        ],
        start=1,
    ):
        field = message.field.add(
            name=name, number=number, type=type_, label=F.LABEL_REPEATED if repeated else F.LABEL_OPTIONAL
        )
        if type_name:
            field.type_name = type_name
    pool = descriptor_pool.DescriptorPool()
    _init_pool(pool)
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("io.example.Payment"))


def avro_records(client: SchemaRegistryClient, topic: str) -> tuple[list[bytes], list[Any], dict[str, str]]:
    serialize = AvroSerializer(client, json.dumps(AVRO_SCHEMA))
    values = [
        {
            "id": f"p{n}",
            "amount": decimal.Decimal(n).scaleb(-2),
            "when": dt.datetime(2025, 1, 1, tzinfo=UTC) + dt.timedelta(seconds=n),
            "day": dt.date(2025, 1, 1) + dt.timedelta(days=n),
            "kind": "CASH" if n % 2 else "CARD",
            "memo": None if n % 2 else "m",
            "meta": {"n": n},
            "scores": [n / 2],
            "blob": bytes([n]),
        }
        for n in range(N)
    ]
    data = [serialize(v, SerializationContext(topic, MessageField.VALUE)) for v in values]
    return (
        data,
        values,
        {
            "amount": "org.apache.kafka.connect.data.Decimal",
            "when": "org.apache.kafka.connect.data.Timestamp",
            "day": "org.apache.kafka.connect.data.Date",
        },
    )


def json_records(client: SchemaRegistryClient, topic: str) -> tuple[list[bytes], list[Any], dict[str, str]]:
    serialize = JSONSerializer(json.dumps(JSON_SCHEMA), client)
    values = [
        {
            "id": f"p{n}",
            "cents": -n,
            "rate": n + 0.25,
            "memo": None if n % 2 else "m",
            "tags": ["a", str(n)],
            "card": {"last4": f"{n:04d}"},
        }
        for n in range(N)
    ]
    data = [serialize(v, SerializationContext(topic, MessageField.VALUE)) for v in values]
    return data, values, {}


def protobuf_records(client: SchemaRegistryClient, topic: str) -> tuple[list[bytes], list[Any], dict[str, str]]:
    cls = payment_class()
    serialize = ProtobufSerializer(cls, client, {"use.deprecated.format": False})
    data, values = [], []
    for n in range(N):
        message = cls(id=f"p{n}", cents=-n, tags=["a", str(n)])
        message.when.seconds = 1_700_000_000 + n
        message.amount.value, message.amount.scale = (n * 7).to_bytes(2, "big", signed=True), 2
        data.append(serialize(message, SerializationContext(topic, MessageField.VALUE)))
        values.append(
            {
                "id": f"p{n}",
                "cents": -n,
                "when": dt.datetime.fromtimestamp(1_700_000_000 + n, UTC),
                "amount": decimal.Decimal(n * 7).scaleb(-2),
                "tags": ["a", str(n)],
            }
        )
    return (
        data,
        values,
        {"amount": "org.apache.kafka.connect.data.Decimal", "when": "org.apache.kafka.connect.data.Timestamp"},
    )


WRITERS: dict[str, Callable[[SchemaRegistryClient, str], tuple[list[bytes], list[Any], dict[str, str]]]] = {
    "avro": avro_records,
    "json": json_records,
    "protobuf": protobuf_records,
}


@pytest.mark.parametrize("fmt", ["avro", "protobuf", "json"])
def test_records_from_confluent_kafkas_serializers_reach_put_typed(
    fmt: str, api: Api, kafka: Kafka, bootstrap_servers: str, registry_url: str, name: str, out_file: Path
) -> None:
    topic = kafka.create_topic(unique(f"{fmt}-in"))
    data, values, logical = WRITERS[fmt](SchemaRegistryClient({"url": registry_url}), topic)
    producer = Producer({"bootstrap.servers": bootstrap_servers})
    for n, payload in enumerate(data):
        producer.produce(topic, payload, key=f"k{n}".encode())
    assert producer.flush(30) == 0
    api.create(name, sink_config(topic, out_file, **converter_config(fmt, registry_url), record_schemas="true"))
    records = wait_records(out_file, N)
    assert [r["value"] for r in records] == [as_recorded(v) for v in values]
    schema = records[0]["value_schema"]
    assert schema["type"] == "struct" and schema["name"].endswith("Payment")
    fields = {f["field"]: f for f in schema["fields"]}
    for field, logical_name in logical.items():
        assert fields[field]["name"] == logical_name, (field, fields[field])
    api.delete(f"/connectors/{name}")


# ---- a source -> confluent-kafka's deserializers ------------------------------------------------------


def _avro_expected(v: dict[str, Any]) -> dict[str, Any]:
    return {**v, "by_code": [{"key": k, "value": x} for k, x in v["by_code"].items()]}


def _json_expected(v: dict[str, Any]) -> dict[str, Any]:
    millis = (v["ts"] - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(milliseconds=1)
    at = v["at"]
    return {
        **v,
        "raw": base64.b64encode(v["raw"]).decode(),
        "price": float(v["price"]),
        "day": (v["day"] - dt.date(1970, 1, 1)).days,
        "ts": millis,
        "at": ((at.hour * 60 + at.minute) * 60 + at.second) * 1000 + at.microsecond // 1000,
        "by_code": [{"key": k, "value": x} for k, x in v["by_code"].items()],
    }


def _read_protobuf(client: SchemaRegistryClient, topic: str, payloads: list[bytes]) -> list[dict[str, Any]]:
    registered = client.get_latest_version(f"{topic}-value").schema
    file = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(registered.schema_str))
    pool = descriptor_pool.DescriptorPool()
    _init_pool(pool)
    pool.Add(file)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("com.example.Order"))
    deserialize = ProtobufDeserializer(cls, {"use.deprecated.format": False}, client)
    out = []
    for payload in payloads:
        m = deserialize(payload, SerializationContext(topic, MessageField.VALUE))
        out.append(
            {
                "id": m.id,
                "tiny": m.tiny,
                "short": m.short,
                "count": m.count,
                "ratio": m.ratio,
                "amount": m.amount,
                "paid": m.paid,
                "note": m.note or None,
                "raw": m.raw,
                "price": protobuf_to_decimal(m.price),
                "day": dt.date(m.day.year, m.day.month, m.day.day),
                "at": dt.time(m.at.hours, m.at.minutes, m.at.seconds, m.at.nanos // 1000),
                "ts": dt.datetime.fromtimestamp(m.ts.seconds, UTC) + dt.timedelta(microseconds=m.ts.nanos // 1000),
                "labels": dict(m.labels),
                "by_code": dict(m.by_code),
                "lines": [{"sku": x.sku, "qty": x.qty} for x in m.lines],
            }
        )
    return out


@pytest.mark.parametrize("fmt", ["avro", "protobuf", "json"])
def test_confluent_kafkas_deserializers_read_what_a_source_wrote(
    fmt: str, api: Api, kafka: Kafka, registry_url: str, name: str
) -> None:
    topic = kafka.create_topic(unique(f"{fmt}-out"))
    config = {
        "connector.class": "tests.integration.plugins.typed_source.TypedSourceConnector",
        "topic": topic,
        "records": str(N),
        "tasks.max": "1",
        **converter_config(fmt, registry_url),
    }
    api.create(name, config)
    records = _read_n(kafka, topic, lambda: api.status(name))
    payloads = [value for _, _, _, value in records]
    client = SchemaRegistryClient({"url": registry_url})
    context = SerializationContext(topic, MessageField.VALUE)
    expected = [typed_source.value(n) for n in range(N)]
    if fmt == "avro":
        assert [AvroDeserializer(client)(p, context) for p in payloads] == [_avro_expected(v) for v in expected]
    elif fmt == "json":
        read = [JSONDeserializer(None, schema_registry_client=client)(p, context) for p in payloads]
        assert read == [_json_expected(v) for v in expected]
    else:
        assert _read_protobuf(client, topic, payloads) == expected
    assert [StringSerializer()(f"order-{n}") for n in range(N)] == [k for _, _, k, _ in records]
    api.delete(f"/connectors/{name}")


def _read_n(kafka: Kafka, topic: str, status: Callable[[], Any]) -> list[tuple[int, int, bytes | None, bytes | None]]:
    found: list[tuple[int, int, bytes | None, bytes | None]] = []

    def enough() -> bool:
        found[:] = kafka.read_all(topic, timeout_s=5)
        if len(found) < N and "FAILED" in json.dumps(status()):
            raise AssertionError(f"the source failed: {status()}")
        return len(found) >= N

    wait_for(enough, 90, 0, f"{N} records in {topic}")
    return sorted(found, key=lambda r: r[1])


def test_mock_registry_scope_is_shared_by_a_source_and_a_sink_of_one_worker(
    api: Api, kafka: Kafka, name: str, out_file: Path
) -> None:
    topic = kafka.create_topic(unique("mock"))
    scope = f"mock://{uuid.uuid4().hex}"
    api.create(
        name + "-src",
        {
            "connector.class": "tests.integration.plugins.typed_source.TypedSourceConnector",
            "topic": topic,
            "records": str(N),
            "tasks.max": "1",
            **converter_config("avro", scope),
        },
    )
    api.create(name + "-sink", sink_config(topic, out_file, **converter_config("avro", scope)))
    records = wait_records(out_file, N)
    assert [r["value"] for r in records] == [as_recorded(typed_source.value(n)) for n in range(N)]
    api.delete(f"/connectors/{name}-src")
    api.delete(f"/connectors/{name}-sink")


def test_transforms_work_on_registry_records(
    api: Api, kafka: Kafka, bootstrap_servers: str, registry_url: str, name: str, out_file: Path
) -> None:
    topic = kafka.create_topic(unique("avro-smt"))
    data, values, _ = avro_records(SchemaRegistryClient({"url": registry_url}), topic)
    producer = Producer({"bootstrap.servers": bootstrap_servers})
    for payload in data:
        producer.produce(topic, payload)
    assert producer.flush(30) == 0
    replace = "org.apache.kafka.connect.transforms.ReplaceField$Value"
    api.create(
        name,
        sink_config(
            topic,
            out_file,
            **converter_config("avro", registry_url),
            record_schemas="true",
            transforms="drop,tag",
            transforms_drop_type=replace,
            transforms_drop_exclude="blob,meta,scores",
            **{
                "transforms.drop.renames": "id:payment_id",
                "transforms.tag.type": "org.apache.kafka.connect.transforms.InsertField$Value",
                "transforms.tag.static.field": "origin",
                "transforms.tag.static.value": "registry",
            },
        ),
    )
    records = wait_records(out_file, N)
    expected = []
    for v in values:
        kept = {("payment_id" if k == "id" else k): x for k, x in v.items() if k not in ("blob", "meta", "scores")}
        expected.append(as_recorded({**kept, "origin": "registry"}))
    assert [r["value"] for r in records] == expected
    fields = {f["field"]: f for f in records[0]["value_schema"]["fields"]}
    assert list(fields) == ["payment_id", "amount", "when", "day", "kind", "memo", "origin"]
    assert fields["amount"]["name"] == "org.apache.kafka.connect.data.Decimal"
    assert fields["day"]["name"] == "org.apache.kafka.connect.data.Date" and fields["origin"]["type"] == "string"
    api.delete(f"/connectors/{name}")
