"""Archives read into columns: one time x instance matrix per metric.

The reader (ArchiveReader) opens one archive or several (libpcp's multi-archive rules:
sorted by start, one host), resolves the selection against the archives' PMNS, gives
each metric a column per instance (the instances of its domain in force during the time
window, from the metadata) and then lets csrc/archive_columns.c scatter every record of
every volume straight into preallocated numpy matrices, one C call per run of records
with the GIL released. Only string and aggregate values become Python objects.

Memory is bounded by the chunk size: a chunk's arrays and string bytes take about
`chunk_bytes`; the memory of a chunk nothing refers to any more is reused for a later
one (fresh memory costs page faults and zeroing, more than the scan itself), and the
mapped pages of the volume behind the scan are handed back to the kernel every
RELEASE_EVERY bytes. Values of instances the metadata does not list get columns as the
scan meets them (the C side reports them, this side adds the columns and the record is
read again). The result types (ArchiveColumns, MetricArray, Blobs) live in this module;
the pandas and Arrow conversions are in pcp/_bulk/export.py and need those optional
packages.
"""
from __future__ import annotations

import datetime as _dt
import sys
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from pcp._archive.context import ArchiveContext
from pcp._archive.reader import tsub
from pcp._core.constants import (PM_ERR_LOGOVERLAP, PM_ERR_NAME, PM_ID_NULL, PM_INDOM_NULL,
                                 PM_SEM_COUNTER, PM_TYPE_32, PM_TYPE_64, PM_TYPE_AGGREGATE,
                                 PM_TYPE_DOUBLE, PM_TYPE_FLOAT, PM_TYPE_STRING, PM_TYPE_U32,
                                 PM_TYPE_U64)
from pcp._core.errors import pmErr
from pcp._core.native import ffi, lib
from pcp._core.wire import LOG_END, PM_IN_NULL_INT32

# numpy dtype of each PM_TYPE_* the reader can hold
DTYPES = {PM_TYPE_32: np.dtype(np.int32), PM_TYPE_U32: np.dtype(np.uint32),
          PM_TYPE_64: np.dtype(np.int64), PM_TYPE_U64: np.dtype(np.uint64),
          PM_TYPE_FLOAT: np.dtype(np.float32), PM_TYPE_DOUBLE: np.dtype(np.float64),
          PM_TYPE_STRING: np.dtype(object), PM_TYPE_AGGREGATE: np.dtype(object)}
NUMERIC = (PM_TYPE_32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64, PM_TYPE_FLOAT, PM_TYPE_DOUBLE)
BLOBS = (PM_TYPE_STRING, PM_TYPE_AGGREGATE)

# csrc/columns.h and archive.h
COLS_PAST_END = 2
COLS_NEED_COLUMN = 3
COLS_NEED_ROOM = 4
COLS_PAUSE = 5
# the mapped pages of a volume behind the scan are released every this many bytes
RELEASE_EVERY = 8 << 20
MISS_CAP = 4096                 # instances without a column reported per record
STAGED_START = 1 << 16          # first size of a chunk's string staging area
ROW_AFTER_MARK = 1
PAYLOAD_OFF_BITS = 40
PAYLOAD_OFF_MASK = (1 << PAYLOAD_OFF_BITS) - 1

NS_MIN = -(1 << 63) + 1
NS_MAX = (1 << 63) - 1
DEFAULT_CHUNK_BYTES = 32 << 20

TimeLike = Union[None, int, float, str, "np.datetime64", _dt.datetime, _dt.date]


def to_ns(when: TimeLike, default: int) -> int:
    """A time as nanoseconds since the epoch: None (the default), seconds since the
    epoch (int or float), a datetime (naive ones are taken as UTC, like the naive
    datetime64 times the reader returns), a date, a numpy datetime64, a pandas
    Timestamp or an ISO 8601 string."""
    if when is None:
        return default
    if isinstance(when, (bool, np.bool_)):
        raise TypeError("a time cannot be a bool")
    if isinstance(when, (int, np.integer)):
        return int(when) * 1000000000
    if isinstance(when, (float, np.floating)):
        return int(round(float(when) * 1e9))
    if hasattr(when, "to_datetime64"):             # pandas Timestamp (UTC if aware)
        return int(when.to_datetime64().astype("datetime64[ns]").astype(np.int64))
    if isinstance(when, _dt.datetime):
        if when.tzinfo is not None:
            when = when.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        return int(np.datetime64(when, "ns").astype(np.int64))
    if isinstance(when, _dt.date):
        return int(np.datetime64(when, "ns").astype(np.int64))
    if isinstance(when, np.datetime64):
        return int(when.astype("datetime64[ns]").astype(np.int64))
    if isinstance(when, str):
        return int(np.datetime64(when, "ns").astype(np.int64))
    raise TypeError("cannot use %r as a time" % (when,))


def _stamp_ns(stamp: Tuple[int, int]) -> int:
    return stamp[0] * 1000000000 + stamp[1]


# --------------------------------------------------------------------------------------
# results


class Blobs:
    """String or aggregate values of a chunk as the scan leaves them: per cell a
    reference (length << 40 | offset) into the chunk's staging area of bytes. Objects
    (str or bytes) are made only when asked for; pack() lays the bytes out column by
    column as Arrow string / binary columns hold them."""

    __slots__ = ("refs", "present", "staged", "strings", "nbytes")

    def __init__(self, refs: np.ndarray, present: np.ndarray, staged: np.ndarray,
                 strings: bool, nbytes: Optional[int] = None) -> None:
        self.refs = refs
        self.present = present
        self.staged = staged
        self.strings = strings
        if nbytes is None:
            nbytes = int(self.lengths().sum())
        self.nbytes = nbytes            # of every value (strings up to their NUL)

    def lengths(self) -> np.ndarray:
        """Byte length of every cell (0 where absent), rows x columns."""
        return self.refs >> PAYLOAD_OFF_BITS        # an absent cell's reference is 0

    def objects(self) -> np.ndarray:
        """An object array: str (strings, UTF-8 with errors replaced) or bytes, None
        where absent."""
        rows, cols = np.nonzero(self.present)
        refs = self.refs[rows, cols]
        offs = (refs & PAYLOAD_OFF_MASK).tolist()
        lens = (refs >> PAYLOAD_OFF_BITS).tolist()
        mv = memoryview(self.staged)
        if self.strings:
            vals = [str(mv[o:o + n], "utf-8", "replace") for o, n in zip(offs, lens)]
        else:
            vals = [mv[o:o + n].tobytes() for o, n in zip(offs, lens)]
        out = np.full(self.present.shape, None, object)
        col = np.empty(len(vals), object)
        col[:] = vals
        out[rows, cols] = col
        return out

    def pack(self, col0: int = 0, col1: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray]:
        """(offsets, data) of columns [col0, col1): cell (r, c) is data[offsets[k] :
        offsets[k + 1]] with k = (c - col0) * nrows + r (empty where absent)."""
        nrows, ncols = self.present.shape
        if col1 is None:
            col1 = ncols
        refs = self.refs
        present = self.present
        if refs.strides[1] != refs.itemsize or refs.strides[0] != present.strides[0] * 8:
            refs = np.ascontiguousarray(refs)
            present = np.ascontiguousarray(present)
        stride = present.strides[0]
        sel = present[:, col0:col1]
        total = int((refs[:, col0:col1] >> PAYLOAD_OFF_BITS)[sel].sum()) if sel.size else 0
        offsets = np.empty((col1 - col0) * nrows + 1, np.int64)
        data = np.empty(total, np.uint8)
        got = lib.pcp_cols_pack(ffi.cast("int64_t *", refs.ctypes.data),
                                ffi.cast("uint8_t *", present.ctypes.data), nrows,
                                stride, col0, col1,
                                ffi.cast("uint8_t *", self.staged.ctypes.data),
                                len(self.staged), ffi.cast("int64_t *", offsets.ctypes.data),
                                ffi.cast("uint8_t *", data.ctypes.data))
        assert got == total
        return offsets, data


class MetricArray:
    """One metric over the rows of an ArchiveColumns.

    values   2-D array, rows x instance columns, in the metric's own dtype (int32,
             uint32, int64, uint64, float32, float64; object for strings (str) and
             aggregates (bytes), made on first use; float64 when converted to a rate)
    present  2-D bool array of the same shape: True where the archive holds a value
    instances  instance id of each column (-1: PM_IN_NULL as an int32, for a singular metric)
    instance_names  instance name of each column ("" for a singular metric)
    blobs    for strings and aggregates of a chunk: the packed bytes (Blobs), else None

    Where present is False, numeric values are 0 (NaN for rates) and objects None.
    values and present are views of the chunk's memory, whose rows hold every metric
    side by side: they are not C-contiguous (np.ascontiguousarray makes a copy that is)."""

    __slots__ = ("name", "pmid", "type", "sem", "units", "indom", "_values", "present",
                 "instances", "instance_names", "rate", "blobs", "_count")

    def __init__(self, name: str, pmid: int, type_: int, sem: int, units: int, indom: int,
                 values: Optional[np.ndarray], present: np.ndarray, instances: np.ndarray,
                 instance_names: List[str], rate: bool = False,
                 blobs: Optional[Blobs] = None, count: Optional[int] = None) -> None:
        self.name = name
        self.pmid = pmid
        self.type = type_
        self.sem = sem
        self.units = units
        self.indom = indom
        self._values = values
        self.present = present
        self.instances = instances
        self.instance_names = instance_names
        self.rate = rate
        self.blobs = blobs
        self._count = count

    @property
    def count(self) -> int:
        """How many values are present."""
        if self._count is None:
            self._count = int(np.count_nonzero(self.present))
        return self._count

    @property
    def values(self) -> np.ndarray:
        if self._values is None:
            assert self.blobs is not None
            self._values = self.blobs.objects()
        return self._values

    def renamed(self, name: str) -> "MetricArray":
        return MetricArray(name, self.pmid, self.type, self.sem, self.units, self.indom,
                           self._values, self.present, self.instances, self.instance_names,
                           self.rate, self.blobs, self._count)

    @property
    def dtype(self) -> np.dtype:
        if self.rate:
            return np.dtype(np.float64)
        return DTYPES[self.type]

    @property
    def singular(self) -> bool:
        return self.indom == PM_INDOM_NULL

    @property
    def shape(self) -> Tuple[int, int]:
        return self.present.shape  # type: ignore[return-value]

    @property
    def masked(self) -> "np.ma.MaskedArray":
        """values as a numpy masked array (masked where there is no value)."""
        return np.ma.MaskedArray(self.values, mask=~self.present)

    def filled(self, fill: Any = np.nan) -> np.ndarray:
        """values as float64 (numeric metrics) with `fill` where there is no value; for
        strings and aggregates an object array with `fill` (default None) there."""
        if self.dtype == object:
            out = self.values.copy()
            out[~self.present] = None if fill is np.nan else fill
            return out
        out = self.values.astype(np.float64)
        out[~self.present] = fill
        return out

    def column_names(self) -> List[str]:
        """"metric" for a singular metric, else "metric[instance name]" per column."""
        if self.singular and len(self.instance_names) == 1:
            return [self.name]
        return ["%s[%s]" % (self.name, n) for n in self.instance_names]

    def __repr__(self) -> str:
        return "<MetricArray %s %s %s%s>" % (self.name, self.dtype,
                                             "x".join(map(str, self.shape)),
                                             " rate" if self.rate else "")


class ArchiveColumns:
    """Rows of an archive scan (a chunk, or the whole scan): one row per record that
    holds at least one selected metric.

    time        datetime64[ns] per row (UTC)
    after_mark  bool per row: a <mark> record (or an archive boundary) came before it
    metrics     metric name -> MetricArray, in selection order; also ``cols[name]``"""

    def __init__(self, time: np.ndarray, after_mark: np.ndarray,
                 metrics: Dict[str, MetricArray]) -> None:
        self.time = time
        self.after_mark = after_mark
        self.metrics = metrics

    def __getitem__(self, name: str) -> MetricArray:
        return self.metrics[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.metrics)

    def __len__(self) -> int:
        return len(self.time)

    def keys(self):
        return self.metrics.keys()

    def values(self):
        return self.metrics.values()

    def items(self):
        return self.metrics.items()

    def __repr__(self) -> str:
        return "<ArchiveColumns %d rows, %d metrics>" % (len(self.time), len(self.metrics))

    # conversions (pcp/_bulk/export.py)
    def to_pandas(self, form: str = "wide"):
        """A pandas DataFrame: form "wide" (a DatetimeIndex "time" and one column per
        metric and instance, "metric[instance]"; integer columns as nullable pandas
        integers) or "long" (columns time, metric, instance, value and, when strings
        are selected, text; one row per value present)."""
        from pcp._bulk import export as _columns_export
        return _columns_export.to_pandas(self, form)

    def to_arrow(self, form: str = "wide"):
        """A pyarrow Table, "wide" or "long" as for to_pandas (missing values null)."""
        from pcp._bulk import export as _columns_export
        return _columns_export.to_arrow(self, form)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow PyCapsule stream of the wide table (polars, duckdb, ... read it)."""
        return self.to_arrow().__arrow_c_stream__(requested_schema)

    def to_parquet(self, path: Any, form: str = "wide", **kwargs: Any) -> None:
        """Write the table to a parquet file (pyarrow.parquet.write_table kwargs)."""
        from pcp._bulk import export as _columns_export
        pq = _columns_export.need("pyarrow.parquet", "arrow")
        pq.write_table(self.to_arrow(form), path, **kwargs)

    @staticmethod
    def concat(parts: Sequence["ArchiveColumns"]) -> "ArchiveColumns":
        """Rows of several results one after the other (chunks of one scan); a metric
        that gained instance columns in later parts is padded (absent) before them."""
        if not parts:
            raise ValueError("nothing to concatenate")
        if len(parts) == 1:
            return parts[0]
        time = np.concatenate([p.time for p in parts])
        after = np.concatenate([p.after_mark for p in parts])
        metrics: Dict[str, MetricArray] = {}
        for name, last in parts[-1].metrics.items():
            ids = list(last.instances)
            vals = []
            pres = []
            for p in parts:
                m = p.metrics[name]
                if list(m.instances) == ids:
                    vals.append(m.values)
                    pres.append(m.present)
                    continue
                where = {int(i): k for k, i in enumerate(ids)}
                v = _absent((len(p.time), len(ids)), m.dtype, m.rate)
                pr = np.zeros((len(p.time), len(ids)), bool)
                cols = [where[int(i)] for i in m.instances]
                v[:, cols] = m.values
                pr[:, cols] = m.present
                vals.append(v)
                pres.append(pr)
            metrics[name] = MetricArray(name, last.pmid, last.type, last.sem, last.units,
                                        last.indom, np.concatenate(vals),
                                        np.concatenate(pres), last.instances,
                                        last.instance_names, last.rate)
        return ArchiveColumns(time, after, metrics)


def _absent(shape: Tuple[int, int], dtype: np.dtype, rate: bool = False) -> np.ndarray:
    if dtype == object:
        return np.full(shape, None, dtype=object)
    if rate:
        return np.full(shape, np.nan)
    return np.zeros(shape, dtype)


# --------------------------------------------------------------------------------------
# the selection


class _Metric:
    """A selected metric: its descriptor and instance columns (which may grow)."""

    __slots__ = ("names", "pmid", "type", "sem", "units", "indom", "insts", "inames",
                 "rate", "state", "col_cap", "col_inst", "inst_table", "snapshot", "static")

    def __init__(self, name: str, desc: Tuple[int, int, int, int, int]) -> None:
        self.names = [name]
        self.pmid, self.type, self.indom, self.sem, self.units = desc
        self.insts: List[int] = []
        self.inames: List[str] = []
        self.rate = False
        self.state: Optional["_RateCarry"] = None
        self.col_cap = 0
        self.inst_table: Optional[np.ndarray] = None
        self.snapshot: Optional[Tuple[np.ndarray, List[str]]] = None

    def index(self, col_cap: Optional[int] = None) -> None:
        """The instance index the C scan searches (with room for col_cap columns): the
        instance of each column, and a hash table of (instance, column) pairs at most
        half full, which pcp_cols_index fills (see _Scan._bind_index)."""
        if col_cap is not None:
            self.col_cap = col_cap
        self.col_inst = np.array(self.insts, np.int32)
        slots = 4
        while slots < 2 * max(self.col_cap, len(self.insts)):
            slots *= 2
        if self.inst_table is None or len(self.inst_table) != 2 * slots:
            self.inst_table = np.empty(2 * slots, np.int32)

    def for_scan(self) -> "_Metric":
        """A copy with its own instance lists, for one scan: the C side holds pointers
        into a scan's index arrays, which no other scan of the reader may replace."""
        m = _Metric.__new__(_Metric)
        m.names = self.names
        m.pmid, m.type, m.sem, m.units, m.indom = (self.pmid, self.type, self.sem,
                                                   self.units, self.indom)
        m.insts, m.inames = list(self.insts), list(self.inames)
        m.rate = self.rate
        m.state = None
        m.col_cap = 0
        m.inst_table = None
        m.snapshot = None
        # what every chunk's MetricArray of it starts with
        m.static = (m.names[0], m.pmid, m.type, m.sem, m.units, m.indom)
        return m

    def columns(self) -> Tuple[np.ndarray, List[str]]:
        """(instance ids, names) as of now, shared until columns are added."""
        snap = self.snapshot
        if snap is None or len(snap[1]) != len(self.insts):
            snap = self.snapshot = (np.array(self.insts, np.int32), list(self.inames))
        return snap


def _decode_name(b: Optional[bytes]) -> str:
    return "" if b is None else b.decode("utf-8", "replace")


def _walk_leaves(node, prefix: bytes, out: List[bytes]) -> None:
    stack = [(prefix, node)]
    while stack:
        pre, n = stack.pop()
        if n.pmid is not None and not n.children:
            out.append(pre)
        for cname, child in n.children:
            stack.append((pre + b"." + cname if pre else cname, child))


def _resolve(meta, metrics: Union[None, str, Iterable[str]]) -> List[Tuple[str, int]]:
    """(name, pmid) of every selected metric: names of leaves as given, names of
    non-leaves (PMNS prefixes) expanded to their leaves in name order (the first name
    only of a metric with several, as the sort finds them); None is all."""
    if metrics is None:
        wanted: List[str] = [""]
    elif isinstance(metrics, (str, bytes)):
        wanted = [metrics.decode() if isinstance(metrics, bytes) else metrics]
    else:
        wanted = [m.decode() if isinstance(m, bytes) else str(m) for m in metrics]
    out: List[Tuple[str, int]] = []
    seen_names = set()
    seen_pmids = set()
    for w in wanted:
        node = meta.root
        key = w.encode()
        if key:
            for part in key.split(b"."):
                node = node.child(part)
                if node is None:
                    raise pmErr(PM_ERR_NAME, w)
        if node.pmid is not None and not node.children:
            leaves = [key]
            explicit = True
        else:
            leaves = []
            _walk_leaves(node, key, leaves)
            leaves.sort()
            explicit = False
        for leaf in leaves:
            name = leaf.decode("utf-8", "replace")
            if name in seen_names:
                continue
            pmid = meta.name_to_pmid[leaf]
            desc = meta.descs.get(pmid)
            if desc is None or desc[1] not in DTYPES:
                if explicit:
                    what = "no descriptor" if desc is None else "type %d" % desc[1]
                    raise ValueError("%s (%s) cannot be read into columns; events are "
                                     "read with pcp.bulk's event API" % (name, what))
                continue
            if not explicit and pmid in seen_pmids:
                continue        # a prefix takes one name of a metric that has several
            seen_names.add(name)
            seen_pmids.add(pmid)
            out.append((name, pmid))
    return out


def _columns_in_window(meta, indom: int, start: int, end: int) -> Tuple[List[int], List[str]]:
    """Instances of `indom` in force at some time in [start, end]: the snapshot in force
    at start and every later one up to end, in instance id order; a name from the
    newest snapshot holding it."""
    chain = meta.indoms.get(indom)      # newest first
    if not chain:
        return [], []
    names: Dict[int, str] = {}
    for snap in chain:
        t = _stamp_ns(snap.stamp)
        if t > end:
            continue
        for i, n in zip(snap.insts, snap.names):
            if i not in names:
                names[i] = _decode_name(n)
        if t <= start:
            break                       # the one in force at start: older ones are not
    ids = sorted(names)
    return ids, [names[i] for i in ids]


def _instance_name(meta, indom: int, inst: int, cache: Dict[int, Dict[int, str]]) -> str:
    """Name of an instance met in the data but not among the window's instances: the
    newest name the metadata has for it, else its number."""
    names = cache.get(indom)
    if names is None:
        names = cache[indom] = {}
        for snap in reversed(meta.indoms.get(indom, ())):
            for i, n in zip(snap.insts, snap.names):
                names[i] = _decode_name(n)
    got = names.get(inst)
    if got is not None:
        return got
    return "" if inst == PM_IN_NULL_INT32 else str(inst)


# --------------------------------------------------------------------------------------
# counters to rates


class _RateCarry:
    """Per column: the last value seen, its time and segment (marks split segments)."""

    __slots__ = ("value", "time", "seg", "have")

    def __init__(self, ncols: int, dtype: np.dtype) -> None:
        self.value = np.zeros(ncols, dtype)
        self.time = np.zeros(ncols, np.int64)
        self.seg = np.zeros(ncols, np.int64)
        self.have = np.zeros(ncols, bool)

    def grow(self, ncols: int) -> None:
        extra = ncols - len(self.value)
        if extra > 0:
            self.value = np.concatenate([self.value, np.zeros(extra, self.value.dtype)])
            self.time = np.concatenate([self.time, np.zeros(extra, np.int64)])
            self.seg = np.concatenate([self.seg, np.zeros(extra, np.int64)])
            self.have = np.concatenate([self.have, np.zeros(extra, bool)])


def counter_rate(values: np.ndarray, present: np.ndarray, time_ns: np.ndarray,
                 seg: np.ndarray, carry: Optional[_RateCarry] = None
                 ) -> Tuple[np.ndarray, np.ndarray]:
    """Rates of change per second of a counter matrix: for each value, (v - v_prev) /
    (t - t_prev) with the instance's previous value in the same segment (no mark in
    between); NaN (and not present) for the first value, after a mark, and where the
    counter went backwards (a wrap or a reset) or time did not advance. `carry` holds
    the previous values across calls and is updated."""
    n, ncols = values.shape
    rows = np.arange(n, dtype=np.int64)[:, None]
    last = np.where(present, rows, -1)
    np.maximum.accumulate(last, axis=0, out=last)
    prev = np.empty_like(last)
    prev[0] = -1
    prev[1:] = last[:-1]
    has_prev = prev >= 0
    pidx = np.where(has_prev, prev, 0)
    cidx = np.broadcast_to(np.arange(ncols), (n, ncols))
    if n:
        pv = values[pidx, cidx]
        pt = time_ns[pidx]
        ps = seg[pidx]
    else:
        pv = values.copy()
        pt = np.zeros((0, ncols), np.int64)
        ps = np.zeros((0, ncols), np.int64)
    if carry is not None:
        carry.grow(ncols)
        use = ~has_prev & carry.have[None, :]
        pv = np.where(use, carry.value[None, :], pv)
        pt = np.where(use, carry.time[None, :], pt)
        ps = np.where(use, carry.seg[None, :], ps)
        has_prev = has_prev | use
    t = np.broadcast_to(time_ns[:, None], (n, ncols))
    s = np.broadcast_to(seg[:, None], (n, ncols))
    ok = present & has_prev & (s == ps) & (t > pt) & (values >= pv)
    if values.dtype.kind in "iu" and values.dtype.itemsize < 8:
        diff = values.astype(np.int64) - pv.astype(np.int64)
    elif values.dtype.kind == "f":
        diff = values.astype(np.float64) - pv.astype(np.float64)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            diff = values - pv          # unsigned: exact where values >= pv
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = diff.astype(np.float64) / ((t - pt).astype(np.float64) / 1e9)
    rate[~ok] = np.nan
    if carry is not None and n:
        seen = present.any(axis=0)
        lastrow = last[-1]
        cols = np.nonzero(seen)[0]
        carry.value[cols] = values[lastrow[cols], cols]
        carry.time[cols] = time_ns[lastrow[cols]]
        carry.seg[cols] = seg[lastrow[cols]]
        carry.have[cols] = True
    return rate, ok


# --------------------------------------------------------------------------------------
# the reader


class ArchiveReader:
    """Columns of one archive or several (a name, a comma-separated list or directory as
    pmNewContext takes them, or a list of names), read lazily.

    metrics   None (every metric), a name, or names; a name that is not a leaf selects
              every metric under it (a PMNS prefix, e.g. "kernel.all")
    start, end  the time window, inclusive: seconds since the epoch, datetime (naive
              means UTC), numpy datetime64, pandas Timestamp or ISO string
    rate      convert counters (PM_SEM_COUNTER) to rates per second (float64)
    chunk_bytes   about how much memory one chunk's arrays take (default 32 MB)
    chunk_rows    or a fixed number of rows per chunk
    progress  a tqdm progress bar over the bytes to read: None shows one when stderr
              is a terminal and tqdm is installed
    errors    at a damaged record: "raise" (pmErr PM_ERR_LOGREC, after the rows before
              it), "skip" (go on where libpcp's reader would) or "stop" (end that volume)
    volumes   read only these data volumes (numbers) of each archive (a partition of a
              large archive, as pcp.dask makes them); rates start afresh in each

    Iterating gives ArchiveColumns chunks whose memory does not grow with the archive;
    read() gives the whole scan, and to_pandas / to_arrow its forms; to_batches,
    to_parquet and the Arrow PyCapsule stream (__arrow_c_stream__) go chunk by chunk,
    with columns fixed from the metadata beforehand. After a scan, `stats`
    counts its records (marks included), marks, records skipped before the window,
    values stored, values pmExtractValue would refuse (left absent) and values dropped
    (instances left out by chunks(drop_unknown=True))."""

    def __init__(self, archives: Union[str, Sequence[str]], metrics: Any = None,
                 start: TimeLike = None, end: TimeLike = None, rate: bool = False,
                 chunk_bytes: int = DEFAULT_CHUNK_BYTES, chunk_rows: Optional[int] = None,
                 progress: Optional[bool] = None, errors: str = "raise",
                 volumes: Optional[Sequence[int]] = None) -> None:
        if errors not in ("raise", "skip", "stop"):
            raise ValueError("errors must be 'raise', 'skip' or 'stop'")
        if isinstance(archives, (list, tuple)):
            if not archives:
                raise ValueError("no archives")
            spec = ",".join(str(a) for a in archives)
        else:
            spec = str(archives)
        self.spec = spec
        self.start_ns = to_ns(start, NS_MIN)
        self.end_ns = to_ns(end, NS_MAX)
        self.rate = bool(rate)
        self.chunk_bytes = int(chunk_bytes)
        self.chunk_rows = chunk_rows
        self.progress = progress
        self.errors = errors
        self.volumes = None if volumes is None else set(int(v) for v in volumes)
        self.stats: Dict[str, int] = {}
        ctx = ArchiveContext(0, spec)
        try:
            self._metadata(ctx, metrics)
        finally:
            ctx.close()

    def _metadata(self, ctx: ArchiveContext, metrics: Any) -> None:
        meta = ctx.meta
        self.hostname = ctx.host_name()
        self.archive_names = [a.name for a in ctx.archives]
        self.archive_starts = [_stamp_ns(a.label.stamp) for a in ctx.archives]
        self._metrics: List[_Metric] = []
        self._names: List[Tuple[str, _Metric]] = []
        by_pmid: Dict[int, _Metric] = {}
        for name, pmid in _resolve(meta, metrics):
            m = by_pmid.get(pmid)
            if m is None:
                m = by_pmid[pmid] = _Metric(name, meta.descs[pmid])
                if m.indom == PM_INDOM_NULL:
                    m.insts, m.inames = [PM_IN_NULL_INT32], [""]
                else:
                    m.insts, m.inames = _columns_in_window(meta, m.indom, self.start_ns,
                                                           self.end_ns)
                m.rate = self.rate and m.sem == PM_SEM_COUNTER and m.type in NUMERIC
                self._metrics.append(m)
            else:
                m.names.append(name)
            self._names.append((name, m))

    # ---- what will be read -------------------------------------------------------------

    @property
    def metric_names(self) -> List[str]:
        return [n for n, _ in self._names]

    def describe(self) -> Dict[str, Dict[str, Any]]:
        """name -> pmid, type, sem, units, indom, instances and names (as of now)."""
        return {n: {"pmid": m.pmid, "type": m.type, "sem": m.sem, "units": m.units,
                    "indom": m.indom, "instances": list(m.insts),
                    "instance_names": list(m.inames), "rate": m.rate}
                for n, m in self._names}

    # ---- scanning ----------------------------------------------------------------------

    def __iter__(self) -> Iterator[ArchiveColumns]:
        return self.chunks()

    def chunks(self, drop_unknown: bool = False) -> Iterator[ArchiveColumns]:
        """The scan as chunks. drop_unknown: values of instances that are not among the
        metadata's instances of the window are left out instead of adding columns (the
        column set then never changes between chunks)."""
        return _Scan(self, drop_unknown).run()

    def read(self) -> ArchiveColumns:
        """The whole scan as one ArchiveColumns."""
        parts = list(self.chunks())
        if not parts:
            return self._empty()
        return ArchiveColumns.concat(parts)

    def _empty(self) -> ArchiveColumns:
        metrics = {}
        for name, m in self._names:
            dtype = np.dtype(np.float64) if m.rate else DTYPES[m.type]
            metrics[name] = MetricArray(
                name, m.pmid, m.type, m.sem, m.units, m.indom,
                np.zeros((0, len(m.insts)), dtype), np.zeros((0, len(m.insts)), bool),
                np.array(m.insts, np.int32), list(m.inames), m.rate)
        return ArchiveColumns(np.zeros(0, "datetime64[ns]"), np.zeros(0, bool), metrics)

    def to_pandas(self, form: str = "wide"):
        from pcp._bulk import export as _columns_export
        return _columns_export.reader_to_pandas(self, form)

    def to_arrow(self, form: str = "wide"):
        """The whole scan as a pyarrow Table (read().to_arrow(form))."""
        return self.read().to_arrow(form)

    def to_batches(self, form: str = "wide"):
        """A pyarrow.RecordBatchReader over the chunks. Its schema is fixed before the
        scan, from the metadata: values of an instance the metadata does not list for
        the window (a short-lived process pmlogger saw between two instance-domain
        records, say) are left out, and counted in stats["dropped"]."""
        from pcp._bulk import export as _columns_export
        return _columns_export.batch_reader(self, form)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow PyCapsule stream of to_batches() (wide), chunk by chunk."""
        return self.to_batches().__arrow_c_stream__(requested_schema)

    def to_parquet(self, path: Any, form: str = "wide", **kwargs: Any) -> None:
        """Write the scan to parquet chunk by chunk (memory stays flat; columns as
        to_batches() has them)."""
        from pcp._bulk import export as _columns_export
        _columns_export.write_parquet(self, path, form, **kwargs)


def _raw_dtype(m: _Metric) -> np.dtype:
    return np.dtype(np.int64) if m.type in BLOBS else DTYPES[m.type]


def _aligned(n: int) -> int:
    return (n + 63) & ~63


class _Ring:
    """Memory of the chunk before last, reused once nothing refers to it any more: a
    new chunk's memory is taken when the consumer comes back for more, and by then its
    loop variable holds the last chunk only (_Scan._next_chunk). Reusing memory that is
    already mapped saves the page faults and first-touch zeroing of fresh allocations,
    which cost about as much as the scan itself. The memory is not zeroed: the scan
    zeroes each row of an arena as it reaches it, and staged bytes are only ever read
    where the scan wrote them."""

    def __init__(self) -> None:
        self.items: List[np.ndarray] = []
        # views of an allocation kept for its next use (each holds a reference to it)
        self.views: Dict[int, Tuple[Any, List[np.ndarray]]] = {}

    def get(self, size: int, at_least: int = 0) -> np.ndarray:
        """`size` bytes, uninitialised, in an allocation of at least `at_least` bytes:
        the pages that are never touched take no memory, and the next chunks, which are
        seldom the same size, can reuse it."""
        got = None
        if len(self.items) >= 2:
            old = self.items.pop(0)
            cached = self.views.get(id(old))
            # references: `old`, getrefcount's argument and the cached views
            idle = 2 + (len(cached[1]) if cached else 0)
            if sys.getrefcount(old) == idle and old.nbytes >= size:
                got = old
            else:
                self.views.pop(id(old), None)
            del old, cached
        if got is None:
            n = max(size, at_least)
            got = np.empty(n, np.uint8)
        self.items.append(got)
        return got

    def cached_views(self, arena: np.ndarray, key: Any, make) -> List[np.ndarray]:
        """Views of `arena` for layout `key`, made by make() once per arena and key."""
        cached = self.views.get(id(arena))
        if cached is None or cached[0] != key:
            cached = self.views[id(arena)] = (key, make())
        return cached[1]

    def replace(self, old: np.ndarray, new: np.ndarray) -> None:
        for k, item in enumerate(self.items):
            if item is old:
                self.items[k] = new


class _Scan:
    """One pass over the archives of a reader."""

    def __init__(self, reader: ArchiveReader, drop_unknown: bool) -> None:
        self.r = reader
        self.metrics = [m.for_scan() for m in reader._metrics]
        # the reader's metrics -> this scan's
        self.index = {id(m): i for i, m in enumerate(reader._metrics)}
        # one name per metric, in selection order: the chunk's dict is made directly
        self.one_name = [m for _, m in reader._names] == reader._metrics
        self.has_blobs = any(m.type in BLOBS for m in self.metrics)
        self.drop_unknown = drop_unknown
        self.seg = 0
        self.names_cache: Dict[int, Dict[int, str]] = {}
        self.staged_per_row = 0
        self.arenas = _Ring()
        self.stagings = _Ring()
        self.state = ffi.new("pcp_cols_state *")
        self.cmetrics = ffi.new("pcp_cols_metric[]", max(len(self.metrics), 1))
        # numpy views of every metric's nvalues and nbytes counters in the C array
        size = ffi.sizeof("pcp_cols_metric")
        nmet = len(self.metrics)
        cbuf = ffi.buffer(self.cmetrics)
        self.c_nvalues = np.ndarray((nmet,), np.int64, buffer=cbuf, strides=(size,),
                                    offset=ffi.offsetof("pcp_cols_metric", "nvalues"))
        self.c_nbytes = np.ndarray((nmet,), np.int64, buffer=cbuf, strides=(size,),
                                   offset=ffi.offsetof("pcp_cols_metric", "nbytes"))
        self.last_nvalues = np.zeros(nmet, np.int64)
        self.last_nbytes = np.zeros(nmet, np.int64)
        self.itemsize = np.array([_raw_dtype(m).itemsize for m in self.metrics], np.int64)
        self._layout_key: Any = None
        for i, m in enumerate(self.metrics):
            m.state = _RateCarry(len(m.insts), DTYPES[m.type]) if m.rate else None
            m.index(len(m.insts))
            self._bind_index(i)
        self._bind_hints()
        self._build_map()
        self.miss_metric = np.zeros(MISS_CAP, np.int32)
        self.miss_inst = np.zeros(MISS_CAP, np.int32)
        s = self.state
        s.miss_metric = ffi.cast("int32_t *", self.miss_metric.ctypes.data)
        s.miss_inst = ffi.cast("int32_t *", self.miss_inst.ctypes.data)
        s.miss_cap = MISS_CAP

    def _bind_hints(self) -> None:
        """One array for every metric's instance-order hints, one for its columns'
        record serials and one for their successors (columns.h), in metric order: the
        records' value sets come in that order, so the scan reads them front to back."""
        caps = np.array([m.col_cap for m in self.metrics], np.int64)
        offs = (np.cumsum(caps) - caps).tolist()
        self.hints = np.full(max(2 * int(caps.sum()), 1), -1, np.int32)
        self.col_serials = np.zeros(max(int(caps.sum()), 1), np.int64)  # serials start at 1
        self.col_next = np.full(max(int(caps.sum()), 1), -1, np.int32)
        hint = ffi.cast("int32_t *", self.hints.ctypes.data)
        serial = ffi.cast("int64_t *", self.col_serials.ctypes.data)
        after = ffi.cast("int32_t *", self.col_next.ctypes.data)
        for i, off in enumerate(offs):
            c = self.cmetrics[i]
            c.hint = hint + 2 * off
            c.col_serial = serial + off
            c.col_next = after + off

    def _bind_index(self, i: int) -> None:
        m = self.metrics[i]
        c = self.cmetrics[i]
        c.type = m.type
        c.pmid = m.pmid
        c.next = -1
        c.ncols = len(m.insts)
        c.col_cap = m.col_cap
        c.col_inst = ffi.cast("int32_t *", m.col_inst.ctypes.data)
        c.inst_table = ffi.cast("int32_t *", m.inst_table.ctypes.data)
        c.inst_mask = len(m.inst_table) // 2 - 1
        if lib.pcp_cols_index(self.cmetrics + i) != 0:
            raise AssertionError("instance table too small")

    def _build_map(self) -> None:
        n = len(self.metrics)
        size = 8
        while size < 2 * n:
            size *= 2
        keys = np.full(size, PM_ID_NULL, np.uint32)
        vals = np.full(size, -1, np.int32)
        mask = size - 1
        for i, m in enumerate(self.metrics):
            h = ((m.pmid * 2654435761) & 0xFFFFFFFF) & mask
            while keys[h] != PM_ID_NULL:
                h = (h + 1) & mask
            keys[h] = m.pmid
            vals[h] = i
        self._map = (keys, vals)
        s = self.state
        s.nmetrics = n
        s.metrics = self.cmetrics
        s.map_mask = mask
        s.map_pmid = ffi.cast("uint32_t *", keys.ctypes.data)
        s.map_metric = ffi.cast("int32_t *", vals.ctypes.data)
        s.first = -1
        s.start_ns = self.r.start_ns
        s.end_ns = self.r.end_ns
        s.drop_unknown = 1 if self.drop_unknown else 0

    # ---- chunk memory ------------------------------------------------------------------

    def _layout(self, cap: int) -> Tuple[np.ndarray, np.ndarray, int, int]:
        """Where every metric's values and present matrices lie in one arena of `cap`
        rows: (values offsets, present offsets, row bytes, arena bytes). A row of the
        arena holds the values rows of every metric, in metric order (the order of the
        records' value sets), then their present rows: the scan fills a row from front
        to back while it is in cache, and zeroes it just before (pcp_cols_state's
        zero_base)."""
        col_caps = np.array([m.col_cap for m in self.metrics], np.int64)
        key = (cap, col_caps.tobytes())
        if key != self._layout_key:
            # each values row aligned to its cells' size (8 bytes does for all)
            vsize = (col_caps * self.itemsize + 7) & ~7
            voff = np.cumsum(vsize) - vsize
            vbytes = int(vsize.sum())
            poff = vbytes + np.cumsum(col_caps) - col_caps
            row_bytes = _aligned(vbytes + int(col_caps.sum()))
            self._layout_val = (voff, poff, row_bytes, max(cap * row_bytes, 1))
            self._layout_key = key
        return self._layout_val

    def _sizes(self) -> Tuple[int, int]:
        """(rows, bytes of string staging) of the next chunk. Its budget covers both:
        string bytes per row are learnt from the chunks before (the first chunk gives
        them half); a chunk whose staging fills up ends early rather than grows."""
        budget = self.r.chunk_bytes
        per_row = 16
        for m in self.metrics:
            per_row += m.col_cap * (_raw_dtype(m).itemsize + 1)
        staged = 0
        if self.has_blobs:
            if self.staged_per_row:
                per_row += self.staged_per_row
                rows = budget // per_row
                staged = int(rows * self.staged_per_row * 1.25)
            else:
                budget //= 2
                staged = budget
        rows = budget // max(per_row, 1)
        if rows > 64:
            rows &= ~15
        if self.r.chunk_rows:
            rows = int(self.r.chunk_rows)
        return int(min(max(rows, 1 if self.r.chunk_rows else 16), 1 << 30)), \
            max(staged, STAGED_START)

    def _new_chunk(self) -> None:
        cap, staged_size = self._sizes()
        self.cap = cap
        self.time = np.empty(cap, np.int64)
        self.flags = np.zeros(cap, np.uint8)
        s = self.state
        s.row_cap = cap
        s.nrow = 0
        s.time_ns = ffi.cast("int64_t *", self.time.ctypes.data)
        s.flags = ffi.cast("uint8_t *", self.flags.ctypes.data)
        voff, poff, row_bytes, total = self._layout(cap)
        self.chunk_key = self._layout_key
        self.chunk_caps = [m.col_cap for m in self.metrics]
        # one allocation for every metric's arrays, whose rows the scan zeroes
        self.arena = self.arenas.get(total, at_least=self.r.chunk_bytes)
        self.voff, self.poff, self.row_bytes = voff, poff, row_bytes
        self.own: Dict[int, Tuple[np.ndarray, np.ndarray]] = {}
        arena = ffi.cast("uint8_t *", self.arena.ctypes.data)
        s.zero_base = arena
        s.zero_row_bytes = row_bytes
        s.zeroed_rows = 0
        if self.metrics:
            strides = np.full(len(self.metrics), row_bytes, np.int64)
            lib.pcp_cols_bind(s, arena, ffi.cast("int64_t *", voff.ctypes.data),
                              ffi.cast("int64_t *", poff.ctypes.data),
                              ffi.cast("int64_t *", strides.ctypes.data),
                              ffi.cast("int64_t *", strides.ctypes.data))
        if self.has_blobs:
            self._set_staged(self.stagings.get(staged_size,
                                               at_least=self.r.chunk_bytes // 2))
        s.staged_used = 0

    def _set_staged(self, area: np.ndarray) -> None:
        self.staged = area
        s = self.state
        s.staged = ffi.cast("uint8_t *", area.ctypes.data)
        s.staged_cap = len(area)

    def _more_room(self) -> None:
        s = self.state
        used = int(s.staged_used)
        old = self.staged
        grown = np.empty(max(2 * len(old), int(s.room_need) * 2, STAGED_START), np.uint8)
        grown[:used] = old[:used]
        self.stagings.replace(old, grown)
        self._set_staged(grown)

    def _matrices(self, i: int) -> Tuple[np.ndarray, np.ndarray]:
        """Metric i's values and present matrices of the chunk being filled."""
        own = self.own.get(i)
        if own is not None:
            return own
        views = self.arenas.cached_views(self.arena, self.chunk_key, self._make_views)
        return views[2 * i], views[2 * i + 1]

    def _make_views(self) -> List[np.ndarray]:
        views = []
        cap, arena, row = self.cap, self.arena, self.row_bytes
        for col_cap, m, voff, poff in zip(self.chunk_caps, self.metrics,
                                          self.voff.tolist(), self.poff.tolist()):
            shape = (cap, col_cap)
            dtype = _raw_dtype(m)
            views.append(np.ndarray(shape, dtype, buffer=arena, offset=voff,
                                    strides=(row, dtype.itemsize)))
            views.append(np.ndarray(shape, bool, buffer=arena, offset=poff,
                                    strides=(row, 1)))
        return views

    def _add_columns(self) -> None:
        """Columns for the instances a record had that no column holds (NEED_COLUMN):
        appended after the others, in the room left for them or in bigger matrices."""
        s = self.state
        n = min(int(s.nmiss), MISS_CAP)
        wanted: Dict[int, List[int]] = {}
        for mi, inst in zip(self.miss_metric[:n].tolist(), self.miss_inst[:n].tolist()):
            new = wanted.setdefault(mi, [])
            if inst not in new:
                new.append(inst)
        rows = int(s.nrow)
        rehint = False
        for i, new in wanted.items():
            m = self.metrics[i]
            have = set(m.insts)
            new = [inst for inst in new if inst not in have]
            m.insts.extend(new)
            m.inames.extend(_instance_name(self.meta, m.indom, inst, self.names_cache)
                            for inst in new)
            if m.state is not None:
                m.state.grow(len(m.insts))
            ncols = len(m.insts)
            if ncols > m.col_cap:
                values, present = self._matrices(i)
                old_cap = m.col_cap
                col_cap = ncols + max(4, ncols // 4)
                nv = np.zeros((self.cap, col_cap), values.dtype)
                npr = np.zeros((self.cap, col_cap), bool)
                nv[:rows, :old_cap] = values[:rows]
                npr[:rows, :old_cap] = present[:rows]
                self.own[i] = (nv, npr)
                m.index(col_cap)
                rehint = True
                c = self.cmetrics[i]
                c.values = ffi.cast("void *", nv.ctypes.data)
                c.present = ffi.cast("uint8_t *", npr.ctypes.data)
                c.values_stride = nv.strides[0]
                c.present_stride = npr.strides[0]
            else:
                m.index()
            self._bind_index(i)
        if rehint:
            self._bind_hints()

    def _emit(self) -> Optional[ArchiveColumns]:
        n = int(self.state.nrow)
        if n == 0:
            return None
        time_ns = self.time[:n]
        after = (self.flags[:n] & ROW_AFTER_MARK).astype(bool)
        seg = self.seg + np.cumsum(after, dtype=np.int64)
        self.seg = int(seg[-1])
        staged = self.staged[:int(self.state.staged_used)] if self.has_blobs else None
        if staged is not None:
            # string bytes count in the chunk's memory: size the next chunks with them
            # (by steps, so that chunks keep one size and their memory can be reused)
            need = -(-len(staged) // n)
            if need > self.staged_per_row:
                self.staged_per_row = need + need // 8
        views = self.arenas.cached_views(self.arena, self.chunk_key, self._make_views)
        own = self.own
        made: List[MetricArray] = []
        # the scan's per-metric counters, read for every metric at once
        nv = self.c_nvalues.copy()
        nb = self.c_nbytes.copy()
        counts = (nv - self.last_nvalues).tolist()
        nbytes_all = (nb - self.last_nbytes).tolist()
        self.last_nvalues, self.last_nbytes = nv, nb
        new_metric = MetricArray.__new__
        for i, m in enumerate(self.metrics):
            if i in own:
                raw, present = own[i]
            else:
                raw, present = views[2 * i], views[2 * i + 1]
            ncols = len(m.insts)
            if ncols == m.col_cap:
                values: Optional[np.ndarray] = raw[:n]
                present = present[:n]
            else:
                values = raw[:n, :ncols]
                present = present[:n, :ncols]
            ids, names = m.columns()
            ma = new_metric(MetricArray)
            ma.name, ma.pmid, ma.type, ma.sem, ma.units, ma.indom = m.static
            ma.instances, ma.instance_names, ma.rate = ids, names, m.rate
            ma.blobs = None
            ma._count = counts[i]
            if m.type in BLOBS:
                ma.blobs = Blobs(values, present, staged, m.type == PM_TYPE_STRING,
                                 nbytes_all[i])
                values = None
            elif m.rate:
                values, present = counter_rate(values, present, time_ns, seg, m.state)
                ma._count = None
            ma._values = values
            ma.present = present
            made.append(ma)
        names_map = self.r._names
        if len(names_map) == len(made) and self.one_name:
            out = {ma.name: ma for ma in made}
        else:
            out = {}
            for name, m in names_map:
                ma = made[self.index[id(m)]]
                out[name] = ma if ma.name == name else ma.renamed(name)
        return ArchiveColumns(time_ns.view("datetime64[ns]"), after, out)

    def _next_chunk(self) -> Iterator[ArchiveColumns]:
        """The rows read so far as a chunk, then memory for the next one. The new memory
        is taken once the consumer has come back for more: by then it holds this chunk
        only, and the memory of the one before can be reused (see _Ring)."""
        chunk = self._emit()
        if chunk is not None:
            yield chunk
            del chunk
        self._new_chunk()

    # ---- the pass ----------------------------------------------------------------------

    def run(self) -> Iterator[ArchiveColumns]:
        ctx = ArchiveContext(0, self.r.spec)
        self.meta = ctx.meta
        bar = _progress_bar(self.r.progress, ctx, self.r.start_ns)
        try:
            self._new_chunk()
            yield from self._archives(ctx, bar)
            last = self._emit()
            if last is not None:
                yield last
        finally:
            self._report()
            if bar is not None:
                bar.close()
            ctx.close()

    def _report(self) -> None:
        s = self.state
        cm = [self.cmetrics[i] for i in range(len(self.metrics))]
        self.r.stats = {
            "records": int(s.records), "marks": int(s.marks),
            "skipped": int(s.skipped),
            "values": sum(int(c.nvalues) for c in cm),
            "conversion_errors": sum(int(c.nerr) for c in cm),
            "dropped": sum(int(c.dropped) for c in cm)}

    def _archives(self, ctx: ArchiveContext, bar) -> Iterator[ArchiveColumns]:
        s = self.state
        prev_end: Optional[Tuple[int, int]] = None
        for k, arch in enumerate(ctx.archives):
            if _stamp_ns(arch.label.stamp) > self.r.end_ns:
                break
            if k > 0:
                s.pending_flags |= ROW_AFTER_MARK   # libpcp's <mark> between archives
                if prev_end is not None and tsub(prev_end, arch.label.stamp) > 0:
                    raise pmErr(PM_ERR_LOGOVERLAP)
            last_t: List[Optional[Tuple[int, int]]] = [None]
            done = yield from self._archive(arch, bar, last_t)
            prev_end = last_t[0]
            if done:
                return

    def _seek(self, arch) -> Tuple[int, int]:
        """(volume, offset) to start at: the last index entry at or before the start
        of the window, if it points at a whole record; else the first volume."""
        start = self.r.start_ns
        if start == NS_MIN or not arch.index:
            return arch.minvol, 0
        best = None
        for e in arch.index:
            if _stamp_ns(e.stamp) <= start:
                best = e
            else:
                break
        if best is None or not arch.minvol <= best.vol <= arch.maxvol:
            return arch.minvol, 0
        sts, mapped, _ = arch.open_volume(best.vol)
        off = best.off_data
        if sts < 0 or mapped is None or off < arch.label.length or off + 8 > mapped.size:
            return arch.minvol, 0
        head = int.from_bytes(mapped.slice(off, off + 4), "big", signed=True)
        if head < 8 or off + head > mapped.size or \
                int.from_bytes(mapped.slice(off + head - 4, off + head), "big",
                               signed=True) != head:
            return arch.minvol, 0
        return best.vol, off

    def _archive(self, arch, bar, last_t):
        s = self.state
        pos = ffi.new("uint64_t *")
        first_vol, first_off = self._seek(arch)
        for vol in range(first_vol, arch.maxvol + 1):
            if self.r.volumes is not None and vol not in self.r.volumes:
                continue
            sts, mapped, _ = arch.open_volume(vol)
            if sts < 0 or mapped is None:
                continue        # missing or unusable volumes are skipped, as libpcp does
            pos[0] = first_off if vol == first_vol else arch.label.length
            if bar is not None and vol == first_vol and first_off:
                bar.update(first_off)
            try:
                while True:
                    at = int(pos[0])
                    row0 = int(s.nrow)
                    s.pause_pos = at + RELEASE_EVERY
                    sts = lib.pcp_cols_scan(mapped.ptr, mapped.size, arch.label.length,
                                            arch.version, pos, s)
                    row1 = int(s.nrow)
                    if row1 > row0:
                        t = int(self.time[row1 - 1])
                        last_t[0] = (t // 1000000000, t % 1000000000)
                    mapped.release_pages(at, int(pos[0]))
                    if bar is not None:
                        bar.update(int(pos[0]) - at)
                    if sts == COLS_PAUSE:
                        continue
                    if sts == COLS_NEED_ROOM:
                        if int(s.nrow) == 0:
                            self._more_room()   # one record's strings: make room
                            continue
                        sts = 0                 # the chunk is full of strings
                    if sts == 0:
                        yield from self._next_chunk()
                        continue
                    if sts == COLS_NEED_COLUMN:
                        self._add_columns()
                        continue
                    if sts == LOG_END:
                        break
                    if sts == COLS_PAST_END:
                        return True
                    # a damaged record
                    if self.r.errors == "raise":
                        yield from self._next_chunk()
                        raise pmErr(sts)
                    if self.r.errors == "stop" or (int(pos[0]) <= at and row1 == row0):
                        break
            finally:
                mapped.release_all()
        return False


def _progress_bar(progress: Optional[bool], ctx: ArchiveContext, start_ns: int):
    if progress is False:
        return None
    if progress is None and not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if progress:
            from pcp._bulk import export as _columns_export
            _columns_export.need("tqdm", "progress")
        return None
    total = 0
    for arch in ctx.archives:
        for vol in range(arch.minvol, arch.maxvol + 1):
            sts, mapped, _ = arch.open_volume(vol)
            if sts == 0 and mapped is not None:
                total += mapped.size
    return tqdm(total=total, unit="B", unit_scale=True, desc="archive", leave=False)


def read_archive(archives: Union[str, Sequence[str]], metrics: Any = None,
                 start: TimeLike = None, end: TimeLike = None, rate: bool = False,
                 **kwargs: Any) -> ArchiveColumns:
    """The whole scan of ArchiveReader(archives, metrics, start, end, rate, ...)."""
    return ArchiveReader(archives, metrics, start, end, rate, **kwargs).read()
