"""Damaged and compressed QA archives at each level against that level's libpcp (6.0.3
on the host, 6.3.8 and 7.2.2 in the Debian roots), one program per side:

* archives/multi-corrupted: libpcp 7.1.5 on (7.2.2, not 6.x) drops an archive with a
  corrupt record from a multi-archive context, with a pmNotifyErr warning, and reads on
  in the next archive (forward) or the previous one (backward), leaving the context in
  PM_MODE_FORW at that archive's start, where 6.x's fetch fails with PM_ERR_LOGREC;
  after an INTERP fetch whose read dropped it, pmFetch makes that fetch's time (the next
  archive's start) the current one, so the FORW fetches that follow begin with the next
  archive's first record;
* archives/20130706 (a bzip2 volume): every level opens and reads it. libpcp execs
  bzip2 (and xz) to read compressed volumes, so a root without them refuses it with
  PM_ERR_LOGREC: that is the root's lack, not a 6.3 check (require_decompressors)."""
from __future__ import annotations

import pytest

from support import difftest, levelref

pytestmark = [pytest.mark.reference]

LEVELS = levelref.LEVELS
QA = "/var/lib/pcp/testsuite/archives/"

PROGRAM = r'''
import ctypes, os, re, tempfile

def read(path, mode):
    """Fetches of a few metrics in `mode` from the start (FORW) or end (BACK) until an
    error: their timestamps, the error, and what libpcp wrote on stderr meanwhile."""
    saved = os.dup(2)
    with tempfile.TemporaryFile() as err:
        os.dup2(err.fileno(), 2)
        try:
            out = {}
            try:
                ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, path)
            except pmapi.pmErr as e:
                out["open"] = err_info(e)
                return out
            names = []
            ctx.pmTraversePMNS("", names.append)
            pmids = ctx.pmLookupName(sorted(names)[:8])
            if mode == c_api.PM_MODE_BACK:
                ctx.pmSetMode(mode, ctx.pmGetArchiveEnd(), 0)
            stamps = []
            while len(stamps) < 5000:
                try:
                    r = ctx.pmFetch(pmids)
                except pmapi.pmErr as e:
                    out["end"] = err_info(e)
                    break
                stamps.append("%.6f" % float(r.contents.timestamp))
                ctx.pmFreeResult(r)
            out["stamps"] = stamps
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        err.seek(0)
        # pmNotifyErr's "[ctime] progname(pid) " differs from run to run
        out["stderr"] = [re.sub(r"^\[[^]]*\] \S+\(\d+\) ", "", line)
                         for line in err.read().decode().splitlines()]
    return out

def interp_then_forw(path, parts, count):
    """INTERP fetches of every metric at span/parts from the start, `count` of them,
    each imaged as [sec, nsec, values] or its error: at 7.2 the one whose read drops
    the corrupt archive leaves the context FORW and the later ones read records."""
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, path)
    names = []
    ctx.pmTraversePMNS("", names.append)
    wanted = sorted(set(p for p in ctx.pmLookupName(names) if p != c_api.PM_ID_NULL))
    pmids = (ctypes.c_uint * len(wanted))(*wanted)    # 6.0's pmFetchHighRes takes no list
    # 7.x's names take and give timespecs; 6.x's are the ...HighRes... ones
    label = getattr(ctx, "pmGetHighResArchiveLabel", ctx.pmGetArchiveLabel)
    end = getattr(ctx, "pmGetHighResArchiveEnd", ctx.pmGetArchiveEnd)()
    set_mode = getattr(ctx, "pmSetModeHighRes", ctx.pmSetMode)
    fetch = getattr(ctx, "pmFetchHighRes", ctx.pmFetch)
    start = label().start
    step = ((end.tv_sec - start.tv_sec) * 10**9 + end.tv_nsec - start.tv_nsec) // parts
    set_mode(c_api.PM_MODE_INTERP, start, pmapi.timespec(step // 10**9, step % 10**9))
    out = []
    for _ in range(count):
        try:
            r = fetch(pmids).contents
        except pmapi.pmErr as e:
            out.append(err_info(e))
            continue
        out.append([r.timestamp.tv_sec, r.timestamp.tv_nsec,
                    sum(max(r.get_numval(i), 0) for i in range(r.numpmid))])
    return out

RESULT = {
    "multi_forw": read(QA + "multi-corrupted", c_api.PM_MODE_FORW),
    "multi_back": read(QA + "multi-corrupted", c_api.PM_MODE_BACK),
    "bzip2": read(QA + "20130706", c_api.PM_MODE_FORW),
    "multi_interp_forw": interp_then_forw(QA + "multi-corrupted", 25, 16),
}
'''

@pytest.mark.parametrize("level", LEVELS, ids=levelref.level_text)
def test_corrupt_and_compressed_archives(level):
    levelref.require(level)
    levelref.require_decompressors(level)
    ours, ref = levelref.run_both(level, "QA = %r\n" % QA + PROGRAM, {"PCP_DERIVED_CONFIG": ""})
    difftest.assert_equal(ours, ref)
    forw, back = ref["multi_forw"], ref["multi_back"]
    dropped = level >= (7, 2)
    assert (forw["end"]["error"] == -12370) == dropped       # PM_ERR_EOL, else PM_ERR_LOGREC
    assert any("removing corrupted archive" in line for line in forw["stderr"]) == dropped
    assert back["stamps"] and "open" not in ref["bzip2"] and ref["bzip2"]["stamps"]
    steps = ref["multi_interp_forw"]
    if dropped:
        # the dropping fetch is stamped with the next archive's start, and the FORW
        # fetch after it gives that archive's first record, at the same time
        stamps = [s[:2] for s in steps if isinstance(s, list)]
        assert any(a == b for a, b in zip(stamps, stamps[1:])), steps
    else:
        # 6.x meets the corrupt record again at every later step: PM_ERR_LOGREC
        assert steps[-1]["error"] == -12373, steps
