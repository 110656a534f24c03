"""Which path a request takes (csrc/exchange.c's one-call round trip, or Python's socket
calls) and what stays the same either way: the GIL is released while a reply is
awaited, the fast path is the one a plain connection takes, and a reply the C call
leaves unfinished (pieces, a state change before the RESULT) ends as Python's own
receive path ends it. tests/live/test_hostile_server.py has every fault."""
from __future__ import annotations

import threading
import time

import pytest

from pcp._core import wire
from pcp._decode import pdu as codec
from pcp._decode.result import FlatResult, ResultSizes
from pcp._live.transport import connect
from tests.support import fakepmcd as F

pytestmark = pytest.mark.timeout(60)

PMIDS = [F.pmid_build(29, 0, 1), F.pmid_build(29, 0, 2)]


def _fetch_request() -> bytes:
    return codec.encode_fetch(0, False, wire.CTXID, PMIDS)


def _after(seconds: float, then):
    def action(req: F.Request) -> None:
        F.pause(seconds)(req)
        then(req)
    return action


def _send_healthy(req: F.Request) -> None:
    req.sock.sendall(bytes(F.healthy(req)))


def _fetch(conn):
    return conn.exchange_result(_fetch_request(), False, wire.PDU_RESULT, ResultSizes())


def test_a_plain_connection_fetches_in_one_call_decoded():
    with F.FakePmcd() as srv:
        conn = connect(srv.spec)
        try:
            assert conn.fileno() >= 0 and not conn.secure
            ptype, pdu, flat = _fetch(conn)
            assert ptype == wire.PDU_RESULT and isinstance(flat, FlatResult)
            want = FlatResult(pdu, False)
            assert flat.pmid == want.pmid == PMIDS
            assert flat.ival == want.ival
            ptype, pdu = conn.exchange(codec.encode_desc_req(0, PMIDS[0]))
            assert ptype == wire.PDU_DESC and pdu == bytes(F.desc(PMIDS[0]))
        finally:
            conn.close()


def test_other_threads_run_while_a_reply_is_awaited():
    script = {wire.PDU_FETCH: [_after(0.5, _send_healthy)]}
    with F.FakePmcd(scripts=[script]) as srv:
        conn = connect(srv.spec)
        ticks = []
        stop = threading.Event()

        def count() -> None:
            while not stop.is_set():
                ticks.append(time.monotonic())
                time.sleep(0.001)

        counter = threading.Thread(target=count)
        try:
            counter.start()
            started = time.monotonic()
            _, _, flat = _fetch(conn)
            ended = time.monotonic()
        finally:
            stop.set()
            counter.join()
            conn.close()
        assert flat is not None and ended - started >= 0.45
        during = [t for t in ticks if started < t < ended]
        assert len(during) >= 20, "the counting thread stalled while the fetch waited"


def test_a_state_change_then_the_result_in_pieces_ends_in_python():
    both = bytes(F.error(2))

    def action(req: F.Request) -> None:
        F.dribble(both + bytes(F.healthy(req)), 7, 0.002)(req)

    with F.FakePmcd(scripts=[{wire.PDU_FETCH: [action]}]) as srv:
        conn = connect(srv.spec)
        try:
            ptype, pdu, flat = _fetch(conn)
            assert (ptype, flat) == (wire.PDU_ERROR, None) and pdu == both
            ptype, pdu = conn.recv_pdu()
            assert ptype == wire.PDU_RESULT and FlatResult(pdu, False).pmid == PMIDS
            # the stream is in step again: the next round trip is the one-call one
            _, _, flat = _fetch(conn)
            assert flat is not None and flat.pmid == PMIDS
        finally:
            conn.close()
