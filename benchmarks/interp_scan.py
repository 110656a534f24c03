#!/usr/bin/env python3
"""PM_MODE_INTERP workload: interpolate a set of metrics over an archive at a fixed step,
pmExtractValue of every value (to its own type), until the end of the archive.

    interp_scan.py ARCHIVE STEP_MS PREFIX [PREFIX ...] [--max-fetches N]
                   [--mode forw|grid]

With --mode forw the same loop reads the records themselves (PM_MODE_FORW, STEP_MS
unused): pmFetch of the metrics from each record, the archive pmFetch path that picks
the requested value sets out of every record. With --mode grid the same values come
from this package's bulk regular-grid read (pcp.bulk.ArchiveReader(...,
interval=STEP_MS), chunk by chunk, not a pmFetch loop; its maxrss_kb is the read's peak
when run alone).

maxrss_kb is the process's own peak RSS (VmHWM of /proc/self/status where there is one):
ru_maxrss is kept across execve, so a child started by a large parent (the benchmark's
pytest process) would report the parent's RSS at the fork instead.

Run under /usr/bin/python3 -I it measures the official binding; under the project's
venv our drop-in pcp.pmapi running the same code. Prints one JSON object: fetches,
values, cpu_s (the loop's CPU time), values_per_cpu_s, maxrss_kb, and a checksum
(int_sum of integer values modulo 2**64, float_sum) to check the sides agree.
Nothing imports pcp at module level (see ref_live.py).
"""
import argparse
import json
import os
import resource
import time

# numpy's BLAS thread pool is never used here; its idle threads would only add CPU time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def peak_rss_kb():
    """This process image's peak RSS in kB (VmHWM; ru_maxrss where /proc is missing)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def scan(archive, step_ms, prefixes, max_fetches, mode="interp"):
    import cpmapi as c_api
    from pcp import pmapi

    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, archive)
    names = []
    for prefix in prefixes:
        ctx.pmTraversePMNS(prefix, names.append)
    pmids = ctx.pmLookupName(names)
    types = [d.type for d in ctx.pmLookupDescs(pmids)]
    if mode == "forw":
        ctx.pmSetMode(c_api.PM_MODE_FORW, ctx.pmGetArchiveLabel().start, 0)
    else:
        ctx.pmSetMode(c_api.PM_MODE_INTERP, ctx.pmGetArchiveLabel().start, step_ms)
    fields = ["l", "ul", "ll", "ull", "f", "d"]
    fetches = values = 0
    int_sum, float_sum = 0, 0.0
    start = time.process_time()
    while fetches < max_fetches:
        try:
            result = ctx.pmFetch(pmids)
        except pmapi.pmErr:
            break
        fetches += 1
        res = result.contents
        for j in range(res.numpmid):
            n = res.get_numval(j)
            t = types[j]
            if n <= 0 or t > 5:
                continue
            fmt = res.get_valfmt(j)
            field = fields[t]
            for k in range(n):
                v = getattr(ctx.pmExtractValue(fmt, res.get_vlist(j, k), t, t), field)
                if t < 4:
                    int_sum = (int_sum + v) % (1 << 64)
                else:
                    float_sum += v
            values += n
        ctx.pmFreeResult(result)
    cpu = time.process_time() - start
    return {"metrics": len(names), "fetches": fetches, "values": values, "cpu_s": cpu,
            "values_per_cpu_s": values / cpu if cpu else 0.0, "int_sum": int_sum,
            "float_sum": float_sum,
            "maxrss_kb": peak_rss_kb()}


def grid_scan(archive, step_ms, prefixes, chunk_bytes=32 << 20):
    """The same values read as a regular grid by pcp.bulk.ArchiveReader(...,
    interval=step), chunk by chunk (the same checksum; "rows" for "fetches")."""
    import numpy as np
    from pcp import bulk

    reader = bulk.ArchiveReader(archive, list(prefixes), interval=step_ms / 1000.0,
                                chunk_bytes=chunk_bytes, progress=False)
    rows = values = 0
    int_sum = np.uint64(0)
    float_sum = 0.0
    start = time.process_time()
    for chunk in reader.chunks():
        rows += len(chunk)
        for ma in chunk.metrics.values():
            if ma.type > 5:
                continue
            got = ma.values[ma.present]
            values += len(got)
            if ma.type < 4:
                with np.errstate(over="ignore"):
                    int_sum += got.astype(np.int64).view(np.uint64).sum(dtype=np.uint64)
            else:
                float_sum += float(got.astype(np.float64).sum())
    cpu = time.process_time() - start
    return {"metrics": len(reader.metric_names), "rows": rows, "values": values,
            "cpu_s": cpu, "values_per_cpu_s": values / cpu if cpu else 0.0,
            "int_sum": int(int_sum), "float_sum": float_sum,
            "maxrss_kb": peak_rss_kb()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("archive")
    parser.add_argument("step_ms", type=int)
    parser.add_argument("prefixes", nargs="+")
    parser.add_argument("--max-fetches", type=int, default=1 << 30)
    parser.add_argument("--mode", choices=("interp", "forw", "grid"), default="interp")
    args = parser.parse_args()
    if args.mode == "grid":
        print(json.dumps(grid_scan(args.archive, args.step_ms, args.prefixes)))
        return
    print(json.dumps(scan(args.archive, args.step_ms, args.prefixes, args.max_fetches,
                          args.mode)))


if __name__ == "__main__":
    main()
