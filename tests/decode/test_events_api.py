"""The three forms of event unpacking on built arrays (no pmcd): libpcp's shape, the
iterator and the numpy columns agree with each other and with libpcp on random valid
arrays, and each form's own contract (types, dtypes, errors, names) holds."""

import math
import random
import struct

import pytest

from support.eventutil import (EVENT, FLAGS_PMID, HIGHRES_EVENT, MISSED, MISSED_PMID, block_result,  # noqa: F401
                       event_array, event_oracle, p32, p64, paggr, pdouble, pfloat, pstring,
                       pu32, pu64, record, render_ours, result_of, result_pdu, run_oracle)

np = pytest.importorskip("numpy")

PM_ERR_TYPE = -12397
PM_ERR_TOOBIG = -12444
PM_ERR_CONV = -12362
EV, HR = 0x07400088, 0x0740008B


def P():
    from pcp import pmapi

    return pmapi.pmContext


def sample_block(kind):
    frac = 250000 if kind == EVENT else 250000123
    return event_array(kind, [
        record(kind, 1700000000, frac, 0x1, [pu32(1, 7), p32(2, -7), pstring(3, "héllo"),
                                             pdouble(4, 2.5), pfloat(5, 0.5), pu64(6, 2 ** 64 - 1),
                                             p64(7, -2 ** 63), paggr(8, b"\0ab\0"),
                                             paggr(9, b"st", static=True)]),
        record(kind, 1700000001, frac, MISSED, [], nparams=3),
        record(kind, 1700000002, frac, 0, [pstring(3, ""), pu32(1, 0xFFFFFFFF)]),
        record(kind, 1700000003, frac, 0, []),
    ])


def two_kinds_result():
    return result_pdu([(EV, 2, 1, [(5, sample_block(EVENT)), (6, event_array(EVENT, []))]),
                       (HR, 1, 2, [(-1, sample_block(HIGHRES_EVENT))])])


# ---- libpcp's shape ------------------------------------------------------------------

def test_records_behave_like_official_result_pointers():
    import cpmapi as c_api
    from pcp import pmapi

    res = result_of(two_kinds_result())
    vs = res.contents.get_vset(0)
    recs = P().pmUnpackEventRecords(vs, 0)
    assert isinstance(recs, list) and len(recs) == 4
    r0 = recs[0].contents
    assert r0.numpmid == 10 and r0.contents is r0
    assert isinstance(r0.timestamp, pmapi.timeval)
    assert (r0.timestamp.tv_sec, r0.timestamp.tv_usec) == (1700000000, 250000)
    assert r0.get_pmid(0) == FLAGS_PMID and r0.get_numval(0) == 1 and r0.get_inst(0, 0) == -1
    # value sets through the attribute paths official-binding code uses
    s = r0.vset[3].contents
    assert (s.pmid, s.numval, s.valfmt) == (3, 1, c_api.PM_VAL_DPTR)
    blk = s.vlist[0].value.pval.contents
    assert (blk.vtype, blk.vlen) == (c_api.PM_TYPE_STRING, 4 + len("héllo".encode()))
    atom = P().pmExtractValue(s.valfmt, s.vlist[0], c_api.PM_TYPE_STRING, c_api.PM_TYPE_STRING)
    assert atom.cp == "héllo".encode()
    cases = [(1, c_api.PM_TYPE_U32, "ul", 7), (2, c_api.PM_TYPE_32, "l", -7),
             (4, c_api.PM_TYPE_DOUBLE, "d", 2.5), (5, c_api.PM_TYPE_FLOAT, "f", 0.5),
             (6, c_api.PM_TYPE_U64, "ull", 2 ** 64 - 1), (7, c_api.PM_TYPE_64, "ll", -2 ** 63)]
    for k, t, field, want in cases:
        v = r0.get_vset(k)
        assert getattr(P().pmExtractValue(v.valfmt, r0.get_vlist(k, 0), t, t), field) == want
        # converting to double goes through libpcp's rules too
        assert P().pmExtractValue(v.valfmt, v.vlist[0], t, c_api.PM_TYPE_DOUBLE).d == float(want)
    agg = r0.get_vset(8)
    a = P().pmExtractValue(agg.valfmt, agg.vlist[0], c_api.PM_TYPE_AGGREGATE, c_api.PM_TYPE_AGGREGATE)
    assert a.aggregate == b"\0ab\0"
    missed = recs[1].contents
    assert [missed.get_pmid(k) for k in range(2)] == [FLAGS_PMID, MISSED_PMID]
    assert missed.get_vlist(1, 0).value.lval == 3
    assert recs[3].contents.numpmid == 0
    with pytest.raises(IndexError):
        recs[3].contents.get_vset(0)
    assert P().pmFreeEventResult(recs) is None
    assert P().pmFreeHighResEventResult(None) is None


def test_highres_records_carry_timespecs():
    from pcp import pmapi

    vs = result_of(two_kinds_result()).contents.get_vset(1)
    recs = P().pmUnpackHighResEventRecords(vs, 0)
    ts = recs[0].contents.timestamp
    assert isinstance(ts, pmapi.timespec) and (ts.tv_sec, ts.tv_nsec) == (1700000000, 250000123)
    with pytest.raises(pmapi.pmErr) as e:
        P().pmUnpackEventRecords(vs, 0)
    assert e.value.args[0] == PM_ERR_TYPE


def test_unpacked_records_are_not_event_arrays():
    from pcp import pmapi

    recs = P().pmUnpackEventRecords(result_of(two_kinds_result()).contents.get_vset(0), 0)
    r0 = recs[0].contents
    with pytest.raises(pmapi.pmErr) as e:
        P().pmUnpackEventRecords(r0.get_vset(0), 0)   # INSITU event.flags
    assert e.value.args[0] == PM_ERR_CONV
    with pytest.raises(pmapi.pmErr) as e:
        P().pmUnpackEventRecords(r0.get_vset(3), 0)   # a string parameter
    assert e.value.args[0] == PM_ERR_TYPE
    from pcp._decode.events import event_columns

    assert len(event_columns(recs)) == 0


# ---- the iterator ----------------------------------------------------------------------

def test_iterator_values_are_python_values():
    from pcp._decode.events import iter_event_records

    vs = result_of(two_kinds_result()).contents.get_vset(0)
    names = {1: "one"}
    recs = list(iter_event_records(vs, 0, names.get))
    assert [r.flags for r in recs] == [1, MISSED, 0, 0]
    assert [r.missed for r in recs] == [0, 3, 0, 0]
    assert recs[1].is_missed and recs[1].params == ()
    assert recs[0].time == pytest.approx(1700000000.25)
    vals = [(p.pmid, p.name, p.value) for p in recs[0].params]
    assert vals == [(1, "one", 7), (2, None, -7), (3, None, "héllo"), (4, None, 2.5),
                    (5, None, 0.5), (6, None, 2 ** 64 - 1), (7, None, -2 ** 63),
                    (8, None, b"\0ab\0"), (9, None, b"st")]
    assert [p.value for p in recs[2].params] == ["", 0xFFFFFFFF]
    pmid, name, value = recs[0].params[0]          # parameters are (pmid, name, value)
    assert (pmid, name, value) == (1, "one", 7)


def test_iterator_reads_either_kind_and_invalid_strings():
    from pcp._decode.events import iter_event_records

    block = event_array(HIGHRES_EVENT, [record(HIGHRES_EVENT, -1, 5, 2, [pstring(3, b"\xff\xfe")])])
    (rec,) = iter_event_records(block_result(block).contents.get_vset(0), 0)
    assert (rec.sec, rec.nsec, rec.flags) == (-1, 5, 2)
    assert rec.params[0].value.encode("utf-8", "surrogateescape") == b"\xff\xfe"


# ---- the columns ---------------------------------------------------------------------

def test_columns_dtypes_and_values():
    from pcp._decode.events import event_columns

    cols = event_columns(result_of(two_kinds_result()))
    assert len(cols) == 8          # 4 + none from the empty array + 4
    assert cols.metric.tolist() == [EV] * 4 + [HR] * 4
    assert cols.inst.tolist() == [5] * 4 + [-1] * 4
    assert cols.result.tolist() == [0] * 8
    assert cols.flags.dtype == np.uint32 and cols.sec.dtype == np.int64
    assert cols.nsec.tolist()[:4] == [250000000] * 4
    assert cols.missed.tolist()[:4] == [0, 3, 0, 0]
    assert cols.nparams.tolist()[:4] == [9, 0, 2, 0]
    p = cols.params
    assert p[1].values.dtype == np.uint32 and p[1].values.tolist() == [7, 0xFFFFFFFF] * 2
    assert p[1].event.tolist() == [0, 2, 4, 6]
    assert p[2].values.dtype == np.int32 and p[2].values.tolist() == [-7, -7]
    assert p[4].values.dtype == np.float64 and p[5].values.dtype == np.float32
    assert p[6].values.dtype == np.uint64 and int(p[6].values[0]) == 2 ** 64 - 1
    assert p[7].values.dtype == np.int64 and int(p[7].values[0]) == -2 ** 63
    assert p[3].values.dtype == np.dtype("S6")
    assert p[3].lengths.tolist() == [6, 0, 6, 0]
    assert p[3].strings() == ["héllo", "", "héllo", ""]
    assert p[8].raw() == [b"\0ab\0"] * 2          # exact bytes despite the NULs
    assert p[9].type == 8 and p[9].tolist() == [b"st"] * 2
    assert cols.time[0] == np.datetime64(1700000000250000000, "ns")


def test_columns_errors_filters_and_mixed_types():
    from pcp._decode.events import event_columns

    bad = event_array(EVENT, [record(EVENT, 1, 1, MISSED | 1, [])])
    mixed = event_array(EVENT, [record(EVENT, 1, 1, 0, [pu32(1, 5), pstring(1, "x")])])
    pdu = result_pdu([(EV, 3, 1, [(0, bad), (1, mixed), (2, event_array(EVENT, [], vtype=9))]),
                      (HR, 1, 1, [(-1, sample_block(HIGHRES_EVENT))])], highres=False)
    res = result_of(pdu)
    cols = event_columns([res, res])
    assert cols.errors == [(0, EV, 0, PM_ERR_CONV), (1, EV, 0, PM_ERR_CONV)]
    assert cols.result.tolist() == [0] * 5 + [1] * 5
    assert cols.params[1].type == -1 and cols.params[1].values.dtype == object
    assert cols.params[1].values.tolist()[:3] == [5, "x", 7]
    only = event_columns(res, [HR])
    assert set(only.metric.tolist()) == {HR} and len(only) == 4 and only.errors == []
    assert len(event_columns([])) == 0


def test_columns_follow_pmSortInstances():
    from pcp import pmapi
    from pcp._decode.events import event_columns

    blocks = [(9, event_array(EVENT, [record(EVENT, 9, 0, 1, [])])),
              (3, event_array(EVENT, [record(EVENT, 3, 0, 1, [])]))]
    res = result_of(result_pdu([(EV, 2, 1, blocks)]))
    pmapi.pmContext.pmSortInstances(res)
    cols = event_columns(res)
    assert list(zip(cols.inst.tolist(), cols.sec.tolist())) == [(3, 3), (9, 9)]


def test_columns_of_a_large_array():
    from pcp._decode.events import event_columns

    n = 20000
    recs = [record(EVENT, i, i % 1000000, 1, [pu32(1, i), pstring(2, "s%d" % i),
                                              pdouble(3, i / 2)]) for i in range(n)]
    cols = event_columns(block_result(event_array(EVENT, recs)))
    assert len(cols) == n
    assert cols.params[1].values.tolist() == list(range(n))
    assert cols.params[2].strings()[-1] == "s%d" % (n - 1)
    assert cols.params[3].values[-1] == (n - 1) / 2


def test_one_long_string_is_not_padded_into_every_row(monkeypatch):
    import pcp._decode.events as E

    monkeypatch.setattr(E, "_PAD_LIMIT", 1000)
    recs = [record(EVENT, 0, 0, 0, [pstring(2, "x" * 5000)])] + \
        [record(EVENT, 0, 0, 0, [pstring(2, "y")]) for _ in range(300)]
    col = E.event_columns(block_result(event_array(EVENT, recs))).params[2]
    assert col.values.dtype == object and col.strings()[:2] == ["x" * 5000, "y"]


# ---- all three forms, and libpcp, on random valid arrays -----------------------------

def _random_param(rnd):
    pmid = rnd.choice([1, 2, 3, 0x7FC00001, 0xFFFFFFFF, rnd.getrandbits(32)])
    t = rnd.randrange(9)
    if t == 0:
        return p32(pmid, rnd.randrange(-2 ** 31, 2 ** 31))
    if t == 1:
        return pu32(pmid, rnd.getrandbits(32))
    if t == 2:
        return p64(pmid, rnd.randrange(-2 ** 63, 2 ** 63))
    if t == 3:
        return pu64(pmid, rnd.getrandbits(64))
    if t == 4:
        return pfloat(pmid, rnd.choice([0.0, -0.0, 1e38, -1.5, math.inf, rnd.random()]))
    if t == 5:
        return param_bits(pmid, 5, rnd.getrandbits(64))      # any double, NaNs included
    n = rnd.choice([0, 1, 3, 4, 5, 40])
    data = bytes(rnd.getrandbits(8) for _ in range(n))
    return pstring(pmid, data) if t == 6 else paggr(pmid, data, static=(t == 8))


def param_bits(pmid, ptype, bits):
    from support.eventutil import param

    return param(pmid, ptype, struct.pack(">Q", bits))


def _random_block(rnd, kind):
    recs = []
    for _ in range(rnd.randrange(0, 7)):
        sec = rnd.choice([0, -1, 2 ** 31 - 1, -2 ** 31]) if kind == EVENT else \
            rnd.randrange(-2 ** 63, 2 ** 63)
        frac = rnd.randrange(-2 ** 31, 2 ** 31) if kind == EVENT else rnd.randrange(-2 ** 63, 2 ** 63)
        flags = rnd.choice([0, 0, 1, 2, 4, 0x1A, 0x7FFFFFFF, MISSED])
        if flags == MISSED:
            recs.append(record(kind, sec, frac, flags, [], nparams=rnd.randrange(-5, 10 ** 6)))
        else:
            recs.append(record(kind, sec, frac, flags,
                               [_random_param(rnd) for _ in range(rnd.randrange(0, 6))]))
    return event_array(kind, recs)


def test_random_valid_arrays_agree_everywhere(event_oracle):
    from pcp._decode.events import event_columns, iter_event_records

    rnd = random.Random(4242)
    blocks = [_random_block(rnd, rnd.choice((EVENT, HIGHRES_EVENT))) for _ in range(300)]
    expected = run_oracle([{"block": b} for b in blocks])
    n_events = 0
    for block, exp in zip(blocks, expected):
        res = block_result(block)
        ours = render_ours(res, (0, 0))[0]
        want = exp["values"][0]
        assert (ours["classic"], ours["highres"]) == (want["classic"], want["highres"])
        side = "classic" if block[0] == EVENT else "highres"
        recs = list(iter_event_records(res.contents.get_vset(0), 0))
        assert len(recs) == want[side]["sts"]
        cols = event_columns(res)
        assert len(cols) == len(recs)
        assert cols.flags.tolist() == [r.flags for r in recs]
        assert cols.sec.tolist() == [r.sec for r in recs]
        for r, lib_rec in zip(recs, want[side]["records"]):
            assert (r.sec, r.nsec) == (lib_rec["sec"], lib_rec["nsec"])
            params = [v for v in lib_rec["vsets"][1 if r.flags else 0:]] \
                if r.flags != MISSED else []
            assert [p.pmid for p in r.params] == [v["pmid"] for v in params]
        per_pmid = {}
        for i, r in enumerate(recs):
            for p in r.params:
                per_pmid.setdefault(p.pmid, []).append((i, p.value))
        assert set(cols.params) == set(per_pmid)
        for pmid, col in cols.params.items():
            got = list(zip(col.event.tolist(), col.tolist()))
            assert len(got) == len(per_pmid[pmid])
            for (e1, v1), (e2, v2) in zip(got, per_pmid[pmid]):
                assert e1 == e2
                assert v1 == v2 or (v1 != v1 and v2 != v2), (pmid, v1, v2)
        n_events += len(recs)
    assert n_events > 500


# ---- any bytes: every form answers with a PM_ERR_* or consistent events ---------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_CODES = {0, PM_ERR_TYPE, PM_ERR_TOOBIG, PM_ERR_CONV, -12443}


def _mutated(data, kind):
    """Random bytes behind a plausible header, or random stores into a valid array."""
    head = struct.pack(">Ii", (kind << 24) | (8 + len(data)), len(data) // 16)
    return head + data


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400), st.sampled_from([EVENT, HIGHRES_EVENT]),
       st.lists(st.tuples(st.integers(0, 399), st.integers(0, 2 ** 32 - 1)), max_size=4))
def test_any_bytes_give_an_error_or_the_same_events_in_every_form(data, kind, stores):
    from pcp import pmapi
    from pcp._decode.events import event_columns, iter_event_records

    block = bytearray(_mutated(data, kind) if len(data) % 3 else sample_block(kind))
    for off, v in stores:
        if 8 <= off <= len(block) - 4:
            block[off:off + 4] = struct.pack(">I", v)
    res = block_result(bytes(block))
    vs = res.contents.get_vset(0)
    fn = P().pmUnpackEventRecords if kind == EVENT else P().pmUnpackHighResEventRecords
    try:
        recs = fn(vs, 0)
        code = 0
    except pmapi.pmErr as e:
        recs, code = [], e.args[0]
    assert code in _CODES
    cols = event_columns(res)
    if code:
        assert len(cols) == 0 and [e[3] for e in cols.errors] == [code]
        with pytest.raises(pmapi.pmErr):
            iter_event_records(vs, 0)
        return
    evs = list(iter_event_records(vs, 0))
    assert len(recs) == len(evs) == len(cols)
    assert cols.flags.tolist() == [e.flags for e in evs]
    assert sum(len(e.params) for e in evs) == sum(len(c) for c in cols.params.values())
    for lp, e in zip(recs, evs):
        r = lp.contents
        shown = [r.get_pmid(k) for k in range(max(r.numpmid, 0))]
        lead = 2 if e.flags == MISSED else (1 if e.flags and shown else 0)
        assert shown[lead:] == [p.pmid for p in e.params]
