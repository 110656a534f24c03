"""Stateful differential test (issue 38): random but valid sequences of calls (mode
changes, fetches, pmFetchArchive, profiles, instance lookups, duplicated and destroyed
contexts, value extraction) played on the official binding and on this package over
PCP's QA archives and the live pmcd's static sample metrics, compared step by step.

By default SEEDS seeds on every target of sequences.targets(), one subprocess per side
for the whole run; PCP_STATEFUL_SEEDS=N (or FIRST-LAST) runs more. A difference not in
cases.KNOWN_PATTERNS fails with the sequence shrunk to a short program; the corpus of
shrunk cases (cases.CASES) is replayed as regression tests.
"""
import json
import os

import pytest

from stateful import cases, driver, sequences
from support import difftest

pytestmark = [pytest.mark.pmcd, pytest.mark.reference, pytest.mark.timeout(600)]

SEEDS = 12
STEPS = 12


def _seeds():
    spec = os.environ.get("PCP_STATEFUL_SEEDS", "")
    if "-" in spec:
        first, last = spec.split("-", 1)
        return range(int(first), int(last) + 1)
    return range(int(spec) if spec else SEEDS)


def test_random_sequences_answer_as_libpcp():
    difftest.require_reference()
    batch = [sequences.generate(seed, target, STEPS)
             for seed in _seeds() for target in sequences.targets()]
    ours, ref = driver.play_both(batch)
    assert len(ours) == len(ref) == len(batch)
    unexplained = []
    for sequence, mine, theirs in zip(batch, ours, ref):
        index = driver.first_difference(mine, theirs)
        if index is None:
            continue
        step = sequence["steps"][index] if index < len(sequence["steps"]) else None
        if step is not None and cases.known_reason(sequence["target"], step):
            continue
        small = driver.shrink(sequence, index)
        small_ours, small_ref = driver.play_both([small])
        unexplained.append("%s\n  ours:      %s\n  reference: %s" % (
            json.dumps(small), json.dumps(small_ours[0][-1:]), json.dumps(small_ref[0][-1:])))
        if len(unexplained) >= 3:
            break
    assert not unexplained, "sequences that differ (shrunk):\n" + "\n".join(unexplained)


def test_corpus_cases():
    difftest.require_reference()
    ours, ref = driver.play_both([{"target": case["target"] if case["target"] == "local:"
                                   else sequences.ARCHIVE_ROOT + case["target"],
                                   "steps": case["steps"]} for case in cases.CASES])
    wrong = []
    for case, mine, theirs in zip(cases.CASES, ours, ref):
        differs = driver.first_difference(mine, theirs) is not None
        if case["known"] and not differs:
            wrong.append("listed difference no longer shows (fixed? move it): %s" % case)
        elif not case["known"] and differs:
            wrong.append("differs: %s\n  ours: %s\n  reference: %s" % (case, mine, theirs))
    assert not wrong, "\n".join(wrong)
