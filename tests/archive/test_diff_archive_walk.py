"""Differential tests on every archive variant of the corpus (tests/archives.py):
archive label (pmGetArchiveLabel / pmGetHighResArchiveLabel), archive end
(pmGetArchiveEnd / pmGetHighResArchiveEnd), and complete walks with
pmFetchArchive / pmFetchHighResArchive forwards to PM_ERR_EOL and backwards
from the end, comparing every record field by field (timestamp, numpmid,
pmids, numval, valfmt, instances, value blocks, pmExtractValue of every value,
mark records, synthetic marks and PM_ERR_LOGOVERLAP between archives)."""

import pytest

from support import archives
from support.archsnip import PairCache, check, snippet
from support.difftest import Pair

# the first test builds every variant's pair on both sides (PairCache's prebuild)
pytestmark = [pytest.mark.pmcd, pytest.mark.reference, pytest.mark.timeout(900)]

VARIANTS = archives.SINGLE + archives.MULTI

BODY = r'''
R = {}
ctx = actx(ARCH)
R["label"] = catch(lambda: label_image(ctx.pmGetArchiveLabel(), False))
R["label_highres"] = catch(lambda: label_image(ctx.pmGetHighResArchiveLabel(), True))
R["end"] = catch(lambda: ts_pair(ctx.pmGetArchiveEnd(), False))
R["end_highres"] = catch(lambda: ts_pair(ctx.pmGetHighResArchiveEnd(), True))
R["end_types"] = catch(lambda: [tname(ctx.pmGetArchiveEnd()), tname(ctx.pmGetHighResArchiveEnd())])

# label / end lookups do not move the read position
def position_kept():
    c = actx(ARCH)
    out = [rec_brief(c.pmFetchArchive()), rec_brief(c.pmFetchArchive())]
    out.append(catch(lambda: ts_pair(c.pmGetArchiveEnd(), False)))
    out.append(catch(lambda: label_image(c.pmGetArchiveLabel(), False)["start"]))
    out.append(catch(lambda: ts_pair(c.pmGetHighResArchiveEnd(), True)))
    out.append(rec_brief(c.pmFetchArchive()))
    return out
R["position_kept"] = catch(position_kept)

def result_types():
    c = actx(ARCH)
    r = c.pmFetchArchive()
    h = c.pmFetchHighResArchive()
    return {"result": tname(r), "contents": tname(r.contents),
            "timestamp": tname(r.contents.timestamp), "numpmid": tname(r.contents.numpmid),
            "highres": tname(h), "highres_contents": tname(h.contents),
            "highres_timestamp": tname(h.contents.timestamp),
            "free": catch(P.pmFreeResult, r), "free_highres": catch(P.pmFreeHighResResult, h)}
R["result_types"] = catch(result_types)

R["forw"] = walk(ctx)
R["forw_after_eol"] = [catch(lambda: rec_brief(ctx.pmFetchArchive())) for i in range(2)]
R["set_back"] = catch(set_back_at_end, ctx)
R["back"] = walk(ctx)
R["back_after_eol"] = [catch(lambda: rec_brief(ctx.pmFetchArchive())) for i in range(2)]

ctx2 = actx(ARCH)
R["forw_highres"] = walk(ctx2, highres=True)
R["set_back_highres"] = catch(set_back_at_end, ctx2, True)
R["back_highres"] = walk(ctx2, highres=True, brief=True)
R["label_after_walks"] = catch(lambda: label_image(ctx2.pmGetHighResArchiveLabel(), True))
R["end_after_walks"] = catch(lambda: ts_pair(ctx2.pmGetHighResArchiveEnd(), True))

# raw bytes of the event-array value blocks (PM_TYPE_EVENT/HIGHRES_EVENT):
# libpcp hands them out converted to host byte order, field by field
def event_blobs():
    c = actx(ARCH)
    out = []
    for rec in walk(c, event_blobs=True):
        if "vsets" in rec:
            ev = [[v["pmid"], v["event_blobs"]] for v in rec["vsets"] if "event_blobs" in v]
            if ev:
                out.append([rec["ts"], ev])
    return out
R["event_blobs"] = catch(event_blobs)

# a second forward walk after repositioning at the start (pmSetMode FORW, label start)
def rewalk():
    lab = ctx.pmGetArchiveLabel()
    ctx.pmSetMode(FORW, lab.start, 0)
    return walk(ctx, brief=True)
R["forw_again"] = catch(rewalk)
RESULT = R
'''

def _build(variant):
    return Pair(snippet(BODY, ARCH=archives.get_corpus()[variant]))


pair_for = PairCache(_build, VARIANTS)


pair = pair_for.fixture()


def test_label(pair):
    check(pair, "label")


def test_label_highres(pair):
    check(pair, "label_highres")


def test_end(pair):
    check(pair, "end")


def test_end_highres(pair):
    check(pair, "end_highres")


def test_end_types(pair):
    check(pair, "end_types")


def test_position_kept_by_label_and_end(pair):
    check(pair, "position_kept")


def test_result_types(pair):
    check(pair, "result_types")


def test_forward_walk(pair):
    ref = check(pair, "forw")
    assert ref[-1].get("error") == -12370     # walks end with PM_ERR_EOL


def test_eol_repeats(pair):
    check(pair, "forw_after_eol")
    check(pair, "back_after_eol")


def test_backward_walk(pair):
    check(pair, "set_back")
    check(pair, "back")


def test_forward_walk_highres(pair):
    check(pair, "forw_highres")


def test_event_value_blocks_host_order(pair):
    check(pair, "event_blobs")


def test_backward_walk_highres(pair):
    check(pair, "set_back_highres")
    check(pair, "back_highres")


def test_label_and_end_after_walks(pair):
    check(pair, "label_after_walks")
    check(pair, "end_after_walks")


def test_forward_walk_again(pair):
    check(pair, "forw_again")


# structural facts of the corpus, checked on the reference side only (they
# guard the corpus, not our code)
def test_corpus_structure(pmcd, reference_binding):
    c = archives.get_corpus()
    marks = archives.ref_facts(c["marks"])
    assert any(r.get("numpmid") == 0 for r in marks["records"]), "no mark record in marks"
    pair = archives.ref_facts(c["list_pair"])
    assert sum(1 for r in pair["records"] if r.get("numpmid") == 0) == 1
    over = archives.ref_facts(c["overlap_pair"])
    assert any(r.get("error") == -12401 for r in over["records"])
    assert len(c["mv_volumes"]) >= 3
