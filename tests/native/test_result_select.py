"""csrc/result_select.c through pcp._native: pmFetch's selection of value sets out of
one archive record, against a Python oracle of the same rule (the selection the archive
context made in Python before it moved to C): one set per requested pmid in request
order, the record's first set of that pmid, values kept when their instance passes the
profile, PM_ERR_PMID_LOG for a set with values and no descriptor."""
from typing import Dict, List, Optional, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcp._native import ffi, lib

PM_ERR_PMID_LOG = -12378
PM_ERR_TOOBIG = -12444
INDOM_NULL = 0xFFFFFFFF

# a record: sets of (pmid, numval, valfmt, [(inst, vtype, ival, dval, boff, blen)])
Set = Tuple[int, int, int, List[Tuple[int, int, int, float, int, int]]]


def make_result(sets: List[Set]):
    numpmid = len(sets)
    nvalues = sum(len(v) for _, _, _, v in sets)
    mem = ffi.new("int64_t[]", (lib.pcp_result_mem_size(numpmid, nvalues) + 7) // 8)
    c = ffi.new("pcp_result *")
    lib.pcp_result_bind(c, mem, numpmid, nvalues)
    c.numpmid, c.nvalues, c.sec, c.nsec = numpmid, nvalues, 17, 42
    k = 0
    for i, (pmid, numval, valfmt, values) in enumerate(sets):
        c.pmid[i], c.numval[i], c.valfmt[i], c.first[i] = pmid, numval, valfmt, k
        for inst, vtype, ival, dval, boff, blen in values:
            c.inst[k], c.vtype[k], c.ival[k], c.dval[k] = inst, vtype, ival, dval
            c.boff[k], c.blen[k] = boff, blen
            k += 1
    return c, mem


def make_profile(include_by_default: bool, entries: Dict[int, Tuple[bool, List[int]]]):
    firsts, counts, insts = [], [], []
    for _, (_, listed) in entries.items():
        firsts.append(len(insts))
        counts.append(len(listed))
        insts.extend(sorted(listed))
    keep = [ffi.new("uint32_t[]", list(entries) or [0]),
            ffi.new("int32_t[]", [int(e[0]) for e in entries.values()] or [0]),
            ffi.new("int32_t[]", firsts or [0]), ffi.new("int32_t[]", counts or [0]),
            ffi.new("int32_t[]", insts or [0])]
    p = ffi.new("pcp_profile *")
    p.include_by_default = int(include_by_default)
    p.nentries = len(entries)
    p.indom, p.listed_pass, p.first, p.count, p.insts = keep
    p.ninsts = len(insts)
    return p, keep


def make_request(pmids: List[int], indoms: List[Optional[int]]):
    keep = [ffi.new("uint32_t[]", pmids or [0]),
            ffi.new("uint32_t[]", [INDOM_NULL if i is None else i for i in indoms] or [0]),
            ffi.new("uint8_t[]", [0 if i is None else 1 for i in indoms] or [0])]
    r = ffi.new("pcp_select_request *")
    r.npmids = len(pmids)
    r.pmid, r.indom, r.known = keep
    return r, keep


def oracle(sets: List[Set], pmids, indoms, include_by_default, entries):
    """(found any, [(pmid, numval, valfmt, values)]) or an error code."""
    where: Dict[int, int] = {}
    for i, s in enumerate(sets):
        where.setdefault(s[0], i)

    def passes(indom, inst):
        if indom not in entries:
            return include_by_default
        listed_pass, listed = entries[indom]
        return (inst in listed) == listed_pass

    out = []
    for pmid, indom in zip(pmids, indoms):
        src = where.get(pmid)
        if src is None:
            out.append((pmid, 0, 0, []))
            continue
        _, numval, valfmt, values = sets[src]
        if numval <= 0:
            out.append((pmid, numval, 0, []))
            continue
        if indom is None:
            return PM_ERR_PMID_LOG
        kept = [v for v in values if indom == INDOM_NULL or passes(indom, v[0])]
        out.append((pmid, len(kept), valfmt if kept else 0, kept))
    return any(p in where for p in pmids), out


def run_select(sets, pmids, indoms, include_by_default, entries):
    src, _m = make_result(sets)
    req, _r = make_request(pmids, indoms)
    prof, _p = make_profile(include_by_default, entries)
    need = lib.pcp_result_select(src, req, prof, ffi.NULL)
    if need < 0:
        return need
    mem = ffi.new("int64_t[]", (lib.pcp_result_mem_size(len(pmids), need) + 7) // 8)
    out = ffi.new("pcp_result *")
    lib.pcp_result_bind(out, mem, len(pmids), need)
    out.numpmid, out.nvalues = len(pmids), need
    found = lib.pcp_result_select(src, req, prof, out)
    if found < 0:
        return found
    assert (out.sec, out.nsec, out.numpmid, out.nvalues) == (17, 42, len(pmids), need)
    got = []
    for i in range(out.numpmid):
        f, n = out.first[i], out.numval[i]
        values = [(out.inst[k], out.vtype[k], out.ival[k], out.dval[k], out.boff[k], out.blen[k])
                  for k in range(f, f + max(n, 0))]
        got.append((out.pmid[i], n, out.valfmt[i], values))
    return bool(found), got


PMIDS = st.sampled_from([1, 2, 3, 0x80000001, 0xFFFFFFFF, 7])
INDOMS = st.sampled_from([None, INDOM_NULL, 10, 11])


@st.composite
def records(draw):
    sets = []
    for pmid in draw(st.lists(PMIDS, max_size=6)):
        values = draw(st.lists(st.tuples(st.integers(-3, 5), st.integers(-1, 10),
                                         st.integers(-2**63, 2**63 - 1), st.floats(allow_nan=False),
                                         st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)),
                               max_size=5))
        numval = len(values) if values else draw(st.sampled_from([0, -12357]))
        sets.append((pmid, numval, draw(st.integers(0, 2)) if values else 0, values))
    return sets


@settings(max_examples=400, deadline=None)
@given(sets=records(), request=st.lists(st.tuples(PMIDS, INDOMS), max_size=8),
       include_by_default=st.booleans(),
       entries=st.dictionaries(st.sampled_from([10, 11, 12]),
                               st.tuples(st.booleans(), st.lists(st.integers(-3, 5), max_size=4,
                                                                 unique=True)), max_size=3))
def test_select_matches_the_rule(sets, request, include_by_default, entries):
    pmids = [p for p, _ in request]
    # one descriptor per pmid, as an archive has
    indom_of = {}
    for p, i in request:
        indom_of.setdefault(p, i)
    indoms = [indom_of[p] for p in pmids]
    assert run_select(sets, pmids, indoms, include_by_default, entries) == \
        oracle(sets, pmids, indoms, include_by_default, entries)


def test_too_little_room_is_refused():
    sets = [(1, 2, 0, [(0, -1, 5, 0.0, 0, 0), (1, -1, 6, 0.0, 0, 0)])]
    src, _m = make_result(sets)
    req, _r = make_request([1, 1], [INDOM_NULL, INDOM_NULL])
    prof, _p = make_profile(True, {})
    assert lib.pcp_result_select(src, req, prof, ffi.NULL) == 4
    mem = ffi.new("int64_t[]", (lib.pcp_result_mem_size(2, 3) + 7) // 8)
    out = ffi.new("pcp_result *")
    lib.pcp_result_bind(out, mem, 2, 3)
    out.numpmid, out.nvalues = 2, 3
    assert lib.pcp_result_select(src, req, prof, out) == PM_ERR_TOOBIG
    out.numpmid, out.nvalues = 1, 4
    assert lib.pcp_result_select(src, req, prof, out) == PM_ERR_TOOBIG


@pytest.mark.parametrize("first,numval", [(-1, 1), (3, 1), (1, 2), (0, 3)])
def test_inconsistent_source_is_refused(first, numval):
    src, _m = make_result([(1, 2, 0, [(0, -1, 5, 0.0, 0, 0), (1, -1, 6, 0.0, 0, 0)])])
    src.first[0], src.numval[0] = first, numval
    req, _r = make_request([1], [INDOM_NULL])
    prof, _p = make_profile(True, {})
    assert lib.pcp_result_select(src, req, prof, ffi.NULL) == -12373   # PM_ERR_LOGREC
