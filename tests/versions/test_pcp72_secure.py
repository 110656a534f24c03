"""TLS and SASL against PCP 7.2.2's pmcd, at every level, with 7.2.2's own binding as the
reference.

PCP 7.2.2's pmcd (sid's, private to this module: tests/support/rootpmcd.py) runs six ways:
TLS with a good certificate, TLS asking for client certificates (`-Q`), TLS with a
certificate from a CA the clients do not know, without TLS, TLS with SASL offering PLAIN
only, and TLS requiring authentication (`-S`). 7.x reads tls.conf as 6.0.3
does (the same keys, from $PCP_TLSCONF_PATH), so the certificates are the secure-connection
tests' own (support/securepmcd.py).

For each client configuration (none, verification against the CA, verification against
another CA, a client certificate) one process per side runs the secure-connection probe
over every pmcd: sid's python3-pcp 7.2.2 inside its root, and this package at 6.0, 6.3 and
7.2 on the host. A level's own reference is not the point here (6.0.3 and 6.3.8 are
checked against their TLS pmcds in tests/live/test_secure.py): 7.2.2's client is what
talks to 7.2.2's pmcd in the field, and every level must answer it as that client does.

SASL against 7.2.2's pmcd the same way: every pmcd has the secure-connection tests' sasldb
(saslpasswd2's on the host: the sasldb format, Berkeley DB 5.3, is sid's too) and SASL
configuration (all of SASL_MECHS but the PLAIN-only one), the mechanisms coming from the
root's libsasl2-modules (.ci/pcp-roots.sh). Each mechanism
with the right password, a wrong one and an unknown user, given in the host spec, without
TLS and over it; a mechanism pmcd does not offer, one nobody has, no user, no password.
"""
import glob
import json
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from support import roots
from support.rootpmcd import RootPmcd
from support.securepmcd import (OK, PM_ERR_IPC, PROBE_PROGRAM, SASL_BADAUTH, SASL_BADPARAM,
                                SASL_MECHS, SASL_NOMECH, SASL_NOUSER, SASL_PASSWORD, SASL_USER,
                                SecureSetup, fails_at, missing_tools, sasl_cases,
                                sasl_spec as _auth)

pytestmark = [pytest.mark.reference, pytest.mark.pmcd, pytest.mark.timeout(300)]

PCP72 = (7, 2)
PM_ERR_TLS = -12414
EOPNOTSUPP = -95

#: client tls.conf settings (a value ending in .crt/.key names a certificate of the setup)
CLIENT_CONFS = {
    "none": {},
    "verify": {"tls-verify-clients": "true", "tls-ca-cert-file": "ca.crt"},
    "otherca": {"tls-verify-clients": "true", "tls-ca-cert-file": "otherca.crt"},
    "clientcert": {"tls-ca-cert-file": "ca.crt", "tls-client-cert-file": "client.crt",
                   "tls-client-key-file": "client.key"},
}


@pytest.fixture(scope="module")
def pmcds72(all_levels, tmp_path_factory):
    """The certificates, and sid's pmcd four ways: {name: RootPmcd}."""
    why = missing_tools()
    if why:
        if os.environ.get("CI"):
            pytest.fail(why + " (CI is set)")
        pytest.skip(why)
    setup = SecureSetup(str(tmp_path_factory.mktemp("secure72")))

    def server(cert):
        return {"tls-cert-file": setup.path(cert + ".crt"),
                "tls-key-file": setup.path(cert + ".key"), "tls-ca-cert-file": setup.path("ca.crt")}

    def sasl(mechs=SASL_MECHS):
        return {"mech_list": mechs, "sasldb_path": setup.sasldb}

    starts = {"tls": {"tls": server("server"), "sasl": sasl()},
              "certreq": {"tls": server("server"), "args": ("-Q",), "sasl": sasl()},
              "stranger": {"tls": server("stranger"), "sasl": sasl()}, "plain": {"sasl": sasl()},
              "plainonly": {"tls": server("server"), "sasl": sasl("PLAIN")},
              "reqauth": {"tls": server("server"), "args": ("-S",), "sasl": sasl()}}
    daemons = {name: RootPmcd(PCP72) for name in starts}
    try:
        with ThreadPoolExecutor(2) as pool:
            for future in [pool.submit(daemons[name].start, **kw) for name, kw in starts.items()]:
                future.result()
        yield setup, daemons
    finally:
        for daemon in daemons.values():
            daemon.stop()


def _specs(daemons):
    p = {name: daemon.port for name, daemon in daemons.items()}
    return [
        "pcps://localhost:%d" % p["tls"],
        "pcps://127.0.0.1:%d" % p["tls"],
        "127.0.0.1:%d" % p["tls"],                          # plain beside TLS, same port
        "localhost:%d?secure=relaxed" % p["tls"],
        "pcps://localhost:%d" % p["plain"],                 # no TLS at pmcd
        "pcps://127.0.0.1:%d?secure=relaxed" % p["plain"],
        "pcps://localhost:%d" % p["stranger"],
        "pcps://127.0.0.1:%d" % p["certreq"],               # -Q: a client certificate needed
        "pcps://localhost:%d" % p["certreq"],
    ]


#: what 7.2.2's client gets, by client configuration and spec (the keys given only). Unlike
#: 6.0.3's pmcd, 7.2.2's asks a client at "localhost" for its certificate too under -Q.
NO_CERT = {"pmNewContext": "ok", "pmLookupName": PM_ERR_IPC}
EXPECTED = {
    "none": [dict(OK, features=[1, 1, 0, 0]), OK, OK, OK, {"pmNewContext": EOPNOTSUPP},
             dict(OK, features=[0, 1, 0, 0]), OK, NO_CERT, NO_CERT],
    "verify": [OK, OK, OK, OK, {"pmNewContext": EOPNOTSUPP}, OK,
               {"pmNewContext": PM_ERR_TLS}, NO_CERT, NO_CERT],
    "otherca": [{"pmNewContext": PM_ERR_TLS}, {"pmNewContext": PM_ERR_TLS}, OK, OK,
                {"pmNewContext": EOPNOTSUPP}, OK, OK, {"pmNewContext": PM_ERR_TLS},
                {"pmNewContext": PM_ERR_TLS}],
    "clientcert": [OK, OK, OK, OK, {"pmNewContext": EOPNOTSUPP}, OK, OK,
                   dict(OK, features=[1, 1, 0, 1]), OK],
}


def _run_all_sides(setup, daemons, specs, conf):
    """The probe over specs with the client configuration conf: sid's 7.2.2 binding and this
    package at every level, in parallel; (reference's answer, {level: ours})."""
    settings = CLIENT_CONFS[conf]
    # the same settings twice: certificates named where each side sees them
    on_host = setup.client_tlsconf(conf, settings)
    in_root = daemons["tls"].write_tlsconf(conf + ".tls.conf", {
        key: setup.path(value) if value.endswith((".crt", ".key")) else value
        for key, value in settings.items()})
    env = {"PCP_TEST_SPECS": json.dumps(specs), "PCP_CONSOLE": "none"}
    with ThreadPoolExecutor(2) as pool:
        ref = pool.submit(roots.run_reference, PCP72, PROBE_PROGRAM,
                          dict(env, PCP_TLSCONF_PATH=in_root))
        ours = {level: pool.submit(roots.run_ours, level, PROBE_PROGRAM,
                                   dict(env, PCP_TLSCONF_PATH=on_host))
                for level in roots.LEVELS}
        return ref.result(), {level: future.result() for level, future in ours.items()}


def _check(specs, ref, ours, expected):
    """7.2.2's client got what is expected (on the keys given), and every level the same."""
    assert isinstance(ref, list), ref
    assert len(ref) == len(specs) == len(expected), (ref, expected)
    for spec, got, want in zip(specs, ref, expected):
        for key, value in want.items():
            assert got.get(key) == value, (spec, got, want)
    for level, answer in ours.items():
        assert answer == ref, "level %s:\n%s" % (roots.level_text(level), "\n".join(
            "%s\n  ours %s\n  ref  %s" % (s, o, r)
            for s, o, r in zip(specs, answer, ref) if o != r) if isinstance(answer, list)
            else answer)


@pytest.mark.parametrize("conf", sorted(CLIENT_CONFS))
def test_tls_against_pcp72_pmcd_at_each_level(pmcds72, conf):
    setup, daemons = pmcds72
    specs = _specs(daemons)
    _check(specs, *_run_all_sides(setup, daemons, specs, conf), EXPECTED[conf])


# ---- SASL -------------------------------------------------------------------------------

def _require_sasl_mechanisms():
    """Fail (under CI) or skip unless sid's root has the SASL mechanisms (libsasl2-modules,
    which .ci/pcp-roots.sh installs): without them every case would fail alike."""
    plugins = os.path.join(roots.root_dir(PCP72), "usr/lib/*/sasl2/libscram.so*")
    if glob.glob(plugins):
        return
    message = "no SASL mechanisms in sid's root (%s): run .ci/pcp-roots.sh" % plugins
    if os.environ.get("CI"):
        pytest.fail(message + " (CI is set)")
    pytest.skip(message)


def test_sasl_mechanisms_against_pcp72_pmcd_at_each_level(pmcds72):
    _require_sasl_mechanisms()
    setup, daemons = pmcds72
    # every mechanism as 6.0.3's pmcd answers 6.0.3's client (support/securepmcd.py):
    # SASL alone (pmcd without TLS), then over TLS (pcps://, pmcd's certificate verified)
    specs, expected = sasl_cases(daemons["plain"].port)
    over_tls = sasl_cases(daemons["tls"].port, "pcps://")
    specs += over_tls[0]
    expected += over_tls[1]
    _check(specs, *_run_all_sides(setup, daemons, specs, "verify"), expected)


def test_sasl_offered_and_required_by_pcp72_pmcd_at_each_level(pmcds72):
    _require_sasl_mechanisms()
    setup, daemons = pmcds72
    specs, expected = [], []
    for proto in ("", "pcps://"):          # alone, over TLS
        more_specs, more_expected = _offered_and_required(daemons, proto)
        specs += more_specs
        expected += more_expected
    _check(specs, *_run_all_sides(setup, daemons, specs, "verify"), expected)


def _offered_and_required(daemons, proto):
    """The specs and 7.2.2's outcomes at pmcd offering PLAIN only, and at pmcd with -S."""
    p = {name: daemon.port for name, daemon in daemons.items()}
    specs = [
        _auth(p["plainonly"], SASL_USER, SASL_PASSWORD, "", proto),   # PLAIN, pmcd's only one
        _auth(p["plainonly"], SASL_USER, SASL_PASSWORD, "SCRAM-SHA-256", proto),  # not offered
        _auth(p["plainonly"], SASL_USER, SASL_PASSWORD, "DIGEST-MD5", proto),     # not offered
        _auth(p["plainonly"], SASL_USER, "wrong", "PLAIN", proto),
        "%slocalhost:%d" % (proto, p["reqauth"]),                     # -S, no user
        "%slocalhost:%d?username=%s" % (proto, p["reqauth"], SASL_USER),   # no password
        _auth(p["reqauth"], SASL_USER, SASL_PASSWORD, "", proto),
        _auth(p["reqauth"], SASL_USER, "wrong", "SCRAM-SHA-256", proto),
        _auth(p["reqauth"], "nosuchuser", SASL_PASSWORD, "DIGEST-MD5", proto),
        "%slocalhost:%d?userauth" % (proto, p["tls"]),                # no user, not required
    ]
    expected = [OK, fails_at("pmNewContext", SASL_NOMECH), fails_at("pmNewContext", SASL_NOMECH),
                fails_at("pmLookupName", PM_ERR_IPC), fails_at("pmNewContext", SASL_BADPARAM),
                fails_at("pmNewContext", SASL_BADAUTH),
                dict(OK, features=[1, 1, 1, 0]), fails_at("pmNewContext", SASL_BADAUTH),
                fails_at("pmNewContext", SASL_NOUSER), fails_at("pmNewContext", SASL_BADPARAM)]
    return specs, expected
