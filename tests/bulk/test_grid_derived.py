"""Derived metrics as columns of regular-grid reads (ArchiveReader(..., interval=...)),
compared value by value with pmFetch in PM_MODE_INTERP of the same derived metrics at
every grid time: the drop-in's (for the iostat set, the sample expressions of
test_derived_columns.py on corpus archives, steps shorter and longer than the logging
interval, every chunk size) and the official binding's (libpcp 6.0.3) on some of them.
rate()/delta() state carries from one grid step to the next across chunks; a fetch that
fails (PM_ERR_EOL, before or after the archives) evaluates nothing."""
import os
import re
import sys

import numpy as np
import pytest

from support import difftest, tool_archive

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_derived_columns import (OPEN_CONTEXT, ROW_VALUES, SAMPLE_EXPRS,  # noqa: E402
                                  _bulk, _iostat_names, _var_dir)
from test_grid_diff import corpus  # noqa: E402

pytestmark = pytest.mark.pmcd         # the archives are recorded from the local pmcd

# pmFetchHighRes in PM_MODE_INTERP at every grid time, under the official binding and
# under this package's drop-in: a row is None (the fetch failed) or each metric's sorted
# [instance, value] pairs (floats as hex)
FETCH = r'''
import os
CONFIG, DEFS, ARCHIVE, NAMES, START, STEP, NROWS = %(args)r
''' + OPEN_CONTEXT + r'''
ctx.pmSetModeHighRes(c_api.PM_MODE_INTERP, pmapi.timespec(*divmod(START, 10**9)),
                     pmapi.timespec(*divmod(STEP, 10**9)))
P = pmapi.pmContext
rows = []
for _ in range(NROWS):
    try:
        res = ctx.pmFetchHighRes(pmids)
    except pmapi.pmErr as e:
        if e.code != c_api.PM_ERR_EOL:
            raise
        rows.append(None)
        continue
    r = res.contents
    row = []
''' + ROW_VALUES + r'''
    rows.append(row)
    ctx.pmFreeHighResResult(res)
RESULT = rows
'''


def grid_read(config, defs, archive, names, step_ns, chunks, start=None, end=None,
              rate=False):
    """The grid read of `names` for each chunk size: {size: {"rows" (FETCH's form, a row
    with no value at all [[], [], ...]), "times" (ns), "dropped"}}."""
    got = _bulk(config, defs, archive, names, chunks,
                {"interval": step_ns / 1e9, "start": start, "end": end, "rate": rate})
    assert "error" not in got and "__crash__" not in got, got
    for image in got.values():
        image["rows"] = [row[1:] for row in image["rows"]]      # the time left out
    return got


def compare(image, expect, names):
    """Row by row: where the fetch failed the grid row has no value; elsewhere the same
    (instance, value) pairs for every name."""
    rows = image["rows"]
    assert len(rows) == len(expect)
    for k, (row, want) in enumerate(zip(rows, expect)):
        if want is None:
            assert row == [[] for _ in names], k
        else:
            assert row == want, (k, [(n, a, b) for n, a, b in zip(names, row, want)
                                     if a != b][:3])


def check(config, defs, archive, names, step, chunks=(None, 1, 4), reference=False,
          start=None, end=None):
    """The grid's derived columns == the drop-in's INTERP fetches (== the official
    binding's with reference=True), for every chunk size; returns the fetched rows."""
    step_ns = int(round(step * 1e9))
    got = grid_read(config, defs, archive, names, step_ns, chunks, start, end)
    first = got[str(chunks[0])]
    times = first["times"]
    assert len(times) >= 2 and all(b - a == step_ns for a, b in zip(times, times[1:]))
    args = {"args": (config, defs, archive, names, times[0], step_ns, len(times))}
    if reference:
        difftest.require_reference()
        ours, ref = difftest.run_both(FETCH % args)
        assert not isinstance(ref, dict), ref
        difftest.assert_equal(ours, ref)
    else:
        ours = difftest.run_ours(FETCH % args)
        assert not isinstance(ours, dict), ours
    for size, image in got.items():
        assert image["times"] == times, size
        assert image["dropped"] == 0, size
        compare(image, ours, names)
    return ours


def _iostat():
    conf = os.path.join(_var_dir(), "config", "derived", "iostat.conf")
    if not os.path.exists(conf):
        pytest.skip("no iostat.conf")
    names = _iostat_names(conf)
    assert len(names) > 10
    return conf, names


@pytest.mark.parametrize("step,reference", [(0.1, False), (0.25, True), (0.7, False)])
def test_iostat_definitions_on_a_grid(step, reference):
    """Every disk.dev metric of the machine's iostat.conf on the pmlogger tool archive
    (logged every 250 ms): steps shorter, equal and longer."""
    conf, names = _iostat()
    rows = check(conf, [], tool_archive.linux_archive(), names, step, chunks=(None, 1, 3),
                 reference=reference)
    fetched = [row for row in rows if row is not None]
    assert sum(len(v) for row in fetched for v in row) > 5 * len(fetched)


SAMPLE_DEFS = [("gridd.e%d" % k, e) for k, e in enumerate(SAMPLE_EXPRS)]


@pytest.mark.parametrize("which,step", [("v2", 0.037), ("v3", 0.25), ("marks", 0.1),
                                        ("marks3", 0.5), ("list_pair", 1.3),
                                        ("mv_gap", 0.3)])
def test_sample_expressions_on_a_grid(which, step):
    """The expression language over the sample PMDA (logged every 100 ms) on corpus
    archives with marks, gaps, several archives."""
    names = [n for n, _ in SAMPLE_DEFS]
    rows = check("", SAMPLE_DEFS, corpus(which), names, step, chunks=(None, 1, 4))
    fetched = [row for row in rows if row is not None]
    assert sum(1 for row in fetched for vals in row if vals) > len(fetched) * len(names) // 3


@pytest.mark.reference
@pytest.mark.parametrize("which,step", [("v3", 0.15), ("marks", 1.1)])
def test_sample_expressions_match_the_official_binding(which, step):
    """All but scalar() of an instance filter, which libpcp 6.0.3 crashes on (SIGSEGV)
    in an INTERP fetch, and sum() / avg() / max() / min(), which it gives uninitialised
    memory for where their operand has no value yet (the first grid time); the drop-in's
    fetch gives them (test_sample_expressions_on_a_grid)."""
    defs = [(n, e) for n, e in SAMPLE_DEFS
            if not re.match(r"(scalar|sum|avg|max|min)\(", e)]
    check("", defs, corpus(which), [n for n, _ in defs], step, chunks=(None, 3),
          reference=True)


def test_grid_before_and_after_the_archive():
    """A grid that starts before the archive and runs past its end: the failed fetches
    (PM_ERR_EOL) are absent rows and move no rate() / delta() state."""
    spec = corpus("v3")
    from pcp import bulk
    first = int(bulk.ArchiveReader(spec, ["sample.seconds"], interval=1).start_ns)
    defs = [("gridd.r", "rate(sample.milliseconds)"), ("gridd.d", "delta(sample.long.bin_ctr)"),
            ("gridd.s", "sample.seconds * 2"), ("gridd.c", "1.5 + 2"),
            ("gridd.m", "matchinst(/bin-[1-3]/, sample.bin)")]
    names = [n for n, _ in defs]
    rows = check("", defs, spec, names, 0.2, chunks=(None, 1, 3), start=first - 1500 * 10**6,
                 end=first + 60 * 10**9)
    assert rows[0] is None and rows[-1] is None
    assert any(row is not None and row[0] for row in rows)


def test_derived_counter_rates_on_a_grid():
    """rate=True: a derived counter is rated as any counter of the grid (pmval's
    (v[k] - v[k-1]) / interval), from its own grid values."""
    spec = corpus("marks")
    defs = [("gridd.sum", "sample.long.bin_ctr + sample.long.bin_ctr"),
            ("gridd.copy", "sample.ulonglong.bin_ctr")]
    names = [n for n, _ in defs] + ["sample.ulonglong.bin_ctr"]
    step_ns = 2 * 10**8
    raw = grid_read("", defs, spec, names, step_ns, [None])["None"]["rows"]
    for size in (None, 1, 3):
        rated = grid_read("", defs, spec, names, step_ns, [size], rate=True)[str(size)]["rows"]
        assert len(rated) == len(raw)
        for k in range(len(raw)):
            for j in range(len(names)):
                before = dict(raw[k - 1][j]) if k else {}
                want = []
                for inst, v in raw[k][j]:
                    if inst in before and int(v) >= int(before[inst]):
                        want.append([inst, ((int(v) - int(before[inst])) / 0.2).hex()])
                assert rated[k][j] == want, (size, k, names[j])
        copies = [row[1] for row in rated]
        assert copies == [row[2] for row in rated]
        assert sum(1 for c in copies if c) > 5


def test_dask_grid_partitions_with_derived_metrics():
    """pcp.dask's grid partitions (a volume's grid times, one step read before them)
    give the derived columns a read of the whole grid gives."""
    pytest.importorskip("dask")
    spec = corpus("mv_gap")
    code = r'''
import os, json
ARCHIVE = %r
os.environ["PCP_DERIVED_CONFIG"] = ""
import numpy as np
from pcp import bulk, pmapi, dask as pdask
import cpmapi as c_api
ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, ARCHIVE)
ctx.pmRegisterDerived("gridd.r", "rate(sample.milliseconds)")
ctx.pmRegisterDerived("gridd.d", "delta(sample.bin)")
names = ["gridd.r", "gridd.d"]
frame = pdask.read_archives(ARCHIVE, names, interval=0.3, form="wide", split="volume").compute()
whole = bulk.ArchiveReader(ARCHIVE, names, interval=0.3).to_pandas()
frame = frame.drop(columns=["host"])
parts = pdask.read_archives(ARCHIVE, names, interval=0.3, form="wide", split="volume").npartitions
RESULT = {"parts": parts, "same": bool(frame.reset_index(drop=True).equals(
    whole[frame.columns].reset_index(drop=True).astype(frame.dtypes.to_dict()))),
    "rows": len(frame), "values": int(frame.notna().sum().sum())}
''' % spec
    got = difftest.run_ours(code)
    assert "error" not in got and "__crash__" not in got, got
    assert got["parts"] > 1 and got["rows"] >= 8 and got["values"] > 10
    assert got["same"], got


def test_constants_only():
    """A selection of derived metrics without operands: each grid time is still a
    fetch (values inside the archives, PM_ERR_EOL past their end)."""
    defs = [("gridd.k", "1.5 + 2"), ("gridd.m", "mkconst(7, type=u64, units=kbyte)")]
    rows = check("", defs, corpus("v3"), [n for n, _ in defs], 1.0, chunks=(None, 1),
                 reference=True)
    assert rows[0] == [[[-1, "0x1.c000000000000p+1"]], [[-1, 7]]]


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

RANDOM_EXPRS = ["rate(sample.milliseconds)", "delta(sample.long.bin_ctr)",
                "delta(sample.many.int)", "rate(sample.bin)", "sample.bin[bin-300]",
                "matchinst(/bin-[1-3]/, sample.bin)", "sum(sample.many.int)",
                "delta(sample.dynamic.counter)", "sample.seconds / sample.bin",
                "instant(sample.seconds)", "count(sample.proc.exec)",
                "delta(sample.seconds) / delta(sample.milliseconds)"]


@settings(max_examples=int(os.environ.get("PCP_GRID_DERIVED_EXAMPLES", "10")), deadline=None,
          derandomize=True, suppress_health_check=list(HealthCheck))
@given(variant=st.sampled_from(["v2", "v3", "marks", "mv_gap", "list_pair", "mv3"]),
       offset_ms=st.integers(-1500, 5000), step_ms=st.integers(7, 2000),
       rows=st.integers(2, 40), chunk_rows=st.integers(1, 9),
       exprs=st.lists(st.sampled_from(RANDOM_EXPRS), min_size=1, max_size=5, unique=True))
def test_random_grids_of_derived_metrics(variant, offset_ms, step_ms, rows, chunk_rows,
                                         exprs):
    """Random grids (before, inside, after the archives; steps of 7 ms to 2 s; any
    chunking): every derived cell as the drop-in's INTERP pmFetch gives it."""
    from pcp import bulk
    spec = corpus(variant)
    first = int(bulk.ArchiveReader(spec, ["sample.seconds"], interval=1).start_ns)
    start = first + offset_ms * 10**6
    step = step_ms * 10**6
    defs = [("gridd.h%d" % k, e) for k, e in enumerate(exprs)]
    check("", defs, spec, [n for n, _ in defs], step / 1e9, chunks=(chunk_rows, None),
          start=start, end=start + (rows - 1) * step)
