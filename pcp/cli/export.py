"""`export`: an archive's values as a table, in CSV (standard library) or Parquet
(pyarrow), with pmrep's options: -o the target, -F the file, counters as rates unless -r,
the -S/-T window in libpcp's forms; the records as logged (pmrep -u), or with -t the
values interpolated at every interval from the start (pmrep -t, with -A / -O). The values are read by the columns reader (pcp.bulk.read_archive): each
metric's time x instance matrix, scattered in C without a Python object per value.

Wide layout (default): one row per record holding any exported metric, a `time` column
then one column per metric instance, named `metric` or `metric[instance]` (as
to_pandas() names them: `metric[instance] (id)` for an instance name that repeats). Long layout:
one row per value (`time, metric, inst, instance, value`)."""
from __future__ import annotations

import csv
import datetime
import os
import sys
from types import SimpleNamespace
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

import cpmapi as c_api
from pcp import bulk
from pcp._bulk import export as _export, typed as _typed
from pcp._bulk.arrays import ArchiveColumns, MetricArray
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

class Column:
    """One instance column of the wide layout: its metric and values per row."""

    def __init__(self, name: str, metric: MetricArray, j: int) -> None:
        self.name = name
        self.metric = metric
        self.values = metric.values[:, j]
        self.present = metric.present[:, j]
        units = pmUnitsStr(metric.units)
        self.units = ("%s / sec" % units if units else "/ sec") if metric.rate else units


class Table:
    """The archive's values as the columns reader (pcp.bulk) gathered them, with the
    columns that hold at least one value."""

    def __init__(self, cols: ArchiveColumns, hostname: str) -> None:
        self.cols = cols
        self.hostname = hostname
        self.stamps = cols.time.view(np.int64)
        self.columns: List[Column] = []
        for m in cols.values():
            # to_pandas's names: an instance name that repeats gets its id, so that
            # every reader (pyarrow, pandas, polars, duckdb) takes the header as written
            for j, name in enumerate(_export.wide_names(m)):
                if m.present[:, j].any():
                    self.columns.append(Column(name, m, j))

    @property
    def nrows(self) -> int:
        return len(self.stamps)


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
    """Every value of the chosen metrics, read by the columns reader: rows are the
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
        cols = bulk.read_archive(src.name, keep, start=start, end=end, rate=rates,
                                 progress=progress, errors=errors, interval=step)
    except pmErr as e:
        hint = "; --errors skip reads on past it" if errors == "raise" else ""
        raise CliError("%s: %s%s" % (src.name, pmErrStr(e.code), hint))
    return Table(cols, src.ctx.pmGetContextHostName())


# ---- writers ---------------------------------------------------------------------------

def _iso_times(table: Table) -> List[str]:
    out = []
    for ns in table.stamps.tolist():
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


def _long_rows(table: Table):
    """(row, metric, instance id or None, instance name, column) of every value, metric
    by metric, in time order."""
    for m in table.cols.values():
        rows, cols = np.nonzero(m.present)
        singular = m.indom == c_api.PM_INDOM_NULL
        for r, j in zip(rows.tolist(), cols.tolist()):
            if singular:
                yield r, m, None, None, j
            else:
                yield r, m, int(m.instances[j]), m.instance_names[j], j


def _union_names(tables: List[Table]) -> List[str]:
    """The wide columns of several hosts' tables: each name once, in order of first use."""
    seen: Dict[str, None] = {}
    for table in tables:
        for c in table.columns:
            seen.setdefault(c.name)
    return list(seen)


CSV_BLOCK_ROWS = 64


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
        times = _iso_times(table)
        host = [table.hostname] if hosts else []
        if layout == "long":
            # one metric's texts at a time (_long_rows goes metric by metric)
            name, texts = None, []
            for r, m, inst, iname, j in _long_rows(table):
                if m.name != name:
                    name, texts = m.name, _texts(m.values.ravel())
                w.writerow([times[r]] + host + [m.name, "" if inst is None else inst,
                                                iname or "", texts[r * m.shape[1] + j]])
            continue
        mine = {c.name: c for c in table.columns}
        columns = [mine.get(name) for name in union]
        # the texts of a block of rows at a time: a Python string per cell of the
        # whole table would take ten times the matrices' memory
        for first in range(0, table.nrows, CSV_BLOCK_ROWS):
            last = min(first + CSV_BLOCK_ROWS, table.nrows)
            cells = [None if c is None else (_texts(c.values[first:last]),
                                             c.present[first:last].tolist())
                     for c in columns]
            for k in range(last - first):
                line = [times[first + k]] + host
                for cell in cells:
                    line.append(cell[0][k] if cell is not None and cell[1][k] else "")
                w.writerow(line)


def write_parquet(tables: List[Table], path: str, layout: str) -> None:
    """The tables (one per host) as one Parquet file; several hosts get a `host`
    column after time, and a wide column a host lacks is null in its rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if len(tables) == 1:
        pq.write_table(_arrow_table(pa, tables[0], layout), path)
        return
    parts = []
    for table in tables:
        tbl = _arrow_table(pa, table, layout)
        parts.append(tbl.add_column(1, "host", pa.array([table.hostname] * tbl.num_rows,
                                                         pa.string())))
    whole = pa.concat_tables(parts, promote_options="default")
    hosts = ",".join(t.hostname for t in tables)
    pq.write_table(whole.replace_schema_metadata({b"pcp.hosts": hosts.encode()}), path)


def _arrow_table(pa: Any, table: Table, layout: str) -> Any:
    """One host's table as a pyarrow Table, its host in the schema's metadata."""
    time_type = pa.timestamp("ns", tz="UTC")
    meta = {b"pcp.hostname": table.hostname.encode()}
    if layout == "long":
        # per metric, numpy arrays of its present cells (row-major: time order); metric
        # and instance names as codes into tables, made strings by Arrow
        rows, metric, inst, iname, value, text = [], [], [], [], [], []
        names: List[str] = []
        inames: List[str] = []
        for k, m in enumerate(table.cols.values()):
            rr, cc = np.nonzero(m.present)
            n = len(rr)
            rows.append(rr)
            names.append(m.name)
            metric.append(np.full(n, k, np.int32))
            if m.indom == c_api.PM_INDOM_NULL:
                inst.append(np.full(n, -1, np.int64))
                iname.append(np.full(n, -1, np.int32))
            else:
                inst.append(m.instances.astype(np.int64)[cc])
                base = len(inames)
                inames.extend(m.instance_names)
                iname.append(np.arange(base, len(inames), dtype=np.int32)[cc])
            v = m.values[rr, cc]
            if v.dtype == object:
                value.append(np.full(n, np.nan))
                text.append(v)
            else:
                value.append(v.astype(np.float64))
                text.append(np.full(n, None, object))
        cat = np.concatenate

        def joined(parts: List[Any], dtype: Any) -> Any:
            return cat(parts) if parts else np.zeros(0, dtype)

        tbl = pa.table({
            "time": pa.array(table.stamps[joined(rows, np.int64)], type=time_type),
            "metric": _strings(pa, joined(metric, np.int32), names),
            "inst": pa.array(joined(inst, np.int64)),
            "instance": _strings(pa, joined(iname, np.int32), inames),
            "value": pa.array(joined(value, np.float64)),
            "text": pa.array(joined(text, object), type=pa.string()),
        })
        return tbl.replace_schema_metadata(meta)
    fields = [pa.field("time", time_type)]
    arrays = [pa.array(table.stamps, type=time_type)]
    for c in table.columns:
        m = c.metric
        field_meta = {b"units": c.units.encode(), b"semantics": _SEM.get(m.sem, b"?"),
                      b"pmid": b"%d.%d.%d" % (m.pmid >> 22 & 0x1FF, m.pmid >> 10 & 0xFFF,
                                              m.pmid & 0x3FF)}
        if c.values.dtype == object:
            arr = pa.array([v if p else None for v, p in zip(c.values.tolist(),
                                                             c.present.tolist())],
                           type=pa.string())
        else:
            arr = pa.array(c.values, mask=~c.present)
        fields.append(pa.field(c.name, arr.type, metadata=field_meta))
        arrays.append(arr)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=meta))


def _strings(pa: Any, codes: Any, table: List[str]) -> Any:
    """A string column from codes into table (-1: null)."""
    return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32(), mask=codes < 0),
                                          pa.array(table, pa.string())).cast(pa.string())


_SEM = {1: b"counter", 3: b"instant", 4: b"discrete"}
