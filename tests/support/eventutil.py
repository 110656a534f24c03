"""Helpers for the event record tests: the libpcp oracle (tests/c/event_oracle.c,
compiled once per session), our side rendered in the oracle's JSON shape, and a small
independent encoder of RESULT PDUs carrying event arrays (big-endian, as pmcd sends)."""

import json
import re
import os
import shutil
import struct
import subprocess
import tempfile

import pytest

from conftest import _unavailable

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE_SRC = os.path.join(HERE, "c", "event_oracle.c")
CC = os.environ.get("CC", "cc")

PDU_RESULT = 0x7001
PDU_HIGHRES_RESULT = 0x7015
EVENT, HIGHRES_EVENT = 9, 10
MISSED = 0x80000000
FLAGS_PMID = 0x7FC00001
MISSED_PMID = 0x7FC00002

_ORACLE = {}


def oracle_binary():
    """Path of the compiled oracle; skips locally (fails under CI) without libpcp-dev."""
    if "path" not in _ORACLE:
        why = None
        if shutil.which(CC) is None:
            why = "no C compiler (%s) for the libpcp oracle" % CC
        elif not os.path.exists("/usr/include/pcp/pmapi.h"):
            why = "libpcp headers (libpcp3-dev) are not installed"
        else:
            out = os.path.join(tempfile.mkdtemp(prefix="pcp-event-oracle-"), "event_oracle")
            p = subprocess.run([CC, "-O1", "-g", "-Wall", "-Wextra", "-o", out, ORACLE_SRC, "-lpcp"],
                               capture_output=True, text=True)
            if p.returncode != 0:
                why = "cannot build the libpcp oracle: %s" % p.stderr[-2000:]
            else:
                _ORACLE["path"] = out
        _ORACLE.setdefault("why", why)
    if _ORACLE.get("path") is None:
        _unavailable(_ORACLE["why"])
    return _ORACLE["path"]


@pytest.fixture(scope="session")
def event_oracle():
    return oracle_binary()


def run_oracle(cases):
    """cases: dicts with pdu (bytes), optional target (i, j), muts [(off, width, value)],
    numval, valfmt; or with block (one wire-order value block, converted by the oracle's
    bounded model of libpcp's receive conversion). Returns the oracle's JSON per case."""
    lines = []
    for case in cases:
        if "block" in case:
            lines.append("block " + case["block"].hex())
        else:
            lines.append("pdu " + case["pdu"].hex())
            target = case.get("target")
            lines.append("target all" if target is None else "target %d %d" % target)
        for off, width, value in case.get("muts", ()):
            lines.append("u%d %d %d" % (width * 8, off, value))
        if "numval" in case:
            lines.append("numval %d" % case["numval"])
        if "valfmt" in case:
            lines.append("valfmt %d" % case["valfmt"])
        lines.append("go")
    p = subprocess.run([oracle_binary()], input="\n".join(lines) + "\n", capture_output=True,
                       text=True, errors="replace", timeout=300)
    assert p.returncode == 0, "oracle failed (rc %d): %s" % (p.returncode, p.stderr[-3000:])
    out = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    assert len(out) == len(cases), (len(out), len(cases), p.stderr[-2000:])
    return out


# ---- our side, in the oracle's shape ---------------------------------------------------

def render_vset(vs):
    import ctypes

    vs = vs.contents
    d = {"pmid": vs.pmid, "numval": vs.numval, "valfmt": vs.valfmt}
    if vs.numval >= 1:
        v = vs.vlist[0]
        d["inst"] = v.inst
        if vs.valfmt == 0:
            d["lval"] = v.value.lval
        else:
            blk = v.value.pval.contents
            d["vtype"] = blk.vtype
            d["vlen"] = blk.vlen
            d["hex"] = ctypes.string_at(ctypes.addressof(blk) + 4, blk.vlen - 4).hex()
    return d


def render_unpack(ctx_cls, vset, j, highres):
    from pcp.pmapi import pmErr

    fn = ctx_cls.pmUnpackHighResEventRecords if highres else ctx_cls.pmUnpackEventRecords
    try:
        recs = fn(vset, j)
    except pmErr as e:
        return {"sts": e.args[0], "null": 1, "records": [], "sentinel": 1}
    out = []
    for lp in recs:
        r = lp.contents
        ts = r.timestamp
        nsec = ts.tv_nsec if highres else ts.tv_usec * 1000
        out.append({"sec": ts.tv_sec, "nsec": nsec, "numpmid": r.numpmid,
                    "vsets": [render_vset(r.get_vset(k)) for k in range(r.numpmid)]})
    ctx_cls.pmFreeHighResEventResult(recs) if highres else ctx_cls.pmFreeEventResult(recs)
    return {"sts": len(out), "null": int(len(out) == 0), "records": out, "sentinel": 1}


def render_ours(result, target=None):
    """Our answer for every event value of a result (or the target (i, j) only)."""
    from pcp import pmapi

    P = pmapi.pmContext
    r = result.contents
    values = []
    for i in range(r.numpmid):
        vs = r.get_vset(i)
        if target is not None and i != target[0]:
            continue
        if vs.numval < 1 or vs.valfmt == 0:
            if target is not None:
                values.append({"vset": i, "value": target[1], "inst": None,
                               "classic": render_unpack(P, vs, target[1], False),
                               "highres": render_unpack(P, vs, target[1], True)})
            continue
        for j in range(vs.numval):
            if target is not None and j != target[1]:
                continue
            vt = vs.vlist[j].value.pval.contents.vtype
            if target is None and vt not in (EVENT, HIGHRES_EVENT):
                continue
            values.append({"vset": i, "value": j, "inst": vs.vlist[j].inst,
                           "classic": render_unpack(P, vs, j, False),
                           "highres": render_unpack(P, vs, j, True)})
    return values


# ---- an independent encoder: event arrays and RESULT PDUs ------------------------------

def pad4(n):
    return (n + 3) & ~3


def param(pmid, ptype, payload, eplen=None, filler=b"\xa5"):
    """One parameter: value bytes as given (big-endian numbers), ep_len = 4 + len unless
    overridden, filler up to the next 4-byte boundary."""
    if eplen is None:
        eplen = 4 + len(payload)
    body = struct.pack(">II", pmid, (ptype << 24) | (eplen & 0xFFFFFF)) + payload
    return body + (filler * 4)[:pad4(len(body)) - len(body)]


def p32(pmid, v):
    return param(pmid, 0, struct.pack(">i", v))


def pu32(pmid, v):
    return param(pmid, 1, struct.pack(">I", v))


def p64(pmid, v):
    return param(pmid, 2, struct.pack(">q", v))


def pu64(pmid, v):
    return param(pmid, 3, struct.pack(">Q", v))


def pfloat(pmid, v):
    return param(pmid, 4, struct.pack(">f", v))


def pdouble(pmid, v):
    return param(pmid, 5, struct.pack(">d", v))


def pstring(pmid, s):
    return param(pmid, 6, s.encode() if isinstance(s, str) else s)


def paggr(pmid, b, static=False):
    return param(pmid, 8 if static else 7, b)


def record(kind, sec, frac, flags, params, nparams=None):
    """One record (frac: microseconds for EVENT, nanoseconds for HIGHRES_EVENT)."""
    n = len(params) if nparams is None else nparams
    if kind == EVENT:
        head = struct.pack(">iiIi", sec, frac, flags, n)
    else:
        head = struct.pack(">qqIi", sec, frac, flags, n)
    return head + b"".join(params)


def event_array(kind, records, nrecords=None, ea_len=None, vtype=None):
    body = b"".join(records)
    n = len(records) if nrecords is None else nrecords
    length = 8 + len(body) if ea_len is None else ea_len
    return struct.pack(">Ii", ((kind if vtype is None else vtype) << 24) | (length & 0xFFFFFF),
                       n) + body


def result_pdu(sets, highres=True, sec=1700000000, nsec=123456000):
    """A RESULT / HIGHRES_RESULT PDU. sets: (pmid, numval_or_error, valfmt, values) with
    values [(inst, block bytes)] for DPTR or [(inst, int)] for INSITU."""
    fixed = 12 + (4 + 16 if highres else 12)
    sets_len = sum(8 + (4 + 8 * len(vals) if (nv > 0) else 0) for _, nv, _, vals in sets)
    blocks = b""
    body = b""
    next_word = (fixed + sets_len) // 4
    for pmid, numval, valfmt, vals in sets:
        body += struct.pack(">Ii", pmid, numval)
        if numval <= 0:
            continue
        body += struct.pack(">i", valfmt)
        for inst, v in vals:
            if valfmt == 0:
                body += struct.pack(">ii", inst, v)
            else:
                body += struct.pack(">ii", inst, next_word + len(blocks) // 4)
                blocks += v + b"\0" * (pad4(len(v)) - len(v))
    total = fixed + len(body) + len(blocks)
    if highres:
        head = struct.pack(">iiiiqq", total, PDU_HIGHRES_RESULT, 0, len(sets), sec, nsec)
    else:
        head = struct.pack(">iiiiii", total, PDU_RESULT, 0, sec, nsec // 1000, len(sets))
    pdu = head + body + blocks
    assert len(pdu) == total
    return pdu


def result_of(pdu):
    """Our drop-in result handle for a PDU (the same decode pmFetch uses)."""
    from pcp._decode.result import (FlatResult, LP_pmHighResResult, LP_pmResult, pmHighResResult,
                             pmResult)

    highres = struct.unpack(">i", pdu[4:8])[0] == PDU_HIGHRES_RESULT
    flat = FlatResult(pdu, highres)
    if highres:
        return LP_pmHighResResult(pmHighResResult(flat))
    return LP_pmResult(pmResult(flat))


def block_offset(pdu, i, j):
    """Byte offset in the PDU of value j of set i's value block (header word included)."""
    highres = struct.unpack(">i", pdu[4:8])[0] == PDU_HIGHRES_RESULT
    pos = 12 + (20 if highres else 12)
    numpmid = struct.unpack(">i", pdu[12:16] if highres else pdu[20:24])[0]
    for s in range(numpmid):
        numval = struct.unpack(">i", pdu[pos + 4:pos + 8])[0]
        pos += 8
        if numval <= 0:
            continue
        pos += 4
        for v in range(numval):
            word = struct.unpack(">i", pdu[pos + 4:pos + 8])[0]
            if s == i and v == j:
                return 4 * word
            pos += 8
    raise IndexError((i, j))


def mutate(pdu, at, muts):
    """The PDU with big-endian stores at block-relative offsets (the oracle's muts)."""
    b = bytearray(pdu)
    for off, width, value in muts:
        fmt = ">I" if width == 4 else ">Q"
        b[at + off:at + off + width] = struct.pack(fmt, value & ((1 << (8 * width)) - 1))
    return bytes(b)


def block_result(block, pmid=0x07400088):
    """Our result handle for a PDU whose only value is `block` (DPTR, PM_IN_NULL)."""
    return result_of(result_pdu([(pmid, 1, 1, [(-1, block)])]))


def mutate_block(block, muts):
    """`block` with big-endian stores (offset, width, value)."""
    b = bytearray(block)
    for off, width, value in muts:
        fmt = ">I" if width == 4 else ">Q"
        b[off:off + width] = struct.pack(fmt, value & ((1 << (8 * width)) - 1))
    return bytes(b)


def run_oracle_archive(path):
    """libpcp's view of every record of an archive: one dict per record, then
    {"end": status of the last pmFetchHighResArchive}."""
    p = subprocess.run([oracle_binary()], input="archive %s\n" % path, capture_output=True,
                       text=True, errors="replace", timeout=300)
    assert p.returncode == 0, "oracle failed (rc %d): %s" % (p.returncode, p.stderr[-3000:])
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


# ---- libpcp tools' text (pminfo -x, pmdumplog) -------------------------------------

FLAG_NAMES = [(0x1, "point"), (0x2, "start"), (0x4, "end"), (0x8, "id"), (0x10, "parent"),
               (MISSED, "missed")]
TIME = re.compile(r"\d\d:\d\d:\d\d\.\d+")


def flags_str(flags):
    return ",".join(name for bit, name in FLAG_NAMES if flags & bit)


def print_value(ctx, vs, ptype):
    """pmPrintValue's text for the value types the sample PMDA uses as parameters."""
    import ctypes
    import struct

    import cpmapi as c_api

    v = vs.vlist[0]
    if ptype == c_api.PM_TYPE_AGGREGATE:
        blk = v.value.pval.contents
        raw = ctypes.string_at(ctypes.addressof(blk) + 4, blk.vlen - 4)
        u, d = struct.unpack("=Qd", raw + raw)
        return "%d %.16g [%s]" % (u, d, raw.hex())
    a = ctx.pmExtractValue(vs.valfmt, v, ptype, ptype)
    if ptype == c_api.PM_TYPE_STRING:
        return '"%s"' % a.cp.decode()
    if ptype == c_api.PM_TYPE_FLOAT:
        return "%.8g" % a.f
    if ptype == c_api.PM_TYPE_DOUBLE:
        return "%.16g" % a.d
    return str({c_api.PM_TYPE_32: a.l, c_api.PM_TYPE_U32: a.ul, c_api.PM_TYPE_64: a.ll,
                c_api.PM_TYPE_U64: a.ull}[ptype])
