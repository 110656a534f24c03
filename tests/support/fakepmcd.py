"""A scripted, hostile fake pmcd for client robustness tests.

``FakePmcd`` listens on 127.0.0.1 (ephemeral port) in a daemon thread, accepts any
number of connections (each served by its own thread), greets each one like pmcd
(20-byte extended ERROR, features 0x0e44 unless told otherwise), reads the client's
CREDS, then answers every client PDU from a *script*:

    FakePmcd(scripts=[{PDU_DESC_REQ: [truncated(desc(...), 20)]}])

``scripts`` is a list with one dict per accepted connection (in accept order;
connections beyond the list get healthy answers).  A dict maps a request PDU type
(or ``FETCH_ANY`` for FETCH and HIGHRES_FETCH alike) to a list of actions consumed
one per request of that type; when the list is used up, or the type is not in the
dict, the server answers like a healthy pmcd (``healthy_reply``).  An action is:

* ``bytes``/``bytearray`` - sent as is;
* ``None`` - the healthy reply;
* a callable ``action(req)`` (``req`` is a ``Request``: ``.sock``, ``.type``,
  ``.pdu``, ``.server``) that may send things itself and may return bytes to send;
  raising ``Hangup`` closes the connection;
* a list/tuple of actions - performed in order.

Ready-made actions: ``NO_REPLY`` (never answer), ``CLOSE`` (close the connection),
``then_close(data)``, ``dribble(data, chunk, delay)``, ``pause(seconds)``,
``healthy`` (the healthy reply).

The server stops by itself after ``lifetime`` seconds (default 30) and on
``close()``/``__exit__``; every socket it owns is closed then.  PDU builders for
every pmcd reply are provided (``error``, ``result``, ``desc``, ``descs``, ...);
they return ``bytearray`` so that tests can patch fields in place.
"""
from __future__ import annotations

import socket
import struct
import threading
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

# ---- constants (protocol.md 2.4, 12): the package's own tables, checked against libpcp's
# headers by tests/core/test_sourcecode.py; only what pcp-native never sends is here.
from pcp._core.constants import (PM_ID_NULL, PM_INDOM_NULL, PM_SEM_INSTANT,  # noqa: E402,F401
                                 PM_TYPE_STRING, PM_TYPE_U32, PM_VAL_DPTR, PM_VAL_INSITU)
from pcp._core.wire import *  # noqa: E402,F401,F403  (the PDU types)

PDU_UNKNOWN = 0x7099          # no such PDU type

FETCH_ANY = "fetch"           # script key matching FETCH and HIGHRES_FETCH

FEATURES_DEFAULT = 0x0E44     # DESCS|HIGHRES|LABELS|CONTAINER|AUTH, as pmcd 6.0.3
PM_IN_NULL = -1               # as the int32 on the wire

SAMPLE_DOMAIN = 29


def pmid_build(domain: int, cluster: int, item: int) -> int:
    return ((domain & 0x1FF) << 22) | ((cluster & 0xFFF) << 10) | (item & 0x3FF)


def indom_build(domain: int, serial: int) -> int:
    return ((domain & 0x1FF) << 22) | (serial & 0x3FFFFF)


# ---- PDU builders ----------------------------------------------------------------------


def _pad4(data: bytes, fill: bytes = b"~") -> bytes:
    return data + fill * ((-len(data)) % 4)


def pdu(ptype: int, payload: bytes = b"", length: Optional[int] = None) -> bytearray:
    """A PDU: header (len, type, from=0) + payload.  ``length`` overrides the len field."""
    total = 12 + len(payload)
    return bytearray(struct.pack(">iiI", total if length is None else length, ptype, 0) + payload)


def greeting(code: int = 0, features: int = FEATURES_DEFAULT) -> bytearray:
    info = 0 if code < 0 else (0x02010000 | (features & 0xFFFF))
    return pdu(PDU_ERROR, struct.pack(">iI", code, info))


def error(code: int) -> bytearray:
    return pdu(PDU_ERROR, struct.pack(">i", code))


# A value: an int (INSITU) or (vtype, payload bytes) (DPTR).
Value = Union[int, Tuple[int, bytes]]
# A value set: (pmid, [(inst, value), ...]) or (pmid, numval_error_code_or_0).
VSet = Tuple[int, Union[int, Sequence[Tuple[int, Value]]]]


def result(vsets: Sequence[VSet], highres: bool = False, sec: int = 1700000000,
           subsec: int = 123456) -> bytearray:
    """RESULT (subsec = usec) or HIGHRES_RESULT (subsec = nsec), strict block layout."""
    fixed = 32 if highres else 24
    sets = bytearray()
    blocks = bytearray()
    pending: List[Tuple[int, bytes]] = []   # (position of the offset word in sets, block)
    for pmid, vals in vsets:
        if isinstance(vals, int):
            sets += struct.pack(">Ii", pmid, vals)
            continue
        dptr = any(not isinstance(v, int) for _, v in vals)
        sets += struct.pack(">Iii", pmid, len(vals), PM_VAL_DPTR if dptr else PM_VAL_INSITU)
        for inst, v in vals:
            if isinstance(v, int):
                sets += struct.pack(">ii", inst, v)
            else:
                vtype, payload = v
                block = struct.pack(">I", ((vtype & 0xFF) << 24) | (4 + len(payload))) + payload
                pending.append((len(sets) + 4, _pad4(block, b"\0")))
                sets += struct.pack(">ii", inst, 0)
    pos = fixed + len(sets)           # fixed part includes the 12-byte header
    for where, block in pending:
        struct.pack_into(">i", sets, where, pos // 4)
        blocks += block
        pos += len(block)
    if highres:
        head = struct.pack(">iqq", len(vsets), sec, subsec)
    else:
        head = struct.pack(">iii", sec, subsec, len(vsets))
    return pdu(PDU_HIGHRES_RESULT if highres else PDU_RESULT, head + bytes(sets) + bytes(blocks))


def desc_body(pmid: int, type_: int = PM_TYPE_U32, indom: int = PM_INDOM_NULL,
              sem: int = PM_SEM_INSTANT, units: int = 0) -> bytes:
    return struct.pack(">IiIiI", pmid, type_, indom, sem, units)


def desc(pmid: int, **kw) -> bytearray:
    return pdu(PDU_DESC, desc_body(pmid, **kw))


def descs(pmids: Sequence[int]) -> bytearray:
    return pdu(PDU_DESCS, struct.pack(">i", len(pmids)) + b"".join(desc_body(p) for p in pmids))


def pmns_ids(pmids: Sequence[int], sts: Optional[int] = None) -> bytearray:
    if sts is None:
        sts = sum(1 for p in pmids if p != PM_ID_NULL)
    return pdu(PDU_PMNS_IDS, struct.pack(">ii", sts, len(pmids)) +
               b"".join(struct.pack(">I", p) for p in pmids))


def pmns_names(names: Sequence[bytes], status: Optional[Sequence[int]] = None) -> bytearray:
    body = bytearray()
    for i, n in enumerate(names):
        if status is not None:
            body += struct.pack(">i", status[i])
        body += struct.pack(">i", len(n)) + _pad4(n)
    nstr = sum(len(n) + 1 for n in names)
    head = struct.pack(">iii", nstr, len(names) if status is not None else 0, len(names))
    return pdu(PDU_PMNS_NAMES, head + bytes(body))


def instance(indom: int, insts: Sequence[Tuple[int, bytes]]) -> bytearray:
    body = struct.pack(">Ii", indom, len(insts))
    for inst, name in insts:
        body += struct.pack(">ii", inst, len(name)) + _pad4(name, b"\0")
    return pdu(PDU_INSTANCE, body)


def text(ident: int, data: bytes) -> bytearray:
    return pdu(PDU_TEXT, struct.pack(">Ii", ident, len(data)) + _pad4(data, b"\0"))


def label(ident: int, type_: int, sets: Sequence[Tuple[int, Dict[str, str]]]) -> bytearray:
    """LABEL with one set per (inst, {name: json-value-text}); flags = type_."""
    nsets = len(sets)
    head_len = 12 + 16 + sum(16 + 8 * len(d) for _, d in sets)
    headers = bytearray()
    jsons = bytearray()
    for inst, d in sets:
        js = "{"
        labels = []
        for name in sorted(d):
            if len(js) > 1:
                js += ","
            noff = len(js) + 1
            js += '"%s":' % name
            voff = len(js)
            js += d[name]
            labels.append((noff, len(name), type_ & 0xFF, voff, len(d[name])))
        js += "}"
        raw = js.encode() if d else b""
        headers += struct.pack(">iiii", inst, len(d), head_len + len(jsons), len(raw))
        for noff, nlen, fl, voff, vlen in labels:
            headers += struct.pack(">HBBHH", noff, nlen, fl, voff, vlen)
        jsons += raw
    body = struct.pack(">iiii", ident, type_, 0, nsets) + bytes(headers) + bytes(jsons)
    return pdu(PDU_LABEL, body)


# ---- parsing client requests -------------------------------------------------------------


def request_pmids(req_pdu: bytes) -> List[int]:
    """The PMIDs of a FETCH/HIGHRES_FETCH/DESC_IDS/DESC_REQ/PMNS_IDS request."""
    ptype = struct.unpack_from(">i", req_pdu, 4)[0]
    if ptype in (PDU_FETCH, PDU_HIGHRES_FETCH):
        n = struct.unpack_from(">i", req_pdu, 24)[0]
        return list(struct.unpack_from(">%dI" % n, req_pdu, 28))
    if ptype in (PDU_DESC_IDS, PDU_PMNS_IDS):
        n = struct.unpack_from(">i", req_pdu, 16)[0]
        return list(struct.unpack_from(">%dI" % n, req_pdu, 20))
    if ptype == PDU_DESC_REQ:
        return [struct.unpack_from(">I", req_pdu, 12)[0]]
    return []


def request_names(req_pdu: bytes) -> List[bytes]:
    """The names of a PMNS_NAMES request (numstatus 0)."""
    n = struct.unpack_from(">i", req_pdu, 20)[0]
    pos, names = 24, []
    for _ in range(n):
        ln = struct.unpack_from(">i", req_pdu, pos)[0]
        names.append(bytes(req_pdu[pos + 4:pos + 4 + ln]))
        pos += 4 + ((ln + 3) & ~3)
    return names


def name_pmid(name: bytes) -> int:
    """The healthy server's PMNS: names starting with 'no.' do not exist; others map to
    29.0.<small hash>."""
    if name.startswith(b"no."):
        return PM_ID_NULL
    return pmid_build(SAMPLE_DOMAIN, 0, 1 + sum(name) % 1000)


HEALTHY_VALUE = 42
HEALTHY_TEXT = b"a healthy one-line help text"
HEALTHY_INDOM_INSTS = [(0, b"red"), (1, b"green"), (2, b"blue")]
HEALTHY_CHILDREN = [b"alpha", b"beta"]
HEALTHY_LEAVES = [b"fake.alpha", b"fake.beta.gamma"]
HEALTHY_CONTEXT_LABELS = {"hostname": '"fakehost"'}


def healthy_reply(ptype: int, req_pdu: bytes) -> Optional[bytes]:
    """What a well-behaved pmcd answers (None: no reply, e.g. for PROFILE)."""
    if ptype in (PDU_FETCH, PDU_HIGHRES_FETCH):
        vsets = [(p, [(PM_IN_NULL, HEALTHY_VALUE)]) for p in request_pmids(req_pdu)]
        return result(vsets, highres=ptype == PDU_HIGHRES_FETCH)
    if ptype == PDU_DESC_REQ:
        return desc(request_pmids(req_pdu)[0])
    if ptype == PDU_DESC_IDS:
        return descs(request_pmids(req_pdu))
    if ptype == PDU_PMNS_NAMES:
        names = request_names(req_pdu)
        ids = [name_pmid(n) for n in names]
        if len(ids) == 1 and ids[0] == PM_ID_NULL:
            return error(-12357)                     # PM_ERR_NAME
        return pmns_ids(ids)
    if ptype == PDU_PMNS_IDS:
        return pmns_names([b"fake.alpha"])
    if ptype == PDU_PMNS_CHILD:
        subtype = struct.unpack_from(">i", req_pdu, 12)[0]
        return pmns_names(HEALTHY_CHILDREN, [0, 1] if subtype else None)
    if ptype == PDU_PMNS_TRAVERSE:
        return pmns_names(HEALTHY_LEAVES)
    if ptype == PDU_INSTANCE_REQ:
        indom, = struct.unpack_from(">I", req_pdu, 12)
        return instance(indom, HEALTHY_INDOM_INSTS)
    if ptype == PDU_TEXT_REQ:
        ident, = struct.unpack_from(">I", req_pdu, 12)
        return text(ident, HEALTHY_TEXT)
    if ptype == PDU_LABEL_REQ:
        ident, type_ = struct.unpack_from(">ii", req_pdu, 12)
        sets = [(PM_IN_NULL, HEALTHY_CONTEXT_LABELS)] if type_ == 1 else []
        return label(ident, type_, sets)
    if ptype == PDU_RESULT:                           # pmStore
        return error(0)
    if ptype in (PDU_PROFILE, PDU_ATTR, PDU_CREDS):
        return None
    return error(-12366)                             # PM_ERR_IPC, connection kept


# ---- actions -------------------------------------------------------------------------------


class Hangup(Exception):
    """Raised by an action to make the server close the connection."""


class Request:
    __slots__ = ("sock", "type", "pdu", "server", "conn_index")

    def __init__(self, sock, ptype, data, server, conn_index):
        self.sock = sock
        self.type = ptype
        self.pdu = data
        self.server = server
        self.conn_index = conn_index


Action = Union[None, bytes, bytearray, Callable[[Request], Optional[bytes]], list, tuple]


def healthy(req: Request) -> Optional[bytes]:
    return healthy_reply(req.type, req.pdu)


def NO_REPLY(req: Request) -> None:            # noqa: N802 - reads like a constant
    """Never answer: park until the server stops (the connection stays open)."""
    req.server._stop.wait(max(0.0, req.server.deadline - time.monotonic()))
    raise Hangup()


def CLOSE(req: Request) -> None:               # noqa: N802
    raise Hangup()


def then_close(data: bytes) -> Callable[[Request], None]:
    """Send data (typically a partial PDU), then close the connection."""
    def action(req: Request) -> None:
        req.sock.sendall(bytes(data))
        time.sleep(0.05)
        raise Hangup()
    return action


def then_stall(data: bytes) -> Callable[[Request], None]:
    """Send data (typically a partial PDU), then never send anything more."""
    def action(req: Request) -> None:
        req.sock.sendall(bytes(data))
        NO_REPLY(req)
    return action


def pause(seconds: float) -> Callable[[Request], None]:
    def action(req: Request) -> None:
        req.server._stop.wait(seconds)
    return action


def dribble(data: bytes, chunk: int = 1, delay: float = 0.02) -> Callable[[Request], None]:
    """Send data a few bytes at a time with a delay between the pieces."""
    data = bytes(data)

    def action(req: Request) -> None:
        for i in range(0, len(data), chunk):
            if req.server._stop.is_set():
                raise Hangup()
            req.sock.sendall(data[i:i + chunk])
            time.sleep(delay)
    return action


def reply_with(fn: Callable[[int, bytes], bytes]) -> Callable[[Request], bytes]:
    """An action computed from the request: fn(request type, request pdu) -> bytes."""
    def action(req: Request) -> bytes:
        return fn(req.type, req.pdu)
    return action


# ---- the server ------------------------------------------------------------------------------

Script = Dict[Union[int, str], List[Action]]


class FakePmcd:
    def __init__(self, scripts: Optional[Sequence[Script]] = None,
                 features: int = FEATURES_DEFAULT, greeting_pdu: Optional[bytes] = None,
                 lifetime: float = 30.0, port: int = 0) -> None:
        self.scripts = [{k: list(v) for k, v in s.items()} for s in (scripts or [])]
        self.features = features
        self.greeting_pdu = bytes(greeting_pdu) if greeting_pdu is not None else bytes(
            greeting(0, features))
        self.deadline = time.monotonic() + lifetime
        self.requests: List[Tuple[int, int, bytes]] = []   # (connection index, type, pdu)
        self.creds: List[bytes] = []
        self.errors: List[str] = []
        self.connections = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._socks: List[socket.socket] = []
        self._threads: List[threading.Thread] = []
        self._lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._lsock.bind(("127.0.0.1", port))
        self._lsock.listen(16)
        self._lsock.settimeout(0.05)
        self.port = self._lsock.getsockname()[1]
        self._thread = threading.Thread(target=self._accept_loop, daemon=True,
                                        name="fakepmcd-%d" % self.port)
        self._thread.start()

    @property
    def spec(self) -> str:
        return "127.0.0.1:%d" % self.port

    def request_types(self, conn_index: Optional[int] = None) -> List[int]:
        with self._lock:
            return [t for c, t, _ in self.requests if conn_index is None or c == conn_index]

    # -- lifetime --

    def _alive(self) -> bool:
        return not self._stop.is_set() and time.monotonic() < self.deadline

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        with self._lock:
            socks, self._socks = self._socks, []
            threads = list(self._threads)
        for s in socks:
            try:
                s.close()
            except OSError:
                pass
        for t in threads:
            t.join(5)

    def __enter__(self) -> "FakePmcd":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- serving --

    def _accept_loop(self) -> None:
        try:
            while self._alive():
                try:
                    sock, _ = self._lsock.accept()
                except socket.timeout:
                    continue
                except OSError:
                    break
                with self._lock:
                    index = self.connections
                    self.connections += 1
                    self._socks.append(sock)
                    t = threading.Thread(target=self._serve, args=(sock, index), daemon=True)
                    self._threads.append(t)
                t.start()
        finally:
            self._stop.set()
            try:
                self._lsock.close()
            except OSError:
                pass

    def _read_exact(self, sock: socket.socket, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            if not self._alive():
                raise Hangup()
            try:
                chunk = sock.recv(n - len(buf))
            except socket.timeout:
                continue
            if not chunk:
                raise Hangup()
            buf += chunk
        return bytes(buf)

    def _read_pdu(self, sock: socket.socket) -> Tuple[int, bytes]:
        head = self._read_exact(sock, 12)
        plen, ptype = struct.unpack_from(">ii", head, 0)
        if plen < 12 or plen > 1 << 20:
            raise Hangup()
        return ptype, head + self._read_exact(sock, plen - 12)

    def _next_action(self, script: Script, ptype: int) -> Action:
        for key in (ptype, FETCH_ANY if ptype in (PDU_FETCH, PDU_HIGHRES_FETCH) else None):
            if key is not None and script.get(key):
                return script[key].pop(0)
        return healthy

    def _perform(self, action: Action, req: Request) -> None:
        if action is None:
            action = healthy
        if isinstance(action, (list, tuple)):
            for a in action:
                self._perform(a, req)
            return
        if isinstance(action, (bytes, bytearray)):
            req.sock.sendall(bytes(action))
            return
        out = action(req)
        if out is not None:
            req.sock.sendall(bytes(out))

    def _serve(self, sock: socket.socket, index: int) -> None:
        script = self.scripts[index] if index < len(self.scripts) else {}
        try:
            sock.settimeout(0.05)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.sendall(self.greeting_pdu)
            ptype, creds = self._read_pdu(sock)
            with self._lock:
                self.creds.append(creds)
            if ptype != PDU_CREDS:
                raise Hangup()
            while self._alive():
                ptype, data = self._read_pdu(sock)
                with self._lock:
                    self.requests.append((index, ptype, data))
                self._perform(self._next_action(script, ptype), Request(sock, ptype, data, self, index))
        except (Hangup, ConnectionResetError, BrokenPipeError):
            pass            # scripted hang-up, or the client went away (abortive close)
        except OSError as e:            # the client went away: fine
            with self._lock:
                self.errors.append("conn %d: %r" % (index, e))
        except Exception as e:          # noqa: BLE001 - a bug in a script: report it
            with self._lock:
                self.errors.append("conn %d: %r" % (index, e))
        finally:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                sock.close()
            except OSError:
                pass
