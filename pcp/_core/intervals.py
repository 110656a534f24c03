"""pmParseInterval's grammar, as libpcp 6.0.3 reads it: numbers (strtod, 0 up to
PM_MAX_TIME_T), each optionally followed by a unit (nanosecond, microsecond, millisecond,
second, minute, hour, day and their short forms, any case, with or without a trailing
"s"), summed; a number alone is seconds. A bad specification gives libpcp's message:
the text, a caret under the first character not understood, and "unexpected value"."""
from __future__ import annotations

from pcp._core.longdouble import real_to_timespec, real_to_timeval

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, Tuple

PM_MAX_TIME_T = (1 << 63) - 1

# (name, multiplier, divisor) in libpcp's table order, the first whole-name match wins;
# libpcp divides by the divisor of a sub-second unit rather than multiplying by its inverse
_UNITS = (("nanosecond", 1, 1000000000), ("microsecond", 1, 1000000),
          ("millisecond", 1, 1000), ("second", 1, 1), ("minute", 60, 1), ("hour", 3600, 1),
          ("day", 86400, 1), ("msec", 1, 1000), ("usec", 1, 1000000),
          ("nsec", 1, 1000000000), ("sec", 1, 1), ("min", 60, 1), ("hr", 3600, 1),
          ("s", 1, 1), ("m", 60, 1), ("h", 3600, 1), ("d", 86400, 1))

_C_SPACE = " \t\n\v\f\r"
_strtod_pattern = None


def _strtod_match(text: str, at: int) -> Any:
    """The match of strtod's decimal and hexadecimal forms, infinity and nan at `at`
    (the pattern compiled with the first interval parsed: re costs a start-up 3 ms)."""
    global _strtod_pattern  # pylint: disable=global-statement
    if _strtod_pattern is None:
        import re  # pylint: disable=import-outside-toplevel

        _strtod_pattern = re.compile(
            r"[+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)"
            r"(?:[pP][+-]?\d+)?|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
            r"|inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)", re.IGNORECASE)
    return _strtod_pattern.match(text, at)


class IntervalError(ValueError):
    """A specification libpcp refuses: `message` is libpcp's text for it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _strtod(text: str) -> float:
    if text.lstrip("+-")[:2].lower() == "0x":
        return float.fromhex(text)
    return float(text)


def _error(spec: str, at: int) -> IntervalError:
    pointer = "".join(" " if c.isprintable() and not c.isspace() else c for c in spec[:at])
    return IntervalError("%s\n%s^ -- unexpected value\n" % (spec, pointer))


def parse_interval(spec: str) -> float:
    """Seconds of an interval specification, or IntervalError with libpcp's message."""
    if not spec:
        raise IntervalError("\n^ -- Null or empty specification\n")
    total = 0.0
    i, n = 0, len(spec)
    while i < n:
        j = i
        while j < n and spec[j] in _C_SPACE:
            j += 1
        m = _strtod_match(spec, j)
        if m is None:
            i = j           # libpcp reports the place after the blanks it skipped
            break
        value = _strtod(m.group(0))
        if value < 0.0 or value > float(PM_MAX_TIME_T):    # as libpcp tests: nan passes
            i = j
            break
        i = m.end()
        while i < n and spec[i] in _C_SPACE:
            i += 1
        if i == n:
            total += value
            break
        k = i
        while k < n and spec[k].isascii() and spec[k].isalpha():
            k += 1
        word = spec[i:k]
        if not word:
            total += value
        else:
            if len(word) > 1 and word[-1] in "sS":
                word = word[:-1]
            for name, multiplier, divisor in _UNITS:
                if len(word) == len(name) and word.lower() == name:
                    total += value / divisor if divisor > 1 else value * multiplier
                    break
            else:
                break
        i = k
    if i < n:
        raise _error(spec, i)
    return total


def interval_timeval(spec: str) -> Tuple[int, int]:
    """pmParseInterval: (seconds, microseconds)."""
    return real_to_timeval(parse_interval(spec))


def interval_timespec(spec: str) -> Tuple[int, int]:
    """pmParseHighResInterval: (seconds, nanoseconds)."""
    return real_to_timespec(parse_interval(spec))


def strtod_prefix(text: str, pos: int) -> Tuple[int, float]:
    """(end, value) of strtod(text + pos, &end): leading blanks skipped; end == pos when
    no number starts there."""
    j = pos
    while j < len(text) and text[j] in _C_SPACE:
        j += 1
    m = _strtod_match(text, j)
    if m is None:
        return pos, 0.0
    return m.end(), _strtod(m.group(0))


def strtol_prefix(text: str, pos: int) -> Tuple[int, int]:
    """(end, value) of strtol(text + pos, &end, 10), clamped to C's long; end == pos when
    no number starts there."""
    i = pos
    while i < len(text) and text[i] in _C_SPACE:
        i += 1
    j = i + (text[i:i + 1] in ("+", "-"))
    k = j
    while k < len(text) and "0" <= text[k] <= "9":
        k += 1
    if k == j:
        return pos, 0
    return k, max(-(1 << 63), min(int(text[i:k]), (1 << 63) - 1))
