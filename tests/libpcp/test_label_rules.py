"""One label parser with libpcp's rules (pcp/_libpcp/labels.py over label_json's jsonsl
tokenizer) wherever labels enter: a table of accepted and refused label sets through
pmda.pmdaAddLabels (__pmAddLabels), pcp.pmi's pmiPutLabel and pcp.mmv's label calls
(libpcp_mmv's get_label, which ends in __pmParseLabelSet), compared with the official
binding; pmdaopenmetrics' labels of PCP's QA sample prom-exposition-formats-example1;
and hypothesis on the parser: arbitrary bytes give libpcp's error codes and nothing
else, label sets that json writes with valid names are read back as json reads them."""
from __future__ import annotations

import json
import string
from errno import EINVAL

import pytest
from hypothesis import given, settings, strategies as st

from pcp._core.constants import (
    MMV_ARRAY_TYPE, MMV_BOOLEAN_TYPE, MMV_MAP_TYPE, MMV_NULL_TYPE, MMV_NUMBER_TYPE,
    MMV_STRING_TYPE,
)
from pcp._core.errors import pmErr
from pcp._libpcp.labels import parse_label_set
from support import difftest, mmvdiff

# pmdaopenmetrics' jsonb_labelset of the item labels of msdos_file_access_time_seconds
# (QA sample prom-exposition-formats-example1: its label parser keeps one backslash of
# "\\", a raw newline for "\n" and a bare quote for '\"'): -EINVAL on libpcp
OPENMETRICS_MSDOS = '{"path":"C:\\DIR\\FILE.TXT","error":"Cannot find file:\n"FILE.TXT""}'

LABEL_SETS = [
    '{"a":1}', '{"a":"x","b":true,"c":null,"d":[1,2],"e":{"f":1}}', ' { "a" : 1 } ',
    '{"a":1,"a":2}', '{"a":1,"b":{"a":2}}', '{"1a":1}', '{"_a":1}', '{"a-b":1}',
    '{"a.b":1}', '{"":1}', '{"%s":1}' % ("n" * 254), '{"%s":1}' % ("n" * 255),
    '{"a":-01}', '{"a":01}', '{"a":1.e5}', '{"a":1e}', '{"a":"\\u12"}', '{"a":tru}',
    '{"a":"x\\qy"}', '{"a":"x\\"y"}', '{"a":"raw\nnewline"}', '{"a":"tab\there"}',
    '{"a":"\x13"}', '{"a":"\x14"}', '{"a":{"b":{"c":1}}}', '[1]', '1', '{}',
    '{"a":1', '{"a":1}{"b":2}', '{"a":1},{"b":2}', '{"a":1,}', '{"a" 1}', '{"a":}',
    '{"a":"\u00e9"}', '{"\u00e9":1}', '{"a":"%s"}' % ("v" * 8200), OPENMETRICS_MSDOS,
    '{"path":"C:\\\\DIR\\\\FILE.TXT","error":"Cannot find file:\\n\\"FILE.TXT\\""}',
]

# (left out: '{"a":[[1]]}', whose value offset libpcp computes from a NULL pointer; see
# labels.py's Q5)

# pmiPutLabel(name, value): libpcp_import writes {"name":"value"} (keywords bare)
PMI_LABELS = [("a", "x"), ("a", "true"), ("a", "NULL"), ("1a", "x"), ("a.b", "x"),
              ("a", 'x"y'), ("a", "x\\y"), ("a", "x\\\\y"), ("a", "line\nbreak"),
              ("a" * 255, "x"), ("a", "\u00e9")]

PROGRAM = r'''
import json, os, sys
from pcp import pmda, pmi
import cpmapi as c_api
out = {"pmda": [], "pmi": []}
for text in json.loads(os.environ["LABEL_SETS"]):
    try:
        ls = pmda.pmdaAddLabels(text.encode("utf-8")).contents
        out["pmda"].append([ls.nlabels, ls.json.decode("utf-8", "replace"),
                            [(l.name, l.namelen, l.flags, l.value, l.valuelen)
                             for l in ls.labels[:ls.nlabels]]])
    except Exception as e:
        out["pmda"].append([type(e).__name__, e.args[0] if e.args else None])
log = pmi.pmiLogImport(os.path.join(os.environ["SCRATCH"], "labels"))
for i, (name, value) in enumerate(json.loads(os.environ["PMI_LABELS"])):
    try:
        out["pmi"].append(log.pmiPutLabel(c_api.PM_LABEL_ITEM, i + 1, 0, name, value))
    except pmi.pmiErr as e:
        out["pmi"].append(["pmiErr", e.args[0]])
print(json.dumps(out))
'''


@pytest.mark.reference
def test_label_sets_through_pmda_and_pmi_as_libpcp(tmp_path):
    difftest.require_reference()
    answers = {}
    for ours in (False, True):
        scratch = tmp_path / ("ours" if ours else "ref")
        scratch.mkdir()
        answers[ours] = difftest.run_program(PROGRAM, ours, {
            "LABEL_SETS": json.dumps(LABEL_SETS), "PMI_LABELS": json.dumps(PMI_LABELS),
            "SCRATCH": str(scratch)}, 60)
    ours, ref = answers[True], answers[False]
    assert "__crash__" not in ref, ref
    for key in ("pmda", "pmi"):
        cases = LABEL_SETS if key == "pmda" else PMI_LABELS
        diffs = ["%r\n  ours %s\n  ref  %s" % (c, o, r)
                 for c, o, r in zip(cases, ours[key], ref[key]) if o != r]
        assert not diffs and len(ours[key]) == len(ref[key]), "\n".join(diffs)
    # the record: pmdaopenmetrics' labels are refused by libpcp (-EINVAL)
    msdos = ref["pmda"][LABEL_SETS.index(OPENMETRICS_MSDOS)]
    assert msdos[0] == "pmErr" and msdos[1] == -EINVAL, msdos
    assert ref["pmda"][0][0] == 1 and ref["pmda"][3][0] == "pmErr"


# (name, value, MMV_*_TYPE)
S, N, B, Z, A, M = (MMV_STRING_TYPE, MMV_NUMBER_TYPE, MMV_BOOLEAN_TYPE, MMV_NULL_TYPE,
                    MMV_ARRAY_TYPE, MMV_MAP_TYPE)
MMV_LABELS = [
    ("a", '"x"', S), ("a", '"x"y"', S), ("a", '"x\\y"', S), ("a", '"x\\\\y"', S),
    ("a", '"line\nbreak"', S), ("a", '{"b":1}', M), ("a", '{"b":1,"b":2}', M),
    ("a", '{"1b":1}', M), ("a", '{b:1}', M), ("a", "[1,2]", A), ("a", "[1,", A),
    ("a", "[1,2,]", A), ("a", "1", N), ("a", " 1", N), ("a", "1 ", N), ("a", "+1", N),
    ("a", "-01", N), ("a", "01", N), ("a", "1.e5", N), ("a", "0x10", N), ("a", "inf", N),
    ("a", "nan", N), ("a", "1_000", N), ("a", ".5", N), ("a", "true", B),
    ("a", "anything", Z), ("\u00e9", '"x"', S), ("a", '"\u00e9"', S),
    ("a", '"%s"' % ("v" * 118), S), ("a", '"%s"' % ("v" * 240), S),
]


def test_mmv_labels_as_libpcp_mmv():
    ours, ref = mmvdiff.run_both(mmvdiff.REGISTRY_ADAPTER + r'''
reg = REG(PATH)
reg.add_metric("m", 1, 3, 1, U())
RESULT["labels"] = [errno_of(reg.add_metric_label, 1, name, value, kind, 0)
                    for name, value, kind in %r]
''' % (MMV_LABELS,))
    diffs = ["%r: ours %s ref %s" % (c, o, r)
             for c, o, r in zip(MMV_LABELS, ours["labels"], ref["labels"]) if o != r]
    assert not diffs and ours == ref, "\n".join(diffs) or (ours, ref)
    assert ref["labels"][0] == 0 and ref["labels"][1] == EINVAL


# ---- the parser against json, under hypothesis ----------------------------------------

NAME = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,15}", fullmatch=True)
SCALAR = (st.integers(-2 ** 53, 2 ** 53) | st.booleans() | st.none()
          | st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7e), max_size=20))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.text(string.printable, max_size=200).map(str.encode))
def test_any_text_gives_a_label_set_or_libpcp_error(data):
    try:
        parse_label_set(data)
    except pmErr as e:
        assert e.args[0] < 0


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(NAME, SCALAR | st.lists(st.integers(0, 9), max_size=3), max_size=8))
def test_json_label_sets_read_as_json_reads_them(labels):
    # compact: whitespace inside an array shifts its value (labels.py's Q4)
    text = json.dumps(labels, ensure_ascii=True, separators=(",", ":"))
    jsonb, entries, _ = parse_label_set(text)
    got = {jsonb[n:n + nl].decode(): json.loads(jsonb[v:v + vl]) for n, nl, _, v, vl in entries}
    assert got == labels
    assert [jsonb[n:n + nl] for n, nl, _, _, _ in entries] == sorted(
        k.encode() for k in labels)                     # sorted by name


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(NAME, SCALAR, min_size=1, max_size=5),
       st.from_regex(r"([0-9_][A-Za-z0-9_]*|[A-Za-z][A-Za-z0-9_]*[^A-Za-z0-9_\"\\.])",
                     fullmatch=True).filter(lambda n: n.isascii() and n.isprintable()))
def test_a_bad_name_refuses_the_set(labels, bad):
    labels = dict(labels, **{bad: 1})
    with pytest.raises(pmErr) as e:
        parse_label_set(json.dumps(labels))
    assert e.value.args[0] == -EINVAL
