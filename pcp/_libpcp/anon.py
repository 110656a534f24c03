"""The anonymous metrics libpcp defines in every context (event.flags, event.missed):
they resolve, describe and fetch locally, exactly as libpcp answers for them."""
from __future__ import annotations

from pcp._core.constants import PM_ERR_NOAGENT, PM_ID_NULL
from pcp._core.wire import DYNAMIC_DOMAIN

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Tuple

# name -> (pmid, oneline, help); both are U32, singular, discrete, dimensionless.
ANON: Dict[bytes, Tuple[int, bytes, bytes]] = {
    b"event.flags": ((DYNAMIC_DOMAIN << 22) | 1, b"Flags for event records",
                     b"An anonymous derived metric that is used to encode the event flags\n"
                     b"associated with event records.   See pmUnpackEventRecords(3)."),
    b"event.missed": ((DYNAMIC_DOMAIN << 22) | 2, b"Count of missed event records",
                      b"An anonymous derived metric that is used to encode the number of\n"
                      b"event records missed because either the PMDA could not keep up\n"
                      b"or the PMAPI client did not collect the event records fast\n"
                      b"enough.  See pmUnpackEventRecords(3)."),
}
BY_PMID: Dict[int, bytes] = {v[0]: k for k, v in ANON.items()}
DESC = (1, PM_ID_NULL, 4, 0)  # type U32, indom NULL, sem DISCRETE, units none


def desc(pmid: int) -> Optional[Tuple[int, int, int, int, int]]:
    if pmid in BY_PMID:
        return (pmid,) + DESC
    return None


def is_derived(pmid: int) -> bool:
    """libpcp's IS_DERIVED: domain 511, item not 0, and not cluster bit 2048, which
    marks a derived metric logged by pmlogger (an archive's own metric from then on)."""
    return (pmid != PM_ID_NULL and (pmid >> 22) & 0x1FF == DYNAMIC_DOMAIN
            and (pmid >> 10) & 2048 == 0 and (pmid & 0x3FF) != 0)


def children(name: bytes) -> List[Tuple[bytes, int]]:
    """(child, status) pairs this table adds below a PMNS node (status 1 = non-leaf)."""
    prefix = name + b"." if name else b""
    seen: Dict[bytes, int] = {}
    for full in ANON:
        if full.startswith(prefix):
            rest = full[len(prefix):]
            head, _, tail = rest.partition(b".")
            seen.setdefault(head, 1 if tail else 0)
    return list(seen.items())


def stitch_children(names: List[bytes], status: Optional[List[int]],
                    extra: List[Tuple[bytes, int]],
                    with_status: bool) -> Tuple[List[bytes], Optional[List[int]]]:
    """libpcp's stitch_list: children that libpcp adds locally (anonymous or derived
    metrics) after the source's, without repeats."""
    for child, st in extra:
        if child not in names:
            names.append(child)
            if status is not None:
                status.append(st)
    if with_status and status is None:
        status = [0] * len(names)
    return names, status


def leaves(name: bytes) -> List[bytes]:
    if not name:
        return list(ANON)
    return [full for full in ANON if full == name or full.startswith(name + b".")]


def text(pmid: int, help_text: bool) -> Optional[bytes]:
    name = BY_PMID.get(pmid)
    if name is None:
        return None
    return ANON[name][2] if help_text else ANON[name][1]


def fix_client_side_sets(flat) -> None:
    """libpcp's post-fetch rewrite: pmcd answers PM_ERR_NOAGENT for the anonymous
    metrics, which libpcp reports as having no values (numval 0). libpcp 6.0.3 leaves
    PM_ERR_NOAGENT alone for PM_ID_NULL (protocol.md 9.3 step 7 describes 7.x)."""
    numval = flat.numval
    if PM_ERR_NOAGENT not in numval:
        return
    for i, pmid in enumerate(flat.pmid):
        if numval[i] == PM_ERR_NOAGENT and pmid in BY_PMID:
            numval[i] = flat._c.numval[i] = 0  # a per-set column: values stay unfilled
