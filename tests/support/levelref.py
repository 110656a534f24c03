"""The reference binding of API levels 6.3 and 7.2 (python3-pcp 6.3.8 and 7.2.2 in the
Debian roots that .ci builds) and this package at a level, for the libpcp behaviour
tests (test_interp_levels.py, test_derived_levels.py). Level 6.0's reference is the
host's binding (difftest).

A root's python3 runs under chroot with a clean environment; it reaches the host's pmcd
over TCP (127.0.0.1) and the QA archives through a bind mount at the same path."""
from __future__ import annotations

import os
import shutil
import subprocess
from typing import Dict, List, Optional, Tuple

import pytest

from support import difftest

Level = Tuple[int, int]

ROOTS = os.environ.get("PCP_NATIVE_ROOTS", "/var/cache/pcp-native/roots")
#: Each level's reference: the Debian suite of its root and the PCP version in it.
REFERENCES: Dict[Level, Tuple[str, str]] = {(6, 3): ("trixie", "6.3.8"),
                                            (7, 2): ("sid", "7.2.2")}
QA_ARCHIVES = "/var/lib/pcp/testsuite"
CHROOT = shutil.which("chroot") or "/usr/sbin/chroot"
#: The environment of a program in a root (nothing of the host's).
ROOT_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "HOME": "/root", "TZ": "UTC",
            "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def level_text(level: Level) -> str:
    return "%d.%d" % tuple(level)


def root_dir(level: Level) -> str:
    return os.path.join(ROOTS, REFERENCES[tuple(level)][0])


def problem(level: Level) -> Optional[str]:
    """None when level's reference can run here (its root, uid 0, the QA archives
    mounted in it), else why not."""
    level = tuple(level)
    if level == (6, 0):
        return difftest.reference_problem()
    root, version = root_dir(level), REFERENCES[level][1]
    try:
        with open(os.path.join(root, "etc/pcp.conf"), encoding="utf-8") as stream:
            found = [line.split("=", 1)[1].strip() for line in stream
                     if line.startswith("PCP_VERSION=")]
    except OSError:
        return "no PCP root at %s (.ci builds it)" % root
    if found != [version]:
        return "%s has PCP %s, not %s" % (root, found, version)
    if os.geteuid() != 0:
        return "running a root's python3 needs chroot (uid 0)"
    # a bind mount of the host's own filesystem is no st_dev change: look for an archive
    if not os.path.exists(root + QA_ARCHIVES + "/archives/20180102.meta"):
        return "the QA archives are not bind-mounted at %s%s" % (root, QA_ARCHIVES)
    return None


def require(level: Level) -> None:
    """Fail (when $CI is set) or skip unless level's reference can run here."""
    why = problem(level)
    if why is None:
        return
    message = "PCP %s reference: %s" % (level_text(level), why)
    if os.environ.get("CI"):
        pytest.fail(message + " (CI is set: a failure, not a skip)", pytrace=False)
    pytest.skip(message)


def reference_argv(level: Level, env: Optional[Dict[str, str]] = None) -> List[str]:
    """The command line of a python3 under level's reference (6.3 or 7.2), with `env`
    added to ROOT_ENV; the program follows ("-c TEXT" or "- ARGS" with it on stdin)."""
    full = dict(ROOT_ENV)
    full.update(env or {})
    return ([CHROOT, root_dir(level), "/usr/bin/env", "-i"] +
            ["%s=%s" % kv for kv in sorted(full.items())] + ["python3"])


def our_env(level: Level, env: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The environment of this package's interpreter at level."""
    full = difftest._env(True)
    full.update(env or {})
    full["PCP_NATIVE_API_LEVEL"] = level_text(level)
    return full


def run_both(level: Level, snippet: str, ref_env: Optional[Dict[str, str]] = None,
             our_extra: Optional[Dict[str, str]] = None):
    """(ours, reference) of a difftest snippet at level: the reference is the host's
    binding at 6.0 and the root's python3 above; each side's JSON (difftest._finish)."""
    program = difftest.build_program(snippet)
    if tuple(level) == (6, 0):
        env = difftest._env(False)
        env.update(ref_env or {})
        ref = subprocess.Popen([difftest.REF_PYTHON, "-c", program], cwd=difftest._cwd(),
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    else:
        ref = subprocess.Popen(reference_argv(level, ref_env) + ["-c", program], cwd="/",
                               env={}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    env = our_env(level, ref_env)
    env.update(our_extra or {})
    ours = subprocess.Popen([difftest.OUR_PYTHON, "-c", program], cwd=difftest._cwd(),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    return difftest._finish(ours, True), difftest._finish(ref, False)
