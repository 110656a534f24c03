"""csrc/interp.c through pcp._native, on synthetic records: the contract the Python
driver (pcp/_archive/interp.py) relies on. Whether the results are libpcp's is what
tests/archive/test_diff_archive_interp.py and test_interp_random.py check against the
official binding; these check the C state's own promises: declared metrics, the want
list, a counter interpolated between two folded records, the value kept when a <mark>
intervenes, rolls requested once, result sizes and the room the fill is given."""
import struct

import pytest

from pcp._native import ffi, lib

PM_ERR_PMID_LOG = -12378
PM_ERR_TOOBIG = -12444
PM_ERR_LOGREC = -12373
PCP_INTERP_NEED_ROOM = 4   # csrc/interp.h
PM_ID_NULL = 0xFFFFFFFF
INDOM_NULL = 0xFFFFFFFF
COUNTER, INSTANT, DISCRETE = 1, 3, 4
TYPE_U32, TYPE_64, TYPE_DOUBLE, TYPE_STRING = 1, 2, 5, 6
MARK_NONE, MARK_FORW, MARK_BACK = 0, 1, 2
WALK_NONE, WALK_BACK, WALK_FORW = 0, 1, 2


class Record:
    """A decoded record made by hand: sets of (pmid, valfmt, [(inst, vtype, ival, dval,
    payload)]); payloads are laid out in `data`."""

    def __init__(self, sets):
        nvalues = sum(len(v) for _, _, v in sets)
        self.mem = ffi.new("int64_t[]", (lib.pcp_result_mem_size(len(sets), nvalues) + 7) // 8)
        self.c = ffi.new("pcp_result *")
        lib.pcp_result_bind(self.c, self.mem, len(sets), nvalues)
        self.c.numpmid, self.c.nvalues = len(sets), nvalues
        data = bytearray(b"\0" * 16)
        k = 0
        for i, (pmid, valfmt, values) in enumerate(sets):
            self.c.pmid[i], self.c.numval[i], self.c.valfmt[i] = pmid, len(values), valfmt
            self.c.first[i] = k
            for inst, vtype, ival, dval, payload in values:
                self.c.inst[k], self.c.vtype[k] = inst, vtype
                self.c.ival[k], self.c.dval[k] = ival, dval
                self.c.boff[k], self.c.blen[k] = len(data), len(payload)
                data += payload
                k += 1
        self.data = ffi.new("uint8_t[]", bytes(data))
        self.len = len(data)


def new_state(wrap=0):
    return ffi.gc(lib.pcp_interp_new(wrap), lib.pcp_interp_free)


def declare(ip, pmid, type_, sem, insts=(-1,), indom=INDOM_NULL):
    n = len(insts)
    assert lib.pcp_interp_add_metric(ip, pmid, type_, indom, sem, n,
                                     ffi.new("int32_t[]", list(insts) or [0]),
                                     ffi.new("double[]", [-1.0] * n or [0.0]),
                                     ffi.new("double[]", [-1.0] * n or [0.0])) == 0


def fetch(ip, pmids, t_req, records, direction=1):
    """One fetch the way the driver does it, with `records` [(t, Record or None)] in
    time order standing for the archive (None: a <mark>)."""
    req = ffi.new("uint32_t[]", pmids)
    assert lib.pcp_interp_begin(ip, req, len(pmids), ffi.NULL) == 0

    def fold(t, rec, do_mark, counting, walk):
        if rec is None:
            return lib.pcp_interp_fold(ip, t_req, t, ffi.NULL, ffi.NULL, 0, do_mark, counting,
                                       walk)
        return lib.pcp_interp_fold(ip, t_req, t, rec.c, rec.data, rec.len, do_mark, counting,
                                   walk)

    count = ffi.new("int32_t *")
    for backward in (True, False):
        run = lib.pcp_interp_prior_pass if backward else lib.pcp_interp_next_pass
        resume, rolls = 0, 0
        while run(ip, t_req, direction, resume, count) == 1:
            rolls += 1
            resume = 1
            for t, rec in records:
                if (t <= t_req) if direction > 0 else (t >= t_req):
                    fold(t, rec, MARK_FORW if direction > 0 else MARK_BACK, 0, WALK_NONE)
        assert rolls <= 1
        wanted, found = count[0], 0
        order = [r for r in reversed(records) if r[0] <= t_req] if backward else \
            [r for r in records if r[0] >= t_req]
        for t, rec in order:
            if found >= wanted:
                break
            found = fold(t, rec, MARK_BACK if backward else MARK_FORW, 1,
                         WALK_BACK if backward else WALK_FORW)
            assert 0 <= found
        (lib.pcp_interp_prior_finish if backward else lib.pcp_interp_next_finish)(ip, t_req)
    nvalues = ffi.new("int32_t *")
    nbytes = ffi.new("int64_t *")
    # sized first (decided once), then filled
    assert lib.pcp_interp_result(ip, t_req, 0, ffi.NULL, ffi.NULL, 0, nvalues,
                                 nbytes) == PCP_INTERP_NEED_ROOM
    mem = ffi.new("int64_t[]", (lib.pcp_result_mem_size(len(pmids), nvalues[0]) + 7) // 8)
    out = ffi.new("pcp_result *")
    lib.pcp_result_bind(out, mem, len(pmids), nvalues[0])
    out.numpmid, out.nvalues = len(pmids), nvalues[0]
    data = ffi.new("uint8_t[]", max(nbytes[0], 1))
    assert lib.pcp_interp_result(ip, t_req, 1, out, data, nbytes[0], nvalues, nbytes) == 0
    sets = []
    for i in range(out.numpmid):
        values = []
        for k in range(out.first[i], out.first[i] + max(out.numval[i], 0)):
            payload = bytes(ffi.buffer(data + out.boff[k], out.blen[k]))
            values.append((out.inst[k], out.vtype[k], out.ival[k], out.dval[k], payload))
        sets.append((out.pmid[i], out.numval[i], out.valfmt[i], values))
    return sets


def u32(pmid, word):
    return (pmid, 0, [(-1, -1, word, 0.0, b"")])


def test_counter_is_interpolated_between_two_records():
    ip = new_state()
    declare(ip, 7, TYPE_U32, COUNTER)
    records = [(0.0, Record([u32(7, 100)])), (10.0, Record([u32(7, 200)]))]
    # libpcp: (0.5 + prior) + dt * (next - prior) / span, truncated
    assert fetch(ip, [7], 2.5, records) == [(7, 1, 0, [(-1, -1, 125, 0.0, b"")])]
    assert fetch(ip, [7], 7.5, records)[0][3][0][2] == 175
    # exactly on an observation: that value
    assert fetch(ip, [7], 10.0, records)[0][3][0][2] == 200


def test_instant_takes_the_prior_value_and_discrete_needs_only_a_prior():
    ip = new_state()
    declare(ip, 1, TYPE_U32, INSTANT)
    declare(ip, 2, TYPE_U32, DISCRETE)
    records = [(0.0, Record([u32(1, 5), u32(2, 50)])), (10.0, Record([u32(1, 9)]))]
    got = fetch(ip, [1, 2], 4.0, records)
    assert [(s[0], s[1], [v[2] for v in s[3]]) for s in got] == [(1, 1, [5]), (2, 1, [50])]


def test_mark_between_silences_counters_and_instants():
    ip = new_state()
    declare(ip, 7, TYPE_U32, COUNTER)
    records = [(0.0, Record([u32(7, 100)])), (5.0, None), (10.0, Record([u32(7, 200)]))]
    assert fetch(ip, [7], 7.0, records) == [(7, 0, 0, [])]


def test_double_counter_and_string_payloads():
    ip = new_state()
    declare(ip, 3, TYPE_DOUBLE, COUNTER)
    declare(ip, 4, TYPE_STRING, INSTANT)
    first = Record([(3, 1, [(-1, TYPE_DOUBLE, 0, 1.0, struct.pack(">d", 1.0))]),
                    (4, 1, [(-1, TYPE_STRING, 0, 0.0, b"hello, interpolation\0")])])
    second = Record([(3, 1, [(-1, TYPE_DOUBLE, 0, 3.0, struct.pack(">d", 3.0))]),
                     (4, 1, [(-1, TYPE_STRING, 0, 0.0, b"bye\0")])])
    got = fetch(ip, [3, 4], 5.0, [(0.0, first), (10.0, second)])
    assert got[0] == (3, 1, 1, [(-1, TYPE_DOUBLE, 0, 2.0, struct.pack(">d", 2.0))])
    # strings: the prior value, payload copied out of the record
    assert got[1] == (4, 1, 1, [(-1, TYPE_STRING, 0, 0.0, b"hello, interpolation\0")])


def test_instances_come_in_hash_table_order_and_null_pmid_is_an_empty_set():
    ip = new_state()
    declare(ip, 9, TYPE_U32, DISCRETE, insts=(3, 1, 2), indom=5)
    rec = Record([(9, 0, [(1, -1, 10, 0.0, b""), (2, -1, 20, 0.0, b""),
                          (3, -1, 30, 0.0, b"")])])
    got = fetch(ip, [9, PM_ID_NULL, 9], 1.0, [(0.0, rec)])
    assert [v[0] for v in got[0][3]] == [3, 1, 2]          # the declared order
    assert got[1] == (PM_ID_NULL, 0, 0, [])
    assert got[2] == got[0]                                 # a repeated pmid


def test_undeclared_pmid_and_unknown_descriptor():
    ip = new_state()
    req = ffi.new("uint32_t[]", [42])
    assert lib.pcp_interp_begin(ip, req, 1, ffi.NULL) == PM_ERR_PMID_LOG
    declare(ip, 42, -1, 0, insts=())
    assert fetch(ip, [42], 0.0, []) == [(42, PM_ERR_PMID_LOG, 0, [])]


def test_value_format_must_not_change():
    ip = new_state()
    declare(ip, 7, TYPE_U32, COUNTER)
    req = ffi.new("uint32_t[]", [7])
    assert lib.pcp_interp_begin(ip, req, 1, ffi.NULL) == 0
    dptr = Record([(7, 1, [(-1, TYPE_U32, 5, 0.0, b"\0\0\0\5")])])
    # a 32-bit counter in a block: libpcp refuses the record
    assert lib.pcp_interp_fold(ip, 1.0, 0.0, dptr.c, dptr.data, dptr.len, MARK_FORW, 0,
                               WALK_NONE) == PM_ERR_LOGREC


def test_result_refuses_other_room():
    ip = new_state()
    declare(ip, 7, TYPE_U32, INSTANT)
    fetch(ip, [7], 0.0, [(0.0, Record([u32(7, 1)]))])
    nvalues = ffi.new("int32_t *")
    nbytes = ffi.new("int64_t *")
    mem = ffi.new("int64_t[]", 64)
    out = ffi.new("pcp_result *")
    lib.pcp_result_bind(out, mem, 1, 1)
    data = ffi.new("uint8_t[]", 1)
    for numpmid, nvalue in ((1, 0), (1, 2), (0, 1)):
        out.numpmid, out.nvalues = numpmid, nvalue
        assert lib.pcp_interp_result(ip, 0.0, 1, out, data, 0, nvalues,
                                     nbytes) == PCP_INTERP_NEED_ROOM
        assert (nvalues[0], nbytes[0]) == (1, 0)
    out.numpmid, out.nvalues = 1, 1
    assert lib.pcp_interp_result(ip, 0.0, 1, out, data, 0, nvalues, nbytes) == 0
    assert (out.numval[0], out.ival[0]) == (1, 1)


@pytest.mark.parametrize("bad", [b"", b"\0\0\0\4", b"\0\0\0\x10" + b"\0" * 12])
def test_fold_record_refuses_bytes_that_are_not_a_record(bad):
    ip = new_state()
    declare(ip, 7, TYPE_U32, COUNTER)
    buf = ffi.new("uint8_t[]", bad or b"\0")
    assert lib.pcp_interp_fold_record(ip, 0.0, 0.0, 1, buf, len(bad), 2, MARK_FORW, 0,
                                      WALK_NONE) == PM_ERR_LOGREC
