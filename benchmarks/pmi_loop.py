"""The archive-writing workload of test_bench_pmi.py, runnable under either binding:
RECORDS records of METRICS double metrics x INSTANCES instances, every value through
pmiPutValue (or pmiPutValueHandle) and a pmiWrite per record, then pmiEnd.

    python pmi_loop.py OUTBASE [putvalue|handle] [records metrics instances]

prints {"values": ..., "cpu_s": ..., "wall_s": ...} (the timed part: from pmiLogImport
to pmiEnd; the value texts are made before)."""
import json
import sys
import time

RECORDS, METRICS, INSTANCES = 200, 20, 50


def texts(records: int, metrics: int, instances: int) -> list:
    return [["%d.%d" % (r, m * instances + i) for m in range(metrics) for i in range(instances)]
            for r in range(records)]


def run(base: str, how: str = "putvalue", records: int = RECORDS, metrics: int = METRICS,
        instances: int = INSTANCES, values: list = None) -> dict:
    from pcp import pmi
    import cpmapi as c

    values = values or texts(records, metrics, instances)
    names = ["bench.m%02d" % m for m in range(metrics)]
    inames = ["inst-%03d" % i for i in range(instances)]
    cpu, wall = time.process_time(), time.perf_counter()
    log = pmi.pmiLogImport(base)
    log.pmiSetHostname("bench")
    log.pmiSetTimezone("UTC")
    log.pmiSetVersion(3)
    indom = log.pmiInDom(245, 1)
    units = log.pmiUnits(0, 0, 0, 0, 0, 0)
    for m, name in enumerate(names):
        log.pmiAddMetric(name, log.pmiID(245, 1, m), c.PM_TYPE_DOUBLE, indom,
                         c.PM_SEM_INSTANT, units)
    for i, iname in enumerate(inames):
        log.pmiAddInstance(indom, iname, i)
    put = log.pmiPutValue
    if how == "handle":
        handles = [log.pmiGetHandle(n, i) for n in names for i in inames]
        put_handle = log.pmiPutValueHandle
        for r, row in enumerate(values):
            for h, v in zip(handles, row):
                put_handle(h, v)
            log.pmiWrite(1700000000 + r, 0)
    else:
        pairs = [(n, i) for n in names for i in inames]
        for r, row in enumerate(values):
            for (n, i), v in zip(pairs, row):
                put(n, i, v)
            log.pmiWrite(1700000000 + r, 0)
    log.pmiEnd()
    return {"values": records * metrics * instances, "cpu_s": time.process_time() - cpu,
            "wall_s": time.perf_counter() - wall}


if __name__ == "__main__":
    args = sys.argv[1:]
    how = args[1] if len(args) > 1 else "putvalue"
    dims = [int(a) for a in args[2:5]] or [RECORDS, METRICS, INSTANCES]
    print(json.dumps(run(args[0], how, *dims)))
