"""The corpus sweep: every archive and bad archive of PCP's QA suite (pcp-testsuite) read
through every reading call of the official binding (sweep_reader.py: PMNS walk, names,
descs, help text, instance domains, labels, FORW / BACK / two INTERP steps of pmFetch,
pmFetchArchive, event unpacking of every event value, the default derived metrics), once
on libpcp 6.0.3 and once on this package, and every value compared.

A difference is either fixed or listed, with its reason, in known_differences.ARCHIVES;
a listed difference that no longer shows fails too.

PCP_SWEEP=full reads all of the corpus (the default when CI is set), PCP_SWEEP=quick a
fixed sample of it (the default otherwise, and the sanitizer pass's choice): every bad
archive, the archives with listed differences or event records, and every eighth of the
rest."""

import os
import time

import pytest

from conftest import _unavailable

from corpus import archive_corpus as corpus
from corpus.jsondiff import differences, leaves, shown
from corpus.known_differences import ARCHIVES

# the first test pays for the whole sweep (both bindings over the corpus)
pytestmark = [pytest.mark.reference, pytest.mark.timeout(1800)]

# archives with event records, whose unpacking after each kind of fetch is swept
EVENT_ARCHIVES = ("archives/eventrec", "archives/eventrec-old", "archives/omnibus_v2",
                  "archives/omnibus_v3", "archives/omnibus-nomark_v2",
                  "archives/omnibus-nomark_v3", "archives/pyapi", "archives/foo+",
                  "archives/20180102")


def _mode() -> str:
    return os.environ.get("PCP_SWEEP", "full" if os.environ.get("CI") else "quick")


def _selected():
    every = corpus.archives()
    if _mode() == "full":
        return every
    names = [corpus.name_of(a) for a in every]
    keep = set(ARCHIVES) | set(EVENT_ARCHIVES)
    return [a for i, (a, n) in enumerate(zip(every, names))
            if n in keep or n.startswith("badarchives/") or i % 8 == 0]


SELECTED = _selected()
STATS = {"values": 0, "calls": 0, "archives": 0, "listed": 0}


@pytest.fixture(scope="module")
def swept():
    if not SELECTED:
        _unavailable("PCP's QA archives are not installed (Debian package pcp-testsuite)")
    from support import difftest

    difftest.require_reference()
    t0 = time.monotonic()
    results = corpus.sweep(SELECTED)
    STATS["seconds"] = time.monotonic() - t0
    yield results
    print("\ncorpus sweep (%s): %d archives, %d reading calls, %d values compared, "
          "%d listed differences, %.0f s" % (_mode(), STATS["archives"], STATS["calls"],
                                             STATS["values"], STATS["listed"],
                                             STATS["seconds"]))


def test_corpus_is_installed():
    """The suite must not pass on an empty corpus: pcp-testsuite ships 248 archives."""
    if not SELECTED:
        _unavailable("PCP's QA archives are not installed (Debian package pcp-testsuite)")
    assert len(corpus.archives()) >= 240
    assert all(os.path.exists(corpus.TESTSUITE + "/" + a + ".meta") or
               os.path.exists(corpus.TESTSUITE + "/" + a + ".meta.xz")
               for a in ("archives/eventrec", "archives/pcpcmd"))


def test_known_differences_name_real_archives():
    names = {corpus.name_of(a) for a in corpus.archives()}
    assert set(ARCHIVES) <= names, set(ARCHIVES) - names


@pytest.mark.parametrize("archive", SELECTED, ids=[corpus.name_of(a) for a in SELECTED])
def test_archive_reads_as_libpcp(swept, archive):
    name = corpus.name_of(archive)
    ref = corpus.outcome(swept["reference"][archive])
    ours = corpus.outcome(swept["ours"][archive])
    assert "crash" not in ours, "this package's reader died: %r" % ours["crash"]
    listed = ARCHIVES.get(name, {})
    same_text = swept["reference"][archive] == swept["ours"][archive]
    diffs = [] if same_text else differences(ref, ours)
    unlisted = [d for d in diffs if str(d[0][0]) not in listed]
    listing = shown(unlisted)
    assert not unlisted, "%s: %d values differ from libpcp's:\n%s" % (name, len(unlisted),
                                                                     listing)
    stale = [s for s in listed if not any(str(d[0][0]) == s for d in diffs)]
    assert not stale, "%s: listed differences no longer show: %s" % (name, stale)
    STATS["archives"] += 1
    STATS["listed"] += len(listed)
    STATS["calls"] += ref.get("calls", 0)
    STATS["values"] += leaves({k: v for k, v in ref.items() if k not in listed})
