"""Cast, TimestampConverter, TimestampRouter, RegexRouter and the SimpleDateFormat port."""

from __future__ import annotations

import datetime as dt

import pytest

from runtime.api.data import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    STRING_SCHEMA,
    Schema,
)
from runtime.api.errors import ConfigError, DataError
from runtime.data.java_date_format import DateFormat
from runtime.transforms.cast import CastKey, CastValue
from runtime.transforms.regex_router import RegexRouter
from runtime.transforms.timestamp_converter import TimestampConverterKey, TimestampConverterValue
from runtime.transforms.timestamp_router import TimestampRouter

from .conftest import make, sink, struct

UTC = dt.UTC
TS = "org.apache.kafka.connect.data.Timestamp"


# ---- Cast -------------------------------------------------------------------------------------


def test_cast_schemaless_fields() -> None:
    t = make(CastValue, spec="a:int8,b:string,c:boolean,d:float32,e:int32")
    out = t.apply(sink({"a": 300, "b": 1.0e7, "c": "TRUE", "d": "1.5", "e": True, "f": "untouched"})).value
    assert out == {"a": 44, "b": "1.0E7", "c": True, "d": 1.5, "e": 1, "f": "untouched"}


def test_cast_whole_value_and_key() -> None:
    assert make(CastValue, spec="int64").apply(sink("42")).value == 42
    out = make(CastKey, spec="string").apply(sink(None, key=b"\x01\x02", key_schema=BYTES_SCHEMA))
    assert out.key == "AQI=" and out.key_schema.type == "string"
    with pytest.raises(DataError, match=r"Value \(300\) was out of range for requested data type"):
        make(CastValue, spec="int8").apply(sink("300"))


def test_cast_with_schema_rewrites_field_schemas_and_defaults() -> None:
    schema = struct(("n", Schema("int32", optional=True, default=7)), ("s", STRING_SCHEMA), ("x", BOOLEAN_SCHEMA))
    out = make(CastValue, spec="n:string,s:int64").apply(sink({"n": None, "s": "12", "x": True}, schema))
    n = out.value_schema.field("n").schema
    assert (n.type, n.optional, n.default) == ("string", True, "7")
    assert out.value_schema.field("s").schema == INT64_SCHEMA
    assert out.value == {"n": "7", "s": 12, "x": True}  # null replaced by the (cast) default


def test_cast_logical_types_and_float_formatting() -> None:
    ts_schema = struct(("t", Schema("int64", name=TS, version=1)), ("f", FLOAT32_SCHEMA))
    moment = dt.datetime(2024, 3, 1, 12, 0, 0, 250000, tzinfo=UTC)
    out = make(CastValue, spec="t:int64,f:string").apply(sink({"t": moment, "f": 0.1}, ts_schema))
    assert out.value["t"] == int(moment.timestamp() * 1000)
    assert out.value["f"] == "0.1"  # Float.toString of the float32
    as_text = make(CastValue, spec="t:string").apply(sink({"t": moment, "f": 0.1}, ts_schema)).value["t"]
    assert as_text == "2024-03-01T12:00:00.250Z"


def test_cast_config_and_input_errors() -> None:
    with pytest.raises(ConfigError, match="Invalid type found in casting spec: foo"):
        make(CastValue, spec="a:foo")
    with pytest.raises(ConfigError, match="does not support casting to BYTES"):
        make(CastValue, spec="a:bytes")
    with pytest.raises(ConfigError, match="may only specify a single cast"):
        make(CastValue, spec="int8,a:int8")
    with pytest.raises(DataError, match="does not support casting from ARRAY"):
        make(CastValue, spec="a:string").apply(sink({"a": [1]}))
    record = sink(None)
    assert make(CastValue, spec="int8").apply(record) is record


# ---- TimestampConverter ----------------------------------------------------------------------


def test_timestamp_converter_schemaless_whole_value_and_field() -> None:
    to_string = make(TimestampConverterValue, **{"target.type": "string", "format": "yyyy-MM-dd HH:mm:ss.SSS"})
    assert to_string.apply(sink(1_700_000_000_123)).value == "2023-11-14 22:13:20.123"
    to_unix = make(
        TimestampConverterValue,
        field="when",
        **{"target.type": "unix", "format": "yyyyMMdd", "unix.precision": "seconds"},
    )
    assert to_unix.apply(sink({"when": "20240102", "x": 1})).value == {"when": 1704153600, "x": 1}
    to_ts = make(TimestampConverterKey, **{"target.type": "Timestamp", "unix.precision": "microseconds"})
    assert to_ts.apply(sink(None, key=1_700_000_000_123_456)).key == dt.datetime(2023, 11, 14, 22, 13, 20, 123000, UTC)


def test_timestamp_converter_with_schema() -> None:
    schema = struct(("ts", OPTIONAL_INT64_SCHEMA), ("other", INT32_SCHEMA), name="rec")
    t = make(TimestampConverterValue, field="ts", **{"target.type": "Date"})
    out = t.apply(sink({"ts": 1_700_000_000_123, "other": 1}, schema))
    field = out.value_schema.field("ts").schema
    assert (field.name, field.type, field.optional) == ("org.apache.kafka.connect.data.Date", "int32", True)
    assert out.value == {"ts": dt.date(2023, 11, 14), "other": 1} and out.value_schema.name == "rec"
    whole = make(TimestampConverterValue, **{"target.type": "Time"})
    ts_schema = Schema("int64", name=TS, version=1)
    out = whole.apply(sink(dt.datetime(2024, 5, 6, 7, 8, 9, 10000, UTC), ts_schema))
    assert out.value == dt.time(7, 8, 9, 10000) and out.value_schema.name == "org.apache.kafka.connect.data.Time"
    to_unix = make(TimestampConverterValue, **{"target.type": "unix"})
    assert (
        to_unix.apply(sink(dt.date(1970, 1, 2), Schema("int32", name="org.apache.kafka.connect.data.Date"))).value
        == 86_400_000
    )


def test_timestamp_converter_past_year_9999() -> None:
    # java.util.Date holds these; a datetime does not, so they stay encoded (millis, days) as the converters
    # accept them, and the JSON is the reference's
    seconds = make(TimestampConverterValue, **{"target.type": "Timestamp", "unix.precision": "seconds"})
    assert seconds.apply(sink(1_735_566_330_123_456, INT64_SCHEMA)).value == 1_735_566_330_123_456_000
    to_date = make(TimestampConverterValue, **{"target.type": "Date"})
    assert to_date.apply(sink(253_402_300_800_000, INT64_SCHEMA)).value == 2_932_897
    to_string = make(TimestampConverterValue, **{"target.type": "string", "format": "yyyy-MM-dd"})
    assert to_string.apply(sink(253_402_300_800_000, INT64_SCHEMA)).value == "10000-01-01"
    back = make(TimestampConverterValue, **{"target.type": "unix"})
    ts_schema = Schema("int64", name=TS, version=1)
    assert back.apply(sink(1_735_566_330_123_456_000, ts_schema)).value == 1_735_566_330_123_456_000


def test_timestamp_converter_errors() -> None:
    with pytest.raises(ConfigError, match="requires format option"):
        make(TimestampConverterValue, **{"target.type": "string"})
    with pytest.raises(ConfigError, match="String must be one of: string, unix, Date, Time, Timestamp"):
        make(TimestampConverterValue, **{"target.type": "date"})
    parse = make(TimestampConverterValue, **{"target.type": "unix", "format": "yyyy-MM-dd"})
    with pytest.raises(
        DataError, match=r"Could not parse timestamp: value \(nope\) does not match pattern \(yyyy-MM-dd\)"
    ):
        parse.apply(sink("nope"))
    with pytest.raises(DataError, match="does not support"):
        parse.apply(sink(1.5))
    with pytest.raises(Exception, match="does not correspond to a known timestamp type format"):
        parse.apply(sink(True, BOOLEAN_SCHEMA))


def test_simple_date_format_port() -> None:
    moment = dt.datetime(2024, 2, 9, 15, 4, 5, 678000, UTC)
    fmt = DateFormat("EEE, d MMM yyyy hh:mm:ss.SSS a 'o''clock' Z")
    assert fmt.format(moment) == "Fri, 9 Feb 2024 03:04:05.678 PM o'clock +0000"
    assert fmt.parse("Fri, 9 Feb 2024 03:04:05.678 PM o'clock +0000") == moment
    assert DateFormat("yyyy-MM-dd'T'HH:mm:ssXXX").parse("2024-02-09T17:04:05+02:00") == moment.replace(microsecond=0)
    assert DateFormat("yyMMddHHmm").parse("2402091504") == moment.replace(second=0, microsecond=0)
    with pytest.raises(ValueError):
        DateFormat("yyyy-qq")


# ---- routers ----------------------------------------------------------------------------------


def test_regex_router_uses_java_replacement_syntax() -> None:
    t = make(RegexRouter, regex="(?<env>[a-z]+)-(.*)", replacement="$2_${env}\\$")
    assert t.apply(sink(1, topic="prod-orders")).topic == "orders_prod$"
    untouched = sink(1, topic="PROD")
    assert t.apply(untouched) is untouched  # matches() needs the whole topic
    with pytest.raises(ConfigError, match="Invalid regex"):
        make(RegexRouter, regex="(", replacement="x")


def test_timestamp_router() -> None:
    t = make(TimestampRouter, **{"topic.format": "${topic}_${timestamp}", "timestamp.format": "yyyy-MM"})
    assert t.apply(sink(1, topic="clicks")).topic == "clicks_2023-11"
    assert make(TimestampRouter).apply(sink(1, topic="clicks")).topic == "clicks-20231114"
    with pytest.raises(DataError, match="Timestamp missing on record"):
        t.apply(sink(1, timestamp=None))
