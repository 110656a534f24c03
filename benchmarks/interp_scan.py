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
when run alone). With --mode floor (ARCHIVE, STEP_MS and PREFIX unused) it measures
api_floor: the per-value CPU of the same loop with an API as cheap as Python allows.

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


FIELDS = ["l", "ul", "ll", "ull", "f", "d"]


def read_values(ctx, res, types, sums):
    """pmExtractValue of every value of a result to its own type, as a drop-in script
    reads a fetch: (values read, (int_sum, float_sum) updated)."""
    int_sum, float_sum = sums
    values = 0
    for j in range(res.numpmid):
        n = res.get_numval(j)
        t = types[j]
        if n <= 0 or t > 5:
            continue
        fmt = res.get_valfmt(j)
        field = FIELDS[t]
        for k in range(n):
            v = getattr(ctx.pmExtractValue(fmt, res.get_vlist(j, k), t, t), field)
            if t < 4:
                int_sum = (int_sum + v) % (1 << 64)
            else:
                float_sum += v
        values += n
    return values, (int_sum, float_sum)


def api_floor(nmetrics=486, per_metric=5, fetches=400, rounds=5):
    """The least CPU per value the drop-in API's shape allows on this interpreter: the
    same read_values loop over a result whose get_vlist and pmExtractValue are as cheap
    as Python code can make them (a method returning a new two-slot object after the
    bounds check; a static method returning a new ctypes pmAtomValue with one field
    set) and whose fetch costs nothing. Best of `rounds`, in ns per value."""
    from pcp.pmapi import pmAtomValue

    new = object.__new__

    class Value:
        __slots__ = ("_r", "_k")

    class Result:
        __slots__ = ("numpmid", "numval", "valfmt", "first", "vals")

        def get_numval(self, j):
            return self.numval[j]

        def get_valfmt(self, j):
            return self.valfmt[j]

        def get_vlist(self, j, k):
            if not 0 <= k < self.numval[j]:
                raise IndexError("invalid index")
            v = new(Value)
            v._r = self
            v._k = self.first[j] + k
            return v

    class Context:
        @staticmethod
        def pmExtractValue(valfmt, vlist, intype, outtype):
            atom = pmAtomValue()
            atom.ll = vlist._r.vals[vlist._k]
            return atom

    res = Result()
    res.numpmid = nmetrics
    res.numval = [per_metric] * nmetrics
    res.valfmt = [1] * nmetrics
    res.first = [j * per_metric for j in range(nmetrics)]
    res.vals = list(range(nmetrics * per_metric))
    ctx, types = Context(), [2] * nmetrics          # PM_TYPE_64, read as .ll
    best = None
    for _ in range(rounds):
        values, sums = 0, (0, 0.0)
        start = time.process_time()
        for _ in range(fetches):
            n, sums = read_values(ctx, res, types, sums)
            values += n
        took = (time.process_time() - start) / values
        best = took if best is None else min(best, took)
    return best * 1e9


def record_check(volumes, rounds=9):
    """This package's check of every record of the volumes (pcp_archive_record_read, as
    every archive reader makes it before decoding), nothing decoded: the CPU of the
    fastest of `rounds` passes, each mapping the volumes afresh (as record_floor.c)."""
    import mmap
    from pcp._core.native import ffi, lib

    newpos = ffi.new("uint64_t *")
    rec = ffi.new("pcp_log_record *")
    best, records = None, 0
    for _ in range(rounds):
        start = time.process_time()
        records = 0
        for path in volumes:
            with open(path, "rb") as f:
                m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            buf = ffi.from_buffer("uint8_t[]", m)
            label_len = int.from_bytes(m[0:4], "big")
            version = m[7]
            pos = label_len
            while lib.pcp_archive_record_read(buf, len(m), label_len, version, 0, 0, pos,
                                              newpos, rec) == 0:
                pos = newpos[0]
                records += 1
            ffi.release(buf)
            m.close()
        took = time.process_time() - start
        best = took if best is None else min(best, took)
    return {"records": records, "cpu_s": best}


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
    fetches = values = 0
    sums = (0, 0.0)
    start = time.process_time()
    while fetches < max_fetches:
        try:
            result = ctx.pmFetch(pmids)
        except pmapi.pmErr:
            break
        fetches += 1
        n, sums = read_values(ctx, result.contents, types, sums)
        values += n
        ctx.pmFreeResult(result)
    cpu = time.process_time() - start
    int_sum, float_sum = sums
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
            "swept_rows": reader.stats["swept_steps"], "maxrss_kb": peak_rss_kb()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("archive")
    parser.add_argument("step_ms", type=int)
    parser.add_argument("prefixes", nargs="+")
    parser.add_argument("--max-fetches", type=int, default=1 << 30)
    parser.add_argument("--mode", choices=("interp", "forw", "grid", "floor"), default="interp")
    args = parser.parse_args()
    if args.mode == "floor":
        print(json.dumps({"ns_per_value": api_floor()}))
        return
    if args.mode == "grid":
        print(json.dumps(grid_scan(args.archive, args.step_ms, args.prefixes)))
        return
    print(json.dumps(scan(args.archive, args.step_ms, args.prefixes, args.max_fetches,
                          args.mode)))


if __name__ == "__main__":
    main()
