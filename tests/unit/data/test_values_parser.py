"""Values.parseString as Kafka Connect 3.9 does it: each text's expected output is what the reference's
`Values.parseString(text)` gave, written by its JsonConverter (schemas on), on OpenJDK 17.0.15. The
conformance suite (tests/conformance/transforms) covers the InsertHeader literals; these are further cases.
A differential run of 20,000 random texts (brackets, quotes, numbers, dates, literals) against the reference
matched as well."""

from __future__ import annotations

import pytest

from runtime.api.errors import DataError
from runtime.converters.json import JsonConverter
from runtime.data.values_parser import parse_string

REFERENCE = [
    ("[1, 2]", '{"schema":{"type":"array","items":{"type":"int8","optional":false},"optional":false},"payload":[1,2]}'),
    (
        "[1,2.5]",
        '{"schema":{"type":"array","items":{"type":"float","optional":false},"optional":false},"payload":[1.0,2.5]}',
    ),
    ("1e30", '{"schema":{"type":"float","optional":false},"payload":1.0E30}'),
    (
        "-1e400",
        '{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"-400"}},"payload":"/w=="}',
    ),
    (
        '["2024-12-30", 1]',
        '{"schema":{"type":"array","items":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1},"optional":false},"payload":[20087,1]}',
    ),
    ("true}", '{"schema":{"type":"string","optional":false},"payload":"true}"}'),
    ("1:2", '{"schema":{"type":"int8","optional":false},"payload":1}'),
    ("[null]", '{"schema":{"type":"array","items":null,"optional":false},"payload":[null]}'),
    ('{"a":null,"b":1}', '{"schema":{"type":"string","optional":false},"payload":"{\\"a\\":null,\\"b\\":1}"}'),
    (
        "[1,300,70000,9000000000]",
        '{"schema":{"type":"array","items":{"type":"int64","optional":false},"optional":false},"payload":[1,300,70000,9000000000]}',
    ),
    ('[0.1,"x"]', '{"schema":{"type":"array","items":null,"optional":false},"payload":[0.1,"x"]}'),
    (
        "[13:45:30.123Z,5]",
        '{"schema":{"type":"array","items":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1},"optional":false},"payload":[49530123,5]}',
    ),
    (
        '{"k":[1,2],"j":[3]}',
        '{"schema":{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"array","items":{"type":"int8","optional":false},"optional":false},"optional":false},"payload":{"k":[1,2],"j":[3]}}',
    ),
    ('"a\\"b"', '{"schema":{"type":"string","optional":false},"payload":"\\"a\\\\\\"b\\""}'),
    ("[ ]", '{"schema":{"type":"array","items":null,"optional":false},"payload":[]}'),
    (
        "9223372036854775808",
        '{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"0"}},"payload":"AIAAAAAAAAAA"}',
    ),
    ("0e10", '{"schema":{"type":"int8","optional":false},"payload":0}'),
    ("100e-2", '{"schema":{"type":"int8","optional":false},"payload":1}'),
    ("[1.1,null]", '{"schema":{"type":"string","optional":false},"payload":"[1.1,null]"}'),
    (
        "1e99999999999999999999",  # BigDecimal: exponent overflow, so not a number
        '{"schema":{"type":"string","optional":false},"payload":"1e99999999999999999999"}',
    ),
    ("1e2147483648", '{"schema":{"type":"string","optional":false},"payload":"1e2147483648"}'),
    (
        "0024-12-30",
        '{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1},"payload":-710400}',
    ),
]


@pytest.mark.parametrize("text, expected", REFERENCE)
def test_parse_string_matches_the_reference(text: str, expected: str) -> None:
    schema, value = parse_string(text)
    assert JsonConverter().from_connect_data("t", schema, value).decode() == expected


def test_null_and_empty() -> None:
    assert parse_string("null") == (None, None)
    assert parse_string(" null ") == (None, None)
    assert parse_string(None) == (None, None)
    assert parse_string("")[1] == ""


def test_a_map_without_key_schema_cannot_be_written() -> None:
    # `{}` and `{"x":{}}`: the reference's JsonConverter fails on these with a NullPointerException
    for text in ("{}", '{"x":{}}'):
        schema, value = parse_string(text)
        with pytest.raises(DataError, match="no key schema"):
            JsonConverter().from_connect_data("t", schema, value)
