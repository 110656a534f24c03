"""PCP 7.2.2's daemons at every level: its pmcd (live fetches, descriptors, instances, help
text, labels, event records, pmStore) and archives its pmlogger and pmlogextract wrote (v3),
read by this package at 6.0, 6.3 and 7.2 and by each level's own reference binding.

pmcd is backward compatible, so every level must answer a 7.2.2 pmcd as its reference does.
The pmcd is private (tests/support/rootpmcd.py: sid's pmcd with the sample and linux PMDAs
on a free port, inside the root), so the stores and the sample PMDA's event cycle here touch
nobody else's state; each side runs in turn and puts back what it changed.
"""
import glob
import os
import shutil

import pytest

from support import roots
from support.difftest import assert_equal
from support.rootpmcd import RootPmcd

pytestmark = [pytest.mark.reference, pytest.mark.pmcd]

PCP72 = (7, 2)

#: One program for every side; T_HOST is the pmcd, T_ARCHIVES the archives (paths as the
#: side sees them). Timestamps are left out of live answers (each side fetches at its own
#: time) and kept for archives.
PROGRAM = r'''
import json, os
import cpmapi as c
from pcp import pmapi

def text(v):
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else v

def err(e):
    return ["error", e.args[0] if e.args else repr(e)]

def attempt(call, *args):
    try:
        value = call(*args)
    except pmapi.pmErr as e:
        return err(e)
    return text(value)

STATIC = ["sample.long.one", "sample.ulonglong.hundred", "sample.float.ten", "sample.double.ten",
          "sample.string.hullo", "sample.colour", "sample.bin",
          "pmcd.version", "sample.dupnames.two.write_me", "sample.event.records", "no.such.metric"]

def values(ctx, result, descs, i):
    vs = result.contents
    out = []
    for j in range(vs.get_numval(i)):
        t = descs[i].contents.type
        if t == c.PM_TYPE_EVENT:
            out.append([vs.get_inst(i, j), "event"])
            continue
        atom = ctx.pmExtractValue(vs.get_valfmt(i), vs.get_vlist(i, j), t, t)
        out.append([vs.get_inst(i, j), text(ctx.pmAtomStr(atom, t))])
    return out

def stamp(result):
    ts = result.contents.timestamp
    return [ts.tv_sec, getattr(ts, "tv_nsec", None), getattr(ts, "tv_usec", None)]

def live(host):
    out = {}
    ctx = pmapi.pmContext(c.PM_CONTEXT_HOST, host)
    try:
        ctx.pmLookupName(STATIC)
    except pmapi.pmErr as e:
        out["lookup_with_unknown"] = err(e)
    names = STATIC[:-1]
    pmids = ctx.pmLookupName(names)
    descs = ctx.pmLookupDescs(pmids)
    out["descs"] = [[d.contents.pmid, d.contents.type, d.contents.indom, d.contents.sem,
                     text(ctx.pmUnitsStr(d.contents.units))] for d in descs]
    # (sample.colour's values grow with every fetch: its instances are compared, not them)
    steady = [i for i, name in enumerate(names[:-2]) if name != "sample.colour"]
    result = ctx.pmFetch(ctx.pmLookupName([names[i] for i in steady]))
    out["values"] = [values(ctx, result, [descs[i] for i in steady], k)
                     for k in range(result.contents.numpmid)]
    colour = descs[names.index("sample.colour")]
    out["indom"] = [list(x) for x in ctx.pmGetInDom(colour)]
    out["name_in_dom"] = text(ctx.pmNameInDom(colour, 1))
    out["lookup_in_dom"] = ctx.pmLookupInDom(colour, "blue")
    out["text"] = [attempt(ctx.pmLookupText, p) for p in pmids[:3]]
    out["help"] = attempt(ctx.pmLookupText, pmids[0], c.PM_TEXT_HELP)
    out["labels"] = [ctx.pmLookupLabels(p) for p in pmids[:6]]
    out["children"] = [text(n) for n in ctx.pmGetChildren("sample.dupnames")]
    out["name_all"] = sorted(text(n) for n in ctx.pmNameAll(pmids[names.index("sample.dupnames.two.write_me")]))
    out["pmid_str"] = text(ctx.pmIDStr(pmids[0]))
    # pmStore, then put back
    wm = ctx.pmLookupName(["sample.write_me"])
    before = ctx.pmFetch(wm)
    keep = before.contents.get_vlist(0, 0).value.lval
    before.contents.get_vlist(0, 0).value.lval = 4242
    ctx.pmStore(before)
    after = ctx.pmFetch(wm)
    out["stored"] = after.contents.get_vlist(0, 0).value.lval
    after.contents.get_vlist(0, 0).value.lval = keep
    ctx.pmStore(after)
    # event records through a fetchgroup (the official binding's only way to unpack them):
    # each of the sample PMDA's event setups in turn, the cycle put back after
    reset = ctx.pmLookupName(["sample.event.reset"])
    keep_reset = ctx.pmFetch(reset).contents.get_vlist(0, 0).value.lval
    group = pmapi.fetchgroup(c.PM_CONTEXT_HOST, host)
    fields = [group.extend_event("sample.event.records", field="sample.event." + f,
                                 instance="fungus")
              for f in ("param_32", "param_u64", "param_double", "param_string", "type")]
    events = []
    for setup in range(4):
        r = ctx.pmFetch(reset)
        r.contents.get_vlist(0, 0).value.lval = setup
        ctx.pmStore(r)
        group.fetch()
        row = []
        for field in fields:
            try:
                row.append([text(v()) for _, v in field()])
            except pmapi.pmErr as e:
                row.append(err(e))
        events.append(row)
    r = ctx.pmFetch(reset)
    r.contents.get_vlist(0, 0).value.lval = keep_reset
    ctx.pmStore(r)
    out["events"] = events
    return out

def archive(path):
    out = {}
    ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, path)
    label = ctx.pmGetArchiveLabel()
    out["label"] = [label.magic, text(label.hostname), text(getattr(label, "tz", None) or label.timezone),
                    label.pid_t]
    end = ctx.pmGetArchiveEnd()
    out["end"] = [end.tv_sec, getattr(end, "tv_nsec", None), getattr(end, "tv_usec", None)]
    names = ["sample.long.one", "sample.colour", "sample.milliseconds", "kernel.all.load",
             "sample.string.hullo", "sample.ulonglong.hundred"]
    pmids = ctx.pmLookupName(names)
    descs = ctx.pmLookupDescs(pmids)
    out["descs"] = [[d.contents.pmid, d.contents.type, d.contents.indom, d.contents.sem,
                     text(ctx.pmUnitsStr(d.contents.units))] for d in descs]
    out["indom"] = [list(x) for x in ctx.pmGetInDomArchive(descs[1])]
    out["text"] = attempt(ctx.pmLookupText, pmids[0])
    out["labels"] = [ctx.pmLookupLabels(p) for p in pmids[:2]]
    records = []
    while True:
        try:
            r = ctx.pmFetch(pmids)
        except pmapi.pmErr as e:
            records.append(err(e))
            break
        records.append([stamp(r), [values(ctx, r, descs, i) for i in range(r.contents.numpmid)]])
    out["forward"] = records
    first = ctx.pmGetArchiveLabel().start
    if hasattr(c, "PM_XTB_FLAG"):               # 6.x: the delta in ms
        ctx.pmSetMode(c.PM_MODE_INTERP, first, 50)
    else:                                       # 7.x: a timespec
        ctx.pmSetMode(c.PM_MODE_INTERP, first, pmapi.timespec(0, 50000000))
    interp = []
    for _ in range(12):
        try:
            r = ctx.pmFetch(ctx.pmLookupName(names[:4]))
        except pmapi.pmErr as e:
            interp.append(err(e))
            break
        interp.append([stamp(r), [values(ctx, r, descs, i) for i in range(r.contents.numpmid)]])
    out["interp"] = interp
    return out

answer = {}
try:
    answer["live"] = live(os.environ["T_HOST"])
except pmapi.pmErr as e:
    answer["live"] = err(e)
for path in os.environ["T_ARCHIVES"].split(":"):
    try:
        answer[os.path.basename(path)] = archive(path)
    except pmapi.pmErr as e:
        answer[os.path.basename(path)] = err(e)
print(json.dumps(answer, sort_keys=True, default=str))
'''

CONFIG = """log mandatory on 100 msec {
    sample.long.one sample.colour sample.milliseconds kernel.all.load
    sample.string.hullo sample.ulonglong.hundred sample.event.records
}
"""


@pytest.fixture(scope="module")
def pmcd72(all_levels):
    """sid's pmcd, and two archives of it: pmlogger's (v3) and pmlogextract -V 3's of it."""
    daemon = RootPmcd(PCP72).start()
    try:
        logged = daemon.record("logged", CONFIG, 8, "0.1sec")
        extracted = daemon.extract(logged, "extracted", "-S", "+0.25")
        yield daemon, [logged, extracted]
    finally:
        daemon.stop()


@pytest.mark.parametrize("level", roots.LEVELS, ids=roots.level_text)
def test_pcp72_daemons_at_each_level(pmcd72, level):
    daemon, archives = pmcd72
    ours_env = {"T_HOST": daemon.host,
                "T_ARCHIVES": ":".join(daemon.host_path(a) for a in archives)}
    # each reference reads the archives where it sees them: 6.0.3 on the host, 7.2.2 inside
    # its own root, 6.3.8 in copies inside the trixie root
    ref_env = dict(ours_env)
    if level == PCP72:
        ref_env["T_ARCHIVES"] = ":".join(archives)
    elif level != (6, 0):
        ref_env["T_ARCHIVES"] = ":".join(_copy_into(level, daemon, a) for a in archives)
    # one side after the other: each stores into the private pmcd and puts it back
    ref = roots.run_reference(level, PROGRAM, ref_env)
    ours = roots.run_ours(level, PROGRAM, ours_env)
    assert "__crash__" not in ref, ref
    assert sorted(ours) == sorted(ref)
    for key in sorted(ref):
        assert_equal(ours[key], ref[key], key)
    # what was compared is real: the pmcd answered and both archives were read
    assert isinstance(ref["live"], dict) and ref["live"]["values"], ref["live"]
    for archive in archives:
        read = ref[archive.rsplit("/", 1)[1]]
        assert isinstance(read, dict) and len(read["forward"]) > 4, read


def _copy_into(level, daemon, archive):
    """A copy of one of sid's archives in level's root (under /tmp); its path there."""
    root = roots.root_dir(level)
    folder = os.path.join(root, "tmp", os.path.basename(daemon.on_host))
    os.makedirs(folder, exist_ok=True)
    for path in glob.glob(daemon.host_path(archive) + ".*"):
        shutil.copy(path, folder)
    return "/tmp/%s/%s" % (os.path.basename(daemon.on_host), os.path.basename(archive))


@pytest.fixture(scope="module", autouse=True)
def _remove_copies(pmcd72):
    yield
    for level in roots.LEVELS:
        if level not in ((6, 0), PCP72):
            shutil.rmtree(os.path.join(roots.root_dir(level), "tmp",
                                       os.path.basename(pmcd72[0].on_host)), ignore_errors=True)
