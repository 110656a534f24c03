"""What a bulk read selects: the time window (any time form as nanoseconds since the
epoch), the metrics a selection names (leaves below PMNS prefixes), and each selected
metric's instance columns from the metadata of the window."""
from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Tuple, Union

import numpy as np

from pcp._bulk.typed import CELL_DTYPES
from pcp._core.constants import PM_ERR_NAME
from pcp._core.errors import pmErr
from pcp._core.intervals import IntervalError, parse_interval
from pcp._core.wire import PM_IN_NULL_INT32

if TYPE_CHECKING:
    from pcp._bulk.rates import RateCarry

NS_MIN = -(1 << 63) + 1
NS_MAX = (1 << 63) - 1

TimeLike = Union[None, int, float, str, "np.datetime64", _dt.datetime, _dt.date]


def to_ns(when: TimeLike, default: int) -> int:
    """A time as nanoseconds since the epoch: None (the default), seconds since the
    epoch (int or float), a datetime (naive ones are taken as UTC, like the naive
    datetime64 times the reader returns), a date, a numpy datetime64, a pandas
    Timestamp or an ISO 8601 string (PCP's forms need the archive: window_ns)."""
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


def is_pcp_time(when: TimeLike) -> bool:
    """One of PCP's time forms: a string that starts with "@", "+" or "-", that libpcp's
    interval grammar reads ("2", "5min"), or that numpy cannot read as ISO 8601."""
    if not isinstance(when, str):
        return False
    text = when.strip()
    if text[:1] in ("@", "+", "-"):
        return True
    try:
        parse_interval(text)
        return True
    except IntervalError:
        pass
    try:
        np.datetime64(text, "ns")
    except ValueError:
        return True
    return False


def window_ns(start: TimeLike, end: TimeLike, first_ns: int, last_ns: int,
              timezone: str) -> Tuple[int, int]:
    """The window [start, end] in nanoseconds since the epoch. A time in one of PCP's
    forms ("@13:30", "-5min", "+30s", "2026-11-24 10:00", "@ Nov 24 10:00") is read as
    -S / -T read it (pmParseHighResTimeWindow, pcp._libpcp.timewindow) against the span
    of the archives, first_ns to last_ns, with dates in `timezone` (the archive label's
    TZ, the zone the pandas indexes are in); other forms go to to_ns."""
    lo, hi = to_ns(None if is_pcp_time(start) else start, NS_MIN), \
        to_ns(None if is_pcp_time(end) else end, NS_MAX)
    if is_pcp_time(start) or is_pcp_time(end):
        from pcp._libpcp import timewindow, zones
        bounds = [divmod(first_ns, 1000000000), divmod(last_ns, 1000000000)]
        try:
            with zones.using(timezone or "UTC"):
                _, first, last, _, _ = timewindow.parse_window(
                    start if is_pcp_time(start) else None,
                    end if is_pcp_time(end) else None, None, None, bounds[0], bounds[1])
        except timewindow.TimeError as err:
            raise ValueError("invalid time window.\n%s" % err.message) from None
        if is_pcp_time(start):
            lo = stamp_ns(first)
        if is_pcp_time(end):
            hi = stamp_ns(last)
    return lo, hi


def stamp_ns(stamp: Tuple[int, int]) -> int:
    return stamp[0] * 1000000000 + stamp[1]



class Selected:
    """A selected metric: its descriptor and instance columns (which may grow)."""

    __slots__ = ("names", "pmid", "type", "sem", "units", "indom", "insts", "inames",
                 "rate", "state", "col_cap", "col_inst", "inst_table", "snapshot", "static")

    def __init__(self, name: str, desc: Tuple[int, int, int, int, int]) -> None:
        self.names = [name]
        self.pmid, self.type, self.indom, self.sem, self.units = desc
        self.insts: List[int] = []
        self.inames: List[str] = []
        self.rate = False
        self.state: Optional["RateCarry"] = None
        self.col_cap = 0
        self.inst_table: Optional[np.ndarray] = None
        self.snapshot: Optional[Tuple[np.ndarray, List[str]]] = None

    def index(self, col_cap: Optional[int] = None) -> None:
        """The instance index the C scan searches (with room for col_cap columns): the
        instance of each column, and a hash table of (instance, column) pairs at most
        half full, which pcp_archive_columns_index fills (see Scan._bind_index)."""
        if col_cap is not None:
            self.col_cap = col_cap
        self.col_inst = np.array(self.insts, np.int32)
        slots = 4
        while slots < 2 * max(self.col_cap, len(self.insts)):
            slots *= 2
        if self.inst_table is None or len(self.inst_table) != 2 * slots:
            self.inst_table = np.empty(2 * slots, np.int32)

    def for_scan(self) -> "Selected":
        """A copy with its own instance lists, for one scan: the C side holds pointers
        into a scan's index arrays, which no other scan of the reader may replace."""
        m = Selected.__new__(Selected)
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


def decode_name(b: Optional[bytes]) -> str:
    return "" if b is None else b.decode("utf-8", "replace")


def walk_leaves(node, prefix: bytes, out: List[bytes]) -> None:
    stack = [(prefix, node)]
    while stack:
        pre, n = stack.pop()
        if n.pmid is not None and not n.children:
            out.append(pre)
        for cname, child in n.children:
            stack.append((pre + b"." + cname if pre else cname, child))


def resolve(meta, metrics: Union[None, str, Iterable[str]]) -> List[Tuple[str, int]]:
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
            walk_leaves(node, key, leaves)
            leaves.sort()
            explicit = False
        for leaf in leaves:
            name = leaf.decode("utf-8", "replace")
            if name in seen_names:
                continue
            pmid = meta.name_to_pmid[leaf]
            desc = meta.descs.get(pmid)
            if desc is None or desc[1] not in CELL_DTYPES:
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


def columns_in_window(meta, indom: int, start: int, end: int) -> Tuple[List[int], List[str]]:
    """Instances of `indom` in force at some time in [start, end]: the snapshot in force
    at start and every later one up to end, in instance id order; a name from the
    newest snapshot holding it."""
    chain = meta.indom_chain(indom)      # newest first
    if not chain:
        return [], []
    names: Dict[int, str] = {}
    for snap in chain:
        t = stamp_ns(snap.stamp)
        if t > end:
            continue
        for i, n in zip(snap.insts, snap.names):
            if i not in names:
                names[i] = decode_name(n)
        if t <= start:
            break                       # the one in force at start: older ones are not
    ids = sorted(names)
    return ids, [names[i] for i in ids]


def instance_name(meta, indom: int, inst: int, cache: Dict[int, Dict[int, str]]) -> str:
    """Name of an instance met in the data but not among the window's instances: the
    newest name the metadata has for it, else its number."""
    names = cache.get(indom)
    if names is None:
        names = cache[indom] = {}
        for snap in reversed(meta.indom_chain(indom) or ()):
            for i, n in zip(snap.insts, snap.names):
                names[i] = decode_name(n)
    got = names.get(inst)
    if got is not None:
        return got
    return "" if inst == PM_IN_NULL_INT32 else str(inst)
