"""The public-name surface of every module at every level, against that level's reference.

For pcp.pmapi, cpmapi, pcp.pmcc, pcp.pmconfig, pcp.pmi, cpmi, pcp.pmda, cpmda, pcp.mmv and
cmmv: the names, each class's public members, each Python function's parameters (names,
kinds, defaults) and each constant's value, of this package at level V (on the host,
PCP_NATIVE_API_LEVEL=V) against python3-pcp of version V (6.0.3 on the host, 6.3.8 and 7.2.2
in their roots). Compared over the names some reference version has: a name that only
another version has is a difference (a 6.3 name served at 6.0, a 7.2 removal still there);
this package's own additions (pcp.pmapi.flat_of, pcp.pmi.write_frame ...) are nobody's level.

One subprocess per side and level, all started at once: a few seconds in all.
"""
from concurrent.futures import ThreadPoolExecutor

import pytest

from support import roots, surface

pytestmark = pytest.mark.reference

#: Differences at every level, each with its reason (support/surface's line keys).
ACCEPTED = {
    # libpcp itself: this package has none (the README's deliberate differences)
    "pcp.pmapi.LIBPCP": "libpcp's CDLL: there is no libpcp here",
    "pcp.mmv.LIBPCP_MMV": "libpcp_mmv's CDLL: there is no libpcp_mmv here",
    "pcp.pmi.LIBPCP_IMPORT": "libpcp_import's CDLL: there is no libpcp_import here",
    "pcp.pmda.LIBPCP_PMDA": "libpcp_pmda's CDLL: there is no libpcp_pmda here",
    # results, value sets and values are lazy views here, not ctypes structures
    "pcp.pmapi.pmValueSetPtr": "value sets are views: pmValueSetPtr is the view's class "
                                     "(tests/core/test_printed_names.py)",
    "pcp.pmapi.pmValueSet.members.vlist_read": "the ctypes structure's getter behind vlist; "
                                               "the view's vlist is an attribute",
    "pcp.pmapi.pmMetricSpec.members.csbuffer": "keeps libpcp's C source buffer alive; "
                                               "there is none here",
    "pcp.pmconfig.pmConfig.members.get_inst_labels.function":
        "insts=() where the official default is a shared list (insts=[]): the same calls, "
        "without the shared mutable default",
}

#: Level 7.2's differences not yet served: none (listed exactly when there are, so that an
#: entry fixed fails here until it is taken off).
STILL_DIFFERENT_72: set = set()


def _line_key(line):
    return line.split(": ", 1)[0]


def _accepted(key):
    """Whether a difference's key is ACCEPTED's, or lies inside one of its entries."""
    return any(key == entry or key.startswith(entry + ".") for entry in ACCEPTED)


@pytest.fixture(scope="module")
def surfaces(all_levels):
    """{level: (ours, reference)} for every level (every reference takes part in the union
    of names, so all three are required)."""
    program = surface.program()
    with ThreadPoolExecutor(max_workers=2 * len(all_levels)) as pool:
        refs = {level: pool.submit(roots.run_reference, level, program) for level in all_levels}
        ours = {level: pool.submit(roots.run_ours, level, program) for level in all_levels}
        return {level: (ours[level].result(), refs[level].result()) for level in all_levels}


def _differences(surfaces, level):
    for side in surfaces[level]:
        assert "__crash__" not in side, side
    references = [ref for _, ref in surfaces.values()]
    ours, ref = surfaces[level]
    return [line for line in surface.level_differences(ours, ref, references)
            if not _accepted(_line_key(line))]


@pytest.mark.parametrize("level", [(6, 0), (6, 3)], ids=roots.level_text)
def test_surface_equals_the_reference(surfaces, level):
    differences = _differences(surfaces, level)
    assert not differences, "\n".join(differences)


def test_surface_72_lists_what_is_left(surfaces):
    """7.2: every difference is one STILL_DIFFERENT_72 lists, and every entry is still a
    difference (take it off when it is fixed)."""
    differences = _differences(surfaces, (7, 2))
    keys = {_line_key(line) for line in differences}
    unexpected = [line for line in differences if _line_key(line) not in STILL_DIFFERENT_72]
    assert not unexpected, "new 7.2 differences:\n" + "\n".join(unexpected)
    fixed = sorted(STILL_DIFFERENT_72 - keys)
    assert not fixed, "fixed at 7.2, take off STILL_DIFFERENT_72: %s" % fixed


def test_accepted_differences_are_real(surfaces):
    """Each ACCEPTED entry is a difference at some level (none is stale)."""
    references = [ref for _, ref in surfaces.values()]
    seen = set()
    for ours, ref in surfaces.values():
        for line in surface.level_differences(ours, ref, references):
            key = _line_key(line)
            seen.update(entry for entry in ACCEPTED
                        if key == entry or key.startswith(entry + "."))
    assert sorted(set(ACCEPTED) - seen) == []
