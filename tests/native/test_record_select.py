"""csrc/result_select.c's pcp_archive_record_select: pmFetch's result made straight from
an archive record must be what decoding the whole record and selecting from it gives
(pcp_archive_record_decode, then pcp_result_select: the path the archive context took
before), payloads included, for every record of pmlogger archives (v2 and v3, strings,
aggregates, events, marks) under several requests and profiles; and a malformed record
gives PM_ERR_LOGREC, never a read outside it (the libFuzzer harness fuzz_result goes
further)."""
import random

import pytest

from pcp._archive.reader import Archive
from pcp._decode.result import FlatResult, ProfileFilter, ResultRoom, SelectRequest
from pcp._native import ffi, lib
from support import archives

PCP_SELECT_NEED_ROOM = 2
PM_ERR_LOGREC = -12373
PM_ERR_PMID_LOG = -12378


def records(base):
    """(bytes, version, pmids) of every data record of an archive's volumes."""
    arch = Archive(base, 0)
    arch.open()
    out = []
    try:
        for vol in range(arch.minvol, arch.maxvol + 1):
            sts, mapped, pos = arch.open_volume(vol)
            if sts < 0 or mapped is None:
                continue
            while True:
                sts, pos, rec = arch.read_at(mapped, pos, False)
                if sts != 0 or rec is None:
                    break
                raw = mapped.slice(rec.off, rec.off + rec.length)
                pmids = FlatResult.from_log_record(raw, rec.version).pmid if rec.numpmid else []
                out.append((raw, rec.version, pmids))
    finally:
        arch.close()
    return out


def two_step(raw, version, request, profile):
    """The old path: the whole record decoded, then selected."""
    whole = FlatResult.from_log_record(raw, version)
    need = lib.pcp_result_select(whole.c, request.c, profile.c, ffi.NULL)
    if need < 0:
        return need
    c, mem = FlatResult.columns(request.npmids, need)
    found = lib.pcp_result_select(whole.c, request.c, profile.c, c)
    if found < 0:
        return found
    return found, FlatResult.wrap(c, mem, whole.pdu)


def fused(raw, version, request, profile, room):
    buf = ffi.from_buffer("uint8_t[]", raw)
    try:
        flat = FlatResult.select_record(buf, len(raw), version, request, profile, room,
                                        even_if_absent=True)
    except Exception as err:  # pmErr
        return err.args[0]
    found = lib.pcp_archive_record_select(buf, len(raw), version, request.c, profile.c,
                                          flat.c, room.data, room.nbytes, *room.need)
    return found, flat


def content(flat):
    """Everything a caller can see of a result, payloads by value."""
    sets = []
    for i in range(flat.numpmid):
        first, n = flat.first[i], flat.numval[i]
        values = [(flat.inst[k], flat.vtype[k], flat.ival[k], flat.dval[k],
                   flat.payload(k) if flat.vtype[k] >= 0 else b"")
                  for k in range(first, first + max(n, 0))]
        sets.append((flat.pmid[i], n, flat.valfmt[i], values))
    return (flat.sec, flat.nsec, flat.numpmid, flat.nvalues, sets)


def requests(pmids, rng):
    """Requests over a record's pmids: all, reversed, a sample with duplicates and
    pmids the record lacks, one alone; some with an unknown descriptor."""
    pool = sorted(set(pmids)) or [1]
    sample = rng.sample(pool, min(len(pool), 5)) + [0x7FFFFFFF, pool[0]]
    yield pool, [0xFFFFFFFF] * len(pool)
    yield pool[::-1], [7] * len(pool)
    yield sample, [rng.choice([7, 0xFFFFFFFF]) for _ in sample]
    yield [pool[-1]], [None]


PROFILES = [(True, []), (False, []), (True, [(7, False, [0, 1, 5, -1])]),
            (False, [(7, True, [1, 2, 3, 100])])]


@pytest.mark.pmcd
@pytest.mark.parametrize("variant", ["v2", "v3", "marks", "mv"])
def test_fused_select_is_decode_then_select(variant):
    corpus = archives.get_corpus()
    rng = random.Random(variant)
    room = ResultRoom()
    checked = 0
    for raw, version, pmids in records(corpus[variant]):
        for pmid_list, indoms in requests(pmids, rng):
            request = SelectRequest(pmid_list, indoms)
            for include, entries in PROFILES:
                profile = ProfileFilter(include, entries)
                old = two_step(raw, version, request, profile)
                new = fused(raw, version, request, profile, room)
                if isinstance(old, int):
                    assert new == old
                    continue
                assert new[0] == old[0]
                assert content(new[1]) == content(old[1])
                checked += 1
    assert checked > 100


def test_room_protocol_and_malformed_records():
    corpus_free = _tiny_record()
    request = SelectRequest([5, 6], [0xFFFFFFFF, 0xFFFFFFFF])
    profile = ProfileFilter(True, [])
    buf = ffi.from_buffer("uint8_t[]", corpus_free)
    nvalues, nbytes = ffi.new("int32_t *"), ffi.new("int64_t *")
    # no room: sized, nothing filled
    c, _mem = FlatResult.columns(2, 0)
    assert lib.pcp_archive_record_select(buf, len(corpus_free), 2, request.c, profile.c, c,
                                         ffi.NULL, 0, nvalues, nbytes) == PCP_SELECT_NEED_ROOM
    assert (nvalues[0], nbytes[0]) == (2, 8)
    c, _mem = FlatResult.columns(2, 2)
    data = ffi.new("uint8_t[]", 8)
    assert lib.pcp_archive_record_select(buf, len(corpus_free), 2, request.c, profile.c, c,
                                         data, 8, nvalues, nbytes) == 1
    assert (c.numval[0], c.numval[1], c.ival[0], c.ival[1], nbytes[0]) == (1, 1, 42, 1 << 40, 8)
    assert bytes(ffi.buffer(data, 8)) == (1 << 40).to_bytes(8, "big")
    # every truncation and a damaged count: PM_ERR_LOGREC, no read beyond the bytes
    for cut in range(len(corpus_free)):
        short = ffi.new("uint8_t[]", corpus_free[:cut] or b"\0")
        sts = lib.pcp_archive_record_select(short, cut, 2, request.c, profile.c, c, data, 8,
                                            nvalues, nbytes)
        assert sts in (PM_ERR_LOGREC, PCP_SELECT_NEED_ROOM, 0, 1)
    bad = bytearray(corpus_free)
    bad[12:16] = (1000).to_bytes(4, "big")      # numpmid far beyond the record
    bad_c = ffi.from_buffer("uint8_t[]", bytes(bad))
    assert lib.pcp_archive_record_select(bad_c, len(bad), 2, request.c, profile.c, c, data, 8,
                                         nvalues, nbytes) == PM_ERR_LOGREC


def _tiny_record() -> bytes:
    """A v2 record: pmid 5 with one INSITU value 42, pmid 6 with one U64 block."""
    be = lambda v: (v & 0xFFFFFFFF).to_bytes(4, "big")      # noqa: E731
    sets = (be(5) + be(1) + be(0) + be(-1) + be(42)
            + be(6) + be(1) + be(1) + be(-1) + be(0))
    head_len = 4 + 8 + 4            # length word, timeval, numpmid
    block_word = (head_len + len(sets) + 8) // 4   # DPTRs count from a PDU header
    sets = sets[:-4] + be(block_word)
    block = be((3 << 24) | 12) + (1 << 40).to_bytes(8, "big")
    body = be(1000) + be(0) + be(2) + sets + block
    total = 4 + len(body) + 4
    return be(total) + body + be(total)
