"""TLS for host contexts, as libpcp 6.0.3 sets it up: tls.conf, one client context per
process, and the upgrade of a pmcd socket after CREDS (protocol.md 4.5).

Python's ``ssl`` module does the TLS (OpenSSL underneath, as in libpcp); this module only
reads the configuration the way libpcp does and maps failures to libpcp's codes:

* the client context cannot be made (a CA file that does not load, a bad cipher list,
  an unreadable certificate or key): ``PM_ERR_NOTCONN``;
* the handshake fails (an unverifiable server certificate, an alert from pmcd):
  ``PM_ERR_TLS``; pmcd closing cleanly during the handshake: ``-ENOTCONN``.

libpcp checks the server's certificate only when the client's tls.conf says
``tls-verify-clients = true`` (or ``yes``), and it never checks the host name. Both are
matched. ``PCP_TLS_VERIFY_HOSTNAME=1`` is this package's opt-in stricter check: the
certificate must then be valid and name the host connected to.
"""
from __future__ import annotations

import errno
import logging
import os
import socket
import ssl
import threading
from typing import Dict, Optional, Tuple

from pcp._core.config import pmGetConfig
from pcp._core.constants import PM_ERR_NOTCONN, PM_ERR_TIMEOUT, PM_ERR_TLS
from pcp._core.errors import pmErr

__all__ = ["TLS_KEYS", "read_tls_config", "client_context", "wrap_client"]

log = logging.getLogger(__name__)

# The keys libpcp's tls.conf parser knows, in its order (the order matters: a key that
# is a prefix of several names takes the first, as libpcp compares only its length).
TLS_KEYS = (
    "tls-cert-file", "tls-key-file", "tls-ciphers", "tls-ciphersuites",
    "tls-ca-cert-file", "tls-ca-cert-dir", "tls-client-cert-file", "tls-client-key-file",
    "tls-verify-clients",
)


def read_tls_config(path: Optional[str]) -> Optional[Dict[str, str]]:
    """The settings of a tls.conf as libpcp reads them; None when it cannot be opened.

    One ``key = value`` (or ``key: value``, or ``key value``) a line; ``#`` starts a
    comment; a value ends at its first blank. A key names the first of TLS_KEYS that
    starts with it, as libpcp's parser does; later lines override earlier ones.
    """
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        return None
    config: Dict[str, str] = {}
    # fgets: lines keep their newline; the last one may have none (and then, as in
    # libpcp, its value is not taken).
    for line in raw.decode("utf-8", "surrogateescape").splitlines(keepends=True):
        parsed = _parse_line(line)
        if parsed is not None:
            config[parsed[0]] = parsed[1]
    return config


def _parse_line(line: str) -> Optional[Tuple[str, str]]:
    """One line, step by step as libpcp's __pmGetSecureConfig scans it."""
    n = len(line)
    p = s = 0
    end = -1
    while p < n:
        c = line[p]
        if c.isascii() and c.isalpha():     # C isalpha in the C locale
            p += 1
            continue
        if s == p and c.isspace():
            s += 1                  # leading blanks
            p += 1
            continue
        if c in "#\n":
            break
        if c in ":=":
            if end < 0:
                end = p
            p += 1
            break
        if c.isspace() and end < 0:
            end = p
        p += 1
    if end < 0:
        return None
    keyword = line[s:end]
    for key in TLS_KEYS:
        if key.startswith(keyword):     # strncmp over the keyword's length
            break
    else:
        return None
    while p < n and line[p].isspace():
        p += 1
    s = p
    if p < n and line[p] == "#":
        return None
    if p < n:
        p += 1
    stop = s + (n - p)              # libpcp's bound: the value's start plus what follows
    while p <= stop:
        if p >= n or line[p] == "#" or line[p].isspace():
            break
        p += 1
    if p > stop or s >= n:
        return None
    value = line[s:p]
    return (key, value) if value else None


# ---- the client context: made once and kept, as libpcp keeps its SSL_CTX -------------

_lock = threading.Lock()
_cached: Optional[Tuple[tuple, ssl.SSLContext]] = None


def _config_identity(path: Optional[str]) -> tuple:
    # libpcp reads tls.conf once per process; a context kept per file version gives the
    # same result while letting a long-lived process pick up a changed configuration.
    try:
        st = os.stat(path) if path else None
    except OSError:
        st = None
    return (path, st.st_mtime_ns if st else None, st.st_size if st else None,
            os.environ.get("PCP_TLS_VERIFY_HOSTNAME"))


def client_context() -> ssl.SSLContext:
    """The process's TLS client context from $PCP_TLSCONF_PATH (or pcp.conf's).

    Raises pmErr(PM_ERR_NOTCONN) when libpcp could not make its context either.
    """
    global _cached
    path = pmGetConfig("PCP_TLSCONF_PATH")
    ident = _config_identity(path)
    with _lock:
        if _cached is not None and _cached[0] == ident:
            return _cached[1]
        ctx = _make_context(read_tls_config(path) or {})
        _cached = (ident, ctx)
        return ctx


def _strict() -> bool:
    return os.environ.get("PCP_TLS_VERIFY_HOSTNAME", "") not in ("", "0")


def _make_context(cfg: Dict[str, str]) -> ssl.SSLContext:
    try:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2     # libpcp: no SSLv3, TLS 1.0, 1.1
        strict = _strict()
        verify = cfg.get("tls-verify-clients") in ("yes", "true")
        ctx.check_hostname = strict
        ctx.verify_mode = ssl.CERT_REQUIRED if (verify or strict) else ssl.CERT_NONE
        cafile, capath = cfg.get("tls-ca-cert-file"), cfg.get("tls-ca-cert-dir")
        if cafile or capath:
            ctx.load_verify_locations(cafile=cafile, capath=capath)
        else:
            ctx.set_default_verify_paths()
        # The client's own certificate and key, or else the general ones (as libpcp).
        certfile = cfg.get("tls-client-cert-file") or cfg.get("tls-cert-file")
        if "tls-client-cert-file" in cfg:
            keyfile = cfg.get("tls-client-key-file")
        else:
            keyfile = cfg.get("tls-key-file")
        if certfile and keyfile:
            ctx.load_cert_chain(certfile, keyfile)
        elif certfile:
            # libpcp loads the chain and no key: OpenSSL then presents no certificate.
            # The chain must still load (else libpcp fails to make its context).
            _check_chain(certfile)
        if cfg.get("tls-ciphers"):
            ctx.set_ciphers(cfg["tls-ciphers"])
        if cfg.get("tls-ciphersuites"):
            _set_ciphersuites(ctx, cfg["tls-ciphersuites"])
    except (ssl.SSLError, OSError, ValueError) as e:
        log.error("cannot set up the TLS client context: %s", type(e).__name__)
        raise pmErr(PM_ERR_NOTCONN) from None
    return ctx


def _check_chain(path: str) -> None:
    with open(path, "rb") as f:
        text = f.read().decode("ascii", "replace")
    begin = text.find("-----BEGIN CERTIFICATE-----")
    end = text.find("-----END CERTIFICATE-----", begin)
    if begin < 0 or end < 0:
        raise ValueError("no certificate")
    ssl.PEM_cert_to_DER_cert(text[begin:end + len("-----END CERTIFICATE-----")])


def _set_ciphersuites(ctx: ssl.SSLContext, suites: str) -> None:
    """TLS 1.3 cipher suites: the ssl module has no setter, so only the suites every
    OpenSSL build enables by default can be honoured; asking for another one fails as
    libpcp fails on a suite OpenSSL does not know (the context is not made)."""
    wanted = [s for s in suites.split(":") if s]
    known = {c["name"] for c in ctx.get_ciphers() if c.get("protocol") == "TLSv1.3"}
    if not wanted or any(s not in known for s in wanted):
        raise ValueError("TLS 1.3 cipher suites")
    if set(wanted) != known:
        # A strict subset cannot be enforced through the ssl module: refuse TLS 1.3, so
        # that the suites left are the TLS 1.2 ones of tls-ciphers.
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2


def sni_name(host: Optional[str]) -> Optional[str]:
    """The server name libpcp sends: the local host's name for a socket path or a
    ``local...`` name, else the host as given. None where Python sends no SNI."""
    if not host or host.startswith("/") or host.startswith("local"):
        host = socket.gethostname()
    if not host or host.startswith(".") or "\0" in host:
        return None
    return host


def wrap_client(sock: socket.socket, host: Optional[str], timeout: float) -> ssl.SSLSocket:
    """Run the client side of the TLS handshake on a connected socket; the TLS socket.
    host: the pmcd host name as given (or the socket path).

    pmErr: PM_ERR_NOTCONN (no client context), PM_ERR_TLS (handshake failed),
    -ENOTCONN (pmcd closed the connection cleanly), PM_ERR_TIMEOUT (no answer within
    the request timeout, where libpcp would wait for ever).
    """
    ctx = client_context()
    name = sni_name(host)
    if ctx.check_hostname and host and not host.startswith("/"):
        name = host             # the opt-in check: the name connected to, as given
    if not isinstance(sock, socket.socket):
        # the transport's plain _socket.socket, handed over (as wrap_socket takes the
        # socket it wraps) to socket.py's class, which ssl wraps
        sock = socket.socket(sock.family, sock.type, sock.proto, fileno=sock.detach())
    try:
        tls = ctx.wrap_socket(sock, server_hostname=name, do_handshake_on_connect=False)
    except (ssl.SSLError, ValueError, OSError):
        raise pmErr(PM_ERR_TLS) from None
    tls.settimeout(timeout if timeout > 0 else None)
    try:
        tls.do_handshake()
    except ssl.SSLZeroReturnError:
        raise pmErr(-errno.ENOTCONN) from None
    except socket.timeout:
        raise pmErr(PM_ERR_TIMEOUT) from None
    except (ssl.SSLError, OSError) as e:
        log.debug("TLS handshake with %s failed: %s", name, getattr(e, "reason", None))
        raise pmErr(PM_ERR_TLS) from None
    return tls
