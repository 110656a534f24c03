#!/usr/bin/env python3
"""Bulk regular-grid workload: pcp.bulk.ArchiveReader(..., interval=step) over the
metrics under some PMNS prefixes, from the archive's start to its end, chunk by chunk;
the same values as interp_scan.py's pmFetch loop in PM_MODE_INTERP (checked by the same
checksum: int_sum of integer values modulo 2**64).

    grid_scan.py ARCHIVE STEP_MS PREFIX [PREFIX ...]

Prints one JSON object: rows, values, cpu_s, values_per_cpu_s, maxrss_kb (of this
process: run it alone to see the bulk read's peak), int_sum, float_sum.
"""
import argparse
import json
import resource
import time


def scan(archive, step_ms, prefixes, chunk_bytes=32 << 20):
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
            "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("archive")
    parser.add_argument("step_ms", type=int)
    parser.add_argument("prefixes", nargs="+")
    args = parser.parse_args()
    print(json.dumps(scan(args.archive, args.step_ms, args.prefixes)))


if __name__ == "__main__":
    main()
