"""What a test session builds once and every pytest-xdist worker shares.

The test archives are recorded from the machine's pmcd while the recorder changes
sample.many.count on a schedule: two workers recording at once would see each other's
stores (and make archives that differ from the ones the tests were written for), and
would spend the time twice. So the first worker to ask builds under a lock, in the
session's directory, and writes what it built as JSON; the others wait on the lock and
read that. The directory is made by the controlling pytest process (conftest's
pytest_configure) and removed when the session ends; a process outside pytest gets a
private one of its own.
"""
from __future__ import annotations

import atexit
import fcntl
import json
import os
import shutil
import tempfile
from typing import Callable, Dict, Type

SESSION_DIR_VARIABLE = "PCP_TEST_SESSION_DIR"

_built: Dict[str, dict] = {}


def make_session_dir() -> str:
    """Create the session's shared directory and publish it to the workers (which
    inherit the environment). Returns it; the caller removes it at the end."""
    folder = tempfile.mkdtemp(prefix="pcp-native-session-")
    os.environ[SESSION_DIR_VARIABLE] = folder
    return folder


def session_dir() -> str:
    folder = os.environ.get(SESSION_DIR_VARIABLE)
    if not folder or not os.path.isdir(folder):
        folder = make_session_dir()
        if not os.environ.get("PCP_KEEP_TEST_ARCHIVES"):
            atexit.register(shutil.rmtree, folder, True)
    return folder


def build_once(name: str, build: Callable[[str], dict],
               error_type: Type[Exception] = RuntimeError) -> dict:
    """The JSON-able dict that build(root) returned, built by one process of the session.

    A build that raised is not tried again by the others: they raise error_type with
    the first one's message, as a second attempt would meet the same trouble."""
    if name in _built:
        return _built[name]
    base = os.path.join(session_dir(), name)
    with open(base + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(base + ".json"):
            with open(base + ".json", encoding="utf-8") as stream:
                result = json.load(stream)
        elif os.path.exists(base + ".error"):
            with open(base + ".error", encoding="utf-8") as stream:
                raise error_type(stream.read())
        else:
            os.makedirs(base, exist_ok=True)
            try:
                result = build(base)
            except Exception as e:
                with open(base + ".error", "w", encoding="utf-8") as stream:
                    stream.write(str(e))
                raise
            with open(base + ".json.tmp", "w", encoding="utf-8") as stream:
                json.dump(result, stream)
            os.replace(base + ".json.tmp", base + ".json")
    _built[name] = result
    return result
