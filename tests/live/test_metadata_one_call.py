"""Differential tests of the metadata calls' fast paths (issue 34): pmLookupName,
pmNameID/pmNameAll, pmGetChildren(Status), pmLookupText, pmLookupDesc(s) and pmGetInDom
go to pmcd in one C call each (csrc/exchange.c's pcp_exchange_*), and pcp.pmapi asks
the wrapped context directly where the derived-metric layer would only pass the call
on. The edges of those paths, against the official binding: unknown names, known and
unknown mixed, derived names among real ones, replies larger than the arrays the one
call starts with (decoded by the general decoder, then in one call), ERROR replies,
calls after the context is destroyed, and several threads on one context."""

import pytest

from support.difftest import Pair

pytestmark = [pytest.mark.pmcd, pytest.mark.reference]

SNIPPET = r'''
import threading

ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, "local:")
R = {}

def ids(x):
    return [int(i) for i in x]

def names_of(pmids):
    return [catch(ctx.pmNameID, p) for p in pmids]

# ---- names, before any derived metric of the test's own is registered
R["unknown_single"] = catch(ctx.pmLookupName, "sample.no.such")
R["unknown_many"] = catch(ctx.pmLookupName, ["sample.no.such", "no.such.tree"])
R["mixed"] = catch(ctx.pmLookupName, ["sample.long.one", "sample.no.such", "hinv.ncpu"])
R["mixed_relaxed"] = catch(lambda: ids(ctx.pmLookupName(
    ["sample.long.one", "sample.no.such", "hinv.ncpu"], 1)))
R["nonleaf_single"] = catch(ctx.pmLookupName, "sample.long")
R["anon_and_real"] = catch(lambda: ids(ctx.pmLookupName(["event.flags", "sample.long.one"])))
many = ["sample.long.one", "sample.long.ten", "sample.colour", "sample.bin",
        "sample.string.hullo", "hinv.ncpu", "kernel.all.load"] * 20
R["many"] = catch(lambda: ids(ctx.pmLookupName(many)))
R["name_id_unknown_pmid"] = catch(ctx.pmNameID, 12345)
R["name_all_dupnames"] = catch(ctx.pmNameAll, ctx.pmLookupName("sample.dupnames.daemon_pid")[0])
R["name_id_anon"] = catch(ctx.pmNameID, ctx.pmLookupName("event.missed")[0])

# ---- derived metrics registered by the program: the derived layer's answers
ctx.pmRegisterDerived("lookupfast.sum", "sample.long.one + sample.long.ten")
ctx.pmRegisterDerived("lookupfast.sub.double", "2 * sample.long.ten")
ctx.pmRegisterDerived("lookupfast.bad", "sample.no.such + 1")
both = ["sample.long.one", "lookupfast.sum", "sample.no.such", "lookupfast.sub.double"]
R["derived_single"] = catch(lambda: ids(ctx.pmLookupName("lookupfast.sum")))
R["derived_mixed"] = catch(ctx.pmLookupName, both)
R["derived_mixed_relaxed"] = catch(lambda: ids(ctx.pmLookupName(both, 1)))
dpmids = ctx.pmLookupName(["lookupfast.sum", "lookupfast.sub.double", "lookupfast.bad"], 1)
R["derived_names"] = names_of(dpmids)
R["derived_name_all"] = [catch(ctx.pmNameAll, p) for p in dpmids]
R["derived_desc_single"] = [catch(lambda p=p: [
    (d.contents.type, d.contents.sem, d.contents.indom)
    for d in ctx.pmLookupDescs([p])]) for p in dpmids]
R["derived_text"] = [catch(ctx.pmLookupText, p) for p in dpmids]
R["derived_children"] = catch(ctx.pmGetChildren, "lookupfast")
R["derived_children_status"] = catch(ctx.pmGetChildrenStatus, "lookupfast")
R["derived_leaf_children"] = catch(ctx.pmGetChildren, "lookupfast.sum")

# ---- children: leaf, unknown, a large node (more names than the one call starts with)
R["children_leaf"] = catch(ctx.pmGetChildren, "sample.long.one")
R["children_unknown"] = catch(ctx.pmGetChildren, "sample.no.such")
R["children_root"] = catch(ctx.pmGetChildren, "")
R["children_sample_twice"] = [catch(ctx.pmGetChildrenStatus, "sample") for _ in range(2)]
R["children_event"] = catch(ctx.pmGetChildren, "event")

# ---- text: one line, help, unknown pmid, an instance domain's
one = ctx.pmLookupName("sample.long.one")[0]
R["text"] = [catch(ctx.pmLookupText, one, k) for k in (c_api.PM_TEXT_ONELINE, c_api.PM_TEXT_HELP)]
R["text_unknown"] = catch(ctx.pmLookupText, 12345)
R["text_anon"] = catch(ctx.pmLookupText, ctx.pmLookupName("event.flags")[0])

# ---- descriptors: one at a time, unknown, several
R["desc_unknown"] = catch(lambda: [d.contents.type for d in ctx.pmLookupDescs([12345])])
R["desc_one"] = catch(lambda: [(d.contents.pmid, d.contents.type, d.contents.sem)
                               for d in ctx.pmLookupDescs([one])])

# ---- instance domains: small, large twice (500 instances), none, a bad one, by name/id
def indom_of(name):
    return ctx.pmLookupDescs(ctx.pmLookupName(name))[0]
R["indom_colour"] = catch(ctx.pmGetInDom, indom_of("sample.colour"))
R["indom_hordes_twice"] = [catch(lambda: [len(x) if x else x for x in
                                          ctx.pmGetInDom(indom_of("sample.hordes.one"))])
                           for _ in range(2)]
R["indom_hordes_names"] = catch(lambda: ctx.pmGetInDom(indom_of("sample.hordes.one"))[1][-3:])
R["indom_dynamic_empty"] = catch(ctx.pmGetInDom, indom_of("sample.dynamic.counter"))
R["indom_bad"] = catch(ctx.pmGetInDom, None, 0x1d00ffff)
R["indom_lookup"] = catch(ctx.pmLookupInDom, indom_of("sample.bin"), "bin-300")
R["indom_lookup_unknown"] = catch(ctx.pmLookupInDom, indom_of("sample.bin"), "bin-301")
R["indom_name"] = catch(ctx.pmNameInDom, indom_of("sample.bin"), 700)

# ---- after the context is destroyed: another context still answers
other = pmapi.pmContext(c_api.PM_CONTEXT_HOST, "local:")
other_one = other.pmLookupName("sample.long.one")[0]
other.__del__()
R["after_destroy"] = [catch(other.pmLookupName, "sample.long.one"),
                      catch(other.pmNameID, other_one),
                      catch(other.pmLookupText, other_one),
                      catch(other.pmGetChildren, "sample.long")]
R["still_answers"] = [catch(lambda: ids(ctx.pmLookupName("sample.long.one"))),
                      catch(ctx.pmNameID, one)]

# ---- several threads on one context: every answer as the single-threaded one
expected = (ids(ctx.pmLookupName(["sample.long.one", "hinv.ncpu"])), ctx.pmNameID(one),
            ctx.pmGetChildren("sample.long"), ctx.pmLookupText(one),
            ctx.pmGetInDom(indom_of("sample.colour")))
wrong = []
def worker():
    for _ in range(50):
        got = (ids(ctx.pmLookupName(["sample.long.one", "hinv.ncpu"])), ctx.pmNameID(one),
               ctx.pmGetChildren("sample.long"), ctx.pmLookupText(one),
               ctx.pmGetInDom(indom_of("sample.colour")))
        if got != expected:
            wrong.append(repr(got))
threads = [threading.Thread(target=worker) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
R["threads"] = {"wrong": wrong[:3], "expected": jsonable(expected)}

RESULT = R
'''


@pytest.fixture(scope="module")
def pair():
    return Pair(SNIPPET)


SECTIONS = ["unknown_single", "unknown_many", "mixed", "mixed_relaxed", "nonleaf_single",
            "anon_and_real", "many", "name_id_unknown_pmid", "name_all_dupnames",
            "name_id_anon", "derived_single", "derived_mixed", "derived_mixed_relaxed",
            "derived_names", "derived_name_all", "derived_desc_single", "derived_text",
            "derived_children", "derived_children_status", "derived_leaf_children",
            "children_leaf", "children_unknown", "children_root", "children_sample_twice",
            "children_event", "text", "text_unknown", "text_anon", "desc_unknown", "desc_one",
            "indom_colour", "indom_hordes_twice", "indom_hordes_names", "indom_dynamic_empty",
            "indom_bad", "indom_lookup", "indom_lookup_unknown", "indom_name",
            "after_destroy", "still_answers", "threads"]


@pytest.mark.parametrize("section", SECTIONS)
def test_metadata_call(pair, section):
    pair.check(section)


def test_the_edges_are_exercised(pair):
    """The cases reach what they are meant to: errors where expected, the large node and
    domain larger than the one call's first arrays (64), the derived names resolved."""
    ref = pair.ref
    assert ref["unknown_single"]["error"] == -12357         # PM_ERR_NAME
    assert ref["indom_hordes_twice"][0] == [500, 500]
    # the one call sizes its arrays by the reply's bytes ((length - 24) / 4 names at
    # most): 63 children take several times 64
    assert len(ref["children_sample_twice"][0]["__tuple__"][0]) > 60
    assert ref["derived_mixed_relaxed"][1] != ref["derived_mixed_relaxed"][2]
    assert ref["threads"]["wrong"] == []
    assert "error" in ref["after_destroy"][0]
