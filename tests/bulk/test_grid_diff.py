"""Regular-grid reads (ArchiveReader(..., interval=...)) against pmFetch in
PM_MODE_INTERP: the drop-in's (itself differential against libpcp 6.0.3, see
tests/archive/test_diff_archive_interp.py), value by value, and the official binding
directly on archives of the pmlogger corpus."""
import math
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


def _value(ctx, fmt, vlist, mtype):
    atom = ctx.pmExtractValue(fmt, vlist, mtype, mtype)
    if mtype == c_api.PM_TYPE_STRING:
        return atom.cp.decode("utf-8", "replace") if isinstance(atom.cp, bytes) else atom.cp
    if mtype == c_api.PM_TYPE_AGGREGATE:
        return None            # compared by presence only
    return getattr(atom, FIELDS[mtype])


def dropin_rows(spec, names, start_ns, step_ns, nrows):
    """What the drop-in's pmFetchHighRes in PM_MODE_INTERP gives at each grid time: per
    row a dict pmid -> {inst: value} (None for an error such as PM_ERR_EOL)."""
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, spec)
    pmids = list(ctx.pmLookupName(names))
    types = {p: d.type for p, d in zip(pmids, ctx.pmLookupDescs(pmids))}
    ctx.pmSetModeHighRes(c_api.PM_MODE_INTERP, pmapi.timespec(*divmod(start_ns, 10**9)),
                         pmapi.timespec(*divmod(step_ns, 10**9)))
    rows = []
    for _ in range(nrows):
        try:
            res = ctx.pmFetchHighRes(pmids)
        except pmapi.pmErr:
            rows.append(None)
            continue
        got = {}
        c = res.contents
        for j in range(c.numpmid):
            pmid = c.get_pmid(j)
            n = c.get_numval(j)
            vals = {}
            for k in range(max(n, 0)):
                vl = c.get_vlist(j, k)
                vals[vl.inst if vl.inst != c_api.PM_IN_NULL else -1] = _value(ctx, c.get_valfmt(j), vl, types[pmid])
            got[pmid] = vals
        rows.append(got)
        ctx.pmFreeHighResResult(res)
    return rows


def our_rows(cols):
    """The grid read in the same form as dropin_rows (absent rows: {} per metric)."""
    out = [dict() for _ in range(len(cols))]
    for ma in cols.metrics.values():
        values = ma.values
        for r in range(len(cols)):
            vals = {}
            for k in np.nonzero(ma.present[r])[0].tolist():
                inst = int(ma.instances[k])
                v = values[r, k]
                if ma.type == c_api.PM_TYPE_AGGREGATE:
                    v = None
                elif ma.type != c_api.PM_TYPE_STRING:
                    v = v.item()
                vals[inst] = v
            out[r][ma.pmid] = vals
    return out


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return a == b


def compare(ours, expect):
    assert len(ours) == len(expect)
    for r, (o, e) in enumerate(zip(ours, expect)):
        if e is None:            # PM_ERR_EOL there: nothing on the grid
            assert all(not v for v in o.values()), r
            continue
        for pmid, vals in e.items():
            got = o.get(pmid, {})
            assert set(got) == set(vals), (r, pmid, sorted(got), sorted(vals))
            for inst, v in vals.items():
                assert same(got[inst], v), (r, pmid, inst, got[inst], v)


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
