"""The derived-metric language of levels 6.3 and 7.2 against libpcp 6.3.8 and 7.2.2 (the
Debian roots' python3-pcp), and level 6.0 against 6.0.3 on the same inputs.

6.3 added novalue() in a ternary, lazy binding of ternaries (a guard constant when
bound, such as defined(), chooses the only branch checked and evaluated), mkconst()'s
and novalue()'s meta=<metric>, delta()/rate()/instant() of expressions, (expr)[name] as
an exact filter, and "\\" continuation lines in configuration files; 7.x indom= and
floating point values in mkconst()/novalue(). The stock configuration files of 6.3.8
and 7.2.2 use these: they must load silently at their level, and give 6.0.3's errors
at level 6.0.

Each test is one program per side: registrations (or a configuration), then names,
descriptors and fetched values on QA archives (INTERP) and on the live pmcd (over TCP,
which the roots reach), compared field by field."""
from __future__ import annotations

import os
import shutil

import pytest

from support import difftest, levelref

pytestmark = [pytest.mark.pmcd, pytest.mark.reference]

LEVELS = levelref.LEVELS
ARCHIVES = ["/var/lib/pcp/testsuite/archives/20180102",
            "/var/lib/pcp/testsuite/archives/pmiostat_mark",
            "/var/lib/pcp/testsuite/archives/proc"]
LIVE = "127.0.0.1"


def _compare(level, snippet, ref_env=None, our_extra=None):
    levelref.require(level)
    ours, ref = levelref.run_both(level, snippet, ref_env, our_extra)
    assert "__crash__" not in (ref if isinstance(ref, dict) else {}), ref
    difftest.assert_equal(ours, ref)
    return ref


# ---- values: one program reads every derived metric of a context -------------------------

READ = r'''
import os
errfile = os.path.join("/tmp", "derived-stderr-%%d.txt" %% os.getpid())
os.environ["PCP_STDERR"] = errfile
TARGETS, EXPRS, FETCHES = %(args)r
HIGHRES = hasattr(pmapi.pmContext, "pmFetchHighRes")
R = {"register": [], "targets": []}
def derived_names(ctx):
    names = []
    ctx.pmTraversePMNS("", names.append)
    out = []
    for n in names:
        pm = ctx.pmLookupName(n)[0]
        if (pm >> 22) & 0x1ff == 511:
            out.append((n, int(pm)))
    return out
def image(ctx, res, types):
    c = res.contents
    sets = []
    for i in range(c.numpmid):
        numval = c.get_numval(i)
        vs = [c.get_pmid(i), numval]
        t = types.get(c.get_pmid(i))
        if numval > 0 and t is not None:
            vs.append([[c.get_inst(i, j), catch(lambda: ctx.pmExtractValue(
                c.get_valfmt(i), c.get_vlist(i, j), t, t).dref(t))] for j in range(numval)])
        sets.append(vs)
    return sets
for kind, target in TARGETS:
    ctx = pmapi.pmContext(kind, target)
    if not R["register"]:
        for i, expr in enumerate(EXPRS):
            R["register"].append([expr, catch(ctx.pmRegisterDerived, "dlev.m%%d" %% i, expr),
                                  catch(P.pmDerivedErrStr)])
    T = {"target": target, "descs": [], "fetch": []}
    R["targets"].append(T)
    found = derived_names(ctx)
    T["names"] = [n for n, pm in found]
    types = {}
    for n, pm in found:
        try:
            d = ctx.pmLookupDesc(pm).contents
            types[pm] = d.type
            T["descs"].append([n, d.type, d.indom, d.sem, P.pmUnitsStr(d.units)])
        except pmapi.pmErr as e:
            T["descs"].append([n, err_info(e)])
    pmids = (ctypes.c_uint * len(types))(*sorted(types))
    if not types:
        continue
    if kind == c_api.PM_CONTEXT_ARCHIVE:
        if HIGHRES:
            start = ctx.pmGetHighResArchiveLabel().start
            ctx.pmSetModeHighRes(c_api.PM_MODE_INTERP, start, pmapi.timespec(600, 0))
        else:
            start = ctx.pmGetArchiveLabel().start
            ctx.pmSetMode(c_api.PM_MODE_INTERP, start, pmapi.timespec(600, 0))
    for k in range(FETCHES):
        try:
            res = ctx.pmFetch(pmids)
        except pmapi.pmErr as e:
            T["fetch"].append(err_info(e))
            break
        sets = image(ctx, res, types)
        if kind == c_api.PM_CONTEXT_HOST:
            # live values move: there, which metrics have values and how many
            sets = [s[:2] for s in sets]
        T["fetch"].append(sets)
try:
    R["stderr"] = open(errfile).read()
    os.unlink(errfile)
except OSError:
    R["stderr"] = ""
RESULT = R
'''


def _read(targets, exprs=(), fetches=4) -> str:
    return READ % {"args": (list(targets), list(exprs), fetches)}


ARCHIVE_TARGETS = [(2, a) for a in ARCHIVES]
ALL_TARGETS = ARCHIVE_TARGETS + [(1, LIVE)]


def _stock_dir(level, tmp_path) -> str:
    """The stock configuration of level's root (7.2.2's for level 6.0), copied where
    both sides read the same path."""
    root = levelref.root_dir((7, 2) if tuple(level) == (6, 0) else level)
    copy = tmp_path / "derived"
    shutil.copytree(os.path.join(root, "etc/pcp/derived"), copy)
    return str(copy)


@pytest.mark.parametrize("level", LEVELS, ids=levelref.level_text)
def test_stock_configuration(level, tmp_path):
    """The root's own $PCP_VAR_DIR/config/derived: silent at 6.3 and 7.2 (6.0.3's errors
    at 6.0), every metric it defines described and fetched on archives and live."""
    if tuple(level) != (6, 0):
        levelref.require(level)
        # the reference reads its own files, where its pcp.conf says; ours the same files
        ref_env = {}
        our_extra = {"PCP_DERIVED_CONFIG": os.path.join(levelref.root_dir(level),
                                                        "etc/pcp/derived")}
    else:
        levelref.require((7, 2))            # the files come from there
        ref_env = {"PCP_DERIVED_CONFIG": _stock_dir(level, tmp_path)}
        our_extra = None
    levelref.require(level)
    ours, ref = levelref.run_both(level, _read(ALL_TARGETS), ref_env, our_extra)
    difftest.assert_equal(ours, ref)
    names = ref["targets"][0]["names"]
    if tuple(level) == (6, 0):
        assert "syntax error" in ref["stderr"] and len(names) >= 3
    else:
        # the files load silently (a metric may still not bind where its operands
        # differ: 7.2.2's proc.hog.mem on the host's pmcd 6.0.3)
        assert "pmLoadDerivedConfig" not in ref["stderr"]
        assert "syntax error" not in ref["stderr"]
        assert len(names) > 20
        assert "disk.dev.await" in names and "kernel.cpu.util.nice" in names


# ---- expressions: the new syntax and binding ----------------------------------------------

EXPRESSIONS = [
    # constant guards: only the chosen branch bound, checked and evaluated
    "defined(kernel.all.cpu.nice) ? 100 * rate(kernel.all.cpu.nice) / hinv.ncpu : novalue(type=double)",
    "defined(no.such.metric) ? 100 * rate(no.such.metric) / hinv.ncpu : novalue(type=double)",
    "defined(no.such.metric) ? no.such.metric : novalue(type=double, units=\"sec\", semantics=instant)",
    "defined(no.such.metric) ? no.such.metric : kernel.all.load",
    "!defined(no.such.metric) ? kernel.all.load : no.such.metric",
    "defined(no.such.metric) || defined(hinv.ncpu) ? hinv.ncpu : no.such.metric",
    "defined(no.such.metric) && defined(hinv.ncpu) ? no.such.metric : hinv.ncpu",
    "1 ? kernel.all.load : no.such.metric",
    "0 ? no.such.metric : kernel.all.cpu.user",
    "defined(disk.dev.total) ? (delta(disk.dev.total) == 0 ? mkconst(0, meta=disk.dev.read, type=double, semantics=instant, units=\"millisec/count\") : delta(disk.dev.total_bytes) / delta(disk.dev.total)) : novalue(meta=disk.dev.read, type=double)",
    # a guard known only when fetched, with novalue() on one side
    "hinv.ncpu > 1 ? kernel.all.load : novalue(meta=kernel.all.load)",
    "hinv.ncpu > 1000 ? kernel.all.load : novalue(meta=kernel.all.load)",
    # (not "hinv.ncpu > 1000 ? novalue() : hinv.ncpu": libpcp 6.3.8 and 7.2.2 die of
    # SIGSEGV there, taking the result's instances from the novalue() branch)
    "kernel.all.load > 0.5 ? kernel.all.load : novalue(meta=kernel.all.load)",
    # metadata from another metric
    "mkconst(3, meta=kernel.all.load)",
    "mkconst(3, meta=hinv.ncpu, type=double)",
    "mkconst(3, meta=kernel.all.cpu.user, semantics=instant) + 1",
    "mkconst(2.5, meta=kernel.all.load)",
    # delta(), rate(), instant() of expressions; an exact filter of an expression
    "rate(kernel.all.cpu.user + kernel.all.cpu.sys)",
    "delta(disk.dev.read * 2)",
    "instant(kernel.all.cpu.user + 1)",
    # (expr)[name] (and not at 6.0: libpcp 6.0.3 dies of SIGSEGV matching its never
    # compiled regular expression)
    "(kernel.all.load * 2)[1 minute]",
    "(kernel.all.load * 2)[1 min.*]",
    # semantic errors of the lazy binding
    "hinv.ncpu ? no.such.metric : hinv.ncpu",
    "defined(hinv.ncpu) ? no.such.metric : hinv.ncpu",
    "defined(no.such.metric) ? 1 : novalue(meta=no.such.other)",
    "mkconst(1, meta=no.such.metric)",
    # 7.x: indom= and floating point values
    "mkconst(1, type=u32, indom=60.2)",
    "defined(no.such.metric) ? no.such.metric : novalue(type=u64, indom=60.2, semantics=instant)",
    "mkconst(1, indom=null)",
    "mkconst(1, indom=60.2foo)",
    "mkconst(1, type=32, units=1.5)",
]

SYNTAX = [
    "novalue()", "novalue(type=double)", "a ? novalue() : novalue()", "a ? novalue( : b",
    "a ? novalue(type) : b", "a ? novalue(type=foo) : b", "a ? b : novalue(meta=3)",
    "a ? b : novalue(meta=\"x\")", "a ? novalue(units=\"foo\") : b", "novalue() + 1",
    "a ? b : novalue() + 1", "a ? b : novalue(", "mkconst(1, meta=a.b)",
    "mkconst(1 type=u32)", "mkconst(1, bogus=2)", "mkconst(1, meta=)", "mkconst(1.5, meta=a)",
    "delta(a + b)", "rate((a))", "instant(3)", "delta(", "rate(a + )", "meta(a)",
    "a + meta", "meta", "a ? b : c", "(a)[x]", "a ? (b ? novalue() : c) : d",
    "mkconst(1, indom=3.4)", "novalue(indom=1.2, type=u32)", "mkconst(1, type=1.5)",
    "a[x] ? novalue() : b", "defined(a) ? novalue(meta=b) : c",
]


@pytest.mark.parametrize("level", LEVELS, ids=levelref.level_text)
def test_expressions(level):
    """pmRegisterDerived of the new constructs, then lookups, descriptors and values on
    archives and live, as that level's libpcp gives them."""
    exprs = [e for e in EXPRESSIONS if tuple(level) >= (6, 3) or not e.startswith("(")]
    ref = _compare(level, _read(ALL_TARGETS, exprs), {"PCP_DERIVED_CONFIG": ""})
    if tuple(level) >= (6, 3):
        assert all(row[1] is None for row in ref["register"][:20]), ref["register"][:20]


@pytest.mark.parametrize("level", LEVELS, ids=levelref.level_text)
def test_syntax(level):
    snippet = r'''
import os
ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, %r)
RESULT = [[expr, catch(ctx.pmRegisterDerived, "bad.m%%d" %% i, expr), catch(P.pmDerivedErrStr)]
          for i, expr in enumerate(%r)]
''' % (ARCHIVES[0], SYNTAX)
    _compare(level, snippet, {"PCP_DERIVED_CONFIG": ""})


CONTINUED = r"""# continuation lines (6.3)
dlev.a = kernel.all.load \
    * 2
dlev.a(oneline) = two loads
dlev.b = defined(no.such) ? \
  no.such : \
  novalue(type=double)
dlev.c = kernel.all.load +
dlev.d = \

dlev.e = hinv.ncpu \
# a comment \
dlev.f = hinv.ncpu
dlev.f(helptext) = '\
a help text \
over lines'
dlev.g = hinv.ncpu $
"""


@pytest.mark.parametrize("level", LEVELS, ids=levelref.level_text)
def test_config_continuation(level, tmp_path):
    """A file of continued lines read by both sides from the same path (the roots' /tmp
    is not the host's: the file goes where both see it, the QA archive mount's side)."""
    levelref.require(level)
    path = "/tmp/pcp-native-derived-%d.conf" % os.getpid()
    hosts = ["/tmp"] + ([os.path.join(levelref.root_dir(level), "tmp")]
                        if tuple(level) != (6, 0) else [])
    written = []
    try:
        for where in hosts:
            target = os.path.join(where, os.path.basename(path))
            with open(target, "w", encoding="utf-8") as stream:
                stream.write(CONTINUED)
            written.append(target)
        ref = _compare(level, _read(ARCHIVE_TARGETS[:1]), {"PCP_DERIVED_CONFIG": path})
    finally:
        for target in written:
            os.unlink(target)
    assert ref["targets"][0]["names"]


# ---- 7.2's "#control" lines and $PCP_DERIVED_CONTROL ------------------------------------

CONTROLLED = """# control options (7.2): limits, novalue() for missing operands, libpcp's debug flags
#control global_limit=3
#CONTROL option_novalue=1,debug_eval=0
#control bogus=1,global_limit=3
#control global_limit
#control global_limit=
#control global_limit=x5,option_novalue=0
#control global_limit=3 ,option_novalue=0
#control context_limit=4
#control context_limit=0
#control global_limit=0
#control option_novalue=2
#controlglobal_limit=3
#control  global_limit=3
#control g=3,=3,OPTION_NOVALUE=1
#control global_limit=3,
#control global_limit=99999999999
#control global_limit=3
dctl.a = no.such.metric
dctl.b = defined(no.such.metric) ? 1 : 2
dctl.c = kernel.all.load
dctl.d = hinv.ncpu
"""

# loaded through pmLoadDerivedConfig once a context exists: its context_limit is set
LOADED_LATER = """#control context_limit=4,global_limit=4
#control debug_syntax=0,option_novalue=1
"""

CONTROL_AFTER = r'''
import sys
R["after"] = [catch(ctx.pmRegisterDerived, "dctl.late", "hinv.ncpu"),
              catch(ctx.pmLoadDerivedConfig, LATER),
              catch(ctx.pmRegisterDerived, "dctl.later", "hinv.ncpu"),
              catch(ctx.pmRegisterDerived, "dctl.latest", "hinv.ncpu"),
              catch(P.pmDebug, "derive") if hasattr(P, "pmSetDebug") else None]
sys.stderr.flush()
os.dup2(SAVED_FD2, 2)
R["fd2"] = open(FD2_FILE).read()
os.unlink(FD2_FILE)
'''


def _write_both(level, name: str, text: str, written: list) -> str:
    """A file under /tmp at the same path for both sides (the roots' /tmp is not the
    host's); its path. `written` collects what to remove."""
    path = "/tmp/pcp-native-%s-%d" % (name, os.getpid())
    for where in ["/tmp"] + ([os.path.join(levelref.root_dir(level), "tmp")]
                             if tuple(level) != (6, 0) else []):
        target = os.path.join(where, os.path.basename(path))
        with open(target, "w", encoding="utf-8") as stream:
            stream.write(text)
        written.append(target)
    return path


@pytest.mark.parametrize("level", LEVELS, ids=levelref.level_text)
def test_config_control_lines(level):
    """#control lines of a configuration file (comments before 7.2), with and without
    $PCP_DERIVED_CONTROL (whose settings win): the warnings libpcp writes to stderr, the
    limit on global metrics, missing operands mapped to novalue(), the debug flags."""
    levelref.require(level)
    written: list = []
    try:
        config = _write_both(level, "control.conf", CONTROLLED, written)
        later = _write_both(level, "later.conf", LOADED_LATER, written)
        fd2 = "/tmp/pcp-native-fd2-%d" % os.getpid()
        prelude = ("import os\nLATER = %r\nFD2_FILE = %r\nSAVED_FD2 = os.dup(2)\n"
                   "os.dup2(os.open(FD2_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), 2)\n"
                   % (later, fd2))
        snippet = prelude + _read(ARCHIVE_TARGETS[:1], fetches=2) + CONTROL_AFTER
        for target in [fd2] + ([os.path.join(levelref.root_dir(level), "tmp",
                                             os.path.basename(fd2))]
                               if tuple(level) != (6, 0) else []):
            written.append(target)
        refs = []
        for env in ({}, {"PCP_DERIVED_CONTROL": "global_limit=2,bogus,option_novalue=1"},
                    {"PCP_DERIVED_CONTROL": "context_limit=3,global_limit=4,debug_semantics=x"},
                    {"PCP_DERIVED_CONTROL": "o=0,G=5,debug_eval=0,unknown=3,option_novalue="}):
            refs.append(_compare(level, snippet, dict(env, PCP_DERIVED_CONFIG=config)))
    finally:
        for target in written:
            if os.path.exists(target):
                os.unlink(target)
    if tuple(level) >= (7, 2):
        assert "unknown derived metric control (bogus)" in refs[0]["fd2"], refs[0]["fd2"]
        assert "Too many global derived metrics" in refs[0]["stderr"], refs[0]["stderr"]
    else:
        names = refs[0]["targets"][0]["names"]
        assert refs[0]["fd2"] == "" and len([n for n in names if n.startswith("dctl.")]) == 4, \
            refs[0]


@pytest.mark.parametrize("level", LEVELS, ids=levelref.level_text)
def test_derived_option_before_global_config(level):
    """--derived before any context: from 7.x (two-phase initialisation) its metrics are
    registered before $PCP_DERIVED_CONFIG's, which wait for the first context; 6.x loads
    the global configuration first. The pmIDs show the order."""
    levelref.require(level)
    written: list = []
    try:
        global_conf = _write_both(level, "global.conf",
                                  "#control option_novalue=1\ndglob.a = no.such.metric\n", written)
        option_conf = _write_both(level, "option.conf", "dopt.b = hinv.ncpu\n"
                                  "dopt.c = no.such.metric\n", written)
        snippet = r'''
opts = pmapi.pmOptions("a:")
opts.pmSetLongOptionArchive()
opts.pmSetLongOption("derived", 1, "", "FILE", "derived metric definitions")
ctx = pmapi.pmContext.fromOptions(opts, ["prog", "-a", %r, "--derived", %r])
RESULT = [[name, catch(lambda: ctx.pmIDStr(ctx.pmLookupName(name)[0])),
           catch(lambda: ctx.pmLookupDescs(ctx.pmLookupName(name))[0].contents.type)]
          for name in ("dglob.a", "dopt.b", "dopt.c")]
''' % (ARCHIVES[0], option_conf)
        ref = _compare(level, snippet, {"PCP_DERIVED_CONFIG": global_conf})
    finally:
        for target in written:
            os.unlink(target)
    assert all(isinstance(row[1], str) for row in ref[:2]), ref
