"""Many pmcds polled at once, beyond the official binding.

    from pcp.fleet import Fleet, fetch_many

    res = fetch_many(["web1", "web2", "db1:44321", "local:"],
                     ["kernel.all.load", "mem.util.free"], timeout=2.0)
    for r in res:
        if r.ok:
            inst, vals = r.values("kernel.all.load")     # numpy arrays
        else:
            print(r.host, r.stage, r.error)              # per host, never raised
    res.column("mem.util.free")                          # float64 per host, NaN if none

    with Fleet(hosts, metrics) as fleet:                 # connections kept between polls
        while True:
            res = fleet.fetch()
            ...

Connections are opened concurrently by a thread pool (name resolution, connect and
the handshake block; PMCD_CONNECT_TIMEOUT or `connect_timeout` bounds each), and every
host's metric names and descriptors are looked up on its own connection. A poll is one
thread multiplexing every connection: the FETCH requests (encoded once per host by the
C codec) all go out first, then the replies are read as they arrive (selectors) and
decoded in C into flat columns; a host that has not answered within `timeout` seconds
gets PM_ERR_TIMEOUT and its connection is dropped (a late reply would desynchronise it).
Hosts that failed are reconnected in the background, at most every `retry` seconds,
without delaying the polls of the others.

Derived metrics (pmRegisterDerived, pmLoadDerivedConfig, PCP_DERIVED_CONFIG, the
default configuration: disk.dev.await, kernel.cpu.util.user ...) are metrics like any
other: their operands are fetched with them and each poll's result is evaluated as the
drop-in pmFetch evaluates it (rate() and delta() against the host's previous poll).
"""
from __future__ import annotations

import concurrent.futures
import errno
import selectors
import threading
import time
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

import cpmapi as c_api
from pcp._bulk import typed as _typed
from pcp._core import wire
from pcp._core.constants import PM_ERR_NAME, PM_ID_NULL
from pcp._core.errors import pmErr, pmErrStr
from pcp._core.wire import FEATURE_HIGHRES
from pcp._decode import pdu as codec
from pcp._decode.result import FlatResult
from pcp._libpcp.anon import fix_client_side_sets, is_derived
from pcp._live import transport as _transport
from pcp._live.context import HostContext
from pcp._live.hostspec import redact_hostspec

__all__ = ["Fleet", "fetch_many", "HostResult", "FleetResult"]


class HostResult:
    """One host's answer to a poll: `ok`, or `error` (a pmErr) and the `stage` it failed
    at ("connect", "lookup" or "fetch"). The values stay in the decoded columns
    (`arrays`, numpy views); `values(metric)` cuts one metric out of them."""

    __slots__ = ("host", "index", "ok", "error", "stage", "sec", "nsec", "latency",
                 "_flat", "_arrays", "_member")

    def __init__(self, member: "_Member", error: Optional[pmErr] = None, stage: str = "",
                 flat: Optional[FlatResult] = None, latency: float = float("nan")) -> None:
        self.host = member.shown
        self.index = member.index
        self._member = member
        self.ok = error is None
        self.error = error
        self.stage = stage
        self.latency = latency
        self.sec = flat.sec if flat is not None else 0
        self.nsec = flat.nsec if flat is not None else 0
        self._flat = flat
        self._arrays = None

    @property
    def arrays(self) -> Any:
        """The decoded result's columns (ResultArrays of numpy views), None on failure."""
        if self._arrays is None and self._flat is not None:
            self._arrays = self._flat.arrays()
        return self._arrays

    @property
    def time(self) -> float:
        """pmcd's time stamp of the result (seconds since the epoch), NaN if none."""
        return self.sec + self.nsec * 1e-9 if self.ok else float("nan")

    def _set(self, metric: str) -> Tuple[int, Any]:
        m = self._member
        if not self.ok:
            raise pmErr(self.error.code if self.error is not None else c_api.PM_ERR_IPC)
        k = m.names.get(metric)
        if k is None:
            raise KeyError(metric)
        i = m.slot[k]
        if i < 0:
            raise pmErr(m.metric_errors[k])
        return i, m.descs[k]

    def numval(self, metric: str) -> int:
        """The metric's number of values, or its error code (< 0) on this host."""
        try:
            i, _ = self._set(metric)
        except pmErr as e:
            return e.code
        return self._flat.numval[i]

    def values(self, metric: str) -> Tuple[Any, Any]:
        """(instance ids, values) of a metric: numpy arrays in the metric's type (a list
        for strings). Raises pmErr when the host or the metric failed."""
        i, desc = self._set(metric)
        flat = self._flat
        n = flat.numval[i]
        if n < 0:
            raise pmErr(n)
        a = self.arrays
        lo = flat.first[i]
        hi = lo + n
        inst = a.inst[lo:hi]
        mtype = desc[1]
        if mtype in _typed.NUMERIC:
            return inst, _typed.typed(mtype, a.vtype[lo:hi], a.ival[lo:hi], a.dval[lo:hi])
        if mtype == c_api.PM_TYPE_STRING:
            data = a.data
            return inst, [bytes(data[o:o + ln]).split(b"\0", 1)[0].decode("utf-8", "replace")
                          for o, ln in zip(a.boff[lo:hi].tolist(), a.blen[lo:hi].tolist())]
        return inst, [bytes(a.data[o:o + ln]) for o, ln in
                      zip(a.boff[lo:hi].tolist(), a.blen[lo:hi].tolist())]

    def value(self, metric: str, inst: Optional[int] = None) -> Any:
        """One value: the only one of a metric without instances, or instance `inst`."""
        ids, vals = self.values(metric)
        if inst is None:
            if len(ids) != 1:
                raise pmErr(c_api.PM_ERR_INST if len(ids) else c_api.PM_ERR_VALUE)
            return vals[0]
        hit = np.flatnonzero(ids == inst)
        if not len(hit):
            raise pmErr(c_api.PM_ERR_INST)
        return vals[int(hit[0])]

    def __repr__(self) -> str:
        if self.ok:
            return "<HostResult %s ok %.3f ms>" % (self.host, self.latency * 1e3)
        return "<HostResult %s %s: %s>" % (self.host, self.stage, self.error)


class FleetResult(list):
    """The HostResults of one poll, in the order the hosts were given."""

    elapsed = 0.0              # seconds the poll took

    @property
    def ok(self) -> List[HostResult]:
        """The hosts that answered, with their results."""
        return [r for r in self if r.ok]

    @property
    def failed(self) -> List[HostResult]:
        """The hosts that did not answer, with their errors."""
        return [r for r in self if not r.ok]

    def errors(self) -> Dict[str, pmErr]:
        """{host: pmErr} of the hosts that did not answer."""
        return {r.host: r.error for r in self if not r.ok}

    def column(self, metric: str, inst: Optional[int] = None) -> Any:
        """One value per host as float64 (NaN where a host, the metric or the instance
        has none): the metric's only value, or instance id `inst`."""
        out = np.full(len(self), np.nan)
        for k, r in enumerate(self):
            if not r.ok:
                continue
            try:
                out[k] = float(r.value(metric, inst))
            except (pmErr, KeyError, TypeError, ValueError):
                pass
        return out


class _Member:
    """One host of the fleet: its connection, its metric lookups, its request."""

    def __init__(self, index: int, spec: str, metrics: Sequence[str]) -> None:
        self.index = index
        self.spec = spec
        self.shown = redact_hostspec(spec)      # what results and reprs show
        self.names = {m: k for k, m in enumerate(metrics)}
        self.hc: Optional[HostContext] = None
        self.error: Optional[pmErr] = None
        self.stage = "connect"
        self.pending: Optional[concurrent.futures.Future] = None
        self.retry_at = 0.0
        self.slot: List[int] = []            # metric -> value set in the result, -1 none
        self.metric_errors: List[int] = []
        self.descs: List[Any] = []
        self.request = b""
        self.expect = 0
        self.derived: Optional["_Derived"] = None   # derived metrics among the metrics


class _Replay:
    """The host context as a DerivedContext sees it: every other operation is the host
    context's own, but fetch() answers with the result the poll received (and, before
    the first poll, records the request it was asked for: the pmids plus the operands
    of the derived metrics among them)."""

    def __init__(self, hc: HostContext) -> None:
        self.hc = hc
        self._lock = hc._lock
        self.flat: Optional[FlatResult] = None
        self.request: Optional[List[int]] = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.hc, name)

    def fetch(self, pmids: Sequence[int], highres: bool) -> Tuple[FlatResult, int]:
        if self.flat is None:
            self.request = list(pmids)
            raise _Recorded()
        flat, self.flat = self.flat, None
        return flat, 0


class _Recorded(Exception):
    pass


class _Derived:
    """A host's derived metrics: libpcp's derived metrics (pmRegisterDerived,
    pmLoadDerivedConfig, PCP_DERIVED_CONFIG) are looked up, described and evaluated
    over each poll's result as the drop-in pmFetch does it on a host context (in C,
    whole instance vectors at a time)."""

    def __init__(self, hc: HostContext) -> None:
        from pcp._libpcp.derived.context import DerivedContext

        self.replay = _Replay(hc)
        self.ctx = DerivedContext(self.replay)
        self.pmids: List[int] = []

    def request(self, pmids: Sequence[int], highres: bool) -> List[int]:
        """The pmids to fetch for `pmids` (the operands of derived ones added)."""
        self.pmids = list(pmids)
        self.replay.flat = None
        try:
            self.ctx.fetch(self.pmids, highres)
        except _Recorded:
            pass
        return self.replay.request or list(pmids)

    def evaluate(self, flat: FlatResult, highres: bool) -> FlatResult:
        """The poll's result for the metrics asked for, derived ones computed."""
        self.replay.flat = flat
        out, _ = self.ctx.fetch(self.pmids, highres)
        return out


class Fleet:
    """Connections to many pmcds, polled together (see the module doc).

    hosts: host specs as for pmNewContext ("local:", "host", "host:port", ...); the
    same host may appear more than once (one connection each). metrics: names looked
    up on every host. connect_timeout / timeout: seconds for connecting and for every
    request, poll replies included (default: PMCD_CONNECT_TIMEOUT, PMCD_REQUEST_TIMEOUT).
    workers: threads that connect. retry: seconds between reconnection attempts."""

    def __init__(self, hosts: Iterable[str], metrics: Sequence[str],
                 connect_timeout: Optional[float] = None, timeout: Optional[float] = None,
                 workers: int = 64, retry: float = 5.0) -> None:
        if isinstance(metrics, str):
            metrics = [metrics]
        self.hosts = list(hosts)
        self.metrics = list(metrics)
        if not self.metrics:
            raise ValueError("no metrics")
        self.connect_timeout = connect_timeout
        self.timeout = _transport.request_timeout() if timeout is None else float(timeout)
        self.retry = retry
        self._members = [_Member(i, h, self.metrics) for i, h in enumerate(self.hosts)]
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=max(1, min(workers, len(self._members))), thread_name_prefix="pcp-fleet")
        self._closed = False
        self._lock = threading.Lock()
        for m in self._members:
            m.pending = self._pool.submit(self._open, m)
        for m in self._members:
            self._collect(m, wait=True)

    # ---- connections -----------------------------------------------------------------

    def _connector(self, spec: str, flags: int) -> Any:
        return _transport.connect(spec, flags, ctimeout=self.connect_timeout,
                                  rtimeout=self.timeout)

    def _open(self, m: _Member) -> Tuple[Optional[HostContext], Optional[pmErr], str, Any]:
        """In a worker: connect, look the metrics up, build the FETCH request."""
        try:
            hc = HostContext(m.index, m.spec, 0, connector=self._connector)
        except pmErr as e:
            return None, e, "connect", None
        except Exception as e:          # noqa: BLE001 - a bad spec must not kill the pool
            return None, pmErr(-errno.EINVAL, str(e)), "connect", None
        try:
            names = [n.encode("utf-8") for n in self.metrics]
            derived: Optional[_Derived] = None
            ctx: Any = hc
            pmids = _lookup(ctx, names)
            if PM_ID_NULL in pmids:         # derived metrics, perhaps
                derived = _Derived(hc)
                ctx = derived.ctx
                pmids = _lookup(ctx, names)
            valid = [p for p in pmids if p != PM_ID_NULL]
            if not valid:
                raise pmErr(PM_ERR_NAME)
            descs = dict(zip(valid, ctx.descs(valid)))
            slot, errs, dlist, fetch = [], [], [], []
            for p in pmids:
                d = descs.get(p)
                if p == PM_ID_NULL or d is None or d[0] == PM_ID_NULL:
                    slot.append(-1)
                    errs.append(PM_ERR_NAME if p == PM_ID_NULL else c_api.PM_ERR_PMID)
                    dlist.append(None)
                    continue
                slot.append(len(fetch))
                errs.append(0)
                dlist.append(d)
                fetch.append(p)
            highres = bool(hc.features & FEATURE_HIGHRES)
            wanted = fetch
            if derived is not None and any(is_derived(p) for p in fetch):
                wanted = derived.request(fetch, highres)
            else:
                derived = None
            request = codec.encode_fetch(hc.handle, highres, wire.CTXID, wanted)
            expect = wire.PDU_HIGHRES_RESULT if highres else wire.PDU_RESULT
            return hc, None, "", (slot, errs, dlist, request, expect, derived)
        except pmErr as e:
            hc.close()
            return None, e, "lookup", None
        except Exception as e:          # noqa: BLE001
            hc.close()
            return None, pmErr(c_api.PM_ERR_IPC, str(e)), "lookup", None

    def _collect(self, m: _Member, wait: bool) -> None:
        fut = m.pending
        if fut is None or (not wait and not fut.done()):
            return
        m.pending = None
        hc, err, stage, setup = fut.result()
        if hc is None:
            m.hc = None
            m.error = err
            m.stage = stage
            m.retry_at = time.monotonic() + self.retry
            return
        m.hc = hc
        m.error = None
        m.stage = ""
        m.slot, m.metric_errors, m.descs, m.request, m.expect, m.derived = setup

    def _drop(self, m: _Member, err: pmErr, stage: str) -> None:
        if m.hc is not None:
            m.hc.close()
        m.hc = None
        m.error = err
        m.stage = stage
        # the end of this poll starts reconnecting (never, for a one-shot fetch_many)
        m.retry_at = time.monotonic() if self.retry != float("inf") else float("inf")

    def _reconnect_due(self) -> None:
        now = time.monotonic()
        for m in self._members:
            if m.hc is None and m.pending is None and now >= m.retry_at:
                m.pending = self._pool.submit(self._open, m)

    # ---- polling ---------------------------------------------------------------------

    def fetch(self) -> FleetResult:
        """Poll every host once; one HostResult per host, failures included."""
        if self._closed:
            raise pmErr(c_api.PM_ERR_NOCONTEXT)
        t0 = time.monotonic()
        with self._lock:
            for m in self._members:
                self._collect(m, wait=False)
            results: List[Optional[HostResult]] = [None] * len(self._members)
            sel = selectors.DefaultSelector()
            sent: Dict[int, float] = {}
            try:
                for m in self._members:
                    hc = m.hc
                    if hc is None or hc.conn is None:
                        if hc is not None:
                            self._drop(m, pmErr(c_api.PM_ERR_IPC), "fetch")
                        results[m.index] = HostResult(m, m.error or pmErr(c_api.PM_ERR_IPC),
                                                      m.stage or "connect")
                        continue
                    request = m.request
                    profile = None
                    if not hc.profile.sent:
                        profile = hc.profile.encode(hc.handle)
                        if not hc.conn.secure:
                            request, profile = profile + request, None
                        hc.profile.sent = True
                    try:
                        if profile is not None:
                            # TLS: one record per PDU, as pmcd reads one PDU per wakeup
                            hc.conn.send(profile)
                        hc.conn.send(request)
                    except pmErr as e:
                        self._drop(m, e, "fetch")
                        results[m.index] = HostResult(m, e, "fetch")
                        continue
                    sent[m.index] = time.monotonic()
                    sel.register(hc.conn.fileno(), selectors.EVENT_READ, m)
                deadline = time.monotonic() + self.timeout if self.timeout > 0 else None
                waiting = len(sent)
                while waiting:
                    wait = None if deadline is None else deadline - time.monotonic()
                    if wait is not None and wait <= 0:
                        break
                    for key, _ in sel.select(wait):
                        m = key.data
                        done = self._receive(m, results, sent[m.index], deadline)
                        if done:
                            sel.unregister(key.fileobj)
                            waiting -= 1
                for key in list(sel.get_map().values()):
                    m = key.data
                    err = pmErr(c_api.PM_ERR_TIMEOUT)
                    self._drop(m, err, "fetch")
                    results[m.index] = HostResult(m, err, "fetch")
            finally:
                sel.close()
            self._reconnect_due()
        out = FleetResult(results)  # type: ignore[arg-type]
        out.elapsed = time.monotonic() - t0
        return out

    def _receive(self, m: _Member, results: List[Optional[HostResult]], t_sent: float,
                 deadline: Optional[float]) -> bool:
        """Read one PDU from a readable host; True when its poll is over."""
        hc = m.hc
        assert hc is not None and hc.conn is not None
        remaining = 0.0 if deadline is None else max(deadline - time.monotonic(), 0.001)
        try:
            ptype, pdu = hc.conn.recv_pdu(remaining)
            if ptype == wire.PDU_ERROR:
                code = codec.decode_error(pdu)
                if code > 0:
                    return False            # pmcd's state-change notice: the result follows
                raise pmErr(code if code < 0 else c_api.PM_ERR_IPC)
            if ptype != m.expect:
                raise pmErr(c_api.PM_ERR_IPC)
            highres = m.expect == wire.PDU_HIGHRES_RESULT
            flat = FlatResult(pdu, highres)
            fix_client_side_sets(flat)
            if m.derived is not None:
                flat = m.derived.evaluate(flat, highres)
        except pmErr as e:
            self._drop(m, e, "fetch")
            results[m.index] = HostResult(m, e, "fetch")
            return True
        results[m.index] = HostResult(m, None, "", flat, time.monotonic() - t_sent)
        return True

    # ---- lifetime --------------------------------------------------------------------

    @property
    def connected(self) -> int:
        """Hosts with a usable connection now (finished reconnections included)."""
        with self._lock:
            for m in self._members:
                self._collect(m, wait=False)
            return sum(1 for m in self._members if m.hc is not None and m.hc.conn is not None)

    def close(self) -> None:
        """Close every connection of the fleet."""
        if self._closed:
            return
        self._closed = True
        self._pool.shutdown(wait=True, cancel_futures=True)
        for m in self._members:
            if m.pending is not None and not m.pending.cancelled():
                hc = m.pending.result()[0]
                if hc is not None:
                    hc.close()
                m.pending = None
            if m.hc is not None:
                m.hc.close()
                m.hc = None

    def __enter__(self) -> "Fleet":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:       # noqa: BLE001 - interpreter shutdown
            pass


def _lookup(ctx: Any, names: List[bytes]) -> List[int]:
    """pmLookupName on one host: a pmid per name, PM_ID_NULL where unknown."""
    try:
        _, pmids = ctx.lookup_names(names)
    except pmErr as e:
        if e.code != PM_ERR_NAME:
            raise
        return [PM_ID_NULL] * len(names)
    return list(pmids)


def fetch_many(hosts: Iterable[str], metrics: Sequence[str],
               connect_timeout: Optional[float] = None, timeout: Optional[float] = None,
               workers: int = 64) -> FleetResult:
    """Connect to every host, poll once, disconnect: one HostResult per host, in order.
    Failures (unreachable, refused, timed out, unknown metrics) are reported per host,
    never raised for the batch."""
    with Fleet(hosts, metrics, connect_timeout=connect_timeout, timeout=timeout,
               workers=workers, retry=float("inf")) as fleet:
        res = fleet.fetch()
    return res


def error_text(err: Optional[pmErr]) -> str:
    """The pmErrStr text of an error ("" for None)."""
    return pmErrStr(err.code) if err is not None else ""
