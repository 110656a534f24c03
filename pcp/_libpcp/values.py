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
import sys
from ctypes import addressof, create_string_buffer

from pcp._core.constants import (PM_ERR_CONV, PM_ERR_UNIT, PM_SPACE_BYTE, PM_SPACE_EBYTE,
                                 PM_SPACE_GBYTE, PM_SPACE_KBYTE, PM_SPACE_MBYTE, PM_SPACE_PBYTE,
                                 PM_SPACE_TBYTE, PM_TIME_HOUR, PM_TIME_MIN, PM_TIME_MSEC,
                                 PM_TIME_NSEC, PM_TIME_SEC, PM_TIME_USEC, PM_TYPE_32,
                                 PM_TYPE_64, PM_TYPE_DOUBLE, PM_TYPE_FLOAT, PM_TYPE_STRING,
                                 PM_TYPE_U32, PM_TYPE_U64, PM_TEMPERATURE_C, PM_TEMPERATURE_F,
                                 PM_TEMPERATURE_K, PM_UNIT_CURRENT, PM_UNIT_POWER,
                                 PM_UNIT_TEMPERATURE, PM_UNIT_VOLTAGE,
                                 PM_VAL_DPTR, PM_VAL_HDR_SIZE, PM_VAL_SPTR)
from pcp._core.errors import pmErr
from pcp._core.level import API_LEVEL
from pcp._core.native import ffi, lib
from pcp._core.structs import pmAtomValue, pmUnits
from pcp._core.units import extra_fields, unit_fields

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Optional, Tuple, Union

_M32 = 0xFFFFFFFF
_M64 = 0xFFFFFFFFFFFFFFFF
_LITTLE = sys.byteorder == "little"
_NUMERIC = frozenset((PM_TYPE_64, PM_TYPE_U64, PM_TYPE_FLOAT, PM_TYPE_DOUBLE))
_NATIVE_U32 = struct.Struct("=I")


def _s64(x: int) -> int:
    """Wrap to int64 (two's complement overflow as the hardware does it)."""
    x &= _M64
    return x - (1 << 64) if x & 0x8000000000000000 else x


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
             "same as intype" by libpcp, which then reads the number as the bytes lie,
             in host order: not swapped from network order)
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
    if valfmt == PM_VAL_DPTR or valfmt == PM_VAL_SPTR:
        if type(payload) is not bytes:
            payload = bytes(payload)
        if host_order and _LITTLE and len(payload) in (4, 8) and intype in _NUMERIC \
                and vtype != 0:
            # the core reads numbers in network order, except a block of vtype 0's,
            # which it reads in host order as libpcp does
            payload = payload[::-1]
    else:
        payload = b""
    sts = lib.pcp_convert_extract_at(valfmt, word & _M32, vtype, payload, len(payload),
                                     intype, outtype, addressof(out))
    if sts == 1:                        # a string or an aggregate, as it is
        if intype == PM_TYPE_STRING:
            # libpcp copies vlen-4 bytes and appends a NUL; the C string ends at the
            # first NUL, which c_char_p reproduces on read.
            out.cp = payload
        else:
            block = _native_block(vtype, payload)
            out.vp = addressof(block)
            out._vblock = block
            out.aggregate = payload
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
    ieu, oeu = extra_fields(inunits)[0], extra_fields(outunits)[0]
    # Dimensionless units are treated as "count" (with their count scale); an extra
    # unit (API level 7.2) is a dimension of its own.
    if ids == 0 and idt == 0 and idc == 0 and ieu == 0:
        idc = 1
    if ods == 0 and odt == 0 and odc == 0 and oeu == 0:
        odc = 1
    if ids != ods or idt != odt or idc != odc or ieu != oeu:
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

    out = pmAtomValue()
    sts = lib.pcp_convert_scale(intype, ffi.cast("pcp_atom *", addressof(inatom)), mult, div,
                                ffi.cast("pcp_atom *", addressof(out)))
    if sts < 0:
        raise pmErr(sts)
    factors = extra_conversion(inunits, outunits)
    if factors is not None:
        _convert_extra_scale(intype, out, factors)
    return out


# PCP 7.2's conversions between the scales of an extra unit: (unit, from, to) ->
# (a, b, c, d) of out = a + b * (in + c) / d, in double (libpcp's extraunits.c tables)
_EXTRA_CONVERSIONS = {
    (PM_UNIT_TEMPERATURE, PM_TEMPERATURE_C, PM_TEMPERATURE_F): (32.0, 18.0, 0.0, 10.0),
    (PM_UNIT_TEMPERATURE, PM_TEMPERATURE_F, PM_TEMPERATURE_C): (0.0, 10.0, -32.0, 18.0),
    (PM_UNIT_TEMPERATURE, PM_TEMPERATURE_C, PM_TEMPERATURE_K): (273.15, 1.0, 0.0, 1.0),
    (PM_UNIT_TEMPERATURE, PM_TEMPERATURE_K, PM_TEMPERATURE_C): (0.0, 1.0, -273.15, 1.0),
    (PM_UNIT_TEMPERATURE, PM_TEMPERATURE_F, PM_TEMPERATURE_K): (273.15, 10.0, -32.0, 18.0),
    (PM_UNIT_TEMPERATURE, PM_TEMPERATURE_K, PM_TEMPERATURE_F): (32.0, 18.0, -273.15, 10.0),
}
# voltage and current (V, mV, uV; A, mA, uA) and power (kW, W, mW, uW): each scale a
# thousandth of the one before
for _unit, _scales in ((PM_UNIT_VOLTAGE, 3), (PM_UNIT_CURRENT, 3), (PM_UNIT_POWER, 4)):
    for _i in range(1, _scales + 1):
        for _o in range(1, _scales + 1):
            if _o > _i:
                _EXTRA_CONVERSIONS[(_unit, _i, _o)] = (0.0, 1000.0 ** (_o - _i), 0.0, 1.0)
            elif _o < _i:
                _EXTRA_CONVERSIONS[(_unit, _i, _o)] = (0.0, 1.0, 0.0, 1000.0 ** (_i - _o))


def extra_conversion(inunits: Union[pmUnits, int],
                     outunits: Union[pmUnits, int]) -> Optional[Tuple[float, float, float, float]]:
    """(a, b, c, d) of the extra-unit step libpcp 7.2's pmConvScale takes after the
    scaling, out = a + b * (in + c) / d in double; None when there is none (no extra
    unit, or the same scale); pmErr(PM_ERR_UNIT) for a unit or a pair of scales libpcp
    has no conversion for."""
    unit, in_scale = extra_fields(inunits)
    out_scale = extra_fields(outunits)[1]
    if not unit or in_scale == out_scale:
        return None
    factors = _EXTRA_CONVERSIONS.get((unit, in_scale, out_scale))
    if factors is None:
        raise pmErr(PM_ERR_UNIT)
    return factors


def _convert_extra_scale(intype: int, atom: pmAtomValue, factors: Tuple[float, ...]) -> None:
    """libpcp 7.2's __pmConvExtraScale on a value pmConvScale has already scaled."""
    a, b, c, d = factors
    field = {PM_TYPE_32: "l", PM_TYPE_U32: "ul", PM_TYPE_64: "ll", PM_TYPE_U64: "ull",
             PM_TYPE_FLOAT: "f", PM_TYPE_DOUBLE: "d"}[intype]
    value = a + b * (float(getattr(atom, field)) + c) / d
    if intype == PM_TYPE_FLOAT or intype == PM_TYPE_DOUBLE:
        setattr(atom, field, value)     # ctypes rounds a float field to single precision
    else:
        setattr(atom, field, _x86_double_to_integer(value, intype))


def _x86_double_to_integer(value: float, intype: int) -> int:
    """C's cast of a double to the integer type on x86-64 (gcc): truncation towards zero,
    and cvttsd2si's "integer indefinite" (the most negative number) for a value out of
    range or NaN; unsigned 32 bits go through the signed 64-bit conversion, unsigned 64
    bits subtract 2^63 first when the value is that large."""
    def signed(v: float, bits: int) -> int:
        if v != v or not -2.0 ** (bits - 1) <= v < 2.0 ** (bits - 1):
            return -(1 << (bits - 1))
        return int(v)
    if intype == PM_TYPE_32:
        return signed(value, 32)
    if intype == PM_TYPE_64:
        return signed(value, 64)
    if intype == PM_TYPE_U32:
        return signed(value, 64) & _M32
    if value >= 2.0 ** 63:
        return (signed(value - 2.0 ** 63, 64) ^ (1 << 63)) & _M64
    return signed(value, 64) & _M64


_EXTRA_UNITS_LEVEL = 1 if API_LEVEL >= (7, 2) else 0


def conv_scale_units(intype: int, inatom: pmAtomValue, inunits: pmUnits,
                     outunits: pmUnits) -> pmAtomValue:
    """conv_scale in one C call (csrc/convert.c's pcp_convert_scale_units) for ctypes
    pmAtomValue and pmUnits objects: the drop-in pmConvScale's path. PCP 7.2's extra
    units, and anything else than those objects, go through conv_scale."""
    if type(inatom) is not pmAtomValue or type(inunits) is not pmUnits \
            or type(outunits) is not pmUnits:
        return conv_scale(intype, inatom, inunits, outunits)
    out = pmAtomValue()
    sts = lib.pcp_convert_scale_units(intype, addressof(inatom), addressof(inunits),
                                      addressof(outunits), _EXTRA_UNITS_LEVEL, addressof(out))
    if sts == 0:
        return out
    if sts < 0:
        raise pmErr(sts)
    return conv_scale(intype, inatom, inunits, outunits)     # extra units


def pmConvScale(intype: int, inatom: pmAtomValue, inunits: Union[pmUnits, int],
                outunits: Union[pmUnits, int]) -> pmAtomValue:
    """pmConvScale with explicit input units.

    As in the reference wrapper, an int *outunits* means "space dimension 1
    with this scaleSpace"; pass a pmUnits for anything else.
    """
    if isinstance(outunits, int):
        outunits = pmUnits(1, 0, 0, outunits, 0, 0)
    return conv_scale(intype, inatom, inunits, outunits)
