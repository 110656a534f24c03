"""Derived metrics over whole chunks of rows (csrc/derived_chunk.c): a bound tree made
once into the C program pmFetch runs (pcp._libpcp.derived.program.Program, whose nodes
are csrc/derived_node.h's), then evaluated over operand matrices (rows x instance
columns and their presence), each row being one pmFetch in PM_MODE_FORW with libpcp's
state between fetches (delta() and rate()'s previous values and times, matchinst()'s
table) kept in the nodes from one chunk to the next. What the pmFetch path asks Python
for mid-fetch (metric[name]'s instance, matchinst()'s verdicts) is put in the nodes
before each chunk. Where the matrices come from does not matter: an archive scan
(pcp._bulk.derived_columns) or a time grid give them alike.

Only trees whose every node holds numbers are evaluated here (evaluable_in_c); the
values are those pmFetch gives for the same fetch (pcp._libpcp.derived.program), row
by row, no value ever becoming a Python object."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from pcp._core.constants import (PM_TYPE_32, PM_TYPE_64, PM_TYPE_DOUBLE,
                                 PM_TYPE_FLOAT, PM_TYPE_U32, PM_TYPE_U64)
from pcp._core.errors import pmErr
from pcp._core.native import ffi, lib
from pcp._libpcp.derived.kernels import python_only
from pcp._libpcp.derived.nodes import N, Node
from pcp._libpcp.derived.program import Program
from pcp._libpcp.derived.regex import matches

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
    if python_only(np_):
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


class ChunkProgram:
    """One derived metric's bound tree as the C program pmFetch runs
    (pcp._libpcp.derived.program.Program), with the state of its fetches kept from one
    chunk to the next. operand_pmids: the pmids whose matrices evaluate() is given, in
    that order (every N_NAME's pmid among them)."""

    def __init__(self, tree: Node, operand_pmids: Sequence[int]) -> None:
        self.tree = tree
        self.program = Program(tree)
        self.nodes = self.program.nodes
        self.type = tree.desc[1]
        self.dtype = CELL[self.type]
        for d in self.program.c_nodes:
            if d.error < 0:
                raise pmErr(d.error)        # rescale() without scale factors
        # instance -> 1 / 0 (matchinst), by node index
        self.filters: List[Tuple[int, Node, Dict[int, int]]] = [
            (k, np_, {}) for k, np_ in enumerate(self.nodes) if np_.type == N.FILTERINST]

    # ---- instance filters ---------------------------------------------------------------

    def _prepare_filters(self, time_ns: np.ndarray, operands: Sequence[Operand],
                         pmids: Dict[int, int], name: NameInstance,
                         lookup: LookupInstance) -> None:
        """What the filters need for this chunk, found as the fetches would find it: the
        exact instance at the first row whose operand has values and a name that is
        found; matchinst()'s verdict for every instance the operands may give, its name
        taken at the first row it has a value."""
        for k, np_, table in self.filters:
            c = self.program.c_nodes[k]
            right = np_.right
            op = operands[pmids[right.pmid]] if right.type == N.NAME and \
                right.pmid in pmids else None
            indom = right.desc[2]
            if not np_.left.regex:
                if c.exact_state == lib.PCP_DEXACT_KNOWN:
                    c.exact_from = 0        # known since an earlier chunk
                    continue
                rows = np.flatnonzero(op.present.any(axis=1)) if op is not None else \
                    np.arange(len(time_ns))
                for r in rows.tolist():
                    found = lookup(indom, np_.left.value, int(time_ns[r]))
                    if found is not None:
                        c.exact_inst = found
                        c.exact_from = r
                        c.exact_state = lib.PCP_DEXACT_KNOWN
                        break
                continue
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
                    sts = lib.pcp_derived_table_add(self.program.c_nodes + k, inst, int(ok))
                    if sts < 0:
                        raise pmErr(sts)

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
            o.pmid = pmid & 0xFFFFFFFF
            o.type = self._operand_type(pmid)
            o.ncols = vals.shape[1]
            o.col_inst = ffi.cast("int32_t *", insts.ctypes.data)
            o.values = ffi.cast("uint8_t *", vals.ctypes.data)
            o.values_stride = vals.strides[0]
            o.present = ffi.cast("uint8_t *", pres.ctypes.data)
            o.present_stride = pres.strides[0]
        columns, keep = self._columns(out_instances)
        hold.extend((columns, keep))
        c.prog = self.program.c
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
