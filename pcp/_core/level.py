"""The PCP API level this process serves: which official binding (and libpcp) it behaves as.

The official python3-pcp is built for one PCP; this package serves whichever the machine has.
The level is chosen once per process, before any module surface is built:

1. ``PCP_NATIVE_API_LEVEL`` in the environment ("6.0", "6.3" or "7.2"; "7" means 7.2), for a
   machine without PCP or a user who wants another level;
2. otherwise the installed PCP's version, ``PCP_VERSION`` in pcp.conf (``$PCP_CONF``, else
   ``$PCP_DIR/etc/pcp.conf``, else ``/etc/pcp.conf``), mapped to the level whose behaviour
   that version's binding has (``FIRST_VERSION``): up to 6.2.1 serve 6.0, 6.2.2 to 6.x serve
   6.3, 7.x serve 7.2 (older than 6.0 serves 6.0). PCP's history decides the 6.2 line: the
   calls whose *behaviour* 6.3 changed (tm.struct_time's day of the year, 6.2.1;
   pmLookupText's str and pmLoadDerivedConfig's count, 6.2.2) changed in 6.2, while the rest
   of 6.3's differences only add names (results' get_sec, 6.3.0; float timevals, 6.3.2; the
   context flags, 6.1.1; domain_probe, 6.2.1), which a 6.2.2 script does not miss;
3. no readable pcp.conf: the newest level, as a new script on a machine without PCP expects.

Each level is checked against Debian's binding of that version: 6.0.3, 6.3.8 and 7.2.2.
A name a later PCP added to a C module (cpmapi, cmmv ...) or dropped from it is listed once,
in constants.SINCE or constants.UNTIL, and served through :func:`served`; the Python modules
test ``API_LEVEL`` where they differ.
"""
from __future__ import annotations

import os

from . import constants
from .config import read_pcp_conf

__all__ = ["LEVELS", "REFERENCE_VERSIONS", "FIRST_VERSION", "API_LEVEL", "PCP_VERSION", "parse_level",
           "level_for_version", "served", "error_symbols"]

#: The levels served, oldest first.
LEVELS = ((6, 0), (6, 3), (7, 2))
#: The Debian python3-pcp each level is checked against.
REFERENCE_VERSIONS = {(6, 0): "6.0.3", (6, 3): "6.3.8", (7, 2): "7.2.2"}
#: The first PCP release served at each level: the first whose binding behaves as that
#: level's reference where the two levels' references behave differently.
FIRST_VERSION = {(6, 0): (0, 0, 0), (6, 3): (6, 2, 2), (7, 2): (7, 0, 0)}

_ENV = "PCP_NATIVE_API_LEVEL"


def _version_tuple(text: str):
    parts = []
    for piece in text.strip().split(".")[:3]:
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def level_for_version(version: str):
    """The level an installed PCP of this version is served at (None when unparseable)."""
    v = _version_tuple(version)
    if len(v) < 2:
        return None
    v = (v + (0,))[:3]
    chosen = LEVELS[0]
    for level in LEVELS:
        if v >= FIRST_VERSION[level]:
            chosen = level
    return chosen


def parse_level(text: str):
    """An override's level: "6.0", "6.3", "7.2" or "7"; ValueError for anything else."""
    v = _version_tuple(text)
    if v == (7,):
        return (7, 2)
    if v[:2] in LEVELS and len(v) == 2:
        return v[:2]
    raise ValueError("%s=%r: expected one of %s" % (
        _ENV, text, ", ".join("%d.%d" % lv for lv in LEVELS)))


def _choose():
    """(the level, the PCP version libpcp would report): the installed version when it chose
    the level, else the level's reference version."""
    override = os.environ.get(_ENV)
    if override:
        level = parse_level(override)
        return level, REFERENCE_VERSIONS[level]
    installed = read_pcp_conf().get("PCP_VERSION")
    if installed:
        level = level_for_version(installed)
        if level is not None:
            return level, installed
    return LEVELS[-1], REFERENCE_VERSIONS[LEVELS[-1]]


#: The level of this process, (major, minor): compare with tuples, e.g. ``API_LEVEL >= (6, 3)``.
#: PCP_VERSION: the release whose libpcp this process stands for, as tools print it ("-V").
API_LEVEL, PCP_VERSION = _choose()


def served(name: str, level=None) -> bool:
    """Whether the official C module of this API level (default: this process's) has this
    name (constants.SINCE and constants.UNTIL list the names PCP added and dropped)."""
    level = API_LEVEL if level is None else level
    return (constants.SINCE.get(name, level) <= level
            and not constants.UNTIL.get(name, (99, 0)) <= level)


def error_symbols(level=None) -> dict:
    """pmErrSymDict as the binding of this API level has it: its codes, in its order."""
    return {code: name for code, name in constants.pmErrSymDict.items()
            if served(name, level)}

