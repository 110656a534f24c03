"""A live context's fetches reuse the result struct and columns of a result nobody
holds any more (ResultSizes.room), and skip the derived-metric layer for a request
naming no derived metric (pmapi's _fetch_target): neither may change what any result
says, however long it is kept."""
from __future__ import annotations

import time

import pytest

import cpmapi as c_api
from pcp import pmapi
from pcp._decode.result import flat_of
from pcp._libpcp import anon
from pcp._libpcp.derived.context import fetches_plain

NAMES = ["sample.milliseconds", "sample.long.one"]


def _milliseconds(ctx: pmapi.pmContext, result: pmapi.LP_pmResult) -> float:
    vset = result.contents.get_vset(0)
    return ctx.pmExtractValue(vset.valfmt, vset.vlist[0], c_api.PM_TYPE_DOUBLE,
                              c_api.PM_TYPE_DOUBLE).d


@pytest.mark.pmcd
def test_results_kept_across_later_fetches_keep_their_own_values():
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, "local:")
    pmids = ctx.pmLookupName(NAMES)
    held = []
    for _ in range(6):
        held.append(ctx.pmFetch(pmids))
        ctx.pmFetch(pmids)          # dropped at once: its room is free for the next
        time.sleep(0.003)           # sample.milliseconds moves on
    # read only now, from the C columns (nothing was read before): a room reused under
    # a held result would show a later fetch's value
    values = [_milliseconds(ctx, r) for r in held]
    assert values == sorted(values) and len(set(values)) == len(values)
    ones = [ctx.pmExtractValue(r.contents.get_vset(1).valfmt, r.contents.get_vlist(1, 0),
                               c_api.PM_TYPE_32, c_api.PM_TYPE_32).l for r in held]
    assert ones == [1] * len(held)


@pytest.mark.pmcd
def test_a_dropped_result_gives_its_room_to_the_next_fetch():
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, "local:")
    pmids = ctx.pmLookupName(NAMES)
    ctx.pmFetch(pmids)              # sizes the context's rooms
    # ids, not the objects: holding the struct would keep its room taken
    first = id(flat_of(ctx.pmFetch(pmids)).c)
    again = id(flat_of(ctx.pmFetch(pmids)).c)
    assert again == first
    kept = ctx.pmFetch(pmids)       # held: the next fetch takes another room
    assert flat_of(ctx.pmFetch(pmids)).c is not flat_of(kept).c


def test_only_requests_without_derived_or_anonymous_metrics_skip_the_layer():
    plain = [pmapi.pmContext.pmID_build(29, 0, 1), pmapi.pmContext.pmID_build(2, 3, 4)]
    derived = pmapi.pmContext.pmID_build(511, 0, 7)
    assert fetches_plain(plain) and fetches_plain(())
    assert not fetches_plain(plain + [derived])
    assert not fetches_plain([next(iter(anon.BY_PMID))] + plain)
