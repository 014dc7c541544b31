"""A port of java.text.SimpleDateFormat, fixed to UTC as Kafka's transforms use it (lenient, locale en_US).

Supported letters: G y Y M L w W d D F E u a H k K h m s S z Z X and quoted literals ('' is a quote); any
other letter is illegal, as in Java 17 (`n`, for one, is DateTimeFormatter's, not SimpleDateFormat's).
Dates are those of java.util.GregorianCalendar (java_calendar.py): Julian before 15 October 1582, weeks
starting on Sunday with the week holding 1 January as week 1 of its year. Instants are epoch milliseconds,
so any year a Java Date holds formats and parses.

Parsing follows SimpleDateFormat.parse: fields are read in pattern order from the start of the text
(trailing text is ignored); spaces and tabs before a field are skipped; a numeric field followed directly
by another numeric field takes exactly its pattern width; two-digit `yy` years fall within 80 years before
and 20 after now. The fields are then resolved as a lenient Calendar does: the latest of competing fields
wins (`YYYY`/`ww`/`u` give a week date), and values past their range roll over into the next unit.
Named time zones other than UTC/GMT are read as UTC.
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from typing import NamedTuple

from . import java_calendar as cal

_UTC = _dt.UTC
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_LETTERS = set("GyYMLdDEuaHkKhmsSzZXwWF")
_NUMERIC = set("yYMLdDuHkKhmsSwWF")


class _Token(NamedTuple):
    letter: str  # "" for literal text
    width: int  # how many times the letter repeats
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


def _iso_day(day_of_week: int) -> int:
    return 7 if day_of_week == cal.SUNDAY else day_of_week - 1


def format_millis(tokens: list[_Token], millis: int) -> str:
    """`SimpleDateFormat.format` of an epoch-millisecond instant, in UTC."""
    f = cal.fields(millis)
    out: list[str] = []
    for letter, count, text in tokens:
        if not letter:
            out.append(text)
        elif letter == "G":
            out.append("AD" if f.era_ad else "BC")
        elif letter in "yY":
            year = f.week_year if letter == "Y" else f.year
            out.append(_pad(year % 100, 2) if count == 2 else _pad(year, count))
        elif letter in "ML":
            if count >= 4:
                out.append(_MONTHS[f.month - 1])
            elif count == 3:
                out.append(_MONTHS[f.month - 1][:3])
            else:
                out.append(_pad(f.month, count))
        elif letter == "d":
            out.append(_pad(f.day, count))
        elif letter == "D":
            out.append(_pad(f.day_of_year, count))
        elif letter == "E":
            name = _DAYS[_iso_day(f.day_of_week) - 1]
            out.append(name if count >= 4 else name[:3])
        elif letter == "u":
            out.append(_pad(_iso_day(f.day_of_week), count))
        elif letter == "a":
            out.append("AM" if f.hour < 12 else "PM")
        elif letter == "H":
            out.append(_pad(f.hour, count))
        elif letter == "k":
            out.append(_pad(f.hour or 24, count))
        elif letter == "K":
            out.append(_pad(f.hour % 12, count))
        elif letter == "h":
            out.append(_pad(f.hour % 12 or 12, count))
        elif letter == "m":
            out.append(_pad(f.minute, count))
        elif letter == "s":
            out.append(_pad(f.second, count))
        elif letter == "S":
            out.append(_pad(f.millisecond, count))
        elif letter == "z":
            out.append("Coordinated Universal Time" if count >= 4 else "UTC")
        elif letter == "Z":
            out.append("+0000")
        elif letter == "X":
            out.append("Z")
        elif letter == "w":
            out.append(_pad(f.week_of_year, count))
        elif letter == "W":
            out.append(_pad(f.week_of_month, count))
        else:  # F: day of week in month
            out.append(_pad((f.day - 1) // 7 + 1, count))
    return "".join(out)


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)
_MS = _dt.timedelta(milliseconds=1)


def millis_of(moment: _dt.datetime) -> int:
    """Epoch milliseconds of an aware (or naive = UTC) datetime, truncated to the millisecond."""
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=_UTC)
    return (aware - _EPOCH) // _MS


def format_datetime(tokens: list[_Token], moment: _dt.datetime) -> str:
    """`SimpleDateFormat.format` of an aware (or naive = UTC) datetime, in UTC."""
    return format_millis(tokens, millis_of(moment))


class ParseError(ValueError):
    pass


# ---- parsing ----------------------------------------------------------------------------------------------

_WEEK_YEAR = 17  # CalendarBuilder's extra field
_FIELD_OF = {
    "G": cal.ERA,
    "y": cal.YEAR,
    "Y": _WEEK_YEAR,
    "M": cal.MONTH,
    "L": cal.MONTH,
    "d": cal.DAY_OF_MONTH,
    "k": cal.HOUR_OF_DAY,
    "H": cal.HOUR_OF_DAY,
    "m": cal.MINUTE,
    "s": cal.SECOND,
    "S": cal.MILLISECOND,
    "E": cal.DAY_OF_WEEK,
    "u": cal.DAY_OF_WEEK,
    "D": cal.DAY_OF_YEAR,
    "F": cal.DAY_OF_WEEK_IN_MONTH,
    "w": cal.WEEK_OF_YEAR,
    "W": cal.WEEK_OF_MONTH,
    "a": cal.AM_PM,
    "h": cal.HOUR,
    "K": cal.HOUR,
}
# letters whose field, when it comes right after another numeric field, limits that one to its width
_ABUTTING = set("yYdkHmsSDFwWhKu")
_INTEGER = re.compile(r"-?\d+")
_MONTH_NAMES = {name.lower(): i for i, full in enumerate(_MONTHS) for name in (full, full[:3])}
# Calendar.DAY_OF_WEEK: Sunday = 1
_DAY_NAMES = {name.lower(): (i + 1) % 7 + 1 for i, full in enumerate(_DAYS) for name in (full, full[:3])}
_TEXT_FIELDS = {"G": {"bc": 0, "ad": 1}, "E": _DAY_NAMES, "a": {"am": 0, "pm": 1}}


def _char_equals(a: str, b: str) -> bool:
    """Lenient SimpleDateFormat: a literal space matches any space separator (Unicode Zs)."""
    return a == b or (unicodedata.category(a) == "Zs" and unicodedata.category(b) == "Zs")


def _abuts(token: _Token | None) -> bool:
    if token is None or not token.letter:
        return False
    if token.letter in "ML":
        return token.width <= 2
    return token.letter in _ABUTTING


def _match_name(text: str, start: int, names: dict[str, int]) -> tuple[int, int] | None:
    """The longest name matching at `start`, ignoring case: (its value, the index after it)."""
    best = None
    for name, value in names.items():
        if text[start : start + len(name)].lower() == name and (best is None or len(name) > best[1]):
            best = (value, len(name))
    return None if best is None else (best[0], start + best[1])


def _int_value(digits: str) -> int:
    """DecimalFormat's Number.intValue(): a long wraps to 32 bits, beyond a long it saturates."""
    if len(digits.lstrip("-").lstrip("0")) > 19:  # past a long (and past what int() reads quickly)
        return 2**31 - 1 if not digits.startswith("-") else -(2**31)
    number = int(digits)
    if -(2**63) <= number < 2**63:
        number &= 0xFFFFFFFF
        return number - (1 << 32) if number >> 31 else number
    return 2**31 - 1 if number > 0 else -(2**31)


def _numeric_zone(text: str, index: int, sign: int, count: int, colon: bool) -> tuple[int, int] | None:
    """SimpleDateFormat.subParseNumericZone: (offset in ms, index after) for [h]h[[:]mm] at `index`."""
    m = re.compile(r"([0-9])([0-9])?" + ("" if count == 1 else ("(:)" if colon else "()") + "([0-9]{2})")).match(
        text, index
    )
    if m is None or (m.group(2) is None and (count > 0 or not colon)):
        return None
    hours = int(m.group(1) + (m.group(2) or ""))
    minutes = int(m.group(4)) if count != 1 else 0
    if hours > 23 or minutes > 59:
        return None
    return sign * (hours * 60 + minutes) * 60_000, m.end()


def _zone(letter: str, count: int, text: str, start: int, index: int) -> tuple[int, int] | None:
    c = text[index : index + 1]
    if letter == "X":
        if c == "Z":
            return 0, index + 1
        if c not in ("+", "-"):
            return None
        return _numeric_zone(text, index + 1, 1 if c == "+" else -1, count, count == 3)
    if c in ("+", "-"):
        return _numeric_zone(text, index + 1, 1 if c == "+" else -1, 0, False)
    if text[start : start + 3].upper() == "GMT":
        after = start + 3
        c = text[after : after + 1]
        if c not in ("+", "-"):
            return 0, after
        return _numeric_zone(text, after + 1, 1 if c == "+" else -1, 0, True)
    named = re.compile(r"Coordinated Universal Time|UTC|[A-Z]{3,4}", re.IGNORECASE).match(text, index)
    return None if named is None else (0, named.end())


class _Builder:
    """SimpleDateFormat's CalendarBuilder: the parsed fields, in the order they were set."""

    def __init__(self) -> None:
        self.fields = cal.FieldSet()

    def set(self, field: int, value: int) -> None:
        self.fields.set(field, value)

    def establish(self) -> int:
        parsed = self.fields
        week_date = parsed.is_set(_WEEK_YEAR) and parsed.stamp(_WEEK_YEAR) > parsed.stamp(cal.YEAR)
        resolved = cal.FieldSet()
        for field in sorted(parsed.stamps, key=parsed.stamp):
            if field != _WEEK_YEAR:
                resolved.set(field, parsed.get(field))
        if week_date:
            week = parsed.get(cal.WEEK_OF_YEAR) if parsed.is_set(cal.WEEK_OF_YEAR) else 1
            dow = parsed.get(cal.DAY_OF_WEEK) if parsed.is_set(cal.DAY_OF_WEEK) else cal.FIRST_DAY_OF_WEEK
            if not 0 < dow <= 7:  # lenient: an out-of-range day of week moves the week
                if dow >= 8:
                    dow -= 1
                    week += dow // 7
                    dow = dow % 7 + 1
                else:
                    while dow <= 0:
                        dow += 7
                        week -= 1
                dow = 1 if dow == 7 else dow + 1
            year, month, day = cal.week_date(parsed.get(_WEEK_YEAR), week, dow)
            resolved.set(cal.ERA, 1 if year > 0 else 0)
            resolved.set(cal.YEAR, year if year > 0 else 1 - year)
            resolved.set(cal.MONTH, month)
            resolved.set(cal.DAY_OF_MONTH, day)
        return cal.resolve(resolved)


def _century_start() -> tuple[int, int]:
    """SimpleDateFormat's default century: (its start year, its start instant), 80 years before now."""
    now = _dt.datetime.now(_UTC)
    try:
        start = now.replace(year=now.year - 80)
    except ValueError:  # 29 February
        start = now.replace(year=now.year - 80, day=28)
    return start.year, millis_of(start)


def parse_prefix(tokens: list[_Token], text: str) -> tuple[int, int] | None:
    """`SimpleDateFormat.parse(text, new ParsePosition(0))`: (epoch millis, index after the parsed text),
    or None where Java returns null."""
    builder = _Builder()
    ambiguous = False
    century_year, century_millis = _century_start()
    pos = 0
    for i, (letter, count, literal) in enumerate(tokens):
        if not letter:
            for ch in literal:
                if pos >= len(text) or not _char_equals(text[pos], ch):
                    return None
                pos += 1
            continue
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        start = pos
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        if pos >= len(text):
            return None
        if letter in _TEXT_FIELDS or (letter in "ML" and count >= 3):
            names = _MONTH_NAMES if letter in "ML" else _TEXT_FIELDS[letter]
            matched = _match_name(text, start, names)
            if matched is None:
                return None
            builder.set(_FIELD_OF[letter], matched[0])
            pos = matched[1]
            continue
        if letter in "zZX":
            zone = _zone(letter, count, text, start, pos)
            if zone is None:
                return None
            builder.set(cal.ZONE_OFFSET, zone[0])
            builder.set(cal.DST_OFFSET, 0)
            pos = zone[1]
            continue
        limit = start + count if _abuts(following) else len(text)
        if limit > len(text):
            return None
        number = _INTEGER.match(text[:limit], pos)
        if number is None:
            return None
        value = _int_value(number.group())
        digits_start, pos = pos, number.end()
        if letter in "yY":
            if count <= 2 and pos - digits_start == 2 and number.group().isdigit():
                ambiguous = value == century_year % 100
                value += century_year // 100 * 100 + (100 if value < century_year % 100 else 0)
        elif letter in "ML":
            value -= 1
        elif letter == "k" and value == 24:
            value = 0
        elif letter == "h" and value == 12:
            value = 0
        elif letter == "u":  # ISO day of week -> Calendar's (Sunday = 1); out of range stays as it is
            value = (1 if value == 7 else value + 1) if 0 < value <= 7 else value
        builder.set(_FIELD_OF[letter], value)
    millis = builder.establish()
    if ambiguous and millis < century_millis:
        for field in (cal.YEAR, _WEEK_YEAR):
            if builder.fields.is_set(field):
                builder.fields.values[field] += 100
        millis = builder.establish()
    return millis, pos


class DateFormat:
    """One compiled pattern, for formatting and parsing in UTC."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.tokens = compile_pattern(pattern)

    def format(self, moment: _dt.datetime) -> str:
        return format_datetime(self.tokens, moment)

    def format_millis(self, millis: int) -> str:
        return format_millis(self.tokens, millis)

    def parse_prefix(self, text: str) -> tuple[int, int] | None:
        """(epoch millis, index after the parsed text), or None where Java's parse(text, pos) gives null."""
        return parse_prefix(self.tokens, text)

    def parse_millis(self, text: str) -> int:
        """`DateFormat.parse(text)` as epoch milliseconds; ParseError where Java throws ParseException."""
        parsed = parse_prefix(self.tokens, text)
        if parsed is None:
            raise ParseError(f'Unparseable date: "{text}"')
        return parsed[0]

    def parse(self, text: str) -> _dt.datetime:
        """`DateFormat.parse(text)` as an aware UTC datetime (ParseError also past the years datetime holds)."""
        try:
            return _EPOCH + self.parse_millis(text) * _MS
        except OverflowError as exc:
            raise ParseError(f'Unparseable date: "{text}"') from exc
