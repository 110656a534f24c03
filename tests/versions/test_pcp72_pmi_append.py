"""pcp.pmi's PMI_APPEND at level 7.2 against python3-pcp 7.2.2: pmiLogImport(path, flags)
with flags holding PMI_APPEND (2) adds to the archive already at path.

The same program runs on 7.2.2's binding (inside the sid root) and on this package at
level 7.2 (on the host), each writing its archives into its own folder: an archive made
in one session and then added to in others (an indom that changed, one that did not, a
metric and help text already there, a new metric, a timestamp before the archive's end,
descriptors unlike the archive's: PM_ERR_LOGCHANGE*), a version 2 archive added to, and
PMI_APPEND where there is no archive yet (one is made). The calls' answers are compared,
then every archive as sid's pmdumplog prints it, but for the writer's process id.
"""
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from support import roots
from support.difftest import assert_equal
from support.jsonimage import PRELUDE

pytestmark = [pytest.mark.reference]

LEVEL = (7, 2)
ENV = {"TZ": "UTC", "PCP_ARCHIVE_VERSION": "3"}
ARCHIVES = ("grown", "v2grown", "fresh")

PROGRAM = r'''
import json, os, sys
from pcp import pmapi, pmi
import cpmapi as c_api

OUTPUT = %(output)r
PMI_APPEND, PMI_PROCESS = 2, 4
''' + PRELUDE + r'''
out = {}
NONE = pmi.pmiLogImport.pmiUnits(0, 0, 0, 0, 0, 0)
SECS = pmi.pmiLogImport.pmiUnits(0, 1, 0, 0, c_api.PM_TIME_SEC, 0)
INDOM = pmi.pmiLogImport.pmiInDom(60, 1)
OTHER = pmi.pmiLogImport.pmiInDom(60, 2)

def session(path, flags, steps, version=None):
    """One pmiLogImport of path with flags, its steps, then pmiEnd: every answer."""
    log = pmi.pmiLogImport(path, flags)
    answers = [catch(log.pmiSetHostname, "appender"), catch(log.pmiSetTimezone, "UTC")]
    if version is not None:
        answers.append(catch(log.pmiSetVersion, version))
    for call, *args in steps:
        answers.append([call, catch(getattr(log, call), *args)])
    answers.append(catch(log.pmiEnd))
    del log
    return answers

def metric(name, item, typed=c_api.PM_TYPE_U32, indom=INDOM, sem=c_api.PM_SEM_INSTANT,
           units=NONE):
    return ("pmiAddMetric", name, pmi.pmiLogImport.pmiID(60, 0, item), typed, indom, sem, units)

ONELINE = (c_api.PM_TEXT_PMID, c_api.PM_TEXT_ONELINE, pmi.pmiLogImport.pmiID(60, 0, 1))
HELP = (c_api.PM_TEXT_PMID, c_api.PM_TEXT_HELP, pmi.pmiLogImport.pmiID(60, 0, 1))

for name, version in (("grown", None), ("v2grown", 2)):
    path = os.path.join(OUTPUT, name)
    runs = out[name] = []
    # the archive as a first session makes it
    runs.append(session(path, 0, [
        metric("app.m1", 1), metric("app.m3", 3, indom=OTHER),
        ("pmiAddInstance", INDOM, "a", 1), ("pmiAddInstance", INDOM, "b", 2),
        ("pmiAddInstance", OTHER, "x", 10),
        ("pmiPutValue", "app.m1", "a", "1"), ("pmiPutValue", "app.m1", "b", "2"),
        ("pmiPutValue", "app.m3", "x", "7"),
        ("pmiWrite", 100, 0),
        ("pmiPutValue", "app.m1", "a", "3"), ("pmiWrite", 110, 0),
        ("pmiPutText",) + ONELINE + ("one line",),
    ], version))
    # added to: an indom that changed (b gone, c new), one that did not, a new metric,
    # text already there and new; a write before the archive's end is taken too
    runs.append(session(path, PMI_APPEND, [
        metric("app.m1", 1), metric("app.m2", 2, c_api.PM_TYPE_DOUBLE, c_api.PM_INDOM_NULL,
                                    c_api.PM_SEM_COUNTER, SECS),
        metric("app.m3", 3, indom=OTHER),
        ("pmiAddInstance", INDOM, "a", 1), ("pmiAddInstance", INDOM, "c", 3),
        ("pmiAddInstance", OTHER, "x", 10),
        ("pmiPutValue", "app.m1", "a", "5"), ("pmiPutValue", "app.m2", "", "2.5"),
        ("pmiPutValue", "app.m3", "x", "8"),
        ("pmiWrite", 105, 0),
        ("pmiPutValue", "app.m1", "c", "6"), ("pmiWrite", 120, 500),
        ("pmiPutText",) + ONELINE + ("one line",), ("pmiPutText",) + HELP + ("more help",),
        ("pmiPutValue", "app.m2", "", "3.5"), ("pmiWrite", 130, 0),
    ]))
    # descriptors unlike the archive's: each write fails with its PM_ERR_LOGCHANGE*
    for changed in (metric("app.m1", 1, c_api.PM_TYPE_64), metric("app.m1", 1, sem=c_api.PM_SEM_COUNTER),
                    metric("app.m1", 1, indom=OTHER), metric("app.m1", 1, units=SECS)):
        runs.append(session(path, PMI_APPEND, [
            changed, ("pmiAddInstance", changed[4], "a", 1) if changed[4] != c_api.PM_INDOM_NULL
            else ("pmiGetHandle", "app.m1", ""),
            ("pmiAddInstance", OTHER, "x", 10),
            ("pmiPutValue", "app.m1", "a", "9"), ("pmiWrite", 140, 0),
        ]))
    # a session adding nothing new but values
    runs.append(session(path, PMI_APPEND | PMI_PROCESS, [
        metric("app.m2", 2, c_api.PM_TYPE_DOUBLE, c_api.PM_INDOM_NULL, c_api.PM_SEM_COUNTER,
               SECS),
        ("pmiPutValue", "app.m2", "", "4.5"), ("pmiWrite", 150, 0),
        ("pmiPutValue", "app.m2", "", "5.5"), ("pmiWrite", 160, 0),
    ]))

# PMI_APPEND with no archive there: one is made
out["fresh"] = session(os.path.join(OUTPUT, "fresh"), PMI_APPEND, [
    metric("app.m1", 1), ("pmiAddInstance", INDOM, "a", 1),
    ("pmiPutValue", "app.m1", "a", "1"), ("pmiWrite", 100, 0),
])
print(json.dumps(out))
'''


def _dump(in_root: str) -> str:
    command = ["chroot", roots.root_dir(LEVEL), "env", "TZ=UTC", "pmdumplog", "-a", "-e",
               "-h", "-I", "-L", "-x", in_root]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return re.sub(r"PID for pmlogger: \d+", "PID for pmlogger: N", proc.stdout)


def test_pmi_append_as_7_2_2(sid_scratch):
    on_host, in_root = sid_scratch
    for side in ("ref", "ours", "ref-run", "ours-run"):
        os.mkdir(os.path.join(on_host, side))
    with ThreadPoolExecutor(max_workers=2) as pool:
        ref = pool.submit(roots.run_reference, LEVEL, PROGRAM % {"output": in_root + "/ref"},
                          dict(ENV, PCP_IMPORTRUN_DIR=in_root + "/ref-run"))
        ours = pool.submit(roots.run_ours, LEVEL, PROGRAM % {"output": on_host + "/ours"},
                           dict(ENV, PCP_IMPORTRUN_DIR=on_host + "/ours-run"))
        ref, ours = ref.result(), ours.result()
    assert "__crash__" not in ref, ref
    assert_equal(ours, ref, "the calls' answers")
    # each descriptor change fails its write, with its own code
    changes = [run[-2] for run in ref["grown"][2:6]]
    assert [answer[1]["pmiErr"] for answer in changes] == [-12404, -12405, -12406, -12407], \
        changes
    for name in ARCHIVES:
        dumps = [_dump("%s/%s/%s" % (in_root, side, name)) for side in ("ref", "ours")]
        assert dumps[1] == dumps[0], name
    grown = _dump(in_root + "/ref/grown")
    assert "delta" in grown and "00:02:40" in grown and "more help" in grown, grown
