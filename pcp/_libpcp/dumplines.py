"""pmdumplog's value lines of a record, written in C (csrc/printvalue.c) straight from the
result's columns: the head of each value set, its instances' names, each value as
pmPrintValue writes it and a metric's error as pmErrStr's text, without a Python object
per value.

A plan is made once per layout of records (the same value sets in the same order: an
archive's records repeat a few layouts) and reused; the instance names come as tables
(instance -> name), each turned into C arrays when the caller passes a table it did not
pass last time. Records the C does not write (event arrays, aggregates, a value whose
block type is not the metric's, a string that is not UTF-8) get None: the caller writes
those its own way."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from pcp._core.errors import pmErr, pmErrStr
from pcp._core.native import ffi, lib

# the first room for a record's lines; it grows for a larger record and stays grown
_FIRST_ROOM = 1 << 16
# the arena of instance names: its first room, and the size past which it starts over
# (the plans then bind again to the tables they are given next)
_FIRST_NAMES = 1 << 12
_MAX_NAMES = 1 << 20
# plans kept: an archive whose records rarely repeat a layout starts over past this many
_MAX_PLANS = 4096

SetPlan = Tuple[int, int, str, Optional[int]]


def _texts(entries: Dict[int, bytes]) -> Tuple[List[Tuple[int, int, int]], bytes]:
    """(key, offset, length) rows sorted by key, and the pool of their texts."""
    rows = []
    pool = bytearray()
    for key in sorted(entries):
        text = entries[key]
        rows.append((key, len(pool), len(text)))
        pool += text
    return rows, bytes(pool)


class Plan:
    """The value sets of one layout of records, as the C reads them: for each set to
    write (in order), its index in the result, the metric's type, its head text and
    which of the plan's instance domains names its instances (None: it has none)."""

    __slots__ = ("sets", "count", "heads", "indoms", "positions", "bound_to")

    def __init__(self, sets: Sequence[SetPlan]) -> None:
        self.count = len(sets)
        self.sets = ffi.new("pcp_printvalue_set[]", max(self.count, 1))
        heads = bytearray()
        self.indoms: List[int] = []            # the instance domains, each once
        # which of self.indoms each set's instances are named by (None: no domain)
        self.positions: List[Optional[int]] = []
        for n, (index, mtype, head, indom) in enumerate(sets):
            entry = self.sets[n]
            entry.set = index
            entry.type = mtype
            text = head.encode("utf-8", "surrogateescape")
            entry.head_off = len(heads)
            entry.head_len = len(text)
            heads += text
            entry.names_count = -1
            if indom is None:
                self.positions.append(None)
            else:
                if indom not in self.indoms:
                    self.indoms.append(indom)
                self.positions.append(self.indoms.index(indom))
        self.heads = bytes(heads)
        # the instance-domain records whose names the sets point at now
        self.bound_to: Optional[List[Any]] = None


class _NameArena:
    """Every instance-name table converted so far, one after another in C arrays (rows
    by instance, their texts in one pool), so that a plan binds to a table by its place:
    a table is converted once, however many plans use it."""

    def __init__(self) -> None:
        self.rows = ffi.new("pcp_printvalue_text[]", _FIRST_NAMES)
        self.pool = ffi.new("uint8_t[]", _FIRST_NAMES * 8)
        self.nrows = 0
        self.pool_len = 0
        # id of an instance-domain record -> (the record, first row, row count)
        self.placed: Dict[int, Tuple[Any, int, int]] = {}

    def place(self, snap: Any) -> Tuple[int, int]:
        """(first row, row count) of the names of an instance-domain record (anything
        with .insts and .names, names as bytes or None; None: no instances), as
        pmdumplog prints them: the first instance of an id, its name's bytes as they are
        (not UTF-8 either: libpcp passes bytes through)."""
        held = self.placed.get(id(snap))
        if held is not None and held[0] is snap:
            return held[1], held[2]
        first: Dict[int, bytes] = {}
        if snap is not None:
            for inst, name in zip(snap.insts, snap.names):
                if inst not in first:
                    first[inst] = name or b""
        rows, pool = _texts(first)
        self._room(len(rows), len(pool))
        base, start = self.pool_len, self.nrows
        if rows:
            made = ffi.new("pcp_printvalue_text[]", [(i, base + o, n) for i, o, n in rows])
            ffi.memmove(self.rows + start, made, ffi.sizeof(made))
        ffi.memmove(self.pool + base, pool, len(pool))
        self.nrows += len(rows)
        self.pool_len += len(pool)
        self.placed[id(snap)] = (snap, start, len(rows))
        return start, len(rows)

    def _room(self, nrows: int, nbytes: int) -> None:
        if self.nrows + nrows > len(self.rows):
            size = max(2 * len(self.rows), self.nrows + nrows)
            rows = ffi.new("pcp_printvalue_text[]", size)
            ffi.memmove(rows, self.rows, self.nrows * ffi.sizeof("pcp_printvalue_text"))
            self.rows = rows
        if self.pool_len + nbytes > len(self.pool):
            size = max(2 * len(self.pool), self.pool_len + nbytes)
            pool = ffi.new("uint8_t[]", size)
            ffi.memmove(pool, self.pool, self.pool_len)
            self.pool = pool

    def full(self) -> bool:
        return self.nrows > _MAX_NAMES or self.pool_len > 16 * _MAX_NAMES


class DumpLines:
    """The writer of records' value lines, with its plans, instance names and error
    texts."""

    def __init__(self) -> None:
        self.plans: Dict[Any, Plan] = {}
        self._names = _NameArena()
        self._room = ffi.new("uint8_t[]", _FIRST_ROOM)
        self._room_size = _FIRST_ROOM
        self._error_texts: Dict[int, bytes] = {}
        self._errors: Any = (ffi.new("pcp_printvalue_text[]", 1), 0, b"")

    def plan(self, key: Any) -> Optional[Plan]:
        """The plan made for a layout key, if any."""
        return self.plans.get(key)

    def add_plan(self, key: Any, sets: Sequence[SetPlan]) -> Plan:
        """The plan of a layout: for each set to write, (its index in the result, the
        metric's PM_TYPE_* (-1: unknown, which leaves a record with its values to the
        caller), its head text, its instance domain or None)."""
        if len(self.plans) >= _MAX_PLANS:
            self.plans.clear()
        plan = self.plans[key] = Plan(sets)
        return plan

    @staticmethod
    def pmids(result: Any) -> List[int]:
        """The pmid of each value set of a result, in order."""
        return ffi.unpack(result._r.c.pmid, result.numpmid)

    @staticmethod
    def size(result: Any, plan: Plan, header: int) -> int:
        """pmdumplog -s's size of the record (`header`: its header and trailer bytes)
        holding the plan's sets."""
        nbyte = lib.pcp_printvalue_record_size(plan.sets, plan.count, result._r.c, header)
        if nbyte < 0:
            raise pmErr(nbyte)
        return nbyte

    def _bind(self, plan: Plan, snaps: Sequence[Any]) -> None:
        if self._names.full():
            # start over: every plan binds again
            self._names = _NameArena()
            for other in self.plans.values():
                other.bound_to = None
        places = [self._names.place(snap) for snap in snaps]
        for n, position in enumerate(plan.positions):
            if position is not None:
                plan.sets[n].names_first, plan.sets[n].names_count = places[position]
        plan.bound_to = list(snaps)

    def _learn_errors(self, flat: Any, plan: Plan) -> bool:
        """Add the error texts of this record's failed sets that are not known yet;
        False when there were none to add (the C left the record for another reason)."""
        codes = {flat.c.numval[plan.sets[n].set] for n in range(plan.count)}
        new = [c for c in codes if c < 0 and c not in self._error_texts]
        for code in new:
            self._error_texts[code] = pmErrStr(code).encode("utf-8", "surrogateescape")
        if not new:
            return False
        rows, pool = _texts(self._error_texts)
        self._errors = (ffi.new("pcp_printvalue_text[]", rows), len(rows), pool)
        return True

    def text(self, result: Any, plan: Plan, snaps: Sequence[Any]) -> Optional[str]:
        """The lines of one record (a pmResult or pmHighResResult of this package) by its
        plan, with `snaps` the instance-domain records in force (each with .insts and
        .names, or None) for plan.indoms in order; None when the record is one the C
        leaves to the caller."""
        flat = result._r
        bound = plan.bound_to
        if bound is None or any(a is not b for a, b in zip(bound, snaps)):
            self._bind(plan, snaps)
        names = self._names
        learned = False
        while True:
            errors, nerrors, error_pool = self._errors
            written = lib.pcp_printvalue_dump_sets(
                self._room, self._room_size, plan.sets, plan.count, flat.c, flat.pdu,
                len(flat.pdu), plan.heads, len(plan.heads), names.rows, names.nrows,
                names.pool, names.pool_len, errors, nerrors, error_pool, len(error_pool))
            if written == lib.PCP_PRINTVALUE_ROOM:
                self._room_size *= 2
                self._room = ffi.new("uint8_t[]", self._room_size)
                continue
            if written == lib.PCP_PRINTVALUE_OTHER and not learned:
                learned = True
                if self._learn_errors(flat, plan):
                    continue
            if written < 0:
                return None
            return ffi.buffer(self._room, written)[:].decode("utf-8", "surrogateescape")
