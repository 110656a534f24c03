"""Decoded results: flat C arrays filled by one decoder call, and the lazy drop-in
pmResult / pmValueSet / pmValue objects that read from them on demand."""
from __future__ import annotations

import array
import ctypes
import itertools
import sys
import threading
from collections import namedtuple
from itertools import repeat

from pcp._core.cint import wrap_int32
from pcp._core.constants import (PM_ERR_IPC, PM_ERR_LOGREC, PM_TYPE_32, PM_TYPE_64,
                                 PM_TYPE_DOUBLE, PM_TYPE_U32, PM_TYPE_U64, PM_VAL_DPTR,
                                 PM_VAL_INSITU, PM_VAL_SPTR)
from pcp._core.errors import pmErr
from pcp._core.level import API_LEVEL
from pcp._core.native import ffi, lib
from pcp._core.wire import PCP_RESULT_RESIZE, PCP_SELECT_NEED_ROOM

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple


class ResultArrays(namedtuple("ResultArrays", ("pmid", "numval", "valfmt", "first", "inst",
                                               "vtype", "ival", "dval", "boff", "blen",
                                               "data"))):
    """A result's columns (pcp_result in csrc/result.h): per value set `pmid`, `numval`
    (< 0 an error code), `valfmt` and `first` (index of its first value); per value
    `inst`, `vtype` (-1 for a 32-bit INSITU value), `ival` (integers), `dval` (FLOAT and
    DOUBLE), and `boff`/`blen` locating other payloads (strings...) in `data` (bytes).
    Arrays are read-only views that keep the result's memory alive. (collections'
    namedtuple: typing.NamedTuple would import typing at start-up.)"""

    __slots__ = ()


class SelectRequest:
    """A pmFetch request as csrc/result_select.c takes it (pcp_select_request): the
    pmids, and per pmid its descriptor's instance domain or None when unknown."""

    __slots__ = ("c", "npmids", "_keep")

    def __init__(self, pmids: List[int], indoms: List[Optional[int]]) -> None:
        n = len(pmids)
        pmid_c = ffi.new("uint32_t[]", [p & 0xFFFFFFFF for p in pmids] or [0])
        indom_c = ffi.new("uint32_t[]", [0xFFFFFFFF if i is None else i & 0xFFFFFFFF
                                         for i in indoms] or [0])
        known_c = ffi.new("uint8_t[]", [0 if i is None else 1 for i in indoms] or [0])
        self.c = ffi.new("pcp_select_request *")
        self.c.npmids = n
        self.c.pmid = pmid_c
        self.c.indom = indom_c
        self.c.known = known_c
        self.npmids = n
        self._keep = (pmid_c, indom_c, known_c)


class ProfileFilter:
    """An instance profile as the C filters take it (pcp_profile): whether indoms with no
    entry pass, and per entry (indom, whether only its listed instances pass, the
    instances)."""

    __slots__ = ("c", "_keep")

    def __init__(self, include_by_default: bool,
                 entries: List[Tuple[int, bool, List[int]]]) -> None:
        insts: List[int] = []
        firsts, counts = [], []
        for _, _, listed in entries:
            firsts.append(len(insts))
            counts.append(len(listed))
            # ascending as the signed instance ids the C compares (binary search)
            insts.extend(sorted(wrap_int32(i) for i in listed))
        indom_c = ffi.new("uint32_t[]", [e[0] & 0xFFFFFFFF for e in entries] or [0])
        pass_c = ffi.new("int32_t[]", [1 if e[1] else 0 for e in entries] or [0])
        first_c = ffi.new("int32_t[]", firsts or [0])
        count_c = ffi.new("int32_t[]", counts or [0])
        inst_c = ffi.new("int32_t[]", insts or [0])
        self.c = ffi.new("pcp_profile *")
        self.c.include_by_default = 1 if include_by_default else 0
        self.c.nentries = len(entries)
        self.c.indom = indom_c
        self.c.listed_pass = pass_c
        self.c.first = first_c
        self.c.count = count_c
        self.c.insts = inst_c
        self.c.ninsts = len(insts)
        self._keep = (indom_c, pass_c, first_c, count_c, inst_c)


class ResultRoom:
    """The sizes of the last result a C call made in one go (pmFetch's in FORW/BACK:
    FlatResult.select_record; in INTERP: pcp_interp_result): its number of values, for
    the exact columns of the next one, and a staging area its payloads are copied
    through. A result of another size is made again in these."""

    __slots__ = ("nvalues", "nbytes", "data", "need")

    def __init__(self) -> None:
        self.nvalues = 0
        self.nbytes = 0
        self.data: Any = ffi.NULL
        self.need = (ffi.new("int32_t *"), ffi.new("int64_t *"))

    def resize(self, nvalues: int, nbytes: int) -> None:
        self.nvalues = nvalues
        if nbytes > self.nbytes:
            self.nbytes = max(nbytes, 2 * self.nbytes)
            self.data = _raw_alloc("uint8_t[]", self.nbytes)


def usec_of(nsec: int) -> int:
    """Nanoseconds to a timeval's microseconds as C's integer division does it."""
    return -((-nsec) // 1000) if nsec < 0 else nsec // 1000


# Column memory is written in full by the decoder before anything reads it: skip the
# zero-fill ffi.new would do (it is a measurable part of decoding a large record).
_raw_alloc = ffi.new_allocator(should_clear_after_alloc=False)


def allocate_result(numpmid: int, nvalues: int) -> Tuple[Any, Any]:
    """Result columns for numpmid sets and nvalues values: (pcp_result *, their memory)."""
    mem = _raw_alloc("int64_t[]", (lib.pcp_result_mem_size(numpmid, nvalues) + 7) // 8)
    c = ffi.new("pcp_result *")
    lib.pcp_result_bind(c, mem, numpmid, nvalues)
    c.numpmid = numpmid
    c.nvalues = nvalues
    return c, mem


def _decode_record(record: bytes, version: int,
                   sizes: Optional[Tuple[int, int]]) -> Tuple[Any, Any]:
    """An archive data record decoded into result columns: (pcp_result *, memory)."""
    if sizes is None:
        counts = ffi.new("int32_t[2]")
        sts = lib.pcp_archive_record_scan(record, len(record), version, counts, counts + 1)
        if sts < 0:
            raise pmErr(sts)
        sizes = (counts[0], counts[1])
    c, mem = allocate_result(sizes[0], sizes[1])
    sts = lib.pcp_archive_record_decode(record, len(record), version, c)
    if sts < 0:
        raise pmErr(sts)
    return c, mem


class ResultSizes:
    """The sizes of the last RESULT PDU a fetch loop decoded (FlatResult.from_pdu): the
    next one usually has them again. One per context, used under its lock."""

    __slots__ = ("numpmid", "nvalues", "counts", "numpmid_p", "nvalues_p", "nbytes", "_rooms")

    def __init__(self) -> None:
        self.counts = ffi.new("int32_t[2]")
        # the decoders' out-parameters, made once (a cffi pointer costs an object a call)
        self.numpmid_p = self.counts + 0
        self.nvalues_p = self.counts + 1
        self.resize(0, 0)

    def resize(self, numpmid: int, nvalues: int) -> None:
        """Remember these sizes, and the bytes of result columns they take."""
        self.numpmid = numpmid
        self.nvalues = nvalues
        self.nbytes = lib.pcp_result_mem_size(numpmid, nvalues)
        # rooms of `nbytes` made for the one-call round trip (FlatResult.room)
        self._rooms: List[Tuple[Any, Any]] = []

    def room(self) -> Tuple[Any, Any]:
        """An unbound pcp_result and `nbytes` of column memory for it: one this context
        made before when no result holds it any more, else a new one (two cffi objects,
        most of what a small fetch costs in Python). A result keeps its struct and memory
        alive (FlatResult.c, ._mem), as does anything made on them (ffi.buffer, numpy
        views), so a reference count of one (the pool's own) besides getrefcount's
        argument says nothing can see the old values. Called under the context's lock."""
        for room in self._rooms:
            if _getrefcount(room[0]) == 2 and _getrefcount(room[1]) == 2:
                return room
        room = (ffi.new("pcp_result *"), _raw_alloc("int64_t[]", (self.nbytes + 7) >> 3))
        if len(self._rooms) < _ROOMS_KEPT:
            self._rooms.append(room)
        return room


# one filling of an indexed result's values at a time (FlatResult._fill_values)
_FILL_LOCK = threading.Lock()

# rooms kept per context: a loop holds the last result while it fetches the next one
_ROOMS_KEPT = 2
# without reference counts (not CPython) a room is never known to be free
_getrefcount = getattr(sys, "getrefcount", lambda _obj: 0)


class FlatResult:
    """One RESULT / HIGHRES_RESULT (or archive record) as flat arrays.

    The C arrays live in one allocation; Python lists of the per-value columns are made
    on first use (one C-level unpack per column), so the drop-in accessors index lists
    and the bulk API can copy the C arrays straight into numpy.

    `framed` says whether each block payload in `pdu` is preceded by its 4-byte block
    header, as in a PDU or an archive record. Results made by copying payloads out (the
    archive fetch's record select, interpolation, derived metrics) hold bare payloads;
    what needs a whole block (the event unpacker) frames them itself."""

    __slots__ = ("pdu", "sec", "nsec", "numpmid", "nvalues", "_c", "_mem", "_unfilled",
                 "_pmid", "_numval", "_valfmt", "_first", "_inst", "_vtype", "_ival", "_dval",
                 "_blocks", "edits", "framed")

    def __init__(self, pdu: bytes, highres: bool) -> None:
        counts = ffi.new("int32_t[2]")
        sts = lib.pcp_result_pdu_scan(pdu, len(pdu), 1 if highres else 0, counts, counts + 1)
        if sts < 0:
            raise pmErr(sts)
        c, mem = allocate_result(counts[0], counts[1])
        sts = lib.pcp_result_pdu_decode(pdu, len(pdu), 1 if highres else 0, c)
        if sts < 0:
            raise pmErr(sts)
        self._setup(pdu, c, mem)

    @classmethod
    def from_pdu(cls, pdu: bytes, highres: bool, sizes: "ResultSizes") -> "FlatResult":
        """The same as FlatResult(pdu, highres), in one walk over the value sets when the
        PDU has the sizes of the last one decoded with `sizes` (a fetch loop's usual
        case), which `sizes` then remembers."""
        counts = sizes.counts
        c, mem = allocate_result(sizes.numpmid, sizes.nvalues)
        sts = lib.pcp_result_pdu_index_sized(pdu, len(pdu), 1 if highres else 0, c,
                                             sizes.numpmid_p, sizes.nvalues_p)
        if sts == PCP_RESULT_RESIZE:
            sizes.resize(counts[0], counts[1])
            c, mem = allocate_result(counts[0], counts[1])
            sts = lib.pcp_result_pdu_index_sized(pdu, len(pdu), 1 if highres else 0, c,
                                                 sizes.numpmid_p, sizes.nvalues_p)
        if sts != 0:
            raise pmErr(sts if sts < 0 else PM_ERR_IPC)
        return cls.from_indexed(pdu, highres, c, mem)


    @classmethod
    def from_indexed(cls, pdu: bytes, highres: bool, c: Any, mem: Any) -> "FlatResult":
        """A RESULT PDU checked whole and indexed into `c` (its per-set columns filled;
        columns in `mem`, allocate_result's), as pcp_result_pdu_index_sized and the
        one-call round trip of csrc/exchange.c leave it: the per-value columns are
        filled from `pdu` when something first reads them (`c`)."""
        self = object.__new__(cls)
        self._setup(pdu, c, mem)
        self._unfilled = 1 if highres else 0
        return self

    @classmethod
    def from_log_record(cls, record: bytes, version: int,
                        sizes: Optional[Tuple[int, int]] = None) -> "FlatResult":
        """An archive data record (length words included), decoded by the same value
        decoder as a RESULT PDU; its blocks are addressed within `record`. `sizes`
        (numpmid, nvalues) skips the sizing pass when the reader has just made it."""
        c, mem = _decode_record(record, version, sizes)
        self = object.__new__(cls)
        self._setup(record, c, mem)
        return self

    def _setup(self, pdu: bytes, c: Any, mem: Any, framed: bool = True) -> None:
        self.pdu = pdu
        self.framed = framed
        self._c = c
        self._mem = mem
        # a fetch's PDU indexed only (from_indexed): whether it is HIGHRES, until the
        # per-value columns are filled; None once they are
        self._unfilled: Optional[int] = None
        self.sec = c.sec
        self.nsec = c.nsec
        numpmid, nvalues = c.numpmid, c.nvalues
        self.numpmid = numpmid
        self.nvalues = nvalues
        self._pmid = None
        self._numval = None
        self._valfmt = None
        self._first = None
        self._inst = None
        self._vtype = None
        self._ival = None
        self._dval = None
        self._blocks: Optional[Dict[int, Any]] = None
        # changes a caller made through the drop-in objects (values, instances, blocks
        # handed out to edit): what was computed from the result before is stale
        self.edits = 0

    @classmethod
    def select_record(cls, record: Any, length: int, version: int, request: "SelectRequest",
                      profile: "ProfileFilter", room: "ResultRoom",
                      even_if_absent: bool = False) -> Optional["FlatResult"]:
        """pmFetch's result from an archive data record: one set per requested pmid in
        request order, values filtered by the profile; None when the record has none of
        the pmids (unless `even_if_absent`). Made straight from the record (a pointer
        to its `length` bytes, read and checked by the reader) in one C call
        (csrc/result_select.c): only the requested sets are decoded, and the selected
        blocks' payloads copied out, so the result does not keep the record. `room` remembers the sizes of the last result,
        which the next one usually has again (else a second call with the right ones)."""
        need_values, need_bytes = room.need
        c, mem = allocate_result(request.npmids, room.nvalues)
        found = lib.pcp_archive_record_select(record, length, version, request.c, profile.c,
                                              c, room.data, room.nbytes, need_values,
                                              need_bytes)
        if found == PCP_SELECT_NEED_ROOM:
            room.resize(need_values[0], need_bytes[0])
            c, mem = allocate_result(request.npmids, room.nvalues)
            found = lib.pcp_archive_record_select(record, length, version, request.c,
                                                  profile.c, c, room.data, room.nbytes,
                                                  need_values, need_bytes)
        if found < 0 or found == PCP_SELECT_NEED_ROOM:
            raise pmErr(found if found < 0 else PM_ERR_LOGREC)
        if found == 0 and not even_if_absent:
            return None
        out = object.__new__(FlatResult)
        out._setup(ffi.buffer(room.data, need_bytes[0])[:], c, mem, framed=False)
        return out

    @property
    def c(self) -> Any:
        """The pcp_result, every column filled (the per-value ones now, if this is an
        indexed fetch's whose values nothing has read yet): what C and the per-value
        readers take. The per-set columns alone are `_c`'s."""
        if self._unfilled is not None:
            self._fill_values()
        return self._c

    @c.setter
    def c(self, c: Any) -> None:
        """Columns filled in full (a result made by hand around a decoder's output)."""
        self._c = c
        self._unfilled = None

    def _fill_values(self) -> None:
        """The per-value columns of an indexed PDU, filled once. Under a lock: threads
        reading one result's values for the first time at once (the C call lets go of
        the GIL) fill it once, and none reads columns another is still filling."""
        with _FILL_LOCK:
            highres = self._unfilled
            if highres is None:
                return
            sts = lib.pcp_result_pdu_fill_values(self.pdu, len(self.pdu), highres, self._c)
            if sts < 0:
                raise pmErr(sts)        # cannot be: the same bytes were checked whole
            self._unfilled = None

    def copied_blocks(self) -> None:
        """Make PM_VAL_SPTR sets PM_VAL_DPTR, as libpcp's derived-metric rewrite of a
        result does when it copies every block into memory of its own."""
        valfmt = self._c.valfmt
        for i in range(self.numpmid):
            if valfmt[i] == PM_VAL_SPTR:
                valfmt[i] = PM_VAL_DPTR
        self._valfmt = None

    def no_values(self, sets: Sequence[int]) -> None:
        """Give the value sets at these positions no values (numval 0)."""
        c = self._c         # per-set columns: the values stay unfilled until read
        for i in sets:
            c.numval[i] = 0
            c.valfmt[i] = 0
        self._numval = self._valfmt = None

    @classmethod
    def columns(cls, numpmid: int, nvalues: int) -> Tuple[Any, Any]:
        """Uninitialised columns (pcp_result *, its memory) for a C function to fill;
        `wrap` then makes the result of them."""
        return allocate_result(numpmid, nvalues)

    @classmethod
    def wrap(cls, c: Any, mem: Any, data: bytes, framed: bool = False) -> "FlatResult":
        """A result over columns C has filled, its blocks addressed within `data` (bare
        payloads unless `framed`)."""
        self = object.__new__(cls)
        self._setup(data, c, mem, framed)
        return self

    @classmethod
    def assemble(cls, stamp: Tuple[int, int], sets: List[Tuple[int, int, int]],
                 values: List[Tuple[int, int, int, float, bytes]]) -> "FlatResult":
        """A result made value by value (derived metrics of strings or aggregates): value
        sets (pmid, numval, valfmt) over consecutive values (inst, vtype, ival, dval,
        payload), vtype -1 for an INSITU word; payloads are copied into one buffer."""
        c, mem = allocate_result(len(sets), len(values))
        k = 0
        for i, (pmid, numval, valfmt) in enumerate(sets):
            c.pmid[i] = pmid
            c.numval[i] = numval
            c.valfmt[i] = valfmt if numval > 0 else 0
            c.first[i] = k
            if numval > 0:
                k += numval
        n = len(values)
        if n:
            insts, vtypes, ivals, dvals, payloads = zip(*values)
            lengths = array.array("I", map(len, payloads))
            offsets = array.array("I", itertools.accumulate(lengths, initial=0))
            # one copy per column instead of a cffi store per value
            for dest, column in ((c.inst, array.array("i", insts)),
                                 (c.vtype, array.array("i", vtypes)),
                                 (c.ival, array.array("q", ivals)),
                                 (c.dval, array.array("d", dvals)),
                                 (c.boff, offsets[:n]), (c.blen, lengths)):
                ffi.memmove(dest, column, n * column.itemsize)
            data = b"".join(payloads)
        else:
            data = b""
        c.sec, c.nsec = stamp
        c.numpmid = len(sets)
        c.nvalues = len(values)
        out = object.__new__(cls)
        out._setup(data, c, mem, framed=False)
        return out

    @classmethod
    def gather(cls, stamp: Tuple[int, int], pmids: Sequence[int],
               parts: Sequence[Tuple[Optional["FlatResult"], int, int]]) -> "FlatResult":
        """One result made of the value sets of others (a LOCAL fetch's agents' replies):
        set i is set parts[i][1] of result parts[i][0], or when that is None pmids[i]
        with numval parts[i][2] (an error code). The columns are copied in C
        (csrc/result_gather.c); the sources' bytes are joined, so blocks keep their
        framing."""
        index: Dict[int, int] = {}
        sources: List["FlatResult"] = []
        for src, _, _ in parts:
            if src is not None and id(src) not in index:
                index[id(src)] = len(sources)
                sources.append(src)
        n = len(parts)
        src_of = ffi.new("int32_t[]", [index[id(p[0])] if p[0] is not None else -1
                                       for p in parts])
        set_of = ffi.new("int32_t[]", [p[1] for p in parts])
        code = ffi.new("int32_t[]", [p[2] for p in parts])
        ids = ffi.new("uint32_t[]", list(pmids))
        srcs = ffi.new("pcp_result *[]", [s.c for s in sources] or [ffi.NULL])
        bases, at = [], 0
        for s in sources:
            bases.append(at)
            at += len(s.pdu)
        base = ffi.new("uint32_t[]", bases or [0])
        nvalues = lib.pcp_result_gather(ffi.NULL, n, ids, src_of, set_of, code, srcs, base,
                                        len(sources))
        if nvalues < 0:
            raise pmErr(nvalues)
        c, mem = allocate_result(n, nvalues)
        sts = lib.pcp_result_gather(c, n, ids, src_of, set_of, code, srcs, base, len(sources))
        if sts < 0:
            raise pmErr(sts)
        c.sec, c.nsec = stamp
        out = object.__new__(cls)
        out._setup(b"".join(s.pdu for s in sources), c, mem,
                   framed=all(s.framed for s in sources))
        return out

    @classmethod
    def empty(cls, sec: int, nsec: int) -> "FlatResult":
        """A result with no value sets: an archive <mark> record made up by the reader."""
        c, mem = allocate_result(0, 0)
        c.sec = sec
        c.nsec = nsec
        self = object.__new__(cls)
        self._setup(b"", c, mem)
        return self

    def arrays(self) -> "ResultArrays":
        import numpy as np

        nv = max(self.nvalues, 1)
        np_ = max(self.numpmid, 1)
        self.c                              # the per-value columns filled
        mem = ffi.buffer(self._mem)
        n, m = self.nvalues, self.numpmid

        def col(offset: int, dtype: Any, count: int) -> Any:
            return np.frombuffer(mem, dtype=dtype, count=count, offset=offset)

        base = nv * 32
        return ResultArrays(
            pmid=col(base, np.uint32, m), numval=col(base + np_ * 4, np.int32, m),
            valfmt=col(base + np_ * 8, np.int32, m), first=col(base + np_ * 12, np.int32, m),
            inst=col(nv * 16, np.int32, n), vtype=col(nv * 20, np.int32, n),
            ival=col(0, np.int64, n), dval=col(nv * 8, np.float64, n),
            boff=col(nv * 24, np.uint32, n), blen=col(nv * 28, np.uint32, n),
            data=self.pdu)

    # Per-set columns as Python lists, unpacked once on first use (a whole archive record
    # that pmFetch only selects from in C never needs them).
    @property
    def pmid(self) -> List[int]:
        if self._pmid is None:
            self._pmid = ffi.unpack(self._c.pmid, self.numpmid)
        return self._pmid

    @pmid.setter
    def pmid(self, column: List[int]) -> None:
        self._pmid = column

    @property
    def numval(self) -> List[int]:
        if self._numval is None:
            self._numval = ffi.unpack(self._c.numval, self.numpmid)
        return self._numval

    @numval.setter
    def numval(self, column: List[int]) -> None:
        self._numval = column

    @property
    def valfmt(self) -> List[int]:
        if self._valfmt is None:
            self._valfmt = ffi.unpack(self._c.valfmt, self.numpmid)
        return self._valfmt

    @valfmt.setter
    def valfmt(self, column: List[int]) -> None:
        self._valfmt = column

    @property
    def first(self) -> List[int]:
        if self._first is None:
            self._first = ffi.unpack(self._c.first, self.numpmid)
        return self._first

    @first.setter
    def first(self, column: List[int]) -> None:
        self._first = column

    # Per-value columns as Python lists, unpacked once on first use.
    @property
    def inst(self) -> List[int]:
        if self._inst is None:
            self._inst = ffi.unpack(self.c.inst, self.nvalues)
        return self._inst

    @property
    def vtype(self) -> List[int]:
        if self._vtype is None:
            self._vtype = ffi.unpack(self.c.vtype, self.nvalues)
        return self._vtype

    @property
    def ival(self) -> List[int]:
        if self._ival is None:
            self._ival = ffi.unpack(self.c.ival, self.nvalues)
        return self._ival

    @property
    def dval(self) -> List[float]:
        if self._dval is None:
            self._dval = ffi.unpack(self.c.dval, self.nvalues)
        return self._dval

    def payload(self, k: int) -> bytes:
        """The value block payload of value k exactly as received (big-endian numbers).
        Only meaningful while the block has not been materialised by `pval`."""
        off = self.c.boff[k]
        return self.pdu[off:off + self.c.blen[k]]

    def has_block(self, k: int) -> bool:
        return self._blocks is not None and k in self._blocks

    def block_pointer(self, k: int) -> Any:
        """A ctypes POINTER(pmValueBlock) to a native-layout copy of value k's block,
        made once: client code may read or edit it in place, as with libpcp memory."""
        if self._blocks is None:
            self._blocks = {}
        ptr = self._blocks.get(k)
        if ptr is None:
            ptr = _native_block(self.vtype[k], self.payload(k))
            self._blocks[k] = ptr
            self.edits += 1         # the caller may now edit the value in place
        return ptr

    def set_block_pointer(self, k: int, ptr: Any) -> None:
        """Point value k at a caller-made block (a caller preparing a pmStore)."""
        if self._blocks is None:
            self._blocks = {}
        self._blocks[k] = ptr
        self.edits += 1

    def block_contents(self, k: int) -> Tuple[int, bytes]:
        """(vtype, payload with numbers in host order) of a materialised block."""
        blk = self._blocks[k].contents
        return blk.vtype, ctypes.string_at(ctypes.addressof(blk) + 4, max(blk.vlen - 4, 0))


# Numbers the store encoder (csrc/store.c) and libpcp's event parameter conversion
# swap: every numeric type.
_NUMERIC_WIDTH = {0: 4, 1: 4, 4: 4, 2: 8, 3: 8, 5: 8}
# What libpcp's __ntohpmValueBlock swaps in a value block: 64-bit, DOUBLE and FLOAT
# only; a 32-bit type (or vtype 0, a v1 archive's untyped block, whatever the metric's
# type) stays as it lies, so a string in an untyped block is read unchanged.
_BLOCK_WIDTH = {4: 4, 2: 8, 3: 8, 5: 8}


def _wire_to_host(vtype: int, payload: bytes, widths: Dict[int, int] = _NUMERIC_WIDTH) -> bytes:
    width = widths.get(vtype)
    if width and len(payload) >= width:
        return payload[:width][::-1] + payload[width:] if sys.byteorder == "little" else payload
    return payload


def block_payload_to_host(vtype: int, payload: bytes) -> bytes:
    """A value block's payload (big-endian, as a PDU or an archive holds it) as libpcp
    leaves it for its caller: swapped by the block's own type, whatever the metric's."""
    return _wire_to_host(vtype, payload, _BLOCK_WIDTH)


def _event_array_to_host(payload: bytes, highres: bool) -> bytes:
    """An event array (payload after the block header) with every field in host order,
    as libpcp leaves it after decoding a result: counts, timestamps, flags, parameter
    headers and numeric parameter values swapped, strings and aggregates as they are.
    A malformed array is converted as far as it is well formed."""
    if sys.byteorder != "little":
        return payload
    out = bytearray(payload)
    n = len(out)

    def swap(at: int, width: int) -> bool:
        if at < 0 or at + width > n:
            return False
        out[at:at + width] = out[at:at + width][::-1]
        return True

    if not swap(0, 4):
        return bytes(out)
    nrecords = int.from_bytes(payload[0:4], "big", signed=True)
    pos = 4
    head = 24 if highres else 16
    for _ in range(max(nrecords, 0)):
        if pos + head > n:
            break
        if highres:
            swap(pos, 8)
            swap(pos + 8, 8)
        else:
            swap(pos, 4)
            swap(pos + 4, 4)
        swap(pos + head - 8, 4)                     # er_flags
        nparams = int.from_bytes(payload[pos + head - 4:pos + head], "big", signed=True)
        swap(pos + head - 4, 4)                     # er_nparams
        flags = int.from_bytes(payload[pos + head - 8:pos + head - 4], "big")
        pos += head
        if flags & 0x80000000:                      # PM_EVENT_FLAG_MISSED: no parameters
            continue
        for _ in range(max(nparams, 0)):
            if pos + 8 > n:
                return bytes(out)
            word = int.from_bytes(payload[pos + 4:pos + 8], "big")
            ptype, plen = word >> 24, word & 0xFFFFFF
            swap(pos, 4)                            # ep_pmid
            swap(pos + 4, 4)                        # ep_type / ep_len
            if plen < 4 or pos + 4 + plen > n:
                return bytes(out)
            width = _NUMERIC_WIDTH.get(ptype)
            if width and plen - 4 >= width:
                swap(pos + 8, width)
            pos += 4 + ((plen + 3) & ~3)
    return bytes(out)


def _native_block(vtype: int, payload: bytes) -> Any:
    from pcp._core.structs import pmValueBlock

    if vtype in (9, 10):
        data = _event_array_to_host(payload, vtype == 10)
    else:
        data = block_payload_to_host(vtype, payload)
    size = 4 + len(data)
    buf = ctypes.create_string_buffer((size + 7) & ~7)
    ptr = ctypes.cast(buf, ctypes.POINTER(pmValueBlock))
    ptr.contents.vtype = vtype
    ptr.contents.vlen = size
    ctypes.memmove(ctypes.addressof(buf) + 4, data, len(data))
    return ptr


_new = object.__new__


class valueDref:
    """The pmValue.value union: `lval` for INSITU values, `pval` for value blocks."""

    __slots__ = ("_r", "_k")
    _fields_ = (("pval", None), ("lval", None))  # the official union's members

    @property
    def lval(self) -> int:
        r = self._r
        if r.vtype[self._k] < 0:
            return r.ival[self._k]
        # In libpcp this word would be the block's address, as in the union.
        return ctypes.cast(r.block_pointer(self._k), ctypes.c_void_p).value & 0xFFFFFFFF

    @lval.setter
    def lval(self, value: int) -> None:
        self._r.ival[self._k] = wrap_int32(int(value))
        self._r.edits += 1

    @property
    def pval(self) -> Any:
        return self._r.block_pointer(self._k)

    @pval.setter
    def pval(self, block: Any) -> None:
        self._r.set_block_pointer(self._k, block)

    def __str__(self) -> str:
        return "value=%#lx" % (self.lval)


class pmValue:
    """One value of a result: `inst` and the `value` union, read from the flat arrays."""

    __slots__ = ("_r", "_k")
    _fields_ = (("inst", None), ("value", None))

    @property
    def inst(self) -> int:
        return self._r.inst[self._k]

    @inst.setter
    def inst(self, value: int) -> None:
        self._r.inst[self._k] = wrap_int32(int(value))
        self._r.edits += 1

    @property
    def value(self) -> valueDref:
        v = _new(valueDref)
        v._r = self._r
        v._k = self._k
        return v

    def __str__(self) -> str:
        return "pmValue@%#lx inst=%d %s" % (id(self), self.inst, self.value)


def _make_value(r: FlatResult, k: int) -> pmValue:
    v = _new(pmValue)
    v._r = r
    v._k = k
    return v


# the numbers an atom of each integer type holds unchanged
_OWN_RANGE = {PM_TYPE_32: (-(1 << 31), (1 << 31) - 1), PM_TYPE_U32: (0, (1 << 32) - 1)}


class _ValueList:
    """vset.vlist: indexable like the C array (no bounds beyond numval)."""

    __slots__ = ("_r", "_first", "_n")

    def __init__(self, r: FlatResult, i: int) -> None:
        self._r = r
        self._first = r.first[i]
        self._n = max(r.numval[i], 0)

    def __getitem__(self, j: int) -> pmValue:
        if j < 0:
            j += self._n
        if not 0 <= j < self._n:
            raise IndexError("invalid index")
        return _make_value(self._r, self._first + j)

    def __len__(self) -> int:
        return self._n


class pmValueSet:
    """One metric's values; `.contents` returns itself so POINTER-style code works."""

    __slots__ = ("_r", "_i")
    _fields_ = (("pmid", None), ("numval", None), ("valfmt", None), ("vlist", None))

    def __init__(self, r: FlatResult, i: int) -> None:
        self._r = r
        self._i = i

    @property
    def contents(self) -> "pmValueSet":
        return self

    @property
    def pmid(self) -> int:
        return self._r.pmid[self._i]

    @pmid.setter
    def pmid(self, value: int) -> None:
        self._r.pmid[self._i] = int(value) & 0xFFFFFFFF
        self._r.edits += 1

    @property
    def edits(self) -> int:
        """Beyond the official binding: how many changes callers have made to the result
        of this set (what was computed from it before any of them is stale)."""
        return self._r.edits

    @property
    def numval(self) -> int:
        return self._r.numval[self._i]

    @property
    def valfmt(self) -> int:
        return self._r.valfmt[self._i]

    @property
    def vlist(self) -> _ValueList:
        return _ValueList(self._r, self._i)

    def own_type_values(self, pmtype: int) -> Optional[Tuple[List[pmValue], List[int], List[Any]]]:
        """Beyond the official binding: (the pmValues, their instances, their values as
        pmExtractValue(valfmt, v, pmtype, pmtype).dref(pmtype) gives them) for every value
        of the set, in one go from the decoded columns: pcp.pmcc computes every value of
        every sample this way. None when some value needs the general conversion (a block
        of another type, one the caller made editable, a number out of the type's range,
        or a FLOAT, which the atom rounds)."""
        r = self._r
        # the columns read straight once unpacked: a tool asks this of every set of
        # every sample
        n = (r._numval or r.numval)[self._i]
        if n <= 0:
            return [], [], []
        first = (r._first or r.first)[self._i]
        end = first + n
        if r._blocks and any(first <= k < end for k in r._blocks):
            return None
        vtypes = (r._vtype or r.vtype)[first:end]
        if pmtype in (PM_TYPE_32, PM_TYPE_U32):
            if max(vtypes) >= 0:                # some value is not in the pmValue itself
                return None
        elif pmtype in (PM_TYPE_64, PM_TYPE_U64, PM_TYPE_DOUBLE):
            if vtypes.count(pmtype) != n:
                return None
        else:
            return None
        if pmtype == PM_TYPE_DOUBLE:
            values = (r._dval or r.dval)[first:end]
        else:
            values = (r._ival or r.ival)[first:end]
            # the column is int64: every value of it is a 64-bit one's own, and a U64
            # one's when not negative (above 2**63 it needs the general conversion)
            if pmtype == PM_TYPE_U64:
                if min(values) < 0:
                    return None
            elif pmtype != PM_TYPE_64:
                low, high = _OWN_RANGE[pmtype]
                if min(values) < low or max(values) > high:
                    return None
        insts = (r._inst or r.inst)[first:end]
        if n == 1:
            return [_make_value(r, first)], insts, values
        return list(map(_make_value, repeat(r, n), range(first, end))), insts, values

    def __str__(self) -> str:
        if self.valfmt != 0:
            return ""
        vals = [" %s" % str(self.vlist[j]) for j in range(max(self.numval, 0))]
        return "pmValueSet@%#lx id=%#lx numval=%d valfmt=%d" % (
            id(self), self.pmid, self.numval, self.valfmt) + str(vals)


class _VsetArray:
    __slots__ = ("_r",)

    def __init__(self, r: FlatResult) -> None:
        self._r = r

    def __getitem__(self, i: int) -> pmValueSet:
        n = self._r.numpmid
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("invalid index")
        return pmValueSet(self._r, i)

    def __len__(self) -> int:
        return self._r.numpmid


class _ResultBase:
    """Shared accessors of pmResult and pmHighResResult (same names as the official)."""

    __slots__ = ("_r", "numpmid", "changes", "_stamp", "__weakref__")
    _fields_ = (("timestamp", None), ("numpmid", None), ("vset", None))

    def __init__(self, r: FlatResult, numpmid: Optional[int] = None, changes: int = 0) -> None:
        self._r = r
        self.numpmid = r.numpmid if numpmid is None else numpmid
        self.changes = changes
        # (sec, nsec, the timestamp struct made of them): tools read a result's
        # timestamp several times
        self._stamp: Optional[Tuple[int, int, Any]] = None

    def _timestamp(self, make: Any) -> Any:
        r = self._r
        stamp = self._stamp
        if stamp is None or stamp[0] != r.sec or stamp[1] != r.nsec:
            stamp = self._stamp = (r.sec, r.nsec, make(r.sec, r.nsec))
        return stamp[2]

    @property
    def contents(self):
        return self

    @property
    def vset(self) -> _VsetArray:
        return _VsetArray(self._r)

    def as_arrays(self) -> "ResultArrays":
        """Beyond the official binding: every value of this result as numpy arrays,
        viewing the decoded columns without a copy or a Python object per value."""
        return self._r.arrays()

    def as_lists(self) -> "ResultArrays":
        """Beyond the official binding: as_arrays's columns as Python lists, without
        importing numpy (the command line's start-up)."""
        r = self._r
        c = r.c
        m, n = c.numpmid, c.nvalues
        return ResultArrays(
            pmid=ffi.unpack(c.pmid, m), numval=ffi.unpack(c.numval, m),
            valfmt=ffi.unpack(c.valfmt, m), first=ffi.unpack(c.first, m),
            inst=ffi.unpack(c.inst, n), vtype=ffi.unpack(c.vtype, n),
            ival=ffi.unpack(c.ival, n), dval=ffi.unpack(c.dval, n),
            boff=ffi.unpack(c.boff, n), blen=ffi.unpack(c.blen, n), data=r.pdu)

    def value_sets(self) -> List[Tuple[int, "pmValueSet"]]:
        """Beyond the official binding: (pmid, value set) of every set, in one call
        (pcp.pmcc files each fetch's sets under their metrics this way)."""
        r = self._r
        return list(zip(r.pmid[:self.numpmid], map(pmValueSet, itertools.repeat(r), range(self.numpmid))))

    def get_pmid(self, vset_idx: int) -> int:
        return self._r.pmid[vset_idx]

    # The per-value accessors read the unpacked columns directly when they are there
    # (client loops call them once per value; a property call each is measurable).
    def get_valfmt(self, vset_idx: int) -> int:
        r = self._r
        column = r._valfmt
        return (column if column is not None else r.valfmt)[vset_idx]

    def get_numval(self, vset_idx: int) -> int:
        r = self._r
        column = r._numval
        return (column if column is not None else r.numval)[vset_idx]

    def get_vset(self, vset_idx: int) -> pmValueSet:
        if not 0 <= vset_idx < self.numpmid:
            raise IndexError("invalid index")
        return pmValueSet(self._r, vset_idx)

    def get_vlist(self, vset_idx: int, vlist_idx: int) -> pmValue:
        r = self._r
        column = r._numval
        if not 0 <= vlist_idx < (column if column is not None else r.numval)[vset_idx]:
            raise IndexError("invalid index")
        column = r._first
        v = _new(pmValue)
        v._r = r
        v._k = (column if column is not None else r.first)[vset_idx] + vlist_idx
        return v

    def get_inst(self, vset_idx: int, vlist_idx: int) -> int:
        r = self._r
        if not 0 <= vlist_idx < r.numval[vset_idx]:
            raise IndexError("invalid index")
        return r.inst[r.first[vset_idx] + vlist_idx]

    def __str__(self) -> str:
        vstr = str([" %s" % str(self.vset[i]) for i in range(self.numpmid)])
        return "%s@%#lx id#=%d " % (type(self).__name__, id(self), self.numpmid) + vstr


_timeval: Any = None


def _timeval_of(sec: int, nsec: int) -> Any:
    """A struct timeval of a result's time (the class imported on first use)."""
    global _timeval
    if _timeval is None:
        from pcp._core.structs import timeval as _timeval
    return _timeval(sec, usec_of(nsec))


class _TimevalResult(_ResultBase):
    """A result whose timestamp is a struct timeval (pmFetch's below API level 7.2)."""

    __slots__ = ()

    @property
    def timestamp(self):
        # read several times a sample by the tools: the one made before, when the
        # result's time has not changed, without a call
        stamp, r = self._stamp, self._r
        if stamp is not None and stamp[0] == r.sec and stamp[1] == r.nsec:
            return stamp[2]
        return self._timestamp(_timeval_of)


class pmHighResResult(_ResultBase):
    """What pmFetchHighRes returns, with a timespec timestamp."""

    __slots__ = ()

    @property
    def timestamp(self):
        from pcp._core.structs import timespec

        return self._timestamp(timespec)

    # PCP 6.3's accessors (pcp/_core/level.py: not served at level 6.0, as 6.0.3 has none)
    def get_sec(self) -> int:
        """The seconds of the result's timestamp."""
        return self.timestamp.tv_sec

    def get_nsec(self) -> int:
        """The nanoseconds of the result's timestamp."""
        return self.timestamp.tv_nsec

    def get_numpmid(self) -> int:
        """The number of value sets (pmids) of the result."""
        return self.numpmid


if API_LEVEL < (6, 3):
    del pmHighResResult.get_sec, pmHighResResult.get_nsec, pmHighResResult.get_numpmid


if API_LEVEL >= (7, 2):
    class pmResult(pmHighResResult):
        """What pmFetch returns at API level 7.2: a timespec timestamp (PCP 7 made the
        PMAPI high-resolution); `.contents` gives the same object."""

        __slots__ = ()      # (get_sec, get_nsec, get_numpmid: pmHighResResult's)

    class pmResult_v2(_TimevalResult):
        """7.x's name for the result of PCP 6's pmFetch, with a timeval timestamp."""

        __slots__ = ()
else:
    class pmResult(_TimevalResult):  # type: ignore[no-redef]
        """What pmFetch returns: `.contents` gives the same object, as POINTER(pmResult) did."""

        __slots__ = ()


class LP_pmResult:
    """What pmFetch returns: like the official binding's POINTER(pmResult), a handle
    whose `.contents` is the result (a plain slot, the cheapest attribute to read)."""

    __slots__ = ("contents", "__weakref__")

    def __init__(self, contents: "pmResult") -> None:
        self.contents = contents

    def __bool__(self) -> bool:
        return True


class LP_pmHighResResult(LP_pmResult):
    """What pmFetchHighRes returns: POINTER(pmHighResResult)'s counterpart."""

    __slots__ = ()


def flat_of(result: Any) -> Optional[FlatResult]:
    """The FlatResult behind a drop-in result object, or None for foreign objects."""
    if isinstance(result, LP_pmResult):
        result = result.contents
    r = getattr(result, "_r", None)
    return r if isinstance(r, FlatResult) else None


def store_arrays(r: FlatResult, numpmid: int) -> Dict[str, Any]:
    """Flatten a (possibly modified) result into the arrays pcp_store_encode packs."""
    pmids, numvals, valfmts = [], [], []
    insts, lvals, vtypes, poffs, plens = [], [], [], [], []
    payload = bytearray()
    for i in range(numpmid):
        numval = r.numval[i]
        pmids.append(r.pmid[i])
        numvals.append(numval)
        valfmts.append(r.valfmt[i])
        first = r.first[i]
        for k in range(first, first + max(numval, 0)):
            insts.append(r.inst[k])
            if r.valfmt[i] == PM_VAL_INSITU:
                lvals.append(r.ival[k])
                vtypes.append(0)
                poffs.append(0)
                plens.append(0)
                continue
            if r.has_block(k):
                vtype, data = r.block_contents(k)
            else:
                vtype = r.vtype[k]
                # The encoder wants numbers in host order; the wire bytes are big-endian.
                data = _wire_to_host(vtype, r.payload(k))
            lvals.append(0)
            vtypes.append(vtype)
            poffs.append(len(payload))
            plens.append(len(data))
            payload += data
    return dict(pmids=pmids, numvals=numvals, valfmts=valfmts, insts=insts, lvals=lvals,
                vtypes=vtypes, poffs=poffs, plens=plens, payload=bytes(payload))
