"""Derived metrics over whole chunks of rows (csrc/derived_chunk.c): a bound tree made
into a C node array once, then evaluated over operand matrices (rows x instance columns
and their presence), each row being one pmFetch in PM_MODE_FORW with libpcp's state
between fetches (delta() and rate()'s previous values and times, matchinst()'s table)
kept in the nodes from one chunk to the next. Where the matrices come from does not
matter: an archive scan (pcp._bulk.derived_columns) or a time grid give them alike.

Only trees whose every node holds numbers are evaluated here (kernels.all_numeric); the
values are those kernels.evaluate gives for the same fetch, row by row, no value ever
becoming a Python object."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from pcp._core.constants import (PM_INDOM_NULL, PM_TYPE_32, PM_TYPE_64, PM_TYPE_DOUBLE,
                                 PM_TYPE_FLOAT, PM_TYPE_U32, PM_TYPE_U64)
from pcp._core.errors import pmErr
from pcp._core.native import ffi, lib
from pcp._core.units import unit_fields
from pcp._libpcp.derived.bind import PROMOTE
from pcp._libpcp.derived.evaluate import _constant, _time_scale
from pcp._libpcp.derived.kernels import _MEMBER
from pcp._libpcp.derived.nodes import BOOLEAN, RELATIONAL, N, Node
from pcp._libpcp.derived.regex import matches
from pcp._libpcp.values import scale_factors

_NEVER = (1 << 63) - 1                   # exact_from: the instance is not known yet
# the cells of a numeric PM_TYPE_* in a matrix (the layout pcp_atom's members have)
CELL = {PM_TYPE_32: np.dtype(np.int32), PM_TYPE_U32: np.dtype(np.uint32),
        PM_TYPE_64: np.dtype(np.int64), PM_TYPE_U64: np.dtype(np.uint64),
        PM_TYPE_FLOAT: np.dtype(np.float32), PM_TYPE_DOUBLE: np.dtype(np.float64)}

# name an instance of `indom` at a row's time (ns): the name, or None
NameInstance = Callable[[int, int, int], Optional[bytes]]
# the instance of `indom` called `name` at a row's time (ns), or None
LookupInstance = Callable[[int, bytes, int], Optional[int]]


class Operand(NamedTuple):
    """One operand metric's matrices for a chunk: values (rows x columns, the metric's
    own dtype, columns adjacent), present (bool, the same shape) and the instance of
    each column (int32)."""
    values: np.ndarray
    present: np.ndarray
    instances: np.ndarray


def _flatten(root: Node) -> List[Node]:
    """The tree's nodes, a parent before its children (root first)."""
    out: List[Node] = []
    stack = [root]
    while stack:
        np_ = stack.pop()
        out.append(np_)
        if np_.right is not None:
            stack.append(np_.right)
        if np_.left is not None:
            stack.append(np_.left)
    return out


class ChunkProgram:
    """One derived metric's bound tree as pcp_dchunk_node structs, with the state of
    its fetches. operand_pmids: the pmids whose matrices evaluate() is given, in that
    order (every N_NAME's pmid among them)."""

    def __init__(self, tree: Node, operand_pmids: Sequence[int]) -> None:
        self.tree = tree
        self.nodes = _flatten(tree)
        self.type = tree.desc[1]
        self.dtype = CELL[self.type]
        index = {id(n): k for k, n in enumerate(self.nodes)}
        where = {p: k for k, p in enumerate(operand_pmids)}
        self.c = ffi.new("pcp_dchunk_node[]", len(self.nodes))
        self.cap = 0
        self.keep: List[Any] = []          # the memory behind the nodes' vectors
        self.tables: Dict[int, Any] = {}    # matchinst() tables' memory, by node
        self.filters: List[Tuple[int, Node, Dict[int, int]]] = []
        for k, np_ in enumerate(self.nodes):
            self._fill(self.c[k], np_, index, where)
            if np_.type == N.FILTERINST:
                # instance -> 1 / 0 (matchinst), or the exact instance once looked up
                self.filters.append((k, np_, {}))
        self._grow(1)

    def _fill(self, c: Any, np_: Node, index: Dict[int, int], where: Dict[int, int]) -> None:
        t = np_.type
        c.type = t
        c.vtype = np_.desc[1]
        c.left = index[id(np_.left)] if np_.left is not None else -1
        c.right = index[id(np_.right)] if np_.right is not None else -1
        c.null_indom = int(np_.desc[2] == PM_INDOM_NULL)
        c.mul, c.div = np_.mul, np_.div
        c.operand = where.get(np_.pmid, -1) if t == N.NAME else -1
        c.save_last = int(bool(np_.save_last))
        c.exact_from = _NEVER
        c.time_scale = 1.0
        c.scale_mult, c.scale_div = 1, 1
        if t in (N.INTEGER, N.DOUBLE):
            setattr(c.constant, _MEMBER.get(np_.desc[1], "l"), _constant(np_))
        elif t == N.DEFINED:
            c.constant.ul = np_.defined
        elif t == N.QUEST:
            yes, no = np_.right.left, np_.right.right
            c.inst_from_no = int(yes.desc[2] == PM_INDOM_NULL and no.desc[2] != PM_INDOM_NULL)
        elif t == N.RESCALE:
            c.scale_mult, c.scale_div = scale_factors(np_.left.desc[4], np_.right.desc[4])
        elif t == N.RATE:
            fields = unit_fields(np_.left.desc[4])
            if fields[1] == 1:
                c.time_scale = _time_scale(fields[4])
        elif t == N.FILTERINST:
            c.regex = int(bool(np_.left.regex))
        elif np_.left is not None and np_.right is not None and t not in (N.COLON,):
            relational = t in RELATIONAL or t in BOOLEAN
            c.relational = int(relational)
            c.otype = (PROMOTE[np_.left.desc[1]][np_.right.desc[1]] if relational
                       else np_.desc[1])

    def _grow(self, cap: int) -> None:
        """Room for `cap` values in every node's vectors, what they hold kept."""
        if cap <= self.cap:
            return
        keep: List[Any] = []
        for k in range(len(self.nodes)):
            c = self.c[k]
            for vec in (c.cur, c.last):
                inst = np.zeros(cap, np.int32)
                val = np.zeros(cap, np.uint64)
                n = max(min(int(vec.numval), int(vec.cap)), 0) if self.cap else 0
                if n:
                    inst[:n] = np.frombuffer(ffi.buffer(vec.inst, 4 * n), np.int32)
                    val[:n] = np.frombuffer(ffi.buffer(vec.val, 8 * n), np.uint64)
                if not self.cap:
                    vec.numval = 0
                vec.cap = cap
                vec.inst = ffi.cast("int32_t *", inst.ctypes.data)
                vec.val = ffi.cast("pcp_atom *", val.ctypes.data)
                keep.extend((inst, val))
        self.keep = keep
        self.cap = cap

    # ---- instance filters ---------------------------------------------------------------

    def _prepare_filters(self, time_ns: np.ndarray, operands: Sequence[Operand],
                         pmids: Dict[int, int], name: NameInstance,
                         lookup: LookupInstance) -> None:
        """What the filters need for this chunk, found as the fetches would find it: the
        exact instance at the first row whose operand has values and a name that is
        found; matchinst()'s verdict for every instance the operands may give, its name
        taken at the first row it has a value."""
        for k, np_, table in self.filters:
            c = self.c[k]
            right = np_.right
            op = operands[pmids[right.pmid]] if right.type == N.NAME and \
                right.pmid in pmids else None
            indom = right.desc[2]
            if not np_.left.regex:
                if c.exact_from != _NEVER:
                    c.exact_from = 0        # known since an earlier chunk
                    continue
                rows = np.flatnonzero(op.present.any(axis=1)) if op is not None else \
                    np.arange(len(time_ns))
                for r in rows.tolist():
                    found = lookup(indom, np_.left.value, int(time_ns[r]))
                    if found is not None:
                        c.exact_inst = found
                        c.exact_from = r
                        break
                continue
            fresh = False
            for other in operands if op is None else [op]:
                insts = other.instances.tolist()
                seen = other.present.any(axis=0)
                first = other.present.argmax(axis=0)
                for col, inst in enumerate(insts):
                    if inst in table or not seen[col]:
                        continue
                    got = name(indom, inst, int(time_ns[first[col]]))
                    ok = False
                    if got is not None and np_.left.compiled is not None:
                        ok = matches(np_.left.compiled, got.split(b" ", 1)[0])
                        ok = (not ok) if np_.left.invert else ok
                    table[inst] = int(ok)
                    fresh = True
            if fresh or c.ntable == 0:
                ids = np.array(sorted(table), np.int32) if table else np.zeros(1, np.int32)
                match = np.array([table[i] for i in sorted(table)] or [0], np.int32)
                used = np.zeros(len(ids), np.int32)
                c.table_inst = ffi.cast("int32_t *", ids.ctypes.data)
                c.table_match = ffi.cast("int32_t *", match.ctypes.data)
                c.table_used = ffi.cast("int32_t *", used.ctypes.data)
                c.ntable = len(table)
                self.tables[k] = (ids, match, used)

    # ---- evaluation ---------------------------------------------------------------------

    def evaluate(self, time_ns: np.ndarray, operands: Sequence[Operand],
                 operand_pmids: Sequence[int], out_instances: np.ndarray,
                 name: NameInstance, lookup: LookupInstance
                 ) -> Tuple[np.ndarray, np.ndarray, int]:
        """(values, present, values written): the derived metric at every row of the
        chunk (times in ns since the epoch), one column per instance of `out_instances`
        (int32; a value of another instance is left out)."""
        nrows = len(time_ns)
        ncols = len(out_instances)
        values = np.zeros((nrows, ncols), self.dtype)
        present = np.zeros((nrows, ncols), bool)
        widest = max([len(o.instances) for o in operands] + [1])
        self._grow(widest)
        pmids = {p: k for k, p in enumerate(operand_pmids)}
        if self.filters:
            self._prepare_filters(time_ns, operands, pmids, name, lookup)
        cops = ffi.new("pcp_dchunk_operand[]", max(len(operands), 1))
        hold: List[Any] = []
        for k, (op, pmid) in enumerate(zip(operands, operand_pmids)):
            vals, pres = op.values, op.present
            if vals.ndim != 2 or (vals.shape[1] > 1 and vals.strides[1] != vals.itemsize):
                vals = np.ascontiguousarray(vals)
            if pres.shape[1] > 1 and pres.strides[1] != 1:
                pres = np.ascontiguousarray(pres)
            insts = np.ascontiguousarray(op.instances, np.int32)
            hold.extend((vals, pres, insts))
            c = cops[k]
            c.type = self._operand_type(pmid)
            c.ncols = vals.shape[1]
            c.col_inst = ffi.cast("int32_t *", insts.ctypes.data)
            c.values = ffi.cast("uint8_t *", vals.ctypes.data)
            c.values_stride = vals.strides[0]
            c.present = ffi.cast("uint8_t *", pres.ctypes.data)
            c.present_stride = pres.strides[0]
        order = np.argsort(out_instances, kind="stable").astype(np.int32)
        cand = np.ascontiguousarray(np.asarray(out_instances, np.int32)[order])
        nvalues = ffi.new("int64_t *")
        unplaced = ffi.new("int64_t *")
        if nrows:
            sts = lib.pcp_derived_chunk_eval(
                self.c, len(self.nodes), 0, cops, len(operands),
                ffi.cast("int64_t *", np.ascontiguousarray(time_ns, np.int64).ctypes.data),
                nrows, ffi.cast("int32_t *", cand.ctypes.data),
                ffi.cast("int32_t *", order.ctypes.data), ncols,
                ffi.cast("uint8_t *", values.ctypes.data), values.strides[0],
                ffi.cast("uint8_t *", present.ctypes.data), present.strides[0],
                nvalues, unplaced)
            if sts < 0:
                raise pmErr(sts)
        return values, present, int(nvalues[0])

    def _operand_type(self, pmid: int) -> int:
        for np_ in self.nodes:
            if np_.type == N.NAME and np_.pmid == pmid:
                return np_.desc[1]
        return PM_TYPE_32
