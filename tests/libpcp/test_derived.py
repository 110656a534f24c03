"""Derived metrics against the official binding (libpcp 6.0.3): the same definitions
registered on both sides, then names, descriptors, help text and fetched values compared
field by field, on the live pmcd (metrics whose values stay put) and on pmlogger archives
in FORW, BACK and INTERP modes (everything, rates and deltas included); libpcp's syntax
errors (pmRegisterDerivedMetric's message), its semantic errors (pmprintf'd, the metric
left unusable), the shipped configuration files and PCP_DERIVED_CONFIG."""
from __future__ import annotations

import json
import os

import pytest

from support import archives, difftest

pytestmark = [pytest.mark.pmcd, pytest.mark.reference]

# ---- the expression table -------------------------------------------------------------

# values that stay put on the live pmcd (sample's constants and bins)
STATIC = [
    "sample.long.ten + sample.long.hundred",
    "sample.long.ten - sample.ulong.hundred",
    "sample.ulong.ten - sample.ulong.hundred",
    "sample.longlong.ten * sample.ulonglong.ten",
    "sample.longlong.million * sample.longlong.million * sample.longlong.million",
    "sample.long.million * sample.long.million",
    "sample.long.million / sample.long.ten",
    "sample.long.one / 3",
    "0 / sample.long.one",
    "sample.long.one / (sample.long.one - 1)",
    "sample.float.ten + sample.double.ten",
    "sample.float.ten * sample.float.million",
    "sample.float.million * sample.float.million * sample.float.million * sample.float.million",
    "sample.float.ten - sample.long.hundred",
    "sample.ulonglong.million - sample.ulonglong.hundred * sample.ulonglong.million",
    "-sample.ulong.ten", "-sample.ulonglong.million", "-sample.float.ten", "-sample.double.hundred",
    "-sample.long.one * sample.long.ten + 2",
    "sample.bin + 1", "sample.bin * sample.ulong.bin", "sample.bin - sample.float.bin",
    "sample.double.bin / sample.longlong.bin", "sample.bin + sample.long.ten",
    "sample.long.ten + sample.bin",
    "sample.bin > 300", "sample.bin <= 300", "sample.bin == 500", "sample.bin != 500",
    "sample.bin >= sample.long.hundred * 3",
    "sample.long.ten - 20 < 0", "sample.double.ten > sample.float.hundred",
    "sample.bin > 300 && sample.bin < 700", "sample.bin < 200 || sample.bin > 800",
    "!(sample.bin > 400)", "!sample.long.one", "!sample.ulong.ten",
    "sample.long.ten > 5 ? sample.long.hundred : sample.long.one",
    "sample.long.one ? sample.bin : -sample.bin",
    "sample.bin > 500 ? sample.bin : -sample.bin",
    "sample.long.one > 5 ? mkconst(7, type=32, semantics=instant) : sample.long.ten",
    "sum(sample.bin)", "avg(sample.bin)", "count(sample.bin)", "max(sample.bin)", "min(sample.bin)",
    "sum(sample.float.bin)", "avg(sample.double.bin)",
    "min(sample.float.bin)", "sum(sample.ulong.bin) / count(sample.ulong.bin)",
    "avg(sample.longlong.bin)", "sum(sample.long.bin_ctr)",
    "instant(sample.bin)", "instant(sample.long.ten)",
    "rescale(sample.long.million, \"Kbyte\")", "rescale(sample.ulong.count.kilo, \"count\")",
    "rescale(sample.ulong.count.base, \"count x 10^3\")",
    "mkconst(10, type=64, semantics=instant, units=\"Kbyte\")", "mkconst(2.5, type=float)",
    "mkconst(3, type=double, units=\"sec\")", "mkconst(4294967295, type=32)",
    "mkconst(7, type=u64, units=kbyte, semantics=counter)",
    "sample.bin[bin-300]", "sample.bin[bin-999]", "matchinst(/bin-[1-3]/, sample.bin)",
    "matchinst(!/bin-[1-3]/, sample.bin)", "matchinst(/^bin-.00$/, sample.bin * 2)",
    "sample.bin[bin-100] + sample.bin[bin-100]",
    "scalar(sample.bin[bin-100])", "scalar(matchinst(/bin-9/, sample.bin))",
    "scalar(sample.bin)",
    "defined(sample.long.one)", "defined(no.such.metric)",
    "sample.long.one", "sample.double.million",
    "1.5 + 2", "2 - 5", "-3", "7 / 2", "mkconst(5, type=32) - 10", ".5 * 4",
    "sample.ulong.count.kilo + sample.ulong.count.base",
    "sample.ulong.count.base * sample.ulong.count.mega",
    "sample.ulong.count.mega / sample.ulong.count.base",
]

# values that are not numbers (evaluated in Python, the rest in C)
# (libpcp 6.0.3 frees the same string twice for a string chosen by ?:, so none here)
STRINGS = ["sample.string.hullo", "sample.aggregate.hullo", "count(sample.string.hullo)",
           "sample.long.ten * 2", "instant(sample.string.hullo)"]

# values that move (counters, timestamps): compared on archives; on the live pmcd only
# their shape
MOVING = [
    "max(sample.ulonglong.bin)", "sample.float.bin < sample.ulonglong.bin", "sample.seconds / sample.bin",
    "delta(sample.seconds)", "rate(sample.seconds)", "rate(sample.milliseconds)",
    "delta(sample.milliseconds)", "rate(sample.bin)", "delta(sample.many.int)",
    "rate(sample.ulonglong.bin_ctr)", "delta(sample.colour)", "rate(sample.colour)",
    "delta(sample.long.bin_ctr)", "delta(sample.ulong.bin_ctr)", "delta(sample.float.bin_ctr)",
    "delta(sample.ulonglong.bin_ctr)", "rate(sample.float.bin_ctr)",
    "instant(sample.seconds)", "instant(sample.milliseconds)",
    "rescale(sample.milliseconds, \"sec\")", "rescale(sample.seconds, \"hour\")",
    "rescale(rate(sample.milliseconds), \"usec/sec\")",
    "sample.seconds + sample.seconds", "sample.seconds * 2", "3 * sample.seconds",
    "sample.milliseconds + sample.seconds", "sample.seconds - sample.milliseconds",
    "sample.milliseconds / 1000", "sample.seconds > 0", "sample.seconds > sample.milliseconds",
    "count(sample.many.int)", "sum(sample.many.int)", "avg(sample.many.int)",  # many.*: archives only
    "matchinst(/i-[0-3]/, sample.many.int)", "sample.many.int[i-2]",
    "sample.many.int + sample.many.int", "delta(sample.many.int) * 2",
    "count(sample.bad.novalues)", "count(sample.proc.exec)", "sum(sample.noinst)",
    "delta(sample.dynamic.counter)", "sample.dynamic.instant * 10",
    "delta(sample.seconds) / delta(sample.milliseconds)",
    "rate(sample.milliseconds) > 0.5 ? rate(sample.milliseconds) : -rate(sample.milliseconds)",
]

# semantic errors: found when the metric is first used in a context
SEMANTIC = [
    "sample.seconds * sample.seconds", "sample.bin + sample.colour", "sample.string.hullo + 1",
    "-sample.string.hullo", "sum(sample.string.hullo)", "sample.milliseconds + 3",
    "3 - sample.seconds", "sample.long.one ? sample.bin : sample.ulong.bin",
    "sample.bin ? 1 : 2", "rescale(sample.seconds, \"Kbyte\")", "sample.long.one + no.such.metric",
    "sample.many.int + sample.bin", "sample.bin && sample.seconds", "sample.string.hullo > 1",
    "sample.seconds > mkconst(1, units=\"Kbyte\")",
    "rate(rate(sample.seconds))", "delta(sample.string.hullo)",
    "sample.long.one ? sample.long.one : sample.double.one",
    "sample.long.one ? sample.long.one : sample.bin",
    "sample.long.one ? mkconst(1, type=32, semantics=instant, units=sec) : sample.long.one",
    "1 ? mkconst(1, units=\"sec\") : mkconst(1, units=\"msec\")",
    "1 ? mkconst(1, units=\"byte\") : mkconst(1, units=\"Kbyte\")",
    "1 ? mkconst(1, units=\"count\") : mkconst(1)",
    "rescale(sample.string.hullo, \"sec\")", "sample.seconds * mkconst(2, units=\"sec\")",
    "mkconst(2, units=\"sec\") * sample.seconds",
    "rate(mkconst(1, units=\"sec^2\", semantics=counter))",
]

# libpcp 6.0.3 dereferences a null pointer for scalar() of an operand with no values
# (the first interpolated fetch, an instance that has gone): archives leave it out
ARCHIVE = [e for e in STATIC + MOVING if not e.startswith("scalar(")]
# max() and min() of an operand with no values report what their buffer held before
# (uninitialised memory on the first fetch): interpolation starts with no values
ARCHIVE_INTERP = [e for e in ARCHIVE if not e.startswith(("max(", "min("))]

PROGRAM = r'''
import os, sys, time
os.environ["PCP_DERIVED_CONFIG"] = ""
CONTEXT, TARGET, EXPRS, MODE, FETCHES, STATIC_ONLY = %(args)r
errfile = os.path.join(os.getcwd(), "stderr-%%d.txt" %% os.getpid())
os.environ["PCP_STDERR"] = errfile
ctx = pmapi.pmContext(CONTEXT, TARGET)
R = {"register": [], "lookup": [], "desc": [], "fetch": [], "text": []}
names = []
for i, expr in enumerate(EXPRS):
    name = "dtest.m%%d" %% i
    names.append(name)
    R["register"].append(catch(ctx.pmRegisterDerived, name, expr))
pmids = []
for name in names:
    try:
        pmids.append(int(ctx.pmLookupName(name)[0]))
    except pmapi.pmErr as e:
        pmids.append(None)
        R["lookup"].append([name, err_info(e)])
        continue
    R["lookup"].append([name, pmids[-1]])
types = {}
for name, pmid in zip(names, pmids):
    if pmid is None:
        continue
    try:
        d = ctx.pmLookupDesc(pmid).contents
        types[pmid] = d.type
        R["desc"].append([name, d.type, d.indom, d.sem, P.pmUnitsStr(d.units), int(d.units.dimTime)])
    except pmapi.pmErr as e:
        R["desc"].append([name, err_info(e)])
    R["text"].append([catch(ctx.pmLookupText, pmid, c_api.PM_TEXT_ONELINE),
                      catch(ctx.pmLookupText, pmid, c_api.PM_TEXT_HELP)])
if CONTEXT == c_api.PM_CONTEXT_ARCHIVE:
    label = ctx.pmGetArchiveLabel()
    if MODE == "forw":
        ctx.pmSetMode(c_api.PM_MODE_FORW, label.start, 0)
    elif MODE == "back":
        ctx.pmSetMode(c_api.PM_MODE_BACK, ctx.pmGetArchiveEnd(), 0)
    else:
        ctx.pmSetMode(c_api.PM_MODE_INTERP, label.start, 270)
fetchable = (ctypes.c_uint * len([p for p in pmids if p is not None]))(*[p for p in pmids if p is not None])
def image(res):
    c = res.contents
    out = []
    for i in range(c.numpmid):
        numval = c.get_numval(i)
        vs = [c.get_pmid(i), numval]
        if numval > 0:
            valfmt = c.get_valfmt(i)
            vs.append(valfmt)
            t = types.get(c.get_pmid(i))
            vals = []
            for j in range(numval):
                v = [c.get_inst(i, j)]
                if STATIC_ONLY and c.get_pmid(i) not in STATIC_ONLY:
                    vals.append(v)
                    continue
                if t is not None:
                    v.append(catch(lambda: P.pmExtractValue(valfmt, c.get_vlist(i, j), t, t).dref(t)))
                    if t in (c_api.PM_TYPE_32, c_api.PM_TYPE_U32, c_api.PM_TYPE_64,
                             c_api.PM_TYPE_U64, c_api.PM_TYPE_FLOAT):
                        v.append(catch(lambda: P.pmExtractValue(valfmt, c.get_vlist(i, j), t,
                                                                 c_api.PM_TYPE_DOUBLE).dref(c_api.PM_TYPE_DOUBLE)))
                vals.append(v)
            vs.append(vals)
        out.append(vs)
    return out
for k in range(FETCHES):
    try:
        res = ctx.pmFetch(fetchable)
    except pmapi.pmErr as e:
        R["fetch"].append(err_info(e))
        if CONTEXT == c_api.PM_CONTEXT_ARCHIVE and e.code == c_api.PM_ERR_EOL:
            break
        continue
    stamp = res.contents.timestamp
    R["fetch"].append({"stamp": [stamp.tv_sec, stamp.tv_usec] if CONTEXT == c_api.PM_CONTEXT_ARCHIVE else None,
                       "sets": image(res)})
    if CONTEXT == c_api.PM_CONTEXT_HOST:
        time.sleep(0.15)
R["traverse"] = []
ctx.pmTraversePMNS("dtest", R["traverse"].append)
R["children"] = catch(ctx.pmGetChildren, "dtest")
R["children_status"] = catch(ctx.pmGetChildrenStatus, "dtest")
R["name_all"] = [catch(ctx.pmNameAll, p) for p in fetchable]
R["name_id"] = [catch(ctx.pmNameID, p) for p in fetchable]
try:
    R["stderr"] = open(errfile).read()
except OSError:
    R["stderr"] = ""
RESULT = R
'''


def _program(context: int, target: str, exprs, mode: str = "", fetches: int = 3,
             static_only=()) -> str:
    return PROGRAM % {"args": (context, target, list(exprs), mode, fetches, list(static_only))}


def _compare(snippet: str, parallel: bool = True) -> dict:
    difftest.require_reference()
    ours, ref = difftest.run_both(snippet, parallel=parallel)
    difftest.assert_equal(ours, ref)
    return ref


def _static_pmids(exprs, moving):
    """The pmids (in registration order, global item numbers) whose values are
    compared on the live pmcd: dtest.mN are registered after the two anonymous metrics."""
    return [(511 << 22) | (3 + i) for i, e in enumerate(exprs) if e not in moving]


# ---- live -------------------------------------------------------------------------------

def test_live_static_expressions():
    ref = _compare(_program(1, "local:", STATIC, fetches=2))
    # the table must exercise something: most static metrics have values
    assert sum(1 for vs in ref["fetch"][-1]["sets"] if vs[1] > 0) > len(STATIC) * 3 // 4
    assert sum(1 for d in ref["desc"] if len(d) > 2) > len(STATIC) - 5


@pytest.mark.parametrize("target", ["live", "v2"])
def test_strings_and_aggregates(request, target):
    if target == "live":
        _compare(_program(1, "local:", STRINGS, fetches=2))
    else:
        corpus = request.getfixturevalue("corpus")
        for mode in ("forw", "interp"):
            _compare(_program(2, corpus[target], STRINGS, mode, fetches=6))


def test_live_moving_expressions_shape():
    # sample.many.int's instances are what the archive corpus builder sets them to
    exprs = STATIC[:5] + [e for e in MOVING if "many." not in e]
    ref = _compare(_program(1, "local:", exprs, fetches=3,
                            static_only=_static_pmids(exprs, set(MOVING))))
    assert any(vs[1] > 0 for vs in ref["fetch"][-1]["sets"])


def test_live_semantic_errors():
    ref = _compare(_program(1, "local:", SEMANTIC, fetches=1))
    assert "Semantic error" in ref["stderr"]
    assert sum(1 for d in ref["desc"] if len(d) == 2) > len(SEMANTIC) * 3 // 4  # desc fails


# ---- archives, every mode -------------------------------------------------------------

@pytest.fixture(scope="module")
def corpus():
    try:
        return archives.get_corpus()
    except archives.CorpusError as e:
        if os.environ.get("CI"):
            pytest.fail(str(e))
        pytest.skip(str(e))


@pytest.mark.parametrize("mode", ["forw", "back", "interp"])
@pytest.mark.parametrize("which", ["v2", "v3"])
def test_archive_expressions(corpus, which, mode):
    exprs = ARCHIVE_INTERP if mode == "interp" else ARCHIVE
    ref = _compare(_program(2, corpus[which], exprs, mode, fetches=12))
    assert len(ref["fetch"]) >= 10
    moved = [vs for f in ref["fetch"][2:] if "sets" in f for vs in f["sets"] if vs[1] > 0]
    assert moved


@pytest.mark.parametrize("mode", ["forw", "interp"])
def test_archive_semantic_errors(corpus, mode):
    ref = _compare(_program(2, corpus["v2"], SEMANTIC, mode, fetches=2))
    assert "Semantic error" in ref["stderr"]


def test_archive_instance_changes(corpus):
    """sample.many.int's instances change during the recording: delta() and the binary
    operators' instance matching across the change, in every mode."""
    exprs = ["delta(sample.many.int)", "sample.many.int - delta(sample.many.int)",
             "count(sample.many.int)", "rate(sample.many.int)",
             "matchinst(!/i-1/, sample.many.int)", "sample.many.int[i-5]"]
    for mode in ("forw", "back", "interp"):
        _compare(_program(2, corpus["v2"], exprs, mode, fetches=40))


PLANS = r"""
import os
os.environ["PCP_DERIVED_CONFIG"] = ""
ARCHIVE, MODE, FETCHES = %(args)r
ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, ARCHIVE)
other = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, ARCHIVE)
exprs = [["dplan.a", "delta(sample.seconds)"], ["dplan.b", "rate(sample.milliseconds) + 1"],
         ["dplan.c", "matchinst(/bin-[1-5]/, sample.bin) * 2"],
         ["dplan.d", "sample.bin[bin-300] + count(sample.bad.novalues)"],
         ["dplan.e", "sample.string.hullo"]]
for name, expr in exprs:
    ctx.pmRegisterDerived(name, expr)
a, b, c, d, e = [int(ctx.pmLookupName(name)[0]) for name, _ in exprs]
late = max(a, b, c, d, e) + 1           # the pmid the next derived metric will have
types = {}
def image(res):
    out = []
    for i in range(res.contents.numpmid):
        pmid = res.contents.get_pmid(i)
        numval = res.contents.get_numval(i)
        vs = [pmid, numval]
        if numval > 0:
            if pmid not in types:
                types[pmid] = ctx.pmLookupDesc(pmid).contents.type
            t = types[pmid]
            for j in range(numval):
                vl = res.contents.get_vlist(i, j)
                vs.append([res.contents.get_inst(i, j),
                           catch(lambda: ctx.pmExtractValue(res.contents.get_valfmt(i), vl, t,
                                                            t).dref(t))])
        out.append(vs)
    return out
label = ctx.pmGetArchiveLabel()
if MODE == "forw":
    ctx.pmSetMode(c_api.PM_MODE_FORW, label.start, 0)
else:
    ctx.pmSetMode(c_api.PM_MODE_INTERP, label.start, 20)     # 130 fetches in 3 seconds
# requests sharing metrics (their delta() and rate() state is the metric's), a metric
# asked for twice, with a string, a pmid before and after another context registers it
requests = [[a, c], [c], [a, c, d], [b, b, c], [d, a, late, c], [e, c, a], [a, c, d], [late]]
R = []
for k in range(FETCHES):
    if k == FETCHES // 3:
        other.pmRegisterDerived("dplan.late", "sample.long.one * 3 + sample.bin")
    if k == FETCHES // 2:
        ctx.pmLookupName("dplan.late")      # libpcp's fetch sees it from here on
    req = requests[k %% len(requests)]
    try:
        res = ctx.pmFetch((ctypes.c_uint * len(req))(*req))
    except pmapi.pmErr as err:
        R.append(err_info(err))
        continue
    R.append(image(res))
RESULT = R
"""


@pytest.mark.parametrize("mode", ["forw", "interp"])
def test_requests_share_metric_state(corpus, mode):
    """Each request is evaluated by a plan made on its first fetch: metrics asked for in
    several requests keep one state, a metric asked for twice is evaluated twice (as
    libpcp does), a derived metric registered later (in another context) is fetched
    by requests made before it once a name operation has taken it into this context;
    matchinst() past its table's compaction (100 uses)."""
    ref = _compare(PLANS % {"args": (corpus["v2"], mode, 130 if mode == "interp" else 36)})
    values = [vs for f in ref if isinstance(f, list) for vs in f if vs[1] > 0]
    assert any(vs[0] == (511 << 22) | 8 for vs in values)      # dplan.late had values


# ---- syntax errors -------------------------------------------------------------------

MALFORMED = [
    "a +", "+ a", "a b", "(a", "a)", "", "  ", "a + * b", "sum(3)", "sum(a", "avg()", "1 ? 2",
    "a ? b :", "mkconst(1, type=foo)", "mkconst(1.5, type=u32)", "rescale(a, \"foo\")",
    "matchinst(/x/ a)", "matchinst(a, b)", "a[x", "99999999999", "a & b", "a $ b", "\"abc",
    "-", "!", "a !", "a[x] [y]", "rescale(a, 3)", "matchinst(/(/, a)", "delta(a+b)",
    "count(a) 3", "a .. b", "1.2.3", "mkconst(1)", "mkconst(1, units=\"foo\")",
    "mkconst(1, bogus=3)", "a = b", "scalar()", "1 2", "((a)", "a + (1 2)", "a + 1 2",
    "avg (x)", "a(b)", "(a(b))", "a : b", "a || ", "a && (", "!a b", "- - a", "a * -",
    "defined(3)", "defined(a", "anon(x", "rescale(a, \"byte\"", "rescale(a,", "rescale(,",
    "matchinst(!/x/, )", "matchinst(/x/,", "matchinst(!, a)", "scalar(a", "scalar(a b)",
    "mkconst(1, type=u32", "mkconst(1, type=u32 3)", "mkconst(1,)", "mkconst(, type=u32)",
    "mkconst(1, semantics=bogus)", "a ? b c", "a ? (b : c", "sum(a) +", "a / / b", "[x]",
    "a ==", "a <= b >", "a > b ) ", "a, b", "rate(a) * ", "mkconst", "foo(", "x # y",
    "a ? b : c : d", "type", "a + type", "4294967296", "a  +   ", "(a + b",
    "mkconst(1.5, type=32)", "rescale(a, \"sec^20\")", "matchinst(/[/, a)",
    "matchinst(/x/, a) / 2", "a / 2", "sample.long.one ! 2", "a \t+",
    "sum(sample.bin)sum(sample.bin)", "a[\\]", "a[x\\]y]z", "matchinst(/a\\/b/, c) + /",
]


def test_syntax_errors():
    snippet = r'''
import os
os.environ["PCP_DERIVED_CONFIG"] = ""
ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, "local:")
out = []
for i, expr in enumerate(%r):
    out.append([expr, catch(ctx.pmRegisterDerived, "bad.m%%d" %% i, expr), catch(P.pmDerivedErrStr)])
RESULT = out
''' % MALFORMED
    ref = _compare(snippet)
    assert sum(1 for row in ref if isinstance(row[1], dict) and row[1].get("error")) > 80


def test_registration_rules():
    """Duplicate names, a derived name that is also a real metric (the real one wins),
    names registered after the context was made, pmDerivedErrStr after success."""
    snippet = r'''
import os
os.environ["PCP_DERIVED_CONFIG"] = ""
ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, "local:")
R = {}
R["first"] = catch(ctx.pmRegisterDerived, "rule.a", "sample.long.one")
R["errstr_ok"] = catch(P.pmDerivedErrStr)
R["dup"] = catch(ctx.pmRegisterDerived, "rule.a", "sample.long.ten")
R["errstr_dup"] = catch(P.pmDerivedErrStr)
R["anon_dup"] = catch(ctx.pmRegisterDerived, "event.flags", "3")
R["real"] = catch(ctx.pmRegisterDerived, "sample.long.one", "sample.long.ten")
R["real_lookup"] = catch(lambda: list(ctx.pmLookupName("sample.long.one")))
R["nonleaf"] = catch(ctx.pmRegisterDerived, "sample.long", "3")
R["nonleaf_lookup"] = catch(lambda: list(ctx.pmLookupName("sample.long")))
R["prefix"] = catch(ctx.pmRegisterDerived, "sample.long.one.more", "sample.long.ten")
R["prefix_lookup"] = catch(lambda: list(ctx.pmLookupName("sample.long.one.more")))
R["prefix_desc"] = catch(lambda: ctx.pmLookupDesc(ctx.pmLookupName("sample.long.one.more")[0]).contents.type)
R["deep"] = catch(ctx.pmRegisterDerived, "a.b.c.d", "sample.long.hundred")
R["children_root"] = catch(lambda: sorted(ctx.pmGetChildren("")))
R["children_a"] = catch(ctx.pmGetChildrenStatus, "a.b")
R["leaf"] = catch(ctx.pmGetChildren, "a.b.c.d")
R["traverse_a"] = []
ctx.pmTraversePMNS("a", R["traverse_a"].append)
R["bad_name"] = catch(ctx.pmRegisterDerived, "9bad name", "sample.long.one")
R["bad_name_lookup"] = catch(lambda: list(ctx.pmLookupName("9bad name")))
R["chain"] = catch(ctx.pmRegisterDerived, "rule.chain", "rule.a + 1")
pm = ctx.pmLookupName("rule.chain")
R["chain_desc"] = catch(lambda: ctx.pmLookupDesc(pm[0]).contents.type)
R["chain_fetch"] = catch(lambda: ctx.pmFetch(pm).contents.get_numval(0))
R["missing"] = catch(ctx.pmRegisterDerived, "rule.missing", "no.such.metric * 2")
pm = ctx.pmLookupName(["rule.missing", "rule.a"], relaxed=1)
R["missing_lookup"] = list(pm)
R["missing_desc"] = catch(lambda: ctx.pmLookupDesc(pm[0]))
R["missing_descs"] = catch(lambda: [d.contents.pmid for d in ctx.pmLookupDescs(pm)])
res = ctx.pmFetch(pm)
R["missing_fetch"] = [res.contents.get_numval(0), res.contents.get_numval(1)]
R["missing_traverse"] = []
ctx.pmTraversePMNS("rule", R["missing_traverse"].append)
R["name_unknown"] = catch(ctx.pmNameID, (511 << 22) | 1000)
R["desc_unknown"] = catch(lambda: ctx.pmLookupDesc((511 << 22) | 1000))
R["text"] = [catch(ctx.pmLookupText, pm[1]), catch(ctx.pmLookupText, pm[1], c_api.PM_TEXT_HELP)]
R["text_anon"] = [catch(ctx.pmLookupText, (511 << 22) | 1), catch(ctx.pmLookupText, (511 << 22) | 2, c_api.PM_TEXT_HELP)]
ctx2 = pmapi.pmContext(c_api.PM_CONTEXT_HOST, "local:")
R["ctx2_lookup"] = catch(lambda: list(ctx2.pmLookupName(["rule.a", "a.b.c.d"])))
R["ctx2_fetch"] = catch(lambda: ctx2.pmFetch(ctx2.pmLookupName(["rule.a", "a.b.c.d"])).contents.get_numval(1))
RESULT = R
'''
    _compare(snippet)


# ---- configuration files --------------------------------------------------------------

SHIPPED = "/var/lib/pcp/config/derived"


def _shipped_files():
    try:
        return sorted(os.path.join(SHIPPED, f) for f in os.listdir(SHIPPED))
    except OSError:
        return []


CONFIG_SNIPPET = r'''
import os
os.environ["PCP_DERIVED_CONFIG"] = %(env)r
if os.environ["PCP_DERIVED_CONFIG"] == "<unset>":
    del os.environ["PCP_DERIVED_CONFIG"]
errfile = os.path.join(os.getcwd(), "stderr-%%d.txt" %% os.getpid())
os.environ["PCP_STDERR"] = errfile
ctx = pmapi.pmContext(%(context)r, %(target)r)
R = {"load": catch(ctx.pmLoadDerivedConfig, %(path)r) if %(path)r else None}
names = []
ctx.pmTraversePMNS("", names.append)
R["count"] = len(names)
derived = []
for n in names:
    pm = ctx.pmLookupName(n)[0]
    if (pm >> 22) & 0x1ff == 511:
        derived.append((n, int(pm)))
R["derived"] = derived
R["descs"] = []
R["text"] = []
for n, pm in derived:
    try:
        d = ctx.pmLookupDesc(pm).contents
        R["descs"].append([n, d.type, d.indom, d.sem, P.pmUnitsStr(d.units)])
    except pmapi.pmErr as e:
        R["descs"].append([n, err_info(e)])
    R["text"].append([catch(ctx.pmLookupText, pm), catch(ctx.pmLookupText, pm, c_api.PM_TEXT_HELP)])
pmids = (ctypes.c_uint * len(derived))(*[pm for n, pm in derived])
R["fetch"] = []
for k in range(2 if pmids and %(fetch)r else 0):
    res = ctx.pmFetch(pmids)
    # live values move (processes come and go): there only whether there are values
    R["fetch"].append([[res.contents.get_pmid(i), "some" if %(live)r and res.contents.get_numval(i) > 0
                        else res.contents.get_numval(i)] for i in range(res.contents.numpmid)])
R["children_root"] = catch(lambda: sorted(ctx.pmGetChildren("")))
try:
    R["stderr"] = open(errfile).read()
except OSError:
    R["stderr"] = ""
RESULT = R
'''


def _config(path: str = "", env: str = "", context: int = 1, target: str = "local:") -> dict:
    return _compare(CONFIG_SNIPPET % {"env": env, "path": path, "context": context,
                                      "target": target, "live": context == 1,
                                      "fetch": context == 1})


@pytest.mark.parametrize("path", _shipped_files() or ["none"])
def test_shipped_config_file(path):
    """Each shipped file loaded with pmLoadDerivedConfig: every metric it defines looked
    up, described, its help text read and fetched."""
    if path == "none":
        pytest.skip("no shipped derived configuration")
    ref = _config(path=path)
    assert ref["load"] is None and ref["derived"]


def test_default_config_is_loaded():
    """PCP_DERIVED_CONFIG unset: $PCP_VAR_DIR/config/derived is read at the first context."""
    ref = _config(env="<unset>")
    assert len(ref["derived"]) > 2


@pytest.mark.parametrize("env", ["", SHIPPED + "/cpu-util.conf:" + SHIPPED + "/proc.conf",
                                 "/nonexistent:" + SHIPPED + "/iostat.conf", ":" + SHIPPED,
                                 SHIPPED + ":"])
def test_derived_config_variable(env):
    _config(env=env)


def test_shipped_configs_on_archive(corpus):
    """Names, descriptors and help text only: libpcp 6.0.3 frees twice (and aborts)
    fetching the shipped metrics, whose operands an archive of sample metrics lacks."""
    ref = _config(env="<unset>", context=2, target=corpus["v2"])
    assert ref["derived"] is not None


BAD_CONFIG = """# comment
good.one = sample.long.one + 1
good.one(oneline) = "first line"
good.one(helptext) = 'a help text
over two lines with a \\' quote and \\
a continuation'
good.one(oneline) = again
good.two = sample.bin * 2
good.two(oneline) = unquoted text here
good.two(bogus) = x
missing.metric(oneline) = "who"
  spaced.name   =   sample.long.ten
9bad = 1
bad..name = 2
= 3
no equals here
   
x.y(oneline = "z"
x.z)oneline( = "z"
syntax.err = sample.long.one +
syntax.err2 = a b c
dup.name = 1
dup.name = 2
attr.empty() = "x"
attr.novalue(oneline) =
good.three(oneline) = "unterminated
good.three = 1
tail.text(oneline) = "v" trailing
good.one(helptext) = "dup"
last.line = 4"""


def test_malformed_config_file(tmp_path):
    path = tmp_path / "bad.conf"
    path.write_text(BAD_CONFIG)
    ref = _config(path=str(path))
    assert "Error" in ref["stderr"]


# quoted attribute values at the edges of the scanner: a value closed on a later line
# and followed by text there, an escaped newline at the end of the first line, a
# backslash as the file's last character, a value closed on the file's last byte
QUOTED_EDGES = [
    'q.a = 1\nq.a(helptext) = "one\ntwo" extra words\nq.b = 2\nq.b(oneline) = "x\\\ny"\n',
    'q.a = 1\nq.a(helptext) = "line\n\n  spaced"   \nq.c = 3\n',
    'q.a = 1\nq.a(helptext) = "unterminated \\',
    'q.a = 1\nq.a(helptext) = "closed at the end"',
    "q.a = 1\nq.a(oneline) = 'a \\\\ b \\' c'\nq.a(helptext) = \"\\\"\"\n",
]


@pytest.mark.parametrize("text", QUOTED_EDGES)
def test_config_quoted_values(tmp_path, text):
    path = tmp_path / "quoted.conf"
    path.write_bytes(text.encode())
    _config(path=str(path))


def test_config_directory_and_errors(tmp_path):
    good = tmp_path / "dir"
    good.mkdir()
    (good / "a.conf").write_text("dir.a = sample.long.one\ndir.b = sample.long.ten\n")
    (good / "b.conf").write_text("dir.c = sample.long.hundred\n")
    (good / "sub").mkdir()
    (good / "sub" / "c.conf").write_text("dir.sub.d = 3\n")
    _config(path=str(good))
    _config(path=str(good) + ":" + str(tmp_path / "missing"))
    _config(path=str(tmp_path / "missing"))
    _config(path="::")


# ---- a clean configuration remembered from one process to the next ---------------------

CACHED_CONFIG = ("cache.sum = sample.long.one + sample.long.ten\n"
                 "cache.ratio = sample.long.hundred / sample.long.ten\n"
                 "cache.bins = matchinst(/bin-[1-3]00/, sample.bin)\n"
                 "cache.kb = mkconst(10, type=64, semantics=instant, units=\"Kbyte\")\n"
                 "cache.sum(oneline) = the sum\n"
                 "cache.sum(helptext) = \"the sum of two constants\"\n")


def test_config_remembered_from_process_to_process(tmp_path):
    """A configuration read clean is remembered by the first process
    (pcp._libpcp.derived.config_cache) and registered by the next without being parsed
    at its first context, each expression parsed when first used: every answer as
    libpcp's, also after a failed parse left the scanner inside a matchinst() (the
    remembered expressions parse from a clean state, as at start). A remembered file
    others may write is not read; changed bytes are parsed again; a configuration with
    an error is parsed and reported every time."""
    conf = tmp_path / "derived.conf"
    conf.write_text(CACHED_CONFIG)
    probes = tmp_path / "probes"
    snippet = CONFIG_SNIPPET % {"env": str(conf), "path": "", "context": 1,
                                "target": "local:", "live": True, "fetch": True}
    start = "ctx = pmapi.pmContext(1, 'local:')\n"
    assert start in snippet
    # ours only (the official module has no __implementation__): was the parser needed
    # to make the first context?
    probe = ("if hasattr(pmapi, '__implementation__'):\n"
             "    open(%r, 'a').write('%%s\\n' %% ('pcp._libpcp.derived.parser' in sys.modules))\n"
             % str(probes))
    snippet = ("import os, sys\nos.environ['PCP_NATIVE_CACHE_DIR'] = %r\n" % str(tmp_path / "cache")
               + snippet.replace(start, start + probe))
    _compare(snippet)                                   # parsed, remembered
    assert (tmp_path / "cache").is_dir()
    _compare(snippet)                                   # registered from memory
    remembered = tmp_path / "cache" / "derived-config.marshal"
    assert remembered.stat().st_mode & 0o777 == 0o600
    remembered.chmod(0o666)                             # others may write it: not read
    _compare(snippet)
    unreduced = ("R0 = catch(ctx.pmRegisterDerived, 'cache.bad', "
                 "'matchinst(/bin/ sample.bin)')\n")
    _compare(snippet.replace(start + probe, start + probe + unreduced))
    conf.write_text(CACHED_CONFIG.replace("sample.long.one +", "sample.long.ten +"))
    _compare(snippet)                                   # same size, other bytes: parsed
    conf.write_text(CACHED_CONFIG + "cache.broken = sample.long.one +\n")
    _compare(snippet)
    _compare(snippet)                                   # reported again
    assert probes.read_text().split() == ["True", "False", "True", "False", "True", "True",
                                          "True"]


# ---- the rest of the API over derived metrics ---------------------------------------------

OTHER_SNIPPET = r'''
import os
os.environ["PCP_DERIVED_CONFIG"] = ""
ctx = pmapi.pmContext(%(context)r, %(target)r)
ctx.pmRegisterDerived("other.sum", "sum(sample.bin)")
ctx.pmRegisterDerived("other.bins", "sample.bin * 2")
ctx.pmRegisterDerived("other.rate", "rate(sample.milliseconds)")
ctx.pmRegisterDerived("other.bad", "sample.long.one + no.such.metric")
pm = ctx.pmLookupName(["other.sum", "other.bins", "other.rate", "other.bad"], relaxed=1)
R = {"labels": [catch(lambda: ctx.pmLookupLabels(p)) for p in pm[:3]],
     "labels_bad": catch(lambda: ctx.pmLookupLabels(pm[3]))}
if %(context)r == c_api.PM_CONTEXT_ARCHIVE:
    R["fetch_archive"] = catch(lambda: ctx.pmFetchArchive().contents.numpmid)
    ctx.pmSetMode(c_api.PM_MODE_INTERP, ctx.pmGetArchiveLabel().start, 300)
group = pmapi.fetchgroup(%(context)r, %(target)r)
items = [group.extend_item("other.sum"), group.extend_item("other.sum", c_api.PM_TYPE_STRING)]
if %(context)r == c_api.PM_CONTEXT_ARCHIVE:      # live rates depend on the clock
    items.append(group.extend_item("other.rate"))
indom = group.extend_indom("other.bins", c_api.PM_TYPE_DOUBLE)
R["fetchgroup"] = []
for k in range(4):
    sts = catch(group.fetch)
    row = [sts]
    for it in items:
        row.append(catch(it))
    row.append(catch(lambda: [[i, n, v()] for i, n, v in indom()]))
    R["fetchgroup"].append(row)
RESULT = R
'''


def test_labels_fetchgroup_live():
    ref = _compare(OTHER_SNIPPET % {"context": 1, "target": "local:"})
    assert ref["fetchgroup"]


def test_labels_fetchgroup_archive(corpus):
    ref = _compare(OTHER_SNIPPET % {"context": 2, "target": corpus["v2"]})
    assert ref["fetchgroup"]


# ---- random expressions -------------------------------------------------------------------

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

SINGULAR = ["sample.long.ten", "sample.ulong.hundred", "sample.longlong.million",
            "sample.ulonglong.ten", "sample.float.hundred", "sample.double.ten",
            "sample.long.one", "sample.ulong.million"]
BINNED = ["sample.bin", "sample.ulong.bin", "sample.float.bin", "sample.double.bin",
          "sample.longlong.bin", "sample.ulonglong.bin"]
COUNTERS = ["sample.seconds", "sample.milliseconds", "sample.long.bin_ctr",
            "sample.ulonglong.bin_ctr", "sample.double.bin_ctr"]
OPERATORS = ["+", "-", "*", "/", "<", "<=", "==", ">=", ">", "!=", "&&", "||"]

_leaf = st.one_of(
    st.sampled_from(SINGULAR + BINNED),
    st.integers(min_value=0, max_value=5000).map(str),
    st.sampled_from(["2.5", "0.125", "1000000.0"]),
    st.builds("{}({})".format, st.sampled_from(["sum", "avg", "count", "instant"]),
              st.sampled_from(BINNED + SINGULAR)),
    st.builds("{}({})".format, st.sampled_from(["delta", "rate"]),
              st.sampled_from(COUNTERS + BINNED + SINGULAR)),
    st.builds("{}[bin-{}00]".format, st.sampled_from(BINNED), st.integers(1, 9)),
)


def _extend(inner):
    return st.one_of(
        st.builds("({} {} {})".format, inner, st.sampled_from(OPERATORS), inner),
        st.builds("-({})".format, inner),
        st.builds("({0} ? {1} : {1} + {1})".format, inner, inner),
        st.builds("matchinst(/bin-[{}-9]/, {})".format, st.integers(1, 9), inner),
    )


EXPRESSIONS = st.recursive(_leaf, _extend, max_leaves=6)


@settings(max_examples=int(os.environ.get("PCP_DERIVED_EXAMPLES", "4")), deadline=None, derandomize="PCP_DERIVED_SEED_RANDOM" not in os.environ,
          suppress_health_check=list(HealthCheck))
@given(st.lists(EXPRESSIONS, min_size=25, max_size=25))
def test_random_expressions_on_archive(corpus, exprs):
    """Random expressions over sample metrics of every type (semantic errors included),
    fetched from an archive forwards and interpolated: names, descriptors and values."""
    for mode in ("forw", "interp"):
        _compare(_program(2, corpus["v2"], exprs, mode, fetches=8))
