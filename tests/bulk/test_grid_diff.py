"""Regular-grid reads (ArchiveReader(..., interval=...)) against pmFetch in
PM_MODE_INTERP: the drop-in's (itself differential against libpcp 6.0.3, see
tests/archive/test_diff_archive_interp.py), value by value, and the official binding
directly on archives of the pmlogger corpus."""
import os

import numpy as np
import pytest

import cpmapi as c_api
from pcp import bulk, pmapi
from support import archives, difftest

pytestmark = [pytest.mark.pmcd]

NUMERIC = (c_api.PM_TYPE_32, c_api.PM_TYPE_U32, c_api.PM_TYPE_64, c_api.PM_TYPE_U64,
           c_api.PM_TYPE_FLOAT, c_api.PM_TYPE_DOUBLE)
FIELDS = {c_api.PM_TYPE_32: "l", c_api.PM_TYPE_U32: "ul", c_api.PM_TYPE_64: "ll",
          c_api.PM_TYPE_U64: "ull", c_api.PM_TYPE_FLOAT: "f", c_api.PM_TYPE_DOUBLE: "d",
          c_api.PM_TYPE_STRING: "cp", c_api.PM_TYPE_AGGREGATE: "vbp"}


def corpus(variant):
    try:
        return archives.get_corpus()[variant]
    except archives.CorpusError as err:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(err))


# pmFetchHighRes in PM_MODE_INTERP at every grid time, pmExtractValue of every value to
# its own type: run here on the drop-in and under the reference Python on the official
# binding. A row is None (the fetch failed: PM_ERR_EOL) or [[pmid, inst, value], ...]
# (aggregates' values as None: compared by presence).
INTERP_ROWS = r"""
def interp_rows(spec, names, start_ns, step_ns, nrows):
    import cpmapi as c_api
    from pcp import pmapi
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, spec)
    import ctypes
    pmids = list(ctx.pmLookupName(names))
    request = (ctypes.c_uint * len(pmids))(*pmids)
    types = dict((p, d.type) for p, d in zip(pmids, ctx.pmLookupDescs(pmids)))
    fields = {0: "l", 1: "ul", 2: "ll", 3: "ull", 4: "f", 5: "d"}
    ctx.pmSetModeHighRes(c_api.PM_MODE_INTERP, pmapi.timespec(*divmod(start_ns, 10**9)),
                         pmapi.timespec(*divmod(step_ns, 10**9)))
    rows = []
    for _ in range(nrows):
        try:
            res = ctx.pmFetchHighRes(request)
        except pmapi.pmErr:
            rows.append(None)
            continue
        got = []
        c = res.contents
        for j in range(c.numpmid):
            pmid = c.get_pmid(j)
            t = types[pmid]
            for k in range(max(c.get_numval(j), 0)):
                vl = c.get_vlist(j, k)
                inst = vl.inst if vl.inst != c_api.PM_IN_NULL else -1
                value = None
                if t in fields or t == c_api.PM_TYPE_STRING:
                    atom = ctx.pmExtractValue(c.get_valfmt(j), vl, t, t)
                    if t == c_api.PM_TYPE_STRING:
                        value = atom.cp
                        value = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
                    else:
                        value = getattr(atom, fields[t])
                        value = repr(value) if isinstance(value, float) else value
                got.append([pmid, inst, value])
        rows.append(got)
        ctx.pmFreeHighResResult(res)
    return rows
"""


def dropin_rows(spec, names, start_ns, step_ns, nrows):
    space = {}
    exec(INTERP_ROWS, space)
    return space["interp_rows"](spec, names, start_ns, step_ns, nrows)


def reference_rows(spec, names, start_ns, step_ns, nrows):
    difftest.require_reference()
    code = INTERP_ROWS + "\nimport json\nprint(json.dumps(interp_rows(%r, %r, %d, %d, %d)))\n" % (
        spec, list(names), start_ns, step_ns, nrows)
    return difftest.run_reference(code, timeout=600)


def our_rows(cols):
    """The grid read in the form of interp_rows (rows with no value at all: [])."""
    out = [[] for _ in range(len(cols))]
    for ma in cols.metrics.values():
        values = ma.values
        rows, ks = np.nonzero(ma.present)
        for r, k in zip(rows.tolist(), ks.tolist()):
            v = values[r, k]
            if ma.type == c_api.PM_TYPE_AGGREGATE:
                v = None
            elif ma.type != c_api.PM_TYPE_STRING:
                v = v.item()
                v = repr(v) if isinstance(v, float) else v
            out[r].append([ma.pmid, int(ma.instances[k]), v])
    return out


def compare(ours, expect):
    """Row by row: where the fetch failed the grid has no value; elsewhere the same
    (pmid, instance, value) triples."""
    assert len(ours) == len(expect)
    for r, (o, e) in enumerate(zip(ours, expect)):
        if e is None:
            assert o == [], r
            continue
        assert sorted(map(tuple, o), key=repr) == sorted(map(tuple, e), key=repr), r


def grid_names(spec):
    """Every metric of the archive the grid reads (no events)."""
    reader = bulk.ArchiveReader(spec, interval=1.0)
    return reader.metric_names


def archive_span(spec):
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, spec)
    label = ctx.pmGetArchiveLabel()
    start = label.start.tv_sec * 10**9 + label.start.tv_usec * 1000
    end = ctx.pmGetArchiveEnd()
    return start, end.tv_sec * 10**9 + end.tv_usec * 1000


@pytest.mark.parametrize("variant,step", [
    ("v2", 0.1), ("v3", 0.037), ("v3native", 0.25), ("marks", 0.1), ("marks3", 0.5),
    ("mv_gap", 0.3), ("list_pair", 0.1), ("dir_pair", 0.7), ("v3", 1.3), ("xz_all", 2.0)])
def test_grid_matches_dropin_interp(variant, step):
    spec = corpus(variant)
    names = grid_names(spec)
    reader = bulk.ArchiveReader(spec, names, interval=step, chunk_rows=7)
    cols = reader.read()
    assert len(cols) >= 2
    assert reader.stats["dropped"] == 0
    t = cols.time.astype(np.int64)
    assert (np.diff(t) == int(round(step * 1e9))).all()
    expect = dropin_rows(spec, names, int(t[0]), int(round(step * 1e9)), len(cols))
    compare(our_rows(cols), expect)


def _check(spec, names, cols, step_ns, reference=False):
    t = cols.time.astype(np.int64)
    expect = dropin_rows(spec, names, int(t[0]), step_ns, len(cols))
    compare(our_rows(cols), expect)
    if reference:
        compare(our_rows(cols), reference_rows(spec, names, int(t[0]), step_ns, len(cols)))


@pytest.mark.reference
@pytest.mark.parametrize("variant,step", [("v2", 0.1), ("v3", 0.37), ("marks", 1.1),
                                          ("list_pair", 0.25)])
def test_grid_matches_the_official_binding(variant, step):
    """Directly against libpcp 6.0.3's INTERP through the official binding (steps
    shorter and longer than the 100 ms logging interval)."""
    spec = corpus(variant)
    names = grid_names(spec)
    cols = bulk.read_archive(spec, names, interval=step)
    _check(spec, names, cols, int(round(step * 1e9)), reference=True)


@pytest.mark.parametrize("offset_s", [-1.5, -0.0004, 0.05, 1.234, 3.0, 60.0])
def test_grid_start_before_inside_after(offset_s):
    """Grids that start before the archive (PM_ERR_EOL rows, then values), inside it,
    and after it (no values), each value as the drop-in's pmFetch gives it."""
    spec = corpus("v3")
    first, last = archive_span(spec)
    start = first + int(offset_s * 1e9)
    names = grid_names(spec)
    cols = bulk.read_archive(spec, names, start=start / 1e9,
                             end=(max(last, start) + 2 * 10**9) / 1e9,
                             interval="150msec")
    assert cols.time.astype(np.int64)[0] == start or abs(
        int(cols.time.astype(np.int64)[0]) - start) < 1000
    _check(spec, names, cols, 150 * 10**6)
    if offset_s > (last - first) / 1e9 + 0.01 or offset_s < -0.01:
        assert not any(ma.present[0].any() for ma in cols.metrics.values())


@pytest.mark.parametrize("variant", ["v3", "marks", "mv_gap"])
def test_grid_rates_are_pmvals(variant):
    """rate=True: for counters, (v[k] - v[k-1]) / interval over the drop-in's
    interpolated values, absent at the first row, where either is absent and where the
    counter went down (pmval prints "!" there)."""
    spec = corpus(variant)
    names = grid_names(spec)
    step = 0.2
    raw = bulk.read_archive(spec, names, interval=step)
    rated = bulk.read_archive(spec, names, interval=step, rate=True, chunk_rows=3)
    assert len(raw) == len(rated)
    counters = 0
    for name, ma in rated.metrics.items():
        src = raw.metrics[name]
        if not ma.rate:
            assert (ma.present == src.present).all()
            continue
        counters += 1
        v = src.values.astype(np.float64)
        for r in range(len(raw)):
            for k in range(v.shape[1]):
                ok = r > 0 and src.present[r, k] and src.present[r - 1, k] and \
                    v[r, k] >= v[r - 1, k]
                assert ma.present[r, k] == ok, (name, r, k)
                if ok:
                    assert ma.values[r, k] == (v[r, k] - v[r - 1, k]) / step
                else:
                    assert np.isnan(ma.values[r, k])
    assert counters > 5


def test_grid_outputs_agree(tmp_path):
    """chunks, read(), pandas, Arrow, batches and parquet of one grid hold the same
    values; align moves the first time to a multiple of the alignment."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    spec = corpus("v3")
    names = ["sample.seconds", "sample.long.bin_ctr", "sample.string.hullo", "sample.bin"]
    reader = bulk.ArchiveReader(spec, names, interval="100msec", align="0.5sec",
                               chunk_rows=4)
    whole = reader.read()
    first = int(whole.time.astype(np.int64)[0])
    assert first % (5 * 10**8) == 0
    parts = list(reader.chunks())
    assert len(parts) > 1 and sum(len(p) for p in parts) == len(whole)
    wide = reader.to_pandas()
    assert len(wide) == len(whole)
    table = reader.to_arrow()
    assert table.num_rows == len(whole)
    batches = reader.to_batches().read_all()
    assert batches.num_rows == len(whole)
    np.testing.assert_array_equal(
        wide["sample.seconds"].to_numpy(dtype=float, na_value=np.nan),
        whole["sample.seconds"].filled()[:, 0])
    reader.to_parquet(tmp_path / "grid.parquet")
    back = pd.read_parquet(tmp_path / "grid.parquet")
    assert len(back) == len(whole)
    np.testing.assert_array_equal(
        back["sample.seconds"].to_numpy(dtype=float, na_value=np.nan),
        whole["sample.seconds"].filled()[:, 0])
    assert whole["sample.string.hullo"].values[whole["sample.string.hullo"].present].tolist()


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

GRID_METRICS = ["sample.seconds", "sample.long.bin_ctr", "sample.ulonglong.bin_ctr",
                "sample.float.bin_ctr", "sample.double.bin_ctr", "sample.bin", "sample.colour",
                "sample.string.hullo", "sample.many.int", "sample.proc.exec", "hinv.ncpu",
                "sample.dynamic.counter", "sample.hordes.one", "kernel.all.load"]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(variant=st.sampled_from(["v2", "v3", "marks", "marks3", "mv_gap", "list_pair",
                                "noindex", "mv3"]),
       offset_ms=st.integers(-2000, 6000), step_ms=st.integers(1, 2500),
       rows=st.integers(1, 40), chunk_rows=st.integers(1, 9),
       metrics=st.lists(st.sampled_from(GRID_METRICS), min_size=1, max_size=6, unique=True))
def test_random_grids_match_dropin_interp(variant, offset_ms, step_ms, rows, chunk_rows,
                                          metrics):
    """Random grids (start before, inside or after the archives, steps from 1 ms to
    2.5 s, any chunking) over archives with marks, gaps, several volumes or archives:
    every cell as the drop-in's INTERP pmFetch gives it."""
    spec = corpus(variant)
    first, _ = archive_span(spec)
    names = [n for n in metrics if n in grid_names(spec)]
    if not names:
        return
    start = first + offset_ms * 10**6
    step = step_ms * 10**6
    cols = bulk.read_archive(spec, names, start=np.datetime64(start, "ns"),
                             end=np.datetime64(start + (rows - 1) * step, "ns"),
                             interval=step_ms / 1000.0, chunk_rows=chunk_rows)
    assert len(cols) == rows
    assert int(cols.time.astype(np.int64)[0]) == start
    compare(our_rows(cols), dropin_rows(spec, names, start, step, rows))


def test_grid_strings_grow_their_staging(monkeypatch):
    """Strings of a chunk that do not fit the staging area: it grows (C asks for room,
    the step is stored again) and every string is the same as with room to spare."""
    from pcp._bulk import grid
    spec = corpus("v3")
    names = ["sample.string.hullo", "kernel.uname.release", "sample.seconds"]
    roomy = bulk.read_archive(spec, names, interval=0.1)
    monkeypatch.setattr(grid, "STAGED_START", 1)
    tight = bulk.read_archive(spec, names, interval=0.1)
    for name in names:
        assert (tight[name].present == roomy[name].present).all()
        assert tight[name].values.tolist() == roomy[name].values.tolist()
    assert tight["sample.string.hullo"].present.sum() > 5

