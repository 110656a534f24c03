"""The agent codec (csrc/pdu_agent.c) against the client codec verified on a live pmcd:
every request the client encoders make decodes to the same fields, every reply the agent
encoders make decodes with the client decoders, and malformed requests are PM_ERR_IPC."""
from __future__ import annotations

import struct
from array import array

import pytest

from pcp._core.constants import PM_ERR_IPC, PM_TYPE_DOUBLE, PM_TYPE_STRING, PM_TYPE_U32
from pcp._core import wire as W
from pcp._decode import pdu as client
from pcp._decode.result import FlatResult
from pcp._pmda import wire as agent
from pcp._core.errors import pmErr


def test_fetch_request_round_trip():
    req = agent.Request(client.encode_fetch(7, False, 3, [0x3f400001, 5, 0xffffffff]))
    assert (req.type, req.sender, req.a, req.b) == (W.PDU_FETCH, 7, 3, 3)
    assert agent.decode_fetch(req) == [0x3f400001, 5, 0xffffffff]


def test_profile_request_round_trip():
    pdu = client.encode_profile(2, 4, 1, [(0x3f400001, 1, [0, 2]), (9, 0, []), (10, 1, [-5])])
    req = agent.Request(pdu)
    assert (req.type, req.a, req.b, req.c) == (W.PDU_PROFILE, 4, 3, 3)
    assert agent.decode_profile(req) == (1, [(0x3f400001, 1, [0, 2]), (9, 0, []), (10, 1, [-5])])


@pytest.mark.parametrize("name", [b"", b"red", b"one two", b"x" * 1001])
def test_instance_request_round_trip(name):
    req = agent.Request(client.encode_instance_req(0, 0x3f400001, -1, name))
    assert req.type == W.PDU_INSTANCE_REQ and req.ident == 0x3f400001 and req.a == -1
    assert req.name == (name or None)


def test_small_requests_round_trip():
    assert agent.Request(client.encode_desc_req(0, 0x3f400c05)).ident == 0x3f400c05
    text = agent.Request(client.encode_text_req(0, 0x3f400001, 6))
    assert (text.type, text.ident, text.a) == (W.PDU_TEXT_REQ, 0x3f400001, 6)
    label = agent.Request(client.encode_label_req(0, 0x3f400001, 0x20))
    assert (label.type, label.ident, label.a) == (W.PDU_LABEL_REQ, 0x3f400001, 0x20)
    child = agent.Request(client.encode_pmns_node(0, W.PDU_PMNS_CHILD, 1, b"simple.time"))
    assert (child.a, child.name) == (1, b"simple.time")
    ids = agent.Request(client.encode_ids(0, W.PDU_PMNS_IDS, 0, [0x3f400001]))
    assert (ids.type, ids.ident, ids.b) == (W.PDU_PMNS_IDS, 0x3f400001, 1)
    attr = agent.Request(client.encode_attr(0, 5, b"root\0"))
    assert (attr.a, attr.name) == (5, b"root\0")
    creds = agent.Request(client.encode_creds(1234, 0x40))
    assert (creds.sender, creds.c, creds.a, creds.b) == (1234, 1, 2, 0x40)


@pytest.mark.parametrize("pdu", [
    b"",
    struct.pack(">III", 16, W.PDU_FETCH, 0) + b"\0" * 4,                 # short fetch
    struct.pack(">IIIiqi", 32, W.PDU_FETCH, 0, 0, 0, 2) + b"\0" * 4,     # numpmid 2, one pmid
    struct.pack(">IIIiqi", 28, W.PDU_FETCH, 0, 0, 0, 0),                 # numpmid 0
    struct.pack(">IIIiiii", 28, W.PDU_PROFILE, 0, 0, 0, 1, 0),           # entry missing
    struct.pack(">IIIiiiiIiii", 44, W.PDU_PROFILE, 0, 0, 0, 1, 0, 1, 1, 99, 0),  # insts missing
    struct.pack(">IIIIqii", 32, W.PDU_INSTANCE_REQ, 0, 1, 0, -1, 5),     # name past the end
    struct.pack(">IIIii", 20, W.PDU_PMNS_CHILD, 0, 0, -1),               # negative length
    struct.pack(">IIII", 17, W.PDU_DESC_REQ, 0, 1) + b"\0",              # desc_req of 17
    struct.pack(">III", 13, W.PDU_TEXT_REQ, 0) + b"\0",
    struct.pack(">IIIi", 16, 0xffffffff, 0, 0),                          # negative type
    struct.pack(">IIIi", 20, W.PDU_ERROR, 0, 0),                         # length word lies
])
def test_malformed_requests_are_ipc_errors(pdu):
    with pytest.raises(pmErr) as info:
        agent.Request(pdu)
    assert info.value.args[0] == PM_ERR_IPC


def test_replies_decode_with_the_client_decoders():
    assert client.decode_error(agent.encode_error(-12357)) == -12357
    desc = client.decode_desc(agent.encode_desc(0x3f400001, PM_TYPE_U32, 0x3f400000, 3, 0x100000))
    assert tuple(desc)[:5] == (0x3f400001, PM_TYPE_U32, 0x3f400000, 3, 0x100000)
    indom, insts, names = client.decode_instance(
        agent.encode_instance(7, [0, 1, 9], [b"red", b"one two", b""]))
    assert (indom, insts, names) == (7, [0, 1, 9], [b"red", b"one two", b""])
    assert client.decode_text(agent.encode_text(5, b"Help text\nmore")) == b"Help text\nmore"
    assert client.decode_text(agent.encode_text(5, b"")) == b""
    names, status = client.decode_pmns_names(agent.encode_names([b"color", b"time"], [0, 1]))
    assert (names, status) == ([b"color", b"time"], [0, 1])
    assert client.decode_pmns_names(agent.encode_names([], None)) == ([], None)
    assert client.decode_pmns_ids(agent.encode_ids(0, 0x3f400001)) == (0, [0x3f400001])


def test_label_reply_decodes_with_the_client_decoder():
    json = b'{"a":1,"bb":"x"}'
    pdu = agent.encode_labels(0x3f400001, 0x20, [
        (0, 2, json, [(2, 1, 0x20, 5, 1), (9, 2, 0x20, 13, 3)]),
        (4, 0, b"", []),
    ])
    ident, type_, sets = client.decode_labels(pdu)
    assert (ident, type_) == (0x3f400001, 0x20)
    assert [s.inst for s in sets] == [0, 4]
    assert sets[0].json == json


def test_result_reply_decodes_with_the_result_decoder():
    text = "h\u00e9llo".encode()
    # an in-situ set after a set of value blocks: each reads its own part of the column
    pdu = agent.encode_result(0x08, [1, 2, 3, 4, 5, 6], [2, -12357, 1, 0, 2, 1],
                              [PM_TYPE_U32, 0, PM_TYPE_STRING, PM_TYPE_DOUBLE, PM_TYPE_DOUBLE,
                               PM_TYPE_U32],
                              array("i", [0, 5, -1, 3, 4, 9]),
                              array("I", [7, 0xffffffff]).tobytes()
                              + array("d", [0.5, -2.25]).tobytes() + array("I", [42]).tobytes(),
                              [len(text)], text)
    result = FlatResult(pdu, False)
    assert result.sec == 0x08          # the state-change flags ride in the timestamp
    assert result.pmid == [1, 2, 3, 4, 5, 6]
    assert result.numval == [2, -12357, 1, 0, 2, 1]
    assert result.inst == [0, 5, -1, 3, 4, 9]
    assert result.ival[:2] == [7, -1]
    assert result.ival[5] == 42      # the in-situ word, as the client reads it
    assert result.payload(2) == text + b"\0"
    assert result.payload(3) == struct.pack(">d", 0.5)
    assert result.payload(4) == struct.pack(">d", -2.25)


@pytest.mark.parametrize("inst, values, slen, payload", [
    (array("i", [0]), array("I", [7]), [3], b"abc"),          # one instance short
    (array("i", [0, 1, 2]), array("I", [7]), [3], b"abc"),    # one value short
    (array("i", [0, 1, 2]), array("I", [7, 8]), [], b""),     # no string length
    (array("i", [0, 1, 2]), array("I", [7, 8]), [4], b"abc"),  # payload shorter than slen
])
def test_result_columns_shorter_than_the_sets_are_refused(inst, values, slen, payload):
    with pytest.raises(pmErr):
        agent.encode_result(0, [1, 2], [2, 1], [PM_TYPE_U32, PM_TYPE_STRING],
                            inst, values, slen, payload)
