"""csrc/printvalue.c: pmdumplog's value lines written in C from a result's columns
(pcp_printvalue_dump_sets) and pmdumplog -s's record size (pcp_printvalue_record_size).

The oracle is the dump's own Python loop (pcp.cli.dump._Dump._record over
pcp.cli._common.value_text, which the C replaced for the records it writes): the same
archives dumped with the C and with the C turned off must print the same text, and each
value the C writes is value_text's. Whole dumps against pmdumplog itself are in
tests/cli/test_cli_info_dump.py. The C takes indexes, offsets and lengths from its caller:
every one out of range is PM_ERR_TOOSMALL, a full room PCP_PRINTVALUE_ROOM, and what it
leaves to the caller PCP_PRINTVALUE_OTHER (the libFuzzer harness fuzz_printvalue goes
further)."""
from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given, settings, strategies as st

from pcp._libpcp import dumplines
from pcp._native import ffi, lib
from pcp.cli._common import value_text
from support.cliutil import DEMO_ARCHIVE, need_qa_archive, run_cli
from support.eventutil import result_of, result_pdu

PM_ERR_TOOSMALL = -12443
PM_ERR_PMID = -12358
HEAD = "    1.2.3 (sample.x):"


def _block(vtype, payload):
    return struct.pack(">I", (vtype << 24) | (4 + len(payload))) + payload


# (type, value) -> the value's block (or INSITU word) as pmcd sends it
def _value(mtype, v):
    if mtype == 0:
        return 0, v
    if mtype == 1:
        return 0, struct.unpack(">i", struct.pack(">I", v))[0]
    if mtype == 2:
        return 1, _block(2, struct.pack(">q", v))
    if mtype == 3:
        return 1, _block(3, struct.pack(">Q", v))
    if mtype == 4:
        return 1, _block(4, struct.pack(">f", v))
    if mtype == 5:
        return 1, _block(5, struct.pack(">d", v))
    return 1, _block(6, v + b"\0")


VALUES = {
    0: st.integers(-2**31, 2**31 - 1),
    1: st.integers(0, 2**32 - 1),
    2: st.integers(-2**63, 2**63 - 1),
    3: st.integers(0, 2**64 - 1),
    4: st.floats(width=32, allow_nan=False),
    5: st.floats(allow_nan=False),
    6: st.text(max_size=12).map(lambda s: s.replace("\0", "").encode()),
}


def _sets_of(draw_sets):
    """PDU sets and the plan of the C for [(type, [values], named)]."""
    sets, plan = [], []
    for n, (mtype, values, named) in enumerate(draw_sets):
        valfmt = _value(mtype, values[0])[0] if values else 0
        sets.append((0x400000 + n, len(values), valfmt,
                     [(inst, _value(mtype, v)[1]) for inst, v in enumerate(values)]))
        plan.append((n, mtype, HEAD, 7 if named else None))
    return sets, plan


class _Snap:
    """An instance-domain record: instances 0 and 2 named, 1 not."""
    insts = [0, 2, 0]
    names = [b"zero", b"two", b"again"]


def _expected(result, draw_sets):
    arrays = result.as_lists()
    text = ""
    for n, (mtype, values, named) in enumerate(draw_sets):
        text += HEAD
        if not values:
            text += " No values returned!\n"
            continue
        if len(values) > 1:
            text += "\n       "
        first = arrays.first[n]
        for j in range(len(values)):
            if j:
                text += "       "
            if named:
                name = {0: '"zero"', 2: '"two"'}.get(j)
                text += " inst [%d or %s]" % (j, name or "???")
            text += " value %s\n" % value_text(arrays, first + j, mtype, arrays.valfmt[n])
    return text


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 6).flatmap(
    lambda t: st.tuples(st.just(t), st.lists(VALUES[t], max_size=4), st.booleans())),
    min_size=1, max_size=5), st.booleans())
def test_each_value_as_value_text_writes_it(draw_sets, highres):
    sets, plan = _sets_of(draw_sets)
    result = result_of(result_pdu(sets, highres=highres)).contents
    lines = dumplines.DumpLines()
    made = lines.add_plan("k", plan)
    got = lines.text(result, made, [_Snap()] * len(made.indoms))
    assert got == _expected(result, draw_sets)


@pytest.mark.parametrize("value", [math.inf, -math.inf, 1e-300, -0.0, 2.5e-45])
def test_float_edges(value):
    for mtype in (4, 5):
        sets, plan = _sets_of([(mtype, [value], False)])
        result = result_of(result_pdu(sets)).contents
        lines = dumplines.DumpLines()
        got = lines.text(result, lines.add_plan("k", plan), [])
        assert got == _expected(result, [(mtype, [value], False)])


def test_error_codes_are_pmerrstr_and_unknown_ones_are_learned():
    sets = [(0x400000, PM_ERR_PMID, 0, []), (0x400001, -12345 - 13, 0, [])]
    result = result_of(result_pdu(sets)).contents
    lines = dumplines.DumpLines()
    plan = lines.add_plan("k", [(0, 0, HEAD, None), (1, 3, HEAD, None)])
    want = HEAD + " Unknown or illegal metric identifier\n"
    assert lines.text(result, plan, []) == want * 2
    # the C alone, with no table, leaves the record to its caller
    assert _call(result, plan, errors=False) == lib.PCP_PRINTVALUE_OTHER


def test_what_the_c_leaves_to_its_caller():
    lines = dumplines.DumpLines()
    # a string that is not UTF-8; an aggregate; a value whose block is not its type's;
    # a type the caller does not know (-1)
    for mtype, block in ((6, _block(6, b"\xff\xfe\0")), (7, _block(7, b"abcd")),
                         (5, _block(2, struct.pack(">q", 5))), (-1, _block(5, b"\0" * 8))):
        result = result_of(result_pdu([(0x400000, 1, 1, [(0, block)])])).contents
        plan = lines.add_plan(("k", mtype), [(0, mtype, HEAD, None)])
        assert lines.text(result, plan, []) is None


def _call(result, plan, room=1 << 16, heads=None, names=None, pool=b"", errors=True,
          nsets=None):
    flat = result._r
    heads = plan.heads if heads is None else heads
    names = names or []
    table = ffi.new("pcp_printvalue_text[]", names or 1)
    err = ffi.new("pcp_printvalue_text[]", [(PM_ERR_PMID, 0, 3)]) if errors else ffi.NULL
    out = ffi.new("uint8_t[]", max(room, 1))
    return lib.pcp_printvalue_dump_sets(
        out, room, plan.sets, plan.count if nsets is None else nsets, flat.c, flat.pdu,
        len(flat.pdu), heads, len(heads), table, len(names), pool, len(pool), err,
        1 if errors else 0, b"bad", 3)


def test_indexes_offsets_and_lengths_out_of_range_are_refused():
    values = [(0, _value(6, b"text")[1]), (1, _value(6, b"more")[1])]
    result = result_of(result_pdu([(0x400000, 2, 1, values)])).contents
    lines = dumplines.DumpLines()

    def plan_with(**fields):
        plan = lines.add_plan(object(), [(0, 6, HEAD, None)])
        for key, value in fields.items():
            setattr(plan.sets[0], key, value)
        return plan

    good = plan_with()
    assert _call(result, good) == len(lines.text(result, good, []))
    assert _call(result, good, room=10) == lib.PCP_PRINTVALUE_ROOM
    assert _call(result, good, room=0) == lib.PCP_PRINTVALUE_ROOM
    assert _call(result, good, nsets=-1) == PM_ERR_TOOSMALL
    for fields in ({"set": 1}, {"set": -1}, {"head_off": len(HEAD) + 1},
                   {"head_len": len(HEAD) + 1}, {"head_off": 2**32 - 1, "head_len": 2},
                   {"names_first": 1, "names_count": 1}, {"names_first": -1, "names_count": 1},
                   {"names_first": 0, "names_count": 2}):
        assert _call(result, plan_with(**fields), names=[(0, 0, 1)], pool=b"x") == \
            PM_ERR_TOOSMALL, fields
    # a name past its pool
    named = plan_with(names_first=0, names_count=1)
    assert _call(result, named, names=[(0, 0, 2)], pool=b"x") == PM_ERR_TOOSMALL
    assert _call(result, named, names=[(0, 1, 0)], pool=b"x") > 0
    # a value range or a block past the columns and the bytes
    flat = result._r
    flat.c.first[0] = 1
    assert _call(result, good) == PM_ERR_TOOSMALL
    assert lib.pcp_printvalue_record_size(good.sets, 1, flat.c, 24) == PM_ERR_TOOSMALL
    flat.c.first[0] = 0
    flat.c.boff[1] = len(flat.pdu)
    assert _call(result, good) == PM_ERR_TOOSMALL
    assert lib.pcp_printvalue_record_size(plan_with(set=3).sets, 1, flat.c, 24) == \
        PM_ERR_TOOSMALL
    assert lib.pcp_printvalue_record_size(good.sets, -1, flat.c, 24) == PM_ERR_TOOSMALL


def test_record_size_as_pmdumplog_reckons_it():
    # 24 header, 8 a set; a set with values 4 + 8 a value, and blocks padded with header
    sets = [(0x400000, 2, 0, [(0, 1), (1, 2)]), (0x400001, 0, 0, []),
            (0x400002, 1, 1, [(0, _block(6, b"abcde\0"))])]
    result = result_of(result_pdu(sets)).contents
    lines = dumplines.DumpLines()
    plan = lines.add_plan("k", [(0, 0, HEAD, None), (1, 0, HEAD, None), (2, 6, HEAD, None)])
    assert lines.size(result, plan, 24) == 24 + 3 * 8 + (4 + 16) + (4 + 8 + 12)


# and whether the C writes most of their records: eventrec's are event arrays, 541380_v2's
# one record and most of 960624.08.17_v2's have values in blocks of another type than
# their descriptor's (the loop's, all)
ARCHIVES = {DEMO_ARCHIVE: True, "eventrec": False, "541380_v2": False, "20180102": True,
            "960624.08.17_v2": False}


@pytest.mark.parametrize("name", list(ARCHIVES))
def test_the_c_writes_what_the_dumps_own_loop_writes(name, monkeypatch):
    """Every record the C writes, written by _record's loop instead: the same text."""
    path = name if name == DEMO_ARCHIVE else need_qa_archive(name)
    argv = ["dump", "-a", path] + (["--records", "60"] if name == "20180102" else [])
    real = dumplines.DumpLines.text
    written = []

    def counted(self, *args):
        text = real(self, *args)
        written.append(text is not None)
        return text

    monkeypatch.setattr(dumplines.DumpLines, "text", counted)
    with_c = run_cli(*argv)
    monkeypatch.setattr(dumplines.DumpLines, "text", lambda self, *args: None)
    without = run_cli(*argv)
    assert with_c.status == without.status == 0, with_c.err
    assert with_c.out == without.out
    if ARCHIVES[name]:
        assert sum(written) > len(written) // 2, (sum(written), len(written))


def test_plans_and_names_start_over_past_their_bounds(monkeypatch):
    """An archive whose layouts or instance-domain records never repeat keeps bounded
    plans and names: past the bounds they start over, and the text stays the same."""
    monkeypatch.setattr(dumplines, "_MAX_PLANS", 2)
    monkeypatch.setattr(dumplines, "_MAX_NAMES", 1)
    sets, plan = _sets_of([(0, [1, 2, 3], True)])
    result = result_of(result_pdu(sets)).contents
    lines = dumplines.DumpLines()
    want = _expected(result, [(0, [1, 2, 3], True)])
    for key in range(5):
        made = lines.add_plan(key, plan)
        assert len(lines.plans) <= 2
        for _ in range(2):
            assert lines.text(result, made, [_Snap()]) == want
