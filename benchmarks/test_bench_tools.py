"""PCP's own Python tools end to end, on the official binding and on this package, in one
run: the installed tool started by each side's interpreter over the same archive, its
output compared (it must be identical), its CPU time (user + system of the child
process) and wall time measured.

Start-up dominated (the figures of the issue: about 500 samples, so interpreter start,
imports and the tools' own set-up are a large part):
  pmrep     CSV of ~50 metrics (kernel.all, mem.util, swap, disk.dev), interpolated at
            the archive's logging interval
  pmiostat  the extended device report, interpolated at the logging interval
  pmrep -u  the same CSV replayed record by record (no interpolation)
  pmrep -s 1  one sample: start-up alone
Steady state (ten times the samples over the same records, so the per-sample work
dominates):
  pmrep, pmiostat  interpolated every 20 ms
A baseline: each interpreter running nothing (`-c pass`), to show what the interpreters
cost before any PCP code runs. This package's development install adds a setuptools
editable-install finder (pathlib, urllib, re: about 10 ms) to every start of the
virtualenv's interpreter, which a wheel install does not have; so ours is also run by a
"wheel-like" interpreter: a virtualenv of the same Python that finds the package and its
dependencies through a static .pth file, as an installed wheel would be found. And the
interpreters differ: the official binding runs on the system's Python (built with PGO and
LTO by the distribution), this package on whatever Python its virtualenv was made from
(here a pyenv build without them, which runs the same Python code 10-20% slower: pmrep's
and pmiostat's own code, configparser, csv). So ours is also run by a virtualenv of the
official binding's own interpreter ("same interpreter"; when its version is this one's,
so that the compiled modules load), which isolates what each binding costs.

The archive is the benchmark archive (make_big_archive.py: pmlogger records replicated;
PCP_BENCH_ARCHIVE_SIZE, default 16M; 200 ms logging interval). Both sides run with
derived metrics off (PCP_DERIVED_CONFIG="") so that the metric sets are the same, and
from compiled bytecode: the package is byte-compiled first, as a wheel install is, and
PYTHONDONTWRITEBYTECODE is removed from the children's environment.

Run: .venv/bin/pytest benchmarks/test_bench_tools.py -q --benchmark-only -s
"""
import compileall
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import make_big_archive
import pytest

SIZE = os.environ.get("PCP_BENCH_ARCHIVE_SIZE", "16M")
REF_PYTHON = os.environ.get("PCP_BENCH_REF_PYTHON", "/usr/bin/python3")
REPO = Path(__file__).resolve().parent.parent
METRICS = ["kernel.all.load", "kernel.all.cpu", "kernel.all.pswitch", "kernel.all.intr",
           "mem.util.used", "mem.util.free", "mem.util.cached", "mem.util.bufmem",
           "mem.util.active", "mem.util.inactive", "mem.util.dirty", "mem.util.slab",
           "swap.pagesin", "swap.pagesout", "swap.used", "swap.free",
           "disk.dev.read", "disk.dev.write", "disk.dev.read_bytes", "disk.dev.write_bytes",
           "disk.dev.avactive", "disk.dev.aveq"]


@pytest.fixture(scope="module")
def archive():
    compileall.compile_dir(str(REPO / "pcp"), quiet=1)
    compileall.compile_file(str(REPO / "cpmapi.py"), quiet=1)
    return str(make_big_archive.ensure_archive(make_big_archive.parse_size(SIZE), 2))


@pytest.fixture(scope="module")
def wheel_python(tmp_path_factory):
    """The same Python, finding this package (and the development virtualenv's other
    packages) through a static .pth file: no editable-install finder at start-up."""
    root = tmp_path_factory.mktemp("wheel-like")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    site = next(root.glob("lib/python*/site-packages"))
    deps = [p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)]
    (site / "pcp_native.pth").write_text("\n".join([str(REPO)] + deps) + "\n")
    return str(root / "bin" / "python")


@pytest.fixture(scope="module")
def same_python(tmp_path_factory):
    """A virtualenv of the official binding's interpreter that finds this package (and
    the development virtualenv's other packages) through a static .pth file; None when
    that interpreter is another Python version than this one."""
    version = subprocess.run([REF_PYTHON, "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    if version != str(tuple(sys.version_info[:2])):
        return None
    root = tmp_path_factory.mktemp("same-interpreter")
    subprocess.run([REF_PYTHON, "-m", "venv", "--without-pip", str(root)], check=True)
    site = next(root.glob("lib/python*/site-packages"))
    deps = [p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)]
    (site / "pcp_native.pth").write_text("\n".join([str(REPO)] + deps) + "\n")
    return str(root / "bin" / "python")


def _tool(name):
    for folder in ("/usr/bin", "/usr/lib/pcp/bin"):
        if os.path.exists(os.path.join(folder, name)):
            return os.path.join(folder, name)
    pytest.fail("%s is not installed" % name)


def _run(python, argv):
    """Run one side; (stdout, CPU seconds of the child, wall seconds)."""
    env = dict(os.environ, PCP_DERIVED_CONFIG="", LC_ALL="C.UTF-8", TZ="UTC")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if python == REF_PYTHON:
        env.pop("PYTHONPATH", None)
        env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                      if not p.startswith(os.path.dirname(sys.executable)))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run([python] + argv, capture_output=True, text=True, env=env,
                          timeout=1800, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert proc.returncode == 0, proc.stderr[-2000:]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc.stdout, cpu, wall


def _compare(benchmark, wheel_python, same_python, what, argv, rounds=3):
    ref = [_run(REF_PYTHON, argv) for _ in range(rounds)]
    runs = []
    benchmark.pedantic(lambda: runs.append(_run(sys.executable, argv)), rounds=rounds,
                       iterations=1)
    wheel = [_run(wheel_python, argv) for _ in range(rounds)]
    same = [_run(same_python, argv) for _ in range(rounds)] if same_python else []
    ref_out = ref[0][0]
    assert all(r[0] == ref_out for r in ref + runs + wheel + same), \
        "%s: the outputs differ" % what
    ref_cpu, ref_wall = min(r[1] for r in ref), min(r[2] for r in ref)
    ours_cpu, ours_wall = min(r[1] for r in runs), min(r[2] for r in runs)
    wheel_cpu, wheel_wall = min(r[1] for r in wheel), min(r[2] for r in wheel)
    benchmark.extra_info.update(ours_cpu_s=ours_cpu, reference_cpu_s=ref_cpu,
                                reference_over_ours=ref_cpu / ours_cpu,
                                ours_wall_s=ours_wall, reference_wall_s=ref_wall,
                                wheel_like_cpu_s=wheel_cpu, wheel_like_wall_s=wheel_wall,
                                reference_over_wheel_like=ref_cpu / wheel_cpu,
                                lines=ref_out.count("\n"))
    line = ("\n%s: %d lines; CPU / wall: official %.3f / %.3f s; ours %.3f / %.3f s "
            "(x%.2f less CPU); ours wheel-like %.3f / %.3f s (x%.2f less CPU)"
            % (what, ref_out.count("\n"), ref_cpu, ref_wall, ours_cpu, ours_wall,
               ref_cpu / ours_cpu, wheel_cpu, wheel_wall, ref_cpu / wheel_cpu))
    if same:
        same_cpu, same_wall = min(r[1] for r in same), min(r[2] for r in same)
        benchmark.extra_info.update(same_interpreter_cpu_s=same_cpu,
                                    same_interpreter_wall_s=same_wall,
                                    reference_over_same_interpreter=ref_cpu / same_cpu)
        line += ("; ours on the official's interpreter %.3f / %.3f s (x%.2f less CPU)"
                 % (same_cpu, same_wall, ref_cpu / same_cpu))
    print(line)


def test_interpreters_alone(benchmark, wheel_python, same_python):
    """The baseline: each interpreter starting and running nothing."""
    _compare(benchmark, wheel_python, same_python, "python -c pass", ["-c", "pass"], rounds=5)


def test_pmrep_start(benchmark, archive, wheel_python, same_python):
    argv = [_tool("pmrep"), "-a", archive, "-t", "0.2", "-s", "1", "-o", "csv"] + METRICS
    _compare(benchmark, wheel_python, same_python, "pmrep -o csv -s 1 (start-up)", argv, rounds=5)


def test_pmiostat_start(benchmark, archive, wheel_python, same_python):
    argv = [_tool("pmiostat"), "-a", archive, "-t", "0.2", "-x", "t", "-s", "1"]
    _compare(benchmark, wheel_python, same_python, "pmiostat -x t -s 1 (start-up)", argv,
             rounds=5)


def test_pmrep_csv_interpolated(benchmark, archive, wheel_python, same_python):
    argv = [_tool("pmrep"), "-a", archive, "-t", "0.2", "-o", "csv"] + METRICS
    _compare(benchmark, wheel_python, same_python, "pmrep -o csv, INTERP at 200 ms", argv)


def test_pmrep_csv_raw(benchmark, archive, wheel_python, same_python):
    argv = [_tool("pmrep"), "-a", archive, "-u", "-o", "csv"] + METRICS
    _compare(benchmark, wheel_python, same_python, "pmrep -o csv -u (records as logged)", argv)


def test_pmiostat_interpolated(benchmark, archive, wheel_python, same_python):
    argv = [_tool("pmiostat"), "-a", archive, "-t", "0.2", "-x", "t"]
    _compare(benchmark, wheel_python, same_python, "pmiostat -x t, INTERP at 200 ms", argv)


def test_pmrep_csv_steady(benchmark, archive, wheel_python, same_python):
    argv = [_tool("pmrep"), "-a", archive, "-t", "0.02", "-o", "csv"] + METRICS
    _compare(benchmark, wheel_python, same_python,
             "pmrep -o csv, INTERP at 20 ms (steady state)", argv)


def test_pmiostat_steady(benchmark, archive, wheel_python, same_python):
    argv = [_tool("pmiostat"), "-a", archive, "-t", "0.02", "-x", "t"]
    _compare(benchmark, wheel_python, same_python,
             "pmiostat -x t, INTERP at 20 ms (steady state)", argv)
