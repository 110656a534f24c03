"""Event arrays built and broken on purpose, compared with libpcp's unpack functions.

Valid PDUs carrying event arrays of both kinds (every parameter type, flags, MISSED
records, empty strings, zero-parameter events) are decoded by libpcp itself in the
oracle. Broken arrays cannot go that way (libpcp 6.0.3's PDU decoder converts event
arrays to host order without bounds checks), so each broken wire block is given to the
oracle's bounded model of that conversion and then to libpcp's real unpack functions,
and the same wire bytes to our side inside a PDU: the two answers must agree field for
field, error codes included. The model is itself checked against libpcp's decoder on
the valid arrays. No pmcd is needed: the oracle uses a local context.

Deliberate differences, each asserted explicitly:
* a parameter whose ep_len is too short for its type (under 4, or under 4 + 4/8 for
  numbers): libpcp reads past the parameter (numbers; its receive conversion has
  byte-swapped whatever follows as part of the value), overlaps the next parameter
  with this one (ep_len < 4), and for strings and aggregates with ep_len < 4 crashes
  (memcpy of a negative size; the oracle reports it); we stop there with
  PM_ERR_TOOSMALL, as a structural error;
* an ea_len beyond the bytes available: libpcp trusts it (its wire decoder bounded
  the block), our C entry point gives PM_ERR_TOOBIG;
* numval 0: libpcp unpacks vlist[idx] anyway (undefined); we return no records;
* idx outside the value list: libpcp reads past it; we raise PM_ERR_INST."""

import random
import struct

import pytest

from support.eventutil import (EVENT, HIGHRES_EVENT, MISSED, block_offset, block_result,  # noqa: F401
                       event_array, event_oracle, mutate, mutate_block, p32, p64, paggr,
                       pdouble, pfloat, pstring, pu32, pu64, record, render_ours, result_of,
                       result_pdu, run_oracle)

PM_ERR_CONV = -12362
PM_ERR_TYPE = -12397
PM_ERR_TOOSMALL = -12443
PM_ERR_TOOBIG = -12444
PM_ERR_IPC = -12366
PM_ERR_INST = -12360
PM_ERR_PMID = -12358

PMID = 0x0740007F  # 29.0.127 .. 29.0.135 as in the sample PMDA


def rich_records(kind):
    """Records covering every parameter type, flag combination and corner we know of."""
    frac = 123456 if kind == EVENT else 123456789
    return [
        record(kind, 1700000000, frac, 0x1A, [pu32(PMID, 4), pu64(PMID + 4, 5),
                                              pstring(PMID + 7, "6")]),
        record(kind, 1700000001, frac, 0x1, [pu32(PMID, 7), pdouble(PMID + 6, 8.0),
                                             pdouble(PMID + 6, -9.0)]),
        record(kind, 1700000002, frac, 0x4, [p32(PMID + 1, -14), p64(PMID + 3, -(1 << 40)),
                                             pfloat(PMID + 5, -17.5), pstring(PMID + 7, "twelve"),
                                             pstring(PMID + 7, ""), pstring(PMID + 7, b"nul\0in")]),
        record(kind, 1700000003, frac, MISSED, [], nparams=7),
        record(kind, 1700000004, frac, 0, [paggr(PMID + 8, bytes(range(1, 9))),
                                           paggr(PMID + 8, b"", static=True),
                                           paggr(PMID + 8, b"\xff" * 13)]),
        record(kind, 1700000005, frac, 0, []),                       # numpmid 0
        record(kind, -5, frac // 2, 0x1, []),                         # flags only
        record(kind, 1700000006, frac, 0x8 | 0x10 | 0x2, [pu32(0xFFFFFFFF, 0xFFFFFFFF)]),
    ]


def layout(kind, recs):
    """Block offsets of every record header and parameter of event_array(kind, recs)."""
    hdr = 16 if kind == EVENT else 24
    out = []
    pos = 8
    for raw in recs:
        flags, nparams = struct.unpack(">Ii", raw[hdr - 8:hdr])
        params = []
        p = pos + hdr
        for _ in range(0 if flags & MISSED else nparams):
            params.append(p)
            plen = struct.unpack(">I", raw[p - pos + 4:p - pos + 8])[0] & 0xFFFFFF
            p += 4 + ((plen + 3) & ~3)
        out.append((pos, params))
        pos += len(raw)
    return out


EV_PMID, HR_PMID = 0x07400088, 0x0740008B  # sample.event.records, highres_records


def rich_pdu(highres_pdu=True):
    ev = event_array(EVENT, rich_records(EVENT))
    hr = event_array(HIGHRES_EVENT, rich_records(HIGHRES_EVENT))
    return result_pdu([
        (EV_PMID, 3, 2, [(0, ev), (1, event_array(EVENT, [])), (2, hr)]),
        (HR_PMID, 1, 1, [(-1, hr)]),
        (0x07400086, 1, 1, [(-1, b"\x06\x00\x00\x09hello")]),     # a string, not events
        (0x0740007F, 1, 0, [(-1, 42)]),                            # INSITU
    ], highres=highres_pdu)


def compare(cases):
    """Run cases (oracle dicts plus the PDU our side decodes) and compare the answers."""
    expected = run_oracle(cases)
    mismatches = []
    for case, exp in zip(cases, expected):
        assert exp["decode"] == 0, case
        if "block" in case:
            ours = render_ours(block_result(case["block"]), (0, 0))
        else:
            ours = render_ours(result_of(case["ours_pdu"]), case.get("target"))
        got = [(o["classic"], o["highres"]) for o in ours]
        want = [(e["classic"], e["highres"]) for e in exp["values"]]
        if got != want:
            mismatches.append((case.get("what"), got, want))
    assert not mismatches, mismatches[:3]
    return expected


def test_rich_arrays_match_libpcp(event_oracle):
    for highres_pdu in (True, False):
        pdu = rich_pdu(highres_pdu)
        exp = compare([{"pdu": pdu, "ours_pdu": pdu}])
        values = exp[0]["values"]
        assert len(values) == 4
        statuses = [(v["classic"]["sts"], v["highres"]["sts"]) for v in values]
        assert statuses == [(8, PM_ERR_TYPE), (0, PM_ERR_TYPE), (PM_ERR_TYPE, 8),
                            (PM_ERR_TYPE, 8)]
        numpmids = [r["numpmid"] for r in values[0]["classic"]["records"]]
        assert numpmids == [4, 4, 7, 2, 3, 0, 1, 2]
    # the oracle's model of the receive conversion agrees with libpcp's decoder
    blocks = [event_array(k, rich_records(k)) for k in (EVENT, HIGHRES_EVENT)]
    modelled = run_oracle([{"block": b} for b in blocks])
    real = run_oracle([{"pdu": rich_pdu()}])[0]["values"]
    assert modelled[0]["values"][0]["classic"] == real[0]["classic"]
    assert modelled[1]["values"][0]["highres"] == real[3]["highres"]


def test_not_an_event_value(event_oracle):
    pdu = rich_pdu()
    # a string block: PM_ERR_TYPE from both functions
    compare([{"pdu": pdu, "ours_pdu": pdu, "target": (2, 0)}])
    # INSITU: PM_ERR_CONV (libpcp checks valfmt before touching the value)
    exp = run_oracle([{"pdu": pdu, "target": (0, 0), "valfmt": 0}])
    assert exp[0]["values"][0]["classic"]["sts"] == PM_ERR_CONV
    from pcp import pmapi

    vs = result_of(pdu).contents.get_vset(3)
    for fn in (pmapi.pmContext.pmUnpackEventRecords, pmapi.pmContext.pmUnpackHighResEventRecords):
        with pytest.raises(pmapi.pmErr) as e:
            fn(vs, 0)
        assert e.value.args[0] == PM_ERR_CONV


def test_error_code_in_numval_passes_through(event_oracle):
    from pcp import pmapi

    pdu = rich_pdu()
    exp = run_oracle([{"pdu": pdu, "target": (0, 0), "numval": PM_ERR_PMID}])
    assert exp[0]["values"][0]["classic"]["sts"] == PM_ERR_PMID
    assert exp[0]["values"][0]["highres"]["sts"] == PM_ERR_PMID
    ours = result_of(result_pdu([(EV_PMID, PM_ERR_PMID, 0, [])])).contents.get_vset(0)
    with pytest.raises(pmapi.pmErr) as e:
        pmapi.pmContext.pmUnpackEventRecords(ours, 0)
    assert e.value.args[0] == PM_ERR_PMID
    from pcp._decode.events import iter_event_records

    with pytest.raises(pmapi.pmErr) as e:
        iter_event_records(ours, 0)
    assert e.value.args[0] == PM_ERR_PMID


def test_no_values_and_bad_index():
    from pcp import pmapi

    empty = result_of(result_pdu([(EV_PMID, 0, 0, [])])).contents.get_vset(0)
    assert pmapi.pmContext.pmUnpackEventRecords(empty, 0) == []
    assert pmapi.pmContext.pmUnpackHighResEventRecords(empty, 0) == []
    vs = result_of(rich_pdu()).contents.get_vset(0)
    for idx in (3, -1, 1 << 31):
        with pytest.raises(pmapi.pmErr) as e:
            pmapi.pmContext.pmUnpackEventRecords(vs, idx)
        assert e.value.args[0] == PM_ERR_INST
    with pytest.raises(TypeError):
        pmapi.pmContext.pmUnpackEventRecords(object(), 0)


def _cases_for(block, muts_list, what):
    return [{"block": mutate_block(block, m), "what": (what, m)} for m in muts_list]


RICH = {k: event_array(k, rich_records(k)) for k in (EVENT, HIGHRES_EVENT)}


def test_ea_len_truncated_at_every_byte(event_oracle):
    cases = []
    for kind, block in RICH.items():
        # below 4 the block header itself is invalid: the PDU decoder refuses it
        muts = [[(0, 4, (kind << 24) | n)] for n in range(4, len(block) + 1)]
        # and with nrecords lowered to the records that start within the cut
        starts = [roff for roff, _ in layout(kind, rich_records(kind))]
        muts += [[(0, 4, (kind << 24) | n), (4, 4, sum(s < n for s in starts))]
                 for n in range(8, len(block) + 1)]
        cases += _cases_for(block, muts, "ea_len")
    expected = compare(cases)
    codes = {v[side]["sts"] for e in expected for v in e["values"]
             for side in ("classic", "highres")}
    assert {PM_ERR_TOOSMALL, PM_ERR_TOOBIG, PM_ERR_TYPE, 8} <= codes
    assert {n for e in expected for v in e["values"] for n in
            (v["classic"]["sts"], v["highres"]["sts"])} >= set(range(0, 8))


def test_block_header_under_4_bytes_fails_the_whole_result():
    from pcp.pmapi import pmErr

    pdu = rich_pdu()
    at = block_offset(pdu, 0, 0)
    for n in range(4):
        with pytest.raises(pmErr) as e:
            result_of(mutate(pdu, at, [(0, 4, (EVENT << 24) | n)]))
        assert e.value.args[0] == PM_ERR_IPC


def test_counts_lengths_flags_and_types_beyond_the_rules(event_oracle):
    cases = []
    for kind, block in RICH.items():
        recs = rich_records(kind)
        lay = layout(kind, recs)
        hdr = 16 if kind == EVENT else 24
        muts = []
        for n in (9, 10, 1000, 0x7FFFFFFF, -1, -2, -0x80000000, 0):
            muts.append([(4, 4, n)])                                   # nrecords
        for r, (roff, params) in enumerate(lay):
            for n in (len(params) + 1, len(params) + 1000, 0x7FFFFFFF, -1, -3, 0):
                muts.append([(roff + hdr - 4, 4, n)])                  # nparams
            for f in (MISSED | 1, MISSED | 0x40, MISSED, 0, 0xFFFFFFFF, 0x40):
                muts.append([(roff + hdr - 8, 4, f)])                  # flags
            for p in params:
                word = struct.unpack(">I", block[p + 4:p + 8])[0]
                ptype, plen = word >> 24, word & 0xFFFFFF
                for t in (9, 10, 11, 255, 0, 2, 4, 5, 6, 7, 8):
                    muts.append([(p + 4, 4, (t << 24) | plen)])        # nested / other types
                for n in (plen + 4, plen + 1000, 0xFFFFFF, 8, 12, 5, 4, 0):
                    muts.append([(p + 4, 4, (ptype << 24) | n)])       # other lengths
            # a bad type early and a structural error later: the structure wins
            if params and r + 1 < len(lay):
                muts.append([(params[0] + 4, 4, (9 << 24) | 8), (lay[-1][0] + hdr - 4, 4, 5000)])
        cases += _cases_for(block, muts, "fields")
    expected, _ = compare_allowing_short(cases)
    codes = {v[side]["sts"] for e in expected for v in e["values"]
             for side in ("classic", "highres") if "sts" in v[side]}
    assert {PM_ERR_TOOBIG, PM_ERR_TOOSMALL, PM_ERR_TYPE, PM_ERR_CONV} <= codes
    assert len(cases) > 500


def test_negative_nparams_gives_libpcp_negative_numpmid(event_oracle):
    """flags 0 and nparams < 0: libpcp builds a result whose numpmid is nparams."""
    recs = [record(EVENT, 1, 2, 0, [], nparams=-3), record(EVENT, 1, 2, 1, [], nparams=-1),
            record(EVENT, 1, 2, 1, [], nparams=-5)]
    pdu = result_pdu([(EV_PMID, 1, 1, [(-1, event_array(EVENT, recs))])])
    exp = compare([{"pdu": pdu, "ours_pdu": pdu}])
    assert [r["numpmid"] for r in exp[0]["values"][0]["classic"]["records"]] == [-3, 0, -4]


def libpcp_reads_a_short_parameter(block):
    """True when, walking the big-endian block the way libpcp's checker does, a
    parameter too short for its type (ep_len < 4, or a number longer than ep_len - 4)
    comes before any structural error: from there on libpcp reads fields its receive
    conversion has already mangled, and we stop with PM_ERR_TOOSMALL."""
    hdr = struct.unpack(">I", block[:4])[0]
    kind, ea_len = hdr >> 24, hdr & 0xFFFFFF
    if kind not in (EVENT, HIGHRES_EVENT) or ea_len < 8 or ea_len > len(block):
        return False
    nrec = struct.unpack(">i", block[4:8])[0]
    if nrec < 0:
        return False
    rh = 16 if kind == EVENT else 24
    pos = 8
    need = {0: 4, 1: 4, 4: 4, 2: 8, 3: 8, 5: 8}
    for _ in range(nrec):
        if pos + rh > ea_len:
            return False
        flags, nparams = struct.unpack(">Ii", block[pos + rh - 8:pos + rh])
        pos += rh
        if flags & MISSED:
            if flags != MISSED:
                return False
            nparams = 0
        for _ in range(max(nparams, 0)):
            if pos + 8 > ea_len:
                return False
            word = struct.unpack(">I", block[pos + 4:pos + 8])[0]
            t, plen = word >> 24, word & 0xFFFFFF
            size = 4 + ((plen + 3) & ~3)
            if pos + size > ea_len:
                return False
            if plen < 4 or plen - 4 < need.get(t, 0):
                return True
            pos += size
    return False


def compare_allowing_short(cases):
    """compare() for block cases, except that where libpcp would unpack a parameter too
    short for its type we must say PM_ERR_TOOSMALL. libpcp's answer there depends on
    bytes past the parameter (its receive conversion even byte-swaps the next fields
    as part of the short value), so it is not compared. At least one case must hit
    that deviation, and most must agree exactly."""
    expected = run_oracle(cases)
    agreed = deviations = crashes = 0
    for case, exp in zip(cases, expected):
        ours = render_ours(block_result(case["block"]), (0, 0))[0]
        want = exp["values"][0]
        for side in ("classic", "highres"):
            if ours[side] == want[side]:
                agreed += 1
                continue
            if "crash" in want[side]:
                crashes += 1
            kind = case["block"][0] if len(case["block"]) else -1
            assert ours[side]["sts"] == PM_ERR_TOOSMALL, (case["what"], side, ours[side], want[side])
            assert kind == (EVENT if side == "classic" else HIGHRES_EVENT), case["what"]
            assert libpcp_reads_a_short_parameter(case["block"]), case["what"]
            deviations += 1
    print("agreed %d deviations %d crashes %d" % (agreed, deviations, crashes))
    assert deviations > 0 and agreed > 10 * deviations, (agreed, deviations)
    return expected, crashes


def test_random_word_mutations_against_libpcp(event_oracle):
    """Thousands of random 32-bit stores into both arrays: same answer as libpcp, or the
    documented short-parameter deviation."""
    rnd = random.Random(20240807)
    cases = []
    for kind, block in RICH.items():
        ea_len = len(block)
        interesting = [0, 1, 3, 4, 5, 7, 8, 9, 0xFF, 0x100, 0xFFFF, 0xFFFFFF, 0x7FFFFFFF,
                       0x80000000, 0xFFFFFFFF, 0x01000000, 0x06000004, 0x09000008]
        for _ in range(1500):
            m = []
            for _ in range(rnd.choice((1, 1, 2, 3))):
                # the header word only with an ea_len within the bytes (libpcp trusts it)
                if rnd.random() < 0.05:
                    m.append((0, 4, (rnd.choice((9, 10, 0, 6, 255)) << 24) | rnd.randrange(12, ea_len + 1)))
                    continue
                off = rnd.randrange(4, ea_len - 3)
                if rnd.random() < 0.9:
                    off &= ~3
                v = rnd.choice(interesting) if rnd.random() < 0.5 else rnd.getrandbits(32)
                m.append((off, 4, v))
            cases += _cases_for(block, [m], "random")
    expected, crashes = compare_allowing_short(cases)
    assert crashes > 0  # ep_len < 4 strings: libpcp 6.0.3 memcpy()s a negative size
    errs = {min(v[side]["sts"], 0) for e in expected for v in e["values"]
            for side in ("classic", "highres") if "sts" in v[side]}
    assert {0, PM_ERR_TOOBIG, PM_ERR_TOOSMALL, PM_ERR_TYPE, PM_ERR_CONV} <= errs


# ---- the C entry point on raw blocks: bytes really missing -------------------------

def _unpacked(buf, kind, avail=None):
    from pcp._decode.events import Unpacked

    return Unpacked(buf, (0,), (len(buf) if avail is None else avail,), (kind,))


@pytest.mark.parametrize("kind", [EVENT, HIGHRES_EVENT])
def test_block_cut_at_every_byte(kind):
    block = event_array(kind, rich_records(kind))
    full = _unpacked(block, kind)
    assert full.status == [0] and full.nrecords == 8
    for n in range(len(block)):
        # each prefix in its own exact-size buffer, so ASan sees any read past it
        u = _unpacked(bytes(block[:n]), kind)
        assert u.status == [PM_ERR_TOOSMALL if n < 4 else PM_ERR_TOOBIG], n
        assert u.nrecords == 0


def test_many_blocks_keep_their_own_status():
    blocks = [event_array(EVENT, rich_records(EVENT)), b"\x09\x00\x00\x04",
              event_array(HIGHRES_EVENT, rich_records(HIGHRES_EVENT)),
              event_array(EVENT, [record(EVENT, 1, 1, MISSED | 1, [])]),
              event_array(EVENT, [])]
    buf = b"".join(blocks)
    offs, o = [], 0
    for b in blocks:
        offs.append(o)
        o += len(b)
    from pcp._decode.events import Unpacked

    u = Unpacked(buf, offs, [len(b) for b in blocks], [EVENT, EVENT, HIGHRES_EVENT, EVENT, EVENT])
    assert u.status == [0, PM_ERR_TOOSMALL, 0, PM_ERR_CONV, 0]
    assert u.nrecords == 16
    # a block claimed beyond the buffer, or of a kind that is not an event type
    u = Unpacked(buf, [0, 0, len(buf) - 2], [len(buf) + 1, 8, 8], [EVENT, 5, EVENT])
    assert u.status == [PM_ERR_TOOBIG, PM_ERR_TYPE, PM_ERR_TOOBIG]
