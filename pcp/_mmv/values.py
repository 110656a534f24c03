"""libpcp_mmv's value updates, exactly: the arithmetic of mmv_inc_value, mmv_set_value
and mmv_set_string on one mmv_disk_value_t of a mapped file.

The public methods store straight into typed memoryviews for the common case (an
integer that a double holds exactly, a double, a float); whatever that fast store cannot
do the same way (a wrap-around, a fraction stored into an integer, an elapsed-time value,
a number a double rounds) comes here. libpcp_mmv takes every number as a C double and
casts it to the value's type; the casts are x86-64's (cvttsd2si), which is what the C
compiler emits for them: a double outside the target's range (or NaN) becomes the
"integer indefinite" 0x80000000 / 0x8000000000000000.
"""
from __future__ import annotations

import ctypes
import math
import struct
from typing import Any

from pcp._core.constants import (
    MMV_STRINGMAX, MMV_TYPE_DOUBLE, MMV_TYPE_ELAPSED, MMV_TYPE_FLOAT, MMV_TYPE_I32,
    MMV_TYPE_I64, MMV_TYPE_STRING, MMV_TYPE_U32, MMV_TYPE_U64,
)

_I64 = struct.Struct("<q")
_U64 = struct.Struct("<Q")
_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")

_TWO_63 = 9223372036854775808.0
_INDEFINITE_64 = -(1 << 63)


def _cvttsd2si64(value: float) -> int:
    """(int64_t)double on x86-64: truncation, or the integer indefinite."""
    if math.isnan(value) or value >= _TWO_63 or value < -_TWO_63:
        return _INDEFINITE_64
    return int(value)


def to_int32(value: float) -> int:
    """(__int32_t)double: the 32-bit cvttsd2si."""
    if math.isnan(value) or value >= 2147483648.0 or value <= -2147483649.0:
        return -(1 << 31)
    return int(value)


def to_uint32(value: float) -> int:
    """(__uint32_t)double: a 64-bit cvttsd2si, of which the low 32 bits are kept."""
    return _cvttsd2si64(value) & 0xFFFFFFFF


def to_int64(value: float) -> int:
    """(__int64_t)double."""
    return _cvttsd2si64(value)


def to_uint64(value: float) -> int:
    """(__uint64_t)double: below 2**63 a signed conversion, above it the conversion of
    value - 2**63 with the top bit flipped (NaN takes the first branch)."""
    if not value >= _TWO_63:
        return _cvttsd2si64(value) & 0xFFFFFFFFFFFFFFFF
    return (_cvttsd2si64(value - _TWO_63) ^ (1 << 63)) & 0xFFFFFFFFFFFFFFFF


def to_float(value: float) -> float:
    """(float)double: rounded to single precision (infinity beyond its range)."""
    return ctypes.c_float(value).value


def as_double(value: Any, position: int) -> float:
    """A number as ctypes passes it for a c_double argument; its ArgumentError else."""
    try:
        ctypes.c_double.from_param(value)
    except Exception as exc:    # noqa: BLE001 - ctypes' own wording, any exception type
        raise ctypes.ArgumentError("argument %d: %s: %s"
                                   % (position, type(exc).__name__, exc)) from None
    if isinstance(value, ctypes.c_double):
        return value.value
    return float(value)


def add(buf: Any, offset: int, kind: int, inc: float) -> None:
    """mmv_inc_value(addr, value at ``offset``, inc) on the mapped buffer."""
    if kind == MMV_TYPE_I32:
        old = _I32.unpack_from(buf, offset)[0]
        _U32.pack_into(buf, offset, (old + to_int32(inc)) & 0xFFFFFFFF)
    elif kind == MMV_TYPE_U32:
        old = _U32.unpack_from(buf, offset)[0]
        _U32.pack_into(buf, offset, (old + to_uint32(inc)) & 0xFFFFFFFF)
    elif kind == MMV_TYPE_I64:
        old = _I64.unpack_from(buf, offset)[0]
        _U64.pack_into(buf, offset, (old + to_int64(inc)) & 0xFFFFFFFFFFFFFFFF)
    elif kind == MMV_TYPE_U64:
        old = _U64.unpack_from(buf, offset)[0]
        _U64.pack_into(buf, offset, (old + to_uint64(inc)) & 0xFFFFFFFFFFFFFFFF)
    elif kind == MMV_TYPE_FLOAT:
        # a single-precision addition: the double sum of two floats, rounded once to
        # float, is that sum (53 bits are enough for it to be correctly rounded)
        old = _F32.unpack_from(buf, offset)[0]
        _F32.pack_into(buf, offset, to_float(old + to_float(inc)))
    elif kind == MMV_TYPE_DOUBLE:
        old = _F64.unpack_from(buf, offset)[0]
        _F64.pack_into(buf, offset, old + inc)
    elif kind == MMV_TYPE_ELAPSED:
        # a negative increment is an interval's start (minus "now"), kept aside in
        # "extra" until the positive one that ends it
        extra_at = offset + 8
        if inc < 0:
            _U64.pack_into(buf, extra_at, to_int64(inc) & 0xFFFFFFFFFFFFFFFF)
        else:
            old = _I64.unpack_from(buf, offset)[0]
            extra = _I64.unpack_from(buf, extra_at)[0]
            _U64.pack_into(buf, offset, (old + extra + to_int64(inc)) & 0xFFFFFFFFFFFFFFFF)
            _U64.pack_into(buf, extra_at, 0)


def set_value(buf: Any, offset: int, kind: int, value: float) -> None:
    """mmv_set_value(addr, value at ``offset``, value)."""
    if kind == MMV_TYPE_I32:
        _I32.pack_into(buf, offset, to_int32(value))
    elif kind == MMV_TYPE_U32:
        _U32.pack_into(buf, offset, to_uint32(value))
    elif kind == MMV_TYPE_I64:
        _I64.pack_into(buf, offset, to_int64(value))
    elif kind == MMV_TYPE_U64:
        _U64.pack_into(buf, offset, to_uint64(value))
    elif kind == MMV_TYPE_FLOAT:
        _F32.pack_into(buf, offset, to_float(value))
    elif kind == MMV_TYPE_DOUBLE:
        _F64.pack_into(buf, offset, value)
    elif kind == MMV_TYPE_ELAPSED:
        _I64.pack_into(buf, offset, to_int64(value))
        _U64.pack_into(buf, offset + 8, 0)


def set_string(buf: Any, offset: int, kind: int, string_offset: int, text: bytes,
               size: int) -> None:
    """mmv_set_string: a string value's slot cleared, then ``size`` bytes of ``text``
    (up to its first NUL) and a NUL; the value word's low half keeps the size."""
    if kind != MMV_TYPE_STRING or not 0 <= size < MMV_STRINGMAX - 1:
        return
    payload = text[:size].split(b"\0", 1)[0]
    buf[string_offset:string_offset + MMV_STRINGMAX] = bytes(MMV_STRINGMAX)
    buf[string_offset:string_offset + len(payload)] = payload
    _I32.pack_into(buf, offset, size)
