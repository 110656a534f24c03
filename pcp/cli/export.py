"""`export`: an archive's values as a table, in CSV (standard library) or Parquet
(pyarrow), with pmrep's options: -o the target, -F the file, counters as rates unless -r,
the -S/-T window in libpcp's forms; the records as logged (pmrep -u), or with -t the
values interpolated at every interval from the start (pmrep -t, with -A / -O). The values are read by the columns reader (pcp.bulk.ArchiveReader): each
metric's time x instance matrix, scattered in C without a Python object per value.

Memory stays flat in the archive's size: the reader is run twice, chunk by chunk. The
first pass learns what the header and the carried facts need (each metric's instance
columns in the order a whole read gives them, which of them ever hold a value, the
times and <mark>s): counters come as logged, rated only for the instances that have
held no rate yet. The second writes each chunk as it comes: CSV a chunk's cells at a
time, wide Parquet a row group at a time (wide_group_rows: pyarrow holds about 1 kB
per column and row group of the footer until the file is closed, so that a wide
file's memory grows with the square root of its rows, not flat).

Wide layout (default): one row per record holding any exported metric, a `time` column
then one column per metric instance, named `metric` or `metric[instance]` (as
to_pandas() names them: `metric[instance] (id)` for an instance name that repeats). Long layout:
one row per value (`time, metric, inst, instance, value`)."""
from __future__ import annotations

import csv
import datetime
import io
import itertools
import math
import os
import sys
import tempfile
from types import SimpleNamespace
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

import cpmapi as c_api
from pcp import bulk
from pcp._bulk import carried as _carried, export as _export, typed as _typed
from pcp._bulk.arrays import ArchiveColumns, MetricArray
from pcp._bulk.rates import RateCarry, counter_rate
from pcp._core.errors import pmErr, pmErrStr
from pcp._core.units import pmUnitsStr
from pcp._libpcp import anon as _anon
from pcp._core.errors import pmGetProgname, pmprintf
from pcp.cli import _options, _tables
from pcp.cli import _common
from pcp.cli._common import CliError, Source

STANDARD = _options.STANDARD



TOOL = _tables.TOOLS["export"]

_CHOICES = {"layout": ("wide", "long"), "errors": ("raise", "skip", "stop")}
TARGETS = ("csv", "parquet")


def main(argv: List[str], out: Any = None) -> int:
    """`pcp export ARGS`: an archive's records to a table, with pmrep's options (-o
    target, -F file, -r raw counters, -S/-T window in libpcp's forms)."""
    parsed = _options.parse(TOOL, argv)
    for key, choices in _CHOICES.items():
        value = parsed.value(key)
        if value is not None and value not in choices:
            pmprintf("%s: --%s must be one of %s, not %r\n" % (pmGetProgname(), key,
                                                              ", ".join(choices), value))
            parsed.opts.errors += 1
    _options.finish(parsed, _tables.DEFAULT_SOURCE["export"])
    opts = parsed.opts
    if opts.hosts:
        raise CliError("export reads archives: not the host PCP_HOST names")
    if not opts.archives:
        _options.usage_error(parsed, "export reads an archive: name it with -a ARCHIVE "
                             "(or --demo, the one bundled with pcp-native)")
    interpolate = opts.interval != (0, 0) and not parsed.flag("no-interpol")
    for letter, given in (("-A", opts.align_optarg), ("-O", opts.origin_optarg)):
        if given is not None and not interpolate:
            raise CliError("without -t export writes the records as they were logged "
                           "(pmrep -u): %s (an interpolated report's option) is not for it"
                           % letter)
    target, output = _target(parsed.value("output"), parsed.value("output-file"))
    progress: Optional[bool] = None
    if parsed.flag("progress") or parsed.flag("no-progress"):
        # the last of the two given wins
        progress = argv.index("--progress") > argv.index("--no-progress") \
            if parsed.flag("progress") and parsed.flag("no-progress") else parsed.flag("progress")
    archive, _ = _options.source(opts)
    args = SimpleNamespace(
        parsed=parsed, archive=archive, names=parsed.operands, output=output, format=target,
        layout=parsed.value("layout", "wide"), rates=not parsed.flag("raw"),
        errors=parsed.value("errors", "raise"), progress=progress, strict=parsed.flag("strict"),
        interval=opts.interval if interpolate else None)
    return run(args, out)


def _target(target: Optional[str], outfile: Optional[str]) -> Tuple[Optional[str], str]:
    """(format, file) from pmrep's -o OUTPUT and -F OUTFILE; an -o that is no target
    name is a file whose suffix names the format (pcp-native's shorthand: -o x.parquet)."""
    if target is not None and target.lower() not in TARGETS:
        if outfile is not None:
            raise CliError("-o %s: the output target is one of %s (the file is -F)"
                           % (target, ", ".join(TARGETS)))
        return None, target
    return (target.lower() if target else None), (outfile if outfile is not None else "-")


SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def run(args: Any, out: Any = None) -> int:
    """Write the table export's options ask for."""
    fmt = args.format
    if fmt is None and args.output != "-":
        suffix = os.path.splitext(args.output.lower())[1]
        fmt = SUFFIXES.get(suffix)
        if fmt is None:
            raise CliError("cannot tell the format of %s from its suffix %r: name it .csv, "
                           ".parquet or .pq, or give -o csv|parquet -F FILE"
                           % (args.output, suffix or "(none)"))
    fmt = fmt or "csv"
    if fmt == "parquet":
        if args.output == "-":
            raise CliError("Parquet needs an output file (-F FILE, or -o FILE.parquet)")
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise CliError("Parquet export needs pyarrow: pip install 'pcp-native[arrow]' "
                           "(or pip install pyarrow), or export CSV instead")
    if args.output != "-":
        folder = os.path.dirname(os.path.abspath(args.output))
        if not os.path.isdir(folder):
            raise CliError("cannot write %s: no such directory %s" % (args.output, folder))
    groups = _host_groups(args.archive, args.errors)
    # a collection is never uniform: a metric an archive lacks is a warning there, and
    # an error only with --strict (or for one archive, as pmrep has it)
    several = len(groups) > 1 or "," in groups[0][1]
    lenient = several and not getattr(args, "strict", False)
    tables: List[Table] = []
    for _, spec in groups:
        try:
            table = _read_group(args, spec, lenient)
        except CliError as e:
            if not several or str(e).startswith(spec):
                raise
            raise CliError("%s: %s" % (spec, e))     # which archives of the collection
        if table is not None:
            tables.append(table)
    if not tables:
        raise CliError("no numeric or string metrics to export")
    try:
        if fmt == "parquet":
            write_parquet(tables, args.output, args.layout)
        elif args.output == "-":
            write_csv(tables, out or sys.stdout, args.layout)
        else:
            with open(args.output, "w", newline="") as f:
                write_csv(tables, f, args.layout)
    except BrokenPipeError:
        raise                       # a reader that stopped early (| head): quietly
    except pmErr as e:              # the second pass (writing) met what the first did not
        raise _read_error(args.archive, args.errors, e)
    except OSError as e:
        raise CliError("cannot write %s: %s" % (args.output, e.strerror or e))
    return 0


# ---- gathering ---------------------------------------------------------------------------

def _host_groups(spec: str, errors: str) -> List[Tuple[str, str]]:
    """The archives -a names (each -a a name, a comma-separated list or a directory),
    grouped by the host of their labels: [(host, comma-separated archives)], each read
    as one libpcp multi-archive context. An archive whose label cannot be read is an
    error, or with --errors skip / stop a warning and left out."""
    from pcp._archive.files import expand_names
    from pcp._archive.reader import Archive

    try:
        names = expand_names(spec)
    except pmErr as e:          # a directory or list with no archive in it
        raise CliError('Cannot open archive "%s": %s' % (spec, pmErrStr(e.code)))
    if len(names) <= 1:
        return [("", spec)]
    groups: Dict[str, List[str]] = {}
    for name in names:
        arch = None
        try:
            arch = Archive(name, 0)
            arch.open()
            host = arch.label.hostname.decode("utf-8", "replace")
        except pmErr as e:
            if errors == "raise":       # pminfo names the whole -a argument
                raise CliError('Cannot open archive "%s": %s' % (spec, pmErrStr(e.code)))
            _warn('%s: %s: left out' % (name, pmErrStr(e.code)))
            continue
        finally:
            if arch is not None:
                arch.close()
        groups.setdefault(host, []).append(name)
    if not groups:
        raise CliError('Cannot open archive "%s": none of its archives can be read' % spec)
    return [(host, ",".join(group)) for host, group in groups.items()]


def _warn(message: str) -> None:
    sys.stderr.write("%s: Warning: %s\n" % (pmGetProgname(), message))


def _read_group(args: Any, spec: str, lenient: bool) -> Optional["Table"]:
    """One host's archives read into a Table (None: nothing of the selection in them,
    said in a warning when lenient)."""
    src = Source(spec, None)
    try:
        _options.context_options(TOOL, args.parsed, src.ctx, True)
        opts = args.parsed.opts
        window = None
        interval = getattr(args, "interval", None)
        if interval is not None:
            # pmrep -t: the interpolated values at the origin (-S, -A, -O) and every
            # interval after it, up to -T (or the end of the archive)
            window = (opts.origin, opts.finish)
        elif opts.start_optarg is not None or opts.finish_optarg is not None:
            window = (opts.start, opts.finish)
        return collect(src, args.names, rates=args.rates, errors=args.errors,
                       progress=args.progress, window=window, interval=interval,
                       lenient=lenient)
    finally:
        src.close()

class Shape:
    """What the first pass learns of one metric over the whole scan: its descriptor, its
    instance columns as ArchiveColumns.concat orders them (those of the last chunk: a
    scan only adds instances), how many values it holds and which instances held one."""

    def __init__(self, name: str, m: MetricArray) -> None:
        self.name = name
        self.pmid, self.type, self.sem, self.units = m.pmid, m.type, m.sem, m.units
        self.indom, self.rate, self.dtype = m.indom, m.rate, m.dtype
        self.instances = m.instances
        self.instance_names: List[str] = list(m.instance_names)
        self.count = 0
        self.held: set = set()
        # raw first pass: instance -> (value, time, segment) of its last value, for the
        # instances that have held no rate yet
        self.carried: Dict[int, Tuple[Any, int, int]] = {}

    def learn(self, m: MetricArray, raw: bool = False, time_ns: Any = None,
              seg: Any = None) -> None:
        """One chunk's metric. raw: a counter to be rated comes as logged (the
        presence-only first pass): which instances hold a rate is found by rating, at
        the chunk's times `time_ns` and segments `seg`, only those that held none yet."""
        self.instances, self.instance_names = m.instances, list(m.instance_names)
        self.count += m.count
        if not (raw and m.rate):
            self.held.update(int(i) for i in m.instances[m.present.any(axis=0)])
            return
        ids = m.instances.tolist()
        cols = [k for k, i in enumerate(ids) if i not in self.held]
        if not cols:
            return
        # each unheld instance's last value, time and segment, carried across chunks
        carry = RateCarry(len(cols), m.values.dtype)
        for n, k in enumerate(cols):
            last = self.carried.get(ids[k])
            if last is not None:
                carry.value[n], carry.time[n], carry.seg[n] = last
                carry.have[n] = True
        _, ok = counter_rate(m.values[:, cols], m.present[:, cols], time_ns, seg, carry)
        rated = ok.any(axis=0).tolist()
        for n, k in enumerate(cols):
            if rated[n]:
                self.held.add(ids[k])
                self.carried.pop(ids[k], None)
            elif carry.have[n]:
                self.carried[ids[k]] = (carry.value[n], carry.time[n], carry.seg[n])

    def column_names(self) -> List[str]:
        return _export.column_names(self.name, self.indom, self.instance_names)


class Column:
    """One instance column of the wide layout: its metric, its place among the
    metric's instances (j) and the instance id that finds it in each chunk."""

    def __init__(self, name: str, metric: Shape, j: int) -> None:
        self.name = name
        self.metric = metric
        self.index = j
        self.inst = int(metric.instances[j])
        units = pmUnitsStr(metric.units)
        self.units = ("%s / sec" % units if units else "/ sec") if metric.rate else units


# rows of a chunk of the export's scan: a few MB of matrices, so that the memory of an
# export does not grow with the archive (the reader's default, 32 MB, is sized for reads)
CHUNK_BYTES = 2 << 20
CHUNK_ROWS: Optional[int] = None      # or a fixed number of rows (tests)


class Table:
    """One host's archives as the first pass of the columns reader (pcp.bulk) learned
    them: the times, the metrics and the wide columns that hold at least one value.
    The values are read again, chunk by chunk, when they are written (chunks())."""

    def __init__(self, reader: Any, hostname: str) -> None:
        self.reader = reader
        self.hostname = hostname
        times, after = [], []
        shapes: Dict[str, Shape] = {}
        last = None
        self.nchunks = 0
        # presence only: counters come as logged and are rated where a column's
        # presence is not known yet (a records' scan without derived metrics)
        raw = reader.interval_ns is None and not reader._derived
        marks = 0
        for chunk in self.chunks(rates=not raw):
            self.nchunks += 1
            stamps = chunk.time.view(np.int64)
            times.append(stamps)
            after.append(chunk.after_mark)
            # the segments between <mark>s, numbered as the scan numbers them
            seg = marks + np.cumsum(chunk.after_mark, dtype=np.int64)
            marks = int(seg[-1]) if len(seg) else marks
            for name, m in chunk.metrics.items():
                if name not in shapes:
                    shapes[name] = Shape(name, m)
                shapes[name].learn(m, raw, stamps, seg)
            last = chunk
        # the metrics in the order of the last chunk, as ArchiveColumns.concat has them
        self.metrics = [shapes[name] for name in last.metrics] if last is not None else []
        self.stamps = np.concatenate(times) if times else np.zeros(0, np.int64)
        self.after_mark = np.concatenate(after) if after else np.zeros(0, bool)
        self.columns: List[Column] = []
        for m in self.metrics:
            # to_pandas's names: an instance name that repeats gets its id, so that
            # every reader (pyarrow, pandas, polars, duckdb) takes the header as written
            for j, name in enumerate(_export.wide_names(m)):
                if int(m.instances[j]) in m.held:
                    self.columns.append(Column(name, m, j))

    def chunks(self, rates: bool = True) -> Any:
        """The scan again, chunk by chunk (an empty scan as one chunk of no rows)."""
        any_chunk = False
        for chunk in self.reader.chunks(rates=rates):
            any_chunk = True
            yield chunk
        if not any_chunk:
            yield self.reader._empty()

    def facts(self) -> Optional[str]:
        """The carried facts (pcp._bulk.carried) of the whole scan: what a read gives
        (made once: megabytes of text for an archive with a long instance history)."""
        if not hasattr(self, "_facts"):
            self._facts = _carried.dumps(_carried.describe(
                self.reader.source, [(m.name, m) for m in self.metrics], self.stamps,
                self.after_mark))
        return self._facts

    @property
    def nrows(self) -> int:
        return len(self.stamps)


def _places(m: MetricArray) -> Dict[int, int]:
    """instance id -> its column in a chunk's metric."""
    return {int(i): k for k, i in enumerate(m.instances.tolist())}


def _metric_names(src: Source, names: List[str], lenient: bool = False) -> List[str]:
    """The leaf names under NAMEs whose values export can write, one name per pmid.
    Derived metrics are exported when NAMEs name them (the columns reader evaluates
    them); the whole archive (no NAMEs) is the metrics it holds. Never libpcp's
    anonymous event.flags / event.missed, which records never hold. A derived metric
    that cannot be evaluated here is refused by name (pmrep's rule), as is a named leaf
    whose values are no table's (event records, aggregates). Lenient (a collection of
    archives): a name they lack, or a derived metric whose operands they lack, is a
    warning naming them and gets no column."""
    leaves, errors = src.expand(names or [""])
    if errors and not lenient:
        raise CliError("; ".join(errors))
    for text in errors:
        _warn("%s: %s: no column for it" % (src.name, text))
    pmids = list(src.ctx.pmLookupName(leaves, relaxed=1)) if leaves else []
    keep: List[str] = []
    seen = set()
    for name, pmid in zip(leaves, pmids):
        if pmid == c_api.PM_ID_NULL or pmid in seen or pmid in _anon.BY_PMID:
            continue
        if _anon.is_derived(pmid) and not names:
            continue
        seen.add(pmid)
        try:
            desc = src.desc(pmid)
        except pmErr as e:
            if not lenient:
                raise CliError("%s: pmLookupDesc: %s" % (name, pmErrStr(e.code)))
            _warn("%s: %s: pmLookupDesc: %s: no column for it" % (src.name, name,
                                                                 pmErrStr(e.code)))
            continue
        if desc.type in _typed.NUMERIC or desc.type == c_api.PM_TYPE_STRING:
            keep.append(name)
        elif name in names:
            raise CliError("%s: %s values are not exported (dump or info -f print them)"
                           % (name, _common.TYPE_TEXT.get(desc.type, "Not Supported")))
    return keep


def collect(src: Source, names: List[str], rates: bool = False, errors: str = "raise",
            progress: Optional[bool] = False,
            window: Optional[Tuple[Tuple[int, int], Tuple[int, int]]] = None,
            interval: Optional[Tuple[int, int]] = None,
            lenient: bool = False) -> Optional["Table"]:
    """The chosen metrics as the columns reader's first pass learns them: rows are the
    records holding any of them; counters become rates with its rule (per instance over
    its previous value, none after a <mark>) when asked. `errors` is the reader's rule at
    a damaged record; `progress` None shows a bar when stderr is a terminal; `window`
    ((sec, nsec) start, end), inclusive, keeps the records inside it. With an `interval`
    ((sec, nsec)) the rows are the times start, start + interval, ... up to end, the
    values interpolated there as libpcp's PM_MODE_INTERP gives them (pmrep -t).
    `lenient`: names the archives lack are warnings (None when none is left)."""
    keep = _metric_names(src, names, lenient)
    if not keep:
        if lenient:
            _warn("%s: none of the metrics to export: left out" % src.name)
            return None
        raise CliError("no numeric or string metrics to export")
    try:
        start = end = None
        if window is not None:
            start, end = (np.datetime64(sec * 1000000000 + nsec, "ns") for sec, nsec in window)
        step = None if interval is None else (interval[0] * 1000000000 + interval[1]) / 1e9
        reader = bulk.ArchiveReader(src.name, keep, start=start, end=end, rate=rates,
                                    progress=progress, errors=errors, interval=step,
                                    chunk_bytes=CHUNK_BYTES, chunk_rows=CHUNK_ROWS)
        return Table(reader, src.ctx.pmGetContextHostName())
    except pmErr as e:
        raise _read_error(src.name, errors, e)


def _read_error(name: str, errors: str, e: pmErr) -> CliError:
    hint = "; --errors skip reads on past it" if errors == "raise" else ""
    return CliError("%s: %s%s" % (name, pmErrStr(e.code), hint))


# ---- writers ---------------------------------------------------------------------------
# Each writes the tables chunk by chunk (Table.chunks(): the second pass of the reader),
# so that memory holds a chunk's matrices and its text, whatever the archive's size.

def _iso_times(stamps: Any) -> List[str]:
    out = []
    for ns in stamps.tolist():
        sec, nsec = divmod(ns, 1_000_000_000)
        base = datetime.datetime.fromtimestamp(sec, datetime.timezone.utc)
        out.append("%s.%09dZ" % (base.strftime("%Y-%m-%dT%H:%M:%S"), nsec))
    return out


def _texts(vals: Any) -> List[str]:
    """CSV text of a column: integers exactly, floats in their shortest round-trip form
    (float32 values as float32), NaN as an empty cell, strings as they are."""
    kind = vals.dtype.kind
    if kind == "f":
        if vals.dtype == np.float32:
            return ["" if x != x else str(x) for x in vals]
        return ["" if x != x else repr(x) for x in vals.tolist()]
    if kind == "O":
        return ["" if x is None else x for x in vals.tolist()]
    return [str(x) for x in vals.tolist()]


class _Present:
    """A chunk's values of one metric in the long layout's order: row by row, each row's
    instances in the order of the whole scan's columns (the chunk may not have met all
    of them yet)."""

    def __init__(self, chunk: ArchiveColumns, shape: Shape) -> None:
        m = chunk.metrics[shape.name]
        whole = {int(i): j for j, i in enumerate(shape.instances.tolist())}
        places = np.array([whole[int(i)] for i in m.instances.tolist()], np.int64)
        order = np.argsort(places, kind="stable")
        rows, cols = np.nonzero(m.present[:, order])
        self.rows = rows
        self.values = m.values[:, order][rows, cols]
        self.places = places[order][cols]         # the column j of the whole scan


def _long_csv_rows(table: Table, chunk: ArchiveColumns, host: List[str]) -> Any:
    """(metric number, CSV rows) of a chunk, metric by metric: each metric's rows as
    an iterator of tuples that csv's writerows takes in C (no list per row)."""
    times = np.array(_iso_times(chunk.time.view(np.int64)), object)
    lead = tuple(host)
    for k, shape in enumerate(table.metrics):
        got = _Present(chunk, shape)
        if not len(got.rows):
            yield k, ()
            continue
        texts = _texts(got.values)
        stamps = times[got.rows].tolist()
        n = len(texts)
        if shape.indom == c_api.PM_INDOM_NULL:
            ids: Any = itertools.repeat("", n)
            names: Any = itertools.repeat("", n)
        else:
            ids = np.asarray(shape.instances, np.int64)[got.places].tolist()
            names = np.array([name or "" for name in shape.instance_names],
                             object)[got.places].tolist()
        yield k, zip(stamps, *(itertools.repeat(h, n) for h in lead),
                     itertools.repeat(shape.name, n), ids, names, texts)


def _write_long_csv(table: Table, w: Any, stream: Any, host: List[str]) -> None:
    """One host's long rows, metric by metric, each in time order. A scan of several
    chunks spools each chunk's rows of each metric to a temporary file and copies them
    out metric by metric: the file's order is the whole read's."""
    if table.nchunks <= 1:
        for chunk in table.chunks():
            for _, rows in _long_csv_rows(table, chunk, host):
                w.writerows(rows)
        return
    segments: List[List[Tuple[int, int]]] = [[] for _ in table.metrics]
    with tempfile.TemporaryFile() as spool:
        for chunk in table.chunks():
            for k, rows in _long_csv_rows(table, chunk, host):
                if not rows:
                    continue
                text = io.StringIO()
                csv.writer(text, lineterminator="\n").writerows(rows)
                data = text.getvalue().encode("utf-8")
                segments[k].append((spool.tell(), len(data)))
                spool.write(data)
        for parts in segments:
            for offset, size in parts:
                spool.seek(offset)
                stream.write(spool.read(size).decode("utf-8"))


def _union_names(tables: List[Table]) -> List[str]:
    """The wide columns of several hosts' tables: each name once, in order of first use."""
    seen: Dict[str, None] = {}
    for table in tables:
        for c in table.columns:
            seen.setdefault(c.name)
    return list(seen)


# rows of a chunk's cells turned into lists at a time (a list per cell row)
CSV_BLOCK_ROWS = 256


def write_csv(tables: List[Table], stream: Any, layout: str) -> None:
    """The tables (one per host) as CSV; several hosts get a `host` column after time."""
    w = csv.writer(stream, lineterminator="\n")
    hosts = len(tables) > 1
    lead = ["time", "host"] if hosts else ["time"]
    if layout == "long":
        w.writerow(lead + ["metric", "inst", "instance", "value"])
    else:
        union = _union_names(tables)
        w.writerow(lead + union)
    for table in tables:
        host = [table.hostname] if hosts else []
        if layout == "long":
            _write_long_csv(table, w, stream, host)
            continue
        places = _wide_places(table, union, 1 + len(host))
        width = 1 + len(host) + len(union)
        for chunk in table.chunks():
            cells = np.full((len(chunk.time), width), "", object)
            cells[:, 0] = _iso_times(chunk.time.view(np.int64))
            if host:
                cells[:, 1] = host[0]
            _fill_texts(cells, chunk, places)
            # a block of rows at a time as lists: csv's writerows takes them in C
            for first in range(0, len(cells), CSV_BLOCK_ROWS):
                w.writerows(cells[first:first + CSV_BLOCK_ROWS].tolist())


def _wide_places(table: Table, union: List[str], lead: int) -> List[Tuple[Shape, Any, Any]]:
    """Per metric of the table: (its shape, the instance ids of its written columns,
    those columns' places in a CSV row of `union` after `lead` leading cells)."""
    where = {name: lead + k for k, name in enumerate(union)}
    by_metric: Dict[str, Tuple[Shape, List[int], List[int]]] = {}
    for c in table.columns:
        entry = by_metric.setdefault(c.metric.name, (c.metric, [], []))
        entry[1].append(c.inst)
        entry[2].append(where[c.name])
    return [(shape, insts, np.array(at, np.int64))
            for shape, insts, at in by_metric.values()]


def _fill_texts(cells: Any, chunk: ArchiveColumns, places: List[Tuple[Shape, Any, Any]]
                ) -> None:
    """The texts of a chunk's present values into their cells, metric by metric (one
    conversion per metric and chunk, not per cell): a column the chunk has not met yet
    stays empty."""
    for shape, insts, at in places:
        m = chunk.metrics[shape.name]
        mine = _places(m)
        found = [(mine[i], a) for i, a in zip(insts, at.tolist()) if i in mine]
        if not found:
            continue
        ks = [k for k, _ in found]
        targets = np.array([a for _, a in found], np.int64)
        present = m.present[:, ks]
        rows, cols = np.nonzero(present)
        if not len(rows):
            continue
        texts = np.empty(len(rows), object)
        texts[:] = _texts(m.values[:, ks][rows, cols])
        cells[rows, targets[cols]] = texts


# a row group is written when the batches waiting for it reach this many cells (about
# 16 MB): few row groups (a wide file's footer describes every column of each), and
# bounded memory
ROW_GROUP_CELLS = 2 << 20
# The footer of a wide file is held until the file is closed: pyarrow keeps about 1 kB
# per column and row group, what about 30 rows of that column cost while their group
# is built. A longer archive gets longer row groups, so that the footer and the group
# being built both grow as the square root of the rows (measured: 11 MB per row group
# of 12,769 columns, with or without statistics or dictionaries).
FOOTER_ROWS = 30


def wide_group_rows(ncolumns: int, nrows: int) -> int:
    """The rows of a wide row group: ROW_GROUP_CELLS cells, or more for a long archive
    (the square root of FOOTER_ROWS x its rows)."""
    return max(-(-ROW_GROUP_CELLS // max(ncolumns, 1)), math.isqrt(FOOTER_ROWS * nrows))


def write_parquet(tables: List[Table], path: str, layout: str) -> None:
    """The tables (one per host) as one Parquet file; several hosts get a `host`
    column after time, and a wide column a host lacks is null in its rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schemas = [_arrow_schema(pa, table, layout) for table in tables]
    several = len(tables) > 1
    if several:
        schemas = [s.insert(1, pa.field("host", pa.string())) for s in schemas]
        hosts = ",".join(t.hostname for t in tables)
        schema = pa.unify_schemas(schemas).with_metadata({b"pcp.hosts": hosts.encode()})
    else:
        schema = schemas[0]
    waiting: List[Any] = []
    cells = [0]
    with pq.ParquetWriter(path, schema) as writer:
        def put(batch: Any) -> None:
            waiting.append(batch)
            cells[0] += batch.num_rows * batch.num_columns
            if cells[0] >= ROW_GROUP_CELLS:
                flush()

        def flush() -> None:
            if waiting:
                writer.write_table(pa.Table.from_batches(waiting, schema))
                waiting.clear()
                cells[0] = 0

        for table in tables:
            pieces = _long_batches(pa, table) if layout == "long" \
                else _wide_row_groups(pa, table)
            for columns in pieces:
                n = len(columns["time"])
                if several:
                    columns["host"] = pa.array([table.hostname] * n, pa.string())
                put(pa.RecordBatch.from_arrays(
                    [columns[f.name] if f.name in columns else pa.nulls(n, f.type)
                     for f in schema], schema=schema))
                if layout != "long":
                    flush()         # a wide piece is a row group of its own
        flush()


def _arrow_type(pa: Any, dtype: Any) -> Any:
    return pa.string() if dtype == object else pa.from_numpy_dtype(dtype)


def _arrow_schema(pa: Any, table: Table, layout: str) -> Any:
    """One host's schema, its host and the archive's facts in the schema's metadata."""
    time_type = pa.timestamp("ns", tz="UTC")
    meta = {b"pcp.hostname": table.hostname.encode()}
    # the archive's facts, for pcp.pmi.write_frame to give the archive back
    meta.update(_carried.schema_metadata(table.facts()))
    if layout == "long":
        return _long_schema(pa).with_metadata(meta)
    fields = [pa.field("time", time_type)]
    for c in table.columns:
        m = c.metric
        field_meta = {b"units": c.units.encode(), b"semantics": _SEM.get(m.sem, b"?"),
                      b"pmid": b"%d.%d.%d" % (m.pmid >> 22 & 0x1FF, m.pmid >> 10 & 0xFFF,
                                              m.pmid & 0x3FF)}
        field_meta.update(_carried.field_metadata(m, c.index) or {})
        fields.append(pa.field(c.name, _arrow_type(pa, m.dtype), metadata=field_meta))
    return pa.schema(fields, metadata=meta)


def _wide_row_groups(pa: Any, table: Table) -> Any:
    """One host's wide rows as {column name: Arrow array}, a row group at a time: the
    chunks' matrices copied metric by metric (a block per metric and chunk, not an
    array per column and chunk: thousands of columns make tiny arrays costly) until
    the group holds wide_group_rows() rows, then one Arrow array per column."""
    time_type = pa.timestamp("ns", tz="UTC")
    by_metric: Dict[str, List[Column]] = {}
    for c in table.columns:
        by_metric.setdefault(c.metric.name, []).append(c)
    groups = list(by_metric.values())
    group_rows = wide_group_rows(len(table.columns), table.nrows)
    times: List[Any] = []
    blocks: List[List[Tuple[Any, Any]]] = [[] for _ in groups]
    rows = 0

    def row_group() -> Dict[str, Any]:
        arrays = {"time": pa.array(np.concatenate(times), type=time_type)}
        for columns, parts in zip(groups, blocks):
            values = np.concatenate([v for v, _ in parts])
            present = np.concatenate([p for _, p in parts])
            atype = _arrow_type(pa, columns[0].metric.dtype)
            for j, c in enumerate(columns):
                if atype == pa.string():
                    arrays[c.name] = pa.array([v if p else None for v, p in zip(
                        values[:, j].tolist(), present[:, j].tolist())], type=atype)
                else:
                    arrays[c.name] = pa.array(np.ascontiguousarray(values[:, j]),
                                              mask=~present[:, j], type=atype)
            parts.clear()
        times.clear()
        return arrays

    for chunk in table.chunks():
        n = len(chunk.time)
        times.append(chunk.time.view(np.int64).copy())
        for columns, parts in zip(groups, blocks):
            m = chunk.metrics[columns[0].metric.name]
            mine = _places(m)
            found = [(j, mine[c.inst]) for j, c in enumerate(columns) if c.inst in mine]
            if len(found) == len(columns):      # copies: the scan reuses its memory
                ks = [k for _, k in found]
                parts.append((m.values[:, ks], m.present[:, ks]))
                continue
            # instances the scan has not met yet: no value in these rows
            values = np.zeros((n, len(columns)), m.values.dtype)
            present = np.zeros((n, len(columns)), bool)
            for j, k in found:
                values[:, j] = m.values[:, k]
                present[:, j] = m.present[:, k]
            parts.append((values, present))
        rows += n
        if rows >= group_rows:
            yield row_group()
            rows = 0
    if times:
        yield row_group()


def _long_schema(pa: Any) -> Any:
    """The long layout's columns (no metadata: the spool's schema)."""
    return pa.schema([pa.field("time", pa.timestamp("ns", tz="UTC")),
                      pa.field("metric", pa.string()), pa.field("inst", pa.int64()),
                      pa.field("instance", pa.string()), pa.field("value", pa.float64()),
                      pa.field("text", pa.string())])


def _long_batches(pa: Any, table: Table) -> Any:
    """One host's long rows as {column name: Arrow array}, a chunk's metric at a time,
    in the order of the whole read: metric by metric, through a temporary Arrow file
    that the pieces are spooled to."""
    time_type = pa.timestamp("ns", tz="UTC")
    # instance names as codes into one list (per metric, from its base)
    inames: List[str] = []
    bases = []
    for m in table.metrics:
        bases.append(len(inames))
        if m.indom != c_api.PM_INDOM_NULL:
            inames.extend(m.instance_names)
    names = pa.array([m.name for m in table.metrics], pa.string())
    inames_array = pa.array(inames, pa.string())

    def pieces(chunk: ArchiveColumns) -> Any:
        stamps = chunk.time.view(np.int64)
        for k, m in enumerate(table.metrics):
            got = _Present(chunk, m)
            n = len(got.rows)
            if not n:
                continue
            if m.indom == c_api.PM_INDOM_NULL:
                inst = np.full(n, -1, np.int64)
                icode = np.full(n, -1, np.int32)
            else:
                inst = m.instances.astype(np.int64)[got.places]
                icode = (bases[k] + got.places).astype(np.int32)
            if got.values.dtype == object:
                value, text = np.full(n, np.nan), got.values
            else:
                value, text = got.values.astype(np.float64), np.full(n, None, object)
            yield k, {"time": pa.array(stamps[got.rows], type=time_type),
                      "metric": _strings(pa, np.full(n, k, np.int32), names),
                      "inst": pa.array(inst), "instance": _strings(pa, icode, inames_array),
                      "value": pa.array(value), "text": pa.array(text, type=pa.string())}

    if table.nchunks <= 1:
        for chunk in table.chunks():
            for _, arrays in pieces(chunk):
                yield arrays
        return
    import pyarrow.ipc as ipc

    # the spool's schema without the facts (megabytes of text): the file's has them
    schema = _long_schema(pa)
    segments: List[List[int]] = [[] for _ in table.metrics]
    with tempfile.TemporaryDirectory() as folder:
        spool = os.path.join(folder, "long.arrow")
        count = 0
        with ipc.new_file(spool, schema) as writer:
            for chunk in table.chunks():
                for k, arrays in pieces(chunk):
                    writer.write_batch(pa.RecordBatch.from_pydict(arrays, schema=schema))
                    segments[k].append(count)
                    count += 1
        # read, not mapped: a mapped file's pages would count in the resident memory
        with pa.OSFile(spool, "rb") as source:
            spooled = ipc.open_file(source)
            for parts in segments:
                for index in parts:
                    batch = spooled.get_batch(index)
                    yield {name: batch.column(name) for name in batch.schema.names}


def _strings(pa: Any, codes: Any, table: Any) -> Any:
    """A string column from codes into table (an Arrow string array; -1: null)."""
    return table.take(pa.array(codes, pa.int32(), mask=codes < 0))


_SEM = {1: b"counter", 3: b"instant", 4: b"discrete"}
