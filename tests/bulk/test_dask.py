"""pcp.dask.read_archives on a local dask.distributed cluster: partitions per archive and
per volume, divisions from the archive labels, column projection down to the reader,
and the same rows as pcp.bulk reading each archive by itself."""

import os

import pytest

from support import archives
from support.daskcluster import local_client

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")

from pcp import bulk  # noqa: E402
from pcp._bulk import columns as C  # noqa: E402
from pcp import dask as pcpdask  # noqa: E402

pytestmark = pytest.mark.pmcd

METRICS = ["sample.bin", "sample.long.one", "sample.string.hullo", "sample.double.bin_ctr"]


@pytest.fixture(scope="module")
def client():
    with local_client(processes=False, threads=2) as c:
        yield c


def corpus(name):
    return archives.get_corpus()[name]


def long_rows(df):
    """Comparable rows of a long frame (time index or column)."""
    df = df.reset_index() if "time" not in df.columns else df
    out = []
    for t, host, metric, inst, value, text in zip(
            df["time"].astype("int64"), df["host"], df["metric"], df["instance"],
            df["value"], df["text"]):
        inst = None if pd.isna(inst) else str(inst)
        text = None if pd.isna(text) else str(text)
        value = None if pd.isna(value) else float(value)
        out.append((int(t), str(host), str(metric), inst, value, text))
    return sorted(out, key=repr)


def bulk_rows(name, metrics, host, **kw):
    df = bulk.read_archive(name, metrics, **kw).to_pandas("long")
    df["host"] = host
    if "text" not in df.columns:
        df["text"] = None
    df["metric"] = df["metric"].astype(object)
    df["instance"] = df["instance"].astype(object)
    return long_rows(df)


def test_long_form_is_every_archive_read_by_bulk(client):
    names = [corpus("v2"), corpus("next")]
    ddf = pcpdask.read_archives(names, METRICS)
    assert ddf.npartitions == 2
    assert list(ddf.columns) == ["host", "metric", "instance", "value", "text"]
    got = long_rows(ddf.compute())
    want = []
    for n in names:
        want += bulk_rows(n, METRICS, _host(n))
    assert got == sorted(want, key=repr)


def _host(name):
    from pcp._archive.reader import Archive
    a = Archive(name, 0)
    a.open()
    try:
        return a.label.hostname.decode()
    finally:
        a.close()


def test_divisions_from_labels(client):
    names = [corpus("next"), corpus("v2")]          # given out of order
    parts, div = pcpdask.archive_partitions(names)
    assert [p[0] for p in parts] == [corpus("v2"), corpus("next")]
    from pcp._archive.reader import Archive
    starts = []
    for n in (corpus("v2"), corpus("next")):
        a = Archive(n, 0)
        a.open()
        starts.append(a.label.stamp[0] * 10**9 + a.label.stamp[1])
        a.close()
    assert div[:2] == starts
    ddf = pcpdask.read_archives(names, ["sample.long.one"])
    assert ddf.known_divisions
    # per partition, the index is sorted and inside its division
    df0 = ddf.get_partition(0).compute()
    assert df0.index.is_monotonic_increasing
    assert df0.index.min() >= ddf.divisions[0] and df0.index.max() < ddf.divisions[1]
    # a time lookup uses the divisions
    t = df0.index[3]
    assert len(ddf.loc[t].compute()) >= 1


def test_fleet_with_overlapping_archives_has_unknown_divisions(client):
    names = [corpus("v2"), corpus("next"), corpus("otherhost")]
    ddf = pcpdask.read_archives(names, ["sample.long.one", "sample.bin"])
    assert ddf.npartitions == 3
    assert not ddf.known_divisions
    df = ddf.compute()
    assert set(df.host) == {_host(n) for n in names}
    per_host = df.groupby("host").size()
    assert len(per_host) == 2 and (per_host > 0).all()


def test_wide_form_and_column_projection(client, monkeypatch):
    names = [corpus("v2"), corpus("next")]
    asked = []
    orig = C.ArchiveReader.__init__

    def init(self, archives_, metrics=None, *a, **k):
        asked.append(metrics)
        return orig(self, archives_, metrics, *a, **k)

    ddf = pcpdask.read_archives(names, METRICS, form="wide")
    assert "sample.bin[bin-300]" in ddf.columns and "host" in ddf.columns
    whole = ddf.compute()
    want = pd.concat([bulk.read_archive(n, METRICS).to_pandas() for n in names])
    assert len(whole) == len(want)
    col = "sample.bin[bin-300]"
    assert whole[col].dropna().astype(int).tolist() == want[col].dropna().astype(int).tolist()
    monkeypatch.setattr(C.ArchiveReader, "__init__", init)
    sub = ddf[["sample.long.one"]].compute()
    assert list(sub.columns) == ["sample.long.one"]
    assert asked and all(m == ["sample.long.one"] for m in asked)
    assert sub["sample.long.one"].dropna().tolist() == want["sample.long.one"].dropna().tolist()


def test_a_partition_per_volume(client):
    name = corpus("mv")
    parts, div = pcpdask.archive_partitions(name, split="volume")
    assert len(parts) == len(archives.get_corpus()["mv_volumes"]) and div is not None
    ddf = pcpdask.read_archives(name, ["sample.bin", "sample.long.one"], split="volume")
    assert ddf.npartitions == len(parts) and ddf.known_divisions
    got = long_rows(ddf.compute())
    assert got == bulk_rows(name, ["sample.bin", "sample.long.one"], _host(name))


def test_directory_glob_and_window(client):
    d = corpus("dir_pair")
    assert pcpdask.read_archives(d, ["sample.long.one"]).npartitions == 2
    pattern = os.path.join(d, "*.meta")
    assert pcpdask.read_archives(pattern, ["sample.long.one"]).npartitions == 2
    # a window inside the first archive leaves the second out
    parts, _ = pcpdask.archive_partitions(d)
    first = bulk.read_archive(parts[0][0], ["sample.long.one"])
    end = first.time[len(first) // 2]
    ddf = pcpdask.read_archives(d, ["sample.long.one"], end=end)
    assert ddf.npartitions == 1
    df = ddf.compute()
    assert df.index.max() <= pd.Timestamp(end, tz="UTC") and len(df) == len(first) // 2 + 1


@pytest.mark.parametrize("rate", [False, True])
def test_grid_partitions_per_archive_and_per_volume(client, rate):
    """interval=: each archive's grid; split by volume, the volumes' time ranges of the
    grid, which together are the whole grid read at once (rates and counters after
    <mark>s included)."""
    name = corpus("mv")
    metrics = ["sample.bin", "sample.long.one", "sample.long.bin_ctr", "sample.seconds"]
    want = bulk_rows(name, metrics, _host(name), interval=0.15, rate=rate)
    assert want
    whole = pcpdask.read_archives(name, metrics, interval=0.15, rate=rate)
    assert long_rows(whole.compute()) == want
    parts = pcpdask.read_archives(name, metrics, interval=0.15, rate=rate, split="volume")
    assert parts.npartitions > 1
    assert long_rows(parts.compute()) == want
    wide = pcpdask.read_archives(name, metrics, interval="150msec", form="wide").compute()
    assert len(wide) == len(bulk.read_archive(name, metrics, interval=0.15))
