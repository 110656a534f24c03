"""The chunked scan behind ArchiveReader: lays out each chunk's memory (reused between
chunks), binds the selected metrics' instance indexes, and drives csrc/archive_columns.c
over every volume's records, one C call per run of records with the GIL released, adding
columns for instances the metadata did not list and emitting ArchiveColumns chunks."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Tuple

import numpy as np

from pcp._archive.context import ArchiveContext
from pcp._archive.reader import tsub
from pcp._bulk import export
from pcp._bulk.arrays import ArchiveColumns, Blobs, MetricArray
from pcp._bulk.derived_columns import DerivedChunks
from pcp._bulk.rates import RateCarry, counter_rate
from pcp._bulk.selection import NS_MIN, Selected, instance_name, stamp_ns
from pcp._bulk.typed import BLOBS, CELL_DTYPES
from pcp._core.constants import PM_ERR_LOGOVERLAP, PM_ID_NULL, PM_TYPE_STRING
from pcp._core.errors import pmErr
from pcp._core.native import ffi, lib
from pcp._core.wire import (PCP_COLS_NEED_COLUMN, PCP_COLS_NEED_ROOM, PCP_COLS_PAST_END,
                            PCP_COLS_PAUSE, PCP_LOG_END, PCP_ROW_AFTER_MARK)

if TYPE_CHECKING:
    from pcp._bulk.columns import ArchiveReader

# the mapped pages of a volume behind the scan are released every this many bytes
RELEASE_EVERY = 8 << 20
MISS_CAP = 4096                 # instances without a column reported per record
STAGED_START = 1 << 16          # first size of a chunk's string staging area



def _raw_dtype(m: Selected) -> np.dtype:
    return np.dtype(np.int64) if m.type in BLOBS else CELL_DTYPES[m.type]


def _aligned(n: int) -> int:
    return (n + 63) & ~63


class _Ring:
    """Memory of the chunk before last, reused once nothing refers to it any more: a
    new chunk's memory is taken when the consumer comes back for more, and by then its
    loop variable holds the last chunk only (Scan._next_chunk). Reusing memory that is
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


class Scan:
    """One pass over the archives of a reader."""

    def __init__(self, reader: ArchiveReader, drop_unknown: bool, rates: bool = True) -> None:
        self.r = reader
        # rates=False: counters that the reader converts to rates come as logged (their
        # MetricArray still says rate: the caller rates them its own way)
        self.rates = rates
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
            m.state = RateCarry(len(m.insts), CELL_DTYPES[m.type]) if m.rate else None
            m.index(len(m.insts))
            self._bind_index(i)
        self._bind_hints()
        self._build_map()
        # derived metrics, evaluated over the raw matrices of their operands
        self.derived = DerivedChunks(self, reader._derived) if reader._derived else None
        self.miss_metric = np.zeros(MISS_CAP, np.int32)
        self.miss_inst = np.zeros(MISS_CAP, np.int32)
        s = self.state
        s.miss_metric = ffi.cast("int32_t *", self.miss_metric.ctypes.data)
        s.miss_inst = ffi.cast("int32_t *", self.miss_inst.ctypes.data)
        s.miss_cap = MISS_CAP

    def _bind_hints(self) -> None:
        """One array for every metric's instance-order hints, one for its columns'
        record serials and one for their successors (archive_columns.h), in metric order: the
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
        if lib.pcp_archive_columns_index(self.cmetrics + i) != 0:
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
        if self.derived is not None:
            per_row += self.derived.row_bytes()
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
            lib.pcp_archive_columns_bind(s, arena, ffi.cast("int64_t *", voff.ctypes.data),
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
            m.inames.extend(instance_name(self.meta, m.indom, inst, self.names_cache)
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
        after = (self.flags[:n] & PCP_ROW_AFTER_MARK).astype(bool)
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
        raws: List[Tuple[np.ndarray, np.ndarray]] = []    # before rates: derived operands
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
            raws.append((values, present))
            if m.type in BLOBS:
                ma.blobs = Blobs(values, present, staged, m.type == PM_TYPE_STRING,
                                 nbytes_all[i])
                values = None
            elif m.rate and self.rates:
                values, present = counter_rate(values, present, time_ns, seg, m.state)
                ma._count = None
            ma._values = values
            ma.present = present
            made.append(ma)
        names_map = self.r._names
        if len(names_map) == len(made) and self.one_name:
            out = {ma.name: ma for ma in made}
        else:
            derived = self.derived.evaluate(time_ns, seg, raws, staged) if self.derived \
                else {}
            out = {}
            for name, m in names_map:
                ma = derived[id(m)] if id(m) in derived else made[self.index[id(m)]]
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
        self.ctx = ctx
        self.meta = ctx.meta
        bar = progress_bar(self.r.progress, ctx, self.r.start_ns)
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
            "dropped": sum(int(c.dropped) for c in cm)
                       + (self.derived.dropped if self.derived else 0)}

    def _archives(self, ctx: ArchiveContext, bar) -> Iterator[ArchiveColumns]:
        s = self.state
        prev_end: Optional[Tuple[int, int]] = None
        for k, arch in enumerate(ctx.archives):
            if stamp_ns(arch.label.stamp) > self.r.end_ns:
                break
            if k > 0:
                s.pending_flags |= PCP_ROW_AFTER_MARK   # libpcp's <mark> between archives
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
            if stamp_ns(e.stamp) <= start:
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
                    sts = lib.pcp_archive_columns_scan(mapped.ptr, mapped.size, arch.label.length,
                                                       arch.version, pos, s)
                    row1 = int(s.nrow)
                    if row1 > row0:
                        t = int(self.time[row1 - 1])
                        last_t[0] = (t // 1000000000, t % 1000000000)
                    mapped.release_pages(at, int(pos[0]))
                    if bar is not None:
                        bar.update(int(pos[0]) - at)
                    if sts == PCP_COLS_PAUSE:
                        continue
                    if sts == PCP_COLS_NEED_ROOM:
                        if int(s.nrow) == 0:
                            self._more_room()   # one record's strings: make room
                            continue
                        sts = 0                 # the chunk is full of strings
                    if sts == 0:
                        yield from self._next_chunk()
                        continue
                    if sts == PCP_COLS_NEED_COLUMN:
                        self._add_columns()
                        continue
                    if sts == PCP_LOG_END:
                        break
                    if sts == PCP_COLS_PAST_END:
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


def progress_bar(progress: Optional[bool], ctx: ArchiveContext, start_ns: int):
    if progress is False:
        return None
    if progress is None and not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if progress:
            export.need("tqdm", "progress")
        return None
    total = 0
    for arch in ctx.archives:
        for vol in range(arch.minvol, arch.maxvol + 1):
            sts, mapped, _ = arch.open_volume(vol)
            if sts == 0 and mapped is not None:
                total += mapped.size
    return tqdm(total=total, unit="B", unit_scale=True, desc="archive", leave=False)
