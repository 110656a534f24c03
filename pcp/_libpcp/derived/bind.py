"""Binding a derived metric's expression in one context, as libpcp 6.0.3's bind_expr,
check_expr, map_desc and map_units do it: operands are looked up in the context, then
the descriptor of every node is inferred bottom-up (type promotion, semantics, units with
their scale conversions, instance domain), with libpcp's semantic errors, which it
reports through pmprintf and which leave the metric unusable in that context."""
from __future__ import annotations

from pcp._core.constants import (PM_COUNT_ONE, PM_ID_NULL, PM_INDOM_NULL, PM_SEM_COUNTER,
                                 PM_SEM_DISCRETE, PM_SEM_INSTANT, PM_TIME_SEC, PM_TYPE_32,
                                 PM_TYPE_64, PM_TYPE_DOUBLE, PM_TYPE_FLOAT, PM_TYPE_U32,
                                 PM_TYPE_U64)
from pcp._core.errors import pmErr, pmflush, pmprintf
from pcp._core.units import pmUnitsStr, unit_fields
from pcp._libpcp.derived.nodes import (AGGREGATES, BOOLEAN, RELATIONAL, TYPE_NAMES, N, Node,
                                       OPERATOR_TEXT)
from pcp._libpcp.values import scale_factors

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Callable, List, Optional, Tuple
    # lookup(name) -> pmid or raise pmErr; describe(pmid) -> desc tuple or raise pmErr
    Lookup = Callable[[bytes], int]
    Describe = Callable[[int], Tuple[int, int, int, int, int]]

NUMERIC = (PM_TYPE_32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64, PM_TYPE_FLOAT, PM_TYPE_DOUBLE)

# libpcp's promote[][]: the type of a binary arithmetic result
PROMOTE = [[PM_TYPE_32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64, PM_TYPE_FLOAT, PM_TYPE_DOUBLE],
           [PM_TYPE_U32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64, PM_TYPE_FLOAT, PM_TYPE_DOUBLE],
           [PM_TYPE_64, PM_TYPE_64, PM_TYPE_64, PM_TYPE_U64, PM_TYPE_FLOAT, PM_TYPE_DOUBLE],
           [PM_TYPE_U64, PM_TYPE_U64, PM_TYPE_U64, PM_TYPE_U64, PM_TYPE_FLOAT, PM_TYPE_DOUBLE],
           [PM_TYPE_FLOAT] * 5 + [PM_TYPE_DOUBLE],
           [PM_TYPE_DOUBLE] * 6]

_TIME_FACTOR = (1000, 1000, 1000, 60, 60)     # nsec->usec ... min->hour



class SemanticError(Exception):
    pass


def pack_units(f: List[int]) -> int:
    """The units word of (dimSpace, dimTime, dimCount, scaleSpace, scaleTime, scaleCount)."""
    return (((f[0] & 0xF) << 28) | ((f[1] & 0xF) << 24) | ((f[2] & 0xF) << 20)
            | ((f[3] & 0xF) << 16) | ((f[4] & 0xF) << 12) | ((f[5] & 0xF) << 8))


def bind(name: bytes, pmid: int, tree: Node, lookup: Lookup, describe: Describe) -> Optional[Node]:
    """A bound copy of `tree` with every node's descriptor, or None (the errors are
    reported as libpcp reports them)."""
    bound = _bind_expr(tree, lookup, describe, False)
    if bound is None:
        return None
    try:
        _check(name, bound)
    except SemanticError:
        return None
    t = bound.desc
    bound.desc = (pmid,) + t[1:]
    return bound


def _bind_expr(np: Node, lookup: Lookup, describe: Describe, lookup_err_ok: bool) -> Optional[Node]:
    new = Node(np.type)
    for slot in ("value", "desc", "save_last", "regex", "compiled", "invert"):
        setattr(new, slot, getattr(np, slot))
    if np.left is not None:
        new.left = _bind_expr(np.left, lookup, describe, np.type == N.DEFINED)
        if new.left is None:
            return None
    if np.right is not None:
        new.right = _bind_expr(np.right, lookup, describe, False)
        if new.right is None:
            return None
    if new.type == N.NAME:
        try:
            new.pmid = lookup(new.value)
        except pmErr:
            if lookup_err_ok:
                new.pmid = PM_ID_NULL
                return new
            return None
        try:
            new.desc = describe(new.pmid)
        except pmErr:
            return None
    return new


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
    pmprintf(text + ": %s\n" % msg)
    pmflush()


def _fail(name: bytes, np: Node, msg: str) -> SemanticError:
    _report(name, np, msg)
    return SemanticError(msg)


def _check(name: bytes, np: Node) -> None:
    """check_expr(): fill in np.desc from its operands'."""
    t = np.type
    if t in (N.INTEGER, N.DOUBLE, N.NAME, N.SCALE, N.PATTERN):
        return
    if t == N.DEFINED:
        defined = np.left.pmid != PM_ID_NULL
        np.value = np.left.value
        np.left = None
        np.type = N.DEFINED
        np.desc = (PM_ID_NULL, PM_TYPE_U32, PM_INDOM_NULL, PM_SEM_DISCRETE, 0)
        np.defined = 1 if defined else 0
        return
    _check(name, np.left)
    left = np.left.desc
    if np.right is not None:
        _check(name, np.right)
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
