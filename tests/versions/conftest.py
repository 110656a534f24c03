"""Fixtures of the per-level tests: each level's reference, found through support.roots.

``level`` is parametrized over the three levels (6.0, 6.3, 7.2); ``reference_at`` fails
under CI (never skips) when that level's reference cannot run: a missing root is a
failure there, not a skip (.ci/pcp-roots.sh builds them).
"""
import pytest

from support import roots


@pytest.fixture(params=roots.LEVELS, ids=roots.level_text)
def level(request):
    """Each API level in turn, its reference required."""
    roots.require_level(request.param)
    return request.param


@pytest.fixture
def level_63():
    """Level 6.3, Debian trixie's python3-pcp 6.3.8 required."""
    roots.require_level((6, 3))
    return (6, 3)
