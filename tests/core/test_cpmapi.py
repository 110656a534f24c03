"""cpmapi: names, constant values and helper functions against the official module."""

import itertools
import json
import os
import random
import time
import types
from typing import Any, Dict, List, Tuple

import pytest

import cpmapi
from support.difftest import require_reference, run_reference

pytestmark = pytest.mark.reference

# Names the official module has that we add ourselves (not in the reference).
OUR_EXTRA_PUBLIC = {"DELIBERATE_OMISSIONS"}


def _public_names(module: types.ModuleType) -> set:
    return {name for name in dir(module) if not name.startswith("_")}


# ---------------------------------------------------------------------------
# A table of calls evaluated identically on both sides.  Each entry is
# (tz, function name, args, kwargs, compare_message).  When compare_message
# is False only the exception type is compared (the official module's
# argument-count messages name the wrong function, e.g. pmSetContextOptions).
# ---------------------------------------------------------------------------
Call = Tuple[str, str, List[Any], Dict[str, Any], bool]

_INT_EDGES = [0, 1, -1, 7, 8, -8, -9, 15, 16, 17, 100, -100, 255, 256,
              2**31 - 1, -2**31, 2**31, -2**31 - 1, 2**32, 2**63, -2**63 - 1]


def _build_calls() -> List[Call]:
    calls: List[Call] = []
    utc = "UTC"

    # pmUnits_int: every field over small values (incl. negatives and values
    # that wrap in a 4-bit field), plus edge values field by field.
    small = [-9, -8, -1, 0, 1, 7, 8, 15, 16]
    for pos, value in itertools.product(range(6), _INT_EDGES):
        args = [0] * 6
        args[pos] = value
        calls.append((utc, "pmUnits_int", args, {}, True))
    for combo in itertools.product(small, repeat=3):
        calls.append((utc, "pmUnits_int", list(combo) + list(reversed(combo)), {}, True))
        calls.append((utc, "pmUnits_int", list(reversed(combo)) + list(combo), {}, True))
    calls.append((utc, "pmUnits_int", [], {"dimSpace": 1, "dimTime": -1, "dimCount": 2,
                                          "scaleSpace": 3, "scaleTime": 4, "scaleCount": 5},
                  True))
    calls.append((utc, "pmUnits_int", [True, False, 1, 0, 0, 0], {}, True))
    calls.append((utc, "pmUnits_int", [1.0, 0, 0, 0, 0, 0], {}, True))
    calls.append((utc, "pmUnits_int", ["1", 0, 0, 0, 0, 0], {}, True))
    calls.append((utc, "pmUnits_int", [1, 0, 0, 0, 0], {}, False))

    # PM_XTB_SET / PM_XTB_GET
    for value in _INT_EDGES + list(range(0, 6)):
        calls.append((utc, "PM_XTB_SET", [value], {}, True))
        calls.append((utc, "PM_XTB_GET", [value], {}, True))
    for scale in range(-2, 300, 7):
        calls.append((utc, "PM_XTB_GET", [(1 << 24) | (scale << 16)], {}, True))
    calls.append((utc, "PM_XTB_SET", [], {"type": 3}, True))
    calls.append((utc, "PM_XTB_GET", [], {"mode": 16973824}, True))
    calls.append((utc, "PM_XTB_SET", [1.0], {}, True))
    calls.append((utc, "PM_XTB_GET", [], {}, False))

    # pmtimevalToReal / pmtimespecToReal
    secs = [0, 1, -1, 1700000000, 2**31, 2**53 + 1, 2**62, 2**63 - 1, -2**63, 2**63, -2**63 - 1]
    fracs = [0, 1, 2, 999999, 1000000, 999999999, -5, 2**31, 2**63 - 1, 2**63, -2**63 - 1]
    for sec, frac in itertools.product(secs, fracs):
        calls.append((utc, "pmtimevalToReal", [sec, frac], {}, True))
        calls.append((utc, "pmtimespecToReal", [sec, frac], {}, True))
    rng = random.Random(20240611)
    for _ in range(1500):
        sec = rng.choice([rng.randrange(-2**40, 2**40), rng.randrange(-2**63, 2**63),
                          rng.randrange(2**52, 2**56), rng.randrange(0, 2**31)])
        calls.append((utc, "pmtimevalToReal", [sec, rng.randrange(-10**6, 2 * 10**6)], {}, True))
        calls.append((utc, "pmtimespecToReal", [sec, rng.randrange(-10**9, 2 * 10**9)], {}, True))
    calls.append((utc, "pmtimevalToReal", [], {"seconds": 3, "useconds": 4}, True))
    calls.append((utc, "pmtimespecToReal", [], {"seconds": 3, "nanoseconds": 4}, True))
    calls.append((utc, "pmtimevalToReal", [1.5, 0], {}, True))
    calls.append((utc, "pmtimespecToReal", [1, "2"], {}, True))
    calls.append((utc, "pmtimevalToReal", [1], {}, False))

    # pmMktime, in several timezones (incl. DST edges and normalisation)
    tm_cases = [
        [0, 0, 0, 1, 0, 70, 0, 0, 0, 0, ""],
        [0, 0, 0, 1, 0, 100, 0, 0, 0, 0, "UTC"],
        [0, 0, 0, 1, 6, 120, 0, 0, 0, 0, "x"],
        [0, 0, 0, 1, 6, 120, 0, 0, 1, 0, "x"],
        [0, 0, 0, 1, 6, 120, 0, 0, -1, 0, "x"],
        [30, 30, 2, 8, 2, 124, 0, 0, -1, 0, "EST"],   # inside the US spring gap
        [30, 30, 1, 3, 10, 124, 0, 0, -1, 0, "EST"],  # inside the US fall overlap
        [30, 30, 1, 3, 10, 124, 0, 0, 0, 0, "EST"],
        [30, 30, 1, 3, 10, 124, 0, 0, 1, 0, "EST"],
        [99, 99, 99, 99, 99, 120, 99, 99, 99, 0, "x"],
        [-1, -1, -1, -1, -1, 120, -1, -1, 0, -3600, "x"],
        [0, 0, 0, 1, 6, 2**31 - 1, 0, 0, 0, 0, "x"],
        [0, 0, 0, 1, 6, -2000, 0, 0, 0, 0, "x"],
        [2**31 - 1, 2**31 - 1, 2**31 - 1, 2**31 - 1, 2**31 - 1, 2**31 - 1, 0, 0, 0, 0, "x"],
        [0, 0, 0, 1, 6, 2**31, 0, 0, 0, 0, "x"],
        [0, 0, 0, 1, 6, 120, 0, 0, 0, 2**63, "x"],
        [0, 0, 0, 1, 6, 120, 0, 0, 0, 0.0, "x"],
        [0, 0, 0, 1, 6, 120, 0, 0, 0, 0, None],
        [0, 0, 0, 1, 6, 120, 0, 0, 0, 0, 5],
        [0, 0, 0, 1, 6, 120.5, 0, 0, 0, 0, "x"],
    ]
    for tz in ("UTC", "America/New_York", "Australia/Lord_Howe", "EST5EDT"):
        for case in tm_cases:
            calls.append((tz, "pmMktime", case, {}, True))
    calls.append((utc, "pmMktime", [0] * 10, {}, False))
    names = ["tm_sec", "tm_min", "tm_hour", "tm_mday", "tm_mon", "tm_year",
             "tm_wday", "tm_yday", "tm_isdst", "tm_gmtoff", "tm_zone"]
    calls.append((utc, "pmMktime", [], dict(zip(names, tm_cases[2])), True))
    return calls


CALLS = _build_calls()

# Evaluates CALLS; the same text runs under the reference and in-process.
EVALUATOR = r'''
import json, os, time
import cpmapi as _target

def evaluate(calls):
    out = []
    saved = os.environ.get("TZ")
    try:
        for tz, name, args, kwargs, _ in calls:
            os.environ["TZ"] = tz
            time.tzset()
            try:
                value = getattr(_target, name)(*args, **kwargs)
                out.append(["ok", value])
            except Exception as exc:
                out.append(["err", type(exc).__name__, str(exc)])
    finally:
        if saved is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = saved
        time.tzset()
    return out
'''


@pytest.fixture(scope="module")
def reference() -> Dict[str, Any]:
    require_reference()
    code = EVALUATOR + r'''
import cpmapi
names = sorted(n for n in dir(cpmapi) if not n.startswith("_"))
values = {}
callables = []
for n in names:
    v = getattr(cpmapi, n)
    if callable(v):
        callables.append(n)
    elif isinstance(v, dict):
        values[n] = {"dict": [[k, w] for k, w in v.items()]}
    else:
        values[n] = {"type": type(v).__name__, "value": v}
calls = json.loads(%r)
print(json.dumps({"names": names, "values": values, "callables": callables,
                  "results": evaluate(calls)}))
''' % json.dumps(CALLS)
    return run_reference(code)


def test_public_names_match(reference: Dict[str, Any]) -> None:
    ours = _public_names(cpmapi)
    omitted = set(cpmapi.DELIBERATE_OMISSIONS)
    theirs = set(reference["names"])
    missing = theirs - ours - omitted
    extra = ours - theirs - OUR_EXTRA_PUBLIC
    if missing or extra:
        print("missing from ours:", sorted(missing))
        print("extra in ours:", sorted(extra))
    assert not missing and not extra
    # Omissions must be real reference names we do not define.
    assert omitted <= theirs, sorted(omitted - theirs)
    assert not omitted & ours, sorted(omitted & ours)
    assert len(cpmapi.DELIBERATE_OMISSIONS) == len(omitted)


def test_callables_match(reference: Dict[str, Any]) -> None:
    ours = {n for n in _public_names(cpmapi) if callable(getattr(cpmapi, n))}
    theirs = set(reference["callables"]) - set(cpmapi.DELIBERATE_OMISSIONS)
    assert ours == theirs


def test_constant_values_match(reference: Dict[str, Any]) -> None:
    mismatches = []
    for name, ref in reference["values"].items():
        if "dict" in ref:
            continue
        ours = getattr(cpmapi, name)
        if type(ours).__name__ != ref["type"] or ours != ref["value"]:
            mismatches.append((name, ours, ref))
    for item in mismatches:
        print("mismatch:", item)
    assert not mismatches
    assert len(reference["values"]) > 150


def test_err_sym_dict_matches(reference: Dict[str, Any]) -> None:
    ref_items = [tuple(item) for item in reference["values"]["pmErrSymDict"]["dict"]]
    assert dict(ref_items) == cpmapi.pmErrSymDict
    assert list(cpmapi.pmErrSymDict.items()) == ref_items  # same order too
    for code, name in cpmapi.pmErrSymDict.items():
        assert getattr(cpmapi, name) == code


def test_helper_calls_match(reference: Dict[str, Any]) -> None:
    namespace: Dict[str, Any] = {}
    exec(EVALUATOR, namespace)  # pylint: disable=exec-used
    ours = json.loads(json.dumps(namespace["evaluate"](CALLS)))
    theirs = reference["results"]
    assert len(ours) == len(theirs) == len(CALLS)
    bad = []
    for call, mine, ref in zip(CALLS, ours, theirs):
        compare_message = call[4]
        if mine[0] == "err" and ref[0] == "err" and not compare_message:
            same = mine[1] == ref[1]
        else:
            same = mine == ref
        if not same:
            bad.append((call[:4], mine, ref))
    for item in bad[:40]:
        print("differs:", item)
    assert not bad, "%d of %d calls differ" % (len(bad), len(CALLS))


def test_result_types() -> None:
    assert type(cpmapi.pmUnits_int(1, -1, 0, 0, 3, 0)) is int
    assert type(cpmapi.pmtimevalToReal(1, 2)) is float
    assert type(cpmapi.pmMktime(0, 0, 0, 1, 0, 70, 0, 0, 0, 0, "")) is int


def test_units_layout() -> None:
    # Nibbles from the top: dimSpace, dimTime, dimCount, scaleSpace,
    # scaleTime, scaleCount; low byte is padding.
    assert cpmapi.pmUnits_int(1, 0, 0, 0, 0, 0) == 1 << 28
    assert cpmapi.pmUnits_int(0, 0, 0, 0, 0, 1) == 1 << 8
    assert cpmapi.pmUnits_int(-1, 0, 0, 0, 0, 0) == -(1 << 28)
    assert cpmapi.pmUnits_int(0, 0, 0, 0, 0, -1) == 0xF00


def test_mktime_uses_local_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        assert cpmapi.pmMktime(0, 0, 0, 1, 0, 100, 0, 0, 0, 0, "") == 946684800
        monkeypatch.setenv("TZ", "EST5EDT")
        time.tzset()
        assert cpmapi.pmMktime(0, 0, 0, 1, 0, 100, 0, 0, 0, 0, "") == 946684800 + 5 * 3600
    finally:
        monkeypatch.undo()
        time.tzset()


def test_usage_message(capsys: pytest.CaptureFixture) -> None:
    from pcp._core import errors as _errors
    assert cpmapi.pmUsageMessage() is None
    err = capsys.readouterr().err
    assert err == "Usage: %s [options]\n" % _errors.pmGetProgname()


def test_module_is_pure_source() -> None:
    assert cpmapi.__file__.endswith(".py")
    assert os.path.dirname(os.path.abspath(cpmapi.__file__)) == os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
