"""Differential tests: pmStore round trips on the sample PMDA's writable
metrics, done the way a user of the reference binding does it: fetch, poke
the new value into the ctypes pmResult, pmStore() it, fetch to verify,
restore the original value.

The reference and our side run one after the other (never concurrently),
and the writable metrics are reset to the sample PMDA defaults with
pmstore(1) afterwards, in case one side died half-way."""

import shutil
import subprocess

import pytest

from support.difftest import Pair

pytestmark = [pytest.mark.pmcd, pytest.mark.reference,
              # stores into the sample PMDA and its event cycle: one worker runs them
              pytest.mark.xdist_group("pmcd_state")]

DEFAULTS = [("sample.write_me", "2"), ("sample.long.write_me", "13"),
            ("sample.ulong.write_me", "13"), ("sample.longlong.write_me", "13"),
            ("sample.ulonglong.write_me", "13"), ("sample.float.write_me", "13"),
            ("sample.double.write_me", "13"), ("sample.string.write_me", "13")]

SNIPPET = r'''
ctx = pmapi.pmContext()
R = {}

def fetch1(name):
    pm = ctx.pmLookupName(name)
    d = ctx.pmLookupDescs(pm)
    r = ctx.pmFetch(pm)
    t = d[0].contents.type
    c = r.contents
    return r, P.pmExtractValue(c.get_valfmt(0), c.get_vlist(0, 0), t, t).dref(t)

def poke_insitu(r, v):
    # 32-bit values live in the pmValue itself
    r.contents.get_vlist(0, 0).value.lval = v

def poke_block(r, ctype, v):
    # 64-bit / float / double values live in a pmValueBlock after the header
    blk = r.contents.get_vlist(0, 0).value.pval.contents
    memmove(addressof(blk) + 4, byref(ctype(v)), sizeof(ctype))

KEEP = []
def poke_string(r, s):
    # strings need a new, larger pmValueBlock
    raw = s.encode("utf-8")
    buf = ctypes.create_string_buffer(4 + len(raw) + 1)
    blk = cast(buf, POINTER(pmapi.pmValueBlock))
    blk.contents.vlen = 4 + len(raw) + 1
    blk.contents.vtype = c_api.PM_TYPE_STRING
    memmove(addressof(buf) + 4, raw, len(raw))
    KEEP.append(buf)
    r.contents.get_vlist(0, 0).value.pval = blk

def round_trip(name, poke, new):
    out = {}
    r, orig = fetch1(name)
    out["original"] = jsonable(orig)
    try:
        poke(r, new)
        ret = ctx.pmStore(r)
        out["store_returns"] = tname(ret)
        out["store_returns_same_object"] = ret is r
        out["after_store"] = jsonable(fetch1(name)[1])
    except Exception as e:
        out["store_error"] = err_info(e)
    finally:
        r2, _ = fetch1(name)
        poke(r2, orig)
        ctx.pmStore(r2)
        out["restored"] = jsonable(fetch1(name)[1])
    return out

I32 = lambda v: v - (1 << 32) if v >= (1 << 31) else v
R["write_me_32"] = catch(round_trip, "sample.write_me", poke_insitu, 42)
def alias_store():
    # store through one name, read through another name of the same pmid
    r, orig = fetch1("sample.dupnames.two.write_me")
    poke_insitu(r, 7)
    ctx.pmStore(r)
    seen = fetch1("sample.write_me")[1]
    poke_insitu(r, orig)
    ctx.pmStore(r)
    return {"seen": seen, "restored": fetch1("sample.write_me")[1]}
R["alias_sees_store"] = catch(alias_store)
R["long_write_me"] = catch(round_trip, "sample.long.write_me", poke_insitu, -123456)
R["ulong_write_me"] = catch(round_trip, "sample.ulong.write_me",
                            lambda r, v: poke_insitu(r, I32(v)), 4000000000)
R["longlong_write_me"] = catch(round_trip, "sample.longlong.write_me",
                               lambda r, v: poke_block(r, ctypes.c_int64, v), -5000000000)
R["ulonglong_write_me"] = catch(round_trip, "sample.ulonglong.write_me",
                                lambda r, v: poke_block(r, ctypes.c_uint64, v), (1 << 63) + 5)
R["float_write_me"] = catch(round_trip, "sample.float.write_me",
                            lambda r, v: poke_block(r, ctypes.c_float, v), 2.5)
R["double_write_me"] = catch(round_trip, "sample.double.write_me",
                             lambda r, v: poke_block(r, ctypes.c_double, v), -1.25e-3)
R["string_write_me"] = catch(round_trip, "sample.string.write_me", poke_string, "hello store")

def store_readonly(name, newval=None):
    r, _ = fetch1(name)
    if newval is not None:
        poke_insitu(r, newval)
    return ctx.pmStore(r)
R["store_readonly_unchanged"] = catch(store_readonly, "sample.long.one")
R["store_readonly_changed"] = catch(store_readonly, "sample.long.one", 5)
R["store_readonly_linux"] = catch(store_readonly, "hinv.ncpu")
R["store_same_value_aggregate"] = catch(lambda: tname(store_readonly("sample.aggregate.write_me")))

def store_multi():
    pm = ctx.pmLookupName(["sample.write_me", "sample.long.write_me"])
    r = ctx.pmFetch(pm)
    r.contents.get_vlist(0, 0).value.lval = 11
    r.contents.get_vlist(1, 0).value.lval = 12
    ctx.pmStore(r)
    after = [v for v in (fetch1("sample.write_me")[1], fetch1("sample.long.write_me")[1])]
    r.contents.get_vlist(0, 0).value.lval = 2
    r.contents.get_vlist(1, 0).value.lval = 13
    ctx.pmStore(r)
    return after
R["store_two_metrics_at_once"] = catch(store_multi)

def store_highres():
    pm = ctx.pmLookupName("sample.write_me")
    r = ctx.pmFetchHighRes(pm)
    r.contents.get_vlist(0, 0).value.lval = 99
    ret = ctx.pmStoreHighRes(r)
    v = fetch1("sample.write_me")[1]
    r.contents.get_vlist(0, 0).value.lval = 2
    ctx.pmStoreHighRes(r)
    return {"after": v, "ret": tname(ret), "restored": fetch1("sample.write_me")[1]}
R["store_highres"] = catch(store_highres)
RESULT = R
'''


def _reset_defaults():
    pmstore = shutil.which("pmstore")
    if not pmstore:
        return
    for name, value in DEFAULTS:
        subprocess.run([pmstore, name, value], capture_output=True, timeout=30)


@pytest.fixture(scope="module")
def pair(pmcd, reference_binding):
    _reset_defaults()
    try:
        yield Pair(SNIPPET, parallel=False)
    finally:
        _reset_defaults()


def test_store_32bit_insitu_round_trip(pair):
    ref = pair.check("write_me_32")
    assert ref["after_store"] == 42 and ref["restored"] == ref["original"]


def test_store_through_alias_name(pair):
    pair.check("alias_sees_store")


def test_store_negative_32bit(pair):
    pair.check("long_write_me")


def test_store_unsigned_32bit(pair):
    assert pair.check("ulong_write_me")["after_store"] == 4000000000


def test_store_64bit_value_block(pair):
    assert pair.check("longlong_write_me")["after_store"] == -5000000000


def test_store_unsigned_64bit_value_block(pair):
    assert pair.check("ulonglong_write_me")["after_store"] == (1 << 63) + 5


def test_store_float_value_block(pair):
    assert pair.check("float_write_me")["after_store"] == 2.5


def test_store_double_value_block(pair):
    pair.check("double_write_me")


def test_store_string_new_value_block(pair):
    assert pair.check("string_write_me")["after_store"] == "hello store"


def test_store_returns_the_result(pair):
    ref = pair.check("write_me_32")
    assert ref["store_returns"] == "LP_pmResult" and ref["store_returns_same_object"]


def test_store_readonly_metric_permission_error(pair):
    pair.check("store_readonly_unchanged")
    pair.check("store_readonly_changed")


def test_store_readonly_linux_metric(pair):
    pair.check("store_readonly_linux")


def test_store_aggregate_unchanged(pair):
    pair.check("store_same_value_aggregate")


def test_store_two_metrics_in_one_result(pair):
    pair.check("store_two_metrics_at_once")


def test_store_highres(pair):
    pair.check("store_highres")
