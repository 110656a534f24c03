"""pcp._pmda.cache's indexed lookups against libpcp_pmda's rule read entry by entry: by
instance, and by name (equal, or equal up to the first space where one of the two names
has nothing after it; the first such entry in instance order), through random sequences
of adds, hides and culls."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from pcp._core.constants import PMDA_CACHE_ADD, PMDA_CACHE_CULL, PMDA_CACHE_EMPTY, PMDA_CACHE_HIDE
from pcp._pmda import cache


def _linear_find_name(entries, name):
    space = name.find(" ")
    hashlen = len(name) if space < 0 else space
    for e in entries:
        if e.state == PMDA_CACHE_EMPTY:
            continue
        other = e.name.find(" ")
        other = len(e.name) if other < 0 else other
        if e.name == name or (other == hashlen and e.name[:hashlen] == name[:hashlen] and
                              (hashlen == len(name) or hashlen == len(e.name))):
            return e
    return None


NAMES = st.sampled_from(["a", "a b", "a c", "ab", "a b c", "b", "b a", " a", "a ", "c"])
OPS = st.lists(st.tuples(st.sampled_from([PMDA_CACHE_ADD, PMDA_CACHE_HIDE, PMDA_CACHE_CULL]),
                         NAMES), max_size=30)


@settings(max_examples=300, deadline=None)
@given(OPS, st.lists(NAMES, min_size=1, max_size=5))
def test_indexed_lookups_match_the_linear_rule(ops, probes):
    indom = 0x7fff0001
    cache._caches.pop(indom, None)
    try:
        for op, name in ops:
            got = cache.store(indom, op, name, None)
            c = cache.get(indom)
            assert [e.inst for e in c.entries] == sorted(e.inst for e in c.entries)
            if op == PMDA_CACHE_ADD:
                assert got >= 0
        c = cache.get(indom)
        for name in probes:
            assert c.find_name(name) is _linear_find_name(c.entries, name)
        for e in c.entries:
            assert c.find_inst(e.inst) is e
        assert c.find_inst(10 ** 6) is None
    finally:
        cache._caches.pop(indom, None)
