"""pcp.mmv.Registry against libpcp_mmv's own registry API (mmv_stats_registry,
mmv_stats_add_*, mmv_stats_start, called through ctypes under the reference Python):
version 2 files (long names through the string section) and version 3 (labels), byte for
byte; the same refusals (errno); and the Pythonic metric objects."""
from __future__ import annotations

import os

import pytest

from support.mmvdiff import REGISTRY_ADAPTER as ADAPTER, run_both
from support import difftest

pytestmark = pytest.mark.reference


@pytest.mark.parametrize("case", ["long_metric", "long_instance", "short", "labels"])
def test_registry_files_match_libpcp_mmv(case):
    ours, ref = run_both(ADAPTER + r'''
CASE = %r
reg = REG(PATH, 77, cmmv.MMV_FLAG_NOPREFIX)
reg.add_indom(5, "five", "the indom five")
reg.add_indom(6, None, "six")
reg.add_instance(5, 1, "one")
reg.add_instance(5, 2, "i" * 70 if CASE == "long_instance" else "two")
reg.add_instance(6, 9, "nine")
reg.add_metric("m" * 100 if CASE == "long_metric" else "counter", 1, cmmv.MMV_TYPE_U64,
               cmmv.MMV_SEM_COUNTER, U(0, 0, 1, 0, 0, 0), 5, "a counter", "a long help")
reg.add_metric("text", 2, cmmv.MMV_TYPE_STRING, cmmv.MMV_SEM_DISCRETE, U(), 6, None, None)
reg.add_metric("plain", 3, cmmv.MMV_TYPE_DOUBLE, cmmv.MMV_SEM_INSTANT, U(1, -1, 0, 2, 3, 0),
               0, "x" * 300, None)
if CASE == "labels":
    reg.add_registry_label("app", '"acme"', cmmv.MMV_STRING_TYPE, 0)
    reg.add_indom_label(5, "kind", "42", cmmv.MMV_NUMBER_TYPE, 1)
    reg.add_metric_label(1, "flag", "true", cmmv.MMV_BOOLEAN_TYPE, 0)
    reg.add_metric_label(2, "nothing", "ignored", cmmv.MMV_NULL_TYPE, 0)
    reg.add_instance_label(5, 2, "tags", '["a","b"]', cmmv.MMV_ARRAY_TYPE, 0)
    reg.add_instance_label(6, 9, "where", '{"rack":1}', cmmv.MMV_MAP_TYPE, 1)
reg.start()
RESULT["file"] = snap_labels()
''' % case)
    difftest.assert_equal(ours, ref)
    assert len(ref["file"]) > 1000


def test_registry_refusals_match_libpcp_mmv():
    ours, ref = run_both(ADAPTER + r'''
def started(build):
    reg = REG(PATH)
    build(reg)
    return errno_of(reg.start)

def instance(name):
    def build(reg):
        reg.add_indom(5)
        reg.add_instance(5, 1, name)
        reg.add_metric("m", 1, 3, 1, U(), 5)
    return build

RESULT["start"] = [
    started(instance("")), started(instance("n" * 256)), started(instance("n" * 255)),
    started(lambda reg: reg.add_metric("m" * 256, 1, 3, 1, U())),
    started(lambda reg: reg.add_metric("", 1, 3, 1, U())),
    started(lambda reg: reg.add_metric("m", 1, 10, 1, U())),
    started(lambda reg: reg.add_metric("m", 1, 3, 1, U(), 9)),
    started(lambda reg: reg.add_indom(0)),
    started(lambda reg: (reg.add_indom(5, "s" * 256), reg.add_metric("m", 1, 3, 1, U()))),
]
reg = REG(PATH)
reg.add_indom(5)
RESULT["labels"] = [
    errno_of(reg.add_registry_label, "1abc", '"x"', cmmv.MMV_STRING_TYPE, 0),
    errno_of(reg.add_registry_label, "a-b", '"x"', cmmv.MMV_STRING_TYPE, 0),
    errno_of(reg.add_registry_label, "ab", "x", cmmv.MMV_STRING_TYPE, 0),
    errno_of(reg.add_registry_label, "ab", "yes", cmmv.MMV_BOOLEAN_TYPE, 0),
    errno_of(reg.add_registry_label, "ab", "1x", cmmv.MMV_NUMBER_TYPE, 0),
    errno_of(reg.add_registry_label, "ab", "[1", cmmv.MMV_ARRAY_TYPE, 0),
    errno_of(reg.add_registry_label, "ab", "{1}", cmmv.MMV_MAP_TYPE, 0),
    errno_of(reg.add_registry_label, "ab", '"' + "v" * 240 + '"', cmmv.MMV_STRING_TYPE, 0),
    errno_of(reg.add_registry_label, "ab", '"ok"', 99, 0),
    errno_of(reg.add_registry_label, "ab", "-1.5e3", cmmv.MMV_NUMBER_TYPE, 0),
]
''')
    difftest.assert_equal(ours, ref)


def test_metric_objects(tmp_path):
    """The Pythonic layer on its own: objects bound to their values, the file's bytes
    where they live, the timing context manager, restart and stop."""
    from pcp import mmv
    from pcp._core.constants import MMV_TYPE_I32

    path = str(tmp_path / "app")
    reg = mmv.Registry(path, cluster=3)
    requests = reg.counter("requests", "Requests served\nEvery request, any outcome.")
    errors = reg.counter("errors", "Errors", instances=["client", "server"])
    latency = reg.timer("latency", "Time in handlers")
    depth = reg.gauge("queue.depth", "Queue depth", units="count")
    small = reg.gauge("small", "", type=MMV_TYPE_I32)
    state = reg.text("state", "State", labels={"role": "main", "shard": 3})
    wide = reg.counter("w" * 80, "a long name")
    reg.label("service", "web")
    requests.inc()          # not started yet: ignored
    with reg:
        assert reg.path == path and os.path.exists(path)
        requests.inc()
        requests.inc(41)
        errors["server"].inc(2)
        depth.set(7)
        depth.dec(2.5)
        small.set(2 ** 31 - 1)
        small.inc()
        state.set("serving")
        with pytest.raises(ValueError):
            state.set("x" * 255)
        wide.inc(2 ** 64 + 5)           # wraps as the 64-bit counter does
        with latency.time():
            sum(range(1000))
        latency.add(0.25)
        assert requests.value == 42
        assert errors["server"].value == 2 and errors["client"].value == 0
        assert depth.value == 4.5
        assert small.value == -2 ** 31
        assert state.value == "serving"
        assert wide.value == 5
        assert 250000 <= latency.value < 10 ** 7
        data = open(path, "rb").read()
        assert data[:4] == b"MMV\0" and data[4] == 3        # labels: version 3
        assert b"Every request, any outcome." in data and b"w" * 80 in data
        assert b'{"role":"main"}' in data and b'{"service":"web"}' in data
    assert requests.value is None
    requests.inc()                  # stopped: ignored
    reg.start()                     # a restart starts from zero
    assert requests.value == 0
    reg.stop()
    bad = mmv.Registry(path)
    bad.counter("")
    with pytest.raises(OSError):
        bad.start()
    with pytest.raises(ValueError):
        mmv.Registry(path).counter("x", labels={"1bad": 1})
    # a mapping of the official API converts to a real ctypes pointer where one is wanted
    import ctypes
    from pcp.pmapi import pmAtomValue
    values = mmv.MemoryMappedValues(path)
    values.add_metrics([mmv.mmv_metric("hits", 1, 3, 1, None)])
    values.start()
    hits = values.lookup_mapping("hits", None)
    values.set(hits, 77)
    assert ctypes.cast(hits, ctypes.POINTER(pmAtomValue)).contents.ull == 77
    assert not values.lookup_mapping("nothing", None)
    values.stop()
    with pytest.raises(ValueError):
        hits.contents
    with pytest.raises(ValueError):         # no domain 6 (libpcp_mmv: EINVAL)
        mmv.Registry(path).add_instance(6, 1, "x")
