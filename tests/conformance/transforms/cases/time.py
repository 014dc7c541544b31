"""Cases for TimestampConverter and TimestampRouter, with the SimpleDateFormat patterns that once differed
(week year YYYY, week in year w, week in month W, and the illegal letter n)."""

from __future__ import annotations

from ..records import TS, Cases, date, env, record, s, struct, time, timestamp
from .samples import SMALL_VALUE

TARGETS = ("string", "unix", "Date", "Time", "Timestamp")

# Instants around year and week boundaries (UTC, ms): 2024-12-30 is in week 1 of week-year 2025 in Java (en).
INSTANTS = {
    "2024-12-30": TS,
    "2021-01-01": 1609459200000,  # Friday; week year 2020 under ISO, 2021 in Java en
    "2020-12-31": 1609416000000,
    "2023-01-01": 1672531200000,  # Sunday
    "1969-12-31": -43200000,  # before the epoch
    "2000-02-29": 951782400999,
    "1900-03-01": -2203891200000,
}

PATTERNS = (
    "yyyy-MM-dd",
    "YYYY-MM-dd",
    "YYYY-'W'ww-u",
    "YY",
    "ww",
    "w",
    "W",
    "F",
    "D",
    "DDD",
    "E",
    "EEEE",
    "u",
    "a",
    "hh:mm:ss a",
    "HH:mm:ss.SSS",
    "H:m:s.S",
    "k",
    "K",
    "S",
    "SS",
    "SSSS",
    "z",
    "zzzz",
    "Z",
    "X",
    "XX",
    "XXX",
    "G",
    "MMM",
    "MMMM",
    "MMMMM",
    "M",
    "L",
    "LLLL",
    "d",
    "yyyyy",
    "yy",
    "y",
    "''yyyy''",
    "'at' HH 'o''clock'",
    "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
    "yyyyMMddHHmmss",
    "EEE, d MMM yyyy HH:mm:ss Z",
)


def _to_string(c: Cases) -> None:
    for pattern in PATTERNS:
        for day, millis in INSTANTS.items():
            c.one(
                f"tsc-format-{pattern}-{day}",
                "TimestampConverter$Value",
                {"target.type": "string", "format": pattern},
                [record(env(timestamp(), millis))],
            )
    for bad in ("n", "yyyy-MM-dd nn", "q", "'unterminated", "yyyy-MM-dd'T'HH:mm:ss.nnnnnn"):
        c.one(
            f"tsc-format-illegal-{bad}",
            "TimestampConverter$Value",
            {"target.type": "string", "format": bad},
            [record(env(timestamp(), TS))],
        )


def _parse(c: Cases) -> None:
    inputs = {
        "yyyy-MM-dd": ["2024-12-30", "2024-12-30 trailing", "2024-2-3", "24-12-30", "bad"],
        "yyyyMMdd": ["20241230", "2024123"],
        "yyyy-MM-dd'T'HH:mm:ss.SSSX": ["2024-12-30T13:45:30.123Z", "2024-12-30T13:45:30.123+02"],
        "dd/MM/yyyy HH:mm": ["31/12/2024 23:59", "32/13/2024 25:61"],
        "YYYY-'W'ww-u": ["2025-W01-1"],
        "EEE, d MMM yyyy HH:mm:ss Z": ["Mon, 30 Dec 2024 13:45:30 +0100"],
        "hh:mm a": ["01:05 PM", "12:00 AM"],
        "yyyy-DDD": ["2024-365"],
    }
    for pattern, texts in inputs.items():
        for text in texts:
            for target in ("unix", "Timestamp"):
                c.one(
                    f"tsc-parse-{pattern}-{text}-{target}",
                    "TimestampConverter$Value",
                    {"target.type": target, "format": pattern},
                    [record(env(s("string"), text))],
                )


def _conversions(c: Cases) -> None:
    sources = {
        "unix": env(s("int64"), TS),
        "Timestamp": env(timestamp(), TS),
        "Date": env(date(), 20087),
        "Time": env(time(), 49530123),
        "string": env(s("string"), "2024-12-30 13:45:30.123"),
    }
    for source, value in sources.items():
        for target in TARGETS:
            c.one(
                f"tsc-{source}-to-{target}",
                "TimestampConverter$Value",
                {"target.type": target, "format": "yyyy-MM-dd HH:mm:ss.SSS"},
                [record(value)],
            )
            c.one(
                f"tsc-{source}-to-{target}-optional-null",
                "TimestampConverter$Value",
                {"target.type": target, "format": "yyyy-MM-dd HH:mm:ss.SSS"},
                [record(env({**value["schema"], "optional": True}, None))],
            )
    for precision in ("seconds", "milliseconds", "microseconds", "nanoseconds"):
        c.one(
            f"tsc-unix-precision-in-{precision}",
            "TimestampConverter$Value",
            {"target.type": "Timestamp", "unix.precision": precision},
            [record(env(s("int64"), 1735566330123456))],
        )
        c.one(
            f"tsc-unix-precision-out-{precision}",
            "TimestampConverter$Value",
            {"target.type": "unix", "unix.precision": precision},
            [record(env(timestamp(), TS))],
        )
        c.one(
            f"tsc-unix-precision-negative-{precision}",
            "TimestampConverter$Value",
            {"target.type": "string", "format": "yyyy-MM-dd HH:mm:ss.SSS", "unix.precision": precision},
            [record(env(s("int64"), -1500))],
        )
    # a field of a struct, defaults, schemaless maps and whole values
    event = struct(
        ("id", s("int32")),
        ("when", timestamp(True)),
        ("other", s("string", True, default="d")),
        name="com.example.Event",
        version=1,
    )
    c.one(
        "tsc-field-struct",
        "TimestampConverter$Value",
        {"field": "when", "target.type": "string", "format": "yyyy-MM-dd"},
        [record(env(event, {"id": 1, "when": TS, "other": None}))],
    )
    c.one(
        "tsc-field-struct-null",
        "TimestampConverter$Value",
        {"field": "when", "target.type": "unix"},
        [record(env(event, {"id": 1, "when": None, "other": None}))],
    )
    c.one(
        "tsc-field-struct-null-no-default",
        "TimestampConverter$Value",
        {"field": "when", "target.type": "unix", "replace.null.with.default": "false"},
        [record(env(event, {"id": 1, "when": None, "other": None}))],
    )
    with_default = struct(
        ("when", timestamp(True)), ("n", s("int32", True, default=5)), optional=True, default={"when": 0, "n": 1}
    )
    c.one(
        "tsc-field-struct-with-default",
        "TimestampConverter$Value",
        {"field": "when", "target.type": "unix"},
        [record(env(with_default, {"when": TS, "n": None})), record(env(with_default, None))],
    )
    c.one(
        "tsc-field-missing",
        "TimestampConverter$Value",
        {"field": "nope", "target.type": "unix"},
        [record(env(event, {"id": 1, "when": TS, "other": "x"}))],
    )
    c.one(
        "tsc-field-struct-null-value",
        "TimestampConverter$Value",
        {"field": "when", "target.type": "unix"},
        [record(env({**event, "optional": True}, None))],
    )
    c.one(
        "tsc-schemaless-field",
        "TimestampConverter$Value",
        {"field": "when", "target.type": "string", "format": "YYYY-ww"},
        [record({"when": TS, "x": 1})],
        schemas=False,
    )
    c.one(
        "tsc-schemaless-field-string",
        "TimestampConverter$Value",
        {"field": "when", "target.type": "unix", "format": "yyyy-MM-dd"},
        [record({"when": "2024-12-30"})],
        schemas=False,
    )
    c.one("tsc-schemaless-whole", "TimestampConverter$Value", {"target.type": "Date"}, [record(TS)], schemas=False)
    c.one(
        "tsc-schemaless-whole-to-string",
        "TimestampConverter$Value",
        {"target.type": "string", "format": "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"},
        [record(TS)],
        schemas=False,
    )
    c.one("tsc-schemaless-null", "TimestampConverter$Value", {"target.type": "unix"}, [record(None)], schemas=False)
    c.one(
        "tsc-schemaless-field-null",
        "TimestampConverter$Value",
        {"field": "w", "target.type": "unix"},
        [record({"w": None})],
        schemas=False,
    )
    c.one(
        "tsc-schemaless-field-missing",
        "TimestampConverter$Value",
        {"field": "w", "target.type": "unix"},
        [record({"x": 1})],
        schemas=False,
    )
    c.one("tsc-key", "TimestampConverter$Key", {"target.type": "Date"}, [record(SMALL_VALUE, key=env(timestamp(), TS))])
    # errors
    c.one(
        "tsc-error-schemaless-double", "TimestampConverter$Value", {"target.type": "unix"}, [record(1.5)], schemas=False
    )
    c.one(
        "tsc-error-schemaless-bool", "TimestampConverter$Value", {"target.type": "unix"}, [record(True)], schemas=False
    )
    c.one("tsc-error-int32-schema", "TimestampConverter$Value", {"target.type": "unix"}, [record(env(s("int32"), 5))])
    c.one(
        "tsc-error-string-without-format",
        "TimestampConverter$Value",
        {"target.type": "unix"},
        [record(env(s("string"), "2024-12-30"))],
    )
    c.one(
        "tsc-error-schemaless-string-without-format",
        "TimestampConverter$Value",
        {"target.type": "unix"},
        [record("2024-12-30")],
        schemas=False,
    )
    c.one(
        "tsc-config-string-without-format",
        "TimestampConverter$Value",
        {"target.type": "string"},
        [record(env(timestamp(), TS))],
    )
    c.one("tsc-config-bad-target", "TimestampConverter$Value", {"target.type": "date"}, [record(env(timestamp(), TS))])
    c.one("tsc-config-missing-target", "TimestampConverter$Value", {}, [record(env(timestamp(), TS))])
    c.one(
        "tsc-config-bad-precision",
        "TimestampConverter$Value",
        {"target.type": "unix", "unix.precision": "ms"},
        [record(env(timestamp(), TS))],
    )


def _router(c: Cases) -> None:
    for fmt in ("yyyyMMdd", "YYYY-ww", "yyyy-'W'W", "HH", "EEE", "yyyy.MM.dd HH:mm:ss.SSS z"):
        for day, millis in INSTANTS.items():
            c.one(
                f"tsr-{fmt}-{day}",
                "TimestampRouter",
                {"timestamp.format": fmt},
                [record(SMALL_VALUE, timestamp=millis)],
            )
    c.one("tsr-defaults", "TimestampRouter", {}, [record(SMALL_VALUE)])
    c.one(
        "tsr-topic-format",
        "TimestampRouter",
        {"topic.format": "${timestamp}/${topic}/${topic}"},
        [record(SMALL_VALUE, topic="a.b")],
    )
    c.one("tsr-topic-format-no-placeholders", "TimestampRouter", {"topic.format": "fixed"}, [record(SMALL_VALUE)])
    c.one(
        "tsr-topic-format-dollar",
        "TimestampRouter",
        {"topic.format": "$x-${topic}-$"},
        [record(SMALL_VALUE, topic="t$1")],
    )
    c.one("tsr-error-null-timestamp", "TimestampRouter", {}, [record(SMALL_VALUE, timestamp=None)])
    c.one("tsr-config-illegal-pattern", "TimestampRouter", {"timestamp.format": "yyyy-nn"}, [record(SMALL_VALUE)])


def add(c: Cases) -> None:
    _to_string(c)
    _parse(c)
    _conversions(c)
    _router(c)
