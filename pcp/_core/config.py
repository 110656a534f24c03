"""PCP configuration lookup (pmGetConfig): the environment first, then pcp.conf."""
from __future__ import annotations

import os
import threading

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Dict, Optional, Tuple

__all__ = ["pmGetConfig", "pcp_conf_path", "read_pcp_conf"]

_lock = threading.Lock()
# (path, mtime_ns, size) -> parsed values; re-read when PCP_CONF/PCP_DIR or the file changes.
_cache: Tuple[Optional[Tuple[str, int, int]], Dict[str, str]] = (None, {})


def pcp_conf_path() -> str:
    """$PCP_CONF, else $PCP_DIR/etc/pcp.conf, else /etc/pcp.conf (or Homebrew's copy)."""
    conf = os.environ.get("PCP_CONF")
    if conf is not None:
        return conf
    pcp_dir = os.environ.get("PCP_DIR")
    if pcp_dir is not None:
        return "%s/etc/pcp.conf" % pcp_dir
    if not os.access("/etc/pcp.conf", os.R_OK) and os.access("/usr/local/etc/pcp.conf", os.R_OK):
        return "/usr/local/etc/pcp.conf"
    return "/etc/pcp.conf"


def _parse(text: str) -> Dict[str, str]:
    values: Dict[str, str] = {}
    for line in text.split("\n"):
        # libpcp: skip comments and lines without '='; no trimming, no ${VAR} expansion
        # (pcp.conf values are literal; the shell-side pcp.env does any expansion).
        if line.startswith("#") or "=" not in line:
            continue
        name, value = line.split("=", 1)
        # A value wrapped in matching quotes ("gawk --posix") loses them.
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif value in ("'", '"'):
            value = ""
        # libpcp only sets names that are still unset, so the first occurrence wins.
        values.setdefault(name, value)
    return values


def read_pcp_conf(path: Optional[str] = None) -> Dict[str, str]:
    """The name -> value pairs of pcp.conf (empty when it cannot be read)."""
    global _cache
    path = path or pcp_conf_path()
    try:
        st = os.stat(path)
    except OSError:
        return {}
    key = (path, st.st_mtime_ns, st.st_size)
    with _lock:
        if _cache[0] == key:
            return _cache[1]
    try:
        with open(path, "r", encoding="utf-8", errors="surrogateescape", newline="") as f:
            values = _parse(f.read())
    except OSError:
        return {}
    with _lock:
        _cache = (key, values)
    return values


def pmGetConfig(name: str) -> Optional[str]:
    """Value of a PCP configuration variable, like libpcp's pmGetOptionalConfig.

    An environment variable of that name wins; otherwise the value from pcp.conf;
    None when neither has it.
    """
    if isinstance(name, bytes):
        name = name.decode("utf-8", "surrogateescape")
    value = os.environ.get(name)
    if value is not None:
        return value
    return read_pcp_conf().get(name)
