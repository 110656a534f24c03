"""PM_MODE_INTERP: values at arbitrary times, computed from the archive records around
them the way libpcp 6.0.3's __pmLogFetchInterp computes them.

Per requested (metric, instance) libpcp keeps the nearest observation at or before the
requested time (prior) and at or after it (next), each a value or a <mark>, and moves
them incrementally as the time moves: a roll over the records between the last position
and the new time, then searches backwards and forwards for what is still unbound.
This module keeps the same state and makes the same moves over the context's own
record reader, so every quirk of the result is libpcp's: which instances get a value
(DISCRETE needs a prior value; INSTANT and COUNTER a value on each side, no mark
between), the prior value for INSTANT and DISCRETE (6.0.3 never takes the nearer
one), linear interpolation of numeric counters with libpcp's double arithmetic and
truncation, the one-fetch silence of a counter after a <mark>, instance lifetimes for
instance domains of 16 or more instances, the instance order of libpcp's hash tables,
and the request time advancing by the delta whether the fetch succeeds or not.

Values are referred to where they lie (a decoded record and an index in it); the
result is assembled as a flat result like every other fetch.
"""
from __future__ import annotations

import bisect
import math
import os
import struct
from collections import OrderedDict
from typing import Dict, List, Optional, Tuple

from pcp._archive.reader import Record
from pcp._core.abc import Stamp
from pcp._core.constants import (PM_ERR_EOL, PM_ERR_LOGREC, PM_ERR_PMID_LOG, PM_ERR_TYPE,
                                 PM_ID_NULL, PM_INDOM_NULL, PM_MODE_BACK, PM_MODE_FORW,
                                 PM_SEM_COUNTER, PM_SEM_DISCRETE, PM_SEM_INSTANT, PM_TYPE_32,
                                 PM_TYPE_64, PM_TYPE_AGGREGATE, PM_TYPE_DOUBLE, PM_TYPE_EVENT,
                                 PM_TYPE_FLOAT, PM_TYPE_HIGHRES_EVENT, PM_TYPE_STRING, PM_TYPE_U32,
                                 PM_TYPE_U64, PM_VAL_DPTR, PM_VAL_INSITU, PM_VAL_SPTR)
from pcp._core.errors import pmErr
from pcp._core.intervals import IntervalError, parse_interval
from pcp._core.longdouble import ld_timestamp_sub
from pcp._decode.result import FlatResult

# the state of a bound (libpcp's S_* bits)
UNDEFINED, MARK, VALUE, SCANNED = 1, 2, 4, 16
# what update_bounds does with a <mark>
MARK_NONE, MARK_FORW, MARK_BACK = 0, 1, 2
# instance domains this large get instance lifetimes (libpcp's HASH_THRESHOLD)
LIFETIME_THRESHOLD = 16
_NUMERIC = (PM_TYPE_32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64, PM_TYPE_FLOAT, PM_TYPE_DOUBLE)
_IN_NULL = -1                   # PM_IN_NULL as the signed instance ids of results
_COPIED = (PM_TYPE_AGGREGATE, PM_TYPE_EVENT, PM_TYPE_HIGHRES_EVENT, PM_TYPE_STRING)

# A value: an INSITU word (int) or (decoded record, index of the value in it)
Value = object


class _Inst:
    """One (metric, instance): its bounds (libpcp's instcntl_t)."""

    __slots__ = ("metric", "inst", "search", "inresult", "t_prior", "s_prior", "v_prior",
                 "t_next", "s_next", "v_next", "t_first", "t_last", "t_birth", "t_death")

    def __init__(self, metric: "_Metric", inst: int) -> None:
        self.metric = metric
        self.inst = inst
        self.search = False
        self.inresult = False
        self.t_prior = self.t_next = -1.0
        self.s_prior = self.s_next = UNDEFINED
        self.v_prior: Optional[Value] = None
        self.v_next: Optional[Value] = None
        self.t_first = self.t_last = -1.0
        self.t_birth = self.t_death = -1.0

    def forget(self) -> None:
        self.t_prior = self.t_next = -1.0
        self.s_prior = self.s_next = UNDEFINED
        self.v_prior = self.v_next = None


class _Metric:
    """One requested metric (libpcp's pmidcntl_t): its descriptor, the value format its
    records use, and its instances in libpcp's hash-table order."""

    __slots__ = ("pmid", "type", "indom", "sem", "valfmt", "numval", "last_numval", "insts",
                 "by_inst")

    def __init__(self, pmid: int, desc: Optional[tuple]) -> None:
        self.pmid = pmid
        self.valfmt = -1
        self.numval = 0
        self.last_numval = -1
        self.insts: List[_Inst] = []
        self.by_inst: Dict[int, _Inst] = {}
        if desc is None:
            self.type, self.indom, self.sem = -1, PM_INDOM_NULL, 0
        else:
            self.type, self.indom, self.sem = desc[1], desc[2], desc[3]


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


class Interpolator:
    """The interpolation state of one archive context (libpcp's ac_pmid_hc and friends)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.metrics: Dict[int, _Metric] = {}
        self.want: List[_Inst] = []
        self.end = 0.0                  # the archive end last seen, from the start
        self.lifetimes: Dict[int, Optional[Dict[int, Tuple[float, float]]]] = {}
        self._decoded: "OrderedDict[Tuple[object, int], FlatResult]" = OrderedDict()
        self._wrap = "PCP_COUNTER_WRAP" in os.environ
        self._ignore_gap = _ignore_marks()

    # ---- reading ---------------------------------------------------------------------

    def _t(self, stamp: Stamp) -> float:
        return ld_timestamp_sub(stamp, self.ctx.archives[0].label.stamp)

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

    def _decode(self, rec: Record) -> FlatResult:
        key = (rec.mapped, rec.off)     # the file itself: an id could be reused
        flat = self._decoded.get(key)
        if flat is None:
            flat = rec.decode()
            self._decoded[key] = flat
            if len(self._decoded) > 8:
                self._decoded.popitem(last=False)
        else:
            self._decoded.move_to_end(key)
        return flat

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
        t_req = self._t(self.ctx.origin)
        for metric in self.metrics.values():
            for icp in metric.insts:
                if icp.t_prior > t_req or icp.t_next < t_req:
                    icp.forget()

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

    def _metric(self, pmid: int) -> _Metric:
        metric = self.metrics.get(pmid)
        if metric is not None:
            return metric
        metric = _Metric(pmid, self.ctx.meta.descs.get(pmid))
        self.metrics[pmid] = metric
        if metric.type == -1:
            return metric
        if metric.indom == PM_INDOM_NULL:
            insts = [_IN_NULL]
        else:
            try:
                insts = hash_order(list(self.ctx.instances_archive(metric.indom)[0]))
            except pmErr:
                insts = []
        for inst in insts:
            icp = _Inst(metric, inst)
            if metric.indom != PM_INDOM_NULL:
                icp.t_birth, icp.t_death = self._lifetime(metric.indom, inst)
            metric.insts.append(icp)
            metric.by_inst[inst] = icp
        return metric

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

    def _update(self, t_req: float, rec: Record, do_mark: int, counts: Optional[List[int]],
                seen: Optional[List[bool]]) -> int:
        """libpcp's update_bounds: fold one record (or <mark>) into the bounds."""
        t_this = self._t(rec.stamp)
        if rec.numpmid == 0:
            if self._ignore_gap is not None and self._mark_is_ignored():
                return 0
            if do_mark == MARK_NONE:
                return 0
            for icp in self.want:
                if t_this <= t_req and (t_this >= icp.t_prior or icp.t_prior > t_req):
                    icp.t_prior = t_this
                    icp.s_prior = MARK
                    if do_mark == MARK_BACK:
                        if icp.search and counts is not None:
                            icp.search = False
                            counts[0] += 1
                            icp.s_prior |= SCANNED
                    elif seen is not None:
                        seen[0] = True
                    icp.v_prior = None
                if t_this >= t_req and (t_this <= icp.t_next or icp.t_next < 0
                                        or icp.t_next < t_req):
                    icp.t_next = t_this
                    icp.s_next = MARK
                    if do_mark == MARK_FORW:
                        if icp.search and counts is not None:
                            icp.search = False
                            counts[0] += 1
                            icp.s_next |= SCANNED
                    elif seen is not None:
                        seen[0] = True
                    icp.v_next = None
            return 0
        flat = self._decode(rec)
        for k in range(flat.numpmid):
            metric = self.metrics.get(flat.pmid[k])
            if metric is None:
                continue
            numval = flat.numval[k]
            valfmt = flat.valfmt[k]
            if metric.valfmt == -1 and numval > 0:
                if metric.type in (PM_TYPE_32, PM_TYPE_U32):
                    ok = valfmt == PM_VAL_INSITU
                elif metric.type == PM_TYPE_FLOAT:
                    ok = valfmt in (PM_VAL_INSITU, PM_VAL_DPTR, PM_VAL_SPTR)
                else:
                    ok = valfmt in (PM_VAL_DPTR, PM_VAL_SPTR)
                if not ok:
                    return PM_ERR_LOGREC
                metric.valfmt = valfmt
            elif metric.valfmt != -1 and numval > 0 and metric.valfmt != valfmt:
                return PM_ERR_LOGREC
            if numval <= 0:
                continue
            base = flat.first[k]
            insts = flat.inst
            ivals = flat.ival if metric.valfmt == PM_VAL_INSITU else None
            find = metric.by_inst.get
            back = do_mark == MARK_BACK and counts is not None
            forw = do_mark == MARK_FORW and counts is not None
            for j in range(base, base + numval):
                icp = find(insts[j])
                if icp is None:
                    icp = find(_IN_NULL)
                    if icp is None:
                        continue
                value = ivals[j] if ivals is not None else (flat, j)
                t_prior, t_next = icp.t_prior, icp.t_next
                if t_this <= t_req and (t_prior > t_req or t_this >= t_prior):
                    if t_prior < t_next and t_prior >= t_req:
                        icp.t_next, icp.v_next = t_prior, icp.v_prior
                        icp.s_next = icp.s_prior & ~SCANNED
                        t_next = t_prior
                    icp.t_prior = t_prior = t_this
                    icp.s_prior = VALUE
                    icp.v_prior = value
                    if back and icp.search:
                        icp.search = False
                        counts[0] += 1      # type: ignore[index]
                        icp.s_prior |= SCANNED
                if t_this >= t_req and (t_next < t_req or t_this <= t_next):
                    if t_prior < t_next and t_next <= t_req:
                        icp.t_prior, icp.v_prior = t_next, icp.v_next
                        icp.s_prior = icp.s_next & ~SCANNED
                    icp.t_next = t_this
                    icp.s_next = VALUE
                    icp.v_next = value
                    if forw and icp.search:
                        icp.search = False
                        counts[0] += 1      # type: ignore[index]
                        icp.s_next |= SCANNED
        return 0

    def _roll(self, t_req: float, seen: List[bool]) -> int:
        """libpcp's do_roll: read on in the direction of travel up to the request time."""
        forward = self.ctx.direction > 0
        mode = PM_MODE_FORW if forward else PM_MODE_BACK
        while True:
            err, rec = self._read(mode)
            if err < 0 or rec is None:
                return PM_ERR_LOGREC if err == PM_ERR_LOGREC else 0
            t_this = self._t(rec.stamp)
            if (forward and t_this > t_req) or (not forward and t_this < t_req):
                return 0
            self._remember_position()
            sts = self._update(t_req, rec, MARK_FORW if forward else MARK_BACK, None, seen)
            if sts < 0:
                return sts

    # ---- the fetch -------------------------------------------------------------------

    def fetch(self, pmids: List[int]) -> FlatResult:
        """__pmLogFetchInterp: the values at the context's current time; the time then
        advances by the delta (also when the fetch fails)."""
        ctx = self.ctx
        try:
            return self._fetch(pmids)
        finally:
            sec = ctx.origin[0] + ctx.delta[0]
            nsec = ctx.origin[1] + ctx.delta[1]
            while nsec > 1000000000:
                sec += 1
                nsec -= 1000000000
            while nsec < 0:
                sec -= 1
                nsec += 1000000000
            ctx.origin = (sec, nsec)

    def _fetch(self, pmids: List[int]) -> FlatResult:  # noqa: C901 (libpcp's one function)
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
        self.want = []
        listed: Optional[set] = set() if len(set(pmids)) != len(pmids) else None
        for pmid in pmids:
            if pmid == PM_ID_NULL:
                continue
            metric = self._metric(pmid)
            metric.numval = 0
            if metric.type == -1:
                metric.numval = PM_ERR_PMID_LOG
                continue
            for icp in metric.insts:
                icp.search = False
                if metric.indom == PM_INDOM_NULL or ctx.profile.includes(metric.indom, icp.inst):
                    icp.inresult = True
                    if listed is None:
                        self.want.append(icp)
                    elif id(icp) not in listed:     # a pmid asked for twice
                        listed.add(id(icp))
                        self.want.append(icp)
                    metric.numval += 1
                else:
                    icp.inresult = False
        # libpcp pushes each onto the front of its list
        self.want.reverse()

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
                sts = self._update(t_req, rec, MARK_NONE, None, None)
                if sts < 0:
                    raise pmErr(sts)
            ctx.serial = True
            for pmid in pmids:
                if pmid != PM_ID_NULL:
                    self.metrics[pmid].last_numval = -1

        sts = self._restore_position()
        if sts < 0:
            raise pmErr(sts)
        seen = [False]
        done_roll = False

        # second pass: what is not bounded below
        unbound: List[_Inst] = []
        back = 0
        for icp in self.want:
            if icp.t_first >= 0 and t_req < icp.t_first:
                continue
            if icp.t_birth >= 0 and t_req < icp.t_birth:
                continue
            if icp.t_death >= 0 and t_req > icp.t_death:
                continue
            if icp.t_prior < 0 or icp.t_prior > t_req:
                if back == 0 and not done_roll:
                    done_roll = True
                    if ctx.direction > 0:
                        sts = self._roll(t_req, seen)
                        if sts < 0:
                            raise pmErr(sts)
            if ((icp.s_prior & UNDEFINED and not icp.s_prior & SCANNED)
                    or (icp.t_prior > t_req and (ctx.direction < 0
                                                 or not icp.s_prior & SCANNED))
                    or (icp.s_next & MARK and icp.t_prior == t_req)):
                back += 1
                icp.search = True
                at = 0
                while at < len(unbound) and icp.t_first < unbound[at].t_first:
                    at += 1
                unbound.insert(at, icp)
        if back:
            sts = self._restore_position()
            if sts < 0:
                raise pmErr(sts)
            counts = [0]
            while counts[0] < back:
                err, rec = self._read(PM_MODE_BACK)
                if err < 0 or rec is None:
                    if err == PM_ERR_LOGREC:
                        raise pmErr(err)
                    break
                t_this = self._t(rec.stamp)
                if ctx.direction < 0 and t_this >= t_req:
                    self._remember_position()
                sts = self._update(t_req, rec, MARK_BACK, counts, seen)
                if sts < 0:
                    raise pmErr(sts)
                kept = []
                for n, icp in enumerate(unbound):
                    if icp.t_first < t_this:
                        kept.extend(unbound[n:])
                        break
                    if icp.search:
                        icp.search = False
                        icp.s_prior |= SCANNED
                        counts[0] += 1
                    else:
                        kept.append(icp)
                unbound = kept
            for icp in unbound:
                if ((icp.s_prior & UNDEFINED or icp.t_prior > t_req)
                        and icp.t_first < t_req):
                    icp.t_first = t_req
                    icp.s_prior |= SCANNED
                icp.search = False

        # third pass: what is not bounded above
        unbound = []
        forw = 0
        for icp in self.want:
            if icp.t_last >= 0 and t_req > icp.t_last:
                continue
            if icp.t_birth >= 0 and t_req < icp.t_birth:
                continue
            if icp.t_death >= 0 and t_req > icp.t_death:
                continue
            if icp.t_next < 0 or icp.t_next < t_req:
                if forw == 0 and not done_roll:
                    done_roll = True
                    if ctx.direction < 0:
                        sts = self._roll(t_req, seen)
                        if sts < 0:
                            raise pmErr(sts)
            if ((icp.s_next & UNDEFINED and not icp.s_next & SCANNED)
                    or (icp.t_next < t_req and (ctx.direction > 0
                                                or not icp.s_next & SCANNED))
                    or (icp.s_prior & MARK and icp.t_next == t_req)):
                forw += 1
                icp.search = True
                at = 0
                while at < len(unbound) and icp.t_last > unbound[at].t_last:
                    at += 1
                unbound.insert(at, icp)
        if forw:
            unbound_last = [icp.t_last for icp in unbound]
            sts = self._restore_position()
            if sts < 0:
                raise pmErr(sts)
            counts = [0]
            while counts[0] < forw:
                err, rec = self._read(PM_MODE_FORW)
                if err < 0 or rec is None:
                    if err == PM_ERR_LOGREC:
                        raise pmErr(err)
                    break
                t_this = self._t(rec.stamp)
                if ctx.direction > 0 and t_this <= t_req:
                    self._remember_position()
                sts = self._update(t_req, rec, MARK_FORW, counts, seen)
                if sts < 0:
                    raise pmErr(sts)
                # the list is in ascending t_last: the ones with none (-1) come first
                # and are never forgotten here, so the walk starts after them
                first = bisect.bisect_left(unbound_last, 0.0)
                kept = unbound[:first]
                for n in range(first, len(unbound)):
                    icp = unbound[n]
                    if icp.t_last > t_this:
                        kept.extend(unbound[n:])
                        break
                    if icp.search:
                        icp.search = False
                        icp.s_next |= SCANNED
                        counts[0] += 1
                    else:
                        kept.append(icp)
                if len(kept) != len(unbound):
                    unbound = kept
                    unbound_last = [icp.t_last for icp in unbound]
            for icp in unbound:
                if icp.t_next < t_req and (icp.t_last < 0 or t_req < icp.t_last):
                    icp.t_last = t_req
                    icp.s_next |= SCANNED
                icp.search = False

        # which values there will be
        for icp in self.want:
            metric = icp.metric
            if metric.sem == PM_SEM_DISCRETE:
                if (icp.s_prior & MARK or icp.s_prior & UNDEFINED
                        or icp.t_prior > t_req or (icp.t_birth != -1 and icp.t_birth > t_req)):
                    metric.numval -= 1
                    icp.inresult = False
                elif icp.t_death != -1 and t_req > icp.t_death:
                    metric.numval -= 1
                    icp.inresult = False
            else:
                if (icp.s_prior & MARK or icp.s_prior & UNDEFINED
                        or icp.t_prior > t_req or icp.s_next & MARK
                        or icp.s_next & UNDEFINED or icp.t_next < t_req):
                    metric.numval -= 1
                    icp.inresult = False
                elif metric.sem == PM_SEM_COUNTER:
                    if metric.type not in _NUMERIC:
                        metric.numval = PM_ERR_TYPE
                    elif seen[0] and metric.last_numval > 0:
                        metric.numval -= 1
                        icp.inresult = False
        return self._result(pmids, t_req)

    # ---- the result ------------------------------------------------------------------

    def _result(self, pmids: List[int], t_req: float) -> FlatResult:
        sets: List[Tuple[int, int, int]] = []
        values: List[tuple] = []
        for pmid in pmids:
            if pmid == PM_ID_NULL:
                sets.append((pmid, 0, 0))
                continue
            metric = self.metrics[pmid]
            first = len(values)
            valfmt = metric.valfmt
            if metric.numval > 0:
                for icp in metric.insts:
                    if not icp.inresult:
                        continue
                    value = _value(metric, icp, t_req, self._wrap)
                    if value is not None:
                        values.append(value)
                        if value[1] >= 0:
                            valfmt = PM_VAL_DPTR
            numval = metric.numval
            if numval > 0 and len(values) - first != numval:
                # libpcp counts first and fills after; a value it cannot compute leaves a
                # slot unfilled: keep the ones there are
                numval = len(values) - first
            sets.append((pmid, numval, valfmt))
            metric.last_numval = metric.numval
        return FlatResult.assemble(self.ctx.origin, sets, values)


def _payload(value: Value) -> Tuple[int, int, int, float, bytes]:
    flat, k = value  # type: ignore[misc]
    return flat.vtype[k], flat.ival[k], flat.dval[k], flat.payload(k)


# C's conversions of a double to an integer as gcc compiles them for x86-64 (toward
# zero; NaN and out-of-range values give the "integer indefinite" of cvttsd2si).
def _to_i32(x: float) -> int:
    if math.isnan(x) or not -2147483648.0 <= x < 2147483648.0:
        return -(1 << 31)
    return int(x)


def _to_u32(x: float) -> int:
    """Converted through a 64-bit signed conversion, then the low 32 bits kept."""
    return _to_i64(x) & 0xFFFFFFFF


def _to_i64(x: float) -> int:
    if math.isnan(x) or not -9223372036854775808.0 <= x < 9223372036854775808.0:
        return -(1 << 63)
    return int(x)


def _to_u64(x: float) -> int:
    """Below 2**63 a signed conversion; from 2**63 one of x - 2**63 with the top bit
    flipped back."""
    if not math.isnan(x) and x >= 9223372036854775808.0:
        return (_to_i64(x - 9223372036854775808.0) ^ (1 << 63)) & 0xFFFFFFFFFFFFFFFF
    return _to_i64(x) & 0xFFFFFFFFFFFFFFFF


def _value(metric: _Metric, icp: _Inst, t_req: float, wrap: bool) -> Optional[tuple]:
    """(inst, vtype, ival, dval, payload) of one instance's value at t_req, or None when
    libpcp leaves it out; vtype -1 is an INSITU word. Numbers: the observation at t_req
    if there is one, else the prior one (DISCRETE; INSTANT with both bounds), else the
    interpolated counter. Strings, aggregates and events: always the prior one."""
    mtype, sem = metric.type, metric.sem
    if mtype in _COPIED:
        if icp.t_prior < 0 or icp.v_prior is None:
            return None
        vtype, ival, dval, payload = _payload(icp.v_prior)
        return (icp.inst, vtype, ival, dval, payload)
    if mtype not in _NUMERIC:
        return None
    has_both = icp.t_prior >= 0 and icp.t_next >= 0
    if icp.t_prior == t_req:
        source = icp.v_prior
    elif icp.t_next == t_req:
        source = icp.v_next
    elif sem == PM_SEM_DISCRETE:
        source = icp.v_prior if icp.t_prior >= 0 else None
    elif sem == PM_SEM_INSTANT:
        source = icp.v_prior if has_both else None
    elif has_both:
        return _interpolate(metric, icp, t_req, wrap)
    else:
        return None
    if source is None:
        return None
    if metric.valfmt == PM_VAL_INSITU:
        return (icp.inst, -1, int(source), 0.0, b"")  # type: ignore[call-overload]
    _, ival, dval, payload = _payload(source)
    return (icp.inst, mtype, ival, dval, payload)


def _interpolate(metric: _Metric, icp: _Inst, t_req: float, wrap: bool) -> Optional[tuple]:
    """A counter between its prior and next values, in libpcp's arithmetic."""
    mtype = metric.type
    dt = t_req - icp.t_prior
    span = icp.t_next - icp.t_prior
    if metric.valfmt == PM_VAL_INSITU:
        prior, nxt = int(icp.v_prior), int(icp.v_next)          # type: ignore[call-overload]
        if mtype == PM_TYPE_32:
            if nxt >= prior or not wrap:
                diff = _i32(nxt - prior)
                word = _to_i32((0.5 + prior) + dt * diff / span)
            else:
                # libpcp adds the prior value into the next slot, not this one (a bug
                # of its signed wrap path): this slot keeps the bare increment
                diff = _i32(0xFFFFFFFF - prior + 1 + nxt)
                word = _to_i32(0.5 + dt * diff / span)
            return (icp.inst, -1, word, 0.0, b"")
        if mtype == PM_TYPE_U32:
            up, un = prior & 0xFFFFFFFF, nxt & 0xFFFFFFFF
            if un >= up:
                word = _to_u32((0.5 + up) + dt * ((un - up) & 0xFFFFFFFF) / span)
            elif wrap:
                word = (_to_u32(0.5 + dt * ((0xFFFFFFFF - up + 1 + un) & 0xFFFFFFFF) / span)
                        + up) & 0xFFFFFFFF
            else:
                word = _to_u32((0.5 + up) - dt * ((up - un) & 0xFFFFFFFF) / span)
            return (icp.inst, -1, _i32(word), 0.0, b"")
        # old-style INSITU float: interpolated as a float, stored as its bits
        fp = _float_of_bits(prior)
        fn = _float_of_bits(nxt)
        f = _to_float(fp + dt * _to_float(fn - fp) / span)
        return (icp.inst, -1, _i32(_bits_of_float(f)), 0.0, b"")
    _, pi, pd, _ = _payload(icp.v_prior)     # type: ignore[arg-type]
    _, ni, nd, _ = _payload(icp.v_next)      # type: ignore[arg-type]
    if mtype == PM_TYPE_FLOAT:
        f = _to_float(pd + dt * _to_float(nd - pd) / span)
        return (icp.inst, PM_TYPE_FLOAT, 0, f, struct.pack(">f", f))
    if mtype == PM_TYPE_DOUBLE:
        d = pd + dt * (nd - pd) / span
        return (icp.inst, PM_TYPE_DOUBLE, 0, d, struct.pack(">d", d))
    if mtype == PM_TYPE_64:
        lp, ln = _i64(pi), _i64(ni)
        diff = _i64(ln - lp) if (ln >= lp or not wrap) else _i64(0xFFFFFFFFFFFFFFFF - lp + 1 + ln)
        v = _to_i64((0.5 + float(lp)) + dt * float(diff) / span)
        return (icp.inst, PM_TYPE_64, v, 0.0, struct.pack(">q", v))
    if mtype == PM_TYPE_U64:
        # libpcp holds both in signed 64-bit variables, and its "next >= prior" is
        # compiled as "next - prior >= 0" in wrapping arithmetic (signed overflow is
        # undefined): that test, and the prior converted to double as signed
        lp, ln = _i64(pi), _i64(ni)
        if _i64(ln - lp) >= 0:
            diff = (ln - lp) & 0xFFFFFFFFFFFFFFFF
            u = _to_u64((0.5 + float(lp)) + dt * float(diff) / span)
        elif wrap:
            diff = (0xFFFFFFFFFFFFFFFF - lp + 1 + ln) & 0xFFFFFFFFFFFFFFFF
            u = _to_u64((0.5 + float(lp)) + dt * float(diff) / span)
        else:
            diff = (lp - ln) & 0xFFFFFFFFFFFFFFFF
            u = _to_u64((0.5 + float(lp)) - dt * float(diff) / span)
        return (icp.inst, PM_TYPE_U64, _i64(u), 0.0, struct.pack(">Q", u))
    return None


def _i32(x: int) -> int:
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _i64(x: int) -> int:
    return ((x + (1 << 63)) & 0xFFFFFFFFFFFFFFFF) - (1 << 63)


def _to_float(x: float) -> float:
    """A double rounded to C float."""
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _float_of_bits(word: int) -> float:
    return struct.unpack("<f", struct.pack("<I", word & 0xFFFFFFFF))[0]


def _bits_of_float(f: float) -> int:
    return struct.unpack("<I", struct.pack("<f", f))[0]
