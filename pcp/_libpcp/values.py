"""Value conversion with libpcp 6.0.3 semantics: pmExtractValue and pmConvScale.

This module reproduces, result for result and error for error, what libpcp
does in pmExtractValue and pmConvScale, as seen through the official Python
binding (the text forms are in pcp._libpcp.strings, units in pcp._core.units).  Where the
C code relies on behaviour that C leaves undefined (float->int conversion of
NaN or out-of-range values, signed overflow) we reproduce what the x86-64
gcc build of libpcp actually does, verified against the reference binding.

Conventions for values that arrive off the wire (see extract_value):
numbers inside value blocks are big-endian, strings keep their NUL.
"""

from __future__ import annotations

import ctypes
import struct
from ctypes import addressof, create_string_buffer
from typing import Tuple, Union

from pcp._core.constants import (PM_ERR_CONV, PM_ERR_SIGN, PM_ERR_TRUNC, PM_ERR_UNIT, PM_SPACE_BYTE,
                                 PM_SPACE_EBYTE, PM_SPACE_GBYTE, PM_SPACE_KBYTE, PM_SPACE_MBYTE,
                                 PM_SPACE_PBYTE, PM_SPACE_TBYTE, PM_TIME_HOUR, PM_TIME_MIN,
                                 PM_TIME_MSEC, PM_TIME_NSEC, PM_TIME_SEC, PM_TIME_USEC, PM_TYPE_32,
                                 PM_TYPE_64, PM_TYPE_AGGREGATE, PM_TYPE_DOUBLE, PM_TYPE_FLOAT,
                                 PM_TYPE_STRING, PM_TYPE_U32, PM_TYPE_U64, PM_TYPE_UNKNOWN,
                                 PM_VAL_DPTR, PM_VAL_HDR_SIZE, PM_VAL_INSITU, PM_VAL_SPTR)
from pcp._core.errors import pmErr
from pcp._core.structs import pmAtomValue, pmUnits
from pcp._core.units import unit_fields

_M32 = 0xFFFFFFFF
_M64 = 0xFFFFFFFFFFFFFFFF
_I32_MIN = -(1 << 31)
_I64_MIN = -(1 << 63)
_TWO31 = float(1 << 31)
_TWO32 = float(1 << 32)
_TWO63 = float(1 << 63)
_TWO64 = float(1 << 64)

_BE_F32 = struct.Struct(">f")
_BE_I64 = struct.Struct(">q")
_BE_U64 = struct.Struct(">Q")
_BE_F64 = struct.Struct(">d")
# Host-order decoders, for value blocks that already live in memory the way
# libpcp keeps them (e.g. pmValue structures built by callers with ctypes).
_HOST = {k: struct.Struct("=" + k) for k in "qQdf"}
_WIRE = {"q": _BE_I64, "Q": _BE_U64, "d": _BE_F64, "f": _BE_F32}
_NATIVE_U32 = struct.Struct("=I")
_NATIVE_I32 = struct.Struct("=i")


# ---------------------------------------------------------------------------
# C arithmetic helpers

def _s32(x: int) -> int:
    """Wrap to int32 (C conversion to a signed 32-bit type on gcc)."""
    x &= _M32
    return x - (1 << 32) if x & 0x80000000 else x


def _s64(x: int) -> int:
    """Wrap to int64 (two's complement overflow as the hardware does it)."""
    x &= _M64
    return x - (1 << 64) if x & 0x8000000000000000 else x


def _cdiv(a: int, b: int) -> int:
    """C integer division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _cmod(a: int, b: int) -> int:
    """C remainder: has the sign of the dividend."""
    return a - b * _cdiv(a, b)


def _f32(x: float) -> float:
    """Round a double to the nearest float32 ((float) cast; overflow -> inf)."""
    return ctypes.c_float(x).value


def _int_to_f32(n: int) -> float:
    """(float) of an integer, rounded once (cvtsi2ss), ties to even.

    float(n) followed by a float32 rounding would round twice and can be off
    by one float ulp for 64-bit inputs.
    """
    a = -n if n < 0 else n
    if a < (1 << 24):
        return float(n)
    shift = a.bit_length() - 24
    m = a >> shift
    rem = a - (m << shift)
    half = 1 << (shift - 1)
    if rem > half or (rem == half and m & 1):
        m += 1
    r = float(m << shift)
    return -r if n < 0 else r


# Conversions of floating point values to integers, including the values C
# leaves undefined; results are those of the gcc x86-64 build of libpcp.

def _to_i32(x: float) -> int:
    if x != x:
        return _I32_MIN         # cvttsd2si "integer indefinite"
    return int(x)


def _to_u32(x: float) -> int:
    if x != x:
        return 0                # 64-bit cvttsd2si, low half of 0x80..00
    return int(x) & _M32


def _to_i64(x: float) -> int:
    if x != x or x < -_TWO63:
        return _I64_MIN
    return int(x)


def _to_u64(x: float) -> int:
    if x != x:
        return 1 << 63
    return int(x) & _M64


# ---------------------------------------------------------------------------
# pmExtractValue

def _float_src(fsrc: float, outtype: int, out: pmAtomValue) -> int:
    """Conversions from a (float32 valued) FLOAT source; returns status."""
    if outtype == PM_TYPE_32:
        if abs(fsrc) >= _TWO31:             # (float)0x7fffffff == 2**31
            return PM_ERR_TRUNC
        out.l = _to_i32(fsrc)
    elif outtype == PM_TYPE_U32:
        if fsrc >= _TWO32:                  # (float)0xffffffff == 2**32
            return PM_ERR_TRUNC
        if fsrc < 0:
            return PM_ERR_SIGN
        out.ul = _to_u32(fsrc)
    elif outtype == PM_TYPE_64:
        if fsrc >= _TWO63:
            return PM_ERR_TRUNC
        out.ll = _to_i64(fsrc)
    elif outtype == PM_TYPE_U64:
        if fsrc >= _TWO64:
            return PM_ERR_TRUNC
        if fsrc < 0:
            return PM_ERR_SIGN
        out.ull = _to_u64(fsrc)
    elif outtype == PM_TYPE_FLOAT:
        out.f = fsrc
    elif outtype == PM_TYPE_DOUBLE:
        out.d = fsrc
    else:
        return PM_ERR_CONV
    return 0


def _double_src(dsrc: float, outtype: int, out: pmAtomValue) -> int:
    """Conversions from a DOUBLE source; note the 32-bit limit is 2**31-1."""
    if outtype == PM_TYPE_32:
        if abs(dsrc) >= 2147483647.0:
            return PM_ERR_TRUNC
        out.l = _to_i32(dsrc)
    elif outtype == PM_TYPE_U32:
        if dsrc >= 4294967295.0:
            return PM_ERR_TRUNC
        if dsrc < 0:
            return PM_ERR_SIGN
        out.ul = _to_u32(dsrc)
    elif outtype == PM_TYPE_64:
        if dsrc >= _TWO63:
            return PM_ERR_TRUNC
        out.ll = _to_i64(dsrc)
    elif outtype == PM_TYPE_U64:
        if dsrc >= _TWO64:
            return PM_ERR_TRUNC
        if dsrc < 0:
            return PM_ERR_SIGN
        out.ull = _to_u64(dsrc)
    elif outtype == PM_TYPE_FLOAT:
        out.f = dsrc                        # ctypes does the (float) cast
    elif outtype == PM_TYPE_DOUBLE:
        out.d = dsrc
    else:
        return PM_ERR_CONV
    return 0


def _signed_src(src: int, outtype: int, out: pmAtomValue, is32: bool) -> int:
    """Conversions from a signed integer source (PM_TYPE_32 or PM_TYPE_64)."""
    if outtype == PM_TYPE_32:
        if src > 0x7FFFFFFF:
            return PM_ERR_TRUNC
        # Only the upper bound is checked: large negative 64-bit values are
        # silently wrapped to 32 bits by libpcp (e.g. -2**63 -> 0).
        out.l = _s32(src)
    elif outtype == PM_TYPE_U32:
        if not is32 and src > _M32:
            return PM_ERR_TRUNC
        if src < 0:
            return PM_ERR_SIGN
        out.ul = src
    elif outtype == PM_TYPE_64:
        out.ll = src
    elif outtype == PM_TYPE_U64:
        if src < 0:
            return PM_ERR_SIGN
        out.ull = src
    elif outtype == PM_TYPE_FLOAT:
        out.f = _int_to_f32(src)
    elif outtype == PM_TYPE_DOUBLE:
        out.d = float(src)                  # int -> double is rounded once
    else:
        return PM_ERR_CONV
    return 0


def _unsigned_src(usrc: int, outtype: int, out: pmAtomValue) -> int:
    """Conversions from an unsigned integer source (U32 or U64)."""
    if outtype == PM_TYPE_32:
        if usrc > 0x7FFFFFFF:
            return PM_ERR_TRUNC
        out.l = usrc
    elif outtype == PM_TYPE_U32:
        if usrc > _M32:
            return PM_ERR_TRUNC
        out.ul = usrc
    elif outtype == PM_TYPE_64:
        if usrc > 0x7FFFFFFFFFFFFFFF:
            return PM_ERR_TRUNC
        out.ll = usrc
    elif outtype == PM_TYPE_U64:
        out.ull = usrc
    elif outtype == PM_TYPE_FLOAT:
        out.f = _int_to_f32(usrc)
    elif outtype == PM_TYPE_DOUBLE:
        out.d = float(usrc)
    else:
        return PM_ERR_CONV
    return 0


def _native_block(vtype: int, payload: bytes) -> ctypes.Array:
    """A pmValueBlock as libpcp keeps it in memory (host-order header)."""
    vlen = (PM_VAL_HDR_SIZE + len(payload)) & 0xFFFFFF
    # vtype is the top byte of the host-order word on either byte order
    # (the C declaration order flips with endianness to achieve that).
    hdr = ((vtype & 0xFF) << 24) | vlen
    raw = _NATIVE_U32.pack(hdr) + payload
    # At least 8 bytes so that the pmValueBlock ctypes view (which declares
    # one byte of vbuf) never reads past the end.
    return create_string_buffer(raw, max(len(raw), 8))


def extract_value(valfmt: int, intype: int, outtype: int, word: int = 0,
                  vtype: int = 0, payload: bytes = b"", *,
                  host_order: bool = False) -> pmAtomValue:
    """Convert one metric value like libpcp's pmExtractValue.

    valfmt   PM_VAL_INSITU, PM_VAL_DPTR or PM_VAL_SPTR (others: PM_ERR_CONV)
    intype   the metric's type (pmDesc.type)
    outtype  the requested PM_TYPE_*
    word     INSITU only: the 32-bit value word (any int, low 32 bits used)
    vtype    DPTR/SPTR only: the value block's type byte (0 is accepted as
             "same as intype" by libpcp)
    payload  DPTR/SPTR only: the value block payload, exactly vlen-4 bytes
             as on the wire (big-endian numbers, strings with their NUL,
             aggregates raw)
    host_order  keyword-only: numbers in *payload* are in host byte order
             (a value block read out of memory, as libpcp would hold it)
             instead of wire (big-endian) order

    Returns a pmAtomValue, or raises pmErr(PM_ERR_CONV/TRUNC/SIGN).

    Strings are returned in ``.cp`` (bytes; ``dref`` decodes).  Aggregates
    (only AGGREGATE -> AGGREGATE converts) carry the payload bytes in the
    extra attribute ``aggregate``; ``vp`` points at a private copy of the
    whole value block in host layout (kept alive by the atom), so code that
    casts ``vp`` to POINTER(pmValueBlock) sees what it would with libpcp.
    """
    out = pmAtomValue()
    sts = 0
    if valfmt == PM_VAL_INSITU:
        if intype == PM_TYPE_32 or intype == PM_TYPE_UNKNOWN:
            sts = _signed_src(_s32(word), outtype, out, True)
        elif intype == PM_TYPE_U32:
            sts = _unsigned_src(word & _M32, outtype, out)
        elif intype == PM_TYPE_FLOAT:
            # Legacy encoding: the float's bits travel in the value word.
            fsrc = struct.unpack("=f", _NATIVE_U32.pack(word & _M32))[0]
            sts = _float_src(fsrc, outtype, out)
        else:
            sts = PM_ERR_CONV
    elif valfmt == PM_VAL_DPTR or valfmt == PM_VAL_SPTR:
        n = len(payload)
        dec = _HOST if host_order else _WIRE
        if intype == PM_TYPE_64:
            if n != 8 or (vtype != PM_TYPE_64 and vtype != 0):
                sts = PM_ERR_CONV
            else:
                sts = _signed_src(dec["q"].unpack(payload)[0], outtype, out,
                                  False)
        elif intype == PM_TYPE_U64:
            if n != 8 or (vtype != PM_TYPE_U64 and vtype != 0):
                sts = PM_ERR_CONV
            else:
                sts = _unsigned_src(dec["Q"].unpack(payload)[0], outtype, out)
        elif intype == PM_TYPE_DOUBLE:
            if n != 8 or (vtype != PM_TYPE_DOUBLE and vtype != 0):
                sts = PM_ERR_CONV
            else:
                sts = _double_src(dec["d"].unpack(payload)[0], outtype, out)
        elif intype == PM_TYPE_FLOAT:
            if n != 4 or (vtype != PM_TYPE_FLOAT and vtype != 0):
                sts = PM_ERR_CONV
            else:
                sts = _float_src(dec["f"].unpack(payload)[0], outtype, out)
        elif intype == PM_TYPE_STRING:
            if (vtype != PM_TYPE_STRING and vtype != 0) \
                    or outtype != PM_TYPE_STRING:
                sts = PM_ERR_CONV
            else:
                # libpcp copies vlen-4 bytes and appends a NUL; the C string
                # ends at the first NUL, which c_char_p reproduces on read.
                out.cp = bytes(payload)
        elif intype == PM_TYPE_AGGREGATE:
            if (vtype != PM_TYPE_AGGREGATE and vtype != 0) \
                    or outtype != PM_TYPE_AGGREGATE:
                sts = PM_ERR_CONV
            else:
                block = _native_block(vtype, bytes(payload))
                out.vp = addressof(block)
                out._vblock = block
                out.aggregate = bytes(payload)
        else:
            # 32/U32 never travel in value blocks; events, static
            # aggregates, UNKNOWN and junk are not convertible.
            sts = PM_ERR_CONV
    else:
        sts = PM_ERR_CONV
    if sts < 0:
        raise pmErr(sts)
    return out


def pmExtractValue(valfmt: int, intype: int, outtype: int, word: int = 0,
                   vtype: int = 0, payload: bytes = b"", *,
                   host_order: bool = False) -> pmAtomValue:
    """Alias of :func:`extract_value` under the libpcp name."""
    return extract_value(valfmt, intype, outtype, word, vtype, payload,
                         host_order=host_order)


# Factors relative to the canonical Mbyte / second used by libpcp: each scale
# maps to (divide, multiply) when converting *from* it.
_SPACE_FACTORS = {
    PM_SPACE_BYTE: (1024 * 1024, 1),
    PM_SPACE_KBYTE: (1024, 1),
    PM_SPACE_MBYTE: (1, 1),
    PM_SPACE_GBYTE: (1, 1024),
    PM_SPACE_TBYTE: (1, 1024 ** 2),
    PM_SPACE_PBYTE: (1, 1024 ** 3),
    PM_SPACE_EBYTE: (1, 1024 ** 4),
}
_TIME_FACTORS = {
    PM_TIME_NSEC: (1000000000, 1),
    PM_TIME_USEC: (1000000, 1),
    PM_TIME_MSEC: (1000, 1),
    PM_TIME_SEC: (1, 1),
    PM_TIME_MIN: (1, 60),
    PM_TIME_HOUR: (1, 3600),
}


def _accumulate(dim: int, d: int, m: int, div: int, mult: int) -> Tuple[int, int]:
    """Raise the per-dimension factors to |dim|, wrapping like int64."""
    if dim > 0:
        for _ in range(dim):
            div = _s64(div * d)
            mult = _s64(mult * m)
    else:
        for _ in range(-dim):
            mult = _s64(mult * d)
            div = _s64(div * m)
    return div, mult


def scale_factors(inunits: Union[pmUnits, int],
                  outunits: Union[pmUnits, int]) -> Tuple[int, int]:
    """(mult, div) that pmConvScale applies, or pmErr(CONV/UNIT).

    Factors are products in wrapping int64 arithmetic, as in libpcp; *div*
    can wrap to 0 for absurd units (libpcp then dies with SIGFPE).
    """
    ids, idt, idc, iss, ist, isc = unit_fields(inunits)
    ods, odt, odc, oss, ost, osc = unit_fields(outunits)
    # Dimensionless units are treated as "count" (with their count scale).
    if ids == 0 and idt == 0 and idc == 0:
        idc = 1
    if ods == 0 and odt == 0 and odc == 0:
        odc = 1
    if ids != ods or idt != odt or idc != odc:
        raise pmErr(PM_ERR_CONV)

    div = mult = 1
    if ids:
        if iss not in _SPACE_FACTORS or oss not in _SPACE_FACTORS:
            raise pmErr(PM_ERR_UNIT)
        d, m = _SPACE_FACTORS[iss]
        od, om = _SPACE_FACTORS[oss]
        # converting *to* a scale swaps the roles of its factors
        d, m = d * om, m * od
        div, mult = _accumulate(ids, d, m, div, mult)
    if idt:
        if ist not in _TIME_FACTORS or ost not in _TIME_FACTORS:
            raise pmErr(PM_ERR_UNIT)
        d, m = _TIME_FACTORS[ist]
        od, om = _TIME_FACTORS[ost]
        d, m = d * om, m * od
        div, mult = _accumulate(idt, d, m, div, mult)
    if idc or (ids == 0 and idt == 0):
        d = m = 1
        if isc < 0:
            d *= 10 ** (-isc)
        elif isc > 0:
            m *= 10 ** isc
        if osc < 0:
            m *= 10 ** (-osc)
        elif osc > 0:
            d *= 10 ** osc
        if idc:
            div, mult = _accumulate(idc, d, m, div, mult)
        else:
            mult, div = m, d
    return mult, div


def conv_scale(intype: int, inatom: pmAtomValue, inunits: Union[pmUnits, int],
               outunits: Union[pmUnits, int]) -> pmAtomValue:
    """Rescale a value like libpcp's pmConvScale.

    Errors: PM_ERR_CONV when dimensions differ or the type is not numeric,
    PM_ERR_UNIT for space scales above Ebyte or time scales above hour
    (unit errors are reported before type errors, as in libpcp).
    Integer results use libpcp's "add half the divisor, then truncate"
    rounding (so negative values round toward +inf at .5), with 64-bit
    wrap-around on overflow.
    """
    mult, div = scale_factors(inunits, outunits)
    if div == 0:
        # The C code would die of SIGFPE here (the factors wrapped to 0 in
        # 64 bits); refusing the conversion is the only sane equivalent.
        raise pmErr(PM_ERR_CONV)
    if _cmod(mult, div) == 0:
        mult = _s64(_cdiv(mult, div))
        div = 1

    out = pmAtomValue()
    half = _cdiv(div, 2)
    if intype == PM_TYPE_32:
        out.l = _s32(_cdiv(_s64(_s64(inatom.l * mult) + half), div))
    elif intype == PM_TYPE_U32:
        # uint32 promotes to int64, so the arithmetic is signed 64-bit
        out.ul = _cdiv(_s64(_s64(inatom.ul * mult) + half), div) & _M32
    elif intype == PM_TYPE_64:
        out.ll = _cdiv(_s64(_s64(inatom.ll * mult) + half), div)
    elif intype == PM_TYPE_U64:
        # int64 factors convert to uint64: all arithmetic modulo 2**64
        out.ull = (((inatom.ull * (mult & _M64)) + (half & _M64)) & _M64) \
            // (div & _M64)
    elif intype == PM_TYPE_FLOAT:
        factor = _f32(_int_to_f32(mult) / _int_to_f32(div))
        out.f = inatom.f * factor
    elif intype == PM_TYPE_DOUBLE:
        out.d = inatom.d * (float(mult) / float(div))
    else:
        raise pmErr(PM_ERR_CONV)
    return out


def pmConvScale(intype: int, inatom: pmAtomValue, inunits: Union[pmUnits, int],
                outunits: Union[pmUnits, int]) -> pmAtomValue:
    """pmConvScale with explicit input units.

    As in the reference wrapper, an int *outunits* means "space dimension 1
    with this scaleSpace"; pass a pmUnits for anything else.
    """
    if isinstance(outunits, int):
        outunits = pmUnits(1, 0, 0, outunits, 0, 0)
    return conv_scale(intype, inatom, inunits, outunits)
