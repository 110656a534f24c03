"""Collections that are not uniform: a fleet's archives never all carry the same metrics
and some are damaged. pcp.dask.read_archives (on a LocalCluster with worker processes)
and pcp.bulk over several archives: an archive lacking a metric gives no rows for it, a
damaged one what `errors` chooses, what was left out is said (a MissingMetricsWarning
and the frame's attrs), and the strict mode (missing="raise") raises."""
from __future__ import annotations

import os
import warnings

import pytest

from support import archives
from support.cliutil import need_qa_archive
from support.daskcluster import local_client

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")

from pcp import bulk  # noqa: E402
from pcp import dask as pcpdask  # noqa: E402
from pcp._core.errors import pmErr  # noqa: E402
import cpmapi as c_api  # noqa: E402

METRICS = ["kernel.all.load", "mem.util.used"]


@pytest.fixture(scope="module")
def client():
    with local_client(processes=True, threads=1) as c:      # as the issue ran it
        yield c


@pytest.fixture(scope="module")
def fleet():
    """Three QA archives of three hosts: naslog lacks mem.util.used, pcp-pidstat lacks
    both metrics, 20130706 has both."""
    return {name: need_qa_archive(name) for name in ("naslog", "pcp-pidstat", "20130706")}


def _recorded(call):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = call()
    said = [str(w.message) for w in seen if issubclass(w.category, bulk.MissingMetricsWarning)]
    return result, said


@pytest.mark.parametrize("form", ["long", "wide"])
def test_a_fleet_whose_archives_lack_metrics_reads_what_each_has(client, fleet, form):
    ddf, said = _recorded(lambda: pcpdask.read_archives(list(fleet.values()), METRICS,
                                                        form=form))
    lacking = {fleet["naslog"]: ["mem.util.used"],
               fleet["pcp-pidstat"]: ["kernel.all.load", "mem.util.used"]}
    assert len(said) == 1
    assert all(name in said[0] for name in lacking)
    df = ddf.compute()
    assert df.attrs["pcp_missing"] == lacking
    # every archive's rows are what bulk reads of it alone
    for name, path in fleet.items():
        have = [m for m in METRICS if m not in lacking.get(path, [])]
        host = pmdumplog_host(path)
        mine = df[df["host"] == host]
        if not have:
            assert mine.empty
            continue
        alone = bulk.read_archive(path, have).to_pandas(form)
        if form == "long":
            assert sorted(mine["metric"].unique()) == sorted(have)
            assert len(mine) == len(alone)
        else:
            assert len(mine) == len(alone)
            assert mine[list(alone.columns)].notna().sum().tolist() == \
                alone.notna().sum().tolist()


def pmdumplog_host(path):
    from pcp import pmapi

    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, path)
    return ctx.pmGetArchiveLabel().get_hostname()


def test_the_strict_mode_raises_before_computing(fleet):
    with pytest.raises(pmErr) as e:
        pcpdask.read_archives(list(fleet.values()), METRICS, missing="raise")
    assert e.value.args[0] == c_api.PM_ERR_NAME
    assert fleet["pcp-pidstat"] in str(e.value) and "kernel.all.load" in str(e.value)


def test_damaged_archives_are_what_errors_chooses(client, fleet, tmp_path):
    cut = archives.copy_archive(fleet["naslog"], str(tmp_path), "cut")
    recs = archives.records(cut + ".0")
    archives.truncate(cut + ".0", recs[len(recs) // 2][0] + 6)          # a record cut
    junk = str(tmp_path / "junk")
    for suffix in (".0", ".meta", ".index"):
        with open(junk + suffix, "wb") as f:
            f.write(os.urandom(300))
    paths = [fleet["20130706"], cut, junk]
    with pytest.raises(pmErr):                                   # strict: the first error
        pcpdask.read_archives(paths, ["kernel.all.load"]).compute()
    ddf, said = _recorded(lambda: pcpdask.read_archives(paths, ["kernel.all.load"],
                                                        errors="skip"))
    assert len(said) == 1 and junk in said[0]
    df = ddf.compute()
    assert list(df.attrs["pcp_unreadable"]) == [junk]
    whole = bulk.read_archive(fleet["naslog"], ["kernel.all.load"])
    cut_rows = df[df["host"] == "snort"]
    assert 0 < len(cut_rows) < 3 * len(whole)           # up to the cut, and on past it
    assert (df["host"] == pmdumplog_host(fleet["20130706"])).any()


def test_bulk_over_several_archives_skips_a_metric_none_holds():
    """A list of one host's archives (libpcp's multi-archive context: kenj-pc-2 lacks
    hinv.ncpu, which kenj-pc-1 has): a metric one of them lacks gives no rows there;
    one that none holds is left out with a warning and the frame's attrs (strictly:
    PM_ERR_NAME, as for one archive)."""
    both = [need_qa_archive("kenj-pc-1"), need_qa_archive("kenj-pc-2")]
    wanted = ["hinv.ncpu", "no.such.metric"]
    cols, said = _recorded(lambda: bulk.read_archive(both, wanted))
    assert len(said) == 1 and "no.such.metric" in said[0]
    assert list(cols.keys()) == ["hinv.ncpu"]
    alone = bulk.read_archive(both[0], ["hinv.ncpu"])
    assert cols["hinv.ncpu"].present.sum() == alone["hinv.ncpu"].present.sum() > 0
    frame = cols.to_pandas()
    assert frame.attrs["pcp_missing"] == {",".join(both): ["no.such.metric"]}
    with pytest.raises(pmErr) as e:
        bulk.read_archive(both, wanted, missing="raise")
    assert e.value.args[0] == c_api.PM_ERR_NAME
    with pytest.raises(pmErr):                  # one archive: an unknown name is an error
        bulk.read_archive(both[1], ["hinv.ncpu"])
