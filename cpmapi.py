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

# ---------------------------------------------------------------------------
# Build / ABI facts (x86_64 Linux, little-endian bit-field allocation)
# ---------------------------------------------------------------------------
HAVE_BITFIELDS_LTOR = 0
HAVE_BITFIELDS_RTOL = 1
PM_SIZEOF_SUSECONDS_T = 8
PM_SIZEOF_TIME_T = 8

# ---------------------------------------------------------------------------
# PMAPI versions
# ---------------------------------------------------------------------------
PMAPI_VERSION_2 = 2
PMAPI_VERSION_3 = 3
PMAPI_VERSION = PMAPI_VERSION_3

# ---------------------------------------------------------------------------
# Null identifiers (all bits set in a 32-bit word)
# ---------------------------------------------------------------------------
PM_ID_NULL = 0xFFFFFFFF
PM_INDOM_NULL = 0xFFFFFFFF
PM_IN_NULL = 0xFFFFFFFF

# ---------------------------------------------------------------------------
# Namespace (PMNS) locations and node status
# ---------------------------------------------------------------------------
PM_NS_DEFAULT = 0
PMNS_LOCAL = 1
PMNS_REMOTE = 2
PMNS_ARCHIVE = 3
PMNS_LEAF_STATUS = 0
PMNS_NONLEAF_STATUS = 1

# ---------------------------------------------------------------------------
# Metric value types (pmDesc.type)
# ---------------------------------------------------------------------------
PM_TYPE_NOSUPPORT = -1
PM_TYPE_32 = 0
PM_TYPE_U32 = 1
PM_TYPE_64 = 2
PM_TYPE_U64 = 3
PM_TYPE_FLOAT = 4
PM_TYPE_DOUBLE = 5
PM_TYPE_STRING = 6
PM_TYPE_AGGREGATE = 7
PM_TYPE_AGGREGATE_STATIC = 8
PM_TYPE_EVENT = 9
PM_TYPE_HIGHRES_EVENT = 10
PM_TYPE_UNKNOWN = 255

# ---------------------------------------------------------------------------
# Metric semantics (pmDesc.sem)
# ---------------------------------------------------------------------------
PM_SEM_COUNTER = 1
PM_SEM_INSTANT = 3
PM_SEM_DISCRETE = 4

# ---------------------------------------------------------------------------
# Units: space scale, time scale, count scale (pmUnits fields)
# ---------------------------------------------------------------------------
PM_SPACE_BYTE = 0
PM_SPACE_KBYTE = 1
PM_SPACE_MBYTE = 2
PM_SPACE_GBYTE = 3
PM_SPACE_TBYTE = 4
PM_SPACE_PBYTE = 5
PM_SPACE_EBYTE = 6
PM_SPACE_ZBYTE = 7
PM_SPACE_YBYTE = 8

PM_TIME_NSEC = 0
PM_TIME_USEC = 1
PM_TIME_MSEC = 2
PM_TIME_SEC = 3
PM_TIME_MIN = 4
PM_TIME_HOUR = 5

PM_COUNT_ONE = 0

# ---------------------------------------------------------------------------
# Context types and context flags (pmNewContext)
# ---------------------------------------------------------------------------
PM_CONTEXT_UNDEF = -1
PM_CONTEXT_HOST = 1
PM_CONTEXT_ARCHIVE = 2
PM_CONTEXT_LOCAL = 3
PM_CONTEXT_TYPEMASK = 0xFF

PM_CTXFLAG_EXCLUSIVE = 1 << 9
PM_CTXFLAG_SECURE = 1 << 10
PM_CTXFLAG_COMPRESS = 1 << 11
PM_CTXFLAG_RELAXED = 1 << 12

# ---------------------------------------------------------------------------
# Archive time-travel modes (pmSetMode) and the extended time base flag
# ---------------------------------------------------------------------------
PM_MODE_LIVE = 0
PM_MODE_INTERP = 1
PM_MODE_FORW = 2
PM_MODE_BACK = 3

PM_XTB_FLAG = 0x1000000

# ---------------------------------------------------------------------------
# Help and one-line text requests (pmLookupText / pmLookupInDomText)
# ---------------------------------------------------------------------------
PM_TEXT_ONELINE = 1
PM_TEXT_HELP = 2
PM_TEXT_PMID = 4
PM_TEXT_INDOM = 8
PM_TEXT_DIRECT = 16

# ---------------------------------------------------------------------------
# Metric labels
# ---------------------------------------------------------------------------
PM_LABEL_CONTEXT = 1 << 0
PM_LABEL_DOMAIN = 1 << 1
PM_LABEL_INDOM = 1 << 2
PM_LABEL_CLUSTER = 1 << 3
PM_LABEL_ITEM = 1 << 4
PM_LABEL_INSTANCES = 1 << 5
PM_LABEL_OPTIONAL = 1 << 7
PM_MAXLABELS = 255
PM_MAXLABELJSONLEN = 65535

# ---------------------------------------------------------------------------
# Value encodings inside a pmValueSet (valfmt) and pmValueBlock header
# ---------------------------------------------------------------------------
PM_VAL_INSITU = 0
PM_VAL_DPTR = 1
PM_VAL_SPTR = 2
PM_VAL_HDR_SIZE = 4
PM_VAL_VLEN_MAX = 0xFFFFFF

# ---------------------------------------------------------------------------
# Event record flags
# ---------------------------------------------------------------------------
PM_EVENT_FLAG_POINT = 1 << 0
PM_EVENT_FLAG_START = 1 << 1
PM_EVENT_FLAG_END = 1 << 2
PM_EVENT_FLAG_ID = 1 << 3
PM_EVENT_FLAG_PARENT = 1 << 4
PM_EVENT_FLAG_MISSED = 1 << 31

# ---------------------------------------------------------------------------
# PMCD state-change flags (reported in pmResult numpmid / pmcd.*)
# ---------------------------------------------------------------------------
PMCD_NO_CHANGE = 0
PMCD_ADD_AGENT = 1 << 0
PMCD_RESTART_AGENT = 1 << 1
PMCD_DROP_AGENT = 1 << 2
PMCD_AGENT_CHANGE = PMCD_ADD_AGENT | PMCD_RESTART_AGENT | PMCD_DROP_AGENT
PMCD_LABEL_CHANGE = 1 << 3
PMCD_NAMES_CHANGE = 1 << 4

# ---------------------------------------------------------------------------
# Archive files
# ---------------------------------------------------------------------------
PM_LOG_MAGIC = 0x50052600
PM_LOG_VERS02 = 2
PM_LOG_VERS03 = 3
PM_LOG_VOL_TI = -2
PM_LOG_VOL_META = -1
PM_LOG_MAXHOSTLEN = 64

# ---------------------------------------------------------------------------
# Size limits
# ---------------------------------------------------------------------------
PM_MAXERRMSGLEN = 128
PM_MAX_HOSTNAMELEN = 256
PM_MAX_TIMEZONELEN = 256
PM_MAX_ZONEINFOLEN = 256
PM_TZ_MAXLEN = 40

# ---------------------------------------------------------------------------
# Debug bits reserved for applications
# ---------------------------------------------------------------------------
PM_DEBUG_APPL0 = 1 << 11
PM_DEBUG_APPL1 = 1 << 12
PM_DEBUG_APPL2 = 1 << 13

# ---------------------------------------------------------------------------
# Command line option flags (pmOptions.flags)
# ---------------------------------------------------------------------------
PM_OPTFLAG_INIT = 1 << 0
PM_OPTFLAG_DONE = 1 << 1
PM_OPTFLAG_MULTI = 1 << 2
PM_OPTFLAG_USAGE_ERR = 1 << 3
PM_OPTFLAG_RUNTIME_ERR = 1 << 4
PM_OPTFLAG_EXIT = 1 << 5
PM_OPTFLAG_POSIX = 1 << 6
PM_OPTFLAG_MIXED = 1 << 7
PM_OPTFLAG_ENV_ONLY = 1 << 8
PM_OPTFLAG_LONG_ONLY = 1 << 9
PM_OPTFLAG_BOUNDARIES = 1 << 10
PM_OPTFLAG_STDOUT_TZ = 1 << 11
PM_OPTFLAG_NOFLUSH = 1 << 12
PM_OPTFLAG_QUIET = 1 << 13

# ---------------------------------------------------------------------------
# Error codes (negative; PM_ERR_BASE is 12345)
# ---------------------------------------------------------------------------
PM_ERR_GENERIC = -12345
PM_ERR_PMNS = -12346
PM_ERR_NOPMNS = -12347
PM_ERR_DUPPMNS = -12348
PM_ERR_TEXT = -12349
PM_ERR_APPVERSION = -12350
PM_ERR_VALUE = -12351
PM_ERR_TIMEOUT = -12353
PM_ERR_NODATA = -12354
PM_ERR_RESET = -12355
PM_ERR_NAME = -12357
PM_ERR_PMID = -12358
PM_ERR_INDOM = -12359
PM_ERR_INST = -12360
PM_ERR_UNIT = -12361
PM_ERR_CONV = -12362
PM_ERR_TRUNC = -12363
PM_ERR_SIGN = -12364
PM_ERR_PROFILE = -12365
PM_ERR_IPC = -12366
PM_ERR_EOF = -12368
PM_ERR_NOTHOST = -12369
PM_ERR_EOL = -12370
PM_ERR_MODE = -12371
PM_ERR_LABEL = -12372
PM_ERR_LOGREC = -12373
PM_ERR_NOTARCHIVE = -12374
PM_ERR_LOGFILE = -12375
PM_ERR_NOCONTEXT = -12376
PM_ERR_PROFILESPEC = -12377
PM_ERR_PMID_LOG = -12378
PM_ERR_INDOM_LOG = -12379
PM_ERR_INST_LOG = -12380
PM_ERR_NOPROFILE = -12381
PM_ERR_NOAGENT = -12386
PM_ERR_PERMISSION = -12387
PM_ERR_CONNLIMIT = -12388
PM_ERR_AGAIN = -12389
PM_ERR_ISCONN = -12390
PM_ERR_NOTCONN = -12391
PM_ERR_NEEDPORT = -12392
PM_ERR_NONLEAF = -12394
PM_ERR_TYPE = -12397
PM_ERR_THREAD = -12398
PM_ERR_NOCONTAINER = -12399
PM_ERR_BADSTORE = -12400
PM_ERR_LOGOVERLAP = -12401
PM_ERR_LOGHOST = -12402
PM_ERR_LOGCHANGETYPE = -12404
PM_ERR_LOGCHANGESEM = -12405
PM_ERR_LOGCHANGEINDOM = -12406
PM_ERR_LOGCHANGEUNITS = -12407
PM_ERR_NEEDCLIENTCERT = -12408
PM_ERR_BADDERIVE = -12409
PM_ERR_NOLABELS = -12410
PM_ERR_PMDAFENCED = -12411
PM_ERR_RECTYPE = -12412
PM_ERR_FEATURE = -12413
PM_ERR_TLS = -12414
PM_ERR_BOTCH = -12442
PM_ERR_TOOSMALL = -12443
PM_ERR_TOOBIG = -12444
PM_ERR_FAULT = -12445
PM_ERR_PMDAREADY = -13393
PM_ERR_PMDANOTREADY = -13394
PM_ERR_NYI = -21344

# Error code -> symbolic name (same entries, and same insertion order, as the
# official module's dictionary).
pmErrSymDict = {
    PM_ERR_GENERIC: "PM_ERR_GENERIC",
    PM_ERR_PMNS: "PM_ERR_PMNS",
    PM_ERR_NOPMNS: "PM_ERR_NOPMNS",
    PM_ERR_DUPPMNS: "PM_ERR_DUPPMNS",
    PM_ERR_TEXT: "PM_ERR_TEXT",
    PM_ERR_APPVERSION: "PM_ERR_APPVERSION",
    PM_ERR_VALUE: "PM_ERR_VALUE",
    PM_ERR_TIMEOUT: "PM_ERR_TIMEOUT",
    PM_ERR_NODATA: "PM_ERR_NODATA",
    PM_ERR_RESET: "PM_ERR_RESET",
    PM_ERR_NAME: "PM_ERR_NAME",
    PM_ERR_PMID: "PM_ERR_PMID",
    PM_ERR_INDOM: "PM_ERR_INDOM",
    PM_ERR_INST: "PM_ERR_INST",
    PM_ERR_TYPE: "PM_ERR_TYPE",
    PM_ERR_UNIT: "PM_ERR_UNIT",
    PM_ERR_CONV: "PM_ERR_CONV",
    PM_ERR_TRUNC: "PM_ERR_TRUNC",
    PM_ERR_SIGN: "PM_ERR_SIGN",
    PM_ERR_PROFILE: "PM_ERR_PROFILE",
    PM_ERR_IPC: "PM_ERR_IPC",
    PM_ERR_EOF: "PM_ERR_EOF",
    PM_ERR_NOTHOST: "PM_ERR_NOTHOST",
    PM_ERR_EOL: "PM_ERR_EOL",
    PM_ERR_MODE: "PM_ERR_MODE",
    PM_ERR_LABEL: "PM_ERR_LABEL",
    PM_ERR_LOGREC: "PM_ERR_LOGREC",
    PM_ERR_LOGFILE: "PM_ERR_LOGFILE",
    PM_ERR_NOTARCHIVE: "PM_ERR_NOTARCHIVE",
    PM_ERR_NOCONTEXT: "PM_ERR_NOCONTEXT",
    PM_ERR_PROFILESPEC: "PM_ERR_PROFILESPEC",
    PM_ERR_PMID_LOG: "PM_ERR_PMID_LOG",
    PM_ERR_INDOM_LOG: "PM_ERR_INDOM_LOG",
    PM_ERR_INST_LOG: "PM_ERR_INST_LOG",
    PM_ERR_NOPROFILE: "PM_ERR_NOPROFILE",
    PM_ERR_NOAGENT: "PM_ERR_NOAGENT",
    PM_ERR_PERMISSION: "PM_ERR_PERMISSION",
    PM_ERR_CONNLIMIT: "PM_ERR_CONNLIMIT",
    PM_ERR_AGAIN: "PM_ERR_AGAIN",
    PM_ERR_ISCONN: "PM_ERR_ISCONN",
    PM_ERR_NOTCONN: "PM_ERR_NOTCONN",
    PM_ERR_NEEDPORT: "PM_ERR_NEEDPORT",
    PM_ERR_NONLEAF: "PM_ERR_NONLEAF",
    PM_ERR_PMDAREADY: "PM_ERR_PMDAREADY",
    PM_ERR_PMDANOTREADY: "PM_ERR_PMDANOTREADY",
    PM_ERR_BOTCH: "PM_ERR_BOTCH",
    PM_ERR_TOOSMALL: "PM_ERR_TOOSMALL",
    PM_ERR_TOOBIG: "PM_ERR_TOOBIG",
    PM_ERR_FAULT: "PM_ERR_FAULT",
    PM_ERR_THREAD: "PM_ERR_THREAD",
    PM_ERR_NOCONTAINER: "PM_ERR_NOCONTAINER",
    PM_ERR_BADSTORE: "PM_ERR_BADSTORE",
    PM_ERR_LOGOVERLAP: "PM_ERR_LOGOVERLAP",
    PM_ERR_LOGHOST: "PM_ERR_LOGHOST",
    PM_ERR_LOGCHANGETYPE: "PM_ERR_LOGCHANGETYPE",
    PM_ERR_LOGCHANGESEM: "PM_ERR_LOGCHANGESEM",
    PM_ERR_LOGCHANGEINDOM: "PM_ERR_LOGCHANGEINDOM",
    PM_ERR_LOGCHANGEUNITS: "PM_ERR_LOGCHANGEUNITS",
    PM_ERR_NEEDCLIENTCERT: "PM_ERR_NEEDCLIENTCERT",
    PM_ERR_BADDERIVE: "PM_ERR_BADDERIVE",
    PM_ERR_NOLABELS: "PM_ERR_NOLABELS",
    PM_ERR_PMDAFENCED: "PM_ERR_PMDAFENCED",
    PM_ERR_RECTYPE: "PM_ERR_RECTYPE",
    PM_ERR_FEATURE: "PM_ERR_FEATURE",
    PM_ERR_TLS: "PM_ERR_TLS",
    PM_ERR_NYI: "PM_ERR_NYI",
}

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

# ---------------------------------------------------------------------------
# Argument conversion helpers.  The official module parses its arguments
# with CPython's PyArg_ParseTuple codes; these reproduce the same accepted
# types, range checks and exception messages.
# ---------------------------------------------------------------------------
_INT_MIN = -(1 << 31)
_INT_MAX = (1 << 31) - 1
_LONG_MIN = -(1 << 63)
_LONG_MAX = (1 << 63) - 1
_LONG_DOUBLE_BITS = 64  # significand of the x86 80-bit long double


def _c_int(value: int) -> int:
    """Like the "i" code: an integer that must fit a C int."""
    number = _operator.index(value)
    if not _LONG_MIN <= number <= _LONG_MAX:
        # CPython reads the value as a C long before the int range check.
        raise OverflowError("Python int too large to convert to C long")
    if number > _INT_MAX:
        raise OverflowError("signed integer is greater than maximum")
    if number < _INT_MIN:
        raise OverflowError("signed integer is less than minimum")
    return number


def _c_long(value: int) -> int:
    """Like the "l" code: an integer that must fit a C long (64 bits)."""
    number = _operator.index(value)
    if not _LONG_MIN <= number <= _LONG_MAX:
        raise OverflowError("Python int too large to convert to C long")
    return number


def _c_long_long(value: int) -> int:
    """Like the "L" code: an integer that must fit a C long long."""
    number = _operator.index(value)
    if not _LONG_MIN <= number <= _LONG_MAX:
        raise OverflowError("int too big to convert")
    return number


def _to_int32(number: int) -> int:
    """Reinterpret the low 32 bits of ``number`` as a signed C int."""
    number &= 0xFFFFFFFF
    return number - (1 << 32) if number & 0x80000000 else number


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


# ---------------------------------------------------------------------------
# Usage message
# ---------------------------------------------------------------------------
def pmUsageMessage() -> None:
    """Write the usage message (after any pmprintf'd text) to stderr.

    Without a configured pmOptions structure this is the bare
    "Usage: <progname> [options]" line libpcp produces.
    """
    # Imported here: pcp._core.errors imports this module.
    from pcp._core import errors as _errors  # pylint: disable=import-outside-toplevel
    _errors.pmprintf("Usage: %s [options]\n" % _errors.pmGetProgname())
    _errors.pmflush()
