#!/usr/bin/env python3
"""Many-host polling workload: a sequential loop over N contexts, as a user of the
official binding writes it (pmFetch, pmExtractValue + dref of every value, free).

Run as a script it times one poll of N contexts with whatever ``pcp.pmapi`` the
interpreter imports and prints one JSON object (ref_live.py's method and fields;
``units_per_op`` is N, so the rate is fetches/s). test_bench_fleet.py runs it under
``/usr/bin/python3 -I`` for the official binding and imports it for ours.

Usage: ref_fleet.py [--hosts N] [--host SPEC] [--rounds R] [--round-seconds S] [metric ...]
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ref_live  # noqa: E402  (imports no pcp)

# A typical host-overview set: about a dozen values from the linux PMDA.
METRICS = ["kernel.all.load", "kernel.all.cpu.user", "kernel.all.cpu.sys", "mem.util.free",
           "mem.util.used", "network.interface.in.bytes", "disk.dev.read_bytes"]


class Poll:
    """N contexts, their pmids and types looked up once (not timed)."""

    def __init__(self, pmapi, host, n, metrics):
        self.ctxs = [pmapi.pmContext(target=host) if host != "local:" else pmapi.pmContext()
                     for _ in range(n)]
        self.setup = []
        for ctx in self.ctxs:
            pmids = ctx.pmLookupName(metrics)
            types = ref_live.desc_types(ctx.pmLookupDescs(pmids))
            self.setup.append((ctx, pmids, types))

    def op(self):
        """One poll: every context fetched in turn, every value extracted."""
        for ctx, pmids, types in self.setup:
            result = ctx.pmFetch(pmids)
            res = result.contents
            for i in range(res.numpmid):
                mtype = types[i]
                valfmt = res.get_valfmt(i)
                for j in range(res.get_numval(i)):
                    ctx.pmExtractValue(valfmt, res.get_vlist(i, j), mtype, mtype).dref(mtype)
            ctx.pmFreeResult(result)

    def close(self):
        for ctx in self.ctxs:
            del ctx
        self.ctxs = []
        self.setup = []


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("metrics", nargs="*")
    ap.add_argument("--hosts", type=int, default=100)
    ap.add_argument("--host", default="local:")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--round-seconds", type=float, default=0.2)
    ap.add_argument("--impl-label", default="reference")
    args = ap.parse_args(argv)
    out = {"impl": args.impl_label, "bench": "fleet", "hosts": args.hosts,
           "python": sys.executable, "python_version": sys.version.split()[0]}
    try:
        from pcp import pmapi
        out["pmapi_file"] = getattr(pmapi, "__file__", None)
        poll = Poll(pmapi, args.host, args.hosts, args.metrics or METRICS)
        out["units_per_op"] = args.hosts
        out.update(ref_live.timed_loop(poll.op, args.rounds, args.round_seconds))
    except Exception as exc:  # report, don't crash: the caller shows it
        out["error"] = "%s: %s" % (type(exc).__name__, exc)
        print(json.dumps(out))
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
