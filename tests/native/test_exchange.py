"""The one-call round trip of csrc/exchange.c (pcp_exchange_roundtrip, pcp_exchange_fetch,
and the metadata calls pcp_exchange_pmns_ids/_name_all/_children/_text/_desc/_instance)
over a socketpair whose other end plays pmcd: the request arrives whole, one whole reply
comes back (decoded, for a fetch), and every other case (a reply in pieces, two PDUs at
once, a bad header, the peer gone, a timeout, an ERROR before the RESULT, a RESULT of
another size or that does not decode) gives the code exchange.h documents and leaves the
bytes received where the caller's receive path goes on from them. The replies are copied
into an exact-size buffer, so a run under .ci/sanitize.sh catches any read past them."""
import socket
import struct

import pytest

from pcp._core.constants import PM_ERR_IPC, PM_ERR_NOAGENT, PM_ERR_TIMEOUT, PM_ERR_TOOSMALL
from pcp._core.wire import (PCP_EXCHANGE_OTHER, PCP_EXCHANGE_PARTIAL, PCP_EXCHANGE_UNSENT,
                            PCP_RESULT_RESIZE, PDU_ERROR, PDU_RESULT)
from pcp._decode.result import FlatResult, ResultSizes
from pcp._native import ffi, lib
from tests.support import fakepmcd as F

REQUEST = bytes(F.pdu(F.PDU_DESC_REQ, struct.pack(">I", 0x01000001)))


@pytest.fixture
def pair():
    """(our end, pmcd's end) of a connected socketpair, a 2 s receive timeout on ours."""
    ours, theirs = socket.socketpair()
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("@ll", 2, 0))
    theirs.settimeout(5)
    yield ours, theirs
    ours.close()
    theirs.close()


def _roundtrip(ours, theirs, reply: bytes, cap: int = 4096):
    """Queue `reply` on pmcd's end, run the round trip: (sts, reply struct, buffer)."""
    if reply:
        theirs.sendall(reply)
    buf = ffi.new("uint8_t[]", cap)
    out = ffi.new("pcp_exchange_reply *")
    sts = lib.pcp_exchange_roundtrip(ours.fileno(), REQUEST, len(REQUEST), buf, cap, out)
    return sts, out, buf


def _sent(theirs) -> bytes:
    theirs.settimeout(1)
    return theirs.recv(65536)


def test_one_whole_reply_comes_back_and_the_request_arrived_whole(pair):
    ours, theirs = pair
    reply = bytes(F.desc(0x01000001))
    sts, out, buf = _roundtrip(ours, theirs, reply)
    assert sts == 0
    assert (out.received, out.length, out.type) == (len(reply), len(reply), F.PDU_DESC)
    assert bytes(ffi.buffer(buf, out.received)) == reply
    assert _sent(theirs) == REQUEST


def test_a_reply_in_pieces_is_left_to_the_caller_with_its_bytes(pair):
    ours, theirs = pair
    reply = bytes(F.desc(0x01000001))
    sts, out, buf = _roundtrip(ours, theirs, reply[:5])
    assert sts == PCP_EXCHANGE_PARTIAL
    assert (out.received, out.length) == (5, 0)         # fewer bytes than a header
    assert bytes(ffi.buffer(buf, 5)) == reply[:5]
    sts, out, _ = _roundtrip(ours, theirs, reply[:14])
    assert sts == PCP_EXCHANGE_PARTIAL
    assert (out.received, out.length, out.type) == (14, len(reply), F.PDU_DESC)


def test_two_pdus_at_once_are_left_to_the_caller(pair):
    ours, theirs = pair
    first, second = bytes(F.error(2)), bytes(F.desc(0x01000001))
    sts, out, buf = _roundtrip(ours, theirs, first + second)
    assert sts == PCP_EXCHANGE_PARTIAL
    assert (out.received, out.length, out.type) == (len(first + second), len(first), PDU_ERROR)
    assert bytes(ffi.buffer(buf, out.received)) == first + second


@pytest.mark.parametrize("header", [struct.pack(">iii", 8, F.PDU_DESC, 0),
                                    struct.pack(">iii", 0x7FFFFFFF, F.PDU_DESC, 0),
                                    struct.pack(">iii", 16, -1, 0)])
def test_a_header_out_of_range_is_ipc(pair, header):
    ours, theirs = pair
    sts, _, _ = _roundtrip(ours, theirs, header + b"\0" * 4)
    assert sts == PM_ERR_IPC


def test_the_peer_gone_is_ipc(pair):
    ours, theirs = pair
    theirs.shutdown(socket.SHUT_WR)                     # EOF on our receive
    sts, out, _ = _roundtrip(ours, theirs, b"")
    assert sts == PM_ERR_IPC and out.received == 0
    theirs.close()                                      # now the send fails (EPIPE, no signal)
    sts, _, _ = _roundtrip(ours, theirs, b"")
    assert sts == PM_ERR_IPC


def test_no_reply_within_the_receive_timeout_is_a_timeout(pair):
    ours, theirs = pair
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("@ll", 0, 50000))
    sts, out, _ = _roundtrip(ours, theirs, b"")
    assert sts == PM_ERR_TIMEOUT and out.received == 0


def test_bad_arguments_are_refused_before_any_io(pair):
    ours, _ = pair
    out = ffi.new("pcp_exchange_reply *")
    small = ffi.new("uint8_t[]", 11)
    assert lib.pcp_exchange_roundtrip(-1, REQUEST, len(REQUEST), small, 11, out) == PM_ERR_IPC
    assert lib.pcp_exchange_roundtrip(ours.fileno(), REQUEST, len(REQUEST), small, 11,
                                      out) == PM_ERR_IPC
    assert lib.pcp_exchange_roundtrip(ours.fileno(), REQUEST, len(REQUEST), small, 11,
                                      ffi.NULL) == PM_ERR_IPC
    buf = ffi.new("uint8_t[]", 64)
    counts = ffi.new("int32_t[2]", [1, 1])
    c, mem = ffi.new("pcp_result *"), ffi.new("int64_t[]", 8)
    fd = ours.fileno()
    assert lib.pcp_exchange_fetch(fd, REQUEST, len(REQUEST), buf, 64, 0, PDU_RESULT,
                                  ffi.NULL, mem, 64, counts, counts + 1, out) == PM_ERR_IPC
    assert lib.pcp_exchange_fetch(fd, REQUEST, len(REQUEST), buf, 64, 0, PDU_RESULT,
                                  c, mem, 64, counts, counts + 1, ffi.NULL) == PM_ERR_IPC
    counts[1] = -1
    assert lib.pcp_exchange_fetch(fd, REQUEST, len(REQUEST), buf, 64, 0, PDU_RESULT,
                                  c, mem, 64, counts, counts + 1, out) == PM_ERR_IPC
    counts[1] = 2                       # 2 values and 1 set take 80 bytes
    assert lib.pcp_exchange_fetch(fd, REQUEST, len(REQUEST), buf, 64, 0, PDU_RESULT,
                                  c, mem, 64, counts, counts + 1, out) == PM_ERR_TOOSMALL


# ---- pcp_exchange_fetch -------------------------------------------------------------

VSETS = [(0x01000001, [(-1, 42)]), (0x01000002, [(0, (6, b"hi\0")), (1, (6, b"hullo\0"))]),
         (0x01000003, -12357)]


def _fetch(ours, theirs, reply: bytes, numpmid: int, nvalues: int, highres: bool = False):
    if reply:
        theirs.sendall(reply)
    cap = 4096
    buf = ffi.new("uint8_t[]", cap)
    out = ffi.new("pcp_exchange_reply *")
    sizes = ResultSizes()
    sizes.resize(numpmid, nvalues)
    counts = ffi.new("int32_t[2]", [numpmid, nvalues])
    c, mem = sizes.room()
    expect = F.PDU_HIGHRES_RESULT if highres else PDU_RESULT
    sts = lib.pcp_exchange_fetch(ours.fileno(), REQUEST, len(REQUEST), buf, cap,
                                 1 if highres else 0, expect, c, mem, sizes.nbytes, counts,
                                 counts + 1, out)
    return sts, out, buf, counts, (c, mem)


@pytest.mark.parametrize("highres", [False, True])
def test_a_whole_result_of_the_guessed_size_is_decoded(pair, highres):
    ours, theirs = pair
    reply = bytes(F.result(VSETS, highres=highres))
    sts, out, buf, counts, (c, mem) = _fetch(ours, theirs, reply, 3, 3, highres)
    assert sts == 0 and out.length == len(reply)
    pdu = bytes(ffi.buffer(buf, out.length))
    got = FlatResult.from_indexed(pdu, highres, c, mem)
    want = FlatResult(pdu, highres)
    assert (got.numpmid, got.nvalues, got.sec, got.nsec) == (3, 3, want.sec, want.nsec)
    assert list(got.numval) == list(want.numval) == [1, 2, -12357]
    assert got.payload(2) == want.payload(2) == b"hullo\0"
    assert (counts[0], counts[1]) == (3, 3)


def test_a_result_of_another_size_asks_for_room(pair):
    ours, theirs = pair
    sts, out, _, counts, _ = _fetch(ours, theirs, bytes(F.result(VSETS)), 1, 1)
    assert sts == PCP_RESULT_RESIZE
    assert (counts[0], counts[1]) == (3, 3) and out.length == out.received


def test_an_error_pdu_first_is_left_to_the_callers_loop(pair):
    ours, theirs = pair
    both = bytes(F.error(2)) + bytes(F.result(VSETS))
    sts, out, _, _, _ = _fetch(ours, theirs, both, 3, 3)
    assert sts == PCP_EXCHANGE_PARTIAL
    assert (out.type, out.received) == (PDU_ERROR, len(both))
    sts, out, _, _, _ = _fetch(ours, theirs, bytes(F.error(-12357)), 3, 3)
    assert sts == PCP_EXCHANGE_PARTIAL and out.type == PDU_ERROR


def test_a_result_that_does_not_decode_is_ipc(pair):
    ours, theirs = pair
    reply = bytearray(F.result(VSETS))
    struct.pack_into(">i", reply, 20, 1000)             # numpmid past the PDU's end
    sts, out, _, _, _ = _fetch(ours, theirs, bytes(reply), 3, 3)
    assert sts == PM_ERR_IPC
    assert out.type == PDU_RESULT and out.length == out.received == len(reply)


def test_transport_errors_come_before_any_decoding(pair):
    ours, theirs = pair
    theirs.shutdown(socket.SHUT_WR)
    sts, out, _, _, _ = _fetch(ours, theirs, b"", 1, 1)
    assert sts == PM_ERR_IPC and out.received == 0


def test_sets_answered_no_agent_are_counted(pair):
    ours, theirs = pair
    vsets = [(0x01000001, PM_ERR_NOAGENT), (0x01000002, [(-1, 7)]), (0x01000003, PM_ERR_NOAGENT)]
    sts, out, _, _, _ = _fetch(ours, theirs, bytes(F.result(vsets)), 3, 1)
    assert sts == 0 and out.noagent == 2
    sts, out, _, _, _ = _fetch(ours, theirs, bytes(F.result(VSETS)), 3, 3)
    assert sts == 0 and out.noagent == 0


# ---- the metadata calls: request encoded in the buffer, reply decoded there ----------

def _metadata(ours, theirs, call: str, reply: bytes, items: int = 8, cap: int = 4096):
    """Queue `reply`, run one metadata call of exchange.c with room for `items` items:
    (sts, reply struct, the decoded values, the request pmcd saw)."""
    if reply:
        theirs.sendall(reply)
    buf = ffi.new("uint8_t[]", cap)
    out = ffi.new("pcp_exchange_reply *")
    count = ffi.new("int32_t *")
    has_status = ffi.new("int32_t *")
    ints = ffi.new("int32_t[]", items)
    offs = ffi.new("uint32_t[]", items)
    lens = ffi.new("int32_t[]", items)
    fd = ours.fileno()
    if call == "pmns_ids":
        names = b"sample.long.one"
        nlen = ffi.new("int32_t[]", [len(names)])
        sts = lib.pcp_exchange_pmns_ids(fd, buf, cap, 7, 1, names, nlen, items, offs, count, out)
        got = list(ffi.unpack(offs, count[0]))
    elif call in ("name_all", "children", "instance"):
        if call == "name_all":
            sts = lib.pcp_exchange_name_all(fd, buf, cap, 7, 0x01000001, items, has_status, ints,
                                            offs, lens, count, out)
        elif call == "children":
            sts = lib.pcp_exchange_children(fd, buf, cap, 7, 1, b"sample", 6, items, has_status,
                                            ints, offs, lens, count, out)
        else:
            sts = lib.pcp_exchange_instance(fd, buf, cap, 7, 0x01000001, -1, b"", 0, items, ints,
                                            offs, lens, count, out)
        raw = bytes(ffi.buffer(buf, max(out.received, 0)))
        got = [(ints[i], raw[offs[i]:offs[i] + lens[i]]) for i in range(count[0])]
    elif call == "text":
        off, tlen = ffi.new("uint32_t *"), ffi.new("int32_t *")
        sts = lib.pcp_exchange_text(fd, buf, cap, 7, 0x01000001, 1 | 4, off, tlen, out)
        got = bytes(ffi.buffer(buf, out.received))[off[0]:off[0] + tlen[0]] if sts == 0 else None
    else:
        d = ffi.new("pcp_desc *")
        sts = lib.pcp_exchange_desc(fd, buf, cap, 7, 0x01000001, d, out)
        got = (d.pmid, d.type, d.indom) if sts == 0 else None
    return sts, out, got, (_sent(theirs) if sts != 4 else b"")


WHOLE_REPLIES = {
    "pmns_ids": (F.pmns_ids([0x01000001]), [0x01000001]),
    "name_all": (F.pmns_names([b"sample.long.one"]), [(0, b"sample.long.one")]),
    "children": (F.pmns_names([b"long", b"colour"], [1, 0]), [(1, b"long"), (0, b"colour")]),
    "instance": (F.instance(0x01000001, [(0, b"red"), (1, b"green")]),
                 [(0, b"red"), (1, b"green")]),
    "text": (F.text(0x01000001, b"one line"), b"one line"),
    "desc": (F.desc(0x01000001), (0x01000001, 1, 0xFFFFFFFF)),
}


@pytest.mark.parametrize("call", sorted(WHOLE_REPLIES))
def test_a_metadata_call_decodes_its_whole_reply(pair, call):
    ours, theirs = pair
    reply, expected = WHOLE_REPLIES[call]
    sts, out, got, request = _metadata(ours, theirs, call, bytes(reply))
    assert sts == 0 and out.length == len(reply)
    assert got == expected
    assert struct.unpack(">i", request[:4])[0] == len(request)     # one whole request


@pytest.mark.parametrize("call", sorted(WHOLE_REPLIES))
def test_an_error_reply_is_left_whole_to_the_caller(pair, call):
    ours, theirs = pair
    reply = bytes(F.error(-12357))
    sts, out, _, _ = _metadata(ours, theirs, call, reply)
    assert sts == PCP_EXCHANGE_OTHER
    assert (out.type, out.length, out.received) == (PDU_ERROR, len(reply), len(reply))


@pytest.mark.parametrize("call", ["pmns_ids", "name_all", "children", "instance"])
def test_more_items_than_room_are_left_to_the_caller(pair, call):
    ours, theirs = pair
    reply = {"pmns_ids": F.pmns_ids(list(range(1, 40))),
             "name_all": F.pmns_names([b"n%d" % i for i in range(40)]),
             "children": F.pmns_names([b"n%d" % i for i in range(40)], [0] * 40),
             "instance": F.instance(0x01000001, [(i, b"i%d" % i) for i in range(40)])}[call]
    sts, out, _, _ = _metadata(ours, theirs, call, bytes(reply), items=4)
    assert sts == PCP_EXCHANGE_OTHER and out.length == len(reply)


@pytest.mark.parametrize("call", sorted(WHOLE_REPLIES))
def test_a_reply_that_does_not_decode_gives_the_decoders_code(pair, call):
    ours, theirs = pair
    reply, _ = WHOLE_REPLIES[call]
    if call == "desc":          # any 20 bytes are a descriptor: a short one instead
        bad = bytearray(reply[:24])
        bad[0:4] = struct.pack(">i", 24)
    else:
        bad = bytearray(reply)
        bad[12:] = b"\xff" * (len(bad) - 12)   # counts and lengths out of range
    sts, out, _, _ = _metadata(ours, theirs, call, bytes(bad))
    assert sts == PM_ERR_IPC and out.length == out.received == len(bad)


@pytest.mark.parametrize("call", sorted(WHOLE_REPLIES))
def test_a_request_that_does_not_fit_the_buffer_is_not_sent(pair, call):
    ours, theirs = pair
    sts, out, _, _ = _metadata(ours, theirs, call, b"", cap=12)     # a header's room
    assert sts == PCP_EXCHANGE_UNSENT and out.received == 0


def test_a_metadata_reply_in_pieces_is_left_to_the_caller(pair):
    ours, theirs = pair
    reply = bytes(F.pmns_names([b"sample.long.one"]))
    theirs.sendall(reply[:10])
    sts, out, _, _ = _metadata(ours, theirs, "name_all", b"")
    assert sts == PCP_EXCHANGE_PARTIAL and out.received == 10
