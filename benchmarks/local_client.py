"""One side of benchmarks/test_bench_local.py: a LOCAL context's start-up (pmNewContext
and the first fetch, which starts pcp-native's children) and the cost of a fetch loop,
on whichever binding imports as pcp.pmapi. Prints one JSON line.

    python local_client.py FETCHES

CPU is the process's own (time.process_time) plus, for pcp-native, its PMDA children's
(from /proc/<pid>/stat), so both sides count the PMDAs' work: in the official binding
the DSOs run inside the process."""
import json
import os
import sys
import time

from pcp import pmapi
import cpmapi as c_api

NAMES = ["sampledso.long.one", "sampledso.long.hundred", "sampledso.ulonglong.million",
         "sampledso.double.bin", "sampledso.string.hullo", "sampledso.bin", "sampledso.colour",
         "hinv.ncpu", "hinv.physmem", "kernel.all.load", "kernel.all.cpu.user",
         "kernel.percpu.cpu.user", "mem.util.free", "disk.dev.read", "network.interface.in.bytes"]
TICK = os.sysconf("SC_CLK_TCK")


def children_cpu():
    try:
        from pcp._local import agents   # pcp-native only
    except ImportError:
        return 0.0
    total = 0.0
    for agent in agents.running():
        with open("/proc/%d/stat" % agent.pid) as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / TICK
    return total


def main():
    fetches = int(sys.argv[1])
    w0, c0 = time.perf_counter(), time.process_time()
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_LOCAL, None)
    pmids = ctx.pmLookupName(NAMES)
    ctx.pmFreeResult(ctx.pmFetch(pmids))
    start_wall = time.perf_counter() - w0
    start_cpu = time.process_time() - c0 + children_cpu()
    r = ctx.pmFetch(pmids)
    values = sum(max(r.contents.get_numval(i), 0) for i in range(r.contents.numpmid))
    ctx.pmFreeResult(r)
    k0 = children_cpu()
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(fetches):
        ctx.pmFreeResult(ctx.pmFetch(pmids))
    wall = time.perf_counter() - w0
    cpu = time.process_time() - c0
    kids = children_cpu() - k0
    print(json.dumps({"start_wall": start_wall, "start_cpu": start_cpu, "values": values,
                      "fetch_wall": wall / fetches, "fetch_cpu": (cpu + kids) / fetches,
                      "client_cpu": cpu / fetches, "agents_cpu": kids / fetches}))


if __name__ == "__main__":
    main()
