"""Regular-grid reads: ArchiveReader(..., interval=...) gives one row per grid time
start, start + interval, ... up to end, each cell the value libpcp 6.0.3's pmFetch in
PM_MODE_INTERP gives at that time for that (metric, instance), absent where it gives none.

Two engines give those values, both in C with the GIL released, a chunk's rows per call:

* the sweep (csrc/interp_steps.c pcp_interp_sweep_rows over csrc/interp.c's
  pcp_interp_sweep_*): one forward read of the archives, each record read and checked
  once, every instance's rows settled by its next observation with the fetch's own rules
  and arithmetic. It grids archives whose records (and the <mark>s libpcp makes up
  between archives) come in strictly increasing time with no <mark> at a grid time:
  there libpcp's moves leave every instance between its latest observation at or before
  the row's time and its first at or after it, which is what the sweep keeps (a
  pre-check of the record times decides, before the first row);
* the steps (pcp_interp_grid_steps for one archive, pcp._archive.interp for several or
  $PCP_IGNORE_MARK_RECORDS): libpcp's own moves per step (roll, backward and forward
  searches) over the drop-in's interpolation state, then pcp_interp_grid_row.

Either way each value goes straight into its cell of the chunk's numpy matrices,
converted as pmExtractValue(type, type) converts it. No Python object per value; memory
stays flat over a long scan (pages behind the reader are handed back).

Columns: a metric's candidate instances (every instance its domain has in the archives,
as libpcp's INTERP takes them), less those whose lifetime (libpcp's, for domains of 16
or more instances) lies wholly outside the grid; values of instances without a column
cannot occur (they are counted in stats["dropped"] if they did).

Rates (rate=True, counters with a numeric type): as pmval and pmrep print them, the
difference of a cell's values at consecutive grid times, taken as doubles, over the
interval; absent at the first row, where either value is absent, and where the counter
went down (unless $PCP_COUNTER_WRAP is set: then 2**32 or 2**64 is added, as pmval does).

Derived metrics: their operands are grid columns (hidden ones if not selected) and each
chunk's rows whose fetch succeeded are evaluated by pcp._bulk.derived_columns, as the
drop-in's INTERP pmFetch evaluates the derived metric over the interpolated operands at
that time (rate() / delta() state carried from step to step; instance filters looked up
where the fetch leaves the context, one step on); derived counters with rate=True are
then rated as above.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Tuple, Union

import numpy as np

from pcp._archive.context import ArchiveContext
from pcp._archive.interp import Interpolator
from pcp._bulk.arrays import ArchiveColumns, Blobs, MetricArray
from pcp._bulk.derived_columns import DerivedChunks
from pcp._bulk.selection import TimeLike, Selected, decode_name, stamp_ns, window_ns
from pcp._bulk.typed import BLOBS, CELL_DTYPES
from pcp._core.constants import (PM_ERR_EOL, PM_ERR_LOGREC, PM_INDOM_NULL, PM_MODE_INTERP,
                                 PM_TYPE_32, PM_TYPE_STRING, PM_TYPE_U32)
from pcp._core.errors import pmErr
from pcp._core.intervals import IntervalError, interval_timespec
from pcp._core.native import ffi, lib
from pcp._core.wire import (PCP_INTERP_NEED_ROOM, PCP_INTERP_STEP_ASIDE,
                            PCP_INTERP_SWEEP_ASIDE, PM_IN_NULL_INT32)

if TYPE_CHECKING:
    from pcp._bulk.columns import ArchiveReader

STAGED_START = 1 << 16


def grid_times(start_ns: int, end_ns: int, step_ns: int) -> int:
    """How many grid times start, start + step, ... lie at or before end."""
    if step_ns <= 0:
        raise ValueError("the interval must be positive")
    return 0 if end_ns < start_ns else (end_ns - start_ns) // step_ns + 1


def round_up(value: int, step: int) -> int:
    """pmGetContextOptions's -A alignment: the first multiple of step at or after value
    (nanoseconds since the epoch)."""
    return -(-value // step) * step


def _cell_dtype(m: Selected) -> np.dtype:
    return np.dtype(np.int64) if m.type in BLOBS else CELL_DTYPES[m.type]


class _Metric:
    """A selected metric's side of the grid: its columns (the reader's, from
    grid_columns) and the column of each of its candidate instances, in the order the C
    state holds them (-1: none)."""

    def __init__(self, m: Selected, candidates: List[int]) -> None:
        self.sel = m
        self.pmid, self.type = m.pmid, m.type
        col = {inst: k for k, inst in enumerate(m.insts)}
        self.insts = np.array(m.insts, np.int32)
        self.inames = list(m.inames)
        self.column = np.array([col.get(i, -1) for i in candidates] or [-1], np.int32)
        self.dtype = _cell_dtype(m)
        self.rate = m.rate
        self.wrap = _wrap(m.type)
        self.last: Optional[Tuple[np.ndarray, np.ndarray]] = None    # rates: the row before

    def columns(self) -> Tuple[np.ndarray, List[str]]:
        """The instance ids and names of the columns (as DerivedChunks asks a scan)."""
        return self.insts, self.inames


def _wrap(type_: int) -> int:
    """What pmval adds to a counter of this type that went down ($PCP_COUNTER_WRAP)."""
    return 1 << (32 if type_ in (PM_TYPE_32, PM_TYPE_U32) else 64)


def _spread(values: np.ndarray, present: np.ndarray, rows: np.ndarray
            ) -> Tuple[np.ndarray, np.ndarray]:
    """Matrices of the rows picked by the bool mask `rows`, put back in those rows of
    matrices as long as the mask (the other rows absent)."""
    shape = (len(rows),) + values.shape[1:]
    full = np.full(shape, None, object) if values.dtype == object else np.zeros(shape,
                                                                                values.dtype)
    full[rows] = values
    had = np.zeros(shape, bool)
    had[rows] = present
    return full, had


def _widen(last: Optional[Tuple[np.ndarray, np.ndarray]], ncols: int
           ) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """A rate's row before, with absent cells for columns added since."""
    if last is None or len(last[0]) >= ncols:
        return last
    extra = ncols - len(last[0])
    return (np.concatenate([last[0], np.zeros(extra, last[0].dtype)]),
            np.concatenate([last[1], np.zeros(extra, bool)]))


def _candidates(interp, m: Selected) -> List[int]:
    """The metric's candidate instances in the interpolator's order."""
    if m.indom == PM_INDOM_NULL:
        return [PM_IN_NULL_INT32]
    n, cinsts, _, _ = interp._candidates(m.indom)
    return list(ffi.unpack(cinsts, n)) if n else []


def grid_columns(ctx: ArchiveContext, metrics: List[Selected], start_ns: int, end_ns: int
                 ) -> None:
    """Each metric's columns on the grid [start_ns, end_ns]: its candidate instances,
    less those whose lifetime lies wholly outside the grid, in id order, named as the
    metadata last names them."""
    interp = Interpolator(ctx)
    origin = ctx.archives[0].label.stamp
    origin_ns = origin[0] * 1000000000 + origin[1]
    t0, t1 = (start_ns - origin_ns) / 1e9, (end_ns - origin_ns) / 1e9
    for m in metrics:
        if m.indom == PM_INDOM_NULL:
            m.insts, m.inames = [PM_IN_NULL_INT32], [""]
            continue
        insts = _candidates(interp, m)
        keep = sorted(set(
            i for i in insts for birth, death in [interp._lifetime(m.indom, i)]
            if not (death != -1 and death < t0) and not (birth != -1 and birth > t1)))
        names: Dict[int, str] = {}
        for snap in reversed(ctx.meta.indom_chain(m.indom) or ()):     # oldest first
            for i, nm in zip(snap.insts, snap.names):
                names[i] = decode_name(nm)
        m.insts, m.inames = keep, [names.get(i, str(i)) for i in keep]


def grid_rate(values: np.ndarray, present: np.ndarray, interval_s: float,
              last: Optional[Tuple[np.ndarray, np.ndarray]], wrap: Optional[int]
              ) -> Tuple[np.ndarray, np.ndarray]:
    """pmval's rate of a counter matrix on a grid: (v[k] - v[k-1]) / interval, both as
    doubles; `last` is the row before the first (None: there is none); a decrease is
    absent, or with `wrap` (2**32 or 2**64) wrapped as pmval does."""
    v = values.astype(np.float64)
    n = len(v)
    prev = np.empty_like(v)
    had = np.zeros(present.shape, bool)
    if n:
        prev[1:] = v[:-1]
        had[1:] = present[:-1]
        if last is not None:
            prev[0] = last[0].astype(np.float64)
            had[0] = last[1]
    diff = v - prev
    if wrap is not None:
        diff = np.where(diff < 0, diff + float(wrap), diff)
    ok = present & had & (diff >= 0)
    rate = diff / interval_s
    rate[~ok] = np.nan
    return rate, ok


class GridScan:
    """One pass over the grid of a reader, chunk by chunk."""

    def __init__(self, reader: "ArchiveReader", drop_unknown: bool = False) -> None:
        self.r = reader
        self.drop_unknown = drop_unknown        # derived columns: no columns added
        self.step_ns = reader.interval_ns
        self.nrows = grid_times(reader.start_ns, reader.end_ns, self.step_ns)
        self.wrap = "PCP_COUNTER_WRAP" in os.environ
        self.stats = {"records": 0, "marks": 0, "skipped": 0, "values": 0,
                      "conversion_errors": 0, "dropped": 0, "steps": 0, "eol_steps": 0,
                      "swept_steps": 0}

    def _bind(self, ctx: ArchiveContext) -> None:
        """The interpolator of the context, every selected metric declared to it, and the
        columns of each."""
        interp = ctx.interp
        self.pmids = [m.pmid for m in self.r._metrics]
        if self.pmids:
            interp._begin(self.pmids)
        self.metrics = [_Metric(m, _candidates(interp, m)) for m in self.r._metrics]
        nmet = len(self.metrics)
        self.cmetrics = ffi.new("pcp_interp_grid_metric[]", max(nmet, 1))
        for k, gm in enumerate(self.metrics):
            self.cmetrics[k].column = ffi.cast("int32_t *", gm.column.ctypes.data)
        self.grid = ffi.new("pcp_interp_grid *")
        self.grid.metrics = self.cmetrics
        self.grid.nmetrics = nmet
        self.has_blobs = any(gm.sel.type in BLOBS for gm in self.metrics)
        self.ctx, self.meta = ctx, ctx.meta
        self.derived = DerivedChunks(self, self.r._derived) if self.r._derived else None
        if self.derived is not None:
            self.derived.lookup_after_ns = self.step_ns    # the context moved on a step
        # derived counters' rates (rate=True): each one's last row, by id() of its Selected
        self.derived_last: Dict[int, Tuple[np.ndarray, np.ndarray]] = {}
        self._walk_request = None          # the pmids as the C walk takes them
        self._done = ffi.new("int32_t *")
        self._sweep: Optional[bool] = None  # swept in one pass (decided at the first row)
        self._sweep_walk = None

    def _chunk_rows(self) -> int:
        if self.r.chunk_rows:
            return max(int(self.r.chunk_rows), 1)
        per_row = 16 + sum(len(gm.insts) * (gm.dtype.itemsize + 1) for gm in self.metrics)
        if self.derived is not None:
            per_row += self.derived.row_bytes()
        return int(min(max(self.r.chunk_bytes // per_row, 16), 1 << 24))

    def _new_chunk(self, rows: int) -> None:
        self.values = []
        self.present = []
        self.fetched = np.zeros(rows, bool)     # rows whose pmFetch succeeded
        for k, gm in enumerate(self.metrics):
            v = np.zeros((rows, len(gm.insts)), gm.dtype)
            p = np.zeros((rows, len(gm.insts)), bool)
            self.values.append(v)
            self.present.append(p)
            c = self.cmetrics[k]
            c.values = ffi.cast("uint8_t *", v.ctypes.data)
            c.values_stride = v.strides[0]
            c.present = ffi.cast("uint8_t *", p.ctypes.data)
            c.present_stride = p.strides[0]
        self.counts = [(int(self.cmetrics[k].nvalues), int(self.cmetrics[k].nbytes))
                       for k in range(len(self.metrics))]
        if self.has_blobs:
            self._set_staged(np.empty(STAGED_START, np.uint8))
        self.grid.staged_used = 0

    def _set_staged(self, area: np.ndarray) -> None:
        self.staged = area
        self.grid.staged = ffi.cast("uint8_t *", area.ctypes.data)
        self.grid.staged_cap = len(area)

    def _grow_staged(self) -> None:
        used = int(self.grid.staged_used)
        grown = np.empty(max(2 * len(self.staged), 2 * int(self.grid.room_need)), np.uint8)
        grown[:used] = self.staged[:used]
        self._set_staged(grown)

    def run(self) -> Iterator[ArchiveColumns]:
        r = self.r
        ctx = ArchiveContext(0, r.spec)
        try:
            start = divmod(r.start_ns, 1000000000)
            ctx.set_mode(PM_MODE_INTERP, start, divmod(self.step_ns, 1000000000), 1)
            ctx.interp = Interpolator(ctx)
            self._bind(ctx)
            chunk_rows = self._chunk_rows()
            lead = min(r.grid_lead, self.nrows)
            row0 = 0
            ended = False
            while row0 < self.nrows:
                rows = min(chunk_rows, self.nrows - row0)
                self._new_chunk(rows)
                ended = self._fill(ctx, rows, ended)
                if self._sweep and self.has_blobs:     # staged in the sweep's own area
                    used = int(self.grid.staged_used)
                    self.staged = np.frombuffer(ffi.buffer(self.grid.staged, used),
                                                np.uint8).copy() if used else self.staged
                chunk = self._emit(row0, rows, lead)
                lead = max(lead - rows, 0)
                row0 += rows
                if chunk is not None:
                    yield chunk
                    del chunk
        finally:
            self._report()
            ctx.close()

    def _fill(self, ctx: ArchiveContext, rows: int, ended: bool) -> bool:
        """Rows [0, rows) of the chunk, one grid step each. Returns whether the grid has
        gone past the end of the archives (every later step is PM_ERR_EOL)."""
        interp = ctx.interp
        pmids = self.pmids
        grid = self.grid
        row_fn = lib.pcp_interp_grid_row
        row = 0
        while row < rows:
            if not pmids and self.derived is None:     # (constant derived metrics
                row += 1                               # only: a fetch of nothing)
                continue
            if ended:
                self.stats["eol_steps"] += 1
                row += 1
                continue
            if pmids and self._sweeps(interp):
                made, sts = self._sweep_in_c(interp, row, rows - row)
                row += made
                if sts == 0:
                    break
                if sts != PCP_INTERP_STEP_ASIDE:
                    # the pre-check passed: a record changed or went bad since
                    raise pmErr(sts if sts < 0 else PM_ERR_LOGREC)
                # before the start or past the end the sweep found (an archive that grows
                # meanwhile is not looked at again: the sweep owns the state)
                ended = self._eol_step(ctx)
                row += 1
                continue
            if ctx.serial and pmids:
                made, sts = self._steps_in_c(interp, row, rows - row)
                row += made
                if sts == 0:
                    break
                if sts == PCP_INTERP_NEED_ROOM:        # bounded, decided, not stored
                    while sts == PCP_INTERP_NEED_ROOM:
                        self._grow_staged()
                        sts = row_fn(interp.c, interp._t(ctx.origin), grid, row, 1)
                    if sts < 0:
                        raise pmErr(sts)
                    interp.advance()
                    self.fetched[row] = True
                    self.stats["steps"] += 1
                    row += 1
                    continue
                if sts < 0:
                    raise pmErr(sts)
                # PCP_INTERP_STEP_ASIDE (or no C walk): this step is made here
            ended = self._step(ctx, row)
            row += 1
        return ended

    def _sweeps(self, interp: Interpolator) -> bool:
        """Whether this grid is swept in one pass (csrc/interp_steps.c's
        pcp_interp_sweep_rows: one forward read of the archives instead of libpcp's
        moves per step, with the same values), decided before the first row: archives
        that do not overlap, whose records and the <mark>s libpcp makes up between them
        come in strictly increasing time, no <mark> at a grid time (there libpcp's moves
        leave each instance between its latest observation at or before the row's time
        and its first at or after it), no repeated pmid."""
        if self._sweep is not None:
            return self._sweep
        self._sweep = False
        ctx = self.ctx
        if self.stats["steps"] or len(set(self.pmids)) != len(self.pmids):
            return False
        walk = self._sweep_walk = interp.sweep_walk()
        if walk is None:
            return False
        try:
            interp.end = interp._t(ctx.archive_end())
        except pmErr:
            return False
        t_first = interp._t(ctx.origin)
        if interp.end < t_first <= interp.end + 0.001:
            return False       # libpcp's first range check, before it knows the end
        walk.enter()
        try:
            if not lib.pcp_interp_sweep_fits(walk.c, self.nrows):
                return False
            request = ffi.new("uint32_t[]", [p & 0xFFFFFFFF for p in self.pmids])
            self._walk_request = request
            if lib.pcp_interp_sweep_begin(interp.c, request, len(self.pmids)) < 0:
                return False
            lib.pcp_interp_sweep_start(walk.c)
        finally:
            walk.leave()
        self._sweep = True
        return True

    def _sweep_in_c(self, interp: Interpolator, row: int, nrows: int) -> Tuple[int, int]:
        """Rows from `row` swept (the GIL released): (rows made, the status)."""
        made, sts = self._walk_rows(interp, self._sweep_walk, lib.pcp_interp_sweep_rows,
                                    row, nrows)
        self.stats["swept_steps"] += made
        return made, PM_ERR_LOGREC if sts == PCP_INTERP_SWEEP_ASIDE else sts

    def _steps_in_c(self, interp: Interpolator, row: int, nrows: int) -> Tuple[int, int]:
        """As many steps as csrc/interp_steps.c makes in one call from `row` (the GIL
        released): (steps made, its status; PCP_INTERP_STEP_ASIDE when the context has no
        C walk)."""
        walk = interp.walk()
        if walk is None:
            return 0, PCP_INTERP_STEP_ASIDE
        return self._walk_rows(interp, walk, lib.pcp_interp_grid_steps, row, nrows)

    def _walk_rows(self, interp: Interpolator, walk, rows_fn, row: int, nrows: int
                   ) -> Tuple[int, int]:
        """One C call making rows from `row` over a walk (the sweep's or the steps'):
        (rows made, its status)."""
        if self._walk_request is None:
            self._walk_request = ffi.new("uint32_t[]", [p & 0xFFFFFFFF for p in self.pmids])
        walk.enter()
        walk.request(self._walk_request, self.ctx._profile_filter(), interp.end)
        sts = rows_fn(interp.c, walk.c, self.grid, row, nrows, self._done)
        walk.leave()
        made = self._done[0]
        self.fetched[row:row + made] = True
        self.stats["steps"] += made
        return made, sts

    def _eol_step(self, ctx: ArchiveContext) -> bool:
        """A step whose fetch is PM_ERR_EOL: no values, the time advanced. Returns whether
        it was past the end (not before the start): every later step is past it too."""
        self.stats["eol_steps"] += 1
        ended = ctx.origin >= ctx.archives[0].label.stamp
        ctx.interp.advance()
        return ended

    def _step(self, ctx: ArchiveContext, row: int) -> bool:
        """One grid step in Python (the first, and those the C walk leaves aside).
        Returns whether the grid has gone past the end of the archives (every later
        step is PM_ERR_EOL)."""
        interp = ctx.interp
        row_fn = lib.pcp_interp_grid_row
        try:
            t_req = interp.prepare(self.pmids)
        except pmErr as err:
            if err.code != PM_ERR_EOL:
                raise
            return self._eol_step(ctx)
        sts = row_fn(interp.c, t_req, self.grid, row, 0)
        while sts == PCP_INTERP_NEED_ROOM:
            self._grow_staged()
            sts = row_fn(interp.c, t_req, self.grid, row, 1)
        if sts < 0:
            raise pmErr(sts)
        interp.advance()
        self.fetched[row] = True
        self.stats["steps"] += 1
        return False

    def _emit(self, row0: int, rows: int, lead: int) -> Optional[ArchiveColumns]:
        r = self.r
        time_ns = r.start_ns + (row0 + np.arange(rows, dtype=np.int64)) * self.step_ns
        staged = self.staged[:int(self.grid.staged_used)] if self.has_blobs else None
        made: Dict[int, MetricArray] = {}
        interval_s = self.step_ns / 1e9
        for k, gm in enumerate(self.metrics):
            m = gm.sel
            c = self.cmetrics[k]
            values, present = self.values[k], self.present[k]
            ma = MetricArray.__new__(MetricArray)
            ma.name, ma.pmid, ma.type, ma.sem, ma.units, ma.indom = (
                m.names[0], m.pmid, m.type, m.sem, m.units, m.indom)
            ma.instances, ma.instance_names, ma.rate = gm.insts, list(gm.inames), m.rate
            ma.blobs = None
            ma._count = int(c.nvalues) - self.counts[k][0]
            if m.type in BLOBS:
                ma.blobs = Blobs(values, present, staged, m.type == PM_TYPE_STRING,
                                 int(c.nbytes) - self.counts[k][1])
                out_values: Optional[np.ndarray] = None
            elif gm.rate:
                out_values, out_present = grid_rate(values, present, interval_s, gm.last,
                                                    gm.wrap if self.wrap else None)
                if rows:
                    gm.last = (values[-1].copy(), present[-1].copy())
                present = out_present
                ma._count = None
            else:
                out_values = values
            ma._values = out_values
            ma.present = present
            if lead:
                ma = _tail(ma, lead)
            made[id(m)] = ma
        if self.derived is not None:
            for key, ma in self._derived_arrays(time_ns, rows, staged).items():
                made[key] = _tail(ma, lead) if lead else ma
        if lead >= rows:
            return None
        out = {}
        for name, m in r._names:
            ma = made[id(m)]
            out[name] = ma if ma.name == name else ma.renamed(name)
        time_ns = time_ns[lead:]
        return ArchiveColumns(time_ns.view("datetime64[ns]"), np.zeros(len(time_ns), bool),
                              out, r.timezone, r.zoneinfo)

    def _derived_arrays(self, time_ns: np.ndarray, rows: int,
                        staged: Optional[np.ndarray]) -> Dict[int, MetricArray]:
        """The chunk's derived columns, by id() of their Selected: evaluated (by
        DerivedChunks, its state carried from chunk to chunk) over the rows whose fetch
        succeeded, as the drop-in's INTERP pmFetch evaluates derived metrics over the
        interpolated operands (a failed fetch, PM_ERR_EOL, evaluates nothing and moves
        no rate() or delta() state); then counters rated as the grid rates any counter."""
        fetched = self.fetched
        every = bool(fetched.all())
        raws = list(zip(self.values, self.present))
        t = time_ns
        if not every:
            raws = [(v[fetched], p[fetched]) for v, p in raws]
            t = time_ns[fetched]
        got = self.derived.evaluate(t, np.zeros(len(t), np.int64), raws, staged,
                                    rates=False)
        out: Dict[int, MetricArray] = {}
        for m in self.r._derived:
            ma = got[id(m)]
            values, present = ma._values, ma.present
            if not every:
                values, present = _spread(values, present, fetched)
            count = ma._count
            if m.rate:
                last = _widen(self.derived_last.get(id(m)), values.shape[1])
                if rows:
                    self.derived_last[id(m)] = (values[-1].copy(), present[-1].copy())
                values, present = grid_rate(values, present, self.step_ns / 1e9, last,
                                            _wrap(m.type) if self.wrap else None)
                count = None
            out[id(m)] = MetricArray(ma.name, ma.pmid, ma.type, ma.sem, ma.units, ma.indom,
                                     values, present, ma.instances, ma.instance_names,
                                     m.rate, None, count)
        return out

    def _report(self) -> None:
        cm = [self.cmetrics[k] for k in range(len(getattr(self, "metrics", [])))]
        self.stats["values"] = sum(int(c.nvalues) for c in cm)
        self.stats["conversion_errors"] = sum(int(c.nerr) for c in cm)
        self.stats["dropped"] = sum(int(c.dropped) for c in cm)
        if getattr(self, "derived", None) is not None:
            self.stats["dropped"] += self.derived.dropped
        self.r.stats = dict(self.stats)


def _tail(ma: MetricArray, lead: int) -> MetricArray:
    """The metric's rows from `lead` on (the warm-up rows of a partition dropped)."""
    out = MetricArray.__new__(MetricArray)
    out.name, out.pmid, out.type, out.sem, out.units, out.indom = (
        ma.name, ma.pmid, ma.type, ma.sem, ma.units, ma.indom)
    out.instances, out.instance_names, out.rate = ma.instances, ma.instance_names, ma.rate
    out.present = ma.present[lead:]
    out._count = None
    if ma.blobs is not None:
        b = ma.blobs
        out.blobs = Blobs(b.refs[lead:], b.present[lead:], b.staged, b.strings)
        out._values = None
    else:
        out.blobs = None
        out._values = ma._values[lead:]
    return out


def interval_ns(interval: Union[float, int, str]) -> int:
    """An interval as nanoseconds: seconds (a number) or PCP's interval syntax ("10s",
    "1min", "2 hours" as pmParseInterval reads it)."""
    if isinstance(interval, (bool, np.bool_)):
        raise TypeError("an interval cannot be a bool")
    if isinstance(interval, str):
        try:
            sec, nsec = interval_timespec(interval)
        except IntervalError as err:
            raise ValueError(err.message) from None
        ns = sec * 1000000000 + nsec
    else:
        ns = int(round(float(interval) * 1e9))
    if ns <= 0:
        raise ValueError("the interval must be positive")
    return ns


def grid_window(ctx: ArchiveContext, start: TimeLike, end: TimeLike,
                interval: Union[float, int, str], align: Union[None, float, int, str],
                timezone: str) -> Tuple[int, int, int]:
    """(first grid time, last time, step) in nanoseconds. start defaults to the start of
    the first archive (where pmval and pmrep -t start interpolating), end to the end of
    the last; PCP's time forms are read as -S / -T read them (clamped to the archives).
    align (seconds or an interval string: pmrep's -A) moves start up to the next multiple
    of it, as pmGetContextOptions does: only when that stays inside the archives."""
    step = interval_ns(interval)
    first = min(stamp_ns(a.label.stamp) for a in ctx.archives)
    last = stamp_ns(ctx.archive_end())
    lo, hi = window_ns(start, end, first, last, timezone)
    if start is None:
        lo = first
    if end is None:
        hi = last
    if align is not None:
        to = round_up(lo, interval_ns(align))
        if first <= to <= last:
            lo = to
    return lo, hi, step
