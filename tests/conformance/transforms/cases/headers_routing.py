"""Cases for DropHeaders, HeaderFrom, InsertHeader, RegexRouter, Filter and the predicates (alone, negated,
and guarding transforms in a chain)."""

from __future__ import annotations

from ..records import Cases, chain, env, record, s
from .samples import KEY_VALUE, PLAIN, SMALL_VALUE, WIDE_VALUE

HEADERS = [
    ["a", env(s("string"), "1")],
    ["b", env(s("int32"), 2)],
    ["a", env(s("string"), "3")],
    ["n", None],
    ["m", env(None, {"x": 1})],
]


def _drop_headers(c: Cases) -> None:
    c.one("drop-headers-one", "DropHeaders", {"headers": "a"}, [record(SMALL_VALUE, headers=HEADERS)])
    c.one("drop-headers-many", "DropHeaders", {"headers": "a,n,missing"}, [record(SMALL_VALUE, headers=HEADERS)])
    c.one("drop-headers-schemaless", "DropHeaders", {"headers": "b"}, [record(PLAIN, headers=HEADERS)], schemas=False)
    c.one("drop-headers-none-present", "DropHeaders", {"headers": "z"}, [record(SMALL_VALUE)])
    c.one("drop-headers-config-empty", "DropHeaders", {"headers": ""}, [record(SMALL_VALUE)])
    c.one("drop-headers-config-missing", "DropHeaders", {}, [record(SMALL_VALUE)])


def _header_from(c: Cases) -> None:
    for op in ("copy", "move"):
        c.one(
            f"header-from-{op}",
            "HeaderFrom$Value",
            {
                "fields": "name,i32,address,tags,ts,price",
                "headers": "h_name,h_i32,h_addr,h_tags,h_ts,h_price",
                "operation": op,
            },
            [record(WIDE_VALUE, headers=HEADERS)],
        )
        c.one(
            f"header-from-{op}-default",
            "HeaderFrom$Value",
            {"fields": "note", "headers": "n", "operation": op},
            [record(SMALL_VALUE)],
        )
        c.one(
            f"header-from-{op}-default-kept-null",
            "HeaderFrom$Value",
            {"fields": "note", "headers": "n", "operation": op, "replace.null.with.default": "false"},
            [record(SMALL_VALUE)],
        )
        c.one(
            f"header-from-{op}-schemaless",
            "HeaderFrom$Value",
            {"fields": "name,address,missing", "headers": "h1,h2,h3", "operation": op},
            [record(PLAIN, headers=HEADERS)],
            schemas=False,
        )
        c.one(
            f"header-from-{op}-key",
            "HeaderFrom$Key",
            {"fields": "region", "headers": "r", "operation": op},
            [record(SMALL_VALUE, key=KEY_VALUE)],
        )
        c.one(
            f"header-from-{op}-same-field-twice",
            "HeaderFrom$Value",
            {"fields": "id,id", "headers": "x,y", "operation": op},
            [record(SMALL_VALUE), record(SMALL_VALUE)],
        )
        c.one(
            f"header-from-{op}-missing-field",
            "HeaderFrom$Value",
            {"fields": "nope", "headers": "x", "operation": op},
            [record(SMALL_VALUE)],
        )
    c.one(
        "header-from-error-not-struct",
        "HeaderFrom$Value",
        {"fields": "a", "headers": "b", "operation": "copy"},
        [record(env(s("string"), "x"))],
    )
    c.one(
        "header-from-error-schemaless-not-map",
        "HeaderFrom$Value",
        {"fields": "a", "headers": "b", "operation": "move"},
        [record(1)],
        schemas=False,
    )
    c.one(
        "header-from-error-tombstone",
        "HeaderFrom$Value",
        {"fields": "a", "headers": "b", "operation": "copy"},
        [record(None)],
        schemas=False,
    )
    c.one(
        "header-from-config-length-mismatch",
        "HeaderFrom$Value",
        {"fields": "a,b", "headers": "x", "operation": "copy"},
        [record(SMALL_VALUE)],
    )
    c.one(
        "header-from-config-bad-operation",
        "HeaderFrom$Value",
        {"fields": "a", "headers": "x", "operation": "steal"},
        [record(SMALL_VALUE)],
    )
    c.one(
        "header-from-config-empty-fields",
        "HeaderFrom$Value",
        {"fields": "", "headers": "x", "operation": "copy"},
        [record(SMALL_VALUE)],
    )
    c.one(
        "header-from-config-missing-operation",
        "HeaderFrom$Value",
        {"fields": "a", "headers": "x"},
        [record(SMALL_VALUE)],
    )


LITERALS = (
    "hello",
    "42",
    "-7",
    "300",
    "70000",
    "9000000000",
    "99999999999999999999",
    "3.14",
    "1e10",
    "true",
    "FALSE",
    "null",
    "",
    " padded ",
    "[1,2,3]",
    '[1,"a"]',
    '{"a":1,"b":2}',
    '{"a":[1]}',
    "[]",
    "{}",
    "2024-12-30",
    "13:45:30.123Z",
    "2024-12-30T13:45:30.123Z",
    "'quoted'",
    '"dq"',
    "a,b",
    "[1,2",
    "1.0",
    "0.1",
    "NaN",
    "-0",
    "+5",
    "1_000",
    "0x10",
    "[true,false]",
    '{"k":{"n":null}}',
    "[1.5,2]",
    "{1:2}",
    '["x",null]',
    "123456789012.5",
)


def _insert_header(c: Cases) -> None:
    for i, literal in enumerate(LITERALS):
        c.one(
            f"insert-header-literal-{i}-{literal}",
            "InsertHeader",
            {"header": "h", "value.literal": literal},
            [record(SMALL_VALUE, headers=HEADERS)],
        )
    c.one(
        "insert-header-schemaless",
        "InsertHeader",
        {"header": "a", "value.literal": "x"},
        [record(PLAIN, headers=HEADERS)],
        schemas=False,
    )
    c.one("insert-header-config-missing-literal", "InsertHeader", {"header": "h"}, [record(SMALL_VALUE)])
    c.one("insert-header-config-missing-header", "InsertHeader", {"value.literal": "x"}, [record(SMALL_VALUE)])


def _regex_router(c: Cases) -> None:
    routes = [
        ("(.*)-(.*)", "$2_$1", "left-right"),
        ("orders", "o", "orders"),
        ("ord", "X", "orders"),
        ("(?<name>o.*)", "${name}-v2", "orders"),
        ("(o)(r)", "$1$2$1", "or"),
        ("a(b)?c", "[$1]", "ac"),
        ("o\\w+s", "\\$lit", "orders"),
        ("(x)", "$10", "x"),
        (".*", "", "orders"),
        ("\\Qa.b\\E", "dot", "a.b"),
        ("a.b", "dot", "axb"),
        ("(?i)ORDERS", "lower", "orders"),
    ]
    for i, (regex, replacement, topic) in enumerate(routes):
        c.one(
            f"regex-router-{i}",
            "RegexRouter",
            {"regex": regex, "replacement": replacement},
            [record(SMALL_VALUE, topic=topic)],
        )
    c.one(
        "regex-router-schemaless",
        "RegexRouter",
        {"regex": "o(.*)", "replacement": "x$1"},
        [record(PLAIN)],
        schemas=False,
    )
    c.one("regex-router-config-bad-regex", "RegexRouter", {"regex": "(", "replacement": "x"}, [record(SMALL_VALUE)])
    c.one("regex-router-config-missing", "RegexRouter", {"regex": "a"}, [record(SMALL_VALUE)])
    c.one("regex-router-bad-group", "RegexRouter", {"regex": "orders", "replacement": "$1"}, [record(SMALL_VALUE)])


def _filter_and_predicates(c: Cases) -> None:
    records = [
        record(SMALL_VALUE, topic="orders", headers=[["keep", env(s("string"), "y")]]),
        record(None, topic="orders"),
        record(SMALL_VALUE, topic="audit-log"),
        record(env(s("string", True), None), topic="orders-eu"),
    ]
    c.one("filter-all", "Filter", {}, records)
    c.one("filter-schemaless", "Filter", {}, [record(PLAIN)], schemas=False)
    predicates = {
        "has-header": ("HasHeaderKey", {"name": "keep"}),
        "has-header-missing": ("HasHeaderKey", {"name": "nope"}),
        "tombstone": ("RecordIsTombstone", {}),
        "topic": ("TopicNameMatches", {"pattern": "orders.*"}),
        "topic-partial": ("TopicNameMatches", {"pattern": "order"}),
        "topic-alternation": ("TopicNameMatches", {"pattern": "audit-.*|orders-eu"}),
    }
    for name, (cls, settings) in predicates.items():
        for negate in ("false", "true"):
            c.add(
                f"predicate-{name}-filter-negate-{negate}",
                chain(("f", "Filter", {"predicate": "p", "negate": negate}), predicates={"p": (cls, settings)}),
                records,
            )
            c.add(
                f"predicate-{name}-insert-negate-{negate}",
                chain(
                    (
                        "i",
                        "InsertHeader",
                        {"header": "hit", "value.literal": "yes", "predicate": "p", "negate": negate},
                    ),
                    predicates={"p": (cls, settings)},
                ),
                records,
            )
    c.add(
        "predicate-negate-without-value",
        chain(("f", "Filter", {"predicate": "p"}), predicates={"p": ("RecordIsTombstone", {})}),
        records,
    )
    c.add(
        "predicate-negate-odd-case",
        chain(("f", "Filter", {"predicate": "p", "negate": "TRUE"}), predicates={"p": ("RecordIsTombstone", {})}),
        records,
    )
    c.add(
        "predicate-negate-not-boolean",
        chain(("f", "Filter", {"predicate": "p", "negate": "yes"}), predicates={"p": ("RecordIsTombstone", {})}),
        records,
    )
    c.add(
        "chain-three-stages",
        chain(
            ("route", "RegexRouter", {"regex": "(.*)", "replacement": "$1-routed"}),
            ("drop", "Filter", {"predicate": "routed", "negate": "true"}),
            ("hoist", "HoistField$Value", {"field": "v"}),
            predicates={"routed": ("TopicNameMatches", {"pattern": "orders-routed"})},
        ),
        records,
    )
    c.add(
        "chain-schemaless",
        chain(
            ("i", "InsertField$Value", {"topic.field": "t"}),
            ("m", "MaskField$Value", {"fields": "name"}),
            ("k", "ValueToKey", {"fields": "t,name"}),
            ("x", "ExtractField$Key", {"field": "t"}),
        ),
        [record(PLAIN)],
        schemas=False,
    )
    c.add(
        "chain-struct",
        chain(
            ("f", "Flatten$Value", {"delimiter": "_"}),
            ("r", "ReplaceField$Value", {"exclude": "address_zip"}),
            ("c", "Cast$Value", {"spec": "address_street:string,i64:int32"}),
            ("s", "SetSchemaMetadata$Value", {"schema.name": "flat.Wide"}),
        ),
        [record(WIDE_VALUE)],
    )
    for bad, settings in (("empty", {"pattern": ""}), ("invalid", {"pattern": "(("}), ("missing", {})):
        c.add(
            f"predicate-topic-config-{bad}",
            chain(("f", "Filter", {"predicate": "p"}), predicates={"p": ("TopicNameMatches", settings)}),
            records,
        )
    for bad, settings in (("empty", {"name": ""}), ("missing", {})):
        c.add(
            f"predicate-header-config-{bad}",
            chain(("f", "Filter", {"predicate": "p"}), predicates={"p": ("HasHeaderKey", settings)}),
            records,
        )
    c.add(
        "predicate-on-source-records",
        chain(("f", "Filter", {"predicate": "p"}), predicates={"p": ("TopicNameMatches", {"pattern": "audit.*"})}),
        records,
        kind="source",
    )


def add(c: Cases) -> None:
    _drop_headers(c)
    _header_from(c)
    _insert_header(c)
    _regex_router(c)
    _filter_and_predicates(c)
