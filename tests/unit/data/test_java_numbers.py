"""Java float arithmetic and Java 17's Float.toString. Expected texts were printed by OpenJDK 17.0.15's
`Float.toString(f)` (and `new BigDecimal(s).floatValue()`); a differential run over 100,000 random float bit
patterns against that JVM matched as well."""

from __future__ import annotations

import decimal
import struct

import pytest

from runtime.api.data import FLOAT32_SCHEMA
from runtime.converters.json import JsonConverter, dumps_schemaless
from runtime.data.java_numbers import Float32, decimal_to_float32, java_float_str, to_float32, wrap_int


@pytest.mark.parametrize(
    "x, java",
    [
        # not the shortest text that reads back: JDK-4511638, fixed only in Java 19
        (9e9, "8.9999995E9"),
        (-1.5e10, "-1.50000005E10"),
        (123456789012.5, "1.23456791E11"),
        (1.17549435e-38, "1.17549435E-38"),
        (0.1, "0.1"),
        (1e-3, "0.001"),
        (2e-3, "0.002"),
        (1e7, "1.0E7"),
        (3.4028235e38, "3.4028235E38"),
        (1.4e-45, "1.4E-45"),
        (100.0, "100.0"),
        (1234567.0, "1234567.0"),
        (12345678.0, "1.2345678E7"),
        (1e-4, "1.0E-4"),
        (4.2e-5, "4.2E-5"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.5e300, "Infinity"),
        (float("nan"), "NaN"),
    ],
)
def test_java_17_float_to_string(x: float, java: str) -> None:
    assert java_float_str(x) == java


def test_float32_values_print_as_java_floats_in_json() -> None:
    value = Float32(to_float32(9e9))
    assert JsonConverter().from_connect_data("t", FLOAT32_SCHEMA, value).endswith(b'"payload":8.9999995E9}')
    # schemaless, as Jackson writes a FloatNode
    assert dumps_schemaless([value, Float32(to_float32(0.1)), 0.5]) == b"[8.9999995E9,0.1,0.5]"


def _bits(f: float) -> int:
    return struct.unpack("<I", struct.pack("<f", f))[0]


@pytest.mark.parametrize(
    "text, java_bits",
    [
        ("0.1", 0x3DCCCCCD),
        ("123456789012.5", 0x51E5F4C9),
        # exactly halfway between two floats once rounded to a double: the exact decimal decides
        ("1.00000005960464477539062500000001", 0x3F800001),
        ("1.000000059604644775390625", 0x3F800000),
        ("3.4028235677973366e38", 0x7F7FFFFF),
        ("3.4028235677973367e38", 0x7F800000),
        ("1e-46", 0x00000000),
    ],
)
def test_big_decimal_float_value(text: str, java_bits: int) -> None:
    assert _bits(decimal_to_float32(decimal.Decimal(text))) == java_bits


def test_java_casts() -> None:
    assert to_float32(1e39) == float("inf")
    assert wrap_int(128, 8) == -128
    assert wrap_int(2**31, 32) == -(2**31)
