"""CPU per fetch inside a PMDA serving 1,000 values, on the official binding and on this
package, under one private pmcd each (see README.md: "pcp.pmda: fetch cost").

    python benchmarks/pmda_fetch.py [--fetches N] [--metric bench.list|bench.cache]

The client is the same for both (the official binding's pmapi under /usr/bin/python3);
the PMDA's CPU is read from /proc/<pid>/stat before and after the fetches, and the
client's wall time per fetch is the pmcd round trip."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.pmda.pmcdrun import OFFICIAL, OURS, PrivatePmcd  # noqa: E402

CLIENT = r"""
import json, sys, time
from pcp import pmapi
ctx = pmapi.pmContext(pmapi.c_api.PM_CONTEXT_HOST, "localhost")
pmids = ctx.pmLookupName([sys.argv[1]])
n = int(sys.argv[2])
ctx.pmFreeResult(ctx.pmFetch(pmids))            # warm up: descriptors, first profile
print(json.dumps({"ready": True}), flush=True)
sys.stdin.readline()
t0 = time.perf_counter()
for _ in range(n):
    r = ctx.pmFetch(pmids)
    assert r.contents.get_numval(0) == 1000, r.contents.get_numval(0)
    ctx.pmFreeResult(r)
print(json.dumps({"seconds": time.perf_counter() - t0}), flush=True)
"""


def _cpu_ticks(pid: int) -> int:
    fields = Path("/proc/%d/stat" % pid).read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])        # utime + stime


def _pmda_pid(pmcd_pid: int) -> int:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pmcd_pid:
                return int(entry.name)
    raise RuntimeError("no PMDA under pmcd %d" % pmcd_pid)


def measure(interpreter: str, metric: str, fetches: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        server = PrivatePmcd(Path(tmp), "bench", 481, interpreter,
                             source=HERE / "pmdas" / "pmdabench.python")
        server.start()
        try:
            pid = _pmda_pid(server.proc.pid)
            client = subprocess.Popen([OFFICIAL, "-c", CLIENT, metric, str(fetches)],
                                      env=server.client_env(), stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True)
            json.loads(client.stdout.readline())
            before = _cpu_ticks(pid)
            client.stdin.write("go\n")
            client.stdin.flush()
            wall = json.loads(client.stdout.readline())["seconds"]
            after = _cpu_ticks(pid)
            client.wait()
        finally:
            server.stop()
    hz = os.sysconf("SC_CLK_TCK")
    cpu = (after - before) / hz
    return {"cpu_ms_per_fetch": 1000.0 * cpu / fetches,
            "round_trip_ms": 1000.0 * wall / fetches}


def same_interpreter(where: Path) -> str:
    """A virtualenv of the official binding's own interpreter (the distribution's PGO/LTO
    build) finding this package through a static .pth file: the binding compared, not
    the interpreters."""
    subprocess.run([OFFICIAL, "-m", "venv", "--without-pip", "--system-site-packages",
                    str(where)], check=True)
    site = next(where.glob("lib/python*/site-packages"))
    deps = [p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)]
    (site / "pcp_native.pth").write_text("\n".join([str(HERE.parent)] + deps) + "\n")
    return str(where / "bin" / "python")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fetches", type=int, default=300)
    parser.add_argument("--metric", default="bench.list")
    args = parser.parse_args()
    official = measure(OFFICIAL, args.metric, args.fetches)
    ours = measure(OURS, args.metric, args.fetches)
    report = {"metric": args.metric, "official": official, "ours": ours}
    with tempfile.TemporaryDirectory() as tmp:
        same = same_interpreter(Path(tmp) / "venv")
        report["ours_same_interpreter"] = measure(same, args.metric, args.fetches)
    for key in ("ours", "ours_same_interpreter"):
        mine = report[key]["cpu_ms_per_fetch"]
        report[key]["official_cpu_over_ours"] = (official["cpu_ms_per_fetch"] / mine
                                                 if mine else None)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
