"""What the C evaluations of derived metrics share on the Python side: which bound
trees they can take (every node numeric: the drop-in pmFetch's programs,
pcp._libpcp.derived.program, and the bulk readers' chunks, pcp._libpcp.derived.chunks,
both over the kernels of csrc/derived_eval.c), and pcp_atom's member for each numeric
type. The other trees (strings, aggregates and events renamed or chosen by ?:, count()
of a string metric; 6.3's novalue() and delta(), rate() or instant() of an expression)
take pcp._libpcp.derived.evaluate, which computes the same thing."""
from __future__ import annotations

from pcp._core.constants import (PM_INDOM_NULL, PM_TYPE_32, PM_TYPE_64, PM_TYPE_DOUBLE,
                                 PM_TYPE_FLOAT, PM_TYPE_U32, PM_TYPE_U64)
from pcp._libpcp.derived.bind import NUMERIC
from pcp._libpcp.derived.nodes import N, Node

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Optional

_MEMBER = {PM_TYPE_32: "l", PM_TYPE_U32: "ul", PM_TYPE_64: "ll", PM_TYPE_U64: "ull",
           PM_TYPE_FLOAT: "f", PM_TYPE_DOUBLE: "d"}


def python_only(np: Node) -> bool:
    """Whether a node is one of 6.3's that the C kernels do not take: novalue(), a
    constant over an instance domain, delta()/rate()/instant() of an expression (the C
    keeps a metric's last values only)."""
    if np.type == N.NOVALUE:
        return True
    if np.type in (N.INTEGER, N.DOUBLE) and np.desc[2] != PM_INDOM_NULL:
        return True
    return np.type in (N.DELTA, N.RATE, N.INSTANT) and np.left.type != N.NAME


def all_numeric(np: Optional[Node]) -> bool:
    """Whether every node of a bound tree holds numbers (the C path)."""
    if np is None:
        return True
    if np.type not in (N.PATTERN, N.SCALE) and np.desc[1] not in NUMERIC:
        return False
    if python_only(np):
        return False

    return all_numeric(np.left) and all_numeric(np.right)
