"""pcp.fleet: many concurrent connections to the local pmcd polled together, with
unreachable, silent and misbehaving hosts in the same batch: their errors are
reported per host, bounded by the timeouts, and never disturb the other hosts."""
from __future__ import annotations

import os
import socket
import subprocess
import time

import numpy as np
import pytest

import cpmapi as c_api
from pcp import pmapi
from pcp.fleet import Fleet, fetch_many
from support import difftest

from support import fakepmcd

METRICS = ["sample.long.one", "kernel.all.load", "hinv.ncpu", "sample.string.hullo",
           "pmcd.numclients", "sample.ulonglong.million"]
LOCAL = int(os.environ.get("PCP_TEST_FLEET_SIZE", "160"))


def _pminfo_value(name):
    out = subprocess.run(["pminfo", "-f", name], capture_output=True, text=True).stdout
    return out.split("value ")[1].strip()


class _Blackhole:
    """A listening socket whose backlog is full: connects to it hang (SYNs dropped)."""

    def __enter__(self):
        self.s = socket.socket()
        self.s.bind(("127.0.0.1", 0))
        self.s.listen(0)
        self.port = self.s.getsockname()[1]
        self.fill = []
        for _ in range(4):
            c = socket.socket()
            c.setblocking(False)
            c.connect_ex(("127.0.0.1", self.port))
            self.fill.append(c)
        time.sleep(0.05)
        return "127.0.0.1:%d" % self.port

    def __exit__(self, *exc):
        for c in self.fill:
            c.close()
        self.s.close()


@pytest.mark.pmcd
def test_many_concurrent_contexts_with_failures_per_host():
    # a pmcd that never greets, one that never answers fetches, a refused port and a
    # host whose connect hangs, among LOCAL connections to the real pmcd (unix and TCP)
    silent = fakepmcd.FakePmcd(greeting_pdu=b"", lifetime=60)
    mute = fakepmcd.FakePmcd(scripts=[{fakepmcd.FETCH_ANY: [fakepmcd.NO_REPLY]}] * 5,
                             lifetime=60)
    with silent, mute, _Blackhole() as hole:
        local = ["local:" if i % 2 else "localhost" for i in range(LOCAL)]
        bad = [silent.spec, "127.0.0.1:1", hole, mute.spec]
        hosts = local[:LOCAL // 2] + bad + local[LOCAL // 2:]
        t0 = time.monotonic()
        fleet = Fleet(hosts, METRICS, connect_timeout=1.0, timeout=1.0, workers=8)
        connect_time = time.monotonic() - t0
        try:
            assert fleet.connected == LOCAL + 1          # the mute fake accepted the lookups
            res = fleet.fetch()
            assert res.elapsed < 3.0
            assert len(res) == len(hosts)
            by_host = {r.index: r for r in res}
            for i, h in enumerate(hosts):
                assert by_host[i].host == h
            failed = {r.host: (r.stage, r.error.code) for r in res.failed}
            silent_code = failed.get(silent.spec, (None, None))[1]
            assert silent_code in (c_api.PM_ERR_TIMEOUT, c_api.PM_ERR_IPC)
            assert failed == {
                silent.spec: ("connect", silent_code),
                "127.0.0.1:1": ("connect", -111),
                hole: ("connect", -110),
                mute.spec: ("fetch", c_api.PM_ERR_TIMEOUT),
            }
            ok = res.ok
            assert len(ok) == LOCAL
            ncpu = int(_pminfo_value("hinv.ncpu"))
            for r in ok:
                assert r.value("sample.long.one") == 1
                assert r.value("hinv.ncpu") == ncpu
                assert r.value("sample.ulonglong.million") == 1000000
                assert r.values("sample.string.hullo")[1] == ["hullo world!"]
                inst, load = r.values("kernel.all.load")
                assert inst.tolist() == [1, 5, 15] and load.dtype == np.float32
                assert r.latency < res.elapsed and r.time > 1e9
            # every connection is a pmcd client at once
            assert res.column("pmcd.numclients")[np.isfinite(res.column("pmcd.numclients"))].min() >= LOCAL
            col = res.column("sample.long.one")
            assert np.isnan(col[LOCAL // 2:LOCAL // 2 + 4]).all()
            assert (col[:LOCAL // 2] == 1).all()
            # polls go on; the failed hosts stay failed (the mute one is reconnected at
            # once and times out again), the others keep answering
            deadline = time.monotonic() + 5
            while fleet.connected < LOCAL + 1 and time.monotonic() < deadline:
                time.sleep(0.01)
            again = fleet.fetch()
            assert len(again.ok) == LOCAL
            assert again[LOCAL // 2 + 3].error.code == c_api.PM_ERR_TIMEOUT
            assert all(b.time >= a.time for a, b in zip(res.ok, again.ok))
        finally:
            fleet.close()
        assert connect_time < 5.0


@pytest.mark.pmcd
def test_fetch_many_one_shot_and_unknown_metrics():
    res = fetch_many(["local:", "localhost", "127.0.0.1:1"],
                     ["sample.long.one", "no.such.metric", "sample.colour"], timeout=2)
    assert [r.ok for r in res] == [True, True, False]
    r = res[0]
    assert r.value("sample.long.one") == 1
    assert r.numval("no.such.metric") == c_api.PM_ERR_NAME
    with pytest.raises(pmapi.pmErr):
        r.values("no.such.metric")
    with pytest.raises(KeyError):
        r.values("not.asked.for")
    inst, vals = r.values("sample.colour")
    assert inst.tolist() == [0, 1, 2] and vals.dtype == np.int32
    assert res.errors() == {"127.0.0.1:1": res[2].error}
    with pytest.raises(pmapi.pmErr):
        res[2].values("sample.long.one")
    only_bad = fetch_many(["local:"], ["no.such.metric"])
    assert only_bad[0].stage == "lookup" and only_bad[0].error.code == c_api.PM_ERR_NAME


def test_reconnects_a_host_that_went_away():
    script = {fakepmcd.FETCH_ANY: [None, fakepmcd.CLOSE]}
    with fakepmcd.FakePmcd(scripts=[script]) as fake, fakepmcd.FakePmcd() as good:
        with Fleet([fake.spec, good.spec], ["fake.alpha"], timeout=2, retry=0) as fleet:
            first = fleet.fetch()
            assert [r.ok for r in first] == [True, True]
            assert first[0].value("fake.alpha") == 42
            second = fleet.fetch()                      # the fake hangs up
            assert [r.ok for r in second] == [False, True]
            assert second[0].stage == "fetch" and second[0].error.code == c_api.PM_ERR_IPC
            deadline = time.monotonic() + 5
            while fleet.connected < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
            third = fleet.fetch()
            assert [r.ok for r in third] == [True, True]
            assert fake.connections == 2


def test_timeouts_are_per_host():
    mute = {fakepmcd.FETCH_ANY: [fakepmcd.NO_REPLY]}
    with fakepmcd.FakePmcd(scripts=[mute], lifetime=20) as slow, \
            fakepmcd.FakePmcd() as fast:
        with Fleet([slow.spec, fast.spec], ["fake.alpha"], timeout=0.5, retry=60) as fleet:
            t0 = time.monotonic()
            res = fleet.fetch()
            took = time.monotonic() - t0
            assert 0.4 < took < 2.0
            assert res[0].error.code == c_api.PM_ERR_TIMEOUT and res[1].ok
            res = fleet.fetch()                       # no reconnection yet (retry=60)
            assert res[0].stage == "fetch" and not res[0].ok and res[1].ok
            assert res.elapsed < 0.4


def test_connect_timeout_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("PMCD_CONNECT_TIMEOUT", "0.3")
    with _Blackhole() as hole:
        t0 = time.monotonic()
        res = fetch_many([hole], ["x.y"])
        assert time.monotonic() - t0 < 2.0
        assert res[0].error.code == -110 and res[0].stage == "connect"


def test_bad_host_spec_is_a_per_host_error():
    res = fetch_many(["pcp://[bad", "127.0.0.1:1"], ["x.y"])
    assert [r.stage for r in res] == ["connect", "connect"]


FLEET_DERIVED = r'''
import json, os, sys, time
os.environ["PCP_DERIVED_CONFIG"] = ""
import numpy as np
import cpmapi as c_api
from pcp import pmapi
from pcp.fleet import Fleet
ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, "local:")
exprs = {"dfleet.lin": "sample.long.ten * 2 + sample.long.one",
         "dfleet.bin": "matchinst(/bin-[1-4]00/, sample.bin) * 3",
         "dfleet.sum": "sum(sample.bin)",
         "dfleet.rate": "rate(sample.milliseconds)",
         "dfleet.pick": "sample.long.one > 0 ? sample.bin : sample.bin + sample.bin"}
for name, expr in exprs.items():
    ctx.pmRegisterDerived(name, expr)
names = list(exprs) + ["sample.long.one"]
pmids = ctx.pmLookupName(names)
descs = ctx.pmLookupDescs(pmids)
def dropin():
    res = ctx.pmFetch(pmids)
    out = {}
    for i, name in enumerate(names):
        vals = []
        for j in range(max(res.contents.get_numval(i), 0)):
            t = descs[i].type
            v = ctx.pmExtractValue(res.contents.get_valfmt(i), res.contents.get_vlist(i, j),
                                   t, t).dref(t)
            vals.append([res.contents.get_inst(i, j), v])
        out[name] = sorted(vals)
    return out
want = dropin()
with Fleet(["local:", "local:"], names) as fleet:
    first = fleet.fetch()
    time.sleep(1.1)
    second = fleet.fetch()
def image(r):
    out = {}
    for name in names:
        if r.numval(name) <= 0:
            out[name] = r.numval(name)
            continue
        ids, vals = r.values(name)
        out[name] = sorted([int(i), v.item()] for i, v in zip(ids, vals))
    return out
print(json.dumps({"want": want, "first": [image(r) for r in first],
                  "second": [image(r) for r in second]}))
'''


@pytest.mark.pmcd
def test_derived_metrics_are_fetched_and_evaluated():
    """Derived metrics in a fleet: their operands fetched with them, each poll's result
    evaluated as the drop-in pmFetch evaluates it (rate() against the host's previous
    poll, none at the first)."""
    import json
    proc = difftest.run_script(FLEET_DERIVED, [], True, timeout=120)
    assert proc["status"] == 0, proc["stderr"]
    got = json.loads(proc["stdout"].strip().splitlines()[-1])
    want = got["want"]
    assert want["dfleet.lin"] == [[-1, 21]]
    assert [i for i, _ in want["dfleet.bin"]] == [100, 200, 300, 400]
    for poll in got["first"] + got["second"]:
        for name in ("dfleet.lin", "dfleet.bin", "dfleet.sum", "dfleet.pick",
                     "sample.long.one"):
            assert poll[name] == want[name], (name, poll[name], want[name])
    for poll in got["first"]:
        assert poll["dfleet.rate"] == 0           # no previous poll: no value
    for poll in got["second"]:
        [[inst, rate]] = poll["dfleet.rate"]
        assert inst == -1 and 0.5 < rate < 1.5      # milliseconds per millisecond
