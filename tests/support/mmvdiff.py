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


# The same program on both sides: ``REG`` is pcp.mmv.Registry on ours, a ctypes adapter
# over libpcp_mmv's registry calls on the reference.
REGISTRY_ADAPTER = r'''
OURS = hasattr(mmv, "Registry")
if not OURS:
    LIB = ctypes.CDLL("libpcp_mmv.so.1", use_errno=True)
    vp, cp, ci = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    LIB.mmv_stats_registry.restype = vp
    LIB.mmv_stats_registry.argtypes = [cp, ci, ci]
    LIB.mmv_stats_add_metric.argtypes = [vp, cp, ci, ci, ci, pmapi.pmUnits, ci, cp, cp]
    LIB.mmv_stats_add_indom.argtypes = [vp, ci, cp, cp]
    LIB.mmv_stats_add_instance.argtypes = [vp, ci, ci, cp]
    LIB.mmv_stats_add_registry_label.argtypes = [vp, cp, cp, ci, ci]
    LIB.mmv_stats_add_indom_label.argtypes = [vp, ci, cp, cp, ci, ci]
    LIB.mmv_stats_add_metric_label.argtypes = [vp, ci, cp, cp, ci, ci]
    LIB.mmv_stats_add_instance_label.argtypes = [vp, ci, ci, cp, cp, ci, ci]
    LIB.mmv_stats_start.restype = vp
    LIB.mmv_stats_start.argtypes = [vp]

    def enc(x):
        return x.encode() if isinstance(x, str) else x

    class REG:
        def __init__(self, name, cluster=42, flags=0):
            self.keep = [enc(name)]
            self.handle = LIB.mmv_stats_registry(self.keep[0], cluster, flags)

        def _call(self, fn, *args):
            args = [enc(a) for a in args]
            self.keep.extend(args)
            if fn(self.handle, *args) < 0:
                raise ValueError(ctypes.get_errno(), "refused")

        def add_metric(self, name, item, type, sem, units, serial=0, short=None, help=None):
            self._call(LIB.mmv_stats_add_metric, name, item, type, sem, units, serial,
                       short, help)

        def add_indom(self, serial, short=None, help=None):
            self._call(LIB.mmv_stats_add_indom, serial, short, help)

        def add_instance(self, serial, internal, external):
            # 6.0.3's mmv_stats_add_instance adds the instance and then always returns
            # -1 (EINVAL): its search loop never breaks, so it ends "not found"
            external = enc(external)
            self.keep.append(external)
            LIB.mmv_stats_add_instance(self.handle, serial, internal, external)

        def add_registry_label(self, *a):
            self._call(LIB.mmv_stats_add_registry_label, *a)

        def add_indom_label(self, *a):
            self._call(LIB.mmv_stats_add_indom_label, *a)

        def add_metric_label(self, *a):
            self._call(LIB.mmv_stats_add_metric_label, *a)

        def add_instance_label(self, *a):
            self._call(LIB.mmv_stats_add_instance_label, *a)

        def start(self):
            ctypes.set_errno(0)
            if not LIB.mmv_stats_start(self.handle):
                raise OSError(ctypes.get_errno(), "refused")
else:
    REG = mmv.Registry

def errno_of(fn, *args):
    try:
        fn(*args)
        return 0
    except (OSError, ValueError) as exc:
        return exc.args[0]

def snap_labels():
    """snap(), with each label payload's bytes after its NUL zeroed: libpcp_mmv copies
    all 244 bytes of a buffer it filled only up to the NUL."""
    data = bytearray.fromhex(snap())
    tocs = int.from_bytes(data[24:28], "little")
    for t in range(tocs):
        kind, count, offset = (int.from_bytes(data[40 + 16 * t:44 + 16 * t], "little"),
                               int.from_bytes(data[44 + 16 * t:48 + 16 * t], "little"),
                               int.from_bytes(data[48 + 16 * t:56 + 16 * t], "little"))
        if kind == 6:
            for i in range(count):
                payload = offset + 256 * i + 12
                end = data.index(0, payload)
                data[end:payload + 244] = bytes(payload + 244 - end)
    return data.hex()

U = pmapi.pmUnits
'''


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
