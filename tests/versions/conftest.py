"""Fixtures of the per-level tests: each level's reference, found through support.roots.

A fixture below fails under CI (never skips) when a reference it needs cannot run: a
missing root is a failure there (.ci/pcp-roots.sh builds them), a skip elsewhere.
"""
import pytest

from support import roots


@pytest.fixture(scope="session")
def all_levels():
    """Every level's reference (6.0.3 on the host, 6.3.8 and 7.2.2 in their roots)."""
    for level in roots.LEVELS:
        roots.require_level(level)
    return roots.LEVELS


@pytest.fixture(scope="session")
def levels_60_63():
    """The references of levels 6.0 and 6.3."""
    for level in ((6, 0), (6, 3)):
        roots.require_level(level)
    return ((6, 0), (6, 3))


@pytest.fixture(scope="session")
def level_63():
    """Level 6.3's reference: Debian trixie's python3-pcp 6.3.8, in its root."""
    roots.require_level((6, 3))
    return (6, 3)
