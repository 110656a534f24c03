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
import stat

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
        try:
            if suffix is None:
                fd = open_fd(path)
            else:
                tmp = self._decompress(path, suffix)
                fd = tmp.fileno()
            try:
                info = os.fstat(fd)
                size = info.st_size
                self.size = size
                if not stat.S_ISREG(info.st_mode):
                    # a device or a FIFO reports no size: libpcp reads the label from
                    # its stream (/dev/zero gives a bad label, /dev/null an empty file);
                    # a label is far shorter than what is read here. A directory's read
                    # fails with EISDIR, as libpcp's label read does.
                    self.data = os.read(fd, self.COPY_BELOW)
                    self.size = len(self.data)   # type: ignore[arg-type]
                elif copy or size <= self.COPY_BELOW:
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
        except OSError as e:
            # libpcp's error is the failed call's errno (fopen's, or fread's through
            # __pmLogChkLabel: EISDIR for a directory in a file's place)
            raise pmErr(-(e.errno or _errno.EIO)) from None
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


def open_fd(path: str) -> int:
    """A read-only descriptor of a plain file, opened without waiting: libpcp's fopen of
    a FIFO waits for a writer, this package reads it as it is (empty when nobody writes),
    as the reading side of a pipe whose writer has gone. O_NONBLOCK changes nothing else
    for the files an archive is made of."""
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))


def _compressed_variant(path: str) -> Optional[str]:
    """__pmCompressedFileIndex: the first ``path + suffix`` that is readable or that
    access() refuses for any reason but ENOENT or ENOTDIR (a compressed file that exists
    but cannot be read is its error's to report when it is opened)."""
    for suffix in COMPRESSION_SUFFIXES[:-1]:        # libpcp 6.0.3 knows no .zst
        candidate = path + suffix
        try:
            if os.access(candidate, os.R_OK):
                return candidate
            os.stat(candidate)
        except OSError as e:
            if e.errno in (_errno.ENOENT, _errno.ENOTDIR):
                continue
        return candidate                # exists, not readable: EACCES, ELOOP, ...
    # the extension over libpcp 6.0.3: a .zst volume, when nothing else matched
    zst = path + ".zst"
    return zst if os.access(zst, os.R_OK) else None


def fopen_name(path: str) -> str:
    """The file __pmFopen opens for `path`: `path` itself, unless it has no compression
    suffix and does not exist (ENOENT; a symbolic link loop is ELOOP, an unreadable file
    EACCES: those are opened and fail as themselves), when a compressed variant found by
    _compressed_variant is opened instead."""
    if compression_suffix(path) is None:
        try:
            os.stat(path)
        except OSError as e:
            if e.errno == _errno.ENOENT:
                return _compressed_variant(path) or path
    return path


def probe_open(path: str) -> None:
    """__pmLogFindOpen opens an archive's .index and .meta as it meets them in the
    directory: the first that cannot be opened ends the search with its errno."""
    try:
        os.close(open_fd(fopen_name(path)))
    except OSError as e:
        raise pmErr(-(e.errno or _errno.EIO)) from None


def existing_file(path: str) -> Optional[str]:
    """``path`` itself if it is readable, else the first compressed variant that
    __pmCompressedFileIndex would take; None when neither (__pmLogFindOpen's test of
    whether a name is a file of the archive rather than its base name)."""
    if os.access(path, os.R_OK):
        return path
    return _compressed_variant(path)


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

    def volume_path(self, vol: int) -> str:
        """The file __pmLogChangeVol opens for data volume `vol` (which may not exist)."""
        return fopen_name("%s.%d" % (self.base, vol))


def find_archive(name: str) -> ArchiveFiles:
    """Resolve a user-supplied archive name to its files (archive-format.md 2.2), as
    libpcp 6.0.3's __pmLogFindOpen (src/libpcp/src/logutil.c) does: a name that exists as
    a file (or as a compressed file) is taken for one file of the archive and stripped to
    the base name; the directory is read in its own order, each .index and .meta of the
    base opened as it is met (the first that fails ends the search with its errno:
    EACCES, ELOOP, ENOENT for a dangling link), and the data volumes counted. No volume
    or no .meta: PM_ERR_LOGFILE if any file of the base was seen, else ENOENT. A
    directory that cannot be listed is its errno (EACCES for one nobody may read)."""
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
        raise pmErr(-(e.errno or _errno.ENOENT)) from None
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
            probe_open(path)
            index = _prefer_plain(index, path)
        elif tail == "meta":
            exists = True
            probe_open(path)
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


def spec_text(name: object) -> str:
    """An archive name given as str, bytes (a name that is not UTF-8) or a path object,
    as the str the readers take (bytes through os.fsdecode, which gives them back)."""
    if isinstance(name, (bytes, os.PathLike)):
        return os.fsdecode(name)
    return str(name)


def expand_names(spec: str) -> List[str]:
    """The archive names of a comma-separated list, each directory standing for every
    archive in it (the names of its .meta files), as libpcp 6.0.3's expandArchiveList and
    initarchive (src/libpcp/src/context.c) make them: an element that cannot be listed
    as a directory (a file, a name that does not exist, a directory nobody may read) is
    a name as it stands, an empty element included; the expanded list is joined with
    commas and split again, and a last empty element (the list ended in a comma) adds
    nothing. An empty result (only directories without archives) is PM_ERR_LOGFILE
    there; so is a list of nothing but commas, on which libpcp 6.0.3 dereferences a NULL
    archive (SIGSEGV)."""
    elements = spec.split(",")
    if elements[-1] == "":
        elements.pop()          # the loop stops at the string's end: "a," is "a", "" nothing
    names: List[str] = []
    for element in elements:
        try:
            entries = os.listdir(element)
        except OSError:
            names.append(element)
            continue
        # sorted: the archives' metadata is loaded into one table in this order (libpcp
        # keeps a table per archive and takes readdir's order)
        for entry in sorted(entries):
            suffix = compression_suffix(entry)
            plain = entry[: -len(suffix)] if suffix else entry
            if plain.endswith(".meta"):
                names.append(os.path.join(element, plain[: -len(".meta")]))
    opened = ",".join(names).split(",") if names else []
    if opened and opened[-1] == "":
        opened.pop()
    if not opened:
        raise pmErr(PM_ERR_LOGFILE)
    return opened
