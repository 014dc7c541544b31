"""JsonSchemaConverter against confluent-kafka's JSONSerializer/JSONDeserializer, through one registry."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid

import pytest
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from runtime.api.data import Schema, SchemaBuilder
from runtime.api.errors import DataError
from runtime.converters.schema_registry.json_schema import JsonSchemaConverter
from runtime.data.logical_schemas import DATE_SCHEMA, TIMESTAMP_SCHEMA, decimal_schema

UTC = dt.UTC


def converter(url: str, **settings: str) -> JsonSchemaConverter:
    c = JsonSchemaConverter()
    c.configure({"schema.registry.url": url, **settings}, False)
    return c


@pytest.fixture
def url() -> str:
    return f"mock://{uuid.uuid4().hex}"


def ctx(topic: str) -> SerializationContext:
    return SerializationContext(topic, MessageField.VALUE)


USER = (
    SchemaBuilder.struct()
    .name("com.example.User")
    .version(2)
    .doc("a user")
    .field("id", Schema("int64"))
    .field("tiny", Schema("int8"))
    .field("score", Schema("float64"))
    .field("ok", Schema("boolean"))
    .field("name", Schema("string", optional=True))
    .field("raw", Schema("bytes"))
    .field("balance", decimal_schema(3))
    .field("born", DATE_SCHEMA)
    .field("seen", TIMESTAMP_SCHEMA)
    .field("tags", SchemaBuilder.map(Schema("string"), Schema("int32")).build())
    .field("by_id", SchemaBuilder.map(Schema("int64"), Schema("string")).build())
    .field("address", SchemaBuilder.struct().field("city", Schema("string")).optional().build())
    .field("nums", SchemaBuilder.array(Schema("int32")).build())
    .build()
)
USER_VALUE = {
    "id": 9,
    "tiny": 1,
    "score": 2.5,
    "ok": True,
    "name": None,
    "raw": b"\x00\x01",
    "balance": decimal.Decimal("12345678901234567.891"),
    "born": dt.date(2000, 1, 1),
    "seen": dt.datetime(2024, 5, 1, 10, 0, tzinfo=UTC),
    "tags": {"a": 1},
    "by_id": {7: "seven"},
    "address": {"city": "Oslo"},
    "nums": [1, 2],
}


def test_round_trip_keeps_values_and_schema(url) -> None:
    data = converter(url).from_connect_data("users", USER, USER_VALUE)
    schema, value = converter(url).to_connect_data("users", data)
    assert value == USER_VALUE  # the decimal's 20 digits survive: no float on the way
    assert schema == USER


def test_confluent_kafkas_deserializer_reads_our_records(url) -> None:
    c = converter(url)
    data = c.from_connect_data("users", USER, USER_VALUE)
    read = JSONDeserializer(None, schema_registry_client=c.client)(data, ctx("users"))
    assert read["id"] == 9 and read["name"] is None and read["born"] == 10957
    assert read["seen"] == 1714557600000 and read["by_id"] == [{"key": 7, "value": "seven"}]
    assert read["address"] == {"city": "Oslo"} and read["raw"] == "AAE="
    registered = json.loads(c.client.get_latest_version("users-value").schema.schema_str)
    assert registered["title"] == "com.example.User" and registered["description"] == "a user"
    assert registered["properties"]["name"]["oneOf"][0] == {"type": "null"}


PYTHON_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Order",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "price": {"type": "number"},
        "note": {"type": ["string", "null"]},
        "status": {"type": "string", "enum": ["NEW", "PAID"]},
        "lines": {"type": "array", "items": {"$ref": "#/definitions/Line"}},
        "attrs": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "definitions": {"Line": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}},
}


def test_records_from_confluent_kafkas_serializer_reach_connect_typed(url) -> None:
    c = converter(url)
    value = {
        "id": 1,
        "price": 9.5,
        "note": None,
        "status": "PAID",
        "lines": [{"sku": "a", "qty": 2}],
        "attrs": {"k": "v"},
    }
    data = JSONSerializer(json.dumps(PYTHON_SCHEMA), c.client)(value, ctx("orders"))
    schema, read = c.to_connect_data("orders", data)
    assert read == value
    fields = {f.name: f.schema for f in schema.fields}
    assert schema.name == "Order" and schema.version == 1
    assert fields["id"].type == "int64" and fields["price"].type == "float64"
    assert fields["note"].optional and fields["status"].type == "string"
    assert fields["lines"].value_schema.type == "struct" and fields["attrs"].type == "map"


def test_bad_payloads_are_data_errors(url) -> None:
    c = converter(url)
    data = c.from_connect_data("users", USER, USER_VALUE)
    with pytest.raises(DataError, match="users to JSON Schema"):
        c.to_connect_data("users", data[:5] + b"{not json")
    with pytest.raises(DataError, match="required"):
        c.from_connect_data("users", USER, {**USER_VALUE, "id": None})
