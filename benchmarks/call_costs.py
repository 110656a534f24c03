#!/usr/bin/env python3
"""One call in a warm process: the CPU microseconds of each PMAPI call of issue 34's
second table, and of a bare pmFetch of ~1,100 values and the full fetch + extract loop
over them. Run under /usr/bin/python3 -I it measures the official binding, under the
project's virtualenv this package, with the same code (fixed_costs.py runs both).

    call_costs.py ARCHIVE [--rounds N] [--round-seconds S]
    call_costs.py ARCHIVE --only CALL --count N     (CALL done N times, nothing printed:
                                                     for an instruction count under callgrind)

Prints one JSON object: {call: median CPU us per call}. Nothing imports pcp at module
level (see ref_live.py)."""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fetchgroup_loop import LIVE_METRICS  # noqa: E402  (~50 sample metrics, ~1,100 values)
from open_cost import timed_rounds  # noqa: E402  (calibrated rounds of CPU time)
from ref_live import op_extract  # noqa: E402  (the live benchmark's fetch + extract + dref)

HOST = "local:"
ONE = "sample.long.one"


def workloads(archive):
    """(name, op, units): op() does `units` calls; the table gives per-call figures."""
    import cpmapi as c_api
    from pcp import pmapi

    ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, HOST)
    one = ctx.pmLookupName([ONE])
    desc = ctx.pmLookupDescs(one)[0]
    colour = ctx.pmLookupName(["sample.colour"])
    colour_desc = ctx.pmLookupDescs(colour)[0]
    many = ctx.pmLookupName(LIVE_METRICS)
    many_descs = ctx.pmLookupDescs(many)
    result = ctx.pmFetch(one)
    vset = result.contents.get_vset(0)
    valfmt, value = vset.valfmt, vset.vlist[0]
    atom = ctx.pmExtractValue(valfmt, value, desc.type, c_api.PM_TYPE_DOUBLE)
    kbyte = pmapi.pmUnits(1, 0, 0, c_api.PM_SPACE_KBYTE, 0, 0)
    byte_desc = ctx.pmLookupDescs(ctx.pmLookupName(["sample.byte_ctr"]))[0]
    extract_loops = 1000

    def new_host():
        pmapi.pmContext(c_api.PM_CONTEXT_HOST, HOST)

    def new_archive():
        pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, archive)

    def fetch(pmids):
        def op():
            ctx.pmFreeResult(ctx.pmFetch(pmids))
        return op

    def extract():
        for _ in range(extract_loops):
            ctx.pmExtractValue(valfmt, value, desc.type, c_api.PM_TYPE_DOUBLE)

    def convscale():
        for _ in range(extract_loops):
            ctx.pmConvScale(c_api.PM_TYPE_DOUBLE, atom, [byte_desc], 0, kbyte)

    many_types = [d.type for d in many_descs]

    def fetch_extract():
        op_extract(ctx, many, many_types)

    return [
        ("pmNewContext host", new_host, 1),
        ("pmNewContext archive", new_archive, 1),
        ("pmLookupName (1 name)", lambda: ctx.pmLookupName([ONE]), 1),
        ("pmLookupDescs (1)", lambda: ctx.pmLookupDescs(one), 1),
        ("pmNameID", lambda: ctx.pmNameID(one[0]), 1),
        ("pmGetInDom", lambda: ctx.pmGetInDom(colour_desc), 1),
        ("pmLookupText", lambda: ctx.pmLookupText(one[0]), 1),
        ("pmGetChildren", lambda: ctx.pmGetChildren("sample"), 1),
        ("pmLookupLabels", lambda: ctx.pmLookupLabels(one[0]), 1),
        ("pmFetch 1 metric + pmFreeResult", fetch(one), 1),
        ("pmFetch %d metrics, no extraction" % len(many), fetch(many), 1),
        ("pmFetch %d metrics + pmExtractValue and dref of every value" % len(many), fetch_extract, 1),
        ("pmExtractValue", extract, extract_loops),
        ("pmConvScale", convscale, extract_loops),
    ]


def measure(archive, rounds, round_seconds):
    out = {}
    for name, op, units in workloads(archive):
        _, per_op_ms = timed_rounds(op, rounds, round_seconds)
        out[name] = statistics.median(per_op_ms) / units * 1e3
    return out


def repeat(archive, call, count):
    """`call` done `count` times after the set-up (and once more before, to warm it)."""
    for name, op, _ in workloads(archive):
        if name == call:
            op()
            for _ in range(count):
                op()
            return
    raise SystemExit("no call named %r" % call)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("archive")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--round-seconds", type=float, default=0.05)
    ap.add_argument("--only", help="one call, done --count times, for callgrind")
    ap.add_argument("--count", type=int, default=100)
    args = ap.parse_args()
    if args.only:
        repeat(args.archive, args.only, args.count)
        return
    print(json.dumps(measure(args.archive, args.rounds, args.round_seconds)))


if __name__ == "__main__":
    main()
