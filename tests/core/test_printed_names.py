"""What scripts print and import, against the official binding: the public types print as
`pcp.pmapi.X` (classes, their ctypes pointer types, and the objects the PMAPI hands out),
pcp.pmapi and pcp.pmcc offer the names the official modules import (ctypes' among them),
and cpmapi's pmnsTraverse and pmSetProcessIdentity behave as the official C functions
do. Every program below runs unchanged under both bindings and its output is compared
byte for byte, memory addresses, times and process ids masked."""
import re

import pytest

from support import difftest

pytestmark = pytest.mark.reference

_ADDRESS = re.compile(r"0x[0-9a-f]+")
# each side's copy of the program (a traceback names it)
_PROGRAM_PATH = re.compile(r'"/tmp/[^"]*/tool\.py"')


def _both(code, argv=(), env=None):
    ref = difftest.run_script(code, list(argv), False, env)
    ours = difftest.run_script(code, list(argv), True, env)
    return ref, ours


def _assert_same_run(ref, ours, mask=lambda text: text):
    assert ref["status"] == 0 or ref["stderr"], ref

    def masked(text):
        return mask(_PROGRAM_PATH.sub('"tool.py"', text))
    assert (ours["status"], masked(ours["stderr"])) == (ref["status"], masked(ref["stderr"]))
    assert mask(ours["stdout"]) == mask(ref["stdout"])
    assert ref["stdout"].strip(), "the reference printed nothing: the comparison shows little"


# every name of the official modules that this package has too: the official ones
# minus libpcp itself (LIBPCP, LIBC) and pyFileToCFile (a C FILE* from libc's fdopen,
# for libpcp calls that take one: none here does)
NAMES_PROGRAM = r'''
import ctypes, sys
import pcp.pmapi, pcp.pmcc
NOT_OFFERED = {"pcp.pmapi": {"LIBPCP", "LIBC", "pyFileToCFile"}, "pcp.pmcc": set()}
for module in (pcp.pmapi, pcp.pmcc):
    for name in sorted(dir(module)):
        if name.startswith("_") or name in NOT_OFFERED[module.__name__]:
            continue
        value = getattr(module, name)
        if isinstance(value, type):
            shown = repr(value)
            if issubclass(value, (ctypes.Structure, ctypes.Union)) and \
                    value not in (ctypes.Structure, ctypes.Union):
                print(module.__name__, name + "*", repr(ctypes.POINTER(value)))
        elif callable(value):
            shown = "callable"
        elif type(value).__name__ == "module":
            shown = "module " + value.__name__
        else:
            shown = type(value).__name__
        print(module.__name__, name, shown)
'''

# the names as the official module has them; the reference's own list must not have
# lost any (a newer PCP): the set printed is the set compared
OFFICIAL_ONLY = ("LIBPCP", "LIBC", "pyFileToCFile")


def test_pmapi_and_pmcc_offer_the_official_names():
    ref = difftest.run_script(NAMES_PROGRAM, [], False)
    assert ref["status"] == 0, ref["stderr"]
    official = {}
    for line in ref["stdout"].splitlines():
        module, name, shown = line.split(" ", 2)
        official[(module, name)] = shown
    probe = NAMES_PROGRAM.replace("sorted(dir(module))", "sorted(%r)" % sorted(
        {name for module, name in official if not name.endswith("*")}))
    ours = difftest.run_script(probe.replace(
        "value = getattr(module, name)",
        "value = getattr(module, name, None)\n"
        "        if value is None and not hasattr(module, name):\n"
        "            print(module.__name__, name, 'MISSING'); continue"), [], True)
    assert ours["status"] == 0, ours["stderr"]
    mine = {}
    for line in ours["stdout"].splitlines():
        module, name, shown = line.split(" ", 2)
        if (module, name) in official:
            mine[(module, name)] = shown
    differences = {key: (official[key], mine.get(key)) for key in official
                   if mine.get(key) != official[key]}
    # Results, value sets and values are lazy Python views here, not ctypes structures
    # (a deliberate difference the README lists): the classes print the same, but
    # there is no ctypes pointer type of them, and pmValueSetPtr is the view's class.
    views = ("pmResult", "pmHighResResult", "pmValueSet", "pmValue", "valueDref")
    expected = {(module, name + "*") for module, name in official
                if name in views and (module, name + "*") in official}
    expected.add(("pcp.pmapi", "pmValueSetPtr"))
    assert set(differences) == expected, differences
    assert differences[("pcp.pmapi", "pmValueSetPtr")] == (
        "<class 'pcp.pmapi.LP_pmValueSet'>", "<class 'pcp.pmapi.pmValueSet'>")
    # the ctypes names scripts reach through the module
    for name in ("c_char", "c_char_p", "c_int", "c_uint", "c_long", "c_double", "c_void_p",
                 "POINTER", "byref", "Structure", "Union", "CDLL", "CFUNCTYPE", "addressof",
                 "cast", "pointer", "sizeof", "c_time_t", "c_suseconds_t"):
        assert ("pcp.pmapi", name) in official
    assert len(official) > 80


def test_the_lazy_names_are_listed_and_resolve():
    code = r'''
from pcp import pmapi
import sys
print("json" in dir(pmapi), "find_library" in dir(pmapi))
print(pmapi.json.dumps({"a": 1}), pmapi.find_library("c") is not None)
print(pmapi.long(3), pmapi.libc_name, pmapi.c_time_t.__name__, pmapi.c_suseconds_t.__name__)
print(pmapi.traverseCB_type.__name__, pmapi.mergeLabelSetsCB_type.__name__)
try:
    pmapi.no_such_name
except AttributeError as error:
    print("AttributeError", error)
'''
    ref, ours = _both(code)
    _assert_same_run(ref, ours)


# the objects the PMAPI hands out, printed as PCP's QA scripts print them (test_pcp.py
# prints pmFetch's and pmParseMetricSpec's results and the arrays of pmLookupName;
# labelsets.py a pmDesc pointer); the fixed part of each line must be the same
OBJECTS_PROGRAM = r'''
import sys
from pcp import pmapi
import cpmapi as c_api
if len(sys.argv) > 1:
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, sys.argv[1])
else:
    ctx = pmapi.pmContext()
names = ("sample.long.one", "sample.bin")
pmids = ctx.pmLookupName(names)
descs = ctx.pmLookupDescs(pmids)
print("pmLookupName", pmids, type(pmids))
print("pmLookupDescs", descs, descs[0], type(descs[0]), descs[0].contents)
print("pmLookupDesc", ctx.pmLookupDesc(pmids[0]))
result = ctx.pmFetch(pmids)
print("pmFetch", result, type(result), type(result.contents))
high = ctx.pmFetchHighRes(pmids)
print("pmFetchHighRes", high, type(high), type(high.contents))
print("timestamp", type(result.contents.timestamp), type(high.contents.timestamp))
print("pmParseMetricSpec", ctx.pmParseMetricSpec("sample.bin[bin-100]", 0, "local:"))
print("pmGetInDom", type(ctx.pmGetInDom(descs[1])))
print("pmUnits", type(descs[0].contents.units), type(pmapi.pmUnits()))
print("pmAtomValue", pmapi.pmAtomValue(), type(ctx.pmExtractValue(
    result.contents.get_valfmt(0), result.contents.get_vlist(0, 0),
    descs[0].contents.type, c_api.PM_TYPE_U32)))
print("timeval", pmapi.timeval, pmapi.timeval(1, 2).__class__, pmapi.timespec(1, 2).__class__)
print("pmLogLabel", pmapi.pmLogLabel(), pmapi.pmHighResLogLabel())
print("pmLabel", type(pmapi.pmLabel()), type(pmapi.pmLabelSet()), pmapi.pmLabelPtr)
try:
    ctx.pmLookupName("no.such.metric")
except pmapi.pmErr as error:
    print("pmErr", type(error), repr(error.__class__))
try:
    raise pmapi.pmUsageErr()
except pmapi.pmUsageErr as error:
    print("pmUsageErr", type(error))
print("valueDref", pmapi.valueDref)
'''


@pytest.mark.pmcd
@pytest.mark.parametrize("source", ["live", "archive"])
def test_objects_print_as_the_official_module(source):
    argv = [] if source == "live" else ["/var/lib/pcp/testsuite/archives/pyapi.0"]
    ref, ours = _both(OBJECTS_PROGRAM, argv)
    _assert_same_run(ref, ours, lambda text: _ADDRESS.sub("0x?", text))
    assert "<pcp.pmapi.LP_pmHighResResult object at" in ref["stdout"]
    assert "<pcp.pmapi.LP_pmDesc object at" in ref["stdout"]


def test_a_traceback_names_pmErr_as_the_official_module():
    code = r'''
from pcp import pmapi
import cpmapi as c_api
pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, "/no/such/archive")
'''
    ref, ours = _both(code)
    assert ref["status"] == ours["status"] == 1
    assert ref["stderr"].splitlines()[-1] == ours["stderr"].splitlines()[-1]
    assert ref["stderr"].splitlines()[-1].startswith("pcp.pmapi.pmErr: ")


# ---------------------------------------------------------------------------
# cpmapi.pmnsTraverse
# ---------------------------------------------------------------------------
TRAVERSE_PROGRAM = r'''
import sys
import cpmapi
from pcp import pmapi
seen = []
def collect(name):
    seen.append(name)
def attempt(*args, **kwargs):
    try:
        status = cpmapi.pmnsTraverse(*args, **kwargs)
        print("status", status, len(seen), seen[:4], seen[-2:])
    except Exception as error:
        print(type(error).__name__, error)
    sys.stdout.flush()
    del seen[:]
attempt("sample.long", collect)                 # no context yet
live = pmapi.pmContext()
attempt("sample.long", collect)
attempt("sample.long.one", collect)
attempt("sample", collect)
attempt("", collect)
attempt("no.such", collect)
attempt("sample.long.one.more", collect)
attempt(name="sample.colour", callback=collect)
attempt("sample.colour", callback=collect)
attempt(b"sample", collect)
attempt(None, collect)
attempt("a\0b", collect)
attempt(3)
attempt("sample", 3)
attempt("sample.long")
attempt()
attempt("sample", collect, 3)
attempt("sample", collect, callback=collect)
attempt(callback=collect)
attempt(nome="sample", callback=collect)
def shouting(name):
    raise ValueError("no " + name)
attempt("sample.long", shouting)
attempt("sample.long", lambda name: 5)
archive = pmapi.pmContext(cpmapi.PM_CONTEXT_ARCHIVE, sys.argv[1])
attempt("sample.long", collect)                 # the current context is the archive now
attempt("", collect)
live.pmTraversePMNS("sample.long", collect)     # pmTraversePMNS makes its context current
attempt("sample.long", collect)
del live, archive
attempt("sample.long", collect)                 # its contexts destroyed
'''


@pytest.mark.pmcd
def test_pmnsTraverse_as_the_official_cpmapi():
    ref, ours = _both(TRAVERSE_PROGRAM, ["/var/lib/pcp/testsuite/archives/pyapi.0"])
    # the callback's traceback: its own frame only, as PyErr_Print shows it
    _assert_same_run(ref, ours)
    assert "ValueError: no sample.long.one" in ref["stderr"]
    assert "status -12347 0" in ref["stdout"]


# ---------------------------------------------------------------------------
# cpmapi.pmSetProcessIdentity (the tests run as root, as CI does: the switch to
# nobody and back is the case libpcp refuses)
# ---------------------------------------------------------------------------
IDENTITY_PROGRAM = r'''
import os, sys
import cpmapi
def attempt(*args, **kwargs):
    try:
        print("status", cpmapi.pmSetProcessIdentity(*args, **kwargs))
    except Exception as error:
        print(type(error).__name__, error)
    print("ids", os.getuid(), os.geteuid(), os.getgid(), os.getgroups())
    sys.stdout.flush()
for args, kwargs in ((), {}), (("root", "x"), {}), ((3,), {}), ((b"root",), {}), \
        ((), {"nam": "root"}), (("root",), {"name": "root"}):
    attempt(*args, **kwargs)
for user in sys.argv[1:]:
    attempt(name=user) if user == "root" else attempt(user)
print("never flushed: exit(1) leaves the stdio buffers")
'''

# libpcp's notice: "[Fri Nov 27 16:28:22] pcp(15492) Critical: ..."
_NOTICE = re.compile(r"^\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8}\] (\S+)\(\d+\) ",
                     re.MULTILINE)


@pytest.mark.parametrize("users", [["root"], ["nosuchuser"], ["nobody", "root"]],
                         ids=["root", "unknown-user", "nobody-then-root"])
def test_pmSetProcessIdentity_as_the_official_cpmapi(users):
    import os
    if os.getuid() != 0:
        pytest.skip("switching users needs root")
    ref, ours = _both(IDENTITY_PROGRAM, users)
    _assert_same_run(ref, ours, lambda text: _NOTICE.sub(r"[TIME] \1(PID) ", text))
    if users != ["root"]:
        assert ref["status"] == 1 and "Critical: " in ref["stderr"]
        assert "never flushed" not in ref["stdout"]


def test_pmParseInterval_error_keeps_the_message_where_the_official_has_a_pointer():
    """The README's deliberate difference: the same code and class, the readable message
    where the official binding's pmErr carries a ctypes pointer to it."""
    code = r'''
from pcp import pmapi
try:
    pmapi.pmContext.pmParseInterval("3 parsecs")
except pmapi.pmErr as error:
    print(type(error).__name__, error.args[0], type(error.args[1]).__name__)
    print(repr(error.args[1]))
    print(str(error))
'''
    ref, ours = _both(code)
    assert ref["status"] == ours["status"] == 0
    ref_lines, our_lines = ref["stdout"].splitlines(), ours["stdout"].splitlines()
    assert ref_lines[0] == "pmErr -1 c_char_p"
    assert our_lines[0] == "pmErr -1 str"
    assert our_lines[1] == repr("3 parsecs\n  ^ -- unexpected value\n")
    assert ours["stdout"].startswith(our_lines[0] + "\n" + our_lines[1] + "\n"
                                     "Operation not permitted 3 parsecs\n  ^ -- unexpected value")
