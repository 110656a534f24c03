"""CPU per fetch inside a PMDA serving 1,000 values, on the official binding and on this
package, under one private pmcd each (see README.md: "pcp.pmda: fetch cost").

    python benchmarks/pmda_fetch.py [--fetches N] [--metric bench.list|bench.cache]

The client is the same for both (the official binding's pmapi under /usr/bin/python3);
the PMDA's CPU is read from /proc/<pid>/stat before and after the fetches, and the
client's wall time per fetch is the pmcd round trip. The callback floor is the CPU of
only calling the PMDA's callbacks as one fetch calls them (its fetch callback once per
value, its prefetch once), on the official binding's interpreter: no binding can spend
less per fetch, so the best ratio any drop-in can reach is official / floor."""
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


FLOOR = r"""
import importlib.machinery, json, os, sys, time
from itertools import repeat
loader = importlib.machinery.SourceFileLoader("pmdabench", sys.argv[1])
module = loader.load_module()
pmda = module.BenchPMDA("bench", 481)          # tables only: no pmcd, no dispatch
item = 0 if sys.argv[2] == "bench.list" else 1
fetches = int(sys.argv[3])
insts = list(range(module.N))
prefetch, callback = pmda.prefetch, pmda.fetch_callback
best = None
for _ in range(5):
    t0 = time.process_time()
    for _ in range(fetches):
        prefetch()
        for inst in insts:
            callback(0, item, inst)
    spent = time.process_time() - t0
    best = spent if best is None else min(best, spent)
print(json.dumps({"cpu_ms_per_fetch": 1000.0 * best / fetches}))
"""


def callback_floor(interpreter: str, metric: str, fetches: int) -> float:
    """CPU per fetch of the bench PMDA's callbacks alone (see FLOOR), best of 5."""
    with tempfile.TemporaryDirectory() as tmp:     # the PMDA's log file goes there
        done = subprocess.run([interpreter, "-c", FLOOR,
                               str(HERE / "pmdas" / "pmdabench.python"), metric,
                               str(fetches)], cwd=tmp, capture_output=True, text=True,
                              check=True, env=dict(os.environ, PYTHONPATH=str(HERE.parent)))
    return json.loads(done.stdout)["cpu_ms_per_fetch"]


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


def _best(runs: list) -> dict:
    """The run with the least PMDA CPU: on a shared machine, the one least disturbed."""
    return min(runs, key=lambda r: r["cpu_ms_per_fetch"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fetches", type=int, default=1000)
    parser.add_argument("--metric", default="bench.list")
    parser.add_argument("--rounds", type=int, default=3,
                        help="each side measured this many times, interleaved; best kept")
    args = parser.parse_args()
    runs: dict = {"official": [], "ours": [], "ours_same_interpreter": [], "floor": []}
    with tempfile.TemporaryDirectory() as tmp:
        same = same_interpreter(Path(tmp) / "venv")
        for _ in range(args.rounds):
            runs["official"].append(measure(OFFICIAL, args.metric, args.fetches))
            runs["ours"].append(measure(OURS, args.metric, args.fetches))
            runs["ours_same_interpreter"].append(measure(same, args.metric, args.fetches))
            # the floor on the official binding's interpreter, through this package's
            # pcp.pmda (only to build the PMDA object; its callbacks are the same code)
            runs["floor"].append({"cpu_ms_per_fetch":
                                  callback_floor(same, args.metric, args.fetches)})
    report = {"metric": args.metric, "fetches": args.fetches, "rounds": args.rounds}
    for key, got in runs.items():
        report[key] = _best(got)
    official = report["official"]["cpu_ms_per_fetch"]
    floor = report["floor"]["cpu_ms_per_fetch"]
    for key in ("ours", "ours_same_interpreter"):
        mine = report[key]["cpu_ms_per_fetch"]
        report[key]["official_cpu_over_ours"] = official / mine if mine else None
    report["floor"]["official_cpu_over_floor"] = official / floor if floor else None
    print(json.dumps(report, indent=1))
    print("\nCPU per fetch of 1,000 values (ms, best of %d): official %.3f | ours %.3f "
          "(same interpreter %.3f) | the callbacks alone %.3f\nofficial/ours %.2fx (same "
          "interpreter %.2fx); the best any drop-in can reach, official/floor: %.2fx\n"
          "round trip (ms): official %.3f | ours %.3f (same interpreter %.3f)"
          % (args.rounds, official, report["ours"]["cpu_ms_per_fetch"],
             report["ours_same_interpreter"]["cpu_ms_per_fetch"], floor,
             report["ours"]["official_cpu_over_ours"] or 0,
             report["ours_same_interpreter"]["official_cpu_over_ours"] or 0,
             report["floor"]["official_cpu_over_floor"] or 0,
             report["official"]["round_trip_ms"], report["ours"]["round_trip_ms"],
             report["ours_same_interpreter"]["round_trip_ms"]))


if __name__ == "__main__":
    main()
