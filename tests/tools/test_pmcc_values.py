"""pcp.pmcc's computed values on both bindings, through the API a tool uses: netValues and
netPrevValues read several times per fetch (this package computes a value set once and
keeps it), and read again after the caller changed the fetched result through the
pmValue objects (what was kept must not be handed out then)."""
import pytest

from support import difftest, tool_archive

pytestmark = [pytest.mark.pmcd, pytest.mark.reference]

PROGRAM = r'''
import json, sys
import cpmapi as c
from pcp import pmcc

manager = pmcc.MetricGroupManager(c.PM_CONTEXT_ARCHIVE, sys.argv[1])
names = ["disk.dev.read", "disk.dev.write_bytes", "hinv.ncpu", "kernel.all.nprocs",
         "mem.util.free", "kernel.percpu.cpu.user"]
manager["g"] = names
group = manager["g"]


def plain(triples):
    return None if triples is None else [[name, value] for _, name, value in triples]


out = []
for step in range(4):
    group.mgFetch()
    for name in names:
        metric = group[name]
        out.append([step, name, plain(metric.netValues), plain(metric.netPrevValues),
                    plain(metric.netValues), plain(metric.netPrevValues)])
    if step == 2:
        # the caller edits the fetched values in place: an instance and a 32-bit value
        ncpu = group["hinv.ncpu"].netValues
        ncpu[0][0].value.lval = 1234
        nprocs = group["kernel.all.nprocs"].netValues
        nprocs[0][0].value.lval = -5
        percpu = group["kernel.percpu.cpu.user"].netValues
        percpu[0][0].inst = 999
        for name in ("hinv.ncpu", "kernel.all.nprocs", "kernel.percpu.cpu.user"):
            out.append(["edited", name, plain(group[name].netValues)])
        # a different type asked for: computed again, converted
        group["hinv.ncpu"].convType = c.PM_TYPE_DOUBLE
        out.append(["double", plain(group["hinv.ncpu"].netValues)])
        group["hinv.ncpu"].convType = c.PM_TYPE_U32
json.dump(out, sys.stdout)
'''


def test_computed_values_match_the_official_module(reference_binding):
    archive = tool_archive.linux_archive()
    ref = difftest.run_script(PROGRAM, [archive], False)
    ours = difftest.run_script(PROGRAM, [archive], True)
    assert ref["status"] == 0, ref["stderr"]
    assert ours["status"] == 0, ours["stderr"]
    assert ours["stdout"] == ref["stdout"]
    assert '"edited"' in ref["stdout"]
