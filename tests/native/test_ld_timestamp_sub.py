"""csrc/longdouble.c's pcp_ld_timestamp_sub (libpcp's __pmTimestampSub in long double)
against pcp/_core/longdouble.py's integer emulation of it, which the archive tests
compare with libpcp: the same double for every pair of int64 timestamps, the extremes
included, and ld_timestamp_sub falling back to the emulation beyond int64."""
import random

import pytest

from pcp._core import longdouble
from pcp._native import lib

INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)


def _pairs():
    rng = random.Random(34)
    for _ in range(20000):
        base = rng.randrange(0, 1 << 31)
        yield ((base + rng.randrange(-5, 100000), rng.randrange(-(1 << 31), 1 << 31)),
               (base, rng.randrange(0, 10 ** 9)))
        yield ((rng.randrange(INT64_MIN, INT64_MAX), rng.randrange(INT64_MIN, INT64_MAX)),
               (rng.randrange(INT64_MIN, INT64_MAX), rng.randrange(INT64_MIN, INT64_MAX)))
        yield ((rng.randrange(-3, 3), rng.randrange(-3, 3)),
               (rng.randrange(-3, 3), rng.randrange(-3, 3)))
    for a in (INT64_MIN, -1, 0, 1, INT64_MAX):
        for b in (INT64_MIN, -1, 0, 1, INT64_MAX):
            yield (a, b), (b, a)
            yield (a, 999999999), (b, -999999999)


@pytest.mark.skipif(lib.pcp_ld_mant_dig() != 64,
                    reason="the emulation is of x87 long double (a 64-bit significand)")
def test_as_the_integer_emulation():
    for a, b in _pairs():
        assert lib.pcp_ld_timestamp_sub(a[0], a[1], b[0], b[1]) \
            == longdouble._ld_timestamp_sub(a, b), (a, b)


def test_beyond_int64_the_emulation_answers():
    a, b = (1 << 70, 5), (3, 1 << 65)
    assert longdouble.ld_timestamp_sub(a, b) == longdouble._ld_timestamp_sub(a, b)
    assert longdouble.ld_timestamp_sub((1514772613, 123456789), (1514772611, 987654321)) \
        == longdouble._ld_timestamp_sub((1514772613, 123456789), (1514772611, 987654321))
