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
read again). The scan itself is pcp._bulk.scan; the result types (ArchiveColumns,
MetricArray, Blobs) are in pcp._bulk.arrays; the pandas and Arrow conversions are in
pcp._bulk.export and need those optional packages.
"""
from __future__ import annotations

import warnings
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from pcp._archive.context import ArchiveContext
from pcp._archive.files import spec_text
from pcp._bulk import carried, derived_columns, export, grid
from pcp._bulk.arrays import ArchiveColumns, MetricArray, MissingMetricsWarning
from pcp._bulk.scan import Scan
from pcp._bulk.selection import (NS_MAX, NS_MIN, Selected, TimeLike, columns_in_window,
                                 is_pcp_time, stamp_ns, to_ns, window_ns)
from pcp._bulk.typed import CELL_DTYPES, NUMERIC
from pcp._core.constants import PM_INDOM_NULL, PM_SEM_COUNTER
from pcp._core.errors import pmErr
from pcp._core.wire import PM_IN_NULL_INT32

DEFAULT_CHUNK_BYTES = 32 << 20



class ArchiveReader:
    """Columns of one archive or several (a name, a comma-separated list or directory as
    pmNewContext takes them, or a list of names), read lazily.

    metrics   None (every metric of the archives), a name, or names; a name that is not
              a leaf selects every metric under it (a PMNS prefix, e.g. "kernel.all");
              derived metrics (pmRegisterDerived, pmLoadDerivedConfig, PCP_DERIVED_CONFIG,
              the default configuration) are names like any other, and a prefix takes
              those under it: see pcp._bulk.derived_columns
    start, end  the time window, inclusive: seconds since the epoch, datetime (naive
              means UTC), numpy datetime64, pandas Timestamp, ISO string, or any of
              PCP's -S / -T forms ("@13:30", "-5min", "+30s", "@ Nov 24 10:00"), read
              against the archives' span, dates in the archive's zone
    rate      convert counters (PM_SEM_COUNTER) to rates per second (float64)
    chunk_bytes   about how much memory one chunk's arrays take (default 32 MB)
    chunk_rows    or a fixed number of rows per chunk
    progress  a tqdm progress bar over the bytes to read: None shows one when stderr
              is a terminal and tqdm is installed
    errors    at a damaged record: "raise" (pmErr PM_ERR_LOGREC, after the rows before
              it), "skip" (go on where libpcp's reader would) or "stop" (end that volume)
    missing   a selected name the archives lack (PM_ERR_NAME; a derived metric whose
              operands they lack, PM_ERR_BADDERIVE): "raise" (strict), or "skip": no
              columns for it, the names in `missing`, a MissingMetricsWarning, and the
              results' `missing` ({archives: names}; the pandas frames'
              attrs["pcp_missing"]). Default: "skip" for several archives (a list, a
              comma-separated list or a directory: a collection is never uniform; an
              archive of it that lacks a metric another has gives no rows for it
              anyway), "raise" for one
    volumes   read only these data volumes (numbers) of each archive (a partition of a
              large archive, as pcp.dask makes them); rates start afresh in each
    interval  read a regular time grid instead of the records (pcp._bulk.grid): seconds,
              or PCP's interval syntax ("10sec", "1min", "2 hours", as pmParseInterval
              reads it). Rows are the times start, start + interval, ... up to end;
              start defaults to the start of the first archive (where pmval and pmrep
              -t start interpolating), end to the end of the last. Every cell is the
              value libpcp 6.0.3's pmFetch in PM_MODE_INTERP gives at that time for
              that (metric, instance), absent where it gives none (before and after the
              archives, around <mark>s, ...). The columns are the instances libpcp's
              interpolation considers (every one the archives have for the domain,
              less those whose lifetime misses the grid). rate=True then gives pmval's
              and pmrep's rates: (v[k] - v[k-1]) / interval over consecutive rows,
              absent at the first row, where either value is absent, and where the
              counter went down ($PCP_COUNTER_WRAP: wrapped as pmval wraps it).
              Derived metrics are evaluated over the interpolated operands of each
              step, as the INTERP pmFetch evaluates them. volumes and errors do not
              apply.
    align     with interval: move start up to the next multiple of this (seconds or an
              interval string) since the epoch, as pmrep -A does, when that stays inside
              the archives

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
                 volumes: Optional[Sequence[int]] = None,
                 interval: Union[None, float, str] = None, align: Union[None, float, str] = None,
                 missing: Optional[str] = None) -> None:
        if errors not in ("raise", "skip", "stop"):
            raise ValueError("errors must be 'raise', 'skip' or 'stop'")
        if missing not in (None, "raise", "skip"):
            raise ValueError("missing must be 'raise' or 'skip'")
        if isinstance(archives, (list, tuple)):
            if not archives:
                raise ValueError("no archives")
            spec = ",".join(spec_text(a) for a in archives)
        else:
            spec = spec_text(archives)
        self.spec = spec
        self.rate = bool(rate)
        self.chunk_bytes = int(chunk_bytes)
        self.chunk_rows = chunk_rows
        self.progress = progress
        self.errors = errors
        self.volumes = None if volumes is None else set(int(v) for v in volumes)
        self.stats: Dict[str, int] = {}
        try:
            ctx = ArchiveContext(0, spec)
        except pmErr as e:
            raise pmErr(e.code, [spec]) from None    # as pmNewContext's error names it
        self.missing: List[str] = []
        if missing is None:
            missing = "skip" if len(ctx.archives) > 1 else "raise"
        self.missing_rule = missing
        try:
            label = ctx.archive_label()
            self.timezone = label.timezone.decode("utf-8", "replace")
            self.zoneinfo = label.zoneinfo.decode("utf-8", "replace")
            self.interval_ns: Optional[int] = None
            self.grid_lead = 0      # grid rows read before start and left out (pcp.dask)
            if interval is not None:
                if volumes is not None:
                    raise ValueError("a grid (interval) is read from whole archives: "
                                     "volumes do not apply")
                self.start_ns, self.end_ns, self.interval_ns = grid.grid_window(
                    ctx, start, end, interval, align, self.timezone)
            elif align is not None:
                raise ValueError("align needs an interval")
            elif is_pcp_time(start) or is_pcp_time(end):
                first = min(stamp_ns(a.label.stamp) for a in ctx.archives)
                self.start_ns, self.end_ns = window_ns(start, end, first,
                                                       stamp_ns(ctx.archive_end()), self.timezone)
            else:
                self.start_ns, self.end_ns = to_ns(start, NS_MIN), to_ns(end, NS_MAX)
            self._metadata(ctx, metrics)
            self.source = carried.source_of(ctx, self._metrics,
                                            self.start_ns, self.end_ns)
            if self.interval_ns is not None:
                grid.grid_columns(ctx, self._metrics + list(self._derived), self.start_ns,
                                  self.end_ns)
        finally:
            ctx.close()

    def _metadata(self, ctx: ArchiveContext, metrics: Any) -> None:
        meta = ctx.meta
        self.hostname = ctx.host_name()
        self.archive_names = [a.name for a in ctx.archives]
        self.archive_starts = [stamp_ns(a.label.stamp) for a in ctx.archives]
        self._metrics: List[Selected] = []
        self._names: List[Tuple[str, Selected]] = []
        self._derived: List[derived_columns.DerivedSelected] = []
        by_pmid: Dict[int, Selected] = {}
        lacking = self.missing if self.missing_rule == "skip" else None
        for name, pmid, tree in derived_columns.resolve(ctx, metrics, lacking):
            if tree is not None:
                d = derived_columns.selected(name, pmid, tree, meta, self.start_ns,
                                             self.end_ns, self.rate)
                self._derived.append(d)
                self._names.append((name, d))
                continue
            m = by_pmid.get(pmid)
            if m is None:
                m = by_pmid[pmid] = self._selected(meta, name, pmid, self.rate)
                self._metrics.append(m)
            else:
                m.names.append(name)
            self._names.append((name, m))
        # the operands of derived metrics are scanned too, as hidden metrics if need be
        for d in self._derived:
            for pmid in d.operands:
                if pmid not in by_pmid:
                    names = meta.names_of(pmid)
                    name = names[0].decode("utf-8", "replace") if names else str(pmid)
                    by_pmid[pmid] = self._selected(meta, name, pmid, False)
                    self._metrics.append(by_pmid[pmid])
        if self.missing:
            warnings.warn(MissingMetricsWarning(
                "%s: no archive holds %s: no rows for %s" % (
                    self.spec, ", ".join(self.missing),
                    "it" if len(self.missing) == 1 else "them")), stacklevel=4)

    def _selected(self, meta, name: str, pmid: int, rate: bool) -> Selected:
        m = Selected(name, meta.descs[pmid])
        if m.indom == PM_INDOM_NULL:
            m.insts, m.inames = [PM_IN_NULL_INT32], [""]
        else:
            m.insts, m.inames = columns_in_window(meta, m.indom, self.start_ns, self.end_ns)
        m.rate = rate and m.sem == PM_SEM_COUNTER and m.type in NUMERIC
        return m

    # ---- what will be read -------------------------------------------------------------

    @property
    def metric_names(self) -> List[str]:
        """The selected metric names, in the order of the selection."""
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

    def chunks(self, drop_unknown: bool = False, rates: bool = True
               ) -> Iterator[ArchiveColumns]:
        """The scan as chunks. drop_unknown: values of instances that are not among the
        metadata's instances of the window are left out instead of adding columns (the
        column set then never changes between chunks). rates=False (a scan of the
        records, no interval, no derived metric): counters to be rated come as logged,
        for a caller that needs less than the rates (export's first pass)."""
        if not rates and (self.interval_ns is not None or self._derived):
            raise ValueError("rates=False is for a scan of the records without derived "
                             "metrics")
        scan = Scan(self, drop_unknown, rates) if self.interval_ns is None \
            else grid.GridScan(self, drop_unknown)
        for chunk in scan.run():
            chunk.timezone, chunk.zoneinfo = self.timezone, self.zoneinfo
            chunk.source = self.source
            chunk.missing = self.missing_by_archive
            yield chunk

    def read(self) -> ArchiveColumns:
        """The whole scan as one ArchiveColumns."""
        parts = list(self.chunks())
        if not parts:
            return self._empty()
        return ArchiveColumns.concat(parts)

    def _empty(self) -> ArchiveColumns:
        metrics = {}
        for name, m in self._names:
            dtype = np.dtype(np.float64) if m.rate else CELL_DTYPES[m.type]
            metrics[name] = MetricArray(
                name, m.pmid, m.type, m.sem, m.units, m.indom,
                np.zeros((0, len(m.insts)), dtype), np.zeros((0, len(m.insts)), bool),
                np.array(m.insts, np.int32), list(m.inames), m.rate)
        return ArchiveColumns(np.zeros(0, "datetime64[ns]"), np.zeros(0, bool), metrics,
                              self.timezone, self.zoneinfo, self.missing_by_archive,
                              self.source)

    @property
    def missing_by_archive(self) -> Dict[str, List[str]]:
        """{the archives read: the selected names they lack}, empty when none."""
        return {self.spec: list(self.missing)} if self.missing else {}

    def to_pandas(self, form: str = "wide"):
        """The whole scan as a pandas DataFrame (wide: a column per metric and instance; long: a
        row per value)."""
        return export.reader_to_pandas(self, form)

    def to_arrow(self, form: str = "wide"):
        """The whole scan as a pyarrow Table (read().to_arrow(form))."""
        return self.read().to_arrow(form)

    def to_batches(self, form: str = "wide"):
        """A pyarrow.RecordBatchReader over the chunks. Its schema is fixed before the
        scan, from the metadata: values of an instance the metadata does not list for
        the window (a short-lived process pmlogger saw between two instance-domain
        records, say) are left out, and counted in stats["dropped"]."""
        return export.batch_reader(self, form)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow PyCapsule stream of to_batches() (wide), chunk by chunk."""
        return self.to_batches().__arrow_c_stream__(requested_schema)

    def to_parquet(self, path: Any, form: str = "wide", **kwargs: Any) -> None:
        """Write the scan to parquet chunk by chunk (memory stays flat; columns as
        to_batches() has them)."""
        export.write_parquet(self, path, form, **kwargs)


def read_archive(archives: Union[str, Sequence[str]], metrics: Any = None,
                 start: TimeLike = None, end: TimeLike = None, rate: bool = False,
                 **kwargs: Any) -> ArchiveColumns:
    """The whole scan of ArchiveReader(archives, metrics, start, end, rate, ...): a row
    per record, or with interval= (and align=) a row per time of that regular grid, the
    values interpolated as libpcp's PM_MODE_INTERP pmFetch gives them."""
    return ArchiveReader(archives, metrics, start, end, rate, **kwargs).read()
