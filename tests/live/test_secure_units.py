"""The pieces of secure connections without a pmcd: tls.conf as libpcp parses it, the
SASL mechanism cyrus-sasl's client picks (compared with libpcp's pick on scripted
mechanism lists), the MD5 mechanisms against their RFCs' examples, and the CREDS flags
and secure ack of the TLS upgrade."""
from __future__ import annotations

import hashlib
import json
import re
import socket
import struct
import threading
from typing import List, Optional

import pytest

from pcp._core.errors import pmErr
from pcp._live import sasl, tls
from pcp._live.hostspec import redact_hostspec
from pcp._live.transport import connect
from support.difftest import require_reference, run_program

GREETING_FEATURES = 0x0E44          # pmcd 6.0.3 without TLS: AUTH among them


# ---- tls.conf ---------------------------------------------------------------------------

@pytest.mark.parametrize("line, parsed", [
    ("tls-ca-cert-file = /x/ca.crt\n", ("tls-ca-cert-file", "/x/ca.crt")),
    ("  tls-verify-clients=true # comment\n", ("tls-verify-clients", "true")),
    ("tls-ciphers: HIGH:!aNULL\n", ("tls-ciphers", "HIGH:!aNULL")),
    ("tls-ciphers = a b\n", ("tls-ciphers", "a")),            # a value ends at a blank
    ("tls-cert-file /x\n", None),                             # no separator: no value
    ("# tls-cert-file = /x\n", None),
    ("tls-cert-file = \n", None),
    ("tls-c = /y\n", ("tls-cert-file", "/y")),                # a prefix takes the first key
    ("tls-ca-cert-file = /x/ca.crt", None),                   # a last line without newline
    ("tls-unknown = 1\n", None),
])
def test_tls_conf_lines_as_libpcp_reads_them(line, parsed):
    assert tls._parse_line(line) == parsed


def test_tls_conf_file_later_lines_win(tmp_path):
    path = tmp_path / "tls.conf"
    path.write_text("tls-ca-cert-file = /a\n# tls-ca-cert-file = /b\ntls-ca-cert-file = /c\n"
                    "tls-verify-clients = yes\n")
    assert tls.read_tls_config(str(path)) == {"tls-ca-cert-file": "/c",
                                              "tls-verify-clients": "yes"}
    assert tls.read_tls_config(str(tmp_path / "missing")) is None


def test_unloadable_ca_is_notconn(tmp_path, monkeypatch):
    path = tmp_path / "tls.conf"
    path.write_text("tls-ca-cert-file = %s\n" % (tmp_path / "nothing.crt"))
    monkeypatch.setenv("PCP_TLSCONF_PATH", str(path))
    with pytest.raises(pmErr) as e:
        tls.client_context()
    assert e.value.args[0] == -12391                        # PM_ERR_NOTCONN


def test_sni_name_as_libpcp_gives_it():
    assert tls.sni_name("pmcd.example.com") == "pmcd.example.com"
    assert tls.sni_name("localhost") == socket.gethostname()
    assert tls.sni_name("/run/pcp/pmcd.socket") == socket.gethostname()


# ---- SASL pieces ------------------------------------------------------------------------

def test_cram_md5_rfc2195_example():
    mech = sasl._CramMD5(sasl.Credentials("tim", "tanstaaftanstaaf", None), "host")
    assert mech.step(b"<1896.697170952@postoffice.reston.mci.net>") == \
        b"tim b913a602c7eda7a495b4e6e7334d3890"
    assert mech.done


def test_digest_md5_rfc2831_example():
    creds = sasl.Credentials("chris", "secret", None)
    mech = sasl._DigestMD5(creds, "elwood.innosoft.com", service="imap",
                           cnonce=b"OA6MHXh6VqTrRk")
    answer = mech.step(b'realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",'
                       b'algorithm=md5-sess,charset=utf-8')
    assert b"response=d388dad90d4bbd760a152321f2143af7" in answer
    assert b'digest-uri="imap/elwood.innosoft.com"' in answer
    assert mech.step(b"rspauth=ea40f60335c427b5527b84dbabcdfffd") == b"" and mech.done


def test_digest_md5_without_auth_qop_is_badprot():
    mech = sasl._DigestMD5(sasl.Credentials("chris", "secret", None), "h", cnonce=b"c")
    with pytest.raises(pmErr) as e:
        mech.step(b'nonce="n",qop="auth-conf",algorithm=md5-sess')
    assert e.value.args[0] == -21344 - 5


def test_digest_md5_wrong_server_proof_is_badserv():
    mech = sasl._DigestMD5(sasl.Credentials("chris", "secret", None), "h", cnonce=b"c")
    mech.step(b'nonce="n",qop="auth",algorithm=md5-sess')
    with pytest.raises(pmErr) as e:
        mech.step(b"rspauth=00000000000000000000000000000000")
    assert e.value.args[0] == -21344 - 10


def test_credentials_repr_and_forget():
    creds = sasl.Credentials("pcp", "hunter2", None)
    assert "hunter2" not in repr(creds)
    creds.forget()
    assert creds.password() == b""
    with pytest.raises(pmErr) as e:
        sasl.Credentials(None, "x", None).user()
    assert e.value.args[0] == -21351                         # SASL_BADPARAM


def test_redact_hostspec():
    assert redact_hostspec("h?username=u&password=p%20q&method=plain") == \
        "h?username=u&password=****&method=plain"
    assert redact_hostspec("h?pass=x") == "h?pass=****"
    assert redact_hostspec(b"h?password=x") == b"h?password=****"
    assert redact_hostspec("pcps://h:44321") == "pcps://h:44321"


# ---- the mechanism libpcp picks from a list, on both bindings ----------------------------

MECHANISM_LISTS = [
    "PLAIN LOGIN CRAM-MD5 DIGEST-MD5 SCRAM-SHA-1 SCRAM-SHA-256",
    "PLAIN LOGIN CRAM-MD5 DIGEST-MD5 SCRAM-SHA-1",
    "PLAIN LOGIN CRAM-MD5 DIGEST-MD5",
    "PLAIN LOGIN CRAM-MD5",
    "LOGIN PLAIN",
    "LOGIN",
    "plain,login",
    "SCRAM-SHA-384 SCRAM-SHA-224 PLAIN",
    "SCRAM-SHA-224 DIGEST-MD5",
    "SCRAM-SHA-512 SCRAM-SHA-256",
    "GSSAPI SCRAM-SHA-256-PLUS PLAIN",
    "EXTERNAL PLAIN",
    "XYZ",
    "",
]


class ScriptedServer:
    """A listening socket on a free loopback port that plays one item of `items` per
    connection, in order, on a thread (serve(conn, item) says how); close() waits for
    the last one."""

    def __init__(self, items: list) -> None:
        self.items = items
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(30)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        for item in self.items:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(10)
                self.serve(conn, item)

    def serve(self, conn: socket.socket, item) -> None:
        raise NotImplementedError

    def greet(self, conn: socket.socket, mechanisms: bytes) -> None:
        """pmcd's greeting with AUTH, the client's CREDS, then the mechanism list."""
        conn.sendall(struct.pack(">iiiiI", 20, 0x7000, 0, 0, 0x02010000 | GREETING_FEATURES))
        conn.recv(20)
        conn.sendall(struct.pack(">iiii", 16 + len(mechanisms), 0x7011, 0, 0) + mechanisms)

    def close(self) -> None:
        self.thread.join(60)
        self.sock.close()


class _MechanismServer(ScriptedServer):
    """Sends one mechanism list per connection and records the mechanism name of the
    client's answer (None: no answer)."""

    def __init__(self, lists: List[str]) -> None:
        self.chosen: List[Optional[str]] = []
        super().__init__(lists)

    def serve(self, conn: socket.socket, mechs: str) -> None:
        try:
            self.greet(conn, mechs.encode())
            data = conn.recv(4096)
            self.chosen.append(data[16:].split(b"\0")[0].decode() if data else None)
        except OSError:
            self.chosen.append(None)


# one pmNewContext per host spec of $SPECS: 0 or the pmErr code of each
CONNECT_EACH = r'''
import json, os
from pcp import pmapi
out = []
for spec in json.loads(os.environ["SPECS"]):
    try:
        pmapi.pmContext(1, spec)
        out.append(0)
    except pmapi.pmErr as e:
        out.append(e.args[0])
print(json.dumps(out))
'''


@pytest.mark.reference
def test_mechanism_choice_matches_libpcp():
    require_reference()
    results = {}
    for side in (False, True):
        server = _MechanismServer(MECHANISM_LISTS)
        try:
            spec = "127.0.0.1:%d?username=pcp&password=x" % server.port
            codes = run_program(CONNECT_EACH, side, {
                "SPECS": json.dumps([spec] * len(MECHANISM_LISTS)), "PCP_CONSOLE": "none"}, 120)
        finally:
            server.close()
        results[side] = (server.chosen, codes)
    ours, ref = results[True], results[False]
    assert ours == ref
    # and what that is, for the record
    assert ref[0][:6] == ["SCRAM-SHA-256", "SCRAM-SHA-1", "DIGEST-MD5", "CRAM-MD5",
                          "PLAIN", "LOGIN"]
    assert ref[1][-3:] == [-21348, -21348, -21348]            # SASL_NOMECH


PASSWORD = "p\u00e9w"             # "pé w" in UTF-8: DIGEST-MD5 hashes it as ISO 8859-1


def _digest_secret_variants(answer: bytes, password: bytes) -> str:
    """Which secret a DIGEST-MD5 response was made with: the UTF-8 bytes of name, realm
    and password as they are ("raw"), or as ISO 8859-1 where they fit ("8859-1"),
    "both" when that is the same, "none" when neither."""
    fields = dict(re.findall(rb'([a-z-]+)=("(?:[^"\\]|\\.)*"|[^,]*)', answer))
    value = {k: re.sub(rb"\\(.)", rb"\1", v[1:-1]) if v.startswith(b'"') else v
             for k, v in fields.items()}

    def latin1(text: bytes) -> bytes:
        try:
            return text.decode("utf-8").encode("latin-1")
        except (UnicodeDecodeError, UnicodeEncodeError):
            return text

    def response(convert) -> bytes:
        secret = hashlib.md5(b":".join(convert(v) for v in (
            value[b"username"], value.get(b"realm", b""), password))).digest()
        ha1 = hashlib.md5(secret + b":" + value[b"nonce"] + b":" + value[b"cnonce"])
        ha2 = hashlib.md5(b"AUTHENTICATE:" + value[b"digest-uri"])
        return hashlib.md5(b":".join((ha1.hexdigest().encode(), value[b"nonce"],
                                      value[b"nc"], value[b"cnonce"], value[b"qop"],
                                      ha2.hexdigest().encode()))).hexdigest().encode()

    raw, converted = response(lambda v: v), response(latin1)
    got = value.get(b"response")
    return {(True, True): "both", (True, False): "raw", (False, True): "8859-1"}.get(
        (got == raw, got == converted), "none")


class _ChallengeServer(ScriptedServer):
    """Offers one mechanism per connection, answers the client's first message with one
    challenge (none for PLAIN), and records both messages of the client (DIGEST-MD5's
    random cnonce and the response made with it masked, and which secret it used)."""

    CHALLENGES = {"PLAIN": None, "LOGIN": b"Username:", "CRAM-MD5": b"<1896.697170952@pmcd>",
                  "DIGEST-MD5": b'realm="pmcd",nonce="OA6MG9tEQGm2hh",qop="auth",'
                                b'algorithm=md5-sess,charset=utf-8'}

    def __init__(self, mechanisms: List[str]) -> None:
        self.seen: List[List[str]] = []
        super().__init__(mechanisms)

    def serve(self, conn: socket.socket, mech: str) -> None:
        seen: List[str] = []
        try:
            self.greet(conn, mech.encode())
            seen.append(conn.recv(4096)[16:].decode("latin-1"))
            challenge = self.CHALLENGES[mech]
            if challenge is not None:
                conn.sendall(struct.pack(">iiii", 16 + len(challenge), 0x7011, 0, 0)
                             + challenge)
                answer = conn.recv(4096)[16:]
                seen.append(re.sub(r'cnonce="[^"]*"|response=[0-9a-f]*', "MASKED",
                                   answer.decode("latin-1")))
                if mech == "DIGEST-MD5" and answer:
                    seen.append(_digest_secret_variants(answer, PASSWORD.encode()))
        except OSError:
            pass
        self.seen.append(seen)


@pytest.mark.reference
def test_user_names_as_cyrus_canon_user_makes_them():
    """Every mechanism sends the name canon_user makes (blanks trimmed) or fails with
    SASL_FAIL where it refuses the name, at the step that first needs it."""
    require_reference()
    users = ["pcp", "x%20", "%20x", "", "%20%20", "%20%20ab%20", "%20ab%20%20",
             "%C3%A9", "%E2%82%AC"]
    cases = [(mech, user) for mech in _ChallengeServer.CHALLENGES for user in users]
    results = {}
    for side in (False, True):
        server = _ChallengeServer([mech for mech, _ in cases])
        try:
            specs = ["127.0.0.1:%d?username=%s&password=p%%C3%%A9w" % (server.port, user)
                     for _, user in cases]
            codes = run_program(CONNECT_EACH, side, {"SPECS": json.dumps(specs),
                                                     "PCP_CONSOLE": "none"}, 120)
        finally:
            server.close()
        results[side] = list(zip(cases, codes, server.seen))
    ours, ref = results[True], results[False]
    assert ours == ref, "\n".join("%s\n  ours %s\n  ref  %s" % (o[0], o[1:], r[1:])
                                  for o, r in zip(ours, ref) if o != r)
    plain = {user: code for (mech, user), code, _ in ref if mech == "PLAIN"}
    assert plain["%20x"] == plain[""] == -21345 and plain["x%20"] == 0     # SASL_FAIL
    digest = {user: seen[-1] for (mech, user), _, seen in ref if mech == "DIGEST-MD5"}
    assert digest["pcp"] == digest["%C3%A9"] == "8859-1" and digest["%E2%82%AC"] == "8859-1"


# ---- the upgrade's bytes -----------------------------------------------------------------

def test_pcps_sends_secure_and_ack_flags_then_starts_tls(tmp_path, monkeypatch):
    monkeypatch.setenv("PCP_TLSCONF_PATH", str(tmp_path / "none.conf"))
    got: List[bytes] = []
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def serve() -> None:
        conn, _ = srv.accept()
        with conn:
            conn.sendall(struct.pack(">iiiiI", 20, 0x7000, 0, 0, 0x02010000 | 0x0E55))
            got.append(conn.recv(20))
            conn.sendall(struct.pack(">iiii", 16, 0x7000, 0, 0))      # the secure ack
            conn.settimeout(5)
            got.append(conn.recv(5))                                  # a TLS record header

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    with pytest.raises(pmErr):
        connect("pcps://127.0.0.1:%d" % srv.getsockname()[1], rtimeout=5)
    t.join(10)
    srv.close()
    assert got[0][16:] == bytes.fromhex("01020011")                  # SECURE|SECURE_ACK
    assert got[1][:1] == b"\x16"                                     # a TLS handshake


def test_secure_ack_error_is_returned(tmp_path, monkeypatch):
    monkeypatch.setenv("PCP_TLSCONF_PATH", str(tmp_path / "none.conf"))
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def serve() -> None:
        conn, _ = srv.accept()
        with conn:
            conn.sendall(struct.pack(">iiiiI", 20, 0x7000, 0, 0, 0x02010000 | 0x0E55))
            conn.recv(20)
            conn.sendall(struct.pack(">iiii", 16, 0x7000, 0, -12387))
            conn.settimeout(2)
            try:
                conn.recv(5)
            except OSError:
                pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    with pytest.raises(pmErr) as e:
        connect("pcps://127.0.0.1:%d" % srv.getsockname()[1], rtimeout=5)
    t.join(10)
    srv.close()
    assert e.value.args[0] == -12387
