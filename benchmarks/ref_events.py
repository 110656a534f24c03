#!/usr/bin/env python3
"""Event benchmark, official-binding side: the only event interface the official
Python binding has, fetchgroup extend_event(), over the live sample PMDA.

One op is fg.fetch() and reading every registered item: for each event value source
(sample.event.records "fungus" and "bogus", sample.event.highres_records "fungus" and
"bogus", sample.event.no_indom_records) one item per field - event.flags, event.missed
and the nine sample.event parameter metrics - so every event and every parameter of
the fetch reaches Python. Events are counted as event.flags values (every sample PMDA
event has flags), parameters as the values of the nine parameter fields.

Run under /usr/bin/python3 -I (see test_bench_events.py); prints one JSON object with
the timing fields of ref_live.summarize and units_per_op averaged over the timed ops.
    ref_events.py fetchgroup [--rounds N] [--round-seconds S] [--host H] [--unit events|params]
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ref_live  # noqa: E402  (imports no pcp)

SOURCES = [("sample.event.records", "fungus"), ("sample.event.records", "bogus"),
           ("sample.event.highres_records", "fungus"), ("sample.event.highres_records", "bogus"),
           ("sample.event.no_indom_records", None)]
PARAMS = ["sample.event.type", "sample.event.param_32", "sample.event.param_u32",
          "sample.event.param_64", "sample.event.param_u64", "sample.event.param_float",
          "sample.event.param_double", "sample.event.param_string"]
# sample.event.param_aggregate cannot be a fetchgroup field (PM_ERR_TYPE): aggregate
# parameters never reach the official binding.
MAXNUM = 64


def make_op(pmapi, c_api, host, unit):
    fg = pmapi.fetchgroup(c_api.PM_CONTEXT_HOST, host)
    flags, missed, params = [], [], []
    for metric, inst in SOURCES:
        flags.append(fg.extend_event(metric, field="event.flags", instance=inst, maxnum=MAXNUM))
        missed.append(fg.extend_event(metric, field="event.missed", instance=inst,
                                      maxnum=MAXNUM))
        for field in PARAMS:
            params.append(fg.extend_event(metric, field=field, instance=inst, maxnum=MAXNUM))
    counting = {"events": 0, "params": 0}

    def op():
        fg.fetch()
        events = nparams = 0
        for item in flags:
            events += len(item())
        for item in missed:
            item()
        for item in params:
            nparams += len(item())
        counting["events"] += events
        counting["params"] += nparams
        return events if unit == "events" else nparams

    return op, counting


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench", choices=["fetchgroup"])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--round-seconds", type=float, default=0.2)
    ap.add_argument("--host", default="local:")
    ap.add_argument("--unit", choices=["events", "params"], default="events")
    args = ap.parse_args(argv)
    out = {"impl": "reference", "bench": "events_" + args.bench,
           "python": sys.executable, "python_version": sys.version.split()[0]}
    try:
        from pcp import pmapi
        import cpmapi as c_api

        out["pmapi_file"] = getattr(pmapi, "__file__", None)
        op, _ = make_op(pmapi, c_api, args.host, args.unit)
        units = [0, 0]

        def counted():
            units[0] += op()
            units[1] += 1

        iters = ref_live.calibrate(counted, args.round_seconds)
        units[:] = [0, 0]
        clock = time.perf_counter
        times = []
        for _ in range(args.rounds):
            t0 = clock()
            for _ in range(iters):
                counted()
            times.append((clock() - t0) / iters)
        out.update(ref_live.summarize(times, iters))
        out["units_per_op"] = units[0] / units[1]
    except Exception as exc:  # report, don't crash: the caller shows it
        out["error"] = "%s: %s" % (type(exc).__name__, exc)
        print(json.dumps(out))
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
