"""Helpers for the command-line tests: run `python -m pcp` in-process (output captured,
the time zone put back), run PCP's own tools, and require them the way conftest
requires pmcd (missing -> skip locally, FAIL under CI)."""
from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
import time

import pytest

from pcp.cli import main
from pcp.cli._common import DEMO_ARCHIVE

__all__ = ["DEMO_ARCHIVE", "run_cli", "run_tool", "need_tool", "need_qa_archive", "tool_env"]


def _missing(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail("%s (CI is set: this is a failure, not a skip)" % why, pytrace=False)
    pytest.skip(why)


def need_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        _missing("PCP tool %s is not installed" % name)
    return path


QA_ARCHIVES = "/var/lib/pcp/testsuite/archives"
BAD_QA_ARCHIVES = "/var/lib/pcp/testsuite/badarchives"


def need_qa_archive(name: str, folder: str = QA_ARCHIVES) -> str:
    """The base path of one of PCP's QA archives (pcp-testsuite), required as need_tool
    requires a tool; `folder` BAD_QA_ARCHIVES for the damaged ones."""
    base = os.path.join(folder, name)
    if not any(os.path.exists(base + ".meta" + z) for z in ("", ".xz", ".gz")):
        _missing("PCP QA archive %s is not installed (pcp-testsuite)" % name)
    return base


def tool_env() -> dict:
    # the same PCP_DERIVED_CONFIG as this process: libpcp's tools then load the derived
    # metrics pcp-native loads (pcp._libpcp.derived), and list them alike
    env = dict(os.environ)
    # PCP's tools run on the official binding: not on this checkout (.ci/sanitize.sh points
    # PYTHONPATH at its sanitized copy, which a tool must not import)
    env.pop("PYTHONPATH", None)
    env["LC_ALL"] = "C.UTF-8"
    return env


def run_tool(*argv: str, check: bool = False, timeout: float = 120) -> subprocess.CompletedProcess:
    need_tool(argv[0])
    p = subprocess.run(list(argv), capture_output=True, text=True, env=tool_env(),
                       timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError("%s failed (%d): %s" % (argv, p.returncode, p.stderr))
    return p


class CliRun:
    def __init__(self, status: int, out: str, err: str) -> None:
        self.status = status
        self.out = out
        self.err = err

    @property
    def both(self) -> str:
        return self.err + self.out


@contextlib.contextmanager
def kept_tz():
    """TZ as it was, and libc's zone made from it again, when the block ends: for code
    in this process that sets TZ (the CLI's -z, pmrep-like tools, zone tests)."""
    saved_tz = os.environ.get("TZ")
    try:
        yield
    finally:
        if saved_tz is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = saved_tz
        if hasattr(time, "tzset"):
            time.tzset()


def run_cli(*argv: str) -> CliRun:
    """main(argv) in this process, stdout/stderr captured; TZ restored afterwards."""
    out, err = io.StringIO(), io.StringIO()
    with kept_tz(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(argv))
        except SystemExit as e:       # argparse errors and --help
            status = e.code if isinstance(e.code, int) else 1
    return CliRun(status, out.getvalue(), err.getvalue())


def our_env() -> dict:
    """The environment for a subprocess running this checkout's pcp: under
    .ci/sanitize.sh it needs the ASan runtime that conftest took out of LD_PRELOAD."""
    env = dict(os.environ)
    if os.environ.get("PCP_TEST_ASAN_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["PCP_TEST_ASAN_PRELOAD"]
    return env


def run_module(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`python -m pcp ...` in a subprocess of this interpreter."""
    return subprocess.run([sys.executable, "-m", "pcp"] + list(argv), capture_output=True,
                          text=True, timeout=timeout, env=our_env())
