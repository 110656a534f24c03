"""Derived metrics in pmFetch, side by side in one run: the CPU time per pmFetch of a
set of derived metrics (derived_fetch.py's timed loop of pmFetch and pmFreeResult).

  reference  derived_fetch.py under /usr/bin/python3 -I (the official binding)
  libpcp C   c/derived_fetch_loop.c (the floor)
  ours       derived_fetch.py's loop on this package, timed by pytest-benchmark

Archives: the machine's derived definitions (the default configuration: iostat.conf's
disk.dev.* and cpu-util.conf's kernel.cpu.util.*) over an archive of disk.dev,
kernel.all.cpu and hinv.ncpu recorded here once with pmlogger (100 records at 100 ms,
kept under $PCP_BENCH_ARCHIVE_DIR or /tmp/pcp-bench-archives), fetched from every
record (FORW) and interpolated at the logging interval (INTERP), ROUNDS times over;
the same loop over the operands alone shows what the derived metrics add. Live:
expressions over sample metrics registered with pmRegisterDerived, fetched back to
back from the local pmcd. The checksums (every value as a double) must agree on the
three sides (live: the number of values and errors).

Run: .venv/bin/pytest benchmarks/test_bench_derived_fetch.py -q --benchmark-only -s
"""
import json
import os
import subprocess
from pathlib import Path

import derived_fetch
import pytest

BENCH_DIR = Path(__file__).resolve().parent
REF_PYTHON = os.environ.get("PCP_BENCH_REF_PYTHON", "/usr/bin/python3")
CC = os.environ.get("CC", "cc")
CACHE = Path(os.environ.get("PCP_BENCH_ARCHIVE_DIR", "/tmp/pcp-bench-archives"))
ROUNDS = int(os.environ.get("PCP_BENCH_DERIVED_ROUNDS", "20"))
LIVE_FETCHES = int(os.environ.get("PCP_BENCH_DERIVED_LIVE_FETCHES", "3000"))

CONFIG = "log mandatory on 100 msec {\n  disk.dev kernel.all.cpu hinv.ncpu\n}\n"
SETS = {
    # the six of the first measurement
    "six": ["disk.dev.await", "disk.dev.avg_qlen", "disk.dev.util", "disk.dev.avg_rqsz",
            "kernel.cpu.util.user", "kernel.cpu.util.sys"],
    # pcp-iostat's and the CPU utilisation columns
    "iostat_cpu": ["disk.dev.await", "disk.dev.r_await", "disk.dev.w_await",
                   "disk.dev.avg_qlen", "disk.dev.avg_rqsz", "disk.dev.r_avg_rqsz",
                   "disk.dev.w_avg_rqsz", "disk.dev.util", "kernel.cpu.util.user",
                   "kernel.cpu.util.nice", "kernel.cpu.util.sys", "kernel.cpu.util.idle",
                   "kernel.cpu.util.intr", "kernel.cpu.util.wait", "kernel.cpu.util.steal"],
    # the operands of "six" alone: the fetch without derived metrics
    "six_operands": ["disk.dev.total", "disk.dev.total_rawactive", "disk.dev.read_rawactive",
                     "disk.dev.write_rawactive", "disk.dev.avactive", "disk.dev.read",
                     "disk.dev.write", "disk.dev.read_bytes", "disk.dev.write_bytes",
                     "kernel.all.cpu.user", "kernel.all.cpu.sys", "hinv.ncpu"],
}
LIVE = ["bench.a=sample.bin * 2 + 1", "bench.b=rate(sample.seconds)",
        "bench.c=delta(sample.milliseconds)", "bench.d=sum(sample.bin)",
        "bench.e=matchinst(/bin-[1-5]/, sample.bin)",
        "bench.f=sample.long.one + sample.ulong.ten"]


@pytest.fixture(scope="module")
def archive():
    folder = CACHE / "derived-fetch-v1"
    base = folder / "arch"
    if not (folder / "arch.index").exists():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config").write_text(CONFIG)
        for old in folder.glob("arch.*"):
            old.unlink()
        subprocess.run(["pmlogger", "-h", "local:", "-c", str(folder / "config"), "-s", "100",
                        "-l", str(folder / "pmlogger.log"), str(base)], check=True,
                       capture_output=True, timeout=120, cwd=str(folder),
                       env=dict(os.environ, PCP_DERIVED_CONFIG=""))
    return str(base)


@pytest.fixture(scope="module")
def c_loop(tmp_path_factory):
    exe = tmp_path_factory.mktemp("derived") / "derived_fetch_loop"
    subprocess.run([CC, "-O2", "-Wall", "-I", str(BENCH_DIR / "c"), "-o", str(exe),
                    str(BENCH_DIR / "c" / "derived_fetch_loop.c"), "-lpcp"], check=True,
                   capture_output=True)
    return exe


def _json(cmd):
    env = dict(os.environ)
    env.pop("PCP_DERIVED_CONFIG", None)         # the machine's default configuration
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _report(benchmark, what, ours, ref, floor):
    us = ours["us_per_fetch"]
    benchmark.extra_info.update(
        fetches=ours["fetches"], ours_us_per_fetch=us,
        reference_us_per_fetch=ref["us_per_fetch"], libpcp_us_per_fetch=floor["us_per_fetch"],
        ours_over_reference_time=us / ref["us_per_fetch"],
        ours_over_libpcp_time=us / floor["us_per_fetch"])
    print("\n%s: %d fetches of %d metrics; CPU per fetch: ours %.1f us, official %.1f us, "
          "libpcp C %.1f us (ours/official x%.2f, ours/libpcp x%.2f)"
          % (what, ours["fetches"], ours["metrics"], us, ref["us_per_fetch"],
             floor["us_per_fetch"], us / ref["us_per_fetch"], us / floor["us_per_fetch"]))


@pytest.mark.parametrize("which", list(SETS))
@pytest.mark.parametrize("mode", ["forw", "interp"])
def test_archive_derived_fetch(benchmark, archive, c_loop, mode, which):
    args = ["archive", archive, mode, "100", str(ROUNDS)] + SETS[which]
    ref = _json([REF_PYTHON, "-I", str(BENCH_DIR / "derived_fetch.py")] + args)
    floor = _json([str(c_loop)] + args)
    os.environ.pop("PCP_DERIVED_CONFIG", None)
    ours = benchmark.pedantic(derived_fetch.run, args=("archive", archive, mode, 100, ROUNDS,
                                                       SETS[which]), rounds=1, iterations=1)
    for side in (ref, floor):
        assert (side["fetches"], side["values"], side["errors"], side["float_sum"]) == \
            (ours["fetches"], ours["values"], ours["errors"], ours["float_sum"]), side
    _report(benchmark, "%s %s" % (mode.upper(), which), ours, ref, floor)


def test_live_derived_fetch(benchmark, c_loop):
    args = ["live", "local:", "-", "0", str(LIVE_FETCHES)] + LIVE
    ref = _json([REF_PYTHON, "-I", str(BENCH_DIR / "derived_fetch.py")] + args)
    floor = _json([str(c_loop)] + args)
    ours = benchmark.pedantic(derived_fetch.run, args=("live", "local:", "-", 0, LIVE_FETCHES,
                                                       LIVE), rounds=1, iterations=1)
    for side in (ref, floor):
        assert (side["fetches"], side["values"], side["errors"]) == \
            (ours["fetches"], ours["values"], ours["errors"]), side
    _report(benchmark, "live", ours, ref, floor)
