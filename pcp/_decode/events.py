"""Event records (PM_TYPE_EVENT / PM_TYPE_HIGHRES_EVENT values) over the C unpacker:
libpcp's pmUnpack[HighRes]EventRecords shape, a pythonic iterator and numpy columns.

Every form starts from value blocks that lie in a FlatResult's buffer (a fetched PDU
or an archive record): (buffer, offset, length) triples handed to csrc/events.c in one
call, so live and archived events take the same path."""
from __future__ import annotations

import struct
import threading
from dataclasses import dataclass
from typing import (Any, Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence,
                    Tuple)

from pcp._core.constants import (PM_ERR_CONV, PM_ERR_INST, PM_ERR_TOOBIG, PM_ERR_TYPE,
                                 PM_EVENT_FLAG_MISSED,
                                 PM_TYPE_32, PM_TYPE_64, PM_TYPE_DOUBLE, PM_TYPE_EVENT,
                                 PM_TYPE_FLOAT, PM_TYPE_HIGHRES_EVENT, PM_TYPE_STRING, PM_TYPE_U32,
                                 PM_TYPE_U64, PM_VAL_DPTR, PM_VAL_INSITU, PM_VAL_SPTR)
from pcp._core.errors import pmErr
from pcp._core.native import ffi, lib
from pcp._core.level import API_LEVEL
from pcp._decode.result import (FlatResult, LP_pmHighResResult, LP_pmResult, pmHighResResult,
                                pmResult, pmValueSet)

if API_LEVEL >= (7, 2):
    from pcp._decode.result import pmResult_v2 as _timeval_result
else:
    _timeval_result = pmResult

EVENT_FLAGS_PMID = 0x7FC00001   # event.flags, 511.0.1 (csrc/events.h)
EVENT_MISSED_PMID = 0x7FC00002  # event.missed, 511.0.2
_EVENT_KINDS = (PM_TYPE_EVENT, PM_TYPE_HIGHRES_EVENT)


# ---- the one C call ------------------------------------------------------------------

class Unpacked:
    """The records of one or more event arrays of one buffer, as C columns.

    `status[b]` is 0 or the PM_ERR_* code of block b (its records are then absent)."""

    __slots__ = ("buf", "status", "nrecords", "nsets", "c", "_mem")

    def __init__(self, buf: Any, offs: Sequence[int], lens: Sequence[int],
                 kinds: Sequence[int], mem_factory: Optional[Callable[[int], Any]] = None,
                 n: Optional[int] = None) -> None:
        """offs / lens / kinds: sequences, or cdata arrays (then n says how many);
        mem_factory(nbytes) -> cdata for the columns (default: a new allocation)."""
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
        else:
            mem = mem_factory(size)
        c = ffi.new("pcp_events *")
        lib.pcp_events_bind(c, mem, nrec, nsets)
        if nrec:
            sts = lib.pcp_events_decode(src, len(src), n, c_off, c_len, c_kind, c_status, c)
            if sts < 0:
                raise pmErr(sts)
        self.buf = buf
        self.status = ffi.unpack(c_status, n)
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


def _block_header(vtype: int, payload_len: int) -> bytes:
    """The 4-byte pmValueBlock header (vtype:8, vlen:24, big-endian) of a payload."""
    vlen = payload_len + 4
    if vlen > 0xFFFFFF:             # no block a PDU or record held is this long
        raise pmErr(PM_ERR_TOOBIG)
    return ((vtype & 0xFF) << 24 | vlen).to_bytes(4, "big")


def _event_block(r: FlatResult, k: int, kind: int) -> Tuple[Any, Tuple[int], Tuple[int],
                                                                 Tuple[int]]:
    """Unpacked's arguments for the event array of value k: in place when the result
    holds whole blocks, else the bare payload (an archive pmFetch, an interpolated or
    derived result) behind the header its value block had."""
    boff, blen = r.c.boff[k], r.c.blen[k]
    if r.framed:
        return r.pdu, (boff - 4,), (blen + 4,), (kind,)
    block = _block_header(kind, blen) + r.pdu[boff:boff + blen]
    return block, (0,), (len(block),), (kind,)


def _framed(f: FlatResult) -> FlatResult:
    """A copy of an unframed result whose every block payload follows its header, for
    the bulk unpacker (csrc/events.c finds event arrays by their headers)."""
    n, m = f.nvalues, f.numpmid
    c, mem = FlatResult.columns(m, n)
    for col, size in (("pmid", 4), ("numval", 4), ("valfmt", 4), ("first", 4)):
        ffi.memmove(getattr(c, col), getattr(f.c, col), m * size)
    for col, size in (("inst", 4), ("vtype", 4), ("ival", 8), ("dval", 8), ("blen", 4)):
        ffi.memmove(getattr(c, col), getattr(f.c, col), n * size)
    vtype = ffi.unpack(f.c.vtype, n)
    boff = ffi.unpack(f.c.boff, n)
    blen = ffi.unpack(f.c.blen, n)
    parts = []
    used = 0
    for k in range(n):
        if vtype[k] < 0:
            c.boff[k] = 0
            continue
        parts.append(_block_header(vtype[k], blen[k]))
        parts.append(f.pdu[boff[k]:boff[k] + blen[k]])
        c.boff[k] = used + 4
        used += 4 + blen[k]
    c.sec, c.nsec = f.sec, f.nsec
    out = FlatResult.wrap(c, mem, b"".join(parts), framed=True)
    out._inst = f._inst             # pmSortInstances' order, if the caller sorted
    return out


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
        # libpcp's pmUnpackEventRecords stamps with a timeval at every level: 7.x calls
        # that result pmResult_v2 (its pmResult has a timespec)
        result_type, handle_type = _timeval_result, LP_pmResult
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
        f._c = _Offsets(boff[a:b], blen[a:b], f.numval)
        f._unfilled = None
        f._mem = None
        f._inst = [-1] * n
        f._vtype = vt
        f._ival = ival[a:b]
        f._dval = dval[a:b]
        f._blocks = None
        f.edits = 0
        f.framed = True             # parameters are whole blocks inside the event array
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
    u = Unpacked(*_event_block(r, k, kind))
    if u.status[0] < 0:
        raise pmErr(u.status[0])
    if u.nrecords == 0:
        return []
    return _records_as_results(u, highres)


# ---- the pythonic form -----------------------------------------------------------------

class EventParam(NamedTuple):
    """One parameter of an event, a (pmid, name, value) tuple: the metric, its name
    (None when the PMNS does not know it) and the value (int, float, str for strings,
    bytes for aggregates)."""

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
    u = Unpacked(*_event_block(r, k, vtype))
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
    from pcp._decode.result import flat_of

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


_local = threading.local()
# Scratch buffers above this size are not kept for the next call.
_SCRATCH_KEEP = 1 << 28


def _scratch(name: str, nbytes: int) -> Any:
    """A per-thread buffer of at least nbytes, kept between calls: the bulk path's
    intermediate columns would otherwise be fresh memory, paid for in page faults."""
    cache = _local.__dict__.setdefault("buffers", {})
    buf = cache.get(name)
    if buf is not None and len(buf) * 8 >= nbytes:
        return buf
    words = max((nbytes + 7) // 8, 64)
    if buf is not None:
        words = max(words, len(buf) + len(buf) // 2)
    buf = ffi.new("int64_t[]", words)
    if nbytes <= _SCRATCH_KEEP:
        cache[name] = buf
    return buf


def event_columns(results: Any, metrics: Optional[Iterable[int]] = None,
                  name_of: Optional[Callable[[int], Optional[str]]] = None) -> EventColumns:
    """Unpack every event value (either kind) of one result or a sequence of results
    into numpy columns: C finds the event arrays, unpacks them all and lays the columns
    out; Python makes views. `metrics` restricts to those event pmids."""
    import numpy as np

    flats = [f if f.framed else _framed(f) for f in _flats(results)]
    wanted = [] if metrics is None else sorted({int(m) & 0xFFFFFFFF for m in metrics})
    n = len(flats)
    pdus = [f.pdu for f in flats]
    sizes = list(map(len, pdus))
    bases = [0] * n
    for r in range(1, n):
        bases[r] = bases[r - 1] + sizes[r - 1]
    buf = pdus[0] if n == 1 else b"".join(pdus)
    src = ffi.from_buffer("uint8_t[]", buf)
    args = (src, len(buf), n, [f.c for f in flats], bases, sizes, len(wanted),
            wanted or ffi.NULL)
    nb = lib.pcp_events_collect(*args, 0, *([ffi.NULL] * 7))
    if nb < 0:
        raise pmErr(nb)
    found = ffi.cast("uint32_t *", _scratch("found", 28 * nb))
    rows = [found + i * nb for i in range(7)]
    off, blen, kind, res_of, value_of, pmid_of, inst_of = [
        ffi.cast(ct, r) for ct, r in zip(("uint32_t *", "uint32_t *", "int32_t *", "int32_t *",
                                          "int32_t *", "uint32_t *", "int32_t *"), rows)]
    lib.pcp_events_collect(*args, nb, off, blen, kind, res_of, value_of, pmid_of, inst_of)
    sorted_inst = {r for r, f in enumerate(flats) if f._inst is not None}
    if sorted_inst:
        # pmSortInstances reorders the Python instance list, not the C column
        for b in range(nb):
            if res_of[b] in sorted_inst:
                inst_of[b] = flats[res_of[b]]._inst[value_of[b]]
    u = Unpacked(buf, off, blen, kind, mem_factory=lambda size: _scratch("events", size), n=nb)
    errors = [(res_of[b], pmid_of[b], inst_of[b], sts)
              for b, sts in enumerate(u.status) if sts < 0] if u.status and min(u.status) < 0 else []
    order = ffi.cast("int32_t *", _scratch("order", 8 * u.nsets))
    ngroups = ffi.new("int32_t *")
    nparams = lib.pcp_events_param_order(u.c, order, order + u.nsets, ngroups)
    mem = np.empty((lib.pcp_events_columns_mem_size(u.nrecords, nparams, ngroups[0]) + 7) // 8,
                   np.int64)
    cc = ffi.new("pcp_event_columns *")
    cmem = ffi.from_buffer("int64_t[]", mem, require_writable=True)
    lib.pcp_events_columns_bind(cc, cmem, u.nrecords, nparams, ngroups[0])
    sts = lib.pcp_events_columns_fill(u.c, order, res_of, pmid_of, inst_of, cc)
    if sts < 0:
        raise pmErr(sts)
    view = _Views(mem, int(ffi.cast("uintptr_t", cmem)), np)
    return _columns(u.buf, view, cc, errors, name_of, np)


class _Views:
    """numpy views of the C columns that lie inside one numpy array."""

    __slots__ = ("raw", "base")

    def __init__(self, mem: Any, base: int, np: Any) -> None:
        self.raw = mem.view(np.uint8)
        self.base = base

    def __call__(self, ptr: Any, ctype: str, n: int) -> Any:
        start = int(ffi.cast("uintptr_t", ptr)) - self.base
        return self.raw[start:start + n * _ITEMSIZE[ctype]].view(ctype)


_ITEMSIZE = {"int64": 8, "uint64": 8, "float64": 8, "int32": 4, "uint32": 4}


def _padded(buf: Any, boff: Any, blen: Any, width: int, np: Any) -> Any:
    """Byte strings buf[boff[i]:boff[i] + blen[i]] (none longer than width) as one
    'S<width>' array, or an object array of bytes when padding would blow up."""
    count = boff.size
    if width == 0:
        return np.zeros(count, "S1")
    if count * width > _PAD_LIMIT and count * width > 8 * int(blen.sum()):
        values = np.empty(count, dtype=object)
        values[:] = [bytes(buf[o:o + n]) for o, n in zip(boff.tolist(), blen.tolist())]
        return values
    out = np.empty(count * width, np.uint8)
    sts = lib.pcp_events_pad(ffi.from_buffer("uint8_t[]", buf), len(buf), count,
                             ffi.from_buffer("uint32_t[]", boff),
                             ffi.from_buffer("uint32_t[]", blen), width,
                             ffi.from_buffer("uint8_t[]", out, require_writable=True))
    if sts < 0:
        raise pmErr(sts)
    return out.view("S%d" % width)


def _columns(buf: Any, view: _Views, cc: Any, errors: List[Tuple[int, int, int, int]],
             name_of: Any, np: Any) -> EventColumns:
    """EventColumns over the filled pcp_event_columns `cc` (inside the numpy array that
    `view` reads): every column is a view, every parameter metric a slice of them."""
    nrec, n, ngroups = cc.nrecords, cc.nparams, cc.ngroups
    cols = EventColumns(
        sec=view(cc.sec, "int64", nrec),
        nsec=view(cc.nsec, "int64", nrec),
        flags=view(cc.flags, "uint32", nrec),
        missed=view(cc.missed, "int32", nrec),
        nparams=view(cc.count, "int32", nrec),
        result=view(cc.result, "int32", nrec),
        metric=view(cc.metric, "uint32", nrec),
        inst=view(cc.inst, "int32", nrec),
        params={},
        errors=errors,
    )
    if ngroups == 0:
        return cols
    event = view(cc.event, "int32", n)
    value = view(cc.value, "int64", n)
    boff = blen = None
    groups = zip(ffi.unpack(cc.gpmid, ngroups), ffi.unpack(cc.gtype, ngroups),
                 ffi.unpack(cc.gstart, ngroups), ffi.unpack(cc.gcount, ngroups),
                 ffi.unpack(cc.gwidth, ngroups))
    for p, t0, a, cnt, width in groups:
        b = a + cnt
        lengths = None
        if t0 == PM_TYPE_DOUBLE:
            values = value[a:b].view(np.float64)
        elif t0 == PM_TYPE_FLOAT:
            values = value[a:b].view(np.float64).astype(np.float32)
        elif t0 == PM_TYPE_64:
            values = value[a:b]
        elif t0 == PM_TYPE_U64:
            values = value[a:b].view(np.uint64)
        elif t0 in _NUMPY_OF_TYPE:
            values = value[a:b].astype(_NUMPY_OF_TYPE[t0])
        elif t0 >= 0:
            if boff is None:
                boff = view(cc.boff, "uint32", n)
                blen = view(cc.blen, "uint32", n)
            lengths = blen[a:b]
            values = _padded(buf, boff[a:b], lengths, width, np)
        else:
            vals = []
            for i in range(a, b):
                t, v = cc.type[i], cc.value[i]
                if t in (PM_TYPE_FLOAT, PM_TYPE_DOUBLE):
                    vals.append(struct.unpack("=d", struct.pack("=q", v))[0])
                elif t >= PM_TYPE_STRING:
                    vals.append(_python_value(t, 0, 0.0,
                                              bytes(buf[cc.boff[i]:cc.boff[i] + cc.blen[i]])))
                else:
                    vals.append(_python_value(t, v, 0.0, b""))
            values = np.empty(cnt, dtype=object)
            values[:] = vals
        cols.params[p] = ParamColumn(p, name_of(p) if name_of else None, t0, event[a:b],
                                     values, lengths)
    return cols
