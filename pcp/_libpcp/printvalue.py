"""pmPrintValue's text of one value, as libpcp 6.0.3 writes it: numbers with printf's %d /
%u / %.8g / %.16g in a field of at least `minwidth`, strings quoted and right-aligned,
values whose type it cannot use (aggregates, unknown types, a failed conversion) as the
integer, double or float their bytes could be, a string when every byte is printable and
then in hex, event arrays as a summary of their records. pmdumplog prints through it, so
the CLI's dump uses the same functions."""
from __future__ import annotations

import ctypes
import math
import os
import struct
import sys
import time

from pcp._core.cint import wrap_int32
from pcp._core.constants import (PM_TYPE_32, PM_TYPE_64, PM_TYPE_DOUBLE,
                                 PM_TYPE_EVENT, PM_TYPE_FLOAT, PM_TYPE_HIGHRES_EVENT,
                                 PM_TYPE_STRING, PM_TYPE_U32, PM_TYPE_U64, PM_TYPE_UNKNOWN,
                                 PM_VAL_DPTR, PM_VAL_INSITU, PM_VAL_SPTR)
from pcp._core.errors import pmErr

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, Callable

_U32 = struct.Struct("<I")
_F32 = struct.Struct("<f")
_U64 = struct.Struct("<Q")
_F64 = struct.Struct("<d")
_C_SPACE = b" \t\n\v\f\r"

# PCP_SQUASH_NEWLINES, read once as libpcp does: blanks of strings become spaces
_squash = os.environ.get("PCP_SQUASH_NEWLINES") is not None


def printf_g(x: float, digits: int, width: int = 1) -> str:
    """printf's %*.*g of x. C writes a negative NaN's sign ("-nan"); Python's % does not."""
    if x != x and math.copysign(1.0, x) < 0:
        return "%*s" % (width, "-nan")
    return "%*.*g" % (width, digits, x)



def _squashed(raw: bytes) -> bytes:
    return bytes(0x20 if c in _C_SPACE else c for c in raw) if _squash else raw


def string_text(raw: bytes, minwidth: int = 1) -> str:
    """A string value: quoted, right-aligned in minwidth."""
    text = _squashed(raw).decode("utf-8", "replace")
    return " " * max(minwidth - (len(raw) + 2), 0) + '"%s"' % text


def insitu_text(word: int, minwidth: int = 1) -> str:
    """A 32-bit value of a type pmPrintValue cannot use: unsigned, as a float (unless it is
    a NaN), and in hex."""
    word &= 0xFFFFFFFF
    f = _F32.unpack(_U32.pack(word))[0]
    text = "%*u" % (minwidth, word)
    if f == f:
        text += " " + printf_g(f, 8, minwidth)
    return text + " 0x%*x" % (minwidth - 2 if minwidth > 2 else minwidth, word)


def aggregate_text(raw: bytes, minwidth: int = 1) -> str:
    """A value block of a type pmPrintValue cannot use (its bytes in host order): as a
    64-bit integer, double or float when the length fits, as a string when every byte is
    printable, then in hex."""
    parts = []
    if len(raw) == 8:
        parts.append("%*u" % (minwidth, _U64.unpack(raw)[0]))
        d = _F64.unpack(raw)[0]
        if d == d:
            parts.append(printf_g(d, 16, minwidth))
    if len(raw) == 4:
        f = _F32.unpack(raw)[0]
        if f == f:
            parts.append(printf_g(f, 8, minwidth))
    if all(0x20 <= b < 0x7F for b in raw):
        parts.append(" " * max(minwidth - (len(raw) + 2), 0)
                     + '"%s"' % _squashed(raw).decode("ascii"))
    parts.append(" " * max(minwidth - (2 * len(raw) + 2), 0) + "[%s]" % raw.hex())
    return " ".join(parts)


def event_summary(raw: bytes, highres: bool, order: str = "big") -> str:
    """An event array: "[N event records (M missed) timestamps FIRST...LAST]". `order` is
    the byte order of its words: "big" as they travel and lie in archives, the host's in
    a value block libpcp (or pcp-native's pval) has converted. Reads stop at the end of
    the bytes rather than past them."""
    if len(raw) < 4:
        return "[0 event records]"
    nrecords = int.from_bytes(raw[0:4], order, signed=True)
    head = 24 if highres else 16
    base = 4
    nmissed = 0

    def word(at: int) -> int:
        return int.from_bytes(raw[at:at + 4], order) if at + 4 <= len(raw) else 0

    for _ in range(nrecords - 1):
        flags = word(base + head - 8)
        nparams = wrap_int32(word(base + head - 4))
        if flags & 0x80000000:
            nmissed += nparams
            continue
        base += head
        for _ in range(max(nparams, 0)):
            base += 4 + ((word(base + 4) & 0xFFFFFF) + 3) // 4 * 4

    def stamp(at: int) -> str:
        if highres:
            sec = int.from_bytes(raw[at:at + 8], order, signed=True)
            nsec = int.from_bytes(raw[at + 8:at + 16], order, signed=True)
            tm = time.localtime(sec)
            return "%02d:%02d:%02d.%09d" % (tm.tm_hour, tm.tm_min, tm.tm_sec, nsec)
        sec = wrap_int32(word(at))
        usec = wrap_int32(word(at + 4))
        tm = time.localtime(sec)
        return "%02d:%02d:%02d.%03d" % (tm.tm_hour, tm.tm_min, tm.tm_sec, int(usec / 1000))

    text = "[%d event record%s" % (nrecords, "" if nrecords == 1 else "s")
    if nmissed > 0:
        text += " (%d missed)" % nmissed
    if nrecords > 0:
        text += " timestamp%s %s" % ("s" if nrecords > 1 else "", stamp(4))
        if nrecords > 1:
            text += "..." + stamp(base)
    return text + "]"


def value_text(valfmt: int, mtype: int, value: Any, minwidth: int,
               extract: Callable[[int, Any, int, int], Any]) -> str:
    """pmPrintValue's text of a pmValue (`value.value.lval` / `.pval`), converting with
    `extract` (pmExtractValue)."""
    atom = None
    if mtype not in (PM_TYPE_UNKNOWN, PM_TYPE_EVENT, PM_TYPE_HIGHRES_EVENT):
        try:
            atom = extract(valfmt, value, mtype, mtype)
        except pmErr:
            mtype = PM_TYPE_UNKNOWN
    if mtype == PM_TYPE_32:
        return "%*d" % (minwidth, atom.l)
    if mtype == PM_TYPE_U32:
        return "%*d" % (minwidth, atom.ul)
    if mtype == PM_TYPE_64:
        return "%*d" % (minwidth, atom.ll)
    if mtype == PM_TYPE_U64:
        return "%*d" % (minwidth, atom.ull)
    if mtype == PM_TYPE_FLOAT:
        return printf_g(atom.f, 8, minwidth)
    if mtype == PM_TYPE_DOUBLE:
        return printf_g(atom.d, 16, minwidth)
    if mtype == PM_TYPE_STRING:
        return string_text(atom.cp or b"", minwidth)
    if mtype in (PM_TYPE_EVENT, PM_TYPE_HIGHRES_EVENT):
        if valfmt == PM_VAL_INSITU:
            return "[pmlc control]"
        block = value.value.pval.contents
        return event_summary(_block_bytes(block), mtype == PM_TYPE_HIGHRES_EVENT,
                             sys.byteorder)
    # PM_TYPE_AGGREGATE, PM_TYPE_UNKNOWN and values that did not convert
    if valfmt == PM_VAL_INSITU:
        return insitu_text(value.value.lval, minwidth)
    if valfmt in (PM_VAL_DPTR, PM_VAL_SPTR):
        block = value.value.pval.contents
        if block.vlen < 4:
            return "pmPrintValue: negative length (%d) for aggregate value?\n" % (
                block.vlen - 4)
        return aggregate_text(_block_bytes(block), minwidth)
    return "pmPrintValue: bad valfmt (%d)?\n" % valfmt


def _block_bytes(block: Any) -> bytes:
    """The payload of a pmValueBlock as it lies in memory."""
    return ctypes.string_at(ctypes.addressof(block) + 4, max(block.vlen - 4, 0))
