"""pmMergeLabels / pmMergeLabelSets: differential tests against the reference.

All reference answers are collected in ONE run of the official binding
(module-scoped fixture) and compared case by case.  Quirks of libpcp's
algorithm (documented in pcp/_libpcp/labels.py as Q1..Q11) have named cases.
"""

import json
import os

import pytest

from pcp._libpcp import labels as _labels
from pcp._core.errors import pmErr
from support import difftest

# (id, list of label strings)
MERGE_CASES = [
    ("single", ['{"a":1}']),
    ("two_disjoint", ['{"a":1}', '{"b":2}']),
    ("override", ['{"a":1,"b":2}', '{"b":3}']),
    ("override_three", ['{"a":1}', '{"a":2}', '{"a":3}']),
    ("sorted", ['{"zeta":1,"alpha":2,"mid":3}']),
    ("prefix_names", ['{"ab":1,"a":2,"abc":3}']),
    ("case_order", ['{"b":1,"B":2,"a":3,"A":4}']),
    ("underscore_digits", ['{"a_1":1,"a1":2,"a_":3}']),
    ("nested", ['{"a":{"x":1,"y":2}}']),
    ("Q1_nested_override", ['{"b":1,"a":{"x":1,"y":2}}', '{"a":{"x":3},"c":"s"}']),
    ("Q1_nested_first_only", ['{"a":{"x":1}}', '{"b":2}']),
    ("Q1_flat_then_nested", ['{"a.x":1}', '{"a":{"x":2}}']),
    ("Q2_two_levels", ['{"a":{"b":{"c":1}},"d":2}']),
    ("Q2_three_levels", ['{"a":{"b":{"c":{"d":1}}}}']),
    ("Q3_sibling_after_deep", ['{"a":{"b":{"c":1},"d":2}}']),
    ("Q3_long_sibling", ['{"a":{"b":{"c":1},"dddd":2}}']),
    ("nested_siblings", ['{"a":{"x":1},"b":{"y":2}}']),
    ("dotted_top", ['{"a.b":1}']),
    ("dotted_nested", ['{"a":{"b.c":1}}']),
    ("empty_map_value", ['{"a":{}}']),
    ("empty_map_nested", ['{"a":{"b":{}}}']),
    ("Q4_array_space", ['{"a":[1, 2]}']),
    ("Q4_array_more_space", ['{"a": [1 ,  2 ]}']),
    ("array_plain", ['{"a":[1,2,3]}']),
    ("array_strings", ['{"a":["x","y"]}']),
    ("array_empty", ['{"a":[]}']),
    # Q5 ({"a":[[1]]}) is not compared: libpcp reads uninitialised memory there, so the
    # reference's output varies from run to run; the fixed-value test below pins ours.
    ("Q6_object_in_array", ['{"a":[1,{"b":2}]}']),
    ("Q7_shrinking", ['{"a":"long string"}', '{"a":1}', '{"b":2}']),
    ("Q7_growing", ['{"a":1}', '{"a":"long string"}', '{"b":2}']),
    ("Q8_empty_object", ['{}']),
    ("Q8_empty_string", ['']),
    ("Q8_empty_twice", ['{}', '{}']),
    ("Q8_list_top", ['[1,2]']),
    ("Q8_number_top", ['1']),
    ("Q8_unterminated_number", ['{"a":1']),
    ("Q9_unterminated_string", ['{"a":"x"']),
    ("Q9_two_objects", ['{"a":1},{"b":2}']),
    ("keep_then_empty", ['{"a":1}', '{}']),
    ("empty_then_keep", ['{}', '{"a":1}']),
    ("empty_str_between", ['{"a":1}', '', '{"b":2}']),
    ("numbers_text", ['{"a":1.50,"b":-0,"c":1e10,"d":-2.5E-3,"e":0}']),
    ("Q11_neg_zero_lead", ['{"a":-01}']),
    ("Q11_dot_exp", ['{"a":1.e5}']),
    ("bools_null", ['{"a":true,"b":false,"c":null}']),
    ("override_type", ['{"a":"s"}', '{"a":[1]}', '{"a":{"b":true}}']),
    ("strings_escapes", ['{"a":"x\\"y","b":"t\\tz","c":"\\u0041\\/"}']),
    ("whitespace", [' { "a" : 1 ,\n\t"b" :\r "x" } ']),
    ("whitespace_nested", ['{ "a" : { "b" : 1 } }']),
    ("Q10_unicode_value", ['{"a":"\u00e9t\u00e9"}']),
    ("Q10_unicode_escape", ['{"a":"\\u00e9"}']),
    ("many_labels", ['{' + ','.join('"l%03d":%d' % (k, k) for k in range(200)) + '}']),
    ("long_value", ['{"a":"' + 'x' * 5000 + '"}']),
    ("long_name_ok", ['{"' + 'n' * 254 + '":1}']),
    ("scalar_arg_str", '{"a":1}'),
    # errors
    ("err_empty_list", []),
    ("err_string_top", ['"s"']),
    ("err_bad_json", ['{"a":}']),
    ("err_missing_colon", ['{"a" 1}']),
    ("err_trailing_comma", ['{"a":1,}']),
    ("err_nan", ['{"a":NaN}']),
    ("err_leading_zero", ['{"a":01}']),
    ("err_truncated_literal", ['{"a":tru}']),
    ("err_bad_escape", ['{"a":"x\\qy"}']),
    ("err_duplicate", ['{"a":1,"a":2}']),
    ("err_name_digit_first", ['{"1a":1}']),
    ("err_name_underscore_first", ['{"_a":1}']),
    ("err_name_dash", ['{"a-b":1}']),
    ("err_name_empty", ['{"":1}']),
    ("err_name_unicode", ['{"\u00e9":1}']),
    ("err_name_too_long", ['{"' + 'n' * 255 + '":1}']),
    ("err_later_invalid", ['{"a":1}', 'nope']),
    ("err_unbalanced", ['{"a":1}}']),
    ("err_bracket_mismatch", ['{"a":[1}']),
    ("err_too_many_labels", ['{' + ','.join('"l%04d":1' % k for k in range(1600)) + '}']),
    ("err_too_long", ['{' + ','.join('"l%03d":"%s"' % (k, 'v' * 60) for k in range(1200)) + '}']),
]

# (id, list of (json, flags) label sets or None / nested lists, filter)
SET_CASES = [
    ("sets_none", None, None),
    ("sets_single", [('{"a":1,"b":"x"}', 0)], None),
    ("sets_override", [('{"a":1,"b":2}', 0), ('{"b":3,"c":4}', 0)], None),
    ("sets_nested_Q1", [('{"b":1,"a":{"x":1,"y":2}}', 64), ('{"a":{"x":3},"c":"s"}', 64)], None),
    ("sets_with_none", [('{"a":1}', 0), None, [('{"b":2}', 0), ('{"a":5}', 0)]], None),
    ("sets_empty", [('{}', 0)], None),
    ("sets_empty_then", [('{}', 0), ('{"a":1}', 0)], None),
    ("sets_filter_drop_b", [('{"a":1,"b":2}', 0), ('{"b":3,"c":4}', 0)], "drop_b"),
    ("sets_filter_all", [('{"a":1,"b":2}', 0)], "drop_all"),
    ("sets_filter_keep", [('{"a":1}', 0), ('{"z":[1,2]}', 0)], "keep"),
    ("sets_types", [('{"a":true,"b":null,"c":1.50,"d":[1,"x"],"e":{}}', 0)], None),
    ("sets_three_levels", [('{"host":"h","x":1}', 0), ('{"x":2,"y":3}', 0), ('{"y":4}', 0)], None),
]

_FILTERS = {
    "drop_b": "lambda l, j, a: 0 if j[l.name:l.name + l.namelen] == b'b' else 1",
    "drop_all": "lambda l, j, a: 0",
    "keep": "lambda l, j, a: 1",
}

_REFERENCE_PROGRAM = r'''
import ctypes, json, sys
from ctypes import POINTER, byref, c_char_p, c_int
from pcp import pmapi
LIB = pmapi.LIBPCP
LIB.__pmParseLabelSet.restype = c_int
LIB.__pmParseLabelSet.argtypes = [c_char_p, c_int, c_int, POINTER(POINTER(pmapi.pmLabelSet))]
merge_cases, set_cases, filters = json.loads(sys.stdin.readline())
def run(fn):
    try:
        return ["ok", fn()]
    except pmapi.pmErr as e:
        return ["err", e.args[0]]
def mkset(item):
    if item is None:
        return None
    if isinstance(item, list) and item and isinstance(item[0], list):
        return [mkset(x) for x in item]
    text, flags = item
    raw = text.encode()
    p = POINTER(pmapi.pmLabelSet)()
    sts = LIB.__pmParseLabelSet(raw, len(raw), flags, byref(p))
    assert sts >= 0, sts
    return p.contents
out = {}
for name, labels in merge_cases:
    out[name] = run(lambda: pmapi.pmContext.pmMergeLabels(labels))
for name, sets, filt in set_cases:
    objs = None if sets is None else [mkset(s) for s in sets]
    cb = eval(filters[filt]) if filt else None
    out[name] = run(lambda: pmapi.pmContext.pmMergeLabelSets(objs, cb))
print(json.dumps(out))
'''


def _wire_sets(sets):
    def conv(item):
        if item is None:
            return None
        if isinstance(item, list):
            return [conv(x) for x in item]
        return list(item)
    return None if sets is None else [conv(s) for s in sets]


@pytest.fixture(scope="module")
def reference_answers():
    difftest.require_reference()
    payload = json.dumps([
        MERGE_CASES,
        [[n, _wire_sets(s), f] for n, s, f in SET_CASES],
        _FILTERS])
    program = ("import sys, io\nsys.stdin = io.StringIO(%r)\n" % (payload + "\n")
               + _REFERENCE_PROGRAM)
    return difftest.run_reference(program)


def _ours(fn):
    try:
        return ["ok", fn()]
    except pmErr as exc:
        return ["err", exc.args[0]]


def _our_sets(sets):
    def conv(item):
        if item is None:
            return None
        if isinstance(item, list):
            return [conv(x) for x in item]
        return _labels.label_set_from_json(item[0], item[1])
    return None if sets is None else [conv(s) for s in sets]


@pytest.mark.reference
@pytest.mark.parametrize("name,labels", MERGE_CASES, ids=[c[0] for c in MERGE_CASES])
def test_merge_labels_matches_reference(reference_answers, name, labels):
    assert _ours(lambda: _labels.merge_labels(labels)) == reference_answers[name]


@pytest.mark.reference
@pytest.mark.parametrize("name,sets,filt", SET_CASES, ids=[c[0] for c in SET_CASES])
def test_merge_label_sets_matches_reference(reference_answers, name, sets, filt):
    cb = eval(_FILTERS[filt]) if filt else None  # pylint: disable=eval-used
    got = _ours(lambda: _labels.merge_label_sets(_our_sets(sets), cb))
    assert got == reference_answers[name]


# ---- quirks pinned without the reference (values observed from 6.0.3) ----

@pytest.mark.parametrize("labels,expected", [
    (['{"b":1,"a":{"x":1,"y":2}}', '{"a":{"x":3},"c":"s"}'],
     '{"a.x":3,"a.x":1,"a.y":2,"b":1,"c":"s"}'),                 # Q1
    (['{"a":{"b":{"c":1}},"d":2}'], '{"a.c":1,"d":2}'),           # Q2
    (['{"a":[1, 2]}'], '{"a"::[1,2]}'),                           # Q4
    (['{"a":[[1]]}'], '{"a":}'),                                  # Q5
    (['{"a":[1,{"b":2}]}'], '{"a.b":2}'),                         # Q6
    (['{}'], ''),                                                 # Q8
    (['{"a":"x"'], '{"a":"x"}'),                                  # Q9
    (['{"a":1},{"b":2}'], '{"a":1,"b":2}'),                       # Q9
    (['{"a":"\u00e9"}'], '{"a":""}'),                             # Q10
    (['{"a":-01,"b":1.50}'], '{"a":-01,"b":1.50}'),               # Q11
])
def test_merge_labels_quirks(labels, expected):
    assert _labels.merge_labels(labels) == expected


def test_merge_labels_shrinking_result_fails():                  # Q7
    with pytest.raises(pmErr) as info:
        _labels.merge_labels(['{"a":"long string"}', '{"a":1}', '{"b":2}'])
    assert info.value.args[0] == -22


def test_merge_label_sets_dict_and_callback_arg():
    seen = []

    def cb(label, text, arg):
        seen.append((text[label.name:label.name + label.namelen], arg))
        return 1

    assert _labels.merge_label_sets([{"b": 2, "a": "x"}, {"b": [1, 2]}], cb, b"tag") \
        == '{"a":"x","b":[1,2]}'
    names = [n for n, _ in seen]
    assert names.count(b"a") >= 1 and names.count(b"b") >= 2
    assert all(isinstance(a, int) for _, a in seen)
    assert _labels.merge_label_sets(None) == "{}"
    with pytest.raises(pmErr):
        _labels.merge_label_sets([])


def test_ci_never_skips_reference():
    """With $CI set an unavailable reference must fail, not skip."""
    if os.environ.get("CI"):
        assert difftest.reference_problem() is None  # pylint: disable=protected-access
