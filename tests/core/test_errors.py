"""pmErrStr, pmErr and pmUsageErr against the official binding (libpcp 6.0.3)."""

import json
import os
from typing import Any, Dict, List

import pytest

import cpmapi
from pcp._core import errors as _errors
from pcp._core.errors import check, pmErr, pmErrStr
from pcp._libpcp.usage import pmUsageErr
from support.difftest import require_reference, run_reference

# Every code in a wide window plus values that exercise the 32-bit wrap
# and the TLS/SASL ranges below PM_ERR_NYI.
EXTRA_CODES = [
    -2**31, 2**31 - 1, 2**31, -2**31 - 1, 2**32 - 12357, -2**32 - 12357,
    2**63 + 5, -2**70 - 12357, 2**70, -30000, -22000, -22343, -22344,
    -22345, -22346, -21344 - 100, -25000, -12344, -12445, -13393, -13394,
]
CODES: List[int] = list(range(-21500, 50)) + EXTRA_CODES

# A subset for the (slower) exception checks.
EXC_CODES: List[int] = sorted(set(
    [0, 1, -1, -2, -11, -58, -133, -134, -12344, -12352, -21343, -21345,
     -21444, -22345, 2**31, -2**31, 50, 12345] + list(cpmapi.pmErrSymDict)
    + list(range(-140, 0)) + list(range(-12450, -12340))))

REFERENCE_CODE = r'''
import json, os, sys, tempfile
from pcp import pmapi

codes = json.loads(%(codes)r)
exc_codes = json.loads(%(exc_codes)r)

def capture_stderr(func):
    handle, path = tempfile.mkstemp()
    saved = os.dup(2)
    sys.stderr.flush()
    os.dup2(handle, 2)
    try:
        result = func()
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(handle)
    with open(path) as stream:
        text = stream.read()
    os.unlink(path)
    return result, text

out = {}
out["errstr"] = [pmapi.pmContext.pmErrStr(c) for c in codes]
rows = []
for c in exc_codes:
    e = pmapi.pmErr(c)
    e3 = pmapi.pmErr(c, "x", 3)
    rows.append([str(e), e.message(), e.errno(), e.code, list(e.args),
                 str(e3), e3.message(), e3.errno(), type(e3.args).__name__,
                 list(e3.args), repr(e3)])
out["exc"] = rows
odd = []
for args in [(), ("abc",), ("abc", 1), (-12357.0,), (True,), (False, "y"),
             (-12357, None, [1, 2], {"k": 1}), (2**31 - 12357, "w")]:
    e = pmapi.pmErr(*args)
    odd.append([str(e), e.message(), e.errno(), e.code, len(e.args)])
out["odd"] = odd
out["progname"] = pmapi.pmErr(-1).progname()
usage = []
for args in [(), ("hello", 3), ("bad option\n",)]:
    u = pmapi.pmUsageErr(*args)
    result, text = capture_stderr(u.message)
    usage.append([result, text, str(u), type(u.args).__name__, list(u.args)])
out["usage"] = usage
out["bare_usage"] = capture_stderr(__import__("cpmapi").pmUsageMessage)
out["mro"] = [c.__name__ for c in pmapi.pmErr.__mro__]
out["usage_mro"] = [c.__name__ for c in pmapi.pmUsageErr.__mro__]
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def reference() -> Dict[str, Any]:
    require_reference()
    code = REFERENCE_CODE % {"codes": json.dumps(CODES), "exc_codes": json.dumps(EXC_CODES)}
    return run_reference(code)


@pytest.mark.reference
def test_pmerrstr_matches_reference(reference: Dict[str, Any]) -> None:
    theirs = reference["errstr"]
    assert len(theirs) == len(CODES)
    bad = [(code, pmErrStr(code), ref) for code, ref in zip(CODES, theirs)
           if pmErrStr(code) != ref]
    for item in bad[:30]:
        print("differs:", item)
    assert not bad, "%d of %d codes differ" % (len(bad), len(CODES))


@pytest.mark.reference
def test_pmerr_matches_reference(reference: Dict[str, Any]) -> None:
    bad = []
    for code, ref in zip(EXC_CODES, reference["exc"]):
        e = pmErr(code)
        e3 = pmErr(code, "x", 3)
        mine = [str(e), e.message(), e.errno(), e.code, list(e.args),
                str(e3), e3.message(), e3.errno(), type(e3.args).__name__,
                list(e3.args), repr(e3)]
        if mine != ref:
            bad.append((code, mine, ref))
    for item in bad[:20]:
        print("differs:", item)
    assert not bad


@pytest.mark.reference
def test_pmerr_odd_arguments_match_reference(reference: Dict[str, Any]) -> None:
    cases = [(), ("abc",), ("abc", 1), (-12357.0,), (True,), (False, "y"),
             (-12357, None, [1, 2], {"k": 1}), (2**31 - 12357, "w")]
    for args, ref in zip(cases, reference["odd"]):
        e = pmErr(*args)
        assert [str(e), e.message(), e.errno(), e.code, len(e.args)] == ref, args


@pytest.mark.reference
def test_progname_matches_reference(reference: Dict[str, Any]) -> None:
    # libpcp's pmProgname is "pcp" until a program sets it (pmGetOptions).
    assert pmErr(-1).progname() == reference["progname"]


@pytest.mark.reference
def test_usage_error_matches_reference(reference: Dict[str, Any],
                                       capsys: pytest.CaptureFixture) -> None:
    for args, ref in zip([(), ("hello", 3), ("bad option\n",)], reference["usage"]):
        u = pmUsageErr(*args)
        result = u.message()
        text = capsys.readouterr().err
        assert [result, text, str(u), type(u.args).__name__, list(u.args)] == ref, args
    result = cpmapi.pmUsageMessage()
    assert [result, capsys.readouterr().err] == reference["bare_usage"]


@pytest.mark.reference
def test_exception_hierarchy_matches_reference(reference: Dict[str, Any]) -> None:
    assert [c.__name__ for c in pmErr.__mro__] == reference["mro"]
    assert [c.__name__ for c in pmUsageErr.__mro__] == reference["usage_mro"]


# ---------------------------------------------------------------------------
# Behaviour that needs no reference
# ---------------------------------------------------------------------------
def test_known_texts() -> None:
    assert pmErrStr(0) == "No error"
    assert pmErrStr(cpmapi.PM_ERR_EOL) == "End of PCP archive log"
    assert pmErrStr(cpmapi.PM_ERR_NAME) == "Unknown metric name"
    assert pmErrStr(-2) == os.strerror(2)
    assert pmErrStr(1) == "No such PMAPI error code (1)"
    assert pmErrStr(-12352) == "No such PMAPI error code (-12352)"
    assert pmErrStr(-21345) == "Authentication - generic failure"
    assert pmErrStr(-21344 - 50) == "Authentication - undefined error!"
    assert pmErrStr(-23000) == "Unknown secure sockets error -23000 (-1656)"


def test_every_symbol_has_a_text() -> None:
    for code in cpmapi.pmErrSymDict:
        assert not pmErrStr(code).startswith("No such PMAPI"), code
    # every text is a code of some level; the codes of this level have theirs
    from pcp._core import constants
    assert set(_errors._PCP_MESSAGES) == set(constants.pmErrSymDict)


def test_texts_fit_buffer() -> None:
    for code in CODES:
        assert len(pmErrStr(code).encode()) < cpmapi.PM_MAXERRMSGLEN
    assert len(_errors._limit("x" * 500).encode()) == cpmapi.PM_MAXERRMSGLEN - 1


def test_non_integer_code_rejected() -> None:
    with pytest.raises(TypeError):
        pmErrStr(1.5)  # type: ignore[arg-type]


def test_check() -> None:
    assert check(0) == 0
    assert check(7) == 7
    with pytest.raises(pmErr) as info:
        check(cpmapi.PM_ERR_NAME)
    assert info.value.errno() == cpmapi.PM_ERR_NAME
    assert str(info.value) == "PM_ERR_NAME Unknown metric name"


def test_pmerr_is_catchable_as_exception() -> None:
    with pytest.raises(Exception):
        raise pmErr(cpmapi.PM_ERR_IPC, "during fetch")
    assert pmErr(cpmapi.PM_ERR_IPC, "during fetch").message() == \
        "IPC protocol failure during fetch"


def test_progname_can_be_set() -> None:
    try:
        _errors.pmSetProgname("/usr/bin/pmrep")
        assert pmErr(-1).progname() == "pmrep"
        assert _errors.pmGetProgname() == "pmrep"
    finally:
        _errors.pmSetProgname(None)
    assert pmErr(-1).progname() == "pcp"


def test_pmflush_to_file(tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
                         capsys: pytest.CaptureFixture) -> None:
    target = tmp_path / "stderr.txt"
    monkeypatch.setenv("PCP_STDERR", str(target))
    _errors.pmprintf("one ")
    _errors.pmprintf("two\n")
    assert _errors.pmflush() == 0
    assert target.read_text() == "one two\n"
    assert capsys.readouterr().err == ""
    assert _errors.pmflush() == 0  # empty buffer: nothing written
    assert target.read_text() == "one two\n"
