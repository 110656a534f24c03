"""What opening an archive context costs, side by side in one run (issue 17 section 4,
issue 12's "fromOptions must not cost more than the official binding's"):

  open         pmContext(PM_CONTEXT_ARCHIVE, archive) and its close
  lookup       the same with pmLookupName of 3 names and pmLookupDescs between (what a
               script does next: work put off at open is paid here)
  fromoptions  pmContext.fromOptions(opts, ["bench", "-a", archive]) and its close

on a pmlogger recording of 3 metrics (tiny: the fixed costs of an open), small pmlogger
archives (the test corpus' v2 recording, 98 descriptors, and its pmlogger -V 3 twin,
tests/support/archives.py) and on the benchmark archive (make_big_archive.py, size from
PCP_BENCH_ARCHIVE_SIZE, default 16M, whose .meta has 789 descriptors):

  reference  open_cost.py under /usr/bin/python3 -I (the official binding), timing its
             own CPU in a subprocess
  ours       the same workload functions on this package, timed by pytest-benchmark, with
             the CPU time of each round taken the same way

CPU milliseconds per operation (median of the rounds) and the ratio official / ours
(above 1: ours is cheaper) go into extra_info and are printed. Both sides must see the
same metrics and archive start.

Run: .venv/bin/pytest benchmarks/test_bench_open.py -q --benchmark-only -s
"""
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import make_big_archive
import open_cost
import pytest

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / "tests"))

from support import archives  # noqa: E402  (the pmlogger corpus of the tests)

SIZE = os.environ.get("PCP_BENCH_ARCHIVE_SIZE", "16M")
REF_PYTHON = os.environ.get("PCP_BENCH_REF_PYTHON", "/usr/bin/python3")
ROUNDS = int(os.environ.get("PCP_BENCH_ROUNDS", "15"))
ROUND_SECONDS = float(os.environ.get("PCP_BENCH_ROUND_SECONDS", "0.2"))
ARCHIVES = ["tiny", "v2", "v3native", "big"]


def _tiny_archive(where):
    """A pmlogger recording of the three metrics the lookup workload asks for: an
    archive where an open is nothing but its fixed costs."""
    config = where / "config"
    config.write_text("log mandatory on 100 msec {\n%s\n}\n" % "\n".join(open_cost.LOOKUP_NAMES))
    base = where / "tiny"
    subprocess.run(["pmlogger", "-c", str(config), "-s", "10", "-t", "100msec", str(base)],
                   check=True, capture_output=True, timeout=120, cwd=str(where))  # its log too
    return str(base)


@pytest.fixture(scope="module")
def archive_paths(tmp_path_factory):
    corpus = archives.get_corpus()
    big = make_big_archive.ensure_archive(make_big_archive.parse_size(SIZE), 2)
    tiny = _tiny_archive(tmp_path_factory.mktemp("open-cost"))
    return {"tiny": tiny, "v2": corpus["v2"], "v3native": corpus["v3native"], "big": str(big)}


def _reference(kind, archive):
    cmd = [REF_PYTHON, "-I", str(BENCH_DIR / "open_cost.py"), kind, archive,
           "--rounds", str(ROUNDS), "--round-seconds", str(ROUND_SECONDS)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("which", ARCHIVES)
@pytest.mark.parametrize("kind", open_cost.WORKLOADS)
def test_open_cost(benchmark, archive_paths, kind, which):
    archive = archive_paths[which]
    ref = _reference(kind, archive)
    op = open_cost.workload(kind, archive)
    ops, _ = open_cost.timed_rounds(op, 1, ROUND_SECONDS)
    per_op = []

    def one_round():
        t0 = time.process_time()
        for _ in range(ops):
            op()
        per_op.append((time.process_time() - t0) / ops * 1e3)

    benchmark.pedantic(one_round, rounds=ROUNDS, iterations=1)
    ours = {"cpu_ms_per_op": statistics.median(per_op), "best_cpu_ms_per_op": min(per_op)}
    ours.update(open_cost.facts(archive))
    assert (ours["metrics"], ours["start"]) == (ref["metrics"], ref["start"]), (ours, ref)
    ratio = ref["cpu_ms_per_op"] / ours["cpu_ms_per_op"]
    benchmark.extra_info.update(
        archive=which, workload=kind, ops_per_round=ops, metrics=ours["metrics"],
        ours_cpu_ms=ours["cpu_ms_per_op"], ours_best_cpu_ms=ours["best_cpu_ms_per_op"],
        reference_cpu_ms=ref["cpu_ms_per_op"], reference_best_cpu_ms=ref["best_cpu_ms_per_op"],
        reference_over_ours=ratio)
    print("\nOPEN %-11s %-8s (%d sample.*): ours %.3f ms CPU (best %.3f), official %.3f ms "
          "(best %.3f): official/ours x%.2f"
          % (kind, which, ours["metrics"], ours["cpu_ms_per_op"], ours["best_cpu_ms_per_op"],
             ref["cpu_ms_per_op"], ref["best_cpu_ms_per_op"], ratio))
