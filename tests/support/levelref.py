"""What the libpcp-behaviour tests of levels 6.3 and 7.2 (test_interp_levels.py,
test_derived_levels.py, test_libpcp_levels.py) need beyond tests/support/roots.py: a
reader run as a command line in a root (its program on stdin, the archives as
arguments), and a difftest snippet run on both sides with a different environment on
each (a file's path as each side sees it)."""
from __future__ import annotations

import os
import shutil
from typing import Any, Dict, List, Optional, Tuple

import pytest

from support import difftest, roots

Level = Tuple[int, int]

#: The levels with a reference in a root, and every level.
ROOT_LEVELS = tuple(level for level in roots.LEVELS if roots.root_dir(level))
LEVELS = roots.LEVELS
level_text = roots.level_text
root_dir = roots.root_dir
require = roots.require_level
# the reader's command runs with no environment of its own: chroot by its path
CHROOT = shutil.which("chroot") or "/usr/sbin/chroot"


def reference_argv(level: Level, env: Optional[Dict[str, str]] = None) -> List[str]:
    """The command line of python3 under level's reference in its root (6.3, 7.2), with
    `env` over the roots' own environment; the program follows ("-" with it on stdin)."""
    full = dict(roots._BASE_ENV)
    full.update(env or {})
    argv = roots._chroot_argv(roots.root_dir(level), full, "/")
    return [CHROOT] + argv[1:]


def our_env(level: Level, env: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The environment of this package's interpreter at level, with `env`."""
    full = difftest._env(True)
    full.update(env or {})
    full["PCP_NATIVE_API_LEVEL"] = roots.level_text(level)
    return full


def run_both(level: Level, snippet: str, env: Optional[Dict[str, str]] = None,
             our_extra: Optional[Dict[str, str]] = None) -> Tuple[Any, Any]:
    """(ours, reference) of a difftest snippet at level (roots.run_ours and
    run_reference), `env` on both sides and `our_extra` over it on ours."""
    program = difftest.build_program(snippet)
    ref = roots.run_reference(level, program, env)
    mine = dict(env or {})
    mine.update(our_extra or {})
    return roots.run_ours(level, program, mine), ref


#: What libpcp execs to read the QA archives' compressed volumes (__pmLogOpen's
#: "uncompress using: bzip2 -dc ..."): without them a root's libpcp refuses such an
#: archive with PM_ERR_LOGREC (.ci/pcp-roots.sh installs them).
DECOMPRESSORS = ("bzip2", "xz")


def require_decompressors(level: Level) -> None:
    """Fail (when $CI is set) or skip unless level's root has the decompressors."""
    if tuple(level) == (6, 0):
        missing = [tool for tool in DECOMPRESSORS if shutil.which(tool) is None]
    else:
        missing = [tool for tool in DECOMPRESSORS
                   if not os.path.exists(os.path.join(root_dir(level), "usr/bin", tool))]
    if missing:
        message = "PCP %s reference cannot read compressed archives: no %s" % (
            level_text(level), ", ".join(missing))
        if os.environ.get("CI"):
            pytest.fail(message + " (CI is set: a failure, not a skip)", pytrace=False)
        pytest.skip(message)
