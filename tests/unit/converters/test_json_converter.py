"""JsonConverter: exact bytes of Kafka's JsonConverter (expected strings captured from Kafka 3.9's own class)."""

from __future__ import annotations

import datetime as dt
import decimal

import orjson
import pytest

from runtime.api.config import Type
from runtime.api.data import (
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Schema,
    SchemaBuilder,
)
from runtime.api.errors import ConfigError, DataError
from runtime.converters.json import ENVELOPE_MESSAGE, JsonConverter, dumps_schemaless
from runtime.data.java_numbers import java_double_str, java_float_str
from runtime.data.logical_schemas import DATE_SCHEMA, TIME_SCHEMA, TIMESTAMP_SCHEMA, decimal_schema

# Kafka 3.9 JsonConverter output for the same schema and Struct (see the report: produced with the real class).
KAFKA_STRUCT_ENVELOPE = (
    b'{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},'
    b'{"type":"string","optional":true,"default":"dflt","field":"name"},{"type":"bytes","optional":false,"field":"b"},'
    b'{"type":"double","optional":false,"field":"f"},{"type":"float","optional":false,"field":"g"},'
    b'{"type":"array","items":{"type":"string","optional":false},"optional":false,"field":"tags"},'
    b'{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"string","optional":false},'
    b'"optional":true,"field":"m"},{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal",'
    b'"version":1,"parameters":{"scale":"2"},"field":"dec"},{"type":"int64","optional":false,'
    b'"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"ts"},{"type":"int32","optional":false,'
    b'"name":"org.apache.kafka.connect.data.Date","version":1,"field":"dt"}],"optional":false,"name":"com.x.V",'
    b'"version":2,"doc":"d","parameters":{"p":"v"}},"payload":{"id":1,"name":"dflt","b":"AAE=","f":1.0E7,"g":0.1,'
    b'"tags":["a"],"m":[[1,"x"]],"dec":"ew==","ts":1700000000123,"dt":19000}}'
)


def struct_schema() -> Schema:
    return (
        SchemaBuilder.struct()
        .name("com.x.V")
        .version(2)
        .doc("d")
        .parameter("p", "v")
        .field("id", INT32_SCHEMA)
        .field("name", SchemaBuilder("string").optional().default_value("dflt").build())
        .field("b", BYTES_SCHEMA)
        .field("f", FLOAT64_SCHEMA)
        .field("g", FLOAT32_SCHEMA)
        .field("tags", SchemaBuilder.array(STRING_SCHEMA).build())
        .field("m", SchemaBuilder.map(INT32_SCHEMA, STRING_SCHEMA).optional().build())
        .field("dec", decimal_schema(2))
        .field("ts", TIMESTAMP_SCHEMA)
        .field("dt", DATE_SCHEMA)
        .build()
    )


def struct_value() -> dict:
    return {
        "id": 1,
        "name": None,
        "b": b"\x00\x01",
        "f": 1e7,
        "g": 0.1,
        "tags": ["a"],
        "m": {1: "x"},
        "dec": decimal.Decimal("1.23"),
        "ts": dt.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=dt.UTC),
        "dt": dt.date(1970, 1, 1) + dt.timedelta(days=19000),
    }


def converter(**configs) -> JsonConverter:
    c = JsonConverter()
    c.configure(configs, False)
    return c


def test_struct_envelope_matches_kafka_bytes():
    assert converter().from_connect_data("t", struct_schema(), struct_value()) == KAFKA_STRUCT_ENVELOPE


def test_struct_envelope_round_trips_schema_and_values():
    schema, value = converter().to_connect_data("t", KAFKA_STRUCT_ENVELOPE)
    assert schema == struct_schema()
    expected = struct_value()
    expected["name"] = "dflt"  # Kafka wrote the default for the null field
    assert value == expected
    assert value["dec"].as_tuple().exponent == -2


def test_cached_encoder_gives_same_bytes_for_each_record_and_equal_schemas():
    c = converter()
    schema = struct_schema()
    first = c.from_connect_data("t", schema, struct_value())
    assert c.from_connect_data("t", schema, struct_value()) == first
    assert c.from_connect_data("t", struct_schema(), struct_value()) == first  # equal, not identical


def test_small_schema_cache_still_converts_correctly():
    c = converter(**{"schemas.cache.size": "1"})
    for _ in range(3):
        assert c.from_connect_data("t", INT32_SCHEMA, 5) == b'{"schema":{"type":"int32","optional":false},"payload":5}'
        assert (
            c.from_connect_data("t", STRING_SCHEMA, "x")
            == b'{"schema":{"type":"string","optional":false},"payload":"x"}'
        )


def test_schemaless_with_schemas_enabled_writes_null_schema_and_java_numbers():
    value = {"a": 1, "b": [1.5, 1e20, float("nan"), "x\u0001"]}
    assert (
        converter().from_connect_data("t", None, value)
        == b'{"schema":null,"payload":{"a":1,"b":[1.5,1.0E20,"NaN","x\\u0001"]}}'
    )


def test_schemas_disabled_writes_bare_json():
    c = converter(**{"schemas.enable": "false"})
    assert c.from_connect_data("t", None, {"k": "v", "n": [1, 2.5, True, None]}) == b'{"k":"v","n":[1,2.5,true,null]}'
    assert c.from_connect_data("t", INT64_SCHEMA, 7) == b"7"
    assert c.from_connect_data("t", None, {1: "a", "b": 2}) == b'[[1,"a"],["b",2]]'


def test_tombstones_and_optional_nulls():
    c = converter()
    assert c.from_connect_data("t", None, None) is None
    assert c.to_connect_data("t", None) == (None, None)
    assert (
        c.from_connect_data("t", OPTIONAL_STRING_SCHEMA, None)
        == b'{"schema":{"type":"string","optional":true},"payload":null}'
    )
    with pytest.raises(DataError, match="null value for field that is required and has no default value"):
        c.from_connect_data("t", STRING_SCHEMA, None)
    assert converter(**{"schemas.enable": False}).from_connect_data("t", OPTIONAL_STRING_SCHEMA, None) == b"null"


def test_replace_null_with_default_can_be_disabled():
    schema = SchemaBuilder.struct().field("n", SchemaBuilder("string").optional().default_value("dflt").build()).build()
    c = converter(**{"replace.null.with.default": "false"})
    assert c.from_connect_data("t", schema, {"n": None}).endswith(b'"payload":{"n":null}}')
    assert c.to_connect_data("t", c.from_connect_data("t", schema, {"n": None}))[1] == {"n": None}


@pytest.mark.parametrize("raw", [b'{"a":1}', b'{"schema":null,"payload":1,"x":2}', b"[1]", b"null", b""])
def test_plain_json_with_schemas_enabled_is_rejected_with_kafkas_message(raw):
    with pytest.raises(DataError) as info:
        converter().to_connect_data("t", raw)
    assert str(info.value) == ENVELOPE_MESSAGE
    assert str(info.value).startswith('JsonConverter with schemas.enable requires "schema" and "payload" fields')


def test_invalid_json_is_a_data_error():
    with pytest.raises(
        DataError, match="Converting byte\\[\\] to Kafka Connect data failed due to serialization error"
    ):
        converter().to_connect_data("t", b"{not json")


def test_schemas_disabled_reads_plain_json():
    c = converter(**{"schemas.enable": "false"})
    assert c.to_connect_data("t", b'{"a":[1,2.5,"x"]}') == (None, {"a": [1, 2.5, "x"]})
    assert c.to_connect_data("t", b"") == (None, None)
    assert c.to_connect_data("t", b"null") == (None, None)


@pytest.mark.parametrize(
    "schema,value,json_type",
    [
        (INT8_SCHEMA, -3, "int8"),
        (INT64_SCHEMA, 2**62, "int64"),
        (FLOAT32_SCHEMA, 0.5, "float"),
        (FLOAT64_SCHEMA, 0.25, "double"),
        (Schema("boolean"), True, "boolean"),
        (BYTES_SCHEMA, b"\xff", "bytes"),
    ],
)
def test_primitive_round_trip_and_type_names(schema, value, json_type):
    c = converter()
    raw = c.from_connect_data("t", schema, value)
    assert orjson.loads(raw)["schema"] == {"type": json_type, "optional": False}
    assert c.to_connect_data("t", raw) == (schema, value)


def test_wrong_python_types_are_data_errors():
    c = converter()
    with pytest.raises(DataError, match="Invalid type for INT32"):
        c.from_connect_data("t", INT32_SCHEMA, "1")
    with pytest.raises(DataError, match="Invalid type for INT8"):
        c.from_connect_data("t", INT8_SCHEMA, 300)
    with pytest.raises(DataError, match="Invalid type for BOOLEAN"):
        c.from_connect_data("t", Schema("boolean"), 1)
    with pytest.raises(DataError, match="does not have corresponding schema type"):
        c.from_connect_data("t", None, {"x": object()})


def test_missing_required_field_on_read():
    raw = b'{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false},"payload":{}}'
    with pytest.raises(DataError, match="Invalid null value for required INT32 field"):
        converter().to_connect_data("t", raw)


def test_bad_schema_json_messages():
    c = converter()
    with pytest.raises(DataError, match="Unknown schema type: foo"):
        c.to_connect_data("t", b'{"schema":{"type":"foo"},"payload":1}')
    with pytest.raises(DataError, match="Schema must contain 'type' field"):
        c.to_connect_data("t", b'{"schema":{},"payload":1}')
    with pytest.raises(DataError, match="Array schema did not specify the element type"):
        c.to_connect_data("t", b'{"schema":{"type":"array"},"payload":[]}')


def test_decimal_numeric_format_and_scale_check():
    c = converter(**{"decimal.format": "numeric"})
    raw = c.from_connect_data("t", decimal_schema(2), decimal.Decimal("1.23"))
    assert raw == (
        b'{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal",'
        b'"version":1,"parameters":{"scale":"2"}},"payload":1.23}'
    )
    assert c.to_connect_data("t", raw)[1] == decimal.Decimal("1.23")
    with pytest.raises(DataError, match="mismatching scale"):
        c.from_connect_data("t", decimal_schema(2), decimal.Decimal("1.5"))
    negative = converter().from_connect_data("t", decimal_schema(0), decimal.Decimal("-129"))
    assert orjson.loads(negative)["payload"] == "/38="  # two's complement 0xFF7F, as BigInteger.toByteArray


def test_time_logical_type_round_trip():
    c = converter()
    raw = c.from_connect_data("t", TIME_SCHEMA, dt.time(1, 2, 3, 4000))
    assert orjson.loads(raw)["payload"] == 3723004
    assert c.to_connect_data("t", raw)[1] == dt.time(1, 2, 3, 4000)


def test_config_definition_and_validation():
    definition = JsonConverter().config()
    assert definition.keys["schemas.enable"].type is Type.BOOLEAN and definition.keys["schemas.enable"].default is True
    assert definition.keys["schemas.cache.size"].default == 1000
    assert definition.keys["decimal.format"].default == "BASE64"
    assert "converter.type" in definition
    with pytest.raises(ConfigError):
        converter(**{"schemas.enable": "notaboolean"})
    with pytest.raises(ConfigError):
        converter(**{"decimal.format": "HEX"})


@pytest.mark.parametrize(
    "x,java",
    [
        (1.0, "1.0"),
        (1e7, "1.0E7"),
        (1e-4, "1.0E-4"),
        (0.001, "0.001"),
        (123456789.0, "1.23456789E8"),
        (1.5e300, "1.5E300"),
        (-0.0, "-0.0"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e21, "1.0E21"),
    ],
)
def test_java_double_notation(x, java):
    assert java_double_str(x) == java
    assert dumps_schemaless([x]) == f"[{java}]".encode()


def test_java_float_notation():
    assert java_float_str(0.1) == "0.1"
    assert java_float_str(1.5e300) == "Infinity"
    assert java_float_str(1e7) == "1.0E7"


def test_large_float_in_string_does_not_change_strings():
    value = {"s": "12345678.9 and 1e5", "f": 3.5}
    assert dumps_schemaless(value) == b'{"s":"12345678.9 and 1e5","f":3.5}'


@pytest.mark.parametrize(
    "x,java", [(1e-5, "1.0E-5"), (0.0005, "5.0E-4"), (12345678.5, "1.23456785E7"), (1e16, "1.0E16")]
)
def test_floats_orjson_writes_differently_take_the_exact_path(x, java):
    assert dumps_schemaless({"v": x, "s": "e-mail"}) == f'{{"v":{java},"s":"e-mail"}}'.encode()


def test_decoding_alternating_schemas_keeps_each_schema():
    c = converter()
    a = c.from_connect_data("t", INT32_SCHEMA, 1)
    b = c.from_connect_data("t", STRING_SCHEMA, "x")
    assert [c.to_connect_data("t", raw) for raw in (a, b, a)] == [
        (INT32_SCHEMA, 1),
        (STRING_SCHEMA, "x"),
        (INT32_SCHEMA, 1),
    ]
