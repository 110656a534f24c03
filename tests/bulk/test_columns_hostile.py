"""The column scan (csrc/archive_columns.c) on random and damaged archives: it must take
and refuse exactly the records libpcp's reader takes and refuses (pcp_archive_record_read, held to
libpcp elsewhere), resume where that reader resumes, and store every value of the
records it takes as pmExtractValue extracts it from the decoded record (the reference
decoder, pcp_archive_record_decode). Archives are written here with tests/archive_bytes.py,
without pmlogger."""

import math
import os
import struct
import tempfile

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import archive_bytes as ab
from pcp import bulk
from pcp._native import ffi, lib
from pcp._decode.result import FlatResult

INDOM = (29 << 22) | 1
NULL = 0xFFFFFFFF
# pmid -> (type, indom); pmid 9 has no descriptor
METRICS = {1: (0, NULL), 2: (1, INDOM), 3: (2, INDOM), 4: (3, NULL), 5: (4, INDOM),
           6: (5, NULL), 7: (6, INDOM), 8: (7, NULL)}
PMIDS = sorted(METRICS) + [9]
META_INSTS = [(0, b"zero"), (1, b"one"), (2, b"two")]


SIZES = {0: 4, 1: 4, 2: 8, 3: 8, 4: 4, 5: 8}


def good_block(mtype):
    """A block of the metric's own type (or 0) and size: what pmlogger writes."""
    if mtype in SIZES:
        return st.tuples(st.sampled_from([mtype, mtype, 0]), st.binary(min_size=SIZES[mtype],
                                                                       max_size=SIZES[mtype]))
    return st.tuples(st.sampled_from([mtype, 0]), st.binary(max_size=12))


def values_for(valfmt, mtype):
    insts = st.integers(0, 5)
    if valfmt == 0:
        return st.lists(st.tuples(insts, st.integers(0, 0xFFFFFFFF)), max_size=4)
    anyblock = st.tuples(st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 9]),
                         st.binary(max_size=12))
    return st.lists(st.tuples(insts, st.one_of(good_block(mtype), good_block(mtype),
                                               good_block(mtype), anyblock)), max_size=4)


@st.composite
def value_set(draw):
    pmid = draw(st.sampled_from(PMIDS))
    mtype = METRICS.get(pmid, (7, NULL))[0]
    if draw(st.integers(0, 9)) == 0:
        return (pmid, draw(st.sampled_from([0, -12345])), 0, [])
    natural = 0 if mtype in (0, 1) or (mtype == 4 and draw(st.booleans())) else 1
    valfmt = draw(st.sampled_from([natural, natural, natural, 0, 1, 2]))
    vals = draw(values_for(valfmt, mtype))
    return (pmid, len(vals), valfmt, vals)


@st.composite
def volume(draw):
    version = draw(st.sampled_from([2, 3]))
    recs = []
    t = 1700000000
    for k in range(draw(st.integers(1, 12))):
        t += 1
        if draw(st.integers(0, 7)) == 0:
            recs.append(ab.mark(version, t, 0))
            continue
        sets = draw(st.lists(value_set(), max_size=5))
        recs.append(ab.data_record(version, t, 500000 * 1000, sets))
    data = bytearray(ab.label(version, 0) + b"".join(recs))
    lab = len(ab.label(version, 0))
    # damage: overwrite a few bytes, and maybe cut the end off
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2, 3]))):
        if len(data) <= lab:
            break
        at = draw(st.integers(lab, len(data) - 1))
        data[at:at + 4] = draw(st.binary(min_size=1, max_size=4))
    if draw(st.booleans()) and draw(st.integers(0, 3)) == 0:
        data = data[:draw(st.integers(lab + 1, len(data)))]
    return version, bytes(data)


def write_archive(d, version, vol):
    base = os.path.join(d, "a")
    meta = ab.label(version, -1)
    for pmid, (t, indom) in METRICS.items():
        meta += ab.desc_record(pmid, t, indom, 0, 0, [b"m.x%d" % pmid])
    meta += ab.indom_record(2 if version == 2 else 5, 1700000000, 0, INDOM, META_INSTS)
    with open(base + ".meta", "wb") as f:
        f.write(meta)
    with open(base + ".0", "wb") as f:
        f.write(vol)
    return base


def extract(rec, f, k, valfmt, mtype):
    """pmExtractValue(valfmt, value k, type, type) of a decoded record, or None."""
    c = f.c
    if valfmt == 0:
        word = c.ival[k] & 0xFFFFFFFF
        if mtype == 0:
            return struct.unpack(">i", struct.pack(">I", word))[0]
        if mtype == 1:
            return word
        if mtype == 4:
            return struct.unpack(">f", struct.pack(">I", word))[0]
        return None
    vtype, off, n = c.vtype[k], c.boff[k], c.blen[k]
    if vtype not in (0, mtype):
        return None
    pay = rec[off:off + n]
    if mtype in (2, 3, 5):
        if n != 8:
            return None
        return struct.unpack({2: ">q", 3: ">Q", 5: ">d"}[mtype], pay)[0]
    if mtype == 4:
        return struct.unpack(">f", pay)[0] if n == 4 else None
    if mtype == 6:
        return pay.split(b"\0", 1)[0].decode("utf-8", "replace")
    if mtype == 7:
        return bytes(pay)
    return None


def stamp_ns(sec, nsec):
    """Nanoseconds since the epoch, saturated inside datetime64[ns] (NaT excluded)."""
    lim = (2**63 - 1) // 10**9 - 1
    if sec > lim:
        return 2**63 - 1
    if sec < -lim:
        return -2**63 + 1
    return sec * 10**9 + nsec


def expected(version, vol):
    """Rows as libpcp's reader gives them, with errors skipped as the scan skips them."""
    lab = len(ab.label(version, 0))
    buf = ffi.from_buffer("uint8_t[]", vol)
    newpos = ffi.new("uint64_t *")
    rec = ffi.new("pcp_log_record *")
    pos = lab
    rows = []
    mark = False
    while True:
        sts = lib.pcp_archive_record_read(buf, len(vol), lab, version, 0, 0, pos, newpos, rec)
        if sts == 1:
            break
        if sts < 0:
            if newpos[0] <= pos:
                break               # the reader would fail here again and again
            pos = newpos[0]
            continue
        raw = vol[rec.off:rec.off + rec.len]
        pos = newpos[0]
        if rec.numpmid == 0:
            mark = True
            continue
        f = FlatResult.from_log_record(raw, version)
        vals = {}
        for i in range(f.numpmid):
            pmid = f.pmid[i]
            if pmid not in METRICS:
                continue
            got = vals.setdefault(pmid, {})
            for j in range(max(f.numval[i], 0)):
                k = f.first[i] + j
                v = extract(raw, f, k, f.valfmt[i], METRICS[pmid][0])
                if v is not None:       # a pmid or instance met twice: the last
                    got[f.c.inst[k]] = v    # value that converts is kept
        if vals:
            rows.append((stamp_ns(rec.sec, rec.nsec), mark, vals))
            mark = False
    return rows


def ours(base):
    rows = []
    for chunk in bulk.ArchiveReader(base, chunk_rows=3, errors="skip"):
        for r in range(len(chunk)):
            vals = {}
            for m in chunk.values():
                got = {}
                for c in np.nonzero(m.present[r])[0].tolist():
                    v = m.values[r, c]
                    got[int(m.instances[c])] = v.item() if hasattr(v, "item") else v
                if got or m.pmid in vals:
                    vals[m.pmid] = got
            rows.append((int(chunk.time[r].astype(np.int64)), bool(chunk.after_mark[r]), vals))
    return rows


def same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


@settings(max_examples=int(os.environ.get("PCP_HOSTILE_EXAMPLES", "300")), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(volume())
def test_scan_agrees_with_libpcp_reader(vol):
    version, data = vol
    with tempfile.TemporaryDirectory() as d:
        base = write_archive(d, version, data)
        got = ours(base)
    want = expected(version, data)
    assert [r[0] for r in got] == [r[0] for r in want]
    assert [r[1] for r in got] == [r[1] for r in want]
    for (t, _, g), (_, _, w) in zip(got, want):
        for pmid in set(g) | set(w):
            gv, wv = g.get(pmid, {}), w.get(pmid, {})
            assert sorted(gv) == sorted(wv), (t, pmid, gv, wv)
            for inst in wv:
                assert same(gv[inst], wv[inst]), (t, pmid, inst, gv[inst], wv[inst])
