"""Level 6.3 against Debian trixie's python3-pcp 6.3.8, and level 6.0 against the host's
6.0.3, on what PCP 6.3 changed in the binding: results' get_sec/get_nsec/get_numpmid,
PM_ERR_ARG (pmErrStr, str(pmErr), pmErrSymDict), PMCD_HOSTNAME_CHANGE and the context
flags (their values, and pmNewContext given each), timeval/timespec made from a float or a
datetime, tm.struct_time's day of the year, pmLookupText's str, pmLoadDerivedConfig's
count, pmiWrite's float and datetime, pcp.mmv's constructors, and pcp.pmconfig's
prepare_metrics(pmns=True) and set_attr (level63_program.py).

One program, four runs in parallel (each level's reference and this package at that level,
on the host), compared section by section; then once more under the trixie root's python3
(3.13) with this package built there (tests/support/roots.py), as a user of Debian 13 gets it.
"""
from concurrent.futures import ThreadPoolExecutor

import pytest

from support import roots
from support.difftest import assert_equal

from level63_program import program

pytestmark = [pytest.mark.reference, pytest.mark.pmcd]

ARCHIVE = roots.QA_ARCHIVES + "/archives/20180102"
SECTIONS = ("archive_highres", "archive_timeval", "live_highres", "live_timeval", "err_arg",
            "names", "flags_archive", "flags_host", "timeval", "timespec", "keywords",
            "struct_time", "text", "derived", "pmiWrite", "mmv", "mmv_empty", "pmconfig")
#: What 6.3.8 answers differently from 6.0.3: the sections that show a level at work.
CHANGED = {"archive_highres", "live_highres", "err_arg", "names", "timeval", "timespec",
           "keywords", "struct_time", "text", "derived", "pmiWrite", "mmv", "pmconfig"}
#: flags_host's PM_CTXFLAG_AUTH entry: pmcd asks for SASL authentication, and the roots
#: have no SASL mechanism plugins (libsasl2-modules is a recommends, not installed), so
#: their libpcp answers "no mechanism available" where the host's (and this package, which
#: offers cyrus-sasl's mechanisms) answers "invalid parameter supplied": the machine, not
#: the level. Level 6.0 compares it in full.
_AUTH = 1
#: the installed PCP's own derived metrics (PCP_DERIVED_CONFIG's default) differ between
#: the host (6.0.3's files) and a root: none on either side
ENV = {"TZ": "UTC", "PCP_DERIVED_CONFIG": ""}


@pytest.fixture(scope="module")
def answers(levels_60_63):
    """{(level, side): the program's answer} for levels 6.0 and 6.3."""
    code = program(ARCHIVE)
    with ThreadPoolExecutor(max_workers=4) as pool:
        jobs = {}
        for level in levels_60_63:
            jobs[level, "ref"] = pool.submit(roots.run_reference, level, code, ENV)
            jobs[level, "ours"] = pool.submit(roots.run_ours, level, code, ENV)
        out = {key: job.result() for key, job in jobs.items()}
    for key, answer in out.items():
        if key[1] == "ref":
            assert "__crash__" not in answer, answer
    return out


def _comparable(answer, level, section):
    if isinstance(answer, dict) and "__crash__" in answer:
        raise AssertionError("our side crashed: %s\n%s" % (answer["__crash__"],
                                                           answer.get("stderr", "")))
    value = answer[section]
    if section == "flags_host" and level == (6, 3):
        value = [entry for i, entry in enumerate(value) if i != _AUTH]
    return value


@pytest.mark.parametrize("section", SECTIONS)
@pytest.mark.parametrize("level", [(6, 0), (6, 3)], ids=roots.level_text)
def test_section_matches_the_reference(answers, level, section):
    assert_equal(_comparable(answers[level, "ours"], level, section),
                 _comparable(answers[level, "ref"], level, section),
                 "%s at %s" % (section, roots.level_text(level)))


def test_the_references_differ_where_6_3_changed(answers):
    """The comparison can fail: 6.0.3 and 6.3.8 answer differently in these sections."""
    differing = {section for section in SECTIONS
                 if _comparable(answers[(6, 0), "ref"], (6, 3), section)
                 != _comparable(answers[(6, 3), "ref"], (6, 3), section)}
    assert differing == CHANGED


def test_built_in_the_trixie_root(answers, level_63):
    """This package built inside the trixie root and run by its python3 (3.13): the level
    comes from the root's pcp.conf (6.3.8), and every section is 6.3.8's."""
    ours = roots.run_ours_in_root(level_63, program(ARCHIVE), ENV)
    for section in SECTIONS:
        assert_equal(_comparable(ours, (6, 3), section),
                     _comparable(answers[(6, 3), "ref"], (6, 3), section),
                     "%s in the trixie root" % section)
