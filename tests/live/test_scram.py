"""SCRAM (pcp/_live/scram.py) without a pmcd: RFC 5802 and RFC 7677's examples, the
parsers of the server's messages compared with libpcp's cyrus-sasl client on a scripted
server (well-formed, malformed, a wrong or extended signature, odd iteration counts,
user names that need escaping or trimming), and hypothesis on arbitrary server
messages: a libpcp error code, never another exception."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import socket
import struct
from typing import List, Tuple

import pytest
from hypothesis import given, settings, strategies as st

from pcp._core.errors import pmErr
from pcp._live import sasl, scram
from support.difftest import require_reference, run_program
from tests.live.test_secure_units import CONNECT_EACH, ScriptedServer

SASL_BADPROT = -21349
SASL_BADAUTH = -21357
SASL_FAIL = -21345
PM_ERR_IPC = -12366


# ---- the RFCs' examples (no a=, as the RFCs write them) ---------------------------------

@pytest.mark.parametrize("mech, nonce, server_first, client_final, server_final", [
    ("SCRAM-SHA-1", b"fyko+d2lbbFgONRv9qkxdawL",
     b"r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096",
     b"c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=",
     b"v=rmF9pqV8S7suAoZWja4dJRkFsKQ="),
    ("SCRAM-SHA-256", b"rOprNGfwEbeRWgbNEkqO",
     b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
     b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
     b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
     b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="),
])
def test_rfc_examples(mech, nonce, server_first, client_final, server_final):
    client = scram.ScramClient(mech, b"user", b"pencil", nonce=nonce, authorize_as_user=False)
    assert client.client_first() == b"n,,n=user,r=" + nonce
    assert client.client_final(server_first) == client_final
    client.verify(server_final)
    wrong = scram.ScramClient(mech, b"user", b"pencil", nonce=nonce, authorize_as_user=False)
    wrong.client_final(server_first)
    with pytest.raises(scram.ScramAuthError):
        wrong.verify(b"v=" + base64.b64encode(bytes(wrong.digest_size)))


def test_client_first_as_libpcp_sends_it():
    client = scram.ScramClient("SCRAM-SHA-256", b"a,b=c", b"pw")
    first = client.client_first()
    assert re.fullmatch(rb"n,a=a=2Cb=3Dc,n=a=2Cb=3Dc,r=[A-Za-z0-9+/]{32}", first), first


@pytest.mark.parametrize("text, value", [
    (b"4096", 4096), (b" 4096", 4096), (b"+65536", 65536), (b"4294971392", 4096),
    (b"-18446744073709547520", 4096), (b"0", 0), (b"1", 1), (b"4095", 4095),
])
def test_iteration_count_as_strtoul_reads_it(text, value):
    assert scram.parse_iterations(text) == value


@pytest.mark.parametrize("text", [b"", b"65537", b"4096 ", b"0x1000", b"4096x",
                                  b"18446744073709551616", b"-1", b"\xff"])
def test_iteration_count_refused(text):
    with pytest.raises(scram.ScramProtocolError):
        scram.parse_iterations(text)


# ---- arbitrary server messages: a SASL code, nothing else --------------------------------

def _mechanism() -> sasl._Scram:
    mech = sasl._Scram(sasl.Credentials("pcp", "pw", None), "host", "SCRAM-SHA-256")
    mech.start()
    return mech


def _valid_first(mech: sasl._Scram, salt: bytes, iterations: int, extra: bytes) -> bytes:
    return (b"r=" + mech._client._nonce + b"srv,s=" + base64.b64encode(salt)
            + b",i=" + str(iterations).encode() + extra)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000))
def test_any_server_first_gives_a_sasl_code(message):
    mech = _mechanism()
    try:
        answer = mech.step(message)
    except pmErr as e:
        assert e.args[0] == SASL_BADPROT
    else:
        assert answer.startswith(b"c=")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000))
def test_any_server_final_gives_a_sasl_code(message):
    mech = _mechanism()
    mech.step(_valid_first(mech, b"salt" * 4, 4096, b""))
    with pytest.raises(pmErr) as e:
        mech.step(message)
    assert e.value.args[0] in (SASL_BADPROT, SASL_BADAUTH)


@settings(max_examples=100, deadline=None)
@given(st.binary(min_size=1, max_size=40), st.sampled_from([0, 1, 4096, 65536]),
       st.sampled_from([b"", b",x=1", b",m=2"]),
       st.sampled_from(sorted(scram.MECHANISMS)))
def test_well_formed_exchanges_verify(salt, iterations, extra, mech_name):
    # a server written from RFC 5802 (here, independent of scram.py) convinces the client
    mech = sasl._Scram(sasl.Credentials("pcp", "pw", None), "host", mech_name)
    first = mech.start()
    server_first = _valid_first(mech, salt, iterations, extra)
    final = mech.step(server_first)
    signature = _server_signature(mech_name, b"pw", salt, iterations, first, server_first, final)
    assert mech.step(b"v=" + base64.b64encode(signature)) == b"" and mech.done


def _server_signature(mech_name: str, password: bytes, salt: bytes, iterations: int,
                      client_first: bytes, server_first: bytes, client_final: bytes) -> bytes:
    digest = scram.MECHANISMS[mech_name]
    salted = hashlib.pbkdf2_hmac(digest, password, salt, max(iterations, 1))
    server_key = hmac.new(salted, b"Server Key", digest).digest()
    bare = client_first.split(b",", 2)[2]
    without_proof = client_final.rsplit(b",p=", 1)[0]
    return hmac.new(server_key, b",".join((bare, server_first, without_proof)), digest).digest()


# ---- a scripted server: the same codes as libpcp -----------------------------------------

PASSWORD = b"s3cret"
SALT = b"0123456789abcdef"
SIG = object()          # stands for the right server signature

# (server-first template ({n}: the client's nonce), server-final: bytes, SIG or a function
# of the right signature, the code pmNewContext gives on the reference)
SERVER_SCRIPTS: List[Tuple[bytes, object, int]] = [
    (b"r={n}X,s={s},i=4096", SIG, 0),                              # well formed
    (b"r={n}X,s={s},i=4096,ext=1", SIG, 0),                       # an extension
    (b"r={n}X,s={s},i= 4096", SIG, 0),                             # strtoul's blanks
    (b"r={n}X,s={s},i=+4096", SIG, 0),
    (b"r={n}X,s={s},i=4294971392", SIG, 0),                        # kept in 32 bits
    (b"r={n}X,s={s},i=65536", SIG, 0),
    (b"r={n}X,s={s},i=4095", SIG, 0),                              # no lower bound
    (b"r={n}X,s={s},i=0", SIG, 0),                                 # Hi() of 0 is U1
    (b"", SIG, SASL_BADPROT),
    (b"r=", SIG, SASL_BADPROT),
    (b"m=x,r={n}X,s={s},i=4096", SIG, SASL_BADPROT),
    (b"x={n}X,s={s},i=4096", SIG, SASL_BADPROT),
    (b"r={n}X", SIG, SASL_BADPROT),
    (b"r={n}X,t={s},i=4096", SIG, SASL_BADPROT),
    (b"r={n}X,s={s}", SIG, SASL_BADPROT),
    (b"r={n}X,s={s},i=65537", SIG, SASL_BADPROT),
    (b"r={n}X,s={s},i=4096x", SIG, SASL_BADPROT),
    (b"r={n}X,s={s},i=18446744073709551616", SIG, SASL_BADPROT),
    (b"r={n},s={s},i=4096", SIG, SASL_BADPROT),                    # nonce not extended
    (b"r=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA,s={s},i=4096", SIG, SASL_BADPROT),
    (b"r={n}X,s=,i=4096", SIG, SASL_BADPROT),
    (b"r={n}X,s=c2FsdA=,i=4096", SIG, SASL_BADPROT),
    (b"r={n}X,s=c2F=dA==,i=4096", SIG, SASL_BADPROT),
    (b"r={n}X,s=c2FsdA==\0,i=4096", SIG, SASL_BADPROT),
    (b"r={n}X,s={s},i=4096," + b"e" * 2048, SIG, PM_ERR_IPC),     # a challenge too long
    (b"r={n}" + b"X" * 1990 + b",s={s},i=4096", SIG, PM_ERR_IPC),  # an answer too long
    (b"r={n}X,s={s},i=4096", lambda sig: b"v=" + base64.b64encode(sig) + b",x=1",
     SASL_BADPROT),                                                # one character short
    (b"r={n}X,s={s},i=4096", b"e=invalid-proof", SASL_BADPROT),
    (b"r={n}X,s={s},i=4096", lambda sig: b"v=" + base64.b64encode(bytes(len(sig))),
     SASL_BADAUTH),
    (b"r={n}X,s={s},i=4096", lambda sig: b"v=" + base64.b64encode(sig[:-1]), SASL_BADPROT),
    (b"r={n}X,s={s},i=4096", b"v=", SASL_BADPROT),
    (b"r={n}X,s={s},i=4096", b"v=!!!!", SASL_BADPROT),
]
# (user name in the host spec, its code on the reference)
USERS = [("pcp", 0), ("a,b", 0), ("sp ace", 0), ("x%20", 0), ("%20x", SASL_FAIL),
         ("%20%20", 0), ("%20%20ab%20", SASL_FAIL), ("%20ab%20%20", 0), ("", SASL_FAIL)]


def _recv_pdu(conn: socket.socket) -> bytes:
    head = b""
    while len(head) < 4:
        chunk = conn.recv(4 - len(head))
        if not chunk:
            return head
        head += chunk
    size = struct.unpack(">i", head)[0]
    data = head
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _attr(body: bytes) -> bytes:
    return struct.pack(">iiii", 16 + len(body), 0x7011, 0, 0) + body


class _ScramServer(ScriptedServer):
    """Offers SCRAM-SHA-256 and plays one script per connection; records what the
    client sent (nonces masked)."""

    def __init__(self, scripts: List[Tuple[bytes, object, int]]) -> None:
        self.seen: List[list] = []
        super().__init__(scripts)

    def serve(self, conn: socket.socket, script: Tuple[bytes, object, int]) -> None:
        seen: List[str] = []
        try:
            self._play(conn, script[0], script[1], seen)
        except (OSError, ValueError, IndexError) as e:
            seen.append("server: %r" % e)
        self.seen.append(seen)

    def _play(self, conn: socket.socket, first_template: bytes, final: object,
              seen: List[str]) -> None:
        self.greet(conn, b"SCRAM-SHA-256")
        mech, _, client_first = _recv_pdu(conn)[16:].partition(b"\0")
        nonce = client_first.rpartition(b",r=")[2]
        seen.append((mech + b" " + client_first.replace(nonce, b"NONCE")).decode("latin-1"))
        server_first = first_template.replace(b"{n}", nonce).replace(
            b"{s}", base64.b64encode(SALT))
        conn.sendall(_attr(server_first))
        client_final = _recv_pdu(conn)[16:]
        if not client_final:
            return
        seen.append(re.sub(rb"r=[^,]*,p=.*", b"r=NONCE,p=PROOF",
                           client_final).decode("latin-1"))
        # the templates' counts are all numbers that int() reads
        iterations = int(server_first.split(b",i=")[1].split(b",")[0]) & 0xFFFFFFFF
        sig = _server_signature("SCRAM-SHA-256", PASSWORD, SALT, iterations, client_first,
                                server_first, client_final)
        if final is SIG:
            message = b"v=" + base64.b64encode(sig)
        elif callable(final):
            message = final(sig)
        else:
            message = final
        conn.sendall(_attr(message))
        after = _recv_pdu(conn)
        seen.append("answer %r" % after[16:].decode("latin-1") if after else "no answer")


@pytest.mark.reference
def test_server_messages_and_user_names_as_libpcp():
    require_reference()
    scripts = SERVER_SCRIPTS + [SERVER_SCRIPTS[0]] * (len(USERS) - 1)
    users = ["pcp"] * len(SERVER_SCRIPTS) + [user for user, _ in USERS[1:]]
    results = {}
    for ours in (False, True):
        server = _ScramServer(scripts)
        try:
            specs = ["127.0.0.1:%d?username=%s&password=%s&method=SCRAM-SHA-256"
                     % (server.port, user, PASSWORD.decode()) for user in users]
            codes = run_program(CONNECT_EACH, ours, {"SPECS": json.dumps(specs),
                                                     "PCP_CONSOLE": "none"}, 120)
        finally:
            server.close()
        results[ours] = list(zip(codes, server.seen)) if isinstance(codes, list) else codes
    ref, ours = results[False], results[True]
    assert ours == ref, "\n".join("%s\n  ours %s\n  ref  %s" % (s[0], o, r) for s, o, r in
                                  zip(scripts, ours, ref) if o != r) or (ours, ref)
    # and what libpcp does, for the record
    codes = [code for code, _ in ref]
    assert codes[:len(SERVER_SCRIPTS)] == [expected for _, _, expected in SERVER_SCRIPTS]
    assert codes[len(SERVER_SCRIPTS):] == [code for _, code in USERS[1:]]
    assert ref[0][1][0] == "SCRAM-SHA-256 n,a=pcp,n=pcp,r=NONCE"
