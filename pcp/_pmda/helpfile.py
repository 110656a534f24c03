"""PMDA help files: newhelp's <base>.dir index and <base>.pag texts, read as
libpcp_pmda's pmdaOpenHelp / pmdaGetHelp / pmdaGetInDomHelp read them.

<base>.dir holds native-order 12-byte records: a header (magic 0x50635068, a version word
0x3132xxxx, the entry count), then one (ident, oneline offset, help offset) per entry,
metrics first; an indom's ident is the pmInDom with bit 31 set. The offsets point at
NUL-terminated texts in <base>.pag."""
from __future__ import annotations

import errno
import struct
from typing import List, Optional, Tuple

from pcp._core.constants import PM_TEXT_ONELINE

_MAGIC = 0x50635068
_RECORD = struct.Struct("=III")


class HelpFile:
    """One opened help file."""

    def __init__(self, index: List[Tuple[int, int, int]], text: bytes) -> None:
        self.index = index
        self.text = text

    def _at(self, offset: int) -> Optional[bytes]:
        if offset >= len(self.text):
            return None
        end = self.text.find(b"\0", offset)
        return self.text[offset:end if end >= 0 else len(self.text)]

    def pmid_text(self, pmid: int, type_: int) -> Optional[bytes]:
        for ident, oneline, help_ in self.index:      # forwards, as pmdaGetHelp
            if ident == pmid:
                return self._at(oneline if type_ & PM_TEXT_ONELINE else help_)
        return None

    def indom_text(self, indom: int, type_: int) -> Optional[bytes]:
        key = indom | 0x80000000
        for ident, oneline, help_ in reversed(self.index):   # indoms are at the end
            if ident == key:
                return self._at(oneline if type_ & PM_TEXT_ONELINE else help_)
        return None


def open_help(base: str) -> Tuple[Optional[HelpFile], int]:
    """(the help file, 0) or (None, -errno) as pmdaOpenHelp fails."""
    try:
        with open(base + ".dir", "rb") as f:
            index_bytes = f.read()
    except OSError as exc:
        return None, -(exc.errno or errno.EIO)
    if len(index_bytes) < _RECORD.size:
        return None, -errno.EINVAL
    magic, version, numidx = _RECORD.unpack_from(index_bytes, 0)
    if magic != _MAGIC or (version & 0xffff0000) != 0x31320000:
        return None, -errno.EINVAL
    count = min(numidx, len(index_bytes) // _RECORD.size - 1)
    index = [_RECORD.unpack_from(index_bytes, _RECORD.size * (i + 1)) for i in range(count)]
    try:
        with open(base + ".pag", "rb") as f:
            text = f.read()
    except OSError as exc:
        return None, -(exc.errno or errno.EIO)
    return HelpFile(index, text), 0
