"""Damaged and compressed QA archives at each level against that level's libpcp (6.0.3
on the host, 6.3.8 and 7.2.2 in the Debian roots), one program per side:

* archives/multi-corrupted: libpcp 7.1.5 on (7.2.2, not 6.x) drops an archive with a
  corrupt record from a multi-archive context, with a pmNotifyErr warning, and reads on
  in the next archive (forward) or the previous one (backward), leaving the context in
  PM_MODE_FORW at that archive's start, where 6.x's fetch fails with PM_ERR_LOGREC;
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
import os, re, tempfile

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

RESULT = {
    "multi_forw": read(QA + "multi-corrupted", c_api.PM_MODE_FORW),
    "multi_back": read(QA + "multi-corrupted", c_api.PM_MODE_BACK),
    "bzip2": read(QA + "20130706", c_api.PM_MODE_FORW),
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
