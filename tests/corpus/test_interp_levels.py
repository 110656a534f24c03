"""The INTERP sweep at levels 6.3 and 7.2: PCP's QA archives read in PM_MODE_INTERP
(interp_reader.py: every metric, two steps across each archive) by this package at
the level and by that level's libpcp (python3-pcp 6.3.8 in the trixie root, 7.2.2 in
the sid root: tests/support/levelref.py), and every fetch compared.

libpcp 6.3 changed interpolation under the same names: a DISCRETE or INSTANT value
between two observations is the nearer observation (the prior one until 6.2). Level
6.0's interpolation is the corpus sweep's (test_archive_sweep.py, on 6.0.3).

PCP_INTERP_SWEEP=full reads the whole corpus; the default (CI's too) is a fixed sample:
the archives listed below, 20180102 (the issue's pmrep example) and every twelfth of the
archives under QUICK_MAX_BYTES (a minute or two per level on 2 busy cores). Derived metrics are off on both sides
(PCP_DERIVED_CONFIG=""): each level's stock derived metrics are test_derived_levels.py's.
"""

import json
import os
import subprocess
import time

import pytest

from conftest import _unavailable

from corpus import archive_corpus as corpus
from corpus.jsondiff import differences, leaves, shown
from support import difftest, levelref

pytestmark = [pytest.mark.reference, pytest.mark.timeout(1800)]

READER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interp_reader.py")
LEVELS = levelref.ROOT_LEVELS
#: Archives the reference itself may die on, per level: archive -> what happens. Its
#: image up to the crash is compared (this package must not crash). The deaths are heap
#: corruption found when the context is destroyed, and come and go with what was read
#: before: listed ones may die, others must not (7.2.2 also died so on tricky_4_507,
#: "free(): invalid size", as 6.0.3 does, after an earlier reader's three steps).
_DESTROY = ("libpcp %s may abort in pmDestroyContext of this archive (glibc: %s), as "
            "6.0.3 does; the image before it is compared")
#: Archives whose reference values depend on what the same process read before (6.3.8
#: and 7.2.2 after other archives of a full sweep's shard gave older values; read alone,
#: or after a smaller archive, the same as this package): only this package's not dying
#: is checked.
UNSTABLE_REFERENCE = {"badarchives/badti-2"}
REFERENCE_CRASHES = {
    (6, 3): {"badarchives/badti-2": _DESTROY % ("6.3.8", "munmap_chunk(): invalid pointer")},
    (7, 2): {"badarchives/badti-2": _DESTROY % ("7.2.2", "munmap_chunk(): invalid pointer")},
}
#: What this package does differently at a level, archive -> reason; a listed archive
#: must still differ (the test fails once it reads the same). 20130706 (a bzip2 volume)
#: is no longer listed: its root needs bzip2 (levelref.require_decompressors); nor is
#: multi-corrupted at 7.2: the FORW fetch after the INTERP one that dropped its corrupt
#: archive starts from that fetch's time (test_corrupt_levels.py).
KNOWN_DIFFERENCES = {
    (6, 3): {},
    (7, 2): {},
}
# each level's own stock derived metrics are test_derived_levels.py's
ENV = {"PCP_DERIVED_CONFIG": ""}


def _mode() -> str:
    return os.environ.get("PCP_INTERP_SWEEP", "quick")


# the quick sample's archives are small ones (libpcp's INTERP over every metric of a big
# archive of processes takes minutes)
QUICK_MAX_BYTES = 300_000


def _selected():
    if _mode() == "full":
        return corpus.archives()
    # the issue's pmrep example; once listed differences, kept in the sample
    keep = {"archives/20180102", "archives/20130706", "archives/multi-corrupted"}
    for listed in list(REFERENCE_CRASHES.values()) + list(KNOWN_DIFFERENCES.values()):
        keep |= set(listed)
    return corpus.sample(keep, QUICK_MAX_BYTES, 12)


SELECTED = _selected()


SWEPT = {}


def _swept(level):
    if level not in SWEPT:
        if not SELECTED:
            _unavailable("PCP's QA archives are not installed (Debian package pcp-testsuite)")
        t0 = time.monotonic()
        SWEPT[level] = corpus.sweep_at_level(level, SELECTED, READER, ENV)
        print("\nINTERP sweep at %d.%d (%s): %d archives, %.0f s" % (
            level + (_mode(), len(SELECTED), time.monotonic() - t0)))
    return SWEPT[level]


def test_lists_name_real_archives():
    names = {corpus.name_of(a) for a in corpus.archives()}
    for listed in list(REFERENCE_CRASHES.values()) + list(KNOWN_DIFFERENCES.values()):
        assert set(listed) <= names, set(listed) - names


@pytest.mark.parametrize("level", LEVELS, ids=levelref.level_text)
@pytest.mark.parametrize("archive", SELECTED, ids=[corpus.name_of(a) for a in SELECTED])
def test_interp_as_libpcp_of_level(level, archive):
    swept = _swept(level)
    name = corpus.name_of(archive)
    ref = corpus.outcome(swept["reference"][archive])
    ours = corpus.outcome(swept["ours"][archive])
    assert "crash" not in ours, "this package's reader died: %r" % ours["crash"]
    crashed = "crash" in ref or "close" in ref and ref["close"] != "ok"
    assert not crashed or name in REFERENCE_CRASHES[level], (
        "%s: the %d.%d reference crashed, unlisted: %r" % (
            name, level[0], level[1], ref.get("crash", ref.get("close"))))
    if name in UNSTABLE_REFERENCE:
        return
    for key in ("crash", "close"):
        ref.pop(key, None)
        ours.pop(key, None)
    if "crash" in swept["reference"][archive]:
        # compared up to where the reference died: the sections it imaged
        ours = {k: v for k, v in ours.items() if k in ref}
    diffs = [] if ref == ours else differences(ref, ours)
    if name in KNOWN_DIFFERENCES[level]:
        assert diffs, "%s at %d.%d: listed as different, now the same: %s" % (
            name, level[0], level[1], KNOWN_DIFFERENCES[level][name])
        return
    listing = shown(diffs)
    assert not diffs, "%s at %d.%d: %d values differ from libpcp's:\n%s" % (
        name, level[0], level[1], len(diffs), listing)
    assert leaves(ref) > 0


ISSUE_EXAMPLE = r'''
import json
from pcp import pmapi
import cpmapi as c_api
ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, "/var/lib/pcp/testsuite/archives/20180102")
ids = ctx.pmLookupName(["kernel.all.load"])
# 7.x's names are the timespec ones; 6.x has them as ...HighRes...
label = getattr(ctx, "pmGetHighResArchiveLabel", ctx.pmGetArchiveLabel)
set_mode = getattr(ctx, "pmSetModeHighRes", ctx.pmSetMode)
fetch = getattr(ctx, "pmFetchHighRes", ctx.pmFetch)
set_mode(c_api.PM_MODE_INTERP, label().start, pmapi.timespec(3600, 0))
rows = []
for _ in range(2):
    r = fetch(ids).contents
    rows.append(sorted([r.get_inst(0, j), round(ctx.pmExtractValue(
        r.get_valfmt(0), r.get_vlist(0, j), c_api.PM_TYPE_FLOAT, c_api.PM_TYPE_DOUBLE).d, 3)]
        for j in range(r.get_numval(0))))
print(json.dumps(rows))
'''


@pytest.mark.parametrize("level,expected", [
    ((6, 0), [[1, 1.29], [5, 0.9], [15, 0.8]]),
    ((6, 3), [[1, 1.22], [5, 0.95], [15, 0.83]]),
    ((7, 2), [[1, 1.22], [5, 0.95], [15, 0.83]])], ids=lambda v: str(v))
def test_issue_example(level, expected):
    """Issue 37's pmrep -t 1h kernel.all.load on 20180102, the 01:10:11 row: 6.0.3's prior
    observation, 6.3.8's and 7.2.2's nearer one (this package at each level; the sweep
    compares it with the references)."""
    proc = subprocess.run([difftest.OUR_PYTHON, "-c", ISSUE_EXAMPLE], capture_output=True,
                          text=True, env=levelref.our_env(level, ENV), cwd=difftest._cwd(),
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout.strip().splitlines()[-1])
    assert rows[0] == [] and rows[1] == expected
