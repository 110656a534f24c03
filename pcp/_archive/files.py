"""Archive files on disk: libpcp's name resolution, compressed files, memory mapping.

An archive ``B`` is ``B.meta``, optionally ``B.index`` and data volumes ``B.0`` ...
``B.N``; any of them may be compressed (archive-format.md section 2). This module finds
them the way libpcp 6.0.3 does and hands out their bytes as read-only buffers: plain
files are memory-mapped, compressed ones are decompressed once into an unlinked
temporary file which is then mapped, so memory use does not grow with the archive.
"""
from __future__ import annotations

import errno as _errno
import mmap
import os

from pcp._core.constants import PM_ERR_LOGFILE, PM_ERR_LOGREC
from pcp._core.errors import pmErr
from pcp._core.native import ffi

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import BinaryIO, Callable, Dict, List, Optional

# libpcp 6.0.3's search order; ".zst" is known to libpcp only from 6.3.2 and is tried
# last here (an extension over the reference, which cannot open such volumes).
COMPRESSION_SUFFIXES = (".xz", ".lzma", ".bz2", ".bz", ".gz", ".Z", ".z", ".zst")


# The decompressors are imported when a compressed file is first opened: most archives
# are not, and importing them all cost a tool's start-up several milliseconds.

def _open_lzma(path: str) -> BinaryIO:
    import lzma
    return lzma.open(path, "rb")


def _open_bz2(path: str) -> BinaryIO:
    import bz2
    return bz2.open(path, "rb")


def _open_gzip(path: str) -> BinaryIO:
    import gzip
    return gzip.open(path, "rb")


def _external(argv: List[str]) -> Callable[[str], BinaryIO]:
    """A decompressor run as a process, as libpcp does for the formats it does not link."""
    def opener(path: str) -> BinaryIO:
        import shutil
        import subprocess
        import tempfile

        if shutil.which(argv[0]) is None:
            raise pmErr(PM_ERR_LOGREC)
        out = tempfile.TemporaryFile()
        with open(path, "rb") as src:
            proc = subprocess.run(argv, stdin=src, stdout=out, stderr=subprocess.DEVNULL)
        if proc.returncode != 0:
            out.close()
            raise pmErr(PM_ERR_LOGREC)
        out.seek(0)
        return out
    return opener


def _open_zstd(path: str) -> BinaryIO:
    try:
        import zstandard  # type: ignore[import-not-found]
    except ImportError:
        return _external(["zstd", "-dcq"])(path)
    return zstandard.ZstdDecompressor().stream_reader(open(path, "rb"), closefd=True)


_DECOMPRESSORS: Dict[str, Callable[[str], BinaryIO]] = {
    ".xz": _open_lzma, ".lzma": _open_lzma, ".bz2": _open_bz2, ".bz": _open_bz2,
    ".gz": _open_gzip, ".z": _open_gzip, ".Z": _external(["gzip", "-dc"]), ".zst": _open_zstd,
}


def compression_suffix(name: str) -> Optional[str]:
    if not name.endswith(COMPRESSION_SUFFIXES):
        return None             # most names: one test instead of eight
    for suffix in COMPRESSION_SUFFIXES:
        if name.endswith(suffix):
            return suffix
    return None


class MappedFile:
    """The whole (uncompressed) content of one archive file as a read-only buffer.

    ``ptr`` is a cffi pointer for the C decoders, ``data`` the buffer for slicing."""

    __slots__ = ("path", "size", "data", "ptr", "_mmap", "_tmp", "_kept_lo", "_kept_hi")

    # Pages further than this behind a sequential reader are handed back to the kernel,
    # so reading a large archive does not grow the resident set (RSS counts mapped
    # pages). Pages fault back in from the file if they are needed again.
    RELEASE_SLACK = 8 << 20
    # A file this small is read rather than mapped: one read costs less than setting up
    # and tearing down a mapping (opening a small archive is mostly such fixed costs).
    COPY_BELOW = 64 << 10

    def __init__(self, path: str, copy: bool = False) -> None:
        """``copy``: read the whole file into a bytes object instead of mapping it, for a
        small file that is read once and whose bytes are kept (the .meta)."""
        self.path = path
        self._tmp: Optional[BinaryIO] = None
        self._mmap: Optional[mmap.mmap] = None
        suffix = compression_suffix(path)
        tmp: Optional[BinaryIO] = None
        if suffix is None:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        else:
            tmp = self._decompress(path, suffix)
            fd = tmp.fileno()
        try:
            size = os.fstat(fd).st_size
            self.size = size
            if copy or size <= self.COPY_BELOW:
                self.data: object = _read_all(fd, size)
                self.size = len(self.data)   # type: ignore[arg-type]
            elif size > 0:
                self._mmap = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
                self.data = self._mmap
            else:
                self.data = b""
        finally:
            if tmp is not None:
                tmp.close()
            else:
                os.close(fd)
        self.ptr = ffi.from_buffer("uint8_t[]", self.data)
        self._kept_lo = 0
        self._kept_hi = self.size

    @staticmethod
    def _decompress(path: str, suffix: str) -> BinaryIO:
        import lzma
        import shutil
        import tempfile

        out = tempfile.TemporaryFile()
        try:
            with _DECOMPRESSORS[suffix](path) as src:
                shutil.copyfileobj(src, out, 1 << 20)
        except pmErr:
            out.close()
            raise
        except (OSError, EOFError, lzma.LZMAError, ValueError):
            out.close()
            raise pmErr(PM_ERR_LOGREC)
        out.flush()
        return out

    def slice(self, start: int, stop: int) -> bytes:
        return bytes(self.data[start:stop])  # type: ignore[index]

    def release_pages(self, start: int, stop: int) -> None:
        """Drop the mapped pages of [start, stop) from this process's resident set."""
        m = self._mmap
        if m is None or not hasattr(m, "madvise"):
            return
        page = mmap.PAGESIZE
        start = (start + page - 1) // page * page
        # whole pages only, except that the file's last page may be partial
        stop = self.size if stop >= self.size else stop // page * page
        if stop > start:
            m.madvise(mmap.MADV_DONTNEED, start, stop - start)

    def release_behind(self, pos: int, backward: bool) -> None:
        """A reader is at `pos` going forwards (or backwards): release what it left."""
        slack = self.RELEASE_SLACK
        # a reader that jumped back (an interpolating scan after pmGetArchiveEnd read the
        # end, say) restarts the count from where it is now
        if not backward and pos < self._kept_lo:
            self._kept_lo = max(pos - slack, 0)
        elif backward and pos > self._kept_hi:
            self._kept_hi = min(pos + slack, self.size)
        if not backward:
            if pos - self._kept_lo > 2 * slack:
                self.release_pages(self._kept_lo, pos - slack)
                self._kept_lo = pos - slack
        elif self._kept_hi - pos > 2 * slack:
            self.release_pages(pos + slack, self._kept_hi)
            self._kept_hi = pos + slack

    def release_all(self) -> None:
        self.release_pages(0, self.size)
        self._kept_lo = 0
        self._kept_hi = self.size

    def close(self) -> None:
        if self.ptr is not None:
            ffi.release(self.ptr)
            self.ptr = None
        if self._mmap is not None:
            self._mmap.close()
            self._mmap = None
        self.data = b""


def _read_all(fd: int, size: int) -> bytes:
    """The file's `size` bytes from its start (fewer if it has shrunk since)."""
    data = os.pread(fd, size, 0)
    while len(data) < size:             # a short read: the rest, until the file ends
        more = os.pread(fd, size - len(data), len(data))
        if not more:
            break
        data += more
    return data


def existing_file(path: str) -> Optional[str]:
    """``path`` itself if it exists, else the first compressed variant that does."""
    if os.access(path, os.R_OK):
        return path
    for suffix in COMPRESSION_SUFFIXES:
        if os.access(path + suffix, os.R_OK):
            return path + suffix
    return None


def strip_archive_suffix(name: str) -> Optional[str]:
    """libpcp's base-name rule for one file name: drop a compression suffix, then
    ``.meta``, ``.index`` or ``.<digits>``; None if the name is no archive file."""
    suffix = compression_suffix(name)
    if suffix is not None:
        name = name[: -len(suffix)]
    head, dot, tail = name.rpartition(".")
    if not dot:
        return None
    if tail in ("meta", "index") or (tail.isdigit() and tail.isascii()):
        return head
    return None


class ArchiveFiles:
    """The files of one archive found on disk."""

    __slots__ = ("base", "meta", "index", "volumes")

    def __init__(self, base: str, meta: str, index: Optional[str],
                 volumes: Optional[List[int]] = None) -> None:
        self.base = base                # directory + "/" + base name
        self.meta = meta                # path of the .meta file as found
        self.index = index              # path of the .index file as found, if any
        self.volumes: List[int] = [] if volumes is None else volumes   # volume numbers, ascending

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArchiveFiles):
            return NotImplemented
        return (self.base, self.meta, self.index, self.volumes) == \
            (other.base, other.meta, other.index, other.volumes)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "ArchiveFiles(base=%r, meta=%r, index=%r, volumes=%r)" % (
            self.base, self.meta, self.index, self.volumes)

    def volume_path(self, vol: int) -> Optional[str]:
        return existing_file("%s.%d" % (self.base, vol))


def find_archive(name: str) -> ArchiveFiles:
    """Resolve a user-supplied archive name to its files (archive-format.md 2.2)."""
    # POSIX dirname/basename: trailing slashes do not make an empty base name
    trimmed = name.rstrip("/") or name
    directory = os.path.dirname(trimmed) or "."
    base = os.path.basename(trimmed)
    stripped = strip_archive_suffix(base)
    if stripped is not None and existing_file(name) is not None:
        base = stripped
    try:
        entries = os.listdir(directory)
    except OSError as e:
        raise pmErr(-(e.errno or _errno.ENOENT))
    meta: Optional[str] = None
    index: Optional[str] = None
    volumes = set()
    exists = False
    prefix = base + "."
    for entry in entries:
        if not entry.startswith(prefix):
            continue            # the other files of the directory, at the cost of one test
        suffix = compression_suffix(entry)
        plain = entry[: -len(suffix)] if suffix else entry
        head, dot, tail = plain.rpartition(".")
        if not dot or head != base:
            continue
        path = os.path.join(directory, entry)
        if tail == "index":
            exists = True
            index = _prefer_plain(index, path)
        elif tail == "meta":
            exists = True
            meta = _prefer_plain(meta, path)
        elif tail.isdigit() and tail.isascii():
            exists = True
            volumes.add(int(tail))
    if not volumes or meta is None:
        raise pmErr(PM_ERR_LOGFILE if exists else -_errno.ENOENT)
    return ArchiveFiles(os.path.join(directory, base), meta, index, sorted(volumes))


def _prefer_plain(current: Optional[str], candidate: str) -> str:
    # With both a plain and a compressed copy libpcp takes whichever the directory lists
    # last; prefer the plain file, which is the copy a user has just decompressed.
    if current is None:
        return candidate
    if compression_suffix(current) is not None and compression_suffix(candidate) is None:
        return candidate
    return current


def expand_names(spec: str) -> List[str]:
    """A comma-separated list whose directory elements stand for every archive in them."""
    names: List[str] = []
    elements = spec.split(",")
    if elements and elements[-1] == "":
        elements.pop()          # libpcp stops at the string's end: a trailing comma adds nothing
    for element in elements:
        if os.path.isdir(element):
            for entry in sorted(os.listdir(element)):
                suffix = compression_suffix(entry)
                plain = entry[: -len(suffix)] if suffix else entry
                if plain.endswith(".meta"):
                    names.append(os.path.join(element, plain[: -len(".meta")]))
        else:
            names.append(element)
    return names
