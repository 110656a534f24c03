"""pmParseMetricSpec's grammar as libpcp 6.0.3 reads it:

    [host:]metric[[instance, ...]]     (the host "@" means PM_CONTEXT_LOCAL)
    [archive/]metric[[instance, ...]]

The source is whatever comes before the last ':' or '/' ahead of the instance list;
instance names are separated by commas or blanks and may be quoted; a backslash escapes
the next character. Errors carry libpcp's message: the text, a caret under the place,
and what was expected. Where libpcp reads past the end of its copy (a backslash as the
last character of an instance list) this reads up to the end of the list instead."""
from __future__ import annotations

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import List, Optional, Tuple

_SPACE = b" \t\n\v\f\r"


class MetricSpecError(ValueError):
    """A specification libpcp refuses (PM_ERR_GENERIC): `message` is libpcp's text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _error(spec: bytes, at: int, what: str) -> MetricSpecError:
    pointer = bytes(c if c in _SPACE or not 0x21 <= c <= 0x7E else 0x20 for c in spec[:at])
    text = spec + b"\n" + pointer + ("^ -- %s\n" % what).encode()
    return MetricSpecError(text.decode("utf-8", "surrogateescape"))


def _unescape(text: bytes) -> bytes:
    """A name with each backslash dropped before the character it escapes (a backslash
    that ends the name stays)."""
    out = bytearray()
    i, n = 0, len(text)
    while i < n:
        if text[i] == 0x5C and i + 1 < n:       # backslash
            i += 1
        out.append(text[i])
        i += 1
    return bytes(out)


def parse_metric_spec(spec: bytes, isarch: int, source: Optional[bytes]
                      ) -> Tuple[int, Optional[bytes], bytes, List[bytes]]:
    """(isarch, source, metric, instance names) of a specification: isarch 0 for a host,
    1 for an archive, 2 for "@" (local); the defaults when the spec names no source."""
    n = len(spec)
    scan = 0
    while scan < n and spec[scan] in _SPACE:
        scan += 1
    host: Optional[Tuple[int, int]] = None
    archive: Optional[Tuple[int, int]] = None
    bracket = spec.find(b"[", scan)
    mark = bracket if bracket >= 0 else n - 1
    while mark >= scan:
        c = spec[mark]
        if c in b":/":
            end = mark - 1
            while end >= scan and spec[end] in _SPACE:
                end -= 1
            if end < scan:
                raise _error(spec, scan, "host name expected" if c == 0x3A
                             else "archive name expected")
            if c == 0x3A:
                host = (scan, end + 1)
            else:
                archive = (scan, end + 1)
            scan = mark + 1
            break
        mark -= 1
    while scan < n and spec[scan] in _SPACE:
        scan += 1

    m_start = scan
    while scan < n and spec[scan] not in _SPACE and spec[scan] != 0x5B:   # "["
        if spec[scan] in b"],":
            raise _error(spec, scan, "unexpected character in metric name")
        if spec[scan] == 0x5C and scan + 1 < n:
            scan += 1
        scan += 1
    m_end = scan
    if m_start == m_end:
        raise _error(spec, m_start, "performance metric name expected")
    while scan < n and spec[scan] in _SPACE:
        scan += 1

    insts: List[bytes] = []
    if scan < n and spec[scan] == 0x5B:
        scan += 1
        while scan < n and spec[scan] in _SPACE:
            scan += 1
        i_start = scan
        inquote = False
        while True:
            if scan >= n:
                raise _error(spec, scan, 'closing " and ] expected' if inquote
                             else "closing ] expected")
            c = spec[scan]
            if c == 0x5C and scan + 1 < n:
                scan += 1
            elif c == 0x22:                        # '"'
                inquote = not inquote
            elif not inquote and c == 0x5D:        # "]"
                break
            scan += 1
        insts = _instances(spec, i_start, scan)
        scan += 1
    while scan < n and spec[scan] in _SPACE:
        scan += 1
    if scan < n:
        raise _error(spec, scan, "unexpected extra characters")

    metric = _unescape(spec[m_start:m_end])
    if host is not None:
        name = _unescape(spec[host[0]:host[1]])
        return (2 if spec[host[0]:host[1]] == b"@" else 0), name, metric, insts
    if archive is not None:
        return 1, _unescape(spec[archive[0]:archive[1]]), metric, insts
    return isarch, source, metric, insts


def _instances(spec: bytes, start: int, end: int) -> List[bytes]:
    """The instance names between the brackets [start, end)."""
    names: List[bytes] = []
    scan = start
    while scan < end:
        name = bytearray()
        if spec[scan] == 0x22:                     # a quoted name
            scan += 1
            while True:
                if scan >= end:
                    raise _error(spec, scan, 'closing " expected (pmParseMetricSpec botch?)')
                if spec[scan] == 0x5C:
                    scan += 1
                elif spec[scan] == 0x22:
                    break
                if scan < end:
                    name.append(spec[scan])
                scan += 1
            scan += 1
        else:
            while scan < end and spec[scan] not in _SPACE and spec[scan] != 0x2C:
                if spec[scan] == 0x5C:
                    scan += 1
                    if scan >= end:
                        break
                name.append(spec[scan])
                scan += 1
        names.append(bytes(name))
        while scan < end and (spec[scan] in _SPACE or spec[scan] == 0x2C):
            scan += 1
    return names
