"""`fetch`: sample metrics at an interval, as pmval does, over pcp.sampler.Sampler.

One metric: pmval's report (header, instance columns, rates for counters with pmval's
number layout). With -a ARCHIVE the values are interpolated at every interval (-t; one
second without it or with -t 0, as pmval) from the start (pmval's archive mode:
libpcp's PM_MODE_INTERP); with -U ARCHIVE the records are replayed as they were logged
(pmval's uninterpolated mode). Several metrics: one table, a column per metric instance
(pmval takes one).

Where it differs from pmval: several metrics make one table; event records and
aggregates are refused (info -f and dump print them); the time-control GUI (-g, -p),
-d, -v, -x (store a filter value) and -X are not offered; a password in a host spec
is not echoed in "Cannot connect to PMCD on host" (pmval prints the spec whole)."""
from __future__ import annotations

import math
import os
import sys
import time
from types import SimpleNamespace
from typing import Any, List, Optional, Tuple

import cpmapi as c_api
from pcp._bulk import typed as _typed
from pcp._core.intervals import PM_MAX_TIME_T
from pcp._core.errors import pmErr, pmErrStr
from pcp import pmapi
from pcp._core.errors import pmGetProgname, pmprintf
from pcp._libpcp.strings import pmTypeStr
from pcp._libpcp import options as _libopts
from pcp.cli import _common, _options, _tables
from pcp.cli._common import CliError, Clock, Source

STANDARD = _options.STANDARD
from pcp.sampler import Sampler


WIDTH = {0: 11, 1: 11, 2: 21, 3: 21, 4: 13, 5: 21, 6: 21, 7: 21, 8: 21}
# the types pmval has a column width for (its howide): numbers, strings, aggregates, events
PRINTABLE = (0, 1, 2, 3, 4, 5, 6, 7, 8, c_api.PM_TYPE_EVENT, c_api.PM_TYPE_HIGHRES_EVENT)


TOOL = _tables.TOOLS["fetch"]

def _positive(parsed: _options.Parsed, key: str, letter: str, low: int) -> Optional[int]:
    """pmval's check of -f / -w: a whole number, at least `low`."""
    text = parsed.value(key)
    if text is None:
        return None
    value, whole = _libopts.strtol_int(text)
    if not whole or value < low:
        pmprintf("%s: -%s requires +ve numeric argument\n" % (pmGetProgname(), letter))
        parsed.opts.errors += 1
    return value


def main(argv: List[str], out: Any = None) -> int:
    """`pcp-native fetch ARGS`: pmval's command line (several metrics make one table):
    -a ARCHIVE interpolated at -t (one second by default), -U ARCHIVE replayed record
    by record."""
    parsed = _options.parse(TOOL, argv)
    opts = parsed.opts
    for archive in parsed.given.get("nointerp", ()):
        _libopts.add_archive(opts, archive or "")
    fixed = _positive(parsed, "precision", "f", 0)
    width = _positive(parsed, "width", "w", 1)
    if not opts.errors and not parsed.operands:
        _options.usage_error(parsed, "error - no metricname specified")
    _options.finish(parsed, _tables.DEFAULT_SOURCE["fetch"])
    if opts.guiflag or opts.guiport_optarg is not None:
        raise CliError("PCP_GUIMODE / PCP_GUIPORT: pmval's time-control GUI is not "
                       "pcp-native's")
    instances: List[str] = []
    for text in parsed.given.get("instances", ()):
        instances.extend(n.strip() for n in (text or "").split(",") if n.strip())
    archive, host = _options.source(opts)
    args = SimpleNamespace(
        parsed=parsed, archive=archive, host=host, metrics=parsed.operands,
        raw=parsed.flag("raw"), instances=instances or None, width=width, fixed=fixed,
        samples=opts.samples if parsed.flag("s") else None)
    return run(args, out)


def run(args: Any, out: Any = None) -> int:
    """Sample the metrics and print pmval's report (or the table of several)."""
    out = out or sys.stdout
    opts = args.parsed.opts
    src = Source(args.archive, args.host)
    try:
        try:
            pmids = src.lookup(args.metrics)
        except pmErr as e:
            raise CliError("pmLookupName(%s): %s" % (" ".join(args.metrics), pmErrStr(e.code)))
        descs = []
        for pmid in pmids:
            # pmval's checks, one metric at a time: a descriptor (a derived metric
            # whose operands are missing has none), a type it can print
            try:
                descs.append(src.desc(pmid))
            except pmErr as e:
                raise CliError("pmLookupDesc: %s" % pmErrStr(e.code))
            if descs[-1].type not in PRINTABLE:
                if len(args.metrics) == 1:
                    out.write("\n")
                raise CliError("unknown performance metric value type %s"
                               % pmTypeStr(descs[-1].type))
        for name, d in zip(args.metrics, descs):
            if d.type in (c_api.PM_TYPE_EVENT, c_api.PM_TYPE_HIGHRES_EVENT,
                          c_api.PM_TYPE_AGGREGATE, c_api.PM_TYPE_AGGREGATE_STATIC):
                raise CliError("%s: event and aggregate metrics cannot be sampled "
                               "(use info -f or dump)" % name)
        clock = Clock(_options.context_options(TOOL, args.parsed, src.ctx, src.is_archive))
        if opts.interval == (0, 0):
            opts.interval = (1, 0)      # pmval: no -t (or -t 0) is one second
        interval = opts.interval[0] + opts.interval[1] * 1e-9
        interpolate = src.is_archive and not args.parsed.given.get("nointerp")
        if interpolate:
            # pmval -a: values interpolated at every interval (-t, one second without
            # it) from the origin (-S / -A / -O), as libpcp's PM_MODE_INTERP gives them
            src.ctx._set_mode_timespec(c_api.PM_MODE_INTERP, pmapi.timespec(*opts.origin),
                                     pmapi.timespec(*opts.interval))
        elif src.is_archive:
            # pmval -U: the records from the origin (-S / -O) on, up to -T
            src.ctx._set_mode_timespec(c_api.PM_MODE_FORW, pmapi.timespec(*opts.origin), None)
        if (interpolate and args.samples is None and opts.finish[0] != PM_MAX_TIME_T) or \
                (not src.is_archive and args.samples is None and opts.finish_optarg is not None):
            # pmval's count of fetches from now to -T (one more than whole intervals)
            span = (opts.finish[0] - opts.origin[0]) + (opts.finish[1] - opts.origin[1]) * 1e-9
            args.samples = max(int(span / interval), -1) + 1
        try:
            sampler = Sampler(src.ctx, args.metrics, interval=interval, capacity=2,
                              rates=not args.raw)
        except (pmErr, TypeError) as e:
            raise CliError(str(e))
        sampler.interpolated = interpolate
        report = (_Pmval if len(args.metrics) == 1 else _Table)(src, sampler, args, out, clock)
        report.header()
        if args.samples == 0:
            return 0                # pmval -s 0: the header alone
        try:
            sampler.run(on_sample=report.sample)
        except pmErr as e:
            out.flush()
            sys.stderr.write("\n")
            raise CliError("%s: %s" % ("pmFetch" if interpolate or not src.is_archive
                                       else "pmFetchArchive", pmErrStr(e.code)))
        return report.status
    finally:
        src.close()


# ---- number layout -----------------------------------------------------------------------

def printreal(v: float, sem: int, width: int, fixed: Optional[int] = None) -> str:
    """pmval's printreal: about four significant digits, decimal points aligned."""
    if v < 0.0 and sem == c_api.PM_SEM_COUNTER:
        return "%*s" % (width, "!")
    if fixed is not None:
        return "%*.*f" % (width, fixed, v)
    if v == 0:
        return "%*.0f.0   " % (width - 5, v)
    if v < 0.1 or v > 9999:
        return "%*.3E" % (width, v)
    if v <= 0.9999:
        return "%*.4f" % (width, v)
    if v <= 9.999:
        return "%*.3f " % (width - 1, v)
    if v <= 99.99:
        return "%*.2f  " % (width - 2, v)
    if v <= 999.9:
        return "%*.1f   " % (width - 3, v)
    return "%*.0f.    " % (width - 5, v)


def print_value(arrays: Any, k: int, mtype: int, valfmt: int, width: int) -> str:
    """pmPrintValue with a minimum width."""
    text = _common.value_text(arrays, k, mtype, valfmt)
    if mtype == c_api.PM_TYPE_STRING:
        return " " * max(width - len(text), 0) + text
    return "%*s" % (width, text)


def _time_utilisation_scale(desc: Any) -> float:
    """pmval's scale: counters of time are reported as utilisation (seconds/second)."""
    units = desc.units
    if desc.sem != c_api.PM_SEM_COUNTER or units.dimTime == 0:
        return 1.0
    if units.scaleTime > c_api.PM_TIME_SEC:
        return math.pow(60, c_api.PM_TIME_SEC - units.scaleTime)
    return math.pow(1000, c_api.PM_TIME_SEC - units.scaleTime)


def _rate_units(ctx: Any, desc: Any) -> str:
    units = desc.units
    dim_time = units.dimTime - 1
    if units.dimSpace == 0 and dim_time == 0 and units.dimCount == 0:
        return "time utilization"
    copy = type(units)()
    for f in ("dimSpace", "dimTime", "dimCount", "scaleSpace", "scaleTime", "scaleCount"):
        setattr(copy, f, getattr(units, f))
    if copy.dimTime == 0:
        copy.scaleTime = c_api.PM_TIME_SEC
    copy.dimTime -= 1
    text = ctx.pmUnitsStr(copy)
    return text or "none"


class _Report:
    def __init__(self, src: Source, sampler: Sampler, args: Any, out: Any, clock: Any) -> None:
        self.src = src
        self.ctx = src.ctx
        self.s = sampler
        self.args = args
        self.w = out.write
        self.out = out
        self.clock = clock
        self.status = 0
        self.archive = src.is_archive
        opts = args.parsed.opts
        self.finish = opts.finish if self.archive else None

    def past_finish(self, s: Sampler) -> bool:
        """pmval stops at the first record after -T (the archive's end without it)."""
        if self.finish is not None and s.last_stamp > self.finish:
            s.stop()
            return True
        return False

    def stamp(self) -> str:
        """pmval's archive time stamp of the newest sample: HH:MM:SS.mmm."""
        sec, nsec = self.s.last_stamp
        tm = time.localtime(sec)
        return "%02d:%02d:%02d.%03d" % (tm.tm_hour, tm.tm_min, tm.tm_sec, nsec // 1000000)


class _Pmval(_Report):
    """pmval's report of one metric."""

    def __init__(self, *a: Any) -> None:
        super().__init__(*a)
        self.buf = next(iter(self.s))
        self.desc = self.src.desc(self.buf.pmid)
        self.rate = self.buf.rate
        self.width = self.args.width or WIDTH.get(self.desc.type, 21)
        self.scale = _time_utilisation_scale(self.desc)
        self.samples = self.args.samples
        self.done = 0
        self.have_prev = False
        self.reporting = False
        self.no_values = False
        self.prev: Any = None
        self.pairs: List[Tuple[int, str]] = []
        self._style: Optional[int] = None
        self.only: Optional[List[str]] = None
        if self.args.instances:
            self.only = list(self.args.instances)
            if self.desc.indom == c_api.PM_INDOM_NULL:
                raise CliError("%s: singular metrics do not have instances" % self.buf.name)
        self._init_instances()

    # -- instances --

    def _init_instances(self) -> None:
        if self.desc.indom == c_api.PM_INDOM_NULL:
            self.pairs = []
            return
        if self.only is not None:
            pairs = []
            for name in self.only:
                try:
                    if self.archive:
                        inst = self.ctx.pmLookupInDomArchive(self.desc, name)
                    else:
                        inst = self.ctx.pmLookupInDom(self.desc, name)
                except pmErr:
                    raise CliError("instance %s not available" % name)
                pairs.append((inst, name))
            if not self.archive:
                self.ctx.pmAddProfile(self.desc, [i for i, _ in pairs])
        else:
            try:
                if self.archive:
                    ids, names = self.ctx.pmGetInDomArchive(self.desc)
                else:
                    ids, names = self.ctx.pmGetInDom(self.desc)
            except pmErr as e:
                raise CliError("pmGetInDom(%s): %s" % (_common.indom_text(self.desc.indom),
                                                       pmErrStr(e.code)))
            pairs = list(zip(ids or [], names or []))
        self.pairs = sorted(pairs)

    def _labels(self) -> None:
        w = self.w
        cols = self.width
        style = self._style
        if style is None:
            # decided once, from the first instance list, as pmval does
            style = 0
            for _, name in self.pairs:
                if len(name) > cols:
                    style = 2
                    break
                if len(name) > cols - 3:
                    style = 1
            if style == 2:
                for i, (_, name) in enumerate(self.pairs):
                    w("full label for instance[%d]: %s\n" % (i, name))
            self._style = style
        w("\n")
        for i, (_, name) in enumerate(self.pairs):
            if self.archive and i == 0:
                w(" " * 12)
            if not self.rate or style != 0 or self.args.fixed is not None:
                w("%*.*s " % (cols, cols, name))
            else:
                w("%*.*s    " % (cols - 3, cols - 3, name))
        if self.pairs:
            w("\n")

    # -- header --

    def header(self) -> None:
        w = self.w
        opts = self.args.parsed.opts
        if not (opts.tzflag or opts.timezone is not None):
            w("\n")
        w("metric:    %s\n" % self.buf.name)
        if self.archive:
            label = self.ctx.pmGetArchiveLabel()
            w("archive:   %s\n" % self.src.name)
            w("host:      %s\n" % label.get_hostname())
            w("start:     %s\n" % self.clock.ctime(opts.origin[0]))
            if opts.finish[0] != PM_MAX_TIME_T:
                w("end:       %s\n" % self.clock.ctime(opts.finish[0]))
        else:
            w("host:      %s\n" % self.ctx.pmGetContextHostName())
        sem = {c_api.PM_SEM_COUNTER: "cumulative counter" + ("" if self.args.raw else
                                                            " (converting to rate)"),
               c_api.PM_SEM_INSTANT: "instantaneous value",
               c_api.PM_SEM_DISCRETE: "discrete instantaneous value"}.get(self.desc.sem, "unknown")
        w("semantics: %s\n" % sem)
        units = self.ctx.pmUnitsStr(self.desc.units) or "none"
        if not self.args.raw and self.desc.sem == c_api.PM_SEM_COUNTER:
            units += " (converting to %s)" % _rate_units(self.ctx, self.desc)
        w("units:     %s\n" % units)
        w("samples:   %s\n" % ("all" if self.samples is None else self.samples))
        if self.samples is not None and self.samples > 1 and \
                (not self.archive or self.s.interpolated):
            w("interval:  %1.2f sec\n" % self.s.interval)

    # -- one fetch --

    def _stamp(self) -> str:
        return self.stamp() if self.archive else ""

    def _count(self) -> None:
        self.done += 1
        if self.samples is not None and self.done >= self.samples:
            self.s.stop()

    def sample(self, s: Sampler) -> None:
        if self.past_finish(s):
            return
        w = self.w
        i = s.last_index[0] if not s.gap else -1
        a = s.last
        if s.gap:
            w("%s  Archive logging suspended\n" % self._stamp())
            self.reporting = False
            self._failed()
            return
        numval = int(a.numval[i]) if i >= 0 else 0
        if numval == 0:
            w("%s%sNo values available\n" % (self._stamp(), "  " if self.archive else ""))
            self._failed()
            return
        if numval < 0:
            self.out.flush()
            # pmval -U fetched with pmFetchArchive
            call = "pmFetchArchive" if self.archive and not s.interpolated else "pmFetch"
            sys.stderr.write("\n%s: %s: %s\n" % (pmGetProgname(), call, pmErrStr(numval)))
            self._failed()
            return
        cur = self._current(s, a, i)
        if not self.have_prev:
            self.have_prev = True
            self.prev = cur
            if self.desc.indom != c_api.PM_INDOM_NULL:
                self._labels()
            if not self.rate:
                w(self._stamp())
                self._values(cur)
                self.reporting = True
                self._count()
                return
            if self.no_values or self.reporting:
                w("%s%sNo values available\n" % (self._stamp(), "  " if self.archive else ""))
            self.no_values = False
            return                  # the first value of a rate: no iteration counted
        if self.only is None and self.desc.indom != c_api.PM_INDOM_NULL:
            known = {inst for inst, _ in self.pairs}
            if any(inst not in known for inst in cur[1]):
                self._init_instances()
                self._labels()
        w(self._stamp())
        if self.rate:
            self._rates(cur, self.prev)
        else:
            self._values(cur)
        self.prev = cur
        self.reporting = True
        self._count()

    def _failed(self) -> None:
        if not self.have_prev:
            self.no_values = True
        self.have_prev = False
        self._count()

    def _current(self, s: Sampler, a: Any, i: int) -> Tuple[float, List[int], List[int], Any, Any]:
        """The sample as pmval holds it: time, then instance ids, value indices into the
        columns and values as doubles, all sorted by instance id (pmval qsorts them)."""
        lo = int(a.first[i])
        n = int(a.numval[i])
        insts = a.inst[lo:lo + n].tolist()
        order = sorted(range(n), key=insts.__getitem__)
        ks = [lo + j for j in order]
        doubles: List[float] = []
        if self.desc.type in _typed.NUMERIC:
            d = _typed.as_float(self.desc.type, a.vtype[lo:lo + n], a.ival[lo:lo + n],
                                a.dval[lo:lo + n]).tolist()
            doubles = [d[j] for j in order]
        sec, nsec = s.last_stamp
        return (sec + nsec * 1e-9, [insts[j] for j in order], ks, doubles, a)

    def _one_value(self, cur: Any, j: int, width: int) -> str:
        _, _, ks, doubles, a = cur
        mtype = self.desc.type
        if mtype in (c_api.PM_TYPE_FLOAT, c_api.PM_TYPE_DOUBLE):
            return printreal(doubles[j], self.desc.sem, width, self.args.fixed)
        k = ks[j]
        return print_value(a, k, mtype, int(a.valfmt[self.s.last_index[0]]), width)

    def _values(self, cur: Any) -> None:
        """pmval's printvals."""
        w = self.w
        insts = cur[1]
        if self.desc.indom == c_api.PM_INDOM_NULL:
            w((self._one_value(cur, 0, self.width) if len(insts) == 1
               else "%*s" % (self.width, "?")) + "\n")
            return
        where = {inst: j for j, inst in enumerate(insts)}
        for inst, _ in self.pairs:
            j = where.get(inst)
            w((self._one_value(cur, j, self.width) if j is not None
               else "%*s" % (self.width, "?")) + " ")
        w("\n")
        if self.only is None:
            known = {inst for inst, _ in self.pairs}
            for j, inst in enumerate(insts):
                if inst not in known:
                    w("Warning: value=%s, but instance=%d is unknown\n" % (
                        self._one_value(cur, j, 1), inst))

    def _rate(self, v1: float, v2: float, delta: float, width: int) -> str:
        """pmval's printrate: (this - previous) / delta, as doubles; a counter that went
        backwards is "!" unless PCP_COUNTER_WRAP asks to add the type's range."""
        v = v1 - v2
        if v < 0.0 and _COUNTER_WRAP:
            if self.desc.type in (c_api.PM_TYPE_32, c_api.PM_TYPE_U32):
                v += 4294967296.0
            elif self.desc.type in (c_api.PM_TYPE_64, c_api.PM_TYPE_U64):
                v += 18446744073709551616.0
        v = _divide(v, delta)
        return printreal(v, c_api.PM_SEM_COUNTER, width, self.args.fixed)

    def _rates(self, cur: Any, prev: Any) -> None:
        """pmval's printrates."""
        w = self.w
        delta = self.scale * (cur[0] - prev[0])
        t1, i1, _, d1, _ = cur
        t2, i2, _, d2, _ = prev
        if self.desc.indom == c_api.PM_INDOM_NULL:
            if len(i1) == 1 and len(i2) == 1:
                w(self._rate(d1[0], d2[0], delta, self.width) + "\n")
            else:
                w("%*s\n" % (self.width, "?"))
            return
        where2 = {inst: k for k, inst in enumerate(i2)}
        where1 = {inst: j for j, inst in enumerate(i1)}
        for inst, _ in self.pairs:
            j = where1.get(inst)
            k = where2.get(inst)
            if j is not None and k is not None:
                w(self._rate(d1[j], d2[k], delta, self.width) + " ")
            else:
                w("%*s " % (self.width, "?"))
        w("\n")
        if self.only is None:
            known = {inst for inst, _ in self.pairs}
            for j, inst in enumerate(i1):
                if inst not in known and j < len(i2) and i2[j] == inst:
                    w("Warning: value=%s, but instance=%d is unknown\n" % (
                        self._rate(d1[j], d2[j], delta, 1), inst))


_COUNTER_WRAP = "PCP_COUNTER_WRAP" in os.environ


def _divide(v: float, delta: float) -> float:
    """v / delta as C divides doubles (by zero: inf or nan, not an exception)."""
    if delta == 0.0:
        if v == 0.0 or v != v:
            return math.nan
        return math.copysign(math.inf, v) * math.copysign(1.0, delta)
    return v / delta


class _Table(_Report):
    """Several metrics: a header line of metric[instance] labels, then a row per sample."""

    def __init__(self, *a: Any) -> None:
        super().__init__(*a)
        self.samples = self.args.samples
        self.done = 0
        self.columns: List[Tuple[Any, int, str, int]] = []   # buffer, inst, label, width
        self.descs = {b.name: self.src.desc(b.pmid) for b in self.s}

    def header(self) -> None:
        w = self.w
        if self.archive:
            label = self.ctx.pmGetArchiveLabel()
            w("archive:   %s\nhost:      %s\n" % (self.src.name, label.get_hostname()))
        else:
            w("host:      %s\n" % self.ctx.pmGetContextHostName())
        for b in self.s:
            d = self.descs[b.name]
            units = self.ctx.pmUnitsStr(d.units) or "none"
            if b.rate:
                units = _rate_units(self.ctx, d)
            w("metric:    %s (%s)\n" % (b.name, units))
        w("samples:   %s\n" % ("all" if self.samples is None else self.samples))
        if not self.archive:
            w("interval:  %1.2f sec\n" % self.s.interval)

    def _layout(self) -> bool:
        """(Re)build the columns from the instances seen; True when they changed."""
        cols = []
        for b in self.s:
            names = b.instances
            d = self.descs[b.name]
            width = self.args.width or WIDTH.get(d.type, 21)
            for inst, iname in zip(b.inst_ids, names):
                label = b.name if iname is None else "%s[%s]" % (b.name, iname)
                cols.append((b, inst, label, max(width, len(label))))
        changed = [(c[0].name, c[1]) for c in cols] != [(c[0].name, c[1]) for c in self.columns]
        self.columns = cols
        return changed

    def sample(self, s: Sampler) -> None:
        if self.past_finish(s):
            return
        w = self.w
        if s.gap:
            w("%s  Archive logging suspended\n" % self.stamp())
            self._count()
            return
        if self._layout():
            w("\n" + " " * 12 + "".join(" %*s" % (c[3], c[2]) for c in self.columns) + "\n")
        row = (s.count - 1) % s.capacity
        cells = []
        for b, inst, _, width in self.columns:
            v = b._ring[row, b._col_of[inst]]
            d = self.descs[b.name]
            if v is None or (isinstance(v, float) and v != v):
                cells.append("%*s" % (width, "?"))
            elif b.is_string:
                cells.append("%*s" % (width, '"%s"' % v))
            elif b.rate:
                cells.append(printreal(v / _time_utilisation_scale(d), c_api.PM_SEM_COUNTER,
                                       width, self.args.fixed))
            elif d.type in (c_api.PM_TYPE_FLOAT, c_api.PM_TYPE_DOUBLE):
                cells.append(printreal(v, d.sem, width, self.args.fixed))
            else:
                cells.append("%*d" % (width, int(v)))
        w(self.stamp() + "".join(" " + c for c in cells) + "\n")
        self._count()

    def _count(self) -> None:
        self.done += 1
        if self.samples is not None and self.done >= self.samples:
            self.s.stop()
