"""The JsonConverter's fast path for flat structs and primitives must write exactly the general path's bytes."""

from __future__ import annotations

import random

import pytest

from runtime.api.data import INT32_SCHEMA, INT64_SCHEMA, STRING_SCHEMA, Schema, SchemaBuilder
from runtime.api.errors import DataError
from runtime.converters.json import JsonConverter

FLAT = (
    SchemaBuilder.struct()
    .name("demo.Flat")
    .field("task", INT32_SCHEMA)
    .field("seqno", INT64_SCHEMA)
    .field("label", Schema("string", optional=True))
    .field("ok", Schema("boolean"))
    .build()
)


def converter(**settings: str) -> JsonConverter:
    c = JsonConverter()
    c.configure(settings, False)
    return c


def general_bytes(c: JsonConverter, schema: Schema, value: object) -> bytes:
    entry = c._encoder_entry(schema)
    import orjson

    body = orjson.dumps(entry[1](value))
    return entry[2] + body + b"}" if c.schemas_enabled else body


@pytest.mark.parametrize("schemas_enable", ["true", "false"])
def test_fast_path_bytes_equal_general_path(schemas_enable: str) -> None:
    c = converter(**{"schemas.enable": schemas_enable})
    rng = random.Random(7)
    for _ in range(500):
        value = {
            "task": rng.randint(-(2**31), 2**31 - 1),
            "seqno": rng.randint(-(2**63), 2**63 - 1),
            "label": rng.choice([None, "", 'é"\\\n\u2028', "x" * rng.randint(0, 40)]),
            "ok": rng.random() < 0.5,
        }
        assert c.from_connect_data("t", FLAT, value) == general_bytes(c, FLAT, value)
    for key in ["", "k", "ü\u0000"]:
        assert c.from_connect_data("t", STRING_SCHEMA, key) == general_bytes(c, STRING_SCHEMA, key)


@pytest.mark.parametrize(
    "value",
    [
        {"task": 2**31, "seqno": 1, "label": None, "ok": True},  # int32 overflow
        {"task": 1, "seqno": 1, "ok": True},  # missing optional field
        {"task": True, "seqno": 1, "label": None, "ok": True},  # bool is not an int32
        {"seqno": 1, "task": 1, "label": None, "ok": True},  # field order differs
        {"task": 1, "seqno": 1, "label": None, "ok": True, "extra": 1},  # unknown field
    ],
)
def test_unusual_values_take_the_general_path(value: dict) -> None:
    c = converter()
    try:
        expected: bytes | Exception = general_bytes(c, FLAT, value)
    except DataError as exc:
        expected = exc
    if isinstance(expected, Exception):
        with pytest.raises(DataError):
            c.from_connect_data("t", FLAT, value)
    else:
        assert c.from_connect_data("t", FLAT, value) == expected


def test_decoding_flat_structs_matches_the_general_decoder() -> None:
    c = converter()
    rng = random.Random(11)
    for _ in range(200):
        value = {
            "task": rng.randint(-(2**31), 2**31 - 1),
            "seqno": rng.randint(-(2**63), 2**63 - 1),
            "label": rng.choice([None, "x", "é"]),
            "ok": rng.random() < 0.5,
        }
        data = c.from_connect_data("t", FLAT, value)
        schema, decoded = c.to_connect_data("t", data)
        entry = c._decoder_entry(__import__("orjson").loads(data)["schema"])
        assert decoded == entry[1](__import__("orjson").loads(data)["payload"]) == value
        assert schema is not None and [f.name for f in schema.fields] == ["task", "seqno", "label", "ok"]


def test_repeated_schema_prefix_shortcut_never_changes_what_is_read() -> None:
    c = converter()
    first = c.from_connect_data("t", FLAT, {"task": 1, "seqno": 2, "label": None, "ok": True})
    assert c.to_connect_data("t", first)[1]["seqno"] == 2  # primes the shortcut
    prefix = first[: first.index(b'"payload":') + len(b'"payload":')]
    assert c.to_connect_data("t", prefix + b'{"task":3,"seqno":4,"label":"x","ok":false}}')[1] == {
        "task": 3,
        "seqno": 4,
        "label": "x",
        "ok": False,
    }
    with pytest.raises(DataError):  # an extra top-level field is still rejected
        c.to_connect_data("t", prefix + b'{"task":3,"seqno":4,"label":"x","ok":false},"extra":1}')
    spaced = prefix + b' {"task":5,"seqno":6,"label":null,"ok":true} }'
    assert c.to_connect_data("t", spaced)[1]["seqno"] == 6
