"""PM_MODE_INTERP at random times and intervals against the official binding: for each
seed a start time (before, inside or after the archive), a delta (forwards or
backwards, from a millisecond to several seconds) and a run of fetches over metrics of
every semantics and type, on archives with marks, several volumes and several
archives; every value compared (instance order included)."""
from __future__ import annotations

import json
import random

import pytest
from support import archives, difftest

pytestmark = [pytest.mark.pmcd, pytest.mark.reference]

NAMES = ["sample.seconds", "sample.milliseconds", "sample.long.bin_ctr", "sample.ulong.bin_ctr",
         "sample.longlong.bin_ctr", "sample.ulonglong.bin_ctr", "sample.float.bin_ctr",
         "sample.double.bin_ctr", "sample.bin", "sample.colour", "sample.double.ten",
         "hinv.ncpu", "sample.string.hullo", "sample.many.int", "sample.proc.exec",
         "sample.dynamic.counter", "sample.hordes.one", "sample.event.records",
         "kernel.all.load"]

PROGRAM = r'''
import json, os
from pcp import pmapi
import cpmapi as c_api
cases = json.loads(os.environ["CASES"])
out = []
for arch, start_ns, delta_us, count in cases:
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, arch)
    pmids = ctx.pmLookupName(NAMES, relaxed=1)
    descs = {p: ctx.pmLookupDesc(p).contents.type for p in pmids if p != c_api.PM_ID_NULL}
    when = pmapi.timespec(start_ns // 10**9, start_ns % 10**9)
    step = pmapi.timespec(int(delta_us / 10**6), (abs(delta_us) % 10**6) * 1000 * (1 if delta_us >= 0 else -1))
    ctx.pmSetModeHighRes(c_api.PM_MODE_INTERP, when, step)
    run = []
    for _ in range(count):
        try:
            r = ctx.pmFetchHighRes(pmids)
        except pmapi.pmErr as e:
            run.append(e.args[0])
            continue
        c = r.contents
        fetch = [c.timestamp.tv_sec, c.timestamp.tv_nsec]
        for j in range(c.numpmid):
            n = c.get_numval(j)
            t = descs.get(c.get_pmid(j))
            values = []
            for k in range(max(n, 0)):
                inst = c.get_inst(j, k)
                if t in (0, 1, 2, 3, 4, 5):
                    a = ctx.pmExtractValue(c.get_valfmt(j), c.get_vlist(j, k), t, t)
                    v = [a.l, a.ul, a.ll, a.ull, repr(a.f), repr(a.d)][t]
                elif t == 6:
                    a = ctx.pmExtractValue(c.get_valfmt(j), c.get_vlist(j, k), t, t)
                    v = a.cp.decode()
                else:
                    v = c.get_vlist(j, k).value.pval.contents.vlen
                values.append([inst, v])
            fetch.append([n, values])
        run.append(fetch)
    out.append(run)
    del ctx
print(json.dumps(out))
'''

VARIANTS = ["v2", "v3", "marks", "mv", "list_pair", "overlap_pair"]
DELTAS_US = [1000, 37000, 100000, 250000, 999999, 1500000, -100000, -333333, -2000000, 0]


def _cases(corpus, seed):
    rng = random.Random(seed)
    cases = []
    for variant in VARIANTS:
        facts = archives.ref_facts(corpus[variant])
        start, end = archives.ns(facts["start"]), archives.ns(facts["end"])
        for _ in range(4):
            span = end - start
            at = start + int(rng.uniform(-0.1, 1.1) * span)
            cases.append([corpus[variant], at, rng.choice(DELTAS_US), rng.randint(3, 25)])
    return cases


@pytest.mark.parametrize("seed", range(10))
def test_random_interpolation_as_the_official_binding(pmcd, reference_binding, seed):
    corpus = archives.get_corpus()
    cases = _cases(corpus, seed)
    program = PROGRAM.replace("NAMES", repr(NAMES))
    env = {"CASES": json.dumps(cases)}
    ref = difftest.run_program(program, False, env, timeout=300)
    ours = difftest.run_program(program, True, env, timeout=300)
    assert isinstance(ref, list), ref
    assert isinstance(ours, list), ours
    for case, got, want in zip(cases, ours, ref):
        for i, (a, b) in enumerate(zip(got, want)):
            assert a == b, "%s fetch %d:\nours %r\nref  %r" % (case, i, a, b)
        assert len(got) == len(want), case


MARK_VARIANTS = ["marks", "marks3", "list_pair"]


@pytest.mark.parametrize("ignore", ["", "1ms", "30s"], ids=["all", "1ms", "30s"])
def test_ignored_marks_as_the_official_binding(pmcd, reference_binding, ignore):
    """$PCP_IGNORE_MARK_RECORDS: every <mark> ignored (empty), or those with records at
    most that far apart on both sides; the archives with a <mark> in a volume and the
    list with a <mark> made up between its archives, random times and steps. libpcp
    6.0.3 often crashes here (its look-around reads free records it still uses:
    "double free or corruption", segfaults, garbage strings), so each case runs in its
    own process and is compared when the reference survives it; at least a third of
    them must be compared."""
    corpus = archives.get_corpus()
    rng = random.Random(1000)
    cases = []
    for variant in MARK_VARIANTS:
        facts = archives.ref_facts(corpus[variant])
        start, end = archives.ns(facts["start"]), archives.ns(facts["end"])
        for _ in range(4):
            at = start + int(rng.uniform(0.2, 0.8) * (end - start))
            cases.append([corpus[variant], at, rng.choice(DELTAS_US), rng.randint(10, 30)])
    program = PROGRAM.replace("NAMES", repr(NAMES))
    compared = 0
    for case in cases:
        env = {"CASES": json.dumps([case]), "PCP_IGNORE_MARK_RECORDS": ignore}
        ref = difftest.run_program(program, False, env, timeout=120)
        if not isinstance(ref, list):
            continue                    # the reference crashed
        ours = difftest.run_program(program, True, env, timeout=120)
        assert isinstance(ours, list), ours
        got, want = ours[0], ref[0]
        for i, (a, b) in enumerate(zip(got, want)):
            assert a == b, "%s fetch %d:\nours %r\nref  %r" % (case, i, a, b)
        assert len(got) == len(want), case
        compared += 1
    assert compared * 3 >= len(cases), "the reference crashed in %d of %d cases" % (
        len(cases) - compared, len(cases))
