"""The TLS benchmark's client workload, the same code on both bindings.

    python tls_client.py SPEC FETCHES CONTEXTS

prints one JSON line: the client CPU seconds per pmFetch of benchmark (b)'s metric set
(sample.hordes.*, sample.*.bin: about a thousand values) over one context, and per
round of benchmark (b) itself (that fetch and pmExtractValue + dref of every value), the wall and
CPU seconds per pmNewContext (connect, greeting, CREDS, the TLS handshake), and the
number of values a fetch brings. Run under /usr/bin/python3 it measures the official
binding (libpcp); under this package's interpreter, pcp-native. Imports no pcp until
run, so the interpreter decides which binding it gets.
"""
from __future__ import annotations

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_live  # noqa: E402  (the workloads of the live benchmarks; imports no pcp)

METRICS = ref_live.EXTRACT_METRICS


def main(spec: str, fetches: int, contexts: int) -> dict:
    from pcp import pmapi
    import cpmapi as c_api

    ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, spec)
    pmids = ctx.pmLookupName(METRICS)
    res = ctx.pmFetch(pmids)
    nvalues = sum(res.contents.get_numval(i) for i in range(res.contents.numpmid))
    ctx.pmFreeResult(res)
    for _ in range(20):                         # warm up
        ctx.pmFreeResult(ctx.pmFetch(pmids))
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for _ in range(fetches):
        ctx.pmFreeResult(ctx.pmFetch(pmids))
    fetch_cpu = (time.process_time() - cpu0) / fetches
    fetch_wall = (time.perf_counter() - wall0) / fetches
    # benchmark (b)'s workload: the fetch and pmExtractValue + dref of every value
    types = ref_live.desc_types(ctx.pmLookupDescs(pmids))
    rounds = max(1, fetches // 4)
    cpu0 = time.process_time()
    for _ in range(rounds):
        ref_live.op_extract(ctx, pmids, types)
    extract_cpu = (time.process_time() - cpu0) / rounds
    del ctx
    walls, cpus = [], []
    for _ in range(contexts):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        c = pmapi.pmContext(c_api.PM_CONTEXT_HOST, spec)
        walls.append(time.perf_counter() - wall0)
        cpus.append(time.process_time() - cpu0)
        del c
    walls.sort()
    cpus.sort()
    return {"values": nvalues, "fetch_cpu": fetch_cpu, "fetch_wall": fetch_wall,
            "extract_cpu": extract_cpu,
            "connect_wall": walls[len(walls) // 2], "connect_cpu": cpus[len(cpus) // 2]}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))))
