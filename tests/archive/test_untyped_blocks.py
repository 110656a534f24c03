"""Value blocks with vtype 0 (archives converted from the v1 format, which did not record
a block's type): libpcp swaps a block out of network order only when its vtype names a
64-bit integer, double or float, and its pmExtractValue accepts vtype 0 as the metric's
own type, so such a number is read as the bytes lie, in host order (byte reversed on a
little-endian host), by pmExtractValue and pmdumplog alike. pcp-native gives libpcp's
numbers; archives written byte by byte, v2 and v3, compared with the official binding."""
import json
import struct

import pytest

from support import archive_bytes as ab
from support import difftest

pytestmark = [pytest.mark.reference]

SEC = 1704412800
NULL_INDOM = 0xFFFFFFFF
# (item, type, big-endian payload): 64, U64, DOUBLE, FLOAT
METRICS = [(1, 2, struct.pack(">q", 1234567890123)), (2, 3, struct.pack(">Q", 2 ** 40 + 7)),
           (3, 5, struct.pack(">d", 2.5)), (4, 4, struct.pack(">f", -1.25))]


def _pmid(item: int) -> int:
    return (29 << 22) | (7 << 10) | item


def _archive(tmp_path, version: int) -> str:
    base = str(tmp_path / ("untyped%d" % version))
    meta = ab.label(version, -1, SEC, 0)
    for item, mtype, _ in METRICS:
        meta += ab.desc_record(_pmid(item), mtype, NULL_INDOM, 3, 0,
                               [b"old.v1.m%d" % item])
        meta += ab.desc_record(_pmid(item + 10), mtype, NULL_INDOM, 3, 0,
                               [b"old.typed.m%d" % item])
    sets = []
    for item, mtype, payload in METRICS:
        sets.append((_pmid(item), 1, 1, [(-1, (0, payload))]))           # vtype 0
        sets.append((_pmid(item + 10), 1, 1, [(-1, (mtype, payload))]))  # typed
    with open(base + ".meta", "wb") as f:
        f.write(meta)
    with open(base + ".0", "wb") as f:
        f.write(ab.label(version, 0, SEC, 0) + ab.data_record(version, SEC + 1, 0, sets))
    return base


PROGRAM = r'''
import json, sys
from pcp import pmapi
import cpmapi as c
ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, sys.argv[1])
names = ["old.v1.m%d" % i for i in range(1, 5)] + ["old.typed.m%d" % i for i in range(1, 5)]
pmids = ctx.pmLookupName(names)
descs = ctx.pmLookupDescs(pmids)
r = ctx.pmFetch(pmids)
out = []
for i in range(r.contents.numpmid):
    row = []
    itype = descs[i].contents.type
    for otype in (itype, c.PM_TYPE_DOUBLE, c.PM_TYPE_64, c.PM_TYPE_STRING):
        try:
            atom = ctx.pmExtractValue(r.contents.get_valfmt(i), r.contents.get_vlist(i, 0),
                                      itype, otype)
            v = atom.dref(otype)
            row.append(repr(v))
        except pmapi.pmErr as e:
            row.append("error %d" % e.args[0])
    out.append(row)
print(json.dumps(out))
'''


@pytest.mark.parametrize("version", [2, 3])
def test_untyped_blocks_read_as_libpcp_reads_them(reference_binding, tmp_path, version):
    base = _archive(tmp_path, version)
    ref = difftest.run_script(PROGRAM, [base], False)
    ours = difftest.run_script(PROGRAM, [base], True)
    assert ref["status"] == 0, ref["stderr"]
    assert ours["status"] == 0, ours["stderr"]
    ref_rows = json.loads(ref["stdout"])
    assert json.loads(ours["stdout"]) == ref_rows
    # the typed twins read as written; the untyped ones as libpcp reads them (not so)
    assert ref_rows[4][0] == "1234567890123" and ref_rows[0][0] != "1234567890123"
