#!/usr/bin/env python3
"""A pmval-style script written for the official pcp.pmapi: it runs unchanged on pcp-native.

Usage: pmfetch.py [-h HOST] [-s SAMPLES] [-t INTERVAL] [METRIC ...]
"""
import argparse
import time

from pcp import pmapi
import cpmapi as c_api

DEFAULT_METRICS = ["sample.long.one", "sample.colour", "sample.string.hullo",
                   "sample.double.bin", "kernel.all.load", "hinv.ncpu"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, add_help=False)
    parser.add_argument("-h", "--host", default="local:")
    parser.add_argument("-s", "--samples", type=int, default=2)
    parser.add_argument("-t", "--interval", type=float, default=1.0)
    parser.add_argument("metrics", nargs="*", default=DEFAULT_METRICS)
    args = parser.parse_args()

    ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, args.host)
    print("host: %s" % ctx.pmGetContextHostName())
    pmids = ctx.pmLookupName(args.metrics, relaxed=1)
    names = [m for m, p in zip(args.metrics, pmids) if p != c_api.PM_ID_NULL]
    pmids = [p for p in pmids if p != c_api.PM_ID_NULL]
    descs = ctx.pmLookupDescs(pmids)
    for sample in range(args.samples):
        result = ctx.pmFetch(pmids)
        print("-- sample %d at %s" % (sample + 1, result.contents.timestamp))
        for i, name in enumerate(names):
            desc = descs[i].contents
            numval = result.contents.get_numval(i)
            if numval < 0:
                print("%-24s %s" % (name, pmapi.pmErr(numval)))
                continue
            units = ctx.pmUnitsStr(desc.units)
            for j in range(numval):
                atom = ctx.pmExtractValue(result.contents.get_valfmt(i),
                                          result.contents.get_vlist(i, j),
                                          desc.type, desc.type)
                inst = result.contents.get_inst(i, j)
                label = name
                if desc.indom != c_api.PM_INDOM_NULL:
                    label += '["%s"]' % ctx.pmNameInDom(desc, inst)
                print("%-40s %s %s" % (label, atom.dref(desc.type), units))
        ctx.pmFreeResult(result)
        if sample + 1 < args.samples:
            time.sleep(args.interval)


if __name__ == "__main__":
    main()
