"""Archive metadata read once into indexes: descriptors, the archive PMNS, instance
domains in force at any time, label sets and help text (archive-format.md 7 and 8).

Loading follows libpcp 6.0.3's __pmLogLoadMeta record by record (the C decoders in
csrc/archive_meta.c do the byte work), including its error codes and its rules for
conflicting descriptors, duplicate instance domains and repeated label sets. Metadata of
the archives of a multi-archive context is merged into one Metadata object."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from pcp._core.abc import DescTuple, Stamp
from pcp._core.constants import (PM_ERR_LOGCHANGEINDOM, PM_ERR_LOGCHANGESEM, PM_ERR_LOGCHANGETYPE,
                                 PM_ERR_LOGCHANGEUNITS, PM_ERR_LOGREC, PM_ERR_NOTHOST,
                                 PM_ERR_RECTYPE, PM_ERR_TEXT, PM_ID_NULL, PM_LABEL_CONTEXT,
                                 PM_LABEL_OPTIONAL, PM_TEXT_DIRECT, PM_TEXT_HELP, PM_TEXT_ONELINE)
from pcp._core.errors import pmErr
from pcp._core.native import ffi, lib
from pcp._core.wire import PCP_LOG_END, PM_LABEL_COMPOUND
from pcp._decode.pdu import LabelSetData

# .meta record types
DESC, INDOM_V2, LABEL_V2, TEXT, INDOM, INDOM_DELTA, LABEL = 1, 2, 3, 4, 5, 6, 7



# an instance-domain record as on disk: stamp, indom, delta?, instances, names
DiskInDom = Tuple[Stamp, int, bool, List[int], List[Optional[bytes]]]


class InDomSnapshot:
    """One instance-domain record: sorted by instance id as libpcp keeps them. A delta
    record is made full (``isdelta`` cleared) when the metadata is finished."""

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


class _Scratch:
    """The C decoders' output buffers for one load, grown as records need: allocating
    them per record cost more than decoding the record."""

    def __init__(self) -> None:
        self.nxt = ffi.new("uint64_t *")
        self.desc = ffi.new("pcp_desc *")
        self.indom_head = ffi.new("pcp_indom_head *")
        self.label_head = ffi.new("pcp_label_head *")
        self.total = ffi.new("int32_t *")
        self.ttype = ffi.new("uint32_t *")
        self.ident = ffi.new("uint32_t *")
        self.toff = ffi.new("uint32_t *")
        self.tlen = ffi.new("uint32_t *")
        self._arrays: Dict[Tuple[str, str], object] = {}

    def array(self, slot: str, ctype: str, n: int):
        """An array of at least n elements of ctype (its contents are garbage)."""
        have = self._arrays.get((slot, ctype))
        if have is None or len(have) < n:        # type: ignore[arg-type]
            have = self._arrays[(slot, ctype)] = ffi.new(ctype + "[]", max(n, 16))
        return have


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
    """The merged metadata of every archive of a context."""

    def __init__(self) -> None:
        self.descs: Dict[int, DescTuple] = {}
        self._names: Optional[Dict[int, List[bytes]]] = None   # pmid -> names, lazily
        self.name_to_pmid: Dict[bytes, int] = {}
        self.root = PMNSNode()
        # indom -> snapshots, newest first (libpcp's chain order)
        self.indoms: Dict[int, List[InDomSnapshot]] = {}
        self._unfinished: set = set()     # indoms whose delta records are not full yet
        # (label type, ident) -> records, newest first
        self.labels: Dict[Tuple[int, int], List[LabelRecord]] = {}
        # (label type, ident) -> label records checked but not decoded yet (_label_chain)
        self._label_records: Dict[Tuple[int, int], List[Tuple[int, Stamp, bytes, int]]] = {}
        self._loads = 0         # archives loaded so far
        self.text_types: Dict[int, Dict[int, bytes]] = {}   # text type -> ident -> text

    # ---- loading -----------------------------------------------------------------------

    def load(self, mapped: "object", label_len: int) -> None:
        """Read one archive's .meta (its bytes already checked to start with a label).
        Raises pmErr with libpcp's code on the first bad record."""
        buf = mapped.ptr        # type: ignore[attr-defined]
        size = mapped.size      # type: ignore[attr-defined]
        data = mapped.data      # type: ignore[attr-defined]
        pos = label_len
        numdescs = 0
        rtype = ffi.new("int32_t *")
        rlen = ffi.new("int32_t *")
        nxt = _Scratch()
        new_labels: List[Tuple[int, int]] = []
        self._loads += 1
        try:
            while True:
                sts = lib.pcp_archive_meta_header(buf, size, pos, rtype, rlen)
                if sts == PCP_LOG_END:
                    break
                if sts < 0:
                    raise pmErr(sts)
                kind = rtype[0]
                if kind == DESC:
                    numdescs += 1
                    pos = self._load_desc(buf, size, data, pos, nxt)
                elif kind in (INDOM_V2, INDOM, INDOM_DELTA):
                    # arrays are sized from the bytes really there, not the claimed length
                    room = min(rlen[0], size - pos)
                    pos = self._load_indom(buf, size, data, pos, room, kind, nxt)
                elif kind in (LABEL_V2, LABEL):
                    room = min(rlen[0], size - pos)
                    pos = self._load_labels(buf, size, data, pos, room, nxt, new_labels)
                elif kind == TEXT:
                    pos = self._load_text(buf, size, data, pos, nxt)
                else:
                    raise pmErr(PM_ERR_RECTYPE)
        finally:
            # chains already built (labels asked for before this archive was loaded)
            # take the new records in now
            for key in set(new_labels):
                if key in self.labels:
                    self._label_chain(key)
        if numdescs == 0:
            raise pmErr(PM_ERR_LOGREC)

    def _load_desc(self, buf, size, data, pos: int, scratch: _Scratch) -> int:
        desc = scratch.desc
        cap = 16
        while True:
            offs = scratch.array("names", "uint32_t", cap)
            lens = scratch.array("lens", "int32_t", cap)
            n = lib.pcp_archive_meta_desc(buf, size, pos, desc, cap, offs, lens, scratch.nxt)
            if n < 0:
                raise pmErr(n)
            if n <= cap:
                break
            cap = n
        t = (desc.pmid, desc.type, desc.indom, desc.sem, desc.units)
        self.add_desc(t)
        for i in range(n):
            # libpcp reads each name as a C string: it ends at its first NUL
            name = bytes(data[offs[i]:offs[i] + lens[i]]).split(b"\0", 1)[0]
            self.add_name(desc.pmid, name)
        return scratch.nxt[0]

    def add_desc(self, t: DescTuple) -> None:
        old = self.descs.get(t[0])
        if old is None:
            self.descs[t[0]] = t
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

    def add_name(self, pmid: int, name: bytes) -> None:
        known = self.name_to_pmid.get(name)
        if known is not None:
            return              # a name keeps the first pmid it was bound to
        parts = name.split(b".")
        if not name or any(not p for p in parts):
            return
        node = self.root
        for i, part in enumerate(parts):
            child = node.child(part)
            if child is None:
                if node.pmid is not None:
                    return      # a leaf cannot grow children
                child = node.add_child(part)
            node = child
        if node.children:
            return              # a non-leaf cannot become a leaf
        node.pmid = pmid
        self.name_to_pmid[name] = pmid
        self._names = None

    def names_of(self, pmid: int) -> List[bytes]:
        """All names of a pmid in libpcp's order: its PMID hash chain is built by a
        depth-first walk that pushes each leaf at the head, so the order is reversed."""
        if self._names is None:
            table: Dict[int, List[bytes]] = {}
            stack = [(b"", self.root)]
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

    def _load_indom(self, buf, size, data, pos: int, rec_len: int, kind: int,
                    scratch: _Scratch) -> int:
        head = scratch.indom_head
        cap = max(rec_len // 8, 1)
        insts = scratch.array("insts", "int32_t", cap)
        offs = scratch.array("names", "uint32_t", cap)
        lens = scratch.array("lens", "int32_t", cap)
        n = lib.pcp_archive_meta_indom(buf, size, pos, head, cap, insts, offs, lens, scratch.nxt)
        if n < 0:
            raise pmErr(n)
        if n > 0:
            names: List[Optional[bytes]] = [
                None if lens[i] < 0 else bytes(data[offs[i]:offs[i] + lens[i]])
                for i in range(n)]
            snap = InDomSnapshot((head.sec, head.nsec), list(insts[0:n]), names,
                                 kind == INDOM_DELTA)
            self._add_indom(head.indom, snap)
        return scratch.nxt[0]

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
        scratch = _Scratch()
        head = scratch.indom_head
        out: List[DiskInDom] = []
        pos = label_len
        while lib.pcp_archive_meta_header(buf, size, pos, rtype, rlen) == 0:
            if rtype[0] in (INDOM_V2, INDOM, INDOM_DELTA):
                room = min(rlen[0], size - pos)
                cap = max(room // 8, 1)
                insts = scratch.array("insts", "int32_t", cap)
                offs = scratch.array("names", "uint32_t", cap)
                lens = scratch.array("lens", "int32_t", cap)
                n = lib.pcp_archive_meta_indom(buf, size, pos, head, cap, insts, offs, lens,
                                               scratch.nxt)
                if n < 0:
                    break
                names: List[Optional[bytes]] = [
                    None if lens[i] < 0 else bytes(data[offs[i]:offs[i] + lens[i]])
                    for i in range(n)]
                out.append(((head.sec, head.nsec), head.indom, rtype[0] == INDOM_DELTA,
                            list(insts[0:n]), names))
            pos += rlen[0]
        return out

    def _add_indom(self, indom: int, snap: InDomSnapshot) -> None:
        chain = self.indoms.setdefault(indom, [])
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

    def _load_labels(self, buf, size, data, pos: int, rec_len: int, scratch: _Scratch,
                     touched: List[Tuple[int, int]]) -> int:
        """Check a label record with the C decoder now (libpcp reports a bad one at open)
        and keep its bytes; its sets are built when labels of its kind are first asked
        for (most contexts never ask, and building them is most of a load)."""
        head = scratch.label_head
        set_cap = max(rec_len // 12, 1)
        label_cap = max(rec_len // 8, 1)
        sets = scratch.array("sets", "pcp_labelset", set_cap)
        labels = scratch.array("labels", "pcp_label", label_cap)
        n = lib.pcp_archive_meta_labels(buf, size, pos, head, set_cap, sets, label_cap, labels,
                                        scratch.total, scratch.nxt)
        if n < 0:
            raise pmErr(n)
        end = scratch.nxt[0]
        ltype = head.type & ~(PM_LABEL_COMPOUND | PM_LABEL_OPTIONAL)
        ident = PM_ID_NULL if ltype == PM_LABEL_CONTEXT else head.ident
        key = (ltype, ident)
        # the record's bytes, decoded again later at offset 0 of this copy
        self._label_records.setdefault(key, []).append(
            (self._loads, (head.sec, head.nsec), bytes(data[pos:end]), rec_len))
        touched.append(key)
        return end

    def _label_chain(self, key: Tuple[int, int]) -> Optional[List[LabelRecord]]:
        """The label records of a kind and ident, newest first, with libpcp's discarding
        of repeated sets applied; built on first use from the records the loads kept."""
        pending = self._label_records.pop(key, None)
        if pending is not None:
            chain = self.labels.setdefault(key, [])
            # replayed archive by archive: libpcp discards repeated sets after each load
            for k, (load, stamp, raw, rec_len) in enumerate(pending):
                rec = LabelRecord(stamp, _decode_label_sets(raw, rec_len))
                i = 0
                while i < len(chain) and chain[i].stamp >= rec.stamp:
                    i += 1
                chain.insert(i, rec)
                if k + 1 == len(pending) or pending[k + 1][0] != load:
                    self._discard_repeated_labels([key])
        return self.labels.get(key)

    def _discard_repeated_labels(self, keys: List[Tuple[int, int]]) -> None:
        """libpcp drops, from each label record, the sets that the next older record of
        the same key already holds, and then records left with no sets."""
        for key in set(keys):
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

    def _load_text(self, buf, size, data, pos: int, scratch: _Scratch) -> int:
        ttype, ident, toff, tlen = scratch.ttype, scratch.ident, scratch.toff, scratch.tlen
        nxt = scratch.nxt
        sts = lib.pcp_archive_meta_text(buf, size, pos, ttype, ident, toff, tlen, nxt)
        if sts < 0:
            raise pmErr(sts)
        if sts == 0:
            text = bytes(data[toff[0]:toff[0] + tlen[0]])
            # a later record for the same kind and ident replaces the earlier one
            self.text_types.setdefault(ttype[0], {})[ident[0]] = text
        return nxt[0]

    def finish(self) -> None:
        """After the last load: delta instance-domain records are made full when their
        domain is first asked for (indom_chain), as libpcp does it lazily too; the
        outcome is the same for every chain that starts with a full record."""
        self._unfinished = set(self.indoms)

    # ---- queries -----------------------------------------------------------------------

    def indom_chain(self, indom: int) -> Optional[List[InDomSnapshot]]:
        """The records of an instance domain, newest first (None if it has none)."""
        chain = self.indoms.get(indom)
        if chain is not None and indom in self._unfinished:
            self._unfinished.discard(indom)
            _undelta(chain)
        return chain

    def all_indoms(self) -> Dict[int, List[InDomSnapshot]]:
        """Every instance domain's records (all made full)."""
        for indom in list(self._unfinished):
            self.indom_chain(indom)
        return self.indoms

    def indom_at(self, indom: int, stamp: Stamp) -> Optional[InDomSnapshot]:
        for snap in self.indom_chain(indom) or ():
            if snap.stamp <= stamp:
                return snap
        return None

    def label_records(self) -> Dict[Tuple[int, int], List[LabelRecord]]:
        """Every label record by (label type, ident), newest first, with libpcp's
        discarding of repeated sets applied (what pmdumplog -e walks)."""
        for key in list(self._label_records):
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

    def text(self, ident: int, level: int) -> bytes:
        """Help text with libpcp's fallback from HELP to ONELINE."""
        kind = level & ~PM_TEXT_DIRECT
        while True:
            table = self.text_types.get(kind)
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


def _decode_label_sets(raw: bytes, rec_len: int) -> List[LabelSetData]:
    """The label sets of one label record (its bytes, already checked at load)."""
    head = ffi.new("pcp_label_head *")
    set_cap = max(rec_len // 12, 1)
    label_cap = max(rec_len // 8, 1)
    sets = ffi.new("pcp_labelset[]", set_cap)
    labels = ffi.new("pcp_label[]", label_cap)
    total = ffi.new("int32_t *")
    nxt = ffi.new("uint64_t *")
    n = lib.pcp_archive_meta_labels(raw, len(raw), 0, head, set_cap, sets, label_cap, labels,
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
