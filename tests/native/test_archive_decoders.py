"""Unit tests of the archive decoders in csrc/archive_*.c through pcp._native, on exact
records built by tests/archive_bytes.py: good records decode field by field, every
truncation and corruption gives libpcp's error, and the reader's stream position after
an error is where libpcp's stdio stream would be (logutil.c __pmLogRead_ctx). Inputs
are exact-size cffi arrays so the .ci/sanitize.sh run catches any read outside them."""
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.archive_bytes import (be, data_record, desc_record, frame, index_entry, indom_record,
                           label, label_record, mark, text_record)
from pcp._native import ffi, lib

PM_ERR_NODATA = -12354
PM_ERR_LABEL = -12372
PM_ERR_LOGREC = -12373
PM_ERR_TOOBIG = -12444
PM_ERR_RECTYPE = -12412
PCP_LOG_END = 1
V2_LABEL, V3_LABEL = 132, 808


def cbuf(data: bytes):
    return ffi.new("uint8_t[]", data) if data else ffi.new("uint8_t[]", 1)


# ---- labels ------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [2, 3])
def test_label_fields(version):
    raw = label(version, 7, sec=1700000001, nsec=987654000, pid=99, host=b"h1", tz=b"AEST-10",
                zone=b":Australia/Melbourne")
    out = ffi.new("pcp_log_label *")
    assert lib.pcp_archive_label_decode(cbuf(raw), len(raw), out) == 0
    assert (out.version, out.pid, out.vol, out.sec) == (version, 99, 7, 1700000001)
    assert out.nsec == 987654000
    assert out.len == (V2_LABEL if version == 2 else V3_LABEL)
    assert raw[out.host_off:out.host_off + out.host_len] == b"h1"
    assert raw[out.tz_off:out.tz_off + out.tz_len] == b"AEST-10"
    zone = raw[out.zone_off:out.zone_off + out.zone_len]
    assert zone == (b":Australia/Melbourne" if version == 3 else b"")


def test_label_v3_seconds_low_half_first():
    raw = label(3, 0, sec=(5 << 32) | 7)
    out = ffi.new("pcp_log_label *")
    assert lib.pcp_archive_label_decode(cbuf(raw), len(raw), out) == 0
    assert out.sec == (5 << 32) | 7
    assert raw[12:20] == be(7, 5)


@pytest.mark.parametrize("version", [2, 3])
def test_label_every_truncation(version):
    raw = label(version, 0)
    out = ffi.new("pcp_log_label *")
    for n in range(len(raw)):
        want = PM_ERR_NODATA if n < 8 else PM_ERR_LABEL
        assert lib.pcp_archive_label_decode(cbuf(raw[:n]), n, out) == want, n


@pytest.mark.parametrize("mutate, code", [
    (lambda r: be(64) + r[4:], PM_ERR_LABEL),                  # length not 132
    (lambda r: r[:4] + be(0x500526FF) + r[8:], PM_ERR_LABEL),   # version 255
    (lambda r: r[:4] + be(0x50052601) + r[8:], PM_ERR_LABEL),   # version 1
    (lambda r: r[:4] + be(0x51052602) + r[8:], PM_ERR_LABEL),   # bad magic
    (lambda r: r[:-4] + be(128), PM_ERR_LABEL),                 # trailer mismatch
])
def test_label_damage(mutate, code):
    raw = mutate(label(2, 0))
    out = ffi.new("pcp_log_label *")
    assert lib.pcp_archive_label_decode(cbuf(raw), len(raw), out) == code


# ---- data records ------------------------------------------------------------------------

PMID_A, PMID_B, PMID_S = 0x07400001, 0x07400002, 0x07400003


def sample_record(version: int, sec: int = 1700000100, nsec: int = 500000000) -> bytes:
    return data_record(version, sec, nsec, [
        (PMID_A, 2, 0, [(1, 10), (2, -5)]),
        (PMID_B, 1, 1, [(-1, (3, struct.pack(">Q", 1 << 40)))]),
        (PMID_S, 2, 2, [(0, (6, b"hello\0")), (1, (5, struct.pack(">d", 2.5)))]),
        (0x07400004, -12350, 0, []),
        (0x07400005, 0, 0, []),
    ])


def decode(rec: bytes, version: int):
    counts = ffi.new("int32_t[2]")
    sts = lib.pcp_archive_record_scan(cbuf(rec), len(rec), version, counts, counts + 1)
    if sts < 0:
        return sts, None
    mem = ffi.new("char[]", lib.pcp_result_mem_size(counts[0], counts[1]))
    out = ffi.new("pcp_result *")
    lib.pcp_result_bind(out, mem, counts[0], counts[1])
    assert lib.pcp_archive_record_decode(cbuf(rec), len(rec), version, out) == 0
    return 0, (out, mem)


@pytest.mark.parametrize("version", [2, 3])
def test_record_decodes(version):
    rec = sample_record(version)
    sts, (out, _mem) = decode(rec, version)
    assert sts == 0
    assert (out.sec, out.nsec, out.numpmid, out.nvalues) == (1700000100, 500000000, 5, 5)
    assert list(out.pmid[0:5]) == [PMID_A, PMID_B, PMID_S, 0x07400004, 0x07400005]
    assert list(out.numval[0:5]) == [2, 1, 2, -12350, 0]
    assert list(out.valfmt[0:3]) == [0, 1, 2]
    assert list(out.inst[0:5]) == [1, 2, -1, 0, 1]
    assert list(out.vtype[0:5]) == [-1, -1, 3, 6, 5]
    assert list(out.ival[0:3]) == [10, -5, 1 << 40]
    assert out.dval[4] == 2.5
    assert rec[out.boff[3]:out.boff[3] + out.blen[3]] == b"hello\0"


def test_mark_record():
    for version in (2, 3):
        rec = mark(version, 1700000000, 1000000)
        assert len(rec) == (20 if version == 2 else 24)
        sts, (out, _mem) = decode(rec, version)
        assert sts == 0 and out.numpmid == 0


@pytest.mark.parametrize("version", [2, 3])
def test_record_every_truncation_of_the_body(version):
    rec = sample_record(version)
    for n in range(len(rec) - 4):
        # a record whose framing claims n bytes, cut at every length
        cut = be(n) + rec[4:n - 4] + be(n) if n >= 8 else rec[:n]
        sts, _ = decode(cut, version)
        assert sts == PM_ERR_LOGREC, n


@pytest.mark.parametrize("version", [2, 3])
def test_record_strict_block_layout(version):
    rec = sample_record(version)
    fixed = 16 if version == 2 else 20
    # the DPTR word of PMID_B's value: point it at the next block (shared, gap before)
    off = fixed + (12 + 16) + 12 + 4
    word = struct.unpack(">I", rec[off:off + 4])[0]
    assert decode(rec[:off] + be(word + 4) + rec[off + 4:], version)[0] == PM_ERR_LOGREC
    # padding after the last block: blocks no longer end at the trailer
    padded = frame(rec[4:-4] + b"\0\0\0\0")
    assert decode(padded, version)[0] == PM_ERR_LOGREC
    # an unknown valfmt
    bad = rec[:fixed + 8] + be(3) + rec[fixed + 12:]
    assert decode(bad, version)[0] == PM_ERR_LOGREC
    # numpmid beyond the record
    big = rec[:fixed - 4] + be(0x7FFFFFFF) + rec[fixed:]
    assert decode(big, version)[0] == PM_ERR_LOGREC


def volume(version: int, records) -> bytes:
    return label(version, 0) + b"".join(records)


def read(vol: bytes, version: int, pos: int, backward: bool):
    newpos = ffi.new("uint64_t *")
    rec = ffi.new("pcp_log_record *")
    ll = V2_LABEL if version == 2 else V3_LABEL
    sts = lib.pcp_archive_record_read(cbuf(vol), len(vol), ll, version, 1 if backward else 0, 0,
                                      pos, newpos, rec)
    return sts, newpos[0], ((rec.sec, rec.nsec, rec.numpmid, rec.off, rec.len) if sts == 0 else None)


@pytest.mark.parametrize("version", [2, 3])
def test_read_forwards_and_backwards(version):
    recs = [sample_record(version, 1700000100 + i) for i in range(3)] + [mark(version, 1700000200, 0)]
    vol = volume(version, recs)
    ll = V2_LABEL if version == 2 else V3_LABEL
    pos, seen = ll, []
    while True:
        sts, pos, rec = read(vol, version, pos, False)
        if sts == PCP_LOG_END:
            break
        assert sts == 0
        seen.append(rec[:3])
    assert seen == [(1700000100, 500000000, 5), (1700000101, 500000000, 5),
                    (1700000102, 500000000, 5), (1700000200, 0, 0)]
    assert pos == len(vol)
    back = []
    while True:
        sts, pos, rec = read(vol, version, pos, True)
        if sts == PCP_LOG_END:
            break
        back.append(rec[:3])
    assert back == seen[::-1] and pos == ll


def test_read_partial_header_at_end_is_the_end():
    vol = volume(2, [sample_record(2)])
    for extra in (b"", b"\0", b"\0\0", b"\0\0\0"):
        sts, pos, _ = read(vol + extra, 2, len(vol), False)
        assert (sts, pos) == (PCP_LOG_END, len(vol))


def test_read_truncated_record_is_sticky():
    rec = sample_record(2)
    vol = volume(2, [rec])
    for cut in range(4, len(rec)):
        sts, pos, _ = read(vol[:V2_LABEL + cut], 2, V2_LABEL, False)
        assert (sts, pos) == (PM_ERR_LOGREC, V2_LABEL), cut


def test_read_trailer_mismatch_steps_over_the_record():
    rec = sample_record(2)
    bad = rec[:-4] + be(len(rec) - 4)
    vol = volume(2, [bad, sample_record(2, 1700000300)])
    sts, pos, _ = read(vol, 2, V2_LABEL, False)
    assert (sts, pos) == (PM_ERR_LOGREC, V2_LABEL + len(rec))
    sts, pos, r = read(vol, 2, pos, False)
    assert sts == 0 and r[0] == 1700000300


def test_read_short_length_word_consumes_it():
    vol = volume(2, [be(4, 0, 0, 0)])
    sts, pos, _ = read(vol, 2, V2_LABEL, False)
    assert (sts, pos) == (PM_ERR_LOGREC, V2_LABEL + 4)


def test_read_bad_record_body_is_stepped_over():
    rec = sample_record(2)
    fixed = 16
    bad = rec[:fixed + 8] + be(7) + rec[fixed + 12:]      # unknown valfmt
    vol = volume(2, [bad])
    assert read(vol, 2, V2_LABEL, False)[:2] == (PM_ERR_LOGREC, len(vol))
    # backwards libpcp is left at the record's start after a decode failure
    assert read(vol, 2, len(vol), True)[:2] == (PM_ERR_LOGREC, V2_LABEL)


def test_read_backwards_length_mismatch():
    rec = sample_record(2)
    bad = be(len(rec) + 8) + rec[4:]                        # header differs from trailer
    vol = volume(2, [bad])
    # libpcp reads the trailer, steps back, then compares the header word it meets
    assert read(vol, 2, len(vol), True)[:2] == (PM_ERR_LOGREC, V2_LABEL + 4)
    # a trailer claiming more than the position: the stream stays put (sticky)
    vol2 = volume(2, [rec[:-4] + be(0x10000)])
    assert read(vol2, 2, len(vol2), True)[:2] == (PM_ERR_LOGREC, len(vol2))


def test_bulk_scan_matches_single_reads():
    recs = [sample_record(3, 1700000000 + i) for i in range(50)] + [mark(3, 1700000100, 0)]
    vol = volume(3, recs)
    arrays = {}

    def col(name, ctype, n):
        arrays[name] = ffi.new(ctype + "[]", n)
        return arrays[name]

    cols = ffi.new("pcp_log_columns *")
    cols.rec_cap, cols.set_cap, cols.val_cap = 16, 64, 160
    for name, ctype, n in (("sec", "int64_t", 16), ("nsec", "int64_t", 16),
                           ("numpmid", "int32_t", 16), ("rec_first", "int32_t", 16),
                           ("rec_off", "uint64_t", 16), ("pmid", "uint32_t", 64),
                           ("numval", "int32_t", 64), ("valfmt", "int32_t", 64),
                           ("set_first", "int32_t", 64), ("inst", "int32_t", 160),
                           ("vtype", "int32_t", 160), ("ival", "int64_t", 160),
                           ("dval", "double", 160), ("boff", "uint32_t", 160),
                           ("blen", "uint32_t", 160)):
        setattr(cols, name, col(name, ctype, n))
    data = cbuf(vol)
    pos = ffi.new("uint64_t *", V3_LABEL)
    got = []
    while True:
        cols.nrec = cols.nset = cols.nval = 0
        sts = lib.pcp_archive_records_scan(data, len(vol), 3, pos, cols)
        for k in range(cols.nrec):
            s0 = cols.rec_first[k]
            got.append((cols.sec[k], cols.numpmid[k],
                        [cols.ival[cols.set_first[s0] + j] for j in range(2)] if cols.numpmid[k] else []))
        if sts == PCP_LOG_END:
            break
        assert sts == 0
    assert len(got) == 51
    assert got[0] == (1700000000, 5, [10, -5]) and got[-1] == (1700000100, 0, [])


def test_bulk_scan_record_larger_than_columns():
    vol = volume(2, [sample_record(2)])
    cols = ffi.new("pcp_log_columns *")
    cols.rec_cap, cols.set_cap, cols.val_cap = 1, 1, 1
    keep = []
    for name, ctype in (("sec", "int64_t"), ("nsec", "int64_t"), ("numpmid", "int32_t"),
                        ("rec_first", "int32_t"), ("rec_off", "uint64_t"), ("pmid", "uint32_t"),
                        ("numval", "int32_t"), ("valfmt", "int32_t"), ("set_first", "int32_t"),
                        ("inst", "int32_t"), ("vtype", "int32_t"), ("ival", "int64_t"),
                        ("dval", "double"), ("boff", "uint32_t"), ("blen", "uint32_t")):
        keep.append(ffi.new(ctype + "[]", 1))
        setattr(cols, name, keep[-1])
    pos = ffi.new("uint64_t *", V2_LABEL)
    assert lib.pcp_archive_records_scan(cbuf(vol), len(vol), 2, pos, cols) == PM_ERR_TOOBIG
    assert pos[0] == V2_LABEL


# ---- metadata ----------------------------------------------------------------------------

def meta_walk(meta: bytes, version: int = 2):
    """Decode every record after the label; returns [(type, decoded...)] or an error."""
    data = cbuf(meta)
    pos = V2_LABEL if version == 2 else V3_LABEL
    out = []
    t, rl, nxt = ffi.new("int32_t *"), ffi.new("int32_t *"), ffi.new("uint64_t *")
    while True:
        sts = lib.pcp_archive_meta_header(data, len(meta), pos, t, rl)
        if sts == PCP_LOG_END:
            return out
        if sts < 0:
            return out + [("error", sts)]
        if t[0] == 1:
            d = ffi.new("pcp_desc *")
            offs, lens = ffi.new("uint32_t[8]"), ffi.new("int32_t[8]")
            n = lib.pcp_archive_meta_desc(data, len(meta), pos, d, 8, offs, lens, nxt)
            if n < 0:
                return out + [("error", n)]
            out.append(("desc", d.pmid, d.type, [meta[offs[i]:offs[i] + lens[i]] for i in range(n)]))
        elif t[0] in (2, 5, 6):
            hd = ffi.new("pcp_indom_head *")
            inst, offs, lens = ffi.new("int32_t[64]"), ffi.new("uint32_t[64]"), ffi.new("int32_t[64]")
            n = lib.pcp_archive_meta_indom(data, len(meta), pos, hd, 64, inst, offs, lens, nxt)
            if n < 0:
                return out + [("error", n)]
            out.append(("indom", hd.indom, hd.sec, hd.nsec,
                        [(inst[i], None if lens[i] < 0 else meta[offs[i]:offs[i] + lens[i]])
                         for i in range(n)]))
        elif t[0] in (3, 7):
            hd = ffi.new("pcp_label_head *")
            sets, labs, total = ffi.new("pcp_labelset[16]"), ffi.new("pcp_label[64]"), ffi.new("int32_t *")
            n = lib.pcp_archive_meta_labels(data, len(meta), pos, hd, 16, sets, 64, labs, total,
                                            nxt)
            if n < 0:
                return out + [("error", n)]
            out.append(("labels", hd.type, hd.ident,
                        [(sets[i].inst, meta[sets[i].json_off:sets[i].json_off + sets[i].json_len],
                          sets[i].nlabels) for i in range(n)]))
        elif t[0] == 4:
            tt, ident, toff, tlen = (ffi.new("uint32_t *") for _ in range(4))
            n = lib.pcp_archive_meta_text(data, len(meta), pos, tt, ident, toff, tlen, nxt)
            if n < 0:
                return out + [("error", n)]
            out.append(("text", tt[0], ident[0], meta[toff[0]:toff[0] + tlen[0]] if n == 0 else None))
        else:
            return out + [("rectype", t[0])]
        pos = nxt[0]


GOOD_META = [
    desc_record(PMID_A, 0, 0x07400001, 3, 0, [b"sample.a", b"sample.dup.a"]),
    indom_record(2, 1700000000, 5000, 0x07400001, [(5, b"five"), (1, b"one two")]),
    indom_record(6, 1700000001, 0, 0x07400001, [(1, None), (9, b"nine")]),
    label_record(3, 1700000000, 0, 0x02, 29, [(-1, b'{"agent":"sample"}', [(2, 5, 0x42, 9, 8)])]),
    text_record(5, PMID_A, b"one line"),
]


def test_meta_records_decode():
    out = meta_walk(label(2, -1) + b"".join(GOOD_META))
    assert out[0] == ("desc", PMID_A, 0, [b"sample.a", b"sample.dup.a"])
    assert out[1] == ("indom", 0x07400001, 1700000000, 5000, [(5, b"five"), (1, b"one two")])
    assert out[2] == ("indom", 0x07400001, 1700000001, 0, [(1, None), (9, b"nine")])
    assert out[3] == ("labels", 2, 29, [(-1, b'{"agent":"sample"}', 1)])
    assert out[4] == ("text", 5, PMID_A, b"one line")
    assert len(out) == 5


@pytest.mark.parametrize("i", range(len(GOOD_META)))
def test_meta_every_truncation(i):
    head = label(2, -1) + b"".join(GOOD_META[:i])
    rec = GOOD_META[i]
    for n in range(1, len(rec)):
        out = meta_walk(head + rec[:n])
        if n < 8:
            assert len(out) == i and not any(o[0] == "error" for o in out), n  # partial header
        else:
            assert out[-1] == ("error", PM_ERR_LOGREC), n


def test_meta_damage():
    lab = label(2, -1)
    neg_inst = indom_record(2, 0, 0, 1, [(-1, b"x")])
    assert meta_walk(lab + neg_inst)[-1] == ("error", PM_ERR_LOGREC)
    bad_idx = indom_record(2, 0, 0, 1, [(1, b"x")])
    bad_idx = bad_idx[:32] + be(100) + bad_idx[36:]         # string index past the table
    assert meta_walk(lab + bad_idx)[-1] == ("error", PM_ERR_LOGREC)
    deleted_in_full = indom_record(5, 0, 0, 1, [(1, None)])  # -1 only allowed in deltas
    assert meta_walk(lab + deleted_in_full)[-1] == ("error", PM_ERR_LOGREC)
    assert meta_walk(lab + be(0, 1))[-1] == ("error", PM_ERR_LOGREC)   # length 0
    assert meta_walk(lab + frame(be(9, 1, 2)))[-1] == ("rectype", 9)
    long_json = label_record(3, 0, 0, 1, 0xFFFFFFFF, [(-1, b"{}", [])])
    long_json = long_json[:36] + be(70000) + long_json[40:]
    assert meta_walk(lab + long_json)[-1] == ("error", PM_ERR_LOGREC)
    many_labels = label_record(3, 0, 0, 1, 0xFFFFFFFF, [(-1, b"{}", [])])
    many_labels = many_labels[:-8] + be(300) + many_labels[-4:]
    assert meta_walk(lab + many_labels)[-1] == ("error", PM_ERR_LOGREC)
    outside = label_record(3, 0, 0, 1, 0xFFFFFFFF, [(-1, b'{"a":1}', [(2, 1, 1, 30, 1)])])
    assert meta_walk(lab + outside)[-1] == ("error", PM_ERR_LOGREC)


def test_meta_text_of_unknown_kind_resumes_at_its_trailer():
    lab = label(2, -1)
    odd = text_record(4 | 16, 1, b"xx")        # neither ONELINE nor HELP
    out = meta_walk(lab + odd + GOOD_META[0])
    # libpcp reads the skipped record's trailer word as the next header
    assert out[0][:2] == ("text", 20) and out[0][3] is None
    assert out[1][0] in ("error", "rectype")


def test_desc_names_are_read_as_a_stream():
    rec = desc_record(PMID_A, 0, 0xFFFFFFFF, 3, 0, [b"a.b"])
    short = be(len(rec) - 3) + rec[4:]         # header disagrees with the names read
    assert meta_walk(label(2, -1) + short)[-1] == ("error", PM_ERR_LOGREC)


def meta_scan(meta: bytes, version: int = 2):
    """The one-pass scan (pcp_archive_meta_scan) of the same bytes, in meta_walk's terms
    as _scanned_like_walk reduces them: what the scan keeps of each record."""
    data = cbuf(meta)
    ix = ffi.new("pcp_meta_index *")
    sts = lib.pcp_archive_meta_scan(data, len(meta), V2_LABEL if version == 2 else V3_LABEL, ix)
    try:
        recs = []
        for i in range(ix.ndesc):
            first = ix.desc_first[i]
            names = [meta[ix.name_off[k]:ix.name_off[k] + ix.name_len[k]]
                     for k in range(first, first + ix.desc_nnames[i])]
            recs.append(("desc", ix.desc_pmid[i], ix.desc_type[i], names))
        for i in range(ix.nindom):
            r = ix.indom[i]
            recs.append(("indom", r.indom, r.sec, r.nsec, [
                (ix.inst[k], None if ix.inst_name_len[k] < 0
                 else meta[ix.inst_name_off[k]:ix.inst_name_off[k] + ix.inst_name_len[k]])
                for k in range(r.first, r.first + r.numinst)]))
        for i in range(ix.nlabel):
            r = ix.label[i]
            recs.append(("labels", r.type, r.ident))
        for i in range(ix.ntext):
            t = ix.text[i]
            recs.append(("text", t.type, t.ident, meta[t.off:t.off + t.len]))
        return sts, recs
    finally:
        lib.pcp_archive_meta_index_free(ix)


def _scanned_like_walk(walked):
    """meta_walk's output as the scan keeps it: grouped by kind in file order, names cut
    at their first NUL, no instance domain without instances, no skipped help text,
    labels by kind and ident (their sets are decoded later); and the final status."""
    status = 0
    kinds = {"desc": [], "indom": [], "labels": [], "text": []}
    for rec in walked:
        if rec[0] == "error":
            status = rec[1]
        elif rec[0] == "rectype":
            status = PM_ERR_RECTYPE
        elif rec[0] == "desc":
            kinds["desc"].append(rec[:3] + ([n.split(b"\0", 1)[0] for n in rec[3]],))
        elif rec[0] == "indom" and rec[4]:
            kinds["indom"].append(rec)
        elif rec[0] == "labels":
            kinds["labels"].append(rec[:3])
        elif rec[0] == "text" and rec[3] is not None:
            kinds["text"].append(rec)
    return status, kinds["desc"] + kinds["indom"] + kinds["labels"] + kinds["text"]


def test_meta_scan_agrees_with_the_record_decoders():
    lab = label(2, -1)
    cases = [lab + b"".join(GOOD_META),
             lab + text_record(4 | 16, 1, b"xx") + GOOD_META[0],
             lab + desc_record(PMID_A, 0, 0xFFFFFFFF, 3, 0, [b"a.b\0\0\0", b"c"])]
    for i, rec in enumerate(GOOD_META):
        head = lab + b"".join(GOOD_META[:i])
        cases += [head + rec[:n] for n in range(1, len(rec))]
    cases += [lab + frame(be(9, 1, 2)), lab + be(0, 1), lab + indom_record(5, 0, 0, 1, [(1, None)])]
    for meta in cases:
        assert meta_scan(meta) == _scanned_like_walk(meta_walk(meta)), meta
    sts, recs = meta_scan(cases[0])
    assert sts == 0 and len(recs) == 5


def test_meta_scan_grows_its_arrays():
    """Many records and instances: the walk's arrays grow past their first room."""
    recs = [desc_record(PMID_A + i, 0, 0xFFFFFFFF, 3, 0, [b"m.n%d" % i, b"m.o%d" % i])
            for i in range(200)]
    recs.append(indom_record(2, 1700000000, 0, 7, [(k, b"i%d" % k) for k in range(300)]))
    meta = label(2, -1) + b"".join(recs)
    sts, out = meta_scan(meta)
    assert sts == 0
    assert [r[1] for r in out if r[0] == "desc"] == [PMID_A + i for i in range(200)]
    assert [r[3] for r in out if r[0] == "desc"][-1] == [b"m.n199", b"m.o199"]
    assert [r[4] for r in out if r[0] == "indom"] == [[(k, b"i%d" % k) for k in range(300)]]


@pytest.mark.parametrize("version", [2, 3])
def test_index_entries(version):
    ll = V2_LABEL if version == 2 else V3_LABEL
    raw = label(version, -2) + index_entry(version, 1700000000, 1000, 0, 500, ll) + \
        index_entry(version, 1700000005, 2000, 1, 900, 4096)
    for extra in (b"", b"\1\2\3"):                  # a partial entry is ignored
        data = raw + extra
        out = ffi.new("pcp_index_entry[4]")
        assert lib.pcp_archive_index_decode(cbuf(data), len(data), ll, version, 4, out) == 2
        assert (out[1].sec, out[1].nsec, out[1].vol, out[1].off_meta, out[1].off_data) == \
            (1700000005, 2000, 1, 900, 4096)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400), st.sampled_from([2, 3]))
def test_random_bytes_never_break_the_readers(data, version):
    vol = label(version, 0) + data
    pos = V2_LABEL if version == 2 else V3_LABEL
    for _ in range(50):
        sts, newpos, _ = read(vol, version, pos, False)
        assert sts in (0, PCP_LOG_END, PM_ERR_LOGREC)
        if sts == PCP_LOG_END or newpos == pos:
            break
        pos = newpos
    meta = label(version, -1) + data
    assert meta_scan(meta, version) == _scanned_like_walk(meta_walk(meta, version))


# ---- the archive PMNS without its tree ---------------------------------------------------

def _kept_by_tree(named):
    """The names the archive PMNS tree keeps (pcp._archive.meta's add_name, libpcp's
    rules, a name read as a C string): name -> pmid."""
    from pcp._archive.meta import Metadata

    meta = Metadata()
    for pmid, name in named:
        meta.add_name(pmid, name.split(b"\0", 1)[0])
    return dict(meta._name_to_pmid)


def _kept_by_hash_set(named):
    """The same through csrc/archive_meta_scan.c's hash set: each name in its own
    descriptor record of one .meta."""
    meta = label(2, -1) + b"".join(desc_record(pmid, 0, 0xFFFFFFFF, 3, 0, [name])
                                   for pmid, name in named)
    data = cbuf(meta)
    ix = ffi.new("pcp_meta_index *")
    try:
        assert lib.pcp_archive_meta_scan(data, len(meta), V2_LABEL, ix) == 0
        kept = lib.pcp_archive_meta_names_index(data, len(meta), ix)
        out = {}
        for pmid, name in named:
            found = lib.pcp_archive_meta_name_pmid(data, ix, name, len(name))
            if found >= 0:
                out[name.split(b"\0", 1)[0]] = found
        for probe in (b"", b".", b"a", b"a.b", b"zz.top", b"a.b.c.d"):
            found = lib.pcp_archive_meta_name_pmid(data, ix, probe, len(probe))
            assert found < 0 or probe in out, probe
        assert kept == len(out)
        return out
    finally:
        lib.pcp_archive_meta_index_free(ix)


def test_archive_pmns_rules_without_the_tree():
    named = [(1, b"a.b"), (2, b"a.b"),          # the first binding wins
             (3, b"a.b.c"),                       # through a leaf
             (4, b"a"),                           # a node with children
             (5, b"x..y"), (6, b".x"), (7, b"x."), (8, b""),   # empty components
             (9, b"x.y\0junk"),                   # ends at its NUL
             (10, b"x.z"), (11, b"x.y")]          # x.y bound already (by the NUL name)
    assert _kept_by_hash_set(named) == _kept_by_tree(named) == {
        b"a.b": 1, b"x.y": 9, b"x.z": 10}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50),
                          st.lists(st.sampled_from([b"a", b"b", b"cc", b""]), min_size=1,
                                   max_size=4).map(b".".join)), max_size=30))
def test_archive_pmns_hash_set_agrees_with_the_tree(named):
    assert _kept_by_hash_set(named) == _kept_by_tree(named)
