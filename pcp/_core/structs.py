"""ctypes structures mirroring those exposed by the official ``pcp.pmapi``.

The official binding declares these structures so that they can be handed to
libpcp; we never call libpcp, but applications poke at the same fields, pass
the structures around, cast pointers and take ``sizeof``, so names, field
order, C types and bitfield layouts must match the reference exactly.

Only little-endian bitfield order is exercised on our test hosts; the
big-endian branch follows the C headers' MSB-first declaration order.
"""

from __future__ import annotations

import ctypes
import math
import time
from ctypes import (POINTER, Structure, Union, addressof, c_char, c_char_p, c_double, c_float,
                    c_int, c_int32, c_int64, c_long, c_uint, c_uint32, c_uint64, c_void_p)

from pcp._core.constants import (PM_LOG_MAXHOSTLEN, PM_MAX_HOSTNAMELEN,  # noqa: E402
                                 PM_MAX_TIMEZONELEN, PM_MAX_ZONEINFOLEN, PM_TYPE_32, PM_TYPE_64,
                                 PM_TYPE_AGGREGATE, PM_TYPE_AGGREGATE_STATIC, PM_TYPE_DOUBLE,
                                 PM_TYPE_EVENT, PM_TYPE_FLOAT, PM_TYPE_HIGHRES_EVENT,
                                 PM_TYPE_NOSUPPORT, PM_TYPE_STRING, PM_TYPE_U32, PM_TYPE_U64,
                                 PM_TYPE_UNKNOWN, PM_TZ_MAXLEN)
# --------------------------------------------------------------------------
# Constants come from pcp._core.constants, the one table of PMAPI values.
from pcp._core.errors import pmErr
from pcp._core.level import API_LEVEL
from pcp._core.intervals import IntervalError, interval_timespec, interval_timeval
from pcp._core.longdouble import timespec_to_real, timeval_to_real
from pcp._core.units import BITFIELDS_LTOR, pmUnits, units_from_int, units_to_int  # noqa: F401

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, Union as _TUnion

# time_t and suseconds_t are both 64-bit on every LP64 Linux; on 32-bit
# hosts they follow the size of a C long (old ABI) which is what we mirror.
c_time_t = c_int64 if ctypes.sizeof(c_long) == 8 else c_long
c_suseconds_t = c_int64 if ctypes.sizeof(c_long) == 8 else c_long


def _parse(interval: Any, parse: Any) -> Any:
    text = interval.decode("utf-8") if isinstance(interval, bytes) else interval
    try:
        return parse(text)
    except IntervalError as e:
        raise pmErr(-1, e.message) from None


class timeval(Structure):
    """struct timeval, with the float/int/str conveniences of the reference."""

    _fields_ = [("tv_sec", c_time_t),
                ("tv_usec", c_suseconds_t)]

    def __init__(self, sec: int = 0, usec: int = 0) -> None:
        Structure.__init__(self, sec, usec)     # the fields set in C

    def __str__(self) -> str:
        return "%.3f" % timeval_to_real(self.tv_sec, self.tv_usec)

    def __float__(self) -> float:
        return float(timeval_to_real(self.tv_sec, self.tv_usec))

    def __complex__(self) -> complex:
        return complex(timeval_to_real(self.tv_sec, self.tv_usec))

    def __index__(self) -> int:
        return int(self.tv_sec)

    def __int__(self) -> int:
        return int(self.tv_sec)

    @classmethod
    def fromInterval(cls, interval: Any) -> "timeval":
        """A timeval from an interval specification, as pmParseInterval reads it
        ("10", "1.5 sec", "2min 30s"); pmErr(-1, libpcp's message) when it is bad."""
        return cls(*_parse(interval, interval_timeval))

    def sleep(self) -> None:
        """Block for the interval this timeval describes (none at all when it is zero or
        negative, as nanosleep(2) returns at once for those: an archive replay's pause
        is zero and should cost no system call)."""
        seconds = float(self)
        if seconds > 0:
            time.sleep(seconds)


class timespec(Structure):
    """struct timespec, with the float/int/str conveniences of the reference."""

    _fields_ = [("tv_sec", c_time_t),
                ("tv_nsec", c_long)]

    def __init__(self, sec: int = 0, nsec: int = 0) -> None:
        Structure.__init__(self, sec, nsec)     # the fields set in C

    def __str__(self) -> str:
        return "%.3f" % timespec_to_real(self.tv_sec, self.tv_nsec)

    def __float__(self) -> float:
        return float(timespec_to_real(self.tv_sec, self.tv_nsec))

    def __complex__(self) -> complex:
        return complex(timespec_to_real(self.tv_sec, self.tv_nsec))

    def __index__(self) -> int:
        return int(self.tv_sec)

    def __int__(self) -> int:
        return int(self.tv_sec)

    @classmethod
    def fromInterval(cls, interval: Any) -> "timespec":
        """A timespec from an interval specification, as pmParseHighResInterval reads
        it; pmErr(-1, libpcp's message) when it is bad."""
        return cls(*_parse(interval, interval_timespec))

    def sleep(self) -> None:
        """Block for the interval this timespec describes (see timeval.sleep)."""
        seconds = float(self)
        if seconds > 0:
            time.sleep(seconds)



# ---- PCP 6.3's constructors: a float or a datetime alone is a time -------------------
_EPOCH = None


def _seconds_of(value: Any) -> Any:
    """A datetime as float seconds since 1970-01-01 (naive: UTC), as 6.3's constructors
    take it; anything else as it is."""
    global _EPOCH
    import datetime

    if isinstance(value, datetime.datetime):
        if _EPOCH is None:
            _EPOCH = datetime.datetime(1970, 1, 1)   # 6.3's datetime.utcfromtimestamp(0)
        return float((value - _EPOCH).total_seconds())
    return value


def _timeval_init_63(self: timeval, sec: Any = 0, usec: Any = None) -> None:
    if usec is None:
        sec = _seconds_of(sec)
        if isinstance(sec, float):
            fraction, sec = math.modf(sec)
            usec = fraction * 1000000
        else:
            usec = 0
    Structure.__init__(self, int(sec), int(usec))


def _timespec_init_63(self: timespec, sec: Any = 0, nsec: Any = None) -> None:
    if nsec is None:
        sec = _seconds_of(sec)
        if isinstance(sec, float):
            fraction, whole = math.modf(sec)
            sec, nsec = int(whole), int(fraction * 1000000000)
        else:
            nsec = 0
    Structure.__init__(self, sec, nsec)


if API_LEVEL >= (6, 3):
    timeval.__init__ = _timeval_init_63      # type: ignore[method-assign]
    timespec.__init__ = _timespec_init_63    # type: ignore[method-assign]

class tm(Structure):
    """struct tm including the glibc/BSD tm_gmtoff and tm_zone extensions."""

    _fields_ = [("tm_sec", c_int),
                ("tm_min", c_int),
                ("tm_hour", c_int),
                ("tm_mday", c_int),
                ("tm_mon", c_int),
                ("tm_year", c_int),
                ("tm_wday", c_int),
                ("tm_yday", c_int),
                ("tm_isdst", c_int),
                ("tm_gmtoff", c_long),
                ("tm_zone", c_char_p)]

    def struct_time(self) -> time.struct_time:
        # POSIX counts weekdays from Sunday and yday from 0; Python counts
        # weekdays from Monday and yday from 1.  The reference maps wday by
        # subtracting one (Sunday -> 6) and subtracts one from yday (6.0.3;
        # 6.3 adds one, as Python counts), and we keep exactly that mapping.
        wday = self.tm_wday - 1
        if wday < 0:
            wday = 6
        return time.struct_time([self.tm_year + 1900, self.tm_mon + 1,
                                 self.tm_mday, self.tm_hour, self.tm_min,
                                 self.tm_sec, wday, self.tm_yday + _YDAY_SHIFT,
                                 self.tm_isdst])

    def __str__(self) -> str:
        # The reference normalises the fields with mktime(3) in the local
        # zone and prints the resulting instant with ctime(3) (minus the
        # newline).  time.mktime/time.asctime are thin wrappers of the same
        # C library calls.
        stamp = time.mktime((self.tm_year + 1900, self.tm_mon + 1,
                             self.tm_mday, self.tm_hour, self.tm_min,
                             self.tm_sec, (self.tm_wday + 6) % 7,
                             self.tm_yday + 1, self.tm_isdst))
        return time.asctime(time.localtime(int(stamp))).rstrip()


class pmAtomValue(Union):
    """One metric value of any PM_TYPE_* (the C pmAtomValue union).

    Aggregates produced by :func:`pcp._libpcp.values.extract_value` additionally
    carry the payload as a Python ``bytes`` object in the ``aggregate``
    attribute; ``vp`` then points at a private copy of the whole value block
    (header word in host order followed by the payload), as libpcp would.
    """

    _fields_ = [("l", c_int32),
                ("ul", c_uint32),
                ("ll", c_int64),
                ("ull", c_uint64),
                ("f", c_float),
                ("d", c_double),
                ("cp", c_char_p),
                ("vp", c_void_p)]

    # Which union member holds the value for each type; types without a
    # Python representation (aggregates, events, ...) dereference to None.
    _atomDrefD = {
        PM_TYPE_32: lambda a: a.l,
        PM_TYPE_U32: lambda a: a.ul,
        PM_TYPE_64: lambda a: a.ll,
        PM_TYPE_U64: lambda a: a.ull,
        PM_TYPE_FLOAT: lambda a: a.f,
        PM_TYPE_DOUBLE: lambda a: a.d,
        PM_TYPE_STRING: lambda a: a.cp,
        PM_TYPE_AGGREGATE: lambda a: None,
        PM_TYPE_AGGREGATE_STATIC: lambda a: None,
        PM_TYPE_EVENT: lambda a: None,
        PM_TYPE_HIGHRES_EVENT: lambda a: None,
        PM_TYPE_NOSUPPORT: lambda a: None,
        PM_TYPE_UNKNOWN: lambda a: None,
    }

    def dref(self, typed: int) -> Any:
        """Return the value as a Python object according to *typed*.

        Strings come back as ``str`` (UTF-8 decoded; undecodable bytes give
        ``str(bytes)``, and a NULL pointer gives ``'None'``, like the
        reference).  Unknown type codes raise KeyError, also like the
        reference.
        """
        value = self._atomDrefD[typed](self)
        if typed == PM_TYPE_STRING:
            try:
                value = str(value.decode("utf-8"))
            except Exception:
                value = str(value)
        return value


class pmValueBlock(Structure):
    """Header of an out-of-line value: 24-bit length, 8-bit type, payload."""

    if BITFIELDS_LTOR:
        _fields_ = [("vtype", c_uint, 8),
                    ("vlen", c_uint, 24),
                    ("vbuf", c_char * 1)]
    else:
        _fields_ = [("vlen", c_uint, 24),
                    ("vtype", c_uint, 8),
                    ("vbuf", c_char * 1)]


pmID = c_uint
pmInDom = c_uint


class pmDesc(Structure):
    """Metric descriptor."""

    _fields_ = [("pmid", c_uint),
                ("type", c_int),
                ("indom", c_uint),
                ("sem", c_int),
                ("units", pmUnits)]

    def __str__(self) -> str:
        return "pmDesc@%#lx id=%#lx type=%d" % (addressof(self), self.pmid,
                                               self.type)


pmDescPtr = POINTER(pmDesc)
# Applications read descriptor fields straight off the pointer objects that
# pmLookupDesc(s) return, so the pointer type grows read-only properties.
pmDescPtr.sem = property(lambda x: x.contents.sem, None, None, None)
pmDescPtr.type = property(lambda x: x.contents.type, None, None, None)
pmDescPtr.indom = property(lambda x: x.contents.indom, None, None, None)
pmDescPtr.units = property(lambda x: x.contents.units, None, None, None)


def get_indom(pmdesc: _TUnion["pmDescPtr", pmDesc, int]) -> int:
    """Return the instance domain of a descriptor pointer, or a raw indom.

    The reference also tries to accept a raw indom here, but its union trick
    rejects Python ints with TypeError; we accept ints (masked to 32 bits)
    and plain pmDesc structures as well.
    """
    if isinstance(pmdesc, pmDescPtr):
        return pmdesc.contents.indom
    if isinstance(pmdesc, pmDesc):
        return pmdesc.indom
    if pmdesc is None:
        # A NULL pointer reinterpreted as an unsigned int is 0 in the
        # reference; keep that.
        return 0
    if isinstance(pmdesc, int):
        return pmdesc & 0xFFFFFFFF
    raise TypeError("expected LP_pmDesc instance, got %s"
                    % type(pmdesc).__name__)


class pmLogLabel(Structure):
    """Label record at the start of every version 2 archive file."""

    _fields_ = [("magic", c_int),
                ("pid_t", c_int),
                ("start", timeval),
                ("hostname", c_char * PM_LOG_MAXHOSTLEN),
                ("tz", c_char * PM_TZ_MAXLEN)]

    def get_hostname(self) -> str:
        return str(self.hostname.decode())

    def get_timezone(self) -> str:
        return str(self.tz.decode())


class pmHighResLogLabel(Structure):
    """Label record at the start of every version 3 archive file."""

    _fields_ = [("magic", c_int),
                ("pid_t", c_int),
                ("start", timespec),
                ("hostname", c_char * PM_MAX_HOSTNAMELEN),
                ("timezone", c_char * PM_MAX_TIMEZONELEN),
                ("zoneinfo", c_char * PM_MAX_ZONEINFOLEN)]

    def get_hostname(self) -> str:
        return str(self.hostname.decode())

    def get_timezone(self) -> str:
        return str(self.timezone.decode())

    def get_zoneinfo(self) -> str:
        return str(self.zoneinfo.decode())


class pmLabel(Structure):
    """One label: offsets/lengths of its name and value in the JSON text."""

    _fields_ = [("name", c_int, 16),
                ("namelen", c_int, 8),
                ("flags", c_int, 8),
                ("value", c_int, 16),
                ("valuelen", c_int, 16)]

    def __str__(self) -> str:
        # name/value are integer offsets, so the reference's string
        # concatenation always raises TypeError; we keep that behaviour
        # rather than invent a format nobody can rely on.
        return self.name + ":" + '"' + self.value + '"'


pmLabelPtr = POINTER(pmLabel)
pmLabelPtr.name = property(lambda x: x.contents.name, None, None, None)
pmLabelPtr.namelen = property(lambda x: x.contents.namelen, None, None, None)
pmLabelPtr.flags = property(lambda x: x.contents.flags, None, None, None)
pmLabelPtr.value = property(lambda x: x.contents.value, None, None, None)
pmLabelPtr.valuelen = property(lambda x: x.contents.valuelen, None, None, None)


class pmLabelSet(Structure):
    """A set of labels for one instance (or none) plus their JSON text."""

    _fields_ = [("inst", c_uint),
                ("nlabels", c_int),
                ("json", c_char_p),
                ("jsonlen", c_int, 16),
                ("padding", c_int, 15),
                ("compound", c_int, 1),
                ("labels", POINTER(pmLabel)),
                ("hash", c_void_p)]

    def __str__(self) -> str:
        if self.json is None:
            return "{}"
        return self.json.decode()


__all__ = [
    "timeval", "timespec", "tm", "pmAtomValue", "pmUnits", "pmValueBlock",
    "pmID", "pmInDom", "pmDesc", "pmDescPtr", "get_indom", "pmLogLabel",
    "pmHighResLogLabel", "pmLabel", "pmLabelPtr", "pmLabelSet",
    "timeval_to_real", "timespec_to_real", "units_to_int", "units_from_int",
]


#: tm.struct_time's yday from tm_yday: 6.0.3 subtracts one, 6.3 adds one
_YDAY_SHIFT = 1 if API_LEVEL >= (6, 3) else -1

