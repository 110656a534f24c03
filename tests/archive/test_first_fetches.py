"""ArchiveContext.first_fetches, the one pass over an archive's records with which
`pcp-native info` answers pminfo's one-metric-at-a-time fetches from the start: for
every metric of each archive, the set it gives (and the time of its record) is the one a
pmFetch of that metric alone from the same origin gives, and a metric no record holds
fails with the error that single fetch fails with. The single fetches are themselves
compared with libpcp's elsewhere (test_fetch_from_start.py, the CLI's tests)."""
from __future__ import annotations


import pytest

import cpmapi as c_api
from pcp import pmapi
from pcp._libpcp import anon

from support.cliutil import BAD_QA_ARCHIVES, DEMO_ARCHIVE, need_qa_archive

# the bundled archive, and QA archives with instance changes, marks, event records,
# gaps, a truncated volume, a late-appearing metric (20180102's sample.dynamic.meta.metric
# is in its last records), and a list of archives made one context
QA = ["20180102", "changeinst", "dyninsts", "eventrec", "count-mark", "gap", "late",
      "20101004-trunc", "mark-bug", "540117-short"]
LISTED = ["arch_a", "arch_b"]


def _set(arrays, i):
    """A value set of a result's columns: (pmid, numval, valfmt, the values)."""
    numval = arrays.numval[i]
    values = []
    for k in range(arrays.first[i], arrays.first[i] + max(numval, 0)):
        off, blen = arrays.boff[k], arrays.blen[k]
        block = bytes(arrays.data[off:off + blen]) if arrays.vtype[k] >= 0 else b""
        values.append((arrays.inst[k], arrays.vtype[k], arrays.ival[k],
                       repr(arrays.dval[k]), block))
    return (arrays.pmid[i], numval, arrays.valfmt[i] if numval > 0 else 0, values)


def _rewind(ctx, start):
    ctx._set_mode_timespec(c_api.PM_MODE_FORW, start, None)


def _check(source, origin_shift=0, from_zero=False):
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, source)
    names = []
    ctx.pmTraversePMNS("", names.append)
    pmids = sorted({p for p in ctx.pmLookupName(names, relaxed=1) if p != c_api.PM_ID_NULL})
    label = ctx._archive_label_timespec().start
    start = pmapi.timespec(int(label.tv_sec) + origin_shift, int(label.tv_nsec))
    if from_zero:           # pminfo's origin without -O
        start = pmapi.timespec(0, 0)
    _rewind(ctx, start)
    found, absent = pmapi.context_of(ctx).first_fetches(pmids)
    assert absent is not None
    compared = 0
    for pmid in pmids:
        if anon.is_derived(pmid):
            assert pmid not in found
            continue
        _rewind(ctx, start)
        try:
            result = ctx.pmFetch([pmid]).contents
        except pmapi.pmErr as e:
            assert pmid not in found and e.args[0] == absent, (source, pmid)
            continue
        assert pmid in found, (source, pmid)
        flat, i = found[pmid]
        single = pmapi.flat_of(result)
        assert (flat.sec, flat.nsec) == (single.sec, single.nsec), (source, pmid)
        bulk = pmapi.pmResult(flat)
        assert _set(bulk.as_lists(), i) == _set(result.as_lists(), 0), (source, pmid)
        compared += 1
    return compared


def test_demo_archive_first_fetches_are_the_single_fetches():
    assert _check(DEMO_ARCHIVE) > 10
    # from a later origin: the records before it are passed over
    assert _check(DEMO_ARCHIVE, origin_shift=3) > 10


@pytest.mark.parametrize("name", QA)
def test_qa_archive_first_fetches_are_the_single_fetches(name):
    _check(need_qa_archive(name))


@pytest.mark.parametrize("name", ["20180102", "540117-short"])
def test_first_fetches_from_time_zero_are_the_single_fetches(name):
    _check(need_qa_archive(name), from_zero=True)


def test_records_before_the_label_start_from_time_zero():
    """badlog-4's first records are older than its label's start: from time zero (pminfo's
    origin) they answer, one pass or one metric at a time."""
    assert _check(need_qa_archive("badlog-4", BAD_QA_ARCHIVES), from_zero=True) > 3


def test_archive_list_first_fetches_are_the_single_fetches():
    _check(",".join(need_qa_archive(n) for n in LISTED))


def test_first_fetches_needs_forward_mode():
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, DEMO_ARCHIVE)
    ctx._set_mode_timespec(c_api.PM_MODE_BACK, None, None)
    pmid = ctx.pmLookupName(["sample.seconds"])[0]
    with pytest.raises(pmapi.pmErr) as e:
        pmapi.context_of(ctx).first_fetches([pmid])
    assert e.value.args[0] == c_api.PM_ERR_MODE


@pytest.mark.parametrize("name", ["changeinst", "dyninsts"])
def test_instances_at_a_time_are_pmgetindom_there(name):
    """instances_at(indom, t): pmGetInDom's answer once the context is at t (each record's
    time), without moving the context there."""
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, need_qa_archive(name))
    host = pmapi.context_of(ctx)
    indoms = sorted({d[2] for d in host.meta.descs.values() if d[2] != c_api.PM_INDOM_NULL})
    assert indoms
    ctx._set_mode_timespec(c_api.PM_MODE_FORW, ctx._archive_label_timespec().start, None)
    stamps = []
    while True:
        try:
            flat = pmapi.flat_of(ctx.pmFetchArchive())
        except pmapi.pmErr:
            break
        stamps.append((flat.sec, flat.nsec))
    assert len(stamps) > 2
    for when in stamps[::max(1, len(stamps) // 40)]:    # some 40 times, first to last
        ctx._set_mode_timespec(c_api.PM_MODE_FORW, pmapi.timespec(*when), None)
        for indom in indoms:
            try:
                insts, names = ctx.pmGetInDom(indom=indom)
                expected = (insts or [], names or [])
            except pmapi.pmErr as e:
                expected = e.args[0]
            try:
                got_insts, raw = host.instances_at(indom, when)
                got = (got_insts, [n.decode() for n in raw])
            except pmapi.pmErr as e:
                got = e.args[0]
            assert got == expected, (when, indom)
