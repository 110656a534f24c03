"""printf_g, the %*.*g of pmPrintValue's numbers, against the C library's own snprintf:
Python's % drops a negative NaN's sign, which C writes ("-nan")."""
from __future__ import annotations

import ctypes
import math
import struct

import pytest

from pcp._libpcp.printvalue import printf_g

NEGATIVE_NAN = struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000000))[0]
VALUES = [NEGATIVE_NAN, math.nan, math.inf, -math.inf, 0.0, -0.0, 1.5e-315, 12345.678901,
          -2.5, 1e300]


@pytest.mark.parametrize("digits,width", [(8, 1), (16, 1), (16, 24)])
def test_printf_g_is_snprintf(digits, width):
    libc = ctypes.CDLL(None)
    buf = ctypes.create_string_buffer(64)
    assert math.copysign(1.0, NEGATIVE_NAN) < 0
    for x in VALUES:
        libc.snprintf(buf, 64, b"%*.*g", ctypes.c_int(width), ctypes.c_int(digits),
                      ctypes.c_double(x))
        assert printf_g(x, digits, width) == buf.value.decode(), x
