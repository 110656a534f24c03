"""The one-pass grid (csrc/interp_steps.c's pcp_interp_sweep_rows) against the
libpcp-port steps of the drop-in INTERP pmFetch (and the official binding on archives
written byte by byte): it must engage on ordinary archives and give exactly their values,
and leave to the steps the archives where libpcp's moves are not one forward pass
(records out of time order or at the same time, a <mark> at a grid time)."""
import numpy as np
import pytest

import cpmapi as c_api
from pcp import bulk
from pcp._bulk import grid
from support import archive_bytes as ab
from test_grid_diff import compare, corpus, dropin_rows, our_rows, reference_rows

pytestmark = [pytest.mark.pmcd]

SEC = 1704412800                    # 2024-01-05 00:00:00 UTC
# synthetic metrics: a U32 counter over instances 0-2, an INSTANT 32-bit singular, a
# DISCRETE double logged once, a DISCRETE string over the same instances
COUNTER, INSTANT, DOUBLE, STRING = ((29 << 22) | k for k in (1, 2, 3, 4))
INDOM = (29 << 22) | 7
NAMES = [b"sample.syn.counter", b"sample.syn.instant", b"sample.syn.once",
         b"sample.syn.label"]


def read(spec, names, step, swept=True, **kw):
    """A grid read, and how many of its rows the sweep made; swept=False forces the
    steps."""
    reader = bulk.ArchiveReader(spec, names, interval=step, **kw)
    if swept:
        cols = reader.read()
    else:
        keep = grid.GridScan._sweeps
        grid.GridScan._sweeps = lambda self, interp: False
        try:
            cols = reader.read()
        finally:
            grid.GridScan._sweeps = keep
    return cols, reader.stats["swept_steps"]


def same_cells(a, b):
    assert list(a.metrics) == list(b.metrics)
    assert (a.time == b.time).all()
    for name in a.metrics:
        x, y = a.metrics[name], b.metrics[name]
        assert (x.present == y.present).all(), name
        if x.type in (c_api.PM_TYPE_STRING, c_api.PM_TYPE_AGGREGATE):
            got = [x.values[r, k] for r, k in zip(*np.nonzero(x.present))]
            want = [y.values[r, k] for r, k in zip(*np.nonzero(y.present))]
            assert got == want, name
        else:
            got, want = x.values[x.present], y.values[y.present]
            assert (got.view(np.uint8) == want.view(np.uint8)).all(), name


@pytest.mark.parametrize("variant", ["v2", "v3", "v3native", "marks", "marks3", "mv", "xz_all",
                                     "list_pair", "dir_pair", "list_pair3"])
@pytest.mark.parametrize("step", [0.05, 0.1, 0.37, 1.0, 2.5])
def test_sweep_gives_the_steps_cells(variant, step):
    """From the archive's start (pmlogger's first record lies at the label time: a row
    at a record's time), every cell bit for bit as the steps give it (for several
    archives, the steps of the drop-in's Python reading, with libpcp's made-up <mark>
    between archives)."""
    spec = corpus(variant)
    names = bulk.ArchiveReader(spec, interval=1.0).metric_names
    swept, made = read(spec, names, step, chunk_rows=5)
    assert made == len(swept) > 0
    stepped, none = read(spec, names, step, swept=False, chunk_rows=5)
    assert none == 0
    same_cells(swept, stepped)


def write_archive(base, version, records):
    """records: (seconds from SEC, sets or None for a <mark>), in file order."""
    indom_type = 2 if version == 2 else 5
    insts = [(0, b"zero"), (1, b"one"), (2, b"two")]
    with open(base + ".meta", "wb") as f:
        f.write(ab.label(version, -1, SEC, 0)
                + ab.desc_record(COUNTER, c_api.PM_TYPE_U32, INDOM, c_api.PM_SEM_COUNTER, 0,
                                 [NAMES[0]])
                + ab.desc_record(INSTANT, c_api.PM_TYPE_32, c_api.PM_INDOM_NULL,
                                 c_api.PM_SEM_INSTANT, 0, [NAMES[1]])
                + ab.desc_record(DOUBLE, c_api.PM_TYPE_DOUBLE, c_api.PM_INDOM_NULL,
                                 c_api.PM_SEM_DISCRETE, 0, [NAMES[2]])
                + ab.desc_record(STRING, c_api.PM_TYPE_STRING, INDOM, c_api.PM_SEM_DISCRETE, 0,
                                 [NAMES[3]])
                + ab.indom_record(indom_type, SEC, 0, INDOM, insts))
    with open(base + ".0", "wb") as f:
        body = ab.label(version, 0, SEC, 0)
        for at, sets in records:
            sec, frac = divmod(round(at * 1e9), 10**9)
            body += (ab.mark(version, SEC + sec, frac) if sets is None
                     else ab.data_record(version, SEC + sec, frac, sets))
        f.write(body)
    return base


def sets_at(k, insts=(0, 1, 2), once=False):
    """Record k's value sets: the counter and the string over `insts`, the instant, and
    the double when `once`."""
    out = [(COUNTER, len(insts), 0, [(i, 1000 * k + 7 * i) for i in insts]),
           (INSTANT, 1, 0, [(-1, (-1) ** k * 5 * k)]),
           (STRING, len(insts), 1, [(i, (6, b"v%d.%d\0" % (k, i))) for i in insts])]
    if once:
        out.append((DOUBLE, 1, 1, [(-1, (5, np.float64(2.5 * k).byteswap().tobytes()))]))
    return out


def lively(version):
    """An instance that goes and comes back (the reading ahead at chunk ends), one that
    goes for good, a value logged once, a <mark> and a restart."""
    recs = []
    for k in range(24):
        at = 0.25 + k + 0.013 * (k % 3)
        insts = (0, 1, 2) if k < 4 else (0, 2) if k < 9 else (0,) if k < 14 else (0, 1)
        if k == 16:
            recs.append((at - 0.5, None))
        recs.append((at, sets_at(k, insts, once=k in (0, 17))))
    return recs


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("step,chunk_rows", [(0.3, 1), (0.3, 4), (1.0, 2), (0.77, 3),
                                             (2.5, 1), (0.1, 64)])
def test_sweep_matches_libpcp_on_a_lively_archive(tmp_path, version, step, chunk_rows):
    base = write_archive(str(tmp_path / "lively"), version, lively(version))
    names = [n.decode() for n in NAMES]
    cols, made = read(base, names, step, chunk_rows=chunk_rows)
    assert made == len(cols)
    t0, step_ns = int(cols.time.astype(np.int64)[0]), int(round(step * 1e9))
    compare(our_rows(cols), dropin_rows(base, names, t0, step_ns, len(cols)))
    compare(our_rows(cols), reference_rows(base, names, t0, step_ns, len(cols)))


def shifted(recs, index, at):
    recs = list(recs)
    recs[index] = (at, recs[index][1])
    return recs


@pytest.mark.parametrize("case", ["out_of_order", "same_time", "mark_at_a_row"])
def test_what_is_not_one_pass_takes_the_steps(tmp_path, case):
    recs = lively(2)
    start = None
    if case == "out_of_order":
        recs = shifted(recs, 10, recs[8][0] - 0.2)
    elif case == "same_time":
        recs = shifted(recs, 10, recs[9][0])
    else:
        mark_at = [at for at, sets in recs if sets is None][0]
        # rows at the mark's time less 2 s, less 1 s, then at it
        start = np.datetime64(SEC * 10**9 + round(mark_at * 1e9) - 2 * 10**9, "ns")
    base = write_archive(str(tmp_path / case), 2, recs)
    names = [n.decode() for n in NAMES]
    cols, made = read(base, names, 1.0, start=start, chunk_rows=3)
    assert made == 0
    t0 = int(cols.time.astype(np.int64)[0])
    compare(our_rows(cols), dropin_rows(base, names, t0, 10**9, len(cols)))


def test_overlapping_archives_take_the_steps():
    """libpcp answers PM_ERR_LOGOVERLAP where one archive starts before the one before
    it ends, and skips records: not one pass."""
    spec = corpus("overlap_pair")
    names = bulk.ArchiveReader(spec, interval=1.0).metric_names
    cols, made = read(spec, names, 0.25, chunk_rows=4)
    assert made == 0
    t0 = int(cols.time.astype(np.int64)[0])
    compare(our_rows(cols), dropin_rows(spec, names, t0, 250000000, len(cols)))
