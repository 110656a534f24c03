"""PM_CONTEXT_LOCAL against the official binding: start-up (pmNewContext and the first
fetch) and the cost of a fetch, with the PMDAs' own CPU counted on both sides (the
official binding runs the DSOs inside the process; pcp-native runs their daemon builds
as children, whose CPU benchmarks/local_client.py adds from /proc).

    .venv/bin/pytest benchmarks/test_bench_local.py -q -s

The table is sampledso and the linux PMDA (a pmcd.conf of the benchmark's); the fetch is
15 metrics, 39 values, from both. Not part of the normal test run."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
FETCHES = int(os.environ.get("PCP_BENCH_LOCAL_FETCHES", "3000"))
REF_PYTHON = os.environ.get("PCP_BENCH_REF_PYTHON", "/usr/bin/python3")
CONF = ("sampledso\t30\tdso\tsample_init\t/var/lib/pcp/pmdas/sample/pmda_sample.so\n"
        "linux\t60\tpipe\tbinary\t/var/lib/pcp/pmdas/linux/pmdalinux\n")


def _run(python: str, env: dict) -> dict:
    out = subprocess.run([python, str(BENCH_DIR / "local_client.py"), str(FETCHES)], env=env,
                         capture_output=True, text=True, timeout=600, cwd="/")
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_local_start_and_fetch(tmp_path):
    conf = tmp_path / "pmcd.conf"
    conf.write_text(CONF)
    env = dict(os.environ, PCP_PMCDCONF_PATH=str(conf))
    for k in ("PYTHONPATH", "VIRTUAL_ENV"):
        env.pop(k, None)
    ours = min((_run(sys.executable, env) for _ in range(3)), key=lambda r: r["fetch_cpu"])
    ref = min((_run(REF_PYTHON, env) for _ in range(3)), key=lambda r: r["fetch_cpu"])
    assert ours["values"] == ref["values"] > 30
    print("\n| measure | pcp-native | official binding | official/ours |")
    print("|---|---:|---:|---:|")
    for key, what, scale, unit in (("start_wall", "pmNewContext + first fetch (wall)", 1e3, "ms"),
                                   ("start_cpu", "pmNewContext + first fetch (CPU)", 1e3, "ms"),
                                   ("fetch_wall", "pmFetch (wall)", 1e6, "µs"),
                                   ("fetch_cpu", "pmFetch (CPU, PMDAs included)", 1e6, "µs"),
                                   ("client_cpu", "  of which the client", 1e6, "µs"),
                                   ("agents_cpu", "  of which the PMDA children", 1e6, "µs")):
        print("| %s | %.1f %s | %.1f %s | %.2fx |" % (
            what, ours[key] * scale, unit, ref[key] * scale, unit,
            ref[key] / ours[key] if ours[key] else float("inf")))
