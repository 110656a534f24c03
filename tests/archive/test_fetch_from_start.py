"""Differential test: pminfo's way of reading an archive (every metric fetched by itself
from the archive's start, in one context), done twice and then again in reverse order
and in pairs, against the official binding. The second and later scans are answered
from what the context keeps of each volume's first records (reader.HEAD_READS, the
pmids a kept record holds) and the instance domains from their records' times alone
(Metadata.indom_at without building the chain): the answers must be the reference's,
timestamps, values and instance names included.

20180102 is pminfo -f's benchmark archive (481 metrics, 19 instance domains, 1,576
instance-domain records); omnibus_v3 has delta instance-domain records (the chain is
built); ok-mv-foo has several volumes."""

import pytest

from support.cliutil import BAD_QA_ARCHIVES, need_qa_archive
from support.difftest import assert_same

pytestmark = [pytest.mark.reference]

ARCHIVES = ["20180102", "omnibus_v3", "ok-mv-foo"]

SNIPPET = r'''
RESULT = {}
for base in BASES:
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, base)
    # the label's start, or pminfo's origin when no -O is given (time zero)
    start = ctx.pmGetArchiveLabel().start if ORIGIN is None else pmapi.timeval(*ORIGIN)
    names = []
    ctx.pmTraversePMNS("", names.append)
    # derived metrics left out: libpcp 6.0.3 answers a second fetch of one that does not
    # bind with a vset whose pmid is garbage (freed memory)
    pmids = [p for p in ctx.pmLookupName(names, relaxed=1)
             if p != c_api.PM_ID_NULL and p >> 22 & 0x1FF != 511]
    descs = {}
    for p in pmids:
        try:
            descs[p] = ctx.pmLookupDesc(p)
        except pmapi.pmErr:
            pass

    def image(request):
        ctx.pmSetMode(c_api.PM_MODE_FORW, start, 0)
        try:
            res = ctx.pmFetch((ctypes.c_uint * len(request))(*request))
        except pmapi.pmErr as e:
            return ["error", e.args[0]]
        c = res.contents
        out = [c.timestamp.tv_sec, c.timestamp.tv_usec]
        for i in range(c.numpmid):
            numval = c.get_numval(i)
            vset = [c.get_pmid(i), numval]
            desc = descs.get(c.get_pmid(i))
            if numval > 0 and desc is not None:
                insts = [c.get_inst(i, k) for k in range(numval)]
                vset.append(insts)
                if desc.contents.type in (c_api.PM_TYPE_32, c_api.PM_TYPE_U32,
                                          c_api.PM_TYPE_64, c_api.PM_TYPE_U64,
                                          c_api.PM_TYPE_DOUBLE, c_api.PM_TYPE_FLOAT):
                    vset.append([str(ctx.pmExtractValue(c.get_valfmt(i), c.get_vlist(i, k),
                                                        desc.contents.type,
                                                        desc.contents.type).dref(
                                                            desc.contents.type))
                                 for k in range(numval)])
                if desc.contents.indom != c_api.PM_INDOM_NULL:
                    # the instance-domain record in force now names the instances
                    try:
                        ids, inames = ctx.pmGetInDom(desc)
                        known = dict(zip(ids, inames))
                        vset.append([known.get(inst) for inst in insts])
                    except pmapi.pmErr as e:
                        vset.append(["error", e.args[0]])
            out.append(vset)
        return out

    scans = []
    for order in (pmids, pmids, list(reversed(pmids))):
        scans.append([image([p]) for p in order])
    scans.append([image([a, b]) for a, b in zip(pmids[::2], pmids[1::2])])
    RESULT[base.rsplit("/", 1)[1]] = scans
'''


def test_one_metric_at_a_time_from_the_start():
    bases = [need_qa_archive(name) for name in ARCHIVES]
    assert_same("BASES = %r\nORIGIN = None\n" % bases + SNIPPET)


def test_one_metric_at_a_time_from_time_zero():
    """pminfo's own origin (time zero): badlog-4's first records come before its label's
    start; 540117-short logs an instance its instance domain no longer names."""
    bases = [need_qa_archive("540117-short"), need_qa_archive("badlog-4", BAD_QA_ARCHIVES)]
    assert_same("BASES = %r\nORIGIN = (0, 0)\n" % bases + SNIPPET)


def test_a_second_scan_reads_and_selects_no_record_again(monkeypatch):
    """pminfo -f's cost (issue 36): each metric fetched from the start scans the same
    first records. Once a scan has passed them, the next reads none of them again and
    selects from one record per fetch (the one it answers with), and the instance names
    come from the records in force, not from every record of their domains."""
    from pcp import pmapi
    import cpmapi as c_api
    from pcp._archive import meta, reader
    from pcp._decode.result import FlatResult

    counts = {"read": 0, "select": 0, "indom": 0}

    real_lib = reader.lib

    class CountingLib:
        def __getattr__(self, name):
            real = getattr(real_lib, name)
            if name != "pcp_archive_record_read":
                return real

            def counted(*args):
                counts["read"] += 1
                return real(*args)
            return counted

    real_select = FlatResult.select_record.__func__

    def select(cls, *args, **kwargs):
        counts["select"] += 1
        return real_select(cls, *args, **kwargs)

    real_snapshot = meta._MetaFile.indom_snapshot

    def snapshot(self, i):
        counts["indom"] += 1
        return real_snapshot(self, i)

    monkeypatch.setattr(reader, "lib", CountingLib())
    monkeypatch.setattr(FlatResult, "select_record", classmethod(select))
    monkeypatch.setattr(meta._MetaFile, "indom_snapshot", snapshot)

    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, need_qa_archive("20180102"))
    start = ctx.pmGetArchiveLabel().start
    names = []
    ctx.pmTraversePMNS("", names.append)
    pmids = [p for p in ctx.pmLookupName(names, relaxed=1)
             if p != c_api.PM_ID_NULL and p >> 22 & 0x1FF != 511]

    def scan():
        for pmid in pmids:
            ctx.pmSetMode(c_api.PM_MODE_FORW, start, 0)
            try:
                result = ctx.pmFetch([pmid])
            except pmapi.pmErr:
                continue
            desc = ctx.pmLookupDesc(pmid)
            if desc.contents.indom != c_api.PM_INDOM_NULL and result.contents.get_numval(0) > 0:
                ctx.pmGetInDom(desc)

    scan()
    first = dict(counts)
    for key in counts:
        counts[key] = 0
    scan()
    assert counts["read"] == 0, (first, counts)
    assert counts["select"] <= len(pmids), (first, counts)
    assert counts["select"] * 2 < first["select"], (first, counts)
    # 1,576 instance-domain records in 19 domains: the ones in force are built
    assert first["indom"] + counts["indom"] < 100, (first, counts)
