"""csrc/derived_chunk.c through pcp._native, on programs made by hand: the contract the
Python side (pcp/_libpcp/derived/chunks.py) relies on. Whether the values are libpcp's
is what tests/bulk/test_derived_columns.py checks against the drop-in and the official
binding; these check that a malformed program (a cycle, a node without its operand, an
operand out of range) gives an error code, never a crash, that the nodes' vectors grow
to the operands' width, and that rows are evaluated in order with the state carried
between them and between chunks."""
import numpy as np

from pcp._core.constants import PM_ERR_CONV, PM_ERR_PMID, PM_TYPE_32, PM_TYPE_DOUBLE
from pcp._core.native import ffi, lib
from pcp._libpcp.derived.nodes import N

INDOM = 0x0F000001


PMID = 0x7C00001


class Program:
    """nodes: (op, type, left, right, pmid, indom_null) tuples in post-order (the root
    last), each node's parent found from its operands; one int32 operand (pmid PMID) of
    the columns of `values`. The nodes' vectors are C's (freed when the test is done)."""

    def __init__(self, nodes, values, present):
        self.n = len(nodes)
        self.c = ffi.new("pcp_dnode[]", self.n)
        for k, (op, vtype, left, right, pmid, null) in enumerate(nodes):
            n = self.c[k]
            n.op, n.type, n.left, n.right, n.pmid, n.indom_null = \
                op, vtype, left, right, pmid, null
            n.parent = -1
            n.mul = n.div = n.scale_mult = n.scale_div = 1
            n.time_scale = 1.0
            n.otype = vtype
        for k, (_, _, left, right, _, _) in enumerate(nodes):
            for child in (left, right):
                if 0 <= child < self.n:
                    self.c[child].parent = k
        prog = ffi.new("pcp_dprogram *")
        prog.nnodes, prog.nodes = self.n, self.c
        self.prog = ffi.gc(prog, lambda p, keep=self.c: lib.pcp_derived_program_free(p))
        self.values = np.ascontiguousarray(values, np.int32)
        self.present = np.ascontiguousarray(present, bool)
        self.insts = np.arange(self.values.shape[1], dtype=np.int32)
        self.op = ffi.new("pcp_dchunk_operand *")
        self.op.pmid = PMID
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
        prog.prog, prog.ops, prog.nops = self.prog, self.op, 1
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
    return [(N.NAME, PM_TYPE_32, -1, -1, PMID, 0), (N.INTEGER, PM_TYPE_32, -1, -1, 0, 1),
            (N.PLUS, PM_TYPE_32, 0, 1, 0, 0)]


def test_a_program_over_rows():
    p = Program(_plus_five(), VALUES, PRESENT)
    p.c[1].constant.l = 5
    sts, out, pres, prog = p.run()
    assert sts == 0 and prog.nvalues == 8
    assert pres.tolist() == [[True] * 3, [True, False, True], [True] * 3]
    assert out[pres].tolist() == [6, 7, 8, 16, 38, 116, 227, 338]


def test_delta_carries_the_previous_row():
    nodes = [(N.NAME, PM_TYPE_32, -1, -1, PMID, 0), (N.DELTA, PM_TYPE_32, 0, -1, 0, 0)]
    p = Program(nodes, VALUES, PRESENT)
    p.c[0].save_last = 1
    sts, out, pres, _ = p.run()
    assert sts == 0
    assert pres.tolist() == [[False] * 3, [True, False, True], [True, False, True]]
    assert out[pres].tolist() == [10, 30, 100, 300]


def test_a_cycle_is_refused():
    nodes = _plus_five()
    nodes[1] = (N.NEG, PM_TYPE_32, 2, -1, 0, 0)          # back to the root
    sts, _, pres, prog = Program(nodes, VALUES, PRESENT).run()
    assert sts == PM_ERR_PMID and prog.status == PM_ERR_PMID and not pres.any()


def test_a_node_without_its_operand_is_refused():
    for t in (N.NEG, N.RATE, N.SUM, N.RESCALE, N.QUEST, N.FILTERINST, N.PLUS):
        nodes = [(t, PM_TYPE_DOUBLE, -1, -1, 0, 0)]
        sts, _, _, _ = Program(nodes, VALUES, PRESENT).run(np.float64)
        assert sts == PM_ERR_PMID, t


def test_out_of_range_links_and_operands():
    nodes = _plus_five()
    nodes[2] = (N.PLUS, PM_TYPE_32, 0, 7, 0, 0)
    assert Program(nodes, VALUES, PRESENT).run()[0] == PM_ERR_PMID
    nodes = _plus_five()
    nodes[0] = (N.NAME, PM_TYPE_32, -1, -1, PMID + 1, 0)   # no such operand: no values
    sts, _, pres, _ = Program(nodes, VALUES, PRESENT).run()
    assert sts == 0 and not pres.any()


def test_vectors_grow_with_the_operand():
    wide = np.arange(3 * 300, dtype=np.int32).reshape(3, 300)
    sts, out, pres, prog = Program(_plus_five(), wide, np.ones(wide.shape, bool)).run()
    assert sts == 0 and prog.nvalues == wide.size and pres.all()
    assert (out == wide).all()                  # the constant node was left at 0


def test_state_is_carried_between_chunks():
    nodes = [(N.NAME, PM_TYPE_32, -1, -1, PMID, 0), (N.DELTA, PM_TYPE_32, 0, -1, 0, 0)]
    p = Program(nodes, VALUES[:1], PRESENT[:1])
    p.c[0].save_last = 1
    assert not p.run()[2].any()                 # the first row: no previous values
    later = Program(nodes, VALUES[1:2], PRESENT[1:2])
    p.values[:], p.present[:] = later.values, later.present
    sts, out, pres, _ = p.run()
    assert sts == 0 and out[pres].tolist() == [10, 30]


def test_a_rescale_without_factors_stops_the_chunk():
    nodes = [(N.NAME, PM_TYPE_32, -1, -1, PMID, 0), (N.SCALE, PM_TYPE_32, -1, -1, 0, 0),
             (N.RESCALE, PM_TYPE_32, 0, 1, 0, 0)]
    p = Program(nodes, VALUES, PRESENT)
    p.c[2].error = PM_ERR_CONV
    sts, _, pres, prog = p.run()
    assert sts == PM_ERR_CONV and prog.status == PM_ERR_CONV and not pres.any()
