"""The corpus sweep at levels 6.3 and 7.2: PCP's QA archives read through every reading
call of the binding (sweep_reader.py: pmGetArchiveLabel/End, the PMNS walk, names,
children, descriptors, help text, instance domains, labels, FORW / BACK / two INTERP
steps of pmFetch, pmFetchArchive, event unpacking) by this package at the level and by
that level's libpcp (python3-pcp 6.3.8 in the trixie root, 7.2.2 in the sid root:
tests/support/levelref.py, one reader process per batch of archives), every value
compared. Level 6.0's is test_archive_sweep.py (the host's 6.0.3).

PCP_LEVEL_SWEEP=full reads the whole corpus; the default (CI's too) is a quick sample:
the archives whose reading differs between the levels (multi-corrupted, 20130706), one
with event records, the listed ones and every thirtieth of the archives under
QUICK_MAX_BYTES: 14 archives, seconds per level. Derived metrics are off on both sides (PCP_DERIVED_CONFIG=""): each level's
stock derived metrics are test_derived_levels.py's.
"""

import os
import time

import pytest

from conftest import _unavailable

from corpus import archive_corpus as corpus
from corpus.jsondiff import differences, leaves, shown
from support import levelref

pytestmark = [pytest.mark.reference, pytest.mark.timeout(1800)]

LEVELS = levelref.ROOT_LEVELS
_DESTROY = ("libpcp %s may abort in pmDestroyContext of this archive (glibc: %s), as "
            "6.0.3 does (known_differences.ARCHIVES); every reading call before it is "
            "compared, and closing the context here must work")
#: Archives whose context the reference may fail to destroy, per level: archive -> what
#: happens. The deaths are heap corruption found at pmDestroyContext and come and go with
#: what the process read before: listed ones may die, others must not. Seen in full
#: sweeps: all four at 6.3; pcpcmd and tricky_4_507 at 7.2 (badti-2 in the INTERP level
#: sweep; 20150105.17.57-00 listed as 6.0.3 and 6.3.8 die there).
REFERENCE_CRASHES = {
    (6, 3): {
        "archives/20150105.17.57-00": _DESTROY % ("6.3.8", "free(): invalid size"),
        "archives/pcpcmd": _DESTROY % ("6.3.8", "double free or corruption (out)"),
        "archives/tricky_4_507": _DESTROY % ("6.3.8", "SIGSEGV"),
        "badarchives/badti-2": _DESTROY % ("6.3.8", "SIGSEGV"),
    },
    (7, 2): {
        "archives/20150105.17.57-00": _DESTROY % ("7.2.2", "free(): invalid size at 6.3"),
        "archives/pcpcmd": _DESTROY % ("7.2.2", "double free or corruption (out)"),
        "archives/tricky_4_507": _DESTROY % ("7.2.2", "free(): invalid size"),
        "badarchives/badti-2": _DESTROY % ("7.2.2", "munmap_chunk(): invalid pointer, "
                                           "as in test_interp_levels.py"),
    },
}
#: What this package does differently at a level: archive -> {section of the image:
#: reason}. Every other section must read the same, and a listed section that reads the
#: same fails (fixed, or moved).
KNOWN_DIFFERENCES = {
    (6, 3): {},
    (7, 2): {},
}
# each level's own stock derived metrics are test_derived_levels.py's
ENV = {"PCP_DERIVED_CONFIG": ""}


def _mode() -> str:
    return os.environ.get("PCP_LEVEL_SWEEP", "quick")


QUICK_MAX_BYTES = 200_000
# read differently by 7.2 than by 6.x (test_corrupt_levels.py), a bzip2 volume, events
ALWAYS = {"archives/multi-corrupted", "archives/20130706", "archives/eventrec"}


def _selected():
    if _mode() == "full":
        return corpus.archives()
    keep = set(ALWAYS)
    for listed in list(REFERENCE_CRASHES.values()) + list(KNOWN_DIFFERENCES.values()):
        keep |= set(listed)
    return corpus.sample(keep, QUICK_MAX_BYTES, 30)


SELECTED = _selected()


SWEPT = {}
STATS = {}


def _swept(level):
    if level not in SWEPT:
        if not SELECTED:
            _unavailable("PCP's QA archives are not installed (Debian package pcp-testsuite)")
        t0 = time.monotonic()
        SWEPT[level] = corpus.sweep_at_level(level, SELECTED, corpus.READER, ENV)
        STATS[level] = {"archives": 0, "calls": 0, "values": 0,
                        "seconds": time.monotonic() - t0}
    return SWEPT[level]


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    for level, s in sorted(STATS.items()):
        print("\nlevel sweep at %d.%d (%s): %d archives, %d reading calls, %d values "
              "compared, %.0f s" % (level + (_mode(), s["archives"], s["calls"],
                                             s["values"], s["seconds"])))


def test_lists_name_real_archives():
    names = {corpus.name_of(a) for a in corpus.archives()}
    for listed in list(REFERENCE_CRASHES.values()) + list(KNOWN_DIFFERENCES.values()):
        assert set(listed) <= names, set(listed) - names


@pytest.mark.parametrize("level", LEVELS, ids=levelref.level_text)
@pytest.mark.parametrize("archive", SELECTED, ids=[corpus.name_of(a) for a in SELECTED])
def test_archive_reads_as_libpcp_of_level(level, archive):
    swept = _swept(level)
    name = corpus.name_of(archive)
    ref = corpus.outcome(swept["reference"][archive])
    ours = corpus.outcome(swept["ours"][archive])
    assert "crash" not in ours, "this package's reader died: %r" % ours["crash"]
    assert ours.get("close") == "ok", ours.get("close")
    assert "crash" not in ref, "%s: the %d.%d reference died reading it: %r" % (
        name, level[0], level[1], ref["crash"])
    assert ref["close"] == "ok" or name in REFERENCE_CRASHES[level], (
        "%s: the %d.%d reference crashed closing it, unlisted: %r" % (
            name, level[0], level[1], ref["close"]))
    ref.pop("close")
    ours.pop("close")
    listed = KNOWN_DIFFERENCES[level].get(name, {})
    diffs = [] if ref == ours else differences(ref, ours)
    unlisted = [d for d in diffs if str(d[0][0]) not in listed]
    listing = shown(unlisted)
    assert not unlisted, "%s at %d.%d: %d values differ from libpcp's:\n%s" % (
        name, level[0], level[1], len(unlisted), listing)
    stale = [s for s in listed if not any(str(d[0][0]) == s for d in diffs)]
    assert not stale, "%s at %d.%d: listed differences no longer show: %s" % (
        name, level[0], level[1], stale)
    assert ref.get("calls", 0) > 0
    stats = STATS[level]
    stats["archives"] += 1
    stats["calls"] += ref["calls"]
    stats["values"] += leaves({k: v for k, v in ref.items() if k not in listed})
