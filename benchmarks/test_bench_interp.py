"""PM_MODE_INTERP benchmarks, side by side in one run: interpolate the metrics under
some PMNS prefixes over the benchmark archive (make_big_archive.py, size from
PCP_BENCH_ARCHIVE_SIZE, default 16M) at the logging interval (200 ms) and at 10x it,
pmExtractValue of every value:

  reference  interp_scan.py under /usr/bin/python3 -I (the official binding)
  libpcp C   c/interp_loop.c (the floor)
  ours       interp_scan.py's loop on this package, timed by pytest-benchmark

Ratios (values per CPU second, ours / theirs) go into extra_info and are printed; the
checksums of the values must agree on all three sides. The whole PMNS is not used:
libpcp 6.0.3 takes minutes per interpolated fetch of all ~10,600 instances of that
archive (its bound lists are searched linearly per instance).

Also the FORW pmFetch scan of the same metrics (test_forw_fetch_scan: ours and the
official binding), and the bulk regular-grid read of them (test_grid_read: values per
CPU second against the three pmFetch loops, and its peak RSS).

And the floor under every scan that must reject damaged records as libpcp does
(test_record_floor: c/record_floor.c reads and checks the structure of every record,
decoding nothing; beside it this package's own check, which every archive reader makes),
set against the issue's grid target of 10x the libpcp C loop.

Run: .venv/bin/pytest benchmarks/test_bench_interp.py -q --benchmark-only -s
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import interp_scan
import make_big_archive
import pytest

BENCH_DIR = Path(__file__).resolve().parent
SIZE = os.environ.get("PCP_BENCH_ARCHIVE_SIZE", "16M")
REF_PYTHON = os.environ.get("PCP_BENCH_REF_PYTHON", "/usr/bin/python3")
CC = os.environ.get("CC", "cc")
# derived metrics (disk.dev.await, kernel.cpu.util.*: libpcp's default derived
# configuration) are left out until pcp-native has derived metrics
PREFIXES = ["mem", "kernel.all", "network", "filesys", "swap", "vfs"]
STEPS_MS = [200, 2000]
# the grid benchmark's selection (comma-separated; "" for every metric, where libpcp
# 6.0.3 needs minutes per fetch: the C loop and the official binding then run
# PCP_BENCH_GRID_FETCHES fetches only, default 2, and checksums are not compared)
GRID_PREFIXES = os.environ.get("PCP_BENCH_GRID_PREFIXES", ",".join(PREFIXES)).split(",")
ALL = GRID_PREFIXES == [""]
FETCHES = int(os.environ.get("PCP_BENCH_GRID_FETCHES", "2")) if ALL else 1 << 30
# libpcp's default derived metrics (disk.dev.await ...) would fail every lookup of "all"
ENV = dict(os.environ, PCP_DERIVED_CONFIG="")


@pytest.fixture(scope="module")
def archive():
    return str(make_big_archive.ensure_archive(make_big_archive.parse_size(SIZE), 2))


@pytest.fixture(scope="module")
def c_loop(tmp_path_factory):
    exe = tmp_path_factory.mktemp("interp") / "interp_loop"
    subprocess.run([CC, "-O2", "-Wall", "-o", str(exe), str(BENCH_DIR / "c" / "interp_loop.c"),
                    "-lpcp"], check=True, capture_output=True)
    return exe


@pytest.fixture(scope="module")
def record_floor(tmp_path_factory):
    exe = tmp_path_factory.mktemp("floor") / "record_floor"
    subprocess.run([CC, "-O2", "-Wall", "-o", str(exe), str(BENCH_DIR / "c" / "record_floor.c")],
                   check=True, capture_output=True)
    return exe


def _json(cmd, env=None):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, env=env)
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def api_floor_ns():
    return interp_scan.api_floor()


@pytest.mark.parametrize("step_ms", STEPS_MS)
def test_interp_scan(benchmark, archive, c_loop, api_floor_ns, step_ms):
    ref = _json([REF_PYTHON, "-I", str(BENCH_DIR / "interp_scan.py"), archive, str(step_ms)]
                + PREFIXES)
    floor = _json([str(c_loop), archive, str(step_ms)] + PREFIXES)
    ours = benchmark.pedantic(interp_scan.scan, args=(archive, step_ms, PREFIXES, 1 << 30),
                              rounds=3, iterations=1)
    for side in (ref, floor):
        assert side["values"] == ours["values"] and side["int_sum"] == ours["int_sum"], side
    # the loop's CPU time, as the other sides measure it (pytest-benchmark's wall time
    # also counts opening the archive, and the waits of a shared machine)
    rate = ours["values_per_cpu_s"]
    benchmark.extra_info.update(
        values=ours["values"], fetches=ours["fetches"], ours_values_per_s=rate,
        reference_values_per_cpu_s=ref["values_per_cpu_s"],
        libpcp_values_per_cpu_s=floor["values_per_cpu_s"],
        ratio_vs_reference=rate / ref["values_per_cpu_s"],
        ratio_vs_libpcp=rate / floor["values_per_cpu_s"])
    print("\nINTERP %d ms: %d values; ours %.0f/s, official %.0f/s (x%.2f), libpcp C %.0f/s "
          "(x%.3f)" % (step_ms, ours["values"], rate, ref["values_per_cpu_s"],
                       rate / ref["values_per_cpu_s"], floor["values_per_cpu_s"],
                       rate / floor["values_per_cpu_s"]))
    # what the API's shape leaves: the same loop over the cheapest Python API and a free
    # fetch (interp_scan.api_floor), against the official binding's cost per value
    ref_ns, ours_ns = 1e9 / ref["values_per_cpu_s"], 1e9 / rate
    benchmark.extra_info.update(api_floor_ns=api_floor_ns, ours_ns=ours_ns, reference_ns=ref_ns)
    print("INTERP %d ms per value: ours %.0f ns, official %.0f ns; the API's floor %.0f ns, "
          "so a binding with a free fetch is at most x%.2f" % (
              step_ms, ours_ns, ref_ns, api_floor_ns, ref_ns / api_floor_ns))


def test_forw_fetch_scan(benchmark, archive):
    """The archive pmFetch path of PM_MODE_FORW: pmFetch of the same metrics from every
    record (the requested sets picked out of each record), pmExtractValue of every
    value; ours against the official binding."""
    ref = _json([REF_PYTHON, "-I", str(BENCH_DIR / "interp_scan.py"), archive, "0"]
                + PREFIXES + ["--mode", "forw"])
    ours = benchmark.pedantic(interp_scan.scan, args=(archive, 0, PREFIXES, 1 << 30, "forw"),
                              rounds=3, iterations=1)
    assert ref["values"] == ours["values"] and ref["int_sum"] == ours["int_sum"], ref
    rate = ours["values_per_cpu_s"]         # the loop's CPU time, as the reference's
    benchmark.extra_info.update(values=ours["values"], fetches=ours["fetches"],
                                ours_values_per_s=rate,
                                reference_values_per_cpu_s=ref["values_per_cpu_s"],
                                ratio_vs_reference=rate / ref["values_per_cpu_s"])
    print("\nFORW pmFetch: %d values; ours %.0f/s, official %.0f/s (x%.2f)"
          % (ours["values"], rate, ref["values_per_cpu_s"], rate / ref["values_per_cpu_s"]))


@pytest.mark.parametrize("step_ms", STEPS_MS)
def test_grid_read(benchmark, archive, c_loop, step_ms):
    """The bulk regular-grid read (pcp.bulk.ArchiveReader(..., interval=step)) against
    the same interpolation by the libpcp C loop, the official binding and the drop-in;
    its peak RSS from a run alone."""
    limit = ["--max-fetches", str(FETCHES)] if ALL else []
    ref = _json([REF_PYTHON, "-I", str(BENCH_DIR / "interp_scan.py"), archive, str(step_ms)]
                + GRID_PREFIXES + limit, ENV)
    floor = _json([str(c_loop), archive, str(step_ms)] + (["-n", str(FETCHES)] if ALL else [])
                  + GRID_PREFIXES, ENV)
    dropin = interp_scan.scan(archive, step_ms, GRID_PREFIXES, FETCHES)
    alone = _json([sys.executable, str(BENCH_DIR / "interp_scan.py"), archive, str(step_ms)]
                  + GRID_PREFIXES + ["--mode", "grid"])
    ours = benchmark.pedantic(interp_scan.grid_scan, args=(archive, step_ms, GRID_PREFIXES),
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
        grid_peak_rss_kb=alone["maxrss_kb"], swept_rows=ours["swept_rows"],
        **{"%s_values_per_cpu_s" % k: v for k, v in figures.items()},
        **{"ratio_vs_%s" % k: rate / v for k, v in figures.items() if v})
    print("\nGRID %d ms: %d values in %d rows (%d swept in one pass); bulk grid %.0f/s "
          "(peak RSS %d MB); libpcp C %.0f/s (x%.2f); official %.0f/s (x%.1f); drop-in "
          "%.0f/s (x%.2f)"
          % (step_ms, ours["values"], ours["rows"], ours["swept_rows"], rate,
             alone["maxrss_kb"] >> 10,
             figures["libpcp"], rate / figures["libpcp"], figures["official"],
             rate / figures["official"], figures["dropin"], rate / figures["dropin"]))


def test_record_floor(benchmark, archive, c_loop, record_floor):
    """How much of the grid target's budget (10x the libpcp C loop's values per CPU
    second, i.e. a tenth of its CPU time) reading the archive alone takes: the CPU of
    c/record_floor.c checking every record's structure as libpcp's decoder does, with
    nothing decoded (best of 9 passes, page mapping included)."""
    volumes = sorted(str(p) for p in Path(archive).parent.glob(Path(archive).name + ".[0-9]*"))
    floor = _json([str(record_floor), "-r", "9"] + volumes)
    ours = benchmark.pedantic(interp_scan.record_check, args=(volumes,), rounds=1, iterations=1)
    assert ours["records"] == floor["records"]
    benchmark.extra_info.update(records=floor["records"], values=floor["values"],
                                floor_cpu_s=floor["cpu_s"], check_cpu_s=ours["cpu_s"])
    print("\nFLOOR: record_floor.c %.1f ms, this package's record check (every reader's, "
          "pcp_archive_record_read) %.1f ms" % (floor["cpu_s"] * 1e3, ours["cpu_s"] * 1e3))
    for step_ms in STEPS_MS:
        loop = _json([str(c_loop), archive, str(step_ms)] + PREFIXES)
        budget = loop["cpu_s"] / 10
        benchmark.extra_info["budget_%d_ms_cpu_s" % step_ms] = budget
        print("\nFLOOR %d ms: checking the %d records (%d values) costs %.1f ms of CPU; 10x "
              "the libpcp C loop (%.0f ms) allows %.1f ms for the whole grid read: the "
              "check alone takes %.0f%% of it" % (
                  step_ms, floor["records"], floor["values"], floor["cpu_s"] * 1e3,
                  budget * 1e4, budget * 1e3, 100 * floor["cpu_s"] / budget))
