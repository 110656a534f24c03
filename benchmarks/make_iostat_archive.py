#!/usr/bin/env python3
"""An archive for the iostat benchmark (test_bench_derived.py): the disk.dev counters
that the machine's iostat.conf derived metrics are defined over, for DISKS disks at one
record a second, with the Linux PMDA's descriptors (pmids, types, semantics, units and
instance domain, asked of the local pmcd) so that the definitions bind as on a real
recording. The counters move as a busy machine's do: idle intervals (the ?: branches
for no I/O) among bursts.

Written once with this package's pcp.pmi and cached under /tmp/pcp-bench-archives (or
$PCP_BENCH_ARCHIVE_DIR) by records and disks; nothing is committed.

    make_iostat_archive.py [RECORDS] [DISKS]      prints the base name
"""
import os
import sys

import numpy as np

CACHE = os.environ.get("PCP_BENCH_ARCHIVE_DIR", "/tmp/pcp-bench-archives")
OPERANDS = ["disk.dev.read", "disk.dev.write", "disk.dev.total", "disk.dev.discard",
            "disk.dev.flush", "disk.dev.read_bytes", "disk.dev.write_bytes",
            "disk.dev.discard_bytes", "disk.dev.read_rawactive", "disk.dev.write_rawactive",
            "disk.dev.total_rawactive", "disk.dev.discard_rawactive",
            "disk.dev.flush_rawactive", "disk.dev.avactive"]
START = 1700000000


def _counters(records: int, disks: int) -> dict:
    """Counter matrices (records x disks) for every operand."""
    rng = np.random.default_rng(20261125)
    busy = rng.random((records, disks)) < 0.7

    def ops(scale):
        return np.where(busy, rng.poisson(scale, (records, disks)), 0)

    reads, writes, discards, flushes = ops(40), ops(25), ops(2), ops(3)
    size_r = rng.integers(4, 256, (records, disks))
    size_w = rng.integers(4, 512, (records, disks))
    wait_r = reads * rng.integers(1, 9, (records, disks))
    wait_w = writes * rng.integers(1, 15, (records, disks))
    wait_d = discards * rng.integers(1, 4, (records, disks))
    wait_f = flushes * rng.integers(1, 3, (records, disks))
    steps = {
        "disk.dev.read": reads, "disk.dev.write": writes, "disk.dev.total": reads + writes,
        "disk.dev.discard": discards, "disk.dev.flush": flushes,
        "disk.dev.read_bytes": reads * size_r, "disk.dev.write_bytes": writes * size_w,
        "disk.dev.discard_bytes": discards * 1024,
        "disk.dev.read_rawactive": wait_r, "disk.dev.write_rawactive": wait_w,
        "disk.dev.total_rawactive": wait_r + wait_w,
        "disk.dev.discard_rawactive": wait_d, "disk.dev.flush_rawactive": wait_f,
        "disk.dev.avactive": np.minimum(1000, (wait_r + wait_w) // 3),
    }
    base = rng.integers(10**6, 10**9, disks)
    return {name: base + np.cumsum(step, axis=0) for name, step in steps.items()}


def ensure_archive(records: int = 4000, disks: int = 16) -> str:
    """Base name of the cached archive (made if missing)."""
    folder = os.path.join(CACHE, "iostat-%dx%d" % (records, disks))
    base = os.path.join(folder, "iostat")
    if os.path.exists(base + ".index"):
        return base
    import cpmapi as c
    from pcp import pmapi, pmi

    live = pmapi.pmContext(c.PM_CONTEXT_HOST, "local:")
    descs = [d.contents for d in live.pmLookupDescs(live.pmLookupName(OPERANDS))]
    os.makedirs(folder, exist_ok=True)
    tmp = base + ".partial"
    log = pmi.pmiLogImport(tmp)
    log.pmiSetHostname("iostat-bench")
    log.pmiSetTimezone("UTC")
    indom = descs[0].indom
    names = ["sd%s" % chr(ord("a") + i) if i < 26 else "sd%d" % i for i in range(disks)]
    for i, name in enumerate(names):
        log.pmiAddInstance(indom, name, i)
    for name, d in zip(OPERANDS, descs):
        log.pmiAddMetric(name, d.pmid, d.type, d.indom, d.sem, d.units)
    values = _counters(records, disks)
    types = {name: d.type for name, d in zip(OPERANDS, descs)}
    handles = {(m, i): log.pmiGetHandle(m, n) for m in OPERANDS for i, n in enumerate(names)}
    for m in OPERANDS:
        if types[m] == c.PM_TYPE_U32:
            values[m] = values[m] % (1 << 32)
    text = {m: values[m].astype(str) for m in OPERANDS}
    for k in range(records):
        for m in OPERANDS:
            row = text[m][k]
            for i in range(disks):
                log.pmiPutValueHandle(handles[m, i], row[i])
        log.pmiWrite(START + k, 0)
    log.pmiEnd()
    for suffix in (".0", ".meta", ".index"):
        os.replace(tmp + suffix, base + suffix)
    return base


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    print(ensure_archive(*args))
