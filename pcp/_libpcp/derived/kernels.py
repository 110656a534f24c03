"""Derived metric evaluation in C (csrc/derived_eval.c): the tree is walked here, each
node computed by one kernel over its whole instance vector, and the result assembled in
C, so no value becomes a Python object. Trees whose every node is numeric take this
path; the others (strings, aggregates and events renamed or chosen by ?:, count() of a
string metric) take pcp._libpcp.derived.evaluate, which computes the same thing."""
from __future__ import annotations

import bisect
from typing import Any, List, Optional, Sequence, Tuple

from pcp._core.constants import (PM_ERR_PMID, PM_INDOM_NULL, PM_TYPE_32, PM_TYPE_64,
                                 PM_TYPE_DOUBLE, PM_TYPE_FLOAT, PM_TYPE_U32, PM_TYPE_U64)
from pcp._core.longdouble import timespec_to_real
from pcp._core.native import ffi, lib
from pcp._core.units import unit_fields
from pcp._core.errors import pmErr
from pcp._decode.result import FlatResult
from pcp._libpcp.derived.bind import NUMERIC, PROMOTE
from pcp._libpcp.derived.evaluate import Operands, _constant, _time_scale
from pcp._libpcp.derived.nodes import AGGREGATES, BOOLEAN, RELATIONAL, N, Node
from pcp._libpcp.derived.regex import matches
from pcp._libpcp.values import scale_factors

_IN_NULL = -1
_REGEX_INST_COMPACT = 100
_MEMBER = {PM_TYPE_32: "l", PM_TYPE_U32: "ul", PM_TYPE_64: "ll", PM_TYPE_U64: "ull",
           PM_TYPE_FLOAT: "f", PM_TYPE_DOUBLE: "d"}


def all_numeric(np: Optional[Node]) -> bool:
    """Whether every node of a bound tree holds numbers (the C path)."""
    if np is None:
        return True
    if np.type not in (N.PATTERN, N.SCALE) and np.desc[1] not in NUMERIC:
        return False
    return all_numeric(np.left) and all_numeric(np.right)


class _Vec:
    """A C vector (pcp_dvec) and the memory behind it."""

    __slots__ = ("c", "inst", "val")

    def __init__(self, cap: int) -> None:
        cap = max(cap, 1)
        self.c = ffi.new("pcp_dvec *")
        self.inst = ffi.new("int32_t[]", cap)
        self.val = ffi.new("pcp_atom[]", cap)
        self.c.cap = cap
        self.c.inst = self.inst
        self.c.val = self.val


def _room(vec: Optional[_Vec], need: int) -> _Vec:
    """`vec` if it has room for `need` values, else a bigger one (numval carried)."""
    if vec is not None and vec.c.cap >= need:
        return vec
    new = _Vec(max(need, 2 * (vec.c.cap if vec is not None else 0)))
    if vec is not None:
        new.c.numval = vec.c.numval
    return new


class CState:
    """A node's C vectors: `cur` (and for the operand of delta()/rate() `last`), the
    fetch times, and matchinst()'s table of instances seen."""

    __slots__ = ("cur", "last", "stamp", "last_stamp", "time_scale", "factors", "exact",
                 "table_insts", "table_match", "table_used", "c_insts", "c_match", "c_used",
                 "used", "unknown")

    def __init__(self) -> None:
        self.cur: _Vec = _Vec(1)
        self.cur.c.numval = 0
        self.last: _Vec = _Vec(1)
        self.last.c.numval = 0
        self.stamp = (0, 0)
        self.last_stamp = (0, 0)
        self.time_scale = -1.0
        self.factors: Optional[Tuple[int, int]] = None
        self.exact: Optional[int] = None
        self.table_insts: List[int] = []
        self.table_match: List[int] = []
        self.c_insts: Any = None
        self.c_match: Any = None
        self.c_used: Any = ffi.new("int32_t[]", 1)
        self.used = 0
        self.unknown: Any = None


def _st(np: Node) -> CState:
    if np.state is None:
        np.state = CState()
    return np.state


def _numval(np: Node) -> int:
    return np.state.cur.c.numval


def _set_one(s: CState, type_: int, value: Any) -> None:
    s.cur = _room(s.cur, 1)
    atom = s.cur.val[0]
    setattr(atom, _MEMBER.get(type_, "l"), value)
    s.cur.inst[0] = _IN_NULL
    s.cur.c.numval = 1


def evaluate(np: Node, ops: Operands) -> int:
    """eval_expr() of one node and its operands; the root's numval (< 0 an error)."""
    s = _st(np)
    if np.left is not None:
        sts = evaluate(np.left, ops)
        if sts < 0:
            if np.type == N.COUNT:
                _set_one(s, PM_TYPE_U32, 0)
                return 1
            return sts
    if np.right is not None:
        sts = evaluate(np.right, ops)
        if sts < 0:
            return sts
    t = np.type
    if t in (N.INTEGER, N.DOUBLE):
        if s.cur.c.numval == 0:
            _set_one(s, np.desc[1], _constant(np))
        return 1
    if t == N.DEFINED:
        _set_one(s, PM_TYPE_U32, np.defined)
        return 1
    if t in (N.ANON, N.SCALE, N.PATTERN, N.COLON):
        return 0
    if t == N.NAME:
        j = ops.index.get(np.pmid)
        if j is None:
            return PM_ERR_PMID
        if np.save_last:
            s.cur, s.last = s.last, s.cur
        need = max(ops.flat.numval[j], 0)
        s.cur = _room(s.cur, need)
        s.cur.c.numval = lib.pcp_derived_load(ops.flat.c, j, np.desc[1], s.cur.c)
        return s.cur.c.numval
    if t in (N.DELTA, N.RATE):
        return _delta_rate(np, s, ops)
    if t in (N.NOT, N.NEG):
        left = np.left.state.cur
        s.cur = _room(s.cur, max(left.c.numval, 0))
        return lib.pcp_derived_unary(t, np.left.desc[1], left.c, s.cur.c)
    if t == N.QUEST:
        guard, yes, no = np.left, np.right.left, np.right.right
        need = max(_numval(yes), _numval(no), 0)
        s.cur = _room(s.cur, need)
        from_no = yes.desc[2] == PM_INDOM_NULL and no.desc[2] != PM_INDOM_NULL
        return lib.pcp_derived_ternary(guard.desc[1], guard.state.cur.c, yes.state.cur.c,
                                       no.state.cur.c, int(from_no), s.cur.c)
    if t == N.RESCALE:
        if s.factors is None:
            s.factors = scale_factors(np.left.desc[4], np.right.desc[4])
        left = np.left.state.cur
        s.cur = _room(s.cur, max(left.c.numval, 0))
        mult, div = s.factors
        return lib.pcp_derived_rescale(np.desc[1], mult, div, left.c, s.cur.c)
    if t == N.INSTANT:
        s.last_stamp, s.stamp = s.stamp, ops.stamp
        s.cur = np.left.state.cur
        return s.cur.c.numval
    if t in AGGREGATES:
        return lib.pcp_derived_aggregate(t, np.desc[1], np.left.desc[1],
                                         np.left.state.cur.c, s.cur.c)
    if t == N.SCALAR:
        left = np.left.state.cur
        n = min(left.c.numval, 1)
        s.cur.c.numval = n
        if n > 0:
            s.cur.val[0] = left.val[0]
            s.cur.inst[0] = _IN_NULL
        return n
    if t == N.FILTERINST:
        return _filter(np, s, ops)
    return _binary(np, s)


def _delta_rate(np: Node, s: CState, ops: Operands) -> int:
    left = np.left.state
    s.last_stamp, s.stamp = s.stamp, ops.stamp
    cur, last = left.cur, left.last
    s.cur = _room(s.cur, max(min(cur.c.numval, last.c.numval), 0))
    dt, scale = 1.0, 1.0
    if np.type == N.RATE:
        sec = s.stamp[0] - s.last_stamp[0]
        nsec = s.stamp[1] - s.last_stamp[1]
        if nsec < 0:
            sec, nsec = sec - 1, nsec + 1000000000
        dt = timespec_to_real(sec, nsec)
        fields = unit_fields(np.left.desc[4])
        if fields[1] == 1:
            if s.time_scale < 0:
                s.time_scale = _time_scale(fields[4])
            scale = s.time_scale
    return lib.pcp_derived_delta(1 if np.type == N.RATE else 0, np.left.desc[1], cur.c, last.c,
                                 dt, scale, s.cur.c)


def _binary(np: Node, s: CState) -> int:
    left, right = np.left, np.right
    lv, rv = left.state.cur, right.state.cur
    t = np.type
    relational = t in RELATIONAL or t in BOOLEAN
    ltype, rtype = left.desc[1], right.desc[1]
    otype = PROMOTE[ltype][rtype] if relational else np.desc[1]
    lnull, rnull = left.desc[2] == PM_INDOM_NULL, right.desc[2] == PM_INDOM_NULL
    s.cur = _room(s.cur, max(lv.c.numval, rv.c.numval, 0))
    return lib.pcp_derived_binary(t, otype, int(relational), ltype, left.mul, left.div,
                                  int(lnull), lv.c, rtype, right.mul, right.div, int(rnull),
                                  rv.c, s.cur.c)


def _filter(np: Node, s: CState, ops: Operands) -> int:
    pattern, right = np.left, np.right
    rv = right.state.cur
    s.last_stamp, s.stamp = s.stamp, ops.stamp
    ps = _st(pattern)
    if not pattern.regex:
        if rv.c.numval > 0 and ps.exact is None:
            found = ops.lookup_instance(right.desc[2], pattern.value)
            if found is None:
                s.cur.c.numval = 0
                return 0
            ps.exact = found
        if ps.exact is None:
            s.cur.c.numval = 0
            return 0
        return lib.pcp_derived_filter_exact(ps.exact, rv.c, s.cur.c)
    s.cur = _room(s.cur, max(rv.c.numval, 0))
    while True:
        if ps.unknown is None or len(ps.unknown) < max(rv.c.numval, 1):
            ps.unknown = ffi.new("int32_t[]", max(rv.c.numval, 1))
        n = lib.pcp_derived_filter_table(rv.c, ps.c_insts if ps.c_insts is not None else ffi.NULL,
                                         ps.c_match if ps.c_match is not None else ffi.NULL,
                                         ps.c_used, len(ps.table_insts), ps.unknown, s.cur.c)
        if n >= 0:
            break
        used = list(ffi.unpack(ps.c_used, len(ps.table_insts))) if ps.table_insts else []
        for inst in ffi.unpack(ps.unknown, -n):
            if inst in ps.table_insts:
                continue
            name = ops.name_instance(right.desc[2], inst)
            match = False
            if name is not None and pattern.compiled is not None:
                match = matches(pattern.compiled, name.split(b" ", 1)[0])
                match = (not match) if pattern.invert else match
            at = bisect.bisect_left(ps.table_insts, inst)
            ps.table_insts.insert(at, inst)
            ps.table_match.insert(at, int(match))
            used.insert(at, 0)
        _load_table(ps, used)
    ps.used += 1
    if ps.used >= _REGEX_INST_COMPACT:
        used = list(ffi.unpack(ps.c_used, len(ps.table_insts)))
        keep = [i for i, u in enumerate(used) if u >= _REGEX_INST_COMPACT // 2]
        ps.table_insts = [ps.table_insts[i] for i in keep]
        ps.table_match = [ps.table_match[i] for i in keep]
        _load_table(ps, [0] * len(keep))
        ps.used = 0
    return n


def _load_table(ps: CState, used: List[int]) -> None:
    n = max(len(ps.table_insts), 1)
    ps.c_insts = ffi.new("int32_t[]", ps.table_insts or [0])
    ps.c_match = ffi.new("int32_t[]", ps.table_match or [0])
    ps.c_used = ffi.new("int32_t[]", used or [0] * n)


# ---- the result ---------------------------------------------------------------------

def values_of(np: Node, numval: int) -> Tuple[List[int], List[Any]]:
    """The root's values as Python lists (for a result assembled in Python)."""
    vec = np.state.cur
    member = _MEMBER[np.desc[1]]
    insts = list(ffi.unpack(vec.inst, numval))
    vals = [getattr(vec.val[i], member) for i in range(numval)]
    return insts, vals


def assemble(flat: FlatResult, pmids: Sequence[int], src_set: Sequence[int],
             numvals: Sequence[int], roots: Sequence[Optional[Node]]) -> FlatResult:
    """The result of a fetch with the derived value sets computed in C."""
    n = len(pmids)
    c_pmids = ffi.new("uint32_t[]", list(pmids))
    c_src = ffi.new("int32_t[]", list(src_set))
    c_numvals = ffi.new("int32_t[]", list(numvals))
    c_vecs = ffi.new("pcp_dvec *[]", n)
    c_types = ffi.new("int32_t[]", n)
    for j, root in enumerate(roots):
        if root is not None:
            c_vecs[j] = root.state.cur.c
            c_types[j] = root.desc[1]
    sizes = ffi.new("int32_t *")
    nbytes = ffi.new("uint32_t *")
    data = flat.pdu
    sts = lib.pcp_derived_assemble(flat.c, data, len(data), n, c_pmids, c_src, c_numvals,
                                   c_vecs, c_types, ffi.NULL, ffi.NULL, sizes, nbytes)
    if sts < 0:
        raise pmErr(sts)
    c, mem = FlatResult.columns(n, sizes[0])
    buf = ffi.new("uint8_t[]", max(nbytes[0], 1))
    sts = lib.pcp_derived_assemble(flat.c, data, len(data), n, c_pmids, c_src, c_numvals,
                                   c_vecs, c_types, c, buf, sizes, nbytes)
    if sts < 0:
        raise pmErr(sts)
    return FlatResult.wrap(c, mem, bytes(ffi.buffer(buf, nbytes[0])))
