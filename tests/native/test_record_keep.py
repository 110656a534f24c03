"""pcp_archive_record_keep (csrc/archive_record.c over result.c): only the value sets of
the pmids a filter keeps, decoded from a v2 archive record, the same values as the full
decoder gives them; and the interpolation state's use of it (only declared metrics are
decoded, so a metric declared later makes a cached decode stale)."""
import struct

from pcp._native import ffi, lib

from tests.native.test_interp_state import (INSTANT, MARK_FORW, PCP_INTERP_NEED_ROOM, TYPE_64,
                                            TYPE_U32, WALK_NONE, declare, new_state)

PM_VAL_INSITU, PM_VAL_DPTR = 0, 1


def v2_record(sets):
    """Bytes of a v2 data record: sets of (pmid, [(inst, int)]) with INSITU values, or
    (pmid, [(inst, int)], 64) with 64-bit values in blocks."""
    head = 16
    body = b""
    blocks = b""
    sets_len = sum(8 + (4 + 8 * len(s[1]) if s[1] else 0) for s in sets)
    for s in sets:
        pmid, values = s[0], s[1]
        body += struct.pack(">Ii", pmid, len(values))
        if not values:
            continue
        block = len(s) > 2
        body += struct.pack(">i", PM_VAL_DPTR if block else PM_VAL_INSITU)
        for inst, value in values:
            if block:
                off = head + sets_len + len(blocks)
                body += struct.pack(">iI", inst, (off + 8) // 4)
                blocks += struct.pack(">Iq", (TYPE_64 << 24) | 12, value)
            else:
                body += struct.pack(">ii", inst, value)
    length = head + len(body) + len(blocks) + 4
    return (struct.pack(">iiii", length, 1000, 0, len(sets)) + body + blocks
            + struct.pack(">i", length))


SETS = [(10, [(1, 5), (2, 6)]), (11, [(0, 1 << 40)], 64), (12, []), (13, [(-1, 7)])]


def decode(buf, n, keep):
    nsets, nvalues = ffi.new("int32_t *"), ffi.new("int32_t *")
    assert lib.pcp_archive_record_keep(buf, n, 2, keep, ffi.NULL, nsets, nvalues, ffi.NULL) == 0
    mem = ffi.new("int64_t[]", (lib.pcp_result_mem_size(nsets[0], nvalues[0]) + 7) // 8)
    out = ffi.new("pcp_result *")
    lib.pcp_result_bind(out, mem, nsets[0], nvalues[0])
    assert lib.pcp_archive_record_keep(buf, n, 2, keep, ffi.NULL, nsets, nvalues, out) == 0
    got = []
    for i in range(out.numpmid):
        vals = [(out.inst[k], out.vtype[k], out.ival[k])
                for k in range(out.first[i], out.first[i] + max(out.numval[i], 0))]
        got.append((out.pmid[i], out.numval[i], vals))
    return got


def test_only_the_kept_sets_with_the_full_decoders_values():
    raw = v2_record(SETS)
    buf = ffi.new("uint8_t[]", raw)
    keep = ffi.callback("pcp_pmid_filter", lambda ctx, pmid: pmid in (11, 12, 13))
    keep_all = ffi.callback("pcp_pmid_filter", lambda ctx, pmid: 1)
    everything = decode(buf, len(raw), keep_all)
    assert [s[0] for s in everything] == [10, 11, 12, 13]
    assert everything[1] == (11, 1, [(0, TYPE_64, 1 << 40)])
    assert decode(buf, len(raw), keep) == everything[1:]
    none = ffi.callback("pcp_pmid_filter", lambda ctx, pmid: 0)
    assert decode(buf, len(raw), none) == []


def test_a_block_outside_the_record_is_refused():
    raw = bytearray(v2_record([(11, [(0, 3)], 64)]))
    struct.pack_into(">I", raw, 16 + 16, 1 << 20)         # the DPTR word
    buf = ffi.new("uint8_t[]", bytes(raw))
    keep = ffi.callback("pcp_pmid_filter", lambda ctx, pmid: 1)
    n = ffi.new("int32_t *")
    assert lib.pcp_archive_record_keep(buf, len(raw), 2, keep, ffi.NULL, n, n, ffi.NULL) == 0
    mem = ffi.new("int64_t[]", 64)
    out = ffi.new("pcp_result *")
    lib.pcp_result_bind(out, mem, 1, 1)
    nsets, nvalues = ffi.new("int32_t *", 1), ffi.new("int32_t *", 1)
    assert lib.pcp_archive_record_keep(buf, len(raw), 2, keep, ffi.NULL, nsets, nvalues,
                                       out) == -12373     # PM_ERR_LOGREC


def values_at(ip, pmids, raw):
    """One fetch at the record's time with the record folded (key 1): values per pmid."""
    buf = ffi.new("uint8_t[]", raw)
    req = ffi.new("uint32_t[]", pmids)
    assert lib.pcp_interp_begin(ip, req, len(pmids), ffi.NULL) == 0
    assert lib.pcp_interp_fold_record(ip, 0.0, 0.0, 1, buf, len(raw), 2, MARK_FORW, 0,
                                      WALK_NONE) >= 0
    nvalues, nbytes = ffi.new("int32_t *"), ffi.new("int64_t *")
    assert lib.pcp_interp_result(ip, 0.0, 0, ffi.NULL, ffi.NULL, 0, nvalues,
                                 nbytes) == PCP_INTERP_NEED_ROOM
    return nvalues[0]


def test_a_metric_declared_after_a_record_was_decoded_still_gets_its_values():
    raw = v2_record(SETS)
    ip = new_state()
    declare(ip, 13, TYPE_U32, INSTANT)
    assert values_at(ip, [13], raw) == 1
    # the record is cached without metric 10's set: declaring 10 must not reuse that
    declare(ip, 10, TYPE_U32, INSTANT, insts=(1, 2), indom=5)
    assert values_at(ip, [10, 13], raw) == 3
