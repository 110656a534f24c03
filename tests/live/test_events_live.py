"""Event records from the live sample PMDA, compared value by value with libpcp's own
pmUnpackEventRecords / pmUnpackHighResEventRecords on the very bytes we received, and
with `pminfo -x`.

The sample PMDA replays a cycle of four setups per event metric (sample.event.reset /
reset_highres pick the next one, -1 injects a parameter with an unknown pmid); the
counters are global to pmcd, so a concurrent client can advance them between our store
and our fetch: each shape is retried until it is the one asked for."""

import shutil
import subprocess

import pytest

from conftest import _unavailable

from support.eventutil import (EVENT, FLAGS_PMID, HIGHRES_EVENT, MISSED, MISSED_PMID, event_oracle,  # noqa: F401
                       TIME, flags_str, print_value, render_ours, run_oracle)

pytestmark = [pytest.mark.pmcd,
              # resets the sample PMDA's event cycle: one worker runs them
              pytest.mark.xdist_group("pmcd_state")]

METRICS = ["sample.event.records", "sample.event.highres_records",
           "sample.event.no_indom_records"]
# records of instance 0 ("fungus") for each setup
SETUP_RECORDS = {0: 0, 1: 1, 2: 2, 3: 5, -1: 1}


@pytest.fixture(scope="module")
def ctx(pmcd):
    from pcp import pmapi
    import cpmapi as c_api

    return pmapi.pmContext(c_api.PM_CONTEXT_HOST, pmcd)


def _store(name, value):
    p = subprocess.run(["pmstore", name, str(value)], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr


@pytest.fixture(scope="module")
def restore_counters(ctx):
    """Put the PMDA's cycle positions back where we found them."""
    pm = ctx.pmLookupName(["sample.event.reset", "sample.event.reset_highres"])
    r = ctx.pmFetch(pm).contents
    before = [r.get_vlist(0, 0).value.lval, r.get_vlist(1, 0).value.lval]
    yield
    _store("sample.event.reset", before[0])
    _store("sample.event.reset_highres", before[1])


def _fetch_setup(ctx, setup, highres_api=False, tries=8):
    """Fetch all three event metrics right after selecting `setup` for both kinds."""
    pm = ctx.pmLookupName(METRICS)
    for _ in range(tries):
        _store("sample.event.reset", setup)
        _store("sample.event.reset_highres", setup)
        res = ctx.pmFetchHighRes(pm) if highres_api else ctx.pmFetch(pm)
        c = res.contents
        got = []
        for i in (0, 1):
            vs = c.get_vset(i)
            insts = [vs.vlist[j].inst for j in range(vs.numval)]
            fn = ctx.pmUnpackHighResEventRecords if i else ctx.pmUnpackEventRecords
            got.append(len(fn(vs, insts.index(0))) if 0 in insts else None)
        if got == [SETUP_RECORDS[setup]] * 2:
            return res
    pytest.fail("the sample PMDA did not give setup %d after %d tries (concurrent clients?)"
                % (setup, tries))


@pytest.fixture(scope="module")
def shapes(ctx, restore_counters):
    """setup -> result, for every setup, through pmFetch and pmFetchHighRes."""
    out = {}
    for setup in (0, 1, 2, 3, -1):
        out[setup] = _fetch_setup(ctx, setup)
    out["highres_api"] = _fetch_setup(ctx, 3, highres_api=True)
    return out


def test_every_shape_matches_libpcp_value_by_value(shapes, event_oracle):
    from pcp._decode.result import flat_of

    keys = list(shapes)
    expected = run_oracle([{"pdu": flat_of(shapes[k]).pdu} for k in keys])
    compared = 0
    for k, exp in zip(keys, expected):
        assert exp["decode"] == 0
        ours = render_ours(shapes[k])
        assert len(ours) == len(exp["values"]) == 5  # 2 + 2 instances + 1 singular
        for o, e in zip(ours, exp["values"]):
            assert (o["vset"], o["value"], o["inst"]) == (e["vset"], e["value"], e["inst"])
            assert o["classic"] == e["classic"], (k, o["vset"], o["value"])
            assert o["highres"] == e["highres"], (k, o["vset"], o["value"])
            compared += sum(len(rec["vsets"]) for rec in o["classic"]["records"] +
                            o["highres"]["records"])
    assert compared > 50


def test_shapes_cover_every_parameter_type_flags_and_missed(shapes, ctx):
    """The comparison above is only as good as what the PMDA gave us: check it covered
    empty arrays, every parameter type, flags and MISSED records of both kinds."""
    seen_types, seen_counts, missed = set(), set(), {}
    for setup in (0, 1, 2, 3):
        c = shapes[setup].contents
        for i, kind in ((0, EVENT), (1, HIGHRES_EVENT)):
            vs = c.get_vset(i)
            fn = ctx.pmUnpackHighResEventRecords if kind == HIGHRES_EVENT else ctx.pmUnpackEventRecords
            for j in range(vs.numval):
                recs = fn(vs, j)
                seen_counts.add((kind, len(recs)))
                for lp in recs:
                    r = lp.contents
                    for k in range(r.numpmid):
                        s = r.get_vset(k)
                        if s.pmid == MISSED_PMID:
                            missed[kind] = s.vlist[0].value.lval
                        elif s.pmid != FLAGS_PMID:
                            seen_types.add(s.vlist[0].value.pval.contents.vtype
                                           if s.valfmt else "insitu")
    assert {(EVENT, 0), (EVENT, 1), (EVENT, 2), (EVENT, 5)} <= seen_counts
    assert {(HIGHRES_EVENT, 0), (HIGHRES_EVENT, 1), (HIGHRES_EVENT, 5)} <= seen_counts
    assert seen_types == {"insitu", 2, 3, 4, 5, 6, 7}
    # libpcp's network conversion drops the missed count of highres records
    assert missed == {EVENT: 7, HIGHRES_EVENT: 0}


def test_setup3_records_read_as_documented(shapes, ctx):
    import cpmapi as c_api

    c = shapes[3].contents
    vs = c.get_vset(0)
    j = [vs.vlist[k].inst for k in range(vs.numval)].index(0)
    recs = ctx.pmUnpackEventRecords(vs, j)
    assert [lp.contents.numpmid for lp in recs] == [4, 4, 7, 2, 4]
    first = recs[0].contents
    assert first.get_vset(0).pmid == FLAGS_PMID
    assert first.get_vset(0).vlist[0].value.lval == 0x1A
    # timestamps are the events' own, one second apart, not the fetch time
    secs = [lp.contents.timestamp.tv_sec for lp in recs]
    assert secs == [secs[0] + n for n in range(5)]
    assert c.timestamp.tv_sec - secs[0] >= 9
    # parameters through pmExtractValue, as their own types
    P = ctx
    u64 = first.get_vset(2)
    assert P.pmExtractValue(u64.valfmt, u64.vlist[0], c_api.PM_TYPE_U64, c_api.PM_TYPE_U64).ull == 5
    s = first.get_vset(3)
    assert P.pmExtractValue(s.valfmt, s.vlist[0], c_api.PM_TYPE_STRING,
                            c_api.PM_TYPE_STRING).cp == b"6"
    d = recs[1].contents.get_vset(3)
    assert P.pmExtractValue(d.valfmt, d.vlist[0], c_api.PM_TYPE_DOUBLE,
                            c_api.PM_TYPE_DOUBLE).d == -9.0
    i32 = recs[2].contents.get_vset(5)
    assert P.pmExtractValue(i32.valfmt, i32.vlist[0], c_api.PM_TYPE_32, c_api.PM_TYPE_64).ll == -14
    f = recs[4].contents.get_vset(2)
    assert f.valfmt == c_api.PM_VAL_DPTR
    assert P.pmExtractValue(f.valfmt, f.vlist[0], c_api.PM_TYPE_FLOAT,
                            c_api.PM_TYPE_DOUBLE).d == -17.0
    flags = recs[3].contents.get_vset(0)
    assert P.pmExtractValue(flags.valfmt, flags.vlist[0], c_api.PM_TYPE_U32,
                            c_api.PM_TYPE_U32).ul == MISSED
    assert flags.vlist[0].value.lval == -2147483648


def test_anonymous_metric_names_resolve_like_libpcp(ctx):
    import cpmapi as c_api

    assert list(ctx.pmLookupName(["event.flags", "event.missed"])) == [FLAGS_PMID, MISSED_PMID]
    assert ctx.pmNameID(FLAGS_PMID) == "event.flags"
    assert ctx.pmNameID(MISSED_PMID) == "event.missed"
    d = ctx.pmLookupDesc(MISSED_PMID).contents
    assert (d.type, d.indom, d.sem) == (c_api.PM_TYPE_U32, c_api.PM_INDOM_NULL,
                                        c_api.PM_SEM_DISCRETE)
    assert ctx.pmIDStr(FLAGS_PMID) == "511.0.1"


def test_error_injection_keeps_the_unknown_pmid(shapes, ctx):
    c = shapes[-1].contents
    vs = c.get_vset(0)
    j = [vs.vlist[k].inst for k in range(vs.numval)].index(0)
    (rec,) = list(ctx.event_records(vs, j))
    assert [(p.pmid, p.name, p.value) for p in rec.params] == [
        (0x0740007F, "sample.event.type", 0xFFFFFFFF), ((100 << 10) | 200, None, 0xFFFFFFFF)]


def test_iterator_and_columns_agree_with_the_drop_in_records(shapes, ctx):
    import numpy as np

    for setup in (1, 2, 3, "highres_api"):
        res = shapes[setup]
        c = res.contents
        events = []
        for i in range(c.numpmid):
            vs = c.get_vset(i)
            for j in range(vs.numval):
                for rec in ctx.event_records(vs, j):
                    events.append((c.get_pmid(i), vs.vlist[j].inst, rec))
        cols = ctx.event_columns(res)
        assert len(cols) == len(events) > 0
        assert cols.errors == []
        assert cols.metric.tolist() == [m for m, _, _ in events]
        assert cols.inst.tolist() == [i for _, i, _ in events]
        assert cols.sec.tolist() == [r.sec for _, _, r in events]
        assert cols.nsec.tolist() == [r.nsec for _, _, r in events]
        assert cols.flags.tolist() == [r.flags for _, _, r in events]
        assert cols.missed.tolist() == [r.missed for _, _, r in events]
        assert cols.nparams.tolist() == [len(r.params) for _, _, r in events]
        rebuilt = {}
        for n, (_, _, r) in enumerate(events):
            for p in r.params:
                rebuilt.setdefault(p.pmid, []).append((n, p.value, p.name))
        assert set(cols.params) == set(rebuilt)
        for pmid, col in cols.params.items():
            assert [(int(e), v) for e, v in zip(col.event, col.tolist())] == \
                [(n, v) for n, v, _ in rebuilt[pmid]]
            assert col.name == rebuilt[pmid][0][2]
        assert cols.time.dtype == np.dtype("datetime64[ns]")


def test_columns_restricted_to_one_metric(shapes, ctx):
    res = shapes[3]
    only = ctx.event_columns(res, "sample.event.highres_records")
    pmid = ctx.pmLookupName("sample.event.highres_records")[0]
    assert len(only) > 0 and set(only.metric.tolist()) == {pmid}
    everything = ctx.event_columns([res, shapes[2], shapes[1]])
    assert set(everything.result.tolist()) == {0, 1, 2}
    assert len(everything) == sum(len(ctx.event_columns(r)) for r in (res, shapes[2], shapes[1]))


# ---- pminfo -x, the libpcp tool view of the same setups ------------------------------

def _pminfo_like(ctx, res, names):
    """Our events rendered like `pminfo -x`, timestamps blanked (pminfo made its own
    fetch of the same setup, so only the times can differ)."""
    from pcp import pmapi

    lines = []
    c = res.contents
    for i, name in enumerate(names):
        lines.append("")
        lines.append(name)
        vs = c.get_vset(i)
        kind = ctx.pmLookupDesc(c.get_pmid(i)).contents.type
        fn = ctx.pmUnpackHighResEventRecords if kind == HIGHRES_EVENT else ctx.pmUnpackEventRecords
        for j in range(vs.numval):
            recs = fn(vs, j)
            inst = vs.vlist[j].inst
            head = "    " if inst < 0 else '    inst [%d or "%s"] ' % (
                inst, ctx.pmNameInDom(ctx.pmLookupDesc(c.get_pmid(i)), inst))
            nmissed = sum(lp.contents.get_vset(1).vlist[0].value.lval for lp in recs
                          if lp.contents.numpmid == 2 and lp.contents.get_vset(0).pmid == FLAGS_PMID
                          and lp.contents.get_vset(0).vlist[0].value.lval == -2147483648)
            n = len(recs)
            if n == 0:
                lines.append(head + "value [0 event records]")
                continue
            missed = " (%d missed)" % nmissed if nmissed else ""
            stamps = "timestamp T" if n == 1 else "timestamps T...T"
            lines.append(head + "value [%d event record%s%s %s]" % (n, "s" if n > 1 else "",
                                                                  missed, stamps))
            for r_i, lp in enumerate(recs):
                r = lp.contents
                k0 = 0
                flags = 0
                if r.numpmid and r.get_vset(0).pmid == FLAGS_PMID:
                    flags = r.get_vset(0).vlist[0].value.lval & 0xFFFFFFFF
                    k0 = 1
                lines.append("    --- event record [%d] timestamp T flags 0x%x (%s) ---"
                             % (r_i, flags, flags_str(flags)))
                if flags == MISSED:
                    lines.append("        ==> %d missed event records"
                                 % r.get_vset(1).vlist[0].value.lval)
                    continue
                for k in range(k0, r.numpmid):
                    s = r.get_vset(k)
                    try:
                        pname = ctx.pmNameID(s.pmid)
                    except pmapi.pmErr:
                        lines.append("\tPMID: %s" % ctx.pmIDStr(s.pmid))
                        lines.append("\tpmLookupDesc: Unknown or illegal metric identifier")
                        continue
                    ptype = ctx.pmLookupDesc(s.pmid).contents.type
                    lines.append("    %s (%s)" % (pname, ctx.pmIDStr(s.pmid)))
                    lines.append("        value " + print_value(ctx, s, ptype))
    return lines


@pytest.mark.parametrize("setup", [1, 2, 3, -1])
def test_pminfo_x_shows_the_same_events(ctx, restore_counters, setup):
    if shutil.which("pminfo") is None:
        _unavailable("pminfo not installed")
    for _ in range(8):
        _store("sample.event.reset", setup)
        _store("sample.event.reset_highres", setup)
        p = subprocess.run(["pminfo", "-x"] + METRICS, capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        theirs = [TIME.sub("T", line) for line in p.stdout.splitlines()]
        res = _fetch_setup(ctx, setup)
        ours = _pminfo_like(ctx, res, METRICS)
        assert sum("--- event record" in line for line in ours) >= 3
        if ours == theirs:
            return
        last = (theirs, ours)
    assert last[1] == last[0]
