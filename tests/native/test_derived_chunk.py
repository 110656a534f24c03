"""csrc/derived_chunk.c through pcp._native, on programs made by hand: the contract the
Python side (pcp/_libpcp/derived/chunks.py) relies on. Whether the values are libpcp's
is what tests/bulk/test_derived_columns.py checks against the drop-in and the official
binding; these check that a malformed program (a cycle, a node without its operand, an
operand out of range, too little room) gives an error code, never a crash, and that rows
are evaluated in order with the state carried between them."""
import numpy as np

from pcp._core.constants import PM_ERR_PMID, PM_ERR_TOOBIG, PM_TYPE_32, PM_TYPE_DOUBLE
from pcp._core.native import ffi, lib
from pcp._libpcp.derived.nodes import N

INDOM = 0x0F000001


class Program:
    """nodes: (type, vtype, left, right, operand, null_indom) tuples; one int32 operand
    of `ncols` columns; room for `cap` values in every node."""

    def __init__(self, nodes, values, present, cap=4):
        self.n = len(nodes)
        self.c = ffi.new("pcp_dchunk_node[]", self.n)
        self.keep = []
        for k, (t, vtype, left, right, operand, null) in enumerate(nodes):
            n = self.c[k]
            n.type, n.vtype, n.left, n.right, n.operand, n.null_indom = \
                t, vtype, left, right, operand, null
            n.mul = n.div = n.scale_mult = n.scale_div = 1
            n.time_scale = 1.0
            n.exact_from = (1 << 63) - 1
            n.otype = vtype
            for vec in (n.cur, n.last):
                inst = np.zeros(cap, np.int32)
                val = np.zeros(cap, np.uint64)
                self.keep += [inst, val]
                vec.cap = cap
                vec.inst = ffi.cast("int32_t *", inst.ctypes.data)
                vec.val = ffi.cast("pcp_atom *", val.ctypes.data)
        self.values = np.ascontiguousarray(values, np.int32)
        self.present = np.ascontiguousarray(present, bool)
        self.insts = np.arange(self.values.shape[1], dtype=np.int32)
        self.op = ffi.new("pcp_dchunk_operand *")
        self.op.type = PM_TYPE_32
        self.op.ncols = self.values.shape[1]
        self.op.col_inst = ffi.cast("int32_t *", self.insts.ctypes.data)
        self.op.values = ffi.cast("uint8_t *", self.values.ctypes.data)
        self.op.values_stride = self.values.strides[0]
        self.op.present = ffi.cast("uint8_t *", self.present.ctypes.data)
        self.op.present_stride = self.present.strides[0]

    def run(self, out_dtype=np.int32):
        rows, ncols = self.values.shape
        dense = np.arange(ncols, dtype=np.int32)
        cols = ffi.new("pcp_dchunk_columns *")
        cols.dense = ffi.cast("int32_t *", dense.ctypes.data)
        cols.base, cols.ndense = 0, ncols
        out = np.zeros((rows, ncols), out_dtype)
        pres = np.zeros((rows, ncols), bool)
        prog = ffi.new("pcp_dchunk_program *")
        prog.nodes, prog.nnodes, prog.ops, prog.nops = self.c, self.n, self.op, 1
        prog.columns = cols
        prog.out_ncols = ncols
        prog.out_values = ffi.cast("uint8_t *", out.ctypes.data)
        prog.out_stride = out.strides[0]
        prog.out_present = ffi.cast("uint8_t *", pres.ctypes.data)
        prog.out_present_stride = pres.strides[0]
        times = np.arange(rows, dtype=np.int64) * 1000000000 + 1700000000 * 10**9
        sts = lib.pcp_derived_chunk_eval(prog, 1, ffi.cast("int64_t *", times.ctypes.data),
                                         rows)
        return sts, out, pres, prog


VALUES = [[1, 2, 3], [11, 22, 33], [111, 222, 333]]
PRESENT = [[1, 1, 1], [1, 0, 1], [1, 1, 1]]


def _plus_five():
    return [(N.PLUS, PM_TYPE_32, 1, 2, -1, 0), (N.NAME, PM_TYPE_32, -1, -1, 0, 0),
            (N.INTEGER, PM_TYPE_32, -1, -1, -1, 1)]


def test_a_program_over_rows():
    p = Program(_plus_five(), VALUES, PRESENT)
    p.c[2].constant.l = 5
    sts, out, pres, prog = p.run()
    assert sts == 0 and prog.nvalues == 8
    assert pres.tolist() == [[True] * 3, [True, False, True], [True] * 3]
    assert out[pres].tolist() == [6, 7, 8, 16, 38, 116, 227, 338]


def test_delta_carries_the_previous_row():
    nodes = [(N.DELTA, PM_TYPE_32, 1, -1, -1, 0), (N.NAME, PM_TYPE_32, -1, -1, 0, 0)]
    p = Program(nodes, VALUES, PRESENT)
    p.c[1].save_last = 1
    sts, out, pres, _ = p.run()
    assert sts == 0
    assert pres.tolist() == [[False] * 3, [True, False, True], [True, False, True]]
    assert out[pres].tolist() == [10, 30, 100, 300]


def test_a_cycle_is_refused():
    nodes = _plus_five()
    nodes[1] = (N.NEG, PM_TYPE_32, 0, -1, -1, 0)          # back to the root
    sts, _, pres, prog = Program(nodes, VALUES, PRESENT).run()
    assert sts == PM_ERR_PMID and prog.status == PM_ERR_PMID and not pres.any()


def test_a_node_without_its_operand_is_refused():
    for t in (N.NEG, N.RATE, N.SUM, N.RESCALE, N.QUEST, N.FILTERINST, N.PLUS):
        nodes = [(t, PM_TYPE_DOUBLE, -1, -1, -1, 0)]
        sts, _, _, _ = Program(nodes, VALUES, PRESENT).run(np.float64)
        assert sts == PM_ERR_PMID, t


def test_out_of_range_links_and_operands():
    nodes = _plus_five()
    nodes[0] = (N.PLUS, PM_TYPE_32, 1, 7, -1, 0)
    assert Program(nodes, VALUES, PRESENT).run()[0] == PM_ERR_PMID
    nodes = _plus_five()
    nodes[1] = (N.NAME, PM_TYPE_32, -1, -1, 3, 0)          # no such operand: no values
    sts, _, pres, _ = Program(nodes, VALUES, PRESENT).run()
    assert sts == 0 and not pres.any()


def test_too_little_room():
    sts, _, _, _ = Program(_plus_five(), VALUES, PRESENT, cap=2).run()
    assert sts == PM_ERR_TOOBIG
