"""Unit tests of the C core through pcp._native: decoders and encoders against the live
hex dumps of docs/protocol.md section 11, hostile variants of those PDUs, and random
bytes (hypothesis). Every input is copied into an exact-size cffi array, so a run
under .ci/sanitize.sh (ASan + UBSan) catches any read outside the PDU."""
import math
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcp._native import ffi, lib

PM_ERR_IPC = -12366
PM_ERR_LOGREC = -12373
PM_ERR_NAME = -12357
PM_ERR_NOAGENT = -12386
PM_ERR_PMID = -12358
PM_ERR_APPVERSION = -12350
PM_ERR_TOOSMALL = -12443
PM_ERR_TOOBIG = -12444
PM_ERR_VALUE = -12351
PM_ERR_CONV = -12362
PM_ERR_TYPE = -12397
PM_ID_NULL = 0xFFFFFFFF
PM_IN_NULL = -1
# result.h: the valfmt reported for a set with numval <= 0 (none on the wire)
NO_VALFMT = 0
PDU_MAX_LEN = 0x7FFFFFFF - 1024

PDU = {
    "ERROR": 0x7000, "RESULT": 0x7001, "PROFILE": 0x7002, "FETCH": 0x7003,
    "DESC_REQ": 0x7004, "DESC": 0x7005, "INSTANCE_REQ": 0x7006, "INSTANCE": 0x7007,
    "TEXT_REQ": 0x7008, "TEXT": 0x7009, "CREDS": 0x700C, "PMNS_IDS": 0x700D,
    "PMNS_NAMES": 0x700E, "PMNS_CHILD": 0x700F, "PMNS_TRAVERSE": 0x7010, "ATTR": 0x7011,
    "LABEL_REQ": 0x7012, "LABEL": 0x7013, "HIGHRES_FETCH": 0x7014,
    "HIGHRES_RESULT": 0x7015, "DESC_IDS": 0x7016, "DESCS": 0x7017,
}


def h(text: str) -> bytes:
    return bytes.fromhex("".join(text.replace("|", " ").split()))


def be(*words: int) -> bytes:
    return b"".join(struct.pack(">I", w & 0xFFFFFFFF) for w in words)


def pdu(ptype: int, body: bytes, from_: int = 0) -> bytes:
    return be(12 + len(body), ptype, from_) + body


def patch(data: bytes, off: int, word: int) -> bytes:
    return data[:off] + be(word) + data[off + 4:]


def reframe(data: bytes) -> bytes:
    """The same bytes with the length word set to their actual length."""
    return patch(data, 0, len(data)) if len(data) >= 4 else data


def cbuf(data: bytes):
    """Exact-size copy: ASan sees any access past the last byte."""
    return ffi.new("uint8_t[]", data) if data else ffi.new("uint8_t[]", 0)


# ---- the live dumps (protocol.md section 11) -------------------------------------

GREETING = h("00000014 00007000 00000000 00000000 02010e44")
CREDS = h("00000014 0000700c 0000335f 00000001 01020000")
CREDS_CONTAINER = h("00000014 0000700c 000034f0 00000001 01020040")
ATTR_CONTAINER = h("00000013 00007011 00000000 0000000f 666f6f")
ATTR_SASL_S2C = h(
    "00000029 00007011 00000000 00000000 504c4149 4e204c4f 47494e20 53435241"
    "4d2d5348 412d3235 36")
ATTR_SASL_C2S = h(
    "00000032 00007011 00000000 00000000 504c4149 4e006e6f 73756368 75736572"
    "006e6f73 75636875 73657200 73656372 6574")
ERROR_SASL = h("00000010 00007000 00000000 ffffac8c")
PMNS_NAMES_ONE = h(
    "00000030 0000700e 00000000 00000014 00000000 00000001 00000013 73616d70"
    "6c652e73 7472696e 672e6875 6c6c6f7e")
PMNS_IDS_ONE = h("00000018 0000700d 00000000 00000001 00000001 0740001f")
PMNS_NAMES_THREE = h(
    "00000058 0000700e 00000000 00000031 00000000 00000003 0000000f 73616d70"
    "6c652e6c 6f6e672e 6f6e657e 0000000e 6e6f2e73 7563682e 6d657472 69637e7e"
    "00000011 73616d70 6c652e64 6f75626c 652e6f6e 657e7e7e")
PMNS_IDS_PARTIAL = h(
    "00000020 0000700d 00000000 00000002 00000003 0740000a ffffffff 07400019")
PROFILE_EMPTY = h("0000001c 00007002 00000000 00000000 00000000 00000000 00000000")
PROFILE_RED_BLUE = h(
    "00000034 00007002 00000000 | 00000000 00000000 00000001 00000000 |"
    "07400001 00000001 00000002 00000000 | 00000000 00000002")
HIGHRES_FETCH = h(
    "00000020 00007014 00000000 00000000 00000000 00000000 00000001 0740001f")
HIGHRES_RESULT = h(
    "00000048 00007015 00000000 00000001 00000000 6b0101dd 00000000 2309e47a"
    "0740001f 00000001 00000001 ffffffff 0000000d 06000011 68756c6c 6f20776f"
    "726c6421 007e7e7e")
FETCH = h("00000024 00007003 00000000 00000000 00000000 00000000 00000002 0740001f"
          "07400005")
RESULT = h(
    "00000064 00007001 00000000 6b01024b 0002cb1d 00000002 0740001f 00000001"
    "00000001 ffffffff 00000014 07400005 00000003 00000000 00000000 00000069"
    "00000001 000000ce 00000002 00000133 06000011 68756c6c 6f20776f 726c6421"
    "007e7e7e")
PMNS_NAMES_UNKNOWN = h(
    "0000002c 0000700e 00000000 0000000f 00000000 00000001 0000000e") + b"no.such.metric~~"
ERROR_NAME = h("00000010 00007000 00000000 ffffcfbb")
RESULT_ERRORS = h(
    "00000044 00007001 00000000 6b010205 0002ba89 00000004 0740000a 00000001"
    "00000000 ffffffff 00000001 0740ffff 00000000 0c800001 ffffcf9e ffffffff"
    "ffffcf9e")
LABEL_REQ = h("00000014 00007012 00000000 ffffffff 00000001")
# 11.5 elides most of the JSON; the machineid here is a stand-in of the live length.
LABEL_JSON = (b'{"domainname":"localdomain","hostname":"vm",'
              b'"machineid":"3d120123456789abcdef01234567fda4"}')
LABEL = h(
    "0000009f 00007013 00000000 ffffffff 00000001 00000000 00000001 ffffffff"
    "00000003 00000044 0000005b 00020a01 000e000d 001d0801 00270004 002d0901"
    "00380022") + LABEL_JSON
STORE_INSITU = h(
    "0000002c 00007001 00000000 6b0101e8 00015ad0 00000001 07400024 00000001"
    "00000000 ffffffff 0000002a")
STORE_OK = h("00000010 00007000 00000000 00000000")
STORE_DOUBLE = h(
    "00000038 00007001 00000000 | 00000000 00000000 00000001 | 0740001d 00000001"
    "00000001 ffffffff 0000000b | 0500000c 400c0000 00000000")

# Built from the section 5 layouts (no dump in section 11).
DESCS_PARTIAL = pdu(PDU["DESCS"], be(3)
                    + be(0x0740000A, 1, PM_ID_NULL, 3, 0)
                    + be(PM_ID_NULL, 0, 0, 0, 0)
                    + be(0x07400005, 0, 0x07400001, 3, 0x0F103000))
DESC = pdu(PDU["DESC"], be(0x0740001F, 6, PM_ID_NULL, 4, 0))
INSTANCE = pdu(PDU["INSTANCE"], be(0x07400001, 3) + be(0, 3) + b"red\0" + be(1, 5)
               + b"green\0\0\0" + be(2, 4) + b"blue")
TEXT = pdu(PDU["TEXT"], h("05004007") + be(12) + b"Hello world!")
PMNS_NAMES_STATUS = pdu(PDU["PMNS_NAMES"], be(8, 2, 2) + be(0, 3) + b"foo~" + be(1, 3)
                        + b"bar~")


def highres_types() -> bytes:
    """HIGHRES_RESULT with the value blocks of 11.3, the INSITU ulong, numval 0 and
    two per-metric errors."""
    blocks = [
        h("0200000c 00000000 00000001"),
        h("0500000c 3ff00000 00000000"),
        h("04000008 3f800000"),
        h("07000010") + b"hullo world!",
        h("06000005 007e7e7e"),
        h("07000004"),
    ]
    sets_len = len(blocks) * 20 + 20 + 24
    off = 32 + sets_len
    sets = b""
    for i, blk in enumerate(blocks):
        sets += be(0x07400010 + i, 1, 1, PM_IN_NULL, off // 4)
        off += len(blk)
    sets += h("0740005d 00000001 00000000 ffffffff 00000001")
    sets += be(0x07400070, 0) + be(0x07400071, 0xFFFFCFBA) + be(0x07400072, 0xFFFFCFC2)
    body = be(len(blocks) + 4, 0, 0x6B0101DD, 0, 0x2309E47A) + sets + b"".join(blocks)
    return be(12 + len(body), PDU["HIGHRES_RESULT"], 0) + body


HIGHRES_TYPES = highres_types()


# ---- thin wrappers over the C API ----------------------------------------------------

class Result:
    def __init__(self, data: bytes, numpmid: int, nvalues: int):
        self.data = data
        self.keep = {}
        self.c = ffi.new("pcp_result *")
        for name, ctype, n in [
                ("pmid", "uint32_t", numpmid), ("numval", "int32_t", numpmid),
                ("valfmt", "int32_t", numpmid), ("first", "int32_t", numpmid),
                ("inst", "int32_t", nvalues), ("vtype", "int32_t", nvalues),
                ("ival", "int64_t", nvalues), ("dval", "double", nvalues),
                ("boff", "uint32_t", nvalues), ("blen", "uint32_t", nvalues)]:
            arr = ffi.new(ctype + "[]", n)
            self.keep[name] = arr
            setattr(self.c, name, arr)

    def __getattr__(self, name):
        keep = self.__dict__["keep"]
        if name in keep:
            n = self.c.numpmid if name in ("pmid", "numval", "valfmt", "first") \
                else self.c.nvalues
            return list(keep[name][0:n])
        return getattr(self.__dict__["c"], name)

    def payload(self, k: int) -> bytes:
        return self.data[self.boff[k]:self.boff[k] + self.blen[k]]


RESULT_COLUMNS = ("pmid", "numval", "valfmt", "first", "inst", "vtype", "ival", "dval",
                  "boff", "blen")


def _decode_sized(data: bytes, highres: int, numpmid: int, nvalues: int,
                  walk=lib.pcp_result_pdu_decode_sized):
    """pcp_result_pdu_decode_sized (or `walk`: pcp_result_pdu_index_sized, its lazy form)
    into room for numpmid sets and nvalues values: (status, the counts it reports, the
    Result)."""
    res = Result(data, numpmid, nvalues)
    res.c.numpmid, res.c.nvalues = numpmid, nvalues
    counts = ffi.new("int32_t[2]", [-1, -1])
    sts = walk(cbuf(data), len(data), highres, res.c, counts, counts + 1)
    return sts, (counts[0], counts[1]), res


PER_SET = ("pmid", "numval", "valfmt", "first")
# what the index leaves in the per-value columns it does not fill (Result's are zeroed)
UNFILLED = b"\0"


def check_lazy_path(data: bytes, highres: int, res) -> None:
    """A live pmFetch's lazy path on the same bytes as the scan + decode that gave `res`
    (a Result, or the scan's negative status): pcp_result_pdu_index_sized checks exactly
    what the decoder checks (the same status, a resize asked for the same way) and fills
    only the per-set columns; pcp_result_pdu_fill_values then fills the per-value ones
    as the decoder does, leaving the per-set columns (a caller's to edit) alone."""
    index = lib.pcp_result_pdu_index_sized
    if not isinstance(res, Result):
        sts, counts, _ = _decode_sized(data, highres, 1, 1, index)
        if sts == 1:
            sts = _decode_sized(data, highres, *counts, index)[0]
        assert sts == res
        return
    sizes = (res.c.numpmid, res.c.nvalues)
    assert _decode_sized(data, highres, sizes[0], sizes[1] + 1, index)[:2] == (1, sizes)
    sts, counts, lazy = _decode_sized(data, highres, *sizes, index)
    assert (sts, counts) == (0, sizes)
    assert (lazy.sec, lazy.nsec) == (res.sec, res.nsec)
    for name in RESULT_COLUMNS:
        got = ffi.buffer(lazy.keep[name])[:]
        if name in PER_SET:
            assert got == ffi.buffer(res.keep[name])[:], name
        else:
            assert got.strip(UNFILLED) == b"", name         # untouched
    if sizes[0] > 0:
        lazy.keep["numval"][0] = 0              # a caller's edit: kept by the fill
    lazy.c.sec = lazy.c.nsec = 7
    assert lib.pcp_result_pdu_fill_values(cbuf(data), len(data), highres, lazy.c) == 0
    assert (lazy.sec, lazy.nsec) == (7, 7)
    for name in RESULT_COLUMNS:       # as bytes: a NaN equals itself
        if name != "numval":
            assert ffi.buffer(lazy.keep[name])[:] == ffi.buffer(res.keep[name])[:], name
    assert lazy.numval[1:] == res.numval[1:]
    if sizes[0] > 0:
        assert lazy.numval[0] == 0
    # other bytes than those indexed: refused, never a read outside them
    if len(data) > 12:
        assert lib.pcp_result_pdu_fill_values(cbuf(data[:-4]), len(data) - 4, highres,
                                              lazy.c) == PM_ERR_IPC


def decode_result(data: bytes, highres: int):
    """Scan + decode; returns a Result, or the negative status of the scan. The one-walk
    decoder of a fetch loop is checked against them on the same bytes: the same status,
    a resize asked for when its room is another size, the same columns when it fits."""
    buf = cbuf(data)
    numpmid = ffi.new("int32_t *", -1)
    nvalues = ffi.new("int32_t *", -1)
    sts = lib.pcp_result_pdu_scan(buf, len(data), highres, numpmid, nvalues)
    if sts < 0:
        # as FlatResult.from_pdu uses it: a resize asked for (the value sets counted
        # before the blocks are checked), then the same refusal as the scan's
        sized_sts, counts, _ = _decode_sized(data, highres, 1, 1)
        if sized_sts == 1:
            sized_sts = _decode_sized(data, highres, *counts)[0]
        assert sized_sts == sts
        check_lazy_path(data, highres, sts)
        return sts
    assert sts == 0
    res = Result(data, numpmid[0], nvalues[0])
    sts = lib.pcp_result_pdu_decode(buf, len(data), highres, res.c)
    assert sts == 0
    sizes = (numpmid[0], nvalues[0])
    assert _decode_sized(data, highres, numpmid[0], nvalues[0] + 1)[:2] == (1, sizes)
    if numpmid[0] > 0:
        assert _decode_sized(data, highres, numpmid[0] - 1, nvalues[0])[:2] == (1, sizes)
    sts, counts, sized = _decode_sized(data, highres, numpmid[0], nvalues[0])
    assert (sts, counts) == (0, sizes)
    assert (sized.sec, sized.nsec) == (res.sec, res.nsec)
    for name in RESULT_COLUMNS:       # as bytes: a NaN equals itself
        assert ffi.buffer(sized.keep[name])[:] == ffi.buffer(res.keep[name])[:], name
    check_lazy_path(data, highres, res)
    return res


def decode_valuesets(data: bytes, sets_off: int, numpmid: int, block_base: int, bad: int):
    buf = cbuf(data)
    layout = ffi.new("pcp_sets_layout *", {"sets_off": sets_off, "numpmid": numpmid,
                                            "block_base": block_base})
    nvalues = ffi.new("int32_t *", -1)
    sts = lib.pcp_result_valuesets_scan(buf, len(data), layout, bad, nvalues)
    if sts < 0:
        return sts
    res = Result(data, numpmid, nvalues[0])
    assert lib.pcp_result_valuesets_decode(buf, len(data), layout, bad, res.c) == 0
    return res


def check_result_sane(res: Result):
    """Invariants of any successful decode."""
    n = len(res.data)
    k = 0
    for i in range(res.numpmid):
        assert res.first[i] == k
        if res.numval[i] <= 0:
            assert res.valfmt[i] == NO_VALFMT
            continue
        assert res.valfmt[i] in (0, 1, 2)
        for _ in range(res.numval[i]):
            if res.valfmt[i] == 0:
                assert res.vtype[k] == -1
            else:
                assert 0 <= res.vtype[k] <= 255
                assert 4 <= res.boff[k] <= n and res.boff[k] + res.blen[k] <= n
            k += 1
    assert k == res.nvalues


def header(data: bytes):
    t = ffi.new("int32_t *")
    f = ffi.new("int32_t *")
    r = lib.pcp_pdu_header(cbuf(data), len(data), t, f)
    return (r, t[0], f[0]) if r >= 0 else r


def dec_error(data: bytes):
    code = ffi.new("int32_t *")
    datum = ffi.new("uint32_t *")
    r = lib.pcp_pdu_decode_error(cbuf(data), len(data), code, datum)
    return (code[0], datum[0]) if r == 0 else r


def dec_desc(data: bytes):
    d = ffi.new("pcp_desc *")
    r = lib.pcp_pdu_decode_desc(cbuf(data), len(data), d)
    return (d.pmid, d.type, d.indom, d.sem, d.units) if r == 0 else r


def dec_descs(data: bytes, expected=None):
    if expected is None:
        expected = max(0, (len(data) - 16) // 20)
    out = ffi.new("pcp_desc[]", expected)
    r = lib.pcp_pdu_decode_descs(cbuf(data), len(data), expected, out)
    if r < 0:
        return r
    return [(d.pmid, d.type, d.indom, d.sem, d.units) for d in out[0:r]]


def _room(n: int, fixed: int, per: int) -> int:
    return max(0, (n - fixed) // per)


def dec_instance(data: bytes, cap=None):
    cap = _room(len(data), 20, 8) if cap is None else cap
    indom = ffi.new("uint32_t *")
    inst = ffi.new("int32_t[]", cap)
    off = ffi.new("uint32_t[]", cap)
    nlen = ffi.new("int32_t[]", cap)
    r = lib.pcp_pdu_decode_instance(cbuf(data), len(data), indom, cap, inst, off, nlen)
    if r < 0:
        return r
    for i in range(r):
        assert nlen[i] >= 0 and off[i] + nlen[i] <= len(data)
    return indom[0], [(inst[i], data[off[i]:off[i] + nlen[i]]) for i in range(r)]


def dec_text(data: bytes):
    off = ffi.new("uint32_t *")
    tlen = ffi.new("int32_t *")
    r = lib.pcp_pdu_decode_text(cbuf(data), len(data), off, tlen)
    if r < 0:
        return r
    assert tlen[0] >= 0 and off[0] + tlen[0] <= len(data)
    return data[off[0]:off[0] + tlen[0]]


def dec_pmns_ids(data: bytes, cap=None):
    cap = _room(len(data), 20, 4) if cap is None else cap
    sts = ffi.new("int32_t *")
    ids = ffi.new("uint32_t[]", cap)
    r = lib.pcp_pdu_decode_pmns_ids(cbuf(data), len(data), sts, cap, ids)
    return (sts[0], list(ids[0:r])) if r >= 0 else r


def dec_pmns_names(data: bytes, cap=None):
    cap = _room(len(data), 24, 4) if cap is None else cap
    has = ffi.new("int32_t *")
    status = ffi.new("int32_t[]", cap)
    off = ffi.new("uint32_t[]", cap)
    nlen = ffi.new("int32_t[]", cap)
    r = lib.pcp_pdu_decode_pmns_names(cbuf(data), len(data), cap, has, status, off, nlen)
    if r < 0:
        return r
    for i in range(r):
        assert nlen[i] >= 0 and off[i] + nlen[i] <= len(data)
    names = [data[off[i]:off[i] + nlen[i]] for i in range(r)]
    return names, (list(status[0:r]) if has[0] else None)


def dec_labels(data: bytes, set_cap=None, label_cap=None):
    set_cap = _room(len(data), 28, 16) if set_cap is None else set_cap
    label_cap = _room(len(data), 28, 8) if label_cap is None else label_cap
    ident = ffi.new("int32_t *")
    typ = ffi.new("int32_t *")
    sets = ffi.new("pcp_labelset[]", set_cap)
    labels = ffi.new("pcp_label[]", label_cap)
    r = lib.pcp_pdu_decode_labels(cbuf(data), len(data), ident, typ, set_cap, sets,
                                  label_cap, labels)
    if r < 0:
        return r
    out = []
    for s in sets[0:r]:
        assert s.json_len >= 0 and s.json_off + s.json_len <= len(data)
        json = data[s.json_off:s.json_off + s.json_len]
        items = []
        for lab in labels[s.first:s.first + max(s.nlabels, 0)]:
            assert lab.name + lab.namelen <= s.json_len
            assert lab.value + lab.valuelen <= s.json_len
            items.append((json[lab.name:lab.name + lab.namelen], lab.flags,
                          json[lab.value:lab.value + lab.valuelen]))
        out.append((s.inst, s.nlabels, s.json_off, json, items))
    return ident[0], typ[0], out


def dec_attr(data: bytes):
    attr = ffi.new("int32_t *")
    off = ffi.new("uint32_t *")
    vlen = ffi.new("int32_t *")
    r = lib.pcp_pdu_decode_attr(cbuf(data), len(data), attr, off, vlen)
    if r < 0:
        return r
    assert off[0] + vlen[0] == len(data)
    return attr[0], data[off[0]:off[0] + vlen[0]]


DECODERS = {
    "ERROR": dec_error, "DESC": dec_desc, "DESCS": dec_descs, "INSTANCE": dec_instance,
    "TEXT": dec_text, "PMNS_IDS": dec_pmns_ids, "PMNS_NAMES": dec_pmns_names,
    "LABEL": dec_labels, "ATTR": dec_attr,
    "RESULT": lambda d: decode_result(d, 0),
    "HIGHRES_RESULT": lambda d: decode_result(d, 1),
}

# Every server PDU with a decoder, by decoder.
SERVER_PDUS = [
    ("ERROR", GREETING), ("ERROR", ERROR_NAME), ("ERROR", ERROR_SASL), ("ERROR", STORE_OK),
    ("PMNS_IDS", PMNS_IDS_ONE), ("PMNS_IDS", PMNS_IDS_PARTIAL),
    ("RESULT", RESULT), ("RESULT", RESULT_ERRORS), ("RESULT", STORE_INSITU),
    ("RESULT", STORE_DOUBLE), ("HIGHRES_RESULT", HIGHRES_RESULT),
    ("HIGHRES_RESULT", HIGHRES_TYPES), ("LABEL", LABEL), ("DESCS", DESCS_PARTIAL),
    ("DESC", DESC), ("INSTANCE", INSTANCE), ("TEXT", TEXT), ("PMNS_NAMES", PMNS_NAMES_ONE),
    ("PMNS_NAMES", PMNS_NAMES_THREE), ("PMNS_NAMES", PMNS_NAMES_STATUS),
    ("ATTR", ATTR_SASL_S2C), ("ATTR", ATTR_CONTAINER),
]
SERVER_IDS = [f"{name}-{i}" for i, (name, _) in enumerate(SERVER_PDUS)]


def is_ok(value) -> bool:
    return not (isinstance(value, int) and value < 0)


# ---- decoders on the live dumps ------------------------------------------------------

def test_header_greeting():
    assert header(GREETING) == (20, 0x7000, 0)
    assert header(CREDS) == (20, 0x700C, 0x335F)


@pytest.mark.parametrize("data", [
    b"", GREETING[:11], be(11, 0x7000, 0), be(0, 0x7000, 0), be(0xFFFFFFFF, 0x7000, 0),
    be(PDU_MAX_LEN + 1, 0x7000, 0), be(20, 0x80000000, 0)])
def test_header_rejects(data):
    assert header(data) == PM_ERR_IPC


def test_header_limits():
    assert header(be(12, 0, 0)) == (12, 0, 0)
    assert header(be(PDU_MAX_LEN, 0x7001, 7)) == (PDU_MAX_LEN, 0x7001, 7)


def test_greeting():
    code, datum = dec_error(GREETING)
    assert code == 0 and datum == 0x02010E44
    assert (datum >> 24) & 0x7F == 2 and (datum >> 16) & 0xFF == 1
    assert datum & 0xFFFF == 0x0E44


def test_error_codes():
    assert dec_error(ERROR_NAME) == (PM_ERR_NAME, 0)
    assert dec_error(ERROR_SASL) == (-21364, 0)
    assert dec_error(STORE_OK) == (0, 0)


def test_pmns_ids():
    assert dec_pmns_ids(PMNS_IDS_ONE) == (1, [0x0740001F])
    assert dec_pmns_ids(PMNS_IDS_PARTIAL) == (2, [0x0740000A, PM_ID_NULL, 0x07400019])


def test_result_string_and_colour():
    r = decode_result(RESULT, 0)
    assert (r.sec, r.nsec) == (0x6B01024B, 0x2CB1D * 1000)
    assert (r.numpmid, r.nvalues) == (2, 4)
    assert r.pmid == [0x0740001F, 0x07400005]
    assert r.numval == [1, 3]
    assert r.valfmt == [1, 0]
    assert r.first == [0, 1]
    assert r.inst == [PM_IN_NULL, 0, 1, 2]
    assert r.vtype == [6, -1, -1, -1]
    assert r.ival == [0, 105, 206, 307]
    assert (r.boff[0], r.blen[0]) == (0x54, 13)
    assert r.payload(0) == b"hullo world!\0"
    assert r.boff[1:] == [0, 0, 0] and r.blen[1:] == [0, 0, 0]
    check_result_sane(r)


def test_highres_result_string():
    r = decode_result(HIGHRES_RESULT, 1)
    assert (r.sec, r.nsec) == (0x6B0101DD, 0x2309E47A)
    assert (r.numpmid, r.nvalues) == (1, 1)
    assert r.pmid == [0x0740001F] and r.valfmt == [1] and r.inst == [PM_IN_NULL]
    assert r.vtype == [6] and r.boff == [0x38] and r.blen == [13]
    assert r.payload(0) == b"hullo world!\0"


def test_result_decode_into_bound_block():
    """pcp_result_bind: one pcp_result_mem_size() block, as the Python layer uses it."""
    for data, highres in ((RESULT, 0), (HIGHRES_TYPES, 1), (RESULT_ERRORS, 0)):
        ref = decode_result(data, highres)
        size = lib.pcp_result_mem_size(ref.numpmid, ref.nvalues)
        assert size >= 32 * ref.nvalues + 16 * ref.numpmid
        mem = ffi.new("uint8_t[]", size)
        out = ffi.new("pcp_result *")
        lib.pcp_result_bind(out, mem, ref.numpmid, ref.nvalues)
        assert lib.pcp_result_pdu_decode(cbuf(data), len(data), highres, out) == 0
        np_, nv = ref.numpmid, ref.nvalues
        assert list(out.pmid[0:np_]) == ref.pmid and list(out.numval[0:np_]) == ref.numval
        assert list(out.first[0:np_]) == ref.first and list(out.valfmt[0:np_]) == ref.valfmt
        assert list(out.inst[0:nv]) == ref.inst and list(out.vtype[0:nv]) == ref.vtype
        assert list(out.ival[0:nv]) == ref.ival and list(out.boff[0:nv]) == ref.boff
        assert list(out.blen[0:nv]) == ref.blen
        assert [x for x in out.dval[0:nv]] == ref.dval


def test_result_layouts_are_not_interchangeable():
    assert decode_result(RESULT, 1) == PM_ERR_IPC
    assert decode_result(HIGHRES_RESULT, 0) == PM_ERR_IPC


def test_highres_result_all_types():
    r = decode_result(HIGHRES_TYPES, 1)
    assert (r.numpmid, r.nvalues) == (10, 7)
    assert r.numval == [1] * 7 + [0, PM_ERR_PMID, PM_ERR_APPVERSION]
    assert r.valfmt == [1] * 6 + [0] + [NO_VALFMT] * 3
    assert r.vtype == [2, 5, 4, 7, 6, 7, -1]
    assert r.ival[0] == 1 and r.dval[1] == 1.0 and r.dval[2] == 1.0
    assert r.payload(3) == b"hullo world!" and r.blen[3] == 12
    assert r.payload(4) == b"\0" and r.blen[4] == 1
    assert r.blen[5] == 0
    assert r.ival[6] == 1 and r.inst[6] == PM_IN_NULL
    assert r.first == [0, 1, 2, 3, 4, 5, 6, 7, 7, 7]
    check_result_sane(r)


def test_result_per_metric_errors():
    r = decode_result(RESULT_ERRORS, 0)
    assert (r.sec, r.nsec) == (0x6B010205, 0x2BA89 * 1000)
    assert r.pmid == [0x0740000A, 0x0740FFFF, 0x0C800001, PM_ID_NULL]
    assert r.numval == [1, 0, PM_ERR_NOAGENT, PM_ERR_NOAGENT]
    assert r.valfmt == [0] + [NO_VALFMT] * 3
    assert r.nvalues == 1 and r.inst == [PM_IN_NULL] and r.ival == [1]
    assert r.first == [0, 1, 1, 1]


def test_store_pdus_decode():
    r = decode_result(STORE_INSITU, 0)
    assert r.pmid == [0x07400024] and r.ival == [42] and r.vtype == [-1]
    r = decode_result(STORE_DOUBLE, 0)
    assert r.pmid == [0x0740001D] and r.vtype == [5] and r.dval == [3.5]
    assert r.boff == [48] and r.blen == [8]


def test_insitu_negative_value_sign_extends():
    r = decode_result(patch(STORE_INSITU, 40, 0xFFFFFFFE), 0)
    assert r.ival == [-2]


def test_numeric_blocks():
    def one_block(block: bytes) -> Result:
        body = be(0, 0) + be(1) + be(0x07400001, 1, 1, PM_IN_NULL, 11) + block
        return decode_result(pdu(PDU["RESULT"], body), 0)

    assert one_block(h("00000008 fffffffe")).ival == [-2]                   # 32
    assert one_block(h("01000008 fffffffe")).ival == [0xFFFFFFFE]           # U32
    assert one_block(h("0200000c ffffffff fffffffe")).ival == [-2]          # 64
    assert one_block(h("0300000c 80000000 00000000")).ival == [-(1 << 63)]  # U64 bits
    assert one_block(h("04000008 c0200000")).dval == [-2.5]                 # FLOAT
    assert math.isnan(one_block(h("04000008 7fc00000")).dval[0])
    assert one_block(h("0500000c 7ff00000 00000000")).dval == [math.inf]    # DOUBLE
    agg = one_block(h("ff000009 01020304 05000000"))                       # UNKNOWN type
    assert agg.vtype == [255] and agg.payload(0) == bytes([1, 2, 3, 4, 5])
    assert agg.ival == [0] and agg.dval == [0.0]


def test_labels_context():
    ident, typ, sets = dec_labels(LABEL)
    assert (ident, typ) == (-1, 1)
    assert len(sets) == 1
    inst, nlabels, json_off, json, items = sets[0]
    assert (inst, nlabels, json_off) == (PM_IN_NULL, 3, 0x44)
    assert json == LABEL_JSON and len(json) == 91
    assert items == [
        (b"domainname", 1, b'"localdomain"'),
        (b"hostname", 1, b'"vm"'),
        (b"machineid", 1, b'"3d120123456789abcdef01234567fda4"'),
    ]


def test_labels_instances_with_error_and_empty_sets():
    json = b'{"a":1}'
    sets = (be(0, 1, 0, len(json)) + be(0x00020101, 0x00050001)  # json offset patched
            + be(1, 0, 0, 0) + be(2, 0xFFFFCF9E, 0, 0))
    body = be(0x07400001, 0x20, 0, 3) + sets
    data = pdu(PDU["LABEL"], body + json)
    json_at = 12 + len(body)
    data = patch(data, 36, json_at)
    data = patch(data, 60, json_at)
    data = patch(data, 76, json_at)
    ident, typ, out = dec_labels(data)
    assert (ident, typ) == (0x07400001, 0x20)
    assert [(s[0], s[1]) for s in out] == [(0, 1), (1, 0), (2, PM_ERR_NOAGENT)]
    assert out[0][4] == [(b"a", 1, b"1")]


def test_descs_partial_failure():
    assert dec_descs(DESCS_PARTIAL, 3) == [
        (0x0740000A, 1, PM_ID_NULL, 3, 0),
        (PM_ID_NULL, 0, 0, 0, 0),
        (0x07400005, 0, 0x07400001, 3, 0x0F103000),
    ]
    assert dec_descs(DESCS_PARTIAL, 2) == PM_ERR_IPC
    assert dec_descs(DESCS_PARTIAL, 4) == PM_ERR_IPC


def test_desc():
    assert dec_desc(DESC) == (0x0740001F, 6, PM_ID_NULL, 4, 0)
    assert dec_desc(DESC + b"\0" * 4) == PM_ERR_IPC
    assert dec_desc(reframe(DESC + b"\0" * 4)) == PM_ERR_IPC


def test_instance():
    assert dec_instance(INSTANCE) == (0x07400001, [(0, b"red"), (1, b"green"), (2, b"blue")])
    assert dec_instance(INSTANCE, cap=2) == PM_ERR_IPC
    single = pdu(PDU["INSTANCE"], be(0x07400001, 1, PM_IN_NULL, 3) + b"red\0")
    assert dec_instance(single) == (0x07400001, [(PM_IN_NULL, b"red")])
    empty = pdu(PDU["INSTANCE"], be(0x07400001, 0))
    assert dec_instance(empty) == (0x07400001, [])


def test_text():
    assert dec_text(TEXT) == b"Hello world!"
    assert dec_text(pdu(PDU["TEXT"], be(0, 0))) == b""


def test_pmns_names_replies():
    assert dec_pmns_names(PMNS_NAMES_ONE) == ([b"sample.string.hullo"], None)
    assert dec_pmns_names(PMNS_NAMES_THREE) == (
        [b"sample.long.one", b"no.such.metric", b"sample.double.one"], None)
    assert dec_pmns_names(PMNS_NAMES_STATUS) == ([b"foo", b"bar"], [0, 1])
    assert dec_pmns_names(pdu(PDU["PMNS_NAMES"], be(0, 0, 0))) == ([], None)


def test_attr():
    assert dec_attr(ATTR_SASL_S2C) == (0, b"PLAIN LOGIN SCRAM-SHA-256")
    assert dec_attr(ATTR_CONTAINER) == (15, b"foo")
    assert dec_attr(pdu(PDU["ATTR"], be(5))) == (5, b"")


# ---- hostile variants -------------------------------------------------------------

@pytest.mark.parametrize("name,data", SERVER_PDUS, ids=SERVER_IDS)
def test_every_truncation_is_ipc(name, data):
    dec = DECODERS[name]
    assert is_ok(dec(data))
    for n in range(len(data)):
        assert dec(data[:n]) == PM_ERR_IPC, n


@pytest.mark.parametrize("name,data", SERVER_PDUS, ids=SERVER_IDS)
def test_every_reframed_truncation_is_safe(name, data):
    """Truncated with the length word fixed up: IPC, or a decode inside the bytes."""
    dec = DECODERS[name]
    for n in range(len(data)):
        r = dec(reframe(data[:n]))
        if isinstance(r, Result):
            check_result_sane(r)
        elif isinstance(r, int):
            assert r == PM_ERR_IPC


@pytest.mark.parametrize("name,data", SERVER_PDUS, ids=SERVER_IDS)
def test_length_word_beyond_data(name, data):
    dec = DECODERS[name]
    for extra in (1, 4, 0x10000, 0x7FFFFFFF - len(data)):
        assert dec(patch(data, 0, len(data) + extra)) == PM_ERR_IPC
    assert dec(patch(data, 0, 0xFFFFFFFF)) == PM_ERR_IPC
    # trailing bytes past the stated length
    assert dec(data + b"\0\0\0\0") == PM_ERR_IPC


@pytest.mark.parametrize("name,data", SERVER_PDUS, ids=SERVER_IDS)
def test_wrong_type_is_ipc(name, data):
    for other in DECODERS:
        if other != name:
            assert DECODERS[other](data) == PM_ERR_IPC


@pytest.mark.parametrize("numpmid", [0, 3, -1, 0x7FFFFFFF, 100, 13, 12])
def test_result_numpmid_out_of_range(numpmid):
    r = decode_result(patch(RESULT, 20, numpmid), 0)
    if numpmid == 0:
        # no sets: the bytes after the fixed part are unused, not an error
        assert isinstance(r, Result) and r.numpmid == 0 and r.nvalues == 0
    else:
        assert r == PM_ERR_IPC
    if numpmid != 0:
        assert decode_result(patch(HIGHRES_RESULT, 12, numpmid), 1) == PM_ERR_IPC


@pytest.mark.parametrize("numval", [4, 5, 7, 0x7FFFFFFF, 0x20000000, 0x1FFFFFFF])
def test_result_numval_out_of_range(numval):
    # set 1 (colour) has 3 values; more would run into the block or past the end
    assert decode_result(patch(RESULT, 0x30, numval), 0) == PM_ERR_IPC


def test_result_numval_of_dptr_set_too_big():
    assert decode_result(patch(RESULT, 0x1C, 2), 0) == PM_ERR_IPC
    assert decode_result(patch(HIGHRES_RESULT, 0x24, 2), 1) == PM_ERR_IPC


@pytest.mark.parametrize("valfmt", [3, 4, -1, 0x7FFFFFFF, 0x80000000])
def test_result_bad_valfmt(valfmt):
    assert decode_result(patch(RESULT, 0x20, valfmt), 0) == PM_ERR_IPC
    assert decode_result(patch(RESULT, 0x34, valfmt), 0) == PM_ERR_IPC


@pytest.mark.parametrize("word", [
    0, 1, 3, 6, 9, 10, 0x0E, 0x13,    # header, fixed part, inside the value sets
    0x15, 0x16, 0x17, 0x18,           # inside the block / in its filler / at the end
    25, 26, 0x40000000, 0x7FFFFFFF,   # past the end
    -1, -20, -0x80000000])
def test_result_dptr_offsets(word):
    data = patch(RESULT, 0x28, word)
    r = decode_result(data, 0)
    assert r == PM_ERR_IPC


def test_result_dptr_offset_into_sets_highres():
    for word in (0, 3, 8, 0x0C):
        assert decode_result(patch(HIGHRES_RESULT, 0x30, word), 1) == PM_ERR_IPC


@pytest.mark.parametrize("vlen", [0, 1, 2, 3])
def test_result_vlen_below_header(vlen):
    assert decode_result(patch(RESULT, 0x50, 0x06000000 | vlen), 0) == PM_ERR_IPC


@pytest.mark.parametrize("vlen", [21, 22, 0x64, 0xFFFFFF])
def test_result_vlen_beyond_pdu(vlen):
    assert decode_result(patch(RESULT, 0x50, 0x06000000 | vlen), 0) == PM_ERR_IPC
    # up to the end of the PDU (into the filler) is still inside the buffer
    r = decode_result(patch(RESULT, 0x50, 0x06000014), 0)
    assert r.blen == [16, 0, 0, 0]


@pytest.mark.parametrize("vtype,vlen", [
    (0, 4), (0, 7), (1, 7), (4, 4), (4, 7), (2, 11), (3, 8), (5, 4), (5, 11)])
def test_numeric_block_too_short(vtype, vlen):
    body = be(0, 0) + be(1) + be(0x07400001, 1, 1, PM_IN_NULL, 11) + \
        be((vtype << 24) | vlen) + b"\0" * 8
    assert decode_result(pdu(PDU["RESULT"], body), 0) == PM_ERR_IPC
    ok = be(0, 0) + be(1) + be(0x07400001, 1, 1, PM_IN_NULL, 11) + \
        be((vtype << 24) | (12 if vtype in (2, 3, 5) else 8)) + b"\0" * 8
    assert isinstance(decode_result(pdu(PDU["RESULT"], ok), 0), Result)


def test_result_negative_timestamp_fields_are_data():
    r = decode_result(patch(patch(RESULT, 12, 0xFFFFFFFF), 16, 0xFFFFFFFF), 0)
    assert (r.sec, r.nsec) == (-1, -1000)


# archive-style layout: a data record whose DPTR words count from 8 bytes before it

def as_record(data: bytes) -> bytes:
    return be(len(data) - 8) + data[12:]


def test_archive_record_decodes_like_the_pdu():
    rec = as_record(RESULT)
    r = decode_valuesets(rec, 16, 2, -8, PM_ERR_LOGREC)
    live = decode_result(RESULT, 0)
    for field in ("pmid", "numval", "valfmt", "first", "inst", "vtype", "ival", "blen"):
        assert getattr(r, field) == getattr(live, field)
    assert r.boff == [b - 8 for b in live.boff[:1]] + [0, 0, 0]
    assert r.payload(0) == b"hullo world!\0"
    r = decode_valuesets(as_record(HIGHRES_TYPES), 24, 10, -8, PM_ERR_LOGREC)
    assert r.vtype == [2, 5, 4, 7, 6, 7, -1]


@pytest.mark.parametrize("mutation", [
    (0x28 - 8, 0x0B),        # DPTR into the sets
    (0x28 - 8, 0x00),        # points before the record
    (0x28 - 8, 0x7FFFFFFF),  # far past the end
    (0x50 - 8, 0x06000003),  # vlen < 4
    (0x50 - 8, 0x060000FF),  # vlen past the end
    (0x34 - 8, 9),           # valfmt
    (0x30 - 8, 100),         # numval
])
def test_archive_record_hostile_gives_logrec(mutation):
    off, word = mutation
    rec = patch(as_record(RESULT), off, word)
    assert decode_valuesets(rec, 16, 2, -8, PM_ERR_LOGREC) == PM_ERR_LOGREC


def test_archive_layout_bounds():
    rec = as_record(RESULT)
    assert decode_valuesets(rec, 16, 3, -8, PM_ERR_LOGREC) == PM_ERR_LOGREC
    assert decode_valuesets(rec, 16, -1, -8, PM_ERR_LOGREC) == PM_ERR_LOGREC
    assert decode_valuesets(rec, len(rec) + 4, 0, -8, PM_ERR_LOGREC) == PM_ERR_LOGREC
    assert decode_valuesets(rec, len(rec), 1, -8, PM_ERR_LOGREC) == PM_ERR_LOGREC
    for n in range(len(rec)):
        r = decode_valuesets(rec[:n], 16, 2, -8, PM_ERR_LOGREC)
        if isinstance(r, Result):
            check_result_sane(r)
        else:
            assert r == PM_ERR_LOGREC


# small replies

def test_instance_hostile():
    base = INSTANCE
    assert dec_instance(patch(base, 16, 4)) == PM_ERR_IPC            # numinst too big
    assert dec_instance(patch(base, 16, 0x7FFFFFFF)) == PM_ERR_IPC
    assert dec_instance(patch(base, 16, 0xFFFFFFFF)) == PM_ERR_IPC
    assert dec_instance(patch(base, 16, 2)) == PM_ERR_IPC            # trailing entry
    assert dec_instance(patch(base, 24, 0xFFFFFFFF)) == PM_ERR_IPC   # namelen < 0
    assert dec_instance(patch(base, 24, 1000)) == PM_ERR_IPC         # namelen beyond
    assert dec_instance(patch(base, 24, 0x7FFFFFFF)) == PM_ERR_IPC


def test_text_hostile():
    assert dec_text(patch(TEXT, 16, 13)) == PM_ERR_IPC
    assert dec_text(patch(TEXT, 16, 0xFFFFFFFF)) == PM_ERR_IPC
    assert dec_text(patch(TEXT, 16, 0x7FFFFFFF)) == PM_ERR_IPC


def test_pmns_ids_hostile():
    assert dec_pmns_ids(patch(PMNS_IDS_PARTIAL, 16, 4)) == PM_ERR_IPC
    assert dec_pmns_ids(patch(PMNS_IDS_PARTIAL, 16, 2)) == PM_ERR_IPC
    assert dec_pmns_ids(patch(PMNS_IDS_PARTIAL, 16, 0)) == PM_ERR_IPC
    assert dec_pmns_ids(patch(PMNS_IDS_PARTIAL, 16, 0xFFFFFFFF)) == PM_ERR_IPC
    assert dec_pmns_ids(PMNS_IDS_PARTIAL, cap=2) == PM_ERR_IPC


def test_pmns_names_hostile():
    d = PMNS_NAMES_THREE
    assert dec_pmns_names(patch(d, 12, len(d) + 1)) == PM_ERR_IPC     # nstrbytes > len
    assert dec_pmns_names(patch(d, 12, 0xFFFFFFFF)) == PM_ERR_IPC
    assert dec_pmns_names(patch(d, 16, 1)) == PM_ERR_IPC              # numstatus mismatch
    assert dec_pmns_names(patch(d, 20, 4)) == PM_ERR_IPC              # numnames too big
    assert dec_pmns_names(patch(d, 20, 0x7FFFFFFF)) == PM_ERR_IPC
    assert dec_pmns_names(patch(d, 20, 0xFFFFFFFF)) == PM_ERR_IPC
    assert dec_pmns_names(patch(d, 24, 0xFFFFFFFF)) == PM_ERR_IPC     # namelen < 0
    assert dec_pmns_names(patch(d, 24, 1000)) == PM_ERR_IPC           # namelen beyond
    assert dec_pmns_names(d, cap=2) == PM_ERR_IPC
    assert dec_pmns_names(patch(PMNS_NAMES_STATUS, 16, 3)) == PM_ERR_IPC


def test_labels_hostile():
    d = LABEL
    assert dec_labels(patch(d, 24, 2)) == PM_ERR_IPC                  # nsets
    assert dec_labels(patch(d, 24, 0xFFFFFFFF)) == PM_ERR_IPC
    assert dec_labels(patch(d, 36, 0x45)) == PM_ERR_IPC               # json + len > len
    assert dec_labels(patch(d, 36, 0xFFFFFFFF)) == PM_ERR_IPC         # json < 0
    assert dec_labels(patch(d, 36, 0x7FFFFFFF)) == PM_ERR_IPC
    assert dec_labels(patch(d, 40, 92)) == PM_ERR_IPC                 # jsonlen beyond
    assert dec_labels(patch(d, 40, 0xFFFFFFFF)) == PM_ERR_IPC
    assert dec_labels(patch(d, 40, 65535)) == PM_ERR_IPC
    assert dec_labels(patch(d, 32, 255)) == PM_ERR_IPC                # nlabels >= 255
    assert dec_labels(patch(d, 32, 7)) == PM_ERR_IPC                  # labels run into JSON
    assert dec_labels(patch(d, 0x40, 0x003a0022)) == PM_ERR_IPC       # value past jsonlen
    assert dec_labels(patch(d, 0x2C, 0x0052ff01)) == PM_ERR_IPC       # name past jsonlen
    assert is_ok(dec_labels(patch(d, 0x40, 0x00390022)))              # value ends at jsonlen
    assert dec_labels(reframe(d + b"\0" * 4)) == PM_ERR_IPC           # after the JSON
    assert dec_labels(d, label_cap=2) == PM_ERR_IPC
    assert dec_labels(d, set_cap=0) == PM_ERR_IPC
    # the JSON may be followed by padding only
    assert is_ok(dec_labels(reframe(d + b"\0")))


def test_error_hostile():
    assert dec_error(reframe(GREETING + b"\0" * 4)) == PM_ERR_IPC
    assert dec_error(reframe(GREETING[:12])) == PM_ERR_IPC
    assert dec_error(reframe(GREETING[:18])) == PM_ERR_IPC


def test_attr_hostile():
    assert dec_attr(pdu(PDU["ATTR"], be(0) + b"x" * 4095)) == (0, b"x" * 4095)
    assert dec_attr(pdu(PDU["ATTR"], be(0) + b"x" * 4096)) == PM_ERR_IPC


def test_descs_hostile():
    assert dec_descs(patch(DESCS_PARTIAL, 12, 4), 4) == PM_ERR_IPC
    assert dec_descs(patch(DESCS_PARTIAL, 12, 0xFFFFFFFF), 0) == PM_ERR_IPC
    assert dec_descs(reframe(DESCS_PARTIAL[:-1]), 3) == PM_ERR_IPC
    assert dec_descs(pdu(PDU["DESCS"], be(0)), 0) == []


# ---- random bytes ---------------------------------------------------------------

def _check_any(r):
    if isinstance(r, Result):
        check_result_sane(r)
    elif isinstance(r, int):
        assert r == PM_ERR_IPC


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=600))
def test_random_bytes_every_decoder(data):
    r = header(data)
    assert r == PM_ERR_IPC or (r[0] >= 12 and r[1] >= 0)
    for dec in DECODERS.values():
        _check_any(dec(data))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(DECODERS)), body=st.binary(max_size=600),
       from_=st.integers(0, 0xFFFFFFFF))
def test_random_framed_bodies(name, body, from_):
    """Well-framed PDUs with random bodies reach past the header checks."""
    _check_any(DECODERS[name](pdu(PDU[name], body, from_)))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(idx=st.integers(0, len(SERVER_PDUS) - 1), pos=st.integers(0, 10000),
       word=st.integers(0, 0xFFFFFFFF), cut=st.integers(0, 10000))
def test_mutated_live_pdus(idx, pos, word, cut):
    name, data = SERVER_PDUS[idx]
    pos = (pos % max(1, len(data) - 3)) & ~3
    mutated = patch(data, pos, word) if pos >= 8 else data
    mutated = reframe(mutated[:len(data) - cut % 8])
    _check_any(DECODERS[name](mutated))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=400), sets_off=st.integers(0, 64),
       numpmid=st.integers(-2, 40))
def test_random_archive_records(data, sets_off, numpmid):
    r = decode_valuesets(data, sets_off, numpmid, -8, PM_ERR_LOGREC)
    if isinstance(r, Result):
        check_result_sane(r)
    else:
        assert r == PM_ERR_LOGREC


# ---- encoders against the live dumps ------------------------------------------------

def encode(fn, *args) -> bytes:
    need = fn(ffi.NULL, 0, *args)
    assert need > 0, need
    buf = ffi.new("uint8_t[]", need)
    assert fn(buf, need, *args) == need
    if need > 1:
        small = ffi.new("uint8_t[]", need - 1)
        assert fn(small, need - 1, *args) == PM_ERR_TOOBIG
    return bytes(ffi.buffer(buf, need))


def test_encode_creds():
    assert encode(lib.pcp_pdu_encode_creds, 0x335F, 0) == CREDS
    assert encode(lib.pcp_pdu_encode_creds, 0x34F0, 0x40) == CREDS_CONTAINER
    assert encode(lib.pcp_pdu_encode_creds, 0x529F, 0x4)[16:] == h("01020004")


def test_encode_attr():
    assert encode(lib.pcp_pdu_encode_attr, 0, 15, b"foo", 3) == ATTR_CONTAINER
    value = b"PLAIN\0nosuchuser\0nosuchuser\0secret"
    assert encode(lib.pcp_pdu_encode_attr, 0, 0, value, len(value)) == ATTR_SASL_C2S
    assert lib.pcp_pdu_encode_attr(ffi.NULL, 0, 0, 0, b"x" * 4096, 4096) == PM_ERR_TOOBIG
    assert encode(lib.pcp_pdu_encode_attr, 0, 0, b"x" * 4095, 4095)[16:] == b"x" * 4095


def _names(names):
    lens = ffi.new("int32_t[]", [len(n) for n in names])
    return len(names), b"".join(names), lens


def test_encode_pmns_names():
    assert encode(lib.pcp_pdu_encode_pmns_names, 0, *_names([b"sample.string.hullo"])) == \
        PMNS_NAMES_ONE
    assert encode(lib.pcp_pdu_encode_pmns_names, 0,
                  *_names([b"sample.long.one", b"no.such.metric",
                           b"sample.double.one"])) == PMNS_NAMES_THREE
    assert encode(lib.pcp_pdu_encode_pmns_names, 0, *_names([b"no.such.metric"])) == \
        PMNS_NAMES_UNKNOWN
    lens = ffi.new("int32_t[]", [1])
    assert lib.pcp_pdu_encode_pmns_names(ffi.NULL, 0, 0, 0, b"", lens) == PM_ERR_TOOSMALL
    lens = ffi.new("int32_t[]", [-1])
    assert lib.pcp_pdu_encode_pmns_names(ffi.NULL, 0, 0, 1, b"", lens) == PM_ERR_TOOSMALL


def test_encode_fetch():
    pmids = ffi.new("uint32_t[]", [0x0740001F, 0x07400005])
    assert encode(lib.pcp_pdu_encode_fetch, 0, 0, 0, 2, pmids) == FETCH
    pmids = ffi.new("uint32_t[]", [0x0740001F])
    assert encode(lib.pcp_pdu_encode_fetch, 0, 1, 0, 1, pmids) == HIGHRES_FETCH
    assert lib.pcp_pdu_encode_fetch(ffi.NULL, 0, 0, 0, 0, 0, pmids) == PM_ERR_TOOSMALL
    many = ffi.new("uint32_t[]", 16378)
    assert lib.pcp_pdu_encode_fetch(ffi.NULL, 0, 0, 0, 0, 16377, many) == 65536
    assert lib.pcp_pdu_encode_fetch(ffi.NULL, 0, 0, 0, 0, 16378, many) == PM_ERR_TOOBIG


def _profile(entries):
    n = len(entries)
    indoms = ffi.new("uint32_t[]", [e[0] for e in entries] or [0])
    states = ffi.new("int32_t[]", [e[1] for e in entries] or [0])
    counts = ffi.new("int32_t[]", [len(e[2]) for e in entries] or [0])
    insts = ffi.new("int32_t[]", [i for e in entries for i in e[2]] or [0])
    return n, indoms, states, counts, insts


def test_encode_profile():
    assert encode(lib.pcp_pdu_encode_profile, 0, 0, 0, *_profile([])) == PROFILE_EMPTY
    assert encode(lib.pcp_pdu_encode_profile, 0, 0, 0,
                  *_profile([(0x07400001, 1, [0, 2])])) == PROFILE_RED_BLUE
    n, indoms, states, counts, insts = _profile([(1, 1, [])])
    counts[0] = -1
    assert lib.pcp_pdu_encode_profile(ffi.NULL, 0, 0, 0, 0, n, indoms, states, counts,
                                      insts) == PM_ERR_TOOSMALL


def test_encode_label_req():
    assert encode(lib.pcp_pdu_encode_label_req, 0, -1, 1) == LABEL_REQ


def test_encode_small_requests():
    assert encode(lib.pcp_pdu_encode_desc_req, 0, 0x0740001F) == \
        pdu(PDU["DESC_REQ"], be(0x0740001F))
    assert encode(lib.pcp_pdu_encode_text_req, 0, 0x07400005, 5) == \
        pdu(PDU["TEXT_REQ"], be(0x07400005, 5))
    ids = ffi.new("uint32_t[]", [0x0740001F, 0x0C800001])
    assert encode(lib.pcp_pdu_encode_ids, 0, PDU["DESC_IDS"], -1, 2, ids) == \
        pdu(PDU["DESC_IDS"], be(0xFFFFFFFF, 2, 0x0740001F, 0x0C800001))
    assert encode(lib.pcp_pdu_encode_instance_req, 0, 0x07400001, PM_IN_NULL, b"red", 3) == \
        pdu(PDU["INSTANCE_REQ"], be(0x07400001, 0, 0, PM_IN_NULL, 3) + b"red~")
    assert encode(lib.pcp_pdu_encode_pmns_node, 0, PDU["PMNS_CHILD"], 1, b"sample", 6) == \
        pdu(PDU["PMNS_CHILD"], be(1, 6) + b"sample~~")
    assert encode(lib.pcp_pdu_encode_pmns_node, 0, PDU["PMNS_TRAVERSE"], 0, b"", 0) == \
        pdu(PDU["PMNS_TRAVERSE"], be(0, 0))


def store(from_, sec, usec, sets, payload=b""):
    """sets: [(pmid, valfmt, [(inst, lval, vtype, poff, plen), ...]), ...]"""
    values = [v for s in sets for v in s[2]]
    n = len(sets)
    args = (
        from_, sec, usec, n,
        ffi.new("uint32_t[]", [s[0] for s in sets] or [0]),
        ffi.new("int32_t[]", [len(s[2]) for s in sets] or [0]),
        ffi.new("int32_t[]", [s[1] for s in sets] or [0]),
        ffi.new("int32_t[]", [v[0] for v in values] or [0]),
        ffi.new("int32_t[]", [v[1] for v in values] or [0]),
        ffi.new("int32_t[]", [v[2] for v in values] or [0]),
        ffi.new("uint32_t[]", [v[3] for v in values] or [0]),
        ffi.new("uint32_t[]", [v[4] for v in values] or [0]),
        cbuf(payload), len(payload))
    need = lib.pcp_store_encode(ffi.NULL, 0, *args)
    if need < 0:
        return need
    buf = ffi.new("uint8_t[]", need)
    assert lib.pcp_store_encode(buf, need, *args) == need
    small = ffi.new("uint8_t[]", need - 1)
    assert lib.pcp_store_encode(small, need - 1, *args) == PM_ERR_TOOBIG
    return bytes(ffi.buffer(buf, need))


def test_encode_store_insitu():
    assert store(0, 0x6B0101E8, 0x15AD0,
                 [(0x07400024, 0, [(PM_IN_NULL, 42, 0, 0, 0)])]) == STORE_INSITU


def test_encode_store_dptr_double():
    out = store(0, 0, 0, [(0x0740001D, 1, [(PM_IN_NULL, 0, 5, 0, 8)])],
                struct.pack("=d", 3.5))
    assert out == STORE_DOUBLE


def test_encode_store_round_trip_mixed():
    payload = b"hullo\0" + struct.pack("=q", -5) + struct.pack("=f", 1.5) + b"agg"
    out = store(7, 1, 2, [
        (0x07400010, 1, [(0, 0, 6, 0, 6), (1, 0, 2, 6, 8), (2, 0, 4, 14, 4)]),
        (0x07400005, 0, [(5, -7, 0, 0, 0)]),
        (0x07400011, 2, [(PM_IN_NULL, 0, 7, 18, 3), (9, 0, 7, 0, 0)]),
    ], payload)
    r = decode_result(out, 0)
    assert (r.sec, r.nsec) == (1, 2000)
    assert r.pmid == [0x07400010, 0x07400005, 0x07400011]
    assert r.valfmt == [1, 0, 2] and r.numval == [3, 1, 2]
    assert r.inst == [0, 1, 2, 5, PM_IN_NULL, 9]
    assert r.vtype == [6, 2, 4, -1, 7, 7]
    assert r.payload(0) == b"hullo\0" and r.ival[1] == -5 and r.dval[2] == 1.5
    assert r.ival[3] == -7 and r.payload(4) == b"agg" and r.blen[5] == 0
    # strict layout: contiguous blocks after the sets, ending at len
    sets_end = 24 + (12 + 24) + (12 + 8) + (12 + 16)
    assert r.boff[0] == sets_end + 4
    assert out[sets_end:sets_end + 4] == be(0x0600000A)


def test_encode_store_refusals():
    assert store(0, 0, 0, []) == PM_ERR_TOOSMALL
    assert store(0, 0, 0, [(1, 0, [])]) == PM_ERR_VALUE
    assert store(0, 0, 0, [(1, 3, [(0, 0, 0, 0, 0)])]) == PM_ERR_CONV
    assert store(0, 0, 0, [(1, 1, [(0, 0, 5, 0, 4)])], b"\0" * 8) == PM_ERR_CONV
    assert store(0, 0, 0, [(1, 1, [(0, 0, 5, 4, 8)])], b"\0" * 8) == PM_ERR_TOOBIG
    assert store(0, 0, 0, [(1, 1, [(0, 0, 6, 0, 9)])], b"\0" * 8) == PM_ERR_TOOBIG
    assert store(0, 0, 0, [(1, 1, [(0, 0, 6, 9, 0)])], b"\0" * 8) == PM_ERR_TOOBIG
    assert store(0, 0, 0, [(1, 1, [(0, 0, 256, 0, 0)])]) == PM_ERR_TYPE
    assert store(0, 0, 0, [(1, 1, [(0, 0, -1, 0, 0)])]) == PM_ERR_TYPE
    big = b"x" * 65536
    assert store(0, 0, 0, [(1, 1, [(0, 0, 7, 0, 65536 - 44)])], big) == PM_ERR_TOOBIG
    assert len(store(0, 0, 0, [(1, 1, [(0, 0, 7, 0, 65536 - 48)])], big)) == 65536


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sets=st.lists(
    st.tuples(st.integers(0, 0xFFFFFFFF), st.sampled_from([0, 1, 2]),
              st.lists(st.tuples(st.integers(-2**31, 2**31 - 1),
                                 st.integers(-2**31, 2**31 - 1),
                                 st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 9, 255]),
                                 st.binary(max_size=24)),
                       min_size=1, max_size=5)),
    min_size=1, max_size=6))
def test_store_round_trip_random(sets):
    sizes = {0: 4, 1: 4, 4: 4, 2: 8, 3: 8, 5: 8}
    payload = b""
    spec = []
    for pmid, valfmt, values in sets:
        vals = []
        for inst, lval, vtype, blob in values:
            if valfmt == 0:
                vals.append((inst, lval, 0, 0, 0))
                continue
            blob = (blob + b"\0" * 8)[:sizes[vtype]] if vtype in sizes else blob
            vals.append((inst, lval, vtype, len(payload), len(blob)))
            payload += blob
        spec.append((pmid, valfmt, vals))
    out = store(3, 4, 5, spec, payload)
    r = decode_result(out, 0)
    assert r.pmid == [s[0] for s in spec]
    assert r.valfmt == [s[1] for s in spec]
    k = 0
    for pmid, valfmt, vals in spec:
        for inst, lval, vtype, poff, plen in vals:
            assert r.inst[k] == inst
            if valfmt == 0:
                assert r.ival[k] == lval and r.vtype[k] == -1
            else:
                blob = payload[poff:poff + plen]
                assert r.vtype[k] == vtype and r.blen[k] == plen
                if vtype in (6, 7, 9, 255):
                    assert r.payload(k) == blob
                elif vtype == 5:
                    assert struct.pack("=d", r.dval[k]) == blob
                elif vtype == 4:
                    f = struct.unpack("=f", blob)[0]
                    assert r.dval[k] == f or (math.isnan(f) and math.isnan(r.dval[k]))
                else:
                    fmt = {0: "=i", 1: "=I", 2: "=q", 3: "=Q"}[vtype]
                    want = struct.unpack(fmt, blob)[0]
                    assert r.ival[k] & 0xFFFFFFFFFFFFFFFF == want & 0xFFFFFFFFFFFFFFFF
            k += 1
