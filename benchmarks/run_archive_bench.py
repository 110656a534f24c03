#!/usr/bin/env python3
"""Archive-scan benchmark runner: every side in its own subprocess, one table.

For each archive size (made or reused by make_big_archive.py) it runs:

  (a) reference    official binding under /usr/bin/python3 -I: archive_scan.py dropin
                   (pmFetchArchive + pmExtractValue per value), on a prefix of
                   --ref-records records: it manages ~0.3-0.4M values/s
  (b) libpcp C     c/archive_scan.c: pmFetchArchive + pmExtractValue, whole archive
  ours dropin      the same loop as (a) on pcp-native (prefix as (a) unless --full-dropin)
  ours arrays      pmFetchArchive + result.contents.as_arrays(), whole archive
  ours bulk        pcp.bulk.scan_archive(), whole archive (skipped while pcp.bulk is missing)
  ours columns     pcp.bulk.ArchiveReader(): every metric as time x instance numpy
                   matrices, whole archive

and prints values/s, the ratios to (a) and (b), and memory: the process's peak RSS
(its VmHWM), the growth of RSS during the scan (VmHWM after resetting it
once the context is open, minus VmRSS at that point) and the largest RssFile seen
(mapped archive pages).  Every side also computes the same checksum of all values;
the runner checks them against the C client run over the same records.

Usage (from anywhere; the archives are cached under /tmp/pcp-bench-archives):
    /work/venv-bench/bin/python benchmarks/run_archive_bench.py --sizes 100M,1G
Options: --version 2|3, --sides c,reference,ours-dropin,ours-arrays,ours-bulk,ours-columns,
--repeat N (runs of the whole-archive sides, 5), --ref-records N (prefix of (a) and
ours (i), 250), --ref-repeat N (3), --full-dropin, --volume-size 256M,
--json FILE (default benchmarks/archive_results.json).  Runs are interleaved across
sides; the table shows the best run of each side and the ratios compare those
(PCP_BENCH_ARCHIVE_STAT=median: the median runs; =cpu: values per CPU second,
steadier when other jobs load the machine).  The JSON has all of them.
Environment: PCP_BENCH_REF_PYTHON (/usr/bin/python3), PCP_BENCH_OURS_PYTHON (this
interpreter), CC (cc), PCP_BENCH_ARCHIVE_DIR (cache directory),
PCP_BENCH_ARCHIVE_STAT (best).
"""

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import make_big_archive  # noqa: E402

SCAN_SCRIPT = BENCH_DIR / "archive_scan.py"
C_SOURCE = BENCH_DIR / "c" / "archive_scan.c"
REF_PYTHON = os.environ.get("PCP_BENCH_REF_PYTHON", "/usr/bin/python3")
OURS_PYTHON = os.environ.get("PCP_BENCH_OURS_PYTHON", sys.executable)
CC = os.environ.get("CC", "cc")
# Which figure the ratios use: "best" (fastest run, elapsed), "median" (median run,
# elapsed) or "cpu" (values per CPU second of the scan: steadier on a loaded machine).
STAT = os.environ.get("PCP_BENCH_ARCHIVE_STAT", "best")
RESULTS_PATH = Path(os.environ.get("PCP_BENCH_ARCHIVE_RESULTS",
                                   BENCH_DIR / "archive_results.json"))
TIMEOUT = 1800

# Rows made during a pytest session (test_bench_archive.py); conftest.py prints them.
SESSION_ROWS = []

SIDES = ("reference", "c", "ours-dropin", "ours-arrays", "ours-bulk", "ours-columns")
SIDE_TITLES = {
    "reference": "(a) official binding: pmFetchArchive + pmExtractValue",
    "c": "(b) libpcp C: pmFetchArchive + pmExtractValue",
    "ours-dropin": "ours (i) drop-in loop, as (a)",
    "ours-arrays": "ours (ii) pmFetchArchive + as_arrays()",
    "ours-bulk": "ours (iii) pcp.bulk.scan_archive",
    "ours-columns": "ours (iv) pcp.bulk.ArchiveReader: per-metric time x instance arrays",
}
TARGETS = {"ours-arrays": ("reference", 50.0), "ours-bulk": ("c", 1.0),
           "ours-columns": ("c", 2.0)}


# --------------------------------------------------------------------------
# Subprocesses


def build_c(outdir):
    """Compile c/archive_scan.c against libpcp; returns the executable's path."""
    exe = Path(outdir) / "archive_scan"
    cmd = [CC, "-O2", "-Wall", "-o", str(exe), str(C_SOURCE), "-lpcp"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError("build of archive_scan.c failed: %s" % proc.stderr.strip()[-300:])
    return exe


# numpy's OpenBLAS starts worker threads that spin for a while after the import (some
# 20-40 ms of CPU); no side uses BLAS, and the CPU-time figures would charge that
# spinning to the scan of whichever side imported numpy. One BLAS thread for all.
SIDE_ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1")


def run_measured(cmd, cwd, timeout=TIMEOUT):
    """Run cmd; parse the last stdout line as JSON and add its rusage (wait4)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        try:
            proc = subprocess.Popen(cmd, cwd=str(cwd), stdout=out, stderr=err, env=SIDE_ENV)
        except OSError as exc:
            return {"error": "%s: %s" % (type(exc).__name__, exc), "cmd": shlex.join(cmd)}
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - t0 > timeout:
                proc.kill()
                pid, status, ru = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    try:
        data = json.loads(lines[-1])
    except (IndexError, ValueError):
        tail = (stderr.strip().splitlines() or ["no output"])[-1]
        data = {"error": "exit %d: %s" % (proc.returncode, tail)}
    if proc.returncode != 0 and not data.get("error"):
        data["error"] = "exit status %d: %s" % (
            proc.returncode, (stderr.strip().splitlines() or [""])[-1])
    # The process's own peak (VmHWM before and after the reset).  ru_maxrss from wait4
    # is kept for reference only: it includes the RSS of this (forked) Python process
    # before exec, so it cannot go below ~25 MB.
    hwm = [data.get(k) for k in ("hwm_open_kb", "scan_hwm_kb") if data.get(k) is not None]
    data.update(cmd=shlex.join(cmd), wall_s=round(wall, 3),
                peak_rss_kb=max(hwm) if hwm else None, ru_maxrss_kb=ru.ru_maxrss,
                minflt=ru.ru_minflt, majflt=ru.ru_majflt)
    return data


def side_command(side, archive, c_exe, max_records=0):
    lim = ["--max-records", str(max_records)] if max_records else []
    if side == "c":
        return [str(c_exe)] + (["-n", str(max_records)] if max_records else []) + [archive]
    if side == "reference":
        # -I: keep this checkout's pcp/ (and PYTHON* variables) away from the official one
        return [REF_PYTHON, "-I", str(SCAN_SCRIPT), "dropin", archive] + lim
    mode = side.split("-", 1)[1]
    return [OURS_PYTHON, str(SCAN_SCRIPT), mode, archive] + lim


def warm_cache(archive):
    """Read every file of the archive once so that every side scans from the page cache."""
    d, b = os.path.split(archive)
    for name in sorted(os.listdir(d)):
        if name.startswith(b + "."):
            with open(os.path.join(d, name), "rb") as f:
                while f.read(8 << 20):
                    pass


def summarize(runs):
    """Rates and memory over repeated runs of one side.

    values_per_s is the rate the table shows (STAT: the best run, or the median);
    median_/best_values_per_s and cpu_values_per_s (values / CPU time of the best
    run) are kept too.  Memory figures are the largest over the runs."""
    good = [r for r in runs if not r.get("error") and not r.get("skipped_reason")]
    if not good:
        return dict(runs[-1], runs=len(runs))
    rates = [r["values_per_s"] for r in good]
    best = max(good, key=lambda r: r["values_per_s"])
    out = dict(best)
    out.update(median_values_per_s=statistics.median(rates), best_values_per_s=max(rates),
               all_values_per_s=rates, runs=len(good),
               cpu_values_per_s=max(r["values"] / r["cpu_s"] for r in good if r.get("cpu_s")),
               stat=STAT)
    out["values_per_s"] = out["median_values_per_s" if STAT == "median" else "best_values_per_s"]
    for key in ("peak_rss_kb", "ru_maxrss_kb", "scan_hwm_kb", "max_rss_anon_kb",
                "max_rss_file_kb", "rss_end_kb"):
        vals = [r.get(key) for r in good if r.get(key) is not None]
        out[key] = max(vals) if vals else None
    out["rss_base_kb"] = min(r["rss_base_kb"] for r in good)
    out["scan_growth_kb"] = max(r["scan_hwm_kb"] - r["rss_base_kb"] for r in good)
    return out


# --------------------------------------------------------------------------
# Checksums


CHECK_KEYS = ("values", "records", "int_sum", "strings")


def compare(ours, ref):
    """None if the checksums agree, else a description of the differences."""
    if not isinstance(ours, dict) or not isinstance(ref, dict):
        return "missing"
    if ours.get("error") or ref.get("error") or ours.get("skipped_reason"):
        return None
    bad = ["%s %r != %r" % (k, ours.get(k), ref.get(k)) for k in CHECK_KEYS
           if ours.get(k) != ref.get(k)]
    if ours.get("str_bytes") and ours.get("str_bytes") != ref.get("str_bytes"):
        bad.append("str_bytes %r != %r" % (ours["str_bytes"], ref.get("str_bytes")))
    f1, f2 = ours.get("float_sum"), ref.get("float_sum")
    if f1 is not None and f2 is not None and abs(f1 - f2) > 1e-9 * max(abs(f1), abs(f2), 1.0):
        bad.append("float_sum %r != %r" % (f1, f2))
    return "; ".join(bad) or None


# --------------------------------------------------------------------------
# One archive


def bench_archive(archive, sides, c_exe, workdir, repeat=3, ref_records=250,
                  ref_repeat=3, full_dropin=False, log=print):
    """Run every side on one archive; returns the row dict (see the JSON output).

    The runs are interleaved (round 1 of every side, then round 2, ...) so that load
    from elsewhere on the machine spreads over all sides rather than hitting one."""
    info = make_big_archive.manifest(archive)
    row = {"archive": archive, "data_bytes": info["data_bytes"], "version": info["version"],
           "volumes": info["volumes"], "records": info["records"], "sides": {}}
    warm_cache(archive)
    plan = {}
    for side in sides:
        prefix, n = 0, repeat
        if side == "reference" or (side == "ours-dropin" and not full_dropin):
            prefix, n = ref_records, ref_repeat
        if prefix >= info["records"]:
            prefix = 0
        plan[side] = (prefix, max(n, 1))
    runs = {side: [] for side in sides}
    for rnd in range(max(n for _, n in plan.values())):
        for side in sides:
            prefix, n = plan[side]
            done = runs[side]
            if rnd >= n or (done and (done[-1].get("error") or done[-1].get("skipped_reason"))):
                continue
            done.append(run_measured(side_command(side, archive, c_exe, prefix), workdir))
    for side in sides:
        prefix = plan[side][0]
        res = summarize(runs[side])
        res["prefix_records"] = prefix
        row["sides"][side] = res
        log("  %-12s %s" % (side, _brief(res)))
        # the checksum of the same records through libpcp
        if "c" in sides and side != "c" and not res.get("error") and not res.get("skipped_reason"):
            if prefix:
                key = "c_prefix_%d" % prefix
                if key not in row:
                    row[key] = run_measured(side_command("c", archive, c_exe, prefix), workdir)
                cref = row[key]
            else:
                cref = row["sides"].get("c")
            if cref is not None:
                res["checksum_vs_c"] = compare(res, cref) or "ok"
    finish_row(row)
    return row


def _brief(res):
    if res.get("error"):
        return "ERROR: " + str(res["error"])
    if res.get("skipped_reason"):
        return "skipped: " + res["skipped_reason"]
    return "%12s values/s  %d values  peak RSS %s  scan growth %s" % (
        _fmt_rate(res["values_per_s"]), res["values"], _fmt_kb(res.get("peak_rss_kb")),
        _fmt_kb(res.get("scan_growth_kb")))


def rate(res):
    """The figure the ratios compare (see STAT)."""
    if not isinstance(res, dict) or res.get("error") or res.get("skipped_reason"):
        return None
    return res.get("cpu_values_per_s" if STAT == "cpu" else "values_per_s") or None


def finish_row(row):
    sides = row["sides"]
    ref, c = rate(sides.get("reference")), rate(sides.get("c"))
    for name, res in sides.items():
        r = rate(res)
        res["over_reference"] = r / ref if r and ref else None
        res["over_c"] = r / c if r and c else None
        tgt = TARGETS.get(name)
        if tgt:
            ratio = res["over_reference" if tgt[0] == "reference" else "over_c"]
            res["target"] = {"vs": tgt[0], "min_ratio": tgt[1],
                             "met": None if ratio is None else ratio >= tgt[1]}
    return row


# --------------------------------------------------------------------------
# Output


def _fmt_rate(x):
    if x is None:
        return "-"
    if x >= 1e6:
        return "%.2fM" % (x / 1e6)
    return "%.0fk" % (x / 1e3)


def _fmt_kb(kb):
    return "-" if kb is None else "%.0f MB" % (kb / 1024.0)


def _fmt_ratio(x):
    return "-" if x is None else ("%.1fx" % x if x >= 10 else "%.2fx" % x)


def markdown(rows):
    lines = [
        "| archive | side | values scanned | values/s | values/CPU-s | vs (a) | vs (b) | "
        "peak RSS | RSS growth in scan | max RssFile | checksum |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        arch = "v%d %s (%d vol)" % (row["version"], make_big_archive.size_label(
            _round_size(row["data_bytes"])), row["volumes"])
        for side in SIDES:
            res = row["sides"].get(side)
            if res is None:
                continue
            title = SIDE_TITLES[side]
            if res.get("error") or res.get("skipped_reason"):
                msg = res.get("error") or ("skipped: " + res["skipped_reason"])
                msg = " ".join(str(msg).split()).replace("|", "/")
                lines.append("| %s | %s | %s | | | | | | | | |" % (arch, title, msg[:90]))
                continue
            scanned = "{:,}".format(res["values"])
            if res.get("prefix_records"):
                scanned += " (first %d rec)" % res["prefix_records"]
            tgt = res.get("target")
            mark = ""
            if tgt and tgt["met"] is not None:
                mark = " (target %g: %s)" % (tgt["min_ratio"], "met" if tgt["met"] else "MISSED")
            ratio_a = _fmt_ratio(res.get("over_reference"))
            ratio_b = _fmt_ratio(res.get("over_c"))
            if tgt and tgt["vs"] == "reference":
                ratio_a += mark
            elif tgt:
                ratio_b += mark
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                arch, title, scanned, _fmt_rate(res["values_per_s"]),
                _fmt_rate(res.get("cpu_values_per_s")), ratio_a, ratio_b,
                _fmt_kb(res.get("peak_rss_kb")), _fmt_kb(res.get("scan_growth_kb")),
                _fmt_kb(res.get("max_rss_file_kb")), res.get("checksum_vs_c", "-")))
    return "\n".join(lines)


def _round_size(n):
    """Data bytes -> the nearest 'round' size for labels (the generator stops short)."""
    for unit in (1 << 30, 1 << 20):
        if n >= unit // 2:
            return max(1, round(n / unit)) * unit
    return n


def as_json(rows, args=None):
    return {
        "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"node": platform.node(), "cpus": os.cpu_count(),
                    "python": sys.version.split()[0],
                    "loadavg_at_end": os.getloadavg()},
        "args": vars(args) if args is not None else None,
        "method": "each side in its own subprocess, runs interleaved across sides; "
                  "values_per_s = values / scan_s (the fetch loop, elapsed, context creation "
                  "excluded) of the best run (or the median run: PCP_BENCH_ARCHIVE_STAT); "
                  "cpu_values_per_s = values / CPU time of the scan (best run); ratios "
                  "over_* compare the figure PCP_BENCH_ARCHIVE_STAT names (best, median, "
                  "cpu); peak_rss_kb = the process's VmHWM "
                  "(max over runs); scan_growth_kb = VmHWM (reset after context creation) "
                  "- VmRSS then",
        "archives": rows,
    }


def footnote():
    which = {"cpu": "values per CPU second", "median": "values/s of the median run"}.get(
        STAT, "values/s of the best run")
    return ("values/s: %s run of each side, fetch loop only (elapsed); values/CPU-s: values "
            "per CPU second of the scan (best run); vs (a)/(b): ratio of %s (>1: faster than "
            "the official binding / the libpcp C client); (a) and ours (i) scan a prefix."
            % ("median" if STAT == "median" else "best", which))


def session_summary(write_line):
    """For conftest.py: print the rows of this pytest session and save them."""
    if not SESSION_ROWS:
        return
    write_line(markdown(SESSION_ROWS))
    write_line("")
    write_line(footnote() + " Details in %s" % RESULTS_PATH)
    try:
        RESULTS_PATH.write_text(json.dumps(as_json(SESSION_ROWS), indent=2) + "\n")
    except OSError as exc:
        write_line("could not write %s: %s" % (RESULTS_PATH, exc))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100M,1G")
    ap.add_argument("--version", type=int, default=2, choices=(2, 3))
    ap.add_argument("--volume-size", default="256M")
    ap.add_argument("--sides", default=",".join(SIDES))
    ap.add_argument("--repeat", type=int, default=5, help="runs of the whole-archive sides")
    ap.add_argument("--ref-records", type=int, default=250,
                    help="records the reference (and ours dropin) scan; 0 = all")
    ap.add_argument("--ref-repeat", type=int, default=3,
                    help="runs of the reference and of ours dropin")
    ap.add_argument("--full-dropin", action="store_true",
                    help="ours dropin scans the whole archive, not the reference's prefix")
    ap.add_argument("--json", default=str(RESULTS_PATH))
    ap.add_argument("--cache-dir", default=make_big_archive.DEFAULT_CACHE_DIR)
    args = ap.parse_args(argv)
    sides = [s.strip() for s in args.sides.split(",") if s.strip()]
    for s in sides:
        if s not in SIDES:
            ap.error("unknown side %r (choose from %s)" % (s, ", ".join(SIDES)))
    sides = [s for s in SIDES if s in sides]     # (a), (b) first: the ratios need them

    workdir = tempfile.mkdtemp(prefix="pcp-archbench.")
    try:
        c_exe = build_c(workdir) if "c" in sides else None
        rows = []
        for size in args.sizes.split(","):
            archive = make_big_archive.ensure_archive(
                make_big_archive.parse_size(size), args.version,
                make_big_archive.parse_size(args.volume_size), args.cache_dir)
            print("archive %s (%s), load average %.2f" % (archive, size, os.getloadavg()[0]),
                  flush=True)
            rows.append(bench_archive(archive, sides, c_exe, workdir, args.repeat,
                                      args.ref_records, args.ref_repeat, args.full_dropin,
                                      log=lambda m: print(m, flush=True)))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print()
    print(markdown(rows))
    print()
    print(footnote())
    print("load average now %.2f" % os.getloadavg()[0])
    if args.json:
        Path(args.json).write_text(json.dumps(as_json(rows, args), indent=2) + "\n")
        print("details: %s" % args.json)
    bad = [(r["archive"], s, v.get("checksum_vs_c")) for r in rows for s, v in r["sides"].items()
           if v.get("checksum_vs_c") not in (None, "ok")]
    for b in bad:
        print("CHECKSUM MISMATCH: %s %s: %s" % b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
