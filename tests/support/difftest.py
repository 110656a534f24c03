"""The one reference runner: run code under the official binding (REFERENCE,
/usr/bin/python3 + /usr/lib/python3/dist-packages/pcp) and under our package (the venv
interpreter), each in a scratch directory with an environment that cannot see the other
side, and compare the JSON each one prints.

Two ways in: ``run_reference(code)`` runs a whole program under the reference and returns
the JSON of its last output line (``require_reference()`` fails under CI, else skips,
when the reference cannot be imported); the snippet harness below runs one snippet on
both sides.

Snippet contract
----------------
* A snippet is plain Python executed at module level after PRELUDE, which
  imports ``pmapi`` (from ``pcp``), ``c_api`` (``cpmapi``), ``ctypes`` and
  defines the helpers documented below.
* It uses only the public ``pcp.pmapi`` / ``cpmapi`` API (plus ctypes on the
  objects that API returns, as a reference user would).
* It stores its answer in the global ``RESULT``; the wrapper prints
  ``jsonable(RESULT)`` as the last stdout line.  A ``pmErr`` escaping the
  snippet becomes ``{"error": code, "str": str(e), "type": "pmErr", ...}``.
* Any other escaping exception is a crash: for the reference side that means
  the test itself is wrong (AssertionError), for our side the crash text is
  what gets compared (so the diff shows it).

Prelude helpers available to snippets
-------------------------------------
``jsonable(x)``      strict JSON-able image (tuples, bytes, non-str dict keys
                     and ctypes values are tagged so that types are compared)
``err_info(e)``      image of an exception (pmErr or other)
``catch(fn, *a)``    ``jsonable(fn(*a))`` or ``err_info(exc)``
``tname(x)``         ``type(x).__name__``
``dump_result(res, descs, blobs=True, skip_blobs=())``
                     walk a (HighRes)pmResult pointer field by field
``convert_all(res, descs, outtypes=range(8))``
                     pmExtractValue of the first value of every vset to every
                     output type
``ts_info(ts)``      shape of a timeval/timespec and whether it is "now"
"""

import difflib
import functools
import json
import os
import subprocess
import sys
import tempfile
from typing import Any, Optional

import pytest

REF_PYTHON = os.environ.get("PCP_REF_PYTHON", "/usr/bin/python3")
OUR_PYTHON = os.environ.get("PCP_OUR_PYTHON", sys.executable)
REF_DIST = "/usr/lib/python3/dist-packages"
TIMEOUT = float(os.environ.get("PCP_DIFF_TIMEOUT", "90"))

PRELUDE = r'''
import ctypes, json, math, re, sys, time
from ctypes import POINTER, addressof, byref, cast, memmove, sizeof
from pcp import pmapi
import cpmapi as c_api

P = pmapi.pmContext
_ADDR = re.compile(r"0x[0-9a-fA-F]+")

def norm(s):
    """Hide memory addresses (object reprs) in strings."""
    return _ADDR.sub("0xADDR", s)

def tname(x):
    # Deliberate difference: the official binding hands out ctypes pointers for value
    # sets and blocks (LP_pmValueSet) where pcp-native hands out objects whose .contents
    # is themselves; client code sees the same attributes either way. Results keep the
    # official LP_pmResult name.
    name = type(x).__name__
    if name in ("LP_pmValueSet",):
        return name[3:]
    return name

def jsonable(x, _depth=0):
    if _depth > 50:
        return {"__too_deep__": True}
    d = _depth + 1
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if isinstance(x, float):
        if math.isnan(x):
            return {"__float__": "nan"}
        if math.isinf(x):
            return {"__float__": "inf" if x > 0 else "-inf"}
        return x
    if isinstance(x, bytes):
        return {"__bytes__": x.decode("latin-1")}
    if isinstance(x, tuple):
        return {"__tuple__": [jsonable(i, d) for i in x]}
    if isinstance(x, list):
        return [jsonable(i, d) for i in x]
    if isinstance(x, dict):
        if all(isinstance(k, str) for k in x):
            return {k: jsonable(v, d) for k, v in x.items()}
        return {"__dict__": [[jsonable(k, d), jsonable(v, d)] for k, v in x.items()]}
    if isinstance(x, ctypes.Array):
        return [jsonable(i, d) for i in x]
    if isinstance(x, ctypes._SimpleCData):
        return {"__ctype__": tname(x), "value": jsonable(x.value, d)}
    if isinstance(x, BaseException):
        return err_info(x)
    return {"__object__": tname(x)}

def err_info(e):
    if isinstance(e, pmapi.pmErr):
        return {"error": e.code, "str": norm(str(e)), "type": tname(e),
                "args": jsonable(list(e.args)), "errno": e.errno()}
    return {"exception": tname(e), "str": norm(str(e))}

def catch(fn, *args, **kwargs):
    try:
        return jsonable(fn(*args, **kwargs))
    except Exception as e:      # pmErr and anything else, imaged
        return err_info(e)

def ts_info(ts):
    now = time.time()
    out = {"type": tname(ts),
           "fields": [[f[0], tname(getattr(ts, f[0]))] for f in ts._fields_],
           "float_type": tname(float(ts)),
           "close_to_now": abs(float(ts) - now) < 30.0,
           "str_shape": bool(re.fullmatch(r"[0-9]+\.[0-9]{3}", str(ts)))}
    return out

def dump_result(res, descs, blobs=True, skip_blobs=()):
    """Field-by-field image of a pmResult / pmHighResResult pointer.

    descs: sequence of pmDesc pointers, parallel to the fetched pmids.
    A failure while imaging one vset is recorded in that vset only."""
    c = res.contents
    out = {"numpmid": c.numpmid, "vsets": []}
    for i in range(c.numpmid):
        try:
            out["vsets"].append(_dump_vset(c, i, descs[i].contents.type, blobs, skip_blobs))
        except Exception as e:
            out["vsets"].append({"image_error": err_info(e)})
    return out

def _dump_vset(c, i, t, blobs, skip_blobs):
    numval = c.get_numval(i)
    vs = {"pmid": c.get_pmid(i), "numval": numval}
    if numval < 0:
        vs["errstr"] = P.pmErrStr(numval)
        return vs
    if numval == 0:
        # valfmt is undefined (uninitialised memory) when there are no values
        vs["values"] = []
        return vs
    valfmt = c.get_valfmt(i)
    vs["valfmt"] = valfmt
    vals = []
    for j in range(numval):
        vl = c.get_vlist(i, j)
        v = {"inst": c.get_inst(i, j)}
        try:
            if valfmt != c_api.PM_VAL_INSITU:
                blk = vl.value.pval.contents
                v["vtype"] = blk.vtype
                v["vlen"] = blk.vlen
                if blobs and c.get_pmid(i) not in skip_blobs and \
                        t in (c_api.PM_TYPE_AGGREGATE, c_api.PM_TYPE_AGGREGATE_STATIC):
                    v["blob"] = ctypes.string_at(addressof(blk) + 4, blk.vlen - 4).hex()
            else:
                v["lval"] = vl.value.lval
        except Exception as e:
            v["raw_error"] = err_info(e)
        try:
            atom = P.pmExtractValue(valfmt, vl, t, t)
            v["value"] = jsonable(atom.dref(t))
            if t in (c_api.PM_TYPE_AGGREGATE, c_api.PM_TYPE_AGGREGATE_STATIC):
                ab = cast(atom.vp, POINTER(pmapi.pmValueBlock)).contents
                v["atom_vp_block"] = [ab.vtype, ab.vlen]
        except Exception as e:
            v["value"] = err_info(e)
        vals.append(v)
    vs["values"] = vals
    return vs

def convert_all(res, descs, outtypes=tuple(range(8))):
    """pmExtractValue of vlist[0] of every vset with a value to each outtype."""
    c = res.contents
    out = []
    for i in range(c.numpmid):
        if c.get_numval(i) <= 0:
            continue
        t = descs[i].contents.type
        row = {"pmid": c.get_pmid(i), "intype": t, "to": {}}
        for ot in outtypes:
            try:
                a = P.pmExtractValue(c.get_valfmt(i), c.get_vlist(i, 0), t, ot)
                row["to"][str(ot)] = jsonable(a.dref(ot))
            except Exception as e:
                row["to"][str(ot)] = err_info(e)
        out.append(row)
    return out

RESULT = None
'''

_WRAPPER = r'''
import json as _json, sys as _sys
import pcp as _pcp
print("#META " + _json.dumps({"executable": _sys.executable,
                              "pcp": getattr(_pcp, "__file__", None),
                              "dist_on_path": any(p.startswith(%(dist)r) for p in _sys.path)}))
%(prelude)s
_SNIPPET = %(snippet)r
_ns = dict(globals())
try:
    exec(compile(_SNIPPET, "<snippet>", "exec"), _ns)
    _out = _ns.get("RESULT")
except pmapi.pmErr as _e:
    _out = err_info(_e)
_sys.stdout.flush()
print()
print(_json.dumps(jsonable(_out), sort_keys=True))
'''


class SideCrash(Exception):
    pass


def build_program(snippet):
    return _WRAPPER % {"dist": REF_DIST, "prelude": PRELUDE, "snippet": snippet}


def _env(ours):
    env = dict(os.environ)
    for k in ("PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "PYTHONSAFEPATH"):
        env.pop(k, None)
    if ours:
        # Our side keeps PYTHONPATH (.ci/sanitize.sh points it at the sanitized build)
        # and gets back the ASan runtime that conftest took out of the environment.
        if os.environ.get("PCP_TEST_ASAN_PRELOAD"):
            env["LD_PRELOAD"] = os.environ["PCP_TEST_ASAN_PRELOAD"]
    else:
        env.pop("PYTHONPATH", None)
    env["PYTHONNOUSERSITE"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["LC_ALL"] = "C.UTF-8"
    env["LANG"] = "C.UTF-8"
    if not ours:
        # the reference's interpreter must not see the venv at all
        path = [p for p in env.get("PATH", "").split(os.pathsep)
                if not p.startswith(os.path.dirname(OUR_PYTHON))]
        env["PATH"] = os.pathsep.join(path)
    return env


_CWD = None


def _cwd():
    """A scratch directory outside the repo, so `pcp/` of the checkout is
    not importable through sys.path[0]."""
    global _CWD
    if _CWD is None:
        _CWD = tempfile.mkdtemp(prefix="pcp-difftest-")
    return _CWD


def _start(python, program, ours):
    return subprocess.Popen([python, "-c", program], cwd=_cwd(), env=_env(ours),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _finish(proc, ours):
    side = "ours" if ours else "reference"
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return {"__crash__": "%s: timed out after %ss" % (side, TIMEOUT),
                "stderr": err[-3000:]}
    lines = [l for l in out.splitlines() if l.strip()]
    meta = None
    for l in lines:
        if l.startswith("#META "):
            meta = json.loads(l[6:])
            break
    if proc.returncode != 0 or not lines or meta is None:
        return {"__crash__": "%s: exit status %s" % (side, proc.returncode),
                "stderr": err[-3000:], "stdout_tail": out[-1000:]}
    # isolation checks: which pcp package was imported
    if ours:
        if meta["pcp"] and meta["pcp"].startswith(REF_DIST) or meta["dist_on_path"]:
            raise SideCrash("our interpreter imported/saw the system binding: %r" % meta)
    else:
        if not (meta["pcp"] or "").startswith(REF_DIST):
            raise SideCrash("reference interpreter did not import the official "
                            "binding: %r" % meta)
    try:
        return json.loads(lines[-1])
    except ValueError:
        return {"__crash__": "%s: last stdout line is not JSON" % side,
                "stdout_tail": out[-2000:], "stderr": err[-2000:]}


# Linux refuses a single argv string of 128 KiB or more (MAX_ARG_STRLEN): longer
# programs are fed on stdin.
_MAX_ARGUMENT_BYTES = 100_000


def run_reference(code: str, timeout: float = 120) -> Any:
    """Run a whole program under the reference Python; return its last stdout line as
    JSON. Raises AssertionError (with the child's stderr) when it fails or does not end
    with JSON."""
    if len(code.encode("utf-8")) < _MAX_ARGUMENT_BYTES:
        argv, stdin_text = [REF_PYTHON, "-c", code], None
    else:
        argv, stdin_text = [REF_PYTHON, "-"], code
    try:
        proc = subprocess.run(argv, input=stdin_text, cwd=_cwd(), env=_env(False),
                              capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AssertionError("reference python could not run: %r" % (exc,)) from exc
    if proc.returncode != 0:
        raise AssertionError("reference python exited with status %d\n--- stderr ---\n%s"
                             % (proc.returncode, proc.stderr))
    lines = proc.stdout.strip().splitlines()
    if not lines:
        raise AssertionError("reference python printed nothing\n--- stderr ---\n%s"
                             % proc.stderr)
    try:
        return json.loads(lines[-1])
    except ValueError as exc:
        raise AssertionError("reference python did not end with a JSON line: %r\n"
                             "--- stderr ---\n%s" % (lines[-1][:500], proc.stderr)) from exc


def run_program(code: str, ours: bool, env: Optional[dict] = None, timeout: float = 60,
                python: Optional[str] = None) -> Any:
    """Run a whole program on one side (ours or the reference), with extra environment
    variables; the JSON of its last output line, or {"__crash__": ...}. python replaces
    our side's interpreter (support/plainenv.py's, say)."""
    full = _env(ours)
    full.update(env or {})
    python = python or (OUR_PYTHON if ours else REF_PYTHON)
    proc = subprocess.run([python, "-c", code], cwd=_cwd(), env=full, capture_output=True,
                          text=True, timeout=timeout, check=False)
    lines = proc.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, ValueError):
        return {"__crash__": "exit %d" % proc.returncode, "stderr": proc.stderr[-2000:]}


@functools.lru_cache(maxsize=None)
def reference_problem() -> Optional[str]:
    """None when the reference binding imports cleanly from /usr, else why not."""
    probe = ("import json, cpmapi\n"
             "from pcp import pmapi\n"
             "print(json.dumps([cpmapi.__file__, pmapi.__file__]))\n")
    try:
        files = run_reference(probe, timeout=60)
    except AssertionError as exc:
        return str(exc)
    if not all(path.startswith("/usr/") for path in files):
        return "reference modules resolved outside /usr: %r" % (files,)
    return None


def require_reference() -> None:
    """Fail (if $CI is set) or skip the calling test when the reference is unusable."""
    problem = reference_problem()
    if problem is None:
        return
    message = "official PCP python binding unavailable under %s: %s" % (REF_PYTHON, problem)
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def run_ref(snippet):
    """Run the snippet under the official binding only; a crash there is a
    bug in the test and raises."""
    res = _finish(_start(REF_PYTHON, build_program(snippet), False), False)
    if isinstance(res, dict) and "__crash__" in res:
        raise SideCrash("reference side crashed:\n%s\n%s" % (
            res["__crash__"], res.get("stderr", "")))
    return res


def run_ours(snippet):
    return _finish(_start(OUR_PYTHON, build_program(snippet), True), True)


def run_both(snippet, parallel=True):
    """Run `snippet` under both bindings; return (ours, ref) parsed JSON.

    parallel=False runs the reference first and then ours (needed when the
    snippet changes pmcd state, e.g. pmStore)."""
    program = build_program(snippet)
    if parallel:
        pr = _start(REF_PYTHON, program, False)
        po = _start(OUR_PYTHON, program, True)
        ref = _finish(pr, False)
        ours = _finish(po, True)
    else:
        ref = _finish(_start(REF_PYTHON, program, False), False)
        ours = _finish(_start(OUR_PYTHON, program, True), True)
    if isinstance(ref, dict) and "__crash__" in ref:
        raise SideCrash("reference side crashed (the test is wrong):\n%s\n%s" % (
            ref["__crash__"], ref.get("stderr", "")))
    return ours, ref


def canon(x):
    return json.dumps(x, sort_keys=True, indent=1)


def _first_diff(a, b, path="$"):
    if type(a) is not type(b):
        return "%s: %s %r != %s %r" % (path, type(a).__name__, a, type(b).__name__, b)
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                return "%s.%s: missing in ours" % (path, k)
            if k not in b:
                return "%s.%s: unexpected in ours" % (path, k)
            d = _first_diff(a[k], b[k], "%s.%s" % (path, k))
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = _first_diff(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        if len(a) != len(b):
            return "%s: length %d (ours) != %d (reference)" % (path, len(a), len(b))
        return None
    if a != b:
        return "%s: ours %r != reference %r" % (path, a, b)
    return None


def same(ours, ref):
    return canon(ours) == canon(ref)


def diff_text(ours, ref, limit=200):
    a = canon(ref).splitlines()
    b = canon(ours).splitlines()
    lines = list(difflib.unified_diff(a, b, "reference", "ours", lineterm="", n=2))
    if len(lines) > limit:
        lines = lines[:limit] + ["... (%d more diff lines)" % (len(lines) - limit)]
    return "\n".join(lines)


def assert_equal(ours, ref, what=""):
    """Strict comparison (int vs float vs bool, tuple vs list, bytes vs str
    all matter through jsonable's tagging) with a readable diff."""
    if isinstance(ours, dict) and "__crash__" in ours:
        raise AssertionError("%sour side crashed: %s\n%s" % (
            (what + ": ") if what else "", ours["__crash__"],
            ours.get("stderr", "") or ours.get("stdout_tail", "")))
    if same(ours, ref):
        return
    raise AssertionError("%sours differs from the reference\nfirst difference: %s\n%s" % (
        (what + ": ") if what else "", _first_diff(ours, ref), diff_text(ours, ref)))


def assert_same(snippet, parallel=True):
    ours, ref = run_both(snippet, parallel=parallel)
    assert_equal(ours, ref)
    return ref


class Pair(object):
    """Outputs of one batched snippet whose RESULT is a dict of sections;
    tests compare one section each."""

    def __init__(self, snippet, parallel=True):
        self.ours, self.ref = run_both(snippet, parallel=parallel)
        if not isinstance(self.ref, dict) or "error" in self.ref:
            raise SideCrash("reference snippet did not produce sections: %r"
                            % (self.ref,))

    def ours_section(self, key):
        if isinstance(self.ours, dict) and "__crash__" in self.ours:
            raise AssertionError("our side crashed: %s\n%s" % (
                self.ours["__crash__"],
                self.ours.get("stderr", "") or self.ours.get("stdout_tail", "")))
        if not isinstance(self.ours, dict) or ("error" in self.ours and
                                                key not in self.ours):
            raise AssertionError("our side raised before section %r: %r"
                                 % (key, self.ours))
        if key not in self.ours:
            raise AssertionError("section %r missing on our side" % key)
        return self.ours[key]

    def ref_section(self, key):
        return self.ref[key]

    def check(self, key):
        ref = self.ref_section(key)
        ours = self.ours_section(key)
        assert_equal(ours, ref, key)
        return ref


def run_script(code: str, argv: list, ours: bool, env: Optional[dict] = None,
               timeout: float = 60) -> dict:
    """Run a program as a tool is run (argv after the program, extra environment) on one
    side; its exit status, stdout and stderr, for comparing byte for byte."""
    full = _env(ours)
    full.update(env or {})
    python = OUR_PYTHON if ours else REF_PYTHON
    # the script's name is what libpcp and the official binding call the program
    folder = tempfile.mkdtemp(dir=_cwd())
    script = os.path.join(folder, "tool.py")
    with open(script, "w", encoding="utf-8") as stream:
        stream.write(code)
    proc = subprocess.run([python, script] + list(argv), cwd=_cwd(), env=full,
                          capture_output=True, text=True, timeout=timeout, check=False)
    return {"status": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}
