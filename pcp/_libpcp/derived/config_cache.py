"""The derived-metric configuration last found clean, remembered from one process to
the next (see pcp._libpcp.derived.registry).

What is remembered: the files a first context read (each one's name and bytes, in the
order read) and what their lines registered, (name, expression) and (name, attribute,
value), in order. It is used only when the files read now are byte for byte those, and
only by the same parser: the key holds this package's version, the API level served and
the size and modification time of every module whose code decides what parses. A
configuration that reported anything is never remembered, so a bad file is parsed, and
reported, every time, as libpcp does.

The file lives in $PCP_NATIVE_CACHE_DIR, else $XDG_CACHE_HOME/pcp-native, else
~/.cache/pcp-native; PCP_NATIVE_CACHE_DIR set to "" turns the cache off. A file that is
not the user's own, or that others may write, is not read (its journal is registered as
a configuration would be). Any failure to read or write it is silent: the configuration
is then parsed, as without it."""
from __future__ import annotations

import marshal
import os

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import List, Optional, Tuple, Union

    Files = List[Tuple[bytes, Union[bytes, int]]]

_FORMAT = 1
_FILE_NAME = "derived-config.marshal"
# the modules whose code decides what parses and how (a changed one forgets the cache)
_PARSER_MODULES = ("parser.py", "lexer.py", "nodes.py", "regex.py", "registry.py",
                   "../../_core/units.py", "../../_core/level.py")


def cache_dir() -> Optional[str]:
    """Where the cache file lives, None when the cache is off."""
    where = os.environ.get("PCP_NATIVE_CACHE_DIR")
    if where is not None:
        return where or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pcp-native")


def _key(path: bytes) -> Optional[tuple]:
    # pylint: disable-next=import-outside-toplevel
    from pcp import __version__
    from pcp._core.level import API_LEVEL  # pylint: disable=import-outside-toplevel

    here = os.path.dirname(os.path.abspath(__file__))
    sources = []
    for name in _PARSER_MODULES:
        try:
            st = os.stat(os.path.join(here, name))
        except OSError:
            return None
        sources.append((st.st_size, st.st_mtime_ns))
    return (_FORMAT, __version__, tuple(API_LEVEL), tuple(sources), path)


def recall(path: bytes, files: Files) -> Optional[List[tuple]]:
    """The journal remembered for `files` read from `path`, or None."""
    where = cache_dir()
    if where is None:
        return None
    try:
        with open(os.path.join(where, _FILE_NAME), "rb") as f:
            st = os.fstat(f.fileno())
            if st.st_uid != os.getuid() or st.st_mode & 0o022:
                return None         # only a file no one else could have written
            key, cached_files, journal = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if cached_files != files or key != _key(path):
        return None
    return journal


def remember(path: bytes, files: Files, journal: List[tuple]) -> None:
    """Keep `journal`, what `files` (read from `path`) registered with nothing reported."""
    where = cache_dir()
    key = _key(path)
    if where is None or key is None:
        return
    target = os.path.join(where, _FILE_NAME)
    temporary = "%s.%d.tmp" % (target, os.getpid())
    try:
        os.makedirs(where, mode=0o700, exist_ok=True)
        # the user's alone, whatever the umask (recall reads no other)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(fd, "wb") as f:
            marshal.dump((key, files, journal), f)
        os.replace(temporary, target)       # whole or not at all, for other processes
    except (OSError, ValueError):
        try:
            os.unlink(temporary)
        except OSError:
            pass
