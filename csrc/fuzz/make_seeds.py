#!/usr/bin/env python3
"""Write the libFuzzer seed corpora under csrc/fuzz/seeds/<harness>/.

The PDUs are the live hex dumps of docs/protocol.md section 11 (plus a few PDUs built
from the layouts of sections 5 and 6 where section 11 has no dump). The output is
committed; rerun this script after changing it:  python3 csrc/fuzz/make_seeds.py
"""
import pathlib
import struct

HERE = pathlib.Path(__file__).resolve().parent
SEEDS = HERE / "seeds"


def h(text: str) -> bytes:
    """Hex words separated by spaces / '|' -> bytes."""
    return bytes.fromhex(text.replace("|", " ").replace(" ", "").replace("\n", ""))


def be(*words: int) -> bytes:
    return b"".join(struct.pack(">I", w & 0xFFFFFFFF) for w in words)


def pdu(ptype: int, body: bytes, from_: int = 0) -> bytes:
    return be(12 + len(body), ptype, from_) + body


# ---- RESULT family (11.3, 11.4, 11.6) ---------------------------------------------
HIGHRES_STRING = h(
    "00000048 00007015 00000000 00000001 00000000 6b0101dd 00000000 2309e47a"
    "0740001f 00000001 00000001 ffffffff 0000000d 06000011 68756c6c 6f20776f"
    "726c6421 007e7e7e")
RESULT_STRING_COLOUR = h(
    "00000064 00007001 00000000 6b01024b 0002cb1d 00000002 0740001f 00000001"
    "00000001 ffffffff 00000014 07400005 00000003 00000000 00000000 00000069"
    "00000001 000000ce 00000002 00000133 06000011 68756c6c 6f20776f 726c6421"
    "007e7e7e")
RESULT_ERRORS = h(
    "00000044 00007001 00000000 6b010205 0002ba89 00000004 0740000a 00000001"
    "00000000 ffffffff 00000001 0740ffff 00000000 0c800001 ffffcf9e ffffffff"
    "ffffcf9e")
STORE_INSITU = h(
    "0000002c 00007001 00000000 6b0101e8 00015ad0 00000001 07400024 00000001"
    "00000000 ffffffff 0000002a")
STORE_DOUBLE = h(
    "00000038 00007001 00000000 00000000 00000000 00000001 0740001d 00000001"
    "00000001 ffffffff 0000000b 0500000c 400c0000 00000000")


def highres_types() -> bytes:
    """HIGHRES_RESULT with the value blocks listed in 11.3 (one DPTR value each) plus
    the INSITU ulong, a numval 0 set and two per-metric errors."""
    blocks = [
        h("0200000c 00000000 00000001"),                      # 64: 1
        h("0500000c 3ff00000 00000000"),                      # DOUBLE 1.0
        h("04000008 3f800000"),                               # FLOAT 1.0
        h("07000010") + b"hullo world!",                      # AGGREGATE
        h("06000005 007e7e7e"),                               # STRING ""
        h("07000004"),                                        # AGGREGATE empty
    ]
    nsets = len(blocks) + 4
    sets_len = len(blocks) * 20 + 20 + 8 * 3
    off = 32 + sets_len
    sets = b""
    for i, b in enumerate(blocks):
        sets += be(0x07400010 + i, 1, 1, 0xFFFFFFFF, off // 4)
        off += len(b)
    sets += h("0740005d 00000001 00000000 ffffffff 00000001")
    sets += be(0x07400070, 0) + be(0x07400071, 0xFFFFCFBA) + be(0x07400072, 0xFFFFCFC2)
    body = be(nsets, 0, 0x6B0101DD, 0, 0x2309E47A) + sets + b"".join(blocks)
    return be(12 + len(body), 0x7015, 0) + body


# ---- small replies (11.1, 11.2, 11.4, 11.5 and section 5 layouts) -------------------
GREETING = h("00000014 00007000 00000000 00000000 02010e44")
ERROR_NAME = h("00000010 00007000 00000000 ffffcfbb")
STORE_OK = h("00000010 00007000 00000000 00000000")
PMNS_IDS_ONE = h("00000018 0000700d 00000000 00000001 00000001 0740001f")
PMNS_IDS_PARTIAL = h(
    "00000020 0000700d 00000000 00000002 00000003 0740000a ffffffff 07400019")
ATTR_SASL = h(
    "00000029 00007011 00000000 00000000 504c4149 4e204c4f 47494e20 53435241"
    "4d2d5348 412d3235 36")
# 11.5 elides the middle of the JSON; the machineid below is a stand-in with the
# right length (32 hex digits), so every offset and the 159-byte length are the live ones.
LABEL_JSON = (b'{"domainname":"localdomain","hostname":"vm",'
              b'"machineid":"3d120123456789abcdef01234567fda4"}')
assert len(LABEL_JSON) == 91
LABEL_CONTEXT = h(
    "0000009f 00007013 00000000 ffffffff 00000001 00000000 00000001 ffffffff"
    "00000003 00000044 0000005b 00020a01 000e000d 001d0801 00270004 002d0901"
    "00380022") + LABEL_JSON
assert len(LABEL_CONTEXT) == 159


def descs_partial() -> bytes:
    """DESCS for [29.0.10, 50.0.1, 29.0.5]: the middle one failed (PM_ID_NULL, zeros)."""
    d1 = be(0x0740000A, 1, 0xFFFFFFFF, 3, 0x00000000)
    d2 = be(0xFFFFFFFF, 0, 0, 0, 0)
    d3 = be(0x07400005, 0, 0x07400001, 3, 0x00000000)
    return pdu(0x7017, be(3) + d1 + d2 + d3)


def desc() -> bytes:
    return pdu(0x7005, be(0x0740001F, 6, 0xFFFFFFFF, 4, 0))


def instance() -> bytes:
    body = be(0x07400001, 3)
    for i, name in enumerate([b"red", b"green", b"blue"]):
        body += be(i, len(name)) + name + b"\0" * (-len(name) % 4)
    return pdu(0x7007, body)


def text() -> bytes:
    t = b"Hello world metric"
    return pdu(0x7009, bytes.fromhex("05004007") + be(len(t)) + t + b"\0" * (-len(t) % 4))


def pmns_names(status: bool) -> bytes:
    names = [b"sample.long.one", b"sample.long.ten", b"sample.long.hundred"]
    body = be(sum(len(n) + 1 for n in names), len(names) if status else 0, len(names))
    for i, n in enumerate(names):
        if status:
            body += be(i & 1)
        body += be(len(n)) + n + b"~" * (-len(n) % 4)
    return pdu(0x700E, body)


# ---- encoder harness inputs: op byte, then the bytes the harness consumes ---------
def encode_seeds() -> dict:
    seeds = {}
    # op 0 CREDS, 1 ATTR, 2 PROFILE, 3 FETCH, 4 HIGHRES_FETCH, 5 DESC_REQ, 6 IDS,
    # 7 INSTANCE_REQ, 8 TEXT_REQ, 9 PMNS_NAMES, 10 PMNS_NODE, 11 LABEL_REQ, 12 STORE
    seeds["creds"] = bytes([0]) + be(0x335F, 0x40)
    seeds["attr"] = bytes([1]) + be(0, 15) + bytes([3]) + b"foo"
    seeds["profile"] = bytes([2]) + be(0, 0, 0) + bytes([1]) + be(0x07400001, 1) + \
        bytes([2]) + be(0, 2)
    seeds["fetch"] = bytes([3]) + be(0, 0) + bytes([2]) + be(0x0740001F, 0x07400005)
    seeds["pmns_names"] = bytes([9]) + be(0) + bytes([3, 15, 14, 17]) + \
        b"sample.long.one" + b"no.such.metric" + b"sample.double.one"
    seeds["label_req"] = bytes([11]) + be(0, 0xFFFFFFFF, 1)
    # STORE: numpmid, then per set numval/valfmt/pmid, per value inst/lval/vtype/plen,
    # then the payload; see fuzz_encode.c:fuzz_store.
    seeds["store_insitu"] = bytes([12]) + be(0, 0x6B0101E8, 0x15AD0) + bytes([1]) + \
        bytes([1, 0]) + be(0x07400024) + be(0xFFFFFFFF, 42) + bytes([0, 0])
    seeds["store_double"] = bytes([12]) + be(0, 0, 0) + bytes([1]) + bytes([1, 1]) + \
        be(0x0740001D) + be(0xFFFFFFFF, 0) + bytes([5, 8]) + struct.pack("<d", 3.5)
    seeds["store_mixed"] = bytes([12]) + be(0, 1, 2) + bytes([2]) + bytes([2, 1]) + \
        be(0x07400010) + be(0, 0) + bytes([6, 6]) + be(1, 0) + bytes([3, 8]) + \
        bytes([1, 0]) + be(0x07400005) + be(5, 7) + bytes([0, 0]) + \
        b"hullo\0" + struct.pack("<Q", 1 << 40) + b"xx"
    return seeds


def write_seeds() -> dict:
    """fuzz_write programs (see fuzz_write.c): version byte, then ops."""
    def put(slot: int, inst: int, text: bytes) -> bytes:
        out = bytes([0, slot])
        if slot < 8:                        # slots 8.. are singular: no instance word
            out += be(inst)
        return out + bytes([len(text)]) + text

    encode = bytes([2]) + be(1700000000, 250000000)
    seeds = {}
    values = [(0, b"-42"), (1, b"4294967295"), (2, b"-9223372036854775808"),
              (3, b"18446744073709551615"), (4, b"1.5"), (5, b"-2.5e-300"), (6, b"hullo"),
              (7, b"x")]
    for version in (2, 3):
        prog = bytes([version & 1])
        for slot, text in values:
            prog += put(slot, 5, text) + put(slot, 1, text) + put(slot + 8, 0, text)
        seeds["values_v%d" % version] = prog + encode + put(0, 3, b"12 ") + encode
    # a pmiPutResult value set: pmid, numval byte (-> 2 values), valfmt DPTR, then per
    # value inst, vtype byte (5 DOUBLE), lval
    seeds["result_set"] = bytes([1, 1]) + be(0x0740001D) + bytes([3, 1]) + \
        be(7) + bytes([5]) + struct.pack(">d", 3.5) + be(0) + \
        be(2) + bytes([6, 5]) + b"hullo" + be(0) + encode
    # a frame: 2 metrics x 3 rows
    seeds["frame"] = bytes([1, 3, 2, 3]) + bytes([2]) + be(0x0740001D) + bytes([5]) + \
        bytes(range(48)) + bytes([1]) + bytes([1, 0, 1, 1, 1, 0]) + bytes([1] * 6) + \
        b"abcdefg" + bytes([1]) + be(0x07400005) + bytes([6]) + bytes(24) + bytes([0]) + \
        bytes([3, 0, 5]) + b"abcdefgh" + be(10, 0, 11, 500, 12, 999999999)
    seeds["metadata"] = bytes([0, 4, 11]) + b"host\0x\0y\0zz" + be(1700000000, 7, 1, 2) + \
        bytes([3, 2]) + be(*range(15))
    return seeds


# ---- event arrays (docs events.md section 9: the QA archive eventrec's values) -----
EVENT_RECORDS = h(
    "09000128 00000005 546402b9 00087bb3 0000001a 00000003 0740007f 01000008"
    "00000004 07400083 0300000c 00000000 00000005 07400086 06000005 36000000"
    "546402ba 00087bb3 00000001 00000003 0740007f 01000008 00000007 07400085"
    "0500000c 40200000 00000000 07400085 0500000c c0220000 00000000 546402bb"
    "00087bb3 00000004 00000006 0740007f 01000008 0000000a 07400083 0300000c"
    "00000000 0000000b 07400086 0600000a 7477656c 7665ffff 07400086 0600000c"
    "74686972 7465656e 07400080 00000008 fffffff2 07400081 01000008 0000000f"
    "546402bc 00087bb3 80000000 00000007 546402bd 00087bb3 00000001 00000003"
    "0740007f 01000008 00000010 07400084 04000008 c1880000 07400087 0700000c"
    "0103070f 1f3f7fff")
HIGHRES_RECORDS = h(
    "0a000058 00000002 00000000 546402c3 00000000 21230060 00000001 00000001"
    "07400086 0600000c 66657463 68202330 00000000 546402c3 00000000 21230060"
    "00000001 00000001 07400086 0600000a 62696e67 6f210000")
HIGHRES_MISSED = h(
    "0a000024 00000001 00000000 6b0102e1 00000000 36b00b98 80000000 00000000"
    "0740007f 01000008")


def event_seeds() -> dict:
    """Control byte (bit 0 highres, bit 4 several blocks) then the buffer."""
    two = EVENT_RECORDS + HIGHRES_RECORDS
    spec = struct.pack(">HHHH", 0, len(EVENT_RECORDS), len(EVENT_RECORDS), len(HIGHRES_RECORDS))
    return {
        "records": b"\x00" + EVENT_RECORDS,
        "highres_records": b"\x01" + HIGHRES_RECORDS,
        "highres_missed": b"\x01" + HIGHRES_MISSED,
        "empty": b"\x00" + h("09000008 00000000"),
        "two_blocks": bytes([0x10 | (1 << 1)]) + spec + two,
        "pdu": bytes([0x21]) + events_pdu(),
    }


def events_pdu() -> bytes:
    """HIGHRES_RESULT: sample.event.records (2 instances) and highres_records."""
    fixed = 12 + 20
    sets = 8 + 4 + 16 + 8 + 4 + 8
    first = (fixed + sets) // 4
    body = be(0x07400088, 2, 2, 0, first, 1, first + len(EVENT_RECORDS) // 4)
    body += be(0x0740008B, 1, 2, 0xFFFFFFFF, first + (len(EVENT_RECORDS) + 8) // 4)
    blocks = EVENT_RECORDS + h("09000008 00000000") + HIGHRES_RECORDS
    head = be(2, 0, 0x6b0102e1, 0, 0x36b00b98)
    return pdu(0x7015, head + body + blocks)


def column_seeds() -> dict:
    """fuzz_columns: the fuzz_archive volumes behind selections of metrics they hold
    (strings, doubles, floats, 32-bit words, an event array read as an aggregate), with
    small staging areas, few rows per chunk, windows and pauses."""
    def ctrl(shape: int, room: int, window: int, sec: int, sel: list) -> bytes:
        out = bytes([shape, room, window]) + be(sec)
        for t, pmid in (sel + [(0, 0)] * 4)[:4]:
            out += bytes([t]) + be(pmid)
        return out
    seeds = {}
    for name in ("a1-volume", "a1v3-volume"):
        vol = (SEEDS / "fuzz_archive" / name).read_bytes()
        head, body = vol[:1], vol[1:]
        # type codes: low nibble 0..7 = 32 U32 64 U64 FLOAT DOUBLE STRING AGGREGATE,
        # 8+ = EVENT; bits 4-5 columns known up front
        sel = [(6, 0x7400099), (5 | 0x20, 0x7400072), (4, 0xF000800), (1, 0x800C00)]
        seeds[name + "-mixed"] = head + ctrl(3 | 3 << 3, 8, 0, 0, sel) + body
        seeds[name + "-drop"] = head + ctrl(3 | 4 | 0 << 3, 0, 0x31, 0x6b0129cc,
                                            [(7, 0x740008B), (2, 0x7400088)] + sel[:2]) + body
        seeds[name + "-window"] = head + ctrl(1 | 7 << 3, 63, 0x0B, 0x6b0129cc,
                                              [(0x30 | 5, 0x7400072), (8, 0x740008B)]) + body
    return seeds


def interp_seeds() -> dict:
    """fuzz_interp: records of the pmlogger fuzz_archive volumes behind control blocks
    declaring metrics of several types and semantics, then fetch scripts forwards and
    backwards."""
    seeds = {}
    for name in ("pmlogger2-volume", "pmlogger3-volume", "a1-volume", "a1v3-volume"):
        vol = (SEEDS / "fuzz_archive" / name).read_bytes()
        version, data = vol[0], vol[1:]
        pos = struct.unpack(">I", data[:4])[0]      # after the label record
        records = b""
        for _ in range(6):
            if pos + 4 > len(data):
                break
            n = struct.unpack(">I", data[pos:pos + 4])[0]
            if n < 8 or pos + n > len(data):
                break
            records += be(n) + data[pos:pos + n] + b"\x01"
            pos += n
        for variant, (wrap, metrics) in enumerate([
                (0, [(0, 1, 0, 0x00), (1, 3, 0, 0x00), (2, 6, 1, 0x84)]),
                (1, [(3, 2, 0, 0xC5), (4, 4, 2, 0x00), (5, 7, 0, 0x83), (6, 0, 1, 0xE2)])]):
            ctrl = bytes([1 if version == 3 else 0, len(metrics) - 1, wrap])
            for pick, type_, sem, shape in metrics:
                ctrl += bytes([pick, type_ + 1, sem, shape])
                if shape & 0x80:
                    for i in range(shape % 6):
                        ctrl += bytes([i]) + (bytes([2 * i + 2]) if shape & 0x40 else b"") + \
                            (bytes([40]) if shape & 0x20 else b"")
            ctrl = (ctrl + bytes(64))[:64]
            script = b""
            for t, direction, how in ((2, 1, 0x10), (3, 1, 0x04), (5, 0, 0x15), (1, 1, 0x0e)):
                script += bytes([3, 0, 1, 0xFF, t, direction, how, 1, 2, 1, 3, 5, 7, 9, 11])
            seeds["%s-%d" % (name, variant)] = ctrl + records[:-1] + b"\x00" + script
    return seeds


def interp_steps_seeds() -> dict:
    """fuzz_interp_steps: the pmlogger fuzz_archive volumes (label and records) behind
    control blocks: one volume or split in two or three, forwards and backwards, grids
    of a few rows at several deltas."""
    seeds = {}
    for name in ("pmlogger2-volume", "pmlogger3-volume", "a1-volume", "a1v3-volume"):
        vol = (SEEDS / "fuzz_archive" / name).read_bytes()
        version, data = vol[0], vol[1:]
        label_len = struct.unpack(">I", data[:4])[0]
        for variant, (nvols, back, types, grid) in enumerate([
                (1, 0, (0x00, 0x09, 0x12, 0x05), (1, 0x04, 5, 30)),
                (2, 0, (0x83, 0x0a, 0x16, 0x07), (2, 0x11, 4, 12)),
                (3, 1, (0x02, 0x0b, 0x0c, 0x0d), (6, 0x08, 3, 20))]):
            flags = (1 if version == 3 else 0) | (nvols - 1) << 1 | back << 3
            ctrl = bytes([flags, label_len >> 8, label_len & 0xFF, 3])
            for t in types:
                ctrl += bytes([t, 0])
            ctrl += bytes(grid)
            seeds["%s-%d" % (name, variant)] = ctrl + data
    return seeds


def _records_upto(data: bytes, start: int, limit: int) -> bytes:
    """data[:end]: whole records (length word, body, length word) from `start` while
    they fit in `limit` bytes."""
    end = start
    while end + 4 <= len(data):
        n = struct.unpack(">I", data[end:end + 4])[0]
        if n < 8 or end + n > len(data) or end + n > limit:
            break
        end += n
    return data[:end]


def archive_fragments(base: str, name: str, limit: int = 16384) -> dict:
    """fuzz_archive seeds from a real pmlogger archive: its label and the whole records
    of the first `limit` bytes of its .meta and first volume, and its .index, each behind
    the version byte the harness reads first. Whole archives reach code the small
    synthetic seeds do not (text and label records, indom deltas, string and event
    values); these fragments bring that coverage at a fraction of the size."""
    meta = pathlib.Path(base + ".meta").read_bytes()
    version = meta[7]
    label_len = struct.unpack(">I", meta[:4])[0]
    vol = pathlib.Path(base + ".0").read_bytes()
    out = {name + "-meta": bytes([version]) + _records_upto(meta, label_len, limit),
           name + "-volume": bytes([version]) + _records_upto(vol, label_len, limit)}
    index = pathlib.Path(base + ".index")
    if index.exists():
        out[name + "-index"] = bytes([version]) + index.read_bytes()[:limit]
    return out


def convert_seeds() -> dict:
    """fuzz_convert: a control block (valfmt, itype, otype, vtype, word, a 64-bit number)
    then a payload or a HIGHRES_RESULT; strings that parse as numbers or nearly."""
    def ctl(valfmt: int, itype: int, otype: int, vtype: int, word: int, num: int) -> bytes:
        return bytes([valfmt, itype & 0xFF, otype, vtype]) + struct.pack(">IQ", word, num)
    out = {
        "string_hex": ctl(1, 6, 0, 6, 0, 3) + b"-0x1F\0",
        "string_float": ctl(1, 6, 4, 6, 0, 10) + b"1.5e-40",
        "string_long": ctl(1, 6, 2, 6, 0, 7) + b" 99999999999999999999" * 4,
        "u64_block": ctl(1, 3, 0, 3, 0, 1024) + struct.pack(">Q", 2**63 + 5),
        "double_block": ctl(1, 5, 1, 0, 0, 0x7FF8000000000000) + struct.pack(">d", -2.5),
        "float_insitu": ctl(0, 4, 3, 0, 0x4F800000, 0xFFFFFFFFFFFFFFFF),
        "highres_types": ctl(1, 3, 6, 3, 7, 1) + highres_types(),
        "highres_string": ctl(2, 6, 5, 6, 1, 2) + HIGHRES_STRING,
    }
    return out


def printvalue_seeds() -> dict:
    """fuzz_printvalue: a plan (see the harness) before a RESULT or HIGHRES_RESULT."""

    def plan(highres: int, sets: list, room: int) -> bytes:
        body = bytes([highres | (len(sets) << 1)])
        for index, mtype, names_first, names_count in sets:
            # head "    1.2.3 (a.b):" is bytes 0..16 of the harness's head pool
            body += bytes([index, mtype + 1, 0, 16, names_first & 0xFF, names_count & 0xFF])
        return body + bytes([room])

    return {
        "string_colour": plan(0, [(0, 6, 0, 3)], 200) + RESULT_STRING_COLOUR,
        "string_small_room": plan(0, [(0, 6, -1, -1)], 8) + RESULT_STRING_COLOUR,
        "highres_string": plan(1, [(0, 6, 0, 8)], 255) + HIGHRES_STRING,
        "errors": plan(0, [(0, 0, -1, -1), (1, 3, 0, 2)], 255) + RESULT_ERRORS,
        "types": plan(1, [(i, t, 0, 8) for i, t in enumerate((0, 1, 2, 3, 4, 5, 6))], 255)
        + highres_types(),
    }


def derived_chunk_seeds() -> dict:
    """fuzz_derived_chunk: valid programs (post-order, parents linked) over one int32
    operand, pmid 1, of 3 columns and 4 rows, taken as two chunks of 2 rows (the
    harness's reading order: header, nodes, operand, times, columns, split)."""
    def node(op: int, type_: int, left: int, right: int, parent: int, pmid: int = 0,
             save_last: int = 0, const: int = 0, filter_: int = 0,
             table: tuple = ()) -> bytes:
        constant = op in (1, 16)            # singular: no instance domain
        return bytes([op - 1, type_ + 1, left & 0xFF, right & 0xFF, parent & 0xFF,
                      int(constant), 1, 1, pmid, save_last, type_ + 1, 0, 1, 1, 0, 7]) + \
            struct.pack(">II", 0, const) + bytes([filter_, 0, 0, 0, len(table)]) + \
            b"".join(bytes([inst + 1, match]) for inst, match in table)

    def program(nodes: list) -> bytes:
        head = bytes([len(nodes) - 1, 0, 4, 3])
        operand = bytes([3, 1, 0, 1, 2, 3]) + b"".join(struct.pack("<q", v) for v in
                                                        range(10, 130, 10)) + bytes([1] * 12)
        times = b"".join(struct.pack(">I", 1000 * k) for k in range(4))
        columns = bytes([1, 4, 2]) + bytes([1, 2, 3, 0, 0])
        return head + b"".join(nodes) + operand + times + columns + bytes([2])
    return {
        # x + 5
        "plus": program([node(2, 0, -1, -1, 2, pmid=1), node(1, 0, -1, -1, 2, const=5),
                         node(3, 0, 0, 1, -1)]),
        # delta(x)
        "delta": program([node(2, 0, -1, -1, 1, pmid=1, save_last=1),
                          node(9, 0, 0, -1, -1)]),
        # x ? rate(x) : 1.5
        "rate_quest": program([node(2, 0, -1, -1, 5, pmid=1),
                               node(2, 0, -1, -1, 2, pmid=1, save_last=1),
                               node(14, 5, 1, -1, 4), node(16, 5, -1, -1, 4),
                               node(28, 5, 2, 3, 5), node(27, 5, 0, 4, -1)]),
        # matchinst(/.../, x): instances 0 and 2 match
        "matchinst": program([node(33, 0, -1, -1, 2), node(2, 0, -1, -1, 2, pmid=1),
                              node(32, 0, 0, 1, -1, filter_=2,
                                   table=((0, 1), (1, 0), (2, 1)))]),
    }


def derived_program_seeds() -> dict:
    """fuzz_derived_program: programs the compiler makes (post-order, parents linked)
    over pmids 1 and 2, each run over three fetches of two 32-bit sets of 3 values."""
    nodes_of = {
        # x + 1
        "plus": [(2, 0, -1, -1, 2), (1, 0, -1, -1, 2), (3, 0, 0, 1, -1)],
        # x > 0 ? x : -x
        "quest": [(2, 0, -1, -1, 2), (1, 0, -1, -1, 2), (21, 1, 0, 1, 7),
                  (2, 0, -1, -1, 6), (2, 0, -1, -1, 5), (26, 0, 4, -1, 6),
                  (28, 0, 3, 5, 7), (27, 0, 2, 6, -1)],
        # matchinst(/x/, x) * 2
        "matchinst": [(33, 0, -1, -1, 2), (2, 0, -1, -1, 2), (32, 0, 0, 1, 4),
                      (1, 0, -1, -1, 4), (5, 0, 2, 3, -1)],
        # rate(x), delta(y)
        "rate": [(2, 0, -1, -1, 1), (14, 5, 0, -1, -1)],
        "delta": [(2, 0, -1, -1, 1), (9, 0, 0, -1, -1)],
        # count(x[i])
        "count_exact": [(33, 0, -1, -1, 2), (2, 0, -1, -1, 2), (32, 0, 0, 1, 3),
                        (8, 1, 2, -1, -1)],
    }
    filters = {"matchinst": 2, "count_exact": 1}

    def node(op, type_, left, right, parent, name):
        pmid = 2 if name == "delta" else 1
        save = 1 if name in ("rate", "delta") and op == 2 else 0
        constant = struct.pack(">II", 0, 1)
        return bytes([op - 1, type_ + 1, left & 0xFF, right & 0xFF, parent & 0xFF, 1, 1, 1, pmid,
                      save, type_ + 1, 1 if op == 21 else 0, 1, 1, 0, 7]) + constant + \
            bytes([filters.get(name, 0) if op == 32 else 0])

    def result(sec):
        out = bytes([1, 6, sec]) + be(0) + bytes([0])
        for pmid in (1, 2):
            out += bytes([pmid, 3 + 2, 0, 0])
        for k in range(6):
            out += bytes([k % 3 + 1, 0]) + struct.pack(">Q", 10 * sec + k) + be(k) + \
                bytes([0, 0])
        return out

    seeds = {}
    for name, nodes in nodes_of.items():
        body = bytes([len(nodes) - 1]) + b"".join(node(*n, name) for n in nodes) + bytes([1])
        body += b"".join(result(sec) + bytes([1, 1, 1, 0, 1, 1]) for sec in (1, 2, 3))
        seeds[name] = body
    return seeds


def exchange_seeds() -> dict:
    """fuzz_exchange: byte 0 the buffer's size in 16s (+12), byte 1 the guessed result
    sizes, byte 2 highres; then what pmcd sends."""
    def seed(cap16: int, sizes: int, highres: int, wire: bytes) -> bytes:
        return bytes([cap16, sizes, highres]) + wire

    return {
        "result_whole": seed(255, 0x11, 0, RESULT_STRING_COLOUR),
        "result_resize": seed(255, 0x00, 0, RESULT_STRING_COLOUR),
        "result_cut_by_buffer": seed(1, 0x11, 0, RESULT_STRING_COLOUR),
        "highres_whole": seed(255, 0x11, 1, HIGHRES_STRING),
        "result_errors": seed(255, 0x33, 0, RESULT_ERRORS),
        "error_then_result": seed(255, 0x11, 0, ERROR_NAME + RESULT_STRING_COLOUR),
        "greeting": seed(4, 0, 0, GREETING),
        "header_only": seed(0, 0, 0, GREETING[:12]),
        # the metadata calls' replies, with room for their items (0x0f) and without (0x01)
        "pmns_ids": seed(255, 0x0f, 0, PMNS_IDS_ONE),
        "pmns_names": seed(255, 0x0f, 0, pmns_names(False)),
        "pmns_names_status_short": seed(255, 0x01, 0, pmns_names(True)),
        "text": seed(255, 0x0f, 0, text()),
        "desc": seed(255, 0x0f, 0, desc()),
        "instance": seed(255, 0x0f, 0, instance()),
        "instance_short": seed(255, 0x01, 0, instance()),
    }


def main() -> None:
    import sys
    if len(sys.argv) == 4 and sys.argv[1] == "--from-archive":
        # python3 make_seeds.py --from-archive BASE NAME: add fragments of a pmlogger archive
        d = SEEDS / "fuzz_archive"
        for fname, data in archive_fragments(sys.argv[2], sys.argv[3]).items():
            (d / fname).write_bytes(data)
        return
    corpora = {
        "fuzz_columns": column_seeds(),
        "fuzz_interp": interp_seeds(),
        "fuzz_interp_steps": interp_steps_seeds(),
        "fuzz_events": event_seeds(),
        "fuzz_result": {
            "highres_string": HIGHRES_STRING,
            "result_string_colour": RESULT_STRING_COLOUR,
            "result_errors": RESULT_ERRORS,
            "store_insitu": STORE_INSITU,
            "store_double": STORE_DOUBLE,
            "highres_types": highres_types(),
        },
        "fuzz_pdu": {
            "greeting": GREETING,
            "error_name": ERROR_NAME,
            "store_ok": STORE_OK,
            "pmns_ids_one": PMNS_IDS_ONE,
            "pmns_ids_partial": PMNS_IDS_PARTIAL,
            "attr_sasl": ATTR_SASL,
            "label_context": LABEL_CONTEXT,
            "descs_partial": descs_partial(),
            "desc": desc(),
            "instance": instance(),
            "text": text(),
            "pmns_names": pmns_names(False),
            "pmns_names_status": pmns_names(True),
        },
        "fuzz_encode": encode_seeds(),
        "fuzz_exchange": exchange_seeds(),
        "fuzz_convert": convert_seeds(),
        "fuzz_write": write_seeds(),
        "fuzz_derived_chunk": derived_chunk_seeds(),
        "fuzz_printvalue": printvalue_seeds(),
        "fuzz_derived_program": derived_program_seeds(),
    }
    for harness, files in corpora.items():
        d = SEEDS / harness
        d.mkdir(parents=True, exist_ok=True)
        for old in d.glob("*.seed"):     # only what this script made: corpus finds stay
            old.unlink()
        for name, data in files.items():
            (d / (name + ".seed")).write_bytes(data)
    print("wrote", sum(len(f) for f in corpora.values()), "seeds under", SEEDS)


if __name__ == "__main__":
    main()
