#!/usr/bin/env python3
"""Derived metric pmFetch workload: the per-fetch cost of pmFetch of derived metrics.

    derived_fetch.py archive ARCHIVE forw|interp STEP_MS ROUNDS NAME [NAME ...]
    derived_fetch.py live HOST - 0 FETCHES NAME=EXPR [NAME=EXPR ...]

archive: the derived metrics NAME of the default configuration (PCP_DERIVED_CONFIG as
the caller sets it: the machine's iostat and cpu-util definitions) fetched from every
record (forw) or at STEP_MS (interp), the whole archive ROUNDS times over. live: the
expressions registered with pmRegisterDerived, fetched FETCHES times back to back.

Only pmFetch and pmFreeResult are timed (the process CPU clock); a pass after the timed
one reads every value (pmExtractValue to DOUBLE) into a checksum, so the sides can be
compared. Run under /usr/bin/python3 -I it measures the official binding; under the
project's venv the drop-in pcp.pmapi running the same code (c/derived_fetch_loop.c is
the libpcp floor). Prints one JSON object: metrics, fetches, cpu_s, us_per_fetch,
values, float_sum, errors (value sets with an error code). Nothing imports pcp at
module level (see ref_live.py).
"""
import json
import sys
import time


def _open(kind, target, mode, step_ms, names):
    import cpmapi as c_api
    from pcp import pmapi

    if kind == "live":
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, target)
        plain = []
        for spec in names:
            name, expr = spec.split("=", 1)
            ctx.pmRegisterDerived(name, expr)
            plain.append(name)
        names = plain
    else:
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, target)
    pmids = ctx.pmLookupName(names)

    def rewind():
        if kind == "live":
            return
        start = ctx.pmGetArchiveLabel().start
        if mode == "forw":
            ctx.pmSetMode(c_api.PM_MODE_FORW, start, 0)
        else:
            ctx.pmSetMode(c_api.PM_MODE_INTERP, start, step_ms)

    return ctx, pmids, rewind


def run(kind, target, mode, step_ms, rounds, names):
    """The timed fetch loop, then the checksum pass (see the module docstring)."""
    import cpmapi as c_api
    from pcp import pmapi

    ctx, pmids, rewind = _open(kind, target, mode, step_ms, names)
    per_round = rounds if kind == "live" else 1 << 30
    fetches = 0
    cpu = 0.0
    for _ in range(1 if kind == "live" else rounds):
        rewind()
        n = 0
        start = time.process_time()
        while n < per_round:
            try:
                result = ctx.pmFetch(pmids)
            except pmapi.pmErr:
                break
            ctx.pmFreeResult(result)
            n += 1
        cpu += time.process_time() - start
        fetches += n
    # the checksum pass: one round, every value to DOUBLE (live values move: only the
    # shape of the results is comparable there)
    rewind()
    types = []
    for pmid in pmids:
        try:
            types.append(ctx.pmLookupDesc(pmid).contents.type)
        except pmapi.pmErr:
            types.append(None)
    values = errors = 0
    float_sum = 0.0
    for _ in range(3 if kind == "live" else 1 << 30):
        try:
            result = ctx.pmFetch(pmids)
        except pmapi.pmErr:
            break
        res = result.contents
        for j in range(res.numpmid):
            n = res.get_numval(j)
            if n < 0:
                errors += 1
            if n <= 0 or types[j] is None:
                continue
            fmt = res.get_valfmt(j)
            for k in range(n):
                float_sum += ctx.pmExtractValue(fmt, res.get_vlist(j, k), types[j],
                                                c_api.PM_TYPE_DOUBLE).d
            values += n
        ctx.pmFreeResult(result)
    return {"metrics": len(pmids), "fetches": fetches, "cpu_s": cpu,
            "us_per_fetch": 1e6 * cpu / fetches if fetches else None, "values": values,
            "float_sum": float_sum, "errors": errors}


def main():
    kind, target, mode, step_ms, rounds = sys.argv[1:6]
    print(json.dumps(run(kind, target, mode, int(step_ms), int(rounds), sys.argv[6:])))


if __name__ == "__main__":
    main()
