#!/usr/bin/env python3
"""The iostat workload: the derived metrics of a configuration file fetched from every
record of an archive (PM_MODE_FORW), pmExtractValue of every value (interp_scan.scan's
loop), or the same metrics read as bulk columns (bulk_scan, this package only).

    derived_scan.py ARCHIVE CONFIG NAME [NAME ...]

Run under /usr/bin/python3 -I it measures the official binding; under the project's
venv the drop-in. Prints interp_scan's JSON fields. Nothing imports pcp at module level.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))    # run with -I too
import interp_scan  # noqa: E402


def _load(archive, config, names):
    """The definitions of `config`, unless this process already has them (the default
    configuration, or an earlier call)."""
    import cpmapi as c_api
    from pcp import pmapi

    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, archive)
    try:
        ctx.pmLookupDescs(ctx.pmLookupName(names))
    except pmapi.pmErr:
        ctx.pmLoadDerivedConfig(config)


def scan(archive, config, names, max_fetches=1 << 30):
    """pmFetch of `names` from every record, as interp_scan.scan in "forw" mode."""
    _load(archive, config, names)
    return interp_scan.scan(archive, 0, names, max_fetches, "forw")


def bulk_scan(archive, config, names):
    """The same values as bulk columns: read_archive, then the checksum over them."""
    import numpy as np
    from pcp import bulk

    _load(archive, config, names)
    start = time.process_time()
    cols = bulk.read_archive(archive, names)
    values = 0
    int_sum, float_sum = 0, 0.0
    for m in cols.values():
        values += m.count
        if m.values.dtype.kind == "f":
            float_sum += float(m.values[m.present].astype(np.float64).sum())
        else:
            int_sum = (int_sum + int(m.values[m.present].astype(np.uint64).sum())) % (1 << 64)
    cpu = time.process_time() - start
    return {"metrics": len(names), "fetches": len(cols), "values": values, "cpu_s": cpu,
            "values_per_cpu_s": values / cpu if cpu else 0.0, "int_sum": int_sum,
            "float_sum": float_sum,
            "maxrss_kb": interp_scan.peak_rss_kb()}


if __name__ == "__main__":
    os.environ["PCP_DERIVED_CONFIG"] = ""
    print(json.dumps(scan(sys.argv[1], sys.argv[2], sys.argv[3:])))
