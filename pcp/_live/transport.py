"""Sockets to pmcd: the connection algorithm, the handshake, and PDU framing with timeouts."""
from __future__ import annotations

import _socket  # socket.py's enums cost a tool's start 5 ms; its class adds nothing used here
import errno
import math
import os
import struct
import sys
import time

from pcp._core.constants import (PM_CTXFLAG_COMPRESS, PM_CTXFLAG_RELAXED, PM_CTXFLAG_SECURE,
                                 PM_ERR_IPC, PM_ERR_NEEDCLIENTCERT, PM_ERR_TIMEOUT)
from pcp._core.errors import pmErr
from pcp._core.native import ffi, lib
from pcp._core.wire import (FEATURE_AUTH, FEATURE_CERT_REQD, FEATURE_CONTAINER, FEATURE_CREDS_REQD,
                            FEATURE_SECURE, FEATURE_SECURE_ACK, PDU_ERROR, PDU_HEADER_LEN,
                            PCP_RESULT_RESIZE, PDU_MAX_LEN,
                            PCP_EXCHANGE_OTHER, PCP_EXCHANGE_UNSENT)
from pcp._core.constants import PM_CTXFLAG_AUTH, PM_CTXFLAG_CONTAINER
from pcp._decode.result import FlatResult, ResultSizes
from pcp._libpcp import anon as _anon
from pcp._live.hostspec import HostSpec, parse_hostspec, redact_hostspec

__all__ = [
    "Connection", "connect", "connect_timeout", "request_timeout", "pmcd_ports",
]

TYPE_CHECKING = False      # typing's, without importing typing (the first host context)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple, Union


def _warning(msg: str, *args: object) -> None:
    """A warning through this module's logger (shown by logging's last resort handler
    when nothing is configured); logging (~5 ms) is imported when one is given."""
    import logging  # pylint: disable=import-outside-toplevel
    logging.getLogger(__name__).warning(msg, *args)


def _debug(msg: str, *args: object) -> None:
    """A debug message through this module's logger; without logging imported nothing
    can show it (no handler is configured, and the last resort shows warnings only)."""
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.getLogger(__name__).debug(msg, *args)

ATTR_CONTAINER = 15
ATTR_SASL = 0


SERVER_PORT = 44321
PROXY_PORT = 44322
DEFAULT_CONNECT_TIMEOUT = 5.0
DEFAULT_REQUEST_TIMEOUT = 10.0

# Receive buffer: one syscall takes any ordinary reply whole; bigger PDUs grow a
# private buffer geometrically, never beyond what has actually arrived times two.
_RECV_BUFSIZE = 65536
_BIG_FIRST_CHUNK = 1 << 18

_HDR = struct.Struct(">ii")            # len, type
_TIMEVAL = struct.Struct("@ll")
_SEND_FLAGS = getattr(_socket, "MSG_NOSIGNAL", 0)    # EPIPE instead of SIGPIPE
_DEFAULT = object()                    # "use the connection's request timeout"


# ---- environment ------------------------------------------------------------------

def _strtod_whole(text: str) -> bool:
    """Whether text is strtod syntax (decimal, inf, nan) as a whole, as libpcp insists."""
    import re  # pylint: disable=import-outside-toplevel  (3 ms: only for a variable set)

    return re.match(r"[ \t\n\v\f\r]*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
                    r"|inf(?:inity)?|nan)\Z", text, re.IGNORECASE) is not None


def _env_seconds(name: str, default: float) -> float:
    text = os.environ.get(name)
    if text is None:
        return default
    if text == "":
        return 0.0          # strtod("") converts nothing yet leaves *end == '\0': 0
    if _strtod_whole(text):
        value = float(text.strip())
        if not value < 0.0:     # as libpcp tests it: nan is taken
            return value
    _warning("ignored bad %s = '%s'", name, text)
    return default


def connect_timeout() -> float:
    """PMCD_CONNECT_TIMEOUT seconds (default 5); 0 (or under a microsecond) waits forever;
    inf or nan make every connect fail with -EINVAL, as in libpcp."""
    return _env_seconds("PMCD_CONNECT_TIMEOUT", DEFAULT_CONNECT_TIMEOUT)


def request_timeout() -> float:
    """PMCD_REQUEST_TIMEOUT seconds (default 10); 0 waits forever; inf or nan make every
    request fail with PM_ERR_IPC, as in libpcp (connect() waits whole seconds of it)."""
    return _env_seconds("PMCD_REQUEST_TIMEOUT", DEFAULT_REQUEST_TIMEOUT)


def _strtol0(text: str, i: int) -> Tuple[int, int]:
    """C strtol(text + i, &end, 0): (value, end index); end == i when nothing converts."""
    n = len(text)
    j = i
    while j < n and text[j] in " \t\n\v\f\r":
        j += 1
    sign = 1
    if j < n and text[j] in "+-":
        sign = -1 if text[j] == "-" else 1
        j += 1
    base, digits = 10, "0123456789"
    if text.startswith(("0x", "0X"), j) and j + 2 < n and text[j + 2] in "0123456789abcdefABCDEF":
        base, digits, j = 16, "0123456789abcdefABCDEF", j + 2
    elif j < n and text[j] == "0":
        base, digits = 8, "01234567"
    k = j
    while k < n and text[k] in digits:
        k += 1
    if k == j:
        return 0, i
    value = sign * int(text[j:k], base)
    value = max(min(value, (1 << 63) - 1), -(1 << 63))
    return value, k


def _port_list(text: str) -> Optional[List[int]]:
    """A comma separated port list as libpcp's __pmAddPorts reads it, None if bad."""
    ports: List[int] = []
    i = 0
    while True:
        value, end = _strtol0(text, i)
        value &= 0xFFFFFFFF                       # (int) cast of the long
        if value & 0x80000000:
            value -= 1 << 32
        if (end < len(text) and text[end] != ",") or value < 0:
            return None
        ports.append(value)
        if end >= len(text):
            return ports
        i = end + 1


def pmcd_ports() -> List[int]:
    """The PMCD_PORT list, or [44321] when unset or unparsable."""
    env = os.environ.get("PMCD_PORT")
    ports = _port_list(env) if env is not None else None
    return ports or [SERVER_PORT]


def _proxy_from_env() -> Optional[Tuple[str, int]]:
    host = os.environ.get("PMPROXY_HOST")
    if host is None:
        return None
    env = os.environ.get("PMPROXY_PORT")
    ports = _port_list(env) if env is not None else None
    return host, (ports or [PROXY_PORT])[0]


# ---- the connection ---------------------------------------------------------------

class Connection:
    """One socket to pmcd (or a pmproxy relaying to pmcd), after a successful handshake.

    Requests are synchronous: send() one request, recv_pdu() its reply.
    """

    __slots__ = ("features", "spec", "is_unix", "host", "port", "request_timeout", "secure",
                 "_sock", "_buf", "_mv", "_start", "_end", "_armed", "_kernel_timeo",
                 "_selector", "_send_flags", "_fd", "_cbuf", "_reply")

    def __init__(self, sock: _socket.socket, spec: HostSpec, is_unix: bool, host: str,
                 port: Optional[int], request_timeout: float) -> None:
        self.features = 0
        self.spec = spec
        self.is_unix = is_unix
        self.host = host                    # host name, or the socket path
        self.port = port
        self.request_timeout = request_timeout
        self.secure = False                 # TLS after the handshake
        self._send_flags = _SEND_FLAGS
        self._sock: Optional[_socket.socket] = sock
        self._buf = bytearray(_RECV_BUFSIZE)
        self._mv = memoryview(self._buf)
        self._start = 0                     # unconsumed bytes are _buf[_start:_end]
        self._end = 0
        self._armed: Optional[float] = None  # receive timeout currently set on the socket
        self._kernel_timeo = True
        self._selector: Optional[Any] = None
        # the one-call round trip (csrc/exchange.c): the socket and the receive buffer
        # as C sees them; _fd is -1 when the round trip must go through Python
        self._fd = sock.fileno()
        self._cbuf = ffi.from_buffer(self._buf)
        self._reply = ffi.new("pcp_exchange_reply *")
        sock.settimeout(None)
        self._arm(request_timeout)
        try:
            # Sends are small; bound them too so a stuck pmcd cannot hang us forever.
            self._sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_SNDTIMEO,
                                  _timeval(request_timeout))
        except OSError:
            pass

    # -- timeouts: set once on the socket (SO_RCVTIMEO), so the common recv is one syscall

    def _arm(self, timeout: Optional[float]) -> None:
        if timeout is not None and not math.isfinite(timeout):
            raise pmErr(PM_ERR_IPC)     # libpcp's select refuses such a wait (EINVAL)
        t = 0.0 if timeout is None or timeout <= 0 else float(timeout)
        if self._kernel_timeo:
            try:
                self._sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_RCVTIMEO, _timeval(t))
                self._armed = t
                return
            except (OSError, OverflowError, struct.error):
                self._kernel_timeo = False
                self._fd = -1           # the timeout is Python's: not for a bare recv
        self._sock.settimeout(t if t > 0 else None)
        self._armed = t

    def start_tls(self, server: Optional[str]) -> None:
        """Switch the socket to TLS (libpcp's order: after CREDS and the secure ack)."""
        from pcp._live import tls as _tls
        if self._start != self._end or self._sock is None:
            raise pmErr(PM_ERR_IPC)     # pmcd sent more than the protocol allows here
        raw = self._sock
        # TLS reads cannot rely on the kernel's receive timeout (OpenSSL would retry an
        # interrupted read for ever): the ssl module's own timeout bounds them instead.
        try:
            raw.setsockopt(_socket.SOL_SOCKET, _socket.SO_RCVTIMEO, _timeval(0.0))
        except OSError:
            pass
        t = self.request_timeout if math.isfinite(self.request_timeout) else 0.0
        self._sock = _tls.wrap_client(raw, server, t)
        self.secure = True
        self._fd = -1                   # TLS records go through Python's ssl module
        self._send_flags = 0            # SSLSocket.sendall takes no flags
        self._kernel_timeo = False
        self._armed = None
        if self._selector is not None:
            self._selector.close()
            self._selector = None

    # -- public API ------------------------------------------------------------------

    def fileno(self) -> int:
        return self._sock.fileno() if self._sock is not None else -1

    def send(self, data) -> None:
        """Send one whole PDU; PM_ERR_IPC on a broken connection, PM_ERR_TIMEOUT if stuck."""
        sock = self._sock
        if sock is None:
            raise pmErr(PM_ERR_IPC)
        try:
            sock.sendall(data, self._send_flags)
        except (BlockingIOError, _socket.timeout):
            raise pmErr(PM_ERR_TIMEOUT) from None
        except OSError:
            raise pmErr(PM_ERR_IPC) from None

    def recv_pdu(self, timeout=_DEFAULT) -> Tuple[int, bytes]:
        """Read one PDU: (type, the whole PDU including its header).

        The timeout (default: the request timeout; None or <= 0: wait forever) bounds the
        whole PDU, header and body. Raises PM_ERR_TIMEOUT, or PM_ERR_IPC on EOF, a
        connection error or a malformed header.
        """
        t = self.request_timeout if timeout is _DEFAULT else (timeout or 0.0)
        if t != self._armed:
            self._arm(t)
        start = self._start
        if start == self._end:
            # Fast path: nothing buffered; pmcd sends one reply per request, so a single
            # recv usually returns exactly one whole PDU.
            t0 = time.monotonic()
            self._start = self._end = 0
            n = self._recv_first(self._mv)
            if n >= PDU_HEADER_LEN:
                plen, ptype = _HDR.unpack_from(self._buf, 0)
                if n == plen and ptype >= 0:
                    self._end = 0
                    return ptype, self._mv[:plen].tobytes()  # a copy: the buffer is reused
            self._end = n
            return self._recv_rest(t, t0)
        return self._recv_rest(t, time.monotonic())

    def exchange(self, request) -> Tuple[int, bytes]:
        """send(request), then recv_pdu(): on a plain socket in one C call (the GIL
        released for the wait), the same errors and timeouts."""
        t = self.request_timeout
        if self._fd < 0 or self._start != self._end or self._sock is None:
            self.send(request)
            return self.recv_pdu()
        if t != self._armed:
            self._arm(t)
        t0 = time.monotonic()
        reply = self._reply
        sts = lib.pcp_exchange_roundtrip(self._fd, request, len(request), self._cbuf,
                                         len(self._buf), reply)
        if sts == 0:
            return reply.type, self._mv[:reply.length].tobytes()
        return self._exchange_rest(sts, t, t0)

    def exchange_result(self, request, highres: bool, expect: int,
                        sizes: ResultSizes) -> Tuple[int, bytes, Optional[FlatResult]]:
        """A pmFetch's round trip: (type, PDU, None) of the first reply PDU, as exchange()
        gives it, or (expect, PDU, its FlatResult) when the RESULT came whole and was
        decoded in the same C call (with `sizes` as FlatResult.from_pdu takes them), the
        anonymous metrics' sets rewritten as libpcp does (pcp._libpcp.anon).
        pmErr(PM_ERR_IPC) for a RESULT that does not decode."""
        t = self.request_timeout
        if self._fd < 0 or self._start != self._end or self._sock is None:
            self.send(request)
            ptype, pdu = self.recv_pdu()
            return ptype, pdu, None
        if t != self._armed:
            self._arm(t)
        t0 = time.monotonic()
        reply = self._reply
        # sizes.counts hold sizes' numbers (ResultSizes keeps them so): the sizes to
        # index with, and the PDU's when it has others (RESIZE)
        c, mem = sizes.room()       # bound to each other by the decoder
        sts = lib.pcp_exchange_fetch(self._fd, request, len(request), self._cbuf,
                                     len(self._buf), 1 if highres else 0, expect, c, mem,
                                     sizes.nbytes, sizes.numpmid_p, sizes.nvalues_p, reply)
        if sts == 0:
            pdu = self._mv[:reply.length].tobytes()
            flat = FlatResult.from_indexed(pdu, highres, c, mem, sizes)
            if reply.noagent:
                _anon.fix_client_side_sets(flat)
            return expect, pdu, flat
        if sts == PCP_RESULT_RESIZE:
            # another size than the last result's: decoded again in columns of its own
            sizes.resize(sizes.counts[0], sizes.counts[1])
            pdu = self._mv[:reply.length].tobytes()
            flat = FlatResult.from_pdu(pdu, highres, sizes)
            _anon.fix_client_side_sets(flat)
            return expect, pdu, flat
        sizes.reset_counts()        # a RESULT that did not decode may have changed them
        if sts < 0 and reply.type == expect and reply.length == reply.received > 0:
            raise pmErr(sts)            # the RESULT did not decode
        ptype, pdu = self._exchange_rest(sts, t, t0)
        return ptype, pdu, None

    def ask(self, call, *args) -> Optional[Tuple[int, bytes]]:
        """A metadata request in one C call: `call` is one of csrc/exchange.c's
        pcp_exchange_* (encode in the receive buffer, round trip, decode), `args` its
        arguments between the buffer's and the reply's. None: the reply was decoded into
        the call's out-parameters (offsets into it: reply() copies it).
        (type, PDU): a reply it left to the caller's decoder (another type, too many
        items, or read by the general receive path). (PCP_EXCHANGE_UNSENT, b""): nothing
        sent (no plain socket, bytes left over, a request that does not encode in
        place). The errors are exchange()'s, and a reply that does not decode raises the
        decoder's code."""
        if self._fd < 0 or self._start != self._end:
            return PCP_EXCHANGE_UNSENT, b""
        t = self.request_timeout
        if t != self._armed:
            self._arm(t)
        t0 = time.monotonic()
        reply = self._reply
        sts = call(self._fd, self._cbuf, len(self._buf), *args, reply)
        if sts == 0:
            return None
        if sts == PCP_EXCHANGE_OTHER:
            return reply.type, self._mv[:reply.length].tobytes()
        if sts == PCP_EXCHANGE_UNSENT:
            return PCP_EXCHANGE_UNSENT, b""
        if sts < 0 and reply.length == reply.received > 0:
            raise pmErr(sts)            # one whole reply of the type expected: undecodable
        return self._exchange_rest(sts, t, t0)

    def reply(self) -> bytes:
        """The reply ask() decoded, copied: its decoded offsets point into it (slicing
        bytes costs less than slicing the buffer's memoryview, name by name)."""
        return self._mv[:self._reply.length].tobytes()

    def _exchange_rest(self, sts: int, t: float, t0: float) -> Tuple[int, bytes]:
        """After a C round trip that did not end with one whole PDU: its error, or the
        general receive path going on from the bytes it received."""
        if sts < 0:
            self._discard()
            raise pmErr(sts)
        received = self._reply.received
        if received == 0:
            return self.recv_pdu()      # an interrupted recv: Python's signal handlers first
        self._start, self._end = 0, received
        return self._recv_rest(t, t0)

    def close(self) -> None:
        self._fd = -1
        sock, self._sock = self._sock, None
        if self._selector is not None:
            try:
                self._selector.close()
            except Exception:   # noqa: BLE001 - closing must not raise
                pass
            self._selector = None
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass
        self._start = self._end = 0

    @property
    def closed(self) -> bool:
        return self._sock is None

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        where = self.host if self.port is None else "%s:%d" % (self.host, self.port)
        return "<Connection %s features=0x%x%s%s>" % (where, self.features,
                                                      " tls" if self.secure else "",
                                                      " closed" if self._sock is None else "")

    # -- receive internals -------------------------------------------------------------

    def _recv_first(self, view: memoryview) -> int:
        """One blocking recv bounded by the armed socket timeout."""
        sock = self._sock
        if sock is None:
            raise pmErr(PM_ERR_IPC)
        try:
            n = sock.recv_into(view)
        except (BlockingIOError, _socket.timeout):
            self._discard()
            raise pmErr(PM_ERR_TIMEOUT) from None
        except OSError:
            self._discard()
            raise pmErr(PM_ERR_IPC) from None
        if n == 0:
            self._discard()
            raise pmErr(PM_ERR_IPC)
        return n

    def _recv_more(self, view: memoryview, deadline: Optional[float]) -> int:
        """A recv after the first one: wait for data within what is left of the deadline."""
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if self.secure and remaining > 0 and self._sock.pending():
                return self._recv_first(view)   # decrypted bytes the kernel cannot see
            if remaining <= 0 or not self._wait_readable(remaining):
                self._discard()
                raise pmErr(PM_ERR_TIMEOUT)
        return self._recv_first(view)

    def _wait_readable(self, remaining: float) -> bool:
        sel = self._selector
        if sel is None:
            import selectors  # pylint: disable=import-outside-toplevel

            sel = self._selector = selectors.DefaultSelector()
            sel.register(self._sock, selectors.EVENT_READ)
        return bool(sel.select(remaining))

    def _discard(self) -> None:
        # After a failed read the stream position is unknown: drop any partial PDU.
        self._start = self._end = 0

    def _recv_rest(self, t: float, t0: float) -> Tuple[int, bytes]:
        deadline = t0 + t if t > 0 else None
        buf = self._buf
        # The header first.
        while self._end - self._start < PDU_HEADER_LEN:
            self._compact_for(PDU_HEADER_LEN)
            self._end += self._recv_more(self._mv[self._end:], deadline)
        start = self._start
        plen, ptype = _HDR.unpack_from(buf, start)
        if plen < PDU_HEADER_LEN or plen > PDU_MAX_LEN or ptype < 0:
            self._discard()
            raise pmErr(PM_ERR_IPC)
        have = self._end - start
        if have >= plen:
            pdu = self._mv[start:start + plen].tobytes()
            self._start = start + plen
            if self._start == self._end:
                self._start = self._end = 0
            return ptype, pdu
        if plen <= len(buf):
            self._compact_for(plen)
            while self._end - self._start < plen:
                self._end += self._recv_more(self._mv[self._end:], deadline)
            start = self._start
            pdu = self._mv[start:start + plen].tobytes()
            self._start = start + plen
            if self._start == self._end:
                self._start = self._end = 0
            return ptype, pdu
        # A PDU bigger than the shared buffer: its own buffer, grown as data arrives so
        # that a bogus huge length costs nothing until the bytes really come.
        big = bytearray(min(plen, max(_BIG_FIRST_CHUNK, 2 * have)))
        big[:have] = self._mv[start:self._end]
        self._start = self._end = 0
        got = have
        while got < plen:
            if got == len(big):
                big.extend(bytes(min(plen, 2 * len(big)) - len(big)))
            got += self._recv_more(memoryview(big)[got:], deadline)
        return ptype, bytes(big)

    def _compact_for(self, need: int) -> None:
        """Make room so that need bytes from _start fit in the shared buffer."""
        start = self._start
        if start and start + need > len(self._buf):
            have = self._end - start
            self._mv[:have] = self._mv[start:self._end]
            self._start, self._end = 0, have


def _timeval(seconds: float) -> bytes:
    sec = int(seconds)
    usec = int(round((seconds - sec) * 1e6))
    if usec >= 1000000:
        sec, usec = sec + 1, usec - 1000000
    if seconds > 0 and sec == 0 and usec == 0:
        usec = 1    # a tiny positive timeout must not become "forever"
    return _TIMEVAL.pack(sec, usec)


# ---- socket connects --------------------------------------------------------------

def _tune_tcp(sock: _socket.socket) -> None:
    try:
        # Abortive close like libpcp: no lingering on close.
        sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:
        sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
    except OSError:
        pass


def _tcp_connect(addrs: List[tuple], port: int, timeout: float) -> _socket.socket:
    """Connect to all addresses at once; the first to complete wins (libpcp does the same
    within one connect timeout). Raises pmErr(-errno)."""
    pending: Dict[_socket.socket, None] = {}
    last_err = errno.ECONNREFUSED
    winner: Optional[_socket.socket] = None
    import selectors  # pylint: disable=import-outside-toplevel

    sel = selectors.DefaultSelector()
    try:
        for family, socktype, proto, _canon, sockaddr in addrs:
            try:
                s = _socket.socket(family, socktype, proto)
            except OSError as e:
                last_err = e.errno or last_err
                continue
            s.setblocking(False)
            target = (sockaddr[0], port & 0xFFFF) + tuple(sockaddr[2:])
            try:
                err = s.connect_ex(target)
            except OSError as e:
                err = e.errno or errno.ECONNREFUSED
            if err == 0:
                winner = s
                break
            if err in (errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EAGAIN, errno.EALREADY):
                pending[s] = None
                sel.register(s, selectors.EVENT_WRITE)
            else:
                last_err = err
                s.close()
        deadline = time.monotonic() + timeout if timeout > 0 else None
        while winner is None and pending:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                last_err = errno.ETIMEDOUT
                break
            ready = sel.select(wait)
            if not ready:
                last_err = errno.ETIMEDOUT
                break
            for key, _ev in ready:
                s = key.fileobj
                err = s.getsockopt(_socket.SOL_SOCKET, _socket.SO_ERROR)
                sel.unregister(s)
                del pending[s]
                if err == 0 and winner is None:
                    winner = s
                else:
                    if err:
                        last_err = err
                    s.close()
    finally:
        for s in pending:
            if s is not winner:
                s.close()
        sel.close()
    if winner is None:
        raise pmErr(-last_err)
    winner.setblocking(True)
    _tune_tcp(winner)
    return winner


def _resolve(host: str) -> List[tuple]:
    if not host:
        raise pmErr(-errno.EHOSTUNREACH)
    try:
        return _socket.getaddrinfo(host, None, _socket.AF_UNSPEC, _socket.SOCK_STREAM, 0,
                                  getattr(_socket, "AI_ADDRCONFIG", 0))
    except (OSError, UnicodeError):
        # libpcp reports any resolver failure as "No route to host".
        raise pmErr(-errno.EHOSTUNREACH) from None


def _unix_connect(path: str, timeout: float) -> _socket.socket:
    if not hasattr(_socket, "AF_UNIX"):
        raise pmErr(-errno.ECONNREFUSED)
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.settimeout(timeout if timeout > 0 else None)
        s.connect(path)
    except _socket.timeout:
        s.close()
        raise pmErr(-errno.ETIMEDOUT) from None
    except (OSError, ValueError, UnicodeError) as e:
        s.close()
        code = getattr(e, "errno", None) or errno.ECONNREFUSED
        if code == errno.ENOENT:
            code = errno.ECONNREFUSED
        raise pmErr(-code) from None
    s.settimeout(None)
    try:
        s.setsockopt(_socket.SOL_SOCKET, _socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    return s


# ---- handshake ----------------------------------------------------------------------

class _Wanted:
    """What the context asks of the connection (flags and attributes)."""

    __slots__ = ("flags", "container", "username", "password", "method", "realm", "unixsock")

    def __init__(self, spec: HostSpec, ctx_flags: int) -> None:
        attrs = spec.attributes
        flags = ctx_flags
        secure: Optional[str] = None
        if attrs.get("protocol") == "pcps":
            secure = attrs["secure"] if "secure" in attrs else "enforce"
        if secure is None:
            secure = os.environ.get("PCP_SECURE_SOCKETS")
        if secure is not None:
            if secure in ("", "1", "enforce"):
                flags |= PM_CTXFLAG_SECURE
            elif secure == "relaxed":
                flags |= PM_CTXFLAG_RELAXED
        if "compress" in attrs:
            flags |= PM_CTXFLAG_COMPRESS
        if any(k in attrs for k in ("userauth", "username", "password", "method", "realm")):
            flags |= PM_CTXFLAG_AUTH
        self.container: Optional[str] = None
        if "container" in attrs:
            flags |= PM_CTXFLAG_CONTAINER
            self.container = attrs["container"]
        elif os.environ.get("PCP_CONTAINER") is not None:
            flags |= PM_CTXFLAG_CONTAINER
            self.container = os.environ["PCP_CONTAINER"]
        self.flags = flags
        self.username = attrs.get("username")
        self.password = attrs.get("password")
        self.method = attrs.get("method")
        self.realm = attrs.get("realm")
        # libpcp's peer-credentials shortcut looks for the unix: attribute only
        self.unixsock = "unixsock" in attrs

    def __repr__(self) -> str:
        return "<_Wanted flags=0x%x user=%r>" % (self.flags, self.username)


def _is_local(spec: HostSpec, hostname: str) -> bool:
    return ("unixsock" in spec.attributes or "local" in spec.attributes
            or "localhost" in hostname)


def _pdu_flags(want: _Wanted, features: int, local: bool) -> int:
    """CREDS flags from the greeting's features, or pmErr: libpcp's check_feature_flags."""
    ctx = want.flags
    flags = 0
    if features & FEATURE_CREDS_REQD:
        flags |= FEATURE_CREDS_REQD
    if (features & FEATURE_CERT_REQD) and not local:
        flags |= FEATURE_CERT_REQD
        if not ctx & PM_CTXFLAG_SECURE:
            raise pmErr(PM_ERR_NEEDCLIENTCERT)
    if ctx & (PM_CTXFLAG_SECURE | PM_CTXFLAG_RELAXED):
        if features & FEATURE_SECURE:
            flags |= FEATURE_SECURE
            if features & FEATURE_SECURE_ACK:
                flags |= FEATURE_SECURE_ACK
        elif ctx & PM_CTXFLAG_SECURE:
            raise pmErr(-errno.EOPNOTSUPP)
        # relaxed: carry on in clear text
    if ctx & PM_CTXFLAG_COMPRESS:
        raise pmErr(-errno.EOPNOTSUPP)
    if ctx & PM_CTXFLAG_AUTH:
        if not features & FEATURE_AUTH:
            raise pmErr(-errno.EOPNOTSUPP)
        flags |= FEATURE_AUTH
    if ctx & PM_CTXFLAG_CONTAINER:
        if not features & FEATURE_CONTAINER:
            raise pmErr(-errno.EOPNOTSUPP)
        flags |= FEATURE_CONTAINER
    return flags


def _encode_creds(flags: int) -> bytes:
    buf = ffi.new("uint8_t[]", 32)
    n = lib.pcp_pdu_encode_creds(buf, 32, os.getpid(), flags)
    if n < 0:
        raise pmErr(n)
    return bytes(ffi.buffer(buf, n))


def _encode_attr(attr: int, value: bytes) -> bytes:
    need = lib.pcp_pdu_encode_attr(ffi.NULL, 0, 0, attr, value, len(value))
    if need < 0:
        raise pmErr(need)
    buf = ffi.new("uint8_t[]", need)
    n = lib.pcp_pdu_encode_attr(buf, need, 0, attr, value, len(value))
    if n < 0:
        raise pmErr(n)
    return bytes(ffi.buffer(buf, n))


def _error_code(pdu: bytes) -> Tuple[int, int]:
    """(code, datum) of an ERROR PDU, PM_ERR_IPC if it is not one."""
    code = ffi.new("int32_t *")
    datum = ffi.new("uint32_t *")
    sts = lib.pcp_pdu_decode_error(ffi.from_buffer(pdu), len(pdu), code, datum)
    if sts < 0:
        raise pmErr(PM_ERR_IPC)
    return code[0], datum[0]


def _handshake(conn: Connection, want: _Wanted, hostname: str) -> None:
    try:
        ptype, pdu = conn.recv_pdu()
    except pmErr as e:
        raise pmErr(PM_ERR_TIMEOUT if e.args[0] == PM_ERR_TIMEOUT else PM_ERR_IPC) from None
    if ptype != PDU_ERROR or len(pdu) not in (16, 20):
        raise pmErr(PM_ERR_IPC)
    code, datum = _error_code(pdu)
    if len(pdu) != 20:
        raise pmErr(PM_ERR_IPC)         # a plain 16-byte ERROR is a PCP 1.x server
    if code < 0:
        # The greeting alone carries PCP 1.x error numbers.
        raise pmErr(code - 11345 if code <= -1000 else code)
    features = datum & 0xFFFF
    conn.features = features
    flags = _pdu_flags(want, features, _is_local(conn.spec, hostname))
    conn.send(_encode_creds(flags))
    if flags:
        _secure_handshake(conn, want, flags, hostname)
    if flags & FEATURE_CONTAINER:
        if want.container is None:
            raise pmErr(-errno.ESRCH)   # "?container" without a name, as libpcp
        conn.send(_encode_attr(ATTR_CONTAINER, want.container.encode("utf-8", "surrogateescape")))


def _secure_handshake(conn: Connection, want: _Wanted, flags: int, hostname: str) -> None:
    """libpcp's __pmSecureClientHandshake: the secure ack, TLS, then SASL."""
    if flags & FEATURE_SECURE_ACK:
        ptype, pdu = conn.recv_pdu()
        if ptype != PDU_ERROR:
            raise pmErr(PM_ERR_IPC)
        status, _ = _error_code(pdu)
        if status < 0:
            raise pmErr(status)
    if flags & FEATURE_CREDS_REQD:
        if want.unixsock:
            return              # pmcd has the peer's credentials from the socket
        flags |= FEATURE_AUTH   # libpcp forces SASL whatever the user asked
    # cyrus-sasl and TLS get the local host's name for a socket path or "local..." name
    name = hostname
    if not name or name.startswith("/") or name.startswith("local"):
        name = _socket.gethostname()
    if flags & FEATURE_SECURE:
        conn.start_tls(hostname)
    if flags & FEATURE_AUTH:
        _authenticate(conn, want, name)


def _authenticate(conn: Connection, want: _Wanted, host: str) -> None:
    from pcp._live import sasl
    creds = sasl.Credentials(want.username, want.password, want.realm)
    want.password = None
    try:
        sasl.authenticate(conn.send, conn.recv_pdu,
                          lambda payload: _encode_attr(ATTR_SASL, payload),
                          lambda pdu: _error_code(pdu)[0], creds, want.method, host)
    finally:
        creds.forget()


def _negotiate_proxy(sock: _socket.socket, host: str, port: int, timeout: float) -> None:
    try:
        sock.settimeout(timeout if timeout > 0 else None)
        sock.sendall(b"pmproxy-client 1\n")
        line = bytearray()
        while len(line) < 1024:
            ch = sock.recv(1)
            if not ch or ch in b"\r\n":
                break
            line += ch
        if bytes(line) != b"pmproxy-server 1":
            raise pmErr(PM_ERR_IPC)
        sock.sendall(("%s %d\n" % (host, port)).encode("utf-8", "surrogateescape"))
    except (OSError, _socket.timeout):
        raise pmErr(PM_ERR_IPC) from None
    finally:
        try:
            sock.settimeout(None)
        except OSError:
            pass


def _establish(sock: _socket.socket, spec: HostSpec, want: _Wanted, is_unix: bool,
               host: str, port: Optional[int], rtimeout: float, namecheck: str) -> Connection:
    # A request timeout that is not a number of seconds (inf, nan) fails every request as
    # libpcp's select does, with PM_ERR_IPC; the greeting still gets the default wait,
    # which is what libpcp's first handshake waits before it has read the variable.
    finite = math.isfinite(rtimeout)
    conn = Connection(sock, spec, is_unix, host, port,
                      rtimeout if finite else DEFAULT_REQUEST_TIMEOUT)
    try:
        _handshake(conn, want, namecheck)
    except BaseException:
        conn.close()
        raise
    if "password" in spec.attributes:
        # the connection keeps no password once it is authenticated
        attrs = {k: v for k, v in spec.attributes.items() if k != "password"}
        conn.spec = spec.replace(spec=redact_hostspec(spec.spec), attributes=attrs)
    if not finite:
        conn.request_timeout = rtimeout
    return conn


def connect(spec: Union[str, HostSpec], ctx_flags: int = 0, ctimeout: Optional[float] = None,
            rtimeout: Optional[float] = None) -> Connection:
    """Connect to pmcd as libpcp's __pmConnectPMCD does (protocol.md 8.5) and handshake.

    spec: a host specification string or a parsed HostSpec. ctx_flags: PM_CTXFLAG_*
    bits from pmNewContext's type. Re-runnable with the same spec (reconnect).
    ctimeout / rtimeout: connect and request timeouts in seconds (default: from
    PMCD_CONNECT_TIMEOUT and PMCD_REQUEST_TIMEOUT, as libpcp).
    Raises pmErr with libpcp's code on failure.
    """
    hs = spec if isinstance(spec, HostSpec) else parse_hostspec(spec)
    want = _Wanted(hs, ctx_flags)
    if ctimeout is None:
        ctimeout = connect_timeout()
    if rtimeout is None:
        rtimeout = request_timeout()
        if math.isfinite(rtimeout):
            # libpcp 6.0.3 waits for a reply in whole seconds of it: 1.9 waits 1 s, and
            # under a second (like 0) no bound at all
            rtimeout = float(int(rtimeout))
    if not math.isfinite(ctimeout):
        raise pmErr(-errno.EINVAL)      # libpcp's select refuses such a wait
    if int(ctimeout * 1000000) == 0:
        ctimeout = 0.0      # less than a microsecond is a zero timeval: libpcp waits forever

    if hs.unix_path is not None:
        try:
            sock = _unix_connect(hs.unix_path, ctimeout)
        except pmErr as e:
            if hs.is_unix:
                # libpcp reports any failure of a unix: connection as -ENOENT.
                raise pmErr(-errno.ENOENT) from None
            err: Optional[pmErr] = e
        else:
            try:
                return _establish(sock, hs, want, True, hs.unix_path, None, rtimeout,
                                  hs.unix_path)
            except pmErr as e:
                if hs.is_unix:
                    # libpcp ends a failed unix: handshake as a failed connect: -ENOENT
                    raise pmErr(-errno.ENOENT) from None
                err = e
        # local: falls back to TCP on localhost with the default port list.
        _debug("local socket %s failed (%s); trying localhost", hs.unix_path, err)
        return _connect_tcp_ports(hs, want, "localhost", pmcd_ports(), ctimeout, rtimeout)

    pmcd = hs.hosts[0]
    ports = pmcd.ports or pmcd_ports()
    proxy: Optional[Tuple[str, int]] = None
    if len(hs.hosts) > 1:
        p = hs.hosts[1]
        proxy = (p.name, p.ports[0] if p.ports else PROXY_PORT)
    else:
        proxy = _proxy_from_env()
    if proxy is None:
        return _connect_tcp_ports(hs, want, pmcd.name, ports, ctimeout, rtimeout)

    pname, pport = proxy
    addrs = _resolve(pname)
    last: Optional[pmErr] = None
    for port in ports:
        # A new proxy connection per pmcd port; a proxy that cannot be reached ends it.
        sock = _tcp_connect(addrs, pport, ctimeout)
        try:
            _negotiate_proxy(sock, pmcd.name, port, rtimeout)
            return _establish(sock, hs, want, False, pmcd.name, port, rtimeout, pname)
        except pmErr as e:
            sock.close()
            last = e
    raise last if last is not None else pmErr(-errno.ECONNREFUSED)


def _connect_tcp_ports(hs: HostSpec, want: _Wanted, name: str, ports: List[int],
                       ctimeout: float, rtimeout: float) -> Connection:
    last: Optional[pmErr] = None
    addrs: Optional[List[tuple]] = None
    for port in ports:
        try:
            if addrs is None:
                addrs = _resolve(name)
            sock = _tcp_connect(addrs, port, ctimeout)
            return _establish(sock, hs, want, False, name, port, rtimeout, name)
        except pmErr as e:
            last = e
    raise last if last is not None else pmErr(-errno.ECONNREFUSED)
