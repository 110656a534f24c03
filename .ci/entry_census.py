"""Which entry points of the C core did a test run drive? (.ci/sanitize.sh runs this.)

The sanitizer pass runs the C-facing tests only, not the whole suite: this is what keeps
that choice honest. The core was built with gcov's counters (PCP_NATIVE_COVERAGE=1), so
every process of the run added its counts to the .gcda files beside the objects. The
entry points are the functions cffi wraps for Python (a wrapper _cffi_f_<function> in
the generated module); one is driven when its own body ran, called from Python or from
other C (a kernel that a derived-metric program calls, a row function handed over as a
pointer). One that never ran fails the run, unless NOT_DRIVEN below says why it may.
The line coverage of each C file is printed too, for the record.

    python .ci/entry_census.py BUILD_ROOT
"""
from __future__ import annotations

import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile
from typing import Dict, List, Tuple

WRAPPER = "_cffi_f_"

# Entry points the sanitizer pass may leave alone, each with the reason.
NOT_DRIVEN: Dict[str, str] = {}


def gcov_files(objects: List[str]) -> List[dict]:
    """gcov's JSON records for these .gcda files (one 'files' list per object)."""
    out: List[dict] = []
    with tempfile.TemporaryDirectory() as scratch:
        for gcda in objects:
            subprocess.run(["gcov", "--json-format", "-o", os.path.dirname(gcda), gcda],
                           cwd=scratch, check=True, capture_output=True)
        for path in glob.glob(os.path.join(scratch, "*.gcov.json.gz")):
            with gzip.open(path, "rt", encoding="utf-8") as stream:
                out.extend(json.load(stream)["files"])
    return out


def main(root: str) -> int:
    gcdas = glob.glob(os.path.join(root, "build", "**", "*.gcda"), recursive=True)
    generated = [g for g in gcdas if os.path.basename(g).startswith("pcp._native")]
    if not generated:
        print("entry census: no gcov counts under %s (was the core built with "
              "PCP_NATIVE_COVERAGE=1?)" % root)
        return 1
    entry_points = set()
    for record in gcov_files(generated):
        for function in record["functions"]:
            name = function["name"]
            # pcp_coverage_flush is the census's own hook (a coverage build's only)
            if name.startswith(WRAPPER) and name != WRAPPER + "pcp_coverage_flush":
                entry_points.add(name[len(WRAPPER):])
    calls: Dict[str, int] = {name: 0 for name in entry_points}
    lines: List[Tuple[str, int, int]] = []
    for record in gcov_files([g for g in gcdas if g not in generated]):
        if not record["file"].startswith("csrc/") and "/csrc/" not in record["file"]:
            continue
        for function in record["functions"]:
            if function["name"] in calls:
                calls[function["name"]] += function["execution_count"]
        counts = [line["count"] for line in record["lines"]]
        lines.append((os.path.basename(record["file"]), sum(1 for c in counts if c), len(counts)))
    never = sorted(name for name, count in calls.items() if count == 0)
    excused = [name for name in never if name in NOT_DRIVEN]
    failing = [name for name in never if name not in NOT_DRIVEN]
    ran = sum(1 for count in calls.values() if count)
    print("entry census: %d of %d C entry points driven by the sanitizer pass"
          % (ran, len(calls)))
    merged: Dict[str, List[int]] = {}
    for name, hit, total in lines:
        merged.setdefault(name, [0, 0])
        merged[name][0] += hit
        merged[name][1] += total
    hit_all = sum(h for h, _ in merged.values())
    total_all = sum(t for _, t in merged.values())
    print("entry census: csrc/ lines run: %d of %d (%.0f%%); by file: %s" % (
        hit_all, total_all, 100.0 * hit_all / max(total_all, 1),
        ", ".join("%s %.0f%%" % (name, 100.0 * h / max(t, 1))
                  for name, (h, t) in sorted(merged.items()))))
    for name in excused:
        print("entry census: not driven, as allowed: %s (%s)" % (name, NOT_DRIVEN[name]))
    for name in failing:
        print("entry census: NEVER RAN: %s" % name)
    stale = sorted(set(NOT_DRIVEN) - set(never))
    for name in stale:
        print("entry census: NOT_DRIVEN names %s, which %s" % (
            name, "ran" if name in calls else "is no entry point"))
    return 1 if failing or stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
