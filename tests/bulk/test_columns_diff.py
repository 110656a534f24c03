"""Archive columns (pcp.bulk.read_archive / ArchiveReader) against the official binding
walking the same archive with pmFetchHighResArchive + pmExtractValue: every metric,
instance and timestamp of every corpus variant (tests/archives.py), the <mark>
discontinuities, instance names (pmGetInDomArchive), time windows, and counter rates
computed here from the reference's values."""

import math

import numpy as np
import pytest

from support import archives
from support import difftest
from pcp import bulk
from pcp.pmapi import pmErr

pytestmark = [pytest.mark.pmcd, pytest.mark.reference]

PM_ERR_EOL = -12370

# The reference walk: per record [time ns, numpmid, sets], a set [pmid, numval, values],
# a value [inst, value] with strings and aggregates as hex, or [inst, {"err": code}].
WALK = r'''
ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, ARCH)
descs = {}
dptr = {}
recs = []
error = None
while True:
    try:
        r = ctx.pmFetchHighResArchive()
    except pmapi.pmErr as e:
        if e.args[0] != c_api.PM_ERR_EOL:
            error = e.args[0]
        break
    c = r.contents
    ts = c.timestamp.tv_sec * 1000000000 + c.timestamp.tv_nsec
    sets = []
    for i in range(c.numpmid):
        pmid = c.get_pmid(i)
        numval = c.get_numval(i)
        if pmid not in descs:
            try:
                dptr[pmid] = ctx.pmLookupDesc(pmid)
                d = dptr[pmid].contents
                descs[pmid] = [d.type, d.indom, d.sem]
            except pmapi.pmErr:
                descs[pmid] = None
        vals = []
        if numval > 0 and descs[pmid] is not None:
            t = descs[pmid][0]
            valfmt = c.get_valfmt(i)
            for j in range(numval):
                inst = c.get_inst(i, j)
                try:
                    a = ctx.pmExtractValue(valfmt, c.get_vlist(i, j), t, t)
                except pmapi.pmErr as e:
                    vals.append([inst, {"err": e.args[0]}])
                    continue
                if t == c_api.PM_TYPE_32: v = a.l
                elif t == c_api.PM_TYPE_U32: v = a.ul
                elif t == c_api.PM_TYPE_64: v = a.ll
                elif t == c_api.PM_TYPE_U64: v = a.ull
                elif t == c_api.PM_TYPE_FLOAT: v = {"f": repr(a.f)}
                elif t == c_api.PM_TYPE_DOUBLE: v = {"f": repr(a.d)}
                elif t == c_api.PM_TYPE_STRING: v = {"s": a.cp.hex()}
                elif t == c_api.PM_TYPE_AGGREGATE:
                    blk = ctypes.cast(a.vp, ctypes.POINTER(pmapi.pmValueBlock)).contents
                    v = {"b": ctypes.string_at(ctypes.addressof(blk) + 4, blk.vlen - 4).hex()}
                else:
                    v = {"other": t}
                vals.append([inst, v])
        sets.append([pmid, numval, vals])
    recs.append([ts, c.numpmid, sets])
indoms = {}
for pmid, d in descs.items():
    if d is not None and d[1] != c_api.PM_INDOM_NULL and d[1] not in indoms:
        try:
            ids, names = ctx.pmGetInDomArchive(dptr[pmid])
            indoms[d[1]] = [list(ids), list(names)]
        except pmapi.pmErr as e:
            indoms[d[1]] = {"err": e.args[0]}
RESULT = {"recs": recs, "error": error, "descs": [[k, v] for k, v in descs.items()],
          "indoms": [[k, v] for k, v in indoms.items()]}
'''

_WALKS = {}


def ref_walk(name):
    if name not in _WALKS:
        res = difftest.run_ref("ARCH = %r\n" % name + WALK)
        assert isinstance(res, dict) and "recs" in res, res
        res["descs"] = {k: v for k, v in res["descs"]}
        res["indoms"] = {k: v for k, v in res["indoms"]}
        _WALKS[name] = res
    return _WALKS[name]


def corpus_name(variant):
    return archives.get_corpus()[variant]


def ref_value(v, mtype):
    if isinstance(v, dict):
        if "f" in v:
            return float(v["f"])
        if "s" in v:
            return bytes.fromhex(v["s"]).decode("utf-8", "replace")
        if "b" in v:
            return bytes.fromhex(v["b"])
        return v
    return v


def expected_rows(walk, pmids, start=None, end=None):
    """[(time, after_mark, {pmid: {inst: value}})] of the records holding a selected
    metric, as the reference read them (extraction errors left out)."""
    rows = []
    pending = False
    for ts, numpmid, sets in walk["recs"]:
        if start is not None and ts < start or end is not None and ts > end:
            continue
        if numpmid == 0:
            pending = True
            continue
        mine = [s for s in sets if s[0] in pmids]
        if not mine:
            continue
        vals = {}
        for pmid, numval, values in mine:
            mtype = walk["descs"][pmid][0]
            got = vals.setdefault(pmid, {})
            for inst, v in values:
                if isinstance(v, dict) and "err" in v:
                    continue
                got[inst] = ref_value(v, mtype)
        rows.append((ts, pending, vals))
        pending = False
    return rows


def our_rows(cols):
    """The same shape from ArchiveColumns, one entry per pmid."""
    by_pmid = {}
    for m in cols.values():
        by_pmid.setdefault(m.pmid, m)
    times = cols.time.astype(np.int64).tolist()
    rows = []
    for r, ts in enumerate(times):
        vals = {}
        for pmid, m in by_pmid.items():
            pres = np.nonzero(m.present[r])[0]
            row = {}
            for c in pres.tolist():
                v = m.values[r, c]
                row[int(m.instances[c])] = v.item() if hasattr(v, "item") else v
            vals[pmid] = row
        rows.append((ts, bool(cols.after_mark[r]), vals))
    return rows, by_pmid


def same_value(a, b):
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        return float(a) == float(b)
    return a == b


def compare_rows(ours, expect, by_pmid, marks=True):
    assert [r[0] for r in ours] == [r[0] for r in expect], "row times differ"
    if marks:
        assert [r[1] for r in ours] == [r[1] for r in expect], "after_mark flags differ"
    for (ts, _, got), (_, _, want) in zip(ours, expect):
        for pmid in by_pmid:
            g = got.get(pmid, {})
            w = want.get(pmid, {})
            assert sorted(g) == sorted(w), (ts, by_pmid[pmid].name, sorted(g), sorted(w))
            for inst in w:
                assert same_value(g[inst], w[inst]), (ts, by_pmid[pmid].name, inst,
                                                      g[inst], w[inst])


def selected_pmids(walk):
    """pmids the reader takes by default: every metric with a descriptor of a type
    columns hold (not events)."""
    return {p for p, d in walk["descs"].items() if d is not None and 0 <= d[0] <= 7}


@pytest.mark.parametrize("variant", archives.SINGLE + ["dir_pair", "list_pair", "list_pair3"])
def test_every_value_matches_the_reference(variant):
    name = corpus_name(variant)
    walk = ref_walk(name)
    assert walk["error"] is None
    cols = bulk.read_archive(name)
    ours, by_pmid = our_rows(cols)
    # every metric the data holds, and the metadata's others (no values at all)
    assert selected_pmids(walk) <= set(by_pmid)
    for pmid in set(by_pmid) - set(walk["descs"]):
        assert not by_pmid[pmid].present.any()
    compare_rows(ours, expected_rows(walk, set(by_pmid)), by_pmid)
    # instance columns: every instance the data holds, named as pmGetInDomArchive names
    # them (a number for an instance the metadata does not know)
    for m in by_pmid.values():
        if m.singular:
            assert list(m.instances) == [-1] and m.instance_names == [""]
            continue
        ref = walk["indoms"].get(m.indom)
        names = dict(zip(*ref)) if isinstance(ref, list) else {}
        for inst, iname in zip(m.instances.tolist(), m.instance_names):
            assert iname == names.get(inst, str(inst)), (m.name, inst)
        assert set(names) <= set(m.instances.tolist())


@pytest.mark.parametrize("variant", ["v2", "mv", "marks3"])
def test_chunks_concatenate_to_the_whole_scan(variant):
    name = corpus_name(variant)
    whole = bulk.read_archive(name)
    parts = list(bulk.ArchiveReader(name, chunk_rows=7))
    assert len(parts) > 1
    assert all(len(p) <= 7 for p in parts)
    joined = bulk.ArchiveColumns.concat(parts)
    assert np.array_equal(joined.time, whole.time)
    assert np.array_equal(joined.after_mark, whole.after_mark)
    for k, m in whole.items():
        j = joined[k]
        assert np.array_equal(j.instances, m.instances)
        assert np.array_equal(j.present, m.present)
        if m.dtype == object:
            assert j.values.tolist() == m.values.tolist()
        else:
            assert np.array_equal(j.values[m.present], m.values[m.present])


def test_overlapping_archives_stop_where_libpcp_stops():
    name = corpus_name("overlap_pair")
    walk = ref_walk(name)
    assert walk["error"] == -12401           # PM_ERR_LOGOVERLAP
    reader = bulk.ArchiveReader(name, chunk_rows=1)
    parts = []
    with pytest.raises(pmErr) as info:
        for chunk in reader:
            parts.append(chunk)
    assert info.value.args[0] == -12401
    cols = bulk.ArchiveColumns.concat(parts)
    ours, by_pmid = our_rows(cols)
    compare_rows(ours, expected_rows(walk, set(by_pmid)), by_pmid)


@pytest.mark.parametrize("variant", ["v2", "noindex", "mv", "v3", "marks", "list_pair"])
def test_time_window(variant):
    name = corpus_name(variant)
    walk = ref_walk(name)
    times = [r[0] for r in walk["recs"] if r[1]]
    start, end = times[len(times) // 4], times[(3 * len(times)) // 4]
    metrics = ["sample.bin", "sample.long", "sample.string.hullo", "sample.proc"]
    cols = bulk.read_archive(name, metrics, start=np.datetime64(start, "ns"),
                             end=np.datetime64(end, "ns"))
    ours, by_pmid = our_rows(cols)
    want = expected_rows(walk, set(by_pmid), start, end)
    assert len(want) > 3
    compare_rows(ours, want, by_pmid, marks=False)
    # seconds since the epoch and datetimes select the same rows (inclusive bounds)
    again = bulk.read_archive(name, metrics, start=start / 1e9 - 1e-4, end=end / 1e9 + 1e-4)
    assert np.array_equal(again.time, cols.time)


def _ref_rates(walk, pmid, insts):
    """Rates per instance from the reference's values: (v - v_prev) / dt over the
    instance's previous value in the same segment (no mark between), NaN otherwise."""
    last = {}
    seg = 0
    out = []
    for ts, numpmid, sets in walk["recs"]:
        if numpmid == 0:
            seg += 1
            continue
        row = {}
        for p, numval, values in sets:
            if p != pmid:
                continue
            for inst, v in values:
                if isinstance(v, dict) and "err" in v:
                    continue
                v = ref_value(v, None)
                prev = last.get(inst)
                rate = float("nan")
                if prev is not None and prev[2] == seg and ts > prev[0] and v >= prev[1]:
                    rate = (v - prev[1]) / ((ts - prev[0]) / 1e9)
                row[inst] = rate
                last[inst] = (ts, v, seg)
        out.append((ts, row))
    return out


@pytest.mark.parametrize("variant", ["v2", "marks", "list_pair", "mv"])
def test_counter_rates(variant):
    name = corpus_name(variant)
    walk = ref_walk(name)
    counters = [p for p, d in walk["descs"].items()
                if d is not None and d[2] == 1 and 0 <= d[0] <= 5]
    assert counters
    cols = bulk.read_archive(name, rate=True, chunk_rows=5)
    by_pmid = {}
    for m in cols.values():
        by_pmid.setdefault(m.pmid, m)
    times = cols.time.astype(np.int64).tolist()
    checked = 0
    for pmid in counters:
        m = by_pmid[pmid]
        assert m.rate and m.values.dtype == np.float64
        col = {int(i): c for c, i in enumerate(m.instances)}
        for ts, row in _ref_rates(walk, pmid, col):
            r = times.index(ts)
            for inst, want in row.items():
                got = m.values[r, col[inst]]
                if math.isnan(want):
                    assert math.isnan(got) and not m.present[r, col[inst]], (m.name, ts, inst)
                else:
                    assert m.present[r, col[inst]]
                    assert got == pytest.approx(want, rel=1e-12), (m.name, ts, inst)
                    checked += 1
    assert checked > 10
    # metrics that are not counters are left alone
    plain = bulk.read_archive(name, ["sample.long.one", "sample.bin"], rate=True)
    assert plain["sample.bin"].values.dtype == np.int32 and not plain["sample.bin"].rate
