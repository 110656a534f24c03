"""Expression tree nodes of derived metrics, numbered and named as libpcp's node_t
types are (the names appear in libpcp's messages)."""
from __future__ import annotations

from pcp._core.constants import PM_ID_NULL, PM_INDOM_NULL, PM_SEM_DISCRETE, PM_TYPE_U32

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, Optional, Tuple
    # (pmid, type, indom, sem, units word), as everywhere in this package
    Desc = Tuple[int, int, int, int, int]

NO_DESC: Desc = (PM_ID_NULL, 0, 0, 0, 0)


class N:
    """Node types (libpcp's N_* numbers)."""
    INTEGER, NAME, PLUS, MINUS, STAR, SLASH, AVG, COUNT, DELTA, MAX, MIN, SUM, ANON, RATE, \
        INSTANT, DOUBLE, LT, LEQ, EQ, GEQ, GT, NEQ, AND, OR, NOT, NEG, QUEST, COLON, RESCALE, \
        SCALE, DEFINED, FILTERINST, PATTERN, SCALAR, NOVALUE = range(1, 36)


# which side of a ternary libpcp 6.3 binds and evaluates (info->bind of its N_COLON):
# both, or only the one a constant guard chooses
BIND_LEFT, BIND_RIGHT, BIND_BOTH = 1, 2, 3


# __dmnode_type_str() and n_type_c() of libpcp
TYPE_NAMES = {N.INTEGER: "INTEGER", N.DOUBLE: "DOUBLE", N.NAME: "NAME", N.PLUS: "PLUS",
              N.MINUS: "MINUS", N.STAR: "STAR", N.SLASH: "SLASH", N.QUEST: "QUEST",
              N.COLON: "COLON", N.AVG: "AVG", N.COUNT: "COUNT", N.DELTA: "DELTA",
              N.MAX: "MAX", N.MIN: "MIN", N.SUM: "SUM", N.ANON: "ANON", N.RATE: "RATE",
              N.INSTANT: "INSTANT", N.RESCALE: "RESCALE", N.SCALE: "SCALE",
              N.DEFINED: "DEFINED", N.FILTERINST: "FILTERINST", N.SCALAR: "SCALAR",
              N.PATTERN: "PATTERN", N.NOVALUE: "NOVALUE", N.LT: "LT", N.LEQ: "LEQ", N.EQ: "EQ", N.GEQ: "GEQ",
              N.GT: "GT", N.NEQ: "NEQ", N.AND: "AND", N.OR: "OR", N.NOT: "NOT", N.NEG: "NEG"}
OPERATOR_TEXT = {N.PLUS: "+", N.MINUS: "-", N.STAR: "*", N.SLASH: "/", N.QUEST: "?",
                 N.COLON: ":", N.LT: "<", N.LEQ: "<=", N.EQ: "==", N.GEQ: ">=", N.GT: ">",
                 N.NEQ: "!=", N.AND: "&&", N.OR: "||", N.NOT: "!", N.NEG: "-"}
RELATIONAL = frozenset((N.LT, N.LEQ, N.EQ, N.GEQ, N.GT, N.NEQ))
BOOLEAN = frozenset((N.AND, N.OR))
ARITHMETIC = frozenset((N.PLUS, N.MINUS, N.STAR, N.SLASH))
AGGREGATES = frozenset((N.AVG, N.COUNT, N.SUM, N.MAX, N.MIN))


# META_* of libpcp 6.3: which parts of a descriptor mkconst() or novalue() set explicitly
# (the others come from its meta=<metric>)
META_TYPE, META_INDOM, META_SEM, META_UNITS = 2, 4, 8, 16
#: what a parsed node carries into its copy for binding
COPIED_SLOTS = ("value", "desc", "save_last", "regex", "compiled", "invert", "meta", "flags")


class Node:
    """One node. `value` is the text of a name, number or pattern; `desc` is the node's
    descriptor once bound (constants and mkconst() have theirs from the parser)."""

    __slots__ = ("type", "left", "right", "value", "desc", "save_last", "regex", "compiled",
                 "invert", "pmid", "mul", "div", "defined", "state", "meta", "flags",
                 "bind")

    def __init__(self, type_: int, left: Optional["Node"] = None,
                 right: Optional["Node"] = None) -> None:
        self.type = type_
        self.left = left
        self.right = right
        self.value: bytes = b""
        self.desc: Desc = NO_DESC
        self.save_last = False
        self.regex = False
        self.compiled: Any = None
        self.invert = False
        self.pmid = PM_ID_NULL          # N_NAME: the operand's pmid once bound
        self.mul = 1                    # scale factors map_units() puts on an operand
        self.div = 1
        self.defined = 0                # N_DEFINED: 1 when the name was found at bind time
        self.state: Any = None          # evaluation state (pcp._libpcp.derived.evaluate)
        self.meta: Optional[Node] = None    # mkconst()/novalue() meta=<metric> (6.3): a NAME
        self.flags = 0                  # META_* given explicitly in mkconst()/novalue()
        self.bind = BIND_BOTH           # N_COLON: the sides bound and evaluated

    @classmethod
    def name(cls, text: bytes) -> "Node":
        node = cls(N.NAME)
        node.value = text
        return node

    @classmethod
    def constant(cls, type_: int, text: bytes, ctype: int) -> "Node":
        node = cls(type_)
        node.value = text
        node.desc = (PM_ID_NULL, ctype, PM_INDOM_NULL, PM_SEM_DISCRETE, 0)
        return node

    @classmethod
    def scale(cls, units: int) -> "Node":
        node = cls(N.SCALE)
        node.desc = (PM_ID_NULL, 0, 0, 0, units & 0xFFFFFFFF)
        return node

    @classmethod
    def pattern(cls, text: bytes, regex: bool, compiled: Any = None,
                invert: bool = False) -> "Node":
        node = cls(N.PATTERN)
        node.value = text
        node.regex = regex
        node.compiled = compiled
        node.invert = invert
        return node

    @classmethod
    def anon(cls, type_name: bytes) -> "Node":
        types = {b"PM_TYPE_32": 0, b"PM_TYPE_U32": 1, b"PM_TYPE_64": 2, b"PM_TYPE_U64": 3,
                 b"PM_TYPE_FLOAT": 4, b"PM_TYPE_DOUBLE": 5}
        operand = cls.constant(N.INTEGER, type_name, types.get(type_name, PM_TYPE_U32))
        return cls(N.ANON, operand)

    def copy(self) -> "Node":
        """A fresh tree for binding in one context (the parsed tree stays untouched)."""
        new = Node(self.type, self.left.copy() if self.left else None,
                   self.right.copy() if self.right else None)
        for slot in COPIED_SLOTS:
            setattr(new, slot, getattr(self, slot))
        return new

    def is_literal(self) -> bool:
        return self.type in (N.INTEGER, N.DOUBLE, N.NAME)
