"""A value block whose type is not the metric's: badarchives/logsummary-bug logs
kernel.all.cpu.wait.total (a 32-bit unsigned counter) as a 64-bit block. libpcp swaps a
block by its own type when it reads the record, so the pmValueBlock the caller sees holds
the 64-bit number in host order, and pmExtractValue accepts it only as that type.
pcp-native's pmFetch and pmExtractValue answer as the official binding; its CLI prints
those bytes (tests/cli/test_cli_info_dump.py)."""
import pytest

from support.cliutil import BAD_QA_ARCHIVES, need_qa_archive
from support.difftest import assert_same

pytestmark = [pytest.mark.reference]

SNIPPET = r'''
ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, BASE)
pmids = ctx.pmLookupName(["kernel.all.cpu.wait.total"])
desc = ctx.pmLookupDescs(pmids)[0]
RESULT = []
while True:
    try:
        r = ctx.pmFetch(pmids)
    except pmapi.pmErr as e:
        RESULT.append(["error", e.args[0]])
        break
    c = r.contents
    vset = c.get_vset(0)
    value = c.get_vlist(0, 0)
    block = value.value.pval.contents
    row = [c.timestamp.tv_sec, vset.valfmt, block.vtype, block.vlen,
           ctypes.string_at(ctypes.addressof(block) + 4, block.vlen - 4).hex()]
    for itype in (desc.contents.type, block.vtype):
        for otype in (c_api.PM_TYPE_U32, c_api.PM_TYPE_U64, c_api.PM_TYPE_DOUBLE,
                      c_api.PM_TYPE_STRING):
            try:
                atom = ctx.pmExtractValue(vset.valfmt, value, itype, otype)
                row.append(str(atom.dref(otype)))
            except pmapi.pmErr as e:
                row.append(["error", e.args[0]])
    RESULT.append(row)
    ctx.pmFreeResult(r)
'''


def test_block_of_another_type_as_the_official_binding():
    base = need_qa_archive("logsummary-bug", BAD_QA_ARCHIVES)
    ref = assert_same("BASE = %r\n" % base + SNIPPET)
    assert len(ref) == 3 and ref[0][2] == 3, ref       # two U64 blocks, then the end
