"""Evaluation of bound derived metrics over one fetch, as libpcp 6.0.3's eval_expr does
it (derive_fetch.c): each node holds its values (instance, value) from this fetch, the
operand nodes of delta() and rate() also the previous fetch's, and the arithmetic is C's
for each PM_TYPE_* (wrapping integers, float32 arithmetic for FLOAT, libpcp's division
by zero, its instance matching between operands)."""
from __future__ import annotations

import ctypes
import math
import struct

from pcp._core.constants import (PM_ERR_CONV, PM_ERR_INDOM, PM_ERR_LOGREC, PM_ERR_PMID, PM_ERR_TYPE,
                                 PM_INDOM_NULL, PM_TIME_SEC, PM_TYPE_32, PM_TYPE_64,
                                 PM_TYPE_DOUBLE, PM_TYPE_FLOAT, PM_TYPE_STRING, PM_TYPE_U32,
                                 PM_TYPE_U64)
from pcp._core.errors import pmErr
from pcp._core.longdouble import timespec_to_real
from pcp._core.structs import pmAtomValue
from pcp._core.units import unit_fields
from pcp._libpcp.derived.bind import NUMERIC, PROMOTE
from pcp._libpcp.derived.nodes import BOOLEAN, RELATIONAL, N, Node
from pcp._libpcp.derived.regex import matches
from pcp._libpcp.values import conv_scale

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, Callable, List, Optional, Sequence, Tuple

PM_IN_NULL_INT = -1
_REGEX_INST_COMPACT = 100


class State:
    """One node's values: `numval` (< 0 an error code) and parallel instance/value lists;
    for the operand of delta()/rate() also the previous fetch's."""

    __slots__ = ("numval", "insts", "vals", "last_numval", "last_insts", "last_vals",
                 "stamp", "last_stamp", "time_scale", "seen", "used", "exact")

    def __init__(self) -> None:
        self.numval = 0
        self.insts: List[int] = []
        self.vals: List[Any] = []
        self.last_numval = 0
        self.last_insts: List[int] = []
        self.last_vals: List[Any] = []
        self.stamp = (0, 0)
        self.last_stamp = (0, 0)
        self.time_scale = -1.0
        self.seen: dict = {}            # matchinst(): inst -> [match, used]
        self.used = 0
        self.exact: Optional[int] = None   # metric[name]: the instance id, once known


def _state(np: Node) -> State:
    if np.state is None:
        np.state = State()
    return np.state


# ---- C arithmetic -----------------------------------------------------------------

def _wrap(type_: int, v: int) -> int:
    if type_ == PM_TYPE_32:
        return ((v + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
    if type_ == PM_TYPE_U32:
        return v & 0xFFFFFFFF
    if type_ == PM_TYPE_64:
        return ((v + (1 << 63)) & 0xFFFFFFFFFFFFFFFF) - (1 << 63)
    return v & 0xFFFFFFFFFFFFFFFF


def f32(x: float) -> float:
    """A double rounded to C float (overflow to infinity, as the cast does)."""
    return ctypes.c_float(x).value


def _int_to_f32(v: int) -> float:
    """C's conversion of an integer to float: one rounding, to nearest even."""
    if -(1 << 53) <= v <= (1 << 53):
        return f32(float(v))
    sign = -1 if v < 0 else 1
    a = abs(v)
    shift = a.bit_length() - 24
    q, r = divmod(a, 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return f32(sign * float(q << shift))


def _convert(value: Any, from_type: int, to_type: int) -> Any:
    """An operand converted to the type of the operation (bin_op's promotion)."""
    if to_type in (PM_TYPE_32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64):
        return _wrap(to_type, value)
    if to_type == PM_TYPE_FLOAT:
        if from_type in (PM_TYPE_FLOAT, PM_TYPE_DOUBLE):
            return f32(value)
        return _int_to_f32(value)
    return float(value)


def _divide(a: float, b: float) -> float:
    """libpcp's derived division: 0 when the dividend is 0, else C's division."""
    if a == 0:
        return 0.0
    return _c_divide(a, b)


def _bin_op(type_: int, op: int, a: Any, ltype: int, lmul: int, ldiv: int,
            b: Any, rtype: int, rmul: int, rdiv: int) -> Any:
    l = _convert(a, ltype, type_)
    r = _convert(b, rtype, type_)
    if type_ == PM_TYPE_DOUBLE:
        l = (l / ldiv) * lmul
        r = (r / rdiv) * rmul
    if op == N.PLUS:
        res = l + r
    elif op == N.MINUS:
        res = l - r
    elif op == N.STAR:
        res = l * r
    elif op == N.SLASH:
        return _divide(l, r) if type_ == PM_TYPE_DOUBLE else 0
    elif op == N.LT:
        res = int(l < r)
    elif op == N.LEQ:
        res = int(l <= r)
    elif op == N.EQ:
        res = int(l == r)
    elif op == N.GEQ:
        res = int(l >= r)
    elif op == N.GT:
        res = int(l > r)
    elif op == N.NEQ:
        res = int(l != r)
    elif op == N.AND:
        res = int(l != 0 and r != 0)
    else:
        res = int(l != 0 or r != 0)
    if type_ == PM_TYPE_FLOAT:
        return f32(res)
    if type_ == PM_TYPE_DOUBLE:
        return float(res)
    return _wrap(type_, res)


def _truth(value: Any) -> bool:
    return value != 0


def _to_u32_result(value: Any) -> int:
    """(__uint32_t) of a relational result held in any type (it is 0 or 1)."""
    return int(value) & 0xFFFFFFFF


def _constant(np: Node) -> Any:
    text = np.value.decode("latin-1")
    type_ = np.desc[1]
    if type_ in (PM_TYPE_FLOAT, PM_TYPE_DOUBLE):
        try:
            d = float(text)
        except ValueError:
            d = 0.0
        return f32(d) if type_ == PM_TYPE_FLOAT else d
    try:
        v = int(float(text)) if "." in text else int(text)
    except ValueError:
        v = 0
    if type_ in (PM_TYPE_32, PM_TYPE_U32):
        return _wrap(type_, _wrap(PM_TYPE_32, v))       # atoi()
    return _wrap(type_, v)


# ---- the operand values of one fetch ----------------------------------------------

class Operands:
    """The extended fetch's value sets, by pmid (first occurrence, as libpcp's scan),
    and how to name an instance at the result's time (matchinst)."""

    def __init__(self, flat: Any, name_instance: Callable[[int, int], Optional[bytes]],
                 lookup_instance: Callable[[int, bytes], Optional[int]],
                 indom_instances: Optional[Callable[[int], Any]] = None) -> None:
        self.flat = flat
        # an instance domain's instances now, in the profile (a list), or an error code
        self.indom_instances = indom_instances
        self.index = {}
        for j, pmid in enumerate(flat.pmid):
            self.index.setdefault(pmid, j)
        self.stamp = (flat.sec, flat.nsec)
        self.name_instance = name_instance
        self.lookup_instance = lookup_instance

    def values(self, pmid: int, type_: int) -> Tuple[int, List[int], List[Any]]:
        j = self.index.get(pmid)
        if j is None:
            return PM_ERR_PMID, [], []
        flat = self.flat
        numval = flat.numval[j]
        if numval <= 0:
            return numval, [], []
        first = flat.first[j]
        ks = range(first, first + numval)
        insts = [flat.inst[k] for k in ks]
        vtypes = flat.vtype
        if type_ in (PM_TYPE_32, PM_TYPE_U32):
            vals = [_wrap(type_, flat.ival[k]) for k in ks]
        elif type_ in (PM_TYPE_64, PM_TYPE_U64):
            if any(vtypes[k] < 0 for k in ks):
                return PM_ERR_LOGREC, [], []
            vals = [_wrap(type_, flat.ival[k]) for k in ks]
        elif type_ == PM_TYPE_FLOAT:
            vals = [struct.unpack("=f", struct.pack("=i", _wrap(PM_TYPE_32, flat.ival[k])))[0]
                    if vtypes[k] < 0 else flat.dval[k] for k in ks]
        elif type_ == PM_TYPE_DOUBLE:
            if any(vtypes[k] < 0 for k in ks):
                return PM_ERR_LOGREC, [], []
            vals = [flat.dval[k] for k in ks]
        elif type_ == PM_TYPE_STRING:
            if any(vtypes[k] < 0 for k in ks):
                return PM_ERR_LOGREC, [], []
            vals = [flat.payload(k) for k in ks]
        elif 7 <= type_ <= 10:
            if any(vtypes[k] < 0 for k in ks):
                return PM_ERR_LOGREC, [], []
            vals = [(vtypes[k], flat.payload(k)) for k in ks]
        else:
            return PM_ERR_TYPE, [], []
        return numval, insts, vals


# ---- eval_expr ----------------------------------------------------------------------

def _free(np: Node, s: State) -> None:
    if np.save_last:
        s.last_numval, s.last_insts, s.last_vals = s.numval, s.insts, s.vals
        s.insts, s.vals = [], []
    else:
        s.numval, s.insts, s.vals = 0, [], []


def evaluate(np: Node, ops: Operands) -> int:
    """Evaluate the tree for this fetch; returns the root's numval (< 0 an error)."""
    s = _state(np)
    if np.left is not None:
        sts = evaluate(np.left, ops)
        if sts < 0:
            if np.type == N.COUNT:
                s.numval, s.insts, s.vals = 1, [PM_IN_NULL_INT], [0]
                return 1
            return sts
    if np.right is not None:
        sts = evaluate(np.right, ops)
        if sts < 0:
            return sts
    t = np.type
    if t in (N.INTEGER, N.DOUBLE):
        if np.desc[2] != PM_INDOM_NULL:
            return _constant_over_indom(np, s, ops)
        if s.numval == 0:
            s.numval, s.insts, s.vals = 1, [PM_IN_NULL_INT], [_constant(np)]
        return 1
    if t == N.DEFINED:
        s.numval, s.insts, s.vals = 1, [PM_IN_NULL_INT], [np.defined]
        return 1
    if t in (N.ANON, N.SCALE, N.PATTERN, N.COLON, N.NOVALUE):
        return 0
    if t == N.NAME:
        numval, insts, vals = ops.values(np.pmid, np.desc[1])
        if numval == PM_ERR_PMID and np.pmid not in ops.index:
            return PM_ERR_PMID
        _free(np, s)
        s.numval, s.insts, s.vals = numval, insts, vals
        return numval
    if t in (N.DELTA, N.RATE):
        return _delta_rate(np, s, ops)
    if t in (N.NOT, N.NEG):
        return _unary(np, s)
    if t == N.QUEST:
        return _ternary(np, s)
    if t == N.RESCALE:
        return _rescale(np, s)
    if t == N.INSTANT:
        left = np.left.state
        s.last_stamp, s.stamp = s.stamp, ops.stamp
        s.numval = left.numval
        if s.numval > 0:
            s.insts, s.vals = left.insts, left.vals
        return s.numval
    if t in (N.AVG, N.COUNT, N.SUM, N.MAX, N.MIN, N.SCALAR):
        return _aggregate(np, s)
    if t == N.FILTERINST:
        return _filter(np, s, ops)
    return _binary(np, s)


def _constant_over_indom(np: Node, s: State, ops: Operands) -> int:
    """adjust_constant() of 6.3: a constant given an instance domain (mkconst()'s
    meta= or indom=) has its value for each instance the domain has now, within the
    instance profile (pmGetInDom's error, when it fails)."""
    # (the bulk readers' rows know no instance domain: PM_ERR_INDOM there)
    source = getattr(ops, "indom_instances", None)
    insts = source(np.desc[2]) if source is not None else PM_ERR_INDOM
    if isinstance(insts, int):
        s.numval, s.insts, s.vals = insts, [], []
        return insts
    if s.numval != len(insts) or s.insts != insts:
        value = _constant(np)
        s.numval, s.insts, s.vals = len(insts), list(insts), [value] * len(insts)
    return s.numval


def _unary(np: Node, s: State) -> int:
    """! (0 or 1 as a 32-bit word) and unary minus (signed in the operand's width)."""
    left = np.left.state
    _free(np, s)
    s.numval = left.numval
    if s.numval <= 0:
        return s.numval
    s.insts = list(left.insts)
    ltype = np.left.desc[1]
    if np.type == N.NOT:
        s.vals = [int(v == 0) for v in left.vals]
    elif ltype in (PM_TYPE_32, PM_TYPE_U32):
        s.vals = [_wrap(PM_TYPE_32, -v) for v in left.vals]
    elif ltype in (PM_TYPE_64, PM_TYPE_U64):
        s.vals = [_wrap(PM_TYPE_64, -v) for v in left.vals]
    else:
        s.vals = [-v for v in left.vals]
    return s.numval


def _delta_rate(np: Node, s: State, ops: Operands) -> int:
    left = np.left.state
    s.last_stamp, s.stamp = s.stamp, ops.stamp
    _free(np, s)
    s.numval = min(left.numval, left.last_numval)
    if s.numval <= 0:
        return s.numval
    ltype = np.left.desc[1]
    insts: List[int] = []
    vals: List[Any] = []
    last_index = None
    dt = None
    for i, inst in enumerate(left.insts[:left.numval]):
        j = i if i < left.last_numval else 0
        if inst != left.last_insts[j]:
            if last_index is None:
                last_index = {}
                for jj, li in enumerate(left.last_insts):
                    last_index.setdefault(li, jj)
            j = last_index.get(inst, -1)
            if j < 0:
                continue
        cur, prev = left.vals[i], left.last_vals[j]
        if np.type == N.DELTA:
            if ltype in (PM_TYPE_32, PM_TYPE_64):
                v = _wrap(ltype, cur - prev)
            elif ltype == PM_TYPE_U32:
                v = cur - prev                           # as 64-bit, can be negative
            elif ltype == PM_TYPE_U64:
                v = float(cur) - float(prev)
            elif ltype == PM_TYPE_FLOAT:
                v = f32(cur - prev)
            elif ltype == PM_TYPE_DOUBLE:
                v = cur - prev
            else:
                return PM_ERR_CONV
        else:
            if ltype in (PM_TYPE_32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64):
                v = float(_wrap(ltype, cur - prev))
            elif ltype == PM_TYPE_FLOAT:
                v = float(f32(cur - prev))
            elif ltype == PM_TYPE_DOUBLE:
                v = cur - prev
            else:
                return PM_ERR_CONV
            if dt is None:
                sec = s.stamp[0] - s.last_stamp[0]
                nsec = s.stamp[1] - s.last_stamp[1]
                if nsec < 0:
                    sec, nsec = sec - 1, nsec + 1000000000
                dt = timespec_to_real(sec, nsec)
            v = _c_divide(v, dt)
            if unit_fields(np.left.desc[4])[1] == 1:
                if s.time_scale < 0:
                    s.time_scale = _time_scale(unit_fields(np.left.desc[4])[4])
                v *= s.time_scale
        insts.append(inst)
        vals.append(v)
    s.insts, s.vals, s.numval = insts, vals, len(insts)
    return s.numval


def _c_divide(a: float, b: float) -> float:
    """IEEE division as C does it (no exception on a zero divisor)."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _time_scale(scale_time: int) -> float:
    factor = 1.0
    if scale_time > PM_TIME_SEC:
        for _ in range(PM_TIME_SEC, scale_time):
            factor *= 60
    else:
        for _ in range(scale_time, PM_TIME_SEC):
            factor /= 1000
    return factor


def _ternary(np: Node, s: State) -> int:
    guard, yes, no = np.left, np.right.left, np.right.right
    _free(np, s)
    g, y, n = guard.state, yes.state, no.state
    for part, node in ((g, guard), (y, yes), (n, no)):
        if part.numval <= 0 and node.type != N.NOVALUE:
            s.numval = part.numval
            return s.numval
    numval = max(y.numval, n.numval)
    pick_inst = no if (yes.desc[2] == PM_INDOM_NULL and no.desc[2] != PM_INDOM_NULL) else yes
    pick = None
    insts, vals = [], []
    for i in range(numval):
        if i < g.numval:
            pick = yes if _truth(g.vals[i]) else no
        if pick.type == N.NOVALUE:
            # libpcp counts the value out (and leaves its slot unset: the values here
            # are the others, in order)
            continue
        ps = pick.state
        vals.append(ps.vals[i] if i < ps.numval else ps.vals[0])
        pi = pick_inst.state
        insts.append(pi.insts[i] if i < len(pi.insts) else 0)
    s.numval, s.insts, s.vals = len(vals), insts, vals
    return s.numval


def _rescale(np: Node, s: State) -> int:
    left = np.left.state
    _free(np, s)
    if left.numval <= 0:
        s.numval = left.numval
        return s.numval
    type_ = np.desc[1]
    insts, vals = [], []
    for inst, v in zip(left.insts, left.vals):
        atom = pmAtomValue()
        field = {PM_TYPE_32: "l", PM_TYPE_U32: "ul", PM_TYPE_64: "ll", PM_TYPE_U64: "ull",
                 PM_TYPE_FLOAT: "f", PM_TYPE_DOUBLE: "d"}[type_]
        setattr(atom, field, v)
        try:
            out = conv_scale(type_, atom, np.left.desc[4], np.right.desc[4])
        except pmErr:
            continue
        insts.append(inst)
        vals.append(getattr(out, field))
    s.numval, s.insts, s.vals = len(insts), insts, vals
    return s.numval


def _aggregate(np: Node, s: State) -> int:
    left = np.left.state
    t = np.type
    if not s.insts:
        s.insts, s.vals = [PM_IN_NULL_INT], [0]
    if t == N.COUNT:
        s.numval, s.vals = 1, [left.numval]
        return 1
    if t == N.SCALAR:
        s.numval = min(left.numval, 1)
        if s.numval > 0:
            s.vals = [left.vals[0]]
        return s.numval
    s.numval = 1
    type_ = np.desc[1]
    if t == N.AVG:
        n = left.numval
        acc = 0.0
        ltype = np.left.desc[1]
        for v in left.vals[:max(n, 0)]:
            fv = f32(v) if ltype in (PM_TYPE_FLOAT, PM_TYPE_DOUBLE) else _int_to_f32(v)
            acc = f32(acc + f32(fv / _int_to_f32(n)))
        s.vals = [acc]
        return 1
    if t == N.SUM:
        acc = 0.0 if type_ in (PM_TYPE_FLOAT, PM_TYPE_DOUBLE) else 0
        for v in left.vals[:max(left.numval, 0)]:
            if type_ == PM_TYPE_FLOAT:
                acc = f32(acc + v)
            elif type_ == PM_TYPE_DOUBLE:
                acc = acc + v
            else:
                acc = _wrap(type_, acc + v)
        s.vals = [acc]
        return 1
    best = s.vals[0]
    for i, v in enumerate(left.vals[:max(left.numval, 0)]):
        if i == 0 or (t == N.MAX and best < v) or (t == N.MIN and best > v):
            best = v
    s.vals = [best]
    return 1


def _filter(np: Node, s: State, ops: Operands) -> int:
    pattern, right = np.left, np.right
    rs = right.state
    s.last_stamp, s.stamp = s.stamp, ops.stamp
    if pattern.regex:
        _free(np, s)
        ps = _state(pattern)
        insts, vals = [], []
        for inst, v in zip(rs.insts, rs.vals):
            entry = ps.seen.get(inst)
            if entry is None:
                match = False
                name = ops.name_instance(right.desc[2], inst)
                if name is not None and pattern.compiled is not None:
                    name = name.split(b" ", 1)[0]
                    match = matches(pattern.compiled, name)
                    match = (not match) if pattern.invert else match
                entry = ps.seen[inst] = [match, 0]
            entry[1] += 1
            if entry[0]:
                insts.append(inst)
                vals.append(v)
        s.numval, s.insts, s.vals = len(insts), insts, vals
        ps.used += 1
        if ps.used >= _REGEX_INST_COMPACT:
            ps.seen = {i: [m, 0] for i, (m, used) in ps.seen.items()
                       if used >= _REGEX_INST_COMPACT // 2}
            ps.used = 0
        return s.numval
    s.numval = 0
    ps = _state(pattern)
    for inst, v in zip(rs.insts, rs.vals):
        if ps.exact is None:
            found = ops.lookup_instance(right.desc[2], pattern.value)
            if found is None:
                break
            ps.exact = found
        if ps.exact == inst:
            s.numval, s.insts, s.vals = 1, [inst], [v]
            break
    return s.numval


def _binary(np: Node, s: State) -> int:
    left, right = np.left, np.right
    ls, rs = left.state, right.state
    _free(np, s)
    if ls.numval <= 0 or rs.numval <= 0:
        s.numval = 0
        return 0
    lnull, rnull = left.desc[2] == PM_INDOM_NULL, right.desc[2] == PM_INDOM_NULL
    if lnull:
        numval = rs.numval
    elif rnull:
        numval = ls.numval
    else:
        numval = min(ls.numval, rs.numval)
    t = np.type
    ltype, rtype = left.desc[1], right.desc[1]
    if t in RELATIONAL or t in BOOLEAN:
        otype = PROMOTE[ltype][rtype]
    else:
        otype = np.desc[1]
    lm, ld, rm, rd = left.mul, left.div, right.mul, right.div
    insts, vals = [], []
    i = j = k = 0
    while k < numval:
        if i >= ls.numval or j >= rs.numval:
            break
        if not lnull and not rnull and ls.insts[i] != rs.insts[j]:
            want = ls.insts[i]
            for j in range(rs.numval):
                if rs.insts[j] == want:
                    break
            else:
                i, j = i + 1, 0
                continue
        res = _bin_op(otype, t, ls.vals[i], ltype, lm, ld, rs.vals[j], rtype, rm, rd)
        if t in RELATIONAL or t in BOOLEAN:
            res = _to_u32_result(res)
        insts.append(ls.insts[i] if not lnull else rs.insts[j])
        vals.append(res)
        k += 1
        if not lnull:
            i += 1
            if not rnull:
                j += 1
                if j >= rs.numval:
                    j = 0
        elif not rnull:
            j += 1
    s.numval, s.insts, s.vals = k, insts, vals
    return k


# ---- the derived value sets of a result ----------------------------------------------

def encode(type_: int, insts: Sequence[int], vals: Sequence[Any]) -> Tuple[int, List[tuple]]:
    """(valfmt, [(inst, vtype, ival, dval, payload)]) of a derived metric's values, as
    libpcp's __dmpostvalueset builds its value set."""
    if type_ in (PM_TYPE_32, PM_TYPE_U32):
        return 0, [(inst, -1, _wrap(PM_TYPE_32, v), 0.0, b"") for inst, v in zip(insts, vals)]
    out = []
    for inst, v in zip(insts, vals):
        if type_ in (PM_TYPE_64, PM_TYPE_U64):
            iv = _wrap(PM_TYPE_64, v)
            out.append((inst, type_, iv, 0.0, struct.pack(">q", iv)))
        elif type_ == PM_TYPE_FLOAT:
            out.append((inst, type_, 0, v, struct.pack(">f", v)))
        elif type_ == PM_TYPE_DOUBLE:
            out.append((inst, type_, 0, v, struct.pack(">d", v)))
        elif type_ == PM_TYPE_STRING:
            out.append((inst, type_, 0, 0.0, v))
        else:
            vtype, payload = v
            out.append((inst, vtype, 0, 0.0, payload))
    return 1, out
