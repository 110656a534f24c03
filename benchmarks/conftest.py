"""Fixtures for the live side-by-side benchmarks (see README.md).

* ``run_reference(bench, ...)`` runs ref_live.py under the official binding
  (``/usr/bin/python3 -I``) in a subprocess and returns its JSON dict.
* ``run_c(prog, ...)`` compiles benchmarks/c/<prog>.c against libpcp (once per
  session, into a temp dir) and runs it, returning its JSON dict.
* ``lookup_names_file`` is a file of the first LOOKUP_COUNT PMNS leaf names.
* ``bench_results`` collects one row per benchmark; at session end the rows
  are written to benchmarks/results.json and printed as a Markdown table.

Failures on any side are recorded as ``{"error": ...}`` and shown in the
table instead of aborting the session.

Environment knobs: PCP_BENCH_ROUNDS (15), PCP_BENCH_ROUND_SECONDS (0.2),
PCP_BENCH_HOST (local:), PCP_BENCH_REF_PYTHON (/usr/bin/python3), CC (cc),
PCP_BENCH_RESULTS (benchmarks/results.json), PCP_BENCH_STAT (median|best:
which round the table's rates and ratios use; results.json has both).
"""

import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import ref_live  # noqa: E402  (workload definitions; imports no pcp)

REF_SCRIPT = BENCH_DIR / "ref_live.py"
C_DIR = BENCH_DIR / "c"
RESULTS_PATH = Path(os.environ.get("PCP_BENCH_RESULTS", BENCH_DIR / "results.json"))
REF_PYTHON = os.environ.get("PCP_BENCH_REF_PYTHON", "/usr/bin/python3")
CC = os.environ.get("CC", "cc")
HOST = os.environ.get("PCP_BENCH_HOST", "local:")
ROUNDS = int(os.environ.get("PCP_BENCH_ROUNDS", "15"))
ROUND_SECONDS = float(os.environ.get("PCP_BENCH_ROUND_SECONDS", "0.2"))
STAT = os.environ.get("PCP_BENCH_STAT", "median")  # or "best" (fastest round)
SUBPROCESS_TIMEOUT = 100


# --------------------------------------------------------------------------
# Result collection


class BenchResults:
    """Rows keyed by benchmark id, in the order the benchmarks ran."""

    SIDES = ("ours", "reference", "c")

    def __init__(self):
        self.rows = {}

    def row(self, bench, **meta):
        row = self.rows.setdefault(bench, {"bench": bench})
        row.update(meta)
        return row

    def record(self, bench, side, data):
        assert side in self.SIDES, side
        self.row(bench)[side] = data

    # -- derived figures --------------------------------------------------

    @staticmethod
    def rate(data, stat=None):
        """Work units per second (round trips, values or names), or None.

        stat "median" uses the median round, "best" the fastest round."""
        key = "best_ops_per_s" if (stat or STAT) == "best" else "ops_per_s"
        if not isinstance(data, dict) or data.get("error") or not data.get(key):
            return None
        return data[key] * data.get("units_per_op", 1)

    def finish_row(self, row):
        for side in self.SIDES:
            if self.rate(row.get(side)) is not None:
                row[side]["units_per_s"] = self.rate(row[side], "median")
                row[side]["best_units_per_s"] = self.rate(row[side], "best")
        for stat, suffix in ((STAT, ""), ("median", "_median"), ("best", "_best")):
            ours, ref, c = (self.rate(row.get(s), stat) for s in self.SIDES)
            row["ours_over_reference" + suffix] = ours / ref if ours and ref else None
            row["ours_over_c" + suffix] = ours / c if ours and c else None
        target = row.get("target")
        if target:
            ratio = row["ours_over_reference" if target["vs"] == "reference" else "ours_over_c"]
            target["met"] = None if ratio is None else ratio >= target["min_ratio"]
        return row

    def as_json(self):
        return {
            "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host": HOST,
            "machine": {"node": platform.node(), "cpus": os.cpu_count(),
                        "python": sys.version.split()[0]},
            "method": {"rounds": ROUNDS, "round_seconds": ROUND_SECONDS,
                       "statistic": STAT,
                       "note": "each side: per-round mean time per op; units_per_s from "
                               "the median round, best_units_per_s from the fastest; "
                               "ours_over_* use PCP_BENCH_STAT"},
            "benchmarks": [self.finish_row(r) for r in self.rows.values()],
        }

    # -- Markdown ---------------------------------------------------------

    @staticmethod
    def _fmt_rate(data):
        if data is None:
            return "not run"
        if data.get("error"):
            err = " ".join(str(data["error"]).split())
            if len(err) > 70:
                err = err[:67] + "..."
            return "ERROR: " + err.replace("|", "/")
        rate = BenchResults.rate(data)
        return "{:,.0f}".format(rate) if rate >= 100 else "{:,.2f}".format(rate)

    @staticmethod
    def _fmt_ratio(x):
        return "-" if x is None else "{:.2f}x".format(x)

    def markdown(self):
        lines = [
            "| benchmark | unit | ours | reference | libpcp C | ours/reference | ours/C | target |",
            "|---|---|---:|---:|---:|---:|---:|---|",
        ]
        for row in self.rows.values():
            self.finish_row(row)
            target = row.get("target")
            if target:
                mark = {True: "met", False: "MISSED", None: "?"}[target.get("met")]
                tgt = "ours/{} >= {:g} ({})".format(
                    "C" if target["vs"] == "c" else "ref", target["min_ratio"], mark)
            else:
                tgt = "-"
            lines.append("| {} | {} | {} | {} | {} | {} | {} | {} |".format(
                row.get("title", row["bench"]), row.get("unit", "ops/s"),
                self._fmt_rate(row.get("ours")), self._fmt_rate(row.get("reference")),
                self._fmt_rate(row.get("c")),
                self._fmt_ratio(row.get("ours_over_reference")),
                self._fmt_ratio(row.get("ours_over_c")), tgt))
        return "\n".join(lines)


_RESULTS = BenchResults()


@pytest.fixture(scope="session")
def bench_results():
    return _RESULTS


def pytest_sessionfinish(session, exitstatus):
    if not _RESULTS.rows:
        return
    try:
        RESULTS_PATH.write_text(json.dumps(_RESULTS.as_json(), indent=2) + "\n")
    except OSError as exc:  # never fail the session over the report
        sys.stderr.write("could not write %s: %s\n" % (RESULTS_PATH, exc))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    import run_archive_bench  # archive-scan table (test_bench_archive.py), if any ran

    if run_archive_bench.SESSION_ROWS:
        terminalreporter.write_sep("=", "archive scan: values/s and peak RSS per side")
        run_archive_bench.session_summary(terminalreporter.write_line)
    if not _RESULTS.rows:
        return
    tr = terminalreporter
    tr.write_sep("=", "pcp-native vs reference vs libpcp C (units/s, higher is better)")
    tr.write_line(_RESULTS.markdown())
    tr.write_line("")
    tr.write_line("%s of %d rounds x ~%gs per side; ratios >1 mean ours is faster; "
                  "details in %s" % (STAT, ROUNDS, ROUND_SECONDS, RESULTS_PATH))


# --------------------------------------------------------------------------
# Subprocess runners


def _run_json(cmd, cwd):
    """Run cmd, parse the last stdout line as JSON; errors become dicts."""
    try:
        proc = subprocess.run(cmd, cwd=str(cwd), capture_output=True, text=True,
                              timeout=SUBPROCESS_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": "%s: %s" % (type(exc).__name__, exc), "cmd": shlex.join(cmd)}
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    try:
        data = json.loads(lines[-1])
    except (IndexError, ValueError):
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        data = {"error": "exit %d: %s" % (proc.returncode, tail)}
    if proc.returncode != 0 and not data.get("error"):
        data["error"] = "exit status %d" % proc.returncode
    data["cmd"] = shlex.join(cmd)
    return data


def _common_args():
    return ["--rounds", str(ROUNDS), "--round-seconds", str(ROUND_SECONDS), "--host", HOST]


@pytest.fixture(scope="session")
def bench_tmpdir(tmp_path_factory):
    return tmp_path_factory.mktemp("pcp-bench")


@pytest.fixture(scope="session")
def run_reference(bench_tmpdir):
    """run_reference(bench, *metrics, names_file=None) -> dict (see ref_live.py).

    -I keeps /work/main (whose pcp/ would shadow the system package) and
    PYTHON* variables out of the reference interpreter; cwd is a temp dir.
    """

    def run(bench, *metrics, names_file=None):
        cmd = [REF_PYTHON, "-I", str(REF_SCRIPT), bench, *metrics, *_common_args()]
        if names_file:
            cmd += ["--names-file", str(names_file)]
        return _run_json(cmd, bench_tmpdir)

    return run


@pytest.fixture(scope="session")
def c_clients(bench_tmpdir):
    """build(prog) -> path of the compiled client, or raises RuntimeError."""
    built = {}

    def build(prog):
        if prog not in built:
            src = C_DIR / (prog + ".c")
            exe = bench_tmpdir / prog
            cmd = [CC, "-O2", "-Wall", "-I", str(C_DIR), "-o", str(exe), str(src), "-lpcp"]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
                ok = proc.returncode == 0
                msg = (proc.stderr.strip().splitlines() or ["?"])[-1]
            except OSError as exc:
                ok, msg = False, str(exc)
            built[prog] = exe if ok else RuntimeError("build of %s failed: %s" % (prog, msg))
        if isinstance(built[prog], Exception):
            raise built[prog]
        return built[prog]

    return build


@pytest.fixture(scope="session")
def run_c(c_clients, bench_tmpdir):
    """run_c(prog, *args) -> dict printed by benchmarks/c/<prog>.c."""

    def run(prog, *args):
        try:
            exe = c_clients(prog)
        except RuntimeError as exc:
            return {"error": str(exc)}
        cmd = [str(exe), "-r", str(ROUNDS), "-t", str(ROUND_SECONDS), "-h", HOST, *map(str, args)]
        return _run_json(cmd, bench_tmpdir)

    return run


@pytest.fixture(scope="session")
def lookup_names_file(bench_tmpdir):
    """First LOOKUP_COUNT leaf names of the PMNS, in traversal order (pminfo)."""
    path = bench_tmpdir / "names.txt"
    proc = subprocess.run(["pminfo", "-h", HOST] if HOST != "local:" else ["pminfo"],
                          capture_output=True, text=True, timeout=60)
    names = [ln.strip() for ln in proc.stdout.splitlines() if ln.strip()]
    if len(names) < ref_live.LOOKUP_COUNT:
        pytest.fail("pminfo listed only %d names (exit %d): %s"
                    % (len(names), proc.returncode, proc.stderr.strip()[-200:]))
    path.write_text("\n".join(names[:ref_live.LOOKUP_COUNT]) + "\n")
    return path
