"""Python side of the PDU codec: sizes buffers, calls the C encoders/decoders, and turns
their flat outputs (offsets into the PDU) into the few Python objects a caller asked for."""
from __future__ import annotations

import struct as _struct

from pcp._core.errors import pmErr
from pcp._core.native import ffi, lib

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import List, Optional, Sequence, Tuple
    from pcp._core.abc import DescTuple


class Scratch:
    """Buffers and out-parameters the codec reuses from one call to the next instead of
    making them per call (each cffi object costs about as much as the C call it serves):
    one per connection, used under its context's lock. Arrays grow to the largest size
    asked for."""

    __slots__ = ("ints", "int_p", "uints", "uint_p", "desc", "_arrays")

    def __init__(self) -> None:
        self.ints = ffi.new("int32_t[2]")
        self.int_p = (self.ints + 0, self.ints + 1)
        self.uints = ffi.new("uint32_t[2]")
        self.uint_p = (self.uints + 0, self.uints + 1)
        self.desc = ffi.new("pcp_desc *")
        self._arrays: dict = {}

    def array(self, key: str, ctype: str, n: int):
        """A `ctype` array of at least n items (its contents left from earlier calls),
        and, for the encoders' bytes, its start as a char * for ffi.unpack."""
        have = self._arrays.get(key)
        if have is None or have[1] < n:
            arr = ffi.new(ctype, max(n, 2 * have[1] if have else 64))
            have = self._arrays[key] = (arr, len(arr), ffi.cast("char *", arr))
        return have

    def names_arrays(self, n: int):
        """decode_pmns_names's three out-arrays (status, offset, length) of at least n
        items, and how many they hold: one look-up for the three (a PMNS call's)."""
        have = self._arrays.get("names")
        if have is None or have[3] < n:
            status, cap = self.array("status", "int32_t[]", n)[:2]
            have = self._arrays["names"] = (status, self.array("off", "uint32_t[]", cap)[0],
                                            self.array("nlen", "int32_t[]", cap)[0], cap)
        return have


    def instance_arrays(self, n: int):
        """An INSTANCE reply's three out-arrays (instance, name offset, name length) of at
        least n items, and how many they hold."""
        have = self._arrays.get("instance")
        if have is None or have[3] < n:
            cap = max(n, 2 * have[3] if have else 64)
            have = self._arrays["instance"] = _listing_arrays(cap) + (cap,)
        return have


def _listing_arrays(cap: int):
    """A reply listing names (PMNS_NAMES, INSTANCE): a number per item (status,
    instance), each name's offset and length, cap items each."""
    return ffi.new("int32_t[]", cap), ffi.new("uint32_t[]", cap), ffi.new("int32_t[]", cap)


def names_at(pdu: bytes, off, nlen, n: int) -> List[bytes]:
    """The n names a decoder found in pdu, at the offsets and lengths of its arrays."""
    return [pdu[o:o + ln] for o, ln in zip(ffi.unpack(off, n), ffi.unpack(nlen, n))]


def _encode(fn, *args, scratch: Optional[Scratch] = None) -> bytes:
    """Run a C encoder into the scratch buffer when there is one and it is large enough
    (the usual case: one C call); else once to size the PDU and once to write it."""
    if scratch is not None:
        buf, cap, chars = scratch.array("pdu", "uint8_t[]", 0)
        got = fn(buf, cap, *args)
        if got >= 0:
            return ffi.unpack(chars, got)
        # too small a buffer (PM_ERR_TOOBIG) or a request the encoder refuses: sized
        # first, as without a scratch buffer, which says which
    need = fn(ffi.NULL, 0, *args)
    if need < 0:
        raise pmErr(need)
    if scratch is not None:
        buf, cap, chars = scratch.array("pdu", "uint8_t[]", need)
        got = fn(buf, cap, *args)
        if got < 0:
            raise pmErr(got)
        return ffi.unpack(chars, got)
    buf = ffi.new("uint8_t[]", need)
    got = fn(buf, need, *args)
    if got < 0:
        raise pmErr(got)
    return ffi.buffer(buf, got)[:]


def encode_creds(from_: int, flags: int) -> bytes:
    return _encode(lib.pcp_pdu_encode_creds, from_, flags)


def encode_attr(from_: int, attr: int, value: bytes) -> bytes:
    return _encode(lib.pcp_pdu_encode_attr, from_, attr, value, len(value))


def encode_store(from_: int, sec: int, usec: int, arrays: dict) -> bytes:
    """pmStore's RESULT PDU from the flat arrays pcp._decode.result.store_arrays makes
    (at least one value set, each with at least one value: the caller checks)."""
    return _encode(lib.pcp_store_encode, from_, sec, usec, len(arrays["pmids"]),
                   ffi.new("uint32_t[]", arrays["pmids"]),
                   ffi.new("int32_t[]", arrays["numvals"]),
                   ffi.new("int32_t[]", arrays["valfmts"]),
                   ffi.new("int32_t[]", arrays["insts"] or [0]),
                   ffi.new("int32_t[]", arrays["lvals"] or [0]),
                   ffi.new("int32_t[]", arrays["vtypes"] or [0]),
                   ffi.new("uint32_t[]", arrays["poffs"] or [0]),
                   ffi.new("uint32_t[]", arrays["plens"] or [0]),
                   arrays["payload"], len(arrays["payload"]))


def encode_profile(from_: int, ctxid: int, g_state: int,
                   entries: Sequence[Tuple[int, int, Sequence[int]]]) -> bytes:
    """entries: (indom, state, instances) in creation order."""
    n = len(entries)
    indoms = ffi.new("uint32_t[]", [e[0] for e in entries] or [0])
    states = ffi.new("int32_t[]", [e[1] for e in entries] or [0])
    counts = ffi.new("int32_t[]", [len(e[2]) for e in entries] or [0])
    flat = [i for e in entries for i in e[2]]
    insts = ffi.new("int32_t[]", flat or [0])
    return _encode(lib.pcp_pdu_encode_profile, from_, ctxid, g_state, n, indoms, states, counts,
                   insts)


def encode_fetch(from_: int, highres: bool, ctxid: int, pmids: Sequence[int]) -> bytes:
    arr = ffi.new("uint32_t[]", list(pmids))
    return _encode(lib.pcp_pdu_encode_fetch, from_, 1 if highres else 0, ctxid, len(pmids), arr)


def encode_desc_req(from_: int, pmid: int, scratch: Optional[Scratch] = None) -> bytes:
    return _encode(lib.pcp_pdu_encode_desc_req, from_, pmid, scratch=scratch)


def encode_ids(from_: int, pdu_type: int, sts: int, ids: Sequence[int],
               scratch: Optional[Scratch] = None) -> bytes:
    if scratch is not None and len(ids) == 1:
        arr = scratch.uint_p[0]
        arr[0] = ids[0]
    else:
        arr = ffi.new("uint32_t[]", list(ids))
    return _encode(lib.pcp_pdu_encode_ids, from_, pdu_type, sts, len(ids), arr, scratch=scratch)


def encode_instance_req(from_: int, indom: int, inst: int, name: bytes) -> bytes:
    return _encode(lib.pcp_pdu_encode_instance_req, from_, indom, inst, name, len(name))


def encode_text_req(from_: int, ident: int, type_: int, scratch: Optional[Scratch] = None) -> bytes:
    return _encode(lib.pcp_pdu_encode_text_req, from_, ident, type_, scratch=scratch)


def encode_pmns_names(from_: int, names: Sequence[bytes], scratch: Optional[Scratch] = None) -> bytes:
    if scratch is not None and len(names) == 1:
        lens = scratch.int_p[0]
        lens[0] = len(names[0])
    else:
        lens = ffi.new("int32_t[]", [len(n) for n in names])
    return _encode(lib.pcp_pdu_encode_pmns_names, from_, len(names), b"".join(names), lens,
                   scratch=scratch)


def encode_pmns_node(from_: int, pdu_type: int, subtype: int, name: bytes,
                     scratch: Optional[Scratch] = None) -> bytes:
    return _encode(lib.pcp_pdu_encode_pmns_node, from_, pdu_type, subtype, name, len(name),
                   scratch=scratch)


def encode_label_req(from_: int, ident: int, type_: int, scratch: Optional[Scratch] = None) -> bytes:
    return _encode(lib.pcp_pdu_encode_label_req, from_, ident, type_, scratch=scratch)


def unpack(cdata, n: int) -> list:
    """The first n items of a C array as a list (ffi.unpack, for modules above the door)."""
    return ffi.unpack(cdata, n)


# ---- decoders ----------------------------------------------------------------------


def _check(sts: int) -> int:
    if sts < 0:
        raise pmErr(sts)
    return sts


def decode_error(pdu: bytes, scratch: Optional[Scratch] = None) -> int:
    if scratch is not None:
        code, datum = scratch.int_p[0], scratch.uint_p[0]
    else:
        code, datum = ffi.new("int32_t *"), ffi.new("uint32_t *")
    _check(lib.pcp_pdu_decode_error(pdu, len(pdu), code, datum))
    return code[0]


def decode_desc(pdu: bytes, scratch: Optional[Scratch] = None) -> DescTuple:
    d = scratch.desc if scratch is not None else ffi.new("pcp_desc *")
    _check(lib.pcp_pdu_decode_desc(pdu, len(pdu), d))
    return (d.pmid, d.type, d.indom, d.sem, d.units)


def decode_descs(pdu: bytes, expected: int, scratch: Optional[Scratch] = None) -> List[DescTuple]:
    out = scratch.array("descs", "pcp_desc[]", max(expected, 1))[0] if scratch is not None \
        else ffi.new("pcp_desc[]", max(expected, 1))
    n = _check(lib.pcp_pdu_decode_descs(pdu, len(pdu), expected, out))
    return [(d.pmid, d.type, d.indom, d.sem, d.units) for d in (out[i] for i in range(n))]


def decode_instance(pdu: bytes,
                    scratch: Optional[Scratch] = None) -> Tuple[int, List[int], List[Optional[bytes]]]:
    cap = max((len(pdu) - 20) // 8, 1)
    if scratch is not None:
        indom = scratch.uint_p[0]
        inst, off, nlen, cap = scratch.instance_arrays(cap)
    else:
        indom = ffi.new("uint32_t *")
        inst, off, nlen = _listing_arrays(cap)
    n = _check(lib.pcp_pdu_decode_instance(pdu, len(pdu), indom, cap, inst, off, nlen))
    return indom[0], ffi.unpack(inst, n), names_at(pdu, off, nlen, n)


def decode_text(pdu: bytes, scratch: Optional[Scratch] = None) -> bytes:
    if scratch is not None:
        off, tlen = scratch.uint_p[0], scratch.int_p[0]
    else:
        off, tlen = ffi.new("uint32_t *"), ffi.new("int32_t *")
    _check(lib.pcp_pdu_decode_text(pdu, len(pdu), off, tlen))
    return pdu[off[0]:off[0] + tlen[0]]


def decode_pmns_ids(pdu: bytes, scratch: Optional[Scratch] = None) -> Tuple[int, List[int]]:
    cap = max((len(pdu) - 20) // 4, 1)
    if scratch is not None:
        sts = scratch.int_p[0]
        ids, cap = scratch.array("ids", "uint32_t[]", cap)[:2]
    else:
        sts, ids = ffi.new("int32_t *"), ffi.new("uint32_t[]", cap)
    n = _check(lib.pcp_pdu_decode_pmns_ids(pdu, len(pdu), sts, cap, ids))
    return sts[0], ffi.unpack(ids, n)


def decode_pmns_names(pdu: bytes,
                      scratch: Optional[Scratch] = None) -> Tuple[List[bytes], Optional[List[int]]]:
    cap = max((len(pdu) - 24) // 4, 1)
    if scratch is not None:
        has_status = scratch.int_p[0]
        status, off, nlen, cap = scratch.names_arrays(cap)
    else:
        has_status = ffi.new("int32_t *")
        status, off, nlen = _listing_arrays(cap)
    n = _check(lib.pcp_pdu_decode_pmns_names(pdu, len(pdu), cap, has_status, status, off, nlen))
    return names_at(pdu, off, nlen, n), (ffi.unpack(status, n) if has_status[0] else None)


class LabelSetData:
    """One decoded label set: the JSON text and its labels (offsets into the text)."""

    __slots__ = ("inst", "nlabels", "json", "labels")

    def __init__(self, inst: int, nlabels: int, json: bytes,
                 labels: List[Tuple[int, int, int, int, int]]) -> None:
        self.inst = inst
        self.nlabels = nlabels
        self.json = json
        self.labels = labels  # (name, namelen, flags, value, valuelen)


def decode_labels(pdu: bytes) -> Tuple[int, int, List[LabelSetData]]:
    set_cap = max((len(pdu) - 28) // 16, 1)
    label_cap = max((len(pdu) - 28) // 8, 1)
    ident = ffi.new("int32_t *")
    type_ = ffi.new("int32_t *")
    sets = ffi.new("pcp_labelset[]", set_cap)
    labels = ffi.new("pcp_label[]", label_cap)
    n = _check(lib.pcp_pdu_decode_labels(pdu, len(pdu), ident, type_, set_cap, sets, label_cap,
                                         labels))
    # the C arrays read as rows of plain ints in one call each, not a cdata read per field
    rows = list(_struct.iter_unpack(_LABELSET_ROW, ffi.buffer(sets, n * _LABELSET_SIZE)))
    used = max((first + max(nlabels, 0) for _, nlabels, _, _, first in rows), default=0)
    label_rows = list(_struct.iter_unpack(_LABEL_ROW, ffi.buffer(labels, used * _LABEL_SIZE)))
    out = []
    for inst, nlabels, json_off, json_len, first in rows:
        out.append(LabelSetData(inst, nlabels, pdu[json_off:json_off + json_len],
                                label_rows[first:first + max(nlabels, 0)]))
    return ident[0], type_[0], out


# csrc/pdu.h's pcp_labelset (inst, nlabels, json_off, json_len, first) and pcp_label
# (name, namelen, flags, value, valuelen) as struct formats, checked against the C sizes
_LABELSET_ROW, _LABEL_ROW = "=iiIii", "=5I"
_LABELSET_SIZE, _LABEL_SIZE = ffi.sizeof("pcp_labelset"), ffi.sizeof("pcp_label")
if (_struct.calcsize(_LABELSET_ROW), _struct.calcsize(_LABEL_ROW)) != (_LABELSET_SIZE, _LABEL_SIZE):
    raise ImportError("pcp_labelset / pcp_label are not laid out as pcp._decode.pdu reads them")


def decode_attr(pdu: bytes) -> Tuple[int, bytes]:
    attr = ffi.new("int32_t *")
    off = ffi.new("uint32_t *")
    vlen = ffi.new("int32_t *")
    _check(lib.pcp_pdu_decode_attr(pdu, len(pdu), attr, off, vlen))
    return attr[0], pdu[off[0]:off[0] + vlen[0]]
