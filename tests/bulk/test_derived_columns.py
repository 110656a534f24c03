"""Derived metrics as columns of pcp.bulk's readers, compared value by value with the
drop-in pmFetch in PM_MODE_FORW over the same archive (every record the fetch returns is
a row of the reader) and with the official binding's pmFetch (run under the system
Python), for the iostat definitions on a Linux archive, the expression language over the
sample PMDA's metrics on the corpus, and operands and instances that appear mid-archive;
every chunk size gives the same values."""
import json
import os
import re
import sys

import pytest

from support import archives, difftest, tool_archive

pytestmark = pytest.mark.pmcd         # the archives are recorded from the local pmcd

# one fetched result `r` into `row`: each metric's sorted [instance, value] pairs (floats
# as hex), for descriptors `descs` (tests/bulk/test_grid_derived.py fetches in INTERP)
ROW_VALUES = r'''
    for i in range(r.numpmid):
        t = descs[i].type
        vals = []
        for j in range(max(r.get_numval(i), 0)):
            v = P.pmExtractValue(r.get_valfmt(i), r.get_vlist(i, j), t, t).dref(t)
            vals.append([r.get_inst(i, j), v.hex() if isinstance(v, float) else
                         v if isinstance(v, str) else int(v)])
        row.append(sorted(vals))
'''

# the archive context of a fetch loop, CONFIG as $PCP_DERIVED_CONFIG, DEFS registered,
# NAMES looked up (pmids, descs)
OPEN_CONTEXT = r'''
os.environ["PCP_DERIVED_CONFIG"] = CONFIG
ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, ARCHIVE)
for name, expr in DEFS:
    ctx.pmRegisterDerived(name, expr)
pmids = ctx.pmLookupName(NAMES)
descs = ctx.pmLookupDescs(pmids)
'''

# the fetch loop, run under the official binding and under this package's drop-in: one
# row per result, its time in microseconds and each metric's (instance, value) pairs
FETCH = r'''
import os
CONFIG, DEFS, ARCHIVE, NAMES = %(args)r
''' + OPEN_CONTEXT + r'''
ctx.pmSetMode(c_api.PM_MODE_FORW, ctx.pmGetArchiveLabel().start, 0)
rows = []
while True:
    try:
        res = ctx.pmFetch(pmids)
    except pmapi.pmErr as e:
        if e.code == c_api.PM_ERR_EOL:
            break
        raise
    r = res.contents
    row = [r.timestamp.tv_sec * 1000000 + r.timestamp.tv_usec]
''' + ROW_VALUES + r'''
    rows.append(row)
    ctx.pmFreeResult(res)
RESULT = {"desc": [[d.type, d.sem, d.indom, int(d.units.dimTime)] for d in descs], "rows": rows}
'''

# the same rows from the bulk reader, for several chunk sizes (OPTIONS: more arguments of
# ArchiveReader, start and end in ns; "times" the rows' times in ns)
BULK = r'''
import os
CONFIG, DEFS, ARCHIVE, NAMES, CHUNKS, OPTIONS = %(args)r
os.environ["PCP_DERIVED_CONFIG"] = CONFIG
from pcp import bulk
ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, ARCHIVE)
for name, expr in DEFS:
    ctx.pmRegisterDerived(name, expr)
def cell(v):
    if isinstance(v, str):
        return v
    return float(v).hex() if isinstance(v, (float, np.floating)) else int(v)
import numpy as np
def dim_time(units):
    field = (units >> 24) & 0xF
    return field - 16 if field & 0x8 else field
for key in ("start", "end"):
    if OPTIONS.get(key) is not None:
        OPTIONS[key] = np.datetime64(OPTIONS[key], "ns")
out = {}
for rows_per_chunk in CHUNKS:
    reader = bulk.ArchiveReader(ARCHIVE, NAMES, chunk_rows=rows_per_chunk, **OPTIONS)
    rows = []
    times_ns = []
    for chunk in reader:
        times_ns.extend(chunk.time.astype("int64").tolist())
        times = chunk.time.astype("int64") // 1000
        for r in range(len(chunk)):
            row = [int(times[r])]
            for n in NAMES:
                m = chunk[n]
                pres = m.present[r]
                vals = m.values[r]
                row.append(sorted([int(i), cell(vals[k])] for k, i in enumerate(m.instances)
                                  if pres[k]))
            rows.append(row)
    desc = reader.describe()
    out[str(rows_per_chunk)] = {"rows": rows, "times": times_ns,
                                "dropped": reader.stats.get("dropped", 0),
                                "desc": [[desc[n]["type"], desc[n]["sem"], desc[n]["indom"],
                                          dim_time(desc[n]["units"])] for n in NAMES]}
RESULT = out
'''


def _fetch(config, defs, archive, names):
    """(this package's drop-in rows, the official binding's rows)."""
    difftest.require_reference()
    return difftest.run_both(FETCH % {"args": (config, defs, archive, names)})


def _bulk(config, defs, archive, names, chunks=(None, 1, 2, 3, 7), options=None):
    return difftest.run_ours(BULK % {"args": (config, defs, archive, names, list(chunks),
                                              dict(options or {}))})


def _check(config, defs, archive, names, chunks=(None, 1, 2, 3, 7)):
    """Bulk columns == the drop-in's fetches == the official binding's, every chunk size;
    returns the rows."""
    ours, ref = _fetch(config, defs, archive, names)
    assert "error" not in ref, ref
    difftest.assert_equal(ours, ref)
    got = _bulk(config, defs, archive, names, chunks)
    assert "error" not in got, got
    for size, image in got.items():
        assert image["desc"] == ref["desc"], size
        assert len(image["rows"]) == len(ref["rows"]), size
        for k, (row, want) in enumerate(zip(image["rows"], ref["rows"])):
            assert row == want, (size, k, names)
    return ref["rows"]


def _var_dir() -> str:
    from pcp._core.config import pmGetConfig
    return pmGetConfig("PCP_VAR_DIR") or "/var/lib/pcp"


def _iostat_names(path: str, prefix: str = "disk.dev."):
    with open(path, encoding="utf-8") as f:
        return [m.group(1) for m in re.finditer(r"^(%s\w+)\s*=" % re.escape(prefix),
                                                 f.read(), re.M)]


def test_iostat_definitions_on_a_linux_archive():
    """Every disk.dev metric of the machine's iostat.conf, as pcp-iostat reads them."""
    conf = os.path.join(_var_dir(), "config", "derived", "iostat.conf")
    if not os.path.exists(conf):
        pytest.skip("no iostat.conf")
    names = _iostat_names(conf)
    assert len(names) > 10
    rows = _check(conf, [], tool_archive.linux_archive(), names)
    assert sum(len(v) for row in rows for v in row[1:]) > 10 * len(rows)


def test_iostat_definitions_on_busy_disks(tmp_path):
    """The same over the benchmark's synthetic archive (benchmarks/make_iostat_archive.py:
    the Linux PMDA's disk.dev descriptors, disks busy and idle in turn), where every
    ?: branch and the paired arithmetic of many instances are taken."""
    conf = os.path.join(_var_dir(), "config", "derived", "iostat.conf")
    if not os.path.exists(conf):
        pytest.skip("no iostat.conf")
    bench = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "benchmarks")
    sys.path.insert(0, bench)
    try:
        import make_iostat_archive
    finally:
        sys.path.remove(bench)
    make_iostat_archive.CACHE = str(tmp_path)
    base = make_iostat_archive.ensure_archive(120, 6)
    names = _iostat_names(conf)
    rows = _check(conf, [], base, names, chunks=(None, 1, 7, 50))
    assert sum(len(v) for row in rows for v in row[1:]) > 100 * 6 * len(names)
    assert any(v[1] != "0x0.0p+0" for row in rows for vals in row[1:] for v in vals)


# the expression language over the sample PMDA (tests/libpcp/test_derived.py's archive
# expressions that are numbers, and more)
SAMPLE_EXPRS = [
    "rate(sample.seconds)", "delta(sample.milliseconds)", "instant(sample.seconds)",
    "rate(sample.ulonglong.bin_ctr)", "delta(sample.long.bin_ctr)",
    "delta(sample.ulong.bin_ctr)", "delta(sample.float.bin_ctr)", "rate(sample.float.bin_ctr)",
    "rate(sample.bin)", "delta(sample.colour)",
    "sample.bin[bin-300]", "sample.bin[bin-999]", "matchinst(/bin-[1-3]/, sample.bin)",
    "matchinst(!/bin-[1-3]/, sample.bin)", "sample.bin[bin-100] + sample.bin[bin-100]",
    "scalar(sample.bin[bin-100])",
    "rate(sample.milliseconds) > 0.5 ? rate(sample.milliseconds) : -rate(sample.milliseconds)",
    "sample.long.one ? sample.bin : sample.bin + sample.bin",
    "sum(sample.many.int)", "avg(sample.many.int)", "count(sample.many.int)",
    "max(sample.ulonglong.bin)", "min(sample.float.bin)", "sum(sample.float.bin)",
    "delta(sample.many.int)", "sample.many.int - delta(sample.many.int)",
    "rate(sample.many.int)", "matchinst(!/i-1/, sample.many.int)", "sample.many.int[i-5]",
    "sample.many.int[i-2]", "sample.many.int + sample.many.int",
    "rescale(sample.milliseconds, \"sec\")",
    "sample.seconds > sample.milliseconds", "sample.float.bin < sample.ulonglong.bin",
    "sample.seconds / sample.bin", "delta(sample.seconds) / delta(sample.milliseconds)",
    "count(sample.bad.novalues)", "count(sample.proc.exec)", "sum(sample.noinst)",
    "delta(sample.dynamic.counter)", "sample.dynamic.instant * 10",
    "defined(sample.long.one)", "defined(no.such.metric)", "1.5 + 2", "-sample.long.one",
    "!sample.long.one", "sample.long.one && sample.long.ten || 0",
    "mkconst(7, type=u64, units=kbyte, semantics=counter)",
    "sample.ulong.count.kilo + sample.ulong.count.base",
    "sample.ulong.count.mega / sample.ulong.count.base",
]


@pytest.mark.parametrize("which", ["v2", "v3", "marks", "list_pair"])
def test_expressions_on_the_corpus(which):
    corpus = archives.get_corpus()
    defs = [("dcols.e%d" % k, e) for k, e in enumerate(SAMPLE_EXPRS)]
    names = [n for n, _ in defs]
    rows = _check("", defs, corpus[which], names, chunks=(None, 1, 2, 5))
    moved = sum(1 for row in rows for vals in row[1:] if vals)
    assert moved > len(rows) * len(names) // 2


# derived metrics whose values are strings, evaluated row by row in Python (and count()
# of strings, in C); libpcp 6.0.3 frees a string twice for matchinst() of strings
STRING_EXPRS = ["sample.string.hullo", "instant(sample.string.hullo)", "sample.proc.exec",
                "count(sample.proc.exec)",
                "count(sample.string.hullo) + sample.long.one", "sample.long.ten * 2"]


@pytest.mark.parametrize("which", ["v2", "marks"])
def test_string_expressions_on_the_corpus(which):
    defs = [("dcols.s%d" % k, e) for k, e in enumerate(STRING_EXPRS)]
    names = [n for n, _ in defs]
    rows = _check("", defs, archives.get_corpus()[which], names, chunks=(None, 1, 4))
    assert sum(1 for row in rows for vals in row[1:4] if vals) > len(rows) * 2
    assert any(isinstance(v, str) for row in rows for vals in row[1:4] for _, v in vals)


# an archive whose metrics and instances come and go: a.x from the start, a.y (counter)
# from the 6th record, instance 3 of the indom from the 9th, instance 1 gone after the
# 12th; an instance renamed after the 15th
WRITE = r'''
import sys
from pcp import pmi
import cpmapi as c
log = pmi.pmiLogImport(sys.argv[1])
log.pmiSetHostname("mid")
log.pmiSetTimezone("UTC")
none = log.pmiUnits(0, 0, 0, 0, 0, 0)
count = log.pmiUnits(0, 0, 1, 0, 0, 0)
indom = log.pmiInDom(245, 1)
log.pmiAddMetric("a.x", log.pmiID(245, 0, 1), c.PM_TYPE_U64, indom, c.PM_SEM_COUNTER, count)
log.pmiAddMetric("a.y", log.pmiID(245, 0, 2), c.PM_TYPE_U32, indom, c.PM_SEM_COUNTER, count)
log.pmiAddMetric("a.z", log.pmiID(245, 0, 3), c.PM_TYPE_DOUBLE, c.PM_INDOM_NULL,
                 c.PM_SEM_INSTANT, none)
for i in range(3):
    log.pmiAddInstance(indom, "disk%d" % i, i)
for k in range(24):
    if k == 8:
        log.pmiAddInstance(indom, "disk3", 3)
    insts = [i for i in range(4) if (i != 3 or k >= 8) and (i != 1 or k < 12)]
    for i in insts:
        log.pmiPutValue("a.x", "disk%d" % i, str(1000 * k * (i + 1) + (k * k) % 7))
        if k >= 5:
            log.pmiPutValue("a.y", "disk%d" % i, str((4294967000 + 97 * k * (i + 2)) % 4294967296))
    if k % 3:
        log.pmiPutValue("a.z", None, repr(k / 3.0))
    log.pmiHighResWrite(1700000000 + k, 250000000 * (k % 4))
log.pmiEnd()
print("[]")
'''

MID_EXPRS = [
    "delta(a.x) + delta(a.y)", "rate(a.y)", "a.x - a.y", "a.y ? a.x : a.x * 2",
    "sum(a.y)", "avg(a.x)", "count(a.y)",
    "delta(a.y) == 0 ? mkconst(0, type=\"double\", semantics=\"instant\") : "
    "delta(a.x) / delta(a.y)", "a.x[disk3]", "matchinst(/disk[13]/, a.y)", "rate(a.x) * a.z",
    "a.z > 2 ? sum(a.x) : sum(a.x) * 2", "instant(a.y)", "a.x",
]


@pytest.fixture(scope="module")
def mid_archive(tmp_path_factory):
    difftest.require_reference()
    base = str(tmp_path_factory.mktemp("mid") / "mid")
    # run_script, not "python -c": with -c the working directory comes first on sys.path,
    # and under .ci/sanitize.sh that is the sanitized copy of this package
    proc = difftest.run_script(WRITE, [base], False)
    assert proc["status"] == 0, proc["stderr"]
    return base


def test_operands_and_instances_that_appear_mid_archive(mid_archive):
    defs = [("dcols.m%d" % k, e) for k, e in enumerate(MID_EXPRS)]
    names = [n for n, _ in defs]
    rows = _check("", defs, mid_archive, names, chunks=(None, 1, 2, 4, 5))
    assert len(rows) == 24
    assert not rows[0][2] and rows[7][2]        # rate(a.y): values once a.y has two


def test_prefix_and_rate(mid_archive):
    """A PMNS prefix takes the derived metrics under it; rate=True converts a derived
    counter as it converts any counter column."""
    code = r'''
import json, os, sys
os.environ["PCP_DERIVED_CONFIG"] = ""
from pcp import pmapi, bulk
import cpmapi as c
import numpy as np
ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, sys.argv[1])
ctx.pmRegisterDerived("a.sum", "a.x + a.y")
ctx.pmRegisterDerived("a.copy", "a.x")
ctx.pmRegisterDerived("a.deep.r", "rate(a.x)")
reader = bulk.ArchiveReader(sys.argv[1], "a")
names = reader.metric_names
rated = bulk.read_archive(sys.argv[1], ["a.copy", "a.x", "a.deep.r"], rate=True, chunk_rows=3)
d = reader.describe()
print(json.dumps({"names": names, "sem": d["a.sum"]["sem"],
                  "same": bool(np.array_equal(rated["a.copy"].filled(), rated["a.x"].filled(),
                                              equal_nan=True)),
                  "present": int(rated["a.copy"].present.sum()),
                  "rated": [rated["a.copy"].rate, rated["a.deep.r"].rate]}))
'''
    proc = difftest.run_script(code, [mid_archive], True, timeout=120)
    assert proc["status"] == 0, proc["stderr"]
    got = json.loads(proc["stdout"].strip().splitlines()[-1])
    assert got["names"] == ["a.x", "a.y", "a.z", "a.copy", "a.deep.r", "a.sum"]
    assert got["sem"] == 1              # PM_SEM_COUNTER
    assert got["same"] and got["present"] > 40
    assert got["rated"] == [True, False]


def test_errors_for_what_cannot_be_a_column(mid_archive):
    code = r'''
import json, os, sys
os.environ["PCP_DERIVED_CONFIG"] = ""
from pcp import pmapi, bulk
import cpmapi as c
pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, sys.argv[1]).pmRegisterDerived("b.bad", "a.x + no.such.metric")
out = []
for names in (["b.bad"], ["no.such"], ["b"]):
    try:
        bulk.ArchiveReader(sys.argv[1], names)
        out.append("ok")
    except pmapi.pmErr as e:
        out.append(e.args[0])
print(json.dumps(out))
'''
    proc = difftest.run_script(code, [mid_archive], True, timeout=120)
    assert proc["status"] == 0, proc["stderr"]
    got = json.loads(proc["stdout"].strip().splitlines()[-1])
    from pcp._core.constants import PM_ERR_BADDERIVE, PM_ERR_NAME
    assert got == [PM_ERR_BADDERIVE, PM_ERR_NAME, PM_ERR_NAME]


# random well-typed (and some ill-typed) expressions over the sample metrics: the
# drop-in's pmFetch (differential against the official binding in tests/libpcp) and the
# bulk columns, in one process of this package
RANDOM = r'''
import os
ARCHIVE, EXPRS = %(args)r
os.environ["PCP_DERIVED_CONFIG"] = ""
import numpy as np
from pcp import bulk
ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, ARCHIVE)
names = []
for k, expr in enumerate(EXPRS):
    name = "dcols.r%%d" %% k
    try:
        ctx.pmRegisterDerived(name, expr)
        ctx.pmLookupDesc(ctx.pmLookupName(name)[0])
    except pmapi.pmErr:
        continue
    names.append(name)
pmids = ctx.pmLookupName(names)
descs = ctx.pmLookupDescs(pmids)
ctx.pmSetMode(c_api.PM_MODE_FORW, ctx.pmGetArchiveLabel().start, 0)
def cell(v):
    if isinstance(v, str):
        return v
    return float(v).hex() if isinstance(v, (float, np.floating)) else int(v)
fetched = []
while True:
    try:
        res = ctx.pmFetch(pmids)
    except pmapi.pmErr:
        break
    r = res.contents
    row = []
    for i in range(r.numpmid):
        t = descs[i].type
        row.append(sorted([r.get_inst(i, j), cell(P.pmExtractValue(r.get_valfmt(i),
                           r.get_vlist(i, j), t, t).dref(t))]
                          for j in range(max(r.get_numval(i), 0))))
    fetched.append(row)
RESULT = {"names": len(names), "rows": len(fetched), "mismatch": None}
for size in (None, 3):
    rows = []
    for chunk in bulk.ArchiveReader(ARCHIVE, names, chunk_rows=size):
        for r in range(len(chunk)):
            rows.append([sorted([int(i), cell(chunk[n].values[r, k])]
                                for k, i in enumerate(chunk[n].instances)
                                if chunk[n].present[r, k]) for n in names])
    if rows != fetched:
        bad = next((k for k, (a, b) in enumerate(zip(rows, fetched)) if a != b), None)
        RESULT["mismatch"] = [size, len(rows), bad, EXPRS, None if bad is None else
                              [rows[bad], fetched[bad]]]
        break
'''


def _random_expressions():
    from hypothesis import HealthCheck, given, settings, strategies as st

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
        __file__))), "libpcp"))
    import test_derived as language       # the generator of tests/libpcp/test_derived.py

    @settings(max_examples=int(os.environ.get("PCP_DERIVED_EXAMPLES", "4")), deadline=None,
              derandomize="PCP_DERIVED_SEED_RANDOM" not in os.environ,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(language.EXPRESSIONS, min_size=25, max_size=25))
    def check(exprs):
        got = difftest.run_ours(RANDOM % {"args": (archives.get_corpus()["v2"], exprs)})
        assert "__crash__" not in got, got
        assert got["mismatch"] is None, got["mismatch"]
        assert got["rows"] > 10 and got["names"] >= 10

    return check


def test_random_expressions_as_columns():
    _random_expressions()()
