"""SimpleDateFormat's week fields as Java 17 renders them where the reference runs (default locale `en`:
weeks start on Sunday, one minimal day in the first week). The expected strings were printed by
`new SimpleDateFormat("YYYY-ww-W-F-u yyyy-MM-dd E")` (time zone UTC) on OpenJDK 17.0.15."""

from __future__ import annotations

import datetime as dt

import pytest

from runtime.data.java_date_format import DateFormat

JAVA_17 = {
    "2024-12-28": "2024-52-4-4-6 2024-12-28 Sat",
    "2024-12-29": "2025-01-5-5-7 2024-12-29 Sun",
    "2024-12-30": "2025-01-5-5-1 2024-12-30 Mon",
    "2025-01-01": "2025-01-1-1-3 2025-01-01 Wed",
    "2025-01-04": "2025-01-1-1-6 2025-01-04 Sat",
    "2025-01-05": "2025-02-2-1-7 2025-01-05 Sun",
    "2020-03-01": "2020-10-1-1-7 2020-03-01 Sun",
    "2020-03-07": "2020-10-1-1-6 2020-03-07 Sat",
    "2020-03-08": "2020-11-2-2-7 2020-03-08 Sun",
    "2021-01-03": "2021-02-2-1-7 2021-01-03 Sun",
    "2026-11-01": "2026-45-1-1-7 2026-11-01 Sun",
    "2026-11-30": "2026-49-5-5-1 2026-11-30 Mon",
    "2027-01-01": "2027-01-1-1-5 2027-01-01 Fri",
    "2027-01-02": "2027-01-1-1-6 2027-01-02 Sat",
    "2027-01-03": "2027-02-2-1-7 2027-01-03 Sun",
}


@pytest.mark.parametrize("day, expected", sorted(JAVA_17.items()))
def test_week_fields_match_java(day: str, expected: str) -> None:
    moment = dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC)
    assert DateFormat("YYYY-ww-W-F-u yyyy-MM-dd E").format(moment) == expected


def test_two_letter_week_year() -> None:
    assert DateFormat("YY").format(dt.datetime(2024, 12, 29, tzinfo=dt.UTC)) == "25"


def test_n_is_not_a_simpledateformat_letter() -> None:
    # Java 17: IllegalArgumentException: Illegal pattern character 'n'
    with pytest.raises(ValueError, match="Illegal pattern character 'n'"):
        DateFormat("HH:mm:ss.n")
