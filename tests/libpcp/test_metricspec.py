"""pmParseMetricSpec against libpcp 6.0.3, asked through the official binding's ctypes
handle: the source kind, source, metric and instance names of each specification, or the
error code and message (caret position included) of each bad one.

The official binding declares the instance names as a pointer (`inst`), where libpcp's
struct holds them in place (`char *inst[1]`, grown to ninst): reading
`spec.contents.inst[i]` there takes the bytes of the first name for pointers and crashes
the interpreter (most specs with an instance list, after a few calls). The probe reads
the names where libpcp puts them; pcp-native's `inst` is a real pointer to the names."""
from __future__ import annotations

import pytest

from pcp import pmapi

from support.difftest import require_reference, run_reference

SPECS = [
    "kernel.all.load", "  kernel.all.load  ", "myhost:kernel.all.load", "@:sample.long.one",
    "/var/log/pcp/x/20261121/disk.dev.read", "archive/disk.dev.read[sda]",
    'kernel.all.load["1 minute", "5 minute"]', "kernel.all.load[1,5, 15]",
    "sample.colour[red green,blue]", 'h:m["a \\"quoted\\" name"]', "h : m [ a ]",
    "a\\:b:metric", "metric\\[x", "x.y[]", "x.y[ ]", "host:port:metric", "a/b:c",
    "a:b/c", 'm["x,y", z]', "m[a\\]b]", "m[a\\,b]", "h:@", "local:sample.long.ten",
    "pcp://host:44321/x:metric",
    # refused
    "", "   ", ":metric", "/metric", " : metric", "metric[", "metric[a", 'metric["a]',
    "metric]x", "metric,x", "a b", "metric[a] junk", "host:", "host: [a]", "m[a]]",
]

PROBE = r'''
import ctypes, json
from ctypes import POINTER, byref, c_char_p
from pcp import pmapi
out = {}
for s in %r:
    result = POINTER(pmapi.pmMetricSpec)()
    err = c_char_p()
    sts = pmapi.LIBPCP.pmParseMetricSpec(s.encode(), %d, b"deflt", byref(result), byref(err))
    if sts < 0:
        out[s] = [sts, err.value.decode("utf-8", "surrogateescape")]
    else:
        c = result.contents
        names = ctypes.cast(ctypes.addressof(c) + pmapi.pmMetricSpec.inst.offset,
                            POINTER(c_char_p))         # libpcp's in-place array
        out[s] = [sts, c.isarch, (c.source or b"").decode(), c.metric.decode(),
                  [names[i].decode() for i in range(c.ninst)]]
print(json.dumps(out))
'''


def _ours(spec: str, isarch: int):
    try:
        result, msg = pmapi.pmContext.pmParseMetricSpec(spec, isarch, "deflt")
    except pmapi.pmErr as e:
        return [e.args[0], e.args[1]]
    assert msg == ""
    c = result.contents
    return [0, c.isarch, (c.source or b"").decode(), c.metric.decode(),
            [c.inst[i].decode() for i in range(c.ninst)]]


@pytest.mark.reference
@pytest.mark.parametrize("isarch", [0, 1])
def test_metric_specs_as_libpcp_parses_them(isarch):
    require_reference()
    ref = run_reference(PROBE % (SPECS, isarch))
    for spec in SPECS:
        assert _ours(spec, isarch) == ref[spec], spec
    assert sum(1 for v in ref.values() if v[0] < 0) >= 12


def test_the_spec_object_keeps_its_strings():
    result = pmapi.pmMetricSpec.fromString(b'h:m["one", two]')
    spec = result.contents
    assert (spec.isarch, spec.source, spec.metric, spec.ninst) == (0, b"h", b"m", 2)
    assert [spec.inst[0], spec.inst[1]] == [b"one", b"two"]
    assert "src=0 metric=b'h'" in str(spec) or "src=0" in str(spec)


@pytest.mark.reference
def test_the_official_inst_field_is_broken_ours_is_not():
    """The same program on both sides: read the instance names of a parsed spec through
    `inst` many times. The official binding crashes or reads garbage; pcp-native gives
    the names."""
    require_reference()
    from support.difftest import run_program
    program = r'''
import json
from pcp import pmapi
names = None
for _ in range(300):
    spec = pmapi.pmMetricSpec.fromString('m["one", two,three]').contents
    names = [spec.inst[i].decode("latin-1") for i in range(spec.ninst)]
print(json.dumps(names))
'''
    ours = run_program(program, True)
    ref = run_program(program, False)
    assert ours == ["one", "two", "three"]
    assert ref != ours       # a crash ({"__crash__": ...}) or garbage
