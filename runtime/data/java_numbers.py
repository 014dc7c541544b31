"""Java's float (float32) arithmetic and the text of floats and doubles, where the reference's output depends
on it (the JSON converter's output, Cast to string, header values, offsets in messages).

- `Float32`: a Python float holding a value Java holds as a `float`, so that a schemaless JSON writer prints
  it as Jackson prints a FloatNode (`Float.toString`), not as a double.
- `to_float32`: Java's `(float) d` cast; `decimal_to_float32`: `BigDecimal.floatValue()` (correctly rounded
  from the exact decimal, not through a double).
- `java_float_str`: Java 17's `Float.toString`. Up to Java 18 it is FloatingDecimal's digit generation, which
  is not always the shortest text that reads back (JDK-4511638, fixed in 19): `(float) 9e9` prints
  `8.9999995E9`. The reference runs on Java 17, so its algorithm is reproduced here, step for step.
- `java_double_str`: `Double.toString`, from Python's shortest round-trip digits laid out in Java's notation.
"""

from __future__ import annotations

import decimal
import math
import struct
from fractions import Fraction

_FLOAT_MAX_HALF_ULP_ABOVE = 3.4028235677973366e38  # (2 - 2**-24) * 2**127: from here a float rounds to infinity


class Float32(float):
    """A float that is a Java `float` (see the module docstring)."""

    __slots__ = ()


def to_float32(x: float) -> float:
    """Java's `(float) x` for a double `x`, as a Python float."""
    if x != x or math.isinf(x):
        return x
    if abs(x) >= _FLOAT_MAX_HALF_ULP_ABOVE:
        return math.copysign(math.inf, x)
    return struct.unpack("f", struct.pack("f", x))[0]


def decimal_to_float32(number: decimal.Decimal | float) -> float:
    """`BigDecimal.floatValue()`: the float nearest the exact decimal (ties to even)."""
    if isinstance(number, float):
        return to_float32(number)
    double = float(number)  # correctly rounded to a double
    single = to_float32(double)
    if abs(double) == _FLOAT_MAX_HALF_ULP_ABOVE and abs(Fraction(number)) < Fraction(_FLOAT_MAX_HALF_ULP_ABOVE):
        return math.copysign(3.4028234663852886e38, double)  # below the halfway point to infinity after all
    if math.isinf(single) or single == double:
        return single
    # Rounding twice (decimal -> double -> float) only errs when the double lies exactly halfway between two
    # floats: then the exact decimal says which way to go.
    other = _next_float32(single, double - single)
    if math.isinf(other):
        return single
    if Fraction(single) + Fraction(other) != 2 * Fraction(double):
        return single
    exact, wanted = Fraction(double), Fraction(number)
    if wanted == exact:
        return single  # a true tie: the cast already rounded to even
    return max(single, other) if wanted > exact else min(single, other)


def _next_float32(x: float, direction: float) -> float:
    bits = struct.unpack("<i", struct.pack("<f", x))[0]
    step = 1 if (direction > 0) == (x >= 0) else -1
    if x == 0:
        return math.copysign(struct.unpack("<f", struct.pack("<i", 1))[0], direction)
    return struct.unpack("<f", struct.pack("<i", bits + step))[0]


def wrap_int(value: int, bits: int) -> int:
    """Java's narrowing of an integer to `bits` bits (two's complement wrap-around)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


# ---- Float.toString, Java 17 (FloatingDecimal.BinaryToASCIIBuffer) ------------------------------------------

_EXP_SHIFT = 52
_MAX_SMALL_BIN_EXP, _MIN_SMALL_BIN_EXP = 62, -(63 // 3)
# ceil(log2(5**i)) as FloatingDecimal tabulates it
_N_5_BITS = (0, 3, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28, 31, 33, 35, 38, 40, 42, 45, 47, 49, 52, 54, 56, 59, 61)
_LONG_5_POW_COUNT = 27  # 5**0 .. 5**26 fit in a long
_INSIGNIFICANT_FOR_POW2 = (
    0,
    0,
    0,
    0,
    1,
    1,
    1,
    2,
    2,
    2,
    3,
    3,
    3,
    3,
    4,
    4,
    4,
    5,
    5,
    5,
    6,
    6,
    6,
    6,
    7,
    7,
    7,
    8,
    8,
    8,
    9,
    9,
    9,
    9,
    10,
    10,
    10,
    11,
    11,
    11,
    12,
    12,
    12,
    12,
    13,
    13,
    13,
    14,
    14,
    14,
    15,
    15,
    15,
    15,
    16,
    16,
    16,
    17,
    17,
    17,
    18,
    18,
    18,
    19,
)


def _wrap32(v: int) -> int:
    return wrap_int(v, 32)


def _wrap64(v: int) -> int:
    return wrap_int(v, 64)


def _estimate_dec_exp(fract_bits: int, bin_exp: int) -> int:
    d2 = struct.unpack("<d", struct.pack("<Q", (1023 << _EXP_SHIFT) | (fract_bits & ((1 << _EXP_SHIFT) - 1))))[0]
    d = (d2 - 1.5) * 0.289529654 + 0.176091259 + float(bin_exp) * 0.301029995663981
    return math.floor(d)


def _long_digits(lvalue: int, insignificant: int) -> tuple[str, int]:
    """developLongDigits: an integer value, rounded to drop `insignificant` low digits."""
    dec_exponent = 0
    if insignificant:
        pow10 = 10**insignificant
        lvalue, residue = divmod(lvalue, pow10)
        dec_exponent += insignificant
        if residue >= pow10 >> 1:
            lvalue += 1
    text = str(lvalue)
    return text.rstrip("0"), dec_exponent + len(text)


def _dtoa(bin_exp: int, fract_bits: int, n_significant_bits: int) -> tuple[str, int]:
    """Digits and decimal exponent (value = 0.digits * 10**exp) of FloatingDecimal's dtoa, compatible format."""
    tail_zeros = (fract_bits & -fract_bits).bit_length() - 1
    n_fract_bits = _EXP_SHIFT + 1 - tail_zeros
    n_tiny_bits = max(0, n_fract_bits - bin_exp - 1)
    if (
        _MIN_SMALL_BIN_EXP <= bin_exp <= _MAX_SMALL_BIN_EXP
        and n_tiny_bits < _LONG_5_POW_COUNT
        and n_fract_bits + _N_5_BITS[n_tiny_bits] < 64
        and n_tiny_bits == 0
    ):
        # an integer that fits a long: its digits, less those below the float's precision
        insignificant = 0
        if bin_exp > n_significant_bits:
            p2 = bin_exp - n_significant_bits - 1
            insignificant = _INSIGNIFICANT_FOR_POW2[p2] if 1 < p2 < len(_INSIGNIFICANT_FOR_POW2) else 0
        value = fract_bits << (bin_exp - _EXP_SHIFT) if bin_exp >= _EXP_SHIFT else fract_bits >> (_EXP_SHIFT - bin_exp)
        return _long_digits(value, insignificant)

    dec_exp = _estimate_dec_exp(fract_bits, bin_exp)
    b5 = max(0, -dec_exp)
    b2 = b5 + n_tiny_bits + bin_exp
    s5 = max(0, dec_exp)
    s2 = s5 + n_tiny_bits
    m5 = b5
    m2 = b2 - n_significant_bits
    fract_bits >>= tail_zeros
    b2 -= n_fract_bits - 1
    common2 = min(b2, s2)
    b2 -= common2
    s2 -= common2
    m2 -= common2
    if n_fract_bits == 1:  # FloatingDecimal's power-of-two adjustment
        m2 -= 1
    if m2 < 0:
        b2 -= m2
        s2 -= m2
        m2 = 0

    b_bits = n_fract_bits + b2 + (_N_5_BITS[b5] if b5 < len(_N_5_BITS) else b5 * 3)
    ten_s_bits = s2 + 1 + (_N_5_BITS[s5 + 1] if s5 + 1 < len(_N_5_BITS) else (s5 + 1) * 3)
    digits: list[int] = []
    if b_bits < 64 and ten_s_bits < 64:
        # int or long arithmetic, with their wrap-around, and a strict `b + m > tens`
        wrap = _wrap32 if b_bits < 32 and ten_s_bits < 32 else _wrap64
        b = wrap(wrap(fract_bits * 5**b5) << b2)
        s = wrap(5**s5 << s2)
        m = wrap(5**m5 << m2)
        tens = wrap(s * 10)
        q, b = b // s, wrap(10 * (b % s))
        m = wrap(m * 10)
        low, high = b < m, wrap(b + m) > tens
        if q == 0 and not high:
            dec_exp -= 1
        else:
            digits.append(q)
        if dec_exp < -3 or dec_exp >= 8:
            high = low = False
        while not low and not high:
            q, b = b // s, wrap(10 * (b % s))
            m = wrap(m * 10)
            if m > 0:
                low, high = b < m, wrap(b + m) > tens
            else:
                low = high = True
            digits.append(q)
        low_digit_difference = (b << 1) - tens
    else:
        # FDBigInteger arithmetic: exact, with `b + m >= tens`
        b = fract_bits * 5**b5 << b2
        s = 5**s5 << s2
        m = 5 ** (m5 + 1) << (m2 + 1)
        tens = 5 ** (s5 + 1) << (s2 + 1)
        q, b = b // s, 10 * (b % s)
        low, high = b < m, b + m >= tens
        if q == 0 and not high:
            dec_exp -= 1
        else:
            digits.append(q)
        if dec_exp < -3 or dec_exp >= 8:
            high = low = False
        while not low and not high:
            q, b = b // s, 10 * (b % s)
            m *= 10
            low, high = b < m, b + m >= tens
            digits.append(q)
        low_digit_difference = ((b << 1) > tens) - ((b << 1) < tens) if high and low else 0

    dec_exponent = dec_exp + 1
    if high and (not low or low_digit_difference > 0 or (low_digit_difference == 0 and digits[-1] & 1)):
        i = len(digits) - 1
        while digits[i] == 9 and i > 0:
            digits[i] = 0
            i -= 1
        if digits[i] == 9:  # carry out of the first digit
            dec_exponent += 1
            digits[0] = 1
        else:
            digits[i] += 1
    text = "".join(map(str, digits))
    return text, dec_exponent


def _java_layout(negative: bool, digits: str, dec_exponent: int) -> str:
    """BinaryToASCIIBuffer.getChars: value = 0.<digits> * 10**dec_exponent."""
    sign = "-" if negative else ""
    n = len(digits)
    if 0 < dec_exponent < 8:
        whole = digits[:dec_exponent]
        if len(whole) < dec_exponent:
            return f"{sign}{whole}{'0' * (dec_exponent - len(whole))}.0"
        return f"{sign}{whole}.{digits[dec_exponent:] if n > dec_exponent else '0'}"
    if -3 < dec_exponent <= 0:
        return f"{sign}0.{'0' * -dec_exponent}{digits}"
    exponent = dec_exponent - 1
    return f"{sign}{digits[0]}.{digits[1:] if n > 1 else '0'}E{exponent}"


def java_float_str(x: float) -> str:
    """Java 17's `Float.toString((float) x)`."""
    f = to_float32(x)
    if f != f:
        return "NaN"
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    bits = struct.unpack("<I", struct.pack("<f", f))[0]
    negative = bool(bits >> 31)
    fract = bits & 0x7FFFFF
    exponent = (bits >> 23) & 0xFF
    if exponent == 0:
        if fract == 0:
            return "-0.0" if negative else "0.0"
        leading_zeros = 32 - fract.bit_length()
        shift = leading_zeros - 8
        fract <<= shift
        n_significant_bits = 32 - leading_zeros
        exponent = 1 - shift
    else:
        fract |= 1 << 23
        n_significant_bits = 24
    digits, dec_exponent = _dtoa(exponent - 127, fract << 29, n_significant_bits)
    return _java_layout(negative, digits, dec_exponent)


# ---- Double.toString ----------------------------------------------------------------------------


def _shortest_digits(text: str) -> tuple[str, int]:
    """Significant digits and scientific exponent of a shortest-repr decimal string."""
    _, digit_tuple, exponent = decimal.Decimal(text).as_tuple()
    digits = "".join(map(str, digit_tuple))
    return digits.rstrip("0") or "0", len(digits) + int(exponent) - 1


def java_double_str(x: float) -> str:
    """Java's `Double.toString(x)` (shortest round-trip digits, Java's notation)."""
    if x != x:
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    digits, sci_exp = _shortest_digits(repr(abs(x)))
    return _java_layout(x < 0, digits, sci_exp + 1)  # the layout Float.toString uses too
