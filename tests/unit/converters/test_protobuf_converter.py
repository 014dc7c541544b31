"""ProtobufConverter against confluent-kafka's ProtobufSerializer/ProtobufDeserializer, through one registry."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import uuid

import pytest
from confluent_kafka.schema_registry.common import protobuf as confluent_protobuf
from confluent_kafka.schema_registry.common.protobuf import _init_pool
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from runtime.api.data import Schema, SchemaBuilder
from runtime.api.errors import DataError
from runtime.converters.schema_registry.protobuf import ProtobufConverter, new_pool
from runtime.data.logical_schemas import DATE_SCHEMA, TIME_SCHEMA, TIMESTAMP_SCHEMA, decimal_schema

UTC = dt.UTC
F = descriptor_pb2.FieldDescriptorProto


def converter(url: str) -> ProtobufConverter:
    c = ProtobufConverter()
    c.configure({"schema.registry.url": url}, False)
    return c


@pytest.fixture
def url() -> str:
    return f"mock://{uuid.uuid4().hex}"


def ctx(topic: str) -> SerializationContext:
    return SerializationContext(topic, MessageField.VALUE)


ORDER = (
    SchemaBuilder.struct()
    .name("com.example.Order")
    .field("id", Schema("int64"))
    .field("tiny", Schema("int8"))
    .field("count", Schema("int32"))
    .field("ratio", Schema("float32"))
    .field("amount", Schema("float64"))
    .field("paid", Schema("boolean"))
    .field("note", Schema("string"))
    .field("raw", Schema("bytes"))
    .field("price", decimal_schema(2))
    .field("day", DATE_SCHEMA)
    .field("at", TIME_SCHEMA)
    .field("ts", TIMESTAMP_SCHEMA)
    .field("labels", SchemaBuilder.map(Schema("string"), Schema("int32")).build())
    .field("nums", SchemaBuilder.array(Schema("int64")).build())
    .field(
        "lines", SchemaBuilder.array(SchemaBuilder.struct().name("Line").field("sku", Schema("string")).build()).build()
    )
    .field("customer", SchemaBuilder.struct().name("Customer").field("name", Schema("string")).optional().build())
    .build()
)
ORDER_VALUE = {
    "id": 2**40,
    "tiny": -3,
    "count": 7,
    "ratio": 0.5,
    "amount": 2.25,
    "paid": True,
    "note": "hi",
    "raw": b"\x01\x02",
    "price": decimal.Decimal("-12.34"),
    "day": dt.date(2024, 2, 29),
    "at": dt.time(13, 14, 15, 16000),
    "ts": dt.datetime(2024, 2, 29, 1, 2, 3, 4000, tzinfo=UTC),
    "labels": {"a": 1},
    "nums": [1, 2],
    "lines": [{"sku": "x"}],
    "customer": {"name": "ann"},
}


def test_round_trip_keeps_every_value(url) -> None:
    data = converter(url).from_connect_data("orders", ORDER, ORDER_VALUE)
    assert data[:1] == b"\x00" and data[5:6] == b"\x00"  # magic byte, id, message index [0]
    schema, value = converter(url).to_connect_data("orders", data)
    assert value == ORDER_VALUE
    fields = {f.name: f.schema for f in schema.fields}
    assert schema.name == "Order" and schema.version == 1
    assert fields["tiny"].type == "int8" and fields["ratio"].type == "float32"
    assert fields["price"].name == "org.apache.kafka.connect.data.Decimal" and fields["price"].optional
    assert fields["labels"].type == "map" and fields["nums"].type == "array"
    assert fields["customer"].type == "struct" and fields["customer"].optional


def _message_class(
    file: descriptor_pb2.FileDescriptorProto, name: str, *imports: descriptor_pb2.FileDescriptorProto
) -> type:
    pool = descriptor_pool.DescriptorPool()
    _init_pool(pool)
    for imported in imports:
        pool.Add(imported)
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))


def test_every_file_confluent_kafkas_readers_know_without_a_reference_is_in_ours() -> None:
    # confluent-kafka lists its built-in files in a private function; ours must not miss one it adds
    builtin = [m.DESCRIPTOR.name for k, m in vars(confluent_protobuf).items() if k.endswith("_pb2")]
    pool = new_pool()
    assert len(builtin) > 20
    for name in builtin:
        assert pool.FindFileByName(name).name == name


def test_confluent_kafkas_deserializer_reads_our_records(url) -> None:
    c = converter(url)
    data = c.from_connect_data("orders", ORDER, ORDER_VALUE)
    registered = c.client.get_latest_version("orders-value").schema
    file = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(registered.schema_str))
    file.name = "order.proto"
    cls = _message_class(file, "com.example.Order")
    message = ProtobufDeserializer(cls, {"use.deprecated.format": False}, c.client)(data, ctx("orders"))
    assert message.id == 2**40 and message.tiny == -3 and message.note == "hi" and message.raw == b"\x01\x02"
    assert (message.day.year, message.day.month, message.day.day) == (2024, 2, 29)
    assert message.ts.seconds == int(ORDER_VALUE["ts"].timestamp()) and message.ts.nanos == 4_000_000
    assert dict(message.labels) == {"a": 1} and list(message.nums) == [1, 2] and message.customer.name == "ann"
    assert message.lines[0].sku == "x"
    unscaled = int.from_bytes(message.price.value, "big", signed=True)
    assert (unscaled, message.price.scale) == (-1234, 2)


def _payment_file() -> descriptor_pb2.FileDescriptorProto:
    file = descriptor_pb2.FileDescriptorProto(name="payment.proto", package="io.example", syntax="proto3")
    file.dependency.extend(
        ["google/protobuf/timestamp.proto", "google/type/date.proto", "confluent/type/decimal.proto"]
    )
    kind = file.enum_type.add(name="Kind")
    kind.value.add(name="CARD", number=0)
    kind.value.add(name="CASH", number=1)
    message = file.message_type.add(name="Payment")
    for number, (name, type_, type_name) in enumerate(
        [
            ("id", F.TYPE_STRING, ""),
            ("cents", F.TYPE_SINT64, ""),
            ("when", F.TYPE_MESSAGE, ".google.protobuf.Timestamp"),
            ("day", F.TYPE_MESSAGE, ".google.type.Date"),
            ("amount", F.TYPE_MESSAGE, ".confluent.type.Decimal"),
            ("kind", F.TYPE_ENUM, ".io.example.Kind"),
            ("ok", F.TYPE_BOOL, ""),
        ],
        start=1,
    ):
        field = message.field.add(name=name, number=number, type=type_, label=F.LABEL_OPTIONAL)
        if type_name:
            field.type_name = type_name
    tags = message.field.add(name="tags", number=8, type=F.TYPE_STRING, label=F.LABEL_REPEATED)
    assert tags
    return file


def test_records_from_confluent_kafkas_serializer_reach_connect_typed(url) -> None:
    cls = _message_class(_payment_file(), "io.example.Payment")
    # The message class lives in its own descriptor pool: its message fields are filled in place.
    message = cls(id="p1", cents=-250, kind=1, ok=True, tags=["a", "b"])
    message.when.seconds, message.when.nanos = 1_700_000_000, 5_000_000
    message.day.year, message.day.month, message.day.day = 2025, 1, 31
    message.amount.value, message.amount.scale = (1050).to_bytes(2, "big", signed=True), 2
    c = converter(url)
    data = ProtobufSerializer(cls, c.client, {"use.deprecated.format": False})(message, ctx("pay"))
    schema, value = c.to_connect_data("pay", data)
    assert value == {
        "id": "p1",
        "cents": -250,
        "when": dt.datetime(2023, 11, 14, 22, 13, 20, 5000, tzinfo=UTC),
        "day": dt.date(2025, 1, 31),
        "amount": decimal.Decimal("10.50"),
        "kind": "CASH",
        "ok": True,
        "tags": ["a", "b"],
    }
    fields = {f.name: f.schema for f in schema.fields}
    assert schema.name == "Payment" and fields["cents"].type == "int64"
    assert (
        fields["kind"].type == "string"
        and dict(fields["kind"].parameters)["io.confluent.connect.protobuf.Enum"] == "Kind"
    )
    assert fields["when"].name == "org.apache.kafka.connect.data.Timestamp"
    assert fields["day"].name == "org.apache.kafka.connect.data.Date"


def test_only_structs_can_be_written_and_bad_bytes_are_data_errors(url) -> None:
    c = converter(url)
    with pytest.raises(DataError, match="root schema of type string"):
        c.from_connect_data("t", Schema("string"), "x")
    data = c.from_connect_data("t", ORDER, ORDER_VALUE)
    with pytest.raises(DataError, match="to Protobuf"):
        c.to_connect_data("t", data[:6] + b"\xff\xff\xff")


def _imported_and_importing_files() -> tuple[descriptor_pb2.FileDescriptorProto, descriptor_pb2.FileDescriptorProto]:
    common = descriptor_pb2.FileDescriptorProto(name="shop/money.proto", package="shop", syntax="proto3")
    money = common.message_type.add(name="Money")
    money.field.add(name="currency", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    money.field.add(name="cents", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    orders = descriptor_pb2.FileDescriptorProto(name="shop/order.proto", package="shop", syntax="proto3")
    orders.dependency.append("shop/money.proto")
    header = orders.message_type.add(name="Header")
    header.field.add(name="id", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    order = orders.message_type.add(name="Order")
    order.field.add(name="total", number=1, type=F.TYPE_MESSAGE, type_name=".shop.Money", label=F.LABEL_OPTIONAL)
    order.field.add(name="note", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    return common, orders


def test_a_schema_importing_a_registered_file_and_a_second_message_of_it_are_read(url) -> None:
    common, orders = _imported_and_importing_files()
    cls = _message_class(orders, "shop.Order", common)
    c = converter(url)
    # confluent-kafka's serializer registers shop/money.proto under its own subject and refers to it
    data = ProtobufSerializer(cls, c.client, {"use.deprecated.format": False})(
        cls(note="n", total={"currency": "EUR", "cents": 250}), ctx("shop")
    )
    assert data[5:7] == b"\x02\x02"  # message indexes [1]: the file's second message, Order
    assert c.client.get_latest_version("shop-value").schema.references[0].name == "shop/money.proto"
    schema, value = c.to_connect_data("shop", data)
    assert value == {"total": {"currency": "EUR", "cents": 250}, "note": "n"}
    assert schema.name == "Order" and [f.name for f in schema.fields] == ["total", "note"]
    assert schema.fields[0].schema.name == "Money"
