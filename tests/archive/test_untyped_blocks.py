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


def same_on_both_sides(program: str, base: str) -> list:
    """The program's JSON rows on the official binding, checked equal to ours."""
    ref = difftest.run_script(program, [base], False)
    ours = difftest.run_script(program, [base], True)
    assert ref["status"] == 0, ref["stderr"]
    assert ours["status"] == 0, ours["stderr"]
    ref_rows = json.loads(ref["stdout"])
    assert json.loads(ours["stdout"]) == ref_rows
    return ref_rows


@pytest.mark.parametrize("version", [2, 3])
def test_untyped_blocks_read_as_libpcp_reads_them(reference_binding, tmp_path, version):
    ref_rows = same_on_both_sides(PROGRAM, _archive(tmp_path, version))
    # the typed twins read as written; the untyped ones as libpcp reads them (not so)
    assert ref_rows[4][0] == "1234567890123" and ref_rows[0][0] != "1234567890123"


# PM_MODE_INTERP over the same kind of blocks: two records a second apart, counters
# (interpolated between them) and instantaneous values (copied), untyped and typed
# twins. libpcp interpolates and copies the numbers as its reader left them: the
# untyped ones in host order.
SECOND = [(1, 2, struct.pack(">q", 1234567990123)), (2, 3, struct.pack(">Q", 2 ** 40 + 1007)),
          (3, 5, struct.pack(">d", 4.5)), (4, 4, struct.pack(">f", 1.75))]


def _interp_archive(tmp_path, version: int) -> str:
    base = str(tmp_path / ("untyped_interp%d" % version))
    meta = ab.label(version, -1, SEC, 0)
    for item, mtype, _ in METRICS:
        for offset, sem in ((0, 1), (10, 1), (20, 3), (30, 3)):
            meta += ab.desc_record(_pmid(item + offset), mtype, NULL_INDOM, sem, 0,
                                   [b"old.m%d" % (item + offset)])
    records = b""
    for k, values in enumerate((METRICS, SECOND)):
        sets = []
        for item, mtype, payload in values:
            for offset, vtype in ((0, 0), (10, mtype), (20, 0), (30, mtype)):
                sets.append((_pmid(item + offset), 1, 1, [(-1, (vtype, payload))]))
        records += ab.data_record(version, SEC + 1 + k, 0, sets)
    with open(base + ".meta", "wb") as f:
        f.write(meta)
    with open(base + ".0", "wb") as f:
        f.write(ab.label(version, 0, SEC, 0) + records)
    return base


INTERP_PROGRAM = r'''
import json, sys
from pcp import pmapi
import cpmapi as c
ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, sys.argv[1])
names = ["old.m%d" % (i + o) for o in (0, 10, 20, 30) for i in range(1, 5)]
pmids = ctx.pmLookupName(names)
descs = ctx.pmLookupDescs(pmids)
out = []
ctx.pmSetMode(c.PM_MODE_INTERP, pmapi.timeval(START, 0), 250)
for step in range(5):
    r = ctx.pmFetch(pmids)
    row = []
    for i in range(r.contents.numpmid):
        itype = descs[i].contents.type
        if r.contents.get_numval(i) < 1:
            row.append(None)
            continue
        atom = ctx.pmExtractValue(r.contents.get_valfmt(i), r.contents.get_vlist(i, 0),
                                  itype, c.PM_TYPE_DOUBLE)
        row.append(repr(atom.d))
    out.append(row)
print(json.dumps(out))
'''.replace("START", str(SEC + 1))


@pytest.mark.parametrize("version", [2, 3])
def test_untyped_blocks_interpolated_as_libpcp_does(reference_binding, tmp_path, version):
    base = _interp_archive(tmp_path, version)
    ref_rows = same_on_both_sides(INTERP_PROGRAM, base)
    # the typed counters interpolate as written (halfway: the mean)
    assert ref_rows[2][6] == repr(3.5) and ref_rows[2][2] != repr(3.5)
    # and the bulk grid read gives the same numbers
    from pcp import bulk
    names = ["old.m%d" % (i + o) for o in (0, 10, 20, 30) for i in range(1, 5)]
    cols = bulk.read_archive(base, names, start=SEC + 1, interval=0.25)
    for r, row in enumerate(ref_rows):
        for name, want in zip(names, row):
            ma = cols[name]
            assert bool(ma.present[r, 0]) == (want is not None), (r, name)
            if want is not None:
                assert repr(float(ma.values[r, 0])) == want, (r, name)
