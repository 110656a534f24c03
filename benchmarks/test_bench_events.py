"""Event record benchmarks: pcp-native's bulk columns (and its drop-in unpack) against
libpcp's C pmUnpack[HighRes]EventRecords and the official binding's fetchgroup path.

Cases (units: events/s, or parameters/s where the title says so):
  unpack_sample   every event value of 400 fetches of the three sample.event metrics
                  (captured from the live pmcd at session start, all PMDA setups):
                  ours = event_columns() over the 400 results, one call;
                  C = pmUnpack*EventRecords of every value of the same PDUs (decoded
                  once by libpcp before timing), reading every value set, freeing.
                  The official binding has no unpack call: no reference figure.
  unpack_big      two synthetic PDUs, each one array of 5000 events with four
                  parameters (U32, U64, DOUBLE, STRING), classic and high resolution.
  unpack_dropin   ours through the drop-in pmUnpackEventRecords (a pmResult per event)
                  on the sample corpus, for scale.
  live            one op = fetch of the three metrics and every event's values:
                  ours pmFetch + event_columns; reference fetchgroup extend_event()
                  items (ref_events.py); C pmFetch + unpack + free.
Run: pytest benchmarks/test_bench_events.py -q --benchmark-only
"""

import os
import struct
import traceback

import pytest

import ref_live

ROUNDS = int(os.environ.get("PCP_BENCH_ROUNDS", "15"))
ROUND_SECONDS = float(os.environ.get("PCP_BENCH_ROUND_SECONDS", "0.2"))
HOST = os.environ.get("PCP_BENCH_HOST", "local:")
METRICS = ["sample.event.records", "sample.event.highres_records",
           "sample.event.no_indom_records"]
CORPUS_FETCHES = 400
BIG_EVENTS = 5000
REF_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ref_events.py")

CASES = [
    {"bench": "events_unpack_sample", "unit": "events/s", "corpus": "sample", "ours": "bulk",
     "title": "(e) unpack all events of 400 sample.event fetches: ours bulk columns vs C",
     "target": {"vs": "c", "min_ratio": 1.0}},
    {"bench": "events_unpack_sample_params", "unit": "params/s", "corpus": "sample",
     "ours": "bulk", "title": "(e') as (e), parameters/s"},
    {"bench": "events_unpack_big", "unit": "events/s", "corpus": "big", "ours": "bulk",
     "title": "(f) unpack 2 arrays of %d events x 4 params: ours bulk vs C" % BIG_EVENTS,
     "target": {"vs": "c", "min_ratio": 1.0}},
    {"bench": "events_unpack_big_params", "unit": "params/s", "corpus": "big", "ours": "bulk",
     "title": "(f') as (f), parameters/s"},
    {"bench": "events_unpack_dropin", "unit": "events/s", "corpus": "sample", "ours": "dropin",
     "title": "(g) as (e), ours through drop-in pmUnpackEventRecords"},
    {"bench": "events_live", "unit": "events/s", "corpus": None, "ours": "live",
     "title": "(h) fetch + every event: ours pmFetch+columns, ref fetchgroup, C"},
    {"bench": "events_live_params", "unit": "params/s", "corpus": None, "ours": "live",
     "title": "(h') as (h), parameters/s (fetchgroups cannot return aggregates)"},
]


def _error(exc):
    return {"error": "%s: %s" % (type(exc).__name__, exc),
            "traceback": traceback.format_exc(limit=6)}


# ---- corpora ---------------------------------------------------------------------------

def _big_pdu(kind):
    """A HIGHRES_RESULT PDU with one event array of BIG_EVENTS events."""
    body = b""
    for i in range(BIG_EVENTS):
        params = [struct.pack(">IIi", 0x0740007F, (1 << 24) | 8, i),
                  struct.pack(">IIQ", 0x07400083, (3 << 24) | 12, i * 3),
                  struct.pack(">IId", 0x07400085, (5 << 24) | 12, i / 4.0)]
        s = ("event %d" % i).encode()
        params.append(struct.pack(">II", 0x07400086, (6 << 24) | (4 + len(s))) + s +
                      b"\0" * (-len(s) % 4))
        head = struct.pack(">iiIi", i, 1000 * (i % 1000), 1, 4) if kind == 9 else \
            struct.pack(">qqIi", i, i, 1, 4)
        body += head + b"".join(params)
    block = struct.pack(">Ii", (kind << 24) | (8 + len(body)), BIG_EVENTS) + body
    fixed = 12 + 20
    sets = struct.pack(">Iiiii", 0x07400088 if kind == 9 else 0x0740008B, 1, 1, -1,
                       (fixed + 20) // 4)
    total = fixed + len(sets) + len(block)
    return struct.pack(">iiiiqq", total, 0x7015, 0, 1, 1, 0) + sets + block


@pytest.fixture(scope="module")
def corpora(bench_tmpdir):
    from pcp import pmapi
    from pcp._decode.result import flat_of

    ctx = ref_live.new_context(pmapi, HOST)
    pmids = ctx.pmLookupName(METRICS)
    sample = [ctx.pmFetch(pmids) for _ in range(CORPUS_FETCHES)]
    big = [_big_pdu(9), _big_pdu(10)]
    paths = {}
    for name, pdus in (("sample", [flat_of(r).pdu for r in sample]), ("big", big)):
        path = bench_tmpdir / ("events_%s.hex" % name)
        path.write_text("\n".join(p.hex() for p in pdus) + "\n")
        paths[name] = path
    return {"ctx": ctx, "sample": sample, "big": [_result(p) for p in big], "paths": paths,
            "pmids": pmids}


def _result(pdu):
    from pcp._decode.result import FlatResult, LP_pmHighResResult, pmHighResResult

    return LP_pmHighResResult(pmHighResResult(FlatResult(pdu, True)))


# ---- our side ----------------------------------------------------------------------------

def _params_of(cols):
    return sum(len(col) for col in cols.params.values())


def _ours_op(case, corpora):
    ctx = corpora["ctx"]
    per_params = case["unit"] == "params/s"
    if case["ours"] == "bulk":
        results = corpora[case["corpus"]]

        def op():
            cols = ctx.event_columns(results)
            return _params_of(cols) if per_params else len(cols)
        return op
    if case["ours"] == "dropin":
        results = corpora[case["corpus"]]
        unpack = {9: ctx.pmUnpackEventRecords, 10: ctx.pmUnpackHighResEventRecords}

        def op():
            events = 0
            for res in results:
                c = res.contents
                for i in range(c.numpmid):
                    vs = c.get_vset(i)
                    for j in range(vs.numval):
                        recs = unpack[vs.vlist[j].value.pval.contents.vtype](vs, j)
                        for lp in recs:
                            r = lp.contents
                            for k in range(r.numpmid):
                                r.get_vset(k)
                        events += len(recs)
            return events
        return op
    pmids = corpora["pmids"]

    def op():
        cols = ctx.event_columns(ctx.pmFetch(pmids))
        return _params_of(cols) if per_params else len(cols)
    return op


def measure_ours(benchmark, case, corpora):
    try:
        op = _ours_op(case, corpora)
        count = [0, 0]

        def counted():
            count[0] += op()
            count[1] += 1

        iters = ref_live.calibrate(counted, ROUND_SECONDS)
        count[:] = [0, 0]
        benchmark.pedantic(counted, rounds=ROUNDS, iterations=iters, warmup_rounds=1)
    except Exception as exc:
        return _error(exc)
    stats = getattr(benchmark, "stats", None)
    if stats:
        result = ref_live.summarize(list(stats.stats.data), iters)
        result["timing"] = "pytest-benchmark pedantic"
    else:
        result = ref_live.timed_loop(counted, ROUNDS, ROUND_SECONDS)
        result["timing"] = "ref_live.timed_loop (pytest-benchmark disabled)"
    result.update(impl="pcp-native", bench=case["bench"],
                  units_per_op=count[0] / count[1] if count[1] else None)
    return result


@pytest.fixture(scope="module")
def run_events_reference(bench_tmpdir):
    from conftest import REF_PYTHON, _run_json

    def run(unit):
        cmd = [REF_PYTHON, "-I", REF_SCRIPT, "fetchgroup", "--rounds", str(ROUNDS),
               "--round-seconds", str(ROUND_SECONDS), "--host", HOST, "--unit", unit]
        return _run_json(cmd, bench_tmpdir)

    return run


@pytest.mark.parametrize("case", CASES, ids=[c["bench"] for c in CASES])
def test_events(case, benchmark, bench_results, corpora, run_c, run_events_reference):
    bench = case["bench"]
    benchmark.group = bench
    row = bench_results.row(bench, title=case["title"], unit=case["unit"],
                            target=dict(case["target"]) if case.get("target") else None)
    ours = measure_ours(benchmark, case, corpora)
    bench_results.record(bench, "ours", ours)
    unit = "params" if case["unit"] == "params/s" else "events"
    if case["corpus"]:
        c = run_c("event_unpack_loop", "-u", unit, "-c", corpora["paths"][case["corpus"]])
    else:
        c = run_c("event_unpack_loop", "-u", unit, "-l", *METRICS)
        bench_results.record(bench, "reference", run_events_reference(unit))
    bench_results.record(bench, "c", c)
    bench_results.finish_row(row)
    benchmark.extra_info.update({"unit": case["unit"], "libpcp_c": c,
                                 "ours_units_per_s": bench_results.rate(ours),
                                 "ours_over_c": row["ours_over_c"]})
    failed = [(side, row[side]["error"]) for side in ("ours", "reference", "c")
              if (row.get(side) or {}).get("error")]
    if failed:
        pytest.fail("; ".join("%s: %s" % f for f in failed), pytrace=False)
