"""PM_MODE_INTERP: values at arbitrary times, computed from the archive records around
them the way libpcp 6.0.3's __pmLogFetchInterp computes them.

Per requested (metric, instance) libpcp keeps the nearest observation at or before the
requested time (prior) and at or after it (next), each a value or a <mark>, and moves
them incrementally as the time moves: a roll over the records between the last position
and the new time, then searches backwards and forwards for what is still unbound.
This module drives the same moves over the context's own record reader (which records
are read, in which order, and where the stream is left); the per-instance state and
everything done per value live in C (csrc/interp.c): folding a record into the bounds,
the search passes' lists, which instances get a value, and the values themselves. So
every quirk of the result is libpcp's: which instances get a value (DISCRETE needs a
prior value; INSTANT and COUNTER a value on each side, no mark between), the prior
value for INSTANT and DISCRETE (6.0.3 never takes the nearer one), linear interpolation
of numeric counters with libpcp's double arithmetic and truncation, the one-fetch
silence of a counter after a <mark>, instance lifetimes for instance domains of 16 or
more instances, the instance order of libpcp's hash tables, and the request time
advancing by the delta whether the fetch succeeds or not.

The result is a flat result like every other fetch, assembled in C.
"""
from __future__ import annotations

import os

from pcp._archive.files import MappedFile
from pcp._archive.reader import Record, tsub
from pcp._core.constants import (PM_ERR_EOL, PM_ERR_LOGREC, PM_ERR_TOOBIG, PM_ID_NULL,
                                 PM_INDOM_NULL, PM_MODE_BACK, PM_MODE_FORW)
from pcp._core.cint import wrap_int32
from pcp._core.errors import pmErr
from pcp._core.intervals import IntervalError, parse_interval
from pcp._core.level import API_LEVEL
from pcp._core.longdouble import ld_timestamp_sub
from pcp._core.native import ffi, lib
from pcp._core.wire import PCP_INTERP_NEED_ROOM
from pcp._decode.result import FlatResult, ProfileFilter, ResultRoom

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple
    from pcp._core.abc import Stamp

# what folding a <mark> does to the bounds (PCP_INTERP_MARK_* in csrc/interp.h)
MARK_NONE, MARK_FORW, MARK_BACK = 0, 1, 2
# which search list a folded record is checked against (PCP_INTERP_WALK_*)
WALK_NONE, WALK_BACK, WALK_FORW = 0, 1, 2
# instance domains this large get instance lifetimes (libpcp's HASH_THRESHOLD)
LIFETIME_THRESHOLD = 16
_IN_NULL = -1                   # PM_IN_NULL as the signed instance ids of results
TIMES_MEMO = 4096               # record times remembered (then forgotten all at once)


def hash_order(insts: List[int]) -> List[int]:
    """The order libpcp walks a hash table of these instances: preallocated with one
    bucket per instance, each added at the head of bucket (id mod size)."""
    size = len(insts)
    if size == 0:
        return []
    buckets: List[List[int]] = [[] for _ in range(size)]
    for inst in insts:
        buckets[(inst & 0xFFFFFFFF) % size].append(inst)
    return [inst for bucket in buckets for inst in reversed(bucket)]


def _ignore_marks() -> Optional[float]:
    """$PCP_IGNORE_MARK_RECORDS: None (marks count), 0 (ignore all) or the largest gap
    around a mark for which it is ignored."""
    text = os.environ.get("PCP_IGNORE_MARK_RECORDS")
    if text is None:
        return None
    if text == "":
        return 0.0
    try:
        return parse_interval(text)
    except IntervalError:
        return None


class Walk:
    """The stream of a one-archive context as csrc/interp_steps.c walks it (a
    pcp_interp_walk over every volume, which all open): the context's position is
    copied in before a C walk and back after it."""

    def __init__(self, ctx, files: Dict[object, int], archives: Optional[list] = None
                 ) -> None:
        """Over the volumes of `archives` (default: the context's current one), in
        order; the first volume of each archive after the first carries the <mark>
        libpcp makes up before it (at the end of the archive before, plus 1 ms)."""
        archives = [ctx.arch] if archives is None else archives
        arch = archives[0]
        self.ctx = ctx
        self.minvol = arch.minvol
        self.mapped = []
        marks: Dict[int, Tuple[int, int]] = {}
        for index, a in enumerate(archives):
            if a.version != arch.version or a.label_len() != arch.label_len():
                raise LookupError(a)
            if index:
                sec, nsec = archives[index - 1].end()
                nsec += 1000000
                if nsec > 1000000000:
                    nsec -= 1000000000
                    sec += 1
                marks[len(self.mapped)] = (sec, nsec)
            for vol in range(a.minvol, a.maxvol + 1):
                sts, mapped, start = a.open_volume(vol)
                if sts < 0 or mapped is None:
                    raise LookupError(vol)
                self.mapped.append((mapped, start))
        reads = lib.pcp_interp_reads_new()
        if reads == ffi.NULL:
            raise MemoryError("pcp_interp_reads_new")
        self.reads = ffi.gc(reads, lib.pcp_interp_reads_free)
        self.vols = ffi.new("pcp_interp_volume[]", len(self.mapped))
        for k, (mapped, start) in enumerate(self.mapped):
            v = self.vols[k]
            v.buf = mapped.ptr
            v.size = mapped.size
            v.data_start = start
            serial = files.get(mapped)
            if serial is None:
                serial = files[mapped] = len(files) + 1
            v.serial = serial
            v.mapped = 1 if mapped._mmap is not None else 0
            v.kept_lo, v.kept_hi = 0, mapped.size
            if k in marks:
                v.mark_before = 1
                v.mark_sec, v.mark_nsec = marks[k]
        w = self.c = ffi.new("pcp_interp_walk *")
        w.vols = self.vols
        w.nvols = len(self.mapped)
        w.version = arch.version
        w.label_len = arch.label_len()
        w.release_slack = MappedFile.RELEASE_SLACK
        w.reads = self.reads
        w.label_sec, w.label_nsec = ctx.archives[0].label.stamp
        self._keep: list = []
        # what the last leave() put in the context (the very objects) while the walk
        # still holds the same: a fetch loop's next enter() finds them there and has
        # only the time to copy in (None while a walk is entered and not yet left)
        self._left: Optional[tuple] = None
        self._mode: tuple = (None, None)    # the direction and delta copied in last

    def enter(self) -> None:
        """The context's stream, its remembered position and time into the walk."""
        ctx, w = self.ctx, self.c
        left, self._left = self._left, None
        if left is None or ctx.pos is not left[0] or ctx.curvol is not left[1] \
                or ctx.saved is not left[2] or not self._kept_as(left[3]):
            w.vol = ctx.curvol - self.minvol
            w.pos = ctx.pos
            w.saved_vol = ctx.saved[0] - self.minvol
            w.saved_pos = ctx.saved[1]
            for k, (mapped, _) in enumerate(self.mapped):
                self.vols[k].kept_lo = mapped._kept_lo
                self.vols[k].kept_hi = mapped._kept_hi
        if ctx.direction is not self._mode[0] or ctx.delta is not self._mode[1]:
            w.direction = ctx.direction
            w.delta_sec, w.delta_nsec = ctx.delta
            self._mode = (ctx.direction, ctx.delta)
        w.origin_sec, w.origin_nsec = ctx.origin

    def _kept_as(self, kept: list) -> bool:
        """Whether every volume's kept range is the one leave() put there."""
        for (mapped, _), (lo, hi) in zip(self.mapped, kept):
            if mapped._kept_lo is not lo or mapped._kept_hi is not hi:
                return False
        return True

    def leave(self) -> None:
        """The walk's stream, remembered position and time back into the context."""
        ctx, w = self.ctx, self.c
        ctx.curvol = curvol = self.minvol + w.vol
        ctx.stream = self.mapped[w.vol][0]
        ctx.pos = pos = w.pos
        ctx.saved = saved = (self.minvol + w.saved_vol, w.saved_pos)
        ctx.origin = (w.origin_sec, w.origin_nsec)
        kept = []
        for k, (mapped, _) in enumerate(self.mapped):
            v = self.vols[k]
            mapped._kept_lo = lo = v.kept_lo
            mapped._kept_hi = hi = v.kept_hi
            kept.append((lo, hi))
        self._left = (pos, curvol, saved, kept)

    def request(self, pmids, profile: ProfileFilter, t_end: float) -> None:
        """What each grid step fetches (kept alive here while the walk uses it)."""
        w = self.c
        self._keep = [pmids, profile]
        w.pmids = pmids
        w.npmids = len(pmids)
        w.profile = profile.c
        w.t_end = t_end


class SweepWalk(Walk):
    """The walk of a grid swept in one pass (pcp_interp_sweep_rows) over every archive of
    the context: its stream and remembered position stay in the C walk from call to
    call (the context's own stream is not the sweep's); only the time goes in and out."""

    def __init__(self, ctx, files: Dict[object, int]) -> None:
        super().__init__(ctx, files, list(ctx.archives))

    def enter(self) -> None:
        ctx, w = self.ctx, self.c
        w.direction = ctx.direction
        w.origin_sec, w.origin_nsec = ctx.origin
        w.delta_sec, w.delta_nsec = ctx.delta

    def leave(self) -> None:
        self.ctx.origin = (self.c.origin_sec, self.c.origin_nsec)


class Interpolator:
    """The interpolation state of one archive context (libpcp's ac_pmid_hc and friends):
    the record reading here, the per-instance bounds in a C pcp_interp."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        state = lib.pcp_interp_new(1 if "PCP_COUNTER_WRAP" in os.environ else 0)
        if state == ffi.NULL:
            raise MemoryError("pcp_interp_new")
        self.c = ffi.gc(state, lib.pcp_interp_free)
        # 6.3 changed DISCRETE and INSTANT values between observations to the nearer one
        lib.pcp_interp_set_nearest(state, 1 if API_LEVEL >= (6, 3) else 0)
        self.declared: set = set()       # pmids declared to the C state
        self.end = 0.0                  # the archive end last seen, from the start
        self.lifetimes: Dict[int, Optional[Dict[int, Tuple[float, float]]]] = {}
        self._indom_candidates: Dict[int, Tuple[int, object, object, object]] = {}
        # the volume files records were folded from, each named by a number for the C
        # state's cache of decoded records (with the record's offset)
        self._files: Dict[object, int] = {}
        self._ignore_gap = _ignore_marks()
        self._request: Optional[Tuple[Tuple[int, ...], object]] = None
        # the times of the records around the request time, asked again at every fetch
        # (libpcp's long double arithmetic is slow in Python): a bounded memo
        self._times: Dict[Tuple[int, int], float] = {}
        self._count = ffi.new("int32_t *")
        self._room = ResultRoom()       # the sizes of the last result
        self._walk: Optional[Walk] = None
        self._walk_tried = False

    def walk(self) -> Optional[Walk]:
        """The C walk of the context's stream (csrc/interp_steps.c), or None where the
        record reading stays here: several archives, a volume that does not open,
        $PCP_IGNORE_MARK_RECORDS, a <mark> between archives pending."""
        if not self._walk_tried:
            self._walk_tried = True
            ctx = self.ctx
            if len(ctx.archives) == 1 and self._ignore_gap is None:
                try:
                    self._walk = Walk(ctx, self._files)
                except LookupError:
                    self._walk = None
        walk = self._walk
        if walk is None or self.ctx.mark_done or self.ctx.cur != 0:
            return None
        return walk

    def sweep_walk(self) -> Optional[SweepWalk]:
        """A walk over every archive of the context for a grid swept in one pass, or None
        where it cannot be: $PCP_IGNORE_MARK_RECORDS, a volume that does not open,
        archives of different versions, or archives that overlap (libpcp's
        PM_ERR_LOGOVERLAP)."""
        ctx = self.ctx
        if self._ignore_gap is not None:
            return None
        try:
            for before, after in zip(ctx.archives, ctx.archives[1:]):
                if tsub(before.end(), after.label.stamp) > 0:
                    return None
            return SweepWalk(ctx, self._files)
        except (LookupError, pmErr):
            return None

    # ---- reading ---------------------------------------------------------------------

    def _t(self, stamp: Stamp) -> float:
        key = (stamp[0], stamp[1])
        t = self._times.get(key)
        if t is None:
            if len(self._times) >= TIMES_MEMO:
                self._times.clear()
            t = self._times[key] = ld_timestamp_sub(key, self.ctx.archives[0].label.stamp)
        return t

    def _read(self, mode: int) -> Tuple[int, Optional[Record]]:
        """libpcp's cache_read: the next record in a direction (a <mark> between archives
        again when the direction changed just after one)."""
        ctx = self.ctx
        if ctx.mark_done and ctx.mark_done != mode:
            done = ctx.mark_done
            ctx.mark_done = 0
            try:
                return 0, ctx._mark(done == PM_MODE_BACK)
            except pmErr as err:
                return err.code, None
        try:
            return 0, ctx._read(mode == PM_MODE_BACK)
        except pmErr as err:
            return err.code, None

    def _remember_position(self) -> None:
        self.ctx.saved = (self.ctx.curvol, self.ctx.pos)

    def _restore_position(self) -> int:
        ctx = self.ctx
        vol, pos = ctx.saved
        if not ctx._change_vol(vol):
            return ctx.vol_error
        ctx.pos = pos
        return 0

    # ---- pmSetMode -------------------------------------------------------------------

    def reset(self) -> None:
        """__pmLogResetInterp: forget bounds that do not bracket the new time."""
        lib.pcp_interp_reset(self.c, self._t(self.ctx.origin))

    # ---- instance lifetimes ----------------------------------------------------------

    def _lifetime(self, indom: int, inst: int) -> Tuple[float, float]:
        """libpcp's time_caliper: (birth, death) of an instance of a large instance
        domain, from its snapshots; (-1, -1) when unknown or the domain is small."""
        if indom not in self.lifetimes:
            table: Optional[Dict[int, Tuple[float, float]]] = None
            chain = self.ctx.meta.indom_chain(indom) or []
            if any(len(snap.insts) >= LIFETIME_THRESHOLD for snap in chain):
                table = {}
                later = -1.0
                for snap in chain:              # newest first
                    t_snap = self._t(snap.stamp)
                    for i in snap.insts:
                        if i not in table:
                            table[i] = (t_snap, later)
                        else:
                            table[i] = (t_snap, table[i][1])
                    later = t_snap
            self.lifetimes[indom] = table
        table = self.lifetimes[indom]
        if table is None or inst not in table:
            return -1.0, -1.0
        return table[inst]

    def _candidates(self, indom: int) -> Tuple[int, object, object, object]:
        """The candidate instances of an instance domain as the C state takes them:
        (count, ids in libpcp's hash-table order, births, deaths), made once per domain
        (every instance the archive has for it, with its lifetime)."""
        made = self._indom_candidates.get(indom)
        if made is not None:
            return made
        if indom == PM_INDOM_NULL:
            insts = [_IN_NULL]
            lives = [(-1.0, -1.0)]
        else:
            try:
                insts = hash_order(list(self.ctx.instances_archive(indom)[0]))
            except pmErr:
                insts = []
            lives = [self._lifetime(indom, inst) for inst in insts]
        made = (len(insts), ffi.new("int32_t[]", [wrap_int32(i) for i in insts] or [0]),
                ffi.new("double[]", [b for b, _ in lives] or [0.0]),
                ffi.new("double[]", [d for _, d in lives] or [0.0]))
        self._indom_candidates[indom] = made
        return made

    def _declare(self, pmid: int) -> None:
        """A metric requested for the first time: its descriptor and candidate
        instances go to the C state."""
        desc = self.ctx.meta.descs.get(pmid)
        if desc is None:
            mtype, indom, sem = -1, PM_INDOM_NULL, 0
            n, insts, births, deaths = 0, ffi.NULL, ffi.NULL, ffi.NULL
        else:
            mtype, indom, sem = desc[1], desc[2], desc[3]
            n, insts, births, deaths = self._candidates(indom)
        sts = lib.pcp_interp_add_metric(self.c, pmid & 0xFFFFFFFF, mtype, indom & 0xFFFFFFFF,
                                        sem, n, insts, births, deaths)
        if sts < 0:
            raise pmErr(sts)
        self.declared.add(pmid)

    def _begin(self, pmids: Sequence[int]) -> None:
        """Declare what is new and start the fetch: the wanted instances, in C."""
        key = tuple(pmids)
        # a fetch loop asks with the same tuple again: no element-wise comparison then
        last = self._request
        if last is None or (last[0] is not key and last[0] != key):
            for pmid in key:
                if pmid != PM_ID_NULL and pmid not in self.declared:
                    self._declare(pmid)
            self._request = (key, ffi.new("uint32_t[]", [p & 0xFFFFFFFF for p in key] or [0]))
        profile: ProfileFilter = self.ctx._profile_filter()
        sts = lib.pcp_interp_begin(self.c, self._request[1], len(key), profile.c)
        if sts < 0:
            raise pmErr(sts)

    # ---- bounds ----------------------------------------------------------------------

    def _mark_is_ignored(self) -> bool:
        """With $PCP_IGNORE_MARK_RECORDS set to a gap: whether the records around the
        <mark> just read are at most that far apart (the stream is left where it was)."""
        gap = self._ignore_gap
        if gap is None:
            return False
        if gap == 0:
            return True
        ctx = self.ctx
        state = (ctx.cur, ctx.curvol, ctx.pos, ctx.mark_done)
        t_prior = t_next = -1.0
        try:
            t_next = self._t(ctx._read(False).stamp)
            ctx._read(True)
            ctx._read(True)
            t_prior = self._t(ctx._read(True).stamp)
            ctx._read(False)
            ctx._read(False)
        except pmErr:
            pass
        if (ctx.cur, ctx.curvol, ctx.pos) != state[:3]:
            if ctx.cur != state[0]:
                ctx._change_archive(state[0])
            ctx._change_vol(state[1])
            ctx.pos = state[2]
        ctx.mark_done = state[3]
        return t_prior != -1 and t_next != -1 and t_next - t_prior <= gap

    def _fold(self, t_req: float, t_this: float, rec: Record, do_mark: int, counting: bool,
              walk: int) -> int:
        """libpcp's update_bounds on one record (or <mark>), then the search list's
        walk: in C. Returns how many instances the search has found."""
        if rec.numpmid == 0:
            if self._ignore_gap is not None and self._mark_is_ignored():
                do_mark = MARK_NONE
            sts = lib.pcp_interp_fold(self.c, t_req, t_this, ffi.NULL, ffi.NULL, 0, do_mark,
                                      counting, walk)
        else:
            mapped = rec.mapped
            assert mapped is not None
            serial = self._files.get(mapped)
            if serial is None:
                serial = self._files[mapped] = len(self._files) + 1
            sts = lib.pcp_interp_fold_record(self.c, t_req, t_this, (serial << 44) | rec.off,
                                             mapped.ptr + rec.off, rec.length, rec.version,
                                             do_mark, counting, walk)
        if sts < 0:
            raise pmErr(sts)
        return sts

    def _roll(self, t_req: float) -> None:
        """libpcp's do_roll: read on in the direction of travel up to the request time."""
        forward = self.ctx.direction > 0
        mode = PM_MODE_FORW if forward else PM_MODE_BACK
        while True:
            err, rec = self._read(mode)
            if err < 0 or rec is None:
                if err == PM_ERR_LOGREC:
                    raise pmErr(err)
                return
            t_this = self._t(rec.stamp)
            if (forward and t_this > t_req) or (not forward and t_this < t_req):
                return
            self._remember_position()
            self._fold(t_req, t_this, rec, MARK_FORW if forward else MARK_BACK, False,
                       WALK_NONE)

    def _search(self, t_req: float, backward: bool) -> None:
        """One search pass: list what has no bound on this side (rolling first where
        libpcp does), read in that direction until each is found or cannot be, then
        settle what is still unbound."""
        ctx = self.ctx
        run_pass = lib.pcp_interp_prior_pass if backward else lib.pcp_interp_next_pass
        count = self._count
        resume = 0
        while run_pass(self.c, t_req, ctx.direction, resume, count) == 1:
            self._roll(t_req)
            resume = 1
        wanted = count[0]
        if wanted:
            sts = self._restore_position()
            if sts < 0:
                raise pmErr(sts)
            mode = PM_MODE_BACK if backward else PM_MODE_FORW
            found = 0
            while found < wanted:
                err, rec = self._read(mode)
                if err < 0 or rec is None:
                    if err == PM_ERR_LOGREC:
                        raise pmErr(err)
                    break
                t_this = self._t(rec.stamp)
                if backward:
                    if ctx.direction < 0 and t_this >= t_req:
                        self._remember_position()
                    found = self._fold(t_req, t_this, rec, MARK_BACK, True, WALK_BACK)
                else:
                    if ctx.direction > 0 and t_this <= t_req:
                        self._remember_position()
                    found = self._fold(t_req, t_this, rec, MARK_FORW, True, WALK_FORW)
            if backward:
                lib.pcp_interp_prior_finish(self.c, t_req)
            else:
                lib.pcp_interp_next_finish(self.c, t_req)

    # ---- the fetch -------------------------------------------------------------------

    def fetch(self, pmids: Sequence[int]) -> FlatResult:
        """__pmLogFetchInterp: the values at the context's current time; the time then
        advances by the delta, also when the fetch fails, except on a corrupt record
        (PM_ERR_LOGREC): libpcp 6.0.3 returns that from its search passes straight away,
        skipping the advance, so every later fetch asks for the same time and meets the
        same record again."""
        try:
            result = self._result(len(pmids), self.prepare(pmids))
        except pmErr as err:
            if err.code != PM_ERR_LOGREC:
                self.advance()
            raise
        self.advance()
        return result

    def advance(self) -> None:
        """The request time moves on by the delta (after every fetch but one meeting a
        corrupt record). The nanoseconds add as libpcp's 32-bit ints: an unnormalised
        XTB delta (PM_TIME_NSEC up to 2^31-1, see pmapi._xtb_delta) can wrap the sum
        negative, and the time then goes back about 2.1 s instead of forward."""
        ctx = self.ctx
        sec = ctx.origin[0] + ctx.delta[0]
        nsec = wrap_int32(ctx.origin[1] + ctx.delta[1])
        while nsec > 1000000000:
            sec += 1
            nsec -= 1000000000
        while nsec < 0:
            sec -= 1
            nsec += 1000000000
        ctx.origin = (sec, nsec)

    def prepare(self, pmids: Sequence[int]) -> float:
        """Everything of a fetch at the context's current time but the result: the range
        checks (PM_ERR_EOL), the request, the passes that bound every wanted instance.
        Returns the request time (seconds from the first archive's start); the C state
        then holds what pcp_interp_result / pcp_interp_grid_row read."""
        ctx = self.ctx
        t_req = self._t(ctx.origin)
        if t_req < -0.001:
            raise pmErr(PM_ERR_EOL)
        if t_req > self.end + 0.001:
            try:
                self.end = self._t(ctx.archive_end())
            except pmErr:
                pass
            if t_req > self.end and ctx.cur >= len(ctx.archives) - 1:
                raise pmErr(PM_ERR_EOL)

        # first pass: the metrics, their candidate instances, the profile
        self._begin(pmids)

        if not ctx.serial:
            try:
                ctx._set_time()
            except pmErr:
                pass
            self._remember_position()
            forward = ctx.direction > 0
            while True:
                err, rec = self._read(PM_MODE_BACK if forward else PM_MODE_FORW)
                if err < 0 or rec is None:
                    break
                t_this = self._t(rec.stamp)
                if (forward and t_this <= t_req) or (not forward and t_this > t_req):
                    break
                self._remember_position()
                self._fold(t_req, t_this, rec, MARK_NONE, False, WALK_NONE)
            ctx.serial = True
            lib.pcp_interp_forget_last_numval(self.c)

        walk = self.walk()
        if walk is not None:                    # the passes below, in C
            walk.enter()
            sts = lib.pcp_interp_walk_bound(self.c, walk.c, t_req)
            walk.leave()
            if sts < 0:
                raise pmErr(sts)
            return t_req
        sts = self._restore_position()
        if sts < 0:
            raise pmErr(sts)
        self._search(t_req, backward=True)     # second pass: what is not bounded below
        self._search(t_req, backward=False)    # third pass: what is not bounded above
        return t_req

    # ---- the result ------------------------------------------------------------------

    def _result(self, npmids: int, t_req: float) -> FlatResult:
        """Which instances get a value, then the values, assembled in C: one call when
        the result has the size of the last one (a scan's usual case), else two."""
        room = self._room
        need_values, need_bytes = room.need
        c, mem = FlatResult.columns(npmids, room.nvalues)
        sts = lib.pcp_interp_result(self.c, t_req, 0, c, room.data, room.nbytes, need_values,
                                    need_bytes)
        if sts == PCP_INTERP_NEED_ROOM:
            room.resize(need_values[0], need_bytes[0])
            c, mem = FlatResult.columns(npmids, room.nvalues)
            sts = lib.pcp_interp_result(self.c, t_req, 1, c, room.data, room.nbytes,
                                        need_values, need_bytes)
        if sts != 0:
            raise pmErr(sts if sts < 0 else PM_ERR_TOOBIG)
        c.sec, c.nsec = self.ctx.origin
        return FlatResult.wrap(c, mem, ffi.buffer(room.data, need_bytes[0])[:])
