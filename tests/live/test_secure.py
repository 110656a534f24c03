"""Secure connections (TLS and SASL) against private pmcds, on both bindings.

One module fixture makes a CA and certificates with openssl, a sasldb with saslpasswd2,
and starts pmcds on free loopback ports, each with its own configuration directory:
TLS with a good certificate, without TLS, with `-S` (authentication required), with
`-Q` (client certificates required), with an expired certificate, with one from an
unknown CA, with one for another host name, and one offering only PLAIN. The machine's
own pmcd is not involved.

Each scenario is a host spec run through pmNewContext, pmGetContextHostName,
pmLookupName and pmFetch in one process per binding and client environment (libpcp
keeps its TLS client context for the life of a process): the outcome of every call,
the error code and the call it appears at, must be the same.

The SASL scenarios run twice on this package's side: in the test venv, and in a venv
holding only the package and its declared dependencies (support/plainenv.py), which is
what a plain ``pip install`` gives: every mechanism must work there too.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Tuple

import pytest

from support.cliutil import our_env
from support.difftest import OUR_PYTHON, REF_PYTHON, require_reference, run_program
from support.plainenv import make_plain_env
from support.securepmcd import (OK, PM_ERR_IPC, PROBE_PROGRAM, SASL_BADAUTH, SASL_BADPARAM,
                                SASL_NOMECH, SASL_PASSWORD, SASL_USER, SecureSetup, fails_at,
                                missing_tools, sasl_cases, sasl_spec as _auth)

pytestmark = [pytest.mark.pmcd, pytest.mark.reference, pytest.mark.timeout(300)]

PM_ERR_NOTCONN = -12391
PM_ERR_NEEDCLIENTCERT = -12408
PM_ERR_TLS = -12414
EOPNOTSUPP = -95

@pytest.fixture(scope="module")
def pmcds(tmp_path_factory):
    why = missing_tools()
    if why:
        if os.environ.get("CI"):
            pytest.fail(why + " (CI is set)")
        pytest.skip(why)
    require_reference()
    setup = SecureSetup(str(tmp_path_factory.mktemp("secure")))
    try:
        starts = {
            "tls": {}, "plain": {"cert": None}, "reqauth": {"args": ("-S",)},
            "certreq": {"args": ("-Q",)}, "expired": {"cert": "expired"},
            "stranger": {"cert": "stranger"}, "wronghost": {"cert": "wronghost"},
            "plainonly": {"mechs": "PLAIN"},
        }
        with ThreadPoolExecutor(4) as pool:
            futures = {name: pool.submit(setup.start, name, **kw) for name, kw in starts.items()}
            ports = {name: f.result() for name, f in futures.items()}
        confs = {
            "none": setup.client_tlsconf("none", {}),
            "verify": setup.client_tlsconf("verify", {"tls-verify-clients": "true",
                                                      "tls-ca-cert-file": "ca.crt"}),
            "clientcert": setup.client_tlsconf("clientcert", {
                "tls-ca-cert-file": "ca.crt", "tls-client-cert-file": "client.crt",
                "tls-client-key-file": "client.key"}),
            "otherca": setup.client_tlsconf("otherca", {"tls-verify-clients": "yes",
                                                        "tls-ca-cert-file": "otherca.crt"}),
            "badca": setup.client_tlsconf("badca", {"tls-ca-cert-file": "missing.crt"}),
        }
        time.sleep(max(0.0, setup.expired_at - time.time()))    # "expired" has expired
        yield setup, ports, confs
    finally:
        setup.stop()


@pytest.fixture(scope="module")
def plain_python(tmp_path_factory):
    """The interpreter of a venv with the package and its dependencies only."""
    python = make_plain_env(str(tmp_path_factory.mktemp("plainenv") / "venv"))
    probe = run_program("import importlib.util, json; print(json.dumps(["
                        "importlib.util.find_spec(m) is None for m in %r]))" % (EXTRAS,),
                        True, python=python)
    assert probe == [True] * len(EXTRAS), probe
    return python


# what the extras bring: none of it may be importable in the plain venv
EXTRAS = ("scramp", "pandas", "pyarrow", "hypothesis", "pytest", "dask", "tqdm")


@pytest.fixture(params=["test-venv", "plain-install"])
def our_python(request):
    """This package's interpreter: the test venv's, then the plain venv's."""
    if request.param == "plain-install":
        return request.getfixturevalue("plain_python")
    return OUR_PYTHON


def run_both(specs: List[str], env: Dict[str, str],
             python: str = OUR_PYTHON) -> Tuple[list, list]:
    full = dict(env, PCP_TEST_SPECS=json.dumps(specs), PCP_CONSOLE="none")
    with ThreadPoolExecutor(2) as pool:
        ours = pool.submit(run_program, PROBE_PROGRAM, True, full, 120, python)
        ref = pool.submit(run_program, PROBE_PROGRAM, False, full, 120)
        return ours.result(), ref.result()


def check(specs: List[str], env: Dict[str, str], expected: List[dict],
          python: str = OUR_PYTHON) -> None:
    """Both bindings give the same outcomes, and these are the expected ones (on the
    keys given: the call that failed and its code, or a value). python: this package's
    interpreter."""
    ours, ref = run_both(specs, env, python)
    assert isinstance(ours, list) and isinstance(ref, list), (ours, ref)
    assert ours == ref, "\n".join("%s\n  ours %s\n  ref  %s" % (s, o, r)
                                  for s, o, r in zip(specs, ours, ref) if o != r) or (ours, ref)
    for spec, got, want in zip(specs, ref, expected):
        for key, value in want.items():
            assert got.get(key) == value, (spec, got, want)


# ---- TLS --------------------------------------------------------------------------------

def test_tls_without_client_configuration(pmcds):
    # libpcp's default: no verification of the server's certificate, no host name check
    setup, p, conf = pmcds
    specs = [
        "pcps://localhost:%d" % p["tls"],
        "pcps://127.0.0.1:%d" % p["tls"],
        "127.0.0.1:%d?secure=enforce" % p["plain"],       # ?secure= needs pcps:
        "pcps://127.0.0.1:%d?secure=relaxed" % p["plain"],
        "pcps://localhost:%d" % p["plain"],                # no TLS at pmcd: refused
        "pcps://localhost:%d" % p["expired"],
        "pcps://localhost:%d" % p["stranger"],
        "pcps://localhost:%d" % p["wronghost"],
        "127.0.0.1:%d" % p["tls"],                          # plain beside TLS, same port
    ]
    check(specs, {"PCP_TLSCONF_PATH": conf["none"]},
          [dict(OK, features=[1, 1, 0, 0]), OK, dict(OK, features=[0, 1, 0, 0]), OK,
           fails_at("pmNewContext", EOPNOTSUPP), OK, OK, OK, OK])


def test_tls_with_server_verification(pmcds):
    setup, p, conf = pmcds
    specs = ["pcps://localhost:%d" % p["tls"], "pcps://localhost:%d" % p["stranger"],
             "pcps://localhost:%d" % p["expired"], "pcps://127.0.0.1:%d" % p["wronghost"],
             "localhost:%d?secure=relaxed" % p["tls"]]
    check(specs, {"PCP_TLSCONF_PATH": conf["verify"]},
          [OK, fails_at("pmNewContext", PM_ERR_TLS), fails_at("pmNewContext", PM_ERR_TLS),
           OK, OK])


def test_tls_with_another_ca(pmcds):
    setup, p, conf = pmcds
    specs = ["pcps://localhost:%d" % p["tls"], "pcps://localhost:%d" % p["stranger"]]
    check(specs, {"PCP_TLSCONF_PATH": conf["otherca"]},
          [fails_at("pmNewContext", PM_ERR_TLS), OK])


def test_client_certificates(pmcds):
    setup, p, conf = pmcds
    specs = ["pcps://127.0.0.1:%d" % p["certreq"], "127.0.0.1:%d" % p["certreq"],
             "pcps://localhost:%d" % p["certreq"], "localhost:%d" % p["certreq"]]
    # without one: refused by libpcp's own check for a remote name, by pmcd at the first
    # request over TLS; "localhost" counts as local and is not asked for one
    check(specs, {"PCP_TLSCONF_PATH": conf["none"]},
          [fails_at("pmLookupName", PM_ERR_IPC), fails_at("pmNewContext", PM_ERR_NEEDCLIENTCERT),
           fails_at("pmLookupName", PM_ERR_IPC), dict(OK, features=[1, 1, 0, 1])])
    check(specs[:1] + specs[2:], {"PCP_TLSCONF_PATH": conf["clientcert"]}, [OK, OK, OK])
    # a certificate without its key: libpcp loads the chain and presents nothing
    nokey = setup.client_tlsconf("nokey", {"tls-client-cert-file": "client.crt"})
    check(specs[:1], {"PCP_TLSCONF_PATH": nokey}, [fails_at("pmLookupName", PM_ERR_IPC)])
    # a "certificate" that is not one: no client context at all
    notcert = setup.client_tlsconf("notcert", {"tls-client-cert-file": "client.key"})
    check(specs[:1], {"PCP_TLSCONF_PATH": notcert}, [fails_at("pmNewContext", PM_ERR_NOTCONN)])


def test_unloadable_client_configuration(pmcds):
    setup, p, conf = pmcds
    check(["pcps://localhost:%d" % p["tls"], "localhost:%d" % p["tls"]],
          {"PCP_TLSCONF_PATH": conf["badca"]}, [fails_at("pmNewContext", PM_ERR_NOTCONN), OK])


@pytest.mark.parametrize("settings, outcome", [
    ({"tls-ciphers": "NO-SUCH-CIPHER"}, fails_at("pmNewContext", PM_ERR_NOTCONN)),
    ({"tls-ciphersuites": "TLS_NO_SUCH_SUITE"}, fails_at("pmNewContext", PM_ERR_NOTCONN)),
    ({"tls-ciphersuites": "TLS_AES_128_GCM_SHA256"}, OK),
    ({"tls-ciphers": "ECDHE-ECDSA-AES128-GCM-SHA256"}, OK),
])
def test_cipher_settings(pmcds, settings, outcome):
    setup, p, conf = pmcds
    path = setup.client_tlsconf("cipher-%s" % "-".join(settings.values()), settings)
    check(["pcps://localhost:%d" % p["tls"]], {"PCP_TLSCONF_PATH": path}, [outcome])


def test_secure_sockets_environment(pmcds):
    setup, p, conf = pmcds
    specs = ["localhost:%d" % p["tls"], "localhost:%d" % p["plain"],
             "unix:%s" % setup.socket_path("plain"), "pcps://localhost:%d?secure=relaxed" % p["plain"],
             "unix:%s" % setup.socket_path("tls")]                  # TLS over a unix socket
    check(specs, {"PCP_TLSCONF_PATH": conf["verify"], "PCP_SECURE_SOCKETS": "enforce"},
          # unix: ends any failure as a failed connect, -ENOENT
          [OK, fails_at("pmNewContext", EOPNOTSUPP), fails_at("pmNewContext", -2), OK, OK])
    check(specs[:3], {"PCP_TLSCONF_PATH": conf["verify"], "PCP_SECURE_SOCKETS": "relaxed"},
          [OK, OK, OK])


# ---- SASL -------------------------------------------------------------------------------

def test_sasl_mechanisms(pmcds, our_python):
    setup, p, conf = pmcds
    specs, expected = sasl_cases(p["tls"])
    check(specs, {"PCP_TLSCONF_PATH": conf["verify"]}, expected, our_python)


def test_sasl_over_tls_and_required_authentication(pmcds, our_python):
    setup, p, conf = pmcds
    sock = setup.socket_path("reqauth")
    specs = [
        _auth(p["tls"], SASL_USER, SASL_PASSWORD, "scram-sha-256", "pcps://"),
        _auth(p["tls"], SASL_USER, "wrong", "PLAIN", "pcps://"),
        "localhost:%d" % p["reqauth"],                      # no user: cyrus gets no name
        "localhost:%d?username=%s" % (p["reqauth"], SASL_USER),   # no password
        _auth(p["reqauth"], SASL_USER, SASL_PASSWORD),
        _auth(p["reqauth"], SASL_USER, SASL_PASSWORD, "DIGEST-MD5", "pcps://"),
        "unix:%s" % sock,                                    # peer credentials
        _auth(p["plainonly"], SASL_USER, SASL_PASSWORD),     # pmcd offers PLAIN only
        _auth(p["plainonly"], SASL_USER, SASL_PASSWORD, "SCRAM-SHA-1"),   # not offered
        "localhost:%d?userauth" % p["plain"],
    ]
    check(specs, {"PCP_TLSCONF_PATH": conf["verify"]},
          [OK, fails_at("pmLookupName", PM_ERR_IPC), fails_at("pmNewContext", SASL_BADPARAM),
           fails_at("pmNewContext", SASL_BADAUTH), OK, OK, dict(OK, features=[1, 1, 1, 0]), OK,
           fails_at("pmNewContext", SASL_NOMECH), fails_at("pmNewContext", SASL_BADPARAM)],
          our_python)


# ---- this package only: credentials, features, the CLI, Fleet --------------------------

LEAK_PROGRAM = r'''
import gc, json, logging, os
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append(self.format(record))
logging.getLogger().addHandler(Keep())
logging.getLogger().setLevel(logging.DEBUG)
from pcp import pmapi
from pcp._live.context import HostContext
from pcp.fleet import fetch_many
passwords = json.loads(os.environ["PCP_TEST_PASSWORDS"])
good, bad = json.loads(os.environ["PCP_TEST_SPECS"])
texts = []
try:
    pmapi.pmContext(1, bad)
except pmapi.pmErr as e:
    texts += [str(e), repr(e), repr(e.args)]
ctx = pmapi.pmContext(1, good)
hc = [o for o in gc.get_objects() if isinstance(o, HostContext)][0]
conn = hc.conn
texts += [repr(conn), repr(conn.spec), repr(hc)]
res = fetch_many([good, bad], ["sample.long.one"], timeout=10)
texts += [repr(res), repr(res.errors()), repr(list(res))]
texts += records
print(json.dumps({"leaks": [t for t in texts if any(p in t for p in passwords)],
                  "features": conn.features, "secure": conn.secure,
                  "fleet": [r.ok for r in res], "n_texts": len(texts)}))
'''


def test_credentials_stay_out_of_messages_and_connections(pmcds):
    setup, p, conf = pmcds
    secret = "Unusual-Pw-%d" % os.getpid()
    specs = [_auth(p["tls"], SASL_USER, SASL_PASSWORD, "scram-sha-256", "pcps://"),
             _auth(p["tls"], SASL_USER, secret, "scram-sha-256", "pcps://")]
    out = run_program(LEAK_PROGRAM, True, {
        "PCP_TEST_SPECS": json.dumps(specs), "PCP_TLSCONF_PATH": conf["verify"],
        "PCP_TEST_PASSWORDS": json.dumps([SASL_PASSWORD, secret])}, 60)
    assert out.get("leaks") == [], out
    assert out["secure"] is True and out["n_texts"] >= 9 and out["fleet"] == [True, False]
    assert out["features"] & 0x0015 == 0x0015        # SECURE|AUTH|SECURE_ACK advertised


def test_cli_over_tls_hides_the_password(pmcds):
    setup, p, conf = pmcds
    env = dict(our_env(), PCP_TLSCONF_PATH=conf["verify"], PCP_CONSOLE="none")
    good = _auth(p["tls"], SASL_USER, SASL_PASSWORD, "scram-sha-256", "pcps://")
    run = subprocess.run([OUR_PYTHON, "-m", "pcp", "info", "-h", good, "-f", "sample.long.one"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "value 1" in run.stdout, run
    bad = _auth(p["tls"], SASL_USER, "Wrong-Secret-1", "scram-sha-256", "pcps://")
    run = subprocess.run([OUR_PYTHON, "-m", "pcp", "info", "-h", bad, "sample.long.one"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode != 0
    assert "Authentication - authentication failure" in run.stderr, run.stderr
    assert "Wrong-Secret-1" not in run.stderr + run.stdout


FLEET_PROGRAM = r'''
import json, os
from pcp.fleet import Fleet
specs = json.loads(os.environ["PCP_TEST_SPECS"])
with Fleet(specs, ["sample.long.one", "sample.ulong.hundred"], timeout=10) as fleet:
    polls = []
    for _ in range(3):
        res = fleet.fetch()
        polls.append([[r.ok, r.stage, r.error.args[0] if r.error else None,
                       int(r.value("sample.ulong.hundred")) if r.ok else None, r.host] for r in res])
from pcp.sampler import Sampler
with Sampler(specs[1], ["sample.ulong.hundred", "sample.long.one"], interval=0.05) as s:
    s.run(count=3)
    sampled = [s["sample.ulong.hundred"].values.ravel().tolist(),
               s["sample.long.one"].values.ravel().tolist()]
print(json.dumps([polls, sampled]))
'''


def test_fleet_and_sampler_over_tls(pmcds):
    setup, p, conf = pmcds
    specs = ["pcps://localhost:%d" % p["tls"],
             _auth(p["tls"], SASL_USER, SASL_PASSWORD, "scram-sha-1", "pcps://"),
             "pcps://localhost:%d" % p["stranger"], "localhost:%d" % p["plain"]]
    out = run_program(FLEET_PROGRAM, True, {"PCP_TEST_SPECS": json.dumps(specs),
                                            "PCP_TLSCONF_PATH": conf["verify"]}, 120)
    assert "__crash__" not in out, out
    polls, sampled = out
    assert sampled == [[100.0] * 3, [1.0] * 3]          # Sampler over TLS with SCRAM
    for poll in polls:
        assert [row[:4] for row in poll] == [
            [True, "", None, 100], [True, "", None, 100],
            [False, "connect", PM_ERR_TLS, None], [True, "", None, 100]], poll
        assert SASL_PASSWORD not in json.dumps(poll)


STRICT_PROGRAM = r'''
import json, os
from pcp import pmapi
out = []
for spec in json.loads(os.environ["PCP_TEST_SPECS"]):
    try:
        pmapi.pmContext(1, spec)
        out.append("ok")
    except pmapi.pmErr as e:
        out.append(e.args[0])
print(json.dumps(out))
'''


def test_opt_in_host_name_verification(pmcds):
    # this package only: PCP_TLS_VERIFY_HOSTNAME=1 checks the certificate and its name
    # (which libpcp never does); without it the same specs all connect (see above)
    setup, p, conf = pmcds
    specs = ["pcps://localhost:%d" % p["tls"], "pcps://localhost:%d" % p["wronghost"],
             "pcps://127.0.0.1:%d" % p["tls"], "pcps://localhost:%d" % p["expired"]]
    out = run_program(STRICT_PROGRAM, True, {"PCP_TEST_SPECS": json.dumps(specs),
                                             "PCP_TLSCONF_PATH": conf["verify"],
                                             "PCP_TLS_VERIFY_HOSTNAME": "1"}, 60)
    assert out == ["ok", PM_ERR_TLS, PM_ERR_TLS, PM_ERR_TLS], out
    out = run_program(STRICT_PROGRAM, True, {"PCP_TEST_SPECS": json.dumps(specs[:3]),
                                             "PCP_TLSCONF_PATH": conf["none"]}, 60)
    assert out == ["ok", "ok", "ok"], out


RESTART_PROGRAM = r'''
import json, os, sys, time
from pcp import pmapi
R = {}
def step(name, f):
    try:
        R[name] = ["ok", f()]
    except pmapi.pmErr as e:
        R[name] = ["pmErr", e.args[0]]
def pause(what):
    print("PAUSE " + what, flush=True)
    sys.stdin.readline()
ctx = pmapi.pmContext(1, os.environ["PCP_TEST_SPEC"])
pmids = ctx.pmLookupName(["sample.ulong.hundred"])
value = lambda: ctx.pmFetch(pmids).contents.get_vlist(0, 0).value.lval
step("before", value)
pause("stop")
step("pmcd_down", value)
step("reconnect_while_down", ctx.pmReconnectContext)
pause("start")
time.sleep(1.5)                 # past PMCD_RECONNECT_TIMEOUT=1
step("reconnect", lambda: ctx.pmReconnectContext() == ctx.ctx)
step("after", value)
print(json.dumps(R), flush=True)
'''


def _drive_restart(python: str, env: dict, setup: SecureSetup, name: str) -> dict:
    from support.difftest import _cwd, _env
    full = _env(python == OUR_PYTHON)
    full.update(env)
    proc = subprocess.Popen([python, "-c", RESTART_PROGRAM], env=full, cwd=_cwd(),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stdout:
            if line.startswith("PAUSE stop"):
                setup.stop_one(name)
            elif line.startswith("PAUSE start"):
                setup.start_again(name)
            else:
                return json.loads(line)
            proc.stdin.write("go\n")
            proc.stdin.flush()
        return {"__crash__": proc.stderr.read()[-2000:]}
    finally:
        proc.kill()
        proc.wait()


def test_reconnect_over_tls_with_scram(pmcds):
    # pmcd restarted under a TLS + SCRAM context: the same codes at each step, and the
    # same recovery by pmReconnectContext (a new TLS handshake and SASL exchange)
    setup, p, conf = pmcds
    setup.start("restart")
    port = setup._launch["restart"][2]
    env = {"PCP_TEST_SPEC": _auth(port, SASL_USER, SASL_PASSWORD, "scram-sha-256", "pcps://"),
           "PCP_TLSCONF_PATH": conf["verify"], "PMCD_RECONNECT_TIMEOUT": "1",
           "PCP_CONSOLE": "none"}
    ref = _drive_restart(REF_PYTHON, env, setup, "restart")
    ours = _drive_restart(OUR_PYTHON, env, setup, "restart")
    assert ours == ref, (ours, ref)
    assert ref == {"before": ["ok", 100], "pmcd_down": ["pmErr", PM_ERR_IPC],
                   "reconnect_while_down": ["pmErr", -110],          # -ETIMEDOUT
                   "reconnect": ["ok", True], "after": ["ok", 100]}, ref
