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

from __future__ import annotations


import ctypes as _ctypes
import errno as _errno
import operator as _operator
import os as _os
import sys as _sys
import time as _time

from pcp._core.constants import *  # noqa: F401,F403  (every constant, defined once)
# libpcp_import's, libpcp_pmda's and libpcp_mmv's numbers belong to ``cpmi``, ``cpmda``
# and ``cmmv``, not to the official ``cpmapi``
for _name in [_n for _n in dir() if _n.startswith(("PMI_", "PMDA_", "MMV_"))
              or _n in ("pmiErrSymDict", "pmi_error_texts", "SINCE", "UNTIL")]:
    del globals()[_name]
# the names and error codes of the API level served (pcp/_core/level.py)
from pcp._core.level import API_LEVEL as _API_LEVEL
from pcp._core.level import error_symbols as _error_symbols, served as _served
for _name in [_n for _n in dir() if not _n.startswith("_") and not _served(_n)]:
    del globals()[_name]
pmErrSymDict = _error_symbols()
from pcp._core.constants import PM_XTB_FLAG as _PM_XTB_FLAG  # used below
from pcp._core.cint import c_int as _c_int, c_long as _c_long, c_long_long as _c_long_long
from pcp._core.cint import wrap_int32 as _to_int32
from pcp._core.errors import pmprintf as _pmprintf, pmGetProgname as _pmGetProgname
# the options machinery (pcp._libpcp.options, getopt, and the interval grammar's regular
# expressions) comes with the first options call: a program without a command line does
# not pay for it


def _options() -> Any:
    """pcp._libpcp.options (kept once imported: a pmOptions going at the interpreter's exit
    resets the options when imports no longer work)."""
    module = _late_modules.get("options")
    if module is None:
        from pcp._libpcp import options as module  # pylint: disable=import-outside-toplevel

        _late_modules["options"] = module
    return module


_late_modules: "Dict[str, Any]" = {}

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from fractions import Fraction as _Fraction
    from typing import Any, Callable, Dict, List, Optional, Tuple

# the future import above and the type checkers' flag bind names the official module
# does not have
del annotations, TYPE_CHECKING

# ---------------------------------------------------------------------------
# Names of the official module that this module does not provide: none now (the
# tuple stays, for the programs and tests that read it).
# ---------------------------------------------------------------------------
DELIBERATE_OMISSIONS: "Tuple[str, ...]" = ()

# The official module parses its arguments with CPython's PyArg_ParseTuple codes;
# pcp._core.cint reproduces the same accepted types, range checks and messages.
_LONG_DOUBLE_BITS = 64  # significand of the x86 80-bit long double


# ---------------------------------------------------------------------------
# Extended time base for pmSetMode (gone in 7.x's cpmapi)
# ---------------------------------------------------------------------------
if _API_LEVEL < (7, 2):
    def PM_XTB_SET(type: int) -> int:  # pylint: disable=redefined-builtin
        """Encode a time scale (PM_TIME_*) into the pmSetMode mode argument."""
        return _to_int32(_PM_XTB_FLAG | (_c_int(type) << 16))

    def PM_XTB_GET(mode: int) -> int:
        """Return the time scale encoded by PM_XTB_SET, or -1 when none is set."""
        mode = _c_int(mode)
        if mode & _PM_XTB_FLAG:
            return (mode & 0xFF0000) >> 16
        return -1


# ---------------------------------------------------------------------------
# pmUnits packing
# ---------------------------------------------------------------------------
def _c_int_argument(value: Any, function: str, position: int) -> int:
    """The "i" code: an int that must fit a C int."""
    return _c_int(value)


def _c_uint_mask_argument(value: Any, function: str, position: int) -> int:
    """The "I" code: any int, its low 32 bits (no overflow check)."""
    return _operator.index(value) & 0xFFFFFFFF


if _API_LEVEL >= (7, 2):
    def pmUnits_int(*args: Any, **kwargs: Any) -> int:
        """Pack the eight pmUnits fields of PCP 7.x into the signed 32-bit word libpcp
        uses: the six 4-bit fields, then extraUnit (5 bits) and extraScale (3 bits) in the
        low byte; every argument required, by position or name, each a C int."""
        # 7.x parses "iiiIIiiI": the space and time scales and extraScale unsigned
        fields = _keyword_arguments("pmUnits_int", (
            ("dimSpace", _c_int_argument), ("dimTime", _c_int_argument),
            ("dimCount", _c_int_argument), ("scaleSpace", _c_uint_mask_argument),
            ("scaleTime", _c_uint_mask_argument), ("scaleCount", _c_int_argument),
            ("extraUnit", _c_int_argument), ("extraScale", _c_uint_mask_argument)),
            args, kwargs)
        word = 0
        for field in fields[:6]:
            word = (word << 4) | (field & 0xF)
        return _to_int32((word << 8) | ((fields[6] & 0x1F) << 3) | (fields[7] & 0x7))
else:
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
    from fractions import Fraction as _Fraction  # pylint: disable=import-outside-toplevel

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
    # fractions (with decimal) is imported here, not at start-up: few programs get here
    from fractions import Fraction as _Fraction  # pylint: disable=import-outside-toplevel

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
                import ctypes.util as _ctypes_util      # here: it costs ms to import

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
# Command-line options: the official module's one process-wide pmOptions
# ---------------------------------------------------------------------------
def _text(value: object, function: str, position: int = 1) -> str:
    """A "s" argument of the official module: a str, or the TypeError CPython gives."""
    if not isinstance(value, str):
        kind = "None" if value is None else type(value).__name__
        raise TypeError("%s() argument %d must be str, not %s" % (function, position, kind))
    if "\0" in value:
        raise ValueError("embedded null character")
    return value


def pmResetAllOptions() -> None:
    """Forget every option set so far (a new pmOptions; the callbacks stay)."""
    _options().reset()


def pmSetShortOptions(short_options: str) -> None:
    """The getopt string of short options (libpcp's PMAPI_OPTIONS is the usual base)."""
    _options().OPTIONS.short_options = _text(short_options, "pmSetShortOptions")


def pmSetShortUsage(short_usage: str) -> None:
    """What the usage message shows after the program name (default "[options]")."""
    _options().OPTIONS.short_usage = _text(short_usage, "pmSetShortUsage")


def pmSetOptionContext(context: int) -> None:
    """Set the context type the options are for (PM_CONTEXT_*)."""
    _options().OPTIONS.context = _c_int(context)


def pmSetOptionFlags(flags: int) -> None:
    """Add PM_OPTFLAG_* flags (they are or-ed in, never cleared)."""
    _options().OPTIONS.flags |= _c_int(flags)


def pmGetOptionFlags() -> int:
    """The PM_OPTFLAG_* flags, the ones option processing set included."""
    return _options().OPTIONS.flags


def pmSetOptionErrors(errors: int) -> None:
    """Set the error count."""
    _options().OPTIONS.errors = _c_int(errors)


def pmGetOptionErrors() -> int:
    """The number of errors option processing found."""
    return _options().OPTIONS.errors


def _add_long_option(option: Any) -> int:
    _options().OPTIONS.long_options.append(option)
    return len(_options().OPTIONS.long_options) - 1


def pmSetLongOptionHeader(heading: str) -> None:
    """Start a section of the usage message."""
    _add_long_option(_options().LongOption("", 0, "-", None,
                                         _text(heading, "pmSetLongOptionHeader")))


def pmSetLongOptionText(text: str) -> None:
    """A line of text in the usage message."""
    _add_long_option(_options().LongOption("", 0, "|", None, _text(text, "pmSetLongOptionText")))


def pmSetLongOption(long_opt: str, has_arg: int, short_opt: str, argname: str,
                    message: str) -> int:
    """Declare an option of the caller's own; its index among the long options. An empty
    message leaves it out of the usage message."""
    name = _text(long_opt, "pmSetLongOption", 1)
    has = _c_int(has_arg)
    short = _text(short_opt, "pmSetLongOption", 3)[:1]
    arg = _text(argname, "pmSetLongOption", 4)
    text = _text(message, "pmSetLongOption", 5)
    return _add_long_option(_options().LongOption(name, has, short, arg, text or None))


def _standard(name: str) -> Callable[[], int]:
    def add() -> int:
        options = _options()
        option = options.STANDARD[name]
        return _add_long_option(options.LongOption(option.long_opt, option.has_arg,
                                                   option.short_opt, option.argname,
                                                   option.message))
    add.__name__ = add.__qualname__ = "pmSetLongOption" + name
    add.__doc__ = "Add libpcp's standard %s option (pcp._libpcp.options.STANDARD); its " \
                  "index." % name
    return add


pmSetLongOptionAlign = _standard("Align")
pmSetLongOptionArchive = _standard("Archive")
pmSetLongOptionArchiveList = _standard("ArchiveList")
pmSetLongOptionArchiveFolio = _standard("ArchiveFolio")
pmSetLongOptionContainer = _standard("Container")
pmSetLongOptionDebug = _standard("Debug")
pmSetLongOptionHost = _standard("Host")
pmSetLongOptionHostList = _standard("HostList")
pmSetLongOptionHostsFile = _standard("HostsFile")
pmSetLongOptionSpecLocal = _standard("SpecLocal")
pmSetLongOptionLocalPMDA = _standard("LocalPMDA")
pmSetLongOptionOrigin = _standard("Origin")
pmSetLongOptionStart = _standard("Start")
pmSetLongOptionSamples = _standard("Samples")
pmSetLongOptionFinish = _standard("Finish")
pmSetLongOptionInterval = _standard("Interval")
pmSetLongOptionVersion = _standard("Version")
pmSetLongOptionTimeZone = _standard("TimeZone")
pmSetLongOptionHostZone = _standard("HostZone")
pmSetLongOptionHelp = _standard("Help")


def pmSetOptionArchive(archive: str) -> None:
    """Add an archive, as -a does."""
    _options().add_archive(_options().OPTIONS, _text(archive, "pmSetOptionArchive"))


def pmSetOptionArchiveList(archives: str) -> None:
    """Add comma-separated archives, as --archive-list does."""
    _options().add_archive_list(_options().OPTIONS, _text(archives, "pmSetOptionArchiveList"))


def pmSetOptionArchiveFolio(folio: str) -> None:
    """Add the archives of a PCP folio file, as --archive-folio does."""
    _options().add_archive_folio(_options().OPTIONS, _text(folio, "pmSetOptionArchiveFolio"))


def pmSetOptionContainer(container: str) -> None:
    """Name the container to query, as --container does."""
    _options().set_container(_options().OPTIONS, _text(container, "pmSetOptionContainer"))


def pmSetOptionHost(host: str) -> None:
    """Add a host, as -h does."""
    _options().add_host(_options().OPTIONS, _text(host, "pmSetOptionHost"))


def pmSetOptionHostList(hosts: str) -> None:
    """Add comma-separated hosts, as --host-list does."""
    _options().add_host_list(_options().OPTIONS, _text(hosts, "pmSetOptionHostList"))


def pmSetOptionSpecLocal(spec: str) -> None:
    """A PMDA specification for a local context, as -K does."""
    _options().set_local_table(_options().OPTIONS, _text(spec, "pmSetOptionSpecLocal"))


def pmSetOptionLocalPMDA() -> None:
    """Ask for a local context, as -L does."""
    _options().set_local_flag(_options().OPTIONS)


def pmSetOptionSamples(count: str) -> None:
    """The sample count, from its text (a finish time and a count exclude each other)."""
    opts = _options().OPTIONS
    text = _text(count, "pmSetOptionSamples")
    if opts.finish_optarg is not None:
        _pmprintf("%s: at most one of finish time and sample count allowed\n"
                  % _pmGetProgname())
        opts.errors += 1
        return
    opts.samples, whole = _options().strtol_int(text)
    if not whole or opts.samples < 0:
        _pmprintf("%s: sample count must be a positive numeric argument\n" % _pmGetProgname())
        opts.errors += 1


def pmSetOptionInterval(delta: str) -> None:
    """The sampling interval, from its pmParseInterval (7.x) / pmParseHighResInterval text."""
    from pcp._core import intervals as _intervals  # pylint: disable=import-outside-toplevel

    opts = _options().OPTIONS
    text = _text(delta, "pmSetOptionInterval")
    try:
        opts.interval = _intervals.interval_timespec(text)
    except _intervals.IntervalError as err:
        _pmprintf("%s: interval argument not in %s(3) format:\n%s\n"
                  % (_pmGetProgname(), _options().INTERVAL_PARSER, err.message))
        opts.errors += 1


def pmSetOptionCallback(func: Callable[..., Any]) -> None:
    """Call func(option, optarg, index) for each option that is not a standard one."""
    if not callable(func):
        raise TypeError("pmSetOptionCallback parameter not callable")
    _options().CALLBACKS.option = func


def pmSetOverrideCallback(func: Callable[[str], int]) -> None:
    """Call func(option) first for every option: non-zero means the caller handles it."""
    if not callable(func):
        raise TypeError("pmSetOverrideCallback parameter not callable")
    _options().CALLBACKS.override = func


def pmGetOptionsFromList(argv: List[str]) -> int:
    """Parse argv (argv[0] the program): the error count, or PM_ERR_APPVERSION when the
    tool is to print its version and exit."""
    if argv is None:
        return 0
    if not isinstance(argv, list):
        raise TypeError("pmGetOptionsFromList uses a list")
    return _options().options_from_list(argv)


def pmGetOperands() -> Optional[List[str]]:
    """The words after the options (None when there are none)."""
    return _options().operands()


def pmGetNonOptionsFromList(argv: List[str]) -> Optional[List[str]]:
    """The words after the options (argv must be a list; it is not read)."""
    if not isinstance(argv, list):
        raise TypeError("pmGetNonOptionsFromList uses a list")
    return _options().operands()


def pmEndOptions() -> None:
    """Finish option processing (the context type the options imply, final checks)."""
    _options().end_options(_options().OPTIONS)


def pmServerStart() -> None:
    """Continue in the background, detached from the terminal (a tool's --daemonize)."""
    _options().daemonize()


def pmSetContextOptions(context: int, mode: int, delta: int) -> int:
    """Finish the options against an open context: the reporting zone, the time window,
    and for an archive with PM_OPTFLAG_BOUNDARIES the initial mode, origin and interval
    (delta seconds when no interval was given). 0, or a negative PMAPI code."""
    pmapi = _sys.modules.get("pcp.pmapi")
    if pmapi is None:       # pcp.pmapi, which opens every context, was never imported
        return PM_ERR_NOCONTEXT
    return pmapi._set_context_options(_c_int(context), _c_int(mode), _c_int(delta))


def pmUsageMessage() -> None:
    """Write the buffered messages and the usage text to stderr; the process exits (0)
    when the options asked for an exit (--version)."""
    _options().print_usage()


def _stamp_part(stamp: Tuple[int, int], part: str) -> Optional[int]:
    """A time of the options as the official getters give it: None while unset (0)."""
    if stamp == (0, 0):
        return None
    sec, nsec = stamp
    if part == "sec":
        return sec
    if part == "nsec":
        return nsec
    return int(nsec / 1000) if nsec < 0 else nsec // 1000


def pmGetOptionContext() -> Optional[int]:
    """The context type the options imply (None before it is known)."""
    context = _options().OPTIONS.context
    return context if context > 0 else None


def pmGetOptionHosts() -> Optional[List[str]]:
    """The hosts named (None for none)."""
    hosts = _options().OPTIONS.hosts
    return list(hosts) if hosts else None


def pmGetOptionArchives() -> Optional[List[str]]:
    """The archives named (None for none; with -O alone, the local pmlogger directory)."""
    opts = _options().OPTIONS
    if opts.origin_optarg is not None and not opts.archives and not opts.hosts \
            and not opts.Lflag:
        _options().add_archive_path(opts)
    return list(opts.archives) if opts.archives else None


def pmGetOptionAlign_optarg() -> Optional[str]:
    """The -A text."""
    return _options().OPTIONS.align_optarg


def pmGetOptionFinish_optarg() -> Optional[str]:
    """The -T text."""
    return _options().OPTIONS.finish_optarg


def pmGetOptionStart_sec() -> Optional[int]:
    return _stamp_part(_options().OPTIONS.start, "sec")


def pmGetOptionStart_usec() -> Optional[int]:
    return _stamp_part(_options().OPTIONS.start, "usec")


def pmGetOptionStart_nsec() -> Optional[int]:
    return _stamp_part(_options().OPTIONS.start, "nsec")


def pmGetOptionFinish_sec() -> Optional[int]:
    return _stamp_part(_options().OPTIONS.finish, "sec")


def pmGetOptionFinish_usec() -> Optional[int]:
    return _stamp_part(_options().OPTIONS.finish, "usec")


def pmGetOptionFinish_nsec() -> Optional[int]:
    return _stamp_part(_options().OPTIONS.finish, "nsec")


def pmGetOptionOrigin_sec() -> Optional[int]:
    return _stamp_part(_options().OPTIONS.origin, "sec")


def pmGetOptionOrigin_usec() -> Optional[int]:
    return _stamp_part(_options().OPTIONS.origin, "usec")


def pmGetOptionOrigin_nsec() -> Optional[int]:
    return _stamp_part(_options().OPTIONS.origin, "nsec")


def pmGetOptionInterval_sec() -> Optional[int]:
    return _stamp_part(_options().OPTIONS.interval, "sec")


def pmGetOptionInterval_usec() -> Optional[int]:
    return _stamp_part(_options().OPTIONS.interval, "usec")


def pmGetOptionInterval_nsec() -> Optional[int]:
    return _stamp_part(_options().OPTIONS.interval, "nsec")


def pmGetOptionSamples() -> Optional[int]:
    """The sample count (None while 0)."""
    samples = _options().OPTIONS.samples
    return samples if samples else None


def pmGetOptionTimezone() -> Optional[str]:
    """The -Z zone."""
    return _options().OPTIONS.timezone


def pmGetOptionHostZone() -> int:
    """1 when -z asked for the source's zone."""
    return _options().OPTIONS.tzflag


def pmGetOptionContainer() -> Optional[str]:
    """The container to query ($PCP_CONTAINER, which --container sets)."""
    return _os.environ.get("PCP_CONTAINER")


def pmGetOptionLocalPMDA() -> int:
    """1 when -L asked for a local context."""
    return _options().OPTIONS.Lflag


# ---------------------------------------------------------------------------
# The process's user, and PMNS traversal with a callback
# ---------------------------------------------------------------------------
def _keyword_arguments(function: str, parameters: "Tuple[Tuple[str, Any], ...]",
                       args: "Tuple[Any, ...]", kwargs: "dict") -> "List[Any]":
    """The arguments of a function the official module declares METH_VARARGS |
    METH_KEYWORDS with only required parameters, each converted in order by its
    converter (None: any object), with the TypeErrors PyArg_ParseTupleAndKeywords
    gives."""
    given = len(args) + len(kwargs)
    if given > len(parameters):
        raise TypeError("%s() takes at most %d argument%s (%d given)" % (
            function, len(parameters), "" if len(parameters) == 1 else "s", given))
    values = []
    for position, (name, convert) in enumerate(parameters, 1):
        if position <= len(args):
            value = args[position - 1]
        elif name in kwargs:
            value = kwargs[name]
        else:
            raise TypeError("%s() missing required argument '%s' (pos %d)"
                            % (function, name, position))
        values.append(value if convert is None else convert(value, function, position))
    return values


def _identity_switch_failed(message: str) -> None:
    """libpcp's answer to a user it cannot become: a Critical notice and exit(1), which
    runs none of Python's clean-up (its buffered stdout is not written either)."""
    from pcp._core.errors import notify_error  # pylint: disable=import-outside-toplevel
    notify_error("Critical", message)
    _os._exit(1)


def pmSetProcessIdentity(*args: Any, **kwargs: Any) -> int:
    """Become the user `name` (pmSetProcessIdentity(3)): its group, its supplementary
    groups when the process has any, then its uid; 0. As in libpcp, an unknown user or a
    refused switch ends the process with a Critical message and exit status 1."""
    (name,) = _keyword_arguments("pmSetProcessIdentity", (("name", _text),), args, kwargs)
    import pwd  # pylint: disable=import-outside-toplevel
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        _identity_switch_failed("cannot find the %s user to switch to\n" % name)
    uid, gid = entry.pw_uid, entry.pw_gid
    try:
        _os.setgid(gid)
    except OSError as err:
        _identity_switch_failed("setgid to gid of %s user (gid=%d): %s"
                                % (name, gid, _os.strerror(err.errno)))
    # initgroups only when the process has supplementary groups (libpcp avoids its
    # cost otherwise); EPERM is what a process that already dropped privileges gets
    if _os.getgroups():
        try:
            _os.initgroups(name, gid)
        except OSError as err:
            if err.errno != _errno.EPERM:
                _identity_switch_failed("initgroups with gid of %s user (gid=%d): %s"
                                        % (name, gid, _os.strerror(err.errno)))
    try:
        _os.setuid(uid)
    except OSError as err:
        _identity_switch_failed("setuid to uid of %s user (uid=%d): %s"
                                % (name, uid, _os.strerror(err.errno)))
    return 0


def pmnsTraverse(*args: Any, **kwargs: Any) -> int:
    """Call `callback(leaf_name)` for every leaf name at or below `name` in the PMNS of
    the current context (pmTraversePMNS_r(3)); the number of leaves, or a negative
    PM_ERR_* code (PM_ERR_NOPMNS without a context, PM_ERR_NAME for an unknown name)
    returned, not raised. An exception in the callback is printed as an uncaught one
    would be, and the traversal goes on."""
    name, callback = _keyword_arguments("pmnsTraverse", (("name", _text), ("callback", None)),
                                        args, kwargs)
    if not callable(callback):
        raise TypeError("pmnsTraverse needs a callable")
    # the current context is pcp.pmapi's (libpcp's per-thread one); the module is
    # loaded by then if any context exists
    pmapi = _sys.modules.get("pcp.pmapi")
    registry = getattr(pmapi, "_registry", None)
    context = registry.contexts.get(registry.current) if registry is not None else None
    if context is None:
        return PM_ERR_NOPMNS        # libpcp: no context, so no PMNS to walk
    # pylint: disable-next=import-outside-toplevel
    from pcp._core.errors import pmErr, print_callback_error
    try:
        leaves = context.traverse(name.encode("utf-8"))
    except pmErr as err:
        return err.code
    if not leaves:
        return PM_ERR_NAME
    for leaf in leaves:
        try:
            callback(leaf.decode("utf-8", "surrogateescape"))
        except BaseException as err:  # pylint: disable=broad-except
            print_callback_error(err)   # PyErr_Print, and on with the walk
    return len(leaves)
