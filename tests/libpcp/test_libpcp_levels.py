"""Other libpcp behaviour that changed under the same names, at each level against its
libpcp (6.0.3 on the host, 6.3.8 and 7.2.2 in the Debian roots), one program per side:

* error texts: 6.3 says "archive" where 6.0 said "archive log", and has PM_ERR_ARG;
* label rules: 7.x lets a label name start with a digit or "_", and leaves a label
  with an invalid name out (with its value) instead of refusing the whole set;
* what did not change, checked so that it stays so: units printing and parsing,
  pmConvScale, pmNumberStr, pmTypeStr."""
from __future__ import annotations

import pytest

from support import difftest, levelref

pytestmark = [pytest.mark.reference]

LEVELS = levelref.LEVELS

LABELS = ['{"1a":1}', '{"_a":1}', '{"a-b":1,"c":2}', '{"c":2,"a-b":{"x":1},"d":3}',
          '{"a":{"1b":2}}', '{"a.b":1}', '{"Ab9":"x"}', '{"":1}', '{"a":1,"a":2}',
          '{"a b":1}', '{"x":[1,2],"y-z":null}', '{"a-b":1}', '{"a-b":[1,{"c":2}],"e":3}',
          '{"q":{"r-s":1,"t":2}}', '{}', '{"9":true}', '{"z":1,"y-y":2,"x":3}']

PROGRAM = r'''
R = {"errors": [[code, P.pmErrStr(code)] for code in range(-12460, -12340)] +
               [[code, P.pmErrStr(code)] for code in (-13393, -13394, -21344, -1, -22)]}
R["labels"] = [[text, catch(P.pmMergeLabels, [text])] for text in %(labels)r]
R["label_pairs"] = [catch(P.pmMergeLabels, [a, b]) for a, b in zip(%(labels)r, %(labels)r[1:])]
units = []
for ds in (-2, -1, 0, 1, 2):
    for dt in (-1, 0, 1):
        for dc in (-1, 0, 1):
            for ss in (0, 1, 3):
                for st in (0, 3, 5):
                    units.append(P.pmUnitsStr(pmapi.pmUnits(ds, dt, dc, ss, st, 0)))
R["units"] = units
def parsed(text):
    u, mult = P.pmParseUnitsStr(text)
    return [u.dimSpace, u.dimTime, u.dimCount, u.scaleSpace, u.scaleTime, u.scaleCount, mult]
R["parse"] = [catch(parsed, s) for s in ("", "byte", "Kbyte", "millisec / count",
                                         "count x 10^3", "/sec", "Mbyte / hour", "foo",
                                         "count^-1", "sec^2", "1/10 count", "%%")]
R["numbers"] = [P.pmNumberStr(v) for v in (0.0, 1.5, 123456.0, 1e12, -3.2, 1e-7)]
R["types"] = [P.pmTypeStr(t) for t in range(-1, 12)]
RESULT = R
'''


@pytest.mark.parametrize("level", LEVELS, ids=levelref.level_text)
def test_libpcp_behaviour(level):
    levelref.require(level)
    ours, ref = levelref.run_both(level, PROGRAM % {"labels": LABELS})
    difftest.assert_equal(ours, ref)
    texts = dict(ref["errors"])
    assert texts[-12370] == ("End of PCP archive log" if level == (6, 0)
                             else "End of PCP archive")
    merged = dict(ref["labels"])
    assert isinstance(merged['{"a-b":1,"c":2}'], dict) == (level < (7, 2))
