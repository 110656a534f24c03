"""The text forms and identifier helpers of libpcp 6.0.3: pmIDStr, pmInDomStr, pmTypeStr,
pmSemStr, pmNumberStr, pmAtomStr and the pmID / pmInDom builders, with the official
binding's argument checks (ctypes' errors) and libpcp's buffer limits."""
from __future__ import annotations

import ctypes
import math
import struct
from ctypes import ArgumentError

from pcp._core.cint import wrap_int32
from pcp._core.constants import (PM_ID_NULL, PM_INDOM_NULL, PM_SEM_COUNTER, PM_SEM_DISCRETE,
                                 PM_SEM_INSTANT, PM_TYPE_32, PM_TYPE_64, PM_TYPE_AGGREGATE,
                                 PM_TYPE_AGGREGATE_STATIC, PM_TYPE_DOUBLE, PM_TYPE_EVENT,
                                 PM_TYPE_FLOAT, PM_TYPE_HIGHRES_EVENT, PM_TYPE_NOSUPPORT,
                                 PM_TYPE_STRING, PM_TYPE_U32, PM_TYPE_U64, PM_TYPE_UNKNOWN,
                                 PM_VAL_HDR_SIZE)
from pcp._core.longdouble import ld_divide
from pcp._core.structs import pmAtomValue
from pcp._core.wire import DYNAMIC_DOMAIN

# the first words of an event array's value block, read in host order
_NATIVE_U32 = struct.Struct("=I")
_NATIVE_I32 = struct.Struct("=i")


# ---------------------------------------------------------------------------
# Argument coercion matching what ctypes does for the reference wrappers.

def _arg_uint(x: object) -> int:
    if isinstance(x, int):
        return x & 0xFFFFFFFF
    raise ArgumentError("argument 1: TypeError: wrong type")


def _arg_int(x: object) -> int:
    if isinstance(x, int):
        return wrap_int32(x)
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
    if domain == DYNAMIC_DOMAIN and item == 0:
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


# pmPrintDesc's names of the metric types (pmdumplog -d, pminfo -d, pmiDump).
DESC_TYPE_TEXT = {
    0: "32-bit int", 1: "32-bit unsigned int", 2: "64-bit int", 3: "64-bit unsigned int",
    4: "float", 5: "double", 6: "string", 7: "aggregate", 8: "static aggregate",
    9: "event record array", 10: "highres event record array",
}
