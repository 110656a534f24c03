"""Builders for archive bytes (archive-format.md sections 4-9), used by the decoder tests
to make exact records, and damaged ones, without pmlogger."""

import struct
from typing import List, Optional, Sequence, Tuple


def be(*words: int) -> bytes:
    return b"".join(struct.pack(">I", w & 0xFFFFFFFF) for w in words)


def frame(body: bytes) -> bytes:
    """A record: length, body, length again."""
    n = len(body) + 8
    return be(n) + body + be(n)


def stamp(version: int, sec: int, nsec: int) -> bytes:
    if version == 3:
        return be(sec & 0xFFFFFFFF, sec >> 32, nsec)
    return be(sec, nsec // 1000)


def label(version: int, vol: int, sec: int = 1700000000, nsec: int = 123456000,
          pid: int = 4242, host: bytes = b"testhost", tz: bytes = b"UTC",
          zone: bytes = b":Etc/UTC", features: int = 0) -> bytes:
    if version == 2:
        body = (be(0x50052602, pid) + stamp(2, sec, nsec) + be(vol)
                + host.ljust(64, b"\0")[:64] + tz.ljust(40, b"\0")[:40])
    else:
        body = (be(0x50052603, pid) + stamp(3, sec, nsec) + be(vol, features, 0)
                + host.ljust(256, b"\0") + tz.ljust(256, b"\0") + zone.ljust(256, b"\0"))
    return frame(body)


Value = Tuple[int, object]      # (inst, int for INSITU, or (vtype, payload bytes))


def data_record(version: int, sec: int, nsec: int,
                sets: Sequence[Tuple[int, int, int, Sequence[Value]]]) -> bytes:
    """sets: (pmid, numval, valfmt, values); numval <= 0 sets carry no values."""
    fixed = 16 if version == 2 else 20
    head = stamp(version, sec, nsec) + be(len(sets))
    set_bytes = sum(8 if numval <= 0 else 12 + 8 * len(values)
                    for _, numval, _, values in sets)
    blocks = b""
    body_sets = b""
    block_at = fixed + set_bytes            # record offset of the first block
    for pmid, numval, valfmt, values in sets:
        body_sets += be(pmid, numval)
        if numval <= 0:
            continue
        body_sets += be(valfmt)
        for inst, v in values:
            if valfmt == 0:
                body_sets += be(inst, v)    # type: ignore[arg-type]
                continue
            vtype, payload = v              # type: ignore[misc]
            word = (block_at + len(blocks)) // 4 + 2
            body_sets += be(inst, word)
            blk = be((vtype << 24) | (len(payload) + 4)) + payload
            blocks += blk + b"~" * (-len(blk) % 4)
    return frame(head + body_sets + blocks)


def mark(version: int, sec: int, nsec: int) -> bytes:
    return frame(stamp(version, sec, nsec) + be(0))


def desc_record(pmid: int, type_: int, indom: int, sem: int, units: int,
                names: Sequence[bytes]) -> bytes:
    body = be(1, pmid, type_, indom, sem, units, len(names))
    for n in names:
        body += be(len(n)) + n
    return frame(body)


def indom_record(rtype: int, sec: int, nsec: int, indom: int,
                 insts: Sequence[Tuple[int, Optional[bytes]]]) -> bytes:
    version = 2 if rtype == 2 else 3
    strings = b""
    idx: List[int] = []
    for _, name in insts:
        if name is None:
            idx.append(0xFFFFFFFF)
        else:
            idx.append(len(strings))
            strings += name + b"\0"
    body = (be(rtype) + stamp(version, sec, nsec) + be(indom, len(insts))
            + be(*[i for i, _ in insts]) + be(*idx) + strings)
    return frame(body)


def label_record(rtype: int, sec: int, nsec: int, ltype: int, ident: int,
                 sets: Sequence[Tuple[int, bytes, Sequence[Tuple[int, int, int, int, int]]]]) -> bytes:
    version = 2 if rtype == 3 else 3
    body = be(rtype) + stamp(version, sec, nsec) + be(ltype, ident, len(sets))
    for inst, json, labels in sets:
        body += be(inst, len(json)) + json + be(len(labels))
        for name, namelen, flags, value, valuelen in labels:
            body += be((name << 16) | (namelen << 8) | flags, (value << 16) | valuelen)
    return frame(body)


def text_record(ttype: int, ident: int, text: bytes) -> bytes:
    return frame(be(4, ttype, ident) + text + b"\0")


def index_entry(version: int, sec: int, nsec: int, vol: int, off_meta: int, off_data: int) -> bytes:
    if version == 3:
        return stamp(3, sec, nsec) + be(vol) + struct.pack(">qq", off_meta, off_data)
    return stamp(2, sec, nsec) + be(vol, off_meta, off_data)


def early_day_archive(base: str, version: int) -> str:
    """An archive of three records on 2024-01-05 (UTC), written byte by byte: pmlogger
    can only record today, and ctime pads the day of the month with a space on days
    1-9 ("Fri Jan  5"), which the CLI tests check against PCP's tools."""
    sec = 1704412800 + 3600     # Fri Jan  5 01:00:00 2024 UTC
    pmid, indom = (29 << 22) | 1, 0xFFFFFFFF
    with open(base + ".meta", "wb") as f:
        f.write(label(version, -1, sec, 250000000)
                + desc_record(pmid, 0, indom, 3, 0, [b"sample.long.one"]))
    with open(base + ".0", "wb") as f:
        f.write(label(version, 0, sec, 250000000)
                + b"".join(data_record(version, sec + k, 250000000 + k * 1000,
                                       [(pmid, 1, 0, [(-1, 1)])]) for k in range(1, 4)))
    return base
