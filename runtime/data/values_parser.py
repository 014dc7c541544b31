"""Kafka Connect's `Values.parseString` (3.9): the schema and value a piece of text implies.

InsertHeader's `value.literal` and SimpleHeaderConverter's reading side use it. The rules, as the reference
applies them:
- the text is split into tokens at unescaped `: , { } [ ] "`; `null` is no value at all, `true`/`false` are
  booleans (only when nothing follows at the top level: `true}` stays a string);
- `[...]` is an array and `{...}` a map whose element/key/value schemas are merged into one common schema
  (int8 < int16 < int32 < int64 < float32 < float64; equal types keep the latest schema; anything else has
  none). No common schema gives a null item (or key/value) schema; the elements are then converted to the
  common one, and a null element of a typed array fails the array, which then falls back to a string;
- a token starting with a digit is first tried as an ISO date (`yyyy-MM-dd`), time (`HH:mm:ss.SSS'Z'`) or
  timestamp (`yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`), read by SimpleDateFormat (lenient, UTC), then as a number:
  integral values the narrowest of int8..int64, others float32 (the decimal rounded to float) unless that
  overflows, then float64, and integers past int64 a Decimal of their scale;
- anything else at the top level is the whole text as a string; inside an array or map it fails the
  container, which then falls back to a string.

Values are this runtime's: ints, `Float32` for Java floats, float, `decimal.Decimal`, str, bool, list, dict
and the logical types' Python values (Date `date`, Time `time`, Timestamp an aware UTC `datetime`; an
instant outside those types' range, or not valid for its schema, is left as the number the JSON converter
then rejects with the reference's message).

Not reproduced: Java's boxed number types. `[[1],[1000]]` is array<array<int16>> in both, but the reference
leaves the first inner element a Byte, which its JsonConverter then rejects (a ClassCastException turned
DataException); ours writes it.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from ..api.data import (
    BOOLEAN_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    STRING_SCHEMA,
    Schema,
)
from ..api.errors import DataError
from .java_date_format import DateFormat
from .java_numbers import Float32, decimal_to_float32, to_float32, wrap_int
from .logical_schemas import (
    DATE_LOGICAL_NAME,
    DATE_SCHEMA,
    DECIMAL_LOGICAL_NAME,
    TIME_LOGICAL_NAME,
    TIME_SCHEMA,
    TIMESTAMP_LOGICAL_NAME,
    TIMESTAMP_SCHEMA,
    decimal_schema,
)

# A parse result: (schema, value); (None, None) is Java's null SchemaAndValue.
Parsed = tuple[Schema | None, Any]
NULL: Parsed = (None, None)

_DATE_PATTERN = "yyyy-MM-dd"
_TIME_PATTERN = "HH:mm:ss.SSS'Z'"
_TIMESTAMP_PATTERN = _DATE_PATTERN + "'T'" + _TIME_PATTERN
# token length -> (schema, pattern): lengths of the patterns without their quotes
_TEMPORALS = {
    13: (TIME_SCHEMA, _TIME_PATTERN),
    24: (TIMESTAMP_SCHEMA, _TIMESTAMP_PATTERN),
    10: (DATE_SCHEMA, _DATE_PATTERN),
}
_DELIMITERS = frozenset(':,{}[]"')
_JAVA_WHITESPACE = "".join(chr(c) for c in range(33))  # String.trim() strips every char <= ' '
_MILLIS_PER_DAY = 86_400_000
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
# java.math.BigDecimal's grammar (digits as Character.isDigit reads them, which `\d` matches too)
_BIG_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE]([+-]?\d+))?")
_INT_TYPES = ("int8", "int16", "int32", "int64")
_NUMERIC_ORDER = ("int8", "int16", "int32", "int64", "float32", "float64")


@dataclass(frozen=True)
class _Instant:
    """A java.util.Date while parsing: the logical value it becomes depends on the final (merged) schema."""

    millis: int


def _trim(text: str) -> str:
    return text.strip(_JAVA_WHITESPACE)


def _is_blank(text: str | None) -> bool:
    return text is None or _trim(text) == ""


class _Tokens:
    """Values.Parser: a cursor over the text that yields delimiter and non-delimiter tokens."""

    def __init__(self, original: str) -> None:
        self.original = original
        self.index = 0
        self.next_token: str | None = None
        self.previous_token: str | None = None

    def mark(self) -> int:
        return self.index - (len(self.next_token) if self.next_token is not None else 0)

    def rewind_to(self, position: int) -> None:
        self.index = position
        self.next_token = None
        self.previous_token = None

    def _more(self) -> bool:
        return self.index < len(self.original)

    def has_next(self) -> bool:
        return self.next_token is not None or self._more()

    def next(self) -> str:
        if self.next_token is not None:
            self.previous_token, self.next_token = self.next_token, None
        else:
            self.previous_token = self._consume()
        return self.previous_token

    def next_n(self, n: int) -> str | None:
        start = self.mark()
        for _ in range(n):
            if not self.has_next():
                self.rewind_to(start)
                return None
            self.next()
        return self.original[start : self.index]

    def _consume(self) -> str:
        text, start, escaped = self.original, self.index, False
        while self.index < len(text):
            c = text[self.index]
            if c == "\\":
                escaped = not escaped
            elif c in _DELIMITERS and not escaped:
                if start < self.index:
                    return text[start : self.index]
                self.index += 1
                return text[start : self.index]
            else:
                escaped = False
            self.index += 1
        return text[start : self.index]

    def can_consume(self, expected: str) -> bool:
        if self.next_token is None:
            if not self.has_next():
                return False
            self.next_token = self._consume()
        while _is_blank(self.next_token) and self._more():
            self.next_token = self._consume()
        if _trim(self.next_token) == expected:
            self.next_token = None
            return True
        return False


class _Merger:
    """Values.SchemaMerger: the common schema of the values seen so far (None values are ignored)."""

    def __init__(self) -> None:
        self.common: Schema | None = None
        self.compatible = True

    def merge(self, parsed: Parsed) -> None:
        schema = parsed[0]
        if schema is None or not self.compatible:
            return
        if self.common is None:
            self.common = schema
        else:
            self.common = _merge_schemas(self.common, schema)
            self.compatible = self.common is not None


def _merge_schemas(previous: Schema, new: Schema) -> Schema | None:
    if previous.type != new.type:
        if previous.type in _NUMERIC_ORDER and new.type in _NUMERIC_ORDER:
            # the wider one wins, and it keeps its own schema (a Date stays a Date over an int8)
            wider = _NUMERIC_ORDER.index(new.type) > _NUMERIC_ORDER.index(previous.type)
            return new if wider else previous
        return None
    if previous.optional == new.optional:
        return previous if previous.optional else new
    return previous if previous == new else None


# ---- converting an element to the common schema (Values.convertTo with no source schema) ---------------


def _as_long(value: Any) -> int:
    """Values.asLong with no source schema: Number.longValue(), else a DataException."""
    if isinstance(value, bool) or not isinstance(value, (int, float, decimal.Decimal)):
        raise DataError(f"Unable to convert {value} ({type(value).__name__}) to a number")
    if isinstance(value, float):  # Java's (long) cast: NaN is 0, out of range saturates
        if value != value:
            return 0
        return _LONG_MAX if value >= 2**63 else _LONG_MIN if value < -(2**63) else int(value)
    return wrap_int(int(value), 64)


def _as_double(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, decimal.Decimal)):
        _as_long(value)  # raises the reference's message
    return float(value)


def _to_temporal(schema: Schema, value: Any) -> _Instant:
    if isinstance(value, _Instant):
        return value
    number = _as_long(value)
    if schema.name == DATE_LOGICAL_NAME:
        return _Instant(wrap_int(number, 32) * _MILLIS_PER_DAY)
    if schema.name == TIME_LOGICAL_NAME:
        millis = wrap_int(number, 32)
        if not 0 <= millis <= _MILLIS_PER_DAY:
            raise DataError("Time values must use number of milliseconds greater than 0 and less than 86400000")
        return _Instant(millis)
    return _Instant(number)


def _convert_to(schema: Schema, value: Any) -> Any:
    if value is None:
        if schema.optional:
            return None
        raise DataError("Unable to convert a null value to a schema that requires a value")
    if schema.name in (DATE_LOGICAL_NAME, TIME_LOGICAL_NAME, TIMESTAMP_LOGICAL_NAME):
        return _to_temporal(schema, value)
    kind = schema.type
    if kind in _INT_TYPES:
        return wrap_int(_as_long(value), int(kind[3:]))
    if kind == "float32":
        return value if isinstance(value, Float32) else Float32(to_float32(_as_double(value)))
    if kind == "float64":
        return value if type(value) is float else _as_double(value)
    if (kind == "array" and isinstance(value, list)) or (kind == "map" and isinstance(value, dict)):
        return value
    if (kind == "string" and isinstance(value, str)) or (kind == "boolean" and isinstance(value, bool)):
        return value
    if schema.name == DECIMAL_LOGICAL_NAME and isinstance(value, decimal.Decimal):
        return value
    raise DataError(f"Unable to convert {value} ({type(value).__name__}) to {schema}")


# ---- the parser -------------------------------------------------------------------------------------------


class _ValueParser:
    def __init__(self, text: str) -> None:
        self.tokens = _Tokens(text)

    def _single_token_literal(self, embedded: bool, literal: str) -> bool:
        start = self.tokens.mark()
        if self.tokens.can_consume(literal) and (embedded or not self.tokens.has_next()):
            return True
        self.tokens.rewind_to(start)
        return False

    def parse(self, embedded: bool) -> Parsed:
        tokens = self.tokens
        if not tokens.has_next():
            return NULL
        if embedded and tokens.can_consume('"'):
            return self._quoted_string()
        if self._single_token_literal(embedded, "null"):
            return NULL
        if self._single_token_literal(embedded, "true"):
            return BOOLEAN_SCHEMA, True
        if self._single_token_literal(embedded, "false"):
            return BOOLEAN_SCHEMA, False
        start = tokens.mark()
        try:
            if tokens.can_consume("["):
                return self._array()
            if tokens.can_consume("{"):
                return self._map()
        except DataError:
            tokens.rewind_to(start)  # not a valid array or map: read it as a plain token below
        token = tokens.next()
        if _is_blank(token):
            return STRING_SCHEMA, token
        return self._token(embedded, _trim(token))

    def _token(self, embedded: bool, token: str) -> Parsed:
        first_is_digit = unicodedata.category(token[0]) == "Nd"
        if first_is_digit:
            temporal = self._multi_token_temporal(token)
            if temporal is not None:
                return temporal
        if first_is_digit or token[0] in "+-":
            number = _parse_number(token)
            if number is not None:
                return number
        if embedded:
            raise DataError("Failed to parse embedded value")
        return STRING_SCHEMA, self.tokens.original

    def _quoted_string(self) -> Parsed:
        parts = []
        while self.tokens.has_next():
            if self.tokens.can_consume('"'):
                break
            parts.append(self.tokens.next())
        content = "".join(parts)
        return _parse_temporal(content) or (STRING_SCHEMA, content)

    def _array(self) -> Parsed:
        tokens, elements = self.tokens, _Merger()
        result: list[Any] = []
        while tokens.has_next():
            if tokens.can_consume("]"):
                if elements.common is None:  # no non-null element, or no common schema
                    return Schema("array"), result
                schema = Schema("array", value_schema=elements.common)
                return schema, [_convert_to(elements.common, v) for v in result]
            if tokens.can_consume(","):
                raise DataError("Unable to parse an empty array element: " + tokens.original)
            element = self.parse(True)
            elements.merge(element)
            result.append(element[1])
            position = tokens.mark()
            if tokens.can_consume("]"):
                tokens.rewind_to(position)
            elif not tokens.can_consume(","):
                raise DataError("Array elements missing ',' delimiter")
        if tokens.previous_token == ",":
            raise DataError("Array is missing element after ',': " + tokens.original)
        raise DataError("Array is missing terminating ']': " + tokens.original)

    def _map(self) -> Parsed:
        tokens, keys, values = self.tokens, _Merger(), _Merger()
        result: dict[Any, Any] = {}
        while tokens.has_next():
            if tokens.can_consume("}"):
                if keys.common is not None and values.common is not None:
                    schema = Schema("map", key_schema=keys.common, value_schema=values.common)
                    return schema, {
                        _convert_to(keys.common, k): _convert_to(values.common, v) for k, v in result.items()
                    }
                if keys.common is not None:
                    return (
                        Schema("map", key_schema=keys.common),
                        {_convert_to(keys.common, k): v for k, v in result.items()},
                    )
                return Schema("map"), result
            if tokens.can_consume(","):
                raise DataError("Unable to parse a map entry with no key or value: " + tokens.original)
            key = self.parse(True)
            if key[1] is None:
                raise DataError("Map entry may not have a null key: " + tokens.original)
            if not tokens.can_consume(":"):
                raise DataError(f"Map entry is missing ':' at {tokens.index} in {tokens.original}")
            value = self.parse(True)
            try:
                result[key[1]] = value[1]
            except TypeError:  # a list or map as a key: Java allows it, a Python dict cannot hold it
                raise DataError("Map keys must be hashable: " + tokens.original) from None
            tokens.can_consume(",")
            keys.merge(key)
            values.merge(value)
        if tokens.previous_token == ",":
            raise DataError("Map is missing element after ',': " + tokens.original)
        raise DataError("Map is missing terminating '}': " + tokens.original)

    def _multi_token_temporal(self, token: str) -> Parsed | None:
        # An unescaped colon is a delimiter, so a time or timestamp arrives as 5 tokens
        position = self.tokens.mark()
        remainder = self.tokens.next_n(4)
        if remainder is not None:
            temporal = _parse_temporal(token + remainder)
            if temporal is not None:
                return temporal
        self.tokens.rewind_to(position)
        return _parse_temporal(token)


_DATE_FORMATS: dict[str, DateFormat] = {}


def _date_format(pattern: str) -> DateFormat:
    if pattern not in _DATE_FORMATS:
        _DATE_FORMATS[pattern] = DateFormat(pattern)
    return _DATE_FORMATS[pattern]


def _parse_temporal(token: str) -> Parsed | None:
    token = token.replace("\\:", ":")
    kind = _TEMPORALS.get(len(token))
    if kind is None:
        return None
    schema, pattern = kind
    parsed = _date_format(pattern).parse_prefix(token)
    return None if parsed is None else (schema, _Instant(parsed[0]))


def _int_sized(text: str) -> bool:
    digits = text.lstrip("+-").lstrip("0")
    return len(digits) <= 10 and -(2**31) <= int(text) < 2**31


def _parse_number(token: str) -> Parsed | None:
    """BigDecimal(token), then the narrowest type that holds it; None where BigDecimal rejects the text."""
    match = _BIG_DECIMAL.fullmatch(token)
    if match is None or (match.group(1) is not None and not _int_sized(match.group(1))):
        return None  # BigDecimal: not a number, or its exponent overflows an int
    number = decimal.Decimal(token)
    _, digits, exponent = number.as_tuple()
    if not isinstance(exponent, int):
        return None  # NaN or an infinity: the grammar admits neither, and neither is a BigDecimal
    scale = -exponent
    if not -(2**31) <= scale < 2**31:
        return None  # BigDecimal: the scale overflows an int
    integral = exponent >= 0 or all(d == 0 for d in digits[len(digits) + exponent :])
    if integral:
        exact = _exact_integer(number, digits, exponent)
        if exact is not None:
            return exact
    if scale != 0:
        as_float = decimal_to_float32(number)
        if abs(as_float) != float("inf"):
            return FLOAT32_SCHEMA, Float32(as_float)
        as_double = float(number)
        if abs(as_double) != float("inf"):
            return FLOAT64_SCHEMA, as_double
    return decimal_schema(scale), number


def _exact_integer(number: decimal.Decimal, digits: tuple[int, ...], exponent: int) -> Parsed | None:
    significant = len(digits) + exponent  # digits left of the point
    if significant > 20:  # at least 10^20: past int64 whatever the digits (no huge int built)
        return None
    value = int(number.to_integral_value())
    if not _LONG_MIN <= value <= _LONG_MAX:
        return None
    for bits, schema in ((8, INT8_SCHEMA), (16, INT16_SCHEMA), (32, INT32_SCHEMA)):
        if -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
            return schema, value
    return INT64_SCHEMA, value


# ---- from parse results to this runtime's values ---------------------------------------------------------

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_EPOCH_DATE = _dt.date(1970, 1, 1)


def _instant_value(schema: Schema | None, instant: _Instant) -> Any:
    millis = instant.millis
    try:
        if schema is not None and schema.name == DATE_LOGICAL_NAME and millis % _MILLIS_PER_DAY == 0:
            return _EPOCH_DATE + _dt.timedelta(days=millis // _MILLIS_PER_DAY)
        if schema is not None and schema.name == TIME_LOGICAL_NAME:
            if not 0 <= millis < _MILLIS_PER_DAY:
                return millis  # the JSON converter rejects it, as Time.fromLogical does
            seconds, ms = divmod(millis, 1000)
            return _dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, ms * 1000)
        return _EPOCH + _dt.timedelta(milliseconds=millis)
    except OverflowError:
        return millis // _MILLIS_PER_DAY if schema is not None and schema.name == DATE_LOGICAL_NAME else millis


def _materialise(schema: Schema | None, value: Any) -> Any:
    if isinstance(value, _Instant):
        return _instant_value(schema, value)
    if isinstance(value, list):
        item = schema.value_schema if schema is not None else None
        return [_materialise(item, v) for v in value]
    if isinstance(value, dict):
        key_schema = schema.key_schema if schema is not None else None
        value_schema = schema.value_schema if schema is not None else None
        return {_materialise(key_schema, k): _materialise(value_schema, v) for k, v in value.items()}
    return value


def parse_string(text: str | None) -> Parsed:
    """`Values.parseString(text)`: (schema, value), or (None, None) for `null` (see the module docstring)."""
    if text is None:
        return NULL
    if text == "":
        return STRING_SCHEMA, text
    schema, value = _ValueParser(text).parse(False)
    return schema, _materialise(schema, value)
