"""Reporting time zones as libpcp 6.0.3 keeps them (pmNewZone, pmUseZone, pmWhichZone,
pmLocaltime, pmCtime): a process-wide table of zones and a current one; times are
converted in the current zone by setting TZ for the conversion and restoring it after,
as libpcp does, under one lock because TZ is process-wide."""
from __future__ import annotations

import os
import threading
import time

from pcp._core.native import ffi, lib
from pcp._core.structs import tm

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Callable, List, Optional, Tuple, TypeVar
    T = TypeVar("T")

_lock = threading.RLock()     # re-entered by broken_down around _in_zone
_zone_tm = ffi.new("pcp_zone_tm *")  # C's answer, used under _lock
_zones: List[str] = []
_current = -1



def new_zone(tz: str) -> int:
    """pmNewZone: add a zone, make it current and return its handle. A three-letter zone
    gets "+0" appended, as libpcp does for libc's sake (TZ=GMT -> GMT+0). libpcp 6.0.3
    takes any value (later versions refuse paths and "..")."""
    global _current
    if len(tz) == 3:
        tz += "+0"
    with _lock:
        _zones.append(tz)
        _current = len(_zones) - 1
        return _current


def reset() -> None:
    """No current zone (times in the local one again, the handles given out still
    valid): for a process that runs several tools one after the other, each starting as
    a fresh libpcp would."""
    global _current
    with _lock:
        _current = -1


class using:  # pylint: disable=invalid-name  (used as a function: with using(tz))
    """A zone current for the time of a `with` block (pmNewZone, then the previous
    current zone back): for reading times in an archive's zone. (A class rather than a
    contextlib.contextmanager: contextlib costs a tool's start half a millisecond.)"""

    def __init__(self, tz: str) -> None:
        self.tz = tz
        self.saved = -1

    def __enter__(self) -> int:
        with _lock:
            self.saved = _current
        return new_zone(self.tz)

    def __exit__(self, *exc: object) -> None:
        global _current  # pylint: disable=global-statement
        with _lock:
            _current = self.saved


def use_zone(handle: int) -> int:
    """pmUseZone: make a zone current; -1 for a handle libpcp never gave."""
    global _current
    with _lock:
        if not 0 <= handle < len(_zones):
            return -1
        _current = handle
        return 0


def which_zone() -> Optional[str]:
    """pmWhichZone: the current zone, or None before any pmNewZone."""
    with _lock:
        return _zones[_current] if _current >= 0 else None


# the TZ value this module last handed to tzset() (None: not known), and time.tzname as
# that tzset() left it: every time.tzset() makes a new tuple, so a tzset() by anyone else
# since (the CLI's -z, the archive writer's zone, a test) shows as another object
_applied: Optional[str] = None
_applied_names: Optional[Tuple[str, str]] = None


def _in_zone(convert: Callable[[], T]) -> T:
    """Run a conversion with TZ set to the current zone (if any), then put TZ back. When
    TZ already is that zone (a tool that set it, as pmrep does) and this module last
    applied it, nothing is swapped: two tzset() calls per conversion were most of the
    cost of a report's time stamps."""
    with _lock:
        if _current < 0:
            return convert()
        zone = _zones[_current]
        saved = os.environ.get("TZ")
        if saved == zone and _applied == zone and time.tzname is _applied_names:
            return convert()
        return _with_tz(zone, convert)


def _with_tz(zone: str, convert: Callable[[], T]) -> T:
    """Run a conversion with TZ set to `zone`, then put TZ (set or not) back."""
    global _applied, _applied_names
    saved = os.environ.get("TZ")
    os.environ["TZ"] = zone
    time.tzset()
    try:
        return convert()
    finally:
        if saved is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = saved
        time.tzset()
        _applied, _applied_names = saved, time.tzname


# the last instant converted by broken_down: ((zone, TZ, seconds), struct_time)
_last: Optional[Tuple[Tuple[Optional[str], Optional[str], int], time.struct_time]] = None


def broken_down(seconds: int) -> time.struct_time:
    """time.localtime in the current zone (what pmLocaltime fills a tm from; the
    fetchgroup's timestamps are made from it without a tm). The last answer is kept: a report asks for the
    time of the same second several times (each sample's stamp is read more than once,
    and samples less than a second apart share it), and a conversion in a zone other
    than TZ costs two tzset() calls (made in C: _zone_localtime)."""
    global _last
    with _lock:
        zone = _zones[_current] if _current >= 0 else None
        # a conversion in a zone sets TZ to it: what TZ was does not matter then
        key = (zone, None, seconds) if zone is not None \
            else (None, os.environ.get("TZ"), seconds)
        last = _last
        if last is not None and last[0] == key:
            return last[1]
        t = _zone_localtime(zone, seconds) if zone is not None else None
        if t is None:
            t = _in_zone(lambda: time.localtime(seconds))
        _last = (key, t)
        return t


_INT64 = 1 << 63


def _zone_localtime(zone: str, seconds: int) -> Optional[time.struct_time]:
    """time.localtime of an instant in `zone` by libpcp's swap of TZ, made in C
    (csrc/zones.c): Python's time.tzset() recomputes the time module's attributes at
    each of its two calls, several times the cost of the swap itself. None when C
    cannot convert it (time.localtime then raises its own error)."""
    if not -_INT64 <= seconds < _INT64:
        return None
    out = _zone_tm
    if lib.pcp_zone_localtime(zone.encode("utf-8", "surrogateescape"), seconds, out) != 0:
        return None
    return time.struct_time((out.year + 1900, out.mon + 1, out.mday, out.hour, out.min,
                             out.sec, (out.wday + 6) % 7, out.yday + 1, out.isdst,
                             ffi.string(out.zone).decode("utf-8", "surrogateescape"),
                             out.gmtoff))


def localtime(seconds: int) -> tm:
    """pmLocaltime: the broken-down time of an instant in the current zone."""
    t = broken_down(seconds)
    result = tm()
    result.tm_sec, result.tm_min, result.tm_hour = t.tm_sec, t.tm_min, t.tm_hour
    result.tm_mday, result.tm_mon, result.tm_year = t.tm_mday, t.tm_mon - 1, t.tm_year - 1900
    result.tm_wday = (t.tm_wday + 1) % 7        # C counts from Sunday, Python from Monday
    result.tm_yday = t.tm_yday - 1
    result.tm_isdst = t.tm_isdst
    result.tm_gmtoff = t.tm_gmtoff or 0
    result.tm_zone = (t.tm_zone or "").encode("ascii", "replace")
    return result


_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")          # Python's order
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def ctime(seconds: int) -> str:
    """pmCtime: asctime's text of an instant in the current zone (the C locale's names),
    newline included."""
    t = broken_down(seconds)
    return "%s %s%3d %02d:%02d:%02d %d\n" % (_DAYS[t.tm_wday], _MONTHS[t.tm_mon - 1],
                                             t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
                                             t.tm_year)


def mktime(year: int, mon: int, mday: int, hour: int, minute: int, sec: int) -> int:
    """libpcp's __pmMktime: mktime(3) in the current zone, fields in C's conventions
    (year since 1900, month from 0), out-of-range fields carried over as mktime does,
    daylight saving time found by mktime (tm_isdst -1)."""
    return int(_in_zone(lambda: time.mktime((year + 1900, mon + 1, mday, hour, minute, sec,
                                             0, 0, -1))))
