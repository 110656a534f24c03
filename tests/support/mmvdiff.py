"""Run one pcp.mmv program under the official binding and under ours, each writing its
own file, and hand back both answers.

A program sees PRELUDE's names: ``mmv``, ``cmmv``, ``pmapi``, ``cpmapi``, ``ctypes``,
``PATH`` (a file path of its own side), ``snap()`` (the file's bytes as hex, with the
two generation numbers and the process id, which no two runs share, zeroed),
``catch(fn, *args)`` (the call's result or its exception's type and text) and ``RESULT``
(a dict to fill, printed as JSON at the end).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any, Dict, Optional, Tuple

from support import difftest

PRELUDE = r'''
import ctypes, json, os, sys, time
from pcp import mmv, pmapi
import cmmv, cpmapi
PATH = os.environ["MMV_TEST_PATH"]
RESULT = {}

def snap(path=None):
    with open(path or PATH, "rb") as f:
        data = bytearray(f.read())
    data[8:24] = bytes(16)      # g1, g2: the time of start()
    data[32:36] = bytes(4)      # the process id
    return data.hex()

def catch(fn, *args):
    try:
        value = fn(*args)
    except Exception as exc:
        return ["raised", type(exc).__name__, str(exc)]
    if value is None or isinstance(value, (int, float, str)):
        return ["ok", value]
    return ["ok", type(value).__name__, bool(value)]
'''

EPILOGUE = '\nprint(json.dumps(RESULT))\n'


def run_both(body: str, env: Optional[Dict[str, str]] = None,
             name: str = "test.mmv") -> Tuple[Any, Any]:
    """(ours, reference) answers of ``body``; the reference's failure fails the test.
    ``%(dir)s`` in an ``env`` value is the side's scratch directory."""
    difftest.require_reference()
    code = PRELUDE + body + EPILOGUE
    answers = []
    for ours in (False, True):
        scratch = tempfile.mkdtemp(prefix="pcp-mmv-test-")
        try:
            side_env = {"MMV_TEST_PATH": os.path.join(scratch, name),
                        "MMV_TEST_DIR": scratch}
            side_env.update({key: value % {"dir": scratch}
                             for key, value in (env or {}).items()})
            answers.append(difftest.run_program(code, ours=ours, env=side_env))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    ref, mine = answers
    assert not (isinstance(ref, dict) and "__crash__" in ref), ref
    return mine, ref
