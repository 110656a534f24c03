"""Live side-by-side benchmarks against the local pmcd (sample PMDA).

For every case, in one pytest-benchmark session:
  ours       this project's pcp.pmapi, timed in-process by pytest-benchmark
             (benchmark.pedantic: ROUNDS rounds of ~ROUND_SECONDS each);
  reference  the official binding, ref_live.py under /usr/bin/python3 -I,
             same workload code and the same round structure;
  libpcp C   benchmarks/c/<prog>.c compiled against libpcp: the floor.
The reference and C figures are attached to the benchmark as extra_info and
collected into the table printed at the end (see conftest.py, README.md).

Not part of the normal test run: pyproject's testpaths is ["tests"].
Run: /work/venv/bin/pytest benchmarks -q --benchmark-only
"""

import os
import traceback

import pytest

import ref_live

ROUNDS = int(os.environ.get("PCP_BENCH_ROUNDS", "15"))
ROUND_SECONDS = float(os.environ.get("PCP_BENCH_ROUND_SECONDS", "0.2"))
HOST = os.environ.get("PCP_BENCH_HOST", "local:")

CASES = [
    {
        "bench": "fetch",
        "title": "(a) pmFetch sample.long.one (+pmFreeResult)",
        "unit": "round trips/s",
        "c": ("fetch_loop", ref_live.FETCH_METRICS),
        "target": {"vs": "c", "min_ratio": 0.9},
    },
    {
        "bench": "extract",
        "title": "(b) pmFetch + pmExtractValue/dref of every value (~1000)",
        "unit": "values/s",
        "c": ("extract_loop", ref_live.EXTRACT_METRICS),
        "target": {"vs": "reference", "min_ratio": 10.0},
    },
    {
        "bench": "extract_hoisted",
        "title": "(b') as (b), result.contents hoisted out of the loop",
        "unit": "values/s",
        "c": ("extract_loop", ref_live.EXTRACT_METRICS),
    },
    {
        "bench": "lookup",
        "title": "(c) pmLookupName of 1000 names, one call",
        "unit": "names/s",
        "c": ("lookup_loop", ["-f", "{names}"]),
    },
    {
        "bench": "lookup_single",
        "title": "(c') pmLookupName of 1000 names, one call per name",
        "unit": "names/s",
        "c": ("lookup_loop", ["-s", "-f", "{names}"]),
    },
]

_c_cache = {}


def _error(exc):
    return {"error": "%s: %s" % (type(exc).__name__, exc),
            "traceback": traceback.format_exc(limit=6)}


def measure_ours(benchmark, bench, names):
    """Time our pcp.pmapi with pytest-benchmark; errors become dicts."""
    try:
        from pcp import pmapi

        ctx = ref_live.new_context(pmapi, HOST)
        op, units = ref_live.make_op(bench, ctx, None, names)
        iters = ref_live.calibrate(op, ROUND_SECONDS)  # includes a warm-up op
    except Exception as exc:
        return _error(exc)
    try:
        benchmark.pedantic(op, rounds=ROUNDS, iterations=iters, warmup_rounds=1)
    except Exception as exc:
        return _error(exc)
    stats = getattr(benchmark, "stats", None)
    if stats:
        result = ref_live.summarize(list(stats.stats.data), iters)
        result["timing"] = "pytest-benchmark pedantic"
    else:  # --benchmark-disable: fall back to the reference-side loop
        result = ref_live.timed_loop(op, ROUNDS, ROUND_SECONDS)
        result["timing"] = "ref_live.timed_loop (pytest-benchmark disabled)"
    result.update(impl="pcp-native", bench=bench, units_per_op=units,
                  pmapi_file=getattr(pmapi, "__file__", None))
    return result


@pytest.mark.parametrize("case", CASES, ids=[c["bench"] for c in CASES])
def test_live(case, request, benchmark, bench_results, run_reference, run_c):
    bench = case["bench"]
    benchmark.group = bench
    row = bench_results.row(bench, title=case["title"], unit=case["unit"],
                            target=dict(case["target"]) if case.get("target") else None)

    names = names_file = None
    if bench.startswith("lookup"):
        names_file = request.getfixturevalue("lookup_names_file")
        names = ref_live.read_names(names_file)

    # 1. ours, in-process, timed by pytest-benchmark
    ours = measure_ours(benchmark, bench, names)
    bench_results.record(bench, "ours", ours)

    # 2. the official binding, same code, in a /usr/bin/python3 subprocess
    ref = run_reference(bench, names_file=names_file)
    bench_results.record(bench, "reference", ref)

    # 3. libpcp C client (identical invocations are run once per session)
    prog, args = case["c"]
    args = [a.format(names=names_file) for a in args]
    key = (prog, tuple(args))
    if key not in _c_cache:
        _c_cache[key] = run_c(prog, *args)
    bench_results.record(bench, "c", _c_cache[key])

    bench_results.finish_row(row)
    benchmark.extra_info.update({
        "unit": case["unit"],
        "reference": {k: v for k, v in ref.items() if k != "traceback"},
        "libpcp_c": _c_cache[key],
        "ours_units_per_s": bench_results.rate(ours),
        "ours_over_reference": row["ours_over_reference"],
        "ours_over_c": row["ours_over_c"],
    })

    units = {side: (row.get(side) or {}).get("units_per_op") for side in ("ours", "reference")}
    if None not in units.values() and len(set(units.values())) > 1:
        row["note"] = "values per op differ: %r" % units

    failed = [(side, row[side]["error"]) for side in ("ours", "reference", "c")
              if row.get(side, {}).get("error")]
    if failed:
        pytest.fail("; ".join("%s: %s" % f for f in failed), pytrace=False)
