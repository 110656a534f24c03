"""The socket forms of a PMDA (pmcd.conf "socket inet PORT" and "socket unix PATH",
libpcp_pmda's -i and -u): pmdasimple on this package over each, against the official
binding serving the same PMDA over its pipe. The official binding cannot be a socket
PMDA at all: cpmda never parses -i/-u/-6 (pmdaGetOptions), so it writes its CREDS on
stdout and reads a closed stdin while pmcd waits on the socket ("Error connecting to
"simple" agent"). This package takes the form from PCP_PYTHON_PMDA_CONNECT (inet:PORT,
ipv6:PORT, unix:PATH), which leaves a PMDA's own options alone (pmdaopenmetrics has its
own -u)."""
from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.pmda.pmcdrun import OFFICIAL, OURS, PrivatePmcd, free_port, masked_log
from tests.pmda.test_pmda_acceptance import SIMPLE_STEPS, _mask_times, _needs_private_pmcd

pytestmark = [pytest.mark.pmcd, pytest.mark.reference]


def _simple(tmp, interpreter, connect=None):
    env = None
    if connect is not None:
        kind, where = connect.split("\t")[1:]
        env = {"PCP_PYTHON_PMDA_CONNECT": "%s:%s" % (kind, where)}
    server = PrivatePmcd(tmp, "simple", 253, interpreter, files={"simple.conf": "sec,min,hour\n"},
                         env=env, connect=connect)
    out = {}
    try:
        server.install_steps()
        server.start()
        for key, argv in SIMPLE_STEPS:
            out[key] = server.run(argv)
        out["agents"] = server.log("pmcd.log")
    finally:
        server.stop()
    out["log"] = masked_log(server.log("simple.log"))
    return out


@pytest.mark.parametrize("form", ["inet", "unix"])
def test_pmdasimple_over_a_socket_serves_what_the_official_pipe_pmda_serves(tmp_path, form):
    _needs_private_pmcd()
    if form == "inet":
        connect = "socket\tinet\t%d" % free_port()
    else:
        connect = "socket\tunix\t%s" % (tmp_path / "simple.socket")
    with ThreadPoolExecutor(max_workers=2) as pool:
        ref = pool.submit(_simple, tmp_path / "ref", OFFICIAL)
        ours = pool.submit(_simple, tmp_path / "ours", OURS, connect)
        ref, ours = ref.result(), ours.result()
    # pmcd's own table says which form it used
    assert re.search(r"simple\s+253\s+\d+\s+\d+\s+\d+\s+\d+ bin sock dom=%s" % form,
                     ours["agents"]), ours["agents"]
    assert re.search(r"simple\s+253\s+\d+\s+\d+\s+\d+\s+\d+ bin pipe", ref["agents"])
    for key, _ in SIMPLE_STEPS:
        a, b = _mask_times(str(ref[key])), _mask_times(str(ours[key]))
        if key in ("pminfo", "indom"):
            a = re.sub(r"(\[\d+ or \"\w+\"\] value )\d+", r"\1NUM", a)
            b = re.sub(r"(\[\d+ or \"\w+\"\] value )\d+", r"\1NUM", b)
        assert b == a, key
    # at pmcd's shutdown a socket may be reset rather than closed (a pipe only ends):
    # libpcp_pmda logs that read error too
    mine = [line for line in ours["log"] if "IPC Error: Connection reset by peer" not in line]
    while mine and mine[-1] == "":
        mine.pop()
    assert mine == ref["log"]


def test_an_unknown_connect_form_ends_the_pmda_with_a_critical_line(tmp_path):
    """libpcp_pmda's pmdaConnect exits 1 on a connection it cannot make; a form it
    does not know is one."""
    import os
    import subprocess
    script = tmp_path / "pmdaform.python"
    script.write_text("from pcp.pmda import PMDA\nPMDA('form', 400).run()\n")
    env = dict(os.environ, PCP_PYTHON_PMDA_CONNECT="tcp:44321")
    if os.environ.get("PCP_TEST_ASAN_PRELOAD"):
        # under .ci/sanitize.sh the PMDA's python imports the sanitized build
        env["LD_PRELOAD"] = os.environ["PCP_TEST_ASAN_PRELOAD"]
    env.pop("PCP_PYTHON_DOMAIN", None)
    env.pop("PCP_PYTHON_PMNS", None)
    done = subprocess.run([OURS, str(script)], cwd=str(tmp_path), env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert done.returncode == 1
    log = (tmp_path / "form.log").read_text()
    assert ("Critical: pmdaConnect: PCP_PYTHON_PMDA_CONNECT=tcp:44321: expected inet:PORT, "
            "ipv6:PORT, unix:PATH or pipe") in log
