"""Derived metrics over whole chunks of rows (csrc/derived_chunk.c): a bound tree made
into a C node array once, then evaluated over operand matrices (rows x instance columns
and their presence), each row being one pmFetch in PM_MODE_FORW with libpcp's state
between fetches (delta() and rate()'s previous values and times, matchinst()'s table)
kept in the nodes from one chunk to the next. Where the matrices come from does not
matter: an archive scan (pcp._bulk.derived_columns) or a time grid give them alike.

Only trees whose every node holds numbers are evaluated here (evaluable_in_c); the
values are those pmFetch gives for the same fetch (pcp._libpcp.derived.program), row
by row, no value ever becoming a Python object."""
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


def evaluable_in_c(np_: Optional[Node]) -> bool:
    """Whether every node of a bound tree holds numbers (kernels.all_numeric), but for
    count() of a string or aggregate metric, which needs only how many values there are
    (the operand's cells then hold what the bulk scan keeps of them, never read)."""
    if np_ is None:
        return True
    if np_.type == N.COUNT and np_.left is not None and np_.left.type == N.NAME:
        return True
    if np_.type not in (N.PATTERN, N.SCALE) and np_.desc[1] not in CELL:
        return False
    return evaluable_in_c(np_.left) and evaluable_in_c(np_.right)


class Job(NamedTuple):
    """One derived metric to evaluate over a chunk: its program, its operands' matrices
    (in the order of operand_pmids) and the instances of its output columns."""
    program: "ChunkProgram"
    operands: Sequence[Operand]
    operand_pmids: Sequence[int]
    out_instances: np.ndarray


def evaluate_many(time_ns: np.ndarray, jobs: Sequence[Job], name: NameInstance,
                  lookup: LookupInstance) -> List[Tuple[np.ndarray, np.ndarray, int]]:
    """(values, present, values written) of each job over the rows of one chunk (times
    in ns since the epoch), all in one C call that takes the rows block by block."""
    time_ns = np.ascontiguousarray(time_ns, np.int64)
    progs = ffi.new("pcp_dchunk_program[]", max(len(jobs), 1))
    hold: List[Any] = [time_ns]
    outs = [job.program._prepare(progs[k], time_ns, job, name, lookup, hold)
            for k, job in enumerate(jobs)]
    if len(time_ns) and jobs:
        sts = lib.pcp_derived_chunk_eval(progs, len(jobs),
                                         ffi.cast("int64_t *", time_ns.ctypes.data),
                                         len(time_ns))
        if sts < 0:
            raise pmErr(sts)
    return [(values, present, int(progs[k].nvalues))
            for k, (values, present) in enumerate(outs)]


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
        """Room for `cap` values in every node's vectors (two blocks of memory for the
        whole tree), what they hold kept."""
        if cap <= self.cap:
            return
        nvec = 2 * len(self.nodes)
        insts = np.zeros((nvec, cap), np.int32)
        vals = np.zeros((nvec, cap), np.uint64)
        for k in range(len(self.nodes)):
            c = self.c[k]
            for v, vec in enumerate((c.cur, c.last)):
                row = 2 * k + v
                n = max(min(int(vec.numval), int(vec.cap)), 0) if self.cap else 0
                if n:
                    insts[row, :n] = np.frombuffer(ffi.buffer(vec.inst, 4 * n), np.int32)
                    vals[row, :n] = np.frombuffer(ffi.buffer(vec.val, 8 * n), np.uint64)
                if not self.cap:
                    vec.numval = 0
                vec.cap = cap
                vec.inst = ffi.cast("int32_t *", insts[row].ctypes.data)
                vec.val = ffi.cast("pcp_atom *", vals[row].ctypes.data)
        self.keep = [insts, vals]
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
                if not len(other.present):      # no rows (a grid chunk past the end)
                    continue
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
        return evaluate_many(time_ns, [Job(self, operands, operand_pmids, out_instances)],
                             name, lookup)[0]

    def _prepare(self, c: Any, time_ns: np.ndarray, job: "Job", name: NameInstance,
                 lookup: LookupInstance, hold: List[Any]) -> Tuple[np.ndarray, np.ndarray]:
        """Fill the pcp_dchunk_program `c` for one chunk; returns the output matrices."""
        operands, operand_pmids = job.operands, job.operand_pmids
        nrows = len(time_ns)
        out_instances = np.asarray(job.out_instances, np.int32)
        values = np.zeros((nrows, len(out_instances)), self.dtype)
        present = np.zeros((nrows, len(out_instances)), bool)
        self._grow(max([len(o.instances) for o in operands] + [1]))
        pmids = {p: k for k, p in enumerate(operand_pmids)}
        if self.filters:
            self._prepare_filters(time_ns, operands, pmids, name, lookup)
        cops = ffi.new("pcp_dchunk_operand[]", max(len(operands), 1))
        hold.append(cops)
        for k, (op, pmid) in enumerate(zip(operands, operand_pmids)):
            vals, pres = op.values, op.present
            if vals.ndim != 2 or (vals.shape[1] > 1 and vals.strides[1] != vals.itemsize):
                vals = np.ascontiguousarray(vals)
            if pres.shape[1] > 1 and pres.strides[1] != 1:
                pres = np.ascontiguousarray(pres)
            insts = np.ascontiguousarray(op.instances, np.int32)
            hold.extend((vals, pres, insts))
            o = cops[k]
            o.type = self._operand_type(pmid)
            o.ncols = vals.shape[1]
            o.col_inst = ffi.cast("int32_t *", insts.ctypes.data)
            o.values = ffi.cast("uint8_t *", vals.ctypes.data)
            o.values_stride = vals.strides[0]
            o.present = ffi.cast("uint8_t *", pres.ctypes.data)
            o.present_stride = pres.strides[0]
        columns, keep = self._columns(out_instances)
        hold.extend((columns, keep))
        c.nodes = self.c
        c.nnodes = len(self.nodes)
        c.ops = cops
        c.nops = len(operands)
        c.columns = columns
        c.out_ncols = len(out_instances)
        c.out_values = ffi.cast("uint8_t *", values.ctypes.data)
        c.out_stride = values.strides[0]
        c.out_present = ffi.cast("uint8_t *", present.ctypes.data)
        c.out_present_stride = present.strides[0]
        c.nvalues = c.unplaced = c.status = 0
        return values, present

    @staticmethod
    def _columns(insts: np.ndarray) -> Tuple[Any, List[np.ndarray]]:
        """The C form of the output columns (and the arrays behind it): a direct table
        when the instance numbers are dense enough, else a sorted list."""
        c = ffi.new("pcp_dchunk_columns *")
        keep: List[np.ndarray] = []
        if len(insts):
            lo, hi = int(insts.min()), int(insts.max())
            if hi - lo < 4 * len(insts) + 64:
                dense = np.full(hi - lo + 1, -1, np.int32)
                dense[insts - lo] = np.arange(len(insts), dtype=np.int32)
                c.dense = ffi.cast("int32_t *", dense.ctypes.data)
                c.base, c.ndense = lo, len(dense)
                keep.append(dense)
            else:
                order = np.argsort(insts, kind="stable").astype(np.int32)
                sorted_insts = np.ascontiguousarray(insts[order])
                c.inst = ffi.cast("int32_t *", sorted_insts.ctypes.data)
                c.col = ffi.cast("int32_t *", order.ctypes.data)
                c.n = len(insts)
                keep.extend((sorted_insts, order))
        return c, keep

    def _operand_type(self, pmid: int) -> int:
        for np_ in self.nodes:
            if np_.type == N.NAME and np_.pmid == pmid:
                return np_.desc[1]
        return PM_TYPE_32
