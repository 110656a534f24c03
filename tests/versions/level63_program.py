"""The program tests/versions/test_level63.py runs on each side: what PCP 6.3 changed in the
binding, each answer imaged as JSON. It runs unchanged on 6.0.3 and 6.3.8 (and on this package
at either level), so the same program shows both that level 6.3 matches 6.3.8 and that level
6.0 still matches 6.0.3. Argument: the QA archive to read."""

from support.jsonimage import PRELUDE

PROGRAM = r'''
import ctypes, datetime, json, math, os, shutil, sys, tempfile
from pcp import pmapi, mmv
import cpmapi as c_api

ARCHIVE = %(archive)r
HOST = "127.0.0.1"

''' + PRELUDE + r'''
out = {}

# ---- results: get_sec / get_nsec / get_numpmid (6.3: pmHighResResult's only) ---------------
def accessors(result):
    r = result.contents
    shown = {"has": [hasattr(r, n) for n in ("get_sec", "get_nsec", "get_numpmid")]}
    if hasattr(r, "get_sec"):
        shown["values"] = [image(r.get_sec()), image(r.get_nsec()), image(r.get_numpmid())]
        shown["agree"] = [r.get_sec() == r.timestamp.tv_sec, r.get_nsec() == r.timestamp.tv_nsec,
                          r.get_numpmid() == r.numpmid]
    return shown

ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, ARCHIVE)
pmids = ctx.pmLookupName(("kernel.all.load", "hinv.ncpu", "kernel.all.cpu.user"))
out["archive_highres"] = [accessors(ctx.pmFetchHighRes(pmids)) for _ in range(3)]
ctx.pmSetMode(c_api.PM_MODE_FORW, pmapi.timeval(0, 0), 0)
out["archive_timeval"] = accessors(ctx.pmFetch(pmids))
live = pmapi.pmContext(c_api.PM_CONTEXT_HOST, HOST)
lpmids = live.pmLookupName(("sample.long.one", "sample.seconds"))
out["live_highres"] = {k: v for k, v in accessors(live.pmFetchHighRes(lpmids)).items()
                       if k != "values"}
out["live_timeval"] = accessors(live.pmFetch(lpmids))

# ---- PM_ERR_ARG, pmErrSymDict, PMCD_HOSTNAME_CHANGE ------------------------------------
code = -12415
out["err_arg"] = {"name": hasattr(c_api, "PM_ERR_ARG"), "sym": c_api.pmErrSymDict.get(code),
                  "str": str(pmapi.pmErr(code)), "errstr": pmapi.pmContext.pmErrStr(code),
                  "repr": repr(pmapi.pmErr(code)), "errno": pmapi.pmErr(code).errno(),
                  "symbols": len(c_api.pmErrSymDict)}
out["names"] = {n: getattr(c_api, n, None) for n in (
    "PMCD_HOSTNAME_CHANGE", "PM_CTXFLAG_SHALLOW", "PM_CTXFLAG_AUTH", "PM_CTXFLAG_CONTAINER",
    "PM_CTXFLAG_NO_FEATURE_CHECK", "PM_CTXFLAG_METADATA_ONLY", "PMCD_NAMES_CHANGE")}

# ---- the context flags, in pmNewContext's type -------------------------------------------
def open_with(kind, source, flag):
    c = pmapi.pmContext(kind | flag, source)
    try:
        ids = c.pmLookupName(("kernel.all.load",) if kind == c_api.PM_CONTEXT_ARCHIVE
                             else ("sample.long.one",))
        desc = c.pmLookupDescs(ids)[0]
        res = c.pmFetch(ids)
        return {"type": c.type, "pmid": ids[0], "desc": [desc.type, desc.sem],
                "numval": res.contents.get_numval(0)}
    finally:
        del c

flags = [1 << 8, 1 << 13, 1 << 14, 1 << 15, 1 << 16, 1 << 9, 1 << 12]
out["flags_archive"] = [catch(open_with, c_api.PM_CONTEXT_ARCHIVE, ARCHIVE, f) for f in flags]
out["flags_host"] = [catch(open_with, c_api.PM_CONTEXT_HOST, HOST, f) for f in flags]

# ---- timeval / timespec constructors (6.3: a float or datetime alone) --------------------
when = datetime.datetime(2020, 2, 3, 4, 5, 6, 750000)
cases = [(), (5,), (5, 7), (1.5,), (0.25,), (-1.5,), (1.5, 3), (5, 2.75), ("5",), (when,),
         (None,), (2**40 + 0.5,)]
def fields(cls, args):
    t = cls(*args)
    return [t._fields_[0][0], getattr(t, t._fields_[0][0]), getattr(t, t._fields_[1][0])]
out["timeval"] = [catch(fields, pmapi.timeval, a) for a in cases]
out["timespec"] = [catch(fields, pmapi.timespec, a) for a in cases]
out["keywords"] = [catch(lambda: pmapi.timeval(sec=2.5).tv_usec),
                   catch(lambda: pmapi.timespec(sec=2.5).tv_nsec)]

# ---- tm.struct_time's yday ----------------------------------------------------------------
out["struct_time"] = [list(ctx.pmLocaltime(t).struct_time()) for t in (0, 86400 * 40, 1e9)]

# ---- pmLookupText's type, pmLoadDerivedConfig's count ------------------------------------
pid = live.pmLookupName(("sample.long.one",))[0]
out["text"] = [catch(live.pmLookupText, pid), catch(live.pmLookupText, pid, c_api.PM_TEXT_HELP)]
folder = tempfile.mkdtemp()
try:
    path = os.path.join(folder, "derived.conf")
    with open(path, "w") as stream:
        stream.write("levels.test.one = sample.long.one + 1\n"
                     "levels.test.two = 2 * sample.long.one\n")
    out["derived"] = catch(live.pmLoadDerivedConfig, path)

    # ---- pmiWrite with a float or datetime alone (6.3) -----------------------------------
    from pcp import pmi
    def write(stamps):
        name = os.path.join(folder, "pmi%%d" %% len(os.listdir(folder)))
        log = pmi.pmiLogImport(name)
        log.pmiAddMetric("levels.value", log.pmiID(245, 0, 1), c_api.PM_TYPE_U32,
                         c_api.PM_INDOM_NULL, c_api.PM_SEM_INSTANT, log.pmiUnits(0, 0, 0, 0, 0, 0))
        statuses = []
        for args in stamps:
            # a write refused (6.0.3: no usec) leaves the value pending: put it once
            if not statuses or statuses[-1] == 0:
                log.pmiPutValue("levels.value", None, "7")
            statuses.append(catch(log.pmiWrite, *args))
        log.pmiEnd()
        del log
        read = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, name)
        ids = read.pmLookupName(("levels.value",))
        times = []
        while True:
            try:
                r = read.pmFetch(ids)
            except pmapi.pmErr:
                break
            times.append([r.contents.timestamp.tv_sec, r.contents.timestamp.tv_usec])
        return {"status": statuses, "times": times}
    later = datetime.datetime(2020, 9, 13, 12, 26, 42, 750000)    # 1600000002.75
    out["pmiWrite"] = catch(write, [(1600000000, 250000), (1600000001.5,), (later,),
                                    (1600000003, 0), (1600000004.25, 0), (1600000005.5, None)])
finally:
    shutil.rmtree(folder, True)

# ---- mmv's constructors ----------------------------------------------------------------------
units = pmapi.pmUnits(0, 0, 1, 0, 0, 0)
m = mmv.mmv_metric(b"levels.m", 3, mmv.MMV_TYPE_U32 if hasattr(mmv, "MMV_TYPE_U32") else 2,
                   3, units, shorttext=b"short", helptext=b"long")
i = mmv.mmv_indom(7, shorttext=b"ishort", helptext=b"ilong")
out["mmv"] = {"metric": [image(m.name), m.item, m.typeof, m.semantics, m.indom,
                         image(m.shorttext), image(m.helptext)],
              "indom": [i.serial, image(i.shorttext), image(i.helptext)],
              "indom_null": getattr(mmv, "MMV_INDOM_NULL", None)}

# a registry with no metrics and no instance domains (6.3 hands libpcp_mmv NULL arrays)
mmv_dir = tempfile.mkdtemp()
os.environ["PCP_TMP_DIR"] = mmv_dir
os.mkdir(os.path.join(mmv_dir, "mmv"))
try:
    empty = mmv.MemoryMappedValues("levels-empty")
    mapped = os.path.join(mmv_dir, "mmv", "levels-empty")
    out["mmv_empty"] = [catch(empty.start), sorted(os.listdir(os.path.dirname(mapped))),
                        catch(os.path.getsize, mapped)]
    empty.stop()
finally:
    shutil.rmtree(mmv_dir, True)

# ---- pmconfig: prepare_metrics(pmns=True) (6.3), set_attr's values made str (6.3) ------------
from collections import OrderedDict
from pcp import pmconfig

class Operands:
    def pmGetOperands(self):
        return []

class Util:
    pass

util = Util()
util.opts, util.context, util.config, util.globals = Operands(), ctx, None, 0
util.keys, util.metrics = ("derived", "instances"), OrderedDict()
util.derived, util.instances = None, []
config = pmconfig.pmConfig(util)
out["pmconfig"] = {"pmns": catch(lambda: config.prepare_metrics(pmns=True) or sorted(util.metrics)),
                   "none": catch(config.prepare_metrics)}
attrs = []
for name, value in (("derived", "yes"), ("derived", "a=b,c=d"), ("instances", "no"),
                    ("instances", "a,b"), ("derived", "no")):
    attrs.append(catch(lambda: config.set_attr(name, value) or getattr(util, name)))
out["pmconfig"]["set_attr"] = attrs

print(json.dumps(out, sort_keys=True))
'''


def program(archive: str) -> str:
    """The program for a QA archive (its path without the suffix)."""
    return PROGRAM % {"archive": archive}
