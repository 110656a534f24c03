"""Differential tests: pmFetch / pmFetchHighRes on archive contexts in
PM_MODE_FORW and PM_MODE_BACK (chosen pmid lists, pmids never logged,
PM_ID_NULL, duplicates, instance profiles, mark records skipped), and
pmSetMode / pmSetModeHighRes positioning (at record timestamps, between
records, +-1 usec / +-1 nsec, before the start, after the end, when=None,
PM_XTB_* flags in the mode, illegal modes).

The probe times are taken from the reference's view of each archive
(archives.ref_facts) and passed as constants to both sides."""

import pytest

from support import archives
from support.archsnip import PairCache, check, snippet
from support.difftest import Pair, SideCrash

# the first test builds every variant's pair on both sides (PairCache's prebuild)
pytestmark = [pytest.mark.pmcd, pytest.mark.reference, pytest.mark.timeout(900)]

VARIANTS = ["v2", "v3", "v3native", "xz_all", "bz2_v3", "noindex", "mv", "mv_gap",
            "mv3", "marks", "marks3", "list_pair", "list_pair3", "overlap_pair"]

FETCH_NAMES = ["sample.seconds", "sample.bin", "hinv.ncpu", "kernel.uname.release",
               "sample.event.records", "sample.proc.exec", "sample.many.int",
               "sample.string.hullo", "sample.aggregate.hullo", "sample.bad.fetch.again",
               "sample.noinst", "pmcd.pmlogger.port", "sample.double.ten",
               "sample.ulonglong.million", "sample.hordes.one"]

BODY = r'''
import ctypes
R = {}
def arr(pmids):
    return (ctypes.c_uint * len(pmids))(*pmids)

ctx = actx(ARCH)
pm = ctx.pmLookupName(FETCH_NAMES, relaxed=1)
R["pmids"] = list(pm)
known = [p for p in pm if p != c_api.PM_ID_NULL]
def pmid_of(name):
    return pm[FETCH_NAMES.index(name)]
SECONDS, BIN, NCPU = pmid_of("sample.seconds"), pmid_of("sample.bin"), pmid_of("hinv.ncpu")
PROC_EXEC, MANY = pmid_of("sample.proc.exec"), pmid_of("sample.many.int")
UNKNOWN = P.pmID_build(29, 0, 999)
NULL = c_api.PM_ID_NULL

# complete FORW / BACK sequences of pmFetch
R["forw"] = fetch_seq(ctx, arr(known))
R["forw_after_eol"] = catch(fetch_image, ctx, arr(known))
R["set_back"] = catch(set_back_at_end, ctx)
R["back"] = fetch_seq(ctx, arr(known))
c = actx(ARCH)
R["forw_highres"] = fetch_seq(c, arr(known), highres=True)
R["set_back_highres"] = catch(set_back_at_end, c, True)
R["back_highres"] = fetch_seq(c, arr(known), highres=True)
c = actx(ARCH)
R["forw_deprecated_highres"] = catch(lambda: [ts_pair(c.pmHighResFetch(arr(known)).contents.timestamp, True)
                                              for i in range(3)])

# pmid lists: only slow-group metrics, never logged, PM_ID_NULL, duplicates
c = actx(ARCH)
R["slow_only"] = fetch_ts_seq(c, arr([NCPU]))
c = actx(ARCH)
R["slow_only_back"] = [catch(set_back_at_end, c), fetch_ts_seq(c, arr([NCPU]))]
c = actx(ARCH)
R["never_logged"] = [catch(fetch_image, c, arr([UNKNOWN])) for i in range(2)]
c = actx(ARCH)
R["null_only"] = catch(fetch_image, c, arr([NULL]))
c = actx(ARCH)
R["never_logged_back"] = [catch(set_back_at_end, c), catch(fetch_image, c, arr([UNKNOWN]))]
c = actx(ARCH)
R["null_and_unknown_mixed"] = fetch_seq(c, arr([NULL, SECONDS, UNKNOWN, BIN]), n=4)
c = actx(ARCH)
R["duplicates"] = fetch_seq(c, arr([BIN, BIN, SECONDS]), n=3)
c = actx(ARCH)
R["empty_list"] = catch(fetch_image, c, arr([]))
R["python_list"] = catch(lambda: c.pmFetch([int(SECONDS)]).contents.numpmid)
# every record carrying sample.seconds, FORW: marks are skipped by pmFetch
c = actx(ARCH)
R["seconds_ts_forw"] = fetch_ts_seq(c, arr([SECONDS]))
R["seconds_ts_back"] = [catch(set_back_at_end, c), fetch_ts_seq(c, arr([SECONDS]))]

# instance profiles (pmFetch filters, pmFetchArchive does not)
def profiles():
    c = actx(ARCH)
    d = c.pmLookupDescs(arr([BIN, PROC_EXEC, MANY, SECONDS]))
    out = {}
    out["del_all_add_some"] = [catch(c.pmDelProfile, d[0], None),
                              catch(c.pmAddProfile, d[0], [200, 500, 12345])]
    out["fetch1"] = fetch_seq(c, arr([BIN, PROC_EXEC, SECONDS]), n=2)
    out["del_some"] = catch(c.pmDelProfile, d[1], [1, 2])
    out["fetch2"] = fetch_seq(c, arr([BIN, PROC_EXEC, MANY]), n=2)
    out["archive_unfiltered"] = catch(lambda: rec_brief(c.pmFetchArchive()))
    out["add_all_back"] = catch(c.pmAddProfile, d[0], None)
    out["fetch3"] = fetch_seq(c, arr([BIN, PROC_EXEC]), n=1)
    out["del_all_proc"] = catch(c.pmDelProfile, d[1], None)
    out["fetch4"] = fetch_seq(c, arr([BIN, PROC_EXEC]), n=1)
    out["add_singular"] = catch(c.pmAddProfile, d[3], [0])
    out["fetch5"] = fetch_seq(c, arr([SECONDS, PROC_EXEC]), n=1)
    return out
R["profiles"] = catch(profiles)

# positioning
def probe(c, mode, when, highres, delta=0):
    if highres:
        st = catch(c.pmSetModeHighRes, mode, None if when is None else tsp(*when), None)
    else:
        st = catch(c.pmSetMode, mode, None if when is None else tv(*when), delta)
    out = {"setmode": st}
    out["fetch"] = catch(lambda: rec_brief(c.pmFetchHighRes(arr([SECONDS, NCPU])), True))
    out["archive"] = catch(lambda: rec_brief(c.pmFetchHighResArchive(), True))
    out["archive2"] = catch(lambda: rec_brief(c.pmFetchHighResArchive(), True))
    return out

c = actx(ARCH)
R["positions_usec"] = [[when, [probe(c, m, when, False) for m in (FORW, BACK)]] for when in TIMES_USEC]
R["positions_nsec"] = [[when, [probe(c, m, when, True) for m in (FORW, BACK)]] for when in TIMES_NSEC]
# the same through fresh contexts (no state carried over)
R["positions_fresh"] = [[when, [probe(actx(ARCH), m, when, False) for m in (FORW, BACK)]]
                        for when in TIMES_USEC[:6]]
XTB = [c_api.PM_XTB_SET(u) for u in (c_api.PM_TIME_NSEC, c_api.PM_TIME_USEC, c_api.PM_TIME_MSEC,
                                     c_api.PM_TIME_SEC, c_api.PM_TIME_MIN, c_api.PM_TIME_HOUR)]
R["positions_xtb"] = [[x, [probe(c, m | x, TIMES_USEC[2], False, delta=5) for m in (FORW, BACK)]]
                      for x in XTB]
R["positions_big_delta"] = [probe(c, FORW, TIMES_USEC[3], False, delta=-7000),
                            probe(c, BACK, TIMES_USEC[3], False, delta=123456)]

def when_none():
    c = actx(ARCH)
    out = [rec_brief(c.pmFetchArchive()) for i in range(4)]
    out.append(probe(c, BACK, None, False))
    out.append(probe(c, FORW, None, True))
    return out
R["when_none"] = catch(when_none)

def bad_modes():
    c = actx(ARCH)
    out = {}
    for name, m in (("live", c_api.PM_MODE_LIVE), ("minus1", -1), ("four", 4), ("big", 99),
                    ("xtb_live", c_api.PM_MODE_LIVE | XTB[3]), ("high_bits", FORW | 0x10000)):
        out[name] = [catch(c.pmSetMode, m, None, 0), catch(c.pmSetModeHighRes, m, None, None)]
    out["then_fetch"] = catch(lambda: rec_brief(c.pmFetchArchive()))
    return out
R["bad_modes"] = catch(bad_modes)
RESULT = R
'''

def _times(facts):
    """Probe times: record timestamps, +-1 usec / nsec, midpoints between
    records, before the start and after the end."""
    data = archives.data_times(facts)
    all_ts = [r["ts"] for r in facts["records"] if "ts" in r]
    n = len(data)
    picks = sorted(set([0, 1, n // 3, n // 2, n - 2, n - 1]))
    base = [archives.ns(data[i]) for i in picks if 0 <= i < n]
    marks = [archives.ns(r["ts"]) for r in facts["records"] if r.get("numpmid") == 0]
    start = archives.ns(facts["start"])
    end = archives.ns(facts["end"]) if facts.get("end") else archives.ns(all_ts[-1])
    usec = []
    for t in base + marks:
        usec += [t, t - 1000, t + 1000]
    for i in (0, n // 2, n - 2):
        if 0 <= i < n - 1:
            usec.append((archives.ns(data[i]) + archives.ns(data[i + 1])) // 2)
    usec += [start - 1000000000, start, end, end + 1000000000, 0]
    nsec = []
    for t in base[:3] + marks:
        nsec += [t, t - 1, t + 1]
    nsec += [start - 1, end + 1]
    to_usec = [[t // 1000000000, (t % 1000000000) // 1000] for t in usec]
    to_nsec = [archives.from_ns(t) for t in nsec]
    return to_usec, to_nsec


def _build(variant):
    corpus = archives.get_corpus()
    tu, tn = _times(archives.ref_facts(corpus[variant]))
    program = snippet(BODY, ARCH=corpus[variant], FETCH_NAMES=FETCH_NAMES,
                      TIMES_USEC=tu, TIMES_NSEC=tn)
    # libpcp 6.0.3 now and then dies of SIGSEGV reading the archive whose middle volumes
    # are missing (mv_gap; seen in CI): the same program is tried three times
    crash = None
    for _ in range(3):
        try:
            return Pair(program)
        except SideCrash as e:
            if "reference side crashed" not in str(e):
                raise
            crash = e
    return crash


def _crash_is_xfail(got):
    if isinstance(got, SideCrash):
        pytest.xfail("libpcp 6.0.3 crashed on this variant three times: %s" % str(got)[:200])
    return got


pair_for = PairCache(_build, VARIANTS)


pair = pair_for.fixture(_crash_is_xfail)


def test_pmids(pair):
    check(pair, "pmids")


def test_fetch_forw(pair):
    check(pair, "forw")
    check(pair, "forw_after_eol")


def test_fetch_back(pair):
    check(pair, "set_back")
    check(pair, "back")


def test_fetch_highres_forw(pair):
    check(pair, "forw_highres")


def test_fetch_highres_back(pair):
    check(pair, "set_back_highres")
    check(pair, "back_highres")


def test_fetch_deprecated_highres(pair):
    check(pair, "forw_deprecated_highres")


def test_fetch_slow_group_only(pair):
    check(pair, "slow_only")
    check(pair, "slow_only_back")


def test_fetch_never_logged_pmid_is_eol(pair):
    ref = check(pair, "never_logged")
    # PM_ERR_EOL; in the overlap pair the scan first crosses the boundary
    # (PM_ERR_LOGOVERLAP)
    assert ref[0].get("error") in (-12370, -12401)
    check(pair, "never_logged_back")


def test_fetch_pm_id_null_only(pair):
    check(pair, "null_only")


def test_fetch_null_and_unknown_mixed(pair):
    check(pair, "null_and_unknown_mixed")


def test_fetch_duplicate_pmids(pair):
    check(pair, "duplicates")


def test_fetch_empty_list(pair):
    check(pair, "empty_list")


def test_fetch_python_list(pair):
    """Reference quirk (as in test_diff_fetch): pmFetch() hands the list
    straight to ctypes, so a plain Python list raises ctypes.ArgumentError.
    The project's policy: ours may mirror that or accept lists."""
    ref = pair.ref_section("python_list")
    ours = pair.ours_section("python_list")
    assert ref["exception"] == "ArgumentError"
    assert ours == ref or ours == 1, ours


def test_fetch_skips_marks(pair):
    check(pair, "seconds_ts_forw")
    check(pair, "seconds_ts_back")


def test_instance_profiles(pair):
    check(pair, "profiles")


def test_setmode_positions_usec(pair):
    check(pair, "positions_usec")


def test_setmode_positions_nsec(pair):
    check(pair, "positions_nsec")


def test_setmode_positions_fresh_context(pair):
    check(pair, "positions_fresh")


def test_setmode_xtb_flags(pair):
    check(pair, "positions_xtb")


def test_setmode_delta_ignored_in_forw_back(pair):
    check(pair, "positions_big_delta")


def test_setmode_when_none(pair):
    check(pair, "when_none")


def test_setmode_bad_modes(pair):
    check(pair, "bad_modes")
