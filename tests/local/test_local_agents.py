"""What only pcp-native's LOCAL context has, since its PMDAs are child processes rather
than DSOs: children start on the first request for their domain and are shared by the
process's contexts; a PMDA that dies or hangs during a request fails that request with
PM_ERR_NOAGENT (its sets only) and is started again for the next one; children leave
with the process; contexts of several threads get right answers. Each case runs in a
process of its own (the local table and the children are per process)."""
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from support import difftest

pytestmark = [pytest.mark.timeout(180)]

HERE = Path(__file__).resolve().parent
PMDAS = "/var/lib/pcp/pmdas"
FAULTY = 400

PRELUDE = textwrap.dedent('''
    import json, os, sys, threading, time
    from pcp import pmapi
    import cpmapi as c_api
    from pcp._local import agents

    def values(ctx, pmids):
        r = ctx.pmFetch(pmids)
        out = []
        for i in range(r.contents.numpmid):
            n = r.contents.get_numval(i)
            out.append([r.contents.get_vlist(i, j).value.lval for j in range(n)] if n > 0 else n)
        ctx.pmFreeResult(r)
        return out

    def pids():
        return sorted((a.domain, a.pid) for a in agents.running())
''')


def _table(tmp_path: Path) -> Path:
    """A local table with sampledso, the linux PMDA and the faulty test PMDA."""
    home = tmp_path / "faulty"
    home.mkdir()
    (home / "pmda_faulty.so").write_bytes(b"")      # what the table names; never loaded
    shutil.copy(HERE / "pmdas" / "pmdafaulty.python", home / "pmdafaulty.python")
    daemon = home / "pmdafaulty"
    daemon.write_text("#!/bin/sh\nexec %s %s/pmdafaulty.python \"$@\"\n" % (sys.executable, home))
    daemon.chmod(0o755)
    conf = tmp_path / "pmcd.conf"
    conf.write_text("sampledso\t30\tdso\tsample_init\t%s/sample/pmda_sample.so\n"
                    "linux\t60\tpipe\tbinary\t%s/linux/pmdalinux\n"
                    "faulty\t%d\tdso\tfaulty_init\t%s/pmda_faulty.so\n"
                    % (PMDAS, PMDAS, FAULTY, home))
    return conf


def _run(tmp_path: Path, body: str, env=None, timeout=120) -> dict:
    full = difftest._env(True)
    full.update({"PCP_PMCDCONF_PATH": str(_table(tmp_path)),
                 "PCP_NATIVE_LOCAL_LOGDIR": str(tmp_path / "logs")})
    full.update(env or {})
    proc = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)],
                          cwd=difftest._cwd(), env=full, capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def pmid(domain, cluster, item):
    return (domain << 22) | (cluster << 10) | item


OK, DIE, HANG, PID = (pmid(FAULTY, 0, i) for i in range(4))
ONE = pmid(30, 0, 10)           # sampledso.long.one
NCPU = pmid(60, 0, 32)          # hinv.ncpu


def test_children_start_on_first_need_and_are_shared(tmp_path):
    out = _run(tmp_path, '''
        a = pmapi.pmContext(c_api.PM_CONTEXT_LOCAL, None)
        b = pmapi.pmContext(c_api.PM_CONTEXT_LOCAL, None)
        before = pids()
        a.pmLookupName("sampledso.long.one")          # names come from the local PMNS
        after_names = pids()
        first = values(a, [%d])
        after_one = pids()
        second = values(b, [%d, %d])
        print(json.dumps([before, after_names, first, after_one, second, pids()]))
    ''' % (ONE, ONE, NCPU))
    before, after_names, first, after_one, second, final = out
    assert before == [] and after_names == []
    assert first == [[1]]
    assert [d for d, _ in after_one] == [30]
    assert second[0] == [1] and second[1][0] >= 1
    assert [d for d, _ in final] == [30, 60]
    assert final[0] == after_one[0]                 # the second context shares the child


def test_a_pmda_that_dies_mid_fetch_fails_that_fetch_then_comes_back(tmp_path):
    out = _run(tmp_path, '''
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_LOCAL, None)
        r1 = values(ctx, [%d, %d, %d])
        pid1 = values(ctx, [%d])[0][0]
        r2 = values(ctx, [%d, %d, %d])            # the PMDA exits instead of replying
        r3 = values(ctx, [%d, %d])
        pid2 = values(ctx, [%d])[0][0]
        desc = str(ctx.pmLookupDesc(%d).contents.type)
        print(json.dumps([r1, pid1, r2, r3, pid2, desc]))
    ''' % (OK, ONE, NCPU, PID, OK, DIE, ONE, OK, NCPU, PID, OK))
    r1, pid1, r2, r3, pid2, desc = out
    assert r1[0] == [7] and r1[1] == [1]
    assert r2[0] == -12386 and r2[1] == -12386 and r2[2] == [1]    # PM_ERR_NOAGENT
    assert r3[0] == [7] and r3[1][0] >= 1
    assert pid2 != pid1
    assert desc == "0"


def test_a_pmda_that_hangs_times_out_and_is_replaced(tmp_path):
    start = time.monotonic()
    out = _run(tmp_path, '''
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_LOCAL, None)
        t0 = time.monotonic()
        r1 = values(ctx, [%d, %d])
        waited = time.monotonic() - t0
        r2 = values(ctx, [%d])
        print(json.dumps([r1, waited, r2]))
    ''' % (HANG, ONE, OK), env={"PCP_NATIVE_AGENT_TIMEOUT": "1"})
    r1, waited, r2 = out
    assert r1 == [-12386, [1]]
    assert 0.9 <= waited < 10
    assert r2 == [[7]]
    assert time.monotonic() - start < 60


def test_unknown_requests_of_a_dead_domain_and_descriptors(tmp_path):
    out = _run(tmp_path, '''
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_LOCAL, None)
        got = []
        for call in (lambda: ctx.pmLookupDesc(%d), lambda: ctx.pmLookupText(%d),
                     lambda: ctx.pmNameAll(%d), lambda: ctx.pmLookupDesc(%d)):
            try:
                got.append(str(call()))
            except pmapi.pmErr as e:
                got.append(e.args[0])
        print(json.dumps(got))
    ''' % (pmid(77, 0, 1), OK, pmid(77, 0, 1), pmid(FAULTY, 3, 3)))
    assert out[0] == -12386 and out[2] == -12386
    assert out[1] == "b'ok'"
    assert out[3] == -12358                                         # PM_ERR_PMID


def test_children_leave_with_the_process(tmp_path):
    out = _run(tmp_path, '''
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_LOCAL, None)
        values(ctx, [%d, %d, %d])
        print(json.dumps(pids()))
    ''' % (ONE, NCPU, OK))
    assert [d for d, _ in out] == [30, 60, FAULTY]
    deadline = time.monotonic() + 10
    alive = [p for _, p in out]
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if os.path.exists("/proc/%d" % p)
                 and "zombie" not in open("/proc/%d/status" % p).read()]
        time.sleep(0.1)
    assert alive == []
    # their logs are where PCP_NATIVE_LOCAL_LOGDIR says, and stay
    assert (tmp_path / "logs" / "sample.log").exists()


def test_contexts_of_several_threads_get_right_answers(tmp_path):
    out = _run(tmp_path, '''
        shared = pmapi.pmContext(c_api.PM_CONTEXT_LOCAL, None)
        names = ["sampledso.long.one", "sampledso.long.hundred", "hinv.ncpu", "sampledso.bin"]
        expect = None
        wrong = []

        def work(ctx, n):
            pmids = ctx.pmLookupName(names)
            for _ in range(n):
                got = values(ctx, pmids)
                if got != expect:
                    wrong.append(got)
                got = ctx.pmGetInDom(ctx.pmLookupDesc(pmids[3]))
                if got[1][0] != "bin-100":
                    wrong.append(got)

        first = pmapi.pmContext(c_api.PM_CONTEXT_LOCAL, None)
        expect = values(first, first.pmLookupName(names))
        threads = [threading.Thread(target=work, args=(pmapi.pmContext(c_api.PM_CONTEXT_LOCAL, None), 40))
                   for _ in range(3)]
        threads += [threading.Thread(target=work, args=(shared, 40)) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print(json.dumps([expect, wrong[:3], len(wrong)]))
    ''')
    expect, sample, count = out
    assert expect[0] == [1] and expect[1] == [100] and len(expect[3]) == 9
    assert count == 0, sample


def test_a_pmda_not_ready_answers_so_until_it_says_it_is_ready(tmp_path):
    """sampledso.not_ready: the sample PMDA's daemon goes into limbo (PM_ERR_PMDANOTREADY
    instead of a reply, then PM_ERR_PMDAREADY on its own when it is back), as pmcd sees
    it; meanwhile its requests fail at once with PM_ERR_PMDANOTREADY, others work."""
    out = _run(tmp_path, '''
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_LOCAL, None)
        pmids = ctx.pmLookupName(["sampledso.not_ready", "sampledso.long.one", "hinv.ncpu"])
        r = ctx.pmFetch(pmids)
        r.contents.get_vlist(0, 0).value.lval = 1
        try:
            store = ctx.pmStore(r)
        except pmapi.pmErr as e:
            store = e.args[0]
        during = values(ctx, pmids)
        t0 = time.monotonic()
        while values(ctx, pmids)[1] != [1] and time.monotonic() - t0 < 10:
            time.sleep(0.1)
        print(json.dumps([store, during, values(ctx, pmids), time.monotonic() - t0]))
    ''')
    store, during, after, waited = out
    assert store == -13394                                          # PM_ERR_PMDANOTREADY
    assert during[0] == during[1] == -13394 and during[2][0] >= 1
    assert after[0] == [0] and after[1] == [1]
    assert 0.3 < waited < 5


def test_a_forked_child_starts_its_own_pmdas(tmp_path):
    """After fork() the parent keeps its PMDA children and the child process starts its
    own: both read right answers, neither takes the other's replies."""
    out = _run(tmp_path, '''
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_LOCAL, None)
        pmids = ctx.pmLookupName(["sampledso.long.one", "hinv.ncpu"])
        before = values(ctx, pmids)
        parent_pids = pids()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            mine = [values(ctx, pmids) for _ in range(20)]
            os.write(w, json.dumps([mine[-1], pids()]).encode())
            os._exit(0)
        os.close(w)
        theirs = [values(ctx, pmids) for _ in range(20)]
        child = json.loads(os.read(r, 65536))
        os.waitpid(pid, 0)
        print(json.dumps([before, theirs[-1], child, parent_pids, pids()]))
    ''')
    before, parent_after, (child_values, child_pids), parent_pids, parent_pids_after = out
    assert before == parent_after == child_values
    assert parent_pids == parent_pids_after
    assert {p for _, p in child_pids}.isdisjoint({p for _, p in parent_pids})
