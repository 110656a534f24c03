"""pmPrintValue against libpcp 6.0.3's own pmPrintValue (called through ctypes: the
official wrapper cannot call it on Python 3, see the last test), on the pmlogger corpus
archive: every type of the sample PMDA, field widths, values shown as types they do not
convert to (the raw integer / float / hex forms), and event arrays."""
from __future__ import annotations

import pytest

from support import archives
from support.difftest import require_reference, run_program

NAMES = ["sample.long.one", "sample.long.million", "sample.double.ten", "sample.double.million",
         "sample.string.hullo", "sample.colour", "sample.float.hundred", "sample.float.one",
         "sample.longlong.million", "sample.ulong.ten", "sample.ulonglong.hundred",
         "sample.aggregate.hullo", "sample.aggregate.null", "sample.event.records",
         "sample.event.highres_records", "sample.bin", "sample.seconds"]

PROBE = r'''
import ctypes, json, os, tempfile
from pcp import pmapi
import cpmapi as c
LIBC = ctypes.CDLL("libc.so.6")
LIBC.fdopen.restype = ctypes.c_void_p
LIBC.fdopen.argtypes = [ctypes.c_int, ctypes.c_char_p]
LIBC.fclose.argtypes = [ctypes.c_void_p]
REF = %(ref)r
ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, %(archive)r)
def printvalue(f, result, desc, i, j, w, mtype):
    if not REF:
        desc.contents.type = mtype
        return ctx.pmPrintValue(f, result, desc, i, j, w)
    fp = LIBC.fdopen(os.dup(f.fileno()), b"w")
    pmapi.LIBPCP.pmPrintValue.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                          ctypes.c_void_p, ctypes.c_int]
    r = result.contents
    pmapi.LIBPCP.pmPrintValue(fp, r.get_valfmt(i), mtype, ctypes.addressof(r.get_vlist(i, j)), w)
    LIBC.fclose(fp)
names = %(names)r
pm = ctx.pmLookupName(names, relaxed=1)
present = [k for k in range(len(names)) if pm[k] != c.PM_ID_NULL]
pmids = (ctypes.c_uint * len(present))(*[pm[k] for k in present])
descs = ctx.pmLookupDescs(pmids)
types = [d.contents.type for d in descs]
out = []
for _ in range(6):
    r = ctx.pmFetch(pmids)
    for i in range(len(present)):
        for j in range(min(max(r.contents.get_numval(i), 0), 3)):
            for mtype in (types[i], c.PM_TYPE_AGGREGATE, c.PM_TYPE_UNKNOWN, c.PM_TYPE_U64):
                for w in (1, 7, 30):
                    with tempfile.TemporaryFile("w+") as f:
                        printvalue(f, r, descs[i], i, j, w, mtype)
                        f.flush()
                        f.seek(0)
                        out.append([names[present[i]], j, mtype, w, f.read()])
print(json.dumps(out))
'''


@pytest.mark.pmcd
@pytest.mark.reference
def test_print_value_as_libpcp_prints_it():
    require_reference()
    archive = archives.get_corpus()["v3"]
    ref = run_program(PROBE % {"ref": True, "archive": archive, "names": NAMES}, False)
    ours = run_program(PROBE % {"ref": False, "archive": archive, "names": NAMES}, True)
    assert isinstance(ref, list) and len(ref) > 200, ref
    assert {row[0] for row in ref} >= {"sample.long.one", "sample.string.hullo"}
    for mine, theirs in zip(ours, ref):
        assert mine == theirs
    assert len(ours) == len(ref)


@pytest.mark.reference
def test_the_official_wrapper_cannot_print_ours_can():
    """The official pmPrintValue hands ctypes a Python file object where libpcp wants a
    FILE *: on Python 3 it always raises ctypes.ArgumentError."""
    require_reference()
    program = r"""
import io, json, sys
from pcp import pmapi
import cpmapi as c
from pcp.pmapi import pmContext
ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, %r)
pm = ctx.pmLookupName(["sample.long.one"])
d = ctx.pmLookupDescs(pm)
r = ctx.pmFetch(pm)
try:
    ctx.pmPrintValue(sys.stderr, r, d[0], 0, 0, 5)
    print(json.dumps("printed"))
except Exception as e:
    print(json.dumps(type(e).__name__))
""" % archives.get_corpus()["v3"]
    assert run_program(program, False) == "ArgumentError"
    assert run_program(program, True) == "printed"


@pytest.mark.reference
def test_libc_and_pyFileToCFile_as_the_official_module():
    """LIBC and pyFileToCFile are the C library and a Python helper, not libpcp: the same
    on both sides (pyFileToCFile's read-mode file on the same descriptor, its errors,
    LIBC's functions); LIBPCP is the official module's alone."""
    require_reference()
    program = r"""
import json, sys, tempfile
from pcp import pmapi
out = {}
f = tempfile.TemporaryFile("w+")
g = pmapi.pyFileToCFile(f)
out["file"] = [type(g).__name__, g.mode, g.fileno() == f.fileno(), g.readable(), g.writable()]
g.close()
f.write("still open")
f.seek(0)
out["closing it leaves the descriptor"] = f.read()
out["descriptor number"] = pmapi.pyFileToCFile(f.fileno()).fileno() == f.fileno()
for bad in (-1, "text", 2.5, None):
    try:
        pmapi.pyFileToCFile(bad)
        out[repr(bad)] = "no error"
    except Exception as e:
        out[repr(bad)] = [type(e).__name__, str(e)]
out["LIBC"] = [type(pmapi.LIBC).__name__, pmapi.LIBC._name, pmapi.LIBC.strlen(b"four"),
               hasattr(pmapi.LIBC, "free"), pmapi.LIBC is pmapi.LIBC]
out["names"] = ["LIBC" in dir(pmapi), "pyFileToCFile" in dir(pmapi)]
print(json.dumps(out, sort_keys=True))
"""
    ref = run_program(program, False)
    assert "__crash__" not in ref, ref
    assert run_program(program, True) == ref
    assert run_program("import json\nfrom pcp import pmapi\n"
                       "print(json.dumps(hasattr(pmapi, 'LIBPCP')))", True) is False
