"""matchinst()'s POSIX extended regular expressions, compiled and run by the C library
(csrc/derived.c), so patterns mean what they mean to libpcp and its errors read the
same ("Unmatched ( or \\(")."""
from __future__ import annotations

from pcp._core.native import ffi, lib

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, Optional, Tuple

_ERRLEN = 128       # libpcp's buffer for regerror()


def compile_pattern(pattern: bytes) -> Tuple[Optional[Any], Optional[str]]:
    """(compiled, None), or (None, regerror's message)."""
    errbuf = ffi.new("char[]", _ERRLEN)
    handle = lib.pcp_derived_regex_new(pattern, errbuf, _ERRLEN)
    if handle == ffi.NULL:
        return None, ffi.string(errbuf).decode("utf-8", "replace")
    return ffi.gc(handle, lib.pcp_derived_regex_free), None


def matches(compiled: Any, text: bytes) -> bool:
    return bool(lib.pcp_derived_regex_match(compiled, text))
