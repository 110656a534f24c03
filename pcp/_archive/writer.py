"""libpcp_import 6.0.3 reproduced: the log-import contexts behind pcp.pmi.

Each function here is one libpcp_import call acting on the current context and returning
its status (0, a positive count, or a negative PMI_ERR_* / PM_ERR_* / -errno code) the
way the C library does, so pcp.pmi raises exactly where the official binding raises. What
gets written, and when, follows libpcp_import: nothing touches the disk until the first
pmiWrite (or put_result); then the archive's three files are created with their labels,
each metric's descriptor and each instance domain are written just before the first
record that refers to them, help text and labels after the record of their pmiWrite, and
a temporal index entry whenever metadata was written or about 100 kB of data went by.
The bytes of every record come from csrc/archive_write.c.

Process-wide state mirrors the library's statics (one table of contexts, the current
one, the last timestamp written and the index flush threshold), because the official
binding shares them too: pmiLogImport objects select their context before every call."""

from __future__ import annotations

import os
import socket
import struct
import sys
import time
from errno import EBADF, EEXIST, ENOENT
from typing import Any, Dict, List, Optional, Tuple

from pcp._core.config import pmGetConfig
from pcp._core.intervals import strtol_prefix
from pcp._core.constants import (
    PM_ERR_CONV, PM_ERR_INDOM, PM_ERR_INST, PM_ERR_LOGCHANGEINDOM, PM_ERR_LOGCHANGESEM,
    PM_ERR_LOGCHANGETYPE, PM_ERR_LOGCHANGEUNITS, PM_ERR_NAME, PM_ERR_NOCONTEXT, PM_ID_NULL,
    PM_IN_NULL, PM_INDOM_NULL, PM_LABEL_CLUSTER, PM_LABEL_CONTEXT, PM_LABEL_DOMAIN,
    PM_LABEL_INDOM, PM_LABEL_INSTANCES, PM_LABEL_ITEM, PM_LABEL_OPTIONAL, PM_LOG_VERS02,
    PM_LOG_VERS03, PM_SEM_COUNTER, PM_SEM_DISCRETE, PM_SEM_INSTANT, PM_TEXT_HELP,
    PM_TEXT_INDOM, PM_TEXT_ONELINE, PM_TEXT_PMID, PM_TYPE_32, PM_TYPE_64, PM_TYPE_DOUBLE,
    PM_TYPE_AGGREGATE, PM_TYPE_FLOAT, PM_TYPE_STRING, PM_TYPE_U32, PM_TYPE_U64,
    PMI_ERR_ADDLABELERROR,
    PMI_ERR_BADHANDLE, PMI_ERR_BADLABELID, PMI_ERR_BADLABELINSTANCE, PMI_ERR_BADLABELTYPE,
    PMI_ERR_BADMETRICNAME, PMI_ERR_BADSEM, PMI_ERR_BADTEXTCLASS, PMI_ERR_BADTEXTID,
    PMI_ERR_BADTEXTTYPE, PMI_ERR_BADTIMESTAMP, PMI_ERR_BADTYPE, PMI_ERR_BADVERSION,
    PMI_ERR_DUPINSTID, PMI_ERR_DUPINSTNAME, PMI_ERR_DUPMETRICID, PMI_ERR_DUPMETRICNAME,
    PMI_ERR_DUPTEXT, PMI_ERR_EMPTYLABELNAME, PMI_ERR_EMPTYLABELVALUE,
    PMI_ERR_EMPTYTEXTCONTENT, PMI_ERR_INSTNOTNULL, PMI_ERR_INSTNULL, PMI_ERR_NODATA,
    pmi_error_texts,
)
from pcp._core.errors import pmErr, pmErrStr
from pcp._core.level import API_LEVEL
from pcp._core.native import ffi, lib
from pcp._libpcp import zones
from pcp._libpcp.labels import AddedLabels, add_labels, label_set_lines
from pcp._libpcp.strings import DESC_TYPE_TEXT, pmIDStr, pmInDomStr, pmSemStr
from pcp._core.units import pmUnitsStr, strtod_end

PMI_DOMAIN = 245                # the domain libpcp_import gives metrics added without a pmID
_FLUSH_BYTES = 100000           # data written between two temporal index entries
_VOL_META = -1
_VOL_INDEX = -2
_V2_TZ_MAXLEN = 40              # PM_TZ_MAXLEN
_V3_STRING_LEN = 256            # PM_MAX_TIMEZONELEN
_TYPE_INDOM_DELTA = 6           # a v3 instance domain record of what changed
_LEVEL_7 = API_LEVEL >= (7, 2)
_METRIC_TYPES = (PM_TYPE_32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64, PM_TYPE_FLOAT,
                 PM_TYPE_DOUBLE, PM_TYPE_STRING)
_SEMANTICS = (PM_SEM_INSTANT, PM_SEM_COUNTER, PM_SEM_DISCRETE)
_LABEL_TYPES = (PM_LABEL_CONTEXT, PM_LABEL_DOMAIN, PM_LABEL_INDOM, PM_LABEL_CLUSTER,
                PM_LABEL_ITEM, PM_LABEL_INSTANCES)

Stamp = Tuple[int, int]


def cstr(data: Any) -> bytes:
    """What C sees of a Python bytes argument: the bytes before the first NUL."""
    nul = data.find(b"\0")
    return data if nul < 0 else data[:nul]


def _c_int(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


# ---------------------------------------------------------------------------
# what a context knows

class _Metric:
    __slots__ = ("name", "pmid", "type", "indom", "sem", "units", "meta_done", "slot")

    def __init__(self, name: bytes, pmid: int, type_: int, indom: int, sem: int,
                 units: int, slot: int) -> None:
        self.name = name
        self.pmid = pmid
        self.type = type_
        self.indom = indom
        self.sem = sem
        self.units = units          # the packed pmUnits word
        self.meta_done = False
        self.slot = slot            # index of the first metric with this pmid: its value set

    def copy(self) -> "_Metric":
        m = _Metric(self.name, self.pmid, self.type, self.indom, self.sem, self.units,
                    self.slot)
        return m


class _InDom:
    """An instance domain as libpcp_import holds it: parallel arrays of ids and names
    (`inst`, `names`) and the names in the order they were added (`added`, its namebuf).

    Two quirks of the library are kept because they decide what is written: writing the
    indom sorts the two arrays by id (libpcp's archive writer sorts the arrays it is
    given, which are the context's own), and adding an instance then rebuilds `names` in
    the order added while `inst` stays sorted, so ids and names can end up paired
    differently from how they were added. Lookups are libpcp_import's: an exact name, or
    for a name with a space, the first name with the same text up to that first space."""

    __slots__ = ("indom", "inst", "names", "added", "by_name", "by_prefix", "by_inst",
                 "meta_done", "sorted")

    def __init__(self, indom: int) -> None:
        self.indom = indom
        self.inst: List[int] = []
        self.names: List[bytes] = []
        self.added: List[bytes] = []
        self.by_name: Dict[bytes, int] = {}
        self.by_prefix: Dict[bytes, int] = {}
        self.by_inst: Dict[int, int] = {}
        self.meta_done = False
        self.sorted = False         # the arrays were reordered by a write since the last add

    def copy(self) -> "_InDom":
        d = _InDom(self.indom)
        for name, inst in zip(self.names, self.inst):
            d.append(name, inst)
        return d

    @staticmethod
    def _prefix(name: bytes) -> Optional[bytes]:
        space = name.find(b" ")
        return None if space < 0 else name[:space + 1]

    def find(self, name: bytes) -> int:
        """Index of the instance `name` names (matching to the first space), or -1."""
        prefix = self._prefix(name)
        if prefix is None:
            return self.by_name.get(name, -1)
        return self.by_prefix.get(prefix, -1)

    def _index(self, j: int) -> None:
        name = self.names[j]
        self.by_name.setdefault(name, j)
        prefix = self._prefix(name)
        if prefix is not None:
            self.by_prefix.setdefault(prefix, j)
        self.by_inst.setdefault(self.inst[j], j)

    def _reindex(self) -> None:
        self.by_name, self.by_prefix, self.by_inst = {}, {}, {}
        for j in range(len(self.inst)):
            self._index(j)

    def append(self, name: bytes, inst: int) -> None:
        self.inst.append(inst)
        self.added.append(name)
        if self.sorted:
            self.names = list(self.added)
            self.sorted = False
            self._reindex()
        else:
            self.names.append(name)
            self._index(len(self.inst) - 1)

    def sort_written(self) -> None:
        """libpcp's insertion sort of the written arrays by instance id (stable)."""
        order = sorted(range(len(self.inst)), key=self.inst.__getitem__)
        if order != list(range(len(order))):
            self.inst = [self.inst[k] for k in order]
            self.names = [self.names[k] for k in order]
            self._reindex()
        self.sorted = True


class _Text:
    __slots__ = ("type", "ident", "content", "meta_done")

    def __init__(self, type_: int, ident: int, content: bytes) -> None:
        self.type = type_
        self.ident = ident
        self.content = content
        self.meta_done = False


class _LabelSet:
    __slots__ = ("type", "ident", "inst", "labels")

    def __init__(self, type_: int, ident: int, inst: int,
                 labels: Optional[AddedLabels]) -> None:
        self.type = type_
        self.ident = ident
        self.inst = inst
        self.labels = labels


class _Archive:
    """The open files of a started context."""

    __slots__ = ("base", "version", "label", "data", "meta", "index", "vol", "last_ti",
                 "indoms", "descs", "texts")

    def __init__(self, base: bytes, version: int, label: Tuple[Any, ...]) -> None:
        self.base = base
        self.version = version
        self.label = label      # (pid, start sec, start nsec, hostname, timezone, zoneinfo)
        self.data: Any = None
        self.meta: Any = None
        self.index: Any = None
        self.vol = 0
        # 7.x: the last index entry's time (libpcp writes one entry per timestamp)
        self.last_ti: Optional[Stamp] = None
        # 7.2, what the metadata holds (libpcp's hash tables of the archive): each
        # instance domain as last written, sorted by id; with PMI_APPEND also the
        # descriptors and help texts found in the archive
        self.indoms: Dict[int, Tuple[Tuple[int, ...], Tuple[bytes, ...]]] = {}
        self.descs: Dict[int, Tuple[int, int, int, int]] = {}
        self.texts: Dict[Tuple[int, int], bytes] = {}


class ImportContext:
    """One pmiStart context (libpcp_import's pmi_context)."""

    START, ACTIVE, END = 1, 2, 3

    def __init__(self, archive: bytes, version: int) -> None:
        self.state = self.START
        self.version = version
        self.archive = archive
        self.hostname: Optional[bytes] = None
        self.timezone: Optional[bytes] = None
        # pmiSetZoneinfo (API level 7.2), or set_label_extras beyond libpcp_import
        self.zoneinfo: Optional[bytes] = None
        # beyond libpcp_import (set_label_extras): a bulk writer giving an archive back
        self.label_stamp: Optional[Stamp] = None
        self.aliases: Dict[int, List[bytes]] = {}     # pmid -> all its names (set_names)
        # 7.x's pmiStart flag PMI_PROCESS, and the tool pmiSetImportProgram registered
        self.process = False
        # 7.2's PMI_APPEND: the first write opens the archive there to add to it
        self.append = False
        self.tool_name: Optional[bytes] = None
        self.metrics: List[_Metric] = []
        self.by_name: Dict[bytes, int] = {}
        self.by_pmid: Dict[int, int] = {}         # pmid -> its first metric's index
        self.indoms: Dict[int, _InDom] = {}
        self.handles: List[Tuple[int, int]] = []      # (metric index, instance id)
        self.handle_args: List[Optional[Tuple[int, int, int, int, int]]] = []
        self.texts: List[_Text] = []
        self.labels: List[_LabelSet] = []
        self.pending = ffi.gc(lib.pcp_pending_new(), lib.pcp_pending_free)
        self.has_pending = False
        self.last_sts = 0
        self.last_stamp: Stamp = (0, 0)
        self.files: Optional[_Archive] = None
        # (name, instance) -> what pmiPutValue resolves them to, emptied by any change
        # to the metric or instance tables
        self.resolved: Dict[Tuple[Any, Any], Tuple[int, int, int, int, int]] = {}

    def inherit(self, old: "ImportContext") -> None:
        """pmiStart's inherit: the old context's definitions, all to be written again."""
        self.metrics = [m.copy() for m in old.metrics]
        self.by_name = dict(old.by_name)
        self.by_pmid = dict(old.by_pmid)
        self.indoms = {k: d.copy() for k, d in old.indoms.items()}
        self.handles = list(old.handles)
        self.handle_args = [None] * len(self.handles)
        for t in old.texts:
            self.texts.append(_Text(t.type, t.ident, t.content))
        for ls in old.labels:
            self.labels.append(_LabelSet(ls.type, ls.ident, ls.inst, ls.labels))
        self.last_stamp = old.last_stamp


# ---------------------------------------------------------------------------
# the library's statics

_contexts: List[ImportContext] = []
_current: Optional[ImportContext] = None
_stamp: Stamp = (0, 0)            # the timestamp the last records were written with
_flushsize = _FLUSH_BYTES
_max_logsz: Optional[int] = None


def current() -> Optional[ImportContext]:
    return _current


def context_of(number: int) -> Optional[ImportContext]:
    return _contexts[number - 1] if 1 <= number <= len(_contexts) else None


# libpcp_import 7.x's pmiStart flags (import.h): its second argument, 6.x's "inherit"
PMI_INHERIT, PMI_APPEND, PMI_PROCESS = 0x1, 0x2, 0x4


def start(archive: bytes, inherit: int) -> int:
    """pmiStart: a new context, made current; returns its number (1, 2, ...). Below API
    level 7.2 any non-zero `inherit` inherits the current context's definitions; 7.x
    reads flags: PMI_INHERIT, PMI_PROCESS (a long-running importer: pmiSetImportProgram
    writes its pid, pmiEnd removes the file) and PMI_APPEND (add to the archive that is
    there, or make one: _open_append)."""
    global _current
    value = pmGetConfig("PCP_ARCHIVE_VERSION")
    version = _atoi(value) if value is not None else PM_LOG_VERS02
    old = _current
    ctx = ImportContext(cstr(archive), version)
    if API_LEVEL >= (7, 2):
        ctx.process = bool(inherit & PMI_PROCESS)
        ctx.append = bool(inherit & PMI_APPEND)
        inherit &= PMI_INHERIT
    if inherit and old is not None:
        ctx.inherit(old)
    _contexts.append(ctx)
    _current = ctx
    return len(_contexts)


def _atoi(text: str) -> int:
    """C's atoi: strtol's number, as an int."""
    return _c_int(strtol_prefix(text, 0)[1])


def select(number: int) -> int:
    """pmiUseContext, with a shortcut when that context is already the current one."""
    ctx = _current
    if ctx is not None and 1 <= number <= len(_contexts) and _contexts[number - 1] is ctx:
        ctx.last_sts = 0
        return 0
    return use_context(number)


def use_context(number: int) -> int:
    """pmiUseContext."""
    global _current
    if number < 1 or number > len(_contexts):
        if _current is not None:
            _current.last_sts = PM_ERR_NOCONTEXT
        return PM_ERR_NOCONTEXT
    _current = _contexts[number - 1]
    _current.last_sts = 0
    return 0


def end() -> int:
    """pmiEnd: the final index entry, then the files are closed."""
    ctx = _current
    if ctx is None:
        return PM_ERR_NOCONTEXT
    files = ctx.files
    if files is not None and files.data is not None:
        _put_index(files, _stamp, files.meta.tell(), files.data.tell())
        for f in (files.index, files.meta, files.data):
            f.close()
        files.data = files.meta = files.index = None
    if ctx.tool_name and ctx.process:
        # a long-running importer's registration goes with its clean exit
        try:
            os.unlink(_import_program_path(ctx.tool_name))
        except OSError:
            pass
        ctx.tool_name = None
    ctx.state = ImportContext.END
    ctx.last_sts = 0
    return 0


def _set_label_text(field: str, value: bytes) -> int:
    """pmiSetHostname / pmiSetTimezone: remembered for the label, which is written at the
    first write (a later call changes nothing already written)."""
    ctx = _current
    if ctx is None:
        return PM_ERR_NOCONTEXT
    setattr(ctx, field, cstr(value))
    ctx.last_sts = 0
    return 0


def set_hostname(value: bytes) -> int:
    return _set_label_text("hostname", value)


def set_timezone(value: bytes) -> int:
    return _set_label_text("timezone", value)


def set_label_extras(zoneinfo: Optional[bytes], stamp: Optional[Stamp]) -> int:
    """Beyond libpcp_import, for bulk writers giving an archive back: the label's v3
    zoneinfo (with a zone set by set_timezone) and its start time (else the first
    record's)."""
    ctx = _current
    if ctx is None:
        return PM_ERR_NOCONTEXT
    ctx.zoneinfo = None if zoneinfo is None else cstr(zoneinfo)
    ctx.label_stamp = stamp
    return 0


def set_names(pmid: int, names: List[bytes]) -> int:
    """Beyond libpcp_import, for bulk writers giving an archive back: every name of the
    metric `pmid` (added first, under one of them), each written as a descriptor record
    of its own in this order, as an archive holds a metric of several names."""
    ctx = _current
    if ctx is None:
        return PM_ERR_NOCONTEXT
    names = [cstr(n) for n in names]
    for name in names:
        if not valid_pmns_name(name):
            return PMI_ERR_BADMETRICNAME
        if ctx.by_name.get(name, -1) >= 0 and ctx.metrics[ctx.by_name[name]].pmid != pmid:
            return PMI_ERR_DUPMETRICNAME
    ctx.aliases[pmid] = names
    return 0


def set_zoneinfo(value: bytes) -> int:
    """pmiSetZoneinfo (libpcp_import 7.x): the label's zoneinfo name."""
    return _set_label_text("zoneinfo", value)


def set_import_program(tool: bytes, version: bytes, args: bytes, archive: bytes) -> int:
    """pmiSetImportProgram (libpcp_import 7.x): the file $PCP_IMPORTRUN_DIR/<tool>
    (created or truncated, never through a symbolic link, mode 0644) with a line for each
    of version=, args=, archive= that is not empty; PM_ERR_CONV for no tool, -errno when
    the file cannot be written."""
    ctx = _current
    if ctx is None:
        return PM_ERR_NOCONTEXT
    tool = cstr(tool)
    if not tool:
        ctx.last_sts = PM_ERR_CONV
        return ctx.last_sts
    path = _import_program_path(tool)
    try:
        fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        ctx.last_sts = -(exc.errno or 1)
        return ctx.last_sts
    with os.fdopen(fd, "wb") as out:
        if ctx.process:
            out.write(b"pid=%d\n" % os.getpid())
        for key, value in ((b"version", version), (b"args", args), (b"archive", archive)):
            value = cstr(value)
            if value:
                out.write(b"%s=%s\n" % (key, value))
    ctx.tool_name = tool[:63]       # (libpcp_import keeps it in a 64-byte buffer)
    ctx.last_sts = 0
    return 0


def _import_program_path(tool: bytes) -> bytes:
    """$PCP_IMPORTRUN_DIR/<tool>, as libpcp_import 7.x names the registration file."""
    return b"%s/%s" % (os.fsencode(pmGetConfig("PCP_IMPORTRUN_DIR") or ""), tool)


def set_version(version: int) -> int:
    ctx = _current
    if ctx is None:
        return PM_ERR_NOCONTEXT
    if version not in (PM_LOG_VERS02, PM_LOG_VERS03):
        ctx.last_sts = PMI_ERR_BADVERSION
    else:
        ctx.version = version
        ctx.last_sts = 0
    return ctx.last_sts


def valid_pmns_name(name: bytes) -> bool:
    """libpcp_import's metric name rule: a letter first, then letters, digits, '_' and
    '.', every dot followed by a letter, no trailing dot (C locale isalpha/isalnum)."""
    if not name or not _isalpha(name[0]):
        return False
    previous = name[0]
    for ch in name[1:]:
        if not (_isalnum(ch) or ch in b"_."):
            return False
        if previous == 0x2E and not _isalpha(ch):
            return False
        previous = ch
    return previous != 0x2E


def _isalpha(ch: int) -> bool:
    return 0x41 <= ch <= 0x5A or 0x61 <= ch <= 0x7A


def _isalnum(ch: int) -> bool:
    return _isalpha(ch) or 0x30 <= ch <= 0x39


def add_metric(name: bytes, pmid: int, type_: int, indom: int, sem: int, units: int,
               any_type: bool = False) -> int:
    """pmiAddMetric (`any_type` lets bulk writers add aggregates too)."""
    ctx = _current
    if ctx is None:
        return PM_ERR_NOCONTEXT
    name = cstr(name)
    if not valid_pmns_name(name):
        ctx.last_sts = PMI_ERR_BADMETRICNAME
        return ctx.last_sts
    for m in ctx.metrics:
        if m.name == name:
            ctx.last_sts = PMI_ERR_DUPMETRICNAME
            return ctx.last_sts
        if m.pmid == pmid:
            ctx.last_sts = PMI_ERR_DUPMETRICID
            return ctx.last_sts
    if type_ not in _METRIC_TYPES and not (any_type and type_ == PM_TYPE_AGGREGATE):
        ctx.last_sts = PMI_ERR_BADTYPE
        return ctx.last_sts
    if sem not in _SEMANTICS:
        ctx.last_sts = PMI_ERR_BADSEM
        return ctx.last_sts
    if pmid == PM_ID_NULL:
        # choose one: domain PMI_DOMAIN, cluster and item from the metric count (not
        # checked against pmIDs given explicitly, as in libpcp_import)
        serial = len(ctx.metrics) + 1
        if serial >= 1 << 22:
            ctx.last_sts = PMI_ERR_DUPMETRICID
            return ctx.last_sts
        pmid = (PMI_DOMAIN << 22) | ((serial >> 10) << 10) | (serial % (1 << 10))
    slot = next((i for i, m in enumerate(ctx.metrics) if m.pmid == pmid), len(ctx.metrics))
    ctx.metrics.append(_Metric(name, pmid, type_, indom, sem, units, slot))
    ctx.by_name.setdefault(name, len(ctx.metrics) - 1)
    ctx.by_pmid.setdefault(pmid, len(ctx.metrics) - 1)
    ctx.resolved.clear()
    ctx.last_sts = 0
    return 0


def add_instance(indom: int, name: bytes, inst: int) -> int:
    """pmiAddInstance: a name unique up to its first space, and a unique id."""
    ctx = _current
    if ctx is None:
        return PM_ERR_NOCONTEXT
    name = cstr(name)
    d = ctx.indoms.get(indom)
    if d is None:
        d = ctx.indoms[indom] = _InDom(indom)
    dup_name = d.find(name)
    dup_inst = d.by_inst.get(inst, -1)
    if dup_name >= 0 and (dup_inst < 0 or dup_name <= dup_inst):
        ctx.last_sts = PMI_ERR_DUPINSTNAME
        return ctx.last_sts
    if dup_inst >= 0:
        ctx.last_sts = PMI_ERR_DUPINSTID
        return ctx.last_sts
    d.append(name, inst)
    d.meta_done = False         # a new instance: the whole indom is written again
    ctx.resolved.clear()
    ctx.last_sts = 0
    return 0


def _make_handle(ctx: ImportContext, name: bytes, instance: Optional[bytes]
                 ) -> Tuple[int, int, int]:
    """(status, metric index, instance id) for a metric name and instance name."""
    name = cstr(name)
    if instance is not None:
        instance = cstr(instance)
        if not instance:
            instance = None         # "" means no instance (for Perl callers)
    midx = ctx.by_name.get(name, -1)
    if midx < 0:
        return PM_ERR_NAME, -1, 0
    m = ctx.metrics[midx]
    if m.indom == PM_INDOM_NULL:
        if instance is not None:
            return PMI_ERR_INSTNOTNULL, midx, 0
        return 0, midx, _c_int(PM_IN_NULL)
    if instance is None:
        return PMI_ERR_INSTNULL, midx, 0
    d = ctx.indoms.get(m.indom)
    if d is None:
        return PM_ERR_INDOM, midx, 0
    j = d.find(instance)
    if j < 0:
        return PM_ERR_INST, midx, 0
    return 0, midx, d.inst[j]


def _as_bytes(text: Any) -> bytes:
    return text if isinstance(text, bytes) else text.encode("utf-8")


_put_text_value = lib.pcp_pending_put_text


def put_value_in(ctx: ImportContext, number: int, name: Any, instance: Any,
                 value: Any) -> int:
    """pmiUseContext(number) then pmiPutValue, in one call (the per-value path of
    pcp.pmi): `ctx` is the context `number` stands for, the metric-instance pair is
    resolved once and remembered until the metric or instance tables change."""
    if _current is not ctx:
        sts = use_context(number)
        if sts < 0:
            return sts
    try:
        hit = ctx.resolved[(name, instance)]
    except (KeyError, TypeError):
        sts, midx, inst = _make_handle(ctx, _as_bytes(name),
                                       None if instance is None else _as_bytes(instance))
        if sts != 0:
            if value.__class__ is not bytes:
                value.encode("utf-8")       # the official module encodes before calling
            ctx.last_sts = sts
            return sts
        m = ctx.metrics[midx]
        hit = (m.slot, m.pmid, 1 if m.indom == PM_INDOM_NULL else 0, m.type, inst)
        try:
            ctx.resolved[(name, instance)] = hit
        except TypeError:
            pass
    if value.__class__ is not bytes:
        value = value.encode("utf-8")
    ctx.has_pending = True
    sts = ctx.last_sts = _put_text_value(ctx.pending, *hit, value)
    return sts


def put_value_handle_in(ctx: ImportContext, number: int, handle: int, value: Any) -> int:
    """pmiUseContext(number) then pmiPutValueHandle, in one call."""
    if _current is not ctx:
        sts = use_context(number)
        if sts < 0:
            return sts
    if value.__class__ is not bytes:
        value = value.encode("utf-8")
    if handle <= 0 or handle > len(ctx.handles):
        ctx.last_sts = PMI_ERR_BADHANDLE
        return ctx.last_sts
    hit = ctx.handle_args[handle - 1]
    if hit is None:
        midx, inst = ctx.handles[handle - 1]
        m = ctx.metrics[midx]
        hit = ctx.handle_args[handle - 1] = (m.slot, m.pmid, 1 if m.indom == PM_INDOM_NULL
                                             else 0, m.type, inst)
    ctx.has_pending = True
    sts = ctx.last_sts = _put_text_value(ctx.pending, *hit, value)
    return sts


def get_handle(name: bytes, instance: Optional[bytes]) -> int:
    """pmiGetHandle: a number (1, 2, ...) standing for a metric-instance pair."""
    ctx = _current
    if ctx is None:
        return PM_ERR_NOCONTEXT
    sts, midx, inst = _make_handle(ctx, name, instance)
    if sts != 0:
        ctx.last_sts = sts
        return sts
    ctx.handles.append((midx, inst))
    ctx.handle_args.append(None)
    ctx.last_sts = len(ctx.handles)
    return ctx.last_sts


def put_text(type_: int, class_: int, ident: int, content: Optional[bytes]) -> int:
    """pmiPutText: help text for a metric or an instance domain, written at the next
    pmiWrite."""
    ctx = _current
    if ctx is None:
        return PM_ERR_NOCONTEXT
    sts = 0
    if type_ not in (PM_TEXT_PMID, PM_TEXT_INDOM):
        sts = PMI_ERR_BADTEXTTYPE
    elif class_ not in (PM_TEXT_ONELINE, PM_TEXT_HELP):
        sts = PMI_ERR_BADTEXTCLASS
    elif ident == PM_ID_NULL:
        sts = PMI_ERR_BADTEXTID
    elif content is None or not cstr(content):
        sts = PMI_ERR_EMPTYTEXTCONTENT
    else:
        content = cstr(content)
        both = type_ | class_
        if any(t.type == both and t.ident == ident and t.content == content
               for t in ctx.texts):
            sts = PMI_ERR_DUPTEXT
        else:
            ctx.texts.append(_Text(both, ident, content))
    ctx.last_sts = sts
    return sts


def put_label(flags: int, ident: int, inst: int, name: Optional[bytes],
              value: Optional[bytes]) -> int:
    """pmiPutLabel: one name:value label added to the label set of (type, ident[, inst]),
    written (and forgotten) at the next pmiWrite."""
    ctx = _current
    if ctx is None:
        return PM_ERR_NOCONTEXT
    type_ = flags & ~(PM_LABEL_OPTIONAL | 0x40) & 0xFFFFFFFF
    sts = 0
    if type_ not in _LABEL_TYPES:
        sts = PMI_ERR_BADLABELTYPE
    elif type_ == PM_LABEL_INSTANCES and inst == PM_IN_NULL:
        sts = PMI_ERR_BADLABELINSTANCE
    elif ident == PM_ID_NULL and type_ != PM_LABEL_CONTEXT:
        sts = PMI_ERR_BADLABELID
    elif name is None or not cstr(name):
        sts = PMI_ERR_EMPTYLABELNAME
    elif value is None or not cstr(value):
        sts = PMI_ERR_EMPTYLABELVALUE
    if sts:
        ctx.last_sts = sts
        return sts
    name, value = cstr(name), cstr(value)
    found = None
    for ls in ctx.labels:
        if ls.type == type_ and ls.ident == ident and (
                type_ != PM_LABEL_INSTANCES or ls.inst == inst):
            found = ls
            break
    # JSON keywords stay bare, anything else is quoted (as libpcp_import does, without
    # escaping: a quote in the value makes the label invalid); 7.x also passes a quoted
    # string and anything strtod reads whole (a number) through as they are
    if value.lower() in (b"true", b"false", b"null") or (API_LEVEL >= (7, 2) and (
            (value[:1] == b'"' and len(value) > 1 and value[-1:] == b'"')
            or (value and strtod_end(value.decode("latin-1")) == len(value)))):
        text = b'{"' + name + b'":' + value + b"}"
    else:
        text = b'{"' + name + b'":"' + value + b'"}'
    text = text[:8191]      # the pmsprintf into a PM_MAXLABELJSONLEN buffer
    try:
        labels = add_labels(found.labels if found else None, text, flags & 0xFFFFFFFF)
    except pmErr:
        ctx.last_sts = PMI_ERR_ADDLABELERROR
        return ctx.last_sts
    if found is None:
        found = _LabelSet(type_, ident, PM_IN_NULL, labels)
        ctx.labels.append(found)
    found.labels = labels
    if type_ == PM_LABEL_INSTANCES:
        found.inst = inst
    ctx.last_sts = 0
    return 0


# ---------------------------------------------------------------------------
# writing

def _timestamp_text(stamp: Stamp) -> str:
    t = zones.localtime(stamp[0])
    return "%02d:%02d:%02d.%09d" % (t.tm_hour, t.tm_min, t.tm_sec, _c_int(stamp[1]))


def _check_timestamp(ctx: ImportContext, stamp: Stamp) -> int:
    if stamp < ctx.last_stamp:
        sys.stderr.write("Fatal Error: timestamp %s not greater than previous valid "
                         "timestamp %s\n" % (_timestamp_text(stamp),
                                             _timestamp_text(ctx.last_stamp)))
        sys.stderr.flush()
        return PMI_ERR_BADTIMESTAMP
    return 0


def write_now() -> int:
    """pmiWriteNow (libpcp_import 7.x): pmiWrite at the current time."""
    now = time.time_ns()
    return write(now // 1000000000, now % 1000000000)


def write(sec: int, nsec: int) -> int:
    """pmiWrite2 / pmiHighResWrite: the pending values as one record at sec.nsec (now,
    for a negative sec), then pending help text and labels."""
    ctx = _current
    if ctx is None:
        return PM_ERR_NOCONTEXT
    if sec < 0:
        now = time.time_ns()
        sec, nsec = now // 1000000000, now % 1000000000
    if not ctx.has_pending and not any(not t.meta_done for t in ctx.texts) \
            and not ctx.labels:
        ctx.last_sts = PMI_ERR_NODATA
        return ctx.last_sts
    stamp = (sec, _c_int(nsec))
    sts = _check_timestamp(ctx, stamp)
    if sts == 0:
        ctx.last_stamp = stamp
        if ctx.has_pending:
            sts = _put_result(ctx, ctx.pending, stamp)
            lib.pcp_pending_clear(ctx.pending)
            ctx.has_pending = False
        if sts >= 0:
            sts = _put_text(ctx)
            if sts >= 0:
                sts = _put_labels(ctx)
    ctx.last_sts = sts
    return sts


def put_result_sets(sets: List[Tuple[int, int, int, List[Tuple[int, int, int, int, bytes]]]],
                    stamp: Stamp) -> int:
    """pmiPutResult / pmiPutHighResResult: a caller's result written as it is, now.
    `sets` are (pmid, numval, valfmt, [(inst, lval, vtype, vlen, host-order payload)])."""
    ctx = _current
    if ctx is None:
        return PM_ERR_NOCONTEXT
    pending = ffi.gc(lib.pcp_pending_new(), lib.pcp_pending_free)
    for pmid, numval, valfmt, values in sets:
        sts = lib.pcp_pending_add_set(pending, pmid & 0xFFFFFFFF, numval, valfmt)
        for inst, lval, vtype, vlen, payload in values:
            if sts < 0:
                break
            block = b"\0\0\0\0" + payload
            sts = lib.pcp_pending_add_value(pending, _c_int(inst), _c_int(lval), block,
                                            vlen, vtype)
        if sts < 0:
            ctx.last_sts = sts
            return sts
    sts = _check_timestamp(ctx, stamp)
    if sts == 0:
        sts = _put_result(ctx, pending, stamp)
        ctx.last_stamp = stamp
    ctx.last_sts = sts
    return sts


def put_mark() -> int:
    """pmiPutMark: a <mark> record 1 msec after the last record (none before any)."""
    ctx = _current
    if ctx is None:
        return PM_ERR_NOCONTEXT
    if ctx.last_stamp == (0, 0):
        return 0
    files = ctx.files
    if files is None or files.data is None:
        return 0        # libpcp_import would write to a file it never opened
    sec, nsec = ctx.last_stamp
    nsec += 1000000
    if nsec > 1000000000:
        sec, nsec = sec + 1, nsec - 1000000000
    files.data.write(_encode(lib.pcp_archive_write_mark, files.version, sec, nsec))
    files.data.flush()
    return 0


def _encode(encoder: Any, *args: Any) -> bytes:
    """Run one of csrc/archive_write.c's encoders: size, then bytes."""
    need = encoder(ffi.NULL, 0, *args)
    if need < 0:
        raise pmErr(need)
    buf = ffi.new("uint8_t[]", need)
    got = encoder(buf, need, *args)
    if got != need:
        raise pmErr(got if got < 0 else -12444)
    return ffi.buffer(buf, need)[:]


def encode_pending(pending: Any, version: int, stamp: Stamp) -> bytes:
    """The pending values as one data record (sizes, then bytes)."""
    need = lib.pcp_pending_encode(pending, version, stamp[0], stamp[1], ffi.NULL, 0)
    if need < 0:
        raise pmErr(need)
    buf = ffi.new("uint8_t[]", need)
    got = lib.pcp_pending_encode(pending, version, stamp[0], stamp[1], buf, need)
    if got != need:
        raise pmErr(got if got < 0 else -12444)
    return ffi.buffer(buf, need)[:]


def _squash_tz() -> str:
    """libpcp's __pmSquashTZ: the local zone as "NAME+H" (or "NAME+H:MM", or "NAME")."""
    t = time.localtime()
    name = t.tm_zone or ""
    offset = -(t.tm_gmtoff or 0)
    if offset == 0:
        return name[:_V2_TZ_MAXLEN]
    hours = int(offset / 3600)
    mins = abs(int((offset - hours * 3600) / 60))
    if mins == 0:
        return "%s%+d" % (name[:_V2_TZ_MAXLEN - 3], hours)
    return "%s%+d:%02d" % (name[:_V2_TZ_MAXLEN - 6], hours, mins)


def local_timezone() -> str:
    """libpcp's __pmTimezone: $TZ, or the squashed local zone when $TZ is unset or a
    ':file' zone; a $TZ too long for a label loses its ':00's first."""
    tz = os.environ.get("TZ")
    if tz is None or tz.startswith(":"):
        squashed = _squash_tz()
        os.environ["TZ"] = squashed
        time.tzset()
        return squashed
    if len(tz) > _V2_TZ_MAXLEN:
        # libpcp keeps the text before each ":00" and drops whatever follows the last one
        pieces = tz.split(":00")
        shorter = "".join(pieces[:-1]) if len(pieces) > 1 else tz
        if len(shorter) > _V2_TZ_MAXLEN:
            squashed = _squash_tz()
            os.environ["TZ"] = squashed
            time.tzset()
            return squashed
        os.environ["TZ"] = shorter
        time.tzset()
        return shorter
    return tz


def local_zoneinfo() -> Optional[str]:
    """libpcp's __pmZoneinfo: ":Area/City" from /etc/localtime's link target, or from a
    zone file under /usr/share/zoneinfo with the same contents."""
    try:
        target = os.readlink("/etc/localtime")
    except FileNotFoundError:
        return None
    except OSError:
        found = _zoneinfo_by_contents()
        if found is None:
            return None
        target = found
    at = target.find("/zoneinfo/")
    if at >= 0:
        return ":" + target[at + len("/zoneinfo/"):]
    return ":" + target


def _zoneinfo_by_contents() -> Optional[str]:
    import hashlib

    try:
        with open("/etc/localtime", "rb") as f:
            wanted = f.read()
    except OSError:
        return None
    if not wanted:
        return None
    digest = hashlib.sha256(wanted).digest()
    best: Optional[str] = None
    for root, dirs, files in os.walk("/usr/share/zoneinfo"):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.startswith("."):
                continue
            path = os.path.join(root, name)
            try:
                if os.path.getsize(path) != len(wanted):
                    continue
                with open(path, "rb") as f:
                    if hashlib.sha256(f.read()).digest() != digest:
                        continue
            except OSError:
                continue
            if best is None or len(best) > len(path):
                best = path
    return best


def _volume_name(base: bytes, vol: int) -> bytes:
    if vol == _VOL_META:
        return base + b".meta"
    if vol == _VOL_INDEX:
        return base + b".index"
    return base + b".%d" % vol


def _new_file(base: bytes, vol: int) -> Any:
    """__pmLogNewFile: create one file of the archive, never over an existing one."""
    name = _volume_name(base, vol)
    if os.access(name, os.R_OK):
        sys.stderr.write('__pmLogNewFile: "%s" already exists, not over-written\n'
                         % os.fsdecode(name))
        sys.stderr.flush()
        raise FileExistsError(EEXIST, "exists")
    return open(name, "xb")


def _check_context_start(ctx: ImportContext) -> int:
    """Create the archive on the first write: three files, each with its label."""
    if ctx.state == ImportContext.END:
        # libpcp_import would write to the files it closed at pmiEnd (undefined there)
        return -EBADF
    if ctx.state != ImportContext.START:
        return 0
    if ctx.append:
        sts = _open_append(ctx)
        if sts != -ENOENT:
            return sts
        ctx.append = False          # no archive there yet: made as without the flag
    host = ctx.hostname if ctx.hostname is not None else socket.gethostname().encode()
    base = ctx.archive
    made = []
    try:
        for vol in (_VOL_INDEX, _VOL_META, 0):
            made.append((vol, _new_file(base, vol)))
    except OSError as exc:
        for vol, f in made:
            f.close()
            os.unlink(_volume_name(base, vol))
        return -(exc.errno or 1)
    version = ctx.version
    if ctx.timezone is not None and API_LEVEL < (7, 2):
        tz, zoneinfo = ctx.timezone, ctx.zoneinfo or b""   # (set_label_extras' alone here)
    else:
        # 7.x keeps the local zoneinfo name when the caller sets only the time zone
        width = _V2_TZ_MAXLEN if version == PM_LOG_VERS02 else _V3_STRING_LEN
        tz = (ctx.timezone if ctx.timezone is not None
              else local_timezone().encode()[:width - 1])
        zoneinfo = (ctx.zoneinfo if ctx.zoneinfo is not None
                    else (local_zoneinfo() or "").encode())
    zones.new_zone(tz.decode("utf-8", "replace"))
    start = _stamp if ctx.label_stamp is None else ctx.label_stamp
    files = _Archive(base, version, (os.getpid(), start[0], start[1], host, tz, zoneinfo))
    opened = dict(made)
    files.index, files.meta, files.data = opened[_VOL_INDEX], opened[_VOL_META], opened[0]
    for vol, f in ((_VOL_INDEX, files.index), (_VOL_META, files.meta), (0, files.data)):
        f.write(_label(files, vol))
    ctx.files = files
    ctx.state = ImportContext.ACTIVE
    return 0


def _open_append(ctx: ImportContext) -> int:
    """libpcp 7.2's __pmLogOpenAppend for PMI_APPEND: the archive already there (its
    labels checked, its metadata loaded: the descriptors, the latest instances of each
    instance domain, the help text), its .meta, .index and last data volume opened at
    their ends. The labels stay as they are; the archive's version is the context's.
    0, or an error (-ENOENT: no archive there)."""
    # pylint: disable-next=import-outside-toplevel
    from pcp._archive.meta import Metadata
    from pcp._archive.reader import Archive  # pylint: disable=import-outside-toplevel
    base = os.fsdecode(ctx.archive)
    meta = Metadata()
    try:
        found = Archive(base, 0)
        try:
            found.open()
            found.load_meta(meta)
            found.check_volume(found.maxvol)
        finally:
            found.close()
    except pmErr as exc:
        return exc.args[0]
    label = found.meta_label
    files = _Archive(ctx.archive, label.version, (label.pid, label.stamp[0], label.stamp[1],
                                                  label.hostname, label.timezone,
                                                  label.zoneinfo))
    try:
        files.meta = open(_volume_name(ctx.archive, _VOL_META), "r+b")
        files.index = open(_volume_name(ctx.archive, _VOL_INDEX), "r+b")
        files.data = open(_volume_name(ctx.archive, found.maxvol), "r+b")
    except OSError as exc:
        for f in (files.meta, files.index, files.data):
            if f is not None:
                f.close()
        return -(exc.errno or 1)
    for f in (files.meta, files.index, files.data):
        f.seek(0, os.SEEK_END)
    files.vol = found.maxvol
    files.descs = {pmid: desc[1:] for pmid, desc in meta.descs.items()}
    for indom, chain in meta.all_indoms().items():
        if chain:
            files.indoms[indom] = (tuple(chain[0].insts), tuple(chain[0].names))
    for text_type, texts in meta.text_types.items():
        for ident, content in texts.items():
            files.texts[(ident, text_type)] = content
    ctx.version = label.version
    ctx.files = files
    ctx.state = ImportContext.ACTIVE
    return 0


def _label(files: _Archive, vol: int) -> bytes:
    pid, sec, nsec, host, tz, zoneinfo = files.label
    return _encode(lib.pcp_archive_write_label, files.version, pid, sec, nsec, vol, host, tz,
                   zoneinfo)


def _put_index(files: _Archive, stamp: Stamp, meta_off: int, data_off: int) -> None:
    if _LEVEL_7:
        if stamp == files.last_ti:
            return          # 7.x: the first entry of a timestamp has the right offsets
        files.last_ti = stamp
    entry = lib.pcp_archive_write_index(ffi.NULL, 0, files.version, stamp[0], stamp[1],
                                        files.vol, meta_off, data_off)
    if entry < 0:
        return          # libpcp reports a v2 offset past 2 GiB and writes nothing
    files.index.write(_encode(lib.pcp_archive_write_index, files.version, stamp[0], stamp[1],
                              files.vol, meta_off, data_off))
    files.index.flush()


def _check_indom(ctx: ImportContext, indom: int) -> bool:
    """Write the instance domain if it changed since it was last written. From 7.2 an
    unchanged one is not written again, and in a v3 archive a change is written as the
    instances added and deleted when there are no more of them than instances
    (pmaDeltaInDom)."""
    d = ctx.indoms.get(indom)
    if d is None or d.meta_done:
        return False
    files = ctx.files
    old = files.indoms.get(indom) if _LEVEL_7 else None
    if old is not None:
        d.sort_written()
        new = (tuple(d.inst), tuple(d.names))
        if files.version == PM_LOG_VERS03:
            delta = _indom_delta(old, new)
        else:
            delta = None if old == new else False
        if delta is None:                   # the same: nothing to write
            d.meta_done = True
            return False
        if delta:
            files.meta.write(_indom_delta_record(_stamp, indom, delta))
            files.indoms[indom] = new
            d.meta_done = True
            ctx.resolved.clear()
            return True
    _write_indom(ctx, d, _stamp)
    return True


def _indom_delta(old: Tuple[Tuple[int, ...], Tuple[bytes, ...]],
                 new: Tuple[Tuple[int, ...], Tuple[bytes, ...]]) -> Any:
    """pmaDeltaInDom of two sorted instance domains: None when they are the same, False
    when the whole domain is to be written (an id renamed, or more changes than
    instances), else the changes in id order: (id, name), name None for one deleted."""
    (old_ids, old_names), (new_ids, new_names) = old, new
    changes: List[Tuple[int, Optional[bytes]]] = []
    i = j = 0
    while i < len(old_ids) or j < len(new_ids):
        if j == len(new_ids) or (i < len(old_ids) and old_ids[i] < new_ids[j]):
            changes.append((old_ids[i], None))
            i += 1
        elif i == len(old_ids) or old_ids[i] > new_ids[j]:
            changes.append((new_ids[j], new_names[j]))
            j += 1
        else:
            if cstr(old_names[i]) != cstr(new_names[j]):
                return False
            i += 1
            j += 1
    if not changes:
        return None
    if len(changes) > len(new_ids):
        return False
    return changes


def _indom_delta_record(stamp: Stamp, indom: int,
                        changes: List[Tuple[int, Optional[bytes]]]) -> bytes:
    """A v3 TYPE_INDOM_DELTA record: the changed ids, the string index of each added
    name (-1 for a deleted instance) and the added names."""
    strings = bytearray()
    index = []
    for _, name in changes:
        if name is None:
            index.append(-1)
        else:
            index.append(len(strings))
            strings += cstr(name) + b"\0"
    length = 4 + 4 + 12 + 4 + 4 + 8 * len(changes) + len(strings) + 4
    sec = stamp[0] & 0xFFFFFFFFFFFFFFFF
    return b"".join((
        struct.pack(">Ii", length, _TYPE_INDOM_DELTA),
        struct.pack(">IIi", sec & 0xFFFFFFFF, sec >> 32, stamp[1]),
        struct.pack(">Ii", indom & 0xFFFFFFFF, len(changes)),
        struct.pack(">%di" % len(changes), *[inst for inst, _ in changes]),
        struct.pack(">%di" % len(changes), *index),
        bytes(strings), struct.pack(">I", length)))


def _write_indom(ctx: ImportContext, d: _InDom, stamp: Stamp) -> None:
    """An instance domain record of `d` stamped `stamp` (its arrays then sorted, as
    libpcp's writer leaves them)."""
    files = ctx.files
    names = b"".join(n + b"\0" for n in d.names)
    inst = ffi.new("int32_t[]", d.inst)
    files.meta.write(_encode(lib.pcp_archive_write_indom, files.version, stamp[0], stamp[1],
                             d.indom, len(d.inst), inst, names, len(names)))
    d.meta_done = True
    d.sort_written()
    files.indoms[d.indom] = (tuple(d.inst), tuple(d.names))
    ctx.resolved.clear()


def put_indom(indom: int, stamp: Stamp, insts: List[int], names: List[bytes]) -> int:
    """Beyond libpcp_import, for bulk writers giving an archive back with its instances
    coming and going: the instance domain as it was at `stamp` written now, and made
    the context's (pmiAddInstance only ever adds)."""
    ctx = _current
    if ctx is None:
        return PM_ERR_NOCONTEXT
    sts = _check_context_start(ctx)
    if sts < 0:
        return sts
    d = ctx.indoms[indom] = _InDom(indom)
    for name, inst in zip(names, insts):
        d.append(cstr(name), inst)
    _write_indom(ctx, d, stamp)
    ctx.files.meta.flush()
    return 0


class _MetadataChange(Exception):
    """A metric added to an archive (PMI_APPEND) unlike its descriptor there: the
    PM_ERR_LOGCHANGE* code."""


#: what differs, in the order libpcp 7.2 checks: type, semantics, indom, units
_DESC_CHANGES = (PM_ERR_LOGCHANGETYPE, PM_ERR_LOGCHANGESEM, PM_ERR_LOGCHANGEINDOM,
                 PM_ERR_LOGCHANGEUNITS)


def _check_metric(ctx: ImportContext, pmid: int) -> bool:
    """Write the descriptor of the (first) metric with this pmid, and its indom. Raises
    _MetadataChange for a metric unlike the descriptor an appended archive has."""
    k = ctx.by_pmid.get(pmid)
    if k is None:
        return False
    m = ctx.metrics[k]
    needti = False
    existing = ctx.files.descs.get(pmid) if not m.meta_done else None
    if existing is not None:
        # PMI_APPEND: already in the archive, and it must be the same metric
        for code, ours, theirs in zip(_DESC_CHANGES, (m.type, m.sem, m.indom, m.units),
                                      (existing[0], existing[2], existing[1], existing[3])):
            if ours != theirs:
                raise _MetadataChange(code)
        m.meta_done = True
    if not m.meta_done:
        for name in ctx.aliases.get(pmid) or [m.name]:
            ctx.files.meta.write(_encode(lib.pcp_archive_write_desc, m.pmid, m.type,
                                         m.indom, m.sem, m.units, name, len(name)))
        m.meta_done = True
        needti = True
    if m.indom != PM_INDOM_NULL:
        needti = _check_indom(ctx, m.indom) or needti
    return needti


def _logsz_limit(version: int) -> int:
    global _max_logsz
    if _max_logsz is None:
        text = os.environ.get("PCP_LOGIMPORT_MAXLOGSZ")
        if text is not None:
            _max_logsz = _strtoull(text)
        elif version >= PM_LOG_VERS03:
            _max_logsz = (1 << 63) - 1
        else:
            _max_logsz = 0x7FFFFFFF
    return _max_logsz


def _strtoull(text: str) -> int:
    """C's strtoull(text, NULL, 10): a minus sign negates modulo 2**64, too big clamps."""
    end, _ = strtol_prefix(text, 0)
    number = text[:end].strip(" \t\n\r\f\v")
    if not number:
        return 0
    value = min(int(number.lstrip("+-")), (1 << 64) - 1)
    return (-value) & ((1 << 64) - 1) if number.startswith("-") else value


def _new_volume(ctx: ImportContext) -> None:
    files = ctx.files
    nextvol = files.vol + 1
    try:
        f = _new_file(files.base, nextvol)
    except OSError as exc:
        sys.stderr.write("logimport: Error: volume %d: %s\n" % (nextvol, pmErrStr(-exc.errno)))
        return
    files.data.close()
    files.data = f
    files.vol = nextvol
    f.write(_label(files, nextvol))
    f.flush()


def _put_result(ctx: ImportContext, pending: Any, stamp: Stamp) -> int:
    """libpcp_import's _pmi_put_result: metadata first, maybe an index entry, the record."""
    global _stamp, _flushsize
    lib.pcp_pending_sort(pending)
    _stamp = stamp
    sts = _check_context_start(ctx)
    if sts < 0:
        return sts
    files = ctx.files
    old_meta = files.meta.tell()
    record = encode_pending(pending, files.version, stamp)
    needti = False
    try:
        for i in range(lib.pcp_pending_numpmid(pending)):
            needti = _check_metric(ctx, lib.pcp_pending_pmid(pending, i)) or needti
    except _MetadataChange as exc:
        return exc.args[0]
    return _write_record(ctx, files, record, old_meta, needti)


def _write_record(ctx: ImportContext, files: _Archive, record: bytes, old_meta: int,
                  needti: bool) -> int:
    global _flushsize
    if files.data.tell() + len(record) >= _logsz_limit(files.version):
        _new_volume(ctx)
        _flushsize = _FLUSH_BYTES
        needti = True
    if needti or files.data.tell() + len(record) > _flushsize:
        files.meta.flush()
        _put_index(files, _stamp, old_meta, files.data.tell())
        _flushsize = files.data.tell() + _FLUSH_BYTES
    files.data.write(record)
    files.data.flush()
    files.meta.flush()
    return 0


def put_records(records: Any, lengths: Any, secs: Any, nsecs: Any, pmids: List[int]) -> int:
    """Many encoded data records at once (bulk writers), as if each had been written by
    its own pmiWrite: the metrics `pmids` have their metadata written before the first
    record, then index entries and new volumes come where libpcp_import would put them.
    `records` holds the records back to back; lengths[k] == 0 means no record k."""
    global _stamp, _flushsize
    ctx = _current
    if ctx is None:
        return PM_ERR_NOCONTEXT
    ks = [k for k in range(len(lengths)) if lengths[k]]
    if not ks:
        return 0
    for k in ks:
        stamp = (int(secs[k]), int(nsecs[k]))
        sts = _check_timestamp(ctx, stamp)
        if sts < 0:
            return sts
        ctx.last_stamp = stamp
    first = ks[0]
    _stamp = (int(secs[first]), int(nsecs[first]))
    sts = _check_context_start(ctx)
    if sts < 0:
        return sts
    files = ctx.files
    meta_off = files.meta.tell()
    needti = False
    try:
        for pmid in pmids:
            needti = _check_metric(ctx, pmid) or needti
    except _MetadataChange as exc:
        return exc.args[0]
    files.meta.flush()
    limit = _logsz_limit(files.version)
    view = memoryview(records)
    pos = files.data.tell()
    start = off = 0
    for k in ks:
        n = int(lengths[k])
        stamp = (int(secs[k]), int(nsecs[k]))
        if pos + n >= limit:
            files.data.write(view[start:off])
            start = off
            _new_volume(ctx)
            pos = files.data.tell()
            _flushsize = _FLUSH_BYTES
            needti = True
        if needti or pos + n > _flushsize:
            _put_index(files, stamp, meta_off, pos)
            _flushsize = pos + _FLUSH_BYTES
            needti = False
        meta_off = files.meta.tell()
        _stamp = stamp
        off += n
        pos += n
    files.data.write(view[start:off])
    files.data.flush()
    return 0


def _put_pending_metadata(ctx: ImportContext, write_records: Any) -> int:
    """What libpcp_import's _pmi_put_text and _pmi_put_label share: stamped with the
    last record's time, they start the archive if need be, write their records (the
    metric or indom each refers to first) and add an index entry when that wrote
    descriptors or instance domains."""
    global _stamp
    _stamp = ctx.last_stamp
    sts = _check_context_start(ctx)
    if sts < 0:
        return sts
    files = ctx.files
    try:
        needti = write_records(ctx, files)
    except _MetadataChange as exc:
        return exc.args[0]
    files.meta.flush()
    if needti:
        _put_index(files, _stamp, files.meta.tell(), files.data.tell())
    return 0


def _text_records(ctx: ImportContext, files: _Archive) -> bool:
    needti = False
    for t in ctx.texts:
        if t.meta_done:
            continue
        if t.type & PM_TEXT_PMID:
            needti = _check_metric(ctx, t.ident) or needti
        elif t.type & PM_TEXT_INDOM:
            needti = _check_indom(ctx, t.ident) or needti
        if _LEVEL_7:
            # 7.2: not again when the archive has the same text (PMI_APPEND)
            if files.texts.get((t.ident, t.type)) == t.content:
                t.meta_done = True
                continue
            files.texts[(t.ident, t.type)] = t.content
        files.meta.write(_encode(lib.pcp_archive_write_text, t.type, t.ident, t.content,
                                 len(t.content)))
        t.meta_done = True
    return needti


def _label_records(ctx: ImportContext, files: _Archive) -> bool:
    """Every pending label set, one record each; then they are forgotten."""
    needti = False
    for ls in ctx.labels:
        if ls.type == PM_LABEL_ITEM:
            needti = _check_metric(ctx, ls.ident) or needti
        elif ls.type in (PM_LABEL_INDOM, PM_LABEL_INSTANCES):
            needti = _check_indom(ctx, ls.ident) or needti
        labels = ls.labels
        entries = labels.entries() if labels is not None else []
        flat = ffi.new("uint32_t[]", [x for e in entries for x in e] or [0])
        json = labels.json if labels is not None else b""
        files.meta.write(_encode(lib.pcp_archive_write_labelset, files.version, _stamp[0],
                                 _stamp[1], ls.type, ls.ident & 0xFFFFFFFF,
                                 ls.inst & 0xFFFFFFFF, json, len(json), len(entries), flat))
    ctx.labels = []
    return needti


def _put_text(ctx: ImportContext) -> int:
    return _put_pending_metadata(ctx, _text_records)


def _put_labels(ctx: ImportContext) -> int:
    return _put_pending_metadata(ctx, _label_records)


# ---------------------------------------------------------------------------
# diagnostics

def err_str(code: int) -> str:
    """pmiErrStr: libpcp_import's own texts, else pmErrStr's; -1 means the current
    context's last status."""
    if code == -1 and _current is not None:
        code = _current.last_sts
    if code == PMI_ERR_BADVERSION and API_LEVEL >= (7, 2):
        return "Illegal archive version"
    text = pmi_error_texts.get(code)
    return text if text is not None else pmErrStr(code)


def dump() -> None:
    """pmiDump: the current context on stderr (the metric descriptors in brief)."""
    out = sys.stderr
    ctx = _current
    index = _contexts.index(ctx) if ctx is not None else -1
    out.write("pmiDump: context %d of %d" % (index, len(_contexts)))
    if ctx is None:
        out.write(" Error: current context is not defined.\n")
        return
    out.write(" archive: %s\n" % os.fsdecode(ctx.archive))
    state = {1: "(start)", 2: "(active)", 3: "(end)"}.get(ctx.state, "(BAD)")
    out.write("  state: %d %s hostname: %s timezone: %s\n" % (
        ctx.state, state,
        "<undefined>" if ctx.hostname is None else os.fsdecode(ctx.hostname),
        "<undefined>" if ctx.timezone is None else os.fsdecode(ctx.timezone)))
    if not ctx.metrics:
        out.write("  No metrics.\n")
    for i, m in enumerate(ctx.metrics):
        out.write("  metric[%d] name=%s pmid=%s\n" % (i, os.fsdecode(m.name), pmIDStr(m.pmid)))
        out.write("    Data Type: %s  InDom: %s 0x%x\n" % (DESC_TYPE_TEXT[m.type], pmInDomStr(m.indom),
                                                        m.indom))
        out.write("    Semantics: %s  Units: %s\n" % (pmSemStr(m.sem),
                                                     pmUnitsStr(m.units) or "none"))
    if not ctx.indoms:
        out.write("  No indoms.\n")
    for i, d in enumerate(ctx.indoms.values()):
        out.write("  indom[%d] indom=%s" % (i, pmInDomStr(d.indom)))
        out.write("\n")
        for j, (name, inst) in enumerate(zip(d.names, d.inst)):
            out.write("   instance[%d] %s (%d)\n" % (j, os.fsdecode(name), inst))
    if not ctx.handles:
        out.write("  No handles.\n")
    for h, (midx, inst) in enumerate(ctx.handles):
        m = ctx.metrics[midx]
        out.write("  handle[%d] metric=%s (%s) instance=%d\n" % (
            h, os.fsdecode(m.name), pmIDStr(m.pmid), inst))
    if not ctx.texts:
        out.write("  No text.\n")
    for t, text in enumerate(ctx.texts):
        out.write("  text[%d] " % t)
        if text.type & PM_TEXT_PMID:
            out.write("pmid=%s " % pmIDStr(text.ident))
        elif text.type & PM_TEXT_INDOM:
            out.write("indom=%s " % pmInDomStr(text.ident))
        else:
            out.write("type=unknown ")
        content = os.fsdecode(text.content)
        if text.type & PM_TEXT_ONELINE:
            out.write("[%s]" % content)
        elif text.type & PM_TEXT_HELP:
            out.write("\n%s" % content)
        else:
            out.write("content=unknown")
        out.write("\n")
    if not ctx.labels:
        out.write("  No labels.\n")
    for n, ls in enumerate(ctx.labels):
        out.write("  label[%d] " % n)
        out.write(_label_owner(ls))
        labels = ls.labels
        for line in label_set_lines(ls.ident, ls.type, ls.inst, labels.json if labels else b"",
                                    labels.entries() if labels else []):
            out.write(line + "\n")
    if not ctx.has_pending:
        out.write("  No pmResult.\n")
    else:
        _dump_pending(out, ctx)
    out.flush()


def _dump_pending(out: Any, ctx: ImportContext) -> None:
    """libpcp's __pmPrintResult of the pending values, as pmiDump prints it: no PMAPI
    context, so no names, no descriptors (values printed by their block's type) and
    instance names unknown; the values in the order they were put."""
    from pcp._decode.result import FlatResult, pmHighResResult
    from pcp._libpcp.printvalue import insitu_text, value_text
    from pcp._libpcp.values import pmExtractValue

    def extract(valfmt: int, value: Any, intype: int, outtype: int) -> Any:
        r, k = value._r, value._k
        vt = r.vtype[k]
        if vt < 0:
            return pmExtractValue(valfmt, intype, outtype, r.ival[k])
        return pmExtractValue(valfmt, intype, outtype, 0, vt, r.payload(k))

    flat = FlatResult.from_log_record(encode_pending(ctx.pending, PM_LOG_VERS03, (0, 0)),
                                      PM_LOG_VERS03)
    res = pmHighResResult(flat)
    out.write("__pmResult dump from %#x timestamp: 0.000000000 %s numpmid: %d\n"
              % (id(ctx.pending) & 0xFFFFFFFFFFFF, _timestamp_text((0, 0)), flat.numpmid))
    for i in range(flat.numpmid):
        numval = flat.numval[i]
        out.write("  %s (<noname>):" % pmIDStr(flat.pmid[i]))
        if numval == 0:
            out.write(" No values returned!\n")
            continue
        if numval < 0:
            out.write(" %s\n" % pmErrStr(numval))
            continue
        valfmt = flat.valfmt[i]
        out.write(" numval: %d valfmt: %d vlist[]:\n" % (numval, valfmt))
        for j in range(numval):
            value = res.get_vlist(i, j)
            inst = value.inst
            if numval > 1 or inst != -1:
                out.write("    inst [%d or ???] " % inst)
            else:
                out.write("   ")
            if valfmt == 0:
                text = insitu_text(value.value.lval)
            else:
                text = value_text(valfmt, flat.vtype[flat.first[i] + j], value, 1, extract)
            out.write("value %s\n" % text)


def _label_owner(ls: _LabelSet) -> str:
    """pmiDump's words for what a label set belongs to."""
    ident = ls.ident & 0xFFFFFFFF
    if ls.type & PM_LABEL_CONTEXT:
        return "context "
    if ls.type & PM_LABEL_DOMAIN:
        return " domain=%d " % ((ident >> 22) & 0x1FF)
    if ls.type & PM_LABEL_CLUSTER:
        return " cluster=%d.%d " % ((ident >> 22) & 0x1FF, (ident >> 10) & 0xFFF)
    if ls.type & PM_LABEL_ITEM:
        return " item=%s " % pmIDStr(ident)
    if ls.type & PM_LABEL_INDOM:
        return " indom=%s " % pmInDomStr(ident)
    if ls.type & PM_LABEL_INSTANCES:
        return " instance=%d of indom=%s " % (_c_int(ls.inst), pmInDomStr(ident))
    return "type=unknown "


__all__ = ["ImportContext", "start", "select", "use_context", "context_of", "end",
           "set_hostname", "set_timezone", "set_version", "add_metric", "add_instance",
           "put_value_in", "get_handle", "put_value_handle_in", "put_text", "put_label",
           "write", "put_result_sets", "put_records", "put_mark", "err_str", "dump",
           "current"]
