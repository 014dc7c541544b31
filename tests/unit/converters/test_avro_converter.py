"""AvroConverter against confluent-kafka's own AvroSerializer/AvroDeserializer, through one registry.

Both sides share `mock://` registries (confluent-kafka's in-memory client, one per scope and process),
so every byte written by one is read by the other exactly as on a real registry.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import uuid

import fastavro
import pytest
from confluent_kafka.schema_registry import Schema as RegistrySchema
from confluent_kafka.schema_registry import SchemaReference
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from runtime.api.data import Schema, SchemaBuilder
from runtime.api.errors import ConfigError, DataError, RetriableError
from runtime.converters.schema_registry.avro import AvroConverter
from runtime.converters.schema_registry.avro_data import avro_to_connect_schema, connect_to_avro_schema
from runtime.data.logical_schemas import DATE_SCHEMA, TIME_SCHEMA, TIMESTAMP_SCHEMA, decimal_schema
from tests.support.schema_registry import SchemaRegistryServer, self_signed_certificate

UTC = dt.UTC


def converter(url: str, is_key: bool = False, **settings: str) -> AvroConverter:
    c = AvroConverter()
    c.configure({"schema.registry.url": url, **settings}, is_key)
    return c


@pytest.fixture
def url() -> str:
    return f"mock://{uuid.uuid4().hex}"


def precise_decimal(scale: int, precision: int) -> Schema:
    base = decimal_schema(scale)
    return Schema(
        "bytes",
        name=base.name,
        version=1,
        parameters=(("scale", str(scale)), ("connect.decimal.precision", str(precision))),
    )


ORDER = (
    SchemaBuilder.struct()
    .name("com.example.Order")
    .version(3)
    .doc("an order")
    .field("id", Schema("int64"))
    .field("tiny", Schema("int8"))
    .field("short", Schema("int16"))
    .field("count", Schema("int32"))
    .field("ratio", Schema("float32"))
    .field("amount", Schema("float64"))
    .field("paid", Schema("boolean"))
    .field("note", Schema("string", optional=True))
    .field("raw", Schema("bytes"))
    .field("price", decimal_schema(2))
    .field("exact", precise_decimal(4, 10))
    .field("day", DATE_SCHEMA)
    .field("at", TIME_SCHEMA)
    .field("ts", TIMESTAMP_SCHEMA)
    .field("status", Schema("string", default="NEW"))
    .field("labels", SchemaBuilder.map(Schema("string"), Schema("int32")).build())
    .field("by_code", SchemaBuilder.map(Schema("int32"), Schema("string")).build())
    .field(
        "lines",
        SchemaBuilder.array(
            SchemaBuilder.struct()
            .name("com.example.Line")
            .field("sku", Schema("string"))
            .field("qty", Schema("int32"))
            .build()
        ).build(),
    )
    .field(
        "customer",
        SchemaBuilder.struct()
        .field("name", Schema("string"))
        .field("vip", Schema("boolean", optional=True))
        .optional()
        .build(),
    )
    .build()
)

ORDER_VALUE = {
    "id": 2**40,
    "tiny": -7,
    "short": 3000,
    "count": -5,
    "ratio": 0.5,
    "amount": 1e-3,
    "paid": True,
    "note": None,
    "raw": b"\x00\xff",
    "price": decimal.Decimal("12.34"),
    "exact": decimal.Decimal("-1.0001"),
    "day": dt.date(2024, 2, 29),
    "at": dt.time(23, 59, 59, 999000),
    "ts": dt.datetime(2024, 2, 29, 12, 0, 0, 1000, tzinfo=UTC),
    "status": "PAID",
    "labels": {"a": 1},
    "by_code": {404: "missing", 500: "broken"},
    "lines": [{"sku": "x", "qty": 2}],
    "customer": {"name": "ann", "vip": None},
}


def test_round_trip_keeps_every_field_type_and_the_connect_schema(url) -> None:
    c = converter(url)
    data = c.from_connect_data("orders", ORDER, ORDER_VALUE)
    assert data[0] == 0 and int.from_bytes(data[1:5], "big") >= 1
    schema, value = converter(url).to_connect_data("orders", data)
    assert value == ORDER_VALUE
    assert schema == ORDER  # connect.name/version/doc/parameters/defaults keep the schema whole


def test_what_confluent_kafkas_deserializer_reads_from_our_bytes(url) -> None:
    c = converter(url)
    data = c.from_connect_data("orders", ORDER, ORDER_VALUE)
    read = AvroDeserializer(c.client)(data, SerializationContext("orders", MessageField.VALUE))
    assert read["id"] == 2**40 and read["tiny"] == -7 and read["note"] is None
    assert read["price"] == decimal.Decimal("12.34") and read["exact"] == decimal.Decimal("-1.0001")
    assert read["day"] == dt.date(2024, 2, 29) and read["at"] == dt.time(23, 59, 59, 999000)
    assert read["ts"] == dt.datetime(2024, 2, 29, 12, 0, 0, 1000, tzinfo=UTC)
    assert read["by_code"] == [{"key": 404, "value": "missing"}, {"key": 500, "value": "broken"}]
    assert read["customer"] == {"name": "ann", "vip": None} and read["lines"] == [{"sku": "x", "qty": 2}]
    registered = json.loads(c.client.get_latest_version("orders-value").schema.schema_str)
    assert registered["name"] == "Order" and registered["namespace"] == "com.example"
    assert registered["connect.version"] == 3 and registered["connect.doc"] == "an order"


CONFLUENT_SCHEMA = {
    "type": "record",
    "name": "Payment",
    "namespace": "io.example",
    "doc": "a payment",
    "fields": [
        {"name": "id", "type": "string"},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
        {"name": "when", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["CARD", "CASH"]}},
        {"name": "memo", "type": ["null", "string"], "default": None},
        {"name": "retries", "type": "int", "default": 0, "doc": "how often"},
        {"name": "meta", "type": {"type": "map", "values": "long"}},
        {
            "name": "card",
            "type": ["null", {"type": "record", "name": "Card", "fields": [{"name": "last4", "type": "string"}]}],
            "default": None,
        },
        {"name": "scores", "type": {"type": "array", "items": "double"}},
        {"name": "ok", "type": "boolean"},
        {"name": "blob", "type": "bytes"},
        {"name": "f", "type": "float"},
    ],
}


def test_what_confluent_kafkas_serializer_wrote_reaches_connect_as_typed_values(url) -> None:
    c = converter(url)
    value = {
        "id": "p1",
        "amount": decimal.Decimal("10.50"),
        "when": dt.datetime(2025, 1, 1, tzinfo=UTC),
        "day": dt.date(2025, 1, 1),
        "at": dt.time(8, 30),
        "kind": "CASH",
        "memo": None,
        "retries": 2,
        "meta": {"a": 1},
        "card": {"last4": "4242"},
        "scores": [1.5],
        "ok": False,
        "blob": b"\x01",
        "f": 0.25,
    }
    data = AvroSerializer(c.client, json.dumps(CONFLUENT_SCHEMA))(
        value, SerializationContext("pay", MessageField.VALUE)
    )
    schema, read = c.to_connect_data("pay", data)
    assert read == value
    assert schema.name == "io.example.Payment" and schema.version == 1  # the registry's version
    fields = {f.name: f.schema for f in schema.fields}
    assert fields["amount"].name == "org.apache.kafka.connect.data.Decimal"
    assert dict(fields["amount"].parameters) == {"scale": "2", "connect.decimal.precision": "9"}
    assert fields["when"].name == "org.apache.kafka.connect.data.Timestamp" and fields["when"].type == "int64"
    assert fields["day"].name == "org.apache.kafka.connect.data.Date"
    assert fields["at"].name == "org.apache.kafka.connect.data.Time"
    assert (
        fields["kind"].type == "string"
        and dict(fields["kind"].parameters)["io.confluent.connect.avro.Enum"] == "io.example.Kind"
    )
    assert fields["memo"].optional and fields["memo"].type == "string"
    assert fields["retries"].default == 0 and dict(fields["retries"].parameters) == {
        "io.confluent.connect.avro.field.default": "true"
    }
    assert fields["card"].optional and fields["card"].name == "io.example.Card"
    assert fields["meta"].type == "map" and fields["meta"].value_schema.type == "int64"
    assert fields["f"].type == "float32" and fields["blob"].type == "bytes"
    assert dict(schema.parameters)["io.confluent.connect.avro.field.doc.retries"] == "how often"
    # and written back by this converter, confluent-kafka reads the same values again
    again = c.from_connect_data("pay-copy", schema, read)
    assert AvroDeserializer(c.client)(again, SerializationContext("pay-copy", MessageField.VALUE)) == value


def test_subject_name_strategies(url) -> None:
    schema = SchemaBuilder.struct().name("com.example.Event").field("n", Schema("int32")).build()
    for strategy, subject in (
        ("TopicNameStrategy", "events-value"),
        ("io.confluent.kafka.serializers.subject.RecordNameStrategy", "com.example.Event"),
        ("TopicRecordNameStrategy", "events-com.example.Event"),
    ):
        c = converter(url, **{"value.subject.name.strategy": strategy})
        c.from_connect_data("events", schema, {"n": 1})
        assert subject in c.client.get_subjects(), (strategy, c.client.get_subjects())
    key = converter(url, is_key=True)
    key.from_connect_data("events", Schema("string"), "k")
    assert "events-key" in key.client.get_subjects()


def test_without_auto_register_an_unregistered_schema_is_a_data_error(url) -> None:
    schema = SchemaBuilder.struct().name("com.example.New").field("n", Schema("int32")).build()
    with pytest.raises(DataError, match="look up the Avro schema in subject t-value"):
        converter(url, **{"auto.register.schemas": "false"}).from_connect_data("t", schema, {"n": 1})


def test_use_latest_version_writes_with_the_subjects_latest_schema(url) -> None:
    latest = {
        "type": "record",
        "name": "Event",
        "namespace": "com.example",
        "fields": [{"name": "n", "type": "int"}, {"name": "tag", "type": "string", "default": "none"}],
    }
    AvroSerializer(converter(url).client, json.dumps(latest))(
        {"n": 0, "tag": "x"}, SerializationContext("t", MessageField.VALUE)
    )
    c = converter(
        url, **{"auto.register.schemas": "false", "use.latest.version": "true", "latest.compatibility.strict": "false"}
    )
    schema = SchemaBuilder.struct().name("com.example.Event").field("n", Schema("int32")).build()
    data = c.from_connect_data("t", schema, {"n": 7})
    assert AvroDeserializer(c.client)(data, SerializationContext("t", MessageField.VALUE)) == {"n": 7, "tag": "none"}


def test_bad_input_is_a_data_error_naming_the_problem(url) -> None:
    c = converter(url)
    with pytest.raises(DataError, match="Unknown magic byte"):
        c.to_connect_data("t", b"{}")
    with pytest.raises(DataError, match="id 4242"):
        c.to_connect_data("t", b"\x00\x00\x00\x10\x92rest")
    with pytest.raises(DataError, match="mismatching scale"):
        c.from_connect_data("t", decimal_schema(2), decimal.Decimal("1.5"))
    with pytest.raises(DataError, match="Failed to serialize Avro data from topic t"):
        c.from_connect_data("t", Schema("int32"), "not a number")
    with pytest.raises(DataError, match="needs a schema"):
        c.from_connect_data("t", None, {"a": 1})
    assert c.from_connect_data("t", Schema("string", optional=True), None) is None
    assert c.to_connect_data("t", None) == (None, None)


def test_settings_are_checked_with_the_key_named() -> None:
    with pytest.raises(ConfigError, match="schema.registry.url"):
        AvroConverter().configure({}, False)
    with pytest.raises(ConfigError, match="schema.registry.url"):
        AvroConverter().configure({"schema.registry.url": "ftp://x"}, False)
    with pytest.raises(ConfigError, match="value.subject.name.strategy"):
        AvroConverter().configure({"schema.registry.url": "mock://x", "value.subject.name.strategy": "Nope"}, False)
    with pytest.raises(ConfigError, match="basic.auth.user.info"):
        AvroConverter().configure(
            {"schema.registry.url": "http://x", "basic.auth.credentials.source": "USER_INFO"}, False
        )
    with pytest.raises(ConfigError, match="truststore.type"):
        AvroConverter().configure(
            {"schema.registry.url": "https://x", "schema.registry.ssl.truststore.location": "/x.jks"}, False
        )


def test_unnamed_nested_structs_get_distinct_default_names() -> None:
    inner = SchemaBuilder.struct().field("a", Schema("int32")).build()
    outer = (
        SchemaBuilder.struct()
        .field("x", inner)
        .field("y", SchemaBuilder.struct().field("b", Schema("string")).build())
        .build()
    )
    avro = connect_to_avro_schema(outer)
    assert avro["name"] == "ConnectDefault"
    assert [f["type"]["name"] for f in avro["fields"]] == ["ConnectDefault2", "ConnectDefault3"]
    back = avro_to_connect_schema(avro)
    assert back.name is None and back.fields[0].schema.name is None


def test_a_general_union_is_a_connect_union_struct(url) -> None:
    union_schema = {"type": "record", "name": "U", "fields": [{"name": "v", "type": ["null", "int", "string"]}]}
    c = converter(url)
    data = AvroSerializer(c.client, json.dumps(union_schema))({"v": "s"}, SerializationContext("u", MessageField.VALUE))
    schema, value = c.to_connect_data("u", data)
    field = schema.fields[0].schema
    assert field.name == "io.confluent.connect.avro.Union" and field.optional
    assert [f.name for f in field.fields] == ["int", "string"]
    assert value == {"v": {"int": None, "string": "s"}}
    assert AvroDeserializer(c.client)(
        c.from_connect_data("u2", schema, value), SerializationContext("u2", MessageField.VALUE)
    ) == {"v": "s"}


def test_tls_and_basic_auth_settings_reach_the_registry(tmp_path) -> None:
    cert, key = self_signed_certificate(str(tmp_path))
    schema = SchemaBuilder.struct().name("com.example.S").field("n", Schema("int32")).build()
    with SchemaRegistryServer(tls=(cert, key), user_info="alice:s3cret") as server:
        secured = converter(
            server.url,
            **{
                "schema.registry.ssl.truststore.location": cert,
                "schema.registry.ssl.truststore.type": "PEM",
                "basic.auth.credentials.source": "USER_INFO",
                "basic.auth.user.info": "alice:s3cret",
            },
        )
        data = secured.from_connect_data("secure", schema, {"n": 1})
        assert secured.to_connect_data("secure", data)[1] == {"n": 1}
        untrusted = converter(server.url, **{"schema.registry.request.timeout.ms": "5000"})
        with pytest.raises(RetriableError, match="CERTIFICATE_VERIFY_FAILED"):
            untrusted.from_connect_data("secure", schema, {"n": 2})
        wrong = converter(
            server.url,
            **{
                "schema.registry.ssl.ca.location": cert,
                "basic.auth.credentials.source": "USER_INFO",
                "basic.auth.user.info": "alice:wrong",
            },
        )
        with pytest.raises(DataError, match="HTTP 401") as refused:
            wrong.from_connect_data("secure", schema, {"n": 3})
        assert "wrong" not in str(refused.value) and "s3cret" not in str(refused.value)


def test_schema_references_resolve_named_types_from_other_subjects(url) -> None:
    c = converter(url)
    address = {
        "type": "record",
        "name": "Address",
        "namespace": "io.example",
        "fields": [{"name": "city", "type": "string"}],
    }
    c.client.register_schema("address", RegistrySchema(json.dumps(address), "AVRO"))
    person = {
        "type": "record",
        "name": "Person",
        "namespace": "io.example",
        "fields": [{"name": "name", "type": "string"}, {"name": "home", "type": "io.example.Address"}],
    }
    reference = SchemaReference("io.example.Address", "address", 1)
    c.client.register_schema("people-value", RegistrySchema(json.dumps(person), "AVRO", [reference]))
    schema_id = c.client.get_latest_version("people-value").schema_id
    named: dict = {}
    fastavro.parse_schema(address, named_schemas=named)
    body = io.BytesIO()
    fastavro.schemaless_writer(
        body, fastavro.parse_schema(person, named_schemas=named), {"name": "ann", "home": {"city": "Oslo"}}
    )
    schema, value = c.to_connect_data("people", b"\x00" + schema_id.to_bytes(4, "big") + body.getvalue())
    assert value == {"name": "ann", "home": {"city": "Oslo"}}
    assert schema.fields[1].schema.name == "io.example.Address"
