"""Binding a derived metric's expression in one context, as libpcp's bind_expr,
check_expr, map_desc and map_units do it: operands are looked up in the context, then
the descriptor of every node is inferred bottom-up (type promotion, semantics, units with
their scale conversions, instance domain), with libpcp's semantic errors, which it
reports through pmprintf and which leave the metric unusable in that context.

From 6.3 (API_LEVEL) a ternary binds lazily: the metrics under it (and under defined())
may be missing; a guard that is constant when bound (defined(), an integer, and !, &&,
|| of those) chooses the one branch that is checked and evaluated (the tree keeps only
that branch: libpcp evaluates it alone, to the same values), and only the metrics of
the branches in play must exist. novalue() gives its descriptor and no values, and
mkconst()'s and novalue()'s meta=<metric> the descriptor of that metric, overridden by
the parts given explicitly."""
from __future__ import annotations

import sys

from pcp._core.constants import (PM_COUNT_ONE, PM_ID_NULL, PM_INDOM_NULL, PM_SEM_COUNTER,
                                 PM_SEM_DISCRETE, PM_SEM_INSTANT, PM_TIME_SEC, PM_TYPE_32,
                                 PM_TYPE_64, PM_TYPE_DOUBLE, PM_TYPE_FLOAT, PM_TYPE_U32,
                                 PM_TYPE_U64)
from pcp._core.errors import pmErr, pmflush, pmprintf
from pcp._core.level import API_LEVEL
from pcp._core.units import pmUnitsStr, unit_fields
from pcp._libpcp.derived import control as _control
from pcp._libpcp.derived.nodes import (AGGREGATES, BIND_BOTH, BIND_LEFT, BIND_RIGHT, BOOLEAN,
                                       COPIED_SLOTS, META_INDOM, META_SEM, META_TYPE,
                                       META_UNITS, NO_DESC, RELATIONAL, TYPE_NAMES, N, Node,
                                       OPERATOR_TEXT)
from pcp._libpcp.derived.registry import REGISTRY
from pcp._libpcp.values import scale_factors

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Callable, List, Optional, Tuple
    # lookup(name) -> pmid or raise pmErr; describe(pmid) -> desc tuple or raise pmErr
    Lookup = Callable[[bytes], int]
    Describe = Callable[[int], Tuple[int, int, int, int, int]]
    from pcp._libpcp.derived.nodes import Desc

NUMERIC = (PM_TYPE_32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64, PM_TYPE_FLOAT, PM_TYPE_DOUBLE)

# libpcp's promote[][]: the type of a binary arithmetic result
PROMOTE = [[PM_TYPE_32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64, PM_TYPE_FLOAT, PM_TYPE_DOUBLE],
           [PM_TYPE_U32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64, PM_TYPE_FLOAT, PM_TYPE_DOUBLE],
           [PM_TYPE_64, PM_TYPE_64, PM_TYPE_64, PM_TYPE_U64, PM_TYPE_FLOAT, PM_TYPE_DOUBLE],
           [PM_TYPE_U64, PM_TYPE_U64, PM_TYPE_U64, PM_TYPE_U64, PM_TYPE_FLOAT, PM_TYPE_DOUBLE],
           [PM_TYPE_FLOAT] * 5 + [PM_TYPE_DOUBLE],
           [PM_TYPE_DOUBLE] * 6]

_TIME_FACTOR = (1000, 1000, 1000, 60, 60)     # nsec->usec ... min->hour
_LEVEL_6_3 = API_LEVEL >= (6, 3)
# 7.x reports a missing operand, or one with no descriptor, when binding (6.x only
# under -Dderive)
_REPORT_OPERANDS = API_LEVEL >= (7, 2)
# 7.2's control options: "#control option_novalue=1" (registry.REGISTRY.map2novalue)
_CONTROL = API_LEVEL >= (7, 2)



class SemanticError(Exception):
    pass


def pack_units(f: List[int]) -> int:
    """The units word of (dimSpace, dimTime, dimCount, scaleSpace, scaleTime, scaleCount)."""
    return (((f[0] & 0xF) << 28) | ((f[1] & 0xF) << 24) | ((f[2] & 0xF) << 20)
            | ((f[3] & 0xF) << 16) | ((f[4] & 0xF) << 12) | ((f[5] & 0xF) << 8))


def bind(name: bytes, pmid: int, tree: Node, lookup: Lookup, describe: Describe) -> Optional[Node]:
    """A bound copy of `tree` with every node's descriptor, or None (the errors are
    reported as libpcp reports them)."""
    bound = _bind_expr(name, tree, lookup, describe, False)
    if bound is None:
        return None
    try:
        _check(name, bound)
    except SemanticError:
        return None
    if _LEVEL_6_3:
        bound = _chosen_branches(bound)
    t = bound.desc
    bound.desc = (pmid,) + t[1:]
    return bound


def _bind_expr(name: bytes, np: Node, lookup: Lookup, describe: Describe,
               lazy: bool) -> Optional[Node]:
    """bind_expr(): a copy of np with its metrics looked up. A metric missing where
    `lazy` allows it (under defined(); from 6.3 anywhere under a ternary) is left
    unbound (pmid PM_ID_NULL)."""
    new = Node(np.type)
    for slot in COPIED_SLOTS:
        setattr(new, slot, getattr(np, slot))
    if _LEVEL_6_3:
        left_lazy = right_lazy = lazy or np.type in (N.QUEST, N.DEFINED)
    else:
        left_lazy, right_lazy = np.type == N.DEFINED, False
    if np.left is not None:
        new.left = _bind_expr(name, np.left, lookup, describe, left_lazy)
        if new.left is None:
            return None
    if np.right is not None:
        new.right = _bind_expr(name, np.right, lookup, describe, right_lazy)
        if new.right is None:
            return None
    if np.meta is not None:
        # a metric whose descriptor is all that is used: a derived one will do
        new.meta = _bind_expr(name, np.meta, lookup, describe, lazy)
        if new.meta is None:
            return None
        new.desc = _meta_desc(new)
    if new.type == N.NAME:
        try:
            new.pmid = lookup(new.value)
        except pmErr:
            if _CONTROL and REGISTRY.map2novalue:
                return _mapped_to_novalue(name, new)
            if lazy:
                new.pmid = PM_ID_NULL
                new.desc = NO_DESC
                return new
            if _REPORT_OPERANDS:
                _report(name, new, "Unknown operand metric")
            return None
        try:
            new.desc = describe(new.pmid)
        except pmErr:
            if _REPORT_OPERANDS:
                _report(name, new, "Metadata for operand metric not available")
            return None
    return new


def _mapped_to_novalue(name: bytes, new: Node) -> Node:
    """7.2's "#control option_novalue=1": a missing operand becomes novalue(), with
    novalue()'s default descriptor, wherever it is."""
    if _control.derive_debug():
        sys.stderr.write('Warning: derived metric %s: operand "%s" not found, mapped to '
                         'novalue()\n' % (name.decode("utf-8", "surrogateescape"),
                                          new.value.decode("utf-8", "surrogateescape")))
        sys.stderr.flush()
    new.type = N.NOVALUE
    new.left = new.right = None
    new.pmid = PM_ID_NULL
    new.desc = (PM_ID_NULL, PM_TYPE_32, PM_INDOM_NULL, PM_SEM_DISCRETE, 0)
    new.save_last = False
    new.flags = 0
    return new


def _meta_desc(np: Node) -> Desc:
    """bind_desc(): meta=<metric>'s descriptor, with the parts given explicitly."""
    pmid, type_, indom, sem, units = np.meta.desc
    given = np.desc
    if np.flags & META_TYPE:
        type_ = given[1]
    if np.flags & META_INDOM:
        indom = given[2]
    if np.flags & META_SEM:
        sem = given[3]
    if np.flags & META_UNITS:
        units = given[4]
    return (pmid, type_, indom, sem, units)


def _guard(np: Node) -> int:
    """eval_guard(): a ternary guard's truth when binding, 1 or 0, or -1 when only a
    fetch can tell."""
    t = np.type
    if t == N.DEFINED:
        return np.defined
    if t == N.INTEGER:
        return 1 if int(np.value) != 0 else 0
    if t == N.NOT:
        sts = _guard(np.left)
        return sts if sts == -1 else 1 - sts
    if t == N.OR:
        sts = _guard(np.left)
        return _guard(np.right) if sts == 0 else sts
    if t == N.AND:
        sts = _guard(np.left)
        return _guard(np.right) if sts == 1 else sts
    return -1


def _missing_metric(np: Node) -> Optional[Node]:
    """check_metrics(): the first metric left unbound in the branches in play."""
    if np.left is not None and (np.type != N.COLON or np.bind & BIND_LEFT):
        bad = _missing_metric(np.left)
        if bad is not None:
            return bad
    if np.meta is not None:
        bad = _missing_metric(np.meta)
        if bad is not None:
            return bad
    if np.type == N.NAME and np.desc[0] == PM_ID_NULL:
        return np
    if np.right is not None and (np.type != N.COLON or np.bind & BIND_RIGHT):
        return _missing_metric(np.right)
    return None


def _chosen_branches(np: Node) -> Node:
    """The bound tree with each ternary of a constant guard replaced by the branch it
    chooses (what libpcp evaluates there, with the same descriptor)."""
    if np.type == N.QUEST and np.right.bind != BIND_BOTH:
        colon = np.right
        return _chosen_branches(colon.left if colon.bind == BIND_LEFT else colon.right)
    if np.left is not None:
        np.left = _chosen_branches(np.left)
    if np.right is not None:
        np.right = _chosen_branches(np.right)
    return np


def _operand_text(np: Node) -> str:
    if np.is_literal():
        return np.value.decode("utf-8", "surrogateescape")
    return "<expr>"


def _report(name: bytes, np: Node, msg: str) -> None:
    text = "Semantic error: derived metric %s: " % name.decode("utf-8", "surrogateescape")
    t = np.type
    if t in RELATIONAL or t in BOOLEAN or t in (N.PLUS, N.MINUS, N.STAR, N.SLASH):
        text += "%s %s %s" % (_operand_text(np.left), OPERATOR_TEXT[t], _operand_text(np.right))
    elif t in (N.NOT, N.NEG):
        text += "%s %s" % (OPERATOR_TEXT[t], _operand_text(np.left))
    elif t in AGGREGATES or t in (N.DELTA, N.RATE, N.INSTANT, N.ANON, N.DEFINED, N.SCALAR):
        value = np.left.value.decode("utf-8", "surrogateescape") if np.left.value else "(null)"
        text += "%s(%s)" % (TYPE_NAMES[t], value)
    elif t in (N.QUEST, N.COLON):
        if t == N.QUEST:
            text += "%s ? " % _operand_text(np.left)
            np = np.right
        text += "%s : %s" % (_operand_text(np.left), _operand_text(np.right))
    elif t == N.RESCALE:
        units = pmUnitsStr(np.right.desc[4])
        text += "%s %s %s" % (_operand_text(np.left), TYPE_NAMES[t], units or "none")
    elif t == N.FILTERINST:
        text += "%s " % TYPE_NAMES[t]
    elif t == N.NAME:                           # 6.3's missing operands
        text += "operand %s" % np.value.decode("utf-8", "surrogateescape")
    pmprintf(text + ": %s\n" % msg)
    pmflush()


def _fail(name: bytes, np: Node, msg: str) -> SemanticError:
    _report(name, np, msg)
    return SemanticError(msg)


def _check(name: bytes, np: Node, parent: Optional[Node] = None) -> None:
    """check_expr(): fill in np.desc from its operands'."""
    t = np.type
    if t in (N.INTEGER, N.DOUBLE, N.NAME, N.SCALE, N.PATTERN, N.NOVALUE):
        return
    if t == N.COLON and _LEVEL_6_3:
        _check_colon_lazy(name, np, parent)
        return
    if t == N.DEFINED:
        defined = np.left.pmid != PM_ID_NULL
        np.value = np.left.value
        np.left = None
        np.type = N.DEFINED
        np.desc = (PM_ID_NULL, PM_TYPE_U32, PM_INDOM_NULL, PM_SEM_DISCRETE, 0)
        np.defined = 1 if defined else 0
        return
    _check(name, np.left, np)
    left = np.left.desc
    if np.right is not None:
        _check(name, np.right, np)
        right = np.right.desc
        if t == N.COLON:
            _check_colon(name, np, left, right)
            return
        if t == N.QUEST:
            if left[1] not in NUMERIC:
                raise _fail(name, np, "Non-arithmetic operand for ternary guard")
            if (np.right.left.desc[2] == PM_INDOM_NULL and np.right.right.desc[2] == PM_INDOM_NULL
                    and left[2] != PM_INDOM_NULL):
                raise _fail(name, np, "Non-scalar ternary guard with scalar expressions")
            np.desc = np.right.desc
            return
        if t == N.FILTERINST:
            np.desc = right
            return
        _map_desc(name, np)
        return
    pmid, type_, indom, sem, units = left
    if t == N.COUNT:
        np.desc = (pmid, PM_TYPE_U32, PM_INDOM_NULL, PM_SEM_INSTANT,
                   pack_units([0, 0, 1, 0, 0, PM_COUNT_ONE]))
        return
    if t == N.INSTANT:
        np.desc = (pmid, type_, indom, PM_SEM_INSTANT if sem == PM_SEM_COUNTER else sem, units)
        return
    if t == N.SCALAR:
        np.desc = (pmid, type_, PM_INDOM_NULL, sem, units)
        return
    if t in (N.ANON, N.NOT):
        # libpcp keeps the operand's descriptor for these (for "!", its type too,
        # though the values it computes are 0 or 1 as 32-bit words)
        np.desc = left
        return
    # avg sum max min delta rate and unary minus need an arithmetic operand
    if type_ not in NUMERIC:
        raise _fail(name, np, "Non-arithmetic operand for unary negation" if t == N.NEG
                    else "Non-arithmetic operand for function")
    if t != N.SUM:
        sem = PM_SEM_INSTANT
    f = list(unit_fields(units))
    if t == N.RATE and f[1] not in (0, 1):
        raise _fail(name, np, "Incorrect time dimension for operand")
    if t not in (N.DELTA, N.RATE, N.NEG):
        indom = PM_INDOM_NULL
    if t == N.AVG:
        type_ = PM_TYPE_FLOAT
    elif t == N.RATE:
        type_ = PM_TYPE_DOUBLE
        f[1] -= 1
        f[4] = 0 if f[1] == 0 else PM_TIME_SEC
        units = pack_units(f)
    elif t == N.NEG:
        type_ = {PM_TYPE_U32: PM_TYPE_32, PM_TYPE_U64: PM_TYPE_64}.get(type_, type_)
    elif t == N.DELTA:
        type_ = {PM_TYPE_U32: PM_TYPE_64, PM_TYPE_U64: PM_TYPE_DOUBLE}.get(type_, type_)
    np.desc = (pmid, type_, indom, sem, units)


def _check_colon_lazy(name: bytes, np: Node, parent: Optional[Node]) -> None:
    """6.3's check of a ternary's branches: only those its guard may choose, a novalue()
    branch taking the other's descriptor, and no metric missing in them."""
    np.bind = BIND_BOTH
    if parent is not None and parent.type == N.QUEST:
        guard = _guard(parent.left)
        if guard == 1:
            np.bind = BIND_LEFT
        elif guard == 0:
            np.bind = BIND_RIGHT
    if np.bind & BIND_LEFT:
        _check(name, np.left, np)
    if np.bind & BIND_RIGHT:
        _check(name, np.right, np)
    left, right = np.left.desc, np.right.desc
    if np.bind == BIND_BOTH:
        desc = right if np.left.type == N.NOVALUE else left
        indom = right[2] if left[2] == PM_INDOM_NULL else left[2]
        np.desc = desc[:2] + (indom,) + desc[3:]
    else:
        np.desc = left if np.bind == BIND_LEFT else right
    bad = _missing_metric(np.left) if np.bind & BIND_LEFT else None
    if bad is None and np.bind & BIND_RIGHT:
        bad = _missing_metric(np.right)
    if bad is not None:
        raise _fail(name, bad, "Unknown metric for ternary expression")
    if N.NOVALUE in (np.left.type, np.right.type) or np.bind != BIND_BOTH:
        return
    _check_colon(name, np, left, right)


def _check_colon(name: bytes, np: Node, left, right) -> None:
    if left[1] != right[1]:
        raise _fail(name, np, "Different types for ternary operands")
    if left[2] != right[2] and left[2] != PM_INDOM_NULL and right[2] != PM_INDOM_NULL:
        raise _fail(name, np, "Different instance domains for ternary operands")
    indom = left[2] if left[2] != PM_INDOM_NULL else right[2]
    if left[3] != right[3]:
        raise _fail(name, np, "Different semantics for ternary operands")
    lf, rf = unit_fields(left[4]), unit_fields(right[4])
    for dim, scale, axis in ((0, 3, "space"), (1, 4, "time"), (2, 5, "count")):
        if lf[dim] != rf[dim] or lf[scale] != rf[scale]:
            raise _fail(name, np, "Different units or scale (%s) for ternary operands" % axis)
    np.desc = (left[0], left[1], indom, left[3], left[4])


def _dims(f) -> Tuple[int, int, int]:
    return f[0], f[1], f[2]


def _map_desc(name: bytes, np: Node) -> None:
    """map_desc(): a binary operator's (or rescale's) descriptor."""
    t = np.type
    left, right = np.left.desc, np.right.desc
    lf, rf = unit_fields(left[4]), unit_fields(right[4])
    if t == N.RESCALE:
        if left[1] not in NUMERIC:
            raise _fail(name, np, "Non-arithmetic operand for function")
        try:
            scale_factors(left[4], right[4])
        except pmErr:
            raise _fail(name, np, "Incompatible dimensions")
        np.desc = left[:4] + (right[4],)
        return
    if t not in RELATIONAL and t not in BOOLEAN:
        if left[3] == PM_SEM_COUNTER:
            if right[3] == PM_SEM_COUNTER:
                if t not in (N.PLUS, N.MINUS):
                    raise _fail(name, np, "Illegal operator for counters")
            elif t not in (N.STAR, N.SLASH):
                raise _fail(name, np, "Illegal operator for counter and non-counter")
        elif right[3] == PM_SEM_COUNTER and t != N.STAR:
            raise _fail(name, np, "Illegal operator for non-counter and counter")
    desc = list(left if np.left.type not in (N.INTEGER, N.DOUBLE) else right)
    if left[3] != PM_SEM_COUNTER and right[3] != PM_SEM_COUNTER:
        desc[3] = PM_SEM_DISCRETE if left[3] == right[3] == PM_SEM_DISCRETE else PM_SEM_INSTANT
    if left[1] not in NUMERIC:
        raise _fail(name, np, "Non-arithmetic type for left operand")
    if right[1] not in NUMERIC:
        raise _fail(name, np, "Non-arithmetic type for right operand")
    if t == N.SLASH:
        desc[1] = PM_TYPE_DOUBLE
    elif t in RELATIONAL or t in BOOLEAN:
        desc[1] = PM_TYPE_U32
    else:
        desc[1] = PROMOTE[left[1]][right[1]]
    count_or_none = (lf[1] == 0 and rf[1] == 0 and lf[0] == 0 and rf[0] == 0
                     and ((lf[2] == 0 and rf[2] == 1) or (lf[2] == 1 and rf[2] == 0)))
    if t in (N.PLUS, N.MINUS) and _dims(lf) != _dims(rf) and not count_or_none:
        raise _fail(name, np, "Dimensions are not the same")
    if t in RELATIONAL:
        # libpcp compares the operands' PM_TYPE_* with its node numbers for integer and
        # double constants (1 and 16), so a U32 operand skips this check
        if (left[1] not in (N.INTEGER, N.DOUBLE) and right[1] not in (N.INTEGER, N.DOUBLE)
                and _dims(lf) != _dims(rf) and not count_or_none):
            raise _fail(name, np, "Dimensions are not the same")
    if t in BOOLEAN and (any(_dims(lf)) or any(_dims(rf))):
        raise _fail(name, np, "Dimensions are not the same")
    if t in (N.STAR, N.SLASH) or t in RELATIONAL:
        if left[3] == PM_SEM_COUNTER and right[3] != PM_SEM_COUNTER and any(_dims(rf)):
            raise _fail(name, np, "Non-counter and not dimensionless for right operand")
        if left[3] != PM_SEM_COUNTER and right[3] == PM_SEM_COUNTER and any(_dims(lf)):
            raise _fail(name, np, "Non-counter and not dimensionless for left operand")
    if t in (N.PLUS, N.MINUS, N.STAR, N.SLASH):
        _map_units(np, desc, lf, rf)
    elif t in RELATIONAL or t in BOOLEAN:
        desc[4] = 0
    li, ri = left[2], right[2]
    if li != PM_INDOM_NULL and ri != PM_INDOM_NULL and li != ri:
        raise _fail(name, np, "Operands should have the same instance domain")
    if li != PM_INDOM_NULL and ri == PM_INDOM_NULL:
        desc[2] = li
    elif ri != PM_INDOM_NULL and li == PM_INDOM_NULL:
        desc[2] = ri
    np.desc = tuple(desc)


def _scale_steps(axis: int, low: int, high: int) -> List[int]:
    """The factors that take a scale from `low` up to `high` on one axis."""
    if axis == 2:
        return [10] * (high - low)
    if axis == 0:
        return [1024] * (high - low)
    return [_TIME_FACTOR[i] if i < len(_TIME_FACTOR) else 1 for i in range(low, high)]


def _map_units(np: Node, desc: List[int], lf, rf) -> None:
    """map_units(): scale the operand with the smaller scale (marking the result
    DOUBLE), then the result's dimensions; quirks of libpcp kept (when the left operand
    is scaled, the count axis looks at its own dimension's sign, the time and space
    axes at the right operand's)."""
    f = list(unit_fields(desc[4]))
    lnode, rnode = np.left, np.right
    for axis in (2, 1, 0):                  # count, time, space, in libpcp's order
        scale = axis + 3
        if lf[axis] == 0 or rf[axis] == 0 or lf[scale] == rf[scale]:
            continue
        if lf[scale] > rf[scale]:
            node, sign = rnode, rf[axis]
            steps = _scale_steps(axis, rf[scale], lf[scale])
        else:
            f[scale] = rf[scale]
            node, sign = lnode, (lf[axis] if axis == 2 else rf[axis])
            steps = _scale_steps(axis, lf[scale], rf[scale])
        for factor in steps:
            if sign > 0:
                node.div *= factor
            else:
                node.mul *= factor
        desc[1] = PM_TYPE_DOUBLE
    if np.type == N.STAR:
        f[0], f[1], f[2] = lf[0] + rf[0], lf[1] + rf[1], lf[2] + rf[2]
    elif np.type == N.SLASH:
        f[0], f[1], f[2] = lf[0] - rf[0], lf[1] - rf[1], lf[2] - rf[2]
    if f[2] != 0 and lf[2] == 0:
        f[5] = rf[5]
    if f[1] != 0 and lf[1] == 0:
        f[4] = rf[4]
    if f[0] != 0 and lf[0] == 0:
        f[3] = rf[3]
    if f[2] == 0:
        f[5] = 0
    if f[1] == 0:
        f[4] = 0
    if f[0] == 0:
        f[3] = 0
    desc[4] = pack_units(f)
