"""Event records (PM_TYPE_EVENT / PM_TYPE_HIGHRES_EVENT values) over the C unpacker:
libpcp's pmUnpack[HighRes]EventRecords shape, a pythonic iterator and numpy columns.

Every form starts from value blocks that lie in a FlatResult's buffer (a fetched PDU
or an archive record): (buffer, offset, length) triples handed to csrc/events.c in one
call, so live and archived events take the same path."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from pcp._errors import pmErr
from pcp._native import ffi, lib
from pcp._result import (FlatResult, LP_pmHighResResult, LP_pmResult, pmHighResResult,
                         pmResult, pmValueSet)

PM_ERR_CONV = -12362
PM_ERR_INST = -12360
PM_ERR_TYPE = -12397
PM_TYPE_32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64 = 0, 1, 2, 3
PM_TYPE_FLOAT, PM_TYPE_DOUBLE, PM_TYPE_STRING, PM_TYPE_AGGREGATE = 4, 5, 6, 7
PM_TYPE_AGGREGATE_STATIC, PM_TYPE_EVENT, PM_TYPE_HIGHRES_EVENT = 8, 9, 10
PM_VAL_INSITU, PM_VAL_DPTR, PM_VAL_SPTR = 0, 1, 2
PM_EVENT_FLAG_MISSED = 0x80000000
EVENT_FLAGS_PMID = 0x7FC00001   # event.flags, 511.0.1 (csrc/events.h)
EVENT_MISSED_PMID = 0x7FC00002  # event.missed, 511.0.2
_EVENT_KINDS = (PM_TYPE_EVENT, PM_TYPE_HIGHRES_EVENT)


# ---- the one C call ------------------------------------------------------------------

class Unpacked:
    """The records of one or more event arrays of one buffer, as C columns.

    `status[b]` is 0 or the PM_ERR_* code of block b (its records are then absent)."""

    __slots__ = ("buf", "status", "nrecords", "nsets", "c", "c_status", "_mem")

    def __init__(self, buf: Any, offs: Sequence[int], lens: Sequence[int],
                 kinds: Sequence[int], mem_factory: Optional[Callable[[int], Any]] = None,
                 n: Optional[int] = None) -> None:
        """offs / lens / kinds: sequences, or cdata arrays (then n says how many)."""
        if n is None:
            n = len(offs)
            c_off = ffi.new("uint32_t[]", list(offs)) if n else ffi.NULL
            c_len = ffi.new("uint32_t[]", list(lens)) if n else ffi.NULL
            c_kind = ffi.new("int32_t[]", list(kinds)) if n else ffi.NULL
        else:
            c_off, c_len, c_kind = offs, lens, kinds
        c_status = ffi.new("int32_t[]", max(n, 1))
        counts = ffi.new("int32_t[2]")
        src = ffi.from_buffer("uint8_t[]", buf)
        sts = lib.pcp_events_scan(src, len(src), n, c_off, c_len, c_kind, c_status,
                                  counts, counts + 1)
        if sts < 0:
            raise pmErr(sts)
        nrec, nsets = counts[0], counts[1]
        size = lib.pcp_events_mem_size(nrec, nsets)
        if mem_factory is None:
            mem = ffi.new("int64_t[]", (size + 7) // 8)
            cmem = mem
        else:
            mem = mem_factory((size + 7) // 8)
            cmem = ffi.from_buffer("int64_t[]", mem, require_writable=True)
        c = ffi.new("pcp_events *")
        lib.pcp_events_bind(c, cmem, nrec, nsets)
        if nrec:
            sts = lib.pcp_events_decode(src, len(src), n, c_off, c_len, c_kind, c_status, c)
            if sts < 0:
                raise pmErr(sts)
        self.buf = buf
        self.status = ffi.unpack(c_status, n)
        self.c_status = c_status
        self.nrecords = nrec
        self.nsets = nsets
        self.c = c
        self._mem = mem


def _block_of(vset: Any, idx: int) -> Tuple[FlatResult, int, int]:
    """(flat result, value index k, kind) of value `idx` of a drop-in value set, raising
    what libpcp returns for sets that cannot hold an event array."""
    if not isinstance(vset, pmValueSet):
        contents = getattr(vset, "contents", None)
        if not isinstance(contents, pmValueSet):
            raise TypeError("expected a pmValueSet of a result from this package, got %s"
                            % type(vset).__name__)
        vset = contents
    r, i = vset._r, vset._i
    numval = r.numval[i]
    if numval < 0:
        raise pmErr(numval)
    if numval == 0:
        return r, -1, 0
    if r.valfmt[i] not in (PM_VAL_DPTR, PM_VAL_SPTR):
        raise pmErr(PM_ERR_CONV)
    idx = int(idx)
    if not 0 <= idx < numval:
        # libpcp does not check (it reads past the value list); we refuse.
        raise pmErr(PM_ERR_INST)
    k = r.first[i] + idx
    return r, k, r.vtype[k]


# ---- libpcp's shape: one pmResult per event ------------------------------------------

class EventFlat(FlatResult):
    """The value sets of one unpacked event record, shaped like a FlatResult so that the
    drop-in pmResult / pmValueSet / pmValue objects and pmExtractValue work unchanged.
    Set i holds value i (numval is always 1); block payloads stay in the source buffer."""

    __slots__ = ()


class _Offsets:
    __slots__ = ("boff", "blen", "numval")

    def __init__(self, boff: List[int], blen: List[int], numval: List[int]) -> None:
        self.boff = boff
        self.blen = blen
        self.numval = numval


def _records_as_results(u: Unpacked, highres: bool) -> List[Any]:
    c = u.c
    nrec, nsets = u.nrecords, u.nsets
    sec = ffi.unpack(c.sec, nrec)
    nsec = ffi.unpack(c.nsec, nrec)
    numpmid = ffi.unpack(c.numpmid, nrec)
    first = ffi.unpack(c.first, nrec)
    pmid = ffi.unpack(c.pmid, nsets)
    vtype = ffi.unpack(c.vtype, nsets)
    ival = ffi.unpack(c.ival, nsets)
    dval = ffi.unpack(c.dval, nsets)
    boff = ffi.unpack(c.boff, nsets)
    blen = ffi.unpack(c.blen, nsets)
    if highres:
        result_type, handle_type = pmHighResResult, LP_pmHighResResult
    else:
        result_type, handle_type = pmResult, LP_pmResult
    new = object.__new__
    out = []
    for r in range(nrec):
        a = first[r]
        n = max(numpmid[r], 0)
        b = a + n
        f = new(EventFlat)
        f.pdu = u.buf
        f.sec = sec[r]
        f.nsec = nsec[r]
        f.numpmid = n
        f.nvalues = n
        f.pmid = pmid[a:b]
        f.numval = [1] * n
        vt = vtype[a:b]
        f.valfmt = [PM_VAL_INSITU if t < 0 else PM_VAL_DPTR for t in vt]
        f.first = list(range(n))
        f.c = _Offsets(boff[a:b], blen[a:b], f.numval)
        f._mem = None
        f._inst = [-1] * n
        f._vtype = vt
        f._ival = ival[a:b]
        f._dval = dval[a:b]
        f._blocks = None
        out.append(handle_type(result_type(f, numpmid[r])))
    return out


def unpack_event_records(vset: Any, idx: int, highres: bool) -> List[Any]:
    """pmUnpackEventRecords (highres False) / pmUnpackHighResEventRecords (True)."""
    r, k, vtype = _block_of(vset, idx)
    if k < 0:
        return []
    kind = PM_TYPE_HIGHRES_EVENT if highres else PM_TYPE_EVENT
    if vtype != kind:
        raise pmErr(PM_ERR_TYPE)
    boff = r.c.boff[k]
    u = Unpacked(r.pdu, (boff - 4,), (r.c.blen[k] + 4,), (kind,))
    if u.status[0] < 0:
        raise pmErr(u.status[0])
    if u.nrecords == 0:
        return []
    return _records_as_results(u, highres)


# ---- the pythonic form -----------------------------------------------------------------

@dataclass(frozen=True)
class EventParam:
    """One parameter of an event: its metric, the metric's name (None when the PMNS does
    not know it) and its value (int, float, str for strings, bytes for aggregates)."""

    __slots__ = ("pmid", "name", "value")
    pmid: int
    name: Optional[str]
    value: Any


@dataclass(frozen=True)
class EventRecord:
    """One event: its own timestamp, flags (PM_EVENT_FLAG_*), the number of events lost
    when flags is PM_EVENT_FLAG_MISSED (else 0), and the parameters in order."""

    __slots__ = ("sec", "nsec", "flags", "missed", "params")
    sec: int
    nsec: int
    flags: int
    missed: int
    params: Tuple[EventParam, ...]

    @property
    def time(self) -> float:
        """Seconds since the epoch as a float."""
        return self.sec + self.nsec / 1e9

    @property
    def is_missed(self) -> bool:
        return self.flags == PM_EVENT_FLAG_MISSED


def decode_text(raw: bytes) -> str:
    """Event string parameters carry no NUL; undecodable bytes survive as surrogates."""
    return raw.decode("utf-8", "surrogateescape")


def _python_value(ptype: int, ival: int, dval: float, raw: bytes) -> Any:
    if ptype == PM_TYPE_U32:
        return ival & 0xFFFFFFFF
    if ptype in (PM_TYPE_32, PM_TYPE_64):
        return ival
    if ptype == PM_TYPE_U64:
        return ival & 0xFFFFFFFFFFFFFFFF
    if ptype in (PM_TYPE_FLOAT, PM_TYPE_DOUBLE):
        return dval
    if ptype == PM_TYPE_STRING:
        return decode_text(raw)
    return raw


def iter_event_records(vset: Any, idx: int = 0,
                       name_of: Optional[Callable[[int], Optional[str]]] = None
                       ) -> Iterator[EventRecord]:
    """The events of value `idx` of an event metric's value set, either kind (the value
    block says which). Raises pmErr as pmUnpackEventRecords would."""
    r, k, vtype = _block_of(vset, idx)
    if k < 0:
        return iter(())
    if vtype not in _EVENT_KINDS:
        raise pmErr(PM_ERR_TYPE)
    boff = r.c.boff[k]
    u = Unpacked(r.pdu, (boff - 4,), (r.c.blen[k] + 4,), (vtype,))
    if u.status[0] < 0:
        raise pmErr(u.status[0])
    return _iter_unpacked(u, name_of)


def _iter_unpacked(u: Unpacked, name_of: Optional[Callable[[int], Optional[str]]]
                   ) -> Iterator[EventRecord]:
    c = u.c
    nrec, nsets = u.nrecords, u.nsets
    sec = ffi.unpack(c.sec, nrec)
    nsec = ffi.unpack(c.nsec, nrec)
    flags = ffi.unpack(c.flags, nrec)
    nparams = ffi.unpack(c.nparams, nrec)
    rec = ffi.unpack(c.rec, nsets)
    param = ffi.unpack(c.param, nsets)
    pmid = ffi.unpack(c.pmid, nsets)
    ptype = ffi.unpack(c.type, nsets)
    ival = ffi.unpack(c.ival, nsets)
    dval = ffi.unpack(c.dval, nsets)
    boff = ffi.unpack(c.boff, nsets)
    blen = ffi.unpack(c.blen, nsets)
    buf = u.buf
    names: Dict[int, Optional[str]] = {}
    per_record: List[List[EventParam]] = [[] for _ in range(nrec)]
    for s in range(nsets):
        if param[s] < 0:
            continue
        p = pmid[s]
        if p not in names:
            names[p] = name_of(p) if name_of else None
        t = ptype[s]
        raw = bytes(buf[boff[s]:boff[s] + blen[s]]) if t >= PM_TYPE_STRING else b""
        per_record[rec[s]].append(EventParam(p, names[p], _python_value(t, ival[s], dval[s], raw)))
    for r in range(nrec):
        missed = nparams[r] if flags[r] == PM_EVENT_FLAG_MISSED else 0
        yield EventRecord(sec[r], nsec[r], flags[r], missed, tuple(per_record[r]))


# ---- the bulk form: numpy columns ------------------------------------------------------

@dataclass
class ParamColumn:
    """Every value of one parameter metric: `event[n]` is the index (into the
    EventColumns arrays) of the event value n belongs to. `values` is a numpy array of
    the parameter's type; for strings and aggregates it is a fixed-width bytes array
    ('S<longest>') with the exact byte counts in `lengths` (numpy drops trailing NUL
    bytes when an element is read), and `strings()` decodes them. When one pmid comes
    with several types, `values` is an object array of Python values (type -1)."""

    pmid: int
    name: Optional[str]
    type: int
    event: Any
    values: Any
    lengths: Any = None

    def __len__(self) -> int:
        return len(self.values)

    def raw(self) -> List[bytes]:
        """STRING / AGGREGATE values as exact bytes objects."""
        if self.values.dtype.kind != "S":
            return list(self.values.tolist())
        data = self.values.tobytes()
        width = self.values.dtype.itemsize
        return [data[i * width:i * width + n] for i, n in enumerate(self.lengths.tolist())]

    def strings(self) -> List[str]:
        """STRING values as str (undecodable bytes kept as surrogates)."""
        return [v if isinstance(v, str) else decode_text(v) for v in self.raw()]

    def tolist(self) -> List[Any]:
        """The values as Python objects, like the iterator's: str for strings."""
        if self.type == PM_TYPE_STRING:
            return self.strings()
        if self.lengths is not None:
            return self.raw()
        return self.values.tolist()


@dataclass
class EventColumns:
    """All events of a set of results, one entry per event in every per-event array:

    sec, nsec (int64)  the event's own timestamp
    flags (uint32)     PM_EVENT_FLAG_* bits
    missed (int32)     events lost, for PM_EVENT_FLAG_MISSED records (else 0)
    nparams (int32)    parameters of the event (0 for MISSED records)
    result (int32)     index of the result (in the order given) the event came from
    metric (uint32)    pmid of the event metric, inst (int32) its instance
    params             {pmid: ParamColumn}
    errors             [(result index, metric pmid, inst, PM_ERR_* code)] for values that
                       did not unpack (their events are absent)"""

    sec: Any
    nsec: Any
    flags: Any
    missed: Any
    nparams: Any
    result: Any
    metric: Any
    inst: Any
    params: Dict[int, ParamColumn]
    errors: List[Tuple[int, int, int, int]]

    def __len__(self) -> int:
        return len(self.sec)

    @property
    def time(self) -> Any:
        """Event timestamps as numpy datetime64[ns]."""
        return (self.sec * 1000000000 + self.nsec).astype("datetime64[ns]")

    def by_name(self) -> Dict[str, ParamColumn]:
        return {col.name if col.name is not None else str(pmid): col
                for pmid, col in self.params.items()}


_NUMPY_OF_TYPE = {PM_TYPE_32: "int32", PM_TYPE_U32: "uint32", PM_TYPE_64: "int64",
                  PM_TYPE_U64: "uint64", PM_TYPE_FLOAT: "float32", PM_TYPE_DOUBLE: "float64"}
# Beyond this many bytes (and 8 times the payload) strings are not padded into one
# fixed-width array: one very long string would make every row that long.
_PAD_LIMIT = 1 << 26


def _flats(results: Any) -> List[FlatResult]:
    from pcp._result import flat_of

    one = flat_of(results)
    if one is not None:
        return [] if isinstance(one, EventFlat) else [one]
    out = []
    handles = (LP_pmResult, LP_pmHighResResult)
    for res in results:
        # the common case first: handles as pmFetch returns them
        f = res.contents._r if type(res) in handles else flat_of(res)
        if type(f) is not FlatResult:
            if f is None:
                raise TypeError("expected results from pmFetch / pmFetchArchive, got %s"
                                % type(res).__name__)
            if isinstance(f, EventFlat):   # unpacked records hold no event arrays
                continue
        out.append(f)
    return out


def event_columns(results: Any, metrics: Optional[Iterable[int]] = None,
                  name_of: Optional[Callable[[int], Optional[str]]] = None) -> EventColumns:
    """Unpack every event value (either kind) of one result or a sequence of results
    into numpy columns: one C call finds the event arrays, one unpacks them all.
    `metrics` restricts to those event pmids."""
    import numpy as np

    flats = _flats(results)
    wanted = [] if metrics is None else sorted({int(m) & 0xFFFFFFFF for m in metrics})
    n = len(flats)
    pdus = [f.pdu for f in flats]
    sizes = np.fromiter(map(len, pdus), np.uint32, n)
    bases = np.zeros(n, np.uint32)
    if n > 1:
        np.cumsum(sizes[:-1], out=bases[1:])
    buf = pdus[0] if n == 1 else b"".join(pdus)
    cap = sum(f.nvalues for f in flats)
    found = np.empty((7, max(cap, 1)), np.uint32)
    u32 = lambda row: ffi.from_buffer("uint32_t[]", found[row])      # noqa: E731
    i32 = lambda row: ffi.from_buffer("int32_t[]", found[row])       # noqa: E731
    c_found = [u32(0), u32(1), i32(2), i32(3), i32(4), u32(5), i32(6)]
    nb = lib.pcp_events_collect(
        ffi.from_buffer("uint8_t[]", buf), len(buf), n, [f.c for f in flats],
        ffi.from_buffer("uint32_t[]", bases), ffi.from_buffer("uint32_t[]", sizes),
        len(wanted), wanted or ffi.NULL, cap, *c_found)
    if nb < 0:
        raise pmErr(nb)
    where = found[:, :nb]
    sorted_inst = [r for r, f in enumerate(flats) if f._inst is not None]
    if sorted_inst and nb:
        # pmSortInstances reorders the Python instance list, not the C column
        res_of = where[3].view(np.int32)
        for r in sorted_inst:
            sel = np.flatnonzero(res_of == r)
            if sel.size:
                inst = flats[r]._inst
                where[6, sel] = np.array([inst[k] for k in where[4, sel].tolist()],
                                         np.int64).astype(np.uint32)
    u = Unpacked(buf, c_found[0], c_found[1], c_found[2],
                 mem_factory=lambda words: np.empty(words, np.int64), n=nb)
    return _columns(u, where, name_of, np)


def _column(u: Unpacked, name: str, ctype: str, n: int, np: Any) -> Any:
    """A numpy view of one C column (the memory is a numpy array owned by `u`)."""
    if n == 0:
        return np.empty(0, ctype)
    mem = u._mem
    start = int(ffi.cast("uintptr_t", getattr(u.c, name))) - mem.ctypes.data
    size = np.dtype(ctype).itemsize
    return mem.view(np.uint8)[start:start + n * size].view(ctype)


def _padded(buf: Any, boff: Any, blen: Any, np: Any) -> Any:
    """Byte strings buf[boff[i]:boff[i] + blen[i]] as one 'S<longest>' array."""
    count = boff.size
    width = int(blen.max()) if count else 0
    if width == 0:
        return np.zeros(count, "S1")
    if count * width > max(_PAD_LIMIT, 8 * int(blen.sum())):
        return None
    out = np.empty(count * width, np.uint8)
    sts = lib.pcp_events_pad(ffi.from_buffer("uint8_t[]", buf), len(buf), count,
                             ffi.from_buffer("uint32_t[]", boff),
                             ffi.from_buffer("uint32_t[]", blen), width,
                             ffi.from_buffer("uint8_t[]", out, require_writable=True))
    if sts < 0:
        raise pmErr(sts)
    return out.view("S%d" % width)


def _columns(u: Unpacked, where: Any, name_of: Any, np: Any) -> EventColumns:
    nrec, nsets = u.nrecords, u.nsets
    status = np.frombuffer(ffi.buffer(u.c_status, 4 * len(u.status)), np.int32) \
        if u.status else np.empty(0, np.int32)
    errors = [(int(where[3, b]), int(where[5, b]), int(where[6, b].view(np.int32)),
               int(status[b])) for b in np.flatnonzero(status < 0).tolist()]
    block = _column(u, "block", "int32", nrec, np)
    flags = _column(u, "flags", "uint32", nrec, np)
    nparams = _column(u, "nparams", "int32", nrec, np)
    is_missed = flags == PM_EVENT_FLAG_MISSED
    cols = EventColumns(
        sec=_column(u, "sec", "int64", nrec, np),
        nsec=_column(u, "nsec", "int64", nrec, np),
        flags=flags,
        missed=np.where(is_missed, nparams, 0).astype(np.int32),
        nparams=np.where(is_missed, 0, np.maximum(nparams, 0)).astype(np.int32),
        result=where[3].view(np.int32)[block],
        metric=where[5][block],
        inst=where[6].view(np.int32)[block],
        params={},
        errors=errors,
    )
    if nsets == 0:
        return cols
    # Parameters only (not event.flags / event.missed), grouped by pmid, keeping the
    # order of appearance within a group; every column is permuted once, then each
    # group is a slice.
    sel = np.flatnonzero(_column(u, "param", "int32", nsets, np) >= 0)
    if sel.size == 0:
        return cols
    pmid = _column(u, "pmid", "uint32", nsets, np)[sel]
    order = sel[np.argsort(pmid, kind="stable")]
    pmid = _column(u, "pmid", "uint32", nsets, np)[order]
    ptype = _column(u, "type", "int32", nsets, np)[order]
    rec = _column(u, "rec", "int32", nsets, np)[order]
    starts = np.flatnonzero(np.r_[True, pmid[1:] != pmid[:-1]])
    mixed = np.flatnonzero(ptype[1:] != ptype[:-1]) + 1   # type changes inside groups
    mixed = set(mixed[pmid[mixed] == pmid[mixed - 1]].tolist())
    bounds = starts.tolist() + [int(pmid.size)]
    group_types = ptype[starts].tolist()
    group_pmids = pmid[starts].tolist()
    ival = dval = boff = blen = None
    for g, p in enumerate(group_pmids):
        a, b = bounds[g], bounds[g + 1]
        t0 = group_types[g]
        lengths = values = None
        if any(a < m < b for m in mixed):
            values = np.empty(b - a, dtype=object)
            values[:] = _python_values(u, order[a:b])
            t0 = -1
        elif t0 == PM_TYPE_FLOAT or t0 == PM_TYPE_DOUBLE:
            if dval is None:
                dval = _column(u, "dval", "float64", nsets, np)[order]
            values = dval[a:b] if t0 == PM_TYPE_DOUBLE else dval[a:b].astype(np.float32)
        elif t0 in _NUMPY_OF_TYPE:
            if ival is None:
                ival = _column(u, "ival", "int64", nsets, np)[order]
            values = ival[a:b] if t0 == PM_TYPE_64 else \
                ival[a:b].view(np.uint64) if t0 == PM_TYPE_U64 else \
                ival[a:b].astype(_NUMPY_OF_TYPE[t0])
        else:
            if boff is None:
                boff = _column(u, "boff", "uint32", nsets, np)[order]
                blen = _column(u, "blen", "uint32", nsets, np)[order]
            lengths = blen[a:b]
            values = _padded(u.buf, boff[a:b], lengths, np)
            if values is None:
                values = np.empty(b - a, dtype=object)
                values[:] = [bytes(u.buf[o:o + n])
                             for o, n in zip(boff[a:b].tolist(), lengths.tolist())]
        cols.params[p] = ParamColumn(p, name_of(p) if name_of else None, t0, rec[a:b],
                                     values, lengths)
    return cols


def _python_values(u: Unpacked, idx: Any) -> List[Any]:
    c = u.c
    out = []
    for s in idx.tolist():
        t = c.type[s]
        raw = bytes(u.buf[c.boff[s]:c.boff[s] + c.blen[s]]) if t >= PM_TYPE_STRING else b""
        out.append(_python_value(t, c.ival[s], c.dval[s], raw))
    return out
