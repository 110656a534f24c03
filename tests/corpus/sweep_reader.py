"""Read archives through every reading call of the official pcp.pmapi and print what
each call gave, one JSON line per archive.

The same file runs under both bindings: the official python3-pcp (on /usr/bin/python3)
and this package (the venv's interpreter); test_archive_sweep.py compares the lines.
It uses only the official API, plus libpcp's pmUnpack[HighRes]EventRecords through
ctypes on the official side, whose module does not wrap them.

It runs under python3-pcp 6.0.3, 6.3.8 and 7.2.2 and this package at any level
(test_sweep_levels.py): where 7.x renamed a call it uses the name the binding has (7.x's
pmGetArchiveLabel, pmGetArchiveEnd, pmSetMode and pmFetch are 6.x's ...HighRes... ones,
timespecs everywhere), so each level is imaged in its own binding's terms.

    python sweep_reader.py ARCHIVE...      (or: python - ARCHIVE... < sweep_reader.py)

For each archive it prints ``BEGIN <archive>`` (so that a reader that dies, as libpcp
does on some archives, is pinned to its archive), the image as JSON: {"archive": ...,
"image": {section: ...}}, and ``CLOSED <archive>`` once its context is destroyed. Every call's failure is imaged as its error
code, so an error is compared like a value.

Bounds (each read mode stops at its limit): FETCHES results per mode, the first
VALUES values of each value set, EVENT_RECORDS records of each event array.
"""

import ctypes
import json
import math
import os
import sys
from ctypes import POINTER, byref, c_int, c_uint

from pcp import pmapi
import cpmapi as c_api

FETCHES = int(os.environ.get("SWEEP_FETCHES", "6"))
VALUES = int(os.environ.get("SWEEP_VALUES", "64"))
EVENT_RECORDS = 16
OURS = hasattr(pmapi, "__implementation__")
# 6.x: the ...HighRes... calls beside timeval ones; 7.x: one set of names, timespecs
HIGHRES_NAMES = hasattr(pmapi.pmContext, "pmGetHighResArchiveLabel")

EVENT_TYPES = (c_api.PM_TYPE_EVENT, c_api.PM_TYPE_HIGHRES_EVENT)
BLOCK_TYPES = (c_api.PM_TYPE_AGGREGATE, c_api.PM_TYPE_AGGREGATE_STATIC)
# event.flags and event.missed, the anonymous metrics of event records (U32 both)
ANON_TYPES = {0x7FC00001: c_api.PM_TYPE_U32, 0x7FC00002: c_api.PM_TYPE_U32}


def plain(x):
    """JSON-able image that keeps floats exact (repr round-trips) and marks NaN/inf."""
    if isinstance(x, float):
        if math.isnan(x) or math.isinf(x):
            return {"float": repr(x)}
        return x
    if isinstance(x, bytes):
        return {"bytes": x.hex()}
    if isinstance(x, (list, tuple)):
        return [plain(i) for i in x]
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}
    return x


def err(e):
    if isinstance(e, pmapi.pmErr):
        return {"error": e.args[0] if e.args else None}
    return {"exception": type(e).__name__, "str": str(e)[:200]}


CALLS = [0]                     # reading calls made for the archive being read


def catch(fn, *args):
    CALLS[0] += 1
    try:
        return plain(fn(*args))
    except Exception as e:      # pmErr, and anything else, imaged
        return err(e)


class Reader:
    def __init__(self, ctx):
        self.ctx = ctx
        self.types = dict(ANON_TYPES)

    # ---- metadata -------------------------------------------------------------------

    def label(self):
        lab = (self.ctx.pmGetHighResArchiveLabel() if HIGHRES_NAMES
               else self.ctx.pmGetArchiveLabel())
        return {"magic": lab.magic, "pid": lab.pid_t,
                "start": [lab.start.tv_sec, lab.start.tv_nsec],
                "host": lab.get_hostname(), "tz": lab.get_timezone(),
                "zoneinfo": lab.get_zoneinfo()}

    def end(self):
        ts = (self.ctx.pmGetHighResArchiveEnd() if HIGHRES_NAMES
              else self.ctx.pmGetArchiveEnd())
        return [ts.tv_sec, ts.tv_nsec]

    def names(self):
        found = []
        self.ctx.pmTraversePMNS("", found.append)
        return found

    def desc(self, pmid):
        d = self.ctx.pmLookupDesc(pmid)
        u = d.contents.units
        self.types[pmid] = d.contents.type
        return {"type": d.contents.type, "indom": d.contents.indom, "sem": d.contents.sem,
                "units": [u.dimSpace, u.dimTime, u.dimCount, u.scaleSpace, u.scaleTime,
                          u.scaleCount]}

    @staticmethod
    def desc_tuple(d):
        c = d.contents
        return [c.pmid, c.type, c.indom, c.sem]

    def metadata(self, img):
        img["label"] = catch(self.label)
        img["end"] = catch(self.end)
        names = catch(self.names)
        img["names"] = names
        if not isinstance(names, list):
            return []
        pmids = []
        if names:
            ids = catch(lambda: list(self.ctx.pmLookupName(names)))
            img["pmids"] = ids
            if isinstance(ids, list):
                pmids = sorted({p for p in ids if p != c_api.PM_ID_NULL})
        metrics = {}
        descs = {}
        for pmid in pmids:
            m = metrics[str(pmid)] = {}
            m["desc"] = catch(self.desc, pmid)
            if "type" in m["desc"]:
                descs[pmid] = self.ctx.pmLookupDesc(pmid)
            m["names"] = catch(lambda: sorted(self.ctx.pmNameAll(pmid)))
            m["oneline"] = catch(self.ctx.pmLookupText, pmid, c_api.PM_TEXT_ONELINE)
            m["help"] = catch(self.ctx.pmLookupText, pmid, c_api.PM_TEXT_HELP)
            m["labels"] = catch(self.ctx.pmLookupLabels, pmid)
        img["metrics"] = metrics
        img["host"] = catch(self.ctx.pmGetContextHostName)
        img["top"] = catch(self.ctx.pmGetChildrenStatus, "")
        img["descs"] = catch(lambda: [self.desc_tuple(d) for d in
                                      self.ctx.pmLookupDescs(pmids)]) if pmids else []
        img["context_labels"] = catch(self.ctx.pmGetContextLabels)
        indoms = {}
        for pmid, d in descs.items():
            indom = d.contents.indom
            if indom == c_api.PM_INDOM_NULL or str(indom) in indoms:
                continue
            i = indoms[str(indom)] = {}
            i["instances"] = catch(self.ctx.pmGetInDomArchive, d)
            if isinstance(i["instances"], list) and i["instances"][0]:
                # name <-> instance both ways for a few, as tools resolve -i options
                insts, names = i["instances"][0][:4], i["instances"][1][:4]
                i["by_inst"] = [catch(self.ctx.pmNameInDomArchive, d, n) for n in insts]
                i["by_name"] = [catch(self.ctx.pmLookupInDomArchive, d, n) for n in names]
            i["current"] = catch(self.ctx.pmGetInDom, d)
            i["oneline"] = catch(self.ctx.pmLookupInDomText, d, c_api.PM_TEXT_ONELINE)
            i["help"] = catch(self.ctx.pmLookupInDomText, d, c_api.PM_TEXT_HELP)
            i["labels"] = catch(self.ctx.pmGetInstancesLabels, indom)
        img["indoms"] = indoms
        return sorted(descs)

    # ---- values ---------------------------------------------------------------------

    def value(self, valfmt, vl, mtype):
        if valfmt != c_api.PM_VAL_INSITU:
            blk = vl.value.pval.contents
            head = [blk.vtype, blk.vlen]
            if blk.vtype in EVENT_TYPES or mtype in BLOCK_TYPES:
                data = ctypes.string_at(ctypes.addressof(blk) + 4, max(blk.vlen - 4, 0))
                return {"block": head, "hex": data[:256].hex()}
        else:
            head = None
        try:
            atom = self.ctx.pmExtractValue(valfmt, vl, mtype, mtype)
            v = plain(atom.dref(mtype))
        except Exception as e:
            v = err(e)
        return v if head is None else {"block": head, "value": v}

    def vsets(self, res, highres_events=True):
        c = res.contents
        out = []
        for i in range(c.numpmid):
            pmid = c.get_pmid(i)
            numval = c.get_numval(i)
            vs = {"pmid": pmid, "numval": numval}
            out.append(vs)
            if numval <= 0:
                continue
            valfmt = c.get_valfmt(i)
            vs["valfmt"] = valfmt
            mtype = self.types.get(pmid)
            if mtype is None:
                mtype = catch(self.desc, pmid).get("type", c_api.PM_TYPE_UNKNOWN)
            vals = []
            for j in range(min(numval, VALUES)):
                vl = c.get_vlist(i, j)
                v = {"inst": c.get_inst(i, j)}
                try:
                    v["v"] = self.value(valfmt, vl, mtype)
                except Exception as e:
                    v["v"] = err(e)
                if mtype in EVENT_TYPES and highres_events:
                    v["events"] = self.events(c.get_vset(i), j, mtype)
                vals.append(v)
            vs["values"] = vals
        return out

    def result(self, res, highres=False):
        c = res.contents
        ts = c.timestamp
        # 7.x's pmFetch gives a timespec, its pmUnpackEventRecords a timeval
        stamp = [ts.tv_sec, ts.tv_nsec if highres or not hasattr(ts, "tv_usec")
                 else ts.tv_usec]
        return {"t": stamp, "numpmid": c.numpmid, "sets": self.vsets(res)}

    # ---- event records --------------------------------------------------------------

    def events(self, vset, j, mtype):
        highres = mtype == c_api.PM_TYPE_HIGHRES_EVENT
        CALLS[0] += 1
        try:
            if OURS:
                unpack = (self.ctx.pmUnpackHighResEventRecords if highres
                          else self.ctx.pmUnpackEventRecords)
                records = unpack(vset, j)
                return self.records(records, len(records), highres)
            return self.libpcp_records(vset, j, highres)
        except Exception as e:
            return err(e)

    def libpcp_records(self, vset, j, highres):
        lib = pmapi.LIBPCP
        # 7.x renamed them: pmResult is the timespec one, pmResult_v2 the timeval one
        kind = (getattr(pmapi, "pmHighResResult", pmapi.pmResult) if highres
                else getattr(pmapi, "pmResult_v2", pmapi.pmResult))
        rap = POINTER(POINTER(kind))()
        unpack = lib.pmUnpackHighResEventRecords if highres else lib.pmUnpackEventRecords
        unpack.argtypes = [POINTER(pmapi.pmValueSet), c_int, POINTER(POINTER(POINTER(kind)))]
        n = unpack(vset, j, byref(rap))
        if n < 0:
            raise pmapi.pmErr(n)
        try:
            return self.records([rap[r] for r in range(n)], n, highres)
        finally:
            free = lib.pmFreeHighResEventResult if highres else lib.pmFreeEventResult
            free.argtypes = [POINTER(POINTER(kind))]
            free(rap)

    def records(self, records, n, highres):
        out = {"n": n, "records": []}
        for rec in records[:EVENT_RECORDS]:
            out["records"].append(self.result(rec, highres))
        return out

    # ---- read modes -----------------------------------------------------------------

    def fetches(self, pmids, fetch):
        out = []
        for _ in range(FETCHES):
            CALLS[0] += 1
            try:
                out.append(self.result(fetch(pmids)))
            except Exception as e:
                out.append(err(e))
                break
        return out

    def modes(self, img, pmids):
        try:
            start = self.ctx.pmGetArchiveLabel().start
            end = self.ctx.pmGetArchiveEnd()
        except Exception as e:
            img["modes"] = err(e)
            return
        ids = (c_uint * len(pmids))(*pmids)
        fetch = self.ctx.pmFetch
        usec = (lambda t: t.tv_usec) if HIGHRES_NAMES else (lambda t: t.tv_nsec // 1000)
        span_ms = max(int((end.tv_sec - start.tv_sec) * 1000 +
                          (usec(end) - usec(start)) / 1000), 1)
        plans = [("forw", c_api.PM_MODE_FORW, start, 0),
                 ("back", c_api.PM_MODE_BACK, end, 0),
                 ("interp_fine", c_api.PM_MODE_INTERP, start, max(span_ms // 40, 1)),
                 ("interp_coarse", c_api.PM_MODE_INTERP, start, max(span_ms // 4, 1))]
        for name, mode, when, delta in plans:
            CALLS[0] += 1
            if not HIGHRES_NAMES and delta:
                # 7.x's pmSetMode takes its step as a timespec, 6.x's in milliseconds
                delta = pmapi.timespec(delta // 1000, delta % 1000 * 1000000)
            try:
                self.ctx.pmSetMode(mode, when, delta)
            except Exception as e:
                img[name] = err(e)
                continue
            img[name] = self.fetches(ids, fetch)
        try:
            self.ctx.pmSetMode(c_api.PM_MODE_FORW, start, 0)
            img["fetch_archive"] = self.fetches(None, lambda _: self.ctx.pmFetchArchive())
        except Exception as e:
            img["fetch_archive"] = err(e)


def sweep(path):
    """(image, context): the context is returned to be closed after the image is out,
    as libpcp crashes in pmDestroyContext on some archives."""
    img = {}
    CALLS[0] = 1
    try:
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, path)
    except Exception as e:
        img["open"] = err(e)
        img["calls"] = CALLS[0]
        return img, None
    r = Reader(ctx)
    pmids = r.metadata(img)
    if pmids:
        r.modes(img, pmids)
    img["calls"] = CALLS[0]
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
