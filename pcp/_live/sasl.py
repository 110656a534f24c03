"""SASL authentication of a pmcd connection, as libpcp 6.0.3 runs it with cyrus-sasl.

The exchange (protocol.md 4.5): pmcd sends its mechanism list in an ATTR PDU
(attribute 0); the client answers with the chosen mechanism's name, a NUL and the
optional initial response; then each challenge from pmcd gets one response, empty when
the mechanism has nothing to say, until the client side is done. pmcd acknowledges
nothing: a failure arrives as an ERROR PDU, during the exchange or in place of the reply
to the first request, depending on the mechanism.

The mechanism is chosen the way cyrus-sasl's client chooses among the plugins Debian's
libsasl2-modules installs (measured with libpcp against scripted mechanism lists): the
strongest of the server's list (or of the user's ``method``, which replaces it), and no
mechanism at all when EXTERNAL is in the list. Every mechanism is written over
hashlib/hmac: SCRAM in ``scram``, the MD5 ones here.

Failures carry libpcp's codes: ``PM_ERR_NYI + sasl_code`` (SASL_NOMECH -4, SASL_BADPROT
-5, SASL_BADPARAM -7 ...). Credentials are never logged nor put in an exception; the
mechanism objects forget the password once their last message is made.
"""
from __future__ import annotations

import base64
import errno
import hashlib
import hmac
import logging
import os
import re
from typing import Callable, List, Optional, Tuple

from pcp._core.constants import PM_ERR_IPC, PM_ERR_NYI
from pcp._core.errors import pmErr
from pcp._core.wire import PDU_ATTR, PDU_ERROR
from pcp._live.scram import ScramAuthError, ScramClient, ScramProtocolError

__all__ = ["Credentials", "choose_mechanism", "authenticate", "SERVICE"]

log = logging.getLogger(__name__)

SERVICE = "PCP Collector"       # libpcp's SASL service name
LIMIT_AUTH_PDU = 2048           # libpcp's largest SASL transfer

SASL_FAIL = -1
SASL_NOMECH = -4
SASL_BADPROT = -5
SASL_BADPARAM = -7
SASL_BADAUTH = -13
SASL_BADSERV = -10

# cyrus-sasl's client preference among Debian's plugins, strongest first. The ones in
# _NOT_IMPLEMENTED would be chosen by libpcp but are not implemented here: choosing one
# fails with SASL_NOMECH (see README, deliberate differences).
_PREFERENCE = ("SCRAM-SHA-512", "SCRAM-SHA-384", "SCRAM-SHA-256", "SCRAM-SHA-224",
               "SCRAM-SHA-1", "DIGEST-MD5", "CRAM-MD5", "NTLM", "PLAIN", "LOGIN", "ANONYMOUS")
_NOT_IMPLEMENTED = frozenset(("NTLM", "ANONYMOUS"))
_MECH_NAME = re.compile(r"[A-Za-z0-9_-]+")


def sasl_error(code: int) -> pmErr:
    return pmErr(PM_ERR_NYI + code)


class Credentials:
    """What the SASL callbacks of libpcp answer from the host specification: the user
    name (for the authentication and the authorization id alike), the password, the
    realm. The repr never shows the password; ``forget()`` drops it."""

    __slots__ = ("username", "realm", "_password")

    def __init__(self, username: Optional[str], password: Optional[str],
                 realm: Optional[str]) -> None:
        self.username = username
        self.realm = realm
        self._password = password

    def password(self) -> bytes:
        # libpcp hands cyrus an empty secret when no password was given
        return (self._password or "").encode("utf-8", "surrogateescape")

    def user(self) -> bytes:
        """The name as cyrus-sasl's canon_user makes it, which every mechanism sends."""
        if self.username is None:
            # libpcp would prompt on the terminal; without one cyrus gets no name
            raise sasl_error(SASL_BADPARAM)
        return canonical_user(self.username.encode("utf-8", "surrogateescape"))

    def forget(self) -> None:
        self._password = None

    def __repr__(self) -> str:
        return "<Credentials user=%r password=%s>" % (
            self.username, "set" if self._password is not None else "unset")


_C_SPACE = b" \t\n\v\f\r"       # isspace() in the C locale


def canonical_user(user: bytes) -> bytes:
    """cyrus-sasl's canon_user on the client: leading and trailing blanks trimmed. Its
    check for an all-blank name compares the start of the trimmed name with the
    position of its length: so it refuses (SASL_FAIL) the names where as many blanks
    lead as characters are left (the empty name, " x", "  ab  "), and passes "   " as
    an empty name."""
    leading = len(user) - len(user.lstrip(_C_SPACE))
    name = user.strip(_C_SPACE)
    if leading == len(name):
        raise sasl_error(SASL_FAIL)
    return name


def choose_mechanism(offered: str) -> str:
    """The mechanism cyrus-sasl's client picks from a list (any separators, any case);
    pmErr(SASL_NOMECH) when none fits."""
    names = {m.upper() for m in _MECH_NAME.findall(offered)}
    if "EXTERNAL" in names:
        # cyrus takes EXTERNAL first and, without an external identity, finds no mechanism
        raise sasl_error(SASL_NOMECH)
    for mech in _PREFERENCE:
        if mech in names:
            if mech in _NOT_IMPLEMENTED:
                log.warning("SASL mechanism %s is not implemented by pcp-native; "
                            "name another with ?method= in the host spec", mech)
                raise sasl_error(SASL_NOMECH)
            return mech
    raise sasl_error(SASL_NOMECH)


# ---- mechanisms: start() gives the initial response (None: none), step() the answer
# to each challenge, done tells whether the client side has finished ------------------

class _Mechanism:
    client_first = False

    def __init__(self, creds: Credentials, host: str) -> None:
        self.creds = creds
        self.host = host
        self.done = False

    def start(self) -> Optional[bytes]:
        return None

    def step(self, challenge: bytes) -> bytes:
        raise sasl_error(SASL_BADPROT)


class _Plain(_Mechanism):
    def start(self) -> Optional[bytes]:
        user = self.creds.user()
        self.done = True
        return user + b"\0" + user + b"\0" + self.creds.password()


class _Login(_Mechanism):
    _state = 0

    def step(self, challenge: bytes) -> bytes:
        self._state += 1
        if self._state == 1:
            return self.creds.user()
        if self._state == 2:
            self.done = True
            return self.creds.password()
        raise sasl_error(SASL_BADPROT)


class _CramMD5(_Mechanism):
    def step(self, challenge: bytes) -> bytes:
        if self.done or not challenge:
            raise sasl_error(SASL_BADPROT)
        user = self.creds.user()
        digest = hmac.new(self.creds.password(), challenge, hashlib.md5).hexdigest()
        self.done = True
        return user + b" " + digest.encode("ascii")


_DIGEST_PAIR = re.compile(rb'\s*([A-Za-z0-9_-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^,]*)\s*(?:,|$)')


def _digest_fields(challenge: bytes) -> List[Tuple[bytes, bytes]]:
    pairs = []
    for m in _DIGEST_PAIR.finditer(challenge):
        key, value = m.group(1).lower(), m.group(2).strip()
        if value.startswith(b'"') and value.endswith(b'"') and len(value) >= 2:
            value = re.sub(rb"\\(.)", rb"\1", value[1:-1])
        pairs.append((key, value))
    return pairs


def _as_8859_1(text: bytes) -> bytes:
    """What DIGEST-MD5 hashes of a name, realm or password (cyrus's MD5_UTF8_8859_1):
    UTF-8 that stays within ISO 8859-1 as 8859-1, anything else as it is."""
    out = bytearray()
    i = 0
    while i < len(text):
        byte = text[i]
        if byte > 0xC3:
            return text
        if byte >= 0xC0:
            if i + 1 >= len(text) or not 0x80 <= text[i + 1] <= 0xBF:
                return text
            out.append(((byte & 0x3) << 6) | (text[i + 1] & 0x3F))
            i += 2
        else:
            out.append(byte)
            i += 1
    return bytes(out)


def _quote(value: bytes) -> bytes:
    return b'"' + value.replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"'


class _DigestMD5(_Mechanism):
    """RFC 2831 authentication (qop "auth"). libpcp puts no SASL security layer on the
    traffic whatever qop is agreed, so "auth" is what the connection really has."""

    _state = 0
    _expected = b""

    def __init__(self, creds: Credentials, host: str, service: str = SERVICE,
                 cnonce: Optional[bytes] = None) -> None:
        super().__init__(creds, host)
        self.service = service
        self._cnonce = cnonce           # fixed only by tests (RFC 2831's example)

    def step(self, challenge: bytes) -> bytes:
        self._state += 1
        if self._state == 1:
            return self._response(challenge)
        if self._state == 2:
            fields = dict(_digest_fields(challenge))
            if not hmac.compare_digest(fields.get(b"rspauth", b""), self._expected):
                raise sasl_error(SASL_BADSERV)
            self.done = True
            return b""
        raise sasl_error(SASL_BADPROT)

    def _response(self, challenge: bytes) -> bytes:
        fields = _digest_fields(challenge)
        values = dict(fields)
        nonce = values.get(b"nonce")
        if not nonce or values.get(b"algorithm", b"").lower() != b"md5-sess":
            raise sasl_error(SASL_BADPROT)
        qops = [q.strip() for q in values.get(b"qop", b"auth").split(b",")]
        if b"auth" not in qops:
            raise sasl_error(SASL_BADPROT)
        realms = [v for k, v in fields if k == b"realm"]
        user = self.creds.user()
        realm = (self.creds.realm.encode("utf-8", "surrogateescape")
                 if self.creds.realm is not None else (realms[0] if realms else b""))
        cnonce = self._cnonce or base64.b64encode(os.urandom(24)).rstrip(b"=")
        nc = b"00000001"
        uri = ("%s/%s" % (self.service, self.host)).encode("utf-8", "surrogateescape")
        secret = hashlib.md5(b":".join(_as_8859_1(v) for v in (
            user, realm, self.creds.password()))).digest()
        a1 = secret + b":" + nonce + b":" + cnonce
        ha1 = hashlib.md5(a1).hexdigest().encode()

        def kd(a2: bytes) -> bytes:
            ha2 = hashlib.md5(a2).hexdigest().encode()
            joined = b":".join((ha1, nonce, nc, cnonce, b"auth", ha2))
            return hashlib.md5(joined).hexdigest().encode()

        response = kd(b"AUTHENTICATE:" + uri)
        self._expected = kd(b":" + uri)
        parts = [b"username=" + _quote(user)]
        if realm:
            parts.append(b"realm=" + _quote(realm))
        # cyrus 2.1.28 offers libpcp's buffer size and never says charset=utf-8
        parts += [b"nonce=" + _quote(nonce), b"cnonce=" + _quote(cnonce), b"nc=" + nc,
                  b"qop=auth", b"maxbuf=%d" % LIMIT_AUTH_PDU, b"digest-uri=" + _quote(uri),
                  b"response=" + response]
        return b",".join(parts)


class _Scram(_Mechanism):
    """SCRAM-SHA-* (pcp/_live/scram.py): client-first, client-final, then the server's
    signature checked."""

    client_first = True

    def __init__(self, creds: Credentials, host: str, name: str) -> None:
        super().__init__(creds, host)
        self.name = name
        self._client: Optional[ScramClient] = None
        self._state = 0

    def start(self) -> Optional[bytes]:
        self._client = ScramClient(self.name, self.creds.user(), self.creds.password())
        return self._client.client_first()

    def step(self, challenge: bytes) -> bytes:
        self._state += 1
        client = self._client
        try:
            if self._state == 1 and client is not None:
                return client.client_final(challenge)
            if self._state == 2 and client is not None:
                self._client = None     # it holds the salted password's keys
                client.verify(challenge)
                self.done = True
                return b""
        except ScramAuthError:
            raise sasl_error(SASL_BADAUTH) from None
        except ScramProtocolError:
            raise sasl_error(SASL_BADPROT) from None
        raise sasl_error(SASL_BADPROT)


def _mechanism(name: str, creds: Credentials, host: str) -> _Mechanism:
    if name.startswith("SCRAM-"):
        return _Scram(creds, host, name)
    return {"PLAIN": _Plain, "LOGIN": _Login, "CRAM-MD5": _CramMD5,
            "DIGEST-MD5": _DigestMD5}[name](creds, host)


def authenticate(send: Callable[[bytes], None], recv: Callable[[], Tuple[int, bytes]],
                 encode_attr: Callable[[bytes], bytes], decode_error: Callable[[bytes], int],
                 creds: Credentials, method: Optional[str], host: str) -> str:
    """Run the client side of the exchange; returns the mechanism used.

    send(pdu), recv() -> (type, pdu), encode_attr(payload) -> ATTR PDU bytes and
    decode_error(pdu) -> code are the connection's; host is the name libpcp gives
    cyrus-sasl (the local host's name for a socket path or a ``local...`` name).
    """
    payload = _receive(recv, decode_error)
    mech_name = choose_mechanism(method if method is not None else
                                 payload.decode("utf-8", "surrogateescape"))
    mech = _mechanism(mech_name, creds, host)
    try:
        initial = mech.start()
        name = mech_name.encode("ascii")
        if initial is not None:
            if LIMIT_AUTH_PDU - len(name) - 1 < len(initial):
                raise pmErr(-errno.E2BIG)
            message = name + b"\0" + initial
        else:
            message = name + b"\0"
        _send(send, encode_attr, message)
        while not mech.done:
            challenge = _receive(recv, decode_error)
            _send(send, encode_attr, mech.step(challenge))
    finally:
        creds.forget()
    return mech_name


def _send(send: Callable[[bytes], None], encode_attr: Callable[[bytes], bytes],
          payload: bytes) -> None:
    if len(payload) >= LIMIT_AUTH_PDU:      # __pmSendAuth's limit
        raise pmErr(PM_ERR_IPC)
    send(encode_attr(payload))


def _receive(recv: Callable[[], Tuple[int, bytes]], decode_error: Callable[[bytes], int]) -> bytes:
    ptype, pdu = recv()
    if ptype == PDU_ATTR and len(pdu) >= 16:
        if len(pdu) - 16 >= LIMIT_AUTH_PDU:     # __pmDecodeAuth's limit
            raise pmErr(PM_ERR_IPC)
        return bytes(pdu[16:])
    if ptype == PDU_ERROR:
        code = decode_error(pdu)
        raise pmErr(code if code < 0 else PM_ERR_IPC)
    raise pmErr(PM_ERR_IPC)
