"""Python half of csrc/pdu_agent.c: pmcd's requests decoded, a PMDA's replies encoded."""
from __future__ import annotations

TYPE_CHECKING = False      # typing's, without importing typing (a LOCAL context's start-up)
if TYPE_CHECKING:
    from typing import Any, List, Optional, Sequence, Tuple

from pcp._core.errors import pmErr
from pcp._core.native import ffi, lib
from pcp._core import wire
from pcp._decode.pdu import _encode   # the one sizing-then-writing runner of C encoders

FROM_ANON = 0


class Request:
    """The fixed fields of one request from pmcd (see pcp_agent_request in pdu_agent.h)."""

    __slots__ = ("pdu", "type", "sender", "ident", "a", "b", "c", "name")

    def __init__(self, pdu: bytes) -> None:
        req = ffi.new("pcp_agent_request *")
        sts = lib.pcp_agent_decode_request(pdu, len(pdu), req)
        if sts < 0:
            raise pmErr(sts)
        self.pdu = pdu
        self.type = req.type
        self.sender = req.sender
        self.ident = req.ident
        self.a = req.a
        self.b = req.b
        self.c = req.c
        self.name: Optional[bytes] = (pdu[req.name_off:req.name_off + req.name_len]
                                      if req.name_len > 0 else None)


def decode_fetch(req: Request) -> List[int]:
    pmids = ffi.new("uint32_t[]", req.b)
    n = lib.pcp_agent_decode_fetch(req.pdu, len(req.pdu), req.b, pmids)
    if n < 0:
        raise pmErr(n)
    return list(pmids[0:n])


def decode_profile(req: Request) -> Tuple[int, List[Tuple[int, int, List[int]]]]:
    """(global state, [(indom, state, instances)])."""
    g_state = ffi.new("int32_t *")
    n, total = req.b, req.c
    indoms = ffi.new("uint32_t[]", max(n, 1))
    states = ffi.new("int32_t[]", max(n, 1))
    numinst = ffi.new("int32_t[]", max(n, 1))
    insts = ffi.new("int32_t[]", max(total, 1))
    sts = lib.pcp_agent_decode_profile(req.pdu, len(req.pdu), g_state, n, indoms, states,
                                       numinst, total, insts)
    if sts < 0:
        raise pmErr(sts)
    entries = []
    at = 0
    for i in range(n):
        entries.append((indoms[i], states[i], list(insts[at:at + numinst[i]])))
        at += numinst[i]
    return g_state[0], entries


def decode_names(pdu: bytes) -> List[bytes]:
    from pcp._decode.pdu import decode_pmns_names
    return decode_pmns_names(pdu)[0]


def encode_creds(sender: int, flags: int) -> bytes:
    return _encode(lib.pcp_pdu_encode_creds, sender, flags)


def encode_error(code: int) -> bytes:
    return _encode(lib.pcp_agent_encode_error, FROM_ANON, code)


def encode_desc(pmid: int, type_: int, indom: int, sem: int, units: int) -> bytes:
    return _encode(lib.pcp_agent_encode_desc, FROM_ANON, pmid, type_, indom, sem, units)


def encode_instance(indom: int, insts: Sequence[int], names: Sequence[bytes]) -> bytes:
    lens = [len(n) for n in names]
    return _encode(lib.pcp_agent_encode_instance, FROM_ANON, indom, len(insts),
                   ffi.new("int32_t[]", list(insts) or [0]), b"".join(names),
                   ffi.new("int32_t[]", lens or [0]))


def encode_text(ident: int, text: bytes) -> bytes:
    return _encode(lib.pcp_agent_encode_text, FROM_ANON, ident, text, len(text))


def encode_ids(sts: int, pmid: int) -> bytes:
    return _encode(lib.pcp_pdu_encode_ids, FROM_ANON, wire.PDU_PMNS_IDS, sts, 1,
                   ffi.new("uint32_t[1]", [pmid]))


def encode_names(names: Sequence[bytes], status: Optional[Sequence[int]]) -> bytes:
    lens = ffi.new("int32_t[]", [len(n) for n in names] or [0])
    st = ffi.new("int32_t[]", list(status) or [0]) if status is not None else ffi.NULL
    return _encode(lib.pcp_agent_encode_names, FROM_ANON, len(names), b"".join(names), lens, st)


def encode_labels(ident: int, type_: int,
                  sets: Sequence[Tuple[int, int, bytes, Sequence[Tuple[int, int, int, int, int]]]]
                  ) -> bytes:
    """sets: (inst, nlabels, json, [(name, namelen, flags, value, valuelen)])."""
    inst, nlab, first, joff, jlen = [], [], [], [], []
    cols: List[List[int]] = [[], [], [], [], []]
    json = bytearray()
    for set_inst, count, text, labels in sets:
        inst.append(set_inst)
        nlab.append(count)
        first.append(len(cols[0]))
        joff.append(len(json))
        jlen.append(len(text))
        json += text
        for label in labels:
            for col, value in zip(cols, label):
                col.append(value)
    n = len(sets)
    total = len(cols[0])
    return _encode(lib.pcp_agent_encode_labels, FROM_ANON, ident, type_, n,
                   ffi.new("int32_t[]", inst or [0]), ffi.new("int32_t[]", nlab or [0]),
                   ffi.new("int32_t[]", first or [0]), ffi.new("uint32_t[]", joff or [0]),
                   ffi.new("int32_t[]", jlen or [0]), bytes(json), len(json),
                   ffi.new("uint16_t[]", cols[0] or [0]), ffi.new("uint8_t[]", cols[1] or [0]),
                   ffi.new("uint8_t[]", cols[2] or [0]), ffi.new("uint16_t[]", cols[3] or [0]),
                   ffi.new("uint16_t[]", cols[4] or [0]), total)


def encode_result(stamp: int, pmids: Sequence[int], numval: Sequence[int],
                  vtype: Sequence[int], inst: Any, values: Any, slen: Sequence[int],
                  payload: bytes) -> bytes:
    """A FETCH's RESULT. numval and vtype are per set. inst holds every value's
    instance as int32 in host order (an array.array("i") or its bytes); values every
    numeric value, set after set, 4 or 8 bytes each by its set's type in host order
    (array.array typecodes i, I, f or q, Q, d); slen the length of each STRING value,
    whose texts are payload back to back. The C encoder checks every column's length."""
    args = (FROM_ANON, stamp, len(pmids), ffi.new("uint32_t[]", list(pmids) or [0]),
            ffi.new("int32_t[]", list(numval) or [0]), ffi.new("int32_t[]", list(vtype) or [0]),
            ffi.from_buffer("int32_t[]", inst), memoryview(inst).nbytes // 4,
            ffi.from_buffer(values), memoryview(values).nbytes,
            ffi.new("uint32_t[]", list(slen) or [0]), len(slen), payload, len(payload))
    return _encode(lib.pcp_agent_encode_result, *args)
