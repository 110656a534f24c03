"""Exact emulation of libpcp's "seconds as double" helpers, which compute in x87 long
double (64-bit significand) before rounding to double: plain Python float arithmetic
can differ from that in the last bit, which shows in "%.3f" output at rounding
boundaries and in the microseconds an interval rounds to."""
from __future__ import annotations

import ctypes
import math

from pcp._core.native import lib

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Tuple

_LD_BITS = 64 if ctypes.sizeof(ctypes.c_longdouble) > 8 else 53


def _round_ratio(num: int, den: int, bits: int = _LD_BITS) -> Tuple[int, int]:
    """num/den rounded to *bits* significant bits, ties to even.

    Returns (m, e) with the rounded value equal to m * 2**e.  Integer-only,
    so it is exact and much faster than going through Fraction.  The
    exponent range of the target format is not modelled (irrelevant for
    the magnitudes libpcp feeds through long double here).
    """
    if num == 0:
        return 0, 0
    neg = (num < 0) != (den < 0)
    num, den = abs(num), abs(den)
    # Choose e so that the integer quotient has bits+1 .. bits+3 bits.
    e = num.bit_length() - den.bit_length() - bits - 2
    if e >= 0:
        q, r = divmod(num, den << e)
    else:
        q, r = divmod(num << -e, den)
    extra = q.bit_length() - bits
    low = q & ((1 << extra) - 1)
    q >>= extra
    e += extra
    half = 1 << (extra - 1)
    if low > half or (low == half and (r or q & 1)):
        q += 1
        if q.bit_length() > bits:       # carried into a new bit: exact shift
            q >>= 1
            e += 1
    return (-q if neg else q), e


def _to_double(m: int, e: int) -> float:
    """m * 2**e rounded once to double (int->float rounds correctly and
    ldexp is exact away from the subnormal/overflow ranges)."""
    return math.ldexp(float(m), e)


def ld_divide(value: float, divisor: int) -> float:
    """(double)((long double)value / (long double)divisor)."""
    n, d = value.as_integer_ratio()
    return _to_double(*_round_ratio(n, d * divisor))


def _sub_seconds_to_real(sec: int, frac: int, per_sec: int) -> float:
    """tv_sec + (long double)frac / per_sec, returned as a C double."""
    # The C code divides in long double, adds the integral seconds in long
    # double and finally narrows to double: three roundings, reproduced here.
    m, e = _round_ratio(frac, per_sec)
    if e >= 0:
        total, den = (sec + (m << e)), 1
    else:
        total, den = ((sec << -e) + m), 1 << -e
    return _to_double(*_round_ratio(total, den))


def timeval_to_real(sec: int, usec: int) -> float:
    """Equivalent of libpcp pmtimevalToReal()."""
    if usec == 0 and -(1 << 53) <= sec <= (1 << 53):
        return float(sec)  # exact: no rounding step can change anything
    return _sub_seconds_to_real(sec, usec, 1000000)


def timespec_to_real(sec: int, nsec: int) -> float:
    """Equivalent of libpcp pmtimespecToReal()."""
    if nsec == 0 and -(1 << 53) <= sec <= (1 << 53):
        return float(sec)
    return _sub_seconds_to_real(sec, nsec, 1000000000)


_INT64_MIN = -(1 << 63)


def _c_long(x: float) -> int:
    """C's conversion of a double to a 64-bit integer on x86-64 (cvttsd2si): toward
    zero, and the "integer indefinite" value for NaN and what does not fit."""
    if x != x or not -9.223372036854775808e18 <= x < 9.223372036854775808e18:
        return _INT64_MIN
    return int(x)


def _scaled_fraction(secs: float, whole: int, scale: int) -> int:
    """(long)((long double)(secs - whole) * scale + 0.5): libpcp's rounding of the part
    of a second, with the long double steps (a product, a sum) reproduced."""
    diff = secs - float(whole)                          # the subtraction is in double
    if diff != diff or diff in (float("inf"), float("-inf")):
        return _INT64_MIN
    n, d = diff.as_integer_ratio()
    m, e = _round_ratio(n * scale, d)
    if e >= 0:
        num, den = ((m << e) << 1) + 1, 2
    else:
        num, den = (m << 1) + (1 << -e), 1 << (1 - e)
    m, e = _round_ratio(num, den)
    value = m << e if e >= 0 else abs(m) >> -e           # C's conversion truncates
    return value if m >= 0 else -value


def real_to_timeval(secs: float) -> Tuple[int, int]:
    """libpcp's pmtimevalFromReal: (seconds, microseconds)."""
    whole = _c_long(secs)
    return whole, _scaled_fraction(secs, whole, 1000000)


def real_to_timespec(secs: float) -> Tuple[int, int]:
    """libpcp 6.0.3's pmtimespecFromReal: (seconds, nanoseconds)."""
    whole = _c_long(secs)
    return whole, _scaled_fraction(secs, whole, 1000000000)


def ld_nanoseconds(fraction: float) -> int:
    """(int)((long double)1000000000 * (long double)fraction): the product rounded to the
    long double significand, then truncated toward zero."""
    n, d = fraction.as_integer_ratio()
    m, e = _round_ratio(n * 1000000000, d)
    value = m << e if e >= 0 else abs(m) >> -e
    return value if e >= 0 or m >= 0 else -value


# Where the C compiler's long double is the x87 one emulated here, libpcp's expression is
# simply computed in C (csrc/longdouble.c), with the same result at a tenth of the cost
_C_LONG_DOUBLE = lib.pcp_ld_mant_dig() == _LD_BITS == 64


def ld_timestamp_sub(a: Tuple[int, int], b: Tuple[int, int]) -> float:
    """libpcp's __pmTimestampSub: (double)(sec difference + (long double)nsec difference
    / 1e9), the quotient and the sum each rounded to the long double significand."""
    if _C_LONG_DOUBLE:
        try:
            return lib.pcp_ld_timestamp_sub(a[0], a[1], b[0], b[1])
        except (OverflowError, TypeError):     # beyond int64, or not ints: the exact way
            pass
    return _ld_timestamp_sub(a, b)


def _ld_timestamp_sub(a: Tuple[int, int], b: Tuple[int, int]) -> float:
    """ld_timestamp_sub in integers: exact for any operands, on any build."""
    sec = a[0] - b[0]
    dn = a[1] - b[1]
    if dn == 0:
        return float(sec)
    qm, qe = _round_ratio(dn, 1000000000)
    if qe >= 0:
        num, den = sec + (qm << qe), 1
    else:
        num, den = (sec << -qe) + qm, 1 << -qe
    return _to_double(*_round_ratio(num, den))
