"""SimpleDateFormat parsing as OpenJDK 17.0.15 does it (lenient, UTC, locale en_US): the expected epoch millis
and end positions were printed by `new SimpleDateFormat(pattern).parse(text, new ParsePosition(0))`; a
differential run of these and 3,000 random instants through `format` against that JVM matched as well."""

from __future__ import annotations

import pytest

from runtime.data.java_date_format import DateFormat, ParseError

JAVA_17 = [
    # Julian calendar before 15 October 1582, and the ten days that do not exist
    ("yyyy-MM-dd", "0024-12-30", -61378560000000, 10),
    ("yyyy-MM-dd", "1582-10-04", -12219379200000, 10),
    ("yyyy-MM-dd", "1582-10-10", -12218860800000, 10),
    ("yyyy-MM-dd", "1582-10-15", -12219292800000, 10),
    ("G yyyy-MM-dd", "BC 0044-03-15", -63517996800000, 13),
    # lenient roll-over of every field
    ("dd/MM/yyyy HH:mm", "32/13/2024 25:61", 1738461660000, 16),
    ("yyyy-MM-dd", "2024-02-30", 1709251200000, 10),
    ("yyyy-DDD", "2024-366", 1735603200000, 8),
    # week dates (weeks start on Sunday; week 1 holds 1 January)
    ("YYYY-'W'ww-u", "2025-W01-1", 1735516800000, 10),
    ("YYYY-'W'ww-u", "2021-W53-5", 1640908800000, 10),
    ("YYYY-'W'ww-u", "2025-W01-9", 1736208000000, 10),
    ("YYYY-MM-dd", "2025-06-15", 1735430400000, 10),  # the week year wins over month and day
    ("yyyy-MM-W-E", "2024-12-2-Tue", 1733788800000, 13),
    # years past 9999, trailing text, zones
    ("yyyy-MM-dd", "12345-01-01", 327403382400000, 11),
    ("yyyy-MM-dd", "2024-1-2x", 1704153600000, 8),
    ("yyyy-MM-dd HH:mm:ss z", "2024-12-30 10:00:00 GMT+05:30", 1735533000000, 29),
    # a year past an int saturates (DecimalFormat), and the instant wraps around a long as Java's does
    ("yyyy", "9" * 30, -6019000092841406464, 30),
]


@pytest.mark.parametrize("pattern, text, millis, end", JAVA_17)
def test_parse_matches_java(pattern: str, text: str, millis: int, end: int) -> None:
    assert DateFormat(pattern).parse_prefix(text) == (millis, end)


def test_a_sign_is_not_part_of_a_year() -> None:
    assert DateFormat("yyyy-MM-dd").parse_prefix("+2024-01-01") is None
    with pytest.raises(ParseError, match='Unparseable date: "nope"'):
        DateFormat("yyyy-MM-dd").parse_millis("nope")


@pytest.mark.parametrize(
    "pattern, millis, java",
    [
        ("yyyy-MM-dd G", -62135769600000, "0001-01-01 AD"),
        ("yyyy-MM-dd HH:mm", 253402300800000, "10000-01-01 00:00"),
        ("YYYY-ww", -63864113045239, "-0054-13"),  # Java prints the week year of a BC date as a signed year
    ],
)
def test_format_beyond_datetime(pattern: str, millis: int, java: str) -> None:
    assert DateFormat(pattern).format_millis(millis) == java
