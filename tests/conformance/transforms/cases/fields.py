"""Cases for the field-level SMTs: Cast, MaskField, ReplaceField, InsertField, SetSchemaMetadata."""

from __future__ import annotations

from ..records import Cases, b64, date, decimal, env, record, s, struct, time, timestamp
from .samples import KEY_VALUE, PLAIN, SMALL_VALUE, WIDE, WIDE_PAYLOAD, WIDE_VALUE

CAST_TARGETS = ("int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string")


def _cast(c: Cases) -> None:
    # the whole value, from each primitive to each target type
    sources = {
        "int8": env(s("int8"), -5),
        "int16": env(s("int16"), 300),
        "int32": env(s("int32"), 70000),
        "int64": env(s("int64"), 9000000000),
        "float32": env(s("float"), 2.75),
        "float64": env(s("double"), -1.5e10),
        "boolean": env(s("boolean"), True),
        "string": env(s("string"), "42"),
    }
    for source, value in sources.items():
        for target in CAST_TARGETS:
            c.one(f"cast-value-{source}-to-{target}", "Cast$Value", {"spec": target}, [record(value)])
    c.one("cast-value-bytes-to-string", "Cast$Value", {"spec": "string"}, [record(env(s("bytes"), b64(b"hi\x00")))])
    c.one("cast-value-string-float-text", "Cast$Value", {"spec": "float64"}, [record(env(s("string"), "1e3"))])
    c.one("cast-value-string-true-to-boolean", "Cast$Value", {"spec": "boolean"}, [record(env(s("string"), "TRUE"))])
    c.one("cast-value-optional-null", "Cast$Value", {"spec": "int32"}, [record(env(s("int64", True), None))])
    c.one(
        "cast-value-with-default-schema",
        "Cast$Value",
        {"spec": "string"},
        [record(env(s("int32", True, default=9), 4))],
    )
    c.one(
        "cast-value-named-schema-keeps-basics",
        "Cast$Value",
        {"spec": "int64"},
        [record(env(s("int32", name="com.example.Count", version=2, doc="d", parameters={"p": "q"}), 12))],
    )
    c.one("cast-key-int-to-string", "Cast$Key", {"spec": "string"}, [record(SMALL_VALUE, key=env(s("int64"), 77))])
    c.one("cast-key-struct-fields", "Cast$Key", {"spec": "id:string,region:int8"}, [record(SMALL_VALUE, key=KEY_VALUE)])
    # fields of a struct: every primitive, logical types to string, defaults, optional nulls
    c.one(
        "cast-struct-fields",
        "Cast$Value",
        {
            "spec": "i8:int32,i16:int8,i32:string,i64:float64,f32:int64,f64:float32,flag:int16,name:string,"
            "blob:string,withdef:string,opt:int32"
        },
        [record(WIDE_VALUE)],
    )
    c.one(
        "cast-struct-logical-to-string", "Cast$Value", {"spec": "day:string,at:string,ts:string"}, [record(WIDE_VALUE)]
    )
    c.one("cast-struct-logical-to-int64", "Cast$Value", {"spec": "day:int64,at:int64,ts:int64"}, [record(WIDE_VALUE)])
    c.one("cast-struct-decimal-to-float64", "Cast$Value", {"spec": "price:float64"}, [record(WIDE_VALUE)])
    c.one("cast-struct-decimal-to-string", "Cast$Value", {"spec": "price:string"}, [record(WIDE_VALUE)])
    c.one("cast-struct-unknown-field-ignored", "Cast$Value", {"spec": "nope:int8"}, [record(SMALL_VALUE)])
    c.one("cast-struct-default-replaced", "Cast$Value", {"spec": "note:string"}, [record(SMALL_VALUE)])
    c.one(
        "cast-struct-default-kept-null",
        "Cast$Value",
        {"spec": "note:string", "replace.null.with.default": "false"},
        [record(SMALL_VALUE)],
    )
    c.one(
        "cast-struct-two-records-same-schema",
        "Cast$Value",
        {"spec": "id:int32"},
        [record(SMALL_VALUE), record(env(SMALL_VALUE["schema"], {"id": 6, "name": "y", "note": "n"}))],
    )
    c.one(
        "cast-struct-float-overflow",
        "Cast$Value",
        {"spec": "f64:int8,i64:int16,i32:int8"},
        [record(env(WIDE, {**WIDE_PAYLOAD, "f64": 1e20, "i64": -70000, "i32": 200}))],
    )
    c.one(
        "cast-struct-nan-to-int",
        "Cast$Value",
        {"spec": "f:int32,g:string"},
        [record(env(struct(("f", s("double")), ("g", s("float"))), {"f": -0.0, "g": 1.0e-7}))],
    )
    # schemaless
    c.one(
        "cast-schemaless-fields",
        "Cast$Value",
        {"spec": "i32:string,i64:int32,f64:int64,flag:string,count:int64,ratio:float32,missing:int8,opt:string"},
        [record(PLAIN)],
        schemas=False,
    )
    c.one("cast-schemaless-whole", "Cast$Value", {"spec": "int16"}, [record(1234)], schemas=False)
    c.one("cast-schemaless-whole-string", "Cast$Value", {"spec": "float64"}, [record("2.5")], schemas=False)
    c.one("cast-schemaless-float-to-string", "Cast$Value", {"spec": "string"}, [record(0.1)], schemas=False)
    c.one("cast-schemaless-key", "Cast$Key", {"spec": "boolean"}, [record({"a": 1}, key=0)], schemas=False)
    c.one("cast-tombstone", "Cast$Value", {"spec": "int32"}, [record(None)])
    # errors
    c.one("cast-error-string-not-number", "Cast$Value", {"spec": "int32"}, [record(env(s("string"), "abc"))])
    c.one("cast-error-out-of-range-string", "Cast$Value", {"spec": "int8"}, [record(env(s("string"), "300"))])
    c.one("cast-error-struct-whole", "Cast$Value", {"spec": "string"}, [record(SMALL_VALUE)])
    c.one("cast-error-from-bytes-to-int", "Cast$Value", {"spec": "int32"}, [record(env(s("bytes"), b64(b"x")))])
    c.one("cast-error-from-array", "Cast$Value", {"spec": "tags:string"}, [record(WIDE_VALUE)])
    c.one("cast-error-schemaless-map-field", "Cast$Value", {"spec": "address:string"}, [record(PLAIN)], schemas=False)
    c.one("cast-error-schemaless-not-map", "Cast$Value", {"spec": "a:int8"}, [record([1, 2])], schemas=False)
    c.one("cast-error-primitive-with-field-spec", "Cast$Value", {"spec": "a:int8"}, [record(env(s("int32"), 1))])
    for bad in ("", "a:bytes", "a:struct", "nope", "a:b:c", "int8,a:int16", "a:int8,b:int16:x", "bytes"):
        c.one(f"cast-config-{bad or 'empty'}", "Cast$Value", {"spec": bad}, [record(env(s("int32"), 1))])
    c.one("cast-config-missing-spec", "Cast$Value", {}, [record(env(s("int32"), 1))])
    c.one(
        "cast-config-bad-boolean",
        "Cast$Value",
        {"spec": "int8", "replace.null.with.default": "maybe"},
        [record(env(s("int32"), 1))],
    )


def _mask(c: Cases) -> None:
    fields = "i8,i16,i32,i64,f32,f64,flag,name,opt,withdef,tags,attrs,price,day,at,ts"
    c.one("mask-struct-all-types", "MaskField$Value", {"fields": fields}, [record(WIDE_VALUE)])
    c.one(
        "mask-struct-no-default",
        "MaskField$Value",
        {"fields": "withdef", "replace.null.with.default": "false"},
        [record(WIDE_VALUE)],
    )
    for replacement, names in (
        ("123", "i8,i16,i32,i64,f32,f64,name"),
        ("0.5", "f32,f64,name"),
        ("****", "name"),
        ("12.34", "price"),
    ):
        c.one(
            f"mask-struct-replacement-{replacement}",
            "MaskField$Value",
            {"fields": names, "replacement": replacement},
            [record(WIDE_VALUE)],
        )
    c.one(
        "mask-schemaless",
        "MaskField$Value",
        {"fields": "i32,i64,f64,flag,name,opt,address,tags,missing"},
        [record(PLAIN)],
        schemas=False,
    )
    c.one(
        "mask-schemaless-replacement",
        "MaskField$Value",
        {"fields": "i32,name,f64", "replacement": "9"},
        [record(PLAIN)],
        schemas=False,
    )
    c.one("mask-key", "MaskField$Key", {"fields": "region"}, [record(SMALL_VALUE, key=KEY_VALUE)])
    c.one(
        "mask-error-replacement-boolean",
        "MaskField$Value",
        {"fields": "flag", "replacement": "x"},
        [record(WIDE_VALUE)],
    )
    c.one(
        "mask-error-replacement-not-number",
        "MaskField$Value",
        {"fields": "i32", "replacement": "abc"},
        [record(WIDE_VALUE)],
    )
    c.one("mask-error-replacement-date", "MaskField$Value", {"fields": "ts", "replacement": "1"}, [record(WIDE_VALUE)])
    c.one("mask-error-bytes", "MaskField$Value", {"fields": "blob"}, [record(WIDE_VALUE)])
    c.one("mask-error-struct-field", "MaskField$Value", {"fields": "address"}, [record(WIDE_VALUE)])
    c.one("mask-error-not-struct", "MaskField$Value", {"fields": "a"}, [record(env(s("string"), "x"))])
    c.one("mask-error-schemaless-not-map", "MaskField$Value", {"fields": "a"}, [record("x")], schemas=False)
    c.one("mask-error-tombstone", "MaskField$Value", {"fields": "a"}, [record(None)], schemas=False)
    c.one("mask-config-empty-fields", "MaskField$Value", {"fields": ""}, [record(WIDE_VALUE)])
    c.one("mask-config-empty-replacement", "MaskField$Value", {"fields": "a", "replacement": ""}, [record(WIDE_VALUE)])


def _replace(c: Cases) -> None:
    c.one("replace-exclude", "ReplaceField$Value", {"exclude": "i8,blob,address,nope"}, [record(WIDE_VALUE)])
    c.one("replace-include", "ReplaceField$Value", {"include": "name,i32,ts,nope"}, [record(WIDE_VALUE)])
    c.one(
        "replace-include-exclude", "ReplaceField$Value", {"include": "name,i32", "exclude": "i32"}, [record(WIDE_VALUE)]
    )
    c.one("replace-renames", "ReplaceField$Value", {"renames": "name:full_name,i32:count,nope:x"}, [record(WIDE_VALUE)])
    c.one(
        "replace-renames-include-old-name",
        "ReplaceField$Value",
        {"renames": "name:n", "include": "name"},
        [record(WIDE_VALUE)],
    )
    c.one("replace-deprecated-blacklist", "ReplaceField$Value", {"blacklist": "name"}, [record(SMALL_VALUE)])
    c.one("replace-deprecated-whitelist", "ReplaceField$Value", {"whitelist": "name"}, [record(SMALL_VALUE)])
    c.one(
        "replace-deprecated-and-new",
        "ReplaceField$Value",
        {"whitelist": "name", "include": "id"},
        [record(SMALL_VALUE)],
    )
    c.one(
        "replace-default-kept-null",
        "ReplaceField$Value",
        {"exclude": "id", "replace.null.with.default": "false"},
        [record(SMALL_VALUE)],
    )
    c.one("replace-default-replaced", "ReplaceField$Value", {"exclude": "id"}, [record(SMALL_VALUE)])
    c.one(
        "replace-schemaless",
        "ReplaceField$Value",
        {"exclude": "tags", "renames": "name:who,opt:o"},
        [record(PLAIN)],
        schemas=False,
    )
    c.one("replace-schemaless-include", "ReplaceField$Value", {"include": "name,flag"}, [record(PLAIN)], schemas=False)
    c.one("replace-key", "ReplaceField$Key", {"renames": "id:key_id"}, [record(SMALL_VALUE, key=KEY_VALUE)])
    c.one("replace-tombstone", "ReplaceField$Value", {"exclude": "a"}, [record(None)])
    c.one("replace-error-not-struct", "ReplaceField$Value", {"exclude": "a"}, [record(env(s("int32"), 1))])
    c.one("replace-error-schemaless-list", "ReplaceField$Value", {"exclude": "a"}, [record([1])], schemas=False)
    for bad in ("a", "a:b:c", "a:b,c"):
        c.one(f"replace-config-renames-{bad}", "ReplaceField$Value", {"renames": bad}, [record(SMALL_VALUE)])


def _insert(c: Cases) -> None:
    all_fields = {
        "topic.field": "t",
        "partition.field": "p",
        "offset.field": "o",
        "timestamp.field": "ts_",
        "static.field": "st",
        "static.value": "hello",
    }
    c.one("insert-all-optional", "InsertField$Value", all_fields, [record(SMALL_VALUE)])
    c.one(
        "insert-all-required",
        "InsertField$Value",
        {k: (v + "!" if k.endswith(".field") else v) for k, v in all_fields.items()},
        [record(SMALL_VALUE)],
    )
    c.one(
        "insert-explicit-optional",
        "InsertField$Value",
        {"topic.field": "t?", "timestamp.field": "w?"},
        [record(SMALL_VALUE)],
    )
    c.one(
        "insert-null-timestamp",
        "InsertField$Value",
        {"timestamp.field": "w", "partition.field": "p"},
        [record(SMALL_VALUE, timestamp=None)],
        kind="source",
    )
    c.one(
        "insert-null-partition-source",
        "InsertField$Value",
        {"partition.field": "p"},
        [record(SMALL_VALUE, partition=None)],
        kind="source",
    )
    c.one("insert-schemaless", "InsertField$Value", all_fields, [record(PLAIN)], schemas=False)
    c.one(
        "insert-schemaless-null-timestamp",
        "InsertField$Value",
        {"timestamp.field": "w"},
        [record({"a": 1}, timestamp=None)],
        schemas=False,
    )
    c.one(
        "insert-key",
        "InsertField$Key",
        {"topic.field": "t", "static.field": "s", "static.value": "v"},
        [record(SMALL_VALUE, key=KEY_VALUE)],
    )
    c.one(
        "insert-default-kept-null",
        "InsertField$Value",
        {"topic.field": "t", "replace.null.with.default": "false"},
        [record(SMALL_VALUE)],
    )
    c.one("insert-tombstone", "InsertField$Value", {"topic.field": "t"}, [record(None)])
    c.one("insert-existing-field-name", "InsertField$Value", {"topic.field": "name"}, [record(SMALL_VALUE)])
    c.one(
        "insert-existing-field-schemaless", "InsertField$Value", {"topic.field": "name"}, [record(PLAIN)], schemas=False
    )
    c.one(
        "insert-error-offset-on-source",
        "InsertField$Value",
        {"offset.field": "o"},
        [record(SMALL_VALUE)],
        kind="source",
    )
    c.one(
        "insert-error-offset-on-source-schemaless",
        "InsertField$Value",
        {"offset.field": "o"},
        [record({"a": 1})],
        schemas=False,
        kind="source",
    )
    c.one("insert-error-not-struct", "InsertField$Value", {"topic.field": "t"}, [record(env(s("int32"), 1))])
    c.one("insert-error-schemaless-not-map", "InsertField$Value", {"topic.field": "t"}, [record(5)], schemas=False)
    c.one("insert-config-nothing", "InsertField$Value", {}, [record(SMALL_VALUE)])
    c.one("insert-config-static-without-value", "InsertField$Value", {"static.field": "s"}, [record(SMALL_VALUE)])
    c.one(
        "insert-static-value-only",
        "InsertField$Value",
        {"static.value": "v", "topic.field": "t"},
        [record(SMALL_VALUE)],
    )


def _set_schema_metadata(c: Cases) -> None:
    c.one(
        "ssm-name-version",
        "SetSchemaMetadata$Value",
        {"schema.name": "com.example.Renamed", "schema.version": 7},
        [record(WIDE_VALUE)],
    )
    c.one("ssm-name-only", "SetSchemaMetadata$Value", {"schema.name": "x.Y"}, [record(SMALL_VALUE)])
    c.one("ssm-version-only", "SetSchemaMetadata$Value", {"schema.version": 2}, [record(SMALL_VALUE)])
    c.one("ssm-nothing", "SetSchemaMetadata$Value", {}, [record(SMALL_VALUE)])
    c.one(
        "ssm-primitive",
        "SetSchemaMetadata$Value",
        {"schema.name": "p.Q", "schema.version": 1},
        [record(env(s("string", True, default="d", doc="doc", parameters={"a": "b"}), "v"))],
    )
    c.one("ssm-logical-kept", "SetSchemaMetadata$Value", {"schema.name": "p.Q"}, [record(env(timestamp(), 5))])
    c.one(
        "ssm-struct-default-kept-null",
        "SetSchemaMetadata$Value",
        {"schema.name": "n.N", "replace.null.with.default": "false"},
        [record(SMALL_VALUE)],
    )
    c.one(
        "ssm-nested-default-struct",
        "SetSchemaMetadata$Value",
        {"schema.name": "n.N"},
        [
            record(
                env(
                    struct(("inner", struct(("a", s("int32", True, default=3)), optional=True))), {"inner": {"a": None}}
                )
            )
        ],
    )
    c.one(
        "ssm-key",
        "SetSchemaMetadata$Key",
        {"schema.name": "k.K", "schema.version": 4},
        [record(SMALL_VALUE, key=KEY_VALUE)],
    )
    c.one("ssm-schemaless-error", "SetSchemaMetadata$Value", {"schema.name": "x"}, [record({"a": 1})], schemas=False)
    c.one(
        "ssm-tombstone-optional",
        "SetSchemaMetadata$Value",
        {"schema.name": "x.Y"},
        [record(env(s("string", True), None))],
    )
    c.one("ssm-config-bad-version", "SetSchemaMetadata$Value", {"schema.version": "two"}, [record(SMALL_VALUE)])


def _logical_values(c: Cases) -> None:
    # logical types straight through a pass-through transform: the converter round trip both sides do
    c.one(
        "logical-passthrough",
        "SetSchemaMetadata$Value",
        {"schema.name": "l.L"},
        [
            record(
                env(
                    struct(("d", date()), ("t", time()), ("ts", timestamp()), ("dec", decimal(3, True))),
                    {"d": -1, "t": 0, "ts": -1000, "dec": b64(b"\xff\x85")},
                )
            )
        ],
    )


def add(c: Cases) -> None:
    _cast(c)
    _mask(c)
    _replace(c)
    _insert(c)
    _set_schema_metadata(c)
    _logical_values(c)
