"""pmdumplog -dilm output of an archive and of its copy made comparable (the round trip
tests of pcp.pmi.write_frame). What is masked, and why each must differ in a copy made
from a table:

- the order of descriptor and instance-domain sections: pmdumplog lists them in its
  hash tables' order, which follows the order of the records in the .meta file, and a
  table does not keep that order. Sections are sorted, their contents are not touched;
- the order of the value sets in a record and of the instances in a set: a table has
  one column order for all its rows, pmlogger's records each have their own. Sets and
  instances are sorted, the values are not touched;
- value sets with no value (an error code such as PM_ERR_APPVERSION, or "No values
  returned!"): a table has a cell per value, and no cell for a set that holds none;
  a record left with no set is dropped with them, and the record's metric count is
  the count of the sets kept;
- NaN values of FLOAT and DOUBLE metrics: a table's float column holds NaN where there
  is no value (pandas), so a logged NaN comes back as no value;
- the descriptors, instance domains and values of the metrics named in `masked`
  (event records: no table column holds them)."""
from __future__ import annotations

import re
from typing import Iterable, List

from tests.support.cliutil import run_tool

_SECTIONS = {"Descriptions for Metrics in the Log ...": "PMID:",
             "Instance Domains in the Log ...": "InDom:"}
_NAN = re.compile(r" value -?nan$")
RECORD = re.compile(r"^(\d\d:\d\d:\d\d\.\d+) +(\d+ metrics?|<mark>)$")


def dumplog(archive: str, flags: str = "-dilm") -> str:
    """PCP's pmdumplog of `archive` (-z: times in the archive's own zone)."""
    return run_tool("pmdumplog", "-z", flags, archive, check=True).stdout


def _sections(lines: List[str], i: int, starts: str) -> Iterable[str]:
    while i < len(lines) and lines[i].startswith(starts):
        j = i + 1
        while j < len(lines) and lines[j].strip() and not lines[j].startswith(starts):
            j += 1
        yield "\n".join(lines[i:j])
        i = j


def comparable(text: str, masked: Iterable[str] = ()) -> str:
    """`text` (pmdumplog -dilm) with what a copy cannot keep masked (see the module
    docstring); `masked` are PMIDs ("29.0.136") and instance domains ("29.10")."""
    masked = set(masked)
    lines = text.splitlines()
    out: List[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        starts = _SECTIONS.get(line)
        if starts is not None:
            # descriptors ("PMID: ...") or instance domains ("InDom: ..."), sorted
            out.append(line)
            sections = list(_sections(lines, i + 1, starts))
            i += 1 + sum(d.count("\n") + 1 for d in sections)
            out.extend(sorted(d for d in sections if d.split()[1] not in masked))
            continue
        match = RECORD.match(line)
        if match is None or match.group(2) == "<mark>":
            if line.strip():        # blank lines only separate, and dropped records leave theirs
                out.append(line)
            i += 1
            continue
        i += 1
        sets: List[List[str]] = []
        while i < len(lines) and lines[i].startswith("    "):
            if lines[i].startswith("     "):
                sets[-1].append(lines[i])
            else:
                sets.append([lines[i]])
            i += 1
        kept = []
        for head, *insts in sets:
            insts = [v for v in insts if not _NAN.search(v)]
            if head.split()[0] in masked or _NAN.search(head) \
                    or not (insts or " value " in head):
                continue
            kept.append("\n".join([head] + sorted(insts)))
        if kept:
            out.append("%s %d metrics" % (match.group(1), len(kept)))
            out.extend(sorted(kept))
    return "\n".join(out) + "\n"
