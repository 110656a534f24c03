"""Archives as libpcp 6.0.3 reads them where their bytes are odd: written byte by byte,
compared with the official binding on the same files."""
from __future__ import annotations

import pytest

from support import archive_bytes as ab
from support.difftest import require_reference, run_program

PMID_A, PMID_B = (29 << 22) | 1, (29 << 22) | 2

PROBE = r'''
import json
from pcp import pmapi
import cpmapi as c
ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, %(archive)r)
R = {}
def cat(name, f):
    try:
        R[name] = ["ok", f()]
    except pmapi.pmErr as e:
        R[name] = ["pmErr", e.args[0]]
    except Exception as e:
        R[name] = ["raised", type(e).__name__]
names = []
# (the derived metrics of the machine's configuration are left out: a later issue)
cat("traverse", lambda: [n for n in (ctx.pmTraversePMNS("", names.append), names)[1]
                         if n.startswith(("sample.", "event."))])
cat("children", lambda: ctx.pmGetChildren("sample"))
cat("nameid", lambda: [ctx.pmNameID(%(a)d), ctx.pmNameID(%(b)d)])
cat("lookup", lambda: list(ctx.pmLookupName(["sample.padded", "sample.plain"])))
pmids = ctx.pmLookupName(["sample.padded", "sample.plain"])
cat("fetch", lambda: [ctx.pmFetch(pmids).contents.get_numval(i) for i in range(2)])
print(json.dumps(R))
'''


def _padded_names_archive(tmp_path, version: int) -> str:
    """Metric names padded with NUL bytes inside their length, as some writers leave them."""
    sec = 1704412800
    base = str(tmp_path / ("padded%d" % version))
    with open(base + ".meta", "wb") as f:
        f.write(ab.label(version, -1, sec, 0)
                + ab.desc_record(PMID_A, 0, 0xFFFFFFFF, 3, 0, [b"sample.padded\0\0\0\0\0"])
                + ab.desc_record(PMID_B, 0, 0xFFFFFFFF, 3, 0, [b"sample.plain"]))
    with open(base + ".0", "wb") as f:
        f.write(ab.label(version, 0, sec, 0)
                + ab.data_record(version, sec + 1, 0, [(PMID_A, 1, 0, [(-1, 1)]),
                                                       (PMID_B, 1, 0, [(-1, 2)])]))
    return base


@pytest.mark.reference
@pytest.mark.parametrize("version", [2, 3])
def test_metric_names_end_at_their_first_nul(tmp_path, version):
    require_reference()
    program = PROBE % {"archive": _padded_names_archive(tmp_path, version),
                       "a": PMID_A, "b": PMID_B}
    ref = run_program(program, False)
    ours = run_program(program, True)
    assert ref["nameid"] == ["ok", ["sample.padded", "sample.plain"]]
    assert ours == ref
