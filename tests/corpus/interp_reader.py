"""Read archives in PM_MODE_INTERP through the official pcp.pmapi of any level and print
what each fetch gave, one JSON line per archive: the INTERP part of sweep_reader.py, for
comparing interpolation between this package at a level and that level's libpcp.

The same file runs under python3-pcp 6.0.3, 6.3.8 and 7.2.2 and under this package at
any level: it uses the high-resolution calls (pmSetModeHighRes, pmFetchHighRes) where the
binding has them (6.x) and their 7.x names otherwise (pmSetMode and pmFetch take and give
timespecs there), so every side images times as [sec, nsec].

    python interp_reader.py ARCHIVE...      (or: python - ARCHIVE... < interp_reader.py)

For each archive: ``BEGIN <archive>``, the image {"archive": ..., "image": {...}} and
``CLOSED <archive>``, as sweep_reader.py prints them (archive_corpus pins a reader that
dies to its archive). Every metric of the archive is fetched at once, from the start, at
two steps (span/25 and span/4, in nanoseconds), FETCHES fetches each; each
fetch images, per value set, numval and its first VALUES instances and values. A failing
call is imaged as its error code.
"""

import json
import math
import os
import sys
from ctypes import c_uint

from pcp import pmapi
import cpmapi as c_api

FETCHES = int(os.environ.get("SWEEP_FETCHES", "27"))
VALUES = int(os.environ.get("SWEEP_VALUES", "32"))
STEPS = (25, 4)
HIGHRES = hasattr(pmapi.pmContext, "pmFetchHighRes")
NUMBERS = (c_api.PM_TYPE_32, c_api.PM_TYPE_U32, c_api.PM_TYPE_64, c_api.PM_TYPE_U64,
           c_api.PM_TYPE_FLOAT, c_api.PM_TYPE_DOUBLE)


def err(e):
    if isinstance(e, pmapi.pmErr):
        return {"error": e.args[0] if e.args else None}
    return {"exception": type(e).__name__, "str": str(e)[:200]}


def number(x):
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return {"float": repr(x)}
    return x


class Reader:
    def __init__(self, ctx):
        self.ctx = ctx
        self.types = {}

    def span(self):
        """The archive's start and end, as [sec, nsec] each."""
        if HIGHRES:
            start = self.ctx.pmGetHighResArchiveLabel().start
            end = self.ctx.pmGetHighResArchiveEnd()
        else:
            start = self.ctx.pmGetArchiveLabel().start
            end = self.ctx.pmGetArchiveEnd()
        return (start.tv_sec, start.tv_nsec), (end.tv_sec, end.tv_nsec)

    def set_interp(self, start, step_ns):
        origin = pmapi.timespec(start[0], start[1])
        delta = pmapi.timespec(step_ns // 10**9, step_ns % 10**9)
        if HIGHRES:
            self.ctx.pmSetModeHighRes(c_api.PM_MODE_INTERP, origin, delta)
        else:
            self.ctx.pmSetMode(c_api.PM_MODE_INTERP, origin, delta)

    def fetch(self, ids):
        return self.ctx.pmFetchHighRes(ids) if HIGHRES else self.ctx.pmFetch(ids)

    def value(self, valfmt, vl, mtype):
        if mtype not in NUMBERS and mtype != c_api.PM_TYPE_STRING:
            blk = vl.value.pval.contents
            return {"block": [blk.vtype, blk.vlen]}
        try:
            return number(self.ctx.pmExtractValue(valfmt, vl, mtype, mtype).dref(mtype))
        except Exception as e:      # imaged like a value
            return err(e)

    def result(self, res):
        c = res.contents
        sets = []
        for i in range(c.numpmid):
            numval = c.get_numval(i)
            vs = {"pmid": c.get_pmid(i), "numval": numval}
            sets.append(vs)
            if numval <= 0:
                continue
            valfmt = c.get_valfmt(i)
            mtype = self.types.get(c.get_pmid(i), c_api.PM_TYPE_UNKNOWN)
            vs["values"] = [[c.get_inst(i, j), self.value(valfmt, c.get_vlist(i, j), mtype)]
                            for j in range(min(numval, VALUES))]
        return {"t": [c.timestamp.tv_sec, c.timestamp.tv_nsec], "sets": sets}

    def read(self, img):
        names = []
        try:
            self.ctx.pmTraversePMNS("", names.append)
            ids = [p for p in self.ctx.pmLookupName(names) if p != c_api.PM_ID_NULL]
            pmids = sorted(set(ids))
            for d in self.ctx.pmLookupDescs(pmids):
                self.types[d.contents.pmid] = d.contents.type
            start, end = self.span()
        except Exception as e:
            img["metadata"] = err(e)
            return
        img["metrics"] = len(pmids)
        if not pmids:
            return
        span_ns = max((end[0] - start[0]) * 10**9 + end[1] - start[1], 1)
        request = (c_uint * len(pmids))(*pmids)
        for parts in STEPS:
            step = max(span_ns // parts, 1)
            out = img["interp_%d" % parts] = []
            try:
                self.set_interp(start, step)
            except Exception as e:
                out.append(err(e))
                continue
            for _ in range(min(FETCHES, parts + 2)):
                try:
                    out.append(self.result(self.fetch(request)))
                except Exception as e:
                    out.append(err(e))
                    break


# sweep() and main() print what sweep_reader.py's do (archive_corpus reads both), here
# again because this file runs alone in a root's python3 (on its stdin), with no
# checkout to import from

def sweep(path):
    """(image, context): the context is closed after the image is out (libpcp dies in
    pmDestroyContext on some archives)."""
    img = {}
    try:
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, path)
    except Exception as e:
        img["open"] = err(e)
        return img, None
    Reader(ctx).read(img)
    return img, ctx


def main(paths):
    for path in paths:
        print("BEGIN " + path, flush=True)
        img, ctx = sweep(path)
        print(json.dumps({"archive": path, "image": img}, sort_keys=True), flush=True)
        del ctx                 # pmDestroyContext
        print("CLOSED " + path, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
