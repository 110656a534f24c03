"""pcp.pmi.write_frame: a DataFrame from pcp.bulk.read_archive written back to an archive
reads back as the same frame (wide and long, v2 and v3), and the archive passes
pmlogcheck and opens with the official binding."""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

from pcp import bulk, pmi  # noqa: E402
from tests.support import difftest  # noqa: E402
from tests.support.archives import get_corpus  # noqa: E402


def _metrics(cols) -> list:
    """Metrics a frame can carry: those with instance columns whose names are unique."""
    out = []
    for name in cols.metrics:
        m = cols[name]
        if m.shape[1] and len(set(m.instance_names)) == len(m.instance_names):
            out.append(name)
    return out


def _rows(frame):
    frame = frame.copy()
    for column in ("metric", "instance"):
        frame[column] = frame[column].astype(object).where(frame[column].notna(), None)
    frame["_inst"] = frame["instance"].map(lambda v: "" if v is None else v)
    frame = frame.sort_values(["metric", "time", "_inst"], kind="stable")
    return frame.drop(columns="_inst").reset_index(drop=True)


@pytest.mark.parametrize("form", ["wide", "long"])
@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("source", ["v2", "v3native"])
def test_round_trip(form: str, version: int, source: str, tmp_path) -> None:
    src = get_corpus()[source]
    names = _metrics(bulk.read_archive(src))
    before = bulk.read_archive(src, metrics=names).to_pandas(form)
    out = str(tmp_path / "copy")
    records = pmi.write_frame(before, out, form=form, version=version)
    assert records == len(before.index.unique()) if form == "wide" else records > 0
    after = bulk.read_archive(out, metrics=names).to_pandas(form)
    if version == 2:        # v2 stamps hold microseconds
        if form == "wide":
            before.index = before.index.floor("us")
        else:
            before["time"] = before["time"].dt.floor("us")
    if form == "long":
        # the long form does not say in which order a metric's instance columns were
        # (categories are shared by all metrics): same rows, up to that order
        before, after = _rows(before), _rows(after)
    pd.testing.assert_frame_equal(before, after)
    check = subprocess.run(["pmlogcheck", out], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize("form", ["wide", "long"])
def test_arrow_round_trip(form: str, tmp_path) -> None:
    pytest.importorskip("pyarrow")
    src = get_corpus()["v2"]
    names = _metrics(bulk.read_archive(src))
    before = bulk.read_archive(src, metrics=names).to_arrow(form)
    out = str(tmp_path / "copy")
    assert pmi.write_frame(before, out, form=form) > 0
    after = bulk.read_archive(out, metrics=names).to_arrow(form)
    if form == "wide":
        assert after.schema == before.schema
        assert after.equals(before)
    else:
        pd.testing.assert_frame_equal(_rows(before.to_pandas()), _rows(after.to_pandas()))


def test_typed_frame_reads_back_with_the_official_binding(tmp_path) -> None:
    """A hand-made frame of every writable dtype, read back by libpcp."""
    difftest.require_reference()
    index = pd.DatetimeIndex(pd.to_datetime(1_700_000_000_123_456_789 + np.arange(5) * 10**9,
                                            unit="ns"), name="time")
    frame = pd.DataFrame({
        "t.i32": pd.array([1, -2, None, 4, 5], dtype="Int32"),
        "t.u32": pd.array([1, 2, 3, 4, 4294967295], dtype="UInt32"),
        "t.i64[a]": pd.array([-(2**63), 0, 1, None, 3], dtype="Int64"),
        "t.i64[b c]": pd.array([7, 8, 9, 10, 11], dtype="Int64"),
        "t.u64": pd.array([2**64 - 1, 0, 1, 2, 3], dtype="UInt64"),
        "t.f32": np.array([1.5, np.nan, -2.25, 0, 3], np.float32),
        "t.f64[x]": np.array([1e300, 2, np.nan, 4, 5]),
        "t.str": np.array(["a", None, "ccc", "", "ünï"], object),
    }, index=index)
    out = str(tmp_path / "typed")
    assert pmi.write_frame(frame, out, version=3) == 5
    got = difftest.run_reference(r'''
import json
from pcp import pmapi
import cpmapi as c
ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, %r)
rows = []
while True:
    try:
        res = ctx.pmFetchHighResArchive()
    except pmapi.pmErr:
        break
    r = res.contents
    row = {"t": [r.timestamp.tv_sec, r.timestamp.tv_nsec]}
    for i in range(r.numpmid):
        pmid = r.get_pmid(i)
        d = ctx.pmLookupDesc(pmid)
        name = ctx.pmNameID(pmid)
        for j in range(r.get_numval(i)):
            v = ctx.pmExtractValue(r.get_valfmt(i), r.get_vlist(i, j), d.type, d.type).dref(d.type)
            if isinstance(v, bytes):
                v = v.decode()
            inst = r.get_inst(i, j)
            key = name if d.indom == c.PM_INDOM_NULL else "%%s[%%s]" %% (name, ctx.pmNameInDomArchive(d, inst))
            row[key] = repr(v) if isinstance(v, float) else v
    rows.append(row)
print(json.dumps(rows))
''' % out)
    assert len(got) == 5
    expect = []
    for k, (stamp, row) in enumerate(frame.iterrows()):
        ns = stamp.value
        item = {"t": [ns // 10**9, ns % 10**9]}
        for col, value in row.items():
            if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
                continue
            if col in ("t.f32", "t.f64[x]"):
                value = repr(float(np.float32(value)) if col == "t.f32" else float(value))
            elif col != "t.str":
                value = int(value)
            item[col] = value
        expect.append(item)
    assert got == expect


ROWS = 6000     # more than one block of rows (4096) and more than one index interval

SAME_ARCHIVE_REFERENCE = r'''
import sys
from pcp import pmi
import cpmapi as c
log = pmi.pmiLogImport(sys.argv[1])
log.pmiSetVersion(3)
log.pmiSetHostname("frame")
log.pmiSetTimezone("UTC")
none = log.pmiUnits(0, 0, 0, 0, 0, 0)
log.pmiAddMetric("a.x", c.PM_ID_NULL, c.PM_TYPE_DOUBLE, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, none)
indom = log.pmiInDom(245, 0)
for i in range(3):
    log.pmiAddInstance(indom, "i%d" % i, i)
log.pmiAddMetric("b.y", c.PM_ID_NULL, c.PM_TYPE_64, indom, c.PM_SEM_INSTANT, none)
log.pmiAddMetric("c.s", c.PM_ID_NULL, c.PM_TYPE_STRING, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, none)
for k in range(ROWS_HERE):
    log.pmiPutValue("a.x", None, repr(k * 0.5))
    for j in range(3):
        if (k + j) % 7:
            log.pmiPutValue("b.y", "i%d" % j, str(k * 3 + j - 5000))
    log.pmiPutValue("c.s", None, "s%d" % k)
    log.pmiHighResWrite(1700000000 + k, k * 1000)
log.pmiEnd()
print("[]")
'''.replace("ROWS_HERE", str(ROWS))


def test_same_archive_as_the_official_pmi(tmp_path) -> None:
    """A frame whose metrics all have values in the first row is written exactly as the
    official pcp.pmi writes the same values one pmiPutValue at a time (pid aside)."""
    difftest.require_reference()
    ref_dir = tmp_path / "ref"
    ref_dir.mkdir()
    run = difftest.run_script(SAME_ARCHIVE_REFERENCE, [str(ref_dir / "arch")], ours=False,
                              timeout=300)
    assert run["status"] == 0, run["stderr"]
    k = np.arange(ROWS)
    y = {}
    for j in range(3):
        present = (k + j) % 7 != 0
        y["b.y[i%d]" % j] = pd.array(np.where(present, k * 3 + j - 5000, 0), dtype="Int64")
        y["b.y[i%d]" % j][~present] = pd.NA
    frame = pd.DataFrame({"a.x": k * 0.5, **y, "c.s": np.array(["s%d" % i for i in k], object)},
                         index=pd.DatetimeIndex(pd.to_datetime(
                             (1700000000 + k) * 10**9 + k * 1000, unit="ns"), name="time"))
    our_dir = tmp_path / "ours"
    our_dir.mkdir()
    assert pmi.write_frame(frame, str(our_dir / "arch"), version=3, hostname="frame") == ROWS

    def files(folder):
        out = {}
        for entry in sorted(os.listdir(folder)):
            data = bytearray((folder / entry).read_bytes())
            data[8:12] = b"PID!"
            out[entry] = bytes(data)
        return out

    ours, ref = files(our_dir), files(ref_dir)
    assert sorted(ours) == sorted(ref)
    for entry in ref:
        assert ours[entry] == ref[entry], entry
