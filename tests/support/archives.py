"""Test archive corpus, generated at test time from the live pmcd.

``get_corpus()`` records a few seconds of sample/linux/pmcd metrics with
pmlogger into a fresh temporary directory (once per pytest process) and
derives every variant the archive tests need from those recordings:

==================  ======================================================
name                what it is
==================  ======================================================
v2                  pmlogger -V 2 recording, 100 ms + 500 ms groups
v3                  ``pmlogextract -V 3`` twin of v2
v3native            pmlogger -V 3 recording (same time, same config):
                    v3 labels with zoneinfo, INDOM_DELTA records
xz_all              v2 with volume, .meta and .index all ``xz -k``'ed
xz_vol              v2 with only the data volume xz'ed
gz_meta_index       v2 with .meta and .index gzip'ed, plain volume
bz2_v3              v3native, everything bzip2'ed
xz_v3               v3native, everything xz'ed
mv                  multi-volume v2 (pmlogger -v 40k, >= 3 volumes)
mv_gap              mv without its middle volume(s) (only first and last)
mv3                 ``pmlogextract -V 3 -v 10`` multi-volume v3
next                short v2 recording started after v2 ended
marks               ``pmlogextract`` of v2 + next: mark record between them
marks3              the same written as v3
noindex             v2 without .index
==================  ======================================================

Multi-archive names (pmNewContext accepts a directory or a comma list):

==================  ======================================================
dir_pair            directory holding copies of v2 and next
list_pair           "v2,next" comma list
list_pair3          v3 twins of v2 and next, comma list
overlap_pair        v2 plus a pmlogextract'ed window of it starting 1 s in
                    (PM_ERR_LOGOVERLAP when reading crosses the boundary)
same_start_dir      v2 plus a renamed copy (same start: LOGOVERLAP at open)
otherhost_pair      v2 plus an archive whose label host differs (LOGHOST)
==================  ======================================================

During the recording sample.many.count is stored (5 -> 2 -> 0 -> 8) so that
indom 29.8 changes over time (and becomes empty once), and sample.proc's
indom changes by itself on every fetch (instance names contain spaces), so
instance-domain-at-time-T is exercised.  sample.many.count is restored.

The corpus is removed at exit unless PCP_KEEP_TEST_ARCHIVES is set (its
path is get_corpus()["root"]).  Building it takes about 4 s (the recordings
run concurrently; pmlogger is retried once if it fails, e.g. when pmcd was
just restarted by another test run).

All variants are small (a few hundred KB in total).  Contents differ from
run to run: tests compare ours vs reference on the same files, never against
hard-coded values.
"""

import bz2
import glob
import gzip
import os
import shutil
import struct
import subprocess
import tempfile
import threading
import time

from . import shared

FAST = [
    "sample.long", "sample.ulong", "sample.longlong", "sample.ulonglong",
    "sample.float", "sample.double", "sample.string", "sample.aggregate",
    "sample.bin", "sample.colour", "sample.seconds", "sample.milliseconds",
    "sample.many.int", "sample.proc", "sample.event.records",
    "sample.event.highres_records", "sample.bad.fetch.again",
    "sample.bad.novalues", "sample.noinst", "sample.dynamic.counter",
    "sample.dynamic.instant", "sample.dupnames.two.seconds",
]
SLOW = [
    "hinv.ncpu", "hinv.pagesize", "hinv.physmem", "kernel.uname",
    "pmcd.version", "pmcd.numagents", "pmcd.agent.status", "sample.hordes.one",
    "sample.sysinfo",
]
# the small archive used for byte-level damage: few metrics, 100 ms
SMALL = ["sample.long.one", "sample.bin", "sample.colour", "sample.string.hullo",
         "sample.double.ten", "sample.proc.exec", "sample.seconds"]

CONFIG = """log mandatory on 100 msec {
  %s
}
log mandatory on 500 msec {
  %s
}
""" % ("\n  ".join(FAST), "\n  ".join(SLOW))

SMALL_CONFIG = """log mandatory on 100 msec {
  %s
}
""" % "\n  ".join(SMALL)

# many.count schedule: (seconds after the loggers started, value)
MANY_SCHEDULE = [(0.7, 2), (1.3, 0), (1.9, 8)]

_LOCK = threading.Lock()


class CorpusError(Exception):
    pass


def _run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, **kw)
    if p.returncode != 0:
        raise CorpusError("%s failed (%s): %s %s" % (" ".join(cmd), p.returncode,
                                                     p.stdout[-2000:], p.stderr[-2000:]))
    return p.stdout


def _pmlogger(dirpath, base, config, extra=(), samples=36):
    os.makedirs(dirpath, exist_ok=True)
    cfg = os.path.join(dirpath, base + ".config")
    with open(cfg, "w") as f:
        f.write(config)
    cmd = ["pmlogger", "-h", "local:", "-c", cfg, "-s", str(samples),
           "-l", os.path.join(dirpath, base + ".log")] + list(extra) + [base]
    return subprocess.Popen(cmd, cwd=dirpath, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _wait(p, what, logfile=None):
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise CorpusError("pmlogger %s timed out" % what)
    if p.returncode != 0:
        log = ""
        if logfile and os.path.exists(logfile):
            with open(logfile) as f:
                log = f.read()[-3000:]
        raise CorpusError("pmlogger %s failed (%s): %s %s\n%s" % (what, p.returncode, out, err, log))


def _files(base):
    """The physical files of archive `base` (any compression)."""
    d, b = os.path.split(base)
    out = []
    for f in sorted(os.listdir(d)):
        if f.startswith(b + "."):
            rest = f[len(b) + 1:]
            core = rest.split(".")[0]
            if core in ("meta", "index") or core.isdigit():
                out.append(os.path.join(d, f))
    return out


def copy_archive(src, dstdir, newbase=None, skip=()):
    """Copy the files of archive `src` into `dstdir` (renamed to `newbase`);
    `skip` lists suffixes (".1", ".index") not to copy.  Returns the new base."""
    os.makedirs(dstdir, exist_ok=True)
    b = os.path.basename(src)
    nb = newbase or b
    for f in _files(src):
        suffix = os.path.basename(f)[len(b):]
        if suffix in skip:
            continue
        shutil.copyfile(f, os.path.join(dstdir, nb + suffix))
    return os.path.join(dstdir, nb)


def _compress(path, how):
    if how == "xz":
        _run(["xz", "-k", "-f", path])
        os.unlink(path)
    elif how == "gz":
        with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
            g.write(f.read())
        os.unlink(path)
    elif how == "bz2":
        with open(path, "rb") as f, bz2.open(path + ".bz2", "wb") as g:
            g.write(f.read())
        os.unlink(path)
    else:
        raise ValueError(how)


def _pmstore(name, value):
    subprocess.run(["pmstore", "-h", "local:", name, str(value)],
                   capture_output=True, timeout=30)


def _pmprobe_value(name):
    p = subprocess.run(["pmprobe", "-h", "local:", "-v", name], capture_output=True,
                       text=True, timeout=30)
    f = p.stdout.split()
    if p.returncode == 0 and len(f) >= 3 and f[1] == "1":
        return f[2]
    return None


def _volumes(base):
    vols = set()
    for f in _files(base):
        core = os.path.basename(f)[len(os.path.basename(base)) + 1:].split(".")[0]
        if core.isdigit():
            vols.add(int(core))
    return sorted(vols)


def build(root):
    """Build the whole corpus under `root`; return {name: path or name list}."""
    t0 = time.time()
    c = {}
    rec = os.path.join(root, "rec")
    old_many = _pmprobe_value("sample.many.count") or "5"
    # phase 1: the main recordings, concurrently
    procs = [
        ("v2", _pmlogger(rec, "v2", CONFIG, ["-V", "2"])),
        ("v3native", _pmlogger(rec, "v3native", CONFIG, ["-V", "3"])),
        ("mv", _pmlogger(rec, "mv", CONFIG, ["-V", "2", "-v", "40k"])),
        ("small", _pmlogger(rec, "small", SMALL_CONFIG, ["-V", "2"], samples=12)),
        ("small3", _pmlogger(rec, "small3", SMALL_CONFIG, ["-V", "3"], samples=12)),
    ]
    try:
        start = time.time()
        for when, value in MANY_SCHEDULE:
            delay = start + when - time.time()
            if delay > 0:
                time.sleep(delay)
            _pmstore("sample.many.count", value)
        for name, p in procs:
            _wait(p, name, os.path.join(rec, name + ".log"))
    finally:
        _pmstore("sample.many.count", old_many)
        for name, p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    # phase 2: archives that must start after phase 1 ended
    time.sleep(0.05)
    procs = [("next", _pmlogger(rec, "next", CONFIG, ["-V", "2"], samples=8)),
             ("otherhost", _pmlogger(rec, "otherhost", SMALL_CONFIG,
                                     ["-V", "2", "-H", "otherhost.example"], samples=4))]
    for name, p in procs:
        _wait(p, name, os.path.join(rec, name + ".log"))
    for name in ("v2", "v3native", "mv", "next", "small", "small3", "otherhost"):
        c["rec_" + name] = os.path.join(rec, name)

    def variant(name, src, skip=(), newbase="base"):
        return copy_archive(src, os.path.join(root, name), newbase, skip)

    c["v2"] = variant("v2", c["rec_v2"])
    c["v3native"] = variant("v3native", c["rec_v3native"])
    c["next"] = variant("next", c["rec_next"], newbase="next")
    c["small"] = variant("small", c["rec_small"], newbase="small")
    c["small3"] = variant("small3", c["rec_small3"], newbase="small3")
    d = os.path.join(root, "v3")
    os.makedirs(d)
    _run(["pmlogextract", "-V", "3", c["v2"], os.path.join(d, "base")])
    c["v3"] = os.path.join(d, "base")
    d = os.path.join(root, "next3")
    os.makedirs(d)
    _run(["pmlogextract", "-V", "3", c["next"], os.path.join(d, "next")])
    c["next3"] = os.path.join(d, "next")
    # compressed variants
    for name, src, plan in (
            ("xz_all", c["v2"], {".0": "xz", ".meta": "xz", ".index": "xz"}),
            ("xz_vol", c["v2"], {".0": "xz"}),
            ("gz_meta_index", c["v2"], {".meta": "gz", ".index": "gz"}),
            ("bz2_v3", c["v3native"], {".0": "bz2", ".meta": "bz2", ".index": "bz2"}),
            ("xz_v3", c["v3native"], {".0": "xz", ".meta": "xz", ".index": "xz"})):
        b = variant(name, src)
        for suffix, how in plan.items():
            _compress(b + suffix, how)
        c[name] = b
    c["noindex"] = variant("noindex", c["v2"], skip=(".index",))
    # multi-volume
    c["mv"] = variant("mv", c["rec_mv"], newbase="mv")
    vols = _volumes(c["mv"])
    if len(vols) < 3:
        raise CorpusError("multi-volume recording has only volumes %r" % vols)
    c["mv_volumes"] = vols
    c["mv_gap"] = variant("mv_gap", c["rec_mv"], newbase="mv",
                          skip=tuple(".%d" % v for v in vols[1:-1]))
    d = os.path.join(root, "mv3")
    os.makedirs(d)
    _run(["pmlogextract", "-V", "3", "-v", "10", c["mv"], os.path.join(d, "mv")])
    c["mv3"] = os.path.join(d, "mv")
    # marks: pmlogextract of two consecutive archives
    for name, ver in (("marks", "2"), ("marks3", "3")):
        d = os.path.join(root, name)
        os.makedirs(d)
        _run(["pmlogextract", "-m", "-V", ver, c["v2"], c["next"], os.path.join(d, "ab")])
        c[name] = os.path.join(d, "ab")
    # multi-archive contexts
    d = os.path.join(root, "dir_pair")
    copy_archive(c["v2"], d, "a_first")
    copy_archive(c["next"], d, "b_second")
    c["dir_pair"] = d
    c["list_pair"] = c["v2"] + "," + c["next"]
    c["list_pair3"] = c["v3"] + "," + c["next3"]
    d = os.path.join(root, "overlap")
    os.makedirs(d)
    # a window of v2 from 1 s after its start, ending before v2 ends
    _run(["pmlogextract", "-S", "+1sec", "-T", "+1sec", c["v2"], os.path.join(d, "part")])
    c["overlap_part"] = os.path.join(d, "part")
    c["overlap_pair"] = c["v2"] + "," + c["overlap_part"]
    d = os.path.join(root, "same_start")
    copy_archive(c["v2"], d, "one")
    copy_archive(c["v2"], d, "two")
    c["same_start_dir"] = d
    c["otherhost"] = variant("otherhost", c["rec_otherhost"], newbase="other")
    c["otherhost_pair"] = c["v2"] + "," + c["otherhost"]
    c["build_seconds"] = time.time() - t0
    return c


def get_corpus():
    """Build the corpus once per test session, shared by every worker process
    (support.shared); raise CorpusError on failure (also on every later call)."""
    with _LOCK:
        return shared.build_once("archive-corpus", _build_with_retry, CorpusError)


def _build_with_retry(folder):
    errors = []
    # one retry: pmlogger fails now and then when pmcd is busy (or was
    # just restarted by another test run)
    for attempt in range(2):
        root = tempfile.mkdtemp(prefix="attempt-", dir=folder)
        try:
            corpus = build(root)
        except (CorpusError, OSError, subprocess.SubprocessError) as e:
            errors.append("%s: %s" % (root, e))
            time.sleep(2)
            continue
        corpus["root"] = root
        corpus["build_errors"] = errors
        return corpus
    raise CorpusError("cannot build the archive corpus: %s" % errors)


# Variants with one archive, for the parametrised tests
SINGLE = ["v2", "v3", "v3native", "xz_all", "xz_vol", "gz_meta_index", "bz2_v3",
          "xz_v3", "noindex", "mv", "mv_gap", "mv3", "next", "marks", "marks3"]
MULTI = ["dir_pair", "list_pair", "list_pair3", "overlap_pair"]


# ---------------------------------------------------------------------------
# facts about an archive, as the REFERENCE sees them (for choosing times and
# names to probe; tests then compare ours vs reference with these inputs)

FACTS_SNIPPET = r'''
ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, ARCH)
R = {}
lab = ctx.pmGetHighResArchiveLabel()
R["start"] = [lab.start.tv_sec, lab.start.tv_nsec]
try:
    e = ctx.pmGetHighResArchiveEnd()
    R["end"] = [e.tv_sec, e.tv_nsec]
except pmapi.pmErr as x:
    R["end"] = None
recs = []
for _ in range(5000):
    try:
        r = ctx.pmFetchHighResArchive()
    except pmapi.pmErr as x:
        if x.code == c_api.PM_ERR_EOL:
            break
        recs.append({"error": x.code})
        if len(recs) > 2 and all("error" in q for q in recs[-3:]):
            break
        continue
    c = r.contents
    recs.append({"ts": [c.timestamp.tv_sec, c.timestamp.tv_nsec], "numpmid": c.numpmid,
                 "pmids": [c.get_pmid(i) for i in range(c.numpmid)]})
R["records"] = recs
names = []
try:
    ctx.pmTraversePMNS("", names.append)
except pmapi.pmErr:
    pass
R["names"] = names
indoms = set()
R["name_pmids"] = {}
for n in names:
    try:
        pmid = ctx.pmLookupName(n)[0]
        R["name_pmids"][n] = int(pmid)
        d = ctx.pmLookupDesc(pmid)
    except pmapi.pmErr:
        continue
    if d.contents.indom != c_api.PM_INDOM_NULL:
        indoms.add(int(d.contents.indom))
R["indoms"] = sorted(indoms)
RESULT = R
'''

_FACTS = {}


def ref_facts(name):
    """{"start", "end", "records": [{"ts": [sec, nsec], "numpmid", "pmids"}],
    "names", "name_pmids", "indoms"} of archive `name`, computed with the official binding."""
    with _LOCK:
        if name not in _FACTS:
            from support import difftest
            res = difftest.run_ref("ARCH = %r\n" % name + FACTS_SNIPPET)
            if not isinstance(res, dict) or "records" not in res:
                raise CorpusError("reference cannot read %s: %r" % (name, res))
            _FACTS[name] = res
        return _FACTS[name]


DERIVED_DOMAIN = 511


def archive_names(facts):
    """Names of the archive's own metrics (not global derived metrics)."""
    return [n for n in facts["names"]
            if (facts["name_pmids"].get(n, -1) >> 22) & 0x1ff != DERIVED_DOMAIN]


def derived_names(facts):
    return [n for n in facts["names"] if n not in set(archive_names(facts))]


def data_times(facts):
    """Timestamps ([sec, nsec]) of the non-mark records, in order."""
    return [r["ts"] for r in facts["records"] if r.get("numpmid")]


def ns(ts):
    return ts[0] * 1000000000 + ts[1]


def from_ns(n):
    return [n // 1000000000, n % 1000000000]


# ---------------------------------------------------------------------------
# byte-level helpers for damaging archives (see docs/archive-format.md)

LABEL_LEN = {2: 132, 3: 808}


def version_of(path):
    with open(path, "rb") as f:
        head = f.read(8)
    return struct.unpack(">I", head[4:8])[0] & 0xff


def records(path):
    """[(offset, length)] of the framed records after the label of a data
    volume or .meta file (uncompressed)."""
    with open(path, "rb") as f:
        data = f.read()
    ver = struct.unpack(">I", data[4:8])[0] & 0xff
    off = LABEL_LEN[ver]
    out = []
    while off + 4 <= len(data):
        n = struct.unpack(">i", data[off:off + 4])[0]
        if n < 8 or off + n > len(data):
            break
        out.append((off, n))
        off += n
    return out


def meta_records(path):
    """[(offset, length, type)] of .meta records."""
    with open(path, "rb") as f:
        data = f.read()
    return [(o, n, struct.unpack(">i", data[o + 4:o + 8])[0]) for o, n in records(path)]


def patch(path, offset, new):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(new)


def truncate(path, size):
    with open(path, "r+b") as f:
        f.truncate(size)


def archive_glob(base):
    return sorted(glob.glob(base + ".*"))
