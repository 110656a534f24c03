"""PCP's own Python PMDAs (pmdatrivial, pmdasimple) under a private pmcd, once on the
official binding's interpreter and once on this package: the same pminfo -dfTtlm output,
instance lists, pmstore outcomes and PMDA log lines."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict

import pytest

from tests.pmda.pmcdrun import PMCD, PMDAS, PrivatePmcd, masked_log, on_both

pytestmark = [pytest.mark.pmcd, pytest.mark.reference]


def _needs_private_pmcd() -> None:
    missing = not os.path.exists(PMCD) or not (PMDAS / "trivial").is_dir()
    if missing or os.geteuid() != 0:
        why = "a private pmcd needs root, pmcd and PCP's PMDA sources"
        if os.environ.get("CI"):
            pytest.fail(why + " (CI is set)")
        pytest.skip(why)


RECORDED = ("pmval", "logmeta", "logdata")      # PrivatePmcd.record's outputs


def _session(tmp: Path, interpreter: str, pmda: str, domain: int, steps,
             files: Dict[str, str] = None, record=None) -> Dict[str, object]:
    server = PrivatePmcd(tmp, pmda, domain, interpreter, files)
    out: Dict[str, object] = {}
    try:
        out.update(server.install_steps())
        server.start()
        for key, argv in steps:
            out[key] = server.run(argv)
        if record is not None:
            out.update(server.record(*record))
    finally:
        server.stop()
    out["log"] = masked_log(server.log("%s.log" % pmda))
    out["cache"] = sorted(p.name for p in (tmp / "var" / "config" / "pmda").iterdir())
    return out


def _mask_times(text: str) -> str:
    """CPU times and clock readings move between runs: compared by shape."""
    text = re.sub(r"value \d+(\.\d+)?(e[-+]\d+)?(?=\n)", lambda m: "value FLOAT"
                  if "." in m.group(0) or "e" in m.group(0) else m.group(0), text)
    return text


def test_pmdatrivial_runs_unchanged(tmp_path):
    _needs_private_pmcd()
    steps = [("pminfo", ["pminfo", "-dfTtlm", "trivial"]),
             ("store", ["pmstore", "trivial.time", "1"]),
             ("names", ["pminfo", "trivial"])]
    ref, ours = on_both(lambda side, python: _session(tmp_path / side, python, "trivial", 250,
                                                      steps, record=("trivial", ["trivial.time"])))
    assert "#define TRIVIAL 250" in ref["domain.h.python"]
    assert "trivial.time" in ref["logmeta"] and "value N" in ref["logdata"]
    for key in ("names", "store", "log", "cache", "domain.h.python", "pmns.python") + RECORDED:
        assert ours[key] == ref[key], key
    assert "value" in ref["pminfo"]
    masked = [re.sub(r"value \d+", "value NUM", str(r["pminfo"])) for r in (ref, ours)]
    assert masked[1] == masked[0]


SIMPLE_STEPS = [
    ("pminfo", ["pminfo", "-dfTtlm", "simple"]),
    ("again", ["pminfo", "-f", "simple.color", "simple.numfetch"]),
    ("indom", ["pminfo", "-f", "simple.now"]),
    ("store_color", ["pmstore", "-i", "red,blue", "simple.color", "41"]),
    ("store_bad", ["pmstore", "simple.color", "-5"]),
    ("store_numfetch", ["pmstore", "simple.numfetch", "7"]),
    ("store_time", ["pmstore", "simple.time.user", "3"]),
    ("after", ["pminfo", "-f", "simple.color", "simple.numfetch"]),
    ("labels", ["pminfo", "-l", "simple.now", "simple.color"]),
    ("traverse", ["pminfo", "-m", "simple"]),
    ("pmid_name", ["pminfo", "-m", "253.0.1"]),
    ("unknown", ["pminfo", "-f", "simple.nosuch"]),
]


def test_pmdasimple_runs_unchanged(tmp_path):
    _needs_private_pmcd()
    files = {"simple.conf": "sec,min,hour\n"}
    ref, ours = on_both(lambda side, python: _session(
        tmp_path / side, python, "simple", 253, SIMPLE_STEPS, files,
        record=("simple", ["simple.color", "simple.now"])))
    assert "simple.now" in ref["logmeta"] and "samples:   3" in ref["pmval"]
    for key in [k for k, _ in SIMPLE_STEPS] + list(RECORDED):
        a, b = _mask_times(str(ref[key])), _mask_times(str(ours[key]))
        if key in ("pminfo", "indom"):
            # simple.now's values are the clock's seconds, minutes and hours
            a = re.sub(r"(\[\d+ or \"\w+\"\] value )\d+", r"\1NUM", a)
            b = re.sub(r"(\[\d+ or \"\w+\"\] value )\d+", r"\1NUM", b)
        assert b == a, key
    assert "Number of pmFetch operations." in str(ref["pminfo"])     # from help.pag
    for key in ("log", "domain.h.python", "pmns.python"):
        assert ours[key] == ref[key], key
    assert ours["cache"] == ref["cache"]
