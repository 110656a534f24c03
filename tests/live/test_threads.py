"""Contexts, samplers and the current context under threads: libpcp locks each context for
each call and keeps the current context per thread, so a context shared by threads gives
every thread its own right answers. Every value is checked, not only the count."""
from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List, Tuple

import numpy as np
import pytest

import cpmapi as c_api
from pcp import pmapi
from pcp.sampler import Sampler

from support import archives
from support.cliutil import DEMO_ARCHIVE
from support.difftest import Pair

# static sample metrics and the value each always has (sample.long.bin: inst == value)
STATIC: Dict[str, Any] = {
    "sample.long.one": 1, "sample.long.ten": 10, "sample.long.hundred": 100,
    "sample.long.million": 1000000, "sample.double.one": 1.0, "sample.double.ten": 10.0,
    "sample.double.hundred": 100.0, "sample.string.hullo": "hullo world!",
}
THREADS = 8
ROUNDS = 300


def _run_threads(work: Callable[[int], None], n: int = THREADS) -> None:
    """Run work(i) in n threads started together; re-raise the first failure."""
    errors: List[BaseException] = []
    start = threading.Barrier(n)

    def body(i: int) -> None:
        try:
            start.wait()
            work(i)
        except BaseException as e:     # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]


def _value(ctx: pmapi.pmContext, result: Any, i: int, j: int, mtype: int) -> Any:
    atom = ctx.pmExtractValue(result.get_valfmt(i), result.get_vlist(i, j), mtype, mtype)
    return atom.dref(mtype)


@pytest.mark.pmcd
def test_a_shared_host_context_gives_each_thread_its_own_metric():
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, "local:")
    names = list(STATIC)
    pmids = ctx.pmLookupName(names)
    types = [d.contents.type for d in ctx.pmLookupDescs(pmids)]
    wrong: List[Tuple[int, Any]] = []

    def work(k: int) -> None:
        m = k % len(names)
        for _ in range(ROUNDS):
            r = ctx.pmFetch([pmids[m]]).contents
            if r.numpmid != 1 or r.get_pmid(0) != pmids[m] or r.get_numval(0) != 1:
                wrong.append((k, r.get_pmid(0)))
                continue
            v = _value(ctx, r, 0, 0, types[m])
            if v != STATIC[names[m]]:
                wrong.append((k, v))

    _run_threads(work)
    assert wrong == []


@pytest.mark.pmcd
def test_threads_mixing_requests_on_one_context_all_get_right_answers():
    """Lookups, descriptors, instance domains and multi-instance fetches interleaved."""
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, "local:")
    wrong: List[Any] = []

    def work(k: int) -> None:
        for n in range(ROUNDS // 3):
            step = (k + n) % 3
            if step == 0:
                pmid = ctx.pmLookupName(["sample.long.bin"])[0]
                desc = ctx.pmLookupDescs([pmid])[0]
                r = ctx.pmFetch([pmid]).contents
                got = {r.get_inst(0, j): _value(ctx, r, 0, j, desc.contents.type)
                       for j in range(r.get_numval(0))}
                if got != {i: i for i in range(100, 1000, 100)}:
                    wrong.append(got)
            elif step == 1:
                insts, inames = ctx.pmGetInDom(ctx.pmLookupDescs(
                    ctx.pmLookupName(["sample.long.bin"]))[0])
                if list(inames) != ["bin-%d" % i for i in insts]:
                    wrong.append(inames)
            else:
                if ctx.pmNameID(ctx.pmLookupName(["sample.long.ten"])[0]) != "sample.long.ten":
                    wrong.append("name")

    _run_threads(work)
    assert wrong == []


def _archive_fetch_times(ctx: pmapi.pmContext, pmids: List[int]) -> List[Tuple[int, int]]:
    out = []
    while True:
        try:
            r = ctx.pmFetch(pmids).contents
        except pmapi.pmErr as e:
            assert e.args[0] == c_api.PM_ERR_EOL
            return out
        out.append((r.timestamp.tv_sec, r.timestamp.tv_usec))


@pytest.mark.pmcd
def test_a_shared_archive_context_hands_out_each_record_once():
    path = archives.get_corpus()["v3"]       # pmlogger's, a few hundred records
    names = ["sample.colour", "sample.long.one"]
    alone = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, path)
    expected = _archive_fetch_times(alone, list(alone.pmLookupName(names)))
    shared = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, path)
    pmids = list(shared.pmLookupName(names))
    got: List[List[Tuple[int, int]]] = [[] for _ in range(THREADS)]
    _run_threads(lambda k: got[k].extend(_archive_fetch_times(shared, pmids)))
    everything = sorted(t for part in got for t in part)
    assert everything == sorted(expected) and len(expected) >= 30
    for part in got:        # each thread saw its records in archive order
        assert part == sorted(part)


@pytest.mark.pmcd
def test_threads_on_separate_archive_contexts_each_see_the_whole_archive():
    path = archives.get_corpus()["v2"]
    names = ["sample.colour", "sample.long.one"]
    alone = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, path)
    expected = _archive_fetch_times(alone, list(alone.pmLookupName(names)))
    got: List[Any] = [None] * THREADS

    def work(k: int) -> None:
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, path)
        got[k] = _archive_fetch_times(ctx, list(ctx.pmLookupName(names)))

    _run_threads(work)
    assert all(g == expected for g in got)


@pytest.mark.pmcd
def test_a_sampler_shared_by_threads_keeps_its_rows_in_time_order():
    path = archives.get_corpus()["v3"]
    names = ["sample.seconds", "sample.colour", "sample.long.one"]
    alone = Sampler(pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, path), names, capacity=1000)
    alone.run()
    shared = Sampler(pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, path), names, capacity=1000)

    def work(k: int) -> None:
        while True:
            try:
                shared.sample()
            except pmapi.pmErr as e:
                assert e.args[0] == c_api.PM_ERR_EOL
                return

    _run_threads(work, 4)
    assert shared.count == alone.count >= 30
    np.testing.assert_array_equal(shared.times, alone.times)
    for name in names:
        np.testing.assert_array_equal(shared[name].values, alone[name].values)


THREAD_CURRENT = r'''
import threading
ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, %(archive)r)
R = {"main": P.pmWhichContext() == ctx.ctx}
def other():
    R["other_before"] = catch(P.pmWhichContext)
    mine = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, %(archive)r)
    R["other_own"] = P.pmWhichContext() == mine.ctx
    mine.pmGetArchiveLabel()
    R["other_after_use"] = P.pmWhichContext() == mine.ctx
t = threading.Thread(target=other)
t.start()
t.join()
R["main_after"] = P.pmWhichContext() == ctx.ctx
RESULT = R
'''


@pytest.mark.pmcd
def test_the_current_context_is_per_thread_as_in_libpcp(reference_binding):
    pair = Pair(THREAD_CURRENT % {"archive": DEMO_ARCHIVE})
    for key in ("main", "other_before", "other_own", "other_after_use", "main_after"):
        pair.check(key)
