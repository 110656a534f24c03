"""The results of bulk archive reads: a chunk of columns (ArchiveColumns), one time x
instance matrix per metric (MetricArray), and strings or aggregates left as references
into the chunk's staged bytes until asked for (Blobs). Their pandas / Arrow / Parquet
forms are made by pcp._bulk.export."""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from pcp._bulk import export
from pcp._bulk.typed import CELL_DTYPES
from pcp._core.constants import PM_INDOM_NULL
from pcp._core.native import ffi, lib
from pcp._core.wire import PCP_COLS_REF_SHIFT

PAYLOAD_OFF_MASK = (1 << PCP_COLS_REF_SHIFT) - 1


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
        return self.refs >> PCP_COLS_REF_SHIFT        # an absent cell's reference is 0

    def objects(self) -> np.ndarray:
        """An object array: str (strings, UTF-8 with errors replaced) or bytes, None
        where absent."""
        rows, cols = np.nonzero(self.present)
        refs = self.refs[rows, cols]
        offs = (refs & PAYLOAD_OFF_MASK).tolist()
        lens = (refs >> PCP_COLS_REF_SHIFT).tolist()
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
        total = int((refs[:, col0:col1] >> PCP_COLS_REF_SHIFT)[sel].sum()) if sel.size else 0
        offsets = np.empty((col1 - col0) * nrows + 1, np.int64)
        data = np.empty(total, np.uint8)
        got = lib.pcp_archive_columns_pack(ffi.cast("int64_t *", refs.ctypes.data),
                                           ffi.cast("uint8_t *", present.ctypes.data), nrows,
                                           stride, col0, col1,
                                           ffi.cast("uint8_t *", self.staged.ctypes.data),
                                           len(self.staged),
                                           ffi.cast("int64_t *", offsets.ctypes.data),
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
        """The values matrix (rows: times, columns: instances); objects for strings and
        aggregates."""
        if self._values is None:
            assert self.blobs is not None
            self._values = self.blobs.objects()
        return self._values

    def renamed(self, name: str) -> "MetricArray":
        """The same values under another metric name."""
        return MetricArray(name, self.pmid, self.type, self.sem, self.units, self.indom,
                           self._values, self.present, self.instances, self.instance_names,
                           self.rate, self.blobs, self._count)

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype of the values."""
        if self.rate:
            return np.dtype(np.float64)
        return CELL_DTYPES[self.type]

    @property
    def singular(self) -> bool:
        """Whether the metric has no instance domain."""
        return self.indom == PM_INDOM_NULL

    @property
    def shape(self) -> Tuple[int, int]:
        """(rows, columns) of the matrix."""
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
        return export.column_names(self.name, self.indom, self.instance_names)

    def __repr__(self) -> str:
        return "<MetricArray %s %s %s%s>" % (self.name, self.dtype,
                                             "x".join(map(str, self.shape)),
                                             " rate" if self.rate else "")


class MissingMetricsWarning(UserWarning):
    """Archives of a collection lack metrics the selection names: they give no rows for
    them (read strictly, missing="raise", they are an error instead)."""


class ArchiveColumns:
    """Rows of an archive scan (a chunk, or the whole scan): one row per record that
    holds at least one selected metric.

    time        datetime64[ns] per row (UTC)
    after_mark  bool per row: a <mark> record (or an archive boundary) came before it
    metrics     metric name -> MetricArray, in selection order; also ``cols[name]``
    timezone, zoneinfo  the archive label's zone (a TZ string, and the zoneinfo name
                v3 labels add): the zone of the pandas indexes
    missing     archives -> the selected names they lack (a collection read leniently:
                ArchiveReader's missing="skip"); the pandas frames' attrs["pcp_missing"]
    source      the archive's label and instance-domain history (pcp._bulk.carried), which
                the pandas and Arrow forms carry for pcp.pmi.write_frame; None for rows
                no reader made"""

    def __init__(self, time: np.ndarray, after_mark: np.ndarray,
                 metrics: Dict[str, MetricArray], timezone: str = "",
                 zoneinfo: str = "", missing: Optional[Dict[str, List[str]]] = None,
                 source: Optional[Dict[str, Any]] = None) -> None:
        self.time = time
        self.after_mark = after_mark
        self.metrics = metrics
        self.timezone = timezone
        self.zoneinfo = zoneinfo
        self.missing: Dict[str, List[str]] = dict(missing or {})
        self.source = source

    def __getitem__(self, name: str) -> MetricArray:
        return self.metrics[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.metrics)

    def __len__(self) -> int:
        return len(self.time)

    def keys(self):
        """The metric names, as a dict's keys."""
        return self.metrics.keys()

    def values(self):
        """The metrics' arrays, as a dict's values."""
        return self.metrics.values()

    def items(self):
        """(name, MetricArray) pairs, as a dict's items."""
        return self.metrics.items()

    def __repr__(self) -> str:
        return "<ArchiveColumns %d rows, %d metrics>" % (len(self.time), len(self.metrics))

    # conversions (pcp/_bulk/export.py)
    def to_pandas(self, form: str = "wide"):
        """A pandas DataFrame: form "wide" (a DatetimeIndex "time" and one column per
        metric and instance, "metric[instance]"; integer columns as nullable pandas
        integers) or "long" (columns time, metric, instance, value and, when strings
        are selected, text; one row per value present)."""
        return export.to_pandas(self, form)

    def to_arrow(self, form: str = "wide"):
        """A pyarrow Table, "wide" or "long" as for to_pandas (missing values null)."""
        return export.to_arrow(self, form)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow PyCapsule stream of the wide table (polars, duckdb, ... read it)."""
        return self.to_arrow().__arrow_c_stream__(requested_schema)

    def to_parquet(self, path: Any, form: str = "wide", **kwargs: Any) -> None:
        """Write the table to a parquet file (pyarrow.parquet.write_table kwargs)."""
        pq = export.need("pyarrow.parquet", "arrow")
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
                v = absent((len(p.time), len(ids)), m.dtype, m.rate)
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
        return ArchiveColumns(time, after, metrics, parts[0].timezone, parts[0].zoneinfo,
                              parts[0].missing, parts[0].source)


def absent(shape: Tuple[int, int], dtype: np.dtype, rate: bool = False) -> np.ndarray:
    """A matrix of `shape` holding nothing: None for objects, NaN for rates, else zeros."""
    if dtype == object:
        return np.full(shape, None, dtype=object)
    if rate:
        return np.full(shape, np.nan)
    return np.zeros(shape, dtype)
