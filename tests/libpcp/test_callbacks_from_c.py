"""Python callbacks that the official binding calls from C, and what an exception in one
does there, compared with the official binding as a whole program's output: its stdout
(the answers) and its stderr (the tracebacks), run once on each side.

The official binding calls back into Python from C in four places of the client API:
pmTraversePMNS (through cpmapi.pmnsTraverse, whose C walk calls PyErr_Print on a
callback's exception and goes on), cpmapi.pmnsTraverse itself, the option and override
callbacks of pmGetOptionsFromList (PyErr_Print; the override's answer becomes -EAGAIN)
and pmMergeLabelSets's filter (a ctypes CFUNCTYPE callback: ctypes reports the exception
through sys.unraisablehook, and the label is kept). The PMDA side's callbacks (cpmda)
are compared in tests/pmda."""
import re

import pytest

from support.difftest import require_reference, run_script
from support.labelsets import LABELSETS

pytestmark = pytest.mark.reference

PROGRAM = r'''
import json, sys
from ctypes import POINTER, cast
from pcp import pmapi
import cpmapi as c_api

P = pmapi.pmContext
out = {}

def section(name):
    sys.stdout.flush()
    sys.stderr.write("-- %s\n" % name)
    sys.stderr.flush()

ctx = P(c_api.PM_CONTEXT_ARCHIVE, "/var/lib/pcp/testsuite/archives/20041125")

section("traverse: raising on the 2nd and 5th name")
seen = []
def walk(name):
    seen.append(name)
    if len(seen) in (2, 5):
        raise ValueError("callback failed on %s" % name)
out["traverse"] = [ctx.pmTraversePMNS("", walk), len(seen), seen]
out["last_type"] = sys.last_type.__name__
out["last_value"] = str(sys.last_value)

section("traverse: KeyboardInterrupt and pmErr, from a nested call")
kernel = []
def lookup(name):
    kernel.append(name)
    if len(kernel) == 1:
        raise KeyboardInterrupt("stop")
    if len(kernel) == 3:
        ctx.pmLookupName(["no.such.metric"])
out["traverse_kernel"] = [ctx.pmTraversePMNS("kernel", lookup), len(kernel)]

section("traverse: unknown name, no callback call")
try:
    ctx.pmTraversePMNS("no.such", walk)
except pmapi.pmErr as e:
    out["traverse_unknown"] = e.args[0]

section("cpmapi.pmnsTraverse")
calls = []
def direct(name):
    calls.append(name)
    raise RuntimeError("direct %d" % len(calls))
out["pmnsTraverse"] = [c_api.pmnsTraverse("swap", direct), calls]

section("option callbacks")
opts = pmapi.pmOptions("a:x:y")
def option(opt, optarg, index):
    raise ValueError("option %s %s" % (opt, optarg))
def override(opt):
    if opt == "y":
        raise LookupError("override %s" % opt)
    return 0
opts.pmSetOptionCallback(option)
opts.pmSetOverrideCallback(override)
out["options"] = c_api.pmGetOptionsFromList(["prog", "-x", "1", "-y"])

section("pmMergeLabelSets filters")
''' + LABELSETS + r'''count = [0]
def raising(label, text, arg):
    count[0] += 1
    if count[0] == 1:
        raise ValueError("filter failed")
    return 1
def dropping_c(label, text, arg):
    return 0 if label.contents.name == 8 else 1
filters = [("raise", raising), ("none", lambda l, t, a: None),
           ("float", lambda l, t, a: 1.5), ("bool", lambda l, t, a: True),
           ("wraps to 0", lambda l, t, a: 1 << 40), ("wraps to 1", lambda l, t, a: (1 << 40) + 1),
           ("drop one", dropping_c)]
for key, func in filters:
    section("filter " + key)
    out["merge " + key] = P.pmMergeLabelSets([a, b], func)
print(json.dumps(out))
'''

_ADDRESS = re.compile(r"0x[0-9a-f]+")
_SCRIPT = re.compile(r'File "[^"]*/tool\.py"')


def normalized(stderr):
    """The tracebacks with the program's own frames kept and the binding's frames (its
    files and lines differ between the two) dropped; addresses hidden."""
    out = []
    skipping = False
    for line in stderr.splitlines():
        if line.startswith('  File "'):
            skipping = not line.endswith(("in <module>", "in walk", "in lookup",
                                          "in direct", "in option", "in override",
                                          "in raising")) or "/tool.py" not in line
            if skipping:
                out.append("  <a frame of the binding>")
                continue
        elif skipping and line.startswith("    "):
            continue
        else:
            skipping = False
        out.append(_ADDRESS.sub("0xADDR", _SCRIPT.sub('File "tool.py"', line)))
    return out


@pytest.fixture(scope="module")
def runs():
    require_reference()
    return run_script(PROGRAM, [], ours=False), run_script(PROGRAM, [], ours=True)


def test_answers_as_the_official_binding(runs):
    ref, ours = runs
    assert ref["status"] == 0, ref["stderr"]
    assert ours["status"] == ref["status"], ours["stderr"]
    assert ours["stdout"] == ref["stdout"]


def test_tracebacks_as_the_official_binding(runs):
    ref, ours = runs
    assert normalized(ours["stderr"]) == normalized(ref["stderr"])


def test_traverse_goes_on_after_two_failures(runs):
    """The pcp2pdf case: two tracebacks, every name of the archive visited."""
    ref, ours = runs
    for side in (ref, ours):
        first = side["stderr"].split("-- traverse: KeyboardInterrupt")[0]
        assert first.count("Traceback (most recent call last):") == 2
        assert "ValueError: callback failed on" in first
    assert '"traverse": [null, 251,' in ours["stdout"]
