"""Many-host polling: pcp.fleet against a sequential loop over the official binding.

One op is one poll of N contexts (PCP_BENCH_FLEET_HOSTS, default 100, each its own
connection) for a host-overview metric set (ref_fleet.METRICS, about a dozen values
from the linux PMDA); units are fetches/s (N per op). Every side gets every value out:
  ours       pcp.fleet.Fleet.fetch() + HostResult.values() of every metric (numpy);
  reference  the official binding, ref_fleet.py under /usr/bin/python3 -I: for each
             context pmFetch, pmExtractValue + dref of every value, pmFreeResult;
  (k', l')   ours through the drop-in pcp.pmapi, the same sequential loop as the
             reference (in the "ours" column of those rows).
Rows (k) talk to the local pmcd directly; rows (l) through delay_relay.py, which holds
every chunk 1 ms each way (a 2 ms round trip, like pmcds across a network). There is
no libpcp C side here.
Run: pytest benchmarks/test_bench_fleet.py -q --benchmark-only
"""

import os
import subprocess
import sys
import traceback

import pytest

import ref_fleet
import ref_live

ROUNDS = int(os.environ.get("PCP_BENCH_ROUNDS", "15"))
ROUND_SECONDS = float(os.environ.get("PCP_BENCH_ROUND_SECONDS", "0.2"))
HOST = os.environ.get("PCP_BENCH_HOST", "local:")
HOSTS = int(os.environ.get("PCP_BENCH_FLEET_HOSTS", "100"))
DELAY = float(os.environ.get("PCP_BENCH_FLEET_DELAY", "0.001"))
BENCH_DIR = os.path.dirname(os.path.abspath(__file__))

CASES = [
    {"bench": "fleet_local", "ours": "fleet", "relay": False,
     "title": "(k) many-host polling: %d contexts to the local pmcd, ours pcp.fleet vs "
              "official sequential loop" % HOSTS},
    {"bench": "fleet_local_dropin", "ours": "dropin", "relay": False,
     "title": "(k') as (k), ours the same sequential loop through the drop-in pmapi"},
    {"bench": "fleet_rtt", "ours": "fleet", "relay": True,
     "title": "(l) as (k) with %g ms round trips (delay relay): ours pcp.fleet" % (2e3 * DELAY),
     "target": {"vs": "reference", "min_ratio": 5.0}},
    {"bench": "fleet_rtt_dropin", "ours": "dropin", "relay": True,
     "title": "(l') as (l), ours the drop-in sequential loop"},
]


def _error(exc):
    return {"error": "%s: %s" % (type(exc).__name__, exc),
            "traceback": traceback.format_exc(limit=6)}


@pytest.fixture(scope="module")
def relay():
    """host spec of a delay relay in front of the local pmcd (its own process)."""
    p = subprocess.Popen([sys.executable, os.path.join(BENCH_DIR, "delay_relay.py"),
                          "--delay", str(DELAY)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        port = int(p.stdout.readline())
        yield "127.0.0.1:%d" % port
    finally:
        p.stdin.close()
        p.terminate()
        p.wait(10)


class _FleetOp:
    def __init__(self, host):
        from pcp.fleet import Fleet

        self.fleet = Fleet([host] * HOSTS, ref_fleet.METRICS, workers=8, timeout=10)
        if self.fleet.connected != HOSTS:
            raise RuntimeError("only %d of %d connections" % (self.fleet.connected, HOSTS))
        self.metrics = ref_fleet.METRICS

    def op(self):
        res = self.fleet.fetch()
        for r in res:
            if not r.ok:
                raise RuntimeError("%s: %s" % (r.host, r.error))
            for m in self.metrics:
                r.values(m)

    def close(self):
        self.fleet.close()


def measure_ours(benchmark, kind, host):
    try:
        if kind == "fleet":
            runner = _FleetOp(host)
        else:
            from pcp import pmapi

            runner = ref_fleet.Poll(pmapi, host, HOSTS, ref_fleet.METRICS)
        iters = ref_live.calibrate(runner.op, ROUND_SECONDS)
    except Exception as exc:
        return _error(exc)
    try:
        benchmark.pedantic(runner.op, rounds=ROUNDS, iterations=iters, warmup_rounds=1)
        stats = getattr(benchmark, "stats", None)
        if stats:
            result = ref_live.summarize(list(stats.stats.data), iters)
            result["timing"] = "pytest-benchmark pedantic"
        else:
            result = ref_live.timed_loop(runner.op, ROUNDS, ROUND_SECONDS)
            result["timing"] = "ref_live.timed_loop (pytest-benchmark disabled)"
    except Exception as exc:
        return _error(exc)
    finally:
        runner.close()
    result.update(impl="pcp-native " + kind, units_per_op=HOSTS)
    return result


_ref_cache = {}


@pytest.mark.parametrize("case", CASES, ids=[c["bench"] for c in CASES])
def test_fleet(case, request, benchmark, bench_results, bench_tmpdir):
    from conftest import REF_PYTHON, _run_json

    bench = case["bench"]
    benchmark.group = bench
    host = request.getfixturevalue("relay") if case["relay"] else HOST
    row = bench_results.row(bench, title=case["title"], unit="fetches/s",
                            target=dict(case["target"]) if case.get("target") else None)
    ours = measure_ours(benchmark, case["ours"], host)
    bench_results.record(bench, "ours", ours)
    key = case["relay"]
    if key not in _ref_cache:
        cmd = [REF_PYTHON, "-I", os.path.join(BENCH_DIR, "ref_fleet.py"), "--hosts", str(HOSTS),
               "--host", host, "--rounds", str(ROUNDS), "--round-seconds", str(ROUND_SECONDS)]
        _ref_cache[key] = _run_json(cmd, bench_tmpdir)
    ref = _ref_cache[key]
    bench_results.record(bench, "reference", ref)
    bench_results.finish_row(row)
    benchmark.extra_info.update({
        "unit": "fetches/s", "hosts": HOSTS, "delay": DELAY if case["relay"] else 0,
        "reference": {k: v for k, v in ref.items() if k != "traceback"},
        "ours_units_per_s": bench_results.rate(ours),
        "ours_over_reference": row["ours_over_reference"],
    })
    failed = [(side, row[side]["error"]) for side in ("ours", "reference")
              if row.get(side, {}).get("error")]
    if failed:
        pytest.fail("; ".join("%s: %s" % f for f in failed), pytrace=False)
