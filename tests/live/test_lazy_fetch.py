"""A live pmFetch's result is checked whole and indexed in C when it arrives, its values
filled from the PDU when something first reads them (pcp_result_pdu_index_sized,
pcp_result_pdu_fill_values; FlatResult.c). Whatever reads first, in whatever order,
from however many threads, and however late (after pmFreeResult, after later fetches
of the context), what is read is what the eager decoder makes of the same PDU; a
hostile PDU is refused by pmFetch itself, even in a value nothing would read."""
from __future__ import annotations

import struct
import threading

import pytest

import cpmapi as c_api
from pcp import pmapi
from pcp._core.constants import PM_ERR_IPC
from pcp._decode.result import FlatResult, flat_of
from tests.support import fakepmcd as F

# INSITU and DPTR sets of every numeric type, strings, many instances, an unknown pmid
NAMES = ["sample.hordes.one", "sample.bin", "sample.long.bin", "sample.ulong.million",
         "sample.longlong.bin", "sample.ulonglong.hundred", "sample.float.bin",
         "sample.double.bin", "sample.string.hullo", "sample.string.bin",
         "sample.milliseconds", "sample.long.one"]
UNKNOWN_PMID = pmapi.pmContext.pmID_build(29, 4000, 1)


@pytest.fixture
def live(pmcd):
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, "local:")
    pmids = list(ctx.pmLookupName(NAMES)) + [UNKNOWN_PMID]
    types = [d.contents.type for d in ctx.pmLookupDescs(pmids[:-1])] + [c_api.PM_TYPE_32]
    return ctx, pmids, types


def _decoded_again(flat: FlatResult) -> FlatResult:
    """The result's PDU decoded by the eager decoder."""
    return FlatResult(flat.pdu, struct.unpack_from(">i", flat.pdu, 4)[0] == F.PDU_HIGHRES_RESULT)


def _eager(flat: FlatResult) -> list:
    """Every value of the result's PDU as the eager decoder gives it."""
    return _columns(_decoded_again(flat))


def _columns(flat: FlatResult) -> list:
    out = []
    for i in range(flat.numpmid):
        first, n = flat.first[i], max(flat.numval[i], 0)
        out.append((flat.pmid[i], flat.numval[i], flat.valfmt[i],
                    [(flat.inst[k], flat.vtype[k], flat.ival[k], flat.dval[k],
                      flat.payload(k) if flat.vtype[k] >= 0 else b"")
                     for k in range(first, first + n)]))
    return out


def _read(ctx, result, types, order) -> list:
    """Every value through the drop-in accessors, sets and values visited in `order`
    (a function reordering a list of indexes), put back in set order."""
    res = result.contents
    got = {}
    for i in order(list(range(res.numpmid))):
        numval = res.get_numval(i)
        values = {}
        for j in order(list(range(max(numval, 0)))):
            v = res.get_vlist(i, j)
            atom = ctx.pmExtractValue(res.get_valfmt(i), v, types[i], types[i])
            values[j] = (res.get_inst(i, j), atom.dref(types[i]))
        got[i] = (res.get_pmid(i), numval, [values[j] for j in sorted(values)])
    return [got[i] for i in sorted(got)]


def _expected(ctx, result, types) -> list:
    """The same reading, made on an eagerly decoded copy of the result's PDU."""
    copy = _decoded_again(flat_of(result))
    return _read(ctx, pmapi.LP_pmResult(pmapi.pmResult(copy)), types, list)


ORDERS = {"forward": list, "backward": lambda xs: xs[::-1],
          "outside_in": lambda xs: [x for pair in zip(xs, xs[::-1]) for x in pair][:len(xs)]
          if len(xs) % 2 == 0 else xs[len(xs) // 2:] + xs[:len(xs) // 2]}


@pytest.mark.pmcd
@pytest.mark.parametrize("order", sorted(ORDERS))
def test_values_read_in_any_order_are_the_decoders(live, order):
    ctx, pmids, types = live
    result = ctx.pmFetch(pmids)
    flat = flat_of(result)
    assert flat._unfilled is not None           # nothing read yet: only indexed
    assert _read(ctx, result, types, ORDERS[order]) == _expected(ctx, result, types)
    assert flat._unfilled is None


@pytest.mark.pmcd
def test_every_reader_first_sees_the_decoders_values(live):
    """The first read of a fresh result through each kind of reader: the per-set
    accessors (which need no values), a value's union, the numpy and list columns, the
    value sets' helper, str(), pmSortInstances: each time the same values."""
    ctx, pmids, types = live
    firsts = {
        "per_set": lambda r: [(r.contents.get_pmid(i), r.contents.get_numval(i),
                               r.contents.get_valfmt(i)) for i in range(r.contents.numpmid)],
        "lval": lambda r: r.contents.vset[0].vlist[5].value.lval,
        "pval": lambda r: r.contents.get_vlist(8, 0).value.pval.contents.vbuf,
        "arrays": lambda r: r.contents.as_arrays().ival.tolist(),
        "lists": lambda r: r.contents.as_lists().dval,
        "own_type": lambda r: r.contents.get_vset(4).own_type_values(types[4])[2],
        "str": lambda r: str(r.contents),
        "sort": pmapi.pmContext.pmSortInstances,
    }
    for name, first in firsts.items():
        result = ctx.pmFetch(pmids)
        flat = flat_of(result)
        first(result)
        if name == "per_set":
            assert flat._unfilled is not None, "the per-set columns filled the values"
        assert _columns(flat) == _eager(flat), name


@pytest.mark.pmcd
def test_a_result_read_after_pmFreeResult_and_later_fetches_keeps_its_values(live):
    ctx, pmids, types = live
    held = []
    for _ in range(4):
        r = ctx.pmFetch(pmids)
        ctx.pmFreeResult(r)          # nothing to free: the result stays readable
        held.append(r)
        ctx.pmFreeResult(ctx.pmFetch(pmids))        # a dropped one: its room is reused
    # nothing of the held results was read before: their columns were filled only now
    assert all(flat_of(r)._unfilled is not None for r in held)
    for r in held:
        assert _read(ctx, r, types, list) == _expected(ctx, r, types)
    ms = NAMES.index("sample.milliseconds")
    times = [ctx.pmExtractValue(r.contents.get_valfmt(ms), r.contents.get_vlist(ms, 0),
                                types[ms], c_api.PM_TYPE_DOUBLE).d for r in held]
    assert times == sorted(times)


@pytest.mark.pmcd
def test_threads_reading_one_fresh_result_at_once_see_the_same_values(live):
    ctx, pmids, types = live
    for _ in range(5):
        result = ctx.pmFetch(pmids)
        want = _expected(ctx, result, types)
        start = threading.Barrier(6)
        got, errors = [], []

        def reader(order):
            try:
                start.wait()
                got.append(_read(ctx, result, types, order))
            except Exception as e:  # pylint: disable=broad-except
                errors.append(e)

        threads = [threading.Thread(target=reader, args=(ORDERS[o],))
                   for o in sorted(ORDERS) * 2]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and got == [want] * 6


@pytest.mark.pmcd
def test_threads_fetching_from_one_context_each_read_their_own_result(live):
    ctx, pmids, types = live
    errors = []

    def loop():
        try:
            for _ in range(30):
                r = ctx.pmFetch(pmids)
                assert _read(ctx, r, types, ORDERS["backward"]) == _expected(ctx, r, types)
        except Exception as e:  # pylint: disable=broad-except
            errors.append(e)

    threads = [threading.Thread(target=loop) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def _bad_block_in_the_last_set(req: F.Request) -> bytes:
    """A RESULT whose first set is healthy and whose last one (that the client never
    reads) points its DPTR value past the PDU's end."""
    hr = req.type == F.PDU_HIGHRES_FETCH
    pmids = F.request_pmids(req.pdu)
    vsets = [(pmids[0], [(-1, F.HEALTHY_VALUE)])]
    vsets += [(p, [(-1, (F.PM_TYPE_STRING, b"hello\0"))]) for p in pmids[1:]]
    good = F.result(vsets, highres=hr)
    block = 12                             # "hello\0" after its header, padded
    last_word = len(good) - block * (len(pmids) - 1) - 4    # the last set's value word
    assert struct.unpack_from(">i", good, last_word)[0] * 4 == len(good) - block
    struct.pack_into(">i", good, last_word, 0x1000)
    return bytes(good)


@pytest.mark.parametrize("highres", [True, False], ids=["HIGHRES_RESULT", "RESULT"])
def test_a_hostile_value_nobody_reads_still_fails_the_fetch(highres):
    features = F.FEATURES_DEFAULT if highres else F.FEATURES_DEFAULT & ~0x0400
    pmids = [F.pmid_build(29, 0, 1), F.pmid_build(29, 0, 2)]

    def action(req: F.Request) -> None:
        req.sock.sendall(_bad_block_in_the_last_set(req))

    script = {F.FETCH_ANY: [action, action]}
    with F.FakePmcd(scripts=[script], features=features) as srv:
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, srv.spec)
        with pytest.raises(pmapi.pmErr) as err:
            ctx.pmFetch(pmids)
        assert err.value.args[0] == PM_ERR_IPC


def _truncated_result_of_more_sets(req: F.Request) -> bytes:
    """A RESULT announcing one set more than was asked for, cut short inside it: the
    decoder reads the PDU's sizes (not the last fetch's) before it finds the cut."""
    pmids = F.request_pmids(req.pdu)
    vsets = [(p, [(-1, F.HEALTHY_VALUE)]) for p in pmids + [F.pmid_build(29, 0, 9)]]
    bad = F.result(vsets, highres=req.type == F.PDU_HIGHRES_FETCH)[:-4]
    struct.pack_into(">i", bad, 0, len(bad))
    return bytes(bad)


@pytest.mark.parametrize("highres", [True, False], ids=["HIGHRES_RESULT", "RESULT"])
def test_a_result_that_fails_to_decode_leaves_the_next_fetch_its_sizes(highres):
    """The one-call round trip indexes with the sizes of the last result (ResultSizes),
    which a decoder that failed may have overwritten with the bad PDU's: the fetches
    after it (same context, reconnected) still decode, with the values sent."""
    features = F.FEATURES_DEFAULT if highres else F.FEATURES_DEFAULT & ~0x0400
    pmids = [F.pmid_build(29, 0, 1), F.pmid_build(29, 0, 2)]
    first = {F.FETCH_ANY: [F.healthy, _truncated_result_of_more_sets]}
    with F.FakePmcd(scripts=[first, {}], features=features) as srv:
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, srv.spec)
        ctx.pmFetch(pmids)
        with pytest.raises(pmapi.pmErr) as err:
            ctx.pmFetch(pmids)
        assert err.value.args[0] == PM_ERR_IPC
        ctx.pmReconnectContext()
        for _ in range(2):
            res = ctx.pmFetch(pmids).contents
            assert [(res.get_pmid(i), res.get_numval(i), res.get_vlist(i, 0).value.lval)
                    for i in range(res.numpmid)] == [(p, 1, F.HEALTHY_VALUE) for p in pmids]
