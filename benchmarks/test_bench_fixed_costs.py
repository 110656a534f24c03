"""Fixed costs (issue 34), official binding and this package side by side: short programs
run as processes, one call in a warm process, and the import-time summary; see
fixed_costs.py, which does the measuring (and runs alone: python benchmarks/fixed_costs.py).

PCP_BENCH_FIXED_BASELINE=DIR adds an earlier checkout as a side (before / after).

Run: .venv/bin/pytest benchmarks/test_bench_fixed_costs.py -q --benchmark-only -s
"""
import os

import fixed_costs
import pytest

RUNS = int(os.environ.get("PCP_BENCH_FIXED_RUNS", "5"))
BASELINE = os.environ.get("PCP_BENCH_FIXED_BASELINE")    # fixed_costs.py's --baseline


@pytest.mark.parametrize("part", ["processes", "calls", "instructions", "imports"])
def test_fixed_costs(benchmark, part):
    parts = benchmark.pedantic(fixed_costs.report, args=(RUNS, (part,), BASELINE), rounds=1,
                               iterations=1)
    for label, row in parts.get(part, {}).items():
        benchmark.extra_info[label] = row
