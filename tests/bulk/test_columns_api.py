"""Archive columns (pcp.bulk.ArchiveReader): selection, times, the pandas / Arrow /
parquet forms, the PyCapsule stream as polars and duckdb read it, instance columns added
during a scan, damaged records, the progress bar and flat memory. Values themselves are
checked against the official binding in test_columns_diff.py."""

import datetime as dt
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from support import archives
from pcp import bulk
from pcp._bulk import columns as C
from pcp._bulk import export
from pcp._bulk import scan
from pcp.pmapi import pmErr

pytestmark = pytest.mark.pmcd

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(os.path.dirname(os.path.dirname(HERE)), "benchmarks")


def corpus(variant="v2"):
    return archives.get_corpus()[variant]


@pytest.fixture(scope="module")
def v2():
    return corpus("v2")


MIXED = ["sample.bin", "sample.double.bin", "sample.ulonglong.bin", "sample.float.one",
         "sample.string.hullo", "sample.aggregate.hullo", "sample.long.one",
         "sample.proc.exec"]


# ---- selection ----------------------------------------------------------------------


def test_names_and_prefixes(v2):
    r = bulk.ArchiveReader(v2, ["sample.long", "sample.bin"])
    assert r.metric_names == sorted(n for n in r.metric_names if n.startswith("sample.long.")) \
        + ["sample.bin"]
    assert "sample.long.one" in r.metric_names
    with pytest.raises(pmErr) as e:
        bulk.ArchiveReader(v2, ["no.such.metric"])
    assert e.value.args[0] == -12357
    with pytest.raises(ValueError):
        bulk.ArchiveReader(v2, "sample.event.records")
    # a prefix leaves event metrics out quietly
    events = bulk.ArchiveReader(v2, "sample.event").metric_names
    assert "sample.event.records" not in events


def test_every_metric_once_by_default(v2):
    r = bulk.ArchiveReader(v2)
    pmids = [d["pmid"] for d in r.describe().values()]
    assert len(pmids) == len(set(pmids))
    assert "sample.bin" in r.metric_names


def test_names_of_one_pmid_share_arrays(v2):
    cols = bulk.read_archive(v2, ["sample.bin", "sample.dupnames.two.bin"])
    a, b = cols["sample.bin"], cols["sample.dupnames.two.bin"]
    assert a.pmid == b.pmid and a.name != b.name
    assert a.values is b.values


def test_dtypes_and_instances(v2):
    cols = bulk.read_archive(v2, MIXED)
    want = {"sample.bin": np.int32, "sample.double.bin": np.float64,
            "sample.ulonglong.bin": np.uint64, "sample.float.one": np.float32,
            "sample.string.hullo": object, "sample.aggregate.hullo": object,
            "sample.long.one": np.int32}
    for name, dtype in want.items():
        assert cols[name].values.dtype == np.dtype(dtype), name
        assert cols[name].present.shape == cols[name].values.shape
    assert cols.time.dtype == np.dtype("datetime64[ns]")
    assert np.all(np.diff(cols.time.astype(np.int64)) >= 0)
    b = cols["sample.bin"]
    assert b.instance_names == ["bin-%d" % i for i in range(100, 1000, 100)]
    assert b.instances.tolist() == list(range(100, 1000, 100))
    assert cols["sample.long.one"].singular and cols["sample.long.one"].shape[1] == 1
    assert isinstance(cols["sample.string.hullo"].values[cols["sample.string.hullo"].present][0], str)
    assert isinstance(cols["sample.aggregate.hullo"].values[
        cols["sample.aggregate.hullo"].present][0], bytes)
    m = cols["sample.bin"]
    assert m.masked.mask.tolist() == (~m.present).tolist()
    f = m.filled()
    assert f.dtype == np.float64 and np.isnan(f[~m.present]).all()
    assert (f[m.present] == m.values[m.present]).all()


# ---- times --------------------------------------------------------------------------


def test_time_conversions():
    ns = 1700000000123456789
    assert C.to_ns(None, 7) == 7
    assert C.to_ns(1700000000, 0) == 1700000000 * 10**9
    assert C.to_ns(1700000000.5, 0) == 1700000000500000000
    assert C.to_ns(np.datetime64(ns, "ns"), 0) == ns
    assert C.to_ns("2023-11-14T22:13:20.123456789", 0) == ns
    naive = dt.datetime(2023, 11, 14, 22, 13, 20, 123456)
    assert C.to_ns(naive, 0) == 1700000000123456000
    aware = dt.datetime(2023, 11, 15, 0, 13, 20, 123456,
                        tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert C.to_ns(aware, 0) == 1700000000123456000
    assert C.to_ns(dt.date(2023, 11, 14), 0) == 1699920000 * 10**9
    pd = pytest.importorskip("pandas")
    assert C.to_ns(pd.Timestamp(ns), 0) == ns
    assert C.to_ns(pd.Timestamp(ns, tz="Europe/Paris"), 0) == ns
    with pytest.raises(TypeError):
        C.to_ns(True, 0)


def test_empty_window(v2):
    r = bulk.ArchiveReader(v2, ["sample.bin", "sample.string.hullo"], start="2100-01-01")
    cols = r.read()
    assert len(cols) == 0 and cols["sample.bin"].values.shape == (0, 9)
    pytest.importorskip("pandas")
    assert cols.to_pandas().shape == (0, 10)
    assert cols.to_pandas("long").shape[0] == 0


# ---- pandas ---------------------------------------------------------------------------


def test_pandas_wide(v2):
    pd = pytest.importorskip("pandas")
    cols = bulk.read_archive(v2, MIXED)
    df = cols.to_pandas()
    assert isinstance(df.index, pd.DatetimeIndex) and df.index.name == "time"
    assert (df.index.values == cols.time).all()
    assert str(df["sample.bin[bin-300]"].dtype) == "Int32"
    assert str(df["sample.ulonglong.bin[bin-100]"].dtype) == "UInt64"
    assert df["sample.double.bin[bin-200]"].dtype == np.float64
    assert df["sample.float.one"].dtype == np.float32
    m = cols["sample.bin"]
    col = df["sample.bin[bin-300]"]
    assert col.isna().to_numpy().tolist() == (~m.present[:, 2]).tolist()
    assert col.dropna().astype(int).tolist() == m.values[m.present[:, 2], 2].tolist()
    s = cols["sample.string.hullo"]
    assert df["sample.string.hullo"].dropna().tolist() == s.values[s.present].tolist()
    ncols = sum(m.shape[1] for m in cols.values())
    assert df.shape == (len(cols), ncols)


def test_pandas_long(v2):
    pytest.importorskip("pandas")
    cols = bulk.read_archive(v2, MIXED)
    df = cols.to_pandas("long")
    assert list(df.columns) == ["time", "metric", "instance", "value", "text"]
    assert len(df) == sum(int(m.present.sum()) for m in cols.values())
    one = df[df.metric == "sample.bin"]
    m = cols["sample.bin"]
    assert len(one) == int(m.present.sum())
    assert set(one.instance.astype(str)) == set(m.instance_names)
    single = df[df.metric == "sample.long.one"]
    assert single.instance.isna().all()
    assert single.value.tolist() == m.values[:0].tolist() + \
        cols["sample.long.one"].values[cols["sample.long.one"].present].astype(float).tolist()
    text = df[df.metric == "sample.string.hullo"]
    assert text.value.isna().all() and (text.text == "hullo world!").all()


# ---- Arrow, parquet, the PyCapsule stream ------------------------------------------------


def test_arrow_wide(v2):
    pa = pytest.importorskip("pyarrow")
    cols = bulk.read_archive(v2, MIXED)
    t = cols.to_arrow()
    assert t.schema.field("time").type == pa.timestamp("ns")
    assert t.schema.field("sample.bin[bin-100]").type == pa.int32()
    assert t.schema.field("sample.ulonglong.bin[bin-100]").type == pa.uint64()
    assert t.schema.field("sample.string.hullo").type == pa.large_string()
    assert t.schema.field("sample.aggregate.hullo").type == pa.large_binary()
    for m in cols.values():
        # two sample.proc instances may share a name: the table's are made unique
        for j, cname in enumerate(export.wide_names(m)):
            col = t.column(cname)
            assert col.null_count == int((~m.present[:, j]).sum()), cname
            got = [v for v in col.to_pylist() if v is not None]
            want = m.values[m.present[:, j], j].tolist()
            assert got == want, cname
    r = bulk.ArchiveReader(v2, MIXED, chunk_rows=5)
    assert r.to_arrow().equals(t)
    assert pa.table(cols).equals(t)
    # the chunked stream fixes its columns from the metadata: an instance the data has
    # and the metadata lacks (sample.proc's come and go) is left out of it
    streamed = pa.RecordBatchReader.from_stream(r).read_all()
    assert set(streamed.column_names) <= set(t.column_names)
    assert streamed.equals(t.select(streamed.column_names))
    if r.stats["dropped"] == 0:
        assert streamed.equals(t)


def test_arrow_long(v2):
    pa = pytest.importorskip("pyarrow")
    cols = bulk.read_archive(v2, ["sample.bin", "sample.long.one"])
    t = cols.to_arrow("long")
    assert t.column_names == ["time", "metric", "instance", "value"]
    assert t.num_rows == sum(int(m.present.sum()) for m in cols.values())
    r = bulk.ArchiveReader(v2, ["sample.bin", "sample.long.one"], chunk_rows=4)
    assert r.to_arrow("long").num_rows == t.num_rows
    assert pa.types.is_dictionary(t.schema.field("metric").type)


def test_parquet(v2, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    r = bulk.ArchiveReader(v2, MIXED, chunk_rows=6)
    path = tmp_path / "wide.parquet"
    r.to_parquet(path)
    assert pq.read_table(path).equals(r.to_batches().read_all())
    r.to_parquet(tmp_path / "long.parquet", form="long")
    assert pq.read_table(tmp_path / "long.parquet").num_rows == \
        r.to_batches("long").read_all().num_rows
    cols = r.read()
    cols.to_parquet(tmp_path / "one.parquet")
    assert pq.read_table(tmp_path / "one.parquet").equals(cols.to_arrow())


def test_polars_and_duckdb_read_the_stream(v2):
    pytest.importorskip("pyarrow")
    r = bulk.ArchiveReader(v2, ["sample.bin", "sample.string.hullo"])
    table = r.to_batches().read_all()
    try:
        import polars as pl
    except ImportError:
        pl = None
    if pl is not None:
        df = pl.DataFrame(r)
        assert df.shape == table.shape
        assert df["sample.bin[bin-200]"].to_list() == table.column("sample.bin[bin-200]").to_pylist()
    try:
        import duckdb
    except ImportError:
        duckdb = None
    if duckdb is not None:
        cols = r.read()
        got = tuple(duckdb.sql('select count(*), sum("sample.bin[bin-200]") from cols').fetchall()[0])
        m = cols["sample.bin"]
        assert got == (len(cols), int(m.values[m.present[:, 1], 1].sum()))
    if pl is None and duckdb is None:
        pytest.skip("neither polars nor duckdb installed")


def test_pandas_of_reader(v2):
    pytest.importorskip("pandas")
    r = bulk.ArchiveReader(v2, ["sample.bin"], chunk_rows=3)
    assert r.to_pandas().equals(r.read().to_pandas())


# ---- instance columns added while scanning ---------------------------------------------


@pytest.mark.parametrize("miss_cap", [4096, 2])
def test_instances_unknown_to_the_window_get_columns(v2, monkeypatch, miss_cap):
    monkeypatch.setattr(scan, "MISS_CAP", miss_cap)
    whole = bulk.read_archive(v2, ["sample.bin", "sample.proc.exec", "sample.string.bin"])
    r = bulk.ArchiveReader(v2, ["sample.bin", "sample.proc.exec", "sample.string.bin"],
                           chunk_rows=4)
    for m in r._metrics:          # as if the metadata had none of them
        m.insts, m.inames = [], []
    joined = bulk.ArchiveColumns.concat(list(r))
    for name, m in whole.items():
        j = joined[name]
        # the instances with values (the metadata may name others, never seen)
        seen = [k for k in range(m.shape[1]) if m.present[:, k].any()]
        ids = m.instances[seen].tolist()
        assert sorted(j.instances.tolist()) == sorted(ids)
        where = {i: k for k, i in enumerate(j.instances.tolist())}
        order = [where[i] for i in ids]
        assert np.array_equal(j.present[:, order], m.present[:, seen])
        assert j.values[:, order][m.present[:, seen]].tolist() == \
            m.values[:, seen][m.present[:, seen]].tolist()
        assert [j.instance_names[k] for k in order] == [m.instance_names[k] for k in seen]
    # with drop_unknown they are left out instead
    r = bulk.ArchiveReader(v2, ["sample.bin"])
    r._metrics[0].insts, r._metrics[0].inames = [100, 300], ["bin-100", "bin-300"]
    parts = list(r.chunks(drop_unknown=True))
    assert all(p["sample.bin"].shape[1] == 2 for p in parts)


@pytest.mark.parametrize("variant", ["v2", "mv"])
def test_counts_and_string_bytes(variant, monkeypatch):
    monkeypatch.setattr(scan, "STAGED_START", 64)
    for chunk in bulk.ArchiveReader(corpus(variant), chunk_bytes=1 << 16):
        for m in chunk.values():
            assert m.count == int(np.count_nonzero(m.present)), m.name
            if m.blobs is not None:
                assert m.blobs.nbytes == int(m.blobs.lengths().sum()), m.name
                raw = [len(v.encode()) if isinstance(v, str) else len(v)
                       for v in m.values[m.present]]
                if m.type == 7:
                    assert m.blobs.nbytes == sum(raw)


def test_string_staging_grows(v2, monkeypatch):
    whole = bulk.read_archive(v2, ["sample.string", "kernel.uname", "sample.aggregate"])
    monkeypatch.setattr(scan, "STAGED_START", 4)
    small = bulk.read_archive(v2, ["sample.string", "kernel.uname", "sample.aggregate"])
    for name, m in whole.items():
        assert small[name].values.tolist() == m.values.tolist()


def test_counts_survive_records_read_again(v2, monkeypatch):
    """A record read again (its strings did not fit, or it named an instance without a
    column) counts its values, bytes and dropped values once."""
    names = ["sample.string.bin", "sample.bin"]
    whole = bulk.read_archive(v2, names)
    keep = {m.name: m.instances[:2].tolist() for m in whole.values()}
    want_dropped = sum(int(m.present[:, 2:].sum()) for m in whole.values())
    want_values = sum(int(m.present[:, :2].sum()) for m in whole.values())
    assert want_dropped > 0 and want_values > 0
    monkeypatch.setattr(scan, "STAGED_START", 4)      # every string record asks for room
    for miss_cap in (4096, 1):                      # columns added one at a time
        monkeypatch.setattr(scan, "MISS_CAP", miss_cap)
        r = bulk.ArchiveReader(v2, names, chunk_rows=3)
        for m in r._metrics:
            inames = dict(zip(m.insts, m.inames))
            m.insts = keep[m.names[0]]
            m.inames = [inames[i] for i in m.insts]
        parts = list(r.chunks(drop_unknown=True))
        assert r.stats["dropped"] == want_dropped
        assert r.stats["values"] == want_values
        assert sum(p[n].count for p in parts for n in names) == want_values
        strings = [p["sample.string.bin"] for p in parts]
        assert sum(s.blobs.nbytes for s in strings) == \
            sum(len(v.encode()) for s in strings for v in s.values[s.present])


def test_arrays_kept_from_a_chunk_are_not_reused(v2):
    """Chunk memory is recycled only when nothing refers to it: a slice, a values array
    or a string column kept from an early chunk outlives the chunks after it."""
    r = bulk.ArchiveReader(v2, ["sample.bin", "sample.string.hullo"], chunk_rows=3)
    it = iter(r)
    first = next(it)
    kept_values = first["sample.bin"].values[:, 2]
    kept_present = first["sample.bin"].present
    kept_blobs = first["sample.string.hullo"].blobs
    want = (kept_values.copy(), kept_present.copy(), kept_blobs.objects().tolist())
    del first
    for chunk in it:
        del chunk
    assert np.array_equal(kept_values, want[0])
    assert np.array_equal(kept_present, want[1])
    assert kept_blobs.objects().tolist() == want[2]


def test_chunk_memory_is_recycled(v2):
    """A consumer that keeps only the chunk in hand gets the memory of the chunk before
    it back for the next one (two allocations in turn, not one per chunk), and the
    values read from recycled memory are those of a scan that keeps every chunk."""
    names = ["sample.bin", "sample.string.hullo"]
    addresses = []
    sums = []
    for chunk in bulk.ArchiveReader(v2, names, chunk_rows=3):
        addresses.append(chunk["sample.bin"].present.__array_interface__["data"][0])
        sums.append((int(chunk["sample.bin"].values.sum()),
                     chunk["sample.string.hullo"].values.tolist()))
    assert len(addresses) >= 6
    assert len(set(addresses)) == 2, addresses
    kept = list(bulk.ArchiveReader(v2, names, chunk_rows=3))
    assert len({c["sample.bin"].present.__array_interface__["data"][0] for c in kept}) \
        == len(kept)
    assert sums == [(int(c["sample.bin"].values.sum()), c["sample.string.hullo"].values.tolist())
                    for c in kept]


def test_interleaved_scans_of_one_reader(v2):
    names = ["sample.bin", "sample.proc.exec", "sample.string.bin"]
    r = bulk.ArchiveReader(v2, names, chunk_rows=2)
    for m in r._metrics:          # every instance is found during the scans
        m.insts, m.inames = [], []
    a, b = iter(r), iter(r)
    got_a, got_b = [], []
    for x, y in zip(a, b):
        got_a.append(x)
        got_b.append(y)
    whole_a = bulk.ArchiveColumns.concat(got_a + list(a))
    whole_b = bulk.ArchiveColumns.concat(got_b + list(b))
    for name in names:
        assert whole_a[name].instances.tolist() == whole_b[name].instances.tolist()
        assert np.array_equal(whole_a[name].present, whole_b[name].present)
        assert whole_a[name].values.tolist() == whole_b[name].values.tolist()


# ---- damaged records ----------------------------------------------------------------------


def _damaged(tmp_path):
    base = archives.copy_archive(corpus("small"), str(tmp_path), "dmg")
    recs = archives.records(base + ".0")
    off, length = recs[len(recs) // 2]
    archives.patch(base + ".0", off + length - 4, b"\x00\x00\x00\x09")   # trailer
    return base, len(recs), recs[len(recs) // 2]


def test_errors_policy(tmp_path):
    base, nrec, _ = _damaged(tmp_path)
    good = []
    with pytest.raises(pmErr) as e:
        for chunk in bulk.ArchiveReader(base, chunk_rows=1000):
            good.append(chunk)
    assert e.value.args[0] == -12373
    before = sum(len(c) for c in good)
    assert before > 0
    stop = bulk.ArchiveReader(base, errors="stop").read()
    assert len(stop) == before
    skip = bulk.ArchiveReader(base, errors="skip").read()
    assert len(skip) > before
    with pytest.raises(ValueError):
        bulk.ArchiveReader(base, errors="ignore")


# ---- progress ---------------------------------------------------------------------------


def test_progress_bar(v2, capsys):
    pytest.importorskip("tqdm")
    cols = bulk.read_archive(v2, ["sample.bin"], progress=True)
    assert len(cols) > 0
    err = capsys.readouterr().err
    assert "archive" in err or "B/s" in err or err == ""
    # off when stderr is not a terminal (pytest captures it)
    assert scan.progress_bar(None, None, 0) is None


# ---- memory -----------------------------------------------------------------------------

MEMORY_SCRIPT = textwrap.dedent(r'''
    import json, sys
    from pcp import bulk

    def status():
        out = {}
        with open("/proc/self/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM"):
                    out[k] = int(v.split()[0])
        return out

    res = {}
    for name in sys.argv[1:]:
        reader = bulk.ArchiveReader(name, chunk_bytes=2 << 20)
        base = status()["VmRSS"]
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        rows = 0
        for chunk in reader:
            rows += len(chunk)
        res[name] = {"rows": rows, "growth_kb": status()["VmHWM"] - base}
    print(json.dumps(res))
''')


@pytest.mark.skipif(bool(os.environ.get("PCP_TEST_ASAN_PRELOAD")),
                    reason="resident memory means nothing under AddressSanitizer")
def test_memory_stays_flat(tmp_path):
    sys.path.insert(0, BENCH)
    try:
        import make_big_archive as mba
    finally:
        sys.path.remove(BENCH)
    src = archives.copy_archive(corpus("v2"), str(tmp_path / "src"), "src",
                                skip=(".index",))
    small = os.path.join(tmp_path, "small")
    big = os.path.join(tmp_path, "big")
    os.makedirs(small)
    os.makedirs(big)
    ms = mba.generate(os.path.join(small, "a"), src, 2, 6 << 20, 256 << 20, 1 << 20)
    mb = mba.generate(os.path.join(big, "a"), src, 2, 60 << 20, 16 << 20, 1 << 20)
    proc = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, ms["base"], mb["base"]],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    import json
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    s, b = res[ms["base"]], res[mb["base"]]
    assert b["rows"] > 8 * s["rows"]
    # ten times the data, the same memory (chunks of 2 MB, pages released every 8 MB)
    assert b["growth_kb"] < 40 << 10, res
    assert b["growth_kb"] - s["growth_kb"] < 8 << 10, res
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_a_missing_archive_is_named_in_the_error(tmp_path):
    from pcp import bulk
    missing = str(tmp_path / "no-such-archive")
    for read in (lambda: bulk.read_archive(missing), lambda: list(bulk.scan_archive(missing))):
        with pytest.raises(pmErr) as info:
            read()
        assert info.value.args[0] == -2 and missing in str(info.value)
