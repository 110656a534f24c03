"""Records of archives as flat columns, chunk by chunk (pcp.bulk.scan_archive): one C call
(csrc/archive_record.c, pcp_archive_records_scan) decodes many whole records into preallocated numpy
arrays with the GIL released; no Python object is made per value."""
from __future__ import annotations

from typing import Any, Iterator, List, NamedTuple

import numpy as np

from pcp._archive.context import ArchiveContext
from pcp._archive.files import spec_text
from pcp._archive.reader import Archive
from pcp._core.constants import PM_ERR_TOOBIG
from pcp._core.errors import pmErr
from pcp._core.native import ffi, lib
from pcp._core.wire import PCP_LOG_END


class Chunk(NamedTuple):
    """Columns of consecutive records (the layout of pcp_log_columns in archive.h).

    Per record: `sec`, `nsec`, `numpmid` (0 for a <mark>), `rec_first` (its first value
    set). Per value set: `rec` (its record), `pmid`, `numval` (< 0 an error code),
    `valfmt`, `first` (its first value). Per value: `inst`, `vtype` (-1: a 32-bit INSITU
    value), `ival` (integers), `dval` (FLOAT and DOUBLE), and `boff`/`blen`, the payload
    of other values (strings, aggregates, events) at byte `rec_off[rec] + boff` of the
    record's volume (`volume` names it)."""

    sec: Any
    nsec: Any
    numpmid: Any
    rec_first: Any
    rec_off: Any
    rec: Any
    pmid: Any
    numval: Any
    valfmt: Any
    first: Any
    inst: Any
    vtype: Any
    ival: Any
    dval: Any
    boff: Any
    blen: Any
    archive: str
    volume: int


class _Columns:
    """numpy arrays for one chunk and the pcp_log_columns struct that points at them."""

    def __init__(self, rec_cap: int, set_cap: int, val_cap: int) -> None:
        self.arrays = {
            "sec": np.empty(rec_cap, np.int64), "nsec": np.empty(rec_cap, np.int64),
            "numpmid": np.empty(rec_cap, np.int32), "rec_first": np.empty(rec_cap, np.int32),
            "rec_off": np.empty(rec_cap, np.uint64),
            "pmid": np.empty(set_cap, np.uint32), "numval": np.empty(set_cap, np.int32),
            "valfmt": np.empty(set_cap, np.int32), "set_first": np.empty(set_cap, np.int32),
            "inst": np.empty(val_cap, np.int32), "vtype": np.empty(val_cap, np.int32),
            "ival": np.empty(val_cap, np.int64), "dval": np.empty(val_cap, np.float64),
            "boff": np.empty(val_cap, np.uint32), "blen": np.empty(val_cap, np.uint32),
        }
        c = ffi.new("pcp_log_columns *")
        c.rec_cap, c.set_cap, c.val_cap = rec_cap, set_cap, val_cap
        self._keep = []
        for field, arr in self.arrays.items():
            ptr = ffi.from_buffer(ffi.typeof(getattr(c, field)).cname.replace(" *", "[]"), arr)
            self._keep.append(ptr)
            setattr(c, field, ptr)
        self.c = c

    def chunk(self, archive: str, volume: int) -> Chunk:
        """The columns the last C call filled, as a Chunk of numpy views."""
        c = self.c
        a = self.arrays
        nrec, nset, nval = c.nrec, c.nset, c.nval
        numpmid = a["numpmid"][:nrec]
        return Chunk(
            sec=a["sec"][:nrec], nsec=a["nsec"][:nrec], numpmid=numpmid,
            rec_first=a["rec_first"][:nrec], rec_off=a["rec_off"][:nrec],
            rec=np.repeat(np.arange(nrec, dtype=np.int32), numpmid),
            pmid=a["pmid"][:nset], numval=a["numval"][:nset], valfmt=a["valfmt"][:nset],
            first=a["set_first"][:nset], inst=a["inst"][:nval], vtype=a["vtype"][:nval],
            ival=a["ival"][:nval], dval=a["dval"][:nval], boff=a["boff"][:nval],
            blen=a["blen"][:nval], archive=archive, volume=volume)


def _archives(name: str) -> List[Archive]:
    """The archives of `name` opened as pmNewContext opens them (a list or a directory
    of one host's archives, sorted by start; its errors, PM_ERR_LOGHOST for archives of
    several hosts among them), each with its metadata loaded."""
    try:
        ctx = ArchiveContext(0, name)
    except pmErr as e:
        raise pmErr(e.code, [name]) from None    # as pmNewContext's error names it
    return ctx.archives


def scan_archive(name: str, chunk_values: int = 1 << 20, errors: str = "raise") -> Iterator[Chunk]:
    """Every record of an archive (or a comma-separated list / directory of archives,
    in time order), volume by volume, as chunks of about `chunk_values` values.

    errors: "raise" raises pmErr(PM_ERR_LOGREC) at a damaged record (after yielding
    what came before it); "skip" goes on where libpcp's reader would; "stop" ends the
    volume there."""
    if errors not in ("raise", "skip", "stop"):
        raise ValueError("errors must be 'raise', 'skip' or 'stop'")
    archives = _archives(spec_text(name))
    try:
        for arch in archives:
            for vol in range(arch.minvol, arch.maxvol + 1):
                try:
                    arch.check_volume(vol)
                except pmErr:
                    continue        # missing or unusable volumes are skipped, as libpcp does
                yield from _scan_volume(arch, vol, chunk_values, errors)
    finally:
        for arch in archives:
            arch.close()


def _scan_volume(arch: Archive, vol: int, chunk_values: int, errors: str) -> Iterator[Chunk]:
    mapped = arch.volume(vol)
    pos = ffi.new("uint64_t *", arch.label.length)
    val_cap = max(chunk_values, 1024)
    while True:
        cols = _Columns(max(val_cap // 8, 64), max(val_cap // 2, 64), val_cap)
        start = pos[0]
        sts = lib.pcp_archive_records_scan(mapped.ptr, mapped.size, arch.version, pos, cols.c)
        if sts == PM_ERR_TOOBIG:   # one record larger than the chunk
            val_cap *= 4
            continue
        if cols.c.nrec:
            yield cols.chunk(arch.name, vol)
        mapped.release_pages(start, int(pos[0]))
        if sts == 0:
            continue
        if sts == PCP_LOG_END:
            return
        if errors == "raise":
            raise pmErr(sts)
        if errors == "stop" or pos[0] <= start and cols.c.nrec == 0:
            return
