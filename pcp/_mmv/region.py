"""The mapped mmv file: created as libpcp_mmv creates it, written once, then updated
through typed memoryviews of the mapping.

libpcp_mmv's mmv_mapping_init unlinks the path (so that the PMDA reloads), creates it
anew with O_EXCL and mode 0644 under a umask of 022 (so always 0644), sizes it with
ftruncate and maps it shared. The header's second generation number is written last: a
reader that finds g1 != g2 knows the file is not ready.
"""
from __future__ import annotations

import mmap
import os
import struct
from typing import Dict, Optional

from pcp._core.config import pmGetConfig
from pcp._core.constants import MMV_FLAG_PROCESS

from pcp._mmv.layout import HEADER_G2_OFFSET, Layout

# memoryview formats of a value word, by MMV type: (format, item size)
VIEW_FORMATS: Dict[int, str] = {0: "i", 1: "I", 2: "q", 3: "Q", 4: "f", 5: "d"}


def stats_path(name: bytes) -> bytes:
    """mmv_stats_path: a relative name goes under $PCP_TMP_DIR/mmv."""
    name = name.split(b"\0", 1)[0]
    if name.startswith(b"/"):
        return name
    tmp = pmGetConfig("PCP_TMP_DIR") or ""
    return os.fsencode(tmp) + b"/mmv/" + name


class MappedFile:
    """One mapped mmv file and its typed views; ``close`` is mmv_stats_stop."""

    def __init__(self, path: bytes, mapping: mmap.mmap, layout: Layout, flags: int) -> None:
        self.path = path
        self.flags = flags
        self.layout = layout
        self.map: Optional[mmap.mmap] = mapping
        self.bytes_view: Optional[memoryview] = memoryview(mapping)
        self.views: Dict[str, memoryview] = {
            fmt: self.bytes_view.cast(fmt) for fmt in set(VIEW_FORMATS.values())}

    @classmethod
    def create(cls, name: bytes, layout: Layout, flags: int) -> Optional["MappedFile"]:
        """Create, size, map and fill the file; None where libpcp_mmv returns NULL."""
        path = stats_path(name)
        try:
            os.unlink(path)
        except OSError:
            pass
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        except OSError:
            return None
        try:
            os.fchmod(fd, 0o644)        # libpcp_mmv's umask makes it 0644 whatever ours is
            os.ftruncate(fd, len(layout.content))
            mapping = mmap.mmap(fd, len(layout.content), mmap.MAP_SHARED,
                                mmap.PROT_READ | mmap.PROT_WRITE)
        except (OSError, ValueError):
            return None
        finally:
            os.close(fd)
        mapping[:] = layout.content
        struct.pack_into("<Q", mapping, HEADER_G2_OFFSET, layout.generation)
        return cls(path, mapping, layout, flags)

    @property
    def live(self) -> bool:
        return self.map is not None

    def close(self) -> None:
        """Unmap (views released first, so any stale update fails over to the slow path,
        which then does nothing); a MMV_FLAG_PROCESS file is also unlinked."""
        if self.map is None:
            return
        if self.flags & MMV_FLAG_PROCESS:
            try:
                os.unlink(self.path)
            except OSError:
                pass
        for view in self.views.values():
            view.release()
        self.views = {}
        if self.bytes_view is not None:
            self.bytes_view.release()
            self.bytes_view = None
        self.map.close()
        self.map = None
