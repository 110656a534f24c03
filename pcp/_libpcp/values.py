"""Pure-Python value conversion and formatting with libpcp 6.0.3 semantics.

This module reproduces, result for result and error for error, what libpcp
does in pmExtractValue, pmConvScale, pmParseUnitsStr and the pm*Str
formatting helpers, as seen through the official Python binding.  Where the
C code relies on behaviour that C leaves undefined (float->int conversion of
NaN or out-of-range values, signed overflow) we reproduce what the x86-64
gcc build of libpcp actually does, verified against the reference binding.

Conventions for values that arrive off the wire (see extract_value):
numbers inside value blocks are big-endian, strings keep their NUL.
"""

from __future__ import annotations

import ctypes
import math
import struct
import sys
from ctypes import ArgumentError, addressof, create_string_buffer
from fractions import Fraction
from typing import Tuple, Union

# ---------------------------------------------------------------------------
# Constants come from pcp._core.constants, the one table of PMAPI values.
from pcp._core.constants import (PM_ERR_CONV, PM_ERR_SIGN, PM_ERR_TRUNC, PM_ERR_UNIT,  # noqa: E402
                                 PM_ID_NULL, PM_INDOM_NULL, PM_SEM_COUNTER, PM_SEM_DISCRETE,
                                 PM_SEM_INSTANT, PM_SPACE_BYTE, PM_SPACE_EBYTE, PM_SPACE_GBYTE,
                                 PM_SPACE_KBYTE, PM_SPACE_MBYTE, PM_SPACE_PBYTE, PM_SPACE_TBYTE,
                                 PM_TIME_HOUR, PM_TIME_MIN, PM_TIME_MSEC, PM_TIME_NSEC, PM_TIME_SEC,
                                 PM_TIME_USEC, PM_VAL_DPTR, PM_VAL_HDR_SIZE, PM_VAL_INSITU,
                                 PM_VAL_SPTR)
from pcp._core.errors import pmErr
from pcp._core.structs import (PM_TYPE_32, PM_TYPE_64, PM_TYPE_AGGREGATE, PM_TYPE_AGGREGATE_STATIC,
                               PM_TYPE_DOUBLE, PM_TYPE_EVENT, PM_TYPE_FLOAT, PM_TYPE_HIGHRES_EVENT,
                               PM_TYPE_NOSUPPORT, PM_TYPE_STRING, PM_TYPE_U32, PM_TYPE_U64,
                               PM_TYPE_UNKNOWN, ld_divide, pmAtomValue, pmUnits, units_from_int)

DYNAMIC_PMID = 511    # reserved domain of dynamic/derived pmIDs (not in cpmapi)

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


# ---------------------------------------------------------------------------
# pmConvScale

def _unit_fields(units: Union[pmUnits, int]) -> Tuple[int, int, int, int, int, int]:
    """(dimSpace, dimTime, dimCount, scaleSpace, scaleTime, scaleCount).

    The dimensions and scaleCount are signed 4-bit, scaleSpace/scaleTime
    unsigned 4-bit, as libpcp sees them (the ctypes declaration reads all
    six as signed).
    """
    if isinstance(units, int):
        units = units_from_int(units)
    elif isinstance(units, ctypes._Pointer):
        units = units.contents
    return (units.dimSpace, units.dimTime, units.dimCount,
            units.scaleSpace & 0xF, units.scaleTime & 0xF, units.scaleCount)


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
    ids, idt, idc, iss, ist, isc = _unit_fields(inunits)
    ods, odt, odc, oss, ost, osc = _unit_fields(outunits)
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


# ---------------------------------------------------------------------------
# Argument coercion matching what ctypes does for the reference wrappers.

def _arg_uint(x: object) -> int:
    if isinstance(x, int):
        return x & _M32
    raise ArgumentError("argument 1: TypeError: wrong type")


def _arg_int(x: object) -> int:
    if isinstance(x, int):
        return _s32(x)
    raise ArgumentError("argument 1: TypeError: wrong type")


def _arg_double(x: object) -> float:
    if isinstance(x, (int, float)):
        return float(x)
    raise ArgumentError("argument 1: TypeError: wrong type")


def _truncate(text: str, buflen: int) -> str:
    """pmsprintf keeps at most buflen-1 characters."""
    return text[:buflen - 1]


# ---------------------------------------------------------------------------
# Identifier helpers

def pmID_build(d: int, c: int, i: int) -> int:
    """pmID from domain (9 bits), cluster (12 bits) and item (10 bits)."""
    return (((_arg_uint(d) & 0x1FF) << 22) | ((_arg_uint(c) & 0xFFF) << 10)
            | (_arg_uint(i) & 0x3FF))


def pmID_domain(pmid: int) -> int:
    return (_arg_uint(pmid) >> 22) & 0x1FF


def pmID_cluster(pmid: int) -> int:
    return (_arg_uint(pmid) >> 10) & 0xFFF


def pmID_item(pmid: int) -> int:
    return _arg_uint(pmid) & 0x3FF


def pmInDom_build(d: int, s: int) -> int:
    """pmInDom from domain (9 bits) and serial (22 bits)."""
    return ((_arg_uint(d) & 0x1FF) << 22) | (_arg_uint(s) & 0x3FFFFF)


def pmInDom_domain(indom: int) -> int:
    return (_arg_uint(indom) >> 22) & 0x1FF


def pmInDom_serial(indom: int) -> int:
    return _arg_uint(indom) & 0x3FFFFF


def pmIDStr(pmid: int) -> str:
    """"dom.cluster.item", "PM_ID_NULL", or "cluster.*.*" for a dynamic root."""
    pmid = _arg_uint(pmid)
    if pmid == PM_ID_NULL:
        return "PM_ID_NULL"
    domain = (pmid >> 22) & 0x1FF
    cluster = (pmid >> 10) & 0xFFF
    item = pmid & 0x3FF
    if domain == DYNAMIC_PMID and item == 0:
        return "%d.*.*" % cluster
    return "%d.%d.%d" % (domain, cluster, item)


def pmInDomStr(indom: object) -> str:
    """"domain.serial" or "PM_INDOM_NULL"; accepts a pmDesc pointer too."""
    from pcp._core.structs import get_indom
    value = get_indom(indom)
    if value == PM_INDOM_NULL:
        return "PM_INDOM_NULL"
    return "%d.%d" % ((value >> 22) & 0x1FF, value & 0x3FFFFF)


_TYPE_NAMES = ("32", "U32", "64", "U64", "FLOAT", "DOUBLE", "STRING",
               "AGGREGATE", "AGGREGATE_STATIC", "EVENT", "HIGHRES_EVENT")


def pmTypeStr(typed: int) -> str:
    typed = _arg_int(typed)
    if 0 <= typed < len(_TYPE_NAMES):
        return _TYPE_NAMES[typed]
    if typed == PM_TYPE_NOSUPPORT:
        return "NO_SUPPORT"
    if typed == PM_TYPE_UNKNOWN:
        return "UNKNOWN"
    return "???"


def pmSemStr(sem: int) -> str:
    return {PM_SEM_COUNTER: "counter", PM_SEM_INSTANT: "instant",
            PM_SEM_DISCRETE: "discrete"}.get(_arg_int(sem), "???")


# ---------------------------------------------------------------------------
# pmNumberStr

def _ld_div(value: float, divisor: int) -> float:
    """(double)((long double)value / (long double)divisor)."""
    return ld_divide(value, divisor)


def pmNumberStr(value: float) -> str:
    """Fixed width (7 character) rendering with K/M/G/T suffixes."""
    value = _arg_double(value)
    if value >= 0.0:
        if value >= 999995000000000.0:
            text = " inf?  "
        elif value >= 999995000000.0:
            text = "%6.2fT" % _ld_div(value, 1000000000000)
        elif value >= 999995000.0:
            text = "%6.2fG" % _ld_div(value, 1000000000)
        elif value >= 999995.0:
            text = "%6.2fM" % _ld_div(value, 1000000)
        elif value >= 999.995:
            text = "%6.2fK" % (value / 1000.0)
        elif value >= 0.005:
            text = "%6.2f " % value
        else:
            text = "%6.2f " % 0.0
    else:
        # NaN fails every comparison and ends up in the final "0.00" branch.
        if value <= -99995000000000.0:
            text = "-inf?  "
        elif value <= -99995000000.0:
            text = "%6.2fT" % _ld_div(value, 1000000000000)
        elif value <= -99995000.0:
            text = "%6.2fG" % _ld_div(value, 1000000000)
        elif value <= -99995.0:
            text = "%6.2fM" % _ld_div(value, 1000000)
        elif value <= -99.995:
            text = "%6.2fK" % (value / 1000.0)
        elif value <= -0.005:
            text = "%6.2f " % value
        else:
            text = "%6.2f " % 0.0
    # The reference formats into an 8 byte buffer.
    return _truncate(text, 8)


# ---------------------------------------------------------------------------
# pmUnitsStr

_SPACE_NAMES = {0: "byte", 1: "Kbyte", 2: "Mbyte", 3: "Gbyte", 4: "Tbyte",
                5: "Pbyte", 6: "Ebyte", 7: "Zbyte", 8: "Ybyte"}
_TIME_NAMES = {0: "nanosec", 1: "microsec", 2: "millisec", 3: "sec",
               4: "min", 5: "hour"}


def pmUnitsStr(units: Union[pmUnits, int]) -> str:
    """Human readable units, e.g. "Kbyte / sec" or "count x 10^6"."""
    if not isinstance(units, (pmUnits, int, ctypes._Pointer)):
        raise ArgumentError("argument 1: TypeError: expected LP_pmUnits "
                            "instance instead of %s" % type(units).__name__)
    ds, dt, dc, ss, st, sc = _unit_fields(units)
    space = _SPACE_NAMES.get(ss, "space-%d" % ss) if ds else ""
    tname = _TIME_NAMES.get(st, "time-%d" % st) if dt else ""
    if dc:
        if sc == 0:
            count = "count"
        elif sc == 1:
            count = "count x 10"
        else:
            count = "count x 10^%d" % sc
    else:
        count = ""

    def power(name: str, dim: int) -> str:
        return name if dim == 1 else "%s^%d" % (name, dim)

    parts = []
    for name, dim in ((space, ds), (tname, dt), (count, dc)):
        if dim > 0:
            parts.append(power(name, dim))
    if ds < 0 or dt < 0 or dc < 0:
        parts.append("/")
        for name, dim in ((space, ds), (tname, dt), (count, dc)):
            if dim < 0:
                parts.append(power(name, -dim))
    if parts:
        return " ".join(parts)
    # Dimensionless but scaled: a historical oddity kept by libpcp.
    if sc == 1:
        return "x 10"
    if sc != 0:
        return "x 10^%d" % sc
    return ""


# ---------------------------------------------------------------------------
# pmAtomStr

def _c_e(x: float) -> str:
    """printf("%e") including glibc's spelling of non-finite values."""
    if x != x:
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    return "%e" % x


def _atom_str_bytes(atom: pmAtomValue, typed: int) -> bytes:
    if typed == PM_TYPE_32:
        return b"%d" % atom.l
    if typed == PM_TYPE_U32:
        return b"%d" % atom.ul
    if typed == PM_TYPE_64:
        return b"%d" % atom.ll
    if typed == PM_TYPE_U64:
        return b"%d" % atom.ull
    if typed == PM_TYPE_FLOAT:
        return _c_e(atom.f).encode()
    if typed == PM_TYPE_DOUBLE:
        return _c_e(atom.d).encode()
    if typed == PM_TYPE_STRING:
        s = atom.cp
        if s is None:
            return b"<null>"
        if len(s) < 38:
            return b'"' + s + b'"'
        return b'"' + s[:34] + b'..."'
    if typed in (PM_TYPE_AGGREGATE, PM_TYPE_AGGREGATE_STATIC):
        if not atom.vp:
            return b"<null>"
        hdr = _NATIVE_U32.unpack(ctypes.string_at(atom.vp, 4))[0]
        vlen, vtype = hdr & 0xFFFFFF, hdr >> 24
        n = vlen - PM_VAL_HDR_SIZE
        text = b"[type=%s len=%d]" % (pmTypeStr(vtype).encode(), n)
        if n > 0:
            data = ctypes.string_at(atom.vp + PM_VAL_HDR_SIZE, min(n, 12))
            for i, byte in enumerate(data):
                text += (b" %02x" if i % 4 == 0 else b"%02x") % byte
            if n > 12:
                text += b" ..."
        return text
    if typed in (PM_TYPE_EVENT, PM_TYPE_HIGHRES_EVENT):
        if not atom.vp:
            # libpcp would dereference NULL here; say so instead of crashing
            return b"<null>"
        nrec = _NATIVE_I32.unpack(ctypes.string_at(atom.vp + 4, 4))[0]
        if nrec == 1:
            return b"[1 event record]"
        return b"[%d event records]" % nrec
    if typed == PM_TYPE_NOSUPPORT:
        return b"Error: unexpected type: Not Supported"
    if typed == PM_TYPE_UNKNOWN:
        return b"Error: unexpected type: Unknown"
    return b"Error: unexpected type: Illegal type=%d" % typed


def pmAtomStr(atom: pmAtomValue, typed: int) -> str:
    """Readable rendering of an atom of the given type (as libpcp prints).

    Like the reference, a string atom truncated in the middle of a UTF-8
    sequence raises UnicodeDecodeError.
    """
    typed = _arg_int(typed)
    # pmAtomStr_r formats into a 96 byte buffer (95 characters + NUL); the
    # decode happens after truncation, exactly as in the reference.
    return _atom_str_bytes(atom, typed)[:95].decode()


# ---------------------------------------------------------------------------
# pmParseUnitsStr

def _kw(pairs: str) -> Tuple[Tuple[str, int], ...]:
    out = []
    for item in pairs.split(","):
        key, val = item.rsplit("=", 1)
        out.append((key.strip(), int(val)))
    return tuple(out)


# Keyword tables, in libpcp's matching order (first match wins, so longer
# spellings precede their prefixes, and "time-1" comes after "time-1x").
_TIME_KW = _kw(
    "nanoseconds=0,nanosecond=0,nanosec=0,ns=0,"
    "microseconds=1,microsecond=1,microsec=1,us=1,"
    "milliseconds=2,millisecond=2,millisec=2,ms=2,"
    "seconds=3,second=3,sec=3,s=3,minutes=4,minute=4,min=4,"
    "hours=5,hour=5,hr=5,h=5,time-0=0,"
    + ",".join("time-%d=%d" % (k, k) for k in range(2, 16)) + ",time-1=1")


def _space_kw() -> Tuple[Tuple[str, int], ...]:
    prefixes = [("K", "Kibi", "Kilo"), ("M", "Mebi", "Mega"),
                ("G", "Gibi", "Giga"), ("T", "Tebi", "Tera"),
                ("P", "Pebi", "Peta"), ("E", "Exbi", "Exa"),
                ("Z", "Zebi", "Zetta"), ("Y", "Yobi", "Yotta")]
    out = [("bytes", 0), ("byte", 0)]
    for scale, (p, iec, si) in enumerate(prefixes, start=1):
        for word in (p + "B", p + "iB", p + "bytes", p + "byte",
                     iec + "bytes", iec + "byte", si + "bytes", si + "byte"):
            out.append((word, scale))
    out.append(("space-0", 0))
    out.extend(("space-%d" % k, k) for k in range(2, 16))
    out.append(("space-1", 1))
    return tuple(out)


_SPACE_KW = _space_kw()
_COUNT_KW = tuple([("count x 10^%d" % k, k) for k in range(-8, 0)]
                  + [("count x 10^%d" % k, k) for k in range(2, 8)]
                  + [("count x 10", 1), ("counts", 0), ("count", 0)])
_EXP_KW = tuple([("^%d" % k, k) for k in range(-8, 1)]
                + [("^%d" % k, k) for k in range(2, 16)] + [("^1", 1)])

_C_SPACE = " \t\n\v\f\r"


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def _ascii_lower(s: str) -> str:
    return s.translate(_ASCII_LOWER)


class _UnitsPart:
    """Wide (non-bitfield) units accumulated while parsing one side."""

    __slots__ = ("dimSpace", "dimTime", "dimCount",
                 "scaleSpace", "scaleTime", "scaleCount")

    def __init__(self) -> None:
        self.dimSpace = self.dimTime = self.dimCount = 0
        self.scaleSpace = self.scaleTime = self.scaleCount = 0


class _ParseError(Exception):
    pass


def _strtod(text: str, pos: int, end: int) -> Tuple[float, int]:
    """C strtod() on text[pos:end]: (value, new position); raises on error.

    Decimal and hexadecimal literals are rounded correctly (as glibc does);
    overflow, and underflow to a tiny inexact result, set ERANGE in glibc,
    which libpcp's caller treats as an invalid literal.
    """
    m = _STRTOD_RE.match(text, pos, end)
    if m is None:
        raise _ParseError("invalid floating point literal")
    lit = m.group(0)
    neg = lit.startswith("-")
    body = lit.lstrip("+-").lower()
    if body.startswith("inf"):
        value = math.inf
    elif body.startswith("nan"):
        value = math.nan
    else:
        if body.startswith("0x"):
            mant, _, exp = body[2:].partition("p")
            whole, _, frac = mant.partition(".")
            exact = Fraction(int((whole + frac) or "0", 16), 16 ** len(frac))
            exact *= Fraction(2) ** int(exp or "0")
        else:
            exact = Fraction(body)
        try:
            value = float(exact)
        except OverflowError:
            raise _ParseError("invalid floating point literal") from None
        if exact and abs(exact) < _DBL_MIN and Fraction(value) != exact:
            raise _ParseError("invalid floating point literal")
    return (-value if neg else value), m.end()


_DBL_MIN = Fraction(sys.float_info.min)


def _compile_strtod():
    import re
    dec = r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    hexa = (r"0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)"
            r"(?:[pP][+-]?[0-9]+)?")
    special = r"(?:[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN](?:\([0-9A-Za-z_]*\))?)"
    return re.compile(r"[+-]?(?:%s|%s|%s)" % (hexa, dec, special))


_STRTOD_RE = _compile_strtod()


def _parse_part(text: str, start: int, end: int) -> Tuple[_UnitsPart, float]:
    out = _UnitsPart()
    mult = 1.0
    pos = start

    def skip_keyword(kw: str) -> bool:
        nonlocal pos
        n = len(kw)
        # strncasecmp in the C locale: ASCII-only case folding
        if pos + n > end or _ascii_lower(text[pos:pos + n]) != kw.lower():
            return False
        after = pos + n
        if after == end or text[after] in _C_SPACE or text[after] == "^":
            pos = after
            return True
        return False

    while pos != end:
        ch = text[pos]
        if ch in _C_SPACE:
            pos += 1
            continue
        if ch == "-" or ch == "." or "0" <= ch <= "9":
            value, pos = _strtod(text, pos, end)
            mult *= value
            continue
        dim = None
        if out.dimTime == 0:
            for kw, scale in _TIME_KW:
                if skip_keyword(kw):
                    out.scaleTime = scale
                    dim = "Time"
                    break
        if dim is None and out.dimSpace == 0:
            for kw, scale in _SPACE_KW:
                if skip_keyword(kw):
                    out.scaleSpace = scale
                    dim = "Space"
                    break
        if dim is None and out.dimCount == 0:
            for kw, scale in _COUNT_KW:
                if skip_keyword(kw):
                    out.scaleCount = scale
                    dim = "Count"
                    break
        if dim is None:
            raise _ParseError("unrecognized or duplicate base unit")
        if pos == end or text[pos] in _C_SPACE:
            setattr(out, "dim" + dim, 1)
        else:
            for kw, power in _EXP_KW:
                if skip_keyword(kw):
                    setattr(out, "dim" + dim, power)
                    break
    return out, mult


_TIME_SCALE_SECONDS = (0.000000001, 0.000001, 0.001, 1.0, 60.0, 3600.0)


def parse_units_str(string: str) -> Tuple[pmUnits, float]:
    """Parse "N units / M units"; returns (pmUnits, multiplier).

    Raises pmErr(PM_ERR_CONV, message) on errors, with libpcp's messages.
    """
    slash = string.find("/")
    try:
        if slash < 0:
            top, top_mult = _parse_part(string, 0, len(string))
            bottom, bottom_mult = _UnitsPart(), 1.0
        else:
            top, top_mult = _parse_part(string, 0, slash)
            bottom, bottom_mult = _parse_part(string, slash + 1, len(string))
    except _ParseError as exc:
        raise pmErr(PM_ERR_CONV, str(exc)) from None

    result = pmUnits()
    for name in ("Space", "Time", "Count"):
        dim = getattr(top, "dim" + name) - getattr(bottom, "dim" + name)
        if not -8 <= dim <= 7:      # would not survive the 4-bit bitfield
            raise pmErr(PM_ERR_CONV, "%s dimension out of bounds"
                        % name.lower())
        setattr(result, "dim" + name, dim)

    # Note the reciprocal: the multiplier converts *to* the parsed units.
    mult = bottom_mult / top_mult

    if top.dimSpace == 0 and bottom.dimSpace != 0:
        result.scaleSpace = bottom.scaleSpace
    elif bottom.dimSpace == 0 and top.dimSpace != 0:
        result.scaleSpace = top.scaleSpace
    else:
        result.scaleSpace = PM_SPACE_BYTE
        mult *= math.pow(math.pow(1024.0, float(top.scaleSpace)),
                         -float(top.dimSpace))
        mult *= math.pow(math.pow(1024.0, float(bottom.scaleSpace)),
                         float(bottom.dimSpace))
        if result.dimSpace == 0:
            result.scaleSpace = 0

    if top.dimCount == 0 and bottom.dimCount != 0:
        result.scaleCount = bottom.scaleCount
    elif bottom.dimCount == 0 and top.dimCount != 0:
        result.scaleCount = top.scaleCount
    else:
        result.scaleCount = 0
        mult *= math.pow(math.pow(10.0, float(top.scaleCount)),
                         -float(top.dimCount))
        mult *= math.pow(math.pow(10.0, float(bottom.scaleCount)),
                         float(bottom.dimCount))
        if result.dimCount == 0:
            result.scaleCount = 0

    if top.dimTime == 0 and bottom.dimTime != 0:
        result.scaleTime = bottom.scaleTime
    elif bottom.dimTime == 0 and top.dimTime != 0:
        result.scaleTime = top.scaleTime
    else:
        result.scaleTime = PM_TIME_SEC
        if top.scaleTime > PM_TIME_HOUR or bottom.scaleTime > PM_TIME_HOUR:
            # libpcp asserts (aborting the process) on these inputs, e.g.
            # "time-7 / time-7"; we report a conversion error instead.
            raise pmErr(PM_ERR_CONV, "time scale out of bounds")
        mult *= math.pow(_TIME_SCALE_SECONDS[top.scaleTime],
                         -float(top.dimTime))
        mult *= math.pow(_TIME_SCALE_SECONDS[bottom.scaleTime],
                         float(bottom.dimTime))
        if result.dimTime == 0:
            result.scaleTime = 0
    return result, mult


def pmParseUnitsStr(string: Union[str, bytes]) -> Tuple[pmUnits, float]:
    """Reference-compatible wrapper: accepts str or bytes, else PM_ERR_CONV."""
    if not isinstance(string, (bytes, str)):
        raise pmErr(PM_ERR_CONV, str(string))
    # libpcp works on the UTF-8 bytes; a 1:1 latin-1 view of those bytes
    # keeps positions byte-exact and non-ASCII bytes can never match.
    if isinstance(string, str):
        string = string.encode("utf-8")
    string = string.decode("latin-1")
    nul = string.find("\0")
    if nul >= 0:
        string = string[:nul]       # C string semantics
    return parse_units_str(string)
