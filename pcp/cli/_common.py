"""What the subcommands share: opening the source (-a / -h / --demo),
descriptor and value text as PCP's tools print them, time stamps in a chosen zone."""
from __future__ import annotations

import os
import struct
import sys
import time

import cpmapi as c_api
from pcp import pmapi
from pcp._core.cint import wrap_int32
from pcp._core.errors import pmErr, pmErrStr, pmGetProgname
from pcp._decode.result import block_payload_to_host
from pcp._libpcp.printvalue import aggregate_text, event_summary, insitu_text, printf_g
from pcp._libpcp.strings import DESC_TYPE_TEXT
from pcp.data import DEMO_ARCHIVE  # noqa: F401  (the archive --demo names)

TYPE_CHECKING = False      # typing's names without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

TYPE_TEXT = DESC_TYPE_TEXT
NUMERIC_TYPES = (0, 1, 2, 3, 4, 5)
COUNTER = c_api.PM_SEM_COUNTER


class CliError(Exception):
    """A failure reported as one line on stderr and exit status 1."""


class Source:
    """An open context plus what the commands ask of it repeatedly (names, descriptors,
    instance names), each looked up once."""

    def __init__(self, archive: Optional[str], host: Optional[str],
                 local_failure: str = "Cannot establish local context") -> None:
        """Open the archive, else the host (local: when neither is named), else with
        host "@" a local context; a failure is CliError with the PCP tools' words
        (`local_failure` is the tool's own for a local context: pmval's by default)."""
        if archive is not None and host is not None:
            raise CliError("-a and -h are mutually exclusive")
        if archive is None and host is None:
            host = "local:"         # PCP's tools: the local pmcd
        self.is_archive = archive is not None
        self.name = archive if archive is not None else host
        kind = c_api.PM_CONTEXT_ARCHIVE if self.is_archive else c_api.PM_CONTEXT_HOST
        if host == "@":         # -L: the local context, its PMDAs run as children
            kind, self.name = c_api.PM_CONTEXT_LOCAL, None
        # an archive's name as bytes: a name that is not UTF-8 (os.fsdecode's surrogates
        # in argv) and an empty name reach the archive code as pminfo hands them to libpcp
        target = os.fsencode(self.name) if self.is_archive else self.name
        try:
            self.ctx = pmapi.pmContext(kind, target)
        except pmErr as e:
            why = pmErrStr(e.code)
            if kind == c_api.PM_CONTEXT_LOCAL:
                raise CliError("%s: %s" % (local_failure, why))
            if self.is_archive:
                raise CliError('Cannot open archive "%s": %s' % (self.name, why))
            # the host as given, but for a password in it (PCP's tools print it whole)
            from pcp._live.hostspec import redact_hostspec
            raise CliError('Cannot connect to PMCD on host "%s": %s'
                           % (redact_hostspec(self.name), why))
        self._descs: Dict[int, Any] = {}
        self._names: Dict[int, Optional[str]] = {}
        self._inames: Dict[Tuple[int, int], Optional[str]] = {}

    def close(self) -> None:
        self.ctx.__exit__(None, None, None)

    # ---- lookups ---------------------------------------------------------------------

    def desc(self, pmid: int) -> Any:
        d = self._descs.get(pmid)
        if d is None:
            d = self._descs[pmid] = self.ctx.pmLookupDesc(pmid).contents
        return d

    def descs(self, pmids: Sequence[int]) -> List[Any]:
        missing = [p for p in pmids if p not in self._descs]
        if missing:
            for p, d in zip(missing, self.ctx.pmLookupDescs(missing)):
                self._descs[p] = d.contents
        return [self._descs[p] for p in pmids]

    def all_names(self, pmid: int, missing: str = "<nonames>") -> str:
        """Every name of a metric joined with " or ", as pmdumplog prints them
        (__pmPrintMetricNames), or `missing` for a metric with none."""
        if pmid not in self._names:
            try:
                self._names[pmid] = " or ".join(self.ctx.pmNameAll(pmid))
            except pmErr:
                self._names[pmid] = None
        text = self._names[pmid]
        return missing if text is None else text

    def inst_name(self, indom: int, inst: int) -> Optional[str]:
        key = (indom, inst)
        if key in self._inames:
            return self._inames[key]
        try:
            name: Optional[str] = self.ctx.pmNameInDom(indom, inst)
        except pmErr:
            name = None
        if not self.is_archive:
            self._inames[key] = name
        return name

    def expand(self, names: Sequence[str]) -> Tuple[List[str], List[str]]:
        """Leaf names under each argument (a leaf stands for itself), pminfo's way;
        also the messages for names that match nothing."""
        out: List[str] = []
        errors: List[str] = []
        for name in names:
            found: List[str] = []
            try:
                self.ctx.pmTraversePMNS(name, found.append)
            except pmErr as e:
                errors.append("%s: %s" % (name, pmErrStr(e.code)))
                continue
            out.extend(found)
        return out, errors

    def lookup(self, names: Sequence[str]) -> List[int]:
        pmids = list(self.ctx.pmLookupName(names, relaxed=1)) if names else []
        bad = [n for n, p in zip(names, pmids) if p == c_api.PM_ID_NULL]
        if bad:
            raise CliError("%s: Unknown metric name" % ", ".join(bad))
        return pmids


# ---- text ----------------------------------------------------------------------------

def desc_lines(ctx: Any, desc: Any, pminfo: bool = False, fulliid: bool = False) -> List[str]:
    """pmPrintDesc's two lines (pmdumplog), or pminfo's own version of them, which
    prints both lines for a metric that is not supported (and with -I the instance
    domain in decimal too)."""
    if desc.type == c_api.PM_TYPE_NOSUPPORT and not pminfo:
        return ["    Data Type: Not Supported"]
    tname = TYPE_TEXT.get(desc.type, "Not Supported" if desc.type == c_api.PM_TYPE_NOSUPPORT else "???")
    line = "    Data Type: %s" % tname
    if tname == "???":
        line += " (%d)" % desc.type
    indom = desc.indom
    indom_text = "PM_INDOM_NULL" if indom == c_api.PM_INDOM_NULL else "%d.%d" % (
        (indom >> 22) & 0x1FF, indom & 0x3FFFFF)
    line += "  InDom: %s%s 0x%x" % (indom_text, " = %u =" % indom if fulliid else "", indom)
    sem = {1: "counter", 3: "instant", 4: "discrete"}.get(desc.sem, "???")
    line2 = "    Semantics: %s" % sem
    if sem == "???":
        line2 += " (%d)" % desc.sem
    units = ctx.pmUnitsStr(desc.units)
    line2 += "  Units: %s" % (units or "none")
    return [line, line2]


def pmid_text(pmid: int) -> str:
    return "%d.%d.%d" % ((pmid >> 22) & 0x1FF, (pmid >> 10) & 0xFFF, pmid & 0x3FF)


def indom_text(indom: int) -> str:
    return "%d.%d" % ((indom >> 22) & 0x1FF, indom & 0x3FFFFF)


def value_text(arrays: Any, k: int, mtype: int, valfmt: int, errors: str = "replace") -> str:
    """One value of a result's columns as pmPrintValue writes it (minimum width 1); a
    string's bytes decoded with `errors` ("surrogateescape" keeps bytes that are not
    UTF-8 for a stream that writes them back as they were)."""
    vt = int(arrays.vtype[k])
    # an in-situ word holds no 64-bit value: pmExtractValue refuses it, and the word is
    # written in the unknown type's form below
    if mtype in (0, 1, 2, 3, 4, 5) and (vt == -1 or vt == mtype) \
            and not (vt == -1 and mtype in (2, 3, 5)):
        if mtype == 0:
            return "%d" % wrap_int32(int(arrays.ival[k]))
        if mtype == 1:
            return "%d" % (int(arrays.ival[k]) & 0xFFFFFFFF)
        if mtype == 2:
            return "%d" % int(arrays.ival[k])
        if mtype == 3:
            return "%d" % (int(arrays.ival[k]) & 0xFFFFFFFFFFFFFFFF)
        if mtype == 4:
            if vt == -1:
                word = int(arrays.ival[k]) & 0xFFFFFFFF
                return printf_g(_F32.unpack(_U32.pack(word))[0], 8)
            return printf_g(float(arrays.dval[k]), 8)
        return printf_g(float(arrays.dval[k]), 16)
    if mtype == 6 and vt in (6, 0):
        return '"%s"' % string_at(arrays, k, errors)
    if vt == 0 and valfmt != 0 and mtype in _UNTYPED_BLOCK:
        # an old v2 archive's value block of type 0: pmExtractValue takes it as the
        # descriptor's type when its length is that type's, its bytes as they are in
        # the file (libpcp swaps a block's bytes by its type: none for type 0)
        data = block_bytes(arrays, k)
        layout = _UNTYPED_BLOCK[mtype]
        if len(data) == layout.size:
            value = layout.unpack(data)[0]
            return "%d" % value if mtype in (2, 3) else printf_g(value, 8 if mtype == 4 else 16)
    if mtype in (9, 10):
        if valfmt == 0:
            return "[pmlc control]"
        return event_summary(block_bytes(arrays, k), mtype == 10)
    if valfmt == 0:
        return insitu_text(int(arrays.ival[k]))
    # pmPrintValue's bytes are the block's after libpcp swapped it by its own type
    # (a 64-bit block of a 32-bit metric: badarchives/logsummary-bug)
    return aggregate_text(block_payload_to_host(vt, block_bytes(arrays, k)))


_U32 = struct.Struct("<I")
_F32 = struct.Struct("<f")
# a type-0 value block's payload read as the descriptor's type, in this host's order
# (pmExtractValue copies the bytes into a pmAtomValue)
_UNTYPED_BLOCK = {2: struct.Struct("=q"), 3: struct.Struct("=Q"), 4: struct.Struct("=f"),
                  5: struct.Struct("=d")}


def block_bytes(arrays: Any, k: int) -> bytes:
    off = int(arrays.boff[k])
    return bytes(arrays.data[off:off + int(arrays.blen[k])])


def string_at(arrays: Any, k: int, errors: str = "replace") -> str:
    return block_bytes(arrays, k).split(b"\0", 1)[0].decode("utf-8", errors)


# ---- time ----------------------------------------------------------------------------

class Clock:
    """Time stamps in one zone: the local zone by default, or a TZ string (an archive's
    zone for -z) applied the way libpcp applies it (TZ in the environment)."""

    def __init__(self, tz: Optional[str] = None) -> None:
        self.tz = tz
        if tz:
            os.environ["TZ"] = tz
            if hasattr(time, "tzset"):
                time.tzset()

    @staticmethod
    def hms(sec: int, nsec: int, digits: int = 6) -> str:
        tm = time.localtime(sec)
        frac = nsec if digits == 9 else nsec // 1000
        return "%02d:%02d:%02d.%0*d" % (tm.tm_hour, tm.tm_min, tm.tm_sec, digits, frac)

    @staticmethod
    def ctime(sec: int) -> str:
        """ctime(3)'s text: the day of the month space padded ("Mon Jan  1 ...")."""
        tm = time.localtime(sec)
        return "%s %02d:%02d:%02d %d" % (_day(tm), tm.tm_hour, tm.tm_min, tm.tm_sec,
                                         tm.tm_year)

    def stamp(self, sec: int, nsec: int, digits: int = 6) -> str:
        """ctime with the fraction after the seconds: "Sat Nov 21 06:14:48.740350 2026"."""
        tm = time.localtime(sec)
        frac = nsec if digits == 9 else nsec // 1000
        return "%s %02d:%02d:%02d.%0*d %d" % (_day(tm), tm.tm_hour, tm.tm_min, tm.tm_sec,
                                             digits, frac, tm.tm_year)


def _day(tm: time.struct_time) -> str:
    """"Mon Jan  1": asctime's weekday, month and space-padded day of the month."""
    return "%s %2d" % (time.strftime("%a %b", tm), tm.tm_mday)


def fail(message: str) -> int:
    """One line on stderr under the program's name ("pcp-native info: ..."), status 1. A
    name from argv that is not UTF-8 goes out as the bytes it came in as (PCP's tools
    print the bytes)."""
    line = "%s: %s\n" % (pmGetProgname(), message)
    sys.stderr.flush()
    buffer = getattr(sys.stderr, "buffer", None)
    if buffer is None:
        sys.stderr.write(line)
    else:
        buffer.write(line.encode(sys.stderr.encoding or "utf-8", "surrogateescape"))
        buffer.flush()
    return 1
