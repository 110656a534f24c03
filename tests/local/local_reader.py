"""Reads a PM_CONTEXT_LOCAL through every call a client makes, on whichever binding
imports as pcp.pmapi, and prints one JSON image. Run on both bindings by
test_local_context.py with the same environment (PCP_PMCDCONF_PATH names the table).

LOCAL_READER_SPEC (JSON) says what to read:
  options     argv for pmGetOptionsFromList before the context opens (e.g. -K specs)
  subtrees    PMNS subtrees to walk (pmTraversePMNS), every leaf read in full
  walk        subtrees whose traversal alone is compared
  names       more names to look up one at a time (errors recorded)
  values      leaves whose values are compared (the others: count and types only)
  pmids       pmids to ask pmNameAll / pmLookupDesc of directly
  children    names to ask pmGetChildrenStatus of
  store       [name, value] pairs to pmStore (32-bit in-situ metrics), then read back
  fetch_all   names fetched in one pmFetch (several domains, unknown ones)
"""
import json
import os
import sys

from pcp import pmapi
import cpmapi as c_api

SPEC = json.loads(os.environ.get("LOCAL_READER_SPEC", "{}"))
OUT = {}


def err(e):
    if isinstance(e, pmapi.pmErr):
        return {"pmErr": e.args[0] if e.args else None}
    return {"exc": type(e).__name__, "str": str(e)}


def catch(fn, *args):
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - every failure is part of the image
        return err(e)


def value_image(ctx, result, i, desc):
    out = []
    for j in range(result.contents.get_numval(i)):
        inst = result.contents.get_inst(i, j)
        if desc.type in (c_api.PM_TYPE_AGGREGATE, c_api.PM_TYPE_AGGREGATE_STATIC,
                         c_api.PM_TYPE_EVENT, c_api.PM_TYPE_HIGHRES_EVENT):
            vp = result.contents.get_vlist(i, j)
            block = vp.value.pval.contents
            out.append([inst, "block", block.vtype, block.vlen])
            continue
        atom = ctx.pmExtractValue(result.contents.get_valfmt(i), result.contents.get_vlist(i, j),
                                  desc.type, desc.type)
        v = atom.dref(desc.type)
        if isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        if isinstance(v, float):
            v = repr(v)
        out.append([inst, v])
    return out


def _desc(d):
    return [int(d.pmid), d.type, int(d.indom), d.sem, str(d.units)]


def read_metric(ctx, name, want_values):
    img = {}
    try:
        pmids = ctx.pmLookupName(name)
    except Exception as e:  # noqa: BLE001
        return {"lookup": err(e)}
    pmid = pmids[0]
    img["pmid"] = int(pmid)
    try:
        descs = ctx.pmLookupDescs(pmids)
        dp = descs[0]
        d = dp.contents
        img["desc"] = _desc(d)
    except Exception as e:  # noqa: BLE001
        img["desc"] = err(e)
        return img
    img["names"] = catch(lambda: sorted(ctx.pmNameAll(pmid)))
    img["oneline"] = catch(lambda: ctx.pmLookupText(pmid))
    img["help"] = catch(lambda: ctx.pmLookupText(pmid, c_api.PM_TEXT_HELP))
    img["labels"] = catch(lambda: ctx.pmLookupLabels(pmid))
    if d.indom != c_api.PM_INDOM_NULL:
        img["indom"] = catch(lambda: [list(x) for x in ctx.pmGetInDom(dp)])
        img["indom_text"] = catch(lambda: ctx.pmLookupInDomText(dp))
        img["instlabels"] = catch(lambda: {str(k): v for k, v in
                                           ctx.pmGetInstancesLabels(d.indom).items()})
    try:
        result = ctx.pmFetch(pmids)
        n = result.contents.get_numval(0)
        img["numval"] = n if n <= 0 or want_values else ("some" if n > 0 else n)
        if n > 0:
            values = value_image(ctx, result, 0, d)
            img["values"] = values if want_values else sorted({type(v[1]).__name__ for v in values})
            if not want_values:
                img["numval"] = "some"
        ctx.pmFreeResult(result)
    except Exception as e:  # noqa: BLE001
        img["fetch"] = err(e)
    return img


def main():
    argv = SPEC.get("options")
    if argv is not None:
        opts = pmapi.pmOptions("K:L")
        opts.pmSetLongOptionSpecLocal()
        opts.pmSetLongOptionLocalPMDA()
        ctx = pmapi.pmContext.fromOptions(opts, ["reader"] + argv)
    else:
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_LOCAL, None)
    OUT["type"] = ctx.type
    OUT["hostname"] = catch(ctx.pmGetContextHostName)
    OUT["pmns_location"] = catch(ctx.pmGetPMNSLocation)
    OUT["context_labels"] = catch(ctx.pmGetContextLabels)
    OUT["set_mode"] = catch(ctx.pmSetMode, c_api.PM_MODE_LIVE, None, 0)
    OUT["set_mode_interp"] = catch(ctx.pmSetMode, c_api.PM_MODE_INTERP, None, 1)
    values = set(SPEC.get("values", ()))
    metrics = {}
    for subtree in SPEC.get("subtrees", ()):
        leaves = []
        sts = catch(ctx.pmTraversePMNS, subtree, leaves.append)
        metrics["traverse " + subtree] = {"sts": sts, "leaves": leaves}
        for leaf in leaves:
            metrics[leaf] = read_metric(ctx, leaf, leaf in values)
    for name in SPEC.get("walk", ()):
        leaves = []
        sts = catch(ctx.pmTraversePMNS, name, leaves.append)
        metrics["walk " + name] = {"sts": sts, "count": len(leaves), "leaves": sorted(leaves)}
    for name in SPEC.get("names", ()):
        metrics[name] = read_metric(ctx, name, name in values)
    OUT["metrics"] = metrics
    OUT["children"] = {n: catch(lambda n=n: [list(x) if x else x for x in ctx.pmGetChildrenStatus(n)])
                       for n in SPEC.get("children", ())}
    OUT["pmids"] = {str(p): {"names": catch(ctx.pmNameAll, p),
                             "desc": catch(lambda p=p: _desc(ctx.pmLookupDesc(p).contents))}
                    for p in SPEC.get("pmids", ())}
    if SPEC.get("fetch_all"):
        names = SPEC["fetch_all"]
        pmids = ctx.pmLookupName(names, relaxed=1)
        descs = ctx.pmLookupDescs(pmids)
        result = ctx.pmFetch(pmids)
        OUT["fetch_all"] = []
        for i in range(result.contents.numpmid):
            n = result.contents.get_numval(i)
            OUT["fetch_all"].append([int(result.contents.get_pmid(i)), n,
                                     value_image(ctx, result, i, descs[i].contents) if n > 0 else None])
        ctx.pmFreeResult(result)
    stores = []
    for name, value in SPEC.get("store", ()):
        # 32-bit in-situ metrics: the new value goes in the fetched result's lval
        pmids = ctx.pmLookupName(name)
        descs = ctx.pmLookupDescs(pmids)
        result = ctx.pmFetch(pmids)
        before = value_image(ctx, result, 0, descs[0].contents) if result.contents.get_numval(0) > 0 else None
        if result.contents.get_numval(0) > 0:
            result.contents.get_vlist(0, 0).value.lval = value
        sts = catch(ctx.pmStore, result)
        ctx.pmFreeResult(result)
        result = ctx.pmFetch(pmids)
        after = value_image(ctx, result, 0, descs[0].contents) if result.contents.get_numval(0) > 0 else None
        ctx.pmFreeResult(result)
        stores.append([name, value, before, sts if isinstance(sts, dict) else "ok", after])
    OUT["stores"] = stores
    print(json.dumps(OUT, sort_keys=True, default=repr))


if __name__ == "__main__":
    main()
