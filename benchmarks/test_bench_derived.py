"""The iostat benchmark, side by side in one run: the disk.dev derived metrics of the
machine's iostat.conf (await, r_await, avg_qlen, avg_rqsz, util ...) over every record
of an archive of DISKS disks (make_iostat_archive.py; PCP_BENCH_IOSTAT_RECORDS,
default 4000, and PCP_BENCH_IOSTAT_DISKS, default 16), every value extracted:

  reference  derived_scan.py under /usr/bin/python3 -I (the official binding's pmFetch)
  libpcp C   c/derived_loop.c (pmLoadDerivedConfig, pmFetch, pmExtractValue)
  ours       the drop-in pmFetch loop (derived_scan.scan) and the bulk reader's derived
             columns (derived_scan.bulk_scan: read_archive of the same names), timed by
             pytest-benchmark

Values per CPU second of each side's loop; ratios go into extra_info and are printed.
The values counted and their checksums must agree on every side (the float sum up to
the order of summation for the bulk columns). Targets: bulk >= 10x the official
binding and faster than the C loop.

Run: .venv/bin/pytest benchmarks/test_bench_derived.py -q --benchmark-only -s
"""
import json
import os
import re
import subprocess
from pathlib import Path

import derived_scan
import make_iostat_archive
import pytest

BENCH_DIR = Path(__file__).resolve().parent
REF_PYTHON = os.environ.get("PCP_BENCH_REF_PYTHON", "/usr/bin/python3")
CC = os.environ.get("CC", "cc")
RECORDS = int(os.environ.get("PCP_BENCH_IOSTAT_RECORDS", "4000"))
DISKS = int(os.environ.get("PCP_BENCH_IOSTAT_DISKS", "16"))


def _config() -> str:
    from pcp._core.config import pmGetConfig
    return os.path.join(pmGetConfig("PCP_VAR_DIR") or "/var/lib/pcp", "config", "derived",
                        "iostat.conf")


@pytest.fixture(scope="module")
def workload():
    config = _config()
    with open(config, encoding="utf-8") as f:
        names = re.findall(r"^(disk\.dev\.\w+)\s*=", f.read(), re.M)
    return make_iostat_archive.ensure_archive(RECORDS, DISKS), config, names


def _json(cmd):
    env = dict(os.environ, PCP_DERIVED_CONFIG="")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def others(workload, tmp_path_factory):
    """The official binding's and libpcp's figures (run once for both tests)."""
    archive, config, names = workload
    exe = tmp_path_factory.mktemp("derived") / "derived_loop"
    subprocess.run([CC, "-O2", "-Wall", "-o", str(exe), str(BENCH_DIR / "c" / "derived_loop.c"),
                    "-lpcp"], check=True, capture_output=True)
    ref = _json([REF_PYTHON, "-I", str(BENCH_DIR / "derived_scan.py"), archive, config] + names)
    floor = _json([str(exe), archive, config] + names)
    assert ref["values"] == floor["values"] > 0, (ref, floor)
    return ref, floor


@pytest.mark.parametrize("path", ["dropin", "bulk"])
def test_iostat_derived(benchmark, workload, others, path):
    archive, config, names = workload
    ref, floor = others
    run = derived_scan.scan if path == "dropin" else derived_scan.bulk_scan
    ours = benchmark.pedantic(run, args=(archive, config, names), rounds=5, iterations=1)
    assert ours["values"] == ref["values"], (ours, ref)
    if path == "dropin":
        assert ours["float_sum"] == ref["float_sum"], (ours, ref)
    else:
        assert ours["float_sum"] == pytest.approx(ref["float_sum"], rel=1e-9), (ours, ref)
    rate = ours["values_per_cpu_s"]
    benchmark.extra_info.update(
        values=ours["values"], records=ref["fetches"], ours_values_per_s=rate,
        reference_values_per_cpu_s=ref["values_per_cpu_s"],
        libpcp_values_per_cpu_s=floor["values_per_cpu_s"],
        ratio_vs_reference=rate / ref["values_per_cpu_s"],
        ratio_vs_libpcp=rate / floor["values_per_cpu_s"])
    print("\nIOSTAT %s: %d values over %d records; ours %.0f/s, official %.0f/s (x%.1f), "
          "libpcp C %.0f/s (x%.2f)" % (path, ours["values"], ref["fetches"], rate,
                                        ref["values_per_cpu_s"], rate / ref["values_per_cpu_s"],
                                        floor["values_per_cpu_s"],
                                        rate / floor["values_per_cpu_s"]))
