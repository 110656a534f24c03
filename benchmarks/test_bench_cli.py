"""The everyday commands against the PCP tools they mirror (issue 36, item 6): dump -a
and info -f -a on QA archive 20180102 against pmdumplog and pminfo (identical outputs),
each command's -? against the tool's and the bare interpreter, and export's peak memory
on two archive sizes; see cli_costs.py, which does the measuring (and runs alone: python
benchmarks/cli_costs.py).

PCP_BENCH_CLI_BASELINE=DIR adds an earlier checkout as a side (before / after).

Run: .venv/bin/pytest benchmarks/test_bench_cli.py -q --benchmark-only -s
"""
import os

import cli_costs

RUNS = int(os.environ.get("PCP_BENCH_CLI_RUNS", "5"))
BASELINE = os.environ.get("PCP_BENCH_CLI_BASELINE")


def test_cli_costs(benchmark):
    parts = benchmark.pedantic(cli_costs.report, args=(RUNS, BASELINE), rounds=1,
                               iterations=1)
    for part, table in parts.items():
        for label, row in table.items():
            benchmark.extra_info["%s: %s" % (part, label)] = row
