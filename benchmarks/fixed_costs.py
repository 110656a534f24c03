#!/usr/bin/env python3
"""Fixed costs, official binding against this package in one run (issue 34): what a
short program pays once per process, per context and per call.

  processes  short programs run as processes under each binding, CPU (user + system)
             of the child: one_fetch.py live and on an archive, pcp-uptime, pcp-free,
             pcp-numastat, pmrep for a few samples (live, archive, LOCAL); then each
             figure above its side's floor, the interpreter alone
  calls      one call in a warm process (call_costs.py under each binding)
  instructions  the same calls counted in instructions (callgrind: user space only, so
             the syscalls, which both bindings make, are left out; steady where CPU
             seconds on a shared machine are not)
  The calls and their instructions are given for this package twice: "ours (venv)"
  (the project virtualenv's interpreter) and "ours (official's interpreter)" (the
  official binding's own, see same_interpreter_python): the interpreters' builds differ
  (Debian's is built with PGO and LTO, and runs the same Python loop in fewer
  instructions), so the second column is the bindings' difference alone.
  imports    `-X importtime` of `from pcp import pmapi` (and of pcp.cli for ours): the
             modules with the largest cumulative import time

Each side runs under its own interpreter: the official binding under /usr/bin/python3,
this package under the interpreter running this script (the project's virtualenv) and
under a "wheel-like" virtualenv of the same Python that finds the package through a static
.pth file, without the editable-install finder (about 10 ms at every start) that a
wheel install does not have. The runs are interleaved (official, ours, wheel-like,
official, ...) and the medians taken, since the machine is shared. The package is
byte-compiled first and PYTHONDONTWRITEBYTECODE dropped, as an installed wheel runs.
Ratios are ours / official (below 1: ours is cheaper).

    fixed_costs.py [--runs N] [--only processes,calls,instructions,imports] [--baseline DIR]

--baseline DIR adds a side "baseline": another checkout of this package (built, e.g.
`git archive OLD | tar -x -C DIR` with the C core copied in), run as the wheel-like side
is, to give before / after figures from the same run.

test_bench_fixed_costs.py runs the same under pytest (--benchmark-only -s).
"""
import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
REF_PYTHON = os.environ.get("PCP_BENCH_REF_PYTHON", "/usr/bin/python3")
QA_ARCHIVE = "/var/lib/pcp/testsuite/archives/20180102"
FLOOR = "python -c pass (the interpreter alone)"


def _tool(name):
    for folder in ("/usr/bin", "/usr/lib/pcp/bin", "/usr/libexec/pcp/bin"):
        if os.path.exists(os.path.join(folder, name)):
            return os.path.join(folder, name)
    raise FileNotFoundError(name)


def process_cases():
    """(label, argv after the interpreter, whether the output must be identical)."""
    one_fetch = str(BENCH_DIR / "one_fetch.py")
    return [
        (FLOOR, ["-c", "pass"], True),
        ("one-fetch script, live", [one_fetch, "live"], True),
        ("one-fetch script, archive (QA 20180102)", [one_fetch, QA_ARCHIVE], True),
        ("pcp-uptime", [_tool("pcp-uptime")], False),
        ("pcp-free", [_tool("pcp-free")], False),
        ("pcp-numastat", [_tool("pcp-numastat")], False),
        ("pmrep -s 2 -t 0.05 kernel.all.load mem.util",
         [_tool("pmrep"), "-s", "2", "-t", "0.05", "kernel.all.load", "mem.util"], False),
        ("pmrep -a 20180102 -o csv -t 2 kernel.all.load disk.dev.read",
         [_tool("pmrep"), "-a", QA_ARCHIVE, "-o", "csv", "-t", "2", "kernel.all.load",
          "disk.dev.read"], True),
        ("pmrep -L -s 2 -t 0.05 hinv.ncpu kernel.all.load",
         [_tool("pmrep"), "-L", "-s", "2", "-t", "0.05", "hinv.ncpu", "kernel.all.load"],
         False),
    ]


def prepare(repo=REPO):
    """Byte-compile the package, as a wheel install is."""
    compileall.compile_dir(str(Path(repo) / "pcp"), quiet=1)
    for name in ("cpmapi.py", "cpmi.py", "cpmda.py"):
        if (Path(repo) / name).exists():
            compileall.compile_file(str(Path(repo) / name), quiet=1)


def wheel_like_python(where, repo=REPO):
    """A virtualenv of this Python that finds the package (of `repo`) and the project
    virtualenv's other packages through a static .pth file (see test_bench_tools.py)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    site = next(Path(where).glob("lib/python*/site-packages"))
    deps = [p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)]
    (site / "pcp_native.pth").write_text("\n".join([str(repo)] + deps) + "\n")
    return str(Path(where) / "bin" / "python")


def same_interpreter_python(where, repo=REPO):
    """A virtualenv of the official binding's interpreter finding this package (of
    `repo`) through a static .pth file: the binding's cost apart from the interpreter's
    build (the system's Python is built with PGO and LTO); None when that interpreter is
    another Python version (the compiled modules would not load)."""
    version = subprocess.run([REF_PYTHON, "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    if version != str(tuple(sys.version_info[:2])):
        return None
    subprocess.run([REF_PYTHON, "-m", "venv", "--without-pip", str(where)], check=True)
    site = next(Path(where).glob("lib/python*/site-packages"))
    deps = [p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)]
    (site / "pcp_native.pth").write_text("\n".join([str(repo)] + deps) + "\n")
    return str(Path(where) / "bin" / "python")


# the derived configuration this package remembers between processes, the benchmark's
# own: a test run beside it rewrites the user's with its configurations
CACHE_DIR = os.path.join(tempfile.gettempdir(), "pcp-native-bench-cache-%d" % os.getuid())


def _env(python):
    env = dict(os.environ, LC_ALL="C.UTF-8", TZ="UTC", PCP_NATIVE_CACHE_DIR=CACHE_DIR)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if python == REF_PYTHON:
        env.pop("PYTHONPATH", None)
        env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                      if not p.startswith(os.path.dirname(sys.executable)))
    return env


def run_process(python, argv, timeout=300, extra_env=None):
    """(stdout, stderr, CPU seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = dict(_env(python), **(extra_env or {}))
    proc = subprocess.run([python] + argv, capture_output=True, text=True, env=env,
                          timeout=timeout, check=False, cwd=tempfile.gettempdir())  # not ./pcp
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError("%s %s: status %d\n%s" % (python, " ".join(argv), proc.returncode,
                                                      proc.stderr[-2000:]))
    return proc.stdout, proc.stderr, ((after.ru_utime - before.ru_utime)
                                      + (after.ru_stime - before.ru_stime))


def _shape(text):
    """What a live run's output must agree on: its lines' count."""
    return text.count("\n")


def measure_processes(sides, runs):
    """{label: {side: median CPU ms}}; the outputs compared across sides."""
    table = {}
    for label, argv, identical in process_cases():
        cpu = {side: [] for side in sides}
        outputs = {}
        for _ in range(runs):
            for side, python in sides.items():
                out, err, spent = run_process(python, argv)
                cpu[side].append(spent * 1e3)
                outputs.setdefault(side, (out, err))
        ref_out, ref_err = outputs["official"]
        for side, (out, err) in outputs.items():
            if identical:
                assert (out, err) == (ref_out, ref_err), "%s: %s's output differs" % (label, side)
            else:
                assert _shape(out) == _shape(ref_out), "%s: %s's output differs" % (label, side)
        table[label] = {side: statistics.median(v) for side, v in cpu.items()}
    return table


def measure_calls(sides, runs):
    """{call: {side: median CPU us}} from call_costs.py, the sides' runs interleaved."""
    script = str(BENCH_DIR / "call_costs.py")
    got = {side: [] for side in sides}
    for _ in range(runs):
        for side, python in sides.items():
            argv = ["-I", script, QA_ARCHIVE] if python == REF_PYTHON else [script, QA_ARCHIVE]
            for attempt in range(3):
                try:
                    out, _, _ = run_process(python, argv, timeout=600)
                    break
                except RuntimeError:    # pmcd restarted by another user of it: again
                    if attempt == 2:
                        raise
                    time.sleep(5)
            got[side].append(json.loads(out.strip().splitlines()[-1]))
    table = {}
    for call in got["official"][0]:
        table[call] = {side: statistics.median(r[call] for r in got[side]) for side in sides}
    return table


INSTRUCTION_CALLS = ["pmLookupName (1 name)", "pmNameID", "pmGetChildren", "pmLookupText",
                     "pmFetch 1 metric + pmFreeResult", "pmFetch 46 metrics, no extraction",
                     "pmExtractValue", "pmConvScale"]


def _instructions(python, call, count):
    script = str(BENCH_DIR / "call_costs.py")
    with tempfile.TemporaryDirectory() as where:
        out = os.path.join(where, "callgrind.out")
        argv = ["--tool=callgrind", "--callgrind-out-file=" + out, python]
        argv += (["-I"] if python == REF_PYTHON else []) + [script, QA_ARCHIVE, "--only", call,
                                                           "--count", str(count)]
        # one hash seed for every run: the set-up's dict and set layouts (and so its
        # instruction count) otherwise differ from run to run by more than a call costs
        _, err, _ = run_process("valgrind", argv, timeout=900, extra_env={"PYTHONHASHSEED": "0"})
    collected = [line for line in err.splitlines() if "Collected" in line]
    return int(collected[-1].split()[-1])


def measure_instructions(sides, count=200):
    """{call: {side: instructions per call}}: callgrind's count for `count` and 2 *
    `count` calls, the difference over `count` (the process's start and set-up cancel)."""
    table = {}
    for call in INSTRUCTION_CALLS:
        looped = call in ("pmExtractValue", "pmConvScale")      # 1000 calls per op
        n = count // 10 if looped else count
        table[call] = {}
        for side, python in sides.items():
            # the least of two runs each: a run's set-up now and then costs millions more
            # (pmcd's replies, the machine), which one difference would charge to the calls
            once = min(_instructions(python, call, n) for _ in range(2))
            twice = min(_instructions(python, call, 2 * n) for _ in range(2))
            table[call][side] = (twice - once) / n / (1000 if looped else 1)
    return table


def import_summary(python, module, top=12):
    """(total ms, [(cumulative ms, self ms, module)] largest first) of importing module."""
    argv = ["-X", "importtime", "-c", "import %s" % module]
    _, err, _ = run_process(python, argv)
    rows = []
    for line in err.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, cumulative, name = line[len("import time:"):].split("|")
        rows.append((int(cumulative) / 1e3, int(own) / 1e3, name[1:].rstrip()))
    total = sum(cum for cum, _, name in rows if not name.startswith(" "))
    rows.sort(reverse=True)
    return total, rows[:top]


def _ratio(ours, ref):
    return "%.2fx" % (ours / ref) if ref else "-"


def table_text(title, unit, table, sides):
    """A Markdown table: each side's figure, then each of ours / official."""
    ours = [s for s in sides if s != "official"]
    head = "| %s | %s | %s |" % (title, " | ".join("%s (%s)" % (s, unit) for s in sides),
                                  " | ".join("%s/official" % s for s in ours))
    lines = [head, "|---|" + "---:|" * (len(sides) + len(ours))]
    for label, row in table.items():
        cells = ["%.1f" % row[s] if row[s] >= 10 else "%.2f" % row[s] for s in sides]
        cells.extend(_ratio(row[s], row["official"]) for s in ours)
        lines.append("| %s | %s |" % (label, " | ".join(cells)))
    return "\n".join(lines)


def floor_text(table, sides):
    """Each process figure above its side's floor (the interpreter alone, same side):
    what the program and its binding add to the bare start of Python."""
    ours = [s for s in sides if s != "official"]
    lines = ["| above the floor (ms CPU) | %s | %s |" % (
        " | ".join(sides), " | ".join("%s/official" % s for s in ours)),
        "|---|" + "---:|" * (len(sides) + len(ours))]
    floor = table[FLOOR]
    for label, row in table.items():
        if label == FLOOR:
            continue
        above = {s: row[s] - floor[s] for s in sides}
        cells = ["%.1f" % above[s] for s in sides]
        cells.extend(_ratio(above[s], above["official"]) for s in ours)
        lines.append("| %s | %s |" % (label, " | ".join(cells)))
    return "\n".join(lines)


def imports_text(sides):
    out = []
    for side, module in [("official", "pcp.pmapi"), ("baseline", "pcp.pmapi"),
                         ("wheel-like", "pcp.pmapi"), ("wheel-like", "cpmapi"),
                         ("wheel-like", "pcp.cli")]:
        if side not in sides:
            continue
        total, rows = import_summary(sides[side], module)
        out.append("-X importtime, %s: import %s: %.1f ms in all (site included); largest "
                   "cumulative:" % (side, module, total))
        out.extend("  %7.1f ms cumulative %6.1f ms self  %s" % (cum, own, name.strip())
                   for cum, own, name in rows)
    return "\n".join(out)


def report(runs=5, only=("processes", "calls", "instructions", "imports"), baseline=None):
    prepare()
    with tempfile.TemporaryDirectory() as where:
        sides = {"official": REF_PYTHON, "ours": sys.executable,
                 "wheel-like": wheel_like_python(os.path.join(where, "venv"))}
        if baseline:
            prepare(baseline)
            sides["baseline"] = wheel_like_python(os.path.join(where, "base"), baseline)
        parts = {}
        if "processes" in only:
            parts["processes"] = measure_processes(sides, runs)
            print(table_text("whole process", "ms CPU", parts["processes"], sides), flush=True)
            print(floor_text(parts["processes"], sides), flush=True)
        # the calls on both interpreters: ours on the official binding's own too, so
        # that only the bindings differ there
        call_pythons = {"official": REF_PYTHON, "ours (venv)": sides["wheel-like"]}
        if "baseline" in sides:
            call_pythons["baseline (venv)"] = sides["baseline"]
        same = None
        if "calls" in only or "instructions" in only:
            same = same_interpreter_python(os.path.join(where, "same"))
        if same is not None:
            call_pythons["ours (official's interpreter)"] = same
            if baseline:
                call_pythons["baseline (official's interpreter)"] = same_interpreter_python(
                    os.path.join(where, "same-base"), baseline)
        if "calls" in only:
            call_sides = list(call_pythons)
            calls = measure_calls(call_pythons, max(3, runs // 2))
            parts["calls"] = calls
            print(table_text("one call in a warm process", "us CPU", calls, call_sides),
                  flush=True)
        if "instructions" in only:
            counted_sides = call_pythons
            call_sides = list(counted_sides)
            counted = measure_instructions(counted_sides)
            parts["instructions"] = counted
            print(table_text("one call, user-space instructions", "instr.", counted,
                             call_sides), flush=True)
        if "imports" in only:
            print(imports_text(sides), flush=True)
    return parts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="processes,calls,instructions,imports")
    ap.add_argument("--baseline", help="another checkout, built, to compare with")
    args = ap.parse_args()
    report(args.runs, tuple(args.only.split(",")), args.baseline)


if __name__ == "__main__":
    main()
