"""The PCP API level this process serves: which official binding (and libpcp) it behaves as.

The official python3-pcp is built for one PCP; this package serves whichever the machine has.
The level is chosen once per process, before any module surface is built:

1. ``PCP_NATIVE_API_LEVEL`` in the environment ("6.0", "6.3" or "7.2"; "7" means 7.2), for a
   machine without PCP or a user who wants another level;
2. otherwise the installed PCP's version, ``PCP_VERSION`` in pcp.conf (``$PCP_CONF``, else
   ``$PCP_DIR/etc/pcp.conf``, else ``/etc/pcp.conf``), mapped to the newest level not above it
   (6.0.x-6.2.x serve 6.0, 6.3.x-6.x serve 6.3, 7.x serve 7.2; older than 6.0 serves 6.0);
3. no readable pcp.conf: the newest level, as a new script on a machine without PCP expects.

Each level is checked against Debian's binding of that version: 6.0.3, 6.3.8 and 7.2.2.
"""
from __future__ import annotations

import os

from . import constants
from .config import read_pcp_conf

__all__ = ["LEVELS", "REFERENCE_VERSIONS", "API_LEVEL", "parse_level", "level_for_version",
           "served", "error_symbols"]

#: The levels served, oldest first.
LEVELS = ((6, 0), (6, 3), (7, 2))
#: The Debian python3-pcp each level is checked against.
REFERENCE_VERSIONS = {(6, 0): "6.0.3", (6, 3): "6.3.8", (7, 2): "7.2.2"}

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
    chosen = LEVELS[0]
    for level in LEVELS:
        if v[:2] >= level or (level[0] == 7 and v[0] >= 7):
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
    override = os.environ.get(_ENV)
    if override:
        return parse_level(override)
    installed = read_pcp_conf().get("PCP_VERSION")
    if installed:
        level = level_for_version(installed)
        if level is not None:
            return level
    return LEVELS[-1]


#: The level of this process, (major, minor): compare with tuples, e.g. ``API_LEVEL >= (6, 3)``.
API_LEVEL = _choose()


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

