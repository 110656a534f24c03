"""pcp.pmda and cpmda outside pmcd, on both bindings: cpmda's names and numbers, the
pmid/indom/units/uptime helpers, the Install outputs (domain_write, pmns_write), the
tables' KeyErrors, list and cache instance domains (lookups, iteration, the cache file
written under PCP_VAR_DIR), and pmdaAddLabels / pmdaAddNotes / pmdaAddLabelFlags."""
from __future__ import annotations

import pytest

from tests.support import difftest

pytestmark = pytest.mark.reference

SNIPPET = r'''
import io, os, contextlib, tempfile
os.environ["PCP_PYTHON_DOMAIN"] = "1"      # no log file, no pmcd
var = tempfile.mkdtemp()
os.mkdir(os.path.join(var, "config"))     # as installed: libpcp_pmda makes only config/pmda
os.environ["PCP_VAR_DIR"] = var
import cpmda
from pcp import pmda
from pcp.pmda import PMDA, pmdaMetric, pmdaIndom, pmdaInstid, pmdaUnits
R = {}
R["cpmda"] = sorted((k, getattr(cpmda, k)) for k in dir(cpmda)
                    if not k.startswith("_") and (k.isupper() or k.startswith("PMDA_")))
R["functions"] = sorted(k for k in dir(cpmda) if not k.startswith("_") and callable(getattr(cpmda, k)))
p = PMDA("modtest", 77)
R["ids"] = [p.pmid(3, 9), p.pmid(4095, 1023), p.pmid_build(5, 6, 7), p.pmid_cluster(p.pmid(12, 3)),
            p.indom(5), p.indom_build(9, 1 << 21), cpmda.pmda_pmid(1, 1)]
R["units"] = [p.units(1, -1, 0, 2, 3, 0), p.units(0, 1, 1, 0, 0, 1), cpmda.pmda_units(-8, 7, 0, 15, 0, 0)]
R["uptime"] = [p.uptime(s) for s in (0, 59, 3600, 86399, 86400, 90061, 3 * 86400 + 5)]
R["bad_args"] = [catch(p.pmid, "a", 1), catch(cpmda.set_fetch, 5), catch(cpmda.pmda_uptime, 1.5)]
units = pmdaUnits(0, 1, 0, 0, 3, 0)
m1 = pmdaMetric(p.pmid(0, 0), c_api.PM_TYPE_U32, c_api.PM_INDOM_NULL, c_api.PM_SEM_COUNTER, units)
m2 = pmdaMetric(p.pmid(1, 2), c_api.PM_TYPE_DOUBLE, p.indom(0), c_api.PM_SEM_INSTANT, units)
p.add_metric("modtest.first", m1, "one", "help one")
p.add_metric("other.second", m2)
R["dup_name"] = catch(p.add_metric, "modtest.first", m2)
R["dup_pmid"] = catch(p.add_metric, "modtest.third", m1)
R["names"] = [p.pmid_name_lookup(0, 0), p.pmid_name_lookup(1, 2), p.pmid_name_lookup(9, 9)]
R["desc"] = [m2.m_desc.pmid, m2.m_desc.type, m2.m_desc.indom, m2.m_desc.sem, m2.m_desc.units.dimTime]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    p.domain_write()
    p.pmns_write("root")
    p.pmns_write("modtest")
R["install"] = sorted(out.getvalue().splitlines())
colors = pmdaIndom(p.indom(0), [pmdaInstid(0, "red"), pmdaInstid(1, "green light"), pmdaInstid(7, "blue")])
p.add_indom(colors, "colours", "Some colours")
R["dup_indom"] = catch(p.add_indom, pmdaIndom(p.indom(0), None))
# (an unknown instance of a list indom is left out: the official binding reads past the
# end of its array then, and answers with whatever memory follows)
R["list"] = [list(colors), colors.inst_name_lookup(7), colors.it_numinst,
             catch(colors.cache_load), catch(colors.cache_mark_active), catch(colors.cache_resize, 3)]
vals = {"alpha": ctypes.c_int(10), "beta gamma": ctypes.c_int(20)}
cached = pmdaIndom(p.indom(1), vals)
p.add_indom(cached)
R["cache_iter"] = list(cached)
R["cache_lookup"] = [cached.inst_name_lookup(i) for i in range(3)]
R["inst_lookup"] = [ctypes.cast(p.inst_lookup(p.indom(1), i), POINTER(ctypes.c_int)).contents.value
                    if p.inst_lookup(p.indom(1), i) else None for i in range(3)]
R["inst_lookup_list"] = p.inst_lookup(p.indom(0), 0)
cached.cache_mark_inactive()
R["inactive"] = [list(cached), cached.inst_name_lookup(0)]
cached.cache_mark_active()
R["active"] = list(cached)
R["resize"] = [catch(cached.cache_resize, 1), catch(cached.cache_resize, 100)]
# (replace_indom of a cache indom is left out: the official binding then dies of SIGSEGV)
files = sorted(os.listdir(os.path.join(var, "config", "pmda")))
R["cache_files"] = files
R["cache_text"] = [[line.split(" ", 2)[::2] for line in open(os.path.join(var, "config", "pmda", f)).read().splitlines()]
                   for f in files]
empty = pmdaIndom(p.indom(2), None)
R["empty"] = [empty.it_numinst, list(empty), catch(empty.cache_load)]
labels = pmda.pmdaAddLabels(b'{"zeta":1,"alpha":{"x":[1,2]},"m":"s"}')
ls = labels.contents
R["labels"] = [ls.nlabels, ls.json, ls.jsonlen, ls.inst,
               [(l.name, l.namelen, l.flags, l.value, l.valuelen) for l in ls.labels[:ls.nlabels]]]
R["label_flags"] = [pmda.pmdaAddLabelFlags(labels, c_api.PM_LABEL_ITEM),
                    [l.flags for l in ls.labels[:ls.nlabels]]]
notes = pmda.pmdaAddNotes(b'{"n":true}')
R["notes"] = [notes.contents.nlabels, notes.contents.labels[0].flags]
R["bad_labels"] = [catch(pmda.pmdaAddLabels, b'{bad'), catch(pmda.pmdaAddLabels, b'[1]')]
R["context"] = catch(pmda.pmdaGetContext)
RESULT = R
'''


def test_pmda_module_outside_pmcd():
    difftest.require_reference()
    ref = difftest.assert_same(SNIPPET, parallel=True)
    assert "cpmda" in ref and ref["cache_files"] == ["77.1"]      # the whole snippet ran
