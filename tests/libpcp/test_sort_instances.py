"""pmSortInstances: values reordered by instance id, each keeping its own payload."""
import struct

from support import fakepmcd as F
from pcp import pmapi
from pcp._decode.result import FlatResult, LP_pmResult, pmResult


def _unsorted_result() -> LP_pmResult:
    pdu = F.result([
        (F.pmid_build(29, 0, 5), [(3, 30), (1, 10), (2, 20)]),
        (F.pmid_build(29, 0, 6), [(9, (5, struct.pack(">d", 9.5))),
                                  (4, (5, struct.pack(">d", 4.5)))]),
    ])
    return LP_pmResult(pmResult(FlatResult(bytes(pdu), False)))


def _values(res, i, t):
    c = res.contents
    return [(c.get_inst(i, j),
             pmapi.pmContext.pmExtractValue(c.get_valfmt(i), c.get_vlist(i, j), t, t).dref(t))
            for j in range(c.get_numval(i))]


def test_sort_orders_insitu_and_block_values_by_instance():
    res = _unsorted_result()
    pmapi.pmContext.pmSortInstances(res)
    assert _values(res, 0, 0) == [(1, 10), (2, 20), (3, 30)]
    assert _values(res, 1, 5) == [(4, 4.5), (9, 9.5)]


def test_sort_moves_an_edited_value_block_with_its_value():
    res = _unsorted_result()
    blk = res.contents.get_vlist(1, 0).value.pval   # instance 9, materialised for editing
    blk.contents.vlen = 12
    import ctypes
    ctypes.memmove(ctypes.addressof(blk.contents) + 4, ctypes.byref(ctypes.c_double(99.0)), 8)
    pmapi.pmContext.pmSortInstances(res)
    assert _values(res, 1, 5) == [(4, 4.5), (9, 99.0)]
