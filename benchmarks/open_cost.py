#!/usr/bin/env python3
"""What opening an archive context costs: the workloads of test_bench_open.py.

    open_cost.py WORKLOAD ARCHIVE [--rounds N] [--round-seconds S]

WORKLOAD is ``open`` (pmContext(PM_CONTEXT_ARCHIVE, ARCHIVE), then its close),
``lookup`` (the same with pmLookupName of three names and pmLookupDescs in between: what
every script does first, so work put off at open shows here) or ``fromoptions``
(pmContext.fromOptions on ``bench -a ARCHIVE`` with a tool's usual options, then the
close). Run under /usr/bin/python3 -I it measures the official binding;
the benchmark runs the same functions on this package in its own process. Prints one
JSON object: cpu_ms_per_op (median round), best_cpu_ms_per_op, ops per round, rounds,
and what both sides must agree on (the archive's sample.* metric count and start).
Nothing imports pcp at module level (see ref_live.py).
"""
import argparse
import json
import statistics
import time


LOOKUP_NAMES = ["sample.long.one", "sample.double.ten", "sample.string.hullo"]
WORKLOADS = ["open", "lookup", "fromoptions"]


def workload(kind, archive):
    """The operation to time, a function of no arguments."""
    import cpmapi as c_api
    from pcp import pmapi

    if kind == "open":
        def op():
            ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, archive)
            del ctx                 # the close: pmDestroyContext in __del__
        return op
    if kind == "lookup":
        names = LOOKUP_NAMES

        def op():
            ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, archive)
            ctx.pmLookupDescs(ctx.pmLookupName(names))
            del ctx
        return op
    if kind == "fromoptions":
        opts = pmapi.pmOptions("a:S:T:O:A:zZ:?")
        opts.pmSetLongOptionArchive()
        opts.pmSetLongOptionStart()
        opts.pmSetLongOptionFinish()
        opts.pmSetLongOptionOrigin()
        opts.pmSetLongOptionAlign()
        opts.pmSetLongOptionHostZone()
        opts.pmSetLongOptionTimeZone()
        argv = ["bench", "-a", archive]

        def op():
            ctx = pmapi.pmContext.fromOptions(opts, argv)
            del ctx
        return op
    raise ValueError("unknown workload %r" % kind)


def facts(archive):
    """What both sides must see in the archive: the names under sample (the whole PMNS
    of the official binding has libpcp's default derived metrics too) and the start."""
    import cpmapi as c_api
    from pcp import pmapi

    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, archive)
    names = []
    ctx.pmTraversePMNS("sample", names.append)
    start = ctx.pmGetArchiveLabel().start
    return {"metrics": len(names), "start": [int(start.tv_sec), int(start.tv_usec)]}


def timed_rounds(op, rounds, round_seconds):
    """CPU milliseconds per op in each round; a round repeats op for about
    round_seconds of CPU (the count is fixed after a calibration)."""
    for _ in range(5):
        op()                        # warm: imports, caches, page cache
    ops = 1
    while True:
        t0 = time.process_time()
        for _ in range(ops):
            op()
        spent = time.process_time() - t0
        if spent >= round_seconds / 4 or ops >= 1 << 20:
            break
        ops *= 2
    ops = max(1, int(ops * round_seconds / max(spent, 1e-6)))
    per_op = []
    for _ in range(rounds):
        t0 = time.process_time()
        for _ in range(ops):
            op()
        per_op.append((time.process_time() - t0) / ops * 1e3)
    return ops, per_op


def measure(kind, archive, rounds, round_seconds):
    op = workload(kind, archive)
    ops, per_op = timed_rounds(op, rounds, round_seconds)
    out = {"workload": kind, "archive": archive, "ops": ops, "rounds": rounds,
           "cpu_ms_per_op": statistics.median(per_op), "best_cpu_ms_per_op": min(per_op)}
    out.update(facts(archive))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload", choices=WORKLOADS)
    ap.add_argument("archive")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--round-seconds", type=float, default=0.2)
    args = ap.parse_args(argv)
    print(json.dumps(measure(args.workload, args.archive, args.rounds, args.round_seconds)))


if __name__ == "__main__":
    main()
