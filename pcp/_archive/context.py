"""Archive contexts: PM_CONTEXT_ARCHIVE over one archive or several (a comma-separated
list or a directory), read forwards and backwards exactly as libpcp 6.0.3 reads them.
Positioning by time uses the temporal index the way __pmLogSetTime does; the archives
themselves are read by pcp._archive.reader.

The context satisfies the Context Protocol (pcp._core.abc), as HostContext does, so the
pmapi facade serves both kinds of context.
"""
from __future__ import annotations

import threading

from pcp._archive.files import MappedFile, expand_names
from pcp._archive.meta import Metadata
from pcp._archive.reader import Archive, LogLabel, Record, tsub
from pcp._core.abc import serialized
from pcp._core.cint import wrap_int32
from pcp._core.constants import (PM_ERR_EOL, PM_ERR_INDOM, PM_ERR_INDOM_LOG, PM_ERR_INST_LOG,
                                 PM_ERR_LOGFILE, PM_ERR_LOGHOST, PM_ERR_LOGOVERLAP, PM_ERR_LOGREC,
                                 PM_ERR_MODE,
                                 PM_ERR_NAME, PM_ERR_NONLEAF, PM_ERR_NOTHOST, PM_ERR_PMID,
                                 PM_ERR_PMID_LOG, PM_ERR_TOOSMALL, PM_ID_NULL, PM_INDOM_NULL,
                                 PM_LABEL_CONTEXT, PM_MODE_BACK, PM_MODE_FORW, PM_MODE_INTERP,
                                 PMNS_ARCHIVE)
from pcp._core.errors import notify_error, pmErr
from pcp._core.level import API_LEVEL
from pcp._core.wire import PCP_LOG_END
from pcp._decode.result import FlatResult, ProfileFilter, ResultRoom, SelectRequest
from pcp._libpcp import anon as _anon
from pcp._libpcp.profile import Profile

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple
    from pcp._archive.interp import Interpolator
    from pcp._core.abc import Stamp


class _MetaBytes:
    """A loaded .meta's bytes, in the shape Metadata.load reads (a mapped file's .data)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


@serialized
class ArchiveContext:
    """A PMAPI archive context over one or more archives (a pcp._core.abc.Context)."""

    pmns_location = PMNS_ARCHIVE

    def __init__(self, handle: int, spec: str, ctx_flags: int = 0) -> None:
        self._lock = threading.RLock()
        self.handle = handle
        self.spec = spec
        self.ctx_flags = ctx_flags
        self.profile = Profile()
        self.meta = Metadata()
        self.archives: List[Archive] = []
        # archives a 7.2 read dropped as corrupt (_drop_corrupt), closed with the context
        self._dropped: List[Archive] = []
        # each archive's .meta bytes, by id(archive); which archives self.meta holds;
        # how many contexts share self.meta (libpcp's __pmLogCtl refcnt: a pmDupContext
        # shares it, see _meta_for)
        self._meta_raw: Dict[int, bytes] = {}
        self._meta_holds: set = set()
        self._meta_users = [1]
        self._fresh_block = False       # the last archive change started a new block
        self._select_room = ResultRoom()   # the sizes of pmFetch's last result
        try:
            self._open_all(spec)
        except BaseException:
            self.close()
            raise
        first = self.archives[0]
        self._meta_holds = set(range(len(self.archives)))
        self.cur = 0
        self.curvol = first.minvol
        # libpcp's stdio stream: the volume file it has open (after a failed volume
        # change that may be another volume's file) and the position in it
        self.stream: Optional[MappedFile] = first.volume(first.minvol)
        self.pos = first.label_len()
        self.origin: Stamp = first.label.stamp
        self.mode = PM_MODE_FORW
        self._select_cache: Optional[tuple] = None
        self._profile_cache: Optional[tuple] = None
        self.delta: Stamp = (0, 0)
        self.direction = 0
        self.serial = False
        self.mark_done = 0
        self.vol_error = 0
        # position remembered between fetches (libpcp's ac_vol / ac_offset)
        self.saved: Tuple[int, int] = (self.curvol, self.pos)
        # PM_MODE_INTERP's bounds, made on the first interpolated fetch
        self.interp: Optional[Interpolator] = None

    features = 0

    def _open_all(self, spec: str) -> None:
        """initarchive: open each named archive, keep them sorted by start time, and
        refuse archives of another host or two archives that start together."""
        if spec == "":
            raise pmErr(PM_ERR_LOGFILE)
        names: Dict[int, str] = {}
        for name in expand_names(spec):
            arch = Archive(name, self.ctx_flags)
            try:
                arch.open()
                if self.archives and self.archives[0].label.hostname != arch.label.hostname:
                    raise pmErr(PM_ERR_LOGHOST)
                arch.load_meta(self.meta)
                self._meta_raw[id(arch)] = self.meta.file_bytes(self.meta.nfiles)
            except BaseException:
                arch.close()
                raise
            at = len(self.archives)
            duplicate = False
            for i, other in enumerate(self.archives):
                tdiff = tsub(arch.label.stamp, other.label.stamp)
                if tdiff < 0:
                    at = i
                    break
                if tdiff == 0:
                    if names[id(other)] == name:
                        duplicate = True        # the same name twice: opened once
                        break
                    arch.close()
                    raise pmErr(PM_ERR_LOGOVERLAP)
            if duplicate:
                arch.close()
                continue
            names[id(arch)] = name
            self.archives.insert(at, arch)

    def close(self) -> None:
        self._meta_users[0] -= 1
        for arch in self.archives + self._dropped:
            arch.close()

    def reconnect(self) -> int:
        """pmReconnectContext: nothing to reconnect for an archive."""
        return self.handle

    def store(self, arrays: dict, sec: int, usec: int) -> int:
        raise pmErr(PM_ERR_NOTHOST)

    def duplicate(self, handle: int) -> "ArchiveContext":
        dup = ArchiveContext(handle, self.spec, self.ctx_flags)
        dup.profile = self.profile.copy()
        dup.origin = self.origin
        dup.mode = self.mode
        dup.delta = self.delta
        dup.direction = self.direction
        dup._change_archive(self.cur)
        # libpcp's copy of the archive controls points at the same __pmLogCtl, so the
        # metadata is shared until one of them changes archive
        dup._meta_users[0] -= 1
        dup.meta, dup._meta_holds, dup._meta_users = self.meta, self._meta_holds, self._meta_users
        self._meta_users[0] += 1
        dup.curvol = -1
        dup._change_vol(self.curvol)
        dup.pos = self.pos
        dup.saved = self.saved
        dup.serial = self.serial
        return dup

    # ---- labels and end --------------------------------------------------------------

    @property
    def arch(self) -> Archive:
        return self.archives[self.cur]

    def archive_label(self) -> LogLabel:
        return self.archives[0].label

    def archive_end(self) -> Stamp:
        last = len(self.archives) - 1
        if self.cur == last:
            return self.arch.end(self.curvol, self.stream)
        return self.archives[last].end()

    # ---- the stream ------------------------------------------------------------------

    def _change_vol(self, vol: int) -> bool:
        """__pmLogChangeVol: the stream becomes volume `vol` (positioned after its
        label), or, if its label check fails, stays on that bad file while the current
        volume number does not change."""
        if vol == self.curvol:
            return True
        sts, mapped, pos = self.arch.open_volume(vol)
        if self.stream is not None and self.stream is not mapped:
            self.stream.release_all()   # a volume left behind keeps no pages resident
        self.stream = mapped
        self.pos = pos
        if sts < 0:
            self.vol_error = sts
            return False
        self.curvol = vol
        return True

    def _change_archive(self, index: int) -> None:
        """__pmLogChangeArchive: switch archive, positioned after its first label."""
        if index == self.cur:
            return
        self._meta_for(index)
        self.cur = index
        self.mark_done = 0
        self.curvol = -1
        self._change_vol(self.arch.minvol)

    def _meta_for(self, index: int) -> None:
        """The metadata after __pmFindOrOpenArchive opens archive `index`: libpcp keeps
        its __pmLogCtl, and the metadata of the archives read so far with it (a
        multi-archive context sees them all), only when no other context uses it; a
        __pmLogCtl shared since a pmDupContext is left to the other context, and this
        one starts a new one that holds the metadata of archive `index` alone (instance
        domains, names and descriptors of the other archives are then unknown here)."""
        arch = self.archives[index]
        if self._meta_users[0] > 1:
            self._meta_users[0] -= 1
            self._meta_users = [1]
            self.meta = Metadata()
            self._meta_holds = set()
            self._fresh_block = True
        elif index in self._meta_holds:
            return
        self.meta.load(_MetaBytes(self._meta_raw[id(arch)]), arch.meta_label.length)
        self._meta_holds.add(index)

    def _last_volume_size(self) -> int:
        """The size __pmLogSetTime compares index offsets with: it stats the stream
        when the last volume has been seen (whatever the stream is), else peeks."""
        arch = self.arch
        if arch.maxvol in arch._seen:
            return self._stream_size()
        sts, mapped, _ = arch.open_volume(arch.maxvol)
        return mapped.size if sts == 0 and mapped is not None else 0

    def _stream_size(self) -> int:
        return self.stream.size if self.stream is not None else 0

    def _mark(self, backward: bool) -> Record:
        arch = self.arch
        if not backward:
            sec, nsec = arch.end(self.curvol, self.stream)
            nsec += 1000000
            if nsec > 1000000000:
                nsec -= 1000000000
                sec += 1
        else:
            sec, nsec = arch.label.stamp
            if nsec >= 1000000:
                nsec -= 1000000
            else:
                nsec = 1000000000 - 1000000 + nsec
                sec -= 1
        return Record((sec, nsec), 0)

    def _next_archive(self, backward: bool) -> Optional[Record]:
        """At the end of an archive's data: a made-up <mark> the first time, else move
        to the neighbouring archive (None) or raise PM_ERR_EOL / PM_ERR_LOGOVERLAP."""
        last = len(self.archives) - 1
        if (not backward and self.cur >= last) or (backward and self.cur == 0):
            raise pmErr(PM_ERR_EOL)
        if not self.mark_done:
            rec = self._mark(backward)
            self.mark_done = PM_MODE_BACK if backward else PM_MODE_FORW
            return rec
        # libpcp also moves the remembered position (ac_vol / ac_offset) to where the
        # new archive is entered, which an interpolated fetch goes back to
        if not backward:
            prev_end = self.arch.endtime
            self._change_archive(self.cur + 1)
            self.saved = (self.curvol, self.pos)
            if tsub(prev_end, self.arch.label.stamp) > 0:
                raise pmErr(PM_ERR_LOGOVERLAP)
            return None
        prev_start = self.arch.label.stamp
        self._change_archive(self.cur - 1)
        arch = self.arch
        arch.end(self.curvol, self.stream)
        for vol in range(arch.maxvol, arch.minvol - 1, -1):
            if self._change_vol(vol):
                break
        else:
            raise pmErr(PM_ERR_LOGFILE)
        self.pos = self._stream_size()
        self.saved = (self.curvol, self.pos)
        if tsub(arch.endtime, prev_start) > 0:
            raise pmErr(PM_ERR_LOGOVERLAP)
        return None

    def _read(self, backward: bool) -> Record:
        """__pmLogRead_ctx: the next record in the given direction."""
        while True:
            arch = self.arch
            if backward and self.pos <= arch.label_len():
                vol = self.curvol - 1
                while vol >= arch.minvol:
                    if self._change_vol(vol):
                        self.pos = self._stream_size()
                        break
                    vol -= 1
                if vol >= arch.minvol:
                    continue
                rec = self._next_archive(True)
                if rec is not None:
                    return rec
                continue
            sts, newpos, rec = arch.read_at(self.stream, self.pos, backward)
            if sts == PCP_LOG_END:
                if backward:
                    raise pmErr(PM_ERR_EOL)
                vol = self.curvol + 1
                while vol <= arch.maxvol:
                    if self._change_vol(vol):
                        break
                    vol += 1
                if vol <= arch.maxvol:
                    continue
                rec = self._next_archive(False)
                if rec is not None:
                    return rec
                continue
            self.mark_done = 0
            self.pos = newpos
            if sts == PM_ERR_LOGREC and API_LEVEL >= (7, 2) and len(self.archives) > 1:
                self._drop_corrupt(backward)
                continue
            if sts < 0:
                raise pmErr(sts)
            assert rec is not None
            return rec

    def _reopened(self, index: int) -> None:
        """The archive change of _drop_corrupt: libpcp 7.2.2 calls __pmLogChangeArchive
        there without keeping the context's origin and mode as its other archive
        changes do, so __pmLogOpen leaves them at the archive's start and PM_MODE_FORW
        (a backward or interpolated read goes on forward from the next fetch)."""
        self._change_archive(index)
        self.origin = self.arch.label.stamp
        self.mode = PM_MODE_FORW

    def _drop_corrupt(self, backward: bool) -> None:
        """libpcp 7.1.5's recovery in __pmLogRead_ctx (7.2.2's, not 6.x's): a corrupt
        record in one archive of a multi-archive context removes that archive from the
        context for good, with a warning, and the read goes on at the start of the next
        archive (forward) or the end of the previous one (backward); with none there,
        the read ends with PM_ERR_EOL."""
        bad = self.cur
        notify_error("Warning", '__pmLogRead: removing corrupted archive "%s" vol %d' % (
            self.arch.name, self.curvol))
        self._dropped.append(self.archives.pop(bad))
        # the metadata already read from it stays (libpcp frees only the archive's entry)
        self._meta_holds = {i - (i > bad) for i in self._meta_holds if i != bad}
        self.cur = -1           # no current archive: _change_archive always switches
        self.mark_done = 0
        if not backward and bad < len(self.archives):
            self._reopened(bad)
            self.saved = (self.curvol, self.pos)
            return
        if backward and bad > 0:
            self._reopened(bad - 1)
            arch = self.arch
            for vol in range(arch.maxvol, arch.minvol - 1, -1):
                if self._change_vol(vol):
                    self.pos = self._stream_size()
                    self.saved = (self.curvol, self.pos)
                    return
        self.cur = min(bad, len(self.archives) - 1)
        raise pmErr(PM_ERR_EOL)

    def _set_time(self) -> None:
        """__pmLogSetTime: position the stream near the current time."""
        mode = self.mode & 0xFFFF
        if mode == PM_MODE_INTERP:
            mode = PM_MODE_FORW if self.direction > 0 else PM_MODE_BACK
        i = 0
        while i < len(self.archives):
            if tsub(self.archives[i].label.stamp, self.origin) >= 0:
                break
            i += 1
        if mode == PM_MODE_FORW:
            if i > 0:
                i -= 1
        elif i >= len(self.archives):
            i -= 1
        before = self.arch
        self._fresh_block = False
        self._change_archive(i)
        arch = self.arch
        # libpcp reads the log control block it held before the archive change: the
        # same block, updated, unless the change started a new one (after a
        # pmDupContext, see _meta_for), when the previous archive's temporal index and
        # volume range choose the offset read in the new archive's file
        indexed = before if self._fresh_block else arch
        ti = indexed.index
        if ti:
            j = -1
            toobig = False
            match = False
            last_size: Optional[int] = None
            for n, entry in enumerate(ti):
                if entry.vol < indexed.minvol:
                    continue
                if entry.vol == indexed.maxvol:
                    if last_size is None:
                        last_size = self._last_volume_size()
                    if entry.off_data > last_size:
                        j = n
                        toobig = True
                        break
                t_hi = tsub(entry.stamp, self.origin)
                if t_hi > 0:
                    j = n
                    break
                if t_hi == 0:
                    j = n
                    match = True
                    break
            else:
                j = len(ti)
            self.serial = True
            if match:
                j = self._vol_skip(mode, j)
                self.pos = ti[j].off_data
                if mode == PM_MODE_BACK:
                    self.serial = False
            elif j < 1:
                j = self._vol_skip(PM_MODE_FORW, 0)
                self.pos = ti[j].off_data
            elif j == len(ti):
                j = self._vol_skip(PM_MODE_BACK, len(ti) - 1)
                self.pos = ti[j].off_data
                if mode == PM_MODE_BACK:
                    self.serial = False
            else:
                t_hi = tsub(ti[j].stamp, self.origin)
                t_lo = tsub(self.origin, ti[j - 1].stamp)
                if t_hi <= t_lo and not toobig:
                    j = self._vol_skip(mode, j)
                    self.pos = ti[j].off_data
                    if mode == PM_MODE_FORW:
                        self.serial = False
                else:
                    j = self._vol_skip(mode, j - 1)
                    self.pos = ti[j].off_data
                    if mode == PM_MODE_BACK:
                        self.serial = False
                if self.serial and mode == PM_MODE_FORW:
                    # the index may point at the end of the record: back up one
                    try:
                        self._read(True)
                    except pmErr:
                        pass
        else:
            if mode == PM_MODE_FORW:
                for vol in range(arch.minvol, arch.maxvol + 1):
                    if self._change_vol(vol):
                        break
                else:
                    raise pmErr(PM_ERR_LOGFILE)
                self.pos = arch.label_len()
            else:
                for vol in range(arch.maxvol, arch.minvol - 1, -1):
                    if self._change_vol(vol):
                        break
                else:
                    raise pmErr(PM_ERR_LOGFILE)
                self.pos = self._stream_size()
        self.saved = (self.curvol, self.pos)

    def _vol_skip(self, mode: int, j: int) -> int:
        """VolSkip: the index entry to use, skipping entries of volumes that fail."""
        arch = self.arch
        ti = arch.index
        if not 0 <= j < len(ti):
            # past the end of this archive's index: a position from another archive's
            # (see _set_time), where libpcp reads out of bounds
            raise pmErr(PM_ERR_LOGFILE)
        vol = ti[j].vol
        while arch.minvol <= vol <= arch.maxvol:
            if self._change_vol(vol):
                return j
            if mode == PM_MODE_FORW:
                j += 1
                while j < len(ti) and ti[j].vol == vol:
                    j += 1
                if j == len(ti):
                    raise pmErr(PM_ERR_LOGFILE)
            else:
                j -= 1
                while j >= 0 and ti[j].vol == vol:
                    j -= 1
                if j < 0:
                    raise pmErr(PM_ERR_LOGFILE)
            vol = ti[j].vol
        raise pmErr(PM_ERR_LOGFILE)

    def set_mode(self, mode: int, when: Optional[Stamp], delta: Stamp, direction: int) -> None:
        lmode = mode & 0xFFFF
        if lmode not in (PM_MODE_INTERP, PM_MODE_FORW, PM_MODE_BACK):
            raise pmErr(PM_ERR_MODE)
        if when is not None:
            self.origin = when
        self.mode = mode
        self.delta = delta
        self.direction = direction
        try:
            self._set_time()
        except pmErr:
            pass        # libpcp reports positioning failures at the next fetch
        if self.interp is not None:
            self.interp.reset()
            if API_LEVEL >= (7, 2) and self.interp.declared:
                # 7.x's __pmLogResetInterp, once an INTERP fetch has hashed a metric,
                # also asks the next fetch to position itself again: where the
                # positioning fails (a temporal index naming a missing volume,
                # badarchives/badti-2) that fetch fails with PM_ERR_LOGFILE
                self.serial = False

    # ---- fetching --------------------------------------------------------------------

    def fetch_records(self, pmids: Optional[Sequence[int]]) -> FlatResult:
        """__pmLogFetch in FORW/BACK mode. pmids None is pmFetchArchive (every set of
        the next record, marks included), else pmFetch's selection and profile."""
        mode = self.mode & 0xFFFF
        backward = mode == PM_MODE_BACK
        vol, pos = self.saved
        if not self._change_vol(vol):
            raise pmErr(self.vol_error)
        self.pos = pos
        try:
            return self._fetch_loop(pmids, mode, backward)
        finally:
            self.saved = (self.curvol, self.pos)

    def _fetch_loop(self, pmids: Optional[Sequence[int]], mode: int, backward: bool) -> FlatResult:
        wanted: Optional[frozenset] = None
        if pmids is not None and not backward:
            _, all_derived, wanted = self._select_request(pmids)
            if all_derived:
                wanted = None
        while True:
            rec, backward = self._next_record(wanted, backward)
            if rec.numpmid == 0:
                if pmids is None:
                    return rec.decode()
                continue                # pmFetch skips <mark> records
            if pmids is None:
                return rec.decode()
            selected = self._select(rec, pmids)
            if selected is not None:
                return selected

    def _next_record(self, wanted: Optional[frozenset], backward: bool) -> Tuple[Record, bool]:
        """The next record of a fetch at or past the origin in the fetch's direction (it
        becomes the origin), and whether the mode is backward after the read. `wanted`
        (pmids) lets the kept records known to hold none of them be passed over."""
        while True:
            if wanted is not None and self.serial:
                self._pass_kept(wanted)
            if not self.serial:
                self._set_time()
                while True:
                    try:
                        back = self._read(not backward)
                    except pmErr:
                        break
                    tdiff = tsub(back.stamp, self.origin)
                    if (not backward and tdiff < 0) or (backward and tdiff > 0) or tdiff == 0:
                        # one too far (or just right): the stream now sits where
                        # the next read in the wanted direction returns it again
                        break
                self.serial = True
            candidate = self._read(backward)
            # the mode as it is now: at 7.2 a dropped corrupt archive turns it FORW
            backward = self.mode & 0xFFFF == PM_MODE_BACK
            tdiff = tsub(candidate.stamp, self.origin)
            if (tdiff < 0 and not backward) or (tdiff > 0 and backward):
                continue
            self.origin = candidate.stamp
            return candidate, backward

    def first_fetches(self, pmids: Sequence[int]
                      ) -> Tuple[Dict[int, Tuple[FlatResult, int]], Optional[int]]:
        """pmFetch of each of `pmids` by itself from the origin (PM_MODE_FORW), as pminfo
        asks an archive for values one metric at a time, in one forward pass: pmid ->
        (a result, the index of the pmid's set in it), and the error the single fetch of
        each pmid not found fails with (PM_ERR_EOL at the end; 0 when all were found;
        None when the pass stopped at a record that does not decode: the caller fetches
        those one by one). Each single fetch would read a prefix of the records this
        pass reads, with the same origin at each, so each finds the record found here.
        Derived pmids are not looked for (their fetch is evaluated, not read). The
        context is left where the pass ended, as after a fetch."""
        with self._lock:        # a context operation (not in CONTEXT_OPERATIONS: ours)
            return self._first_fetches(pmids)

    def _first_fetches(self, pmids: Sequence[int]
                       ) -> Tuple[Dict[int, Tuple[FlatResult, int]], Optional[int]]:
        if self.mode & 0xFFFF != PM_MODE_FORW:
            raise pmErr(PM_ERR_MODE)
        remaining = {p & 0xFFFFFFFF: p for p in pmids if not _anon.is_derived(p)}
        found: Dict[int, Tuple[FlatResult, int]] = {}
        if not remaining:
            return found, 0
        vol, pos = self.saved
        if not self._change_vol(vol):
            raise pmErr(self.vol_error)
        self.pos = pos
        error: Optional[int] = 0
        backward = False
        try:
            while remaining:
                try:
                    rec, backward = self._next_record(None, backward)
                except pmErr as e:
                    error = e.code
                    break
                if rec.numpmid == 0:
                    continue
                held = rec.pmids()
                if held is None:
                    # what each single fetch makes of it depends on the pmid asked for
                    error = None
                    break
                hits = remaining.keys() & held
                if not hits:
                    continue
                request = [remaining[p] for p in hits]
                try:
                    selected = self._select(rec, request)
                except pmErr:
                    # a set that does not decode: the single fetches of the others
                    # in the record may succeed (each decodes only its own set)
                    error = None
                    break
                if selected is None:
                    continue
                for i, pmid in enumerate(request):
                    found[pmid] = (selected, i)
                    del remaining[pmid & 0xFFFFFFFF]
        finally:
            self.saved = (self.curvol, self.pos)
        return found, error

    def _pass_kept(self, wanted: frozenset) -> None:
        """Step forwards over the kept records known to hold none of the wanted pmids
        as the loop above would (each read moves the stream, and one at or after the
        origin becomes the origin), without reading or selecting them again: a fetch of
        one metric from the start passes over the same first records every time."""
        stream = self.stream
        if stream is None:
            return
        kept = self.arch.head_reads
        size = stream.size
        pos = self.pos
        origin = self.origin
        moved = False
        while True:
            hit = kept.get((stream, size, pos, False, False))
            if hit is None:
                break
            rec = hit[2]
            held = rec.held
            if held is None or not held.isdisjoint(wanted):
                break
            pos = hit[1]
            moved = True
            if tsub(rec.stamp, origin) >= 0:
                origin = rec.stamp
        if moved:
            self.pos = pos
            self.origin = origin
            self.mark_done = 0

    def _select(self, rec: Record, pmids: Sequence[int]) -> Optional[FlatResult]:
        """The requested sets of one record, in request order, through the profile, made
        from the mapped record in one C call (csrc/result_select.c); None when the record
        has none of them."""
        request, all_derived, wanted = self._select_request(pmids)
        if not all_derived:
            held = rec.pmids_held()
            if held is not None and held.isdisjoint(wanted):
                return None     # a kept record known to hold none of them
        mapped = rec.mapped
        assert mapped is not None
        # a request of derived metrics only is answered by every record
        return FlatResult.select_record(mapped.ptr + rec.off, rec.length, rec.version, request,
                                        self._profile_filter(), self._select_room,
                                        even_if_absent=all_derived)

    def _select_request(self, pmids: Sequence[int]) -> Tuple[SelectRequest, bool, frozenset]:
        """The C form of a request, whether it asks for derived metrics only, and its
        pmids as a record holds them; kept while the same pmids are asked for."""
        key = tuple(pmids)
        cached = self._select_cache
        if cached is not None and (cached[0] is key or cached[0] == key):
            return cached[1]
        descs = self.meta.descs
        indoms = [None if descs.get(p) is None else descs[p][2] for p in key]
        request = SelectRequest(list(key), indoms)
        all_derived = all(_anon.is_derived(p) for p in key)
        made = (request, all_derived, frozenset(p & 0xFFFFFFFF for p in key))
        self._select_cache = (key, made)
        return made

    def _profile_filter(self) -> ProfileFilter:
        """The C form of the profile, rebuilt when the profile changes."""
        profile = self.profile
        cached = self._profile_cache
        if cached is not None and cached[0] is profile and cached[1] == profile.version:
            return cached[2]
        made = ProfileFilter(*profile.passing())
        self._profile_cache = (profile, profile.version, made)
        return made

    def fetch(self, pmids: Sequence[int], highres: bool) -> Tuple[FlatResult, int]:
        if len(pmids) < 1:
            raise pmErr(PM_ERR_TOOSMALL)
        if self.mode & 0xFFFF == PM_MODE_INTERP:
            if self.interp is None:
                # imported on the first interpolated fetch: a reader of records (pminfo,
                # pmdumplog's ways) never needs it (start-up)
                from pcp._archive.interp import Interpolator

                self.interp = Interpolator(self)
            result = self.interp.fetch(pmids)
            if self.mode & 0xFFFF != PM_MODE_INTERP:
                # pmFetch makes the result's time the current one after any fetch in a
                # mode other than INTERP, the mode as it is after the fetch: at 7.2 a
                # read that dropped a corrupt archive turned it FORW (_reopened), so the
                # next FORW fetch starts from that result's time, at the next archive's
                # start, not from the interpolation's next step
                self.origin = (result.sec, result.nsec)
            return result, 0
        return self.fetch_records(pmids), 0

    def fetch_archive(self) -> FlatResult:
        if self.mode & 0xFFFF == PM_MODE_INTERP:
            raise pmErr(PM_ERR_MODE)
        return self.fetch_records(None)

    # ---- PMNS ------------------------------------------------------------------------

    def lookup_names(self, names: Sequence[bytes]) -> Tuple[int, List[int]]:
        if len(names) < 1:
            raise pmErr(PM_ERR_TOOSMALL)
        pmids = []
        for name in names:
            pmid = self.meta.name_to_pmid.get(name)
            if pmid is None and name in _anon.ANON:
                pmid = _anon.ANON[name][0]
            pmids.append(PM_ID_NULL if pmid is None else pmid)
        resolved = len(pmids) - pmids.count(PM_ID_NULL)
        if len(names) == 1 and resolved == 0 and names[0] and self._is_nonleaf(names[0]):
            raise pmErr(PM_ERR_NONLEAF, pmids)
        return resolved, pmids

    def _node(self, name: bytes):
        node = self.meta.root
        if not name:
            return node
        for part in name.split(b"."):
            node = node.child(part)
            if node is None:
                return None
        return node

    def _is_nonleaf(self, name: bytes) -> bool:
        node = self._node(name)
        return node is not None and bool(node.children)

    def name_all(self, pmid: int) -> List[bytes]:
        if pmid in _anon.BY_PMID:
            return [_anon.BY_PMID[pmid]]
        names = self.meta.names_of(pmid)
        if not names:
            raise pmErr(PM_ERR_PMID)
        return list(names)

    def children(self, name: bytes, with_status: bool) -> Tuple[List[bytes], Optional[List[int]]]:
        node = self._node(name)
        names: List[bytes] = []
        status: List[int] = []
        if node is not None:
            for child, sub in node.children:
                names.append(child)
                status.append(1 if sub.children else 0)
        for child, st in _anon.children(name):
            if child not in names:
                names.append(child)
                status.append(st)
        if node is None and not names:
            raise pmErr(PM_ERR_NAME)
        return names, (status if with_status else None)

    def traverse(self, name: bytes) -> List[bytes]:
        node = self._node(name)
        out: List[bytes] = []
        if node is not None:
            if node.pmid is not None and not node.children:
                out.append(name)
            else:
                self._walk(node, name, out)
        out += [n for n in _anon.leaves(name) if n not in out]
        if not out:
            raise pmErr(PM_ERR_NAME)
        return out

    def _walk(self, node, prefix: bytes, out: List[bytes]) -> None:
        for child, sub in node.children:
            full = prefix + b"." + child if prefix else child
            if sub.children:
                self._walk(sub, full, out)
            elif sub.pmid is not None:
                out.append(full)

    # ---- descriptors, instances, text ------------------------------------------------

    def desc(self, pmid: int):
        local = _anon.desc(pmid)
        if local is not None:
            return local
        d = self.meta.descs.get(pmid)
        if d is None:
            raise pmErr(PM_ERR_PMID_LOG)
        return d

    def descs(self, pmids: Sequence[int]):
        if len(pmids) < 1:
            raise pmErr(PM_ERR_TOOSMALL)
        out = []
        for pmid in pmids:
            try:
                out.append(self.desc(pmid))
            except pmErr:
                out.append((PM_ID_NULL, 0, 0, 0, 0))
        return out

    def instances(self, indom: int, inst: int = -1,
                  name: Optional[bytes] = None) -> Tuple[List[int], List[bytes]]:
        """Instances in force at the current time; with `inst` or `name` one match."""
        if indom == PM_INDOM_NULL:
            raise pmErr(PM_ERR_INDOM)
        inst = wrap_int32(int(inst))
        return self._instances_at(indom, self.origin, inst, name)

    def instances_at(self, indom: int, when: Stamp) -> Tuple[List[int], List[bytes]]:
        """The instances pmGetInDom gives when the context's time is `when` (a record's
        time after a fetch), without moving the context there."""
        if indom == PM_INDOM_NULL:
            raise pmErr(PM_ERR_INDOM)
        with self._lock:
            return self._instances_at(indom, when, -1, None)

    def _instances_at(self, indom: int, when: Stamp, inst: int,
                      name: Optional[bytes]) -> Tuple[List[int], List[bytes]]:
        snap = self.meta.indom_at(indom, when)
        if snap is None:
            raise pmErr(PM_ERR_INDOM_LOG)
        if inst != -1:
            for i, n in zip(snap.insts, snap.names):
                if i == inst:
                    return [i], [n or b""]
            raise pmErr(PM_ERR_INST_LOG)
        if name is not None:
            hit = _match_name([(snap.insts, snap.names)], name)
            if hit is None:
                raise pmErr(PM_ERR_INST_LOG)
            return [hit], [name]
        return list(snap.insts), [n or b"" for n in snap.names]

    def instances_archive(self, indom: int) -> Tuple[List[int], List[bytes]]:
        chain = self._chain(indom)
        insts: List[int] = []
        names: List[bytes] = []
        seen = set()
        for snap in chain:
            for i, n in zip(snap.insts, snap.names):
                if i not in seen:
                    seen.add(i)
                    insts.append(i)
                    names.append(n or b"")
        return insts, names

    def lookup_instance_archive(self, indom: int, name: bytes) -> int:
        chain = self._chain(indom)
        for snap in chain:
            hit = _match_name([(snap.insts, snap.names)], name)
            if hit is not None:
                return hit
        raise pmErr(PM_ERR_INST_LOG)

    def name_instance_archive(self, indom: int, inst: int) -> bytes:
        for snap in self._chain(indom):
            for i, n in zip(snap.insts, snap.names):
                if i == inst:
                    return n or b""
        raise pmErr(PM_ERR_INST_LOG)

    def _chain(self, indom: int):
        if indom == PM_INDOM_NULL:
            raise pmErr(PM_ERR_INDOM)
        chain = self.meta.indom_chain(indom)
        if chain is None:
            raise pmErr(PM_ERR_INDOM_LOG)
        return chain

    def text(self, ident: int, level: int, indom: bool) -> bytes:
        if not indom:
            local = _anon.text(ident, bool(level & 2))
            if local is not None:
                return local
        kind = (level & 0x13) | (8 if indom else 4)
        return self.meta.text(ident, kind)

    # ---- labels ----------------------------------------------------------------------

    def labels(self, ident: int, type_: int):
        ident &= 0xFFFFFFFF
        sets = self.meta.label_sets_at(type_, ident, self.origin)
        if sets is None:
            # archives without label records: libpcp makes up the context labels
            if type_ == PM_LABEL_CONTEXT:
                return [_hostname_labelset(self.archives[0].label.hostname)]
            return []
        return sets

    def host_name(self) -> str:
        return self.archives[0].label.hostname.decode("utf-8", "replace")


def _match_name(snaps, name: bytes) -> Optional[int]:
    """libpcp's instance-name match: exact first, then up to the first space."""
    for insts, names in snaps:
        for i, n in zip(insts, names):
            if n is not None and n == name:
                return i
        for i, n in zip(insts, names):
            if n is None:
                continue
            space = n.find(b" ")
            if space >= 0 and name[:space] == n[:space]:
                return i
    return None


def _hostname_labelset(hostname: bytes):
    from pcp._decode.pdu import LabelSetData

    json = b'{"hostname":"' + hostname + b'"}'
    name_len = len(b"hostname")
    return LabelSetData(-1, 1, json, [(2, name_len, PM_LABEL_CONTEXT, 2 + name_len + 2,
                                       len(hostname) + 2)])
