#!/usr/bin/env python3
"""fetchgroup workload, the way pmrep and the pcp2xxx exporters use one: a fetchgroup of
whole instance domains (counters become rates), fetched in a loop; after each fetch every
value of every metric is read through the objects the fetchgroup handed out.

    fetchgroup_loop.py live HOST FETCHES [METRIC ...]
    fetchgroup_loop.py archive ARCHIVE STEP_MS PREFIX [PREFIX ...]
    (--fetch-only first: fetch() alone, the values are not read)

Run under /usr/bin/python3 -I it measures the official binding; under the project's venv
it measures pcp-native running the same code. Prints one JSON object: metrics, fetches,
values, cpu_s (the loop's client CPU time), cpu_us_per_fetch, values_per_cpu_s and, for
archives, a checksum of every value (int_sum modulo 2**64, float_sum) that the two
bindings and the C loop (c/fetchgroup_loop.c) must agree on.

Nothing imports pcp at module level (see ref_live.py).
"""
import json
import sys
import time

# ~50 metrics, ~1100 values from the sample PMDA, without changing any PMDA state:
# 2 x 500 instances of sample.hordes, the sample.*.bin families (9 instances each, every
# type, counters among them), and singular metrics of every type.
LIVE_METRICS = (
    ["sample.hordes.one", "sample.hordes.two", "sample.bin", "sample.colour"]
    + ["sample.%s.%s" % (t, m) for t in ("long", "ulong", "longlong", "ulonglong", "float",
                                          "double")
       for m in ("bin", "bin_ctr", "one", "ten", "hundred", "million")]
    + ["sample.string.bin", "sample.string.hullo", "sample.seconds", "sample.milliseconds",
       "sample.dupnames.two.bin", "sample.dupnames.three.bin"]
)


def make_group(pmapi, c_api, typed, target, names):
    """A fetchgroup with every instance of each metric, its own type, default scale."""
    fg = pmapi.fetchgroup(typed, target)
    items = []
    for name in names:
        items.append(fg.extend_indom(name, maxnum=2000))
    return fg, items


def read_all(items, sums):
    """Every value of every item, as pmrep reads them (errors are skipped)."""
    count = 0
    for item in items:
        for _inst, _name, value in item():
            try:
                v = value()
            except Exception:       # pmErr: no value this time (first rate, ...)
                continue
            count += 1
            if isinstance(v, float):
                sums[1] += v
            elif isinstance(v, int):
                sums[0] = (sums[0] + v) % (1 << 64)
    return count


def run(mode, args, read=True):
    import cpmapi as c_api
    from pcp import pmapi

    if mode == "live":
        host, fetches = args[0], int(args[1])
        names = args[2:] or LIVE_METRICS
        fg, items = make_group(pmapi, c_api, c_api.PM_CONTEXT_HOST, host, names)
        step = None
    else:
        archive, step = args[0], int(args[1])
        probe = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, archive)
        names = []
        for prefix in args[2:]:
            probe.pmTraversePMNS(prefix, names.append)
        fg, items = make_group(pmapi, c_api, c_api.PM_CONTEXT_ARCHIVE, archive, names)
        ctx = fg.get_context()
        ctx.pmSetMode(c_api.PM_MODE_INTERP, ctx.pmGetArchiveLabel().start, step)
        fetches = 1 << 30
    sums = [0, 0.0]
    done = values = 0
    start = time.process_time()
    while done < fetches:
        try:
            fg.fetch()
        except pmapi.pmErr:
            break
        done += 1
        if read:
            values += read_all(items, sums)
    cpu = time.process_time() - start
    return {"metrics": len(names), "fetches": done, "values": values, "cpu_s": cpu,
            "cpu_us_per_fetch": cpu / done * 1e6 if done else 0.0,
            "values_per_cpu_s": values / cpu if cpu else 0.0,
            "int_sum": sums[0], "float_sum": sums[1]}


if __name__ == "__main__":
    argv = sys.argv[1:]
    fetch_only = argv[0] == "--fetch-only"
    if fetch_only:
        argv = argv[1:]
    print(json.dumps(run(argv[0], argv[1:], not fetch_only)))
