"""One archive read as libpcp 6.0.3 reads it: its label, volumes and temporal index, and
the records, stepped forwards and backwards.

The reader keeps libpcp's model of a stdio stream: the current volume and a byte position
in it. Each step is one call of the C record reader (csrc/archive_record.c), which
reports where libpcp's stream would be afterwards, so the observable behaviour on damaged
archives (a truncated record failing again and again, a record with mismatched length
words being stepped over) is libpcp's. pmGetArchiveEnd reads backwards from the end of
the last volume and falls back to the index, as __pmGetArchiveEnd_ctx does.
"""
from __future__ import annotations

from collections import OrderedDict

from pcp._archive.files import ArchiveFiles, MappedFile, find_archive
from pcp._archive.meta import Metadata
from pcp._core.constants import (PM_ERR_FEATURE, PM_ERR_LABEL, PM_ERR_LOGFILE, PM_ERR_LOGREC,
                                 PM_ERR_NODATA)
from pcp._core.errors import pmErr
from pcp._core.native import ffi, lib
from pcp._core.constants import PM_CTXFLAG_NO_FEATURE_CHECK
from pcp._core.wire import PCP_LOG_END, PM_LOG_FEATURE_QA, VOL_INDEX, VOL_META
from pcp._decode.result import FlatResult, allocate_result

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Tuple
    from pcp._archive.meta import DiskInDom
    from pcp._core.abc import Stamp

MAX_TIME_T = 0x7FFFFFFFFFFFFFFF
# good record reads remembered (an interpolating scan reads the same stretch again)
RECENT_READS = 64
# the first records of each volume, read forwards, are kept for the life of the archive:
# pminfo -f and other fetches of one metric at a time from the start read them again
# and again (a fetch of one metric scans from the start to its first record)
HEAD_READS = 1024


def tsub(a: Stamp, b: Stamp) -> float:
    """libpcp's __pmTimestampSub: the difference in seconds, as a double. The
    nanoseconds are 32-bit fields subtracted in 32-bit arithmetic, so a garbage field
    wraps around exactly as it does there."""
    dn = ((a[1] - b[1] + 0x80000000) & 0xFFFFFFFF) - 0x80000000
    return float(a[0] - b[0]) + dn / 1e9


class LogLabel:
    """A decoded archive label record."""

    __slots__ = ("version", "magic", "pid", "vol", "stamp", "features", "length",
                 "hostname", "timezone", "zoneinfo")

    def __init__(self, mapped: MappedFile) -> None:
        out = ffi.new("pcp_log_label *")
        sts = lib.pcp_archive_label_decode(mapped.ptr, mapped.size, out)
        if sts < 0:
            raise pmErr(sts)
        data = mapped.data      # bytes or an mmap: a slice of either is a new bytes
        self.version = out.version
        self.magic = out.magic
        self.pid = out.pid
        self.vol = out.vol
        self.stamp: Stamp = (out.sec, out.nsec)
        self.features = out.features
        self.length = out.len
        self.hostname = data[out.host_off:out.host_off + out.host_len]  # type: ignore[index]
        self.timezone = data[out.tz_off:out.tz_off + out.tz_len]  # type: ignore[index]
        self.zoneinfo = data[out.zone_off:out.zone_off + out.zone_len]  # type: ignore[index]


class IndexEntry:
    __slots__ = ("stamp", "vol", "off_meta", "off_data")

    def __init__(self, stamp: Stamp, vol: int, off_meta: int, off_data: int) -> None:
        self.stamp = stamp
        self.vol = vol
        self.off_meta = off_meta
        self.off_data = off_data


class TemporalIndex:
    """The .index entries as decoded in C, a sequence of IndexEntry made one by one as
    they are read: positioning at a time walks from the front and stops early."""

    __slots__ = ("_entries", "_made")

    def __init__(self, entries: object, n: int) -> None:
        self._entries = entries
        self._made: List[Optional[IndexEntry]] = [None] * n

    def __len__(self) -> int:
        return len(self._made)

    def __getitem__(self, i: int) -> IndexEntry:
        made = self._made[i]        # IndexError, and negative indexes, as a list's
        if made is None:
            e = self._entries[i % len(self._made)]   # type: ignore[index]
            made = self._made[i] = IndexEntry((e.sec, e.nsec), e.vol, e.off_meta, e.off_data)
        return made


class Record:
    """What one read produced: a record in a volume, or a <mark> made up between archives."""

    __slots__ = ("stamp", "numpmid", "nvalues", "mapped", "version", "off", "length",
                 "visits", "held")

    def __init__(self, stamp: Stamp, numpmid: int, mapped: Optional[MappedFile] = None,
                 version: int = 2, off: int = 0, length: int = 0, nvalues: int = 0) -> None:
        self.stamp = stamp
        self.numpmid = numpmid
        self.nvalues = nvalues
        self.mapped = mapped
        self.version = version
        self.off = off
        self.length = length
        # for a record kept among an archive's head reads, how often a scan asked for
        # its pmids, and the pmids it holds once known: a scan for a metric passes over
        # those without it (see pmids_held); -1 for a record that is not kept
        self.visits = -1
        self.held: Optional[frozenset] = None

    def pmids_held(self) -> Optional[frozenset]:
        """The pmids of the record's sets, or None (callers then select as usual): for a
        kept record, decoded on the second scan that asks (a record passed once is not
        worth decoding whole), then remembered; None too when it does not decode."""
        held = self.held
        if held is None and self.visits >= 0 and self.mapped is not None:
            self.visits += 1
            if self.visits < 2:
                return None
            # decoded in place (the mapped record, as a select reads it): only the
            # pmid column is looked at
            c, _mem = allocate_result(self.numpmid, self.nvalues)
            if lib.pcp_archive_record_decode(self.mapped.ptr + self.off, self.length,
                                             self.version, c) < 0:
                self.visits = -1
                return None
            held = self.held = frozenset(ffi.unpack(c.pmid, self.numpmid))
        return held

    def pmids(self) -> Optional[List[int]]:
        """The pmids of the record's sets, in its order, from their headers alone (what a
        select walks: no value is decoded), or None when those do not decode."""
        if self.mapped is None or self.numpmid <= 0:
            return []
        room = ffi.new("uint32_t[]", self.numpmid)
        n = lib.pcp_archive_record_pmids(self.mapped.ptr + self.off, self.length,
                                         self.version, room, self.numpmid)
        if n < 0 or n > self.numpmid:
            return None
        return ffi.unpack(room, n)

    def decode(self) -> FlatResult:
        """The record as a result."""
        if self.mapped is None:
            return FlatResult.empty(self.stamp[0], self.stamp[1])
        # a copy: results outlive the mapping, which may be closed or released
        raw = self.mapped.slice(self.off, self.off + self.length)
        return FlatResult.from_log_record(raw, self.version, (self.numpmid, self.nvalues))


class Archive:
    """One archive of a context (libpcp's __pmLogCtl): its files, label and index."""

    def __init__(self, name: str, ctx_flags: int) -> None:
        self.files: ArchiveFiles = find_archive(name)
        self.name = self.files.base
        self.ctx_flags = ctx_flags
        self.minvol = self.files.volumes[0]
        self.maxvol = self.files.volumes[-1]
        self._files: Dict[int, MappedFile] = {}   # volumes opened so far, good or not
        self._checked: Dict[int, LogLabel] = {}
        self._seen: set = set()                   # libpcp's per-volume "label checked"
        self.meta_file: Optional[MappedFile] = None
        self.index = TemporalIndex(None, 0)
        self.endtime: Stamp = (0, 0)
        self.physend = -1
        # the last few good reads, oldest first
        self._recent_reads: "OrderedDict[tuple, Tuple[int, int, Record]]" = OrderedDict()
        # the first HEAD_READS good forward reads of each volume (as its size was then):
        # (mapped, size, pos) -> the read; _head_depth gives where the next one starts
        self.head_reads: Dict[tuple, Tuple[int, int, Record]] = {}
        self._head_depth: Dict[tuple, int] = {}
        # the reader's out-parameters, made once
        self._newpos = ffi.new("uint64_t *")
        self._rec = ffi.new("pcp_log_record *")
        self.label: LogLabel
        self.version = 0

    # ---- opening ---------------------------------------------------------------------

    def open(self) -> None:
        """__pmLogOpen up to the metadata: the labels of the first volume, the index
        (then its entries) and the .meta file, which must agree."""
        first = self.check_volume(self.minvol)
        self.label = first
        self.version = first.version
        if self.files.index is not None:
            index_file = MappedFile(self.files.index, copy=True)
            try:
                index_label = self._check_label(index_file, VOL_INDEX)
                if index_label.version != self.version:
                    raise pmErr(PM_ERR_LABEL)
                if (first.pid, first.hostname) != (index_label.pid, index_label.hostname):
                    raise pmErr(PM_ERR_LABEL)
                self._load_index(index_file)
            finally:
                index_file.close()
        self.meta_file = MappedFile(self.files.meta, copy=True)   # Metadata keeps the bytes
        meta_label = self._check_label(self.meta_file, VOL_META)
        if meta_label.version != self.version:
            raise pmErr(PM_ERR_LABEL)
        self.meta_label = meta_label

    def load_meta(self, meta: Metadata) -> None:
        """The rest of __pmLogOpen: .meta records into `meta` (shared by the archives
        of a context), then the label agreement libpcp checks last."""
        assert self.meta_file is not None
        try:
            meta.load(self.meta_file, self.meta_label.length)
        finally:
            self.meta_file.close()
            self.meta_file = None
        if (self.label.pid, self.label.hostname) != (self.meta_label.pid, self.meta_label.hostname):
            raise pmErr(PM_ERR_LABEL)

    def _check_label(self, mapped: MappedFile, vol: int) -> LogLabel:
        """__pmLogChkLabel for one file opened as volume `vol`."""
        label = LogLabel(mapped)
        if label.vol != vol:
            raise pmErr(PM_ERR_LABEL)
        if not self.ctx_flags & PM_CTXFLAG_NO_FEATURE_CHECK:
            if label.features & ~PM_LOG_FEATURE_QA:
                raise pmErr(PM_ERR_FEATURE)
        if mapped.size == label.length:
            raise pmErr(PM_ERR_NODATA)   # a label and nothing else
        return label

    def _load_index(self, mapped: MappedFile) -> None:
        cap = max((mapped.size - self.label.length) // (32 if self.version == 3 else 20), 0)
        entries = ffi.new("pcp_index_entry[]", max(cap, 1))
        n = lib.pcp_archive_index_decode(mapped.ptr, mapped.size, self.label.length, self.version,
                                         cap, entries)
        if n < 0:
            raise pmErr(n)
        self.index = TemporalIndex(entries, n)

    # ---- volumes ---------------------------------------------------------------------

    def open_volume(self, vol: int) -> Tuple[int, Optional[MappedFile], int]:
        """fopen + __pmLogChkLabel of data volume `vol`: (0 or the error, the file that
        is now libpcp's stream, or None when there is no such file, and the position
        the label check left it at). A failed check still leaves that file open in
        libpcp, and its next reads use it: callers keep it as the stream."""
        mapped = self._files.get(vol)
        if mapped is None:
            try:
                mapped = MappedFile(self.files.volume_path(vol))
            except pmErr as e:
                return e.code, None, 0          # fopen's errno (ENOENT, EACCES, ELOOP)
            self._files[vol] = mapped
        if vol in self._seen:
            return 0, mapped, self.label.length      # libpcp's cached fast path
        try:
            label = self._check_label(mapped, vol)
        except pmErr as e:
            if e.code == PM_ERR_NODATA and mapped.size >= 8:
                self._seen.add(vol)   # a label-only volume is "seen" all the same
            return e.code, mapped, _label_read_end(mapped)
        self._seen.add(vol)
        self._checked[vol] = label
        return 0, mapped, label.length

    def check_volume(self, vol: int) -> LogLabel:
        """Data volume `vol`, which must pass the label check."""
        sts, mapped, _ = self.open_volume(vol)
        if sts < 0 or mapped is None:
            raise pmErr(sts if sts < 0 else PM_ERR_LOGFILE)
        return self._checked.get(vol) or self.label

    def volume(self, vol: int) -> MappedFile:
        return self._files[vol]

    def first_record_ns(self, vol: int) -> Optional[int]:
        """Time of the first record of data volume `vol` in nanoseconds since the epoch
        (None when the volume is missing, unusable or has no record)."""
        sts, mapped, _ = self.open_volume(vol)
        if sts < 0 or mapped is None:
            return None
        newpos = ffi.new("uint64_t *")
        rec = ffi.new("pcp_log_record *")
        start = self.label.length
        sts = lib.pcp_archive_record_read(mapped.ptr, mapped.size, start, self.version, 0, 0, start,
                                          newpos, rec)
        mapped.release_all()
        if sts != 0:
            return None
        return rec.sec * 1000000000 + rec.nsec

    def disk_indoms(self) -> List[DiskInDom]:
        """The .meta file's instance-domain records as on disk (pmdumplog -I)."""
        mapped = MappedFile(self.files.meta)
        try:
            return Metadata.disk_indoms(mapped, self._check_label(mapped, VOL_META).length)
        finally:
            mapped.close()

    def label_len(self) -> int:
        return self.label.length

    def close(self) -> None:
        for mapped in self._files.values():
            mapped.close()
        self._files.clear()
        self._checked.clear()
        if self.meta_file is not None:
            self.meta_file.close()
            self.meta_file = None

    # ---- reading ---------------------------------------------------------------------

    def read_at(self, mapped: Optional[MappedFile], pos: int, backward: bool,
                paranoid: bool = False) -> Tuple[int, int, Optional[Record]]:
        """One C reader step in a volume file: (status, new position, record)."""
        if mapped is None:
            return PCP_LOG_END, pos, None
        # an interpolating scan reads the records around the requested time again and
        # again (libpcp re-reads them): the last few good reads are remembered
        key = (mapped, mapped.size, pos, backward, paranoid)
        if not backward and not paranoid:
            head = self.head_reads.get(key)
            if head is not None:
                return head
        recent = self._recent_reads
        hit = recent.get(key)
        if hit is not None:
            return hit
        newpos = self._newpos
        rec = self._rec
        sts = lib.pcp_archive_record_read(mapped.ptr, mapped.size, self.label.length, self.version,
                                          1 if backward else 0, 1 if paranoid else 0, pos, newpos,
                                          rec)
        if sts == 0:
            end = newpos[0]
            mapped.release_behind(end, backward)
            record = Record((rec.sec, rec.nsec), rec.numpmid, mapped, self.version,
                            rec.off, rec.len, rec.nvalues)
            good = (0, end, record)
            recent[key] = good
            if not backward and not paranoid:
                self._keep_head(key, good)
            if not paranoid:
                # the same record read the other way (the search passes turn round at
                # it): the same bytes, the same checks, so the same answer
                recent[(mapped, key[1], end, not backward, False)] = (0, pos, record)
            while len(recent) > RECENT_READS:
                # the oldest first (an OrderedDict: a plain dict's first key is found past
                # every slot deleted before it, ever slower as a scan goes on)
                recent.popitem(last=False)
            return good
        return sts, newpos[0], None

    def _keep_head(self, key: tuple, good: Tuple[int, int, Record]) -> None:
        """Keep a forward read for good when it is one of its volume's first records."""
        mapped, size, pos = key[0], key[1], key[2]
        depth = 0 if pos == self.label.length else self._head_depth.get((mapped, size, pos))
        if depth is None or depth >= HEAD_READS:
            return
        self.head_reads[key] = good
        good[2].visits = 0
        self._head_depth[(mapped, size, good[1])] = depth + 1

    def end(self, curvol: int = -1, stream: Optional[MappedFile] = None) -> Stamp:
        """__pmGetArchiveEnd_ctx: the time of the last valid record (cached while the
        last volume does not change size). Raises PM_ERR_LOGREC if there is none. The
        current volume is read through the context's stream, as libpcp does."""
        for vol in range(self.maxvol, self.minvol - 1, -1):
            if vol == curvol:
                mapped = stream
            else:
                sts, mapped, _ = self.open_volume(vol)
                if sts < 0:
                    continue
            if mapped is None:
                continue
            size = mapped.size
            if vol == self.maxvol and size == self.physend:
                return self.endtime
            if size <= self.label.length:
                continue
            found: Optional[Record] = None
            sts, _, rec = self.read_at(mapped, size, True, paranoid=True)
            if sts == 0:
                found = rec
            else:
                # A torn last record: start from the last index entry of this volume
                # that lies inside the file, step back one record, then read forwards.
                logend = None
                for entry in reversed(self.index):
                    if entry.vol == vol and entry.off_data <= size:
                        logend = entry.off_data
                        break
                if logend is None:
                    continue
                pos = logend
                if logend > self.label.length:
                    # the index may point at the end of a record: step back over it
                    # (that record only counts if a forward read succeeds after it)
                    sts, pos, rec = self.read_at(mapped, logend, True, paranoid=True)
                    if sts != 0:
                        break
                while pos + 4 <= size:
                    head = int.from_bytes(mapped.slice(pos, pos + 4), "big", signed=True)
                    if pos + head > size:
                        break
                    sts, pos, rec = self.read_at(mapped, pos, False, paranoid=True)
                    if sts != 0:
                        break
                    found = rec
            if found is not None:
                if vol == self.maxvol:
                    self.endtime = found.stamp
                    self.physend = size
                return found.stamp
        raise pmErr(PM_ERR_LOGREC)


def _label_read_end(mapped: MappedFile) -> int:
    """Where libpcp's label reader leaves a stream: after the length and magic words,
    and after the whole label when those looked right."""
    size = mapped.size
    if size < 8:
        return size
    head = mapped.slice(0, 8)
    rlen = int.from_bytes(head[:4], "big")
    version = head[7]
    if (version, rlen) in ((2, 132), (3, 808)):
        return min(size, rlen)
    return 8
