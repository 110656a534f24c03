"""Archive metadata read once into indexes: descriptors, the archive PMNS, instance
domains in force at any time, label sets and help text (archive-format.md 7 and 8).

Loading follows libpcp 6.0.3's __pmLogLoadMeta, including its error codes and its rules
for conflicting descriptors, duplicate instance domains and repeated label sets. One C
pass over the file (csrc/archive_meta_scan.c, over the record decoders of
csrc/archive_meta.c) checks every record and leaves flat arrays; the indexes are built
from them when first asked for, so opening a context costs what libpcp's load costs.
Metadata of the archives of a multi-archive context is merged into one Metadata object."""
from __future__ import annotations

from collections.abc import Iterator, Mapping

from pcp._core.constants import (PM_ERR_LOGCHANGEINDOM, PM_ERR_LOGCHANGESEM, PM_ERR_LOGCHANGETYPE,
                                 PM_ERR_LOGCHANGEUNITS, PM_ERR_LOGREC, PM_ERR_NOTHOST,
                                 PM_ERR_TEXT, PM_ID_NULL, PM_LABEL_CONTEXT,
                                 PM_LABEL_OPTIONAL, PM_TEXT_DIRECT, PM_TEXT_HELP, PM_TEXT_ONELINE)
from pcp._core.cint import wrap_int32
from pcp._core.errors import pmErr
from pcp._core.native import ffi, lib
from pcp._core.wire import PM_LABEL_COMPOUND
from pcp._decode.pdu import LabelSetData

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Tuple, Union
    from pcp._core.abc import DescTuple, Stamp
    # an instance-domain record as on disk: stamp, indom, delta?, instances, names
    DiskInDom = Tuple[Stamp, int, bool, List[int], List[Optional[bytes]]]

# .meta record types of instance domains (csrc/archive.h's PCP_META_INDOM_*): v2, v3 full, v3 delta
INDOM_V2, INDOM, INDOM_DELTA = 2, 5, 6




class InDomSnapshot:
    """One instance-domain record: sorted by instance id as libpcp keeps them. A delta
    record is made full (``isdelta`` cleared) when its chain is built."""

    __slots__ = ("stamp", "insts", "names", "isdelta")

    def __init__(self, stamp: Stamp, insts: List[int], names: List[Optional[bytes]],
                 isdelta: bool) -> None:
        order = sorted(range(len(insts)), key=insts.__getitem__)
        self.stamp = stamp
        self.insts = [insts[i] for i in order]
        self.names = [names[i] for i in order]
        self.isdelta = isdelta

    def same(self, other: "InDomSnapshot") -> bool:
        return self.insts == other.insts and self.names == other.names


class LabelRecord:
    __slots__ = ("stamp", "sets")

    def __init__(self, stamp: Stamp, sets: List[LabelSetData]) -> None:
        self.stamp = stamp
        self.sets = sets


class _MetaFile:
    """One archive's .meta after the C pass (csrc/archive_meta_scan.c): its bytes and the
    flat arrays of its records in file order, which the indexes below are built from when
    they are first asked for."""

    __slots__ = ("number", "raw", "buf", "ix", "status")

    def __init__(self, number: int, raw: bytes, label_len: int) -> None:
        """Walk the records after the label. ``status`` is 0, or the PM_ERR_* of the
        first bad record (the arrays then hold the records before it)."""
        self.number = number
        self.raw = raw
        self.buf = ffi.from_buffer("uint8_t[]", raw)     # raw's bytes, for C
        # the arrays are the C walk's, freed with the index
        self.ix = ffi.gc(ffi.new("pcp_meta_index *"), lib.pcp_archive_meta_index_free)
        self.status = lib.pcp_archive_meta_scan(self.buf, len(raw), label_len, self.ix)

    def descs(self) -> Tuple[List[int], List[DescTuple]]:
        """The pmids of the descriptors and the descriptors, in file order."""
        ix = self.ix
        n = ix.ndesc
        if n == 0:
            return [], []
        pmids = ffi.unpack(ix.desc_pmid, n)
        return pmids, list(zip(pmids, ffi.unpack(ix.desc_type, n), ffi.unpack(ix.desc_indom, n),
                               ffi.unpack(ix.desc_sem, n), ffi.unpack(ix.desc_units, n)))

    def names(self) -> List[Tuple[int, bytes]]:
        """(pmid, name) of every descriptor's names, in file order."""
        ix = self.ix
        n = ix.nname
        if n == 0:
            return []
        raw = self.raw
        return [(pmid, raw[off:off + ln]) for pmid, off, ln in
                zip(ffi.unpack(ix.name_pmid, n), ffi.unpack(ix.name_off, n),
                    ffi.unpack(ix.name_len, n))]

    def kept_names(self) -> "KeptNames":
        """The names the archive PMNS of this file alone keeps (what the tree of
        Metadata.add_name would hold), decided and looked up in C without the tree."""
        sts = lib.pcp_archive_meta_names_index(self.buf, len(self.raw), self.ix)
        if sts < 0:
            raise pmErr(sts)
        return KeptNames(self)

    def indom_snapshot(self, i: int) -> InDomSnapshot:
        rec = self.ix.indom[i]
        first, n = rec.first, rec.numinst
        raw = self.raw
        offs = ffi.unpack(self.ix.inst_name_off + first, n)
        lens = ffi.unpack(self.ix.inst_name_len + first, n)
        names: List[Optional[bytes]] = [None if ln < 0 else raw[off:off + ln]
                                        for off, ln in zip(offs, lens)]
        return InDomSnapshot((rec.sec, rec.nsec), ffi.unpack(self.ix.inst + first, n), names,
                             rec.type == INDOM_DELTA)


class DescTable(Mapping):
    """pmid -> (pmid, type, indom, sem, units) of the descriptors of one archive in
    which no pmid comes twice, each tuple made from the C arrays when first asked for
    (most contexts ask for a few)."""

    __slots__ = ("_meta", "_where", "_made")

    def __init__(self, meta: _MetaFile, where: Dict[int, int]) -> None:
        self._meta = meta
        self._where = where         # pmid -> its index in the descriptor arrays
        self._made: Dict[int, DescTuple] = {}

    def __getitem__(self, pmid: int) -> DescTuple:
        t = self._made.get(pmid)
        if t is None:
            i = self._where[pmid]
            ix = self._meta.ix
            t = self._made[pmid] = (ix.desc_pmid[i], ix.desc_type[i], ix.desc_indom[i],
                                    ix.desc_sem[i], ix.desc_units[i])
        return t

    def get(self, pmid: int, default: Optional[DescTuple] = None) -> Optional[DescTuple]:
        if pmid in self._where:
            return self[pmid]
        return default

    def __contains__(self, pmid: object) -> bool:
        return pmid in self._where

    def __iter__(self) -> Iterator[int]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


class KeptNames:
    """name -> pmid of one archive's PMNS, as a read-only mapping's get / [] / in,
    answered by the hash set of csrc/archive_meta_scan.c."""

    __slots__ = ("_meta",)

    def __init__(self, meta: _MetaFile) -> None:
        self._meta = meta

    def get(self, name: bytes, default: Optional[int] = None) -> Optional[int]:
        meta = self._meta
        pmid = lib.pcp_archive_meta_name_pmid(meta.buf, meta.ix, name, len(name))
        return default if pmid < 0 else pmid

    def __getitem__(self, name: bytes) -> int:
        pmid = self.get(name)
        if pmid is None:
            raise KeyError(name)
        return pmid

    def __contains__(self, name: object) -> bool:
        return isinstance(name, bytes) and self.get(name) is not None


class PMNSNode:
    __slots__ = ("children", "pmid", "_by_name")

    def __init__(self) -> None:
        # children in libpcp's order: the most recently added first
        self.children: List[Tuple[bytes, "PMNSNode"]] = []
        self.pmid: Optional[int] = None
        self._by_name: Dict[bytes, "PMNSNode"] = {}     # the same children, by name

    def child(self, name: bytes) -> Optional["PMNSNode"]:
        return self._by_name.get(name)

    def add_child(self, name: bytes) -> "PMNSNode":
        node = PMNSNode()
        self.children.insert(0, (name, node))
        self._by_name[name] = node
        return node


class Metadata:
    """The merged metadata of every archive of a context.

    A load checks every record (a bad one fails the open, as in libpcp) and merges the
    descriptors, whose conflicts are errors at open too; the archive PMNS, instance
    domains, label sets and help text are built from the loaded files' arrays when first
    asked for, in the order libpcp would have added them."""

    def __init__(self) -> None:
        # a dict, or for one archive with no pmid twice its DescTable
        self._descs: "Union[Dict[int, DescTuple], DescTable]" = {}
        self._files: List[_MetaFile] = []
        # the archive PMNS, built from the first _named files
        self._root = PMNSNode()
        self._name_to_pmid: Dict[bytes, int] = {}
        self._named = 0
        self._kept: Optional[KeptNames] = None    # name -> pmid without the tree
        self._names: Optional[Dict[int, List[bytes]]] = None   # pmid -> names, lazily
        # indom -> its records (file, index), in load order; chains built from them
        self._indom_recs: Optional[Dict[int, List[Tuple[_MetaFile, int]]]] = None
        self.indoms: Dict[int, List[InDomSnapshot]] = {}    # newest first (libpcp's order)
        # indom -> the times of its records in chain order, to find the one in force
        # without building the chain (None: it has delta records, the chain is built)
        self._indom_times: Dict[int, Optional[List[Tuple[int, int, _MetaFile, int]]]] = {}
        self._indom_made: Dict[Tuple[_MetaFile, int], InDomSnapshot] = {}
        # (label type, ident) -> records not decoded yet: (load, stamp, raw, offset, room)
        self._label_records: Optional[Dict[Tuple[int, int], list]] = None
        self.labels: Dict[Tuple[int, int], List[LabelRecord]] = {}   # newest first
        self._texts: Optional[Dict[int, Dict[int, bytes]]] = None

    # ---- loading -----------------------------------------------------------------------

    @property
    def nfiles(self) -> int:
        """How many .meta files were loaded."""
        return len(self._files)

    def file_bytes(self, number: int) -> bytes:
        """The bytes of the number-th .meta loaded (from 1), to load it again elsewhere."""
        return self._files[number - 1].raw

    def load(self, mapped: "object", label_len: int) -> None:
        """Read one archive's .meta (its bytes already checked to start with a label).
        Raises pmErr with libpcp's code on the first bad record, or on a descriptor that
        conflicts with one loaded before it."""
        meta = _MetaFile(len(self._files) + 1, mapped.data, label_len)   # type: ignore[attr-defined]
        self._files.append(meta)
        # what was built from the files before this one is built again when asked for
        self._indom_recs = None
        self.indoms = {}
        self._indom_times = {}
        self._indom_made = {}
        self._label_records = None
        self.labels = {}
        self._texts = None
        self._kept = None
        pmids = ffi.unpack(meta.ix.desc_pmid, meta.ix.ndesc) if meta.ix.ndesc else []
        where = dict(zip(pmids, range(len(pmids))))
        if len(self._files) == 1 and len(where) == len(pmids):
            self._descs = DescTable(meta, where)    # no pmid twice: nothing can conflict
        else:
            have = self._desc_dict()
            pmids, descs = meta.descs()
            new = dict(zip(pmids, descs))
            if len(new) == len(descs) and have.keys().isdisjoint(new):
                have.update(new)
            else:
                for t in descs:     # in file order: the first conflict is libpcp's error
                    self.add_desc(t)
        if meta.status < 0:
            raise pmErr(meta.status)
        if not pmids:
            raise pmErr(PM_ERR_LOGREC)

    @property
    def descs(self) -> "Mapping[int, DescTuple]":
        """pmid -> (pmid, type, indom, sem, units) of every descriptor loaded."""
        return self._descs

    def _desc_dict(self) -> Dict[int, DescTuple]:
        """The descriptors as a dict that more can be merged into."""
        if isinstance(self._descs, DescTable):
            self._descs = dict(self._descs.items())
        return self._descs

    def add_desc(self, t: DescTuple) -> None:
        have = self._desc_dict()
        old = have.get(t[0])
        if old is None:
            have[t[0]] = t
            return
        if t[1] != old[1]:
            raise pmErr(PM_ERR_LOGCHANGETYPE)
        if t[3] != old[3]:
            raise pmErr(PM_ERR_LOGCHANGESEM)
        if t[2] != old[2]:
            raise pmErr(PM_ERR_LOGCHANGEINDOM)
        # the six unit fields; the low pad byte is not compared
        if (t[4] & 0xFFFFFF00) != (old[4] & 0xFFFFFF00):
            raise pmErr(PM_ERR_LOGCHANGEUNITS)

    # ---- the archive PMNS --------------------------------------------------------------

    @property
    def root(self) -> PMNSNode:
        self._add_names()
        return self._root

    @property
    def name_to_pmid(self) -> "Union[Dict[bytes, int], KeptNames]":
        """Name -> pmid of the archive PMNS. Looking names up is what most contexts do
        with it: for one archive that does not need the tree, which is built only for
        the operations that walk it."""
        if self._named < len(self._files):
            if len(self._files) == 1:
                if self._kept is None:
                    self._kept = self._files[0].kept_names()
                return self._kept
            self._add_names()
        return self._name_to_pmid

    def _add_names(self) -> None:
        """Add the names of the files loaded since the last call, in file order."""
        while self._named < len(self._files):
            meta = self._files[self._named]
            self._named += 1
            for pmid, name in meta.names():
                self.add_name(pmid, name)

    def add_name(self, pmid: int, name: bytes) -> None:
        if name in self._name_to_pmid:
            return              # a name keeps the first pmid it was bound to
        parts = name.split(b".")
        if b"" in parts:
            return
        node = self._root
        for part in parts:
            child = node.child(part)
            if child is None:
                if node.pmid is not None:
                    return      # a leaf cannot grow children
                child = node.add_child(part)
            node = child
        if node.children:
            return              # a non-leaf cannot become a leaf
        node.pmid = pmid
        self._name_to_pmid[name] = pmid
        self._names = None

    def names_of(self, pmid: int) -> List[bytes]:
        """All names of a pmid in libpcp's order: its PMID hash chain is built by a
        depth-first walk that pushes each leaf at the head, so the order is reversed."""
        self._add_names()
        if self._names is None:
            table: Dict[int, List[bytes]] = {}
            stack = [(b"", self._root)]
            order: List[Tuple[int, bytes]] = []
            while stack:
                prefix, node = stack.pop()
                if node.pmid is not None:
                    order.append((node.pmid, prefix))
                for cname, child in reversed(node.children):
                    stack.append((prefix + b"." + cname if prefix else cname, child))
            for leaf_pmid, name in reversed(order):
                table.setdefault(leaf_pmid, []).append(name)
            self._names = table
        return self._names.get(pmid, [])

    # ---- instance domains --------------------------------------------------------------

    @staticmethod
    def disk_indoms(mapped: "object", label_len: int) -> List[DiskInDom]:
        """The instance-domain records of one .meta file as they are on disk, in file
        order, instances in record order (a delta record's deleted instance has no
        name), decoded by the loader's C decoders: what pmdumplog -I prints. Stops at
        the first bad record."""
        buf = mapped.ptr        # type: ignore[attr-defined]
        size = mapped.size      # type: ignore[attr-defined]
        data = mapped.data      # type: ignore[attr-defined]
        rtype = ffi.new("int32_t *")
        rlen = ffi.new("int32_t *")
        nxt = ffi.new("uint64_t *")
        head = ffi.new("pcp_indom_head *")
        out: List[DiskInDom] = []
        pos = label_len
        while lib.pcp_archive_meta_header(buf, size, pos, rtype, rlen) == 0:
            if rtype[0] in (INDOM_V2, INDOM, INDOM_DELTA):
                room = min(rlen[0], size - pos)
                cap = max(room // 8, 1)
                insts = ffi.new("int32_t[]", cap)
                offs = ffi.new("uint32_t[]", cap)
                lens = ffi.new("int32_t[]", cap)
                n = lib.pcp_archive_meta_indom(buf, size, pos, head, cap, insts, offs, lens, nxt)
                if n < 0:
                    break
                names: List[Optional[bytes]] = [
                    None if lens[i] < 0 else bytes(data[offs[i]:offs[i] + lens[i]])
                    for i in range(n)]
                out.append(((head.sec, head.nsec), head.indom, rtype[0] == INDOM_DELTA,
                            list(insts[0:n]), names))
            pos += rlen[0]
        return out

    def _indom_records(self) -> Dict[int, List[Tuple[_MetaFile, int]]]:
        if self._indom_recs is None:
            table: Dict[int, List[Tuple[_MetaFile, int]]] = {}
            for meta in self._files:
                recs = meta.ix.indom
                for i in range(meta.ix.nindom):
                    table.setdefault(recs[i].indom, []).append((meta, i))
            self._indom_recs = table
        return self._indom_recs

    def _add_indom(self, chain: List[InDomSnapshot], snap: InDomSnapshot) -> None:
        # newest first; a record joins the head of its timestamp slot, an identical
        # snapshot already in the slot moves there instead of being added again
        i = 0
        while i < len(chain) and chain[i].stamp > snap.stamp:
            i += 1
        j = i
        while j < len(chain) and chain[j].stamp == snap.stamp:
            if chain[j].same(snap):
                snap = chain.pop(j)
                break
            j += 1
        chain.insert(i, snap)

    def indom_chain(self, indom: int) -> Optional[List[InDomSnapshot]]:
        """The records of an instance domain, newest first (None if it has none), delta
        records made full as libpcp does it (lazily too; the outcome is the same for
        every chain that starts with a full record)."""
        chain = self.indoms.get(indom)
        if chain is None:
            recs = self._indom_records().get(indom)
            if recs is None:
                return None
            chain = []
            for meta, i in recs:
                self._add_indom(chain, meta.indom_snapshot(i))
            _undelta(chain)
            self.indoms[indom] = chain
        return chain

    def all_indoms(self) -> Dict[int, List[InDomSnapshot]]:
        """Every instance domain's records (all made full), in order of first record."""
        for indom in self._indom_records():
            self.indom_chain(indom)
        return self.indoms

    def indom_at(self, indom: int, stamp: Stamp) -> Optional[InDomSnapshot]:
        """The record of indom in force at stamp (the newest at or before it), compared
        as libpcp 6.0.3's __pmTimestampCmp does: the difference of the seconds cut to a
        32-bit int, so a time more than 2^31 s before a record counts as after it."""
        if indom not in self.indoms:
            times = self._times_of(indom)
            if times is not None:
                # no delta record: the chain's first record at or before the time is
                # the last record of its time slot, which is all of it that is needed
                for sec, nsec, meta, i in times:
                    if (wrap_int32(sec - stamp[0]) or wrap_int32(nsec - stamp[1])) <= 0:
                        made = self._indom_made.get((meta, i))
                        if made is None:
                            made = self._indom_made[(meta, i)] = meta.indom_snapshot(i)
                        return made
                return None
        for snap in self.indom_chain(indom) or ():
            order = wrap_int32(snap.stamp[0] - stamp[0]) or wrap_int32(snap.stamp[1] - stamp[1])
            if order <= 0:
                return snap
        return None

    def _times_of(self, indom: int) -> Optional[List[Tuple[int, int, _MetaFile, int]]]:
        """(sec, nsec, file, record) of an instance domain's records, newest first and
        the last loaded first within a time (the chain's order, repeats included), or
        None when it has a delta record (or no record: the chain says so)."""
        if indom in self._indom_times:
            return self._indom_times[indom]
        times: Optional[List[Tuple[int, int, _MetaFile, int]]] = []
        recs = self._indom_records().get(indom)
        if recs is None:
            times = None
        else:
            for load, (meta, i) in enumerate(recs):
                rec = meta.ix.indom[i]
                if rec.type == INDOM_DELTA:
                    times = None
                    break
                times.append((rec.sec, rec.nsec, load, meta, i))   # type: ignore[union-attr]
            if times is not None:
                times.sort(key=lambda t: (t[0], t[1], t[2]), reverse=True)
                times = [(sec, nsec, meta, i) for sec, nsec, _, meta, i in times]
        self._indom_times[indom] = times
        return times

    # ---- labels ------------------------------------------------------------------------

    def _label_chain(self, key: Tuple[int, int]) -> Optional[List[LabelRecord]]:
        """The label records of a kind and ident, newest first, with libpcp's discarding
        of repeated sets applied; built on first use from the records the loads kept."""
        if self._label_records is None:
            table: Dict[Tuple[int, int], list] = {}
            for meta in self._files:
                recs = meta.ix.label
                for i in range(meta.ix.nlabel):
                    r = recs[i]
                    ltype = r.type & ~(PM_LABEL_COMPOUND | PM_LABEL_OPTIONAL)
                    ident = PM_ID_NULL if ltype == PM_LABEL_CONTEXT else r.ident
                    table.setdefault((ltype, ident), []).append(
                        (meta.number, (r.sec, r.nsec), meta.raw, r.off, r.room))
            self._label_records = table
        pending = self._label_records.pop(key, None)
        if pending is not None:
            chain = self.labels.setdefault(key, [])
            # replayed archive by archive: libpcp discards repeated sets after each load
            for k, (load, stamp, raw, off, room) in enumerate(pending):
                rec = LabelRecord(stamp, _decode_label_sets(raw, off, room))
                i = 0
                while i < len(chain) and chain[i].stamp >= rec.stamp:
                    i += 1
                chain.insert(i, rec)
                if k + 1 == len(pending) or pending[k + 1][0] != load:
                    self._discard_repeated_labels(key)
        return self.labels.get(key)

    def _discard_repeated_labels(self, key: Tuple[int, int]) -> None:
        """libpcp drops, from each label record, the sets that the next older record of
        the same key already holds, and then records left with no sets."""
        chain = self.labels[key]
        kept: List[LabelRecord] = []
        for i, rec in enumerate(chain):
            if i + 1 < len(chain):
                older = chain[i + 1].sets
                rec.sets = [s for s in rec.sets
                            if not any(_same_labelset(s, o) for o in older)]
                if not rec.sets:
                    continue
            kept.append(rec)
        self.labels[key] = kept

    def label_records(self) -> Dict[Tuple[int, int], List[LabelRecord]]:
        """Every label record by (label type, ident), newest first, with libpcp's
        discarding of repeated sets applied (what pmdumplog -e walks)."""
        self._label_chain((-1, -1))         # builds the table of records not read yet
        for key in list(self._label_records or ()):
            self._label_chain(key)
        return self.labels

    def label_sets_at(self, ltype: int, ident: int, stamp: Stamp) -> Optional[List[LabelSetData]]:
        """None when the archive holds no record of this kind and ident at all."""
        ltype &= ~(PM_LABEL_COMPOUND | PM_LABEL_OPTIONAL)
        if ltype == PM_LABEL_CONTEXT:
            ident = PM_ID_NULL
        chain = self._label_chain((ltype, ident))
        if chain is None:
            return None
        for rec in chain:
            if rec.stamp <= stamp:
                return rec.sets
        return []

    # ---- help text ---------------------------------------------------------------------

    @property
    def text_types(self) -> Dict[int, Dict[int, bytes]]:
        """text type -> ident -> text; a later record for the same kind and ident
        replaces the earlier one."""
        if self._texts is None:
            table: Dict[int, Dict[int, bytes]] = {}
            for meta in self._files:
                recs, raw = meta.ix.text, meta.raw
                for i in range(meta.ix.ntext):
                    r = recs[i]
                    table.setdefault(r.type, {})[r.ident] = raw[r.off:r.off + r.len]
            self._texts = table
        return self._texts

    def text(self, ident: int, level: int) -> bytes:
        """Help text with libpcp's fallback from HELP to ONELINE."""
        kind = level & ~PM_TEXT_DIRECT
        texts = self.text_types
        while True:
            table = texts.get(kind)
            if table is None:
                sts = PM_ERR_NOTHOST
                text = None
            else:
                text = table.get(ident)
                sts = 0 if text is not None else PM_ERR_TEXT
            if sts == 0 and text:
                return text  # type: ignore[return-value]
            if kind & PM_TEXT_HELP:
                kind = (kind & ~PM_TEXT_HELP) | PM_TEXT_ONELINE
                continue
            if sts < 0:
                raise pmErr(sts)
            return text  # type: ignore[return-value]


def _same_labelset(a: LabelSetData, b: LabelSetData) -> bool:
    if a.inst != b.inst or a.nlabels != b.nlabels:
        return False
    for (n1, nl1, _f1, v1, vl1) in a.labels:
        for (n2, nl2, _f2, v2, vl2) in b.labels:
            if nl1 != nl2 or a.json[n1:n1 + nl1] != b.json[n2:n2 + nl2]:
                continue
            if vl1 != vl2 or a.json[v1:v1 + vl1] != b.json[v2:v2 + vl2]:
                return False
            break
        else:
            return False
    return True


def _undelta(chain: List[InDomSnapshot]) -> None:
    """Replay delta snapshots (oldest first) onto the full snapshot before them, with
    libpcp 6.0.3's merge: both lists sorted by instance id; a deletion removes the
    matching instance, an addition is placed before the first larger id."""
    full: Optional[InDomSnapshot] = None
    for snap in reversed(chain):
        if not snap.isdelta:
            full = snap
            continue
        if full is None:
            continue            # no full record before it: libpcp leaves it as it is
        old_i, old_n = full.insts, full.names
        d_i, d_n = snap.insts, snap.names
        insts: List[int] = []
        names: List[Optional[bytes]] = []
        i = j = 0
        while i < len(old_i) or j < len(d_i):
            if i < len(old_i) and j < len(d_i):
                if d_n[j] is None and old_i[i] == d_i[j]:
                    i += 1
                    j += 1
                    continue
                if d_n[j] is not None and old_i[i] > d_i[j]:
                    insts.append(d_i[j])
                    names.append(d_n[j])
                    j += 1
                    continue
            if i < len(old_i):
                insts.append(old_i[i])
                names.append(old_n[i])
                i += 1
            else:
                insts.append(d_i[j])
                names.append(d_n[j])
                j += 1
        snap.insts, snap.names, snap.isdelta = insts, names, False
        full = snap


def _decode_label_sets(raw: bytes, off: int, room: int) -> List[LabelSetData]:
    """The label sets of the label record at `off` of a .meta's bytes (checked at load;
    `room` is its length or the bytes left, which sizes the arrays)."""
    head = ffi.new("pcp_label_head *")
    set_cap = max(room // 12, 1)
    label_cap = max(room // 8, 1)
    sets = ffi.new("pcp_labelset[]", set_cap)
    labels = ffi.new("pcp_label[]", label_cap)
    total = ffi.new("int32_t *")
    nxt = ffi.new("uint64_t *")
    n = lib.pcp_archive_meta_labels(raw, len(raw), off, head, set_cap, sets, label_cap, labels,
                                    total, nxt)
    if n < 0:
        raise pmErr(n)
    out: List[LabelSetData] = []
    for i in range(n):
        s = sets[i]
        json = raw[s.json_off:s.json_off + s.json_len]
        lab = [(labels[k].name, labels[k].namelen, labels[k].flags, labels[k].value,
                labels[k].valuelen)
               for k in range(s.first, s.first + max(s.nlabels, 0))]
        out.append(LabelSetData(s.inst, s.nlabels, json, lab))
    return out
