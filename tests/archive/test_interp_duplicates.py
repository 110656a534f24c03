"""A pmid repeated in one PM_MODE_INTERP pmFetch request. libpcp 6.0.3 never returns
from such a fetch (its list of wanted instances is linked through the instances
themselves, and an instance listed twice makes the list a loop): the official binding
hangs on the first fetch. pcp-native returns, and gives every copy of the pmid the value
set the pmid gets when it is asked for once (as libpcp's FORW/BACK fetches do with
repeats); these tests pin both facts."""
import json
import subprocess

import pytest

from support import archives, difftest

pytestmark = [pytest.mark.pmcd]

PROGRAM = r'''
import json, sys, ctypes
from pcp import pmapi
import cpmapi as c
ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, sys.argv[1])
names = sys.argv[2].split(",")
pmids = list(ctx.pmLookupName(names))
types = [d.type for d in ctx.pmLookupDescs(pmids)]
request = (ctypes.c_uint * len(pmids))(*pmids)
ctx.pmSetMode(c.PM_MODE_INTERP, ctx.pmGetArchiveLabel().start, 150)
out = []
for step in range(int(sys.argv[3])):
    try:
        r = ctx.pmFetch(request)
    except pmapi.pmErr as e:
        out.append(e.args[0])
        continue
    row = []
    for i in range(r.contents.numpmid):
        n = r.contents.get_numval(i)
        vals = []
        for k in range(max(n, 0)):
            vl = r.contents.get_vlist(i, k)
            vals.append([vl.inst, ctx.pmExtractValue(r.contents.get_valfmt(i), vl, types[i],
                                                     c.PM_TYPE_DOUBLE).d])
        row.append([r.contents.get_pmid(i), n, sorted(vals)])
    out.append(row)
    ctx.pmFreeResult(r)
print(json.dumps(out))
'''

SINGLE = "sample.long.bin_ctr,sample.seconds,sample.colour"
REPEATED = "sample.long.bin_ctr,sample.seconds,sample.long.bin_ctr,sample.colour,sample.seconds"


@pytest.mark.parametrize("variant", ["v2", "v3", "marks"])
def test_repeated_pmids_get_the_value_sets_of_single_ones(variant):
    path = archives.get_corpus()[variant]
    once = difftest.run_script(PROGRAM, [path, SINGLE, "30"], True)
    twice = difftest.run_script(PROGRAM, [path, REPEATED, "30"], True)
    assert once["status"] == 0 and twice["status"] == 0, (once["stderr"], twice["stderr"])
    single, repeated = json.loads(once["stdout"]), json.loads(twice["stdout"])
    order = [0, 1, 0, 2, 1]         # REPEATED's names as positions in SINGLE
    assert len(single) == len(repeated) == 30
    values = 0
    for a, b in zip(single, repeated):
        if isinstance(a, int):
            assert a == b
            continue
        assert b == [a[k] for k in order]
        values += sum(s[1] for s in a if s[1] > 0)
    assert values > 30


@pytest.mark.reference
def test_libpcp_never_returns_from_a_fetch_with_a_repeated_pmid(reference_binding):
    path = archives.get_corpus()["v3"]
    with pytest.raises(subprocess.TimeoutExpired):
        difftest.run_script(PROGRAM, [path, "sample.seconds,sample.seconds", "1"], False,
                            timeout=10)
    # while one copy is fetched at once
    ref = difftest.run_script(PROGRAM, [path, "sample.seconds", "3"], False, timeout=60)
    assert ref["status"] == 0, ref["stderr"]
