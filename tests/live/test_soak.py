"""Soak checks that stay in the suite, bounded in time: many fetches with strings on one
live context, many archive contexts opened and closed, many live contexts opened and
closed. Resident memory and open descriptors must stay flat: each check runs a warm-up
round, then measures the growth over the next rounds, in a fresh interpreter."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from support.cliutil import DEMO_ARCHIVE

SOAK = r'''
import gc, json, os, sys
from pcp import pmapi
import cpmapi as c

def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])

def fds():
    return len(os.listdir("/proc/self/fd"))

kind, rounds, per_round = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if kind == "fetch":
    ctx = pmapi.pmContext(c.PM_CONTEXT_HOST, "local:")
    pmids = ctx.pmLookupName(["sample.string.hullo", "sample.string.write_me",
                              "sample.long.bin", "sample.colour"])
    descs = ctx.pmLookupDescs(pmids)
    def step():
        r = ctx.pmFetch(pmids).contents
        for i in range(r.numpmid):
            t = descs[i].contents.type
            for j in range(r.get_numval(i)):
                ctx.pmExtractValue(r.get_valfmt(i), r.get_vlist(i, j), t, t).dref(t)
elif kind == "archive":
    def step():
        ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, sys.argv[4])
        ctx.pmFetch(ctx.pmLookupName(["sample.colour"]))
        ctx.pmGetArchiveEnd()
        del ctx
else:
    def step():
        ctx = pmapi.pmContext(c.PM_CONTEXT_HOST, "local:")
        ctx.pmFetch(ctx.pmLookupName(["sample.long.one"]))
        del ctx
out = []
for _ in range(rounds):
    for _ in range(per_round):
        step()
    gc.collect()
    out.append([rss_kb(), fds()])
print(json.dumps(out))
'''

under_asan = pytest.mark.skipif(bool(os.environ.get("PCP_TEST_ASAN_PRELOAD")),
                                reason="resident memory means nothing under AddressSanitizer")


def _soak(kind: str, rounds: int, per_round: int, *extra: str):
    proc = subprocess.run([sys.executable, "-c", SOAK, kind, str(rounds), str(per_round), *extra],
                          capture_output=True, text=True, timeout=300, cwd="/")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _flat(samples, rss_slack_kb: int) -> None:
    """From the second round on (the first warms caches up): descriptors equal, and
    memory within a slack no leak of one object per step could hide in."""
    base_rss, base_fds = samples[1]
    for rss, fds in samples[2:]:
        assert fds == base_fds, samples
        assert rss - base_rss < rss_slack_kb, samples


@under_asan
@pytest.mark.pmcd
def test_fetches_with_strings_keep_memory_flat():
    # 6 rounds of 4000 fetches (about 60 values each, strings among them): a leak of 16
    # bytes a fetch would add 320 kB between the second round and the last
    _flat(_soak("fetch", 6, 4000), 256)


@under_asan
def test_archive_contexts_opened_and_closed_keep_memory_and_descriptors_flat():
    _flat(_soak("archive", 6, 300, DEMO_ARCHIVE), 512)


@under_asan
@pytest.mark.pmcd
def test_host_contexts_opened_and_closed_keep_memory_and_descriptors_flat():
    _flat(_soak("host", 5, 150), 512)
