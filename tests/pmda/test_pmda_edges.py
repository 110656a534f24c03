"""A test PMDA (tests/pmda/pmdas/pmdaedge.python) under a private pmcd, on the official
binding and on this package: every metric type and string, the odd fetch callback
returns libpcp_pmda and cpmda handle their own way (tuples, None, exceptions, wrong types,
overflows, error pairs), list and cache instances with the fetch profile, stores of every
type and their refusals, labels and notes, dictionary texts, a failing refresh callback,
and the PMDA's log lines."""
from __future__ import annotations

import re

import pytest

from tests.pmda.pmcdrun import PrivatePmcd, masked_log, on_both
from tests.pmda.test_pmda_acceptance import _needs_private_pmcd

pytestmark = [pytest.mark.pmcd, pytest.mark.reference]

STEPS = [
    ("all", ["pminfo", "-dfTtlmx", "edge.type", "edge.odd", "edge.inst", "edge.stored"]),
    ("all_with_broken", ["pminfo", "-dTtlmx", "edge"]),
    ("instances", ["pminfo", "-f", "edge.inst"]),
    ("replies", ["pminfo", "-f", "edge.reply"]),
    ("profile", ["pmval", "-s", "1", "-i", "one two,five", "-f", "3", "edge.inst.list"]),
    ("profile_cache", ["pmval", "-s", "1", "-i", "beta", "edge.inst.cache"]),
    ("store_32", ["pmstore", "edge.type.t0", "12"]),
    ("store_32_refused", ["pmstore", "edge.type.t0", "-3"]),
    ("store_u32", ["pmstore", "edge.type.t1", "4294967295"]),
    ("store_64", ["pmstore", "edge.type.t2", "-1099511627776"]),
    ("store_u64", ["pmstore", "edge.type.t3", "18446744073709551615"]),
    ("store_float", ["pmstore", "edge.type.t4", "0.1"]),
    ("store_double", ["pmstore", "edge.type.t5", "1e300"]),
    ("store_string", ["pmstore", "edge.type.t6", "new text"]),
    ("store_list", ["pmstore", "-i", "zero,five", "edge.inst.list", "9"]),
    ("store_refused", ["pmstore", "edge.odd.none", "1"]),
    ("stored", ["pminfo", "-f", "edge.stored"]),
    ("refresh_fails", ["pminfo", "-f", "edge.broken.refresh"]),
    ("refresh_mixed", ["pminfo", "-f", "edge.broken.refresh", "edge.type.t0"]),
    ("instance_names", ["pminfo", "-f", "edge.inst.some"]),
    ("unknown_pmid", ["pminfo", "-f", "480.9.9"]),
    ("pmid_names", ["pminfo", "-m", "480.0.3"]),
    ("context", ["pminfo", "-f", "edge.context"]),
    ("context_again", ["pmprobe", "-v", "edge.context"]),
    ("unix_socket", ["pminfo@unix", "-f", "edge.context", "edge.type.t1"]),
]


# The cache indom's file as a C PMDA with pmdaCacheStoreKey keys may have left it:
# libpcp_pmda loads the keys and writes them back (odd hex and a name glued to "]"
# read its way); the PMDA's dict indom then adds beta.
CACHE_SEED = ("2 0 2147483647\n0 1700000000 [0A0b] alpha\n3 1700000001 [ff]gamma\n"
              "5 1700000002 [abc] delta\n")


def _run(tmp, interpreter):
    server = PrivatePmcd(tmp, "edge", 480, interpreter)
    cache_file = tmp / "var" / "config" / "pmda" / "480.1"
    cache_file.write_text(CACHE_SEED)
    out = {}
    try:
        out.update(server.install_steps())
        server.start()
        for key, argv in STEPS:
            out[key] = server.run(argv)
    finally:
        server.stop()
    out["log"] = masked_log(server.log("edge.log"))
    # the stamps of new entries are the time they were saved
    out["cache_file"] = re.sub(r"^(\d+) (?!170000000\d )\d+ ", r"\1 NOW ",
                               cache_file.read_text(), flags=re.M)
    return out


def _mask(text: str) -> str:
    # pmval's sample times
    return re.sub(r"\d\d:\d\d:\d\d\.\d{3}", "TIME", text)


def test_edge_pmda_matches_the_official_binding(tmp_path):
    _needs_private_pmcd()
    ref, ours = on_both(lambda side, python: _run(tmp_path / side, python))
    assert "edge.type.t6" in ref["all"] and "value" in ref["all"]
    assert "[ab] delta" in ref["cache_file"] and "0 NOW alpha" in ref["cache_file"]
    assert ours["cache_file"] == ref["cache_file"]
    for key in [k for k, _ in STEPS] + ["domain.h.python", "pmns.python"]:
        assert _mask(str(ours[key])) == _mask(str(ref[key])), key
    # tracebacks differ only in the file paths of the two bindings' modules; pmcd
    # numbers its client contexts by the free slot it finds, which depends on how soon
    # the previous client's slot was freed, and on a loaded machine the next client
    # can be current when the last one's end arrives (seen on the official binding:
    # "end of context 0 (current 1)"): both numbers are timing, on either binding
    def plain(line: str) -> str:
        line = re.sub(r'File "[^"]*", line \d+, in (\S+)', r"File in \1", line)
        return re.sub(r"end of context \d+ \(current \d+\)", "end of context N (current M)",
                      line)
    strip = [plain(line) for line in ref["log"]]
    mine = [plain(line) for line in ours["log"]]
    assert [l for l in mine if not l.startswith("  ")] == \
        [l for l in strip if not l.startswith("  ")]
