"""Private pmcds with TLS and SASL for the secure-connection tests.

Everything lives in one scratch directory: a certificate authority and certificates made
with the openssl command (a good server certificate, an expired one, one from a CA the
client does not know, a client certificate), a sasldb made with saslpasswd2, and one pmcd
per configuration on a free loopback port with its own pmcd.conf (the sample PMDA), run
directory, log, tls.conf (PCP_TLSCONF_PATH) and SASL configuration directory
(PCP_SASL2_CONFIG_PATH). The machine's own pmcd and /etc/pcp are never touched.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from typing import Dict, List, Optional, Tuple

from .pmcdpath import private_pmcd

PMCD = "/usr/lib/pcp/bin/pmcd"
SAMPLE = "/var/lib/pcp/pmdas/sample/pmdasample"
PMCD_PMDA = "/var/lib/pcp/pmdas/pmcd/pmda_pmcd.so"
SASLPASSWD2 = shutil.which("saslpasswd2") or "/usr/sbin/saslpasswd2"
OPENSSL = shutil.which("openssl") or "/usr/bin/openssl"

# A user with a local account (pmcd maps the SASL user to uid/gid and refuses an
# unknown one at the first request); the password exists only in the private sasldb.
SASL_USER = "pcp"
SASL_PASSWORD = "s3cret-Pass"
SASL_MECHS = ("PLAIN LOGIN CRAM-MD5 DIGEST-MD5 SCRAM-SHA-1 SCRAM-SHA-224 SCRAM-SHA-256 "
              "SCRAM-SHA-384 SCRAM-SHA-512")


#: The secure-connection probe both bindings run: for each host spec of $PCP_TEST_SPECS (a
#: JSON list), pmNewContext, pmGetContextHostName, pmLookupName and pmFetch of two sample
#: metrics, then pmcd's features (TLS, SASL, -S, -Q); each call's answer or error code.
PROBE_PROGRAM = r'''
import json, os
from pcp import pmapi
import cpmapi as c
FEATURES = ["pmcd.feature.secure", "pmcd.feature.authentication",
            "pmcd.feature.creds_required", "pmcd.feature.client_cert_required"]
out = []
for spec in json.loads(os.environ["PCP_TEST_SPECS"]):
    r = {}
    try:
        ctx = pmapi.pmContext(c.PM_CONTEXT_HOST, spec)
    except pmapi.pmErr as e:
        r["pmNewContext"] = e.args[0]
        out.append(r)
        continue
    r["pmNewContext"] = "ok"
    for call, f in (
            ("pmGetContextHostName", lambda: ctx.pmGetContextHostName()),
            ("pmLookupName", lambda: ctx.pmLookupName(["sample.long.one", "sample.ulong.hundred"])),
            ("pmFetch", lambda: [ctx.pmFetch(pmids).contents.get_vlist(k, 0).value.lval for k in (0, 1)])):
        try:
            value = f()
        except pmapi.pmErr as e:
            r[call] = e.args[0]
            break
        if call == "pmLookupName":
            pmids, value = value, list(value)
        r[call] = value
    if "pmFetch" in r:
        # what pmcd says of itself: TLS, SASL, -S, -Q
        try:
            fids = ctx.pmLookupName(FEATURES)
            res = ctx.pmFetch(fids)
            r["features"] = [res.contents.get_vlist(k, 0).value.lval for k in range(len(FEATURES))]
        except pmapi.pmErr as e:
            r["features"] = e.args[0]
    out.append(r)
print(json.dumps(out))
'''

#: What the probe reports: a connection that fetched, or the call that failed and its code.
OK = {"pmNewContext": "ok", "pmFetch": [1, 100]}
PM_ERR_IPC = -12366
SASL_NOMECH = -21348
SASL_BADPROT = -21349
SASL_BADPARAM = -21351
SASL_BADAUTH = -21357
SASL_NOUSER = -21364


def fails_at(call: str, code: int) -> dict:
    return {call: code}


def sasl_spec(port: int, user: str, password: str, method: str = "", proto: str = "") -> str:
    """A host spec authenticating as user with password (and mechanism method)."""
    spec = "%slocalhost:%d?username=%s&password=%s" % (proto, port, user, password)
    return spec + ("&method=%s" % method if method else "")


#: (right password, wrong password, unknown user) of a mechanism whose exchange fails: the
#: error comes from pmNewContext
_EXCHANGE_FAILS = (OK, fails_at("pmNewContext", SASL_BADAUTH),
                   fails_at("pmNewContext", SASL_NOUSER))
#: ... of one that sends the password: pmcd's verdict is the connection closed at the first
#: request after it
_PASSWORD_SENT = (OK, fails_at("pmLookupName", PM_ERR_IPC), fails_at("pmLookupName", PM_ERR_IPC))
#: The client's outcomes at a pmcd offering SASL_MECHS, by mechanism ("": the client's
#: choice among pmcd's; names in any case). CRAM-MD5 (offered, but the sasldb holds no
#: secret of its kind) breaks off in the exchange for everybody. 6.0.3 and 7.2.2 alike.
SASL_OUTCOMES = {
    "": _EXCHANGE_FAILS, "PLAIN": _PASSWORD_SENT, "LOGIN": _PASSWORD_SENT,
    "DIGEST-MD5": _EXCHANGE_FAILS, "scram-sha-1": _EXCHANGE_FAILS,
    "SCRAM-SHA-224": _EXCHANGE_FAILS, "SCRAM-SHA-256": _EXCHANGE_FAILS,
    "SCRAM-SHA-384": _EXCHANGE_FAILS, "SCRAM-SHA-512": _EXCHANGE_FAILS,
    "CRAM-MD5": (fails_at("pmNewContext", SASL_BADPROT),) * 3,
    "NO-SUCH-MECH": (fails_at("pmNewContext", SASL_NOMECH),) * 3,
}


def sasl_cases(port: int, proto: str = "") -> Tuple[List[str], List[dict]]:
    """Every mechanism of SASL_OUTCOMES at pmcd's port three ways: (specs, outcomes)."""
    specs: List[str] = []
    expected: List[dict] = []
    for method, (good, wrong, unknown) in SASL_OUTCOMES.items():
        specs += [sasl_spec(port, SASL_USER, SASL_PASSWORD, method, proto),
                  sasl_spec(port, SASL_USER, "wrong", method, proto),
                  sasl_spec(port, "nosuchuser", SASL_PASSWORD, method, proto)]
        expected += [good, wrong, unknown]
    return specs, expected


def missing_tools() -> Optional[str]:
    """Why secure pmcds cannot be made here, or None."""
    for path in (PMCD, SAMPLE, PMCD_PMDA, SASLPASSWD2, OPENSSL):
        if not os.path.exists(path):
            return "%s is not installed" % path
    if os.geteuid() != 0:
        return "a private pmcd needs root here"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _openssl(*args: str, cwd: str) -> None:
    subprocess.run([OPENSSL, *args], cwd=cwd, check=True, capture_output=True)


def _key(name: str, cwd: str) -> None:
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-out", name, cwd=cwd)


def _ca(name: str, cwd: str) -> None:
    _key(name + ".key", cwd)
    _openssl("req", "-x509", "-new", "-key", name + ".key", "-out", name + ".crt",
             "-days", "30", "-subj", "/CN=%s" % name, cwd=cwd)


def _leaf(name: str, ca: str, cn: str, days: str, cwd: str) -> None:
    _key(name + ".key", cwd)
    _openssl("req", "-new", "-key", name + ".key", "-out", name + ".csr",
             "-subj", "/CN=%s" % cn, cwd=cwd)
    ext = os.path.join(cwd, name + ".ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=DNS:%s\n" % cn)
    _openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key",
             "-CAcreateserial", "-days", days, "-extfile", ext, "-out", name + ".crt", cwd=cwd)


class SecureSetup:
    """The certificates, the sasldb and the pmcds of one test module."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.pki = os.path.join(root, "pki")
        os.makedirs(self.pki, exist_ok=True)
        self._procs: List[subprocess.Popen] = []
        self._by_name: Dict[str, subprocess.Popen] = {}
        self._launch: Dict[str, tuple] = {}
        self._make_pki()
        self._make_sasl()

    def _make_pki(self) -> None:
        d = self.pki
        _ca("ca", d)
        _ca("otherca", d)
        _leaf("server", "ca", "localhost", "30", d)
        _leaf("wronghost", "ca", "elsewhere.invalid", "30", d)
        _leaf("stranger", "otherca", "localhost", "30", d)
        _leaf("client", "ca", "pcp-client", "30", d)
        # notAfter == notBefore: expired one second after it was made (expired_at)
        _leaf("expired", "ca", "localhost", "0", d)
        self.expired_at = time.time() + 1.5

    def socket_path(self, name: str) -> str:
        return os.path.join(self.root, name, "pmcd.socket")

    def path(self, name: str) -> str:
        return os.path.join(self.pki, name)

    def _make_sasl(self) -> None:
        self.sasl_dir = os.path.join(self.root, "sasl")
        os.makedirs(self.sasl_dir, exist_ok=True)
        self.sasldb = os.path.join(self.sasl_dir, "pcp.sasldb")
        subprocess.run([SASLPASSWD2, "-c", "-p", "-f", self.sasldb, "-u", socket.gethostname(),
                        SASL_USER], input=SASL_PASSWORD.encode(), check=True,
                       capture_output=True)
        # pmcd's SASL application name is its program name: pmcd.conf in the config path
        with open(os.path.join(self.sasl_dir, "pmcd.conf"), "w") as f:
            f.write("mech_list: %s\nsasldb_path: %s\n" % (SASL_MECHS, self.sasldb))

    def client_tlsconf(self, name: str, lines: Dict[str, str]) -> str:
        """A client tls.conf with the given keys; its path."""
        path = os.path.join(self.root, name + ".tls.conf")
        with open(path, "w") as f:
            f.write("# client settings for %s\n" % name)
            for key, value in lines.items():
                f.write("%s = %s\n" % (key, self.path(value) if value.endswith(
                    (".crt", ".key")) else value))
        return path

    def start(self, name: str, cert: Optional[str] = "server", args: tuple = (),
              verify_clients: bool = False, mechs: Optional[str] = None) -> int:
        """Start a pmcd (TLS with cert's certificate unless cert is None, SASL with the
        mechanisms mechs or SASL_MECHS); its port."""
        d = os.path.join(self.root, name)
        os.makedirs(d, exist_ok=True)
        sasl_dir = self.sasl_dir
        if mechs is not None:
            sasl_dir = os.path.join(d, "sasl")
            os.makedirs(sasl_dir, exist_ok=True)
            with open(os.path.join(sasl_dir, "pmcd.conf"), "w") as f:
                f.write("mech_list: %s\nsasldb_path: %s\n" % (mechs, self.sasldb))
        port = free_port()
        conf = os.path.join(d, "pmcd.conf")
        with open(conf, "w") as f:
            # pmcd's own metrics (pmcd.feature.*, pmcd.hostname) and the sample PMDA
            f.write("pmcd\t2\tdso\tpmcd_init\t%s\n" % PMCD_PMDA)
            f.write("sample\t29\tpipe\tbinary\t%s -d 29\n" % SAMPLE)
        tlsconf = os.path.join(d, "tls.conf")
        with open(tlsconf, "w") as f:
            if cert is not None:
                f.write("tls-cert-file = %s\ntls-key-file = %s\ntls-ca-cert-file = %s\n"
                        % (self.path(cert + ".crt"), self.path(cert + ".key"),
                           self.path("ca.crt")))
                if verify_clients:
                    f.write("tls-verify-clients = true\n")
        env = dict(os.environ, PCP_RUN_DIR=d, PCP_PMCDCONF_PATH=conf,
                   PCP_TLSCONF_PATH=tlsconf, PCP_SASL2_CONFIG_PATH=sasl_dir)
        env.pop("LD_PRELOAD", None)     # never the sanitizer runtime of the client
        argv = [private_pmcd(d), "-f", "-A", "-i", "127.0.0.1", "-p", str(port),
                "-s", os.path.join(d, "pmcd.socket"), "-c", conf,
                "-l", os.path.join(d, "pmcd.log"), "-U", "root", *args]
        self._launch[name] = (argv, env, port)
        return self._spawn(name)

    def _spawn(self, name: str) -> int:
        argv, env, port = self._launch[name]
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._procs.append(proc)
        self._by_name[name] = proc
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError("pmcd %s exited: %s" % (name, self.log(name)[-2000:]))
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.settimeout(2)
                    if len(s.recv(20)) == 20:       # the greeting
                        return port
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("pmcd %s did not start: %s" % (name, self.log(name)[-2000:]))

    def stop_one(self, name: str) -> None:
        """Stop one pmcd (restart it with start_again)."""
        proc = self._by_name.pop(name)
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def start_again(self, name: str) -> int:
        """Start a stopped pmcd again, on its port."""
        return self._spawn(name)

    def log(self, name: str) -> str:
        try:
            with open(os.path.join(self.root, name, "pmcd.log")) as f:
                return f.read()
        except OSError:
            return ""

    def stop(self) -> None:
        for proc in self._procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self._procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._procs.clear()
