"""Sample schemas and payloads shared by the case modules (schemas on: envelopes; schemas off: plain JSON)."""

from __future__ import annotations

from ..records import TS, array, b64, date, decimal, env, map_, s, struct, time, timestamp

ADDRESS = struct(("street", s("string")), ("zip", s("int32", True)), optional=True, name="com.example.Address")

# Every primitive type, optional fields, defaults, a nested struct, an array, a map and the logical types.
WIDE = struct(
    ("i8", s("int8")),
    ("i16", s("int16")),
    ("i32", s("int32")),
    ("i64", s("int64")),
    ("f32", s("float")),
    ("f64", s("double")),
    ("flag", s("boolean")),
    ("name", s("string")),
    ("blob", s("bytes")),
    ("opt", s("string", True)),
    ("withdef", s("int32", True, default=7)),
    ("address", ADDRESS),
    ("tags", array(s("string"))),
    ("attrs", map_(s("string"), s("int64"))),
    ("price", decimal(2)),
    ("day", date()),
    ("at", time()),
    ("ts", timestamp()),
    name="com.example.Wide",
    version=3,
    doc="wide record",
)

WIDE_PAYLOAD = {
    "i8": -8,
    "i16": 1600,
    "i32": 320000,
    "i64": 6400000000,
    "f32": 3.25,
    "f64": 2.718281828459045,
    "flag": True,
    "name": "Ada",
    "blob": b64(b"\x00\x01\xfe"),
    "opt": None,
    "withdef": None,
    "address": {"street": "Main", "zip": 12345},
    "tags": ["a", "b"],
    "attrs": {"x": 1, "y": 2},
    "price": b64((12345).to_bytes(2, "big")),
    "day": 20087,
    "at": 49530123,
    "ts": TS,
}

WIDE_VALUE = env(WIDE, WIDE_PAYLOAD)

# The same data without schemas (what a schemaless JSON topic carries).
PLAIN = {
    "i32": 320000,
    "i64": 6400000000,
    "f64": 2.718281828459045,
    "flag": True,
    "name": "Ada",
    "opt": None,
    "address": {"street": "Main", "zip": 12345},
    "tags": ["a", "b"],
    "count": "17",
    "ratio": "0.5",
}

SMALL = struct(
    ("id", s("int64")), ("name", s("string")), ("note", s("string", True, default="none")), name="com.example.Small"
)
SMALL_VALUE = env(SMALL, {"id": 5, "name": "x", "note": None})
KEY_STRUCT = struct(("id", s("int64")), ("region", s("string", True)))
KEY_VALUE = env(KEY_STRUCT, {"id": 5, "region": "eu"})
