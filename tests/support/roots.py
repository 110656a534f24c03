"""The reference of each API level, and this package at each level.

Level 6.0's reference is the host's own binding (python3-pcp 6.0.3, difftest's REF_PYTHON).
Levels 6.3 and 7.2 are checked against Debian's python3-pcp 6.3.8 (trixie) and 7.2.2 (sid),
each installed in a root that ``.ci/pcp-roots.sh`` builds under ``$PCP_NATIVE_ROOTS``
(default /var/cache/pcp-native/roots/<suite>). A root's ``python3`` is that version's
reference binding; it reaches the host's pmcd over TCP (127.0.0.1) and the QA archives
through a bind mount at the same path.

This package runs at level V in two places:

* on the host, under the venv's interpreter with ``PCP_NATIVE_API_LEVEL=V``
  (:func:`run_ours`);
* inside V's root, under the root's python3, built there from this checkout
  (:func:`build_in_root`, :func:`run_ours_in_root`): what a user of that Debian gets.

Every runner takes a whole program and returns the JSON of its last stdout line, or
``{"__crash__": ...}`` with the tail of stderr, so that a batch of cases costs one
subprocess per side. :func:`require_level` fails under CI (never skips) when a level's
reference cannot run.
"""
from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
import time
from typing import Any, Dict, Optional, Tuple

import pytest

from . import difftest

Level = Tuple[int, int]

ROOTS_DIR = os.environ.get("PCP_NATIVE_ROOTS", "/var/cache/pcp-native/roots")
#: The Debian suite whose python3-pcp is the reference of each level (6.0: the host's).
SUITES: Dict[Level, str] = {(6, 3): "trixie", (7, 2): "sid"}
#: The exact python3-pcp each level is compared with.
VERSIONS: Dict[Level, str] = {(6, 0): "6.0.3", (6, 3): "6.3.8", (7, 2): "7.2.2"}
LEVELS = tuple(sorted(VERSIONS))
QA_ARCHIVES = "/var/lib/pcp/testsuite"
#: The checkout this package is built from (tests/support/ -> the repository).
CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: Where a root keeps its builds of this package (inside the root).
BUILDS_IN_ROOT = "/opt/pcp-native-builds"
#: The environment every program starts with, inside a root or on the host.
_BASE_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
             "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "HOME": "/root", "TZ": "UTC",
             "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def level_text(level: Level) -> str:
    return "%d.%d" % level


def root_dir(level: Level) -> Optional[str]:
    """The root holding level's reference, None for 6.0 (the host is its root)."""
    suite = SUITES.get(tuple(level))
    return os.path.join(ROOTS_DIR, suite) if suite else None


def _pcp_version(root: str) -> Optional[str]:
    try:
        with open(os.path.join(root, "etc/pcp.conf"), encoding="utf-8") as stream:
            for line in stream:
                if line.startswith("PCP_VERSION="):
                    return line.split("=", 1)[1].strip()
    except OSError:
        return None
    return None


def _mount_points() -> set:
    """Every mount point of this process's namespace (a bind mount of a folder of the same
    file system is one too, which os.path.ismount cannot see)."""
    points = set()
    with open("/proc/self/mountinfo", encoding="utf-8") as stream:
        for line in stream:
            # the fifth field, with octal escapes for blanks
            points.add(line.split()[4].encode().decode("unicode_escape"))
    return points


@functools.lru_cache(maxsize=None)
def level_problem(level: Level) -> Optional[str]:
    """None when level's reference binding can run (and reach the QA archives), else why
    not."""
    level = tuple(level)
    if level not in VERSIONS:
        return "no such level %r" % (level,)
    if level == (6, 0):
        return difftest.reference_problem()
    root = root_dir(level)
    if not os.path.isdir(root):
        return "no root %s: run .ci/pcp-roots.sh" % root
    version = _pcp_version(root)
    if version != VERSIONS[level]:
        return "%s has PCP %s, not %s: run .ci/pcp-roots.sh" % (root, version, VERSIONS[level])
    if os.geteuid() != 0:
        return "running a root's python3 needs chroot, that is root's uid"
    mounted = _mount_points()
    for mount in ("/proc", QA_ARCHIVES):
        if root + mount not in mounted:
            return "%s%s is not mounted: run .ci/pcp-roots.sh" % (root, mount)
    probe = "import json, cpmapi\nfrom pcp import pmapi\nprint(json.dumps(pmapi.__file__))\n"
    answer = run_reference(level, probe, timeout=60)
    if not isinstance(answer, str) or not answer.startswith("/usr/lib/python3/"):
        return "the root's reference binding does not import: %r" % (answer,)
    return None


def require_level(level: Level) -> None:
    """Fail (when $CI is set) or skip unless level's reference can run."""
    problem = level_problem(tuple(level))
    if problem is None:
        return
    message = "PCP %s reference unavailable: %s" % (VERSIONS.get(tuple(level)), problem)
    if os.environ.get("CI"):
        pytest.fail(message + " (CI is set: a failure, not a skip)", pytrace=False)
    pytest.skip(message)


def _answer(proc: subprocess.CompletedProcess, side: str) -> Any:
    lines = proc.stdout.strip().splitlines()
    if proc.returncode == 0 and lines:
        try:
            return json.loads(lines[-1])
        except ValueError:
            pass
    return {"__crash__": "%s: exit status %d" % (side, proc.returncode),
            "stderr": proc.stderr[-3000:], "stdout_tail": proc.stdout[-1000:]}


def _run(argv, code: str, env: Dict[str, str], cwd: str, timeout: float, side: str) -> Any:
    # argv carries the program unless it is too long for one argument (MAX_ARG_STRLEN)
    if len(code.encode("utf-8")) < 100_000:
        argv, stdin_text = list(argv) + ["-c", code], None
    else:
        argv, stdin_text = list(argv) + ["-"], code
    try:
        proc = subprocess.run(argv, input=stdin_text, env=env, cwd=cwd, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        stderr = exc.stderr or ""
        if isinstance(stderr, bytes):
            stderr = stderr.decode("utf-8", "replace")
        return {"__crash__": "%s: timed out after %ss" % (side, timeout),
                "stderr": stderr[-3000:]}
    return _answer(proc, side)


def _chroot_argv(root: str, env: Dict[str, str], cwd: str = "/tmp") -> list:
    # env -i: nothing of the host's environment (its venv, PYTHONPATH) leaks into the root
    return (["chroot", root, "/usr/bin/env", "-i", "-C", cwd] +
            ["%s=%s" % item for item in sorted(env.items())] + ["python3"])


def run_reference(level: Level, code: str, env: Optional[Dict[str, str]] = None,
                  timeout: float = 90) -> Any:
    """Run a program under level's reference binding; the JSON of its last line."""
    level = tuple(level)
    if level == (6, 0):
        full = difftest._env(False)
        full.update(env or {})
        return _run([difftest.REF_PYTHON], code, full, difftest._cwd(), timeout, "reference 6.0")
    full = dict(_BASE_ENV)
    full.update(env or {})
    return _run(_chroot_argv(root_dir(level), full), code, _BASE_ENV, "/", timeout,
                "reference %s" % level_text(level))


def run_ours(level: Level, code: str, env: Optional[Dict[str, str]] = None,
             timeout: float = 90) -> Any:
    """Run a program under this package at level, on the host (the venv's interpreter)."""
    full = difftest._env(True)
    full.update(env or {})
    full["PCP_NATIVE_API_LEVEL"] = level_text(tuple(level))
    return _run([difftest.OUR_PYTHON], code, full, difftest._cwd(), timeout,
                "ours %s" % level_text(tuple(level)))


def run_both(level: Level, code: str, env: Optional[Dict[str, str]] = None,
             timeout: float = 90) -> Tuple[Any, Any]:
    """(ours, reference) for one program at level; a reference crash is the test's bug."""
    ref = run_reference(level, code, env, timeout)
    if isinstance(ref, dict) and "__crash__" in ref:
        raise AssertionError("the %s reference crashed (the test is wrong): %s\n%s" % (
            level_text(tuple(level)), ref["__crash__"], ref.get("stderr", "")))
    return run_ours(level, code, env, timeout), ref


# ---------------------------------------------------------------------------
# this package built inside a root

_SOURCES = ("setup.py", "pyproject.toml", "cpmapi.py", "cpmi.py", "cmmv.py", "cpmda.py")
_SOURCE_DIRS = ("pcp", "csrc")


def _source_files():
    for name in _SOURCES:
        yield name
    for folder in _SOURCE_DIRS:
        for here, dirs, files in os.walk(os.path.join(CHECKOUT, folder)):
            dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "build", "fuzz"))
            for name in sorted(files):
                if name.endswith((".so", ".pyc", ".o")):
                    continue
                yield os.path.relpath(os.path.join(here, name), CHECKOUT)


def _digest(names) -> str:
    digest = hashlib.sha256()
    for name in names:
        digest.update(name.encode() + b"\0")
        with open(os.path.join(CHECKOUT, name), "rb") as stream:
            digest.update(stream.read())
    return digest.hexdigest()[:16]


def _is_c_source(name: str) -> bool:
    return name.startswith("csrc" + os.sep) or name in ("setup.py", "pyproject.toml")


def _copy(names, folder: str) -> None:
    for name in names:
        target = os.path.join(folder, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.join(CHECKOUT, name), target)


#: a build nobody used for this long is removed (other checkouts share the roots)
_UNUSED_BUILD_SECONDS = 3 * 24 * 3600


def _prune(folder: str, keep: str) -> None:
    """Remove the builds of other C sources that no run used for three days."""
    now = time.time()
    for name in os.listdir(folder):
        stamp = os.path.join(folder, name, ".built")
        if name != keep and os.path.exists(stamp) and \
                now - os.path.getmtime(stamp) > _UNUSED_BUILD_SECONDS:
            shutil.rmtree(os.path.join(folder, name), ignore_errors=True)


@functools.lru_cache(maxsize=None)
def build_in_root(level: Level) -> str:
    """This checkout built in place inside level's root, under the root's python3; the
    folder (as the root sees it) to put on PYTHONPATH. The C core is compiled once per
    digest of csrc/ (about 40 s on two busy cores), its Python files copied afresh when they
    changed; every pytest-xdist worker shares the build (a lock file orders them)."""
    root = root_dir(tuple(level))
    names = list(_source_files())
    c_names = [name for name in names if _is_c_source(name)]
    py_names = [name for name in names if not _is_c_source(name)]
    folder = os.path.join(BUILDS_IN_ROOT, _digest(c_names))
    host_folder = root + folder
    os.makedirs(root + BUILDS_IN_ROOT, exist_ok=True)
    with open(root + BUILDS_IN_ROOT + "/.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(os.path.join(host_folder, ".built")):
            shutil.rmtree(host_folder, ignore_errors=True)
            _copy(names, host_folder)
            argv = ["chroot", root, "/usr/bin/env", "-i"] + [
                "%s=%s" % item for item in sorted(_BASE_ENV.items())] + [
                "sh", "-c", "cd %s && python3 setup.py -q build_ext --inplace" % folder]
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=600,
                                  check=False)
            if proc.returncode != 0:
                raise AssertionError("building this package in %s failed:\n%s\n%s" % (
                    root, proc.stdout[-3000:], proc.stderr[-3000:]))
            shutil.rmtree(os.path.join(host_folder, "build"), ignore_errors=True)
            native = os.path.join(host_folder, ".native")
            os.makedirs(native, exist_ok=True)
            for built in os.listdir(os.path.join(host_folder, "pcp")):
                if built.startswith("_native") and built.endswith(".so"):
                    shutil.copy2(os.path.join(host_folder, "pcp", built), native)
            with open(os.path.join(host_folder, ".built"), "w") as stream:
                stream.write(proc.stderr[-3000:])
        _prune(root + BUILDS_IN_ROOT, keep=os.path.basename(folder))
        python_digest = _digest(py_names)
        marker = os.path.join(host_folder, ".python")
        with open(os.path.join(host_folder, ".built"), "a"):
            os.utime(os.path.join(host_folder, ".built"))     # in use: see _prune
        if not os.path.exists(marker) or open(marker).read() != python_digest:
            shutil.rmtree(os.path.join(host_folder, "pcp"), ignore_errors=True)
            _copy(py_names, host_folder)
            # the extension the build put among the Python files
            for built in os.listdir(os.path.join(host_folder, ".native")):
                shutil.copy2(os.path.join(host_folder, ".native", built),
                             os.path.join(host_folder, "pcp", built))
            with open(marker, "w") as stream:
                stream.write(python_digest)
    return folder


def run_ours_in_root(level: Level, code: str, env: Optional[Dict[str, str]] = None,
                     timeout: float = 90) -> Any:
    """Run a program under this package built in level's root, with the root's python3
    (its pcp.conf chooses the level, as on a user's machine of that Debian)."""
    level = tuple(level)
    folder = build_in_root(level)
    full = dict(_BASE_ENV)
    full.update(env or {})
    full["PYTHONPATH"] = folder
    return _run(_chroot_argv(root_dir(level), full), code, _BASE_ENV, "/", timeout,
                "ours in the %s root" % level_text(level))

