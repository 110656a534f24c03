"""Host contexts: one pmcd connection, its instance profile, and every PMAPI request
as an encode -> send -> receive -> decode exchange over the C codec."""
from __future__ import annotations

import _socket  # not socket.py: its enums cost a tool's start 5 ms
import errno
import os
import threading
import time

from pcp._core import wire
from pcp._core.abc import locks_itself, serialized
from pcp._core.cint import wrap_int32
from pcp._core.constants import (PM_ERR_INDOM, PM_ERR_IPC, PM_ERR_MODE, PM_ERR_NAME,
                                 PM_ERR_NOLABELS, PM_ERR_NOTARCHIVE, PM_ERR_TIMEOUT,
                                 PM_ERR_TOOSMALL, PM_ERR_VALUE, PM_ID_NULL, PM_INDOM_NULL,
                                 PM_MODE_LIVE, PM_TEXT_DIRECT, PM_TEXT_HELP, PM_TEXT_INDOM,
                                 PM_TEXT_ONELINE, PM_TEXT_PMID, PMNS_REMOTE)
from pcp._core.errors import pmErr
from pcp._core.native import lib
from pcp._core.wire import (FEATURE_DESCS, FEATURE_HIGHRES, FEATURE_LABELS, PCP_EXCHANGE_UNSENT,
                            PM_IN_NULL_INT32)
from pcp._decode import pdu as codec
from pcp._decode.result import FlatResult, ResultSizes
from pcp._libpcp import anon as _anon
from pcp._libpcp.profile import Profile

TYPE_CHECKING = False      # typing's, without importing typing (the first host context)
if TYPE_CHECKING:
    from typing import Callable, List, Optional, Sequence, Tuple

    from pcp._core.abc import DescTuple

# libpcp cuts pmLookupName requests of 500+ names into PDUs of at most this size.
_NAMES_BATCH_THRESHOLD = 500
_NAMES_BATCH_BYTES = 64512


def _reconnect_backoff() -> List[float]:
    raw = os.environ.get("PMCD_RECONNECT_TIMEOUT", "")
    try:
        vals = [float(x) for x in raw.split(",") if x.strip()]
        if vals and all(v > 0 for v in vals):
            return vals
    except ValueError:
        pass
    return [5.0, 10.0, 20.0, 40.0, 80.0]


@serialized
class HostContext:
    """A PMAPI host context: connection, profile, and the request methods."""

    def __init__(self, handle: int, spec: str, ctx_flags: int = 0,
                 connector: Optional[Callable] = None) -> None:
        from pcp._live import transport as _transport

        self._lock = threading.RLock()
        self.handle = handle
        self.spec = spec
        self.ctx_flags = ctx_flags
        self._connector = connector or _transport.connect
        self.profile = Profile()
        self.conn = None
        self._backoff_index = 0
        self._retry_after = 0.0
        self._fetch_cache: Tuple[Optional[tuple], bytes, bool] = (None, b"", False)
        self._result_sizes = ResultSizes()      # the last fetch's, for the next one
        self._scratch = codec.Scratch()
        self.conn = self._connector(spec, ctx_flags)
        self._conn_host: Optional[str] = getattr(self.conn, "host", None)

    # ---- connection management ----------------------------------------------------

    pmns_location = PMNS_REMOTE
    # the codec's reused buffers (pcp._decode.pdu.Scratch), used under the context's
    # lock; None (a subclass that does not make them): made per call
    _scratch: Optional[codec.Scratch] = None

    @property
    def features(self) -> int:
        return self.conn.features if self.conn is not None else 0

    def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn.close()
            except OSError:
                pass

    def reconnect(self) -> int:
        now = time.monotonic()
        if self._retry_after and now < self._retry_after:
            raise pmErr(-errno.ETIMEDOUT)
        self.close()
        try:
            self.conn = self._connector(self.spec, self.ctx_flags)
        except pmErr:
            steps = _reconnect_backoff()
            self._retry_after = time.monotonic() + steps[min(self._backoff_index, len(steps) - 1)]
            self._backoff_index += 1
            raise pmErr(-errno.ETIMEDOUT)
        self._backoff_index = 0
        self._retry_after = 0.0
        self.profile.sent = False
        return self.handle

    def duplicate(self, handle: int) -> "HostContext":
        dup = HostContext(handle, self.spec, self.ctx_flags, self._connector)
        dup.profile = self.profile.copy()
        dup.profile.sent = False
        return dup

    def _live(self):
        if self.conn is None:
            raise pmErr(PM_ERR_IPC)
        return self.conn

    def _request(self, request: bytes, expect: int, decode: Callable, *extra):
        """_exchange, then decode(reply, *extra); a reply that does not decode means the
        stream can no longer be trusted, so the connection is closed as for PM_ERR_IPC."""
        return self._decoded(decode, self._exchange(request, expect), *extra)

    def _exchange(self, request: bytes, expect: int) -> bytes:
        """Send one request and read its reply PDU; an ERROR reply raises its code."""
        conn = self._live()
        try:
            ptype, pdu = conn.exchange(request)
        except pmErr as e:
            if e.code in (PM_ERR_IPC, PM_ERR_TIMEOUT):
                # A late reply may still be queued: the connection is no longer in step.
                self.close()
            raise
        return self._expect(ptype, pdu, expect)

    def _one_call(self, call, expect: int, *args) -> Optional[bytes]:
        """A metadata request in one C call (Connection.ask: `call`, one of
        csrc/exchange.c's pcp_exchange_*, encodes, sends, receives and decodes into its
        out-parameters): None when it did all that. Else the reply PDU of type `expect`
        for the Python decoder (an ERROR reply raises as _exchange's does), or b"" when
        nothing was sent (no plain socket to pmcd: a subclass's, TLS): the caller's
        general path then. The errors, and the connection closed on them, as _request."""
        conn = self.conn
        if conn is None:
            return b""          # _request's path: PM_ERR_IPC, or a subclass's own
        try:
            got = conn.ask(call, *args)
        except pmErr as e:
            if e.code in (PM_ERR_IPC, PM_ERR_TIMEOUT):
                self.close()
            raise
        if got is None:
            return None
        ptype, pdu = got
        if ptype == PCP_EXCHANGE_UNSENT and not pdu:
            return b""
        return self._expect(ptype, pdu, expect)

    def _decoded(self, decode: Callable, pdu: bytes, *extra):
        """decode(pdu, *extra), the connection closed when the reply does not decode."""
        try:
            return decode(pdu, *extra)
        except pmErr as e:
            if e.code == PM_ERR_IPC:
                self.close()
            raise

    def _expect(self, ptype: int, pdu: bytes, expect: int) -> bytes:
        """A reply PDU of type `expect`; an ERROR reply raises its code, any other closes
        the connection (out of step) with PM_ERR_IPC."""
        if ptype == expect:
            return pdu
        if ptype == wire.PDU_ERROR:
            try:
                code = codec.decode_error(pdu, self._scratch)
            except pmErr:
                self.close()
                raise
            if code < 0:
                raise pmErr(code)
        self.close()
        raise pmErr(PM_ERR_IPC)

    # ---- PMNS ------------------------------------------------------------------------

    @locks_itself
    def lookup_names(self, names: Sequence[bytes]) -> Tuple[int, List[int]]:
        """Returns (number resolved, pmids with PM_ID_NULL for failures)."""
        with self._lock:     # (locks_itself: a hot path)
            if len(names) < 1:
                raise pmErr(PM_ERR_TOOSMALL)
            # Anonymous metrics are libpcp's own: answer them here, send pmcd the rest.
            anon = _anon.ANON
            if anon.keys().isdisjoint(names):
                return self._lookup_remote(names)
            local = [anon[n][0] if n in anon else None for n in names]
            remote = [n for n, p in zip(names, local) if p is None]
            resolved, ids = self._lookup_remote(remote) if remote else (0, [])
            it = iter(ids)
            pmids = [p if p is not None else next(it) for p in local]
            return resolved + sum(1 for p in local if p is not None), pmids

    def _lookup_remote(self, names: Sequence[bytes]) -> Tuple[int, List[int]]:
        batches: List[Sequence[bytes]] = []
        if len(names) < _NAMES_BATCH_THRESHOLD:
            batches.append(names)
        else:
            start, size = 0, 24
            for i, n in enumerate(names):
                need = 4 + ((len(n) + 4) & ~3)
                if i > start and size + need > _NAMES_BATCH_BYTES:
                    batches.append(names[start:i])
                    start, size = i, 24
                size += need
            batches.append(names[start:])
        pmids: List[int] = []
        resolved = 0
        for batch in batches:
            scratch = self._scratch
            ids = self._lookup_one_call(batch, scratch) if scratch is not None else None
            if ids is None:
                sts, ids = self._request(codec.encode_pmns_names(self.handle, batch, scratch),
                                         wire.PDU_PMNS_IDS, codec.decode_pmns_ids, scratch)
            if len(ids) != len(batch):
                self.close()
                raise pmErr(PM_ERR_IPC)
            pmids.extend(ids)
            resolved += len(ids) - ids.count(PM_ID_NULL)
        return resolved, pmids

    def _lookup_one_call(self, names: Sequence[bytes], scratch: codec.Scratch) -> Optional[List[int]]:
        """The pmIDs of one batch of names through one C call (None: the general path's)."""
        n = len(names)
        if n == 1:
            lens = scratch.int_p[0]
            lens[0] = len(names[0])
        else:
            lens = scratch.array("lens", "int32_t[]", n)[0]
            lens[0:n] = [len(name) for name in names]
        ids, cap = scratch.array("ids", "uint32_t[]", n)[:2]
        pdu = self._one_call(lib.pcp_exchange_pmns_ids, wire.PDU_PMNS_IDS, self.handle, n,
                             b"".join(names) if n > 1 else names[0], lens, cap, ids,
                             scratch.int_p[1])
        if pdu is None:
            count = scratch.ints[1]
            return [ids[0]] if count == 1 else codec.unpack(ids, count)
        if not pdu:
            return None
        return self._decoded(codec.decode_pmns_ids, pdu, scratch)[1]

    def _names_one_call(self, call, scratch: codec.Scratch,
                        *args) -> Optional[Tuple[List[bytes], Optional[List[int]]]]:
        """A PMNS_NAMES reply (names, status or None) through one C call (None: the
        general path's)."""
        status, off, nlen, cap = scratch.names_arrays(64)
        pdu = self._one_call(call, wire.PDU_PMNS_NAMES, self.handle, *args, cap,
                             scratch.int_p[0], status, off, nlen, scratch.int_p[1])
        if pdu is None:
            pdu = self.conn.reply()
            count = scratch.ints[1]
            if count == 1:
                start = off[0]
                names = [pdu[start:start + nlen[0]]]
            else:
                names = codec.names_at(pdu, off, nlen, count)
            return names, (codec.unpack(status, count) if scratch.ints[0] else None)
        if not pdu:
            return None
        return self._decoded(codec.decode_pmns_names, pdu, scratch)

    @locks_itself
    def name_all(self, pmid: int) -> List[bytes]:
        with self._lock:     # (locks_itself: a hot path)
            if pmid in _anon.BY_PMID:
                return [_anon.BY_PMID[pmid]]
            scratch = self._scratch
            if scratch is not None:
                got = self._names_one_call(lib.pcp_exchange_name_all, scratch, pmid)
                if got is not None:
                    return got[0]
            req = codec.encode_ids(self.handle, wire.PDU_PMNS_IDS, 0, [pmid], scratch)
            names, _ = self._request(req, wire.PDU_PMNS_NAMES, codec.decode_pmns_names, scratch)
            return names

    @locks_itself
    def children(self, name: bytes, with_status: bool) -> Tuple[List[bytes], Optional[List[int]]]:
        with self._lock:     # (locks_itself: a hot path)
            extra = _anon.children(name)
            scratch = self._scratch
            try:
                got = None if scratch is None else self._names_one_call(
                    lib.pcp_exchange_children, scratch, 1 if with_status else 0, name, len(name))
                if got is None:
                    req = codec.encode_pmns_node(self.handle, wire.PDU_PMNS_CHILD,
                                                 1 if with_status else 0, name, scratch)
                    got = self._request(req, wire.PDU_PMNS_NAMES, codec.decode_pmns_names, scratch)
                names, status = got
            except pmErr as e:
                if e.code != PM_ERR_NAME or not extra:
                    raise
                names, status = [], ([] if with_status else None)
            return _anon.stitch_children(names, status, extra, with_status)

    def traverse(self, name: bytes) -> List[bytes]:
        extra = _anon.leaves(name)
        req = codec.encode_pmns_node(self.handle, wire.PDU_PMNS_TRAVERSE, 0, name)
        try:
            names, _ = self._request(req, wire.PDU_PMNS_NAMES, codec.decode_pmns_names)
        except pmErr as e:
            if e.code != PM_ERR_NAME or not extra:
                raise
            names = []
        return names + [n for n in extra if n not in names]

    # ---- descriptors, instances, text ------------------------------------------------

    def desc(self, pmid: int) -> DescTuple:
        local = _anon.desc(pmid)
        if local is not None:
            return local
        scratch = self._scratch
        if scratch is not None:
            d = scratch.desc
            pdu = self._one_call(lib.pcp_exchange_desc, wire.PDU_DESC, self.handle, pmid, d)
            if pdu is None:
                return (d.pmid, d.type, d.indom, d.sem, d.units)
            if pdu:
                return self._decoded(codec.decode_desc, pdu, scratch)
        return self._request(codec.encode_desc_req(self.handle, pmid, scratch), wire.PDU_DESC,
                             codec.decode_desc, scratch)

    def descs(self, pmids: Sequence[int]) -> List[DescTuple]:
        """One descriptor per pmid; failed ones come back with pmid PM_ID_NULL."""
        if len(pmids) < 1:
            raise pmErr(PM_ERR_TOOSMALL)
        if self.features & FEATURE_DESCS:
            scratch = self._scratch
            req = codec.encode_ids(self.handle, wire.PDU_DESC_IDS, -1, pmids, scratch)
            descs = self._request(req, wire.PDU_DESCS, codec.decode_descs, len(pmids), scratch)
            return [_anon.desc(p) or d for p, d in zip(pmids, descs)]
        out = []
        for pmid in pmids:
            try:
                out.append(self.desc(pmid))
            except pmErr as e:
                if e.code in (PM_ERR_IPC, PM_ERR_TIMEOUT):
                    raise
                out.append((PM_ID_NULL, 0, 0, 0, 0))
        return out

    def instances(self, indom: int, inst: int = PM_IN_NULL_INT32, name: bytes = b"") -> Tuple[List[int], List[bytes]]:
        if indom == PM_INDOM_NULL:
            raise pmErr(PM_ERR_INDOM)
        inst = wrap_int32(int(inst))
        scratch = self._scratch
        if scratch is not None:
            got = self._instances_one_call(indom, inst, name, scratch)
            if got is not None:
                return got
        req = codec.encode_instance_req(self.handle, indom, inst, name)
        _, insts, names = self._request(req, wire.PDU_INSTANCE, codec.decode_instance)
        return insts, names

    @locks_itself
    def text(self, ident: int, level: int, indom: bool) -> bytes:
        with self._lock:     # (locks_itself: a hot path)
            if not indom:
                local = _anon.text(ident, bool(level & PM_TEXT_HELP))
                if local is not None:
                    return local
            kind = ((level & (PM_TEXT_ONELINE | PM_TEXT_HELP))
                    | (PM_TEXT_INDOM if indom else PM_TEXT_PMID))
            scratch = self._scratch
            try:
                text = None if scratch is None else self._text_one_call(ident, kind, scratch)
                if text is None:
                    req = codec.encode_text_req(self.handle, ident, kind, scratch)
                    text = self._request(req, wire.PDU_TEXT, codec.decode_text, scratch)
            except pmErr as e:
                if (not (level & PM_TEXT_HELP) or (level & PM_TEXT_DIRECT)
                        or e.code in (PM_ERR_IPC, PM_ERR_TIMEOUT)):
                    raise
                text = b""
            if text == b"" and (level & PM_TEXT_HELP) and not (level & PM_TEXT_DIRECT):
                # libpcp falls back to the one-line text when there is no help text.
                kind = PM_TEXT_ONELINE | (PM_TEXT_INDOM if indom else PM_TEXT_PMID)
                req = codec.encode_text_req(self.handle, ident, kind, scratch)
                text = self._request(req, wire.PDU_TEXT, codec.decode_text, scratch)
            return text

    def _instances_one_call(self, indom: int, inst: int, name: bytes,
                            scratch: codec.Scratch) -> Optional[Tuple[List[int], List[bytes]]]:
        """An INSTANCE reply's (instances, names) through one C call (None: the general
        path's). The arrays grow to the largest domain seen (a larger one is decoded by
        the general decoder once, then fits)."""
        insts, off, nlen, cap = scratch.instance_arrays(64)
        pdu = self._one_call(lib.pcp_exchange_instance, wire.PDU_INSTANCE, self.handle, indom,
                             inst, name, len(name), cap, insts, off, nlen, scratch.int_p[1])
        if pdu is not None:
            if not pdu:
                return None
            _, ids, names = self._decoded(codec.decode_instance, pdu, scratch)
            return ids, names
        count = scratch.ints[1]
        return codec.unpack(insts, count), codec.names_at(self.conn.reply(), off, nlen, count)

    def _text_one_call(self, ident: int, kind: int, scratch: codec.Scratch) -> Optional[bytes]:
        """A TEXT reply's text through one C call (None: the general path's)."""
        off, tlen = scratch.uint_p[0], scratch.int_p[0]
        pdu = self._one_call(lib.pcp_exchange_text, wire.PDU_TEXT, self.handle, ident, kind,
                             off, tlen)
        if pdu is None:
            start = off[0]
            return self.conn.reply()[start:start + tlen[0]]
        if not pdu:
            return None
        return self._decoded(codec.decode_text, pdu, scratch)

    # ---- fetch and store -------------------------------------------------------------

    @locks_itself
    def fetch(self, pmids: Sequence[int], highres: bool) -> Tuple[FlatResult, int]:
        """Returns the decoded result and the pmcd state-change mask (0 if none)."""
        with self._lock:
            conn = self.conn        # _live(), inline (a fetch loop's hot path)
            if conn is None:
                raise pmErr(PM_ERR_IPC)
            use_highres = bool(conn.features & FEATURE_HIGHRES)
            key = pmids if type(pmids) is tuple else tuple(pmids)
            cached_key, request, cached_hr = self._fetch_cache
            if cached_key != key or cached_hr != use_highres:
                if len(key) < 1:
                    raise pmErr(PM_ERR_TOOSMALL)
                request = codec.encode_fetch(self.handle, use_highres, wire.CTXID, key)
                self._fetch_cache = (key, request, use_highres)
            if not self.profile.sent:
                profile = self.profile.encode(self.handle)
                if conn.secure:
                    # One TLS record per PDU: pmcd reads one PDU per wakeup of its
                    # select(), which cannot see a second PDU already decrypted.
                    conn.send(profile)
                else:
                    request = profile + request
                self.profile.sent = True
            expect = wire.PDU_HIGHRES_RESULT if use_highres else wire.PDU_RESULT
            changes = 0
            try:
                # the usual reply, a RESULT in one piece, comes decoded (flat)
                ptype, pdu, flat = conn.exchange_result(request, use_highres, expect,
                                                        self._result_sizes)
                while ptype != expect:
                    if ptype != wire.PDU_ERROR:
                        raise pmErr(PM_ERR_IPC)
                    code = codec.decode_error(pdu, self._scratch)
                    if code < 0:
                        raise pmErr(code)
                    if code == 0:
                        # libpcp ends the fetch with success but no result; treat the
                        # stream as out of step instead of inventing an empty result.
                        raise pmErr(PM_ERR_IPC)
                    changes |= code
                    ptype, pdu = conn.recv_pdu()
            except pmErr as e:
                if e.code in (PM_ERR_IPC, PM_ERR_TIMEOUT):
                    self.close()
                raise
            if flat is None:
                try:
                    flat = FlatResult.from_pdu(pdu, use_highres, self._result_sizes)
                except pmErr:
                    self.close()
                    raise
                _anon.fix_client_side_sets(flat)
            return flat, changes

    def store(self, arrays: dict, sec: int, usec: int) -> int:
        if len(arrays["pmids"]) < 1:
            raise pmErr(PM_ERR_TOOSMALL)
        if any(nv < 1 for nv in arrays["numvals"]):
            raise pmErr(PM_ERR_VALUE)
        request = codec.encode_store(self.handle, sec, usec, arrays)
        code = self._request(request, wire.PDU_ERROR, codec.decode_error)
        if code < 0:
            raise pmErr(code)
        return code

    # ---- labels ----------------------------------------------------------------------

    @locks_itself
    def labels(self, ident: int, type_: int) -> List[codec.LabelSetData]:
        with self._lock:     # (locks_itself: pmLookupLabels asks four times)
            if not self.features & FEATURE_LABELS:
                raise pmErr(PM_ERR_NOLABELS)
            if type_ == 0x20 and not self.profile.sent:  # INSTANCES honours the profile
                self._live().send(self.profile.encode(self.handle))
                self.profile.sent = True
            ident = wrap_int32(int(ident))
            req = codec.encode_label_req(self.handle, ident, type_, self._scratch)
            rident, rtype, sets = self._request(req, wire.PDU_LABEL, codec.decode_labels)
            if (rident & 0xFFFFFFFF) != (ident & 0xFFFFFFFF) or rtype != type_:
                self.close()
                raise pmErr(PM_ERR_IPC)
            return sets

    # ---- host name -------------------------------------------------------------------

    def host_name(self) -> str:
        try:
            _, pmids = self.lookup_names([b"pmcd.hostname"])
            if pmids[0] != PM_ID_NULL:
                flat, _ = self.fetch(pmids, True)
                if flat.numval[0] > 0 and flat.vtype[0] == 6:
                    name = flat.payload(0).split(b"\0", 1)[0].decode("utf-8", "replace")
                    if name:
                        return name
        except pmErr:
            pass
        # the connection's host name, kept when a failed request has closed it
        host = getattr(self.conn, "host", None) if self.conn is not None else None
        host = host or self._conn_host
        if host and not host.startswith("localhost") and not host.startswith("/"):
            return host
        return _socket.gethostname()

    # ---- what only archives do -------------------------------------------------------

    def set_mode(self, mode: int, when: Optional[Tuple[int, int]], delta: Tuple[int, int],
                 direction: int) -> None:
        """pmSetMode on a host context: only PM_MODE_LIVE, which changes nothing."""
        if mode & 0xFFFF != PM_MODE_LIVE:
            raise pmErr(PM_ERR_MODE)

    def archive_label(self):
        raise pmErr(PM_ERR_NOTARCHIVE)

    def archive_end(self) -> Tuple[int, int]:
        raise pmErr(PM_ERR_NOTARCHIVE)

    def fetch_archive(self) -> FlatResult:
        raise pmErr(PM_ERR_NOTARCHIVE)

    def instances_archive(self, indom: int) -> Tuple[List[int], List[bytes]]:
        raise pmErr(PM_ERR_NOTARCHIVE)

    def lookup_instance_archive(self, indom: int, name: bytes) -> int:
        raise pmErr(PM_ERR_NOTARCHIVE)

    def name_instance_archive(self, indom: int, inst: int) -> bytes:
        raise pmErr(PM_ERR_NOTARCHIVE)
