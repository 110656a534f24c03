"""Event records read from archives (v2 and v3) that pmlogger recorded from the live
sample PMDA, compared record by record with libpcp reading the same archive
(pmFetchHighResArchive + pmUnpack[HighRes]EventRecords in the oracle).

Archived values decode into the same FlatResult as fetched ones, and unpacking only
looks at (buffer, offset, length) of each value block, so the event path is the live
one."""

import os
import shutil
import subprocess

import pytest

from conftest import _unavailable

from support.eventutil import event_oracle, flags_str, print_value, render_ours, run_oracle_archive  # noqa: F401

pytestmark = pytest.mark.pmcd

CONFIG = """log mandatory on 100 msec {
    sample.event.records
    sample.event.highres_records
    sample.event.no_indom_records
}
"""


@pytest.fixture(scope="module", params=[2, 3], ids=["v2", "v3"])
def archive(request, tmp_path_factory, pmcd):
    if shutil.which("pmlogger") is None:
        _unavailable("pmlogger not installed")
    d = tmp_path_factory.mktemp("events-v%d" % request.param)
    (d / "config").write_text(CONFIG)
    base = str(d / "events")
    p = subprocess.run(["pmlogger", "-c", str(d / "config"), "-s", "8", "-V", str(request.param),
                        "-l", str(d / "pmlogger.log"), base], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr + (d / "pmlogger.log").read_text()
    assert os.path.exists(base + ".0")
    return base


def _open(path):
    from pcp import pmapi
    import cpmapi as c_api

    return pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, path)


def _records(ctx):
    from pcp import pmapi
    import cpmapi as c_api

    out = []
    while True:
        try:
            out.append(ctx.pmFetchHighResArchive())
        except pmapi.pmErr as e:
            assert e.args[0] == c_api.PM_ERR_EOL
            return out


def test_archived_events_match_libpcp(archive, event_oracle):
    expected = run_oracle_archive(archive)
    assert expected[-1] == {"end": -12370}  # PM_ERR_EOL
    expected = expected[:-1]
    ctx = _open(archive)
    results = _records(ctx)
    assert len(results) == len(expected)
    events = 0
    for res, exp in zip(results, expected):
        c = res.contents
        assert (c.timestamp.tv_sec, c.timestamp.tv_nsec, c.numpmid) == \
            (exp["sec"], exp["nsec"], exp["numpmid"])
        ours = render_ours(res)
        assert ours == exp["values"]
        events += sum(max(v["classic"]["sts"], 0) + max(v["highres"]["sts"], 0) for v in ours)
    assert events > 20
    cols = ctx.event_columns(results)
    assert len(cols) == events and cols.errors == []


@pytest.mark.parametrize("mode", ["forw", "back"])
def test_events_unpack_after_archive_pmfetch(archive, mode):
    """pmFetch of an archive (the record select, which copies the chosen payloads out)
    unpacks as the whole record does: pmUnpack[HighRes]EventRecords on each value and
    event_columns over the results (a regression: the unpacker looked for each block's
    header before its payload, which the select does not copy)."""
    import ctypes

    import cpmapi as c_api

    ctx = _open(archive)
    names = ["sample.event.records", "sample.event.highres_records",
             "sample.event.no_indom_records"]
    pmids = ctx.pmLookupName(names)
    whole = [r for r in _records(ctx)
             if sorted(r.contents.get_pmid(i) for i in range(r.contents.numpmid)) ==
             sorted(pmids)]
    assert len(whole) > 3
    if mode == "back":
        whole.reverse()
        ctx.pmSetMode(c_api.PM_MODE_BACK, ctx.pmGetArchiveEnd(), 0)
    else:
        ctx.pmSetMode(c_api.PM_MODE_FORW, ctx.pmGetArchiveLabel().start, 0)
    order = {p: i for i, p in enumerate(pmids)}
    fetched = []
    for expected in whole:
        res = ctx.pmFetchHighRes((ctypes.c_uint * len(pmids))(*pmids))
        assert res.contents.timestamp.tv_sec == expected.contents.timestamp.tv_sec
        mine = render_ours(res)
        theirs = render_ours(expected)
        by_pmid = {expected.contents.get_pmid(i): v for i, v in
                   enumerate(_per_set(expected, theirs))}
        assert _per_set(res, mine) == [by_pmid[p] for p in sorted(by_pmid, key=order.get)]
        fetched.append(res)
    assert len(ctx.event_columns(fetched)) == len(ctx.event_columns(whole)) > 20


def _per_set(res, rendered):
    """render_ours' list of values cut into one list per value set (without the set's
    position, which is the request's order in a pmFetch result)."""
    out = [[] for _ in range(res.contents.numpmid)]
    for v in rendered:
        out[v["vset"]].append({k: x for k, x in v.items() if k != "vset"})
    return out


# ---- until then: archive records decoded the way the archive branch will -----------

def _flat_from_record(rec, version):
    """A FlatResult for one data record of a .0 volume (archive-format.md 6.1-6.3):
    the value sets decoded by the shared C value-set decoder, DPTR words counted from
    8 bytes before the record (block_base -8), as archive contexts will do."""
    import struct

    from pcp._core.errors import pmErr
    from pcp._native import ffi, lib
    from pcp._decode.result import FlatResult

    if version == 2:
        sec, usec, numpmid = struct.unpack(">iii", rec[4:16])
        nsec, sets_off = usec * 1000, 16
    else:
        lo, hi, nsec, numpmid = struct.unpack(">Iiii", rec[4:20])
        sec, sets_off = (hi << 32) | lo, 20
    layout = ffi.new("pcp_sets_layout *", {"sets_off": sets_off, "numpmid": numpmid,
                                           "block_base": -8})
    nv = ffi.new("int32_t *")
    sts = lib.pcp_result_valuesets_scan(rec, len(rec), layout, -12373, nv)  # PM_ERR_LOGREC
    if sts < 0:
        raise pmErr(sts)
    mem = ffi.new("int64_t[]", (lib.pcp_result_mem_size(numpmid, nv[0]) + 7) // 8)
    c = ffi.new("pcp_result *")
    lib.pcp_result_bind(c, mem, numpmid, nv[0])
    assert lib.pcp_result_valuesets_decode(rec, len(rec), layout, -12373, c) == 0
    f = object.__new__(FlatResult)
    f.pdu, f.c, f._mem, f.sec, f.nsec = rec, c, mem, sec, nsec
    f.numpmid, f.nvalues = numpmid, nv[0]
    f.pmid = ffi.unpack(c.pmid, numpmid)
    f.numval = ffi.unpack(c.numval, numpmid)
    f.valfmt = ffi.unpack(c.valfmt, numpmid)
    f.first = ffi.unpack(c.first, numpmid)
    f._inst = f._vtype = f._ival = f._dval = f._blocks = None
    f.edits = 0
    f.framed = True             # the record holds whole blocks
    return f


def _volume_records(base, version):
    import struct

    with open(base + ".0", "rb") as fp:
        data = fp.read()
    pos = struct.unpack(">i", data[:4])[0]          # skip the label record
    while pos + 4 <= len(data):
        n = struct.unpack(">i", data[pos:pos + 4])[0]
        yield data[pos:pos + n]
        pos += n


def test_archive_records_through_the_shared_decoder_match_libpcp(archive, event_oracle):
    from pcp._decode.result import LP_pmHighResResult, pmHighResResult

    with open(archive + ".0", "rb") as fp:
        magic = fp.read(8)[4:]
    version = {bytes.fromhex("50052602"): 2, bytes.fromhex("50052603"): 3}[magic]
    expected = run_oracle_archive(archive)[:-1]
    results = [LP_pmHighResResult(pmHighResResult(_flat_from_record(rec, version)))
               for rec in _volume_records(archive, version)]
    assert len(results) == len(expected)
    events = 0
    for res, exp in zip(results, expected):
        c = res.contents
        assert (c.timestamp.tv_sec, c.timestamp.tv_nsec, c.numpmid) == \
            (exp["sec"], exp["nsec"], exp["numpmid"])
        ours = render_ours(res)
        assert ours == exp["values"]
        events += sum(max(v["classic"]["sts"], 0) + max(v["highres"]["sts"], 0) for v in ours)
    assert events > 20
    from pcp._decode.events import event_columns

    cols = event_columns(results)
    assert len(cols) == events and cols.errors == []


def _dumplog_like(ctx, results):
    """Our events of every record rendered as `pmdumplog` prints them (event lines only),
    names, instance names and types from the live context the archive was made from."""
    import time as _time

    import cpmapi as c_api

    def stamp(sec, frac, digits):
        return _time.strftime("%H:%M:%S", _time.localtime(sec)) + ".%0*d" % (digits, frac)

    lines = []
    for res in results:
        c = res.contents
        for i in range(c.numpmid):
            pmid = c.get_pmid(i)
            desc = ctx.pmLookupDesc(pmid).contents
            if desc.type not in (c_api.PM_TYPE_EVENT, c_api.PM_TYPE_HIGHRES_EVENT):
                continue
            highres = desc.type == c_api.PM_TYPE_HIGHRES_EVENT
            unpack = ctx.pmUnpackHighResEventRecords if highres else ctx.pmUnpackEventRecords
            vs = c.get_vset(i)
            for j in range(vs.numval):
                inst = vs.vlist[j].inst
                recs = [lp.contents for lp in unpack(vs, j)]
                name = ctx.pmNameID(pmid)
                if inst != -1:
                    name += '[%d or "%s"]' % (inst, ctx.pmNameInDom(ctx.pmLookupDesc(pmid), inst))
                missed = sum(r.get_vset(1).vlist[0].value.lval for r in recs
                             if r.numpmid == 2 and r.get_pmid(1) == 0x7FC00002)
                n = len(recs)
                count = "No event records" if n == 0 else "%d%s event record%s" % (
                    n, " (and %d missed)" % missed if missed else "", "s" if n > 1 else "")
                lines.append("    %s (%s): %s" % (ctx.pmIDStr(pmid), name, count))
                for k, r in enumerate(recs):
                    ts = r.timestamp
                    when = stamp(ts.tv_sec, ts.tv_nsec, 9) if highres else stamp(ts.tv_sec, ts.tv_usec, 6)
                    flags = r.get_vset(0).vlist[0].value.lval & 0xFFFFFFFF if r.numpmid and \
                        r.get_pmid(0) == 0x7FC00001 else 0
                    lines.append("        --- event record [%d] timestamp %s flags 0x%x (%s) ---"
                                 % (k, when, flags, flags_str(flags)))
                    if flags == 0x80000000:
                        lines.append("        ==> %d missed event records"
                                     % r.get_vset(1).vlist[0].value.lval)
                        continue
                    for s in range(1 if flags else 0, r.numpmid):
                        p = r.get_vset(s)
                        ptype = ctx.pmLookupDesc(p.pmid).contents.type
                        lines.append("        %s (%s): value %s" % (
                            ctx.pmIDStr(p.pmid), ctx.pmNameID(p.pmid), print_value(ctx, p, ptype)))
    return lines


def test_archive_records_through_the_shared_decoder_match_pmdumplog(archive, pmcd):
    """pmdumplog's event lines, value by value and with the event timestamps."""
    import re

    from pcp import pmapi
    from pcp._decode.result import LP_pmHighResResult, pmHighResResult
    import cpmapi as c_api

    if shutil.which("pmdumplog") is None:
        _unavailable("pmdumplog not installed")
    with open(archive + ".0", "rb") as fp:
        version = {bytes.fromhex("50052602"): 2, bytes.fromhex("50052603"): 3}[fp.read(8)[4:]]
    p = subprocess.run(["pmdumplog", archive], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    event_pmids = r"(29\.0\.136|29\.0\.137|29\.0\.139) "
    theirs = [line for line in p.stdout.splitlines()
              if re.match(r"    " + event_pmids, line) or line.startswith("        ")]
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, pmcd)
    results = [LP_pmHighResResult(pmHighResResult(_flat_from_record(rec, version)))
               for rec in _volume_records(archive, version)]
    ours = _dumplog_like(ctx, results)
    assert sum("--- event record" in line for line in ours) > 20
    assert ours == theirs
