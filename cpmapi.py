"""Constants and small helpers of the PMAPI, for ``import cpmapi``.

This is the pure-Python stand-in for the ``cpmapi`` extension module that
ships with Performance Co-Pilot's Python binding.  Every constant carries the
same value the official module exposes on a 64-bit little-endian Linux host
(PCP 6.0.3); the values are written out literally so the module has no
dependency on libpcp or on any header file.

Only the module's *public* names are part of the interface.  Helpers used
internally start with an underscore so that ``dir(cpmapi)`` lists the same
public names as the official module (minus ``DELIBERATE_OMISSIONS``).
"""

import ctypes as _ctypes
import ctypes.util as _ctypes_util
import operator as _operator
import sys as _sys
import time as _time
from fractions import Fraction as _Fraction

from pcp._core.constants import *  # noqa: F401,F403  (every constant, defined once)
from pcp._core.constants import PM_XTB_FLAG  # used below
from pcp._core.cint import c_int as _c_int, c_long as _c_long, c_long_long as _c_long_long
from pcp._core.cint import wrap_int32 as _to_int32
from pcp._core.errors import pmUsageMessage  # noqa: F401  (the official module's)

# ---------------------------------------------------------------------------
# Names of the official module that this module does not provide (yet).
# ---------------------------------------------------------------------------
# pmOptions (command line parsing) and PMNS traversal callbacks arrive with
# later work; pmnsTraverse itself is provided as pmContext.pmTraversePMNS.
DELIBERATE_OMISSIONS = (
    "pmEndOptions",
    "pmGetNonOptionsFromList",
    "pmGetOperands",
    "pmGetOptionAlign_optarg",
    "pmGetOptionArchives",
    "pmGetOptionContainer",
    "pmGetOptionContext",
    "pmGetOptionErrors",
    "pmGetOptionFinish_nsec",
    "pmGetOptionFinish_optarg",
    "pmGetOptionFinish_sec",
    "pmGetOptionFinish_usec",
    "pmGetOptionFlags",
    "pmGetOptionHostZone",
    "pmGetOptionHosts",
    "pmGetOptionInterval_nsec",
    "pmGetOptionInterval_sec",
    "pmGetOptionInterval_usec",
    "pmGetOptionLocalPMDA",
    "pmGetOptionOrigin_nsec",
    "pmGetOptionOrigin_sec",
    "pmGetOptionOrigin_usec",
    "pmGetOptionSamples",
    "pmGetOptionStart_nsec",
    "pmGetOptionStart_sec",
    "pmGetOptionStart_usec",
    "pmGetOptionTimezone",
    "pmGetOptionsFromList",
    "pmResetAllOptions",
    "pmServerStart",
    "pmSetContextOptions",
    "pmSetLongOption",
    "pmSetLongOptionAlign",
    "pmSetLongOptionArchive",
    "pmSetLongOptionArchiveFolio",
    "pmSetLongOptionArchiveList",
    "pmSetLongOptionContainer",
    "pmSetLongOptionDebug",
    "pmSetLongOptionFinish",
    "pmSetLongOptionHeader",
    "pmSetLongOptionHelp",
    "pmSetLongOptionHost",
    "pmSetLongOptionHostList",
    "pmSetLongOptionHostZone",
    "pmSetLongOptionHostsFile",
    "pmSetLongOptionInterval",
    "pmSetLongOptionLocalPMDA",
    "pmSetLongOptionOrigin",
    "pmSetLongOptionSamples",
    "pmSetLongOptionSpecLocal",
    "pmSetLongOptionStart",
    "pmSetLongOptionText",
    "pmSetLongOptionTimeZone",
    "pmSetLongOptionVersion",
    "pmSetOptionArchive",
    "pmSetOptionArchiveFolio",
    "pmSetOptionArchiveList",
    "pmSetOptionCallback",
    "pmSetOptionContainer",
    "pmSetOptionContext",
    "pmSetOptionErrors",
    "pmSetOptionFlags",
    "pmSetOptionHost",
    "pmSetOptionHostList",
    "pmSetOptionInterval",
    "pmSetOptionLocalPMDA",
    "pmSetOptionSamples",
    "pmSetOptionSpecLocal",
    "pmSetOverrideCallback",
    "pmSetProcessIdentity",
    "pmSetShortOptions",
    "pmSetShortUsage",
    "pmnsTraverse",
)

# The official module parses its arguments with CPython's PyArg_ParseTuple codes;
# pcp._core.cint reproduces the same accepted types, range checks and messages.
_LONG_DOUBLE_BITS = 64  # significand of the x86 80-bit long double


# ---------------------------------------------------------------------------
# Extended time base for pmSetMode
# ---------------------------------------------------------------------------
def PM_XTB_SET(type: int) -> int:  # pylint: disable=redefined-builtin
    """Encode a time scale (PM_TIME_*) into the pmSetMode mode argument."""
    return _to_int32(PM_XTB_FLAG | (_c_int(type) << 16))


def PM_XTB_GET(mode: int) -> int:
    """Return the time scale encoded by PM_XTB_SET, or -1 when none is set."""
    mode = _c_int(mode)
    if mode & PM_XTB_FLAG:
        return (mode & 0xFF0000) >> 16
    return -1


# ---------------------------------------------------------------------------
# pmUnits packing
# ---------------------------------------------------------------------------
def pmUnits_int(dimSpace: int, dimTime: int, dimCount: int,
                scaleSpace: int, scaleTime: int, scaleCount: int) -> int:
    """Pack the six pmUnits fields into the signed 32-bit word libpcp uses.

    Each field is a 4-bit two's complement bit-field (values wrap modulo
    16).  From the most significant nibble down: dimSpace, dimTime,
    dimCount, scaleSpace, scaleTime, scaleCount; the low 8 bits are padding.
    """
    word = 0
    for field in (dimSpace, dimTime, dimCount, scaleSpace, scaleTime, scaleCount):
        word = (word << 4) | (_operator.index(field) & 0xF)
    return _to_int32(word << 8)


# ---------------------------------------------------------------------------
# Time conversions
# ---------------------------------------------------------------------------
def _round_significand(value: _Fraction, bits: int) -> _Fraction:
    """Round to the nearest number with ``bits`` significant bits (ties to even)."""
    if value == 0:
        return value
    magnitude = abs(value)
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if _Fraction(2) ** exponent > magnitude:
        exponent -= 1
    scale = _Fraction(2) ** (bits - 1 - exponent)
    rounded = _Fraction(round(magnitude * scale)) / scale
    return rounded if value > 0 else -rounded


def _seconds_to_real(seconds: int, fraction: int, per_second: int) -> float:
    """libpcp's ``tv_sec + (long double)frac / (long double)per_second``.

    The division and the addition happen in x86 extended precision (64-bit
    significand) and the sum is then rounded to a double; doing the same
    roundings here keeps every result bit-identical with libpcp.
    """
    if fraction == 0:
        return float(seconds)
    quotient = _round_significand(_Fraction(fraction, per_second), _LONG_DOUBLE_BITS)
    total = _round_significand(seconds + quotient, _LONG_DOUBLE_BITS)
    return total.numerator / total.denominator  # correctly rounded to double


def pmtimevalToReal(seconds: int, useconds: int) -> float:
    """Seconds plus microseconds as a float number of seconds."""
    return _seconds_to_real(_c_long_long(seconds), _c_long(useconds), 1000000)


def pmtimespecToReal(seconds: int, nanoseconds: int) -> float:
    """Seconds plus nanoseconds as a float number of seconds."""
    return _seconds_to_real(_c_long_long(seconds), _c_long(nanoseconds), 1000000000)


class _StructTm(_ctypes.Structure):
    """glibc's struct tm on LP64 Linux."""

    _fields_ = [
        ("tm_sec", _ctypes.c_int),
        ("tm_min", _ctypes.c_int),
        ("tm_hour", _ctypes.c_int),
        ("tm_mday", _ctypes.c_int),
        ("tm_mon", _ctypes.c_int),
        ("tm_year", _ctypes.c_int),
        ("tm_wday", _ctypes.c_int),
        ("tm_yday", _ctypes.c_int),
        ("tm_isdst", _ctypes.c_int),
        ("tm_gmtoff", _ctypes.c_long),
        ("tm_zone", _ctypes.c_char_p),
    ]


_libc_mktime = None


def _load_mktime():
    """Return the C library's mktime, or None when it cannot be loaded."""
    global _libc_mktime  # pylint: disable=global-statement
    if _libc_mktime is None:
        func = None
        try:
            if _sys.platform.startswith("linux"):
                libc = _ctypes.CDLL(_ctypes_util.find_library("c") or "libc.so.6")
                func = libc.mktime
                func.argtypes = [_ctypes.POINTER(_StructTm)]
                func.restype = _ctypes.c_long
        except (OSError, AttributeError):
            func = None
        _libc_mktime = func if func is not None else False
    return _libc_mktime or None


def pmMktime(tm_sec: int, tm_min: int, tm_hour: int, tm_mday: int,
             tm_mon: int, tm_year: int, tm_wday: int, tm_yday: int,
             tm_isdst: int, tm_gmtoff: int, tm_zone: str) -> int:
    """Convert broken-down local time (C struct tm conventions) to seconds.

    Fields follow C: ``tm_year`` counts from 1900 and ``tm_mon`` from 0.
    Out-of-range fields are normalised as mktime(3) does; tm_wday, tm_yday,
    tm_gmtoff and tm_zone are accepted but do not affect the result.  The
    local timezone is the process's (TZ).
    """
    fields = [_c_int(v) for v in (tm_sec, tm_min, tm_hour, tm_mday, tm_mon,
                                   tm_year, tm_wday, tm_yday, tm_isdst)]
    gmtoff = _c_long(tm_gmtoff)
    if not isinstance(tm_zone, str):
        kind = "None" if tm_zone is None else type(tm_zone).__name__
        raise TypeError("pmMktime() argument 11 must be str, not %s" % kind)
    if "\0" in tm_zone:
        raise ValueError("embedded null character")
    mktime = _load_mktime()
    if mktime is not None:
        tm = _StructTm(*fields, gmtoff, tm_zone.encode("utf-8"))
        return int(mktime(_ctypes.byref(tm)))
    # Portable fallback: the time module's mktime takes Python conventions.
    sec, mnt, hour, mday, mon, year, wday, yday, isdst = fields
    try:
        return int(_time.mktime((year + 1900, mon + 1, mday, hour, mnt, sec,
                                 (wday + 6) % 7, yday + 1, isdst)))
    except (OverflowError, ValueError):
        return -1
