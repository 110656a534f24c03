"""The free-form dates libpcp 6.0.3 falls back to for -S/-T/-O times it cannot read as
"@ctime" or as an interval (libpcp's __pmGetDate, the public-domain getdate grammar):
"2026-11-24 10:00", "11/24/2026", "24 Nov 2026 10:00:30 EST", "yesterday", "last monday",
"2 hours ago", "next week", "tomorrow 10am" and the like.

The grammar is read the way bison's tables for it read it: greedily (every
shift/reduce conflict shifts) and without backtracking, so an input libpcp refuses is
refused here too. Dates are in the current reporting zone. A relative date is counted
from `now`: libpcp passes the start of the window (or its end for a date that reads as
going backwards, "... ago", "last ...", a leading "-"), or the real time for a date that
names no unit ("yesterday", "monday", "2026-11-24").
"""
from __future__ import annotations

import calendar
import time
from dataclasses import dataclass
from typing import List, Optional, Tuple

from pcp._core.intervals import PM_MAX_TIME_T
from pcp._libpcp import zones

Stamp = Tuple[int, int]

EPOCH = 1970
SECS_PER_DAY = 24 * 60 * 60
DST_ON, DST_OFF, DST_MAYBE = 0, 1, 2
MER_AM, MER_PM, MER_24 = 0, 1, 2

# token kinds
AGO, DAY, DAYZONE, ID, MERIDIAN, MINUTE_UNIT, MONTH = "ago", "day", "dayzone", "id", "mer", \
    "minute_unit", "month"
MONTH_UNIT, SEC_UNIT, SNUMBER, UNUMBER, ZONE, DST, DAMINUTE_UNIT, END = "month_unit", \
    "sec_unit", "snumber", "unumber", "zone", "dst", "daminute_unit", "end"
_UNITS = (MINUTE_UNIT, SEC_UNIT, MONTH_UNIT, DAMINUTE_UNIT)


def _hours(n: int) -> int:
    return n * 60


_MONTH_DAY = (("january", MONTH, 1), ("february", MONTH, 2), ("march", MONTH, 3),
              ("april", MONTH, 4), ("may", MONTH, 5), ("june", MONTH, 6), ("july", MONTH, 7),
              ("august", MONTH, 8), ("september", MONTH, 9), ("sept", MONTH, 9),
              ("october", MONTH, 10), ("november", MONTH, 11), ("december", MONTH, 12),
              ("sunday", DAY, 0), ("monday", DAY, 1), ("tuesday", DAY, 2), ("tues", DAY, 2),
              ("wednesday", DAY, 3), ("wednes", DAY, 3), ("thursday", DAY, 4),
              ("thur", DAY, 4), ("thurs", DAY, 4), ("friday", DAY, 5), ("saturday", DAY, 6))
_UNIT_WORDS = {"year": (MONTH_UNIT, 12), "month": (MONTH_UNIT, 1),
               "fortnight": (MINUTE_UNIT, 14 * 24 * 60), "week": (MINUTE_UNIT, 7 * 24 * 60),
               "day": (MINUTE_UNIT, 24 * 60), "hour": (MINUTE_UNIT, 60),
               "minute": (MINUTE_UNIT, 1), "min": (MINUTE_UNIT, 1),
               "second": (SEC_UNIT, 1), "sec": (SEC_UNIT, 1)}
_OTHER_WORDS = {"tomorrow": (DAMINUTE_UNIT, 24 * 60), "yesterday": (DAMINUTE_UNIT, -24 * 60),
                "today": (DAMINUTE_UNIT, 0), "now": (MINUTE_UNIT, 0), "last": (UNUMBER, -1),
                "this": (MINUTE_UNIT, 0), "next": (UNUMBER, 2), "first": (UNUMBER, 1),
                "third": (UNUMBER, 3), "fourth": (UNUMBER, 4), "fifth": (UNUMBER, 5),
                "sixth": (UNUMBER, 6), "seventh": (UNUMBER, 7), "eighth": (UNUMBER, 8),
                "ninth": (UNUMBER, 9), "tenth": (UNUMBER, 10), "eleventh": (UNUMBER, 11),
                "twelfth": (UNUMBER, 12), "ago": (AGO, 1)}
_ZONES = {"gmt": (ZONE, 0), "ut": (ZONE, 0), "utc": (ZONE, 0), "wet": (ZONE, 0),
          "bst": (DAYZONE, 0), "wat": (ZONE, _hours(1)), "at": (ZONE, _hours(2)),
          "ast": (ZONE, _hours(4)), "adt": (DAYZONE, _hours(4)), "est": (ZONE, _hours(5)),
          "edt": (DAYZONE, _hours(5)), "cst": (ZONE, _hours(6)), "cdt": (DAYZONE, _hours(6)),
          "mst": (ZONE, _hours(7)), "mdt": (DAYZONE, _hours(7)), "pst": (ZONE, _hours(8)),
          "pdt": (DAYZONE, _hours(8)), "yst": (ZONE, _hours(9)), "ydt": (DAYZONE, _hours(9)),
          "hst": (ZONE, _hours(10)), "hdt": (DAYZONE, _hours(10)), "cat": (ZONE, _hours(10)),
          "ahst": (ZONE, _hours(10)), "nt": (ZONE, _hours(11)), "idlw": (ZONE, _hours(12)),
          "cet": (ZONE, -_hours(1)), "met": (ZONE, -_hours(1)), "mewt": (ZONE, -_hours(1)),
          "mest": (DAYZONE, -_hours(1)), "swt": (ZONE, -_hours(1)),
          "sst": (DAYZONE, -_hours(1)), "fwt": (ZONE, -_hours(1)),
          "fst": (DAYZONE, -_hours(1)), "eet": (ZONE, -_hours(2)), "bt": (ZONE, -_hours(3)),
          "zp4": (ZONE, -_hours(4)), "zp5": (ZONE, -_hours(5)), "zp6": (ZONE, -_hours(6)),
          "wast": (ZONE, -_hours(7)), "wadt": (DAYZONE, -_hours(7)),
          "cct": (ZONE, -_hours(8)), "jst": (ZONE, -_hours(9)), "east": (ZONE, -_hours(10)),
          "eadt": (DAYZONE, -_hours(10)), "gst": (ZONE, -_hours(10)),
          "nzt": (ZONE, -_hours(12)), "nzst": (ZONE, -_hours(12)),
          "nzdt": (DAYZONE, -_hours(12)), "idle": (ZONE, -_hours(12))}
# military zones: a..m (not j) west, n..y east, z UTC
_MILITARY_HOURS = list(range(1, 13)) + list(range(-1, -13, -1)) + [0]
_MILITARY = {c: (ZONE, _hours(h)) for c, h in zip("abcdefghiklmnopqrstuvwxyz", _MILITARY_HOURS)}

Token = Tuple[str, int]
_C_SPACE = " \t\n\v\f\r"


def _lookup_word(word: str) -> Token:
    buff = word.lower()
    if buff in ("am", "a.m."):
        return MERIDIAN, MER_AM
    if buff in ("pm", "p.m."):
        return MERIDIAN, MER_PM
    abbrev = len(buff) == 3
    if len(buff) == 4 and buff[3] == ".":
        abbrev, buff = True, buff[:3]
    for name, kind, value in _MONTH_DAY:
        if (abbrev and name[:3] == buff) or (not abbrev and name == buff):
            return kind, value
    if buff in _ZONES:
        return _ZONES[buff]
    if buff == "dst":
        return DST, 0
    if buff in _UNIT_WORDS:
        return _UNIT_WORDS[buff]
    if buff.endswith("s") and buff[:-1] in _UNIT_WORDS:
        return _UNIT_WORDS[buff[:-1]]
    if buff in _OTHER_WORDS:
        return _OTHER_WORDS[buff]
    if len(buff) == 1 and buff in _MILITARY:
        return _MILITARY[buff]
    bare = buff.replace(".", "")
    if bare != buff and bare in _ZONES:
        return _ZONES[bare]
    return ID, 0


def _is_digit(c: str) -> bool:
    return "0" <= c <= "9"


def _is_alpha(c: str) -> bool:
    return c.isascii() and c.isalpha()


def tokens(text: str) -> List[Token]:
    """The words of a date as the getdate lexer gives them, END last. A sign not followed
    by a digit is dropped, a parenthesised comment skipped, a word keeps 19 characters."""
    out: List[Token] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _C_SPACE:
            i += 1
        c = text[i] if i < n else ""
        if c and (_is_digit(c) or c in "+-"):
            sign = 0
            if c in "+-":
                sign = -1 if c == "-" else 1
                i += 1
                if not (i < n and _is_digit(text[i])):
                    continue
            j = i
            while j < n and _is_digit(text[j]):
                j += 1
            number = int(text[i:j])
            i = j
            out.append((SNUMBER, -number if sign < 0 else number) if sign else (UNUMBER, number))
            continue
        if c and _is_alpha(c):
            j = i
            while j < n and (_is_alpha(text[j]) or text[j] == "."):
                j += 1
            out.append(_lookup_word(text[i:j][:19]))
            i = j
            continue
        if c != "(":
            if not c:
                out.append((END, 0))
                return out
            out.append((c, 0))
            i += 1
            continue
        depth = 0
        while True:
            c = text[i] if i < n else ""
            i += 1
            if not c:
                out.append((END, 0))
                return out
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            if depth <= 0:
                break


@dataclass
class _Parsed:
    dst: int = DST_MAYBE
    day_ordinal: int = 0
    day_number: int = 0
    have_date: int = 0
    have_day: int = 0
    have_rel: int = 0
    have_time: int = 0
    have_zone: int = 0
    have_date_align: int = 0
    timezone: int = 0
    day: int = 0
    hour: int = 0
    minutes: int = 0
    month: int = 0
    seconds: int = 0
    year: int = 0
    meridian: int = MER_24
    rel_month: int = 0
    rel_seconds: int = 0


class _SyntaxError(Exception):
    pass


class _Parser:
    """The grammar's items (time, zone, date, day, rel, number), each read greedily."""

    def __init__(self, toks: List[Token], p: _Parsed) -> None:
        self.toks = toks
        self.i = 0
        self.p = p

    def peek(self, ahead: int = 0) -> str:
        return self.toks[min(self.i + ahead, len(self.toks) - 1)][0]

    def take(self, kind: Optional[str] = None) -> int:
        tok_kind, value = self.toks[self.i]
        if kind is not None and tok_kind != kind:
            raise _SyntaxError()
        self.i += 1
        return value

    def parse(self) -> None:
        while self.peek() != END:
            self.item()

    def item(self) -> None:
        p = self.p
        kind = self.peek()
        if kind == UNUMBER:
            self.after_unsigned()
        elif kind == SNUMBER:
            if self.peek(1) not in _UNITS:
                raise _SyntaxError()
            self.relunit(self.take())
        elif kind in _UNITS:
            self.relunit(None)
        elif kind == ZONE:
            p.timezone = self.take()
            p.dst = DST_OFF
            if self.peek() == DST:
                self.take()
                p.dst = DST_ON
            p.have_zone += 1
        elif kind == DAYZONE:
            p.timezone = self.take()
            p.dst = DST_ON
            p.have_zone += 1
        elif kind == DAY:
            p.day_ordinal, p.day_number = 0, self.take()
            if self.peek() == ",":
                self.take()
            p.have_day += 1
        elif kind == MONTH:
            p.month = self.take()
            p.day = self.take(UNUMBER)
            if self.peek() == ",":
                self.take()
                p.year = self.take(UNUMBER)
            p.have_date += 1
        else:
            raise _SyntaxError()

    def after_unsigned(self) -> None:
        p = self.p
        nxt = self.peek(1)
        if nxt == MERIDIAN:
            p.hour = self.take()
            p.minutes = p.seconds = 0
            p.meridian = self.take()
            p.have_time += 1
        elif nxt == ":":
            self.clock()
        elif nxt == "/":
            first = self.take()
            self.take("/")
            second = self.take(UNUMBER)
            if self.peek() == "/":
                self.take()
                third = self.take(UNUMBER)
                if first >= 100:
                    p.year, p.month, p.day = first, second, third
                else:
                    p.month, p.day, p.year = first, second, third
            else:
                p.month, p.day = first, second
            p.have_date += 1
        elif nxt == SNUMBER:                    # ISO 8601: yyyy-mm-dd
            p.year = self.take()
            p.month = -self.take()
            p.day = -self.take(SNUMBER)
            p.have_date += 1
        elif nxt == MONTH:                      # 24-nov-2026, 24 nov 2026, 24 nov
            p.day = self.take()
            p.month = self.take()
            if self.peek() == SNUMBER:
                p.year = -self.take()
            elif self.peek() == UNUMBER:
                p.year = self.take()
            p.have_date += 1
        elif nxt == DAY:
            p.day_ordinal = self.take()
            p.day_number = self.take()
            p.have_day += 1
        elif nxt in _UNITS:
            self.relunit(self.take())
        else:
            self.number(self.take())

    def clock(self) -> None:
        p = self.p
        p.hour = self.take()
        self.take(":")
        p.minutes = self.take(UNUMBER)
        p.seconds = 0
        if self.peek() == ":":
            self.take()
            p.seconds = self.take(UNUMBER)
        if self.peek() == MERIDIAN:
            p.meridian = self.take()
        elif self.peek() == SNUMBER:
            zone = self.take()
            p.meridian = MER_24
            p.dst = DST_OFF
            p.timezone = -(_c_mod(zone, 100) + _c_div(zone, 100) * 60)
        else:
            p.meridian = MER_24
        p.have_time += 1

    def relunit(self, count: Optional[int]) -> None:
        p = self.p
        kind = self.peek()
        unit = self.take()
        factor = 1 if count is None else count
        if kind == MINUTE_UNIT:
            p.rel_seconds += factor * unit * 60
        elif kind == SEC_UNIT:
            p.rel_seconds += factor if count is not None else 1
        elif kind == MONTH_UNIT:
            p.rel_month += factor * unit
        else:
            p.rel_seconds += factor * unit * 60
            p.have_date_align += 1
        if self.peek() == AGO:
            self.take()
            p.rel_seconds = -p.rel_seconds
            p.rel_month = -p.rel_month
        p.have_rel += 1

    def number(self, value: int) -> None:
        p = self.p
        if p.have_time and p.have_date and not p.have_rel:
            p.year = value
        elif value > 10000:
            p.have_date += 1
            p.day = value % 100
            p.month = (value // 100) % 100
            p.year = value // 10000
        else:
            p.have_time += 1
            if value < 100:
                p.hour, p.minutes = value, 0
            else:
                p.hour, p.minutes = value // 100, value % 100
            p.seconds = 0
            p.meridian = MER_24


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _c_mod(a: int, b: int) -> int:
    return a - _c_div(a, b) * b


def _to_seconds(hours: int, minutes: int, seconds: int, meridian: int) -> int:
    if not 0 <= minutes <= 59 or not 0 <= seconds <= 59:
        return -1
    if meridian == MER_24:
        if not 0 <= hours <= 23:
            return -1
        return (hours * 60 + minutes) * 60 + seconds
    if not 1 <= hours <= 12:
        return -1
    if hours == 12:
        hours = 0
    if meridian == MER_PM:
        hours += 12
    return (hours * 60 + minutes) * 60 + seconds


def _convert(p: _Parsed, month: int, day: int, year: int, hours: int, minutes: int,
             seconds: int, meridian: int, dst: int) -> int:
    if year < 0:
        year = -year
    if year < 69:
        year += 2000
    elif year < 100:
        year += 1900
    days_in_month = [31, 29 if calendar.isleap(year) else 28, 31, 30, 31, 30, 31, 31, 30,
                     31, 30, 31]
    if year < EPOCH or not 1 <= month <= 12 or day < 1 or day > days_in_month[month - 1]:
        return -1
    month -= 1
    julian = day - 1 + sum(days_in_month[:month])
    # getdate's own leap rule here: every fourth year
    julian += sum(365 + (y % 4 == 0) for y in range(EPOCH, year))
    julian = julian * SECS_PER_DAY + p.timezone * 60
    tod = _to_seconds(hours, minutes, seconds, meridian)
    if tod < 0:
        return -1
    julian += tod
    if dst == DST_ON or (dst == DST_MAYBE and zones.localtime(julian).tm_isdst):
        julian -= 60 * 60
    return julian


def _dst_correct(start: int, future: int) -> int:
    start_day = (zones.localtime(start).tm_hour + 1) % 24
    future_day = (zones.localtime(future).tm_hour + 1) % 24
    return (future - start) + (start_day - future_day) * 60 * 60


def _relative_date(start: int, ordinal: int, number: int) -> int:
    now = zones.localtime(start)
    offset = start + SECS_PER_DAY * ((number - now.tm_wday + 7) % 7)
    offset += 7 * SECS_PER_DAY * (ordinal if ordinal <= 0 else ordinal - 1)
    return _dst_correct(start, offset)


def _relative_month(p: _Parsed, start: int, rel_month: int) -> int:
    if rel_month == 0:
        return 0
    now = zones.localtime(start)
    month = 12 * (now.tm_year + 1900) + now.tm_mon + rel_month
    year, month = _c_div(month, 12), _c_mod(month, 12) + 1
    return _dst_correct(start, _convert(p, month, now.tm_mday, year, now.tm_hour, now.tm_min,
                                        now.tm_sec, MER_24, DST_MAYBE))


def _difftm(a: time.struct_time, b: object) -> int:
    """getdate's difftm(a, b): a - b in seconds, a from gmtime and b a pmLocaltime tm."""
    ay = a.tm_year - 1
    by = getattr(b, "tm_year") + 1900 - 1
    days = ((a.tm_yday - 1) - getattr(b, "tm_yday") + ((ay >> 2) - (by >> 2))
            - (_c_div(ay, 100) - _c_div(by, 100))
            + ((_c_div(ay, 100) >> 2) - (_c_div(by, 100) >> 2)) + (ay - by) * 365)
    return (60 * (60 * (24 * days + (a.tm_hour - getattr(b, "tm_hour")))
                  + (a.tm_min - getattr(b, "tm_min"))) + (a.tm_sec - getattr(b, "tm_sec")))


def get_date(text: str, now: Optional[int]) -> Optional[int]:
    """libpcp's __pmGetDate: the seconds a date means, counted from `now` (None: the real
    time), or None when libpcp refuses it."""
    if now is None:
        now = int(time.time())
    local = zones.localtime(now)
    tzoff = _c_div(_difftm(time.gmtime(now), local), 60)
    if local.tm_isdst:
        tzoff += 60
    p = _Parsed(year=local.tm_year + 1900, month=local.tm_mon + 1, day=local.tm_mday,
                timezone=tzoff)
    try:
        _Parser(tokens(text), p).parse()
    except _SyntaxError:
        return None
    if (p.have_time > 1 or p.have_zone > 1 or p.have_date > 1 or p.have_day > 1
            or p.have_date_align > 1):
        return None
    if p.have_date or p.have_time or p.have_day or p.have_date_align:
        start = _convert(p, p.month, p.day, p.year, p.hour, p.minutes, p.seconds, p.meridian,
                         p.dst)
        if start < 0:
            return None
    else:
        start = now
        if not p.have_rel:
            start -= (local.tm_hour * 60 + local.tm_min) * 60 + local.tm_sec
    start += p.rel_seconds
    start += _relative_month(p, start, p.rel_month)
    if p.have_day and not p.have_date:
        start += _relative_date(start, p.day_ordinal, p.day_number)
    return start


_RELATIVE_TERMS = (" YEAR", " MONTH", " FORTNIGHT", " WEEK", " DAY", " HOUR", " MINUTE",
                   " MIN", " SECOND", " SEC")


def relative_date(text: str, start: Stamp, end: Stamp) -> Optional[Stamp]:
    """libpcp's glib_get_date: a date that names a unit counts from the window's start, or
    from its end when it goes backwards ("ago", "last", a leading "-") and the window has
    an end; any other date counts from the real time. None when the date is refused."""
    stripped = text.lstrip(_C_SPACE)
    upper = stripped.upper()
    now: Optional[int] = None
    if any(term in upper for term in _RELATIVE_TERMS):
        backwards = "LAST" in upper or "AGO" in upper or stripped[:1] == "-"
        now = end[0] if backwards and end[0] < PM_MAX_TIME_T else start[0]
    seconds = get_date(text, now)
    return None if seconds is None else (seconds, 0)
