"""`export`: an archive's values as a table, in CSV (standard library) or Parquet
(pyarrow). Records are read with pmFetchArchive and their decoded columns
(`as_arrays()`) gathered into numpy arrays, without a Python object per value.

Wide layout (default): one row per record holding any exported metric, a `time` column
then one column per metric instance, named `metric` or `metric[instance]`. Long layout:
one row per value (`time, metric, inst, instance, value`)."""
from __future__ import annotations

import csv
import datetime
import sys
from typing import Any, Dict, List, Tuple

import numpy as np

import cpmapi as c_api
from pcp import _typed
from pcp._errors import pmErr, pmErrStr
from pcp.cli._common import CliError, Source

HELP = "an archive's values as a CSV or Parquet table"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("export", help=HELP, add_help=False,
                       description=HELP + ". NAMEs are PMNS prefixes (default: every numeric "
                       "or string metric). Without -a the bundled archive is read.")
    p.add_argument("--help", "-?", action="help", help="show this help and exit")
    p.add_argument("-a", "--archive", metavar="ARCHIVE",
                   help="the archive (default: the bundled demo archive)")
    p.add_argument("-o", "--output", metavar="FILE", default="-",
                   help="output file; its suffix (.csv, .parquet, .pq) picks the format "
                   "(default: CSV on stdout)")
    p.add_argument("-F", "--format", choices=("csv", "parquet"), help="output format")
    p.add_argument("--layout", choices=("wide", "long"), default="wide",
                   help="one row per record (wide, default) or per value (long)")
    p.add_argument("-r", "--rates", action="store_true",
                   help="counters as per-second rates between consecutive records")
    p.add_argument("names", nargs="*", metavar="NAME")


def run(args: Any, out: Any = None) -> int:
    fmt = args.format
    if fmt is None:
        lower = args.output.lower()
        fmt = "parquet" if lower.endswith((".parquet", ".pq")) else "csv"
    if fmt == "parquet":
        if args.output == "-":
            raise CliError("Parquet needs an output file (-o FILE.parquet)")
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise CliError("Parquet export needs pyarrow: pip install 'pcp-native[parquet]' "
                           "(or pip install pyarrow), or export CSV instead")
    src = Source(args.archive, None, default="archive")
    try:
        table = collect(src, args.names, rates=args.rates)
    finally:
        src.close()
    if fmt == "parquet":
        write_parquet(table, args.output, args.layout)
    else:
        stream = out or sys.stdout
        if args.output == "-":
            write_csv(table, stream, args.layout)
        else:
            with open(args.output, "w", newline="") as f:
                write_csv(table, f, args.layout)
    return 0


# ---- gathering ---------------------------------------------------------------------------

class Series:
    """One metric's values: per value its row (record), instance id and value."""

    def __init__(self, pmid: int, name: str, desc: Any, units: str) -> None:
        self.pmid = pmid
        self.name = name
        self.type = desc.type
        self.sem = desc.sem
        self.indom = desc.indom
        self.units = units
        self.rows: Any = None
        self.inst: Any = None
        self.values: Any = None        # typed numpy array, or an object array of str
        self.inst_names: Dict[int, str] = {}


class Table:
    def __init__(self, sec: Any, nsec: Any, series: List[Series], hostname: str) -> None:
        self.sec = sec
        self.nsec = nsec
        self.series = series
        self.hostname = hostname

    @property
    def nrows(self) -> int:
        return len(self.sec)

    def columns(self) -> List[Tuple[str, Series, Any, Any]]:
        """Wide layout: (column name, series, values per row, present mask per row)."""
        cols = []
        for s in self.series:
            if s.rows is None or not len(s.rows):
                continue
            insts = np.unique(s.inst)
            for inst in insts:
                sel = s.inst == inst
                if s.indom == c_api.PM_INDOM_NULL:
                    name = s.name
                else:
                    name = "%s[%s]" % (s.name, s.inst_names.get(int(inst), str(int(inst))))
                vals = np.zeros(self.nrows, dtype=s.values.dtype) if s.values.dtype != object \
                    else np.full(self.nrows, "", dtype=object)
                present = np.zeros(self.nrows, dtype=bool)
                vals[s.rows[sel]] = s.values[sel]
                present[s.rows[sel]] = True
                cols.append((name, s, vals, present))
        return cols


def _metric_names(src: Source, names: List[str]) -> Tuple[List[str], List[int]]:
    leaves, errors = src.expand(names or [""])
    if errors:
        raise CliError("; ".join(errors))
    pmids = list(src.ctx.pmLookupName(leaves, relaxed=1)) if leaves else []
    keep_names, keep = [], []
    seen = set()
    for name, pmid in zip(leaves, pmids):
        if pmid == c_api.PM_ID_NULL or pmid in seen:
            continue
        seen.add(pmid)
        keep_names.append(name)
        keep.append(pmid)
    return keep_names, keep


def collect(src: Source, names: List[str], rates: bool = False) -> Table:
    """Read every record of the archive and gather the chosen metrics' values."""
    ctx = src.ctx
    mnames, pmids = _metric_names(src, names)
    series: Dict[int, Series] = {}
    for name, pmid in zip(mnames, pmids):
        try:
            desc = src.desc(pmid)
        except pmErr:
            continue
        if desc.type in _typed.NUMERIC or desc.type == c_api.PM_TYPE_STRING:
            series[pmid] = Series(pmid, name, desc, ctx.pmUnitsStr(desc.units))
    if not series:
        raise CliError("no numeric or string metrics to export")
    wanted = np.array(sorted(series), dtype=np.uint32)

    secs: List[int] = []
    nsecs: List[int] = []
    parts: Dict[int, List[Tuple[int, Any, Any, Any, Any, Any]]] = {p: [] for p in series}
    while True:
        try:
            result = ctx.pmFetchHighResArchive().contents
        except pmErr as e:
            if e.code == c_api.PM_ERR_EOL:
                break
            raise CliError("pmFetchArchive: %s" % pmErrStr(e.code))
        a = result.as_arrays()
        if not len(a.pmid):
            continue                                    # a <mark>
        hit = np.isin(a.pmid, wanted) & (a.numval > 0)
        if not hit.any():
            continue
        row = len(secs)
        ts = result.timestamp
        secs.append(ts.tv_sec)
        nsecs.append(ts.tv_nsec)
        for i in np.flatnonzero(hit):
            lo = int(a.first[i])
            hi = lo + int(a.numval[i])
            s = series[int(a.pmid[i])]
            if s.type == c_api.PM_TYPE_STRING:
                strs = np.array([_string(a, k) for k in range(lo, hi)], dtype=object)
                parts[s.pmid].append((row, a.inst[lo:hi].copy(), None, None, None, strs))
            else:
                parts[s.pmid].append((row, a.inst[lo:hi].copy(), a.vtype[lo:hi].copy(),
                                      a.ival[lo:hi].copy(), a.dval[lo:hi].copy(), None))
    sec = np.array(secs, dtype=np.int64)
    nsec = np.array(nsecs, dtype=np.int64)
    for pmid, s in series.items():
        got = parts[pmid]
        if not got:
            continue
        s.rows = np.concatenate([np.full(len(p[1]), p[0], dtype=np.int64) for p in got])
        s.inst = np.concatenate([p[1] for p in got])
        if s.type == c_api.PM_TYPE_STRING:
            s.values = np.concatenate([p[5] for p in got])
        else:
            s.values = _typed.typed(s.type, np.concatenate([p[2] for p in got]),
                                    np.concatenate([p[3] for p in got]),
                                    np.concatenate([p[4] for p in got]))
            if rates and s.sem == c_api.PM_SEM_COUNTER:
                s.values = _rates(s, sec, nsec)
                s.units = _rate_units(s.units)
        if s.indom != c_api.PM_INDOM_NULL:
            s.inst_names = _instance_names(src, s.indom)
    ordered = [series[p] for p in pmids if p in series]
    return Table(sec, nsec, ordered, ctx.pmGetContextHostName())


def _string(a: Any, k: int) -> str:
    off = int(a.boff[k])
    return bytes(a.data[off:off + int(a.blen[k])]).split(b"\0", 1)[0].decode("utf-8", "replace")


def _rates(s: Series, sec: Any, nsec: Any) -> Any:
    """Per instance: (value - previous value) / elapsed seconds; the first value of an
    instance, and a counter that went backwards, give NaN."""
    t = sec.astype(np.float64) + nsec.astype(np.float64) * 1e-9
    out = np.full(len(s.values), np.nan)
    for inst in np.unique(s.inst):
        idx = np.flatnonzero(s.inst == inst)        # in row (time) order
        if len(idx) < 2:
            continue
        d = _typed.counter_delta(s.type, s.values[idx[1:]], s.values[idx[:-1]])
        dt = t[s.rows[idx[1:]]] - t[s.rows[idx[:-1]]]
        with np.errstate(divide="ignore", invalid="ignore"):
            r = d / dt
        r[(d < 0) | (dt <= 0)] = np.nan
        out[idx[1:]] = r
    return out


def _rate_units(units: str) -> str:
    return "%s / sec" % units if units else "/ sec"


def _instance_names(src: Source, indom: int) -> Dict[int, str]:
    """Every name an instance had in the archive (the latest wins)."""
    names: Dict[int, str] = {}
    meta = getattr(src.ctx._host, "meta", None)
    chain = meta.indoms.get(indom, []) if meta is not None else []
    for snap in reversed(chain):                    # oldest first, newer names override
        for inst, name in zip(snap.insts, snap.names):
            if name is not None:
                names[inst] = name.decode("utf-8", "replace")
    return names


# ---- writers ---------------------------------------------------------------------------

def _iso_times(table: Table) -> List[str]:
    out = []
    for sec, nsec in zip(table.sec.tolist(), table.nsec.tolist()):
        base = datetime.datetime.fromtimestamp(sec, datetime.timezone.utc)
        out.append("%s.%09dZ" % (base.strftime("%Y-%m-%dT%H:%M:%S"), nsec))
    return out


def _texts(vals: Any) -> List[str]:
    """CSV text of a column: integers exactly, floats in their shortest round-trip form
    (float32 values as float32), NaN as an empty cell."""
    kind = vals.dtype.kind
    if kind == "f":
        if vals.dtype == np.float32:
            return ["" if x != x else str(x) for x in vals]
        return ["" if x != x else repr(x) for x in vals.tolist()]
    return [str(x) for x in vals.tolist()]


def write_csv(table: Table, stream: Any, layout: str) -> None:
    w = csv.writer(stream, lineterminator="\n")
    times = _iso_times(table)
    if layout == "long":
        w.writerow(["time", "metric", "inst", "instance", "value"])
        for s in table.series:
            if s.rows is None:
                continue
            for row, inst, value in zip(s.rows.tolist(), s.inst.tolist(), _texts(s.values)):
                iname = s.inst_names.get(inst, "") if s.indom != c_api.PM_INDOM_NULL else ""
                w.writerow([times[row], s.name,
                            inst if s.indom != c_api.PM_INDOM_NULL else "", iname, value])
        return
    cols = table.columns()
    w.writerow(["time"] + [c[0] for c in cols])
    lists = [(_texts(c[2]), c[3].tolist()) for c in cols]
    for row in range(table.nrows):
        line = [times[row]]
        for vals, present in lists:
            line.append(vals[row] if present[row] else "")
        w.writerow(line)


def write_parquet(table: Table, path: str, layout: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    stamps = table.sec * 1_000_000_000 + table.nsec
    time_type = pa.timestamp("ns", tz="UTC")
    meta = {b"pcp.hostname": table.hostname.encode()}
    if layout == "long":
        times, metric, inst, iname, value, text = [], [], [], [], [], []
        for s in table.series:
            if s.rows is None:
                continue
            n = len(s.rows)
            times.append(stamps[s.rows])
            metric.extend([s.name] * n)
            inst.append(s.inst.astype(np.int64) if s.indom != c_api.PM_INDOM_NULL
                        else np.full(n, -1, dtype=np.int64))
            iname.extend(s.inst_names.get(i, None) for i in s.inst.tolist())
            if s.values.dtype == object:
                value.append(np.full(n, np.nan))
                text.extend(s.values.tolist())
            else:
                value.append(s.values.astype(np.float64))
                text.extend([None] * n)
        cat = np.concatenate
        tbl = pa.table({
            "time": pa.array(cat(times) if times else np.zeros(0, np.int64), type=time_type),
            "metric": pa.array(metric, type=pa.string()),
            "inst": pa.array(cat(inst) if inst else np.zeros(0, np.int64)),
            "instance": pa.array(iname, type=pa.string()),
            "value": pa.array(cat(value) if value else np.zeros(0)),
            "text": pa.array(text, type=pa.string()),
        })
        pq.write_table(tbl.replace_schema_metadata(meta), path)
        return
    fields = [pa.field("time", time_type)]
    arrays = [pa.array(stamps, type=time_type)]
    for name, s, vals, present in table.columns():
        field_meta = {b"units": s.units.encode(), b"semantics": _SEM.get(s.sem, b"?"),
                      b"pmid": b"%d.%d.%d" % (s.pmid >> 22 & 0x1FF, s.pmid >> 10 & 0xFFF,
                                              s.pmid & 0x3FF)}
        if vals.dtype == object:
            arr = pa.array([v if p else None for v, p in zip(vals.tolist(), present.tolist())],
                           type=pa.string())
        else:
            arr = pa.array(vals, mask=~present)
        fields.append(pa.field(name, arr.type, metadata=field_meta))
        arrays.append(arr)
    tbl = pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=meta))
    pq.write_table(tbl, path)


_SEM = {1: b"counter", 3: b"instant", 4: b"discrete"}
