"""Bulk regular-grid reads against PM_MODE_INTERP loops, side by side in one run:
interpolate the metrics under some PMNS prefixes over the benchmark archive
(make_big_archive.py, size from PCP_BENCH_ARCHIVE_SIZE, default 16M) at the logging
interval (200 ms) and at 10x it, every value extracted:

  libpcp C   c/interp_loop.c (pmSetMode INTERP + pmFetch + pmExtractValue: the floor)
  official   interp_scan.py under /usr/bin/python3 -I (the official binding)
  drop-in    interp_scan.py's loop on this package's pcp.pmapi
  bulk grid  grid_scan.py: pcp.bulk.ArchiveReader(..., interval=step), timed by
             pytest-benchmark; its peak RSS measured alone in a subprocess

Values per CPU second and the ratios go into extra_info and are printed; the value
counts and integer checksums of all four sides must agree. PCP_BENCH_GRID_PREFIXES
(comma-separated, "" for every metric) changes the selection: with every metric of the
benchmark archive (~10,600 instances) libpcp 6.0.3 needs minutes per fetch, so the C
loop and the official binding then run PCP_BENCH_GRID_FETCHES fetches only (default 2)
and their checksums are not compared.

Run: PCP_BENCH_ARCHIVE_SIZE=100M .venv/bin/pytest benchmarks/test_bench_grid.py -q \\
         --benchmark-only -s
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import grid_scan
import interp_scan
import make_big_archive
import pytest

BENCH_DIR = Path(__file__).resolve().parent
SIZE = os.environ.get("PCP_BENCH_ARCHIVE_SIZE", "16M")
REF_PYTHON = os.environ.get("PCP_BENCH_REF_PYTHON", "/usr/bin/python3")
CC = os.environ.get("CC", "cc")
PREFIXES = os.environ.get("PCP_BENCH_GRID_PREFIXES",
                          "mem,kernel.all,network,filesys,swap,vfs").split(",")
ALL = PREFIXES == [""]
FETCHES = int(os.environ.get("PCP_BENCH_GRID_FETCHES", "2")) if ALL else 1 << 30
STEPS_MS = [200, 2000]
# libpcp's default derived metrics (disk.dev.await ...) would fail every lookup of "all"
ENV = dict(os.environ, PCP_DERIVED_CONFIG="")


@pytest.fixture(scope="module")
def archive():
    return str(make_big_archive.ensure_archive(make_big_archive.parse_size(SIZE), 2))


@pytest.fixture(scope="module")
def c_loop(tmp_path_factory):
    exe = tmp_path_factory.mktemp("grid") / "interp_loop"
    subprocess.run([CC, "-O2", "-Wall", "-o", str(exe), str(BENCH_DIR / "c" / "interp_loop.c"),
                    "-lpcp"], check=True, capture_output=True)
    return exe


def _json(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, env=ENV)
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("step_ms", STEPS_MS)
def test_grid_read(benchmark, archive, c_loop, step_ms):
    limit = ["--max-fetches", str(FETCHES)] if ALL else []
    ref = _json([REF_PYTHON, "-I", str(BENCH_DIR / "interp_scan.py"), archive, str(step_ms)]
                + PREFIXES + limit)
    floor = _json([str(c_loop), archive, str(step_ms)] + (["-n", str(FETCHES)] if ALL else [])
                  + PREFIXES)
    dropin = interp_scan.scan(archive, step_ms, PREFIXES, FETCHES)
    alone = _json([sys.executable, str(BENCH_DIR / "grid_scan.py"), archive, str(step_ms)]
                  + PREFIXES)
    ours = benchmark.pedantic(grid_scan.scan, args=(archive, step_ms, PREFIXES),
                              rounds=3, iterations=1)
    assert alone["values"] == ours["values"] and alone["int_sum"] == ours["int_sum"]
    if not ALL:
        for side in (ref, floor, dropin):
            assert side["values"] == ours["values"] and side["int_sum"] == ours["int_sum"], side
    rate = ours["values_per_cpu_s"]
    figures = {"libpcp": floor["values_per_cpu_s"], "official": ref["values_per_cpu_s"],
               "dropin": dropin["values_per_cpu_s"]}
    benchmark.extra_info.update(
        values=ours["values"], rows=ours["rows"], grid_values_per_cpu_s=rate,
        grid_peak_rss_kb=alone["maxrss_kb"],
        **{"%s_values_per_cpu_s" % k: v for k, v in figures.items()},
        **{"ratio_vs_%s" % k: rate / v for k, v in figures.items() if v})
    print("\nGRID %d ms: %d values in %d rows; bulk grid %.0f/s (peak RSS %d MB); "
          "libpcp C %.0f/s (x%.2f); official %.0f/s (x%.1f); drop-in %.0f/s (x%.2f)"
          % (step_ms, ours["values"], ours["rows"], rate, alone["maxrss_kb"] >> 10,
             figures["libpcp"], rate / figures["libpcp"], figures["official"],
             rate / figures["official"], figures["dropin"], rate / figures["dropin"]))
