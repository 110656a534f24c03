"""The interface every kind of context provides (typing.Protocol, as psycopg's pq.abc
declares what each libpq implementation offers): the pmapi facade, Fleet and the CLI
talk to a context through it and never ask which kind they have. HostContext
(pcp._live.context) and ArchiveContext (pcp._archive.context) implement it; an operation
that makes no sense for a kind raises the pmErr libpcp gives (PM_ERR_NOTARCHIVE,
PM_ERR_NOTHOST, PM_ERR_MODE)."""
from __future__ import annotations

import functools

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Protocol, Sequence, Tuple
    # (pmid, type, indom, sem, units word), as the PDU and archive decoders give them
    DescTuple = Tuple[int, int, int, int, int]
    # (seconds, nanoseconds)
    Stamp = Tuple[int, int]
else:
    Protocol = object   # the classes below are interfaces for type checkers only


class Context(Protocol):
    """One PMAPI context: a source of names, descriptors, instances, help text, labels
    and values."""

    handle: int
    profile: Any            # pcp._libpcp.profile.Profile
    pmns_location: int      # PMNS_REMOTE or PMNS_ARCHIVE (pmGetPMNSLocation)
    features: int           # the pmcd connection's feature bits (0 for archives)

    def close(self) -> None: ...
    def duplicate(self, handle: int) -> "Context": ...
    def reconnect(self) -> int: ...
    def host_name(self) -> str: ...

    # ---- names and metadata
    def lookup_names(self, names: Sequence[bytes]) -> Tuple[int, List[int]]: ...
    def name_all(self, pmid: int) -> List[bytes]: ...
    def children(self, name: bytes, with_status: bool) -> Tuple[List[bytes], Optional[List[int]]]: ...
    def traverse(self, name: bytes) -> List[bytes]: ...
    def desc(self, pmid: int) -> DescTuple: ...
    def descs(self, pmids: Sequence[int]) -> List[DescTuple]: ...
    def instances(self, indom: int, inst: int = -1, name: bytes = b"") -> Tuple[List[int], List[bytes]]: ...
    def text(self, ident: int, level: int, indom: bool) -> bytes: ...
    def labels(self, ident: int, type_: int) -> List[Any]: ...

    # ---- values
    def set_mode(self, mode: int, when: Optional[Stamp], delta: Stamp, direction: int) -> None: ...
    def fetch(self, pmids: Sequence[int], highres: bool) -> Tuple[Any, int]: ...
    def store(self, arrays: Dict[str, Any], sec: int, usec: int) -> None: ...

    # ---- archives only
    def archive_label(self) -> Any: ...
    def archive_end(self) -> Stamp: ...
    def fetch_archive(self) -> Any: ...
    def instances_archive(self, indom: int) -> Tuple[List[int], List[bytes]]: ...
    def lookup_instance_archive(self, indom: int, name: bytes) -> int: ...
    def name_instance_archive(self, indom: int, inst: int) -> bytes: ...


# Every operation of the Protocol above: what `serialized` puts under the context's lock.
CONTEXT_OPERATIONS = tuple(name for name, value in vars(Context).items()
                           if callable(value) and not name.startswith("_"))


def serialized(cls: type) -> type:
    """Class decorator: each Context operation the class defines runs holding the
    instance's re-entrant `_lock` (which __init__ must create first), as libpcp holds a
    context's lock for each call. One request/reply exchange, or one archive
    read-and-advance, at a time per context; other contexts are not held up (each has
    its own lock, and socket and file waits release the GIL)."""
    for name in CONTEXT_OPERATIONS:
        method = cls.__dict__.get(name)
        if method is None or not callable(method) or getattr(method, "locks_itself", False):
            continue
        setattr(cls, name, _locked(method))
    return cls


def locks_itself(method: Any) -> Any:
    """Mark an operation that takes the context's lock in its own body (a hot path,
    where the wrapper's extra call would cost more than the lock: live pmFetch)."""
    method.locks_itself = True
    return method


def _locked(method: Any) -> Any:
    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)
    return call
