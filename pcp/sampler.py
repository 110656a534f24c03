"""Live sampling into preallocated numpy ring buffers, beyond the official binding.

    from pcp.sampler import Sampler
    s = Sampler("local:", ["kernel.all.cpu.user", "kernel.all.load", "disk.dev.read_bytes"],
                interval=1.0, capacity=3600)
    s.run(count=10)                        # or s.start() ... s.stop() in the background
    load = s["kernel.all.load"]
    load.instances                         # ['1 minute', '5 minute', '15 minute']
    load.values                            # (samples, instances) float64, oldest first
    s["kernel.all.cpu.user"].values        # counters: per-second rates (NaN first)
    s.times                                # fetch time stamps (seconds since the epoch)
    s.to_pandas()                          # all of it: a DataFrame by time (UTC)

Each sample is one pmFetch of the whole metric set, decoded in C (the GIL released)
into flat columns (`as_arrays()`); every metric's values go into its ring with a few
numpy operations, never a Python object per value. Counters become rates from the
exact integer difference of consecutive raw values and the pmcd time stamps between
them; as in pmval, a rate needs the instance's value in the metric's previous value
set (an instance's first value, one after a gap or an archive <mark>, and a counter
that goes backwards give NaN). Rings
are allocated once, `capacity` rows by the instances the metric has; an instance that
appears later widens its ring (rarely: the width doubles). Strings are kept in object
rings; other types (aggregates, events) are refused.

The source is a host spec (a new context), or any pmContext: with an archive context
every sample is the next record holding any of the metrics (or a <mark>, a row of no
values after which rates start again), and run() does not sleep.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

import cpmapi as c_api
from pcp._bulk import typed as _typed
from pcp._bulk.export import zoned_index
from pcp._core.constants import PM_ERR_IPC
from pcp._core.errors import pmErr

__all__ = ["Sampler", "MetricBuffer"]


class MetricBuffer:
    """The ring of one metric: `capacity` rows (samples) by instance columns."""

    def __init__(self, sampler: "Sampler", name: str, pmid: int, desc: Any, units: str,
                 rate: bool) -> None:
        self._s = sampler
        self.name = name
        self.pmid = pmid
        self.type = desc.type
        self.sem = desc.sem
        self.indom = desc.indom
        self.units = units
        self.rate = rate                 # values are per-second rates of a counter
        self.is_string = desc.type == c_api.PM_TYPE_STRING
        self.inst_ids: List[int] = []    # column -> instance id
        self._col_of: Dict[int, int] = {}
        self._names: Dict[int, str] = {}
        self._last_inst: Any = None      # the instance ids of the previous sample
        self._last_cols: Any = None
        cap = sampler.capacity
        self._ring = self._new_ring(cap, 1)
        # counters: each column's last raw value, its time, and the metric's `seq` then
        self._raw = np.zeros(1, dtype=self._raw_dtype())
        self._raw_t = np.full(1, np.nan)
        self._raw_seq = np.full(1, -2, dtype=np.int64)
        self.seq = 0                     # samples that carried this metric's value set

    # ---- storage -------------------------------------------------------------------

    def _new_ring(self, rows: int, cols: int) -> Any:
        if self.is_string:
            return np.full((rows, cols), None, dtype=object)
        return np.full((rows, cols), np.nan)

    def _raw_dtype(self) -> Any:
        if self.type in _typed.DTYPES and self.type not in (c_api.PM_TYPE_FLOAT, c_api.PM_TYPE_DOUBLE):
            return np.uint64 if self.type in (c_api.PM_TYPE_U32, c_api.PM_TYPE_U64) else np.int64
        return np.float64

    def _widen(self, ncols: int) -> None:
        old = self._ring
        width = max(ncols, 2 * old.shape[1])
        ring = self._new_ring(old.shape[0], width)
        ring[:, :old.shape[1]] = old
        self._ring = ring
        raw = np.zeros(width, dtype=self._raw.dtype)
        raw[:len(self._raw)] = self._raw
        raw_t = np.full(width, np.nan)
        raw_t[:len(self._raw_t)] = self._raw_t
        raw_seq = np.full(width, -2, dtype=np.int64)
        raw_seq[:len(self._raw_seq)] = self._raw_seq
        self._raw, self._raw_t, self._raw_seq = raw, raw_t, raw_seq

    def _columns(self, inst: Any) -> Any:
        """Column index of each instance id, added on first sight."""
        last = self._last_inst
        if last is not None and len(last) == len(inst) and np.array_equal(last, inst):
            return self._last_cols
        cols = np.empty(len(inst), dtype=np.intp)
        for j, i in enumerate(inst.tolist()):
            c = self._col_of.get(i)
            if c is None:
                c = self._col_of[i] = len(self.inst_ids)
                self.inst_ids.append(i)
            cols[j] = c
        if len(self.inst_ids) > self._ring.shape[1]:
            self._widen(len(self.inst_ids))
        self._last_inst = inst.copy()
        self._last_cols = cols
        return cols

    def _store(self, row: int, t: float, a: Any, i: int) -> None:
        ring = self._ring
        ring[row].fill(None if self.is_string else np.nan)
        if i < 0:
            return                       # not in this (archive) record: no break in rates
        self.seq += 1
        numval = int(a.numval[i])
        if numval <= 0:
            return
        lo = int(a.first[i])
        hi = lo + numval
        cols = self._columns(a.inst[lo:hi])
        ring = self._ring                            # may have been widened
        if self.is_string:
            data = a.data
            for c, off, n in zip(cols.tolist(), a.boff[lo:hi].tolist(), a.blen[lo:hi].tolist()):
                ring[row, c] = bytes(data[off:off + n]).split(b"\0", 1)[0].decode("utf-8", "replace")
            return
        if not self.rate:
            ring[row, cols] = _typed.as_float(self.type, a.vtype[lo:hi], a.ival[lo:hi], a.dval[lo:hi])
            return
        cur = _typed.typed(self.type, a.vtype[lo:hi], a.ival[lo:hi], a.dval[lo:hi])
        prev = self._raw[cols]
        dt = t - self._raw_t[cols]
        delta = _typed.counter_delta(self.type, cur, prev)
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = delta / dt
        # a rate needs the instance's value in the metric's previous value set (as pmval
        # does); a counter that went backwards or a clock that did not advance give NaN
        rate[(self._raw_seq[cols] != self.seq - 1) | ~(dt > 0) | (delta < 0)] = np.nan
        ring[row, cols] = rate
        self._raw[cols] = cur
        self._raw_t[cols] = t
        self._raw_seq[cols] = self.seq

    # ---- reading -------------------------------------------------------------------

    @property
    def instances(self) -> List[Optional[str]]:
        """Instance names of the columns (None for a metric without instances)."""
        if self.indom == c_api.PM_INDOM_NULL:
            return [None] * len(self.inst_ids)
        missing = [i for i in self.inst_ids if i not in self._names]
        if missing:
            self._names.update(self._s._instance_names(self.indom, missing))
        return [self._names.get(i) for i in self.inst_ids]

    @property
    def values(self) -> Any:
        """(samples held, instances) values, oldest sample first: a copy."""
        with self._s._lock:
            return self._s._ordered(self._ring)[:, :len(self.inst_ids)].copy()

    def _gap(self) -> None:
        """No value set this time (an archive <mark>): rates start again afterwards."""
        self.seq += 1

    def latest(self) -> Dict[Optional[str], Any]:
        """The newest sample as {instance name (None without instances): value}."""
        with self._s._lock:
            if not self._s.count:
                return {}
            row = self._ring[(self._s.count - 1) % self._s.capacity, :len(self.inst_ids)].copy()
        return dict(zip(self.instances, row.tolist()))

    def __repr__(self) -> str:
        return "<MetricBuffer %s %d instance(s)%s>" % (self.name, len(self.inst_ids),
                                                       " rate" if self.rate else "")


class Sampler:
    """A metric set fetched at a fixed interval into ring buffers (see the module doc)."""

    def __init__(self, source: Union[str, Any] = "local:", metrics: Sequence[str] = (),
                 interval: float = 1.0, capacity: int = 600, rates: bool = True) -> None:
        from pcp import pmapi

        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        if interval <= 0:
            raise ValueError("interval must be positive")
        if isinstance(metrics, str):
            metrics = [metrics]
        if not metrics:
            raise ValueError("no metrics")
        self._own = isinstance(source, (str, bytes))
        self.ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, source) if self._own else source
        self.is_archive = self.ctx.type & 0xFF == c_api.PM_CONTEXT_ARCHIVE
        # an archive context the caller put in PM_MODE_INTERP is fetched with pmFetch
        # (values at each interpolation time), else record by record
        self.interpolated = False
        self.interval = float(interval)
        self.capacity = int(capacity)
        self.names = list(metrics)
        self.pmids = list(self.ctx.pmLookupName(self.names))
        descs = [d.contents for d in self.ctx.pmLookupDescs(self.pmids)]
        self.buffers: Dict[str, MetricBuffer] = {}
        for name, pmid, desc in zip(self.names, self.pmids, descs):
            if desc.type not in _typed.NUMERIC and desc.type != c_api.PM_TYPE_STRING:
                raise TypeError("%s: a %s metric cannot be sampled into a ring" % (
                    name, {7: "aggregate", 8: "aggregate", 9: "event", 10: "event"}.get(
                        desc.type, "type %d" % desc.type)))
            rate = bool(rates) and desc.sem == c_api.PM_SEM_COUNTER and \
                desc.type in _typed.NUMERIC
            self.buffers[name] = MetricBuffer(self, name, pmid, desc,
                                              self.ctx.pmUnitsStr(desc.units), rate)
        self._buf_list = [self.buffers[n] for n in self.names]
        self._wanted = frozenset(self.pmids)
        self.last: Any = None          # the newest sample's columns (ResultArrays)
        self.last_index: List[int] = []  # and each metric's value set in it (-1: none)
        self.last_stamp = (0, 0)       # and its time stamp (seconds, nanoseconds)
        self._times = np.full(self.capacity, np.nan)
        self.count = 0                 # samples taken (rows written, ever)
        self.marks = 0                 # archive <mark> records met (rows of no values)
        self.gap = False               # the last sample was a <mark>
        self.missed = 0                # ticks skipped because a fetch ran late
        self.errors: List[pmErr] = []  # fetch errors run() carried on after
        self._lock = threading.Lock()       # the rings, against readers
        # one sample at a time: rows go in the order of their fetches, so rates see
        # their samples in time order whichever threads call sample()
        self._sampling = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._zone_of: Optional[Tuple[str, str]] = None

    # ---- sampling ------------------------------------------------------------------

    def sample(self) -> float:
        """Fetch once now and append a row to every ring; returns the fetch time stamp.
        Raises pmErr (PM_ERR_EOL at the end of an archive)."""
        with self._sampling:
            return self._sample()

    def _sample(self) -> float:
        if self.is_archive and not self.interpolated:
            result = self._next_record()
        else:
            result = self.ctx.pmFetch(self.pmids).contents
        flat = result._r
        t = flat.sec + flat.nsec * 1e-9
        a = result.as_arrays()
        index = self._index(a)
        gap = len(a.pmid) == 0             # a <mark>: logging was interrupted
        with self._lock:
            row = self.count % self.capacity
            self._times[row] = t
            for buf, i in zip(self._buf_list, index):
                buf._store(row, t, a, i)
                if gap:
                    buf._gap()
            self.count += 1
            self.last = a
            self.last_index = index
            self.last_stamp = (flat.sec, flat.nsec)
            self.gap = gap
            self.marks += gap
        return t

    def _next_record(self) -> Any:
        """An archive's next record holding any of the metrics, or a <mark>: raw records
        (pmFetchArchive), so that a metric absent from a record is told apart from one
        recorded with no values, as pmval -U does."""
        wanted = self._wanted
        while True:
            result = self.ctx._fetch_archive_timespec().contents
            pmids = result._r.pmid
            if not pmids or not wanted.isdisjoint(pmids):
                return result

    def _index(self, a: Any) -> List[int]:
        """Value set of each metric (pmcd answers in request order; archives may not)."""
        got = a.pmid.tolist()
        if got == self.pmids:
            return list(range(len(got)))
        where = {p: i for i, p in enumerate(got)}
        return [where.get(p, -1) for p in self.pmids]

    def run(self, count: Optional[int] = None, duration: Optional[float] = None,
            on_error: Optional[Callable[[pmErr], Any]] = None,
            on_sample: Optional[Callable[["Sampler"], Any]] = None) -> int:
        """Sample every `interval` seconds (on a fixed schedule: a late fetch skips the
        ticks it overran, counted in `missed`) until `count` samples, `duration` seconds,
        stop(), or the end of an archive. Fetch errors raise, unless `on_error` takes
        them (the sample is then skipped and the context reconnected when pmcd was
        lost). `on_sample(sampler)` is called after each sample. Returns the number of
        samples taken."""
        taken = 0
        start = time.monotonic()
        tick = 0
        self._stop.clear()
        while not self._stop.is_set():
            if count is not None and taken >= count:
                break
            if duration is not None and time.monotonic() - start >= duration:
                break
            try:
                self.sample()
            except pmErr as e:
                if self.is_archive and e.code == c_api.PM_ERR_EOL:
                    break
                if on_error is None:
                    raise
                self.errors.append(e)
                on_error(e)
                if e.code in (PM_ERR_IPC, c_api.PM_ERR_TIMEOUT) and not self.is_archive:
                    try:
                        self.ctx.pmReconnectContext()
                    except pmErr:
                        pass
            else:
                taken += 1
                if on_sample is not None:
                    on_sample(self)
            if self.is_archive:
                continue
            if count is not None and taken >= count:
                break
            tick += 1
            due = start + tick * self.interval
            now = time.monotonic()
            if now > due:
                late = int((now - due) // self.interval) + 1
                self.missed += late
                tick += late
                due = start + tick * self.interval
            if duration is not None and due - start > duration:
                break
            self._stop.wait(max(due - time.monotonic(), 0.0))
        return taken

    def start(self, on_error: Optional[Callable[[pmErr], Any]] = None) -> "Sampler":
        """run() in a background thread until stop(); errors go to `on_error` (default:
        kept in `errors`)."""
        if self._thread is not None and self._thread.is_alive():
            raise RuntimeError("already running")
        handler = on_error or (lambda e: None)
        self._stop.clear()
        self._thread = threading.Thread(target=self.run, kwargs={"on_error": handler},
                                        name="pcp-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the background thread start() began and wait for it."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def close(self) -> None:
        """Stop sampling and destroy the context the sampler made (a context it was given stays
        open)."""
        self.stop()
        if self._own:
            self.ctx.__exit__(None, None, None)

    def __enter__(self) -> "Sampler":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- reading -------------------------------------------------------------------

    def __getitem__(self, name: str) -> MetricBuffer:
        return self.buffers[name]

    def __iter__(self):
        return iter(self._buf_list)

    @property
    def held(self) -> int:
        """Samples currently in the rings (at most `capacity`)."""
        return min(self.count, self.capacity)

    @property
    def times(self) -> Any:
        """Time stamps of the samples held, oldest first (seconds since the epoch)."""
        with self._lock:
            return self._ordered(self._times).copy()

    def to_pandas(self) -> Any:
        """The samples held as a pandas DataFrame: a DatetimeIndex named "time" (the
        fetch time stamps) in the source's zone (an archive label's, or pmcd's
        pmcd.zoneinfo / pmcd.timezone; UTC when it has none), and a column per metric
        and instance, named as the archive reader names them ("metric" for a metric
        without instances, else "metric[instance]"), holding the values (rates for
        counters) as `values` does. Needs pandas (`pip install 'pcp-native[pandas]'`)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Sampler.to_pandas needs pandas: pip install "
                              "'pcp-native[pandas]'") from None
        with self._lock:
            times = self._ordered(self._times).copy()
            blocks = [(m, self._ordered(m._ring)[:, :len(m.inst_ids)].copy())
                      for m in self._buf_list]
        columns: Dict[str, Any] = {}
        for m, values in blocks:
            names = m.instances
            if m.indom == c_api.PM_INDOM_NULL and len(names) == 1:
                labels = [m.name]
            else:
                labels = ["%s[%s]" % (m.name, n) for n in names]
            for k, label in enumerate(labels):
                columns[label] = values[:, k]
        index = zoned_index(pd, np.round(times * 1e9).astype("int64").view("datetime64[ns]"),
                            *self._zone())
        return pd.DataFrame(columns, index=index)

    def _zone(self) -> Tuple[str, str]:
        """(TZ string, zoneinfo name) of the source, found once."""
        if self._zone_of is None:
            self._zone_of = ("UTC", "")
            try:
                if self.is_archive:
                    label = self.ctx._archive_label_timespec()
                    self._zone_of = (label.get_timezone(), label.get_zoneinfo())
                else:
                    self._zone_of = self._pmcd_zone()
            except pmErr:
                pass
        return self._zone_of

    def _pmcd_zone(self) -> Tuple[str, str]:
        pmids = self.ctx.pmLookupName(["pmcd.timezone", "pmcd.zoneinfo"], relaxed=1)
        wanted = [p for p in pmids if p != c_api.PM_ID_NULL]
        found = {}
        if wanted:
            a = self.ctx.pmFetch(wanted).contents.as_arrays()
            for i, pmid in enumerate(a.pmid.tolist()):
                if int(a.numval[i]) == 1 and int(a.vtype[int(a.first[i])]) == c_api.PM_TYPE_STRING:
                    k = int(a.first[i])
                    off, n = int(a.boff[k]), int(a.blen[k])
                    found[pmid] = bytes(a.data[off:off + n]).split(b"\0", 1)[0].decode(
                        "utf-8", "replace")
        return found.get(pmids[0], "UTC"), found.get(pmids[1], "")

    def _ordered(self, ring: Any) -> Any:
        n = self.count
        if n <= self.capacity:
            return ring[:n]
        row = n % self.capacity
        return np.concatenate((ring[row:], ring[:row]))

    def _instance_names(self, indom: int, insts: List[int]) -> Dict[int, str]:
        out: Dict[int, str] = {}
        try:
            ids, names = self.ctx.pmGetInDom(indom=indom)
            out.update(zip(ids or [], names or []))
        except pmErr:
            pass
        for i in insts:
            if i not in out:
                try:
                    out[i] = self.ctx.pmNameInDom(indom, i)
                except pmErr:
                    out[i] = str(i)
        return out
