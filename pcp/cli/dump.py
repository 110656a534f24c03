"""`dump`: an archive's label, metadata and records, as pmdumplog prints them."""
from __future__ import annotations

import os
import sys
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import cpmapi as c_api
from pcp import pmapi
from pcp._archive.files import fopen_name
from pcp._core.cint import wrap_int32
from pcp._core.constants import PM_EVENT_FLAG_MISSED
from pcp._core.wire import PM_LABEL_COMPOUND
from pcp._core.errors import pmErr, pmErrStr, pmGetProgname
from pcp._core.longdouble import ld_timestamp_sub
from pcp._libpcp import options as _libopts
from pcp._libpcp.dumplines import DumpLines
from pcp._libpcp.getopt import LongOption
from pcp.cli import _common, _options, _tables
from pcp.cli._common import CliError, Clock, Source

STANDARD = _options.STANDARD

if TYPE_CHECKING:
    from pcp._archive.context import ArchiveContext

_EVENT_FLAGS = ((1, "point"), (2, "start"), (4, "end"), (8, "id"), (16, "parent"))

_LABEL_ORDER = (c_api.PM_LABEL_CONTEXT, c_api.PM_LABEL_DOMAIN, c_api.PM_LABEL_CLUSTER,
                c_api.PM_LABEL_ITEM, c_api.PM_LABEL_INDOM, c_api.PM_LABEL_INSTANCES)
_LABEL_TYPE = {c_api.PM_LABEL_CONTEXT: "context", c_api.PM_LABEL_DOMAIN: "domain",
               c_api.PM_LABEL_INDOM: "indom", c_api.PM_LABEL_CLUSTER: "cluster",
               c_api.PM_LABEL_ITEM: "pmid", c_api.PM_LABEL_INSTANCES: "instances"}



TOOL = _tables.TOOLS["dump"]
# text from the archive (instance names, string values) decoded so that bytes which are
# not UTF-8 survive: pmdumplog prints an archive's bytes as they are
_BYTES = ("utf-8", "surrogateescape")


def main(argv: List[str], out: Any = None) -> int:
    """`pcp dump ARGS`: pmdumplog's command line."""
    parsed = _options.parse(TOOL, argv)
    opts = parsed.opts
    names = parsed.operands
    raw = parsed.value("v")
    if raw is not None:
        if opts.errors or opts.flags & c_api.PM_OPTFLAG_EXIT or names:
            _options.usage(opts)
            raise _options.UsageExit(0 if opts.flags & c_api.PM_OPTFLAG_EXIT else 1)
        return raw_dump(raw, out or sys.stdout)
    if not opts.archives and names and not parsed.flag("demo"):
        # pmdumplog's form: the archive first, then metric names
        _libopts.add_archive(opts, names[0])
        names = names[1:]
    _options.finish(parsed, _tables.DEFAULT_SOURCE["dump"])
    if not opts.archives:
        # pmdumplog without an archive: its usage, status 1
        _options.usage(opts)
        raise _options.UsageExit(1)
    records = parsed.value("records")
    if records is not None and not records.isdigit():
        _options.usage_error(parsed, "--records needs a number of records")
    args = SimpleNamespace(
        parsed=parsed, names=names, all=parsed.flag("all"), desc=parsed.flag("descs"),
        labelsets=parsed.flag("labelsets"), helptext=parsed.flag("helptext"),
        indoms=parsed.flag("insts"), disk_indoms=parsed.flag("on-disk-insts"),
        long_label=parsed.flag("L"),
        label=parsed.flag("label") or parsed.flag("L"), marks=parsed.flag("markrecs"),
        metrics=parsed.flag("metrics"), reverse=parsed.flag("reverse"),
        sizes=parsed.flag("sizes"), index=parsed.flag("t"), xflag=parsed.count("x"),
        records=None if records is None else int(records))
    return run(args, out)


def raw_dump(path: str, out: Any) -> int:
    """pmdumplog -v FILE: every record of a physical file (compressed or not: the bytes
    as they are) in hex, 32 bytes a line, with its length and offset; the trailer must
    repeat the length."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise CliError('Cannot open "%s": %s' % (path, e.strerror))
    w = out.write
    w('Raw dump of physical archive file "%s" ...\n' % path)
    pos = 0
    while len(data) - pos >= 4:
        length = wrap_int32(int.from_bytes(data[pos:pos + 4], "big"))
        w("Dump ... record len: %d @ offset: %d" % (length, pos))
        pos += 4
        body = data[pos:pos + max(length - 8, 0)]
        pos += len(body)
        for i in range(0, len(body), 32):
            w("\n" + "".join(" " + body[j:j + 4].hex() for j in range(i, min(i + 32, len(body)), 4)))
        if len(body) < length - 8:
            w("Unexpected EOF\n")
        w("\n")
        if len(data) - pos < 4:
            if pos == len(data):
                w("Unexpected EOF\n")
            break
        check = wrap_int32(int.from_bytes(data[pos:pos + 4], "big"))
        pos += 4
        if check != length:
            w("Trailer botch: %d != %d\n" % (check, length))
            break
    return 0


def run(args: Any, out: Any = None) -> int:
    """Dump the archive parsed.opts names as pmdumplog does."""
    if out is None:
        out = sys.stdout
        if hasattr(out, "reconfigure"):
            # the archive's bytes that are not UTF-8 go out as they came
            out.reconfigure(errors=_BYTES[1])
    archive, _ = _options.source(args.parsed.opts)
    src = Source(archive, None)
    try:
        return _Dump(src, args, out).run()
    finally:
        src.close()


class _Dump:
    def __init__(self, src: Source, args: Any, out: Any) -> None:
        self.src = src
        self.ctx = src.ctx
        self.args = args
        self.w = out.write
        self.host: ArchiveContext = pmapi.context_of(self.ctx)   # metadata, index
        # instance names by domain: the instance-domain record they were read from and
        # its names (inst -> name), kept while that record is the one in force
        self._names_of: Dict[int, Any] = {}
        # the value lines of records, written in C (plans by the records' metrics)
        self._lines = DumpLines()
        label = self.ctx._archive_label_timespec()
        self.label = label
        self.version = label.magic & 0xFF
        self.digits = 9 if self.version >= 3 else 6
        self.opts = args.parsed.opts
        self.clock = Clock(_options.context_options(TOOL, args.parsed, self.ctx, True))
        self.start = (int(label.start.tv_sec), int(label.start.tv_nsec))
        self.xflag = args.xflag

    def stamp(self, sec: int, nsec: int) -> str:
        """pmdumplog's dump_pmTimestamp: HH:MM:SS and the fraction; with -x the date
        around it, -xx the offset from the archive's start, -xxx the epoch seconds."""
        text = self.clock.hms(sec, nsec, self.digits)
        x = self.xflag
        if not x:
            return text
        ctime = self.clock.ctime(sec)           # "Sat Nov 21 06:14:48 2026"
        text = "%s %s %4.4s" % (ctime[:10], text, ctime[20:])
        if x >= 2:
            text += " (%.*f)" % (self.digits, ld_timestamp_sub((sec, nsec), self.start))
        if x >= 3:
            text += " %d" % (sec & 0xFFFFFFFFFFFFFFFF)
        return text

    def run(self) -> int:
        a = self.args
        if a.all:
            a.desc = a.indoms = a.label = a.long_label = a.metrics = a.index = a.sizes = True
        if not (a.desc or a.indoms or a.label or a.long_label or a.metrics or a.index
                or a.helptext or a.labelsets or a.disk_indoms):
            a.metrics = True
        pmids: List[int] = []
        if a.names:
            pmids = self._pmids(a.names)
        if a.label or a.long_label:
            self.dump_label(a.long_label)
        if a.desc:
            self.dump_descs()
        if a.labelsets:
            self.dump_labelsets()
        if a.helptext:
            self.dump_help()
        if a.disk_indoms:
            self.dump_disk_indoms()
        if a.indoms:
            self.dump_indoms()
        if a.index:
            self.dump_index()
        if a.metrics:
            return self.dump_records(pmids)
        return 0

    def _pmids(self, names: List[str]) -> List[int]:
        """pmdumplog's metric operands: each name looked up, a non-leaf traversed, with
        its messages for a name that fails; none left ends the dump (status 1)."""
        pmids: List[int] = []
        prog = pmGetProgname()
        for name in names:
            try:
                found = [self.ctx.pmLookupName([name])[0]]
            except pmErr as e:
                if e.code != c_api.PM_ERR_NONLEAF:
                    sys.stderr.write("%s: pmLookupName(%s): %s\n" % (prog, name,
                                                                     pmErrStr(e.code)))
                    continue
                leaves: List[str] = []
                try:
                    self.ctx.pmTraversePMNS(name, leaves.append)
                except pmErr as e:
                    sys.stderr.write("%s: pmTraversePMNS(%s): %s\n" % (prog, name,
                                                                       pmErrStr(e.code)))
                found = [p for p in (self.ctx.pmLookupName(leaves, relaxed=1) if leaves else [])
                         if p != c_api.PM_ID_NULL]
            pmids.extend(p for p in found if p not in pmids)
        if not pmids:
            # pmdumplog's last word here is not under its name
            sys.stderr.write("No metric names can be translated, dump abandoned\n")
            raise _options.UsageExit(1)
        return pmids

    # ---- sections --------------------------------------------------------------------

    def _timeval(self, sec: int, nsec: int) -> str:
        """pmdumplog's dump_timeval (an event record's time stamp): microseconds, -x's
        date and -xx's offset (no epoch)."""
        text = self.clock.hms(sec, nsec, 6)
        if not self.xflag:
            return text
        ctime = self.clock.ctime(sec)
        text = "%s %s %4.4s" % (ctime[:10], text, ctime[20:])
        if self.xflag >= 2:
            start = (self.start[0], self.start[1] // 1000 * 1000)
            text += " (%.6f)" % ld_timestamp_sub((sec, nsec // 1000 * 1000), start)
        return text

    def dump_label(self, verbose: bool) -> None:
        label = self.label
        w = self.w
        w("Log Label (Log Format Version %d)\n" % self.version)
        w("Performance metrics from host %s\n" % label.get_hostname())
        ends = [("commencing", (label.start.tv_sec, label.start.tv_nsec))]
        try:
            end = self.ctx._archive_end_timespec()
            ends.append(("ending    ", (end.tv_sec, end.tv_nsec)))
        except pmErr:
            ends.append(("ending    ", None))       # a damaged last record
        for what, stamp in ends:
            if stamp is None:
                w("    %s UNKNOWN\n" % what)
                continue
            sec, nsec = stamp
            w("    %s %s%s\n" % (what, self.clock.stamp(sec, nsec, self.digits),
                               " %d" % sec if self.xflag >= 3 else ""))
        if verbose:
            if label.get_timezone():
                w("Archive timezone: %s\n" % label.get_timezone())
            if self.version >= 3 and label.get_zoneinfo():
                w("Archive zoneinfo: %s\n" % label.get_zoneinfo())
            features = self.host.archives[0].label.features
            if features:
                w("Archive features: 0x%x\n" % features)
            w("PID for pmlogger: %d\n" % label.pid_t)

    def dump_descs(self) -> None:
        self.w("\nDescriptions for Metrics in the Log ...\n")
        for pmid in hash_order(self.host.meta.descs):
            desc = self.src.desc(pmid)
            self.w("PMID: %s (%s)\n" % (_common.pmid_text(pmid),
                                         self.src.all_names(pmid, "<noname>")))
            for line in _common.desc_lines(self.ctx, desc):
                self.w(line + "\n")

    def dump_labelsets(self) -> None:
        """pmdumplog -e: the label records by time, then by type (context, domain,
        cluster, item, indom, instances), then by identifier, as pmPrintLabelSets
        prints each set with its labels' offsets."""
        w = self.w
        w("\nMetric Labels in the Log ...\n")
        records = self.host.meta.label_records()
        stamps = sorted({rec.stamp for chain in records.values() for rec in chain})
        for stamp in stamps:
            w(self.stamp(*stamp) + "\n")
            for ltype in _LABEL_ORDER:
                idents = sorted((ident & 0xFFFFFFFF for kind, ident in records if kind == ltype))
                for ident in idents:
                    chain = records.get((ltype, ident)) or records.get((ltype, wrap_int32(ident)))
                    for rec in chain or ():
                        if rec.stamp == stamp:
                            self._labelsets(ident, ltype, rec.sets)

    def _labelsets(self, ident: int, ltype: int, sets: Any) -> None:
        """pmPrintLabelSets."""
        w = self.w
        if ltype == c_api.PM_LABEL_DOMAIN:
            what = "Domain %u" % ident
        elif ltype in (c_api.PM_LABEL_INDOM, c_api.PM_LABEL_INSTANCES):
            what = "InDom %s" % _common.indom_text(ident)
        elif ltype == c_api.PM_LABEL_CLUSTER:
            what = "Cluster %s" % _common.pmid_text(ident).rsplit(".", 1)[0]
        elif ltype == c_api.PM_LABEL_ITEM:
            what = "PMID %s" % _common.pmid_text(ident)
        else:
            what = "Context"
        for lset in sets:
            json = lset.json.split(b"\0", 1)[0].decode("utf-8", "replace")
            if ltype & c_api.PM_LABEL_INSTANCES:
                w("    %s[%u] labels (%u bytes): %s\n" % (what, lset.inst & 0xFFFFFFFF,
                                                       len(lset.json), json))
            else:
                w("    %s labels (%u bytes): %s\n" % (what, len(lset.json), json))
            for i, (name, namelen, flags, value, valuelen) in enumerate(lset.labels):
                text = _LABEL_TYPE.get(flags & ~(PM_LABEL_COMPOUND | c_api.PM_LABEL_OPTIONAL),
                                       "?")
                if flags & PM_LABEL_COMPOUND:
                    text += ",compound"
                if flags & c_api.PM_LABEL_OPTIONAL:
                    text += ",optional"
                w("        [%d] name(%d,%d) : value(%d,%d) [%s]\n" % (i, name, namelen, value,
                                                                    valuelen, text))

    def dump_help(self) -> None:
        """pmdumplog -h: PMIDs then InDoms, by identifier, the one-line text first."""
        w = self.w
        w("\nMetric Help Text in the Log ...\n")
        texts = self.host.meta.text_types
        for kind, what in ((c_api.PM_TEXT_PMID, "PMID"), (c_api.PM_TEXT_INDOM, "InDom")):
            oneline = texts.get(kind | c_api.PM_TEXT_ONELINE, {})
            full = texts.get(kind | c_api.PM_TEXT_HELP, {})
            for ident in sorted(set(oneline) | set(full)):
                head = "PMID: %s" % _common.pmid_text(ident) if what == "PMID" else \
                    "InDom: %s" % _common.indom_text(ident)
                if ident in oneline:
                    w("%s [%s]\n" % (head, oneline[ident].decode("utf-8", "replace")))
                if ident in full:
                    w("%s\n%s\n" % (head, full[ident].decode("utf-8", "replace")))

    def dump_disk_indoms(self) -> None:
        """pmdumplog -I: the instance-domain records as written (deltas as deltas)."""
        w = self.w
        w("\nInstance Domains on-disk ...\n")
        for stamp, indom, delta, insts, names in self.host.archives[0].disk_indoms():
            w("%s InDom: %s%s %d instances\n" % (self.stamp(*stamp), _common.indom_text(indom),
                                                 " delta" if delta else "", len(insts)))
            for inst, name in zip(insts, names):
                text = None if name is None else name.split(b"\0", 1)[0].decode(*_BYTES)
                if delta:
                    w("   del %d\n" % inst if text is None else '   add %d or "%s"\n' % (inst, text))
                else:
                    w('   %d or "%s"\n' % (inst, text))

    def dump_indoms(self) -> None:
        self.w("\nInstance Domains in the Log ...\n")
        indoms = self.host.meta.all_indoms()
        for indom in hash_order(indoms):
            chain = indoms[indom]
            self.w("InDom: %s\n" % _common.indom_text(indom))
            for snap in reversed(chain):           # the chain is newest first
                self.w("%s %d instances\n" % (self.stamp(*snap.stamp), len(snap.insts)))
                for inst, name in zip(snap.insts, snap.names):
                    text = name.decode(*_BYTES) if name is not None else "???"
                    self.w('   %d or "%s"\n' % (inst, text))

    def dump_index(self) -> None:
        w = self.w
        w("\nTemporal Index\n")
        w("\t\t" * ((self.xflag > 0) + (self.xflag >= 2)))
        w("\t\t" + ("\t" if self.version >= 3 else "") + "Log Vol    end(meta)     end(log)\n")
        for arch in self.host.archives:
            meta_size: Optional[int] = None
            log_size: Optional[int] = None
            last = None
            for n, entry in enumerate(arch.index):
                w("%s\t  %5d  %11d  %11d\n" % (self.stamp(*entry.stamp), entry.vol,
                                              entry.off_meta, entry.off_data))
                if n == 0:
                    meta_size = _file_size(arch.name + ".meta")
                if last is None or entry.vol != last.vol:
                    log_size = _file_size("%s.%d" % (arch.name, entry.vol))
                    if log_size is None:
                        w("\t\tWarning: file missing for log volume %d\n" % entry.vol)
                self._index_errors(entry, last, -1 if meta_size is None else meta_size,
                                   -1 if log_size is None else log_size)
                last = entry

    def _index_errors(self, entry: Any, last: Any, meta_size: int, log_size: int) -> None:
        """pmdumplog's integrity checks of a temporal index entry (against the files'
        sizes and the entry before it), each an "Error:" line under the entry."""
        w = self.w
        sec, nsec = entry.stamp
        if sec < 0 or nsec < 0 or nsec > 999999999:
            w("\t\tError: illegal timestamp value (%d sec, %d nsec)\n" % (sec, wrap_int32(nsec)))
        if meta_size != -1 and entry.off_meta > meta_size:
            w("\t\tError: offset to meta file past end of file (%d)\n" % meta_size)
        if log_size != -1 and entry.off_data > log_size:
            w("\t\tError: offset to log file past end of file (%d)\n" % log_size)
        if last is None:
            return
        if entry.stamp < last.stamp:
            w("\t\tError: timestamp went backwards in time %s -> %s\n"
              % (self.clock.hms(*last.stamp, self.digits),
                 self.clock.hms(sec, nsec, self.digits)))
        if entry.vol < last.vol:
            w("\t\tError: volume number decreased\n")
        if entry.vol == last.vol and entry.off_meta < last.off_meta:
            w("\t\tError: offset to meta file decreased\n")
        if entry.vol == last.vol and entry.off_data < last.off_data:
            w("\t\tError: offset to log file decreased\n")

    # ---- records ---------------------------------------------------------------------

    def dump_records(self, pmids: List[int]) -> int:
        ctx = self.ctx
        opts = self.opts
        window = None
        if opts.start_optarg is not None or opts.finish_optarg is not None:
            window = (opts.start, opts.finish)
        if self.args.reverse:
            at = ctx._archive_end_timespec() if window is None else pmapi.timespec(*window[1])
            ctx._set_mode_timespec(c_api.PM_MODE_BACK, at, None)
        else:
            # pmdumplog always positions at the window's start (the archive's, with no
            # -S): where the temporal index names a missing volume (badarchives/badti-2)
            # that finds the records a first fetch from the index would not
            start = window[0] if window is not None else opts.start
            if not start:
                start = self.start
            ctx._set_mode_timespec(c_api.PM_MODE_FORW, pmapi.timespec(*start), None)
        limit = self.args.records
        wanted: Dict[int, int] = {p: j for j, p in enumerate(pmids)}
        first = True
        count = 0
        while limit is None or count < limit:
            try:
                result = ctx._fetch_archive_timespec().contents
            except pmErr as e:
                if e.code == c_api.PM_ERR_EOL:
                    return 0
                raise CliError("pmFetch: %s" % pmErrStr(e.code))
            pmids = self._lines.pmids(result)
            sets = list(range(len(pmids)))
            if wanted and not (self.args.marks and not pmids):
                picked = [i for i in sets if pmids[i] in wanted]
                if not picked:
                    continue        # pmdumplog skips records (<mark>s too) without them
                picked.sort(key=lambda i: wanted[pmids[i]])
                sets = picked
            ts = result.timestamp
            if first and self.args.reverse:
                self.w("\nLog finished at %s - dump in reverse order\n" % self.clock.ctime(ts.tv_sec))
            first = False
            if window is not None:
                when = (int(ts.tv_sec), int(ts.tv_nsec))
                if (when < window[0]) if self.args.reverse else (when > window[1]):
                    return 0
            self.w("\n")
            self._record(result, ts.tv_sec, ts.tv_nsec, pmids, sets)
            count += 1
        return 0

    def _record(self, result: Any, sec: int, nsec: int, pmids: List[int], sets: List[int]
                ) -> None:
        w = self.w
        plan = self._plan(pmids, sets)
        if self.args.sizes:
            header = (20 if self.version >= 3 else 16) + 4
            w("[%d bytes]\n" % self._lines.size(result, plan, header))
        w(self.stamp(sec, nsec))
        if not sets:
            w("  <mark>\n")
            return
        w(" %d metric%s\n" % (len(sets), "" if len(sets) == 1 else "s"))
        meta, origin = self.host.meta, self.host.origin
        text = self._lines.text(result, plan, [meta.indom_at(indom, origin)
                                               for indom in plan.indoms])
        if text is not None:
            w(text)
            return
        # what the C leaves: this loop over the result's columns
        arrays = result.as_lists()
        for i in sets:
            pmid = int(arrays.pmid[i])
            numval = int(arrays.numval[i])
            head = "    %s (%s):" % (_common.pmid_text(pmid), self.src.all_names(pmid))
            if numval == 0:
                w(head[:-1] + ": No values returned!\n")
                continue
            if numval < 0:
                w("%s %s\n" % (head, pmErrStr(numval)))
                continue
            try:
                desc = self.src.desc(pmid)
                mtype, indom = desc.type, desc.indom
            except pmErr:
                mtype = c_api.PM_TYPE_32 if int(arrays.valfmt[i]) == 0 else c_api.PM_TYPE_AGGREGATE
                indom = c_api.PM_INDOM_NULL
            first = int(arrays.first[i])
            valfmt = int(arrays.valfmt[i])
            if mtype in (c_api.PM_TYPE_EVENT, c_api.PM_TYPE_HIGHRES_EVENT):
                for j in range(numval):
                    self._event(result, i, j, pmid, indom, mtype, arrays)
                continue
            w(head)
            if numval > 1:
                w("\n       ")
            names = self._inst_names(indom) if indom != c_api.PM_INDOM_NULL else None
            for j in range(numval):
                k = first + j
                if j:
                    w("       ")
                if names is not None:
                    inst = int(arrays.inst[k])
                    iname = names.get(inst)
                    if iname is None:
                        w(" inst [%d or ???]" % inst)
                    else:
                        w(' inst [%d or "%s"]' % (inst, iname))
                w(" value %s\n" % _common.value_text(arrays, k, mtype, valfmt, _BYTES[1]))

    def _plan(self, pmids: List[int], sets: List[int]) -> Any:
        """The C's plan for records of these metrics (the sets picked follow from them)."""
        key = tuple(pmids)
        plan = self._lines.plan(key)
        if plan is None:
            plan = self._lines.add_plan(key, [self._set_plan(i, pmids[i]) for i in sets])
        return plan

    def _set_plan(self, i: int, pmid: int) -> Any:
        """(set index, type, head text, instance domain or None) of one value set for
        the C; a metric without a descriptor gets type -1, which the C leaves to
        _record (its type then follows the value's format)."""
        head = "    %s (%s):" % (_common.pmid_text(pmid), self.src.all_names(pmid))
        try:
            desc = self.src.desc(pmid)
        except pmErr:
            return (i, -1, head, None)
        indom = desc.indom
        return (i, desc.type, head, None if indom == c_api.PM_INDOM_NULL else indom)

    def _event(self, result: Any, i: int, j: int, pmid: int, indom: int, mtype: int,
               arrays: Any) -> None:
        """pmdumplog's dump_event: the unpacked records of one event array value."""
        w = self.w
        w("    %s (%s" % (_common.pmid_text(pmid), self.src.all_names(pmid)))
        if indom != c_api.PM_INDOM_NULL:
            inst = int(arrays.inst[int(arrays.first[i]) + j])
            iname = self.src.inst_name(indom, inst)
            w("[%d or ???])" % inst if iname is None else '[%d or "%s"])' % (inst, iname))
        else:
            w(")")
        w(": ")
        highres = mtype == c_api.PM_TYPE_HIGHRES_EVENT
        vset = result.get_vset(i)
        try:
            if highres:
                records = self.ctx.pmUnpackHighResEventRecords(vset, j)
            else:
                records = self.ctx.pmUnpackEventRecords(vset, j)
        except pmErr:
            return
        if not records:
            w("No event records\n")
            return
        flags_pmid, missed_pmid = self._event_pmids()
        results = [rec.contents for rec in records]
        nmissed = 0
        for r in results:
            f = r._r
            if (r.numpmid == 2 and f.pmid[0] == flags_pmid and f.ival[0] & PM_EVENT_FLAG_MISSED
                    and f.pmid[1] == missed_pmid):
                nmissed += wrap_int32(f.ival[1])
        w("%d" % len(results))
        if nmissed > 0:
            w(" (and %d missed)" % nmissed)
        w(" event record\n" if len(results) + nmissed == 1 else " event records\n")
        for n, r in enumerate(results):
            f = r._r
            w("        --- event record [%d] timestamp %s" % (
                n, self.clock.hms(f.sec, f.nsec, 9) if highres else self._timeval(f.sec, f.nsec)))
            if r.numpmid == 0:
                w(" ---\n\t          No parameters\n")
                continue
            if r.numpmid < 0:
                w(" ---\n\t          Error: illegal number of parameters (%d)\n" % r.numpmid)
                continue
            cols = _EventCols(f)
            flags = 0
            for p in range(r.numpmid):
                ppmid = f.pmid[p]
                names = self._names_or_none(ppmid)
                if names is not None:
                    if p == 0:
                        if ppmid == flags_pmid:
                            flags = wrap_int32(f.ival[0])
                            w(" flags 0x%x (%s) ---\n" % (flags & 0xFFFFFFFF, _event_flags(flags)))
                            continue
                        w(" ---\n")
                    if flags & PM_EVENT_FLAG_MISSED and p == 1 and ppmid == missed_pmid:
                        w("        ==> %d missed event records\n" % wrap_int32(f.ival[1]))
                        continue
                    w("        %s (%s):" % (_common.pmid_text(ppmid), names))
                else:
                    w("        PMID: %s:" % _common.pmid_text(ppmid))
                try:
                    ptype = self.src.desc(ppmid).type
                except pmErr as e:
                    w(" pmLookupDesc: %s\n" % pmErrStr(e.code))
                    continue
                w(" value %s\n" % _common.value_text(cols, p, ptype, f.valfmt[p], _BYTES[1]))

    def _event_pmids(self) -> Any:
        pmids = self.ctx.pmLookupName(["event.flags", "event.missed"], relaxed=1)
        return pmids[0], pmids[1]

    def _names_or_none(self, pmid: int) -> Optional[str]:
        try:
            return " or ".join(self.ctx.pmNameAll(pmid))
        except pmErr:
            return None

    def _inst_names(self, indom: int) -> Dict[int, str]:
        """pmNameInDom's answers at the record's time (the context's after its fetch),
        inst -> name: from the instance-domain record in force then, made once per such
        record (the same table while it stays in force, which the C's plans rely on)."""
        snap = self.host.meta.indom_at(indom, self.host.origin)
        held = self._names_of.get(indom)
        if held is not None and held[0] is snap:
            return held[1]
        names: Dict[int, str] = {}
        for i, n in zip(snap.insts, snap.names) if snap is not None else ():
            # pmNameInDom: the first instance of that id, its name's bytes
            names.setdefault(i, (n or b"").decode(*_BYTES))
        self._names_of[indom] = (snap, names)
        return names


def _file_size(path: str) -> Optional[int]:
    """The size pmdumplog checks a temporal index's offsets against: the file's, or -1
    (no check) when libpcp would read a compressed file in its place (PCP 6.0.3's
    pmdumplog checks no offset into a compressed file); None when there is neither."""
    found = fopen_name(path)
    try:
        size = os.stat(found).st_size
    except OSError:
        return None
    return size if found == path else -1


def hash_order(keys: Any) -> List[int]:
    """The order libpcp's hash tables (__pmHashAdd, 6.0.3) iterate keys added in this
    order: pmdumplog walks its descriptor and instance-domain tables that way."""
    hsize = 0
    table: List[List[int]] = []
    nodes = 0
    for key in keys:
        nodes += 1
        if hsize == 0:
            hsize = 1
            table = [[]]
        elif nodes // 4 > hsize:
            old = table
            hsize *= 2
            if hsize % 2:
                hsize += 1
            if hsize % 3:
                hsize += 2
            if hsize % 5:
                hsize += 2
            table = [[] for _ in range(hsize)]
            for chain in reversed(old):
                for k in chain:             # head to tail, each pushed on the front
                    table[k % hsize].insert(0, k)
        table[key % hsize].insert(0, key)
    return [k for chain in table for k in chain]


def _event_flags(flags: int) -> str:
    """pmEventFlagsStr."""
    if flags & PM_EVENT_FLAG_MISSED:
        return "missed"
    return ",".join(name for bit, name in _EVENT_FLAGS if flags & bit)


class _EventCols:
    """The columns value_text reads, over one unpacked event record's parameters."""

    __slots__ = ("vtype", "ival", "dval", "boff", "blen", "data")

    def __init__(self, f: Any) -> None:
        self.vtype = f.vtype
        self.ival = f.ival
        self.dval = f.dval
        self.boff = f.c.boff
        self.blen = f.c.blen
        self.data = f.pdu
