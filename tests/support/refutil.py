"""Run code under the official PCP Python binding (the reference) and get its answer.

The reference lives in the system Python (/usr/bin/python3, modules ``cpmapi``
and ``pcp.pmapi`` from dist-packages).  Tests send it a snippet that prints
one JSON document as its last line of output and compare with our results.

``require_reference()`` applies the project rule: when the reference cannot
be imported the test fails if $CI is set, and is skipped otherwise.
"""

import functools
import json
import os
import subprocess
import tempfile
from typing import Any, Dict, Optional

import pytest

REFERENCE_PYTHON = "/usr/bin/python3"

# Linux refuses a single argv string of 128 KiB or more (MAX_ARG_STRLEN).
_MAX_ARGUMENT_BYTES = 100_000

# Environment variables that would make the system Python pick up our venv
# or our sources instead of its own packages.
_DROPPED_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONSAFEPATH",
                "PYTHONUSERBASE", "VIRTUAL_ENV", "PYTHONEXECUTABLE")


def _clean_env() -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        venv_bin = os.path.join(venv, "bin")
        env["PATH"] = os.pathsep.join(
            p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    return env


def run_reference(code: str, timeout: float = 120) -> Any:
    """Run ``code`` under the reference Python; return its last stdout line as JSON.

    Long programs are passed on stdin rather than with -c (argv limit).
    The child runs in an empty temporary directory, so a ``cpmapi.py`` or
    ``pcp/`` in the caller's working directory cannot shadow the reference.
    Raises AssertionError (with the child's stderr) if it fails or does not
    print JSON.
    """
    # Very long programs exceed the kernel's limit for one argument; those
    # are fed on stdin ("python3 -") instead of with -c.
    if len(code.encode("utf-8")) < _MAX_ARGUMENT_BYTES:
        argv, stdin_text = [REFERENCE_PYTHON, "-c", code], None
    else:
        argv, stdin_text = [REFERENCE_PYTHON, "-"], code
    with tempfile.TemporaryDirectory(prefix="pcp-ref-") as workdir:
        try:
            proc = subprocess.run(
                argv, input=stdin_text, cwd=workdir, env=_clean_env(),
                capture_output=True, text=True, timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise AssertionError("reference python could not run: %r" % (exc,)) from exc
    if proc.returncode != 0:
        raise AssertionError(
            "reference python exited with status %d\n--- stderr ---\n%s"
            % (proc.returncode, proc.stderr))
    lines = proc.stdout.strip().splitlines()
    if not lines:
        raise AssertionError("reference python printed nothing\n--- stderr ---\n%s"
                             % proc.stderr)
    try:
        return json.loads(lines[-1])
    except ValueError as exc:
        raise AssertionError(
            "reference python did not end with a JSON line: %r\n--- stderr ---\n%s"
            % (lines[-1][:500], proc.stderr)) from exc


@functools.lru_cache(maxsize=None)
def _reference_problem() -> Optional[str]:
    """None when the reference binding imports cleanly, else why not."""
    probe = (
        "import json, cpmapi\n"
        "from pcp import pmapi\n"
        "print(json.dumps([cpmapi.__file__, pmapi.__file__]))\n")
    try:
        files = run_reference(probe, timeout=60)
    except AssertionError as exc:
        return str(exc)
    for path in files:
        if not path.startswith("/usr/"):
            return "reference modules resolved outside /usr: %r" % (files,)
    return None


def require_reference() -> None:
    """Fail (if $CI is set) or skip the calling test when the reference is unusable."""
    problem = _reference_problem()
    if problem is None:
        return
    message = "official PCP python binding unavailable under %s: %s" % (
        REFERENCE_PYTHON, problem)
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)
