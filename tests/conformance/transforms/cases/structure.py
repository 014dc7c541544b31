"""Cases for the SMTs that reshape records: ExtractField, HoistField, Flatten, ValueToKey."""

from __future__ import annotations

from ..records import Cases, array, env, map_, record, s, struct
from .samples import ADDRESS, KEY_VALUE, PLAIN, SMALL, SMALL_VALUE, WIDE_VALUE

NESTED = struct(
    ("id", s("int32")),
    (
        "outer",
        struct(
            ("inner", struct(("leaf", s("string")), ("n", s("int64", True, default=1)), optional=True)),
            ("a.b", s("string", True)),
            optional=True,
        ),
    ),
    ("dotted.name", s("boolean", True)),
    name="com.example.Nested",
)
NESTED_VALUE = env(NESTED, {"id": 1, "outer": {"inner": {"leaf": "L", "n": None}, "a.b": "dot"}, "dotted.name": True})
NESTED_PLAIN = {"id": 1, "outer": {"inner": {"leaf": "L", "n": None}, "a.b": "dot"}, "dotted.name": True}


def _extract(c: Cases) -> None:
    c.one("extract-struct", "ExtractField$Value", {"field": "name"}, [record(SMALL_VALUE)])
    c.one("extract-struct-nested-struct", "ExtractField$Value", {"field": "address"}, [record(WIDE_VALUE)])
    c.one("extract-struct-default", "ExtractField$Value", {"field": "note"}, [record(SMALL_VALUE)])
    c.one(
        "extract-struct-default-kept-null",
        "ExtractField$Value",
        {"field": "note", "replace.null.with.default": "false"},
        [record(SMALL_VALUE)],
    )
    c.one("extract-struct-missing", "ExtractField$Value", {"field": "nope"}, [record(SMALL_VALUE)])
    c.one("extract-schemaless", "ExtractField$Value", {"field": "address"}, [record(PLAIN)], schemas=False)
    c.one("extract-schemaless-missing", "ExtractField$Value", {"field": "nope"}, [record(PLAIN)], schemas=False)
    c.one("extract-key", "ExtractField$Key", {"field": "id"}, [record(SMALL_VALUE, key=KEY_VALUE)])
    c.one("extract-tombstone", "ExtractField$Value", {"field": "a"}, [record(None)])
    c.one("extract-null-struct-optional", "ExtractField$Value", {"field": "street"}, [record(env(ADDRESS, None))])
    for version in ("V1", "V2", "v2"):
        for path in (
            "outer.inner.leaf",
            "outer.inner.n",
            "dotted.name",
            "`dotted.name`",
            "outer.`a.b`",
            "outer.inner",
            "outer.nope.leaf",
            "id",
        ):
            c.one(
                f"extract-{version}-{path}",
                "ExtractField$Value",
                {"field": path, "field.syntax.version": version},
                [record(NESTED_VALUE)],
            )
            c.one(
                f"extract-{version}-{path}-schemaless",
                "ExtractField$Value",
                {"field": path, "field.syntax.version": version},
                [record(NESTED_PLAIN)],
                schemas=False,
            )
    c.one(
        "extract-V2-nested-null-parent",
        "ExtractField$Value",
        {"field": "outer.inner.leaf", "field.syntax.version": "V2"},
        [record(env(NESTED, {"id": 1, "outer": None, "dotted.name": None}))],
    )
    c.one(
        "extract-V2-through-primitive-schemaless",
        "ExtractField$Value",
        {"field": "id.x", "field.syntax.version": "V2"},
        [record(NESTED_PLAIN)],
        schemas=False,
    )
    c.one("extract-error-not-struct", "ExtractField$Value", {"field": "a"}, [record(env(s("int32"), 1))])
    c.one("extract-error-schemaless-not-map", "ExtractField$Value", {"field": "a"}, [record([1])], schemas=False)
    c.one("extract-config-missing-field", "ExtractField$Value", {}, [record(SMALL_VALUE)])
    c.one(
        "extract-config-bad-version",
        "ExtractField$Value",
        {"field": "a", "field.syntax.version": "V3"},
        [record(SMALL_VALUE)],
    )
    for bad in ("`a", "a.`b", "`a`b`"):
        c.one(
            f"extract-config-V2-{bad}",
            "ExtractField$Value",
            {"field": bad, "field.syntax.version": "V2"},
            [record(NESTED_VALUE)],
        )


def _hoist(c: Cases) -> None:
    c.one("hoist-struct", "HoistField$Value", {"field": "wrapped"}, [record(SMALL_VALUE)])
    c.one("hoist-primitive", "HoistField$Value", {"field": "v"}, [record(env(s("int64", True, default=3), 5))])
    c.one("hoist-optional-null", "HoistField$Value", {"field": "v"}, [record(env(s("string", True), None))])
    c.one("hoist-schemaless", "HoistField$Value", {"field": "v"}, [record(PLAIN)], schemas=False)
    c.one("hoist-schemaless-null", "HoistField$Value", {"field": "v"}, [record(None)], schemas=False)
    c.one("hoist-key", "HoistField$Key", {"field": "k"}, [record(SMALL_VALUE, key=env(s("string"), "k1"))])
    c.one("hoist-key-schemaless", "HoistField$Key", {"field": "k"}, [record({"a": 1}, key="k1")], schemas=False)
    c.one("hoist-tombstone-no-schema", "HoistField$Value", {"field": "v"}, [record(None)])
    c.one("hoist-config-missing", "HoistField$Value", {}, [record(SMALL_VALUE)])


def _flatten(c: Cases) -> None:
    c.one("flatten-struct", "Flatten$Value", {}, [record(NESTED_VALUE)])
    c.one("flatten-struct-delimiter", "Flatten$Value", {"delimiter": "_"}, [record(NESTED_VALUE)])
    c.one("flatten-struct-empty-delimiter", "Flatten$Value", {"delimiter": ""}, [record(NESTED_VALUE)])
    c.one("flatten-wide", "Flatten$Value", {}, [record(WIDE_VALUE)])
    c.one("flatten-null-nested", "Flatten$Value", {}, [record(env(NESTED, {"id": 2, "outer": None}))])
    c.one(
        "flatten-null-inner",
        "Flatten$Value",
        {},
        [record(env(NESTED, {"id": 2, "outer": {"inner": None, "a.b": None}}))],
    )
    c.one(
        "flatten-optional-struct-with-default",
        "Flatten$Value",
        {},
        [record(env(struct(("s", struct(("x", s("int32")), optional=True, default={"x": 4}))), {"s": None}))],
    )
    c.one("flatten-primitive", "Flatten$Value", {}, [record(env(s("string"), "x"))])
    c.one(
        "flatten-array-of-structs",
        "Flatten$Value",
        {},
        [record(env(struct(("l", array(struct(("a", s("int32")))))), {"l": [{"a": 1}]}))],
    )
    c.one(
        "flatten-map-field",
        "Flatten$Value",
        {},
        [record(env(struct(("m", map_(s("string"), s("string")))), {"m": {"k": "v"}}))],
    )
    c.one("flatten-optional-null-value", "Flatten$Value", {}, [record(env({**SMALL, "optional": True}, None))])
    c.one(
        "flatten-key",
        "Flatten$Key",
        {"delimiter": "-"},
        [record(SMALL_VALUE, key=env(struct(("k", struct(("a", s("int32"))))), {"k": {"a": 1}}))],
    )
    c.one("flatten-schemaless", "Flatten$Value", {}, [record(NESTED_PLAIN)], schemas=False)
    c.one(
        "flatten-schemaless-delimiter",
        "Flatten$Value",
        {"delimiter": "::"},
        [record({"a": {"b": {"c": 1, "d": [1, {"x": 2}]}, "e": None}, "f": {}})],
        schemas=False,
    )
    c.one("flatten-schemaless-tombstone", "Flatten$Value", {}, [record(None)], schemas=False)
    c.one("flatten-schemaless-not-map", "Flatten$Value", {}, [record("x")], schemas=False)
    c.one("flatten-two-records", "Flatten$Value", {}, [record(NESTED_VALUE), record(NESTED_VALUE)])
    c.one(
        "flatten-name-collision",
        "Flatten$Value",
        {},
        [record(env(struct(("a", struct(("b", s("int32")))), ("a.b", s("int32"))), {"a": {"b": 1}, "a.b": 2}))],
    )


def _value_to_key(c: Cases) -> None:
    c.one("v2k-struct", "ValueToKey", {"fields": "id,name"}, [record(SMALL_VALUE, key=env(s("string"), "old"))])
    c.one("v2k-struct-default", "ValueToKey", {"fields": "note"}, [record(SMALL_VALUE)])
    c.one(
        "v2k-struct-default-kept-null",
        "ValueToKey",
        {"fields": "note", "replace.null.with.default": "false"},
        [record(SMALL_VALUE)],
    )
    c.one("v2k-struct-nested", "ValueToKey", {"fields": "address,tags,attrs,ts,price"}, [record(WIDE_VALUE)])
    c.one("v2k-schemaless", "ValueToKey", {"fields": "name,address,missing"}, [record(PLAIN)], schemas=False)
    c.one("v2k-two-records", "ValueToKey", {"fields": "id"}, [record(SMALL_VALUE), record(SMALL_VALUE)])
    c.one("v2k-error-missing-field", "ValueToKey", {"fields": "nope"}, [record(SMALL_VALUE)])
    c.one("v2k-error-not-struct", "ValueToKey", {"fields": "a"}, [record(env(s("int32"), 1))])
    c.one("v2k-error-schemaless-not-map", "ValueToKey", {"fields": "a"}, [record("x")], schemas=False)
    c.one("v2k-tombstone", "ValueToKey", {"fields": "a"}, [record(None)])
    c.one("v2k-tombstone-schemaless", "ValueToKey", {"fields": "a"}, [record(None)], schemas=False)
    c.one("v2k-config-empty", "ValueToKey", {"fields": ""}, [record(SMALL_VALUE)])
    c.one("v2k-config-missing", "ValueToKey", {}, [record(SMALL_VALUE)])


def add(c: Cases) -> None:
    _extract(c)
    _hoist(c)
    _flatten(c)
    _value_to_key(c)
