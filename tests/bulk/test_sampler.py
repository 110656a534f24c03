"""pcp.sampler.Sampler: ring buffers, counter rates (exact against the archive's raw
values), instances that come and go, the fixed schedule, the background thread, and
errors carried over a lost connection."""
from __future__ import annotations

import time

import numpy as np
import pytest

import cpmapi as c_api
from pcp import pmapi
from pcp._bulk.export import pandas_tz
from pcp.sampler import Sampler

from support.cliutil import DEMO_ARCHIVE
from support import fakepmcd


def _archive():
    return pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, DEMO_ARCHIVE)


def _records(path, names):
    """Every record holding any of the metrics, the drop-in way: [(t, {name: {inst: v}})]."""
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, path)
    pmids = ctx.pmLookupName(names)
    descs = ctx.pmLookupDescs(pmids)
    out = []
    while True:
        try:
            r = ctx.pmFetch(pmids).contents
        except pmapi.pmErr as e:
            assert e.args[0] == c_api.PM_ERR_EOL
            return out
        row = {}
        for i in range(r.numpmid):
            name = names[list(pmids).index(r.get_pmid(i))]
            d = descs[list(pmids).index(r.get_pmid(i))].contents
            vals = {}
            for j in range(r.get_numval(i)):
                atom = ctx.pmExtractValue(r.get_valfmt(i), r.get_vlist(i, j), d.type, d.type)
                vals[r.get_inst(i, j)] = atom.dref(d.type)
            row[name] = vals
        out.append((r, row))


def test_archive_replay_rates_are_exact():
    names = ["kernel.all.cpu.user", "sample.milliseconds", "network.interface.in.bytes",
             "kernel.percpu.cpu.user", "kernel.all.load", "kernel.uname.release"]
    s = Sampler(_archive(), names, capacity=100)
    n = s.run()
    recs = _records(DEMO_ARCHIVE, names)
    assert n == len(recs) == s.count == s.held
    times = s.times
    for k, (r, row) in enumerate(recs):
        ts = r._r.sec + r._r.nsec * 1e-9
        assert times[k] == ts
    for name in names:
        buf = s[name]
        vals = buf.values
        assert vals.shape == (n, len(buf.inst_ids))
        last = {}
        for k, (r, row) in enumerate(recs):
            ts = r._r.sec + r._r.nsec * 1e-9
            got = dict(zip(buf.inst_ids, vals[k].tolist()))
            for inst, v in row.get(name, {}).items():
                if name == "kernel.uname.release":
                    assert got[inst] == v
                elif buf.rate:
                    if inst in last:
                        v0, t0 = last[inst]
                        assert got[inst] == pytest.approx((v - v0) / (ts - t0), rel=1e-12)
                    else:
                        assert np.isnan(got[inst])
                    last[inst] = (v, ts)
                else:
                    assert got[inst] == pytest.approx(v, rel=1e-6)
            for inst in set(buf.inst_ids) - set(row.get(name, {})):
                assert got[inst] is None or got[inst] != got[inst]    # NaN / None: absent
    assert s["kernel.all.cpu.user"].rate and not s["kernel.all.load"].rate
    assert s["kernel.all.load"].instances == ["1 minute", "5 minute", "15 minute"]
    assert s["kernel.all.cpu.user"].instances == [None]


def test_raw_counters_when_rates_off():
    s = Sampler(_archive(), ["kernel.all.cpu.user"], rates=False)
    s.run()
    recs = _records(DEMO_ARCHIVE, ["kernel.all.cpu.user"])
    assert s["kernel.all.cpu.user"].values[:, 0].tolist() == [
        float(row["kernel.all.cpu.user"][-1]) for _, row in recs]


def test_ring_keeps_the_newest_samples_in_order():
    full = Sampler(_archive(), ["sample.colour", "sample.seconds"], capacity=100)
    full.run()
    ring = Sampler(_archive(), ["sample.colour", "sample.seconds"], capacity=4)
    ring.run()
    assert ring.count == full.count > 4 and ring.held == 4
    np.testing.assert_array_equal(ring.times, full.times[-4:])
    np.testing.assert_array_equal(ring["sample.colour"].values, full["sample.colour"].values[-4:])
    np.testing.assert_array_equal(ring["sample.seconds"].values, full["sample.seconds"].values[-4:])
    latest = ring["sample.colour"].latest()
    assert set(latest) == {"red", "green", "blue"}
    assert list(latest.values()) == full["sample.colour"].values[-1].tolist()


def test_to_pandas_holds_the_rings_by_time_and_column():
    pd = pytest.importorskip("pandas")
    s = Sampler(_archive(), ["sample.colour", "sample.seconds", "kernel.all.load"], capacity=6)
    s.run()
    df = s.to_pandas()
    label = s.ctx.pmGetHighResArchiveLabel()          # the index is in the archive's zone
    assert df.index.tz == pandas_tz(label.get_timezone(), label.get_zoneinfo())
    assert df.index.name == "time" and len(df) == s.held == 6
    np.testing.assert_array_equal(df.index.asi8, np.round(s.times * 1e9).astype(np.int64))
    colour = s["sample.colour"]
    for k, inst in enumerate(colour.instances):
        np.testing.assert_array_equal(df["sample.colour[%s]" % inst].to_numpy(),
                                      colour.values[:, k])
    np.testing.assert_array_equal(df["sample.seconds"].to_numpy(), s["sample.seconds"].values[:, 0])
    assert [c for c in df.columns if c.startswith("kernel.all.load[")] == \
        ["kernel.all.load[%s]" % n for n in s["kernel.all.load"].instances]
    assert isinstance(df, pd.DataFrame)


@pytest.mark.pmcd
def test_changing_instances_widen_the_ring():
    from support import archives

    path = archives.get_corpus()["v2"]
    names = ["sample.many.int", "sample.proc.ordinal"]
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, path)
    s = Sampler(ctx, names, capacity=1000)
    n = s.run()
    recs = _records(path, names)
    assert n == len(recs)
    for name in names:
        buf = s[name]
        seen = set()
        for k, (_, row) in enumerate(recs):
            got = dict(zip(buf.inst_ids, buf.values[k].tolist()))
            for inst, v in row.get(name, {}).items():
                assert got[inst] == v
                seen.add(inst)
            assert sum(1 for x in got.values() if x == x) == len(row.get(name, {}))
        assert set(buf.inst_ids) == seen
    assert len(s["sample.proc.ordinal"].inst_ids) > 3


@pytest.mark.pmcd
def test_unsupported_types_are_refused():
    for name in ("sample.aggregate.hullo", "sample.event.records"):
        with pytest.raises(TypeError, match=name):
            Sampler("local:", ["sample.long.one", name])


def test_bad_arguments_are_refused():
    with pytest.raises(pmapi.pmErr):
        Sampler(_archive(), ["no.such.metric"])
    with pytest.raises(ValueError):
        Sampler(_archive(), ["sample.seconds"], capacity=0)


# ---- live ------------------------------------------------------------------------------

@pytest.mark.pmcd
def test_live_schedule_rates_and_units():
    s = Sampler("local:", ["sample.milliseconds", "sample.long.one", "kernel.all.load",
                           "sample.string.hullo"], interval=0.1, capacity=50)
    t0 = time.monotonic()
    assert s.run(count=6) == 6
    elapsed = time.monotonic() - t0
    assert 0.45 < elapsed < 2.0
    gaps = np.diff(s.times)
    assert np.all(gaps > 0.05) and np.all(gaps < 0.6)
    ms = s["sample.milliseconds"].values[:, 0]
    assert np.isnan(ms[0])
    assert np.all(np.abs(ms[1:] - 1000.0) < 50.0)       # milliseconds per second
    assert s["sample.long.one"].values[:, 0].tolist() == [1.0] * 6
    assert s["sample.string.hullo"].values[:, 0].tolist() == ["hullo world!"] * 6
    assert s["kernel.all.load"].values.shape == (6, 3)
    s.close()


@pytest.mark.pmcd
def test_live_background_thread_and_missed_ticks():
    s = Sampler("local:", ["sample.seconds", "sample.colour"], interval=0.05, capacity=8)
    s.start()
    deadline = time.monotonic() + 5
    while s.count < 12 and time.monotonic() < deadline:
        v = s["sample.colour"].values                   # reads while the thread writes
        assert v.shape[0] == s.held or v.shape[0] <= 8
        time.sleep(0.01)
    s.stop()
    assert s.count >= 12 and s.held == 8
    assert np.all(np.diff(s.times) > 0)

    slow = Sampler("local:", ["sample.seconds"], interval=0.05, capacity=8)
    real = slow.sample

    def late():
        time.sleep(0.12)
        return real()

    slow.sample = late
    slow.run(count=3)
    assert slow.missed >= 4
    s.close()
    slow.close()


def test_errors_reach_on_error_and_sampling_goes_on():
    # the fake pmcd drops the connection on the 2nd fetch; the sampler reconnects
    script = {fakepmcd.FETCH_ANY: [None, fakepmcd.CLOSE]}
    with fakepmcd.FakePmcd(scripts=[script]) as fake:
        s = Sampler(fake.spec, ["fake.alpha"], interval=0.01, capacity=10)
        seen = []
        taken = s.run(count=4, duration=5, on_error=seen.append)
        assert taken == 4
        assert len(seen) == 1 and seen[0].args[0] == c_api.PM_ERR_IPC
        assert s["fake.alpha"].values[:, 0].tolist() == [42.0] * 4
        assert fake.connections == 2
        with pytest.raises(pmapi.pmErr):
            s2 = Sampler(fake.spec, ["fake.alpha"])
            fake.scripts.append({fakepmcd.FETCH_ANY: [fakepmcd.CLOSE]})
            s2.ctx._host.close()                        # a dead connection, no on_error
            s2.run(count=1)
        s.close()
