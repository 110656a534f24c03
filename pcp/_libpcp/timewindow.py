"""The time window of PCP's -S/-T/-A/-O options (pmParseTimeWindow, pmParseHighResTimeWindow)
and the times they take, as libpcp 6.0.3 reads them:

- ``@`` and a ctime-like date ("@ Mon Nov 24 10:00:00 2026", "@10:30", "@ Nov 24"): the
  fields left out are taken from the start of the window, rolling forward to the next such
  time; three-letter day and month names only, as libpcp matches them;
- ``-`` and an interval: that long before the end of the archive (live: the "-" is just a
  sign libpcp refuses);
- an interval, with or without ``+``: that long after the start of the window;
- anything else goes to the free-form date grammar (`pcp._libpcp.getdate`).

Times are (seconds, nanoseconds) pairs; dates are read in the current reporting zone
(pmNewZone / pmUseZone). A bad time gives libpcp's message: the text, a caret under the
first character not understood, and what was wrong.
"""
from __future__ import annotations

from pcp._core.intervals import (PM_MAX_TIME_T, IntervalError, interval_timespec, strtod_prefix,
                                 strtol_prefix)
from pcp._core.longdouble import ld_nanoseconds
from pcp._libpcp import zones

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import List, Optional, Tuple
    Stamp = Tuple[int, int]

NSEC = 1000000000
NO_OFFSET, PLUS_OFFSET, NEG_OFFSET = 0, 1, 2

_WHAT = "unexpected value"
_MORE = "more information expected"
_ALIGN = "alignment specified by -A switch could not be applied"
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_AMPM = ("am", "pm")
_C_SPACE = " \t\n\v\f\r"


class TimeError(ValueError):
    """A time or window libpcp refuses: `message` is libpcp's text for it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def parse_error(spec: str, at: int, what: str) -> str:
    """libpcp's parseError text: the spec, then blanks up to a caret and the complaint."""
    pointer = "".join(" " if (c.isascii() and c.isprintable() and c != " ") else c
                      for c in spec[:at])
    return "%s\n%s^ -- %s\n" % (spec, pointer, what)


class _Scanner:
    """libpcp's little recognisers over one string, each skipping leading blanks."""

    def __init__(self, text: str, pos: int = 0) -> None:
        self.text = text
        self.pos = pos

    def skip_blanks(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in _C_SPACE:
            self.pos += 1

    def char(self, wanted: str) -> bool:
        self.skip_blanks()
        if self.text[self.pos:self.pos + 1] != wanted:
            return False
        self.pos += 1
        return True

    def word3(self, codes: Tuple[str, ...]) -> int:
        """Index of up to three letters in `codes` (-1 when not one of them); like libpcp
        it reads only three letters, so "November" leaves "ember" unread."""
        self.skip_blanks()
        start = end = self.pos
        while end < len(self.text) and end - start < 3 and _is_alpha(self.text[end]):
            end += 1
        code = self.text[start:end].lower()
        if code in codes:
            self.pos = end
            return codes.index(code)
        return -1

    def integer(self, low: int, high: int) -> Optional[int]:
        self.skip_blanks()
        end, value = strtol_prefix(self.text, self.pos)
        if end == self.pos or value < low or value > high:
            return None
        self.pos = end
        return value

    def real(self, low: float, high: float) -> Optional[float]:
        self.skip_blanks()
        end, value = strtod_prefix(self.text, self.pos)
        if end == self.pos or not low <= value <= high:
            return None
        self.pos = end
        return value


def _is_alpha(c: str) -> bool:
    return c.isascii() and c.isalpha()


class _Tm:
    """The struct tm libpcp's ctime parser fills: -1 for a field not given; yday carries
    the nanoseconds and wday the kind of offset, as in libpcp."""

    def __init__(self) -> None:
        self.sec = self.min = self.hour = self.mday = self.mon = self.year = -1
        self.yday = -1
        self.wday = NO_OFFSET


def parse_ctime(spec: str) -> _Tm:
    """libpcp's __pmParseCtime of the text after "@"."""
    t = _Tm()
    scan = _Scanner(spec)
    ignored = scan.word3(_DAYS)
    t.mon = scan.word3(_MONTHS)
    mday = scan.integer(0, 31)
    t.mday = -1 if mday is None else mday
    hour = scan.integer(0, 23)
    t.hour = -1 if hour is None else hour
    if t.mday == 0 and t.hour != -1:
        t.mday = -1
    if t.hour == -1 and 0 <= t.mday <= 23 and (t.mon == -1 or spec[scan.pos:scan.pos + 1] == ":"):
        t.hour, t.mday = t.mday, -1
    if scan.char(":"):
        if t.hour == -1:
            t.hour = 0
        t.min = 0
        minute = scan.integer(0, 59)
        if minute is not None:
            t.min = minute
        if scan.char(":"):
            seconds = scan.real(0.0, 61.0)
            if seconds is not None:
                t.sec = int(seconds)
                t.yday = ld_nanoseconds(seconds - t.sec)
    pm = scan.word3(_AMPM)
    if pm >= 0:
        if t.hour > 12 or t.hour == -1:
            scan.pos -= 2
        elif pm:
            if t.hour < 12:
                t.hour += 12
        elif t.hour == 12:
            t.hour = 0
    year = scan.integer(1900, 9999)
    if year is not None:
        t.year = year - 1900
    scan.skip_blanks()
    if scan.pos < len(spec):
        raise TimeError(parse_error(spec, scan.pos, _WHAT))
    if ((ignored != -1 and t.mon == -1 and t.mday == -1) or
            (t.hour != -1 and t.min == -1 and t.mday == -1 and t.mon == -1 and t.year == -1)):
        raise TimeError(parse_error(spec, scan.pos, _MORE))
    given = t.year != -1
    for name, default in (("mon", 0), ("mday", 1), ("hour", 0), ("min", 0)):
        if getattr(t, name) != -1:
            given = True
        elif given:
            setattr(t, name, default)
    if t.sec == -1 and given:
        t.sec = 0
        t.yday = 0
    return t


def convert(t: _Tm, origin: Stamp) -> Stamp:
    """libpcp's __pmConvertHighResTime: an offset from `origin`, or an absolute time whose
    missing fields come from `origin` (rolling forward past it)."""
    sec, nsec = origin
    if t.wday == PLUS_OFFSET:
        nsec += t.yday
        if nsec > NSEC:
            nsec -= NSEC
            sec += 1
        return sec + t.sec, nsec
    if t.wday == NEG_OFFSET:
        if nsec < t.yday:
            nsec += NSEC
            sec -= 1
        return sec - t.sec, nsec - t.yday
    if t.year != -1:
        fields = [t.year, t.mon, t.mday, t.hour, t.min, t.sec]
        nsec = t.yday
    else:
        now = zones.localtime(sec)
        fields = [now.tm_year, now.tm_mon, now.tm_mday, now.tm_hour, now.tm_min, now.tm_sec]
        # the most significant field given decides which one rolls over
        order = (("mon", 1, 0), ("mday", 2, 1), ("hour", 3, 2), ("min", 4, 3), ("sec", 5, 4))
        for name, i, carry in order:
            value = getattr(t, name)
            if value == -1:
                continue
            if value < fields[i]:
                fields[carry] += 1
            for later_name, j in (("mon", 1), ("mday", 2), ("hour", 3), ("min", 4), ("sec", 5)):
                if j >= i:
                    fields[j] = getattr(t, later_name)
            nsec = t.yday
            break
    return zones.mktime(*fields), nsec


def parse_time(spec: str, start: Stamp, end: Stamp) -> Stamp:
    """libpcp's __pmParseHighResTime: one -S/-T/-O time against a window from `start` to
    `end` (end seconds PM_MAX_TIME_T: an open-ended, live window)."""
    if end[0] == PM_MAX_TIME_T:
        end = (end[0], NSEC - 1)
    scan = _Scanner(spec)
    message = None
    if scan.char("@"):
        try:
            t = parse_ctime(spec[scan.pos:])
            t.wday = NO_OFFSET
            return convert(t, start)
        except TimeError as err:
            message = err.message
    elif end[0] < PM_MAX_TIME_T and scan.char("-"):
        try:
            t = _offset(spec[scan.pos:], NEG_OFFSET)
            return convert(t, end)
        except IntervalError as err:
            message = err.message
    else:
        scan.char("+")
        try:
            t = _offset(spec[scan.pos:], PLUS_OFFSET)
            return convert(t, start)
        except IntervalError as err:
            message = err.message
    scan.char("@")
    # the free-form date grammar is loaded only for a time that needs it
    from pcp._libpcp import getdate  # pylint: disable=import-outside-toplevel

    found = getdate.relative_date(spec[scan.pos:], start, end)
    if found is None:
        raise TimeError(message)
    return found


def _offset(spec: str, kind: int) -> _Tm:
    t = _Tm()
    t.wday = kind
    t.sec, t.yday = interval_timespec(spec)
    return t


def _ns(t: Stamp) -> int:
    return t[0] * NSEC + t[1]


def _c_div(a: int, b: int) -> int:
    """C's integer division, truncating toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _stamp(ns: int) -> Stamp:
    sec = _c_div(ns, NSEC)
    return sec, ns - sec * NSEC


def parse_window(start_arg: Optional[str], end_arg: Optional[str], align_arg: Optional[str],
                 offset_arg: Optional[str], log_start: Stamp, log_end: Stamp
                 ) -> Tuple[int, Stamp, Stamp, Stamp, Optional[str]]:
    """pmParseHighResTimeWindow: (status, start, end, offset, warning) where status is 1,
    or 0 when the -A alignment could not be applied (`warning` says so); an error raises
    TimeError with libpcp's message."""
    start = log_start
    end = log_end if log_end[0] != PM_MAX_TIME_T else (log_end[0], NSEC - 1)
    status, warning = 1, None
    messages: List[str] = []
    if start_arg is not None:
        start = parse_time(start_arg, start, end)
    if start < log_start:
        start = log_start
    delta = 0
    if align_arg is not None:
        try:
            step = interval_timespec(align_arg)
        except IntervalError as err:
            raise TimeError(err.message) from None
        if step == (0, 0):
            raise TimeError(parse_error(align_arg, 0, _ALIGN))
        delta = _ns(step)
        aligned = _round_up(_ns(start), delta)
        if log_start <= _stamp(aligned) <= log_end:
            start = _stamp(aligned)
        else:
            messages.append(parse_error(align_arg, 0, _ALIGN))
            status = 0
    if end_arg is not None:
        end = parse_time(end_arg, start, end)
    if end > log_end:
        end = log_end
    offset = start
    if offset_arg is not None:
        offset = parse_time(offset_arg, start, end)
        if offset < start:
            offset = start
        elif offset > end:
            offset = end
        if align_arg is not None:
            aligned = _round_up(_ns(offset), delta)
            if aligned > _ns(end):
                aligned -= delta
            if start <= _stamp(aligned) <= end:
                offset = _stamp(aligned)
            else:
                messages.append(parse_error(align_arg, 0, _ALIGN))
                status = 0
    if messages:
        warning = messages[-1]
    return status, start, end, offset, warning


def _round_up(value: int, delta: int) -> int:
    """(value / delta) * delta in C's truncating division, then up by delta if below."""
    aligned = _c_div(value, delta) * delta
    return aligned + delta if aligned < value else aligned
