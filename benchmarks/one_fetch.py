"""The shortest PCP program: import, a context, one pmLookupName and one pmFetch, one
value printed (fixed_costs.py runs it as a process under each binding).

    one_fetch.py live          (local pmcd, kernel.all.load)
    one_fetch.py ARCHIVE       (the same metric from an archive's first record)

Imports nothing but the binding, so that its run time is the binding's start-up."""
import sys

import cpmapi as c_api
from pcp import pmapi

if sys.argv[1] == "live":
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, "local:")
else:
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, sys.argv[1])
pmids = ctx.pmLookupName(["kernel.all.load"])
descs = ctx.pmLookupDescs(pmids)
result = ctx.pmFetch(pmids)
vset = result.contents.get_vset(0)
print(vset.numval, ctx.pmExtractValue(vset.valfmt, vset.vlist[0], descs[0].type,
                                      c_api.PM_TYPE_FLOAT).f > -1)
ctx.pmFreeResult(result)
