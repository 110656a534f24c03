#!/usr/bin/env python3
"""Live benchmark workloads, plus a stand-alone timed-loop runner.

This file has two roles:

1. It defines the workloads (``op_*`` functions and the metric lists).
   test_bench_live.py imports them, so this project's ``pcp.pmapi`` runs
   exactly the same Python code as the official binding does.

2. Run as a script it times one workload with whatever ``pcp.pmapi`` the
   interpreter imports and prints one JSON object.  The benchmark session
   runs it as ``/usr/bin/python3 -I ref_live.py ...`` to measure the official
   (libpcp/ctypes) binding; ``-I`` keeps the project's own ``pcp`` directory
   off ``sys.path``.  Run under /work/venv/bin/python it measures ours with the
   same loop (handy as a cross-check).

Timing method (shared with benchmarks/c/bench_common.h): one warm-up op,
calibrate over ~0.05 s, then ROUNDS rounds of ~ROUND_SECONDS each; the
reported ``ops_per_s`` comes from the median round (``best_ops_per_s`` from
the fastest one).  ``units_per_op`` is the number of values / names an op
handles, so ``ops_per_s * units_per_op`` is values/s or names/s.

Usage:
    ref_live.py fetch   [--rounds N] [--round-seconds S] [--host H] [metric ...]
    ref_live.py extract [...] [metric ...]
    ref_live.py extract_hoisted [...] [metric ...]
    ref_live.py lookup  [...] --names-file FILE          (one call, all names)
    ref_live.py lookup_single [...] --names-file FILE    (one call per name)

Nothing here imports pcp at module level, so importing this file never
decides which pcp package is used.
"""

import argparse
import json
import sys
import time

# (a) one metric, one value: a pure round trip.
FETCH_METRICS = ["sample.long.one"]

# (b) about 1000 values of mixed types in a single fetch, without changing
# any PMDA state: 2 x 500 instances of sample.hordes.* (32-bit int) plus
# 9 instances each of 32/U32/64/U64/float/double/string metrics.
EXTRACT_METRICS = [
    "sample.hordes.one",
    "sample.hordes.two",
    "sample.long.bin",
    "sample.ulong.bin",
    "sample.longlong.bin",
    "sample.ulonglong.bin",
    "sample.float.bin",
    "sample.double.bin",
    "sample.string.bin",
]

BENCHES = ["fetch", "extract", "extract_hoisted", "lookup", "lookup_single"]

# (c) number of PMNS leaf names to look up.
LOOKUP_COUNT = 1000


# --------------------------------------------------------------------------
# Workloads -- written the way a typical user of the official binding would.

def op_fetch(ctx, pmids):
    """(a) one pmFetch round trip, freeing the result as reference users do."""
    result = ctx.pmFetch(pmids)
    ctx.pmFreeResult(result)


def op_extract(ctx, pmids, types):
    """(b) fetch, then pmExtractValue + dref of every value, then free."""
    result = ctx.pmFetch(pmids)
    for i in range(result.contents.numpmid):
        mtype = types[i]
        for j in range(result.contents.get_numval(i)):
            atom = ctx.pmExtractValue(result.contents.get_valfmt(i),
                                      result.contents.get_vlist(i, j),
                                      mtype, mtype)
            value = atom.dref(mtype)
    ctx.pmFreeResult(result)


def op_extract_hoisted(ctx, pmids, types):
    """(b') as op_extract, but dereferencing result.contents once per fetch."""
    result = ctx.pmFetch(pmids)
    res = result.contents
    for i in range(res.numpmid):
        mtype = types[i]
        valfmt = res.get_valfmt(i)
        for j in range(res.get_numval(i)):
            value = ctx.pmExtractValue(valfmt, res.get_vlist(i, j),
                                       mtype, mtype).dref(mtype)
    ctx.pmFreeResult(result)


def op_lookup(ctx, names):
    """(c) one pmLookupName call for the whole list of names."""
    ctx.pmLookupName(names)


def op_lookup_single(ctx, names):
    """(c') one pmLookupName call (one round trip) per name."""
    for name in names:
        ctx.pmLookupName(name)


# --------------------------------------------------------------------------
# Setup helpers (not timed).

def desc_types(descs):
    """Metric types from pmLookupDescs() output (pointers or structs)."""
    types = []
    for desc in descs:
        contents = getattr(desc, "contents", desc)
        types.append(contents.type)
    return types


def count_values(ctx, pmids):
    """Number of values one fetch of pmids returns."""
    result = ctx.pmFetch(pmids)
    try:
        return sum(result.contents.get_numval(i)
                   for i in range(result.contents.numpmid))
    finally:
        ctx.pmFreeResult(result)


def new_context(pmapi, host="local:"):
    if host in (None, "", "local:"):
        return pmapi.pmContext()
    return pmapi.pmContext(target=host)


def make_op(bench, ctx, metrics=None, names=None):
    """Return (zero-argument op callable, units handled per op)."""
    if bench == "fetch":
        pmids = ctx.pmLookupName(metrics or FETCH_METRICS)
        return (lambda: op_fetch(ctx, pmids)), 1
    if bench in ("extract", "extract_hoisted"):
        pmids = ctx.pmLookupName(metrics or EXTRACT_METRICS)
        types = desc_types(ctx.pmLookupDescs(pmids))
        nvalues = count_values(ctx, pmids)
        fn = op_extract if bench == "extract" else op_extract_hoisted
        return (lambda: fn(ctx, pmids, types)), nvalues
    if bench == "lookup":
        return (lambda: op_lookup(ctx, names)), len(names)
    if bench == "lookup_single":
        return (lambda: op_lookup_single(ctx, names)), len(names)
    raise ValueError("unknown benchmark %r" % bench)


def calibrate(op, round_seconds=0.2):
    """Warm up, then return how many ops make one round of round_seconds."""
    op()  # warm-up
    clock = time.perf_counter
    n = 0
    t0 = clock()
    while True:
        op()
        n += 1
        t1 = clock()
        if t1 - t0 >= 0.05:
            break
    return max(1, int(round_seconds / ((t1 - t0) / n)))


def summarize(times, iters):
    """Per-op seconds of each round -> the dict every side reports."""
    times = sorted(times)
    median = times[len(times) // 2]
    return {
        "ops_per_s": 1.0 / median,
        "best_ops_per_s": 1.0 / times[0],
        "mean_ops_per_s": len(times) / sum(times),
        "median_s_per_op": median,
        "rounds": len(times),
        "iters_per_round": iters,
    }


def timed_loop(op, rounds=15, round_seconds=0.2):
    """Same method as benchmarks/c/bench_common.h; returns a dict."""
    iters = calibrate(op, round_seconds)
    clock = time.perf_counter
    times = []
    for _ in range(rounds):
        t0 = clock()
        for _ in range(iters):
            op()
        times.append((clock() - t0) / iters)
    return summarize(times, iters)


def read_names(path, count=None):
    with open(path) as f:
        names = [line.strip() for line in f if line.strip()]
    return names[:count] if count else names


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench", choices=BENCHES)
    ap.add_argument("metrics", nargs="*")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--round-seconds", type=float, default=0.2)
    ap.add_argument("--host", default="local:")
    ap.add_argument("--names-file")
    ap.add_argument("--impl-label", default="reference")
    args = ap.parse_args(argv)

    out = {"impl": args.impl_label, "bench": args.bench,
           "python": sys.executable, "python_version": sys.version.split()[0]}
    try:
        from pcp import pmapi
        out["pmapi_file"] = getattr(pmapi, "__file__", None)
        ctx = new_context(pmapi, args.host)
        names = read_names(args.names_file) if args.names_file else None
        if args.bench.startswith("lookup") and not names:
            raise SystemExit("--names-file is required for %s" % args.bench)
        op, units = make_op(args.bench, ctx, args.metrics, names)
        out["units_per_op"] = units
        out.update(timed_loop(op, args.rounds, args.round_seconds))
    except Exception as exc:  # report, don't crash: the caller shows it
        out["error"] = "%s: %s" % (type(exc).__name__, exc)
        print(json.dumps(out))
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
