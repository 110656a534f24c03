"""pcp.pmi against the official binding (libpcp_import 6.0.3), differentially.

Each scenario below is one program of pmi calls. It runs under the official binding
(/usr/bin/python3) and under ours, each writing its own archive; every call's outcome
(return value, or exception type, str, code and args) is recorded. Then:

* outcomes, stdout and stderr must be equal (the scratch directory masked);
* the archives must be the same set of files, byte for byte, once the only field that
  legitimately differs is masked: the creating process id in the label of every file
  (bytes 8..11, "PID for pmlogger");
* ``pmdumplog -a -h -e -L`` (PID line masked) and ``pmlogcheck`` (archive name masked)
  print the same for both, and pmlogcheck passes both;
* the official pmapi reads both back with the same values, instances, labels and help.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from tests.support import difftest

PRELUDE = r'''
import json, sys
from pcp import pmi
import cpmapi as c
OUT = sys.argv[1]
EVENTS = []

def call(fn, *args):
    """Run one pmi call and record its outcome."""
    try:
        value = fn(*args)
        EVENTS.append(["ok", fn.__name__, repr(value)])
    except Exception as exc:
        EVENTS.append(["raise", fn.__name__, type(exc).__name__, str(exc),
                       getattr(exc, "code", None), repr(list(exc.args))])

def units(*a):
    return pmi.pmiLogImport.pmiUnits(*a)

NONE = units(0, 0, 0, 0, 0, 0)
'''

EPILOGUE = r'''
print(json.dumps(EVENTS))
'''

# The metrics most scenarios use: every type, singular and over an instance domain.
DEFINE_ALL = r'''
INDOM = log.pmiInDom(60, 7)
TYPES = [("i32", c.PM_TYPE_32), ("u32", c.PM_TYPE_U32), ("i64", c.PM_TYPE_64),
         ("u64", c.PM_TYPE_U64), ("flt", c.PM_TYPE_FLOAT), ("dbl", c.PM_TYPE_DOUBLE),
         ("str", c.PM_TYPE_STRING)]
for k, (name, typ) in enumerate(TYPES):
    call(log.pmiAddMetric, "one." + name, log.pmiID(60, 1, k), typ, c.PM_INDOM_NULL,
         c.PM_SEM_INSTANT, NONE)
    call(log.pmiAddMetric, "many." + name, log.pmiID(60, 2, k), typ, INDOM,
         c.PM_SEM_COUNTER if typ != c.PM_TYPE_STRING else c.PM_SEM_DISCRETE,
         units(1, -1, 0, c.PM_SPACE_KBYTE, c.PM_TIME_SEC, 0))
for inst, name in [(0, "zero"), (7, "seven x"), (3, "three"), (5, "minus five"),
                   (2147483647, "big")]:
    call(log.pmiAddInstance, INDOM, name, inst)

VALUES = {"i32": ["-1", "2147483647", " 42", ""], "u32": ["4294967295", "-1", "7", "0"],
          "i64": ["-9223372036854775808", "123456789012", "0", "5"],
          "u64": ["18446744073709551615", "1", "-2", "99999999999999999999"],
          "flt": ["1.5", "-0.0", "inf", "3.4e39"], "dbl": ["1e300", "nan", "0x1p3", "-2.5e-300"],
          "str": ["hello", "", "a longer string value with spaces", "ünïcödé"]}

def put_all(t):
    for name, _ in TYPES:
        vals = VALUES[name]
        call(log.pmiPutValue, "one." + name, None, vals[t % 4])
        for j, inst in enumerate(["big", "seven x", "zero", "minus five"]):
            call(log.pmiPutValue, "many." + name, inst, vals[(t + j) % 4])
'''

SCENARIOS = {
    "all_types_v2": r'''
log = pmi.pmiLogImport(OUT)
call(log.pmiSetHostname, "host.example.com")
call(log.pmiSetTimezone, "AEST-10")
''' + DEFINE_ALL + r'''
for t in range(6):
    put_all(t)
    call(log.pmiWrite, 1700000000 + t, 500000 * (t % 2))
call(log.pmiEnd)
''',
    "all_types_v3_highres": r'''
log = pmi.pmiLogImport(OUT)
call(log.pmiSetVersion, 3)
call(log.pmiSetHostname, "v3host")
call(log.pmiSetTimezone, "UTC")
''' + DEFINE_ALL + r'''
for t in range(6):
    put_all(t)
    call(log.pmiHighResWrite, 4102444800 + 86400 * 365 * 200 * (t == 5) + t, 123456789 * (t % 3))
call(log.pmiEnd)
''',
    "text_labels_marks": r'''
log = pmi.pmiLogImport(OUT)
call(log.pmiSetHostname, "labels")
call(log.pmiSetTimezone, "EST+5")
call(log.pmiSetVersion, 3)
''' + DEFINE_ALL + r'''
PMID = log.pmiID(60, 1, 0)
for t in range(5):
    put_all(t)
    if t == 0:
        call(log.pmiPutText, c.PM_TEXT_PMID, c.PM_TEXT_ONELINE, PMID, "a 32-bit value")
        call(log.pmiPutText, c.PM_TEXT_PMID, c.PM_TEXT_HELP, PMID, "Help\nover lines")
        call(log.pmiPutText, c.PM_TEXT_INDOM, c.PM_TEXT_ONELINE, INDOM, "the instances")
        call(log.pmiPutText, c.PM_TEXT_PMID, c.PM_TEXT_ONELINE, log.pmiID(60, 2, 3), "u64s")
        call(log.pmiPutLabel, c.PM_LABEL_CONTEXT, c.PM_ID_NULL, 0, "hostname", "labels")
        call(log.pmiPutLabel, c.PM_LABEL_CONTEXT, c.PM_ID_NULL, 0, "agent", "test")
        call(log.pmiPutLabel, c.PM_LABEL_DOMAIN, 60, 0, "domain", "sixty")
        call(log.pmiPutLabel, c.PM_LABEL_CLUSTER, log.pmiCluster(60, 2), 0, "cl", "two")
        call(log.pmiPutLabel, c.PM_LABEL_ITEM, PMID, 0, "units", "none")
        call(log.pmiPutLabel, c.PM_LABEL_ITEM | c.PM_LABEL_OPTIONAL, PMID, 0, "opt", "TRUE")
        call(log.pmiPutLabel, c.PM_LABEL_INDOM, INDOM, 0, "kind", "null")
        call(log.pmiPutLabel, c.PM_LABEL_INSTANCES, INDOM, 7, "seven", "false")
        call(log.pmiPutLabel, c.PM_LABEL_INSTANCES, INDOM, 3, "three", "3")
        call(log.pmiPutLabel, c.PM_LABEL_INSTANCES, INDOM, 3, "again", "x")
        log.pmiDump()
    if t == 2:
        call(log.pmiPutMark)
        call(log.pmiPutLabel, c.PM_LABEL_ITEM, PMID, 0, "units", "changed")
        call(log.pmiPutText, c.PM_TEXT_PMID, c.PM_TEXT_ONELINE, PMID, "a new one-line")
    call(log.pmiWrite, 1600000000 + 10 * t, 0)
call(log.pmiPutMark)
call(log.pmiEnd)
''',
    "text_only_first_write": r'''
log = pmi.pmiLogImport(OUT)
call(log.pmiSetHostname, "texts")
call(log.pmiSetTimezone, "UTC")
call(log.pmiPutMark)
call(log.pmiAddMetric, "m.x", c.PM_ID_NULL, c.PM_TYPE_32, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, NONE)
call(log.pmiAddMetric, "m.y", c.PM_ID_NULL, c.PM_TYPE_32, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, NONE)
call(log.pmiPutText, c.PM_TEXT_PMID, c.PM_TEXT_ONELINE, log.pmiID(245, 0, 1), "first")
call(log.pmiWrite, 1500000000, 0)
call(log.pmiPutLabel, c.PM_LABEL_ITEM, log.pmiID(245, 0, 2), 0, "a", "b")
call(log.pmiWrite, 1500000001, 0)
call(log.pmiPutValue, "m.x", None, "1")
call(log.pmiPutValue, "m.y", None, "2")
call(log.pmiWrite, 1500000002, 0)
call(log.pmiEnd)
''',
    "errors": r'''
log = pmi.pmiLogImport(OUT)
call(log.pmiSetHostname, "errors")
call(log.pmiSetTimezone, "UTC")
call(log.pmiSetVersion, 4)
call(log.pmiSetVersion, "3")
call(log.pmiSetVersion, 1)
call(log.pmiWrite, 1000, 0)                              # no data
D = log.pmiInDom(61, 1)
E = log.pmiInDom(61, 2)
for name in ["a", "a.b", "a.b", "1a", "a..b", "a.", "a.1b", "a-b", "_a", "a.b_c.d9", "", "ä.b"]:
    call(log.pmiAddMetric, name, c.PM_ID_NULL, c.PM_TYPE_32, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, NONE)
call(log.pmiAddMetric, "dup.id", log.pmiID(245, 0, 1), c.PM_TYPE_32, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, NONE)
call(log.pmiAddMetric, "bad.type", log.pmiID(61, 0, 1), 7, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, NONE)
call(log.pmiAddMetric, "bad.type", log.pmiID(61, 0, 1), -1, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, NONE)
call(log.pmiAddMetric, "bad.sem", log.pmiID(61, 0, 1), c.PM_TYPE_32, c.PM_INDOM_NULL, 2, NONE)
call(log.pmiAddMetric, "bad.units", log.pmiID(61, 0, 1), c.PM_TYPE_32, c.PM_INDOM_NULL, 3, 0)
call(log.pmiAddMetric, "bad.pmid", "x", c.PM_TYPE_32, c.PM_INDOM_NULL, 3, NONE)
call(log.pmiAddMetric, "odd.units", log.pmiID(61, 0, 2), c.PM_TYPE_64, c.PM_INDOM_NULL, 3,
     units(7, -8, 9, 15, 16, -1))
call(log.pmiAddMetric, "inst.m", log.pmiID(61, 0, 3), c.PM_TYPE_32, D, 3, NONE)
call(log.pmiAddMetric, "noinst.m", log.pmiID(61, 0, 4), c.PM_TYPE_32, E, 3, NONE)
call(log.pmiAddMetric, "dbl.m", log.pmiID(61, 0, 5), c.PM_TYPE_DOUBLE, D, 3, NONE)
for name, inst in [("a b", 1), ("a c", 2), ("a", 2), ("a", 3), ("b", 1), ("a", 4), ("ab", 5),
                   ("x y z", 6), ("x yy", 7), ("", 8), ("", 9), ("q", -1)]:
    call(log.pmiAddInstance, D, name, inst)
call(log.pmiPutValue, "no.such", None, "1")
call(log.pmiPutValue, "a.b", "x", "1")
call(log.pmiPutValue, "inst.m", None, "1")
call(log.pmiPutValue, "inst.m", "", "1")
call(log.pmiPutValue, "inst.m", "nope", "1")
call(log.pmiPutValue, "inst.m", "a", "1")
call(log.pmiPutValue, "inst.m", "a whatever", "2")
call(log.pmiPutValue, "inst.m", "a b", "3")
call(log.pmiPutValue, "inst.m", "x y", "4")
call(log.pmiPutValue, "inst.m", "ab", "0x10")
call(log.pmiPutValue, "inst.m", "ab", "12 ")
call(log.pmiPutValue, "inst.m", "ab", "99999999999")
call(log.pmiPutValue, "noinst.m", "a", "1")
call(log.pmiPutValue, "a.b", None, "5")
call(log.pmiPutValue, "a.b", None, "6")
call(log.pmiPutValue, "a.b_c.d9", None, "x")
call(log.pmiPutValue, "a.b_c.d9", None, "7")
call(log.pmiPutValue, "odd.units", None, "1e3")
call(log.pmiPutValue, "dbl.m", "a", "1,5")
call(log.pmiPutValue, "dbl.m", "ab", "1.5")
call(log.pmiPutValue, "dbl.m", "q", "1.5e")
call(log.pmiPutValue, "dbl.m", "x yy", " -infinity")
call(log.pmiPutValue, 5, None, "1")
call(log.pmiPutValue, "a.b", None, 5)
call(log.pmiGetHandle, "no.such", None)
call(log.pmiGetHandle, "inst.m", None)
call(log.pmiPutValueHandle, 0, "1")
call(log.pmiPutValueHandle, 1, "1")
log.pmiDump()
call(log.pmiWrite, 2000, 0)
call(log.pmiWrite, 1999, 999999)
call(log.pmiWrite, 2000, 0)
call(log.pmiPutValue, "a.b", None, "8")
call(log.pmiWrite, 1999, 0)
call(log.pmiWrite, 2001, 0)
call(log.pmiPutText, 3, c.PM_TEXT_ONELINE, 1, "x")
call(log.pmiPutText, c.PM_TEXT_PMID, 3, 1, "x")
call(log.pmiPutText, c.PM_TEXT_PMID | c.PM_TEXT_INDOM, c.PM_TEXT_ONELINE, 1, "x")
call(log.pmiPutText, c.PM_TEXT_PMID, c.PM_TEXT_ONELINE, c.PM_ID_NULL, "x")
call(log.pmiPutText, c.PM_TEXT_PMID, c.PM_TEXT_ONELINE, 1, "")
call(log.pmiPutText, c.PM_TEXT_PMID, c.PM_TEXT_ONELINE, 1, "x")
call(log.pmiPutText, c.PM_TEXT_PMID, c.PM_TEXT_ONELINE, 1, "x")
call(log.pmiPutText, c.PM_TEXT_PMID, c.PM_TEXT_HELP, 1, "x")
call(log.pmiPutLabel, 0, 1, 0, "a", "b")
call(log.pmiPutLabel, 3, 1, 0, "a", "b")
call(log.pmiPutLabel, c.PM_LABEL_INSTANCES, D, c.PM_IN_NULL, "a", "b")
call(log.pmiPutLabel, c.PM_LABEL_ITEM, c.PM_ID_NULL, 0, "a", "b")
call(log.pmiPutLabel, c.PM_LABEL_ITEM, 1, 0, "", "b")
call(log.pmiPutLabel, c.PM_LABEL_ITEM, 1, 0, "a", "")
call(log.pmiPutLabel, c.PM_LABEL_ITEM, 1, 0, "a", 'quo"te')
call(log.pmiPutLabel, c.PM_LABEL_ITEM, 1, 0, "bad name", "v")
call(log.pmiPutLabel, c.PM_LABEL_ITEM, 1, 0, "9lives", "v")
call(log.pmiPutLabel, c.PM_LABEL_ITEM, 1, 0, "fine", "v")
call(log.pmiPutLabel, c.PM_LABEL_ITEM, 1, 0, "fine", "w")
call(log.pmiWrite, 2002, 0)
for code in [-20000, -20001, -20013, -20025, -20026, -12357, -1, 0, 5]:
    e = pmi.pmiErr(code)
    EVENTS.append(["pmiErr", code, str(e), e.errno(), repr(list(e.args))])
e = pmi.pmiErr("text", 2)
EVENTS.append(["pmiErr", "text", str(e), e.errno(), repr(list(e.args))])
call(log.pmiEnd)
call(log.pmiEnd)
call(log.pmiPutValue, "a.b", None, "1")
call(log.pmiWrite, 3000, 0)
''',
    "late_hostname_and_instances": r'''
log = pmi.pmiLogImport(OUT)
call(log.pmiSetTimezone, "UTC")
D = log.pmiInDom(62, 9)
call(log.pmiAddMetric, "late.m", log.pmiID(62, 0, 0), c.PM_TYPE_U64, D, c.PM_SEM_COUNTER, NONE)
call(log.pmiAddMetric, "late.s", log.pmiID(62, 0, 1), c.PM_TYPE_STRING, D, c.PM_SEM_INSTANT, NONE)
for i in (5, 1, 3):
    call(log.pmiAddInstance, D, "i%d" % i, i)
call(log.pmiSetHostname, "first-name")
for t in range(4):
    for i in (5, 3, 1):
        call(log.pmiPutValue, "late.m", "i%d" % i, str(t * 10 + i))
    call(log.pmiPutValue, "late.s", "i3", "s%d" % t)
    if t == 1:
        call(log.pmiAddInstance, D, "i0", 0)
        call(log.pmiAddInstance, D, "i-2", -2)
        call(log.pmiPutValue, "late.m", "i-2", "7")
        call(log.pmiPutValue, "late.m", "i0", "8")
        call(log.pmiSetHostname, "second-name")
        call(log.pmiSetTimezone, "EST-10")
    call(log.pmiWrite, 1234567890 + t, 0)
call(log.pmiEnd)
''',
    "handles_and_dump": r'''
log = pmi.pmiLogImport(OUT)
call(log.pmiSetHostname, "handles")
call(log.pmiSetTimezone, "UTC")
D = log.pmiInDom(63, 1)
call(log.pmiAddMetric, "h.a", log.pmiID(63, 0, 0), c.PM_TYPE_FLOAT, D, c.PM_SEM_INSTANT,
     units(0, 1, 0, 0, c.PM_TIME_MSEC, 0))
call(log.pmiAddMetric, "h.b", log.pmiID(63, 0, 1), c.PM_TYPE_32, c.PM_INDOM_NULL, c.PM_SEM_DISCRETE,
     units(0, 0, 1, 0, 0, c.PM_COUNT_ONE + 3))
for i in range(4):
    call(log.pmiAddInstance, D, "cpu%d" % i, i)
H = []
for i in range(4):
    call(log.pmiGetHandle, "h.a", "cpu%d" % i)
    H.append(len(H) + 1)
call(log.pmiGetHandle, "h.b", None)
call(log.pmiGetHandle, "h.b", "")
log.pmiDump()
for t in range(3):
    for h in H:
        call(log.pmiPutValueHandle, h, "%d.25" % (t * h))
    call(log.pmiPutValueHandle, 5, str(-t))
    call(log.pmiPutValueHandle, 5, str(-t))
    call(log.pmiWrite, 1300000000 + t, 999999)
call(log.pmiPutValueHandle, 7, "1")
call(log.pmiEnd)
''',
    "two_contexts_inherit": r'''
first = pmi.pmiLogImport(OUT)
call(first.pmiSetHostname, "one")
call(first.pmiSetTimezone, "UTC")
call(first.pmiAddMetric, "c.x", c.PM_ID_NULL, c.PM_TYPE_DOUBLE, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, NONE)
call(first.pmiPutText, c.PM_TEXT_PMID, c.PM_TEXT_ONELINE, first.pmiID(245, 0, 1), "x text")
call(first.pmiPutValue, "c.x", None, "1.5")
call(first.pmiWrite, 1000000, 0)
second = pmi.pmiLogImport(OUT + "-second", 1)
EVENTS.append(["ctx", first.ctx, second.ctx, first.path.decode()[-1:], second.path.decode()[-6:]])
call(second.pmiSetHostname, "two")
call(second.pmiSetTimezone, "UTC")
call(second.pmiPutValue, "c.x", None, "2.5")
call(second.pmiWrite, 999999, 0)
call(second.pmiWrite, 1000000, 0)
call(first.pmiPutValue, "c.x", None, "3.5")
call(second.pmiPutValue, "c.x", None, "4.5")
call(first.pmiWrite, 1000001, 0)
call(second.pmiWrite, 1000002, 0)
call(first.pmiEnd)
call(first.pmiPutValue, "c.x", None, "5")
call(second.pmiEnd)
''',
    "many_records_index": r'''
log = pmi.pmiLogImport(OUT)
call(log.pmiSetHostname, "index")
call(log.pmiSetTimezone, "UTC")
D = log.pmiInDom(64, 0)
call(log.pmiAddMetric, "big.v", log.pmiID(64, 0, 0), c.PM_TYPE_U64, D, c.PM_SEM_COUNTER, NONE)
call(log.pmiAddMetric, "big.s", log.pmiID(64, 0, 1), c.PM_TYPE_STRING, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, NONE)
for i in range(40):
    log.pmiAddInstance(D, "inst-%02d" % i, 1000 - i * 7)
for t in range(400):
    for i in range(40):
        log.pmiPutValue("big.v", "inst-%02d" % i, str(t * 1000 + i))
    log.pmiPutValue("big.s", None, "x" * (t % 50))
    if t == 200:
        log.pmiAddInstance(D, "inst-new", 5)
    if t % 97 == 0:
        call(log.pmiPutMark)
    call(log.pmiWrite, 1700000000 + t, 0)
call(log.pmiEnd)
''',
    "existing_files": r'''
open(OUT + ".meta", "w").close()
log = pmi.pmiLogImport(OUT)
call(log.pmiSetHostname, "exists")
call(log.pmiSetTimezone, "UTC")
call(log.pmiAddMetric, "e.x", c.PM_ID_NULL, c.PM_TYPE_32, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, NONE)
call(log.pmiPutValue, "e.x", None, "1")
call(log.pmiWrite, 10, 0)
call(log.pmiPutValue, "e.x", None, "1")
call(log.pmiWrite, 11, 0)
import os
EVENTS.append(["files", sorted(f for f in os.listdir(os.path.dirname(OUT)))])
os.unlink(OUT + ".meta")
call(log.pmiPutValue, "e.x", None, "2")
call(log.pmiWrite, 12, 0)
call(log.pmiEnd)
''',
}

SCENARIOS["text_labels_marks_v2"] = SCENARIOS["text_labels_marks"].replace(
    'call(log.pmiSetVersion, 3)', 'call(log.pmiSetVersion, 2)')
SCENARIOS["many_records_index_v3"] = SCENARIOS["many_records_index"].replace(
    'call(log.pmiSetHostname, "index")', 'call(log.pmiSetHostname, "index")\ncall(log.pmiSetVersion, 3)')

SCENARIOS["pmid_collision_long_names"] = r'''
log = pmi.pmiLogImport(OUT)
call(log.pmiSetHostname, "h" * 70 + ".example.com")
call(log.pmiSetTimezone, "XYZ-10:00:00ABC-11:00:00,M10.1.0/2:00:00,M4.1.0/3:00:00")
call(log.pmiAddMetric, "first.m", log.pmiID(245, 0, 2), c.PM_TYPE_32, c.PM_INDOM_NULL,
     c.PM_SEM_INSTANT, NONE)
call(log.pmiAddMetric, "auto.m", c.PM_ID_NULL, c.PM_TYPE_32, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, NONE)
call(log.pmiAddMetric, "auto.n", c.PM_ID_NULL, c.PM_TYPE_64, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, NONE)
for t in range(3):
    call(log.pmiPutValue, "auto.m", None, str(t))
    call(log.pmiPutValue, "first.m", None, str(10 + t))
    call(log.pmiPutValue, "auto.n", None, str(20 + t))
    call(log.pmiWrite, 1100000000 + t, 0)
call(log.pmiEnd)
'''
SCENARIOS["instances_added_after_write"] = r'''
log = pmi.pmiLogImport(OUT)
call(log.pmiSetHostname, "later")
call(log.pmiSetTimezone, "UTC")
D = log.pmiInDom(65, 3)
call(log.pmiAddMetric, "later.m", log.pmiID(65, 0, 0), c.PM_TYPE_32, D, c.PM_SEM_INSTANT, NONE)
for i in (40, 10, 30, 20):
    call(log.pmiAddInstance, D, "n%d" % i, i)
call(log.pmiGetHandle, "later.m", "n30")
for t in range(5):
    for i in (40, 10, 30, 20) + ((5, 50) if t >= 2 else ()):
        call(log.pmiPutValue, "later.m", "n%d" % i, str(t * 100 + i))
    call(log.pmiPutValueHandle, 1, "7")
    if t == 1:
        call(log.pmiAddInstance, D, "n5", 5)
        call(log.pmiAddInstance, D, "n50", 50)
    call(log.pmiWrite, 1200000000 + t, 0)
call(log.pmiEnd)
'''

# Environment variations: a scenario name -> extra environment for both sides.
ENV = {
    "many_records_index": {"PCP_LOGIMPORT_MAXLOGSZ": "30000"},
    "many_records_index_v3": {"PCP_LOGIMPORT_MAXLOGSZ": "45000"},
}

# Archives libpcp_import writes but libpcp cannot read back (a negative instance id in an
# instance domain record is PM_ERR_LOGREC on load): compared byte for byte and through
# pmdumplog's and pmlogcheck's identical complaints, not read back.
UNREADABLE = {"late_hostname_and_instances", "errors"}

# libpcp_import's defaults when the script sets neither hostname nor timezone.
DEFAULTS = r'''
log = pmi.pmiLogImport(OUT)
%s
call(log.pmiAddMetric, "d.x", c.PM_ID_NULL, c.PM_TYPE_32, c.PM_INDOM_NULL, c.PM_SEM_INSTANT, NONE)
call(log.pmiPutValue, "d.x", None, "1")
call(log.pmiWrite, 1400000000, 0)
call(log.pmiEnd)
'''
SCENARIOS["defaults_v2"] = DEFAULTS % ""
SCENARIOS["defaults_v3"] = DEFAULTS % "call(log.pmiSetVersion, 3)"
SCENARIOS["defaults_env_v3"] = DEFAULTS % ""
ENV["defaults_env_v3"] = {"PCP_ARCHIVE_VERSION": "3", "TZ": "NZST-12:00:00NZDT-13:00:00,M9.5.0,M4.1.0/3"}

READBACK = r'''
import json
from pcp import pmapi
import cpmapi as c

def read(path):
    ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, path)
    label = ctx.pmGetArchiveLabel()
    out = {"host": label.get_hostname(), "tz": label.get_timezone(),
           "start": [label.start.tv_sec, label.start.tv_usec], "records": [], "texts": {}}
    names = []
    ctx.pmTraversePMNS("", lambda n: names.append(n))
    pmids = ctx.pmLookupName(names) if names else []
    descs = {p: d for p, d in zip(pmids, ctx.pmLookupDescs(pmids))} if names else {}
    for name, pmid in zip(names, pmids):
        for kind in (c.PM_TEXT_ONELINE, c.PM_TEXT_HELP):
            try:
                out["texts"]["%s/%d" % (name, kind)] = ctx.pmLookupText(pmid, kind)
            except pmapi.pmErr as exc:
                out["texts"]["%s/%d" % (name, kind)] = exc.args[0]
        try:
            out["texts"][name + "/labels"] = ctx.pmLookupLabels(pmid)
        except pmapi.pmErr as exc:
            out["texts"][name + "/labels"] = exc.args[0]
    while True:
        try:
            res = ctx.pmFetchArchive()
        except pmapi.pmErr as exc:
            out["end"] = exc.args[0]
            break
        r = res.contents
        rec = [r.timestamp.tv_sec, r.timestamp.tv_usec, r.numpmid]
        for i in range(r.numpmid):
            vs = r.get_vset(i)
            pmid, numval = r.get_pmid(i), r.get_numval(i)
            item = [pmid, numval]
            d = descs.get(pmid)
            for j in range(max(numval, 0)):
                inst = r.get_inst(i, j)
                atom = ctx.pmExtractValue(r.get_valfmt(i), r.get_vlist(i, j), d.type, d.type)
                v = atom.dref(d.type)
                if isinstance(v, bytes):
                    v = v.decode("utf-8", "replace")
                if isinstance(v, float):
                    v = repr(v)
                name = None
                if d.indom != c.PM_INDOM_NULL:
                    name = ctx.pmNameInDomArchive(d, inst)
                item.append([inst, name, v])
            rec.append(item)
        out["records"].append(rec)
        ctx.pmFreeResult(res)
    return out

print(json.dumps([read(p) for p in PATHS], default=lambda o: o.decode("utf-8", "replace") if isinstance(o, bytes) else repr(o)))
'''

PID_LINE = re.compile(r"^PID for pmlogger: \d+$", re.M)


def _run_side(name: str, ours: bool, base: str) -> dict:
    code = PRELUDE + SCENARIOS[name] + EPILOGUE
    return difftest.run_script(code, [base], ours, env=ENV.get(name), timeout=120)


def _archive_files(folder: str) -> dict:
    files = {}
    for entry in sorted(os.listdir(folder)):
        with open(os.path.join(folder, entry), "rb") as f:
            data = bytearray(f.read())
        if len(data) >= 12:
            data[8:12] = b"PID!"         # the label's pid: the one legitimate difference
        files[entry] = bytes(data)
    return files


def _tool(argv: list, folder: str) -> tuple:
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=folder, check=False,
                          env=dict(os.environ, LC_ALL="C.UTF-8"))
    text = (proc.stdout + proc.stderr).replace(folder, "DIR")
    return proc.returncode, PID_LINE.sub("PID for pmlogger: PID", text)


@pytest.fixture(scope="module")
def scratch():
    root = tempfile.mkdtemp(prefix="pcp-pmi-")
    yield root
    if not os.environ.get("PCP_KEEP_TEST_ARCHIVES"):
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario(name: str, scratch: str) -> None:
    difftest.require_reference()
    sides = {}
    for side in ("ref", "ours"):
        folder = os.path.join(scratch, name, side)
        os.makedirs(folder)
        run = _run_side(name, side == "ours", os.path.join(folder, "arch"))
        for key in ("stdout", "stderr"):
            run[key] = run[key].replace(folder, "DIR")
        # pmiDump prints the address of the pending result
        run["stderr"] = re.sub(r"dump from 0x[0-9a-f]+", "dump from ADDR", run["stderr"])
        sides[side] = (folder, run)
    (ref_dir, ref), (our_dir, ours) = sides["ref"], sides["ours"]
    assert ref["status"] == 0, ref["stderr"]
    assert ours["status"] == ref["status"], ours["stderr"]
    assert json.loads(ours["stdout"]) == json.loads(ref["stdout"])
    assert ours["stderr"] == ref["stderr"]

    ref_files, our_files = _archive_files(ref_dir), _archive_files(our_dir)
    assert sorted(our_files) == sorted(ref_files)
    for entry in ref_files:
        assert our_files[entry] == ref_files[entry], "%s differs" % entry

    bases = sorted({e.rsplit(".", 1)[0] for e in ref_files if e.endswith(".meta")})
    for base in bases:
        ref_dump = _tool(["pmdumplog", "-a", "-h", "-e", "-L", base], ref_dir)
        our_dump = _tool(["pmdumplog", "-a", "-h", "-e", "-L", base], our_dir)
        assert our_dump == ref_dump
        ref_check = _tool(["pmlogcheck", base], ref_dir)
        our_check = _tool(["pmlogcheck", base], our_dir)
        assert our_check == ref_check
        if name not in UNREADABLE:
            assert ref_check[0] == 0, ref_check[1]

    if bases and name not in UNREADABLE:
        paths = [os.path.join(d, b) for d in (ref_dir, our_dir) for b in bases]
        read = difftest.run_reference(READBACK.replace("PATHS", repr(paths)))
        half = len(bases)
        assert read[half:] == read[:half]


def test_put_result_from_an_archive(scratch: str) -> None:
    """put_result / put_highres_result with results fetched by each side's own pmapi
    from the same pmlogger archive: the copies are identical. (libpcp_import's
    pmiPutHighResResult crashes under the official binding, so the reference writes its
    "-hr" copy with put_result: for a v2 archive of microsecond stamps that is the same
    archive.)"""
    from tests.support.archives import get_corpus

    difftest.require_reference()
    source = get_corpus()["v2"]
    code = PRELUDE + r'''
from pcp import pmapi
src = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, %r)
names = []
src.pmTraversePMNS("", lambda n: names.append(n))
pmids = src.pmLookupName(names)
# the archive's own metrics: not the derived ones (domain 511) the reference may define
names = [n for n, p in zip(names, pmids) if p >> 22 != 511]
pmids = src.pmLookupName(names)
descs = src.pmLookupDescs(pmids)
# one archive per process: libpcp_import crashes in a second context's pmiPutResult
highres, suffix = (True, "-hr") if sys.argv[3] == "hr" else (False, "")
if True:
    log = pmi.pmiLogImport(OUT + suffix)
    call(log.pmiSetHostname, "copy")
    call(log.pmiSetTimezone, "UTC")
    for name, pmid, d in zip(names, pmids, descs):
        if d.type <= c.PM_TYPE_STRING:
            EVENTS.append(["metric", name, pmid, d.type, d.indom, d.sem, str(d.units)])
            call(log.pmiAddMetric, name, pmid, d.type, d.indom, d.sem, d.units)
    seen = set()
    for pmid, d in zip(pmids, descs):
        if d.indom != c.PM_INDOM_NULL and d.indom not in seen and d.type <= c.PM_TYPE_STRING:
            seen.add(d.indom)
            try:
                insts, inames = src.pmGetInDomArchive(d)
            except pmapi.pmErr:
                continue
            for i, n in zip(insts, inames):
                call(log.pmiAddInstance, d.indom, n, i)
    src.pmSetMode(c.PM_MODE_FORW, pmapi.timeval(0, 0), 0)
    HR = highres and sys.argv[2] == "ours"
    count = 0
    while count < 40:
        try:
            res = src.pmFetchHighResArchive() if HR else src.pmFetchArchive()
        except pmapi.pmErr:
            break
        # the official put_highres_result crashes (SIGSEGV) in libpcp_import 6.0.3:
        # the reference copies with put_result (the same bytes for a v2 archive of
        # microsecond stamps), ours with put_highres_result
        if HR:
            call(log.put_highres_result, res)
        else:
            call(log.put_result, res)
        count += 1
    call(log.pmiEnd)
''' % source + EPILOGUE
    folders = {}
    for side in ("ref", "ours"):
        folder = os.path.join(scratch, "put_result", side)
        os.makedirs(folder)
        runs = [difftest.run_script(code, [os.path.join(folder, "arch"), side, kind],
                                    side == "ours", timeout=120) for kind in ("plain", "hr")]
        run = {"status": max(r["status"] for r in runs),
               "stdout": json.dumps([e for r in runs for e in json.loads(r["stdout"] or "[]")]),
               "stderr": "".join(r["stderr"] for r in runs)}
        folders[side] = (folder, run)
    (ref_dir, ref), (our_dir, ours) = folders["ref"], folders["ours"]
    assert ref["status"] == 0, ref["stderr"]
    assert ours["status"] == 0, ours["stderr"]
    def outcomes(stdout: str) -> list:
        return [event[:1] + event[2:] for event in json.loads(stdout)]

    assert outcomes(ours["stdout"]) == outcomes(ref["stdout"])
    ref_files, our_files = _archive_files(ref_dir), _archive_files(our_dir)
    assert sorted(our_files) == sorted(ref_files)
    for entry in ref_files:
        assert our_files[entry] == ref_files[entry], "%s differs" % entry
    for base in ("arch", "arch-hr"):
        assert _tool(["pmdumplog", "-a", base], our_dir) == _tool(["pmdumplog", "-a", base],
                                                                  ref_dir)


def test_cpmi_module_matches() -> None:
    difftest.require_reference()
    ref = difftest.run_reference(
        "import json, cpmi\n"
        "print(json.dumps({n: getattr(cpmi, n) if n != 'pmiErrSymDict' else "
        "sorted(cpmi.pmiErrSymDict.items()) for n in dir(cpmi) if not n.startswith('_')}))")
    import cpmi

    ours = {n: getattr(cpmi, n) if n != "pmiErrSymDict" else
            [list(kv) for kv in sorted(cpmi.pmiErrSymDict.items())]
            for n in dir(cpmi) if not n.startswith("_")}
    assert ours == ref


def test_pmi_public_names_match() -> None:
    difftest.require_reference()
    ref = difftest.run_reference(
        "import json\nfrom pcp import pmi\n"
        "print(json.dumps([sorted(n for n in dir(pmi.pmiLogImport) if not n.startswith('_')),"
        " sorted(n for n in dir(pmi.pmiErr) if not n.startswith('_'))]))")
    from pcp import pmi

    ours = [sorted(n for n in dir(pmi.pmiLogImport) if not n.startswith("_")),
            sorted(n for n in dir(pmi.pmiErr) if not n.startswith("_"))]
    assert ours == ref


def test_helpers_match() -> None:
    """pmiID, pmiCluster, pmiInDom and pmiUnits over awkward arguments."""
    difftest.require_reference()
    code = r'''
import json
from pcp import pmi
L = pmi.pmiLogImport
out = []
for args in [(0, 0, 0), (60, 2, 0), (511, 4095, 1023), (512, 4096, 1024), (-1, -1, -1),
             (1 << 40, 3, 5), (245, 1, 2)]:
    out.append([L.pmiID(*args), L.pmiCluster(*args[:2]), L.pmiInDom(*args[:2])])
for args in [(0,) * 6, (1, -1, 0, 3, 2, 0), (7, -8, 8, 15, 16, -9), (1 << 33, 0, 0, 0, 0, 1)]:
    u = L.pmiUnits(*args)
    out.append([u.dimSpace, u.dimTime, u.dimCount, u.scaleSpace, u.scaleTime, u.scaleCount,
                str(u)])
for bad in [("x", 0, 0), (1.5, 0, 0)]:
    try:
        L.pmiID(*bad)
    except Exception as exc:
        out.append([type(exc).__name__, str(exc)])
print(json.dumps(out))
'''
    ref = difftest.run_reference(code)
    ours = difftest.run_program(code, ours=True)
    assert ours == ref


def test_write_now_and_after_a_foreign_end(tmp_path) -> None:
    """Ours only, where the official binding cannot be compared: pmiWrite(-1, ...) stamps
    the record with the current time; and writing to a context that another object's
    __del__ ended (its pmiEnd ends whatever context is current) is an error here, where
    libpcp_import writes to closed files and the official binding segfaults."""
    import time

    from pcp import pmi
    import cpmapi as c

    a = pmi.pmiLogImport(str(tmp_path / "a"))
    a.pmiSetHostname("now")
    a.pmiSetTimezone("UTC")
    a.pmiAddMetric("a.b", c.PM_ID_NULL, c.PM_TYPE_32, c.PM_INDOM_NULL, c.PM_SEM_INSTANT,
                   a.pmiUnits(0, 0, 0, 0, 0, 0))
    before = time.time()
    a.pmiPutValue("a.b", None, "1")
    assert a.pmiWrite(-1, 0) == 0
    assert before - 1 <= a._context.last_stamp[0] <= time.time() + 1
    b = pmi.pmiLogImport(str(tmp_path / "b"))
    b.pmiEnd()
    a.pmiPutValue("a.b", None, "2")
    del b
    with pytest.raises(pmi.pmiErr) as err:
        a.pmiWrite(int(time.time()) + 10, 0)
    assert err.value.code == -9     # -EBADF
