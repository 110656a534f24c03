#!/usr/bin/env python3
"""The everyday commands of pcp-native side by side with the PCP tools they mirror
(issue 36, item 6), in one run: CPU (user + system of the child) and, for export, the
peak memory of the process (VmHWM), with the ratios to PCP's C tools.

  dump -a QA          pcp-native dump -a 20180102  against  pmdumplog -a 20180102
                      (494,193 lines; the outputs must be identical)
  info -f -a QA       pcp-native info -f -a 20180102  against  pminfo -f -a 20180102
                      (identical outputs); info -d and info -l likewise
  COMMAND -?          each command's usage against the PCP tool's, and `python -c pass`
                      (the interpreter alone: the floor of any Python command)
  export (memory)     pcp-native export -a 20180102 -o FILE.csv and FILE.parquet: peak
                      resident memory, and the same over a larger archive
                      (make_big_archive.py, 16M): CSV flat in the archive's size once
                      export streams by chunks; wide Parquet grows with its footer (about
                      1 kB per column and row group, held by pyarrow until the file closes)

pcp-native runs under a "wheel-like" virtualenv of this Python (the package found through
a static .pth file, byte-compiled, as an installed wheel runs; see fixed_costs.py), without
PYTHONUNBUFFERED and PYTHONDONTWRITEBYTECODE. The runs are interleaved and the medians
taken (a shared machine). --baseline DIR adds another checkout (built) as a side, for
before / after figures from one run.

    cli_costs.py [--runs N] [--baseline DIR] [--no-memory]

test_bench_cli.py runs the same under pytest (--benchmark-only -s).
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile

import fixed_costs

QA_ARCHIVE = fixed_costs.QA_ARCHIVE

# the peak of the child's own image: VmHWM (ru_maxrss is carried across execve)
PEAK = r'''
import re, sys
from pcp.cli import main
status = main(sys.argv[1:])
with open("/proc/self/status") as f:
    sys.stderr.write("VmHWM %d\n" % int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1)))
sys.exit(status)
'''
RUN = "import sys; from pcp.cli import main; sys.exit(main(sys.argv[1:]))"


def cases():
    """(label, PCP's argv, our command's words, whether the outputs must be identical,
    the exit status both give)."""
    out = [("dump -a 20180102", [fixed_costs._tool("pmdumplog"), "-a", QA_ARCHIVE],
            ["dump", "-a", QA_ARCHIVE], True, 0),
           ("info -f -a 20180102", [fixed_costs._tool("pminfo"), "-f", "-a", QA_ARCHIVE],
            ["info", "-f", "-a", QA_ARCHIVE], True, 0)]
    # info's other forms: descriptors alone (no values), and labels (a fetch per metric
    # for pminfo, the merges of label sets)
    for flags in ("-d", "-l"):
        out.append(("info %s -a 20180102" % flags,
                    [fixed_costs._tool("pminfo"), flags, "-a", QA_ARCHIVE],
                    ["info", flags, "-a", QA_ARCHIVE], True, 0))
    for command, tool in (("info", "pminfo"), ("dump", "pmdumplog"), ("fetch", "pmval"),
                          ("export", "pmrep")):
        out.append(("%s -? (%s -?)" % (command, tool), [fixed_costs._tool(tool), "-?"],
                    [command, "-?"], False, 1))
    return out


def _env():
    env = dict(os.environ, LC_ALL="C.UTF-8", TZ="UTC")
    for name in ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED"):
        env.pop(name, None)
    return env


def _run(argv, status=0):
    """(stdout, stderr, CPU seconds) of one child."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(argv, capture_output=True, env=_env(), timeout=900,
                          cwd=tempfile.gettempdir())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != status:
        raise RuntimeError("%s: status %d\n%s" % (" ".join(argv), proc.returncode,
                                                   proc.stderr[-2000:].decode()))
    return proc.stdout, proc.stderr, ((after.ru_utime - before.ru_utime)
                                      + (after.ru_stime - before.ru_stime))


def measure_cpu(sides, runs):
    """{label: {side: median ms CPU}}: "PCP" the C tool, each of `sides` (name ->
    interpreter) pcp-native's command; "python -c pass" the interpreter alone."""
    table = {}
    # the floor of a Python command; its "PCP" is the official binding's interpreter
    table["python -c pass (the interpreter alone)"] = {
        side: statistics.median(_run([python, "-c", "pass"])[2] * 1e3 for _ in range(runs))
        for side, python in [("PCP", fixed_costs.REF_PYTHON)] + list(sides.items())}
    for label, tool, words, identical, status in cases():
        spent = {"PCP": []}
        spent.update((side, []) for side in sides)
        ref = None
        for _ in range(runs):
            out, _, cpu = _run(tool, status)
            ref = out
            spent["PCP"].append(cpu * 1e3)
            for side, python in sides.items():
                got, _, cpu = _run([python, "-c", RUN] + words, status)
                if identical:
                    assert got == ref, "%s: %s's output differs from PCP's" % (label, side)
                spent[side].append(cpu * 1e3)
        table[label] = {side: statistics.median(v) for side, v in spent.items()}
    return table


def peak_mb(python, words):
    _, err, _ = _run([python, "-c", PEAK] + words)
    line = [x for x in err.decode().splitlines() if x.startswith("VmHWM ")][-1]
    return int(line.split()[1]) / 1024


def measure_memory(sides, archives):
    """{label: {side: peak MB}} of export to CSV and to Parquet (wide), per archive."""
    table = {}
    with tempfile.TemporaryDirectory() as where:
        for label, path in archives:
            for suffix in ("csv", "parquet"):
                target = os.path.join(where, "out." + suffix)
                table["%s to %s" % (label, suffix)] = {
                    side: peak_mb(python, ["export", "-a", path, "-o", target])
                    for side, python in sides.items()}
    return table


def table_text(title, unit, table, sides, against="PCP"):
    columns = [against] + [s for s in sides if s != against]
    head = "| %s | %s | %s |" % (title, " | ".join("%s (%s)" % (s, unit) for s in columns),
                                  " | ".join("%s/%s" % (s, against) for s in columns[1:]))
    lines = [head, "|---|" + "---:|" * (2 * len(columns) - 1)]
    for label, row in table.items():
        cells = ["%.1f" % row[s] if s in row else "-" for s in columns]
        cells += ["%.2fx" % (row[s] / row[against]) if s in row and row.get(against)
                  else "-" for s in columns[1:]]
        lines.append("| %s | %s |" % (label, " | ".join(cells)))
    return "\n".join(lines)


def report(runs=5, baseline=None, memory=True):
    fixed_costs.prepare()
    with tempfile.TemporaryDirectory() as where:
        sides = {"pcp-native": fixed_costs.wheel_like_python(os.path.join(where, "venv"))}
        if baseline:
            fixed_costs.prepare(baseline)
            sides["baseline"] = fixed_costs.wheel_like_python(os.path.join(where, "base"),
                                                              baseline)
        parts = {"cpu": measure_cpu(sides, runs)}
        print(table_text("command", "ms CPU", parts["cpu"], sides), flush=True)
        if memory:
            import make_big_archive

            big = str(make_big_archive.ensure_archive(make_big_archive.parse_size(
                os.environ.get("PCP_BENCH_ARCHIVE_SIZE", "16M")), 2))
            archives = [("export 20180102 (7 MB)", QA_ARCHIVE),
                        ("export the benchmark archive (16 MB)", big)]
            parts["memory"] = measure_memory(sides, archives)
            first = next(iter(sides))
            print(table_text("export", "MB peak", parts["memory"], sides, against=first),
                  flush=True)
    return parts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--baseline", help="another checkout of this package, built")
    ap.add_argument("--no-memory", action="store_true")
    args = ap.parse_args()
    report(args.runs, args.baseline, not args.no_memory)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
