"""Archive-scan benchmarks: a full forward scan of a large archive, every value.

One archive (made once and cached by make_big_archive.py; size from
PCP_BENCH_ARCHIVE_SIZE, default 64M, version from PCP_BENCH_ARCHIVE_VERSION) is
scanned by:

  (a) the official binding   archive_scan.py dropin under /usr/bin/python3 -I, on the
                             first PCP_BENCH_ARCHIVE_REF_RECORDS records (it is slow)
  (b) libpcp C               c/archive_scan.c, the whole archive
  ours                       dropin (the same loop as (a), same prefix), arrays
                             (pmFetchArchive + as_arrays()) and bulk
                             (pcp.bulk.scan_archive; skipped while it does not exist)

Every side runs in its own subprocess for values/s and peak RSS (see
run_archive_bench.py; the whole-archive sides PCP_BENCH_ARCHIVE_REPEAT times, the
best run shown; PCP_BENCH_ARCHIVE_STAT=median or cpu change which figure the ratios
use), and each of ours is also timed in-process by pytest-benchmark
(PCP_BENCH_ARCHIVE_ROUNDS rounds).  The table printed at the end (and
benchmarks/archive_results.json) holds the subprocess figures.  A test fails when a
side errors or when its checksum of the values differs from libpcp's over the same
records; the speed targets (arrays >= 50x (a), bulk > (b)) are reported, not enforced.

Run: /work/venv-bench/bin/pytest benchmarks/test_bench_archive.py -q --benchmark-only
For the 100M / 1G figures use run_archive_bench.py.
"""

import os

import pytest

import archive_scan
import make_big_archive
import run_archive_bench

ARCHIVE_SIZE = os.environ.get("PCP_BENCH_ARCHIVE_SIZE", "64M")
ARCHIVE_VERSION = int(os.environ.get("PCP_BENCH_ARCHIVE_VERSION", "2"))
ROUNDS = int(os.environ.get("PCP_BENCH_ARCHIVE_ROUNDS", "3"))
REF_RECORDS = int(os.environ.get("PCP_BENCH_ARCHIVE_REF_RECORDS", "100"))
REPEAT = int(os.environ.get("PCP_BENCH_ARCHIVE_REPEAT", "3"))

MODES = ("dropin", "arrays", "bulk", "columns")


@pytest.fixture(scope="session")
def scan_archive_path():
    try:
        return make_big_archive.ensure_archive(make_big_archive.parse_size(ARCHIVE_SIZE),
                                               ARCHIVE_VERSION)
    except Exception as exc:
        pytest.fail("cannot make the benchmark archive: %s" % exc, pytrace=False)


@pytest.fixture(scope="session")
def archive_row(scan_archive_path, bench_tmpdir):
    """Every side, each in its own subprocess (the table's figures)."""
    c_exe = run_archive_bench.build_c(bench_tmpdir)
    row = run_archive_bench.bench_archive(
        scan_archive_path, run_archive_bench.SIDES, c_exe, bench_tmpdir, repeat=REPEAT,
        ref_records=REF_RECORDS, ref_repeat=1, log=lambda m: None)
    run_archive_bench.SESSION_ROWS.append(row)
    return row


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("mode", MODES)
def test_archive_scan(mode, benchmark, archive_row, scan_archive_path):
    benchmark.group = "archive-scan %s v%d" % (ARCHIVE_SIZE, ARCHIVE_VERSION)
    if mode == "bulk":
        why = archive_scan.bulk_missing()
        if why:
            pytest.skip("bulk path not benchmarked: " + why)
    prefix = REF_RECORDS if mode == "dropin" else 0
    if prefix >= archive_row["records"]:
        prefix = 0

    # ours, in-process, timed by pytest-benchmark
    last = {}

    def op():
        last["r"] = archive_scan.scan(mode, scan_archive_path, prefix)

    benchmark.pedantic(op, rounds=ROUNDS, iterations=1, warmup_rounds=0)
    inproc = last["r"]

    sides = archive_row["sides"]
    ours = sides["ours-" + mode]
    benchmark.extra_info.update({
        "values": inproc["values"],
        "values_per_s_last_round": inproc["values_per_s"],
        "subprocess": {k: v for k, v in ours.items() if k != "cmd"},
        "reference": sides.get("reference"),
        "libpcp_c": sides.get("c"),
        "over_reference": ours.get("over_reference"),
        "over_c": ours.get("over_c"),
    })

    failed = ["%s: %s" % (s, sides[s]["error"]) for s in ("reference", "c", "ours-" + mode)
              if sides.get(s, {}).get("error")]
    if failed:
        pytest.fail("; ".join(failed), pytrace=False)
    # the in-process scan and the subprocess one must both agree with libpcp
    cref = archive_row["c_prefix_%d" % prefix] if prefix else sides["c"]
    for what, res in (("in-process", inproc), ("subprocess", ours)):
        diff = run_archive_bench.compare(res, cref)
        assert diff is None, "%s %s scan disagrees with libpcp: %s" % (what, mode, diff)
