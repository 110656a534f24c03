"""pcp.pmda's domain_probe hook (PCP 6.3), as pmdapostgresql and pmdauwsgi 6.3 define it.

pmcheck(1) runs a PMDA with PCP_PYTHON_PROBE set: run() then calls domain_probe() and exits
with its answer (2 for an answer that is not an int), and set_user() stays who it is,
answering PM_ERR_NOTCONN. The same probes run under Debian trixie's python3-pcp 6.3.8 (in
its root) and this package at level 6.3, their exit status and output compared. Then the
PMDA serves a private pmcd (tests/pmda/pmcdrun.py: its own port, not the system pmcd's) at
level 6.3 and under the host's official 6.0.3 binding, for which domain_probe is an ordinary
method: the hook changes nothing of what the PMDA serves. At level 6.0 the probe variable
means nothing, as to 6.0.3.
"""
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

import pytest

from support import difftest, roots
from tests.pmda.pmcdrun import OFFICIAL, OURS, PrivatePmcd, _our_env

pytestmark = [pytest.mark.reference]

DOMAIN = 481
PMDA_SOURCE = r'''
import os
import cpmapi as c_api
from pcp.pmapi import pmUnits
from pcp.pmda import PMDA, pmdaMetric


class ProbePMDA(PMDA):
    """One metric; domain_probe answers what $PROBE_ANSWER asks."""

    def __init__(self, name, domain):
        PMDA.__init__(self, name, domain)
        self.add_metric(name + ".answer",
                        pmdaMetric(self.pmid(0, 0), c_api.PM_TYPE_U32, c_api.PM_INDOM_NULL,
                                   c_api.PM_SEM_INSTANT, pmUnits(0, 0, 0, 0, 0, 0)),
                        "the answer", "the answer, at length")
        self.set_fetch_callback(self.fetch_callback)

    def fetch_callback(self, cluster, item, inst):
        return [42, 1]

    def domain_probe(self):
        answer = os.environ.get("PROBE_ANSWER", "0")
        if answer == "default":
            return PMDA.domain_probe(self)
        if answer == "set_user":
            # as pmdapostgresql does before it connects: no identity change in a probe
            status = self.set_user("nobody")
            print("set_user", status)
            return 3 if status == c_api.PM_ERR_NOTCONN else 4
        if answer == "raise":
            raise RuntimeError("probe failed")
        if answer == "true":
            return True
        if answer.lstrip("-").isdigit():
            return int(answer)
        return answer


if __name__ == "__main__":
    ProbePMDA("probe", %d).run()
''' % DOMAIN

ANSWERS = ("0", "1", "5", "default", "set_user", "true", "not-an-int", "raise")


def _probe_reference(folder_in_root, answer):
    root = roots.root_dir((6, 3))
    argv = ["chroot", root, "/usr/bin/env", "-i", "-C", folder_in_root,
            "PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8", "HOME=/root", "PCP_PYTHON_PROBE=1",
            "PROBE_ANSWER=" + answer, "python3", "pmdaprobe.python"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    return [done.returncode, done.stdout, done.stderr.replace(folder_in_root, "DIR")]


def _probe_ours(folder, answer):
    env = difftest._env(True)
    env.update(_our_env(), PCP_NATIVE_API_LEVEL="6.3", PCP_PYTHON_PROBE="1",
               PROBE_ANSWER=answer)
    done = subprocess.run([OURS, "pmdaprobe.python"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    return [done.returncode, done.stdout, done.stderr.replace(folder, "DIR")]


def test_probe_answers_as_6_3_8(tmp_path, level_63):
    (tmp_path / "pmdaprobe.python").write_text(PMDA_SOURCE)
    root = roots.root_dir(level_63)
    folder_in_root = tempfile.mkdtemp(prefix="levels-probe-", dir=root + "/tmp")[len(root):]
    try:
        shutil.copy(tmp_path / "pmdaprobe.python", root + folder_in_root)
        with ThreadPoolExecutor(max_workers=4) as pool:
            refs = list(pool.map(lambda a: _probe_reference(folder_in_root, a), ANSWERS))
            ours = list(pool.map(lambda a: _probe_ours(str(tmp_path), a), ANSWERS))
    finally:
        shutil.rmtree(root + folder_in_root, ignore_errors=True)
    assert [r[0] for r in refs] == [0, 1, 5, 99, 3, 1, 2, 1], refs
    for answer, mine, theirs in zip(ANSWERS, ours, refs):
        if answer == "raise":
            # a traceback: the same exception, at the same line of the PMDA
            assert mine[0] == theirs[0]
            assert mine[2].splitlines()[-1] == theirs[2].splitlines()[-1]
            continue
        assert mine == theirs, answer


def _serve(base, interpreter, env):
    server = PrivatePmcd(base, "probe", DOMAIN, interpreter, source=base / "pmdaprobe.python",
                         env=env)
    try:
        out = server.install_steps()
        server.start()
        out["pminfo"] = server.run(["pminfo", "-dfT", "probe"])
    finally:
        server.stop()
    return out


@pytest.mark.pmcd
def test_a_probing_pmda_serves_pmcd_as_before(tmp_path):
    """The PMDA through a private pmcd: at level 6.3 (domain_probe the hook) as under the
    official 6.0.3 binding (domain_probe an ordinary method): Install's domain.h and PMNS
    and what pminfo fetches are the same."""
    difftest.require_reference()
    answers = {}
    for name, interpreter, env in (("official", OFFICIAL, {}),
                                   ("ours", OURS, {"PCP_NATIVE_API_LEVEL": "6.3"})):
        base = tmp_path / name
        base.mkdir()
        (base / "pmdaprobe.python").write_text(PMDA_SOURCE)
        answers[name] = _serve(base, interpreter, env)
    assert "42" in answers["official"]["pminfo"], answers["official"]
    assert answers["ours"] == answers["official"]


def test_level_6_0_has_no_probe(tmp_path):
    """At level 6.0 PCP_PYTHON_PROBE means nothing, as to the official 6.0.3: with Install's
    PCP_PYTHON_DOMAIN also set, the PMDA writes its domain.h line and exits 0."""
    difftest.require_reference()
    (tmp_path / "pmdaprobe.python").write_text(PMDA_SOURCE)
    runs = []
    for interpreter in (OFFICIAL, OURS):
        env = difftest._env(interpreter == OURS)
        if interpreter == OURS:
            env.update(_our_env(), PCP_NATIVE_API_LEVEL="6.0")
        env.update(PCP_PYTHON_PROBE="1", PCP_PYTHON_DOMAIN="1", PROBE_ANSWER="5")
        done = subprocess.run([interpreter, "pmdaprobe.python"], cwd=str(tmp_path), env=env,
                              capture_output=True, text=True, timeout=60, check=False)
        runs.append([done.returncode, done.stdout, done.stderr])
    assert runs[0] == [0, "#define PROBE %d\n" % DOMAIN, ""]
    assert runs[1] == runs[0]
