"""A port of the java.text.SimpleDateFormat pattern language, fixed to UTC as Kafka's transforms use it.

Supported letters: G y Y M L w W d D F E u a H k K h m s S z Z X and quoted literals ('' is a quote); any
other letter is illegal, as in Java 17 (`n`, for one, is DateTimeFormatter's, not SimpleDateFormat's).
Week fields (`Y` week year, `w`, `W`) follow the calendar of the JVM's default locale where the reference
runs (`en`: weeks start on Sunday, and the week holding 1 January is week 1 of its year). Parsing,
like Java's `DateFormat.parse(String)`, reads from the start and ignores trailing text; adjacent numeric
fields (`yyyyMMdd`) take exactly their pattern width.
"""
from __future__ import annotations

import datetime as _dt
import re
from typing import NamedTuple

_UTC = _dt.timezone.utc
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_LETTERS = set("GyYMLdDEuaHkKhmsSzZXwWF")
_NUMERIC = set("yYMLdDuHkKhmsSwWF")


class _Token(NamedTuple):
    letter: str  # "" for literal text
    count: int
    text: str = ""


def compile_pattern(pattern: str) -> list[_Token]:
    """Tokens of a SimpleDateFormat pattern; raises ValueError as Java's constructor does."""
    tokens: list[_Token] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            if pattern.startswith("''", i):
                tokens.append(_Token("", 0, "'"))
                i += 2
                continue
            end = i + 1
            text = []
            while True:
                if end >= len(pattern):
                    raise ValueError("Unterminated quote")
                if pattern[end] == "'":
                    if pattern.startswith("''", end):
                        text.append("'")
                        end += 2
                        continue
                    break
                text.append(pattern[end])
                end += 1
            tokens.append(_Token("", 0, "".join(text)))
            i = end + 1
        elif c.isascii() and c.isalpha():
            if c not in _LETTERS:
                raise ValueError(f"Illegal pattern character '{c}'")
            j = i
            while j < len(pattern) and pattern[j] == c:
                j += 1
            tokens.append(_Token(c, j - i))
            i = j
        else:
            tokens.append(_Token("", 0, c))
            i += 1
    return tokens


def _pad(number: int, count: int) -> str:
    return f"{number:0{count}d}" if number >= 0 else "-" + f"{-number:0{count}d}"


def _sunday_index(day: _dt.date) -> int:
    """Days since the Sunday that starts the week of `day` (Sunday = 0)."""
    return (day.weekday() + 1) % 7


def week_of_year(day: _dt.date) -> tuple[int, int]:
    """(week year, week of year) as java.util.GregorianCalendar counts them with the first day of the week
    Sunday and one minimal day in the first week: the week that holds 1 January is week 1, so the last
    days of December can be in week 1 of the next year (2024-12-29 is 2025-W01)."""
    week_end = day + _dt.timedelta(days=6 - _sunday_index(day))
    if week_end.year > day.year:
        return day.year + 1, 1
    first = _sunday_index(_dt.date(day.year, 1, 1))
    return day.year, (day.timetuple().tm_yday - 1 + first) // 7 + 1


def week_of_month(day: _dt.date) -> int:
    """Week of the month with the same rules: the week that holds the 1st is week 1."""
    return (day.day - 1 + _sunday_index(day.replace(day=1))) // 7 + 1


def format_datetime(tokens: list[_Token], moment: _dt.datetime) -> str:
    """`SimpleDateFormat.format` of an aware (or naive = UTC) datetime, in UTC."""
    m = moment.astimezone(_UTC) if moment.tzinfo is not None else moment
    out: list[str] = []
    for letter, count, text in tokens:
        if not letter:
            out.append(text)
        elif letter == "G":
            out.append("AD" if m.year > 0 else "BC")
        elif letter in "yY":
            year = week_of_year(m.date())[0] if letter == "Y" else m.year
            out.append(_pad(year % 100, 2) if count == 2 else _pad(year, count))
        elif letter in "ML":
            if count >= 4:
                out.append(_MONTHS[m.month - 1])
            elif count == 3:
                out.append(_MONTHS[m.month - 1][:3])
            else:
                out.append(_pad(m.month, count))
        elif letter == "d":
            out.append(_pad(m.day, count))
        elif letter == "D":
            out.append(_pad(m.timetuple().tm_yday, count))
        elif letter == "E":
            name = _DAYS[m.weekday()]
            out.append(name if count >= 4 else name[:3])
        elif letter == "u":
            out.append(_pad(m.isoweekday(), count))
        elif letter == "a":
            out.append("AM" if m.hour < 12 else "PM")
        elif letter == "H":
            out.append(_pad(m.hour, count))
        elif letter == "k":
            out.append(_pad(m.hour or 24, count))
        elif letter == "K":
            out.append(_pad(m.hour % 12, count))
        elif letter == "h":
            out.append(_pad(m.hour % 12 or 12, count))
        elif letter == "m":
            out.append(_pad(m.minute, count))
        elif letter == "s":
            out.append(_pad(m.second, count))
        elif letter == "S":
            out.append(_pad(m.microsecond // 1000, count))
        elif letter == "z":
            out.append("Coordinated Universal Time" if count >= 4 else "UTC")
        elif letter == "Z":
            out.append("+0000")
        elif letter == "X":
            out.append("Z")
        elif letter == "w":
            out.append(_pad(week_of_year(m.date())[1], count))
        elif letter == "W":
            out.append(_pad(week_of_month(m.date()), count))
        else:  # F: day of week in month
            out.append(_pad((m.day - 1) // 7 + 1, count))
    return "".join(out)


class ParseError(ValueError):
    pass


def _numeric_regex(count: int, abutting: bool) -> str:
    return rf"(\d{{{count}}})" if abutting else r"([+-]?\d+)"


def _build_regex(tokens: list[_Token]) -> re.Pattern[str]:
    parts: list[str] = []
    for index, (letter, count, text) in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        abutting = following is not None and following.letter in _NUMERIC and not (
            following.letter in "ML" and following.count >= 3)
        if not letter:
            parts.append(re.escape(text))
        elif letter in "ML" and count >= 3:
            parts.append("(" + "|".join(sorted(_MONTHS + [n[:3] for n in _MONTHS], key=len, reverse=True)) + ")")
        elif letter == "E":
            parts.append("(" + "|".join(sorted(_DAYS + [n[:3] for n in _DAYS], key=len, reverse=True)) + ")")
        elif letter == "a":
            parts.append("(AM|PM|am|pm)")
        elif letter == "G":
            parts.append("(AD|BC)")
        elif letter in "zZX":
            parts.append(r"(Z|UTC|GMT(?:[+-]\d{1,2}(?::?\d{2})?)?|[+-]\d{2}(?::?\d{2})?|[A-Z]{3,4})")
        else:
            parts.append(_numeric_regex(max(count, 1), abutting))
    return re.compile("".join(parts), re.IGNORECASE)


def _offset(text: str) -> _dt.timedelta:
    m = re.search(r"([+-])(\d{1,2}):?(\d{2})?$", text)
    if not m:
        return _dt.timedelta(0)  # Z, UTC, GMT and other names are read as UTC here
    delta = _dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0))
    return delta if m.group(1) == "+" else -delta


def _two_digit_year(value: int, now: _dt.datetime) -> int:
    """SimpleDateFormat's pivot: within 80 years before and 20 years after now."""
    start = now.year - 80
    year = (start // 100) * 100 + value
    return year + 100 if year < start else year


class DateFormat:
    """One compiled pattern, for formatting and parsing in UTC."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.tokens = compile_pattern(pattern)
        self._regex: re.Pattern[str] | None = None

    def format(self, moment: _dt.datetime) -> str:
        return format_datetime(self.tokens, moment)

    def parse(self, text: str) -> _dt.datetime:
        if self._regex is None:
            self._regex = _build_regex(self.tokens)
        match = self._regex.match(text)
        if match is None:
            raise ParseError(f'Unparseable date: "{text}"')
        fields = {"year": 1970, "month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0, "ms": 0, "yday": None}
        pm: bool | None = None
        hour12 = None
        offset = _dt.timedelta(0)
        groups = iter(match.groups())
        for letter, count, _text in self.tokens:
            if not letter:
                continue
            raw = next(groups)
            if letter in "yY":
                year = int(raw)
                fields["year"] = _two_digit_year(year, _dt.datetime.now(_UTC)) if count <= 2 and len(raw) <= 2 else year
            elif letter in "ML":
                if raw.isdigit():
                    fields["month"] = int(raw)
                else:
                    fields["month"] = [n[:3].lower() for n in _MONTHS].index(raw[:3].lower()) + 1
            elif letter == "d":
                fields["day"] = int(raw)
            elif letter == "D":
                fields["yday"] = int(raw)
            elif letter in "Hk":
                fields["hour"] = int(raw) % 24
            elif letter in "Kh":
                hour12 = int(raw) % 12
            elif letter == "a":
                pm = raw.lower() == "pm"
            elif letter == "m":
                fields["minute"] = int(raw)
            elif letter == "s":
                fields["second"] = int(raw)
            elif letter == "S":
                fields["ms"] = int(raw)
            elif letter in "zZX":
                offset = _offset(raw)
        if hour12 is not None:
            fields["hour"] = hour12 + (12 if pm else 0)
        elif pm and fields["hour"] < 12:
            fields["hour"] += 12
        try:
            if fields["yday"] is not None:
                base = _dt.datetime(fields["year"], 1, 1, tzinfo=_UTC) + _dt.timedelta(days=fields["yday"] - 1)
            else:
                base = _dt.datetime(fields["year"], 1, 1, tzinfo=_UTC)
                # lenient like Java: months and days past their range roll over
                year_shift, month0 = divmod(fields["month"] - 1, 12)
                base = base.replace(year=fields["year"] + year_shift, month=month0 + 1)
                base += _dt.timedelta(days=fields["day"] - 1)
            moment = base + _dt.timedelta(hours=fields["hour"], minutes=fields["minute"], seconds=fields["second"],
                                          milliseconds=fields["ms"])
        except (ValueError, OverflowError) as exc:
            raise ParseError(f'Unparseable date: "{text}"') from exc
        return moment - offset
