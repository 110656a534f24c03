"""The client side of SCRAM (RFC 5802; SHA-256 from RFC 7677), as cyrus-sasl 2.1.28's
scram plugin runs it for libpcp, over hashlib and hmac alone.

What the plugin does, and so what this does:

- the authentication and authorization ids are both the user name (libpcp answers
  SASL_CB_USER and SASL_CB_AUTHNAME alike), so the client-first message is
  ``n,a=USER,n=USER,r=NONCE``, the name (as canon_user left it: sasl.Credentials) with
  "," and "=" escaped as "=2C" and "=3D";
- neither the name nor the password goes through SASLprep: the password's bytes are
  the PBKDF2 key as given;
- the nonce is 32 base64 characters from 24 random bytes;
- a server message over 2048 bytes, one with a NUL, a mandatory extension (m=), a
  missing or empty field, an iteration count over 65536 (read by strtoul into an
  unsigned int; 2.1.28 has no lower bound, and 0 counts as 1), a nonce that does not extend the client's, or base64 that
  sasl_decode64 refuses is a protocol error; a server signature that does not match
  is an authentication failure.

The parsers take whatever bytes pmcd sent and raise only ScramProtocolError or
ScramAuthError.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
from typing import Dict, Optional, Tuple

__all__ = ["MECHANISMS", "ScramClient", "ScramProtocolError", "ScramAuthError"]

# mechanism name -> hashlib name: the five the plugin registers
MECHANISMS: Dict[str, str] = {
    "SCRAM-SHA-512": "sha512", "SCRAM-SHA-384": "sha384", "SCRAM-SHA-256": "sha256",
    "SCRAM-SHA-224": "sha224", "SCRAM-SHA-1": "sha1",
}

NONCE_SIZE = 32                 # base64 characters
MAX_ITERATIONS = 0x10000        # and no minimum: 2.1.28's check of one is empty
MAX_SERVER_MESSAGE = 2048
_ULONG_MAX = 2 ** 64 - 1
# what sasl_decode64 accepts: whole groups of four, "=" only at the very end
_BASE64 = re.compile(rb"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?\Z")


class ScramProtocolError(ValueError):
    """The server's message is not SCRAM as the plugin reads it (SASL_BADPROT)."""


class ScramAuthError(ValueError):
    """The server did not prove it knows the password (SASL_BADAUTH)."""


def escape_name(name: bytes) -> bytes:
    """RFC 5802's saslname: "," and "=" escaped."""
    return name.replace(b"=", b"=3D").replace(b",", b"=2C")


def decode_base64(text: bytes) -> bytes:
    """sasl_decode64's reading: ScramProtocolError where it fails."""
    if not _BASE64.match(text):
        raise ScramProtocolError("invalid base64")
    return base64.b64decode(text)


def parse_iterations(text: bytes) -> int:
    """The iteration count as strtoul(text, &end, 10) reads it, kept in an unsigned int
    (the plugin's field), then checked against the plugin's bound."""
    m = re.fullmatch(rb"[ \t\n\v\f\r]*([+-]?)([0-9]+)", text)
    if m is None:
        raise ScramProtocolError("invalid iteration count")
    value = int(m.group(2))
    if value > _ULONG_MAX:                      # ERANGE
        raise ScramProtocolError("iteration count out of range")
    if m.group(1) == b"-":
        value = -value & _ULONG_MAX             # strtoul negates in unsigned arithmetic
    value &= 0xFFFFFFFF
    if value > MAX_ITERATIONS:
        raise ScramProtocolError("iteration count %d refused" % value)
    return value


def parse_server_first(message: bytes, client_nonce: bytes) -> Tuple[bytes, bytes, int]:
    """(nonce, salt, iterations) of ``r=NONCE,s=SALT,i=COUNT[,extensions]``."""
    if not 3 <= len(message) <= MAX_SERVER_MESSAGE or message[1:2] != b"=":
        raise ScramProtocolError("invalid server-first message")
    if not message.startswith(b"r="):
        raise ScramProtocolError("nonce expected (or a mandatory extension)")
    if b"\0" in message:
        raise ScramProtocolError("NUL in server-first message")
    nonce, sep, rest = message[2:].partition(b",")
    if not sep or not rest.startswith(b"s="):
        raise ScramProtocolError("salt expected")
    salt, sep, rest = rest[2:].partition(b",")
    if not sep or not rest.startswith(b"i="):
        raise ScramProtocolError("iteration count expected")
    iterations = parse_iterations(rest[2:].partition(b",")[0])
    if len(nonce) <= NONCE_SIZE or not nonce.startswith(client_nonce[:NONCE_SIZE]):
        raise ScramProtocolError("server nonce does not extend the client's")
    if not salt:
        raise ScramProtocolError("empty salt")
    return nonce, decode_base64(salt), iterations


def parse_server_final(message: bytes, digest_size: int) -> bytes:
    """The server signature of ``v=SIGNATURE[,extensions]``."""
    if not 3 <= len(message) <= MAX_SERVER_MESSAGE or not message.startswith(b"v="):
        raise ScramProtocolError("server signature expected")
    end = message.find(b",", 2)
    # the plugin stops one character short of a comma (so a signature followed by an
    # extension never decodes): kept, since that is what libpcp's client does
    signature = decode_base64(message[2:] if end < 0 else message[2:end - 1])
    if len(signature) != digest_size:
        raise ScramProtocolError("server signature of the wrong length")
    return signature


class ScramClient:
    """One exchange: client_first(), client_final(server_first),
    verify(server_final). The password is dropped once the keys are derived."""

    def __init__(self, mechanism: str, user: bytes, password: bytes,
                 nonce: Optional[bytes] = None, authorize_as_user: bool = True) -> None:
        # authorize_as_user=False leaves a= out, as RFC 5802's examples do
        self.hash_name = MECHANISMS[mechanism]
        self.digest_size = hashlib.new(self.hash_name).digest_size
        name = escape_name(user)
        self._gs2_header = b"n," + (b"a=" + name if authorize_as_user else b"") + b","
        self._nonce = nonce or base64.b64encode(os.urandom(NONCE_SIZE * 3 // 4))
        self._first_bare = b"n=" + name + b",r=" + self._nonce
        self._password: Optional[bytes] = password
        self._server_signature: Optional[bytes] = None

    def client_first(self) -> bytes:
        return self._gs2_header + self._first_bare

    def client_final(self, server_first: bytes) -> bytes:
        nonce, salt, iterations = parse_server_first(server_first, self._nonce)
        without_proof = (b"c=" + base64.b64encode(self._gs2_header) + b",r=" + nonce)
        auth_message = b",".join((self._first_bare, server_first, without_proof))
        # the plugin's Hi() computes U1 whatever the count: 0 iterations are 1
        salted = hashlib.pbkdf2_hmac(self.hash_name, self._password or b"", salt,
                                     max(iterations, 1))
        self._password = None
        client_key = self._hmac(salted, b"Client Key")
        stored_key = hashlib.new(self.hash_name, client_key).digest()
        signature = self._hmac(stored_key, auth_message)
        proof = bytes(k ^ s for k, s in zip(client_key, signature))
        self._server_signature = self._hmac(self._hmac(salted, b"Server Key"), auth_message)
        return without_proof + b",p=" + base64.b64encode(proof)

    def verify(self, server_final: bytes) -> None:
        expected = self._server_signature
        self._server_signature = None
        if expected is None:
            raise ScramProtocolError("server-final before server-first")
        if not hmac.compare_digest(parse_server_final(server_final, self.digest_size),
                                   expected):
            raise ScramAuthError("server signature mismatch")

    def _hmac(self, key: bytes, message: bytes) -> bytes:
        return hmac.new(key, message, self.hash_name).digest()
