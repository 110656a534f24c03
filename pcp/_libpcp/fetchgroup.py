"""libpcp 6.0.3's fetchgroups (pmCreateFetchGroup, pmExtendFetchGroup_*, pmFetchGroup,
pmClearFetchGroup) over a context that offers what :class:`GroupSource` lists.

After each fetch, one C call (csrc/fetchgroup.c) converts every item's values, counters
to rates and units rescaled, into flat arrays owned by the group; the value objects the
official API hands out (:class:`ItemValue`, :class:`IndomValues`, :class:`EventValues`,
:class:`TimeValue`) read those arrays only when they are called. Instance names, event
records and timestamps are filled here, in libpcp's order (items are visited newest
first, as libpcp's list of items is).
"""
from __future__ import annotations

import datetime
import functools
import math
import os
import struct
import threading

from pcp._core.constants import (PM_ERR_CONV, PM_ERR_INDOM, PM_ERR_TOOBIG, PM_ERR_TYPE,
                                 PM_ERR_VALUE, PM_IN_NULL, PM_INDOM_NULL, PM_MODE_BACK,
                                 PM_SEM_COUNTER, PM_SEM_DISCRETE, PM_TIME_HOUR, PM_TIME_MIN,
                                 PM_TIME_MSEC, PM_TIME_NSEC, PM_TIME_SEC, PM_TIME_USEC,
                                 PM_TYPE_32, PM_TYPE_64, PM_TYPE_DOUBLE, PM_TYPE_EVENT,
                                 PM_TYPE_FLOAT, PM_TYPE_HIGHRES_EVENT, PM_TYPE_STRING,
                                 PM_TYPE_U32, PM_TYPE_U64, PM_VAL_DPTR, PM_VAL_INSITU,
                                 PM_VAL_SPTR)
from pcp._core.errors import pmErr
from pcp._core.native import ffi, lib
from pcp._core.units import extra_fields, pmParseUnitsStr, unit_fields
from pcp._decode.result import FlatResult
from pcp._libpcp.values import extra_conversion, scale_factors

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Protocol, Sequence, Tuple
    Stamp = Tuple[int, int]
    from pcp._decode.events import Unpacked
else:
    Protocol = object   # the classes below are interfaces for type checkers only

_NUMERIC = (PM_TYPE_32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64, PM_TYPE_FLOAT, PM_TYPE_DOUBLE)
_CONVERTIBLE = _NUMERIC + (PM_TYPE_STRING,)
# the C type each numeric output is packed as (csrc/fetchgroup.h)
_CTYPE = {PM_TYPE_32: "int32_t *", PM_TYPE_U32: "uint32_t *", PM_TYPE_64: "int64_t *",
          PM_TYPE_U64: "uint64_t *", PM_TYPE_FLOAT: "float *", PM_TYPE_DOUBLE: "double *"}
# pmfg_prep_conversion: a rate asked for "per <time unit>" rescales from "per second",
# dividing for the scales below a second and multiplying above
_PER_SECOND = {PM_TIME_NSEC: (1000000000., 0), PM_TIME_USEC: (1000000., 0),
               PM_TIME_MSEC: (1000., 0), PM_TIME_SEC: (1., 1), PM_TIME_MIN: (60., 1),
               PM_TIME_HOUR: (3600., 1)}
_FORMAT_TYPE = -1       # PCP_FG_STRING_FORMAT_TYPE
_FORMAT_DOUBLE = -2     # PCP_FG_STRING_FORMAT_DOUBLE
_PAYLOAD = -3           # PCP_FG_STRING_PAYLOAD
_M32 = 0xFFFFFFFF
_BLOCK_HEADER = struct.Struct(">I")


class GroupSource(Protocol):
    """What a fetchgroup needs of its context (pcp.pmapi provides it over a pmContext)."""

    is_archive: bool

    def lookup_name(self, name: str) -> int: ...
    def lookup_desc(self, pmid: int) -> Tuple[int, int, int, int]: ...   # type, indom, sem, units
    def lookup_instance(self, indom: int, name: str) -> int: ...
    def add_profile(self, indom: int, insts: Sequence[int]) -> None: ...  # [] = all
    def del_profile(self, indom: int) -> None: ...                        # every instance
    def instances(self, indom: int) -> Tuple[List[int], List[bytes]]: ...
    def fetch(self, pmids: Sequence[int]) -> Tuple[FlatResult, int]: ...
    def position(self) -> Tuple[int, Stamp, Stamp, int]: ...  # mode, origin, delta, direction
    def archive_end(self) -> Stamp: ...
    def set_mode(self, mode: int, origin: Stamp, delta: Optional[Stamp]) -> None: ...
    def now(self) -> Stamp: ...


class Conversion:
    """pmfg_prep_conversion's outcome for one metric descriptor and scale string."""

    __slots__ = ("rate", "unit", "unit_sts", "mult", "div", "multiplier", "extra")

    def __init__(self, itype: int, sem: int, units: int, scale: Optional[str],
                 otype: int) -> None:
        if itype not in _CONVERTIBLE or otype not in _CONVERTIBLE:
            raise pmErr(PM_ERR_TYPE)
        self.unit = False
        self.unit_sts = 0
        self.mult = self.div = 1
        self.multiplier = 1.0
        self.extra: Optional[Tuple[float, float, float, float]] = None   # 7.2's extra units
        if not scale:       # the official binding passes an empty scale as NULL
            self.rate = sem == PM_SEM_COUNTER
            return
        if scale == "rate":
            self.rate = True
            return
        if scale == "instant":
            self.rate = False
            return
        try:
            out, multiplier = pmParseUnitsStr(scale)
        except pmErr as e:
            raise pmErr(e.code)         # the official binding gives the code alone
        ds, dt, dc = unit_fields(units)[:3]
        ods, odt, odc, _, ost, _ = unit_fields(out)
        # (7.2 also matches the extra unit here; not for a rate, as libpcp 7.2)
        if (ds, dt, dc) == (ods, odt, odc) and \
                extra_fields(units)[0] == extra_fields(out)[0]:
            self.rate = False
        elif (ds, dc) == (ods, odc) and dt == odt + 1:
            if ost not in _PER_SECOND:
                raise pmErr(PM_ERR_CONV)
            factor, multiply = _PER_SECOND[ost]
            multiplier = multiplier * factor if multiply else multiplier / factor
            out.dimTime = odt + 1
            self.rate = True
        else:
            raise pmErr(PM_ERR_CONV)
        self.unit = True
        self.multiplier = multiplier
        try:
            self.mult, self.div = scale_factors(units, out)
            self.extra = extra_conversion(units, out)
        except pmErr as e:
            self.unit_sts = e.code      # pmConvScale fails at every fetch, as in libpcp
        if self.div == 0:
            self.unit_sts = PM_ERR_CONV


def _set_extra(c: Any, conv: Conversion) -> None:
    """A C item's extra-unit step (libpcp 7.2's pmConvScale), when its conversion has one."""
    if conv.extra is not None:
        c.extra = 1
        c.extra_a, c.extra_b, c.extra_c, c.extra_d = conv.extra


class _Item:
    """One extend_item / extend_indom request: its C description and output slots."""

    def __init__(self, group: "FetchGroup", pmid: int, desc: Tuple[int, int, int, int],
                 inst: int, all_instances: bool, conv: Conversion, otype: int,
                 maxnum: int) -> None:
        itype, indom, sem, _ = desc
        self.group = group
        self.pmid = pmid
        self.indom = indom
        self.otype = otype
        self.itype = itype
        self.all = all_instances
        self.discrete = sem == PM_SEM_DISCRETE
        self.inst = inst
        self.conv = conv
        self.maxnum = maxnum
        self.slot = 0
        self.index = 0              # the first value's index in the typed view of the slots
        self.n = 0
        self.names: Dict[int, Optional[str]] = {}
        self.strings: List[Optional[str]] = []     # STRING outputs, as text
        self.last_insts: List[int] = []             # instances of the last result
        self.checked = -1               # the names' generation those were checked against
        self.names_gen = -1             # the fill's insts_gen when last_insts were checked


def _serialized(method: Callable) -> Callable:
    """Run a FetchGroup method holding the group's lock."""
    def locked(self: "FetchGroup", *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)
    locked.__name__ = method.__name__
    locked.__doc__ = method.__doc__
    return locked


class FetchGroup:
    """A fetchgroup over its own context: items, instance domains, event fields and
    timestamps, filled by :meth:`fetch`."""

    def __init__(self, source: GroupSource) -> None:
        self.source = source
        # one fetch, extend or clear at a time; the value objects read without it (a
        # thread reading values while another fetches may see some of each fetch)
        self._lock = threading.RLock()
        # PCP_COUNTER_WRAP is read once, when the group is made
        self.wrap = "PCP_COUNTER_WRAP" in os.environ
        self._reset()

    def _reset(self) -> None:
        self.items: List[_Item] = []
        self.values: List[Any] = []         # the ItemValue / IndomValues handed out
        self.filled: List["_Cells"] = []     # the IndomValues cells filled since the last fetch
        self.events: List["EventValues"] = []
        self.stamps: List["TimeValue"] = []
        self.order: List[Any] = []          # every item, in the order extended
        self._named: Optional[List[_Item]] = None   # indom items named at each fetch
        self._texts: Optional[List[_Item]] = None   # items with string outputs
        self.pmids: List[int] = []
        self._request: Tuple[int, ...] = ()     # pmids as the last fetch asked for them
        self.indoms: Dict[int, "_InDomNames"] = {}
        self.prev: Optional[FlatResult] = None
        self._prev_source: Any = None
        self.cur: Optional[FlatResult] = None
        self.epoch = 0
        self.nslots = 0
        self._citems = ffi.new("pcp_fg_item[]", 1)
        self.out = None
        self._alloc(1, 1)

    # ---- outputs ---------------------------------------------------------------------

    def _alloc(self, nitems: int, nslots: int) -> None:
        """Make the output arrays room for this many items and slots, keeping what the
        existing items hold (a DISCRETE value survives an extend). They grow to twice
        what is needed, so a group of n items costs O(n) to build, not O(n^2)."""
        if self.out is not None and nitems <= len(self._sts) and nslots <= len(self._stss):
            return
        old = self.out
        nitems = max(nitems, 2 * len(self._sts)) if old is not None else nitems
        nslots = max(nslots, 2 * len(self._stss)) if old is not None else nslots
        sts = ffi.new("int32_t[]", nitems)
        num = ffi.new("int32_t[]", nitems)
        nfailed = ffi.new("int32_t[]", nitems)
        insts_gen = ffi.new("uint32_t[]", nitems)
        stss = ffi.new("int32_t[]", nslots)
        inst = ffi.new("int32_t[]", nslots)
        src = ffi.new("int32_t[]", nslots)
        val = ffi.new("uint8_t[]", nslots * 8)
        citems = ffi.new("pcp_fg_item[]", nitems)
        if old is not None:
            for new_arr, old_arr in ((sts, self._sts), (num, self._num),
                                     (nfailed, self._nfailed), (insts_gen, self._insts_gen),
                                     (stss, self._stss), (inst, self._inst), (src, self._src),
                                     (val, self._val), (citems, self._citems)):
                ffi.memmove(new_arr, old_arr, min(ffi.sizeof(new_arr), ffi.sizeof(old_arr)))
        self._sts, self._num, self._nfailed, self._insts_gen = sts, num, nfailed, insts_gen
        self._stss, self._inst, self._src, self._val = stss, inst, src, val
        self._citems = citems
        out = ffi.new("pcp_fg_out *")
        out.sts, out.num, out.nfailed, out.insts_gen = sts, num, nfailed, insts_gen
        out.stss, out.inst, out.src, out.val = stss, inst, src, val
        self.out = out
        self.views = {t: ffi.cast(c, val) for t, c in _CTYPE.items()}

    def _add(self, item: _Item, initial_sts: int) -> None:
        item.n = len(self.items)
        item.slot = self.nslots
        item.index = item.slot * 8 // _size(item.otype)
        self.items.append(item)
        self.order.append(item)
        self._named = self._texts = None
        self.nslots += item.maxnum
        if item.pmid not in self.pmids:
            self.pmids.append(item.pmid)
        self._alloc(len(self.items), self.nslots)
        self._sts[item.n] = initial_sts
        self._num[item.n] = 0
        self._nfailed[item.n] = 0
        # the C form of the new item (those of the items before it do not change: pmids
        # are only ever appended)
        c = self._citems[item.n]
        c.pmid = item.pmid
        c.vset = self.pmids.index(item.pmid)
        c.inst = item.inst
        c.all = 1 if item.all else 0
        c.singular = 1 if item.indom == PM_INDOM_NULL else 0
        c.itype = item.itype
        c.otype = item.otype
        c.discrete = 1 if item.discrete else 0
        conv = item.conv
        c.rate = 1 if conv.rate else 0
        c.unit = 1 if conv.unit else 0
        c.unit_sts = conv.unit_sts
        c.mult = conv.mult
        c.div = conv.div
        c.multiplier = conv.multiplier
        _set_extra(c, conv)
        c.maxnum = item.maxnum
        c.slot = item.slot

    # ---- extending ---------------------------------------------------------------------

    def _lookup(self, resolve: Callable[[], Any]) -> Any:
        """Run a lookup; on an archive, when it fails, run it again with the archive
        positioned at its end (an instance may exist only later), then put the archive
        back where it was, as libpcp does: a negative delta comes back positive."""
        try:
            return resolve()
        except pmErr:
            if not self.source.is_archive:
                raise
        src = self.source
        mode, origin, delta, direction = src.position()
        src.set_mode(PM_MODE_BACK, src.archive_end(), None)
        failure: Optional[pmErr] = None
        try:
            found = resolve()
        except pmErr as e:
            failure = e
        if direction:
            sec, nsec = delta
            delta = (sec * direction, nsec) if sec else (sec, nsec * direction)
        src.set_mode(mode, origin, delta)
        if failure is not None:
            raise failure
        return found

    def _metric(self, metric: str, instance: Optional[str]) -> Tuple[int, Tuple, int]:
        """pmfg_lookup_item: the pmid, descriptor and instance of `metric`, the instance
        added to the profile."""
        src = self.source
        pmid = src.lookup_name(metric)
        desc = src.lookup_desc(pmid)
        indom = desc[1]
        if (indom == PM_INDOM_NULL) != (instance is None):
            raise pmErr(PM_ERR_INDOM)
        inst = -1
        if indom != PM_INDOM_NULL:
            inst = src.lookup_instance(indom, instance)
            src.add_profile(indom, [inst])
        return pmid, desc, inst

    @_serialized
    def extend_item(self, metric: str, otype: int, scale: Optional[str],
                    instance: Optional[str]) -> "ItemValue":
        pmid, desc, inst = self._lookup(lambda: self._metric(metric, instance))
        conv = Conversion(desc[0], desc[2], desc[3], scale, otype)
        item = _Item(self, pmid, desc, inst, False, conv, otype, 1)
        self._add(item, PM_ERR_VALUE)
        value = ItemValue(item)
        self.values.append(value)
        return value

    @_serialized
    def extend_indom(self, metric: str, otype: int, scale: Optional[str],
                     maxnum: int) -> "IndomValues":
        src = self.source
        pmid = src.lookup_name(metric)
        desc = src.lookup_desc(pmid)
        indom = desc[1]
        if indom != PM_INDOM_NULL and indom not in self.indoms:
            self.indoms[indom] = _InDomNames(indom)
            # every instance: this overrides any one-instance request for the domain
            src.add_profile(indom, [])
        conv = Conversion(desc[0], desc[2], desc[3], scale, otype)
        item = _Item(self, pmid, desc, -1, True, conv, otype, maxnum)
        self._add(item, 0)
        values = IndomValues(item)
        self.values.append(values)
        return values

    @_serialized
    def extend_event(self, metric: str, field: str, ftype: int, scale: Optional[str],
                     instance: Optional[str], maxnum: int,
                     localtime: Callable[[int], Any]) -> "EventValues":
        src = self.source

        def lookup() -> Tuple[int, Tuple, int, int, Tuple]:
            pmid, desc, inst = self._metric(metric, instance)
            fpmid = src.lookup_name(field)
            fdesc = src.lookup_desc(fpmid)
            if fdesc[1] != PM_INDOM_NULL:
                raise pmErr(PM_ERR_INDOM)
            return pmid, desc, inst, fpmid, fdesc

        pmid, desc, inst, fpmid, fdesc = self._lookup(lookup)
        if desc[0] not in (PM_TYPE_EVENT, PM_TYPE_HIGHRES_EVENT):
            raise pmErr(PM_ERR_TYPE)
        conv = Conversion(fdesc[0], fdesc[2], fdesc[3], scale, ftype)
        if conv.rate:
            # which earlier record would a rate be over? libpcp refuses
            raise pmErr(PM_ERR_CONV)
        if pmid not in self.pmids:
            self.pmids.append(pmid)
        ev = EventValues(pmid, desc, inst, fpmid, fdesc[0], conv, ftype, maxnum, localtime)
        self.events.append(ev)
        self.order.append(ev)
        return ev

    @_serialized
    def extend_time(self, localtime: Callable[[int], Any]) -> "TimeValue":
        stamp = TimeValue(localtime)
        self.stamps.append(stamp)
        self.order.append(stamp)
        return stamp

    # ---- fetching ----------------------------------------------------------------------

    @_serialized
    def fetch(self) -> int:
        """pmFetchGroup: fetch every pmid of the group, fill every item; raises the fetch's
        error after the items are filled (with PM_ERR_VALUE and the like), else returns
        pmFetch's status (its PMCD_* change flags)."""
        error: Optional[pmErr] = None
        sts = 0
        pmids = self._request
        if len(pmids) != len(self.pmids):
            # the same tuple at every fetch (pmids only grow): the layers below know a
            # request they planned by its identity
            pmids = self._request = tuple(self.pmids)
        try:
            cur, sts = self.source.fetch(pmids)
        except pmErr as e:
            error = e
            sec, nsec = self.source.now()
            cur = FlatResult.empty(sec, nsec)
        self.epoch += 1
        csrc = _source(cur)
        psrc = self._prev_source[0] if self.prev is not None else ffi.NULL
        if lib.pcp_fetchgroup_fill(self._citems, len(self.items), csrc[0], psrc,
                                   1 if self.wrap else 0, self.out) < 0:
            raise MemoryError("fetchgroup outputs")
        if self._texts is None:
            self._texts = [item for item in self.items if item.otype == PM_TYPE_STRING]
        for item in self._texts:
            if self._touched(item, cur):
                item.strings = _strings(item, cur)
        # the cells read since the last fetch (the others are already empty)
        filled, self.filled = self.filled, []
        for cells in filled:
            cells.stale()
        # libpcp's item list is newest first: the instance-name caches are refreshed in
        # that order
        if self._named is None:
            self._named = [item for item in reversed(self.items)
                           if item.all and item.indom in self.indoms]
        insts_gen, indoms = self._insts_gen, self.indoms
        for item in self._named:
            cache = indoms[item.indom]
            if insts_gen[item.n] == item.names_gen and cache.refreshed \
                    and cache.generation == item.checked:
                item.names = cache.names    # the same instances as last time (most fetches)
            else:
                self._names(item, cur)
        for ev in self.events:
            ev.fill(cur)
        stamp = (cur.sec, cur.nsec)
        for ts in self.stamps:
            ts.stamp = stamp
        self.cur = cur
        if error is None:
            # the result stays the reference for the next fetch's rates; a failed fetch
            # leaves the last good one in place, as libpcp does
            self.prev = cur
            self._prev_source = csrc
        else:
            raise error
        return sts

    @staticmethod
    def _touched(item: _Item, cur: FlatResult) -> bool:
        """Whether the fill wrote the item's outputs (a DISCRETE metric with no values in
        this result keeps the last ones)."""
        if not item.discrete:
            return True
        v = _vset_of(cur, item.pmid)
        return v < 0 or cur.numval[v] != 0

    @_serialized
    def clear(self) -> None:
        """pmClearFetchGroup: forget every item (the objects handed out keep their last
        status; their values read as libpcp's emptied outputs) and exclude every instance
        of the group's domains from the profile until items ask for them again."""
        for value in self.values:
            value.detach()
        for ev in self.events:
            ev.clear()
        for indom in self.indoms:
            self.source.del_profile(indom)
        self._reset()

    def _names(self, item: _Item, cur: FlatResult) -> None:
        """pmfg_fetch_indom's instance names: refresh the domain's cache when it has not
        been read yet or the result holds an instance it lacks, then name the values (fetch
        has found that the fill changed the instances or the cache changed)."""
        cache = self.indoms[item.indom]
        gen = self._insts_gen[item.n]
        item.names_gen = gen
        v = _vset_of(cur, item.pmid)
        if v < 0 or cur.numval[v] < 0:
            return
        numval = cur.numval[v]
        if item.discrete and numval == 0:
            return
        first = cur.first[v]
        insts = cur.inst[first:first + numval]
        # the same instances as the item's last result need no look at the cache
        if cache.refreshed and (insts != item.last_insts or cache.generation != item.checked) \
                and not cache.names.keys() >= set(insts):
            cache.refreshed = False
        item.last_insts = insts
        if not cache.refreshed:
            cache.refresh(self.source)
        item.checked = cache.generation
        # each item keeps the names it was given (libpcp's pointers into a cache that
        # another item may refresh are the official binding's garbled names)
        item.names = cache.names


class _InDomNames:
    """The instance names of one domain, read with pmGetInDom when needed."""

    __slots__ = ("indom", "names", "refreshed", "generation")

    def __init__(self, indom: int) -> None:
        self.indom = indom
        self.names: Dict[int, Optional[str]] = {}
        self.refreshed = False
        self.generation = 0

    def refresh(self, source: GroupSource) -> None:
        self.refreshed = True
        self.generation += 1
        try:
            codes, names = source.instances(self.indom)
        except pmErr:
            self.refreshed = False
            codes, names = [], []
        table: Dict[int, Optional[str]] = {}
        for code, name in zip(codes, names):
            table.setdefault(code, _text(name))
        self.names = table


def _text(raw: bytes) -> str:
    """A C string as the official binding decodes it (UTF-8, else the bytes' repr)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return str(raw)


def _source(r: FlatResult) -> Tuple[Any, Any]:
    """A pcp_fg_source for a result, with the buffer object that keeps its bytes pinned."""
    buf = ffi.from_buffer("uint8_t[]", r.pdu)
    return ffi.new("pcp_fg_source *", {"r": r.c, "buf": buf, "len": len(r.pdu)}), buf


def _vset_of(r: FlatResult, pmid: int) -> int:
    try:
        return r.pmid.index(pmid)
    except ValueError:
        return -1


def _format(atom_bytes: bytes, itype: int) -> str:
    """A number printed as libpcp's fetchgroup prints it into a string output."""
    a = ffi.from_buffer("pcp_atom *", bytearray(atom_bytes))
    if itype == PM_TYPE_32:
        return "%d" % a.l
    if itype == PM_TYPE_U32:
        return "%u" % a.ul
    if itype == PM_TYPE_64:
        return "%d" % a.ll
    if itype == PM_TYPE_U64:
        return "%d" % a.ull
    if itype == PM_TYPE_FLOAT:
        return _c_e(a.f, 9)
    return _c_e(a.d, 17)


def _c_e(x: float, digits: int) -> str:
    """C's "%.Ne": Python's agrees except for NaN's sign."""
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return "%.*e" % (digits, x)


# ---- the value objects ---------------------------------------------------------------

def _strings(item: _Item, r: FlatResult) -> List[Optional[str]]:
    """The text of each string output the C fill just wrote: a number printed, or a
    string value of `r` (kept as text now: `r` is not kept for a DISCRETE value that
    outlives it)."""
    g = item.group
    if item.all:
        count = g._num[item.n]
        stss = ffi.unpack(g._stss + item.slot, count)
    else:
        count = 1
        stss = [g._sts[item.n]]
    out: List[Optional[str]] = []
    for j in range(count):
        slot = item.slot + j
        how = g._src[slot]
        if stss[j] < 0:
            out.append(None)
            continue
        if how == _FORMAT_TYPE or how == _FORMAT_DOUBLE:
            raw = bytes(ffi.buffer(g._val + slot * 8, 8))
            out.append(_format(raw, item.itype if how == _FORMAT_TYPE else PM_TYPE_DOUBLE))
        elif 0 <= how < r.nvalues:
            boff = r.c.boff[how]
            payload = r.pdu[boff:boff + r.c.blen[how]]
            out.append(_text(bytes(payload).split(b"\0", 1)[0]))
        else:
            out.append(None)
    return out


def _string_at(item: _Item, j: int) -> Optional[str]:
    return item.strings[j] if j < len(item.strings) else None


# libpcp's "empty" outputs (__pmReinitValue), seen by items called after clear()
_EMPTY = {PM_TYPE_32: -1, PM_TYPE_U32: _M32, PM_TYPE_64: -1, PM_TYPE_U64: (1 << 64) - 1,
          PM_TYPE_FLOAT: math.nan, PM_TYPE_DOUBLE: math.nan, PM_TYPE_STRING: "None"}


class ItemValue:
    """One metric value (extend_item): call it for the value converted at the last
    fetch, or pmErr with the reason it has none."""

    __slots__ = ("_item", "pmtype", "_detached")

    def __init__(self, item: _Item) -> None:
        self._item = item
        self.pmtype = item.otype
        self._detached: Optional[int] = None

    def __call__(self) -> Any:
        if self._detached is not None:
            return _emptied(self._detached, self.pmtype)
        item = self._item
        g = item.group
        sts = g._sts[item.n]
        if sts < 0:
            raise pmErr(sts)
        if item.otype == PM_TYPE_STRING:
            return _string_at(item, 0)
        return g.views[item.otype][item.index]

    def detach(self) -> None:
        """The group was cleared: keep the last status, forget the value."""
        self._detached = self._item.group._sts[self._item.n]

    @property
    def sts(self) -> int:
        """The status of the last fetch for this value (0 or a PM_ERR_* code)."""
        if self._detached is not None:
            return self._detached
        return self._item.group._sts[self._item.n]


def _emptied(sts: int, otype: int) -> Any:
    if sts < 0:
        raise pmErr(sts)
    return _EMPTY[otype]


def _size(otype: int) -> int:
    return 4 if otype in (PM_TYPE_32, PM_TYPE_U32, PM_TYPE_FLOAT) else 8


# IndomValues._failed when no value failed (shared: never changed)
_NONE_FAILED: Dict[int, int] = {}


class _Cells(dict):
    """The values of an indom item as the latest fetch left them, value j under key j.

    The callables IndomValues hands out are this dict's bound ``__getitem__`` with j
    (functools.partial: a C-level call, no Python frame per value read). Like the
    official binding's lambdas they read the latest fetch when called: a fetch empties
    the dict (when it was filled), and the first read after it lands in ``__missing__``,
    which fills it with the whole item. A failed value (or one past the item's end) is
    never stored, so reading it always reaches ``__missing__``, which raises its status.
    """

    __slots__ = ("_owner", "fresh")

    def __init__(self, owner: "IndomValues") -> None:
        super().__init__()
        self._owner = owner
        self.fresh = False                  # filled since the last fetch

    def __missing__(self, j: int) -> Any:
        owner = self._owner
        if not self.fresh:
            owner._fill()
            if j in self:
                return dict.__getitem__(self, j)
        # libpcp's emptied slot past the end reads as PM_ERR_VALUE
        raise pmErr(owner._failed.get(j, PM_ERR_VALUE))

    def stale(self) -> None:
        """A fetch happened: forget the values until someone reads one."""
        self.clear()
        self.fresh = False


class IndomValues:
    """Every instance of a metric (extend_indom): call it for a list of (instance id,
    instance name, value callable), in instance order."""

    __slots__ = ("_item", "pmtype", "_cells", "_insts", "_insts_gen", "_names", "_names_from",
                 "_slots", "_listing", "_detached", "_values", "_failed", "_epoch", "_all_named",
                 "_at")

    def __init__(self, item: _Item) -> None:
        self._item = item
        self.pmtype = item.otype
        self._cells = _Cells(self)
        self._insts: List[int] = []
        self._names: List[Optional[str]] = []
        self._names_from: Optional[Dict[int, Optional[str]]] = None   # the table _names came from
        self._insts_gen = -1                    # the fill's insts_gen that _insts are of
        self._listing: List[Tuple[int, Optional[str], Callable[[], Any]]] = []  # the last answer
        self._slots: List[Callable[[], Any]] = []
        self._detached: Optional[int] = None
        self._values: List[Any] = []            # every value of the fetch, failed ones too
        self._failed: Dict[int, int] = {}       # j -> the status of a failed value
        self._epoch = -1                        # the group's fetch those are of
        self._all_named = True                  # every instance has a name (or is PM_IN_NULL)
        self._at: Tuple[Any, Any] = (None, None)    # (the group's views, the item's values in them)

    def _decode(self) -> None:
        """Read values, statuses, instances and names from what the last fetch left: one
        C-level unpack of the values; statuses and instances only when the fill says some
        value failed or the instance list changed (most fetches: neither)."""
        item = self._item
        g = item.group
        self._epoch = g.epoch
        if self._detached is not None:
            self._insts, self._names, self._listing, self._values = [], [], [], []
            self._failed = {}
            return
        k = item.n
        n = g._num[k]
        if item.otype == PM_TYPE_STRING:
            self._values = item.strings[:n]
        else:
            at = self._at
            if at[0] is not g.views:        # the group's outputs were reallocated
                at = self._at = (g.views, g.views[item.otype] + item.index)
            self._values = ffi.unpack(at[1], n)
        if g._nfailed[k]:
            failed: Dict[int, int] = {}
            for j, sts in enumerate(ffi.unpack(g._stss + item.slot, n)):
                if sts < 0:
                    failed[j] = sts
            self._failed = failed
        else:
            self._failed = _NONE_FAILED
        gen = g._insts_gen[k]
        if gen != self._insts_gen or item.names is not self._names_from:
            self._insts_gen = gen
            self._names_from = item.names
            # unsigned, as the official binding hands them out (PM_IN_NULL is 4294967295)
            self._insts = ffi.unpack(ffi.cast("uint32_t *", g._inst + item.slot), n)
            self._names = list(map(item.names.get, self._insts))
            self._all_named = all(self._names) or all(
                name or inst == PM_IN_NULL for inst, name in zip(self._insts, self._names))
            self._listing = []

    def _fill(self) -> None:
        """The cells from the last fetch (for the callables handed out)."""
        if self._epoch != self._item.group.epoch:
            self._decode()
        cells = self._cells
        cells.update(zip(range(len(self._values)), self._values))
        for j in self._failed:
            del cells[j]
        cells.fresh = True
        if self._detached is None:
            self._item.group.filled.append(cells)   # emptied by the next fetch

    def detach(self) -> None:
        """The group was cleared: keep the last status, no values any more."""
        self._detached = self._item.group._sts[self._item.n]
        self._cells.stale()
        self._cells.fresh = True
        self._insts, self._names, self._listing, self._values = [], [], [], []
        self._failed = {}
        self._insts_gen = -1
        self._epoch = self._item.group.epoch

    def _check(self) -> bool:
        """Raise the item's status when it failed; False when it was cleared (no values);
        else the values of the last fetch are decoded."""
        if self._detached is not None:
            if self._detached < 0:
                raise pmErr(self._detached)
            return False
        item = self._item
        g = item.group
        sts = g._sts[item.n]
        if sts < 0:
            raise pmErr(sts)
        if self._epoch != g.epoch:
            self._decode()
        return True

    def triples(self, named: bool = False) -> List[Tuple[int, Optional[str], Any]]:
        """Beyond the official binding: what calling each callable of the listing gives,
        as (instance id, instance name, value), the values that failed left out, built in
        one go (pcp.pmconfig reads every value of every sample this way). `named`: only
        the instances with a name (and PM_IN_NULL), as pmconfig reports them."""
        if not self._check():
            return []
        failed = self._failed
        if not failed and (not named or self._all_named):
            return list(zip(self._insts, self._names, self._values))
        return [triple for j, triple in enumerate(zip(self._insts, self._names, self._values))
                if j not in failed and (not named or triple[1] or triple[0] == PM_IN_NULL)]

    @staticmethod
    def named_triples(values: Sequence["IndomValues"]
                      ) -> List[Optional[List[Tuple[int, Optional[str], Any]]]]:
        """Beyond the official binding: ``v.triples(named=True)`` of each of `values`, None
        for one whose call would raise (its item failed), in one call: pcp.pmconfig reads
        every metric of every sample this way. The group's statuses, counts and instance
        generations are read once for all its items; an item whose instances and names are
        those of its last decode, with no failed value, has only its values unpacked (most
        items of most samples); the others go through triples()."""
        out: List[Optional[List[Tuple[int, Optional[str], Any]]]] = []
        group = None
        for v in values:
            item = v._item
            g = item.group
            if g is not group:
                group = g
                nitems = len(g.items)
                sts, num = ffi.unpack(g._sts, nitems), ffi.unpack(g._num, nitems)
                nfailed, gens = ffi.unpack(g._nfailed, nitems), ffi.unpack(g._insts_gen, nitems)
                views, epoch = g.views, g.epoch
            k = item.n
            if v._detached is None and sts[k] >= 0 and not nfailed[k] and v._all_named \
                    and gens[k] == v._insts_gen and item.names is v._names_from \
                    and v._at[0] is views and item.otype != PM_TYPE_STRING:
                if v._epoch != epoch:
                    v._values = ffi.unpack(v._at[1], num[k])
                    v._failed = _NONE_FAILED
                    v._epoch = epoch
                values = v._values
                if len(values) == 1:        # most metrics: no zip object for one value
                    out.append([(v._insts[0], v._names[0], values[0])])
                else:
                    out.append(list(zip(v._insts, v._names, values)))
                continue
            try:
                out.append(v.triples(True))
            except pmErr:
                out.append(None)
        return out

    def __call__(self) -> List[Tuple[int, Optional[str], Callable[[], Any]]]:
        if not self._check():
            return []
        listing = self._listing
        if len(listing) != len(self._insts):
            n = len(self._insts)
            slots = self._slots
            if len(slots) < n:
                read = self._cells.__getitem__
                slots.extend(functools.partial(read, j) for j in range(len(slots), n))
            listing = self._listing = list(zip(self._insts, self._names, slots))
        return listing[:]       # the caller's own list; the tuples never change


class EventValues:
    """One field of the records of an event metric (extend_event): call it for a list of
    (datetime, value callable), one per record holding the field."""

    def __init__(self, pmid: int, desc: Tuple, inst: int, field: int, ftype: int,
                 conv: Conversion, otype: int, maxnum: int,
                 localtime: Callable[[int], Any]) -> None:
        self._pmid = pmid
        self._highres = desc[0] == PM_TYPE_HIGHRES_EVENT
        self._singular = desc[1] == PM_INDOM_NULL
        self._inst = inst
        self._field = field
        self.pmtype = otype
        self._maxnum = maxnum
        self._sts = 0
        self._entries: List[Tuple[Stamp, int, Any]] = []
        self._localtime = localtime
        c = ffi.new("pcp_fg_item *")
        c.itype = ftype
        c.otype = otype
        c.unit = 1 if conv.unit else 0
        c.unit_sts = conv.unit_sts
        c.mult = conv.mult
        c.div = conv.div
        c.multiplier = conv.multiplier
        _set_extra(c, conv)
        self._c = c
        self._atom = ffi.new("pcp_atom *")
        self._how = ffi.new("int32_t *")

    def fill(self, r: FlatResult) -> None:
        """pmfg_fetch_event: the field's values in the records of this fetch."""
        self._entries = []
        self._sts = self._fill(r)

    def _fill(self, r: FlatResult) -> int:
        v = _vset_of(r, self._pmid)
        if v < 0:
            return PM_ERR_VALUE
        numval = r.numval[v]
        if numval < 0:
            return numval
        first = r.first[v]
        for j in range(numval):
            if self._singular or r.inst[first + j] == self._inst:
                k = first + j
                break
        else:
            return 0                        # no events: no problem
        if r.valfmt[v] not in (PM_VAL_DPTR, PM_VAL_SPTR):
            return PM_ERR_CONV
        kind = PM_TYPE_HIGHRES_EVENT if self._highres else PM_TYPE_EVENT
        if r.vtype[k] != kind:
            return PM_ERR_TYPE
        boff, blen = r.c.boff[k], r.c.blen[k]
        # the value block as on the wire, header included (an interpolated result keeps
        # payloads only)
        block = _BLOCK_HEADER.pack((kind << 24) | (blen + 4)) + bytes(r.pdu[boff:boff + blen])
        # the event decoder is loaded with the first event metric fetched
        from pcp._decode.events import Unpacked  # pylint: disable=import-outside-toplevel

        try:
            u = Unpacked(block, (0,), (len(block),), (kind,))
        except pmErr as e:
            return e.code
        if u.status[0] < 0:
            return u.status[0]
        c = u.c
        entries = self._entries
        for rec in range(u.nrecords):
            stamp = (c.sec[rec], c.nsec[rec])
            a = c.first[rec]
            for p in range(a, a + max(c.numpmid[rec], 0)):
                if c.pmid[p] != self._field:
                    continue
                if len(entries) >= self._maxnum:
                    return PM_ERR_TOOBIG
                entries.append((stamp,) + self._convert(u, p))
        return 0

    def _convert(self, u: Unpacked, p: int) -> Tuple[int, Any]:
        c = u.c
        vtype = c.vtype[p]
        valfmt = PM_VAL_INSITU if vtype < 0 else PM_VAL_DPTR
        payload = b""
        if vtype >= 0:
            payload = bytes(u.buf[c.boff[p]:c.boff[p] + c.blen[p]])
        self._how[0] = 0
        sts = lib.pcp_fetchgroup_convert(self._c, valfmt, c.ival[p] & _M32, vtype, payload,
                                         len(payload), self._atom, self._how)
        if sts < 0:
            return sts, None
        otype = self.pmtype
        if otype == PM_TYPE_STRING:
            how = self._how[0]
            if how == _PAYLOAD:
                return 0, _text(payload.split(b"\0", 1)[0])
            raw = bytes(ffi.buffer(self._atom, 8))
            return 0, _format(raw, self._c.itype if how == _FORMAT_TYPE else PM_TYPE_DOUBLE)
        a = self._atom
        value = {PM_TYPE_32: a.l, PM_TYPE_U32: a.ul, PM_TYPE_64: a.ll, PM_TYPE_U64: a.ull,
                 PM_TYPE_FLOAT: a.f, PM_TYPE_DOUBLE: a.d}[otype]
        return 0, value

    def clear(self) -> None:
        self._entries = []

    def __call__(self) -> List[Tuple[datetime.datetime, Callable[[], Any]]]:
        if self._sts < 0:
            raise pmErr(self._sts)
        out = []
        for stamp, sts, value in self._entries:
            out.append((_datetime(self._localtime, stamp), _Fixed(sts, value)))
        return out


class _Fixed:
    """The callable for one event field value."""

    __slots__ = ("_sts", "_value")

    def __init__(self, sts: int, value: Any) -> None:
        self._sts = sts
        self._value = value

    def __call__(self) -> Any:
        if self._sts < 0:
            raise pmErr(self._sts)
        return self._value


def _datetime(localtime: Callable[[int], Any], stamp: Stamp) -> datetime.datetime:
    """A timestamp as the official binding shows it: the context's local time (what
    pmLocaltime gives, here as a time.struct_time: no tm made and read field by field),
    microseconds truncated, no tzinfo."""
    t = localtime(stamp[0])
    return datetime.datetime(t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
                             int(stamp[1]) // 1000, None)


class TimeValue:
    """The timestamp of the last fetch (extend_timespec / extend_timeval): call it for a
    datetime in the context's time zone (`localtime`: seconds -> that zone's
    time.struct_time, the fields pmLocaltime gives)."""

    __slots__ = ("_localtime", "stamp")

    def __init__(self, localtime: Callable[[int], Any]) -> None:
        self._localtime = localtime
        self.stamp: Stamp = (0, 0)

    def __call__(self) -> datetime.datetime:
        return _datetime(self._localtime, self.stamp)


__all__ = ["FetchGroup", "GroupSource", "Conversion", "ItemValue", "IndomValues",
           "EventValues", "TimeValue"]
