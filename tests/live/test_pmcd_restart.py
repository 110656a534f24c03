"""pmcd stopped and started again under a fetching client, on a private pmcd (its own
port, socket, configuration with the sample PMDA, run and log directories), so the shared
pmcd is never touched: the same error codes at each step as the official binding, and the
same recovery with pmReconnectContext."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

from support.difftest import require_reference, run_program
from support.pmcdpath import private_pmcd as pmcd_link

PMCD = "/usr/lib/pcp/bin/pmcd"
SAMPLE = "/var/lib/pcp/pmdas/sample/pmdasample"

PROGRAM = r'''
import json, subprocess, time
from pcp import pmapi
import cpmapi as c
R = {}
def step(name, f):
    try:
        R[name] = ["ok", f()]
    except pmapi.pmErr as e:
        R[name] = ["pmErr", e.args[0]]
    except Exception as e:
        R[name] = ["raised", type(e).__name__]
ctx = pmapi.pmContext(c.PM_CONTEXT_HOST, %(host)r)
pmids = ctx.pmLookupName(["sample.long.one"])
value = lambda: ctx.pmFetch(pmids).contents.get_vlist(0, 0).value.lval
step("before", value)
subprocess.run(%(stop)r, check=True)
step("after_stop", value)
step("after_stop_again", value)
step("reconnect_while_down", ctx.pmReconnectContext)
subprocess.run(%(start)r, check=True)
time.sleep(1.5)                 # past PMCD_RECONNECT_TIMEOUT's first step of 1 s
step("reconnect", lambda: ctx.pmReconnectContext() == ctx.ctx)
step("after_reconnect", value)
step("lookup_after_reconnect", lambda: list(ctx.pmLookupName(["sample.long.ten"])) != [])
print(json.dumps(R))
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def private_pmcd(tmp_path, pmcd):
    if not (os.path.exists(PMCD) and os.path.exists(SAMPLE)):
        if os.environ.get("CI"):
            pytest.fail("pmcd or the sample PMDA is not installed (CI is set)")
        pytest.skip("pmcd or the sample PMDA is not installed")
    if os.geteuid() != 0:
        pytest.skip("a private pmcd needs root here")
    port = _free_port()
    conf = tmp_path / "pmcd.conf"
    conf.write_text("sample\t29\tpipe\tbinary\t%s -d 29\n" % SAMPLE)
    env = dict(os.environ, PCP_RUN_DIR=str(tmp_path), PCP_PMCDCONF_PATH=str(conf))
    argv = [pmcd_link(tmp_path), "-f", "-p", str(port), "-s", str(tmp_path / "pmcd.socket"),
            "-c", str(conf),
            "-l", str(tmp_path / "pmcd.log"), "-U", "root"]
    script = tmp_path / "pmcdctl"
    script.write_text(
        "#!/bin/sh\n"
        "# start or stop the private pmcd of this test (never with the sanitizer runtime\n"
        "# the client under test may have preloaded)\n"
        "unset LD_PRELOAD\n"
        "case $1 in\n"
        "start) env PCP_RUN_DIR=%(run)s PCP_PMCDCONF_PATH=%(conf)s %(argv)s >/dev/null 2>&1 &\n"
        "       for i in $(seq 50); do pmprobe -h 127.0.0.1:%(port)d sample.long.one "
        ">/dev/null 2>&1 && exit 0; sleep 0.1; done; exit 1 ;;\n"
        "stop)  pkill -f -- '-p %(port)d -s %(run)s' ; for i in $(seq 50); do "
        "pgrep -f -- '-p %(port)d -s %(run)s' >/dev/null || exit 0; sleep 0.1; done; exit 1 ;;\n"
        "esac\n" % {"run": tmp_path, "conf": conf, "argv": " ".join(argv), "port": port})
    script.chmod(0o755)
    subprocess.run([str(script), "start"], check=True, env=env)
    try:
        yield "127.0.0.1:%d" % port, str(script)
    finally:
        subprocess.run([str(script), "stop"], env=env)


@pytest.mark.pmcd
@pytest.mark.reference
@pytest.mark.timeout(300)
def test_pmcd_restarted_under_a_fetching_client(private_pmcd, reference_binding):
    require_reference()
    host, ctl = private_pmcd
    program = PROGRAM % {"host": host, "stop": [ctl, "stop"], "start": [ctl, "start"]}
    env = {"PMCD_RECONNECT_TIMEOUT": "1", "PMCD_REQUEST_TIMEOUT": "3"}
    ref = run_program(program, False, env, timeout=120)
    ours = run_program(program, True, env, timeout=120)
    assert ref["before"] == ["ok", 1] and ref["after_reconnect"] == ["ok", 1], ref
    assert ours == ref, (ours, ref)
