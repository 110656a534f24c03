"""fetchgroup benchmarks, side by side in one run (fetchgroup_loop.py's workload):

  live      46 sample metrics, 1,174 values per fetch from the local pmcd, every instance
            domain whole, counters as rates; "read": after each fetch every value is read
            through the objects the fetchgroup handed out, as pmrep does; "fetch only":
            fetch() alone
  archive   the metrics under some PMNS prefixes of the benchmark archive
            (make_big_archive.py, PCP_BENCH_ARCHIVE_SIZE, default 16M) in PM_MODE_INTERP at
            the logging interval, every value read

  reference  fetchgroup_loop.py under /usr/bin/python3 -I (the official binding)
  libpcp C   c/fetchgroup_loop.c over pmCreateFetchGroup / pmFetchGroup (the floor)
  ours       fetchgroup_loop.run on this package, timed by pytest-benchmark

The figure compared is client CPU time per fetch (process CPU, so pmcd's work is not in
it); ratios go into extra_info and are printed. On archives the checksums of every value
must agree on all three sides.

Run: .venv/bin/pytest benchmarks/test_bench_fetchgroup.py -q --benchmark-only -s
"""
import json
import os
import subprocess
import time
from pathlib import Path

import fetchgroup_loop
import make_big_archive
import pytest

BENCH_DIR = Path(__file__).resolve().parent
SIZE = os.environ.get("PCP_BENCH_ARCHIVE_SIZE", "16M")
REF_PYTHON = os.environ.get("PCP_BENCH_REF_PYTHON", "/usr/bin/python3")
HOST = os.environ.get("PCP_BENCH_HOST", "local:")
CC = os.environ.get("CC", "cc")
FETCHES = int(os.environ.get("PCP_BENCH_FETCHES", "2000"))
PREFIXES = ["mem", "kernel.all", "network", "filesys", "swap", "vfs"]


@pytest.fixture(scope="module")
def c_loop(tmp_path_factory):
    exe = tmp_path_factory.mktemp("fetchgroup") / "fetchgroup_loop"
    subprocess.run([CC, "-O2", "-Wall", "-o", str(exe),
                    str(BENCH_DIR / "c" / "fetchgroup_loop.c"), "-lpcp"],
                   check=True, capture_output=True)
    return exe


@pytest.fixture(scope="module")
def archive():
    return str(make_big_archive.ensure_archive(make_big_archive.parse_size(SIZE), 2))


def _json(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _report(benchmark, what, ours, ref, floor):
    per_fetch = ours["cpu_us_per_fetch"]
    benchmark.extra_info.update(
        fetches=ours["fetches"], values=ours["values"], ours_cpu_us_per_fetch=per_fetch,
        reference_cpu_us_per_fetch=ref["cpu_us_per_fetch"],
        libpcp_cpu_us_per_fetch=floor["cpu_us_per_fetch"],
        reference_over_ours=ref["cpu_us_per_fetch"] / per_fetch,
        libpcp_over_ours=floor["cpu_us_per_fetch"] / per_fetch)
    print("\n%s: %d fetches, %d values; client CPU per fetch: ours %.0f us, official %.0f us "
          "(x%.2f less), libpcp C %.0f us (x%.2f)"
          % (what, ours["fetches"], ours["values"], per_fetch, ref["cpu_us_per_fetch"],
             ref["cpu_us_per_fetch"] / per_fetch, floor["cpu_us_per_fetch"],
             floor["cpu_us_per_fetch"] / per_fetch))


def _ours(benchmark, mode, args, read):
    """fetchgroup_loop.run in this process; its own CPU clock gives the per-fetch figure
    (the best of the rounds pytest-benchmark runs)."""
    runs = []

    def once():
        runs.append(fetchgroup_loop.run(mode, args, read))

    benchmark.pedantic(once, rounds=3, iterations=1)
    return min(runs, key=lambda r: r["cpu_us_per_fetch"])


@pytest.mark.parametrize("read", [True, False], ids=["read", "fetch_only"])
def test_fetchgroup_live(benchmark, c_loop, read):
    names = fetchgroup_loop.LIVE_METRICS
    flag = [] if read else ["--fetch-only"]
    ref = _json([REF_PYTHON, "-I", str(BENCH_DIR / "fetchgroup_loop.py")] + flag
                + ["live", HOST, str(FETCHES)])
    floor = _json([str(c_loop)] + flag + ["live", HOST, str(FETCHES)] + names)
    time.sleep(0.1)
    ours = _ours(benchmark, "live", [HOST, str(FETCHES)], read)
    if read:
        assert ours["values"] > 1000 * (FETCHES - 1)
    _report(benchmark, "live fetchgroup (%s)" % ("read" if read else "fetch only"), ours,
            ref, floor)


def test_fetchgroup_archive_interp(benchmark, c_loop, archive):
    step = "200"
    ref = _json([REF_PYTHON, "-I", str(BENCH_DIR / "fetchgroup_loop.py"), "archive", archive,
                 step] + PREFIXES)
    floor = _json([str(c_loop), "archive", archive, step] + PREFIXES)
    ours = _ours(benchmark, "archive", [archive, step] + PREFIXES, True)
    for side in (ref, floor):
        assert (side["values"], side["int_sum"]) == (ours["values"], ours["int_sum"]), side
        assert side["float_sum"] == pytest.approx(ours["float_sum"], rel=1e-12), side
    _report(benchmark, "archive fetchgroup, INTERP at 200 ms", ours, ref, floor)
