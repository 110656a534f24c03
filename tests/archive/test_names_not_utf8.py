"""Metric and instance names that are not UTF-8 (a damaged or foreign archive, a PMDA that
writes Latin-1), on an archive written byte by byte. libpcp hands such names over as they
are. The official binding raises UnicodeDecodeError for metric names (SystemError out of
pmTraversePMNS, which stops the walk) and drops the bytes that are not ASCII from instance
names. pcp-native matches it for instance names and for every valid name, and gives metric
names with surrogate escapes (PEP 383) instead of raising: the walk goes on, and each name
it gives looks up again."""
from __future__ import annotations

import json

import pytest

import cpmapi as c_api
from pcp import pmapi

from support import archive_bytes as ab
from support.difftest import require_reference, run_reference

BAD = b"sample.caf\xe9"
PMID_BAD, PMID_OK, INDOM = (29 << 22) | 1, (29 << 22) | 2, (29 << 22) | 7

PROBE = r'''
import json
from pcp import pmapi
import cpmapi as c
ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, %(archive)r)
R = {}
def cat(name, f):
    try:
        R[name] = ["ok", f()]
    except Exception as e:
        R[name] = ["raised", type(e).__name__]
names = []
cat("traverse", lambda: (ctx.pmTraversePMNS("", names.append), names)[1])
cat("children", lambda: ctx.pmGetChildren("sample"))
cat("children_status", lambda: list(ctx.pmGetChildrenStatus("sample")))
cat("nameid_bad", lambda: ctx.pmNameID(%(bad)d))
cat("nameall_bad", lambda: ctx.pmNameAll(%(bad)d))
cat("nameid_ok", lambda: ctx.pmNameID(%(ok)d))
cat("lookup_bytes", lambda: list(ctx.pmLookupName([b"sample.caf\xe9"])))
cat("lookup_ok", lambda: list(ctx.pmLookupName(["sample.ok"])))
d = ctx.pmLookupDescs([%(ok)d])
cat("getindom", lambda: [list(x) for x in ctx.pmGetInDom(d[0])])
cat("nameindom", lambda: ctx.pmNameInDom(d[0], 1))
cat("getindom_archive", lambda: [list(x) for x in ctx.pmGetInDomArchive(d[0])])
cat("nameindom_archive", lambda: ctx.pmNameInDomArchive(d[0], 1))
cat("lookupindom", lambda: ctx.pmLookupInDom(d[0], b"na\xefve"))
print(json.dumps(R, ensure_ascii=True))
'''


def _archive(tmp_path, version: int) -> str:
    sec = 1704412800
    base = str(tmp_path / ("latin%d" % version))
    indom_rtype = 2 if version == 2 else 5
    with open(base + ".meta", "wb") as f:
        f.write(ab.label(version, -1, sec, 0)
                + ab.desc_record(PMID_BAD, 0, 0xFFFFFFFF, 3, 0, [BAD])
                + ab.desc_record(PMID_OK, 0, INDOM, 3, 0, [b"sample.ok"])
                + ab.indom_record(indom_rtype, sec, 0, INDOM, [(1, b"na\xefve"), (2, b"plain")]))
    with open(base + ".0", "wb") as f:
        f.write(ab.label(version, 0, sec, 0)
                + ab.data_record(version, sec + 1, 0, [(PMID_BAD, 1, 0, [(-1, 7)]),
                                                       (PMID_OK, 2, 0, [(1, 11), (2, 22)])]))
    return base


def _ours(program: str) -> dict:
    namespace: dict = {}
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(program, "<probe>", "exec"), namespace)     # noqa: S102
    return json.loads(out.getvalue().strip().splitlines()[-1])


@pytest.mark.reference
@pytest.mark.parametrize("version", [2, 3])
def test_names_that_are_not_utf8(tmp_path, version):
    require_reference()
    program = PROBE % {"archive": _archive(tmp_path, version), "bad": PMID_BAD, "ok": PMID_OK}
    ref = run_reference(program)
    ours = _ours(program)
    # where the reference answers, the answers are the same
    same = ["nameid_ok", "lookup_bytes", "lookup_ok", "getindom", "nameindom",
            "getindom_archive", "nameindom_archive", "lookupindom"]
    for key in same:
        assert ref[key][0] == "ok", (key, ref[key])
        assert ours[key] == ref[key], key
    # where it raises (a reference defect), ours answers with surrogate escapes
    bad = "sample.caf\udce9"
    assert ref["traverse"] == ["raised", "SystemError"]
    for key in ("children", "children_status", "nameid_bad", "nameall_bad"):
        assert ref[key] == ["raised", "UnicodeDecodeError"], key
    # after the archive's names and the anonymous metrics come the global derived
    # metrics of this process (PCP_DERIVED_CONFIG's, when the first context was made)
    assert ours["traverse"][0] == "ok"
    assert ours["traverse"][1][:4] == ["sample.ok", bad, "event.flags", "event.missed"]
    assert ours["children"] == ["ok", ["ok", "caf\udce9"]]
    assert ours["children_status"] == ["ok", [["ok", "caf\udce9"], [0, 0]]]
    assert ours["nameid_bad"] == ["ok", bad] and ours["nameall_bad"] == ["ok", [bad]]


def test_a_surrogate_escaped_name_looks_up_again(tmp_path):
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, _archive(tmp_path, 3))
    names: list = []
    ctx.pmTraversePMNS("", names.append)
    pmids = list(ctx.pmLookupName(names))
    assert pmids[:2] == [PMID_OK, PMID_BAD]
    assert [ctx.pmNameID(p) for p in pmids[:2]] == names[:2]


def test_names_decoded_together_are_each_name_decoded_alone():
    """pmGetChildren decodes a list of names in one call (pmapi._names_str): a name's
    bytes, valid UTF-8 or not, cut anywhere in a sequence, or holding a NUL, give what
    decoding it alone gives."""
    from hypothesis import given, strategies as st

    pieces = st.sampled_from([b"a", b"\xc3", b"\xa9", b"\xe2\x82", b"\xac", b"\xf0\x9f",
                              b"\x98\x80", b"\xff", b"\0", b".", b""])
    names = st.lists(st.lists(pieces, max_size=6).map(b"".join), max_size=8)

    @given(names)
    def check(batch):
        assert pmapi._names_str(batch) == [pmapi._name_str(n) for n in batch]

    check()
