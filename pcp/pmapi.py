"""Drop-in replacement for the official `pcp.pmapi` module, with no libpcp underneath.

Names, signatures, return shapes, exception types and error codes follow the official
binding; the work is done by pcp-native's own protocol session and C codec.
``__implementation__`` is "pcp-native" (the official module has no such name), so a
program can tell which binding it runs on.
"""
from __future__ import annotations

import array
import ctypes
import datetime as _datetime
import errno
import os
import sys  # noqa: F401 (a name of the official module)
import threading
import time
# The official module imports these ctypes names and scripts written against it use them
# through it (pmapi.c_char_p, pmapi.POINTER ...): the same names here.
from ctypes import (CDLL, CFUNCTYPE, POINTER, Structure, Union, addressof,  # noqa: F401
                    byref, c_char, c_char_p, c_double, c_float, c_int, c_int32, c_int64,
                    c_long, c_uint, c_uint32, c_uint64, c_void_p, cast, pointer, sizeof)

import cpmapi as c_api
from pcp import __implementation__, __version__  # noqa: F401 (which binding this is)
from pcp._core import errors as _errors, structs as _structs, units as _units
from pcp._core.abc import Context
from pcp._core.cint import wrap_int32 as _wrap_int32
from pcp._core.errors import pmErr, pmErrStr as _pmErrStr, print_callback_error
from pcp._core.level import API_LEVEL as _API_LEVEL
from pcp._core.structs import (c_suseconds_t, c_time_t, get_indom, pmAtomValue,  # noqa: F401
                               pmDesc, pmDescPtr, pmHighResLogLabel, pmID, pmInDom, pmLabel,
                               pmLabelPtr, pmLabelSet, pmLogLabel, pmUnits, pmValueBlock,
                               timespec, timeval, tm)
from pcp._decode import result as _result_module
from pcp._decode.result import (LP_pmHighResResult, LP_pmResult, flat_of, pmHighResResult, pmResult,
                                pmValue, pmValueSet, store_arrays, usec_of)
from pcp._libpcp import strings as _strings, values as _values
from pcp._libpcp.anon import is_derived as _is_derived
from pcp._libpcp.derived import registry as _derived
from pcp._libpcp.derived.context import DerivedContext, fetches_plain as _fetches_plain
from pcp._libpcp.usage import pmUsageErr

if _API_LEVEL >= (7, 2):
    # 7.x's name for the timeval-stamped result of PCP 6 (pmResult has a timespec)
    from pcp._decode.result import pmResult_v2  # noqa: F401

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    # typing's Union under another name: the module's Union is ctypes', as in the
    # official module
    from typing import Any, Callable, Dict, List, Optional, Tuple, Union as _TUnion
    from pcp._decode import events as _events

# Imported where first needed rather than here, so that a tool's start-up does not pay
# for what it may never use: pcp._live (sockets) for host contexts, pcp._decode.events
# for event records, json for labels, and pcp._libpcp's options (command lines), zones,
# pmns (PMNS files), fetchgroup, metricspec and printvalue.

__all__ = [
    "pmErr", "pmUsageErr", "pmContext", "pmResult", "pmValueSet",
    "pmValue", "pmValueBlock", "pmAtomValue", "pmUnits", "pmDesc", "pmDescPtr", "pmID",
    "pmInDom", "pmLabel", "pmLabelSet", "pmLogLabel", "timeval",
    "timespec", "tm", "get_indom",
] + (["pmResult_v2"] if _API_LEVEL >= (7, 2) else ["pmHighResResult", "pmHighResLogLabel"])

integer_types = (int,)
text_type = str

# PCP 6.3's module imports the datetime class and math's modf where 6.0.3's imports the
# datetime module: scripts reach them as pmapi.datetime (pcp/_core/level.py)
if _API_LEVEL >= (6, 3):
    from datetime import datetime
    from math import modf  # noqa: F401
else:
    datetime = _datetime

_PM_TYPE_32, _PM_TYPE_U32, _PM_TYPE_64, _PM_TYPE_U64 = 0, 1, 2, 3
_PM_TYPE_FLOAT, _PM_TYPE_DOUBLE, _PM_TYPE_STRING = 4, 5, 6


class _Registry:
    """Context handles as libpcp numbers them (0, 1, 2, ... never reused) and the
    "current context" that pmWhichContext reports, which libpcp keeps per thread: a
    thread that has used no context has none."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.next_handle = 0
        self.contexts: Dict[int, Context] = {}
        self._thread = threading.local()

    @property
    def current(self) -> int:
        """This thread's current context handle (-1: none)."""
        return getattr(self._thread, "current", -1)

    @current.setter
    def current(self, handle: int) -> None:
        self._thread.current = handle

    def allocate(self) -> int:
        """The next context handle."""
        with self.lock:
            handle = self.next_handle
            self.next_handle += 1
            return handle


_registry = _Registry()


def _as_bytes(name: _TUnion[str, bytes]) -> bytes:
    return name if isinstance(name, bytes) else name.encode("utf-8", "surrogateescape")


def _visit(names: List[bytes], callback: Callable[[str], Any]) -> None:
    """pmTraversePMNS's calls of the callback: the official binding's C walk
    (cpmapi's pmnsDecodeCallback) prints a callback's exception and goes on."""
    for n in names:
        try:
            callback(_name_str(n))
        except BaseException as err:  # pylint: disable=broad-except
            print_callback_error(err)


def _name_str(name: bytes) -> str:
    """A metric name as str: UTF-8, as the official binding decodes it; bytes that are
    not UTF-8 (a damaged or foreign archive, a PMDA writing Latin-1) become surrogate
    escapes (PEP 383) instead of the UnicodeDecodeError the official binding raises, so a
    walk of the PMNS is not stopped by one bad name and every name it gives can be
    looked up again (names are encoded back the same way)."""
    return name.decode("utf-8", "surrogateescape")


# array typecodes of the ctypes integer types a pmID array may be made of (the official
# binding's pmLookupName gives c_uint arrays), where the two have the same size
_ARRAY_CODES = {ctype: code for ctype, code in (
    (ctypes.c_uint, "I"), (ctypes.c_int, "i"), (ctypes.c_ulong, "L"), (ctypes.c_long, "l"),
    (ctypes.c_ulonglong, "Q"), (ctypes.c_longlong, "q"))
    if ctypes.sizeof(ctype) == array.array(code).itemsize}


def _pmid_list(pmidA: Any) -> Tuple[int, ...]:
    if isinstance(pmidA, int):
        return (pmidA,)
    if isinstance(pmidA, ctypes.Array):
        code = _ARRAY_CODES.get(pmidA._type_)
        if code is not None:
            # iterating a ctypes array makes an object per element: most of a pmFetch of
            # hundreds of metrics. One copy of its memory instead, and the pmIDs of the
            # last array seen again when the copy is the same (a fetch loop's request).
            global _last_pmids  # pylint: disable=global-statement
            key = (code, bytes(pmidA))
            last = _last_pmids
            if last[0] == key:
                return last[1]
            pmids = tuple(array.array(code, key[1]))
            _last_pmids = (key, pmids)
            return pmids
    return tuple(pmidA)


_last_pmids: Tuple[Any, Tuple[int, ...]] = (None, ())


# modules imported where first needed, kept once imported (an object going at the
# interpreter's exit may still use them when imports no longer work)
_late_modules: Dict[str, Any] = {}


def _zones() -> Any:
    """pcp._libpcp.zones, imported with the first zone asked for."""
    module = _late_modules.get("zones")
    if module is None:
        from pcp._libpcp import zones as module  # pylint: disable=import-outside-toplevel

        _late_modules["zones"] = module
    return module


def _options() -> Any:
    """pcp._libpcp.options, imported with the first command line or debug option."""
    module = _late_modules.get("options")
    if module is None:
        from pcp._libpcp import options as module  # pylint: disable=import-outside-toplevel

        _late_modules["options"] = module
    return module


# the last pmFetch request seen and whether it is plain (fetches_plain): a fetch loop
# asks the same pmIDs again, so the check is made once per distinct request
_last_request: Tuple[Tuple[int, ...], bool] = ((), True)


def _json_loads(text: Any) -> Any:
    import json  # pylint: disable=import-outside-toplevel

    return json.loads(text)


class pmContext(object):
    """A source of metrics: pmContext(c_api.PM_CONTEXT_HOST, "local:")."""

    # ---- properties and lifetime -------------------------------------------------

    type = property(lambda self: self._type, None, None, None)
    target = property(lambda self: self._target, None, None, None)
    ctx = property(lambda self: self._ctx, None, None, None)

    def __init__(self, typed: int = c_api.PM_CONTEXT_HOST, target: Any = "local:") -> None:
        self._type = typed
        self._target = target
        self._ctx = c_api.PM_ERR_NOCONTEXT
        self._host: Optional[Context] = None
        if isinstance(target, str) and not target:
            # the official binding hands "" to ctypes as a str, which ctypes refuses
            raise ctypes.ArgumentError("argument 2: TypeError: wrong type")
        if isinstance(target, str):
            # the official binding hands libpcp target.encode('utf-8'): a name with bytes
            # that are not UTF-8 (os.fsdecode's surrogates) raises UnicodeEncodeError
            # there; such a name is given as bytes
            target.encode("utf-8")
        kind = typed & 0xFF
        if kind == c_api.PM_CONTEXT_ARCHIVE:
            self._open_archive(typed, target)
            return
        if kind == c_api.PM_CONTEXT_LOCAL:
            self._open_local(typed)
            return
        if kind != c_api.PM_CONTEXT_HOST:
            raise pmErr(c_api.PM_ERR_NOCONTEXT, [target])
        if target is None:
            raise pmErr(c_api.PM_ERR_NOCONTEXT, [target])
        spec = target.decode("utf-8") if isinstance(target, bytes) else target
        if not spec:
            # libpcp refuses a host context with an empty host name.
            raise pmErr(c_api.PM_ERR_NOTHOST, [target])
        from pcp._live.context import HostContext  # pylint: disable=import-outside-toplevel
        from pcp._live.hostspec import redact_hostspec  # pylint: disable=import-outside-toplevel

        handle = _registry.allocate()
        try:
            self._host = DerivedContext(HostContext(handle, spec, typed & ~0xFF))
        except pmErr as e:
            # deliberate difference: the official binding shows the whole spec, password
            # too; not chained to the context's own error, as the official raises one
            raise pmErr(e.code, [redact_hostspec(target)]) from None
        self._ctx = handle
        _registry.contexts[handle] = self._host
        _registry.current = handle

    def _open_archive(self, typed: int, target: Any) -> None:
        if target is None:
            raise pmErr(c_api.PM_ERR_NOCONTEXT, [target])
        name = target.decode("utf-8", "surrogateescape") if isinstance(target, bytes) else str(target)
        from pcp._archive.context import ArchiveContext  # pylint: disable=import-outside-toplevel

        handle = _registry.allocate()
        try:
            self._host = DerivedContext(ArchiveContext(handle, name, typed & ~0xFF))
        except pmErr as e:
            raise pmErr(e.code, [target]) from None     # not chained: as the official
        self._ctx = handle
        _registry.contexts[handle] = self._host
        _registry.current = handle

    def _open_local(self, typed: int) -> None:
        """The PMDAs of the local table, each the daemon build of its DSO run as a child
        process (see pcp._local), with the local PMNS: no pmcd involved."""
        from pcp._local.context import LocalContext  # pylint: disable=import-outside-toplevel

        handle = _registry.allocate()
        try:
            self._host = DerivedContext(LocalContext(handle, typed & ~0xFF))
        except pmErr as e:
            raise pmErr(e.code, [None]) from None     # pmcd.conf unreadable: as the official
        self._ctx = handle
        _registry.contexts[handle] = self._host
        _registry.current = handle

    def __del__(self) -> None:
        self._destroy()

    # Pickling keeps what the official binding's instance holds: the type, the target
    # and the context handle, not the context itself. Unpickled in the same process (or
    # in a child forked after the context was made) the object works on that same
    # context, and destroys it when it goes, as the official one does; in any other
    # process the handle names no context there and every call raises
    # pmErr(PM_ERR_NOCONTEXT).
    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_host", None)
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        handle = self.__dict__.get("_ctx", c_api.PM_ERR_NOCONTEXT)
        self._host = _registry.contexts.get(handle) if isinstance(handle, int) else None

    def _destroy(self) -> None:
        host = getattr(self, "_host", None)
        if host is not None:
            self._host = None
            # an unpickled copy shares its context: whichever goes first destroys it
            if not host.destroyed:
                host.destroyed = True
                host.close()
                _registry.contexts.pop(host.handle, None)
                if _registry.current == host.handle:
                    _registry.current = -1

    def __enter__(self) -> "pmContext":
        return self

    def __exit__(self, *exc: Any) -> None:
        self._destroy()

    def _use(self) -> Context:
        host = self._host
        if host is None or host.destroyed:
            # never opened, destroyed, or destroyed by an unpickled copy sharing it
            raise pmErr(c_api.PM_ERR_NOCONTEXT)
        _registry._thread.current = self._ctx     # its handle (a hot path: no property)
        return host

    def _fetch_target(self, pmidA: Any) -> Tuple[Context, Tuple[int, ...]]:
        """pmFetch's context and pmIDs: the context under the derived-metric layer when
        the request names no derived metric (the layer would pass it down unchanged;
        skipping it saves a fetch of a few metrics a sixth of its Python work)."""
        global _last_request  # pylint: disable=global-statement
        host = self._use()
        pmids = _pmid_list(pmidA)
        if type(host) is DerivedContext:
            last = _last_request
            if last[0] is pmids or last[0] == pmids:
                plain = last[1]
            else:
                plain = _fetches_plain(pmids)
                _last_request = (pmids, plain)
            if plain:
                return host.inner, pmids
        return host, pmids

    @classmethod
    def fromOptions(cls, options: Any, argv: Any, typed: int = 0, index: int = 0) -> "pmContext":
        """A context from a tool's command line: parse argv with the options declared on
        `options` (unless `typed` names the context type, for the index'th of several
        hosts or archives), open the source they name (local: by default), then set the
        reporting zone, the time window and, for an archive, the initial position and
        interval. Raises pmUsageErr when the options are wrong (or asked for --version)."""
        if typed is None or typed <= 0:
            options.need_reset = True
            if c_api.pmGetOptionsFromList(argv):
                raise pmUsageErr
            typed = options.pmGetOptionContext()
        if typed == c_api.PM_CONTEXT_ARCHIVE:
            source = options.pmGetOptionArchives()[index]
        elif typed == c_api.PM_CONTEXT_HOST:
            source = options.pmGetOptionHosts()[index]
        elif typed == c_api.PM_CONTEXT_LOCAL:
            source = None
        elif options.pmGetOptionOrigin() is not None:
            source = options.pmGetOptionArchives()[index]
            typed = c_api.PM_CONTEXT_ARCHIVE
        else:
            typed = c_api.PM_CONTEXT_HOST
            source = "local:"
        context = cls(typed, source)
        if c_api.pmSetContextOptions(context.ctx, options.mode, options.delta):
            raise pmUsageErr
        return context

    @staticmethod
    def set_connect_options(options: Any, source: Any, speclocal: Any) -> Tuple[Any, Any]:
        """The context type and source the options name (or, when they name none, that
        `source` names: a path is an archive, "@" a local context, else a host), recorded
        in the options, which are then closed (pmEndOptions)."""
        context = None
        if c_api.pmGetOptionArchives():
            context = c_api.PM_CONTEXT_ARCHIVE
            options.pmSetOptionContext(c_api.PM_CONTEXT_ARCHIVE)
            source = options.pmGetOptionArchives()[0]
        elif c_api.pmGetOptionHosts():
            context = c_api.PM_CONTEXT_HOST
            options.pmSetOptionContext(c_api.PM_CONTEXT_HOST)
            source = options.pmGetOptionHosts()[0]
        elif c_api.pmGetOptionLocalPMDA():
            context = c_api.PM_CONTEXT_LOCAL
            options.pmSetOptionContext(c_api.PM_CONTEXT_LOCAL)
            source = None
        if not context:
            if "/" in source:
                context = c_api.PM_CONTEXT_ARCHIVE
                options.pmSetOptionArchive(source)
                options.pmSetOptionContext(c_api.PM_CONTEXT_ARCHIVE)
            elif source != "@":
                context = c_api.PM_CONTEXT_HOST
                options.pmSetOptionHost(source)
                options.pmSetOptionContext(c_api.PM_CONTEXT_HOST)
            else:
                context = c_api.PM_CONTEXT_LOCAL
                options.pmSetOptionLocalPMDA()
                options.pmSetOptionContext(c_api.PM_CONTEXT_LOCAL)
                source = None
        if context == c_api.PM_CONTEXT_LOCAL and speclocal:
            for spec in filter(None, speclocal.split(";")):
                options.pmSetOptionSpecLocal(spec)
        flags = options.pmGetOptionFlags()
        options.pmSetOptionFlags(flags | c_api.PM_OPTFLAG_DONE)
        c_api.pmEndOptions()
        return context, source

    # ---- PMNS ------------------------------------------------------------------------

    def pmGetChildren(self, name: _TUnion[str, bytes]) -> Optional[List[str]]:
        """Names of the PMNS children of `name` (None when it has none or is a leaf)."""
        names, _ = self._names().children(_as_bytes(name), False)
        if not names:
            return None
        return [n.decode("utf-8", "surrogateescape") for n in names]  # _name_str, inline

    def pmGetChildrenStatus(self, name: _TUnion[str, bytes]):
        """(children, status) below `name`: status 1 for a non-leaf child, 0 for a leaf; (None,
        None) when there are none."""
        names, status = self._names().children(_as_bytes(name), True)
        if not names:
            return None, None
        return [_name_str(n) for n in names], list(status or [0] * len(names))

    def pmGetPMNSLocation(self) -> int:
        """Where this context's names come from: PMNS_LOCAL (a loaded PMNS file),
        PMNS_REMOTE (pmcd) or PMNS_ARCHIVE."""
        host = self._use()
        if _pmns_loaded():
            if sys.modules["pcp._libpcp.pmns"].LOADED is None:
                raise pmErr(c_api.PM_ERR_NOPMNS)
            return c_api.PMNS_LOCAL
        return host.pmns_location

    def _names(self) -> Any:
        """What answers this context's name operations: the context, whose PMNS is the
        loaded one when there is one (every context's, as in libpcp), with the derived
        metrics added."""
        return self._use()

    def pmLoadNameSpace(self, filename: Any) -> int:
        """Load a PMNS file (PMNS(5), read as it is, a pmid may have several names) for
        every name operation of the process, as libpcp's pmLoadNameSpace does."""
        self._use()
        name = filename.decode("utf-8", "surrogateescape") if isinstance(filename, bytes) \
            else filename
        from pcp._libpcp import pmns as _pmns  # pylint: disable=import-outside-toplevel

        return _pmns.load(name, True, False)

    def pmUnLoadNameSpace(self) -> None:
        """Drop the loaded PMNS: names come from each context's source again."""
        self._use()
        from pcp._libpcp import pmns as _pmns  # pylint: disable=import-outside-toplevel

        _pmns.unload()

    def pmLookupName(self, nameA: Any, relaxed: int = 0):
        """The pmIDs of metric names (a name or a sequence of names), in order. With `relaxed`,
        unknown names give PM_ID_NULL instead of raising pmErr(PM_ERR_NAME)."""
        source = self._names()
        if isinstance(nameA, (str, bytes)):
            nameA = [nameA]
        names = [n if type(n) is bytes else n.encode("utf-8", "surrogateescape") for n in nameA]
        n = len(names)
        try:
            if n == 0:
                raise pmErr(c_api.PM_ERR_TOOSMALL)
            if type(source) is DerivedContext and not _pmns_loaded():
                # the context's PMNS asked directly; the derived layer only when that
                # answer leaves names unresolved (what DerivedContext.lookup_names does)
                try:
                    resolved, pmids = source.inner.lookup_names(names)
                except pmErr as e:
                    resolved, pmids = source.complete_names(names, 0, (), e)
                else:
                    if c_api.PM_ID_NULL in pmids:
                        resolved, pmids = source.complete_names(names, resolved, pmids, None)
            else:
                resolved, pmids = source.lookup_names(names)
        except pmErr as e:
            # an archive's non-leaf name comes with PM_ID_NULL filled in, as libpcp does
            filled = e.args[1] if len(e.args) > 1 and isinstance(e.args[1], list) else ()
            raise pmErr(e.code, (c_uint * n)(*filled))
        pmidA = (c_uint * n)(*pmids)
        if n == 1 and resolved == 0:
            raise pmErr(c_api.PM_ERR_NAME, pmidA)
        if relaxed == 0 and resolved != n:
            bad = [name for (name, pmid) in zip(nameA, pmidA) if pmid == c_api.PM_ID_NULL]
            raise pmErr(c_api.PM_ERR_NAME, bad)
        return pmidA

    def _name_all(self, pmid: int) -> List[bytes]:
        """The names of a pmID: the context's PMNS asked directly when the derived layer
        would only pass the question on (not a derived pmID, no PMNS loaded)."""
        host = self._names()
        if type(host) is DerivedContext and not _is_derived(pmid) and not _pmns_loaded():
            return host.inner.name_all(pmid)
        return host.name_all(pmid)

    def pmNameAll(self, pmid: int) -> List[str]:
        """Every name of a pmID (a metric may have aliases in the PMNS)."""
        return [_name_str(n) for n in self._name_all(_uint_arg(pmid))]

    def pmNameID(self, pmid: int) -> str:
        """One name of a pmID (pmErr PM_ERR_PMID when it has none)."""
        return _name_str(self._name_all(_uint_arg(pmid))[0])

    def pmTraversePMNS(self, name: _TUnion[str, bytes], callback: Callable[[str], Any]) -> None:
        """Call `callback(name)` for every leaf name below `name` (the whole PMNS for "").
        An exception the callback raises is printed (its traceback on stderr, as an
        uncaught one) and the walk goes on, as the official binding's C walk does."""
        source = self._names()
        try:
            names = source.traverse(_as_bytes(name))
        except pmErr as e:
            found = e.args[1] if len(e.args) > 1 and isinstance(e.args[1], list) else []
            if e.code != c_api.PM_ERR_NAME or found:
                # libpcp reports the names found before the failure, then fails
                _visit(found, callback)
                raise pmErr(e.code) from None
            names = []
        if not names:
            raise pmErr(c_api.PM_ERR_NAME)
        _visit(names, callback)

    def pmRegisterDerived(self, name: _TUnion[str, bytes], expr: _TUnion[str, bytes]) -> None:
        """Register a global derived metric `name` computed by `expr` (pmRegisterDerived(3)),
        then reconnect this context so it sees it. A syntax error raises
        pmErr(PM_ERR_CONV, pmRegisterDerivedMetric's message)."""
        bname = name if isinstance(name, bytes) else name.encode("utf-8")
        bexpr = expr if isinstance(expr, bytes) else expr.encode("utf-8")
        _derived.REGISTRY.init()
        pos = _derived.REGISTRY.register(bname, bexpr)
        if pos is not None:
            raise pmErr(c_api.PM_ERR_CONV, _derived.error_message(
                bname, bexpr, pos, _derived.REGISTRY.errmsg))
        self.pmReconnectContext()

    def pmLoadDerivedConfig(self, fname: _TUnion[str, bytes]) -> Optional[int]:
        """Register the derived metrics of a file, a directory of files, or a colon list
        of them (pmLoadDerivedConfig(3)), then reconnect this context. From level 6.3 the
        number of metrics registered is returned (6.0.3 returns None)."""
        path = fname if isinstance(fname, bytes) else fname.encode("utf-8")
        _derived.REGISTRY.init()
        # the current context: 7.2's "#control context_limit=" sets its limit
        sts = _derived.load_path(_derived.REGISTRY, path, recover=False,
                                 context=self._host if self._host is not None
                                 and not self._host.destroyed else None)
        if sts < 0:
            raise pmErr(sts)
        self.pmReconnectContext()
        return sts if _API_LEVEL >= (6, 3) else None

    @staticmethod
    def pmDerivedErrStr() -> Optional[str]:
        """The official binding declares no result type for libpcp's pmDerivedErrStr, so
        ctypes hands it an int and the call always fails with AttributeError; the same
        happens here. The message itself is in the pmErr that pmRegisterDerived raises."""
        getattr(0, "decode")        # AttributeError: 'int' object has no attribute 'decode'
        return _derived.REGISTRY.errmsg

    # ---- descriptors -----------------------------------------------------------------

    def pmLookupDesc(self, pmid_p: int):
        """The descriptor of one pmID, as a pointer to a pmDesc (type, indom, sem, units)."""
        t = self._use().desc(int(pmid_p))
        descbuf = ctypes.create_string_buffer(ctypes.sizeof(pmDesc))
        desc = ctypes.cast(descbuf, ctypes.POINTER(pmDesc))
        _fill_desc(desc.contents, t)
        return desc

    def pmLookupDescs(self, pmids_p: Any):
        """The descriptors of several pmIDs in one request, as an array of pointers to pmDesc."""
        host = self._use()
        pmids = _pmid_list(pmids_p)
        if not pmids:
            raise pmErr(c_api.PM_ERR_TOOSMALL)
        if type(host) is DerivedContext and len(pmids) == 1 and not _is_derived(pmids[0]):
            # what the derived layer would do: the context's own answer
            host = host.inner
        if len(pmids) == 1 and host.features & 0x0800:
            tuples = [host.desc(pmids[0])]
        else:
            tuples = host.descs(pmids)
        desclist = (pmDesc * len(pmids))()
        for i, t in enumerate(tuples):
            _fill_desc(desclist[i], t)
        descs = (ctypes.POINTER(pmDesc) * len(pmids))()
        for i in range(len(pmids)):
            descs[i] = ctypes.pointer(desclist[i])
        return descs

    # ---- text ------------------------------------------------------------------------

    def pmLookupInDomText(self, pmdesc: Any, kind: int = c_api.PM_TEXT_ONELINE) -> str:
        """The help text of an instance domain (PM_TEXT_ONELINE or PM_TEXT_HELP)."""
        text = self._use().text(get_indom(pmdesc), kind, True)
        return str(text.decode())

    def pmLookupText(self, pmid: int, kind: int = c_api.PM_TEXT_ONELINE) -> _TUnion[bytes, str]:
        """The help text of a metric (PM_TEXT_ONELINE or PM_TEXT_HELP): bytes at level 6.0
        (6.0.3's), str from 6.3."""
        text = self._use().text(pmid, kind, False)
        return text.decode() if _API_LEVEL >= (6, 3) else text

    # ---- instance domains ------------------------------------------------------------

    def pmGetInDom(self, pmdescp: Any = None, indom: Optional[int] = None):
        """([instance ids], [instance names]) of an instance domain, from a descriptor or an
        indom; (None, None) for an empty domain."""
        if pmdescp is None and indom is None:
            raise pmErr(c_api.PM_ERR_GENERIC, "invalid arguments")
        host = self._use()
        if type(host) is DerivedContext:
            host = host.inner       # the derived layer has nothing of its own here
        if indom is None:
            indom = get_indom(pmdescp)
        insts, names = host.instances(indom)
        if not insts:
            return None, None
        return [int(i) for i in insts], [n.decode("ascii", "ignore") for n in names]

    def pmGetInDomDict(self, indom: int) -> Dict[int, str]:
        """An instance domain as {instance id: instance name}."""
        instL, nameL = self.pmGetInDom(indom=indom)
        if instL is None or nameL is None:
            return {}
        return dict(zip(instL, nameL))

    def pmLookupInDom(self, pmdesc: Any, name: _TUnion[str, bytes]) -> int:
        """The instance id of an instance name in the descriptor's instance domain."""
        insts, _ = self._use().instances(get_indom(pmdesc), c_api.PM_IN_NULL, _as_bytes(name))
        if self.type & 0xFF == c_api.PM_CONTEXT_HOST and insts:
            # libpcp takes the first instance of pmcd's answer: an empty name asks the
            # PMDA for the whole domain (issue 38: sample.bin's '' is 100)
            return insts[0]
        if len(insts) != 1:
            raise pmErr(c_api.PM_ERR_INST)
        return insts[0]

    def pmNameInDom(self, pmdesc: Any, instval: int) -> str:
        """The instance name of an instance id in the descriptor's instance domain."""
        if instval == c_api.PM_IN_NULL:
            return "PM_IN_NULL"
        _, names = self._use().instances(get_indom(pmdesc), int(instval))
        if c_int(instval).value == -1 and self.type & 0xFF == c_api.PM_CONTEXT_ARCHIVE:
            # an archive has no instance -1 (PM_IN_NULL): libpcp looks it up in the
            # domain in force and finds none, where instances() took -1 for "every
            # instance" (and raised the domain's own errors first, as libpcp) (issue 38)
            raise pmErr(c_api.PM_ERR_INST_LOG)
        if self.type & 0xFF == c_api.PM_CONTEXT_HOST and names:
            # libpcp takes the first name of pmcd's answer: instance -1 asks the PMDA for
            # the whole domain (issue 38: sample.bin's -1 is bin-100)
            return str(names[0].decode("ascii", "ignore"))
        if len(names) != 1:
            raise pmErr(c_api.PM_ERR_INST)
        return str(names[0].decode("ascii", "ignore"))

    # ---- contexts --------------------------------------------------------------------

    def pmNewContext(self, typed: int, name: Any) -> None:
        """No-op, as in the official binding: the constructor makes the context."""

    def pmDestroyContext(self, handle: int) -> None:
        """No-op, as in the official binding: the context dies with the object."""

    def pmDupContext(self) -> int:
        """A new context that duplicates this one (source, profile, mode), made current; returns
        its handle."""
        host = self._use()
        handle = _registry.allocate()
        dup = host.duplicate(handle)
        _registry.contexts[handle] = dup
        _registry.current = handle
        return handle

    def pmUseContext(self, handle: int) -> None:
        """No-op, as in the official binding."""

    @staticmethod
    def pmWhichContext() -> int:
        """The handle of the current context (pmErr PM_ERR_NOCONTEXT when there is none)."""
        if _registry.current < 0:
            raise pmErr(c_api.PM_ERR_NOCONTEXT)
        return _registry.current

    def pmAddProfile(self, pmdesc: Any, instL: Any) -> int:
        """Add instances (all of the domain when `instL` is empty) to the instance profile that
        fetches use."""
        if isinstance(instL, int):
            insts: List[int] = [instL]
        elif instL is None or not instL:
            insts = []
        else:
            insts = [int(i) for i in instL]
        host = self._use()
        host.profile.add(get_indom(pmdesc), insts)
        return 0

    def pmDelProfile(self, pmdesc: Any, instL: Any) -> int:
        """Remove instances (all of the domain when `instL` is empty) from the instance profile."""
        if instL is None or not instL:
            insts: List[int] = []
        else:
            len(instL)  # the official binding needs a sized list here (an int is a TypeError)
            insts = [int(i) for i in instL]
        host = self._use()
        host.profile.delete(get_indom(pmdesc), insts)
        return 0

    def _set_mode_timespec(self, mode: int, origin: Any, interval: Any) -> int:
        """pmSetMode with a timespec origin and interval (6.x's pmSetModeHighRes, 7.x's
        pmSetMode), for this package's own tools at every API level."""
        host = self._use()
        when = None
        if origin is not None:
            ctypes.pointer(origin)      # the official binding passes pointer(origin)
            when = (int(origin.tv_sec), int(origin.tv_nsec))
        delta = (0, 0)
        direction = 0
        if interval is not None and interval != 0:
            ctypes.pointer(interval)
            delta = (int(interval.tv_sec), int(interval.tv_nsec))
            if delta[0] < 0 or delta[1] < 0:
                direction = -1
            elif delta != (0, 0):
                direction = 1
        return self._set_mode(host, mode, when, delta, direction)

    if _API_LEVEL >= (7, 2):
        def pmSetMode(self, mode: int, origin: Any, interval: Any) -> int:
            """Position an archive context at `origin` and set its mode (PM_MODE_FORW,
            PM_MODE_BACK, PM_MODE_INTERP) and step `interval`, both timespecs (None: no
            step); host contexts take only PM_MODE_LIVE."""
            for position, stamp in ((2, origin), (3, interval)):
                if stamp is not None and stamp != 0:
                    ctypes.pointer(stamp)       # the official binding passes pointer(stamp)
                    if not isinstance(stamp, timespec):
                        raise ctypes.ArgumentError(
                            "argument %d: TypeError: expected LP_timespec instance instead "
                            "of LP_%s" % (position, type(stamp).__name__))
            return self._set_mode_timespec(mode, origin, interval)
    else:
        def pmSetModeHighRes(self, mode: int, origin: Any, interval: Any) -> int:
            """pmSetMode with a timespec origin and interval: position an archive context
            (PM_MODE_FORW, PM_MODE_BACK, PM_MODE_INTERP); host contexts take only
            PM_MODE_LIVE."""
            return self._set_mode_timespec(mode, origin, interval)

        def pmSetMode(self, mode: int, timeVal: Any, delta: Any) -> int:
            """Position an archive context at `timeVal` and set its mode and `delta`
            (milliseconds, or the unit a PM_XTB_SET mode names); host contexts take only
            PM_MODE_LIVE."""
            return self._set_mode_timeval(mode, timeVal, delta)

    def _set_mode_timeval(self, mode: int, timeVal: Any, delta: Any) -> int:
        """6.x's pmSetMode: a timeval origin and a millisecond (or PM_XTB_SET unit) delta."""
        host = self._use()
        when = None
        if timeVal is not None:
            ctypes.pointer(timeVal)     # the official binding passes pointer(timeVal)
            when = (int(timeVal.tv_sec), int(timeVal.tv_usec) * 1000)
        msec = c_int(delta).value       # a C int argument, as in the official binding
        return self._set_mode(host, mode, when, _xtb_delta(mode, msec),
                              (msec > 0) - (msec < 0))

    @staticmethod
    def _set_mode(host: Any, mode: int, when: Any, delta: Tuple[int, int], direction: int) -> int:
        host.set_mode(mode, when, delta, direction)
        return 0

    def pmReconnectContext(self) -> int:
        """Reconnect a host context to its pmcd (with libpcp's back-off between attempts);
        returns the handle."""
        host = self._host
        if host is None:
            raise pmErr(c_api.PM_ERR_NOCONTEXT)
        return host.reconnect()

    def pmGetContextHostName(self) -> str:
        """The host name of the context's source (pmcd's hostname metric, or the archive label's
        host)."""
        host = self._host
        if host is None:
            return ""
        return host.host_name()

    # ---- time zones ------------------------------------------------------------------

    def pmNewContextZone(self) -> int:
        """Make the zone of this context's source current (an archive's label zone, or
        pmcd's pmcd.zoneinfo / pmcd.timezone) and return its handle."""
        host = self._use()
        if host.pmns_location == c_api.PMNS_ARCHIVE:
            return _zones().new_zone(host.archive_label().timezone.decode("utf-8", "replace"))
        pmids = self.pmLookupName(["pmcd.timezone", "pmcd.zoneinfo"], relaxed=1)
        if pmids[0] == c_api.PM_ID_NULL and pmids[1] == c_api.PM_ID_NULL:
            raise pmErr(c_api.PM_ERR_NAME)
        result = self.pmFetch(pmids).contents
        for i in (1, 0):                # the zoneinfo name first, as libpcp prefers it
            if result.get_numval(i) == 1 and result.get_valfmt(i) != c_api.PM_VAL_INSITU:
                atom = self.pmExtractValue(result.get_valfmt(i), result.get_vlist(i, 0),
                                           c_api.PM_TYPE_STRING, c_api.PM_TYPE_STRING)
                return _zones().new_zone(atom.cp.decode("utf-8", "replace"))
        raise pmErr(c_api.PM_ERR_VALUE)

    @staticmethod
    def pmNewZone(tz: _TUnion[str, bytes]) -> int:
        """Add a reporting time zone (a TZ value), make it current, return its handle."""
        return _zones().new_zone(tz.decode("utf-8") if isinstance(tz, bytes) else tz)

    @staticmethod
    def pmUseZone(tz_handle: int) -> int:
        """Make the zone of a handle pmNewZone gave the current reporting zone."""
        status = _zones().use_zone(tz_handle)
        if status < 0:
            raise pmErr(status)
        return status

    @staticmethod
    def pmWhichZone() -> str:
        """The current reporting zone (pmErr -1 when none was set)."""
        tz = _zones().which_zone()
        if tz is None:
            raise pmErr(-1)
        return tz

    def pmLocaltime(self, seconds: int) -> tm:
        """The broken-down time (a tm) of an instant in the current reporting zone."""
        self._use()
        return _zones().localtime(int(seconds))

    def _struct_time(self, seconds: int) -> Any:
        """pmLocaltime's fields as a time.struct_time (full year, months from 1): the
        fetchgroup's timestamps, made without a tm."""
        self._use()
        return _zones().broken_down(int(seconds))

    def pmCtime(self, seconds: int) -> str:
        """ctime's text of an instant in the current reporting zone (newline included)."""
        self._use()
        return _zones().ctime(int(seconds))

    # ---- fetch and store -------------------------------------------------------------

    if _API_LEVEL >= (7, 2):
        def pmFetch(self, pmidA: Any) -> LP_pmResult:
            """Fetch the values of pmIDs: a pointer to a pmResult (with a timespec
            timestamp) with one value set per pmID, in the order asked."""
            host, pmids = self._fetch_target(pmidA)
            flat, changes = host.fetch(pmids, True)
            return LP_pmResult(pmResult(flat, len(pmids), changes))
    else:
        def pmFetch(self, pmidA: Any) -> LP_pmResult:
            """Fetch the values of pmIDs: a pointer to a pmResult with one value set per
            pmID, in the order asked."""
            host, pmids = self._fetch_target(pmidA)
            flat, changes = host.fetch(pmids, False)
            return LP_pmResult(pmResult(flat, len(pmids), changes))

        def pmFetchHighRes(self, pmidA: Any) -> LP_pmHighResResult:
            """pmFetch with a nanosecond timestamp: a pointer to a pmHighResResult."""
            host, pmids = self._fetch_target(pmidA)
            flat, changes = host.fetch(pmids, True)
            return LP_pmHighResResult(pmHighResResult(flat, len(pmids), changes))

        def pmHighResFetch(self, pmidA: Any) -> LP_pmHighResResult:
            """The same as pmFetchHighRes (libpcp's other name)."""
            return self.pmFetchHighRes(pmidA)

    @staticmethod
    def pmFreeResult(result_p: Any) -> None:
        """Nothing to free: results are ordinary Python objects."""

    if _API_LEVEL < (7, 2):
        @staticmethod
        def pmFreeHighResResult(result_p: Any) -> None:
            """Nothing to free: results are ordinary Python objects."""

    def _store(self, result: Any) -> Any:
        host = self._use()
        flat = flat_of(result)
        if flat is None:
            raise pmErr(c_api.PM_ERR_GENERIC, "pmStore needs a result made by pmFetch")
        numpmid = flat_of_numpmid(result)
        if numpmid < 1:
            raise pmErr(c_api.PM_ERR_TOOSMALL)
        arrays = store_arrays(flat, numpmid)
        host.store(arrays, flat.sec, flat.nsec // 1000)
        return result

    def pmStore(self, result: Any) -> Any:
        """Store the values of a result (from pmFetch, with changed values) into the metrics;
        host contexts only."""
        return self._store(result)

    if _API_LEVEL < (7, 2):
        def pmStoreHighRes(self, result: Any) -> Any:
            """pmStore for a pmHighResResult."""
            return self._store(result)

    # ---- event records ---------------------------------------------------------------

    @staticmethod
    def pmUnpackEventRecords(vset: Any, idx: int = 0) -> List[LP_pmResult]:
        """The PM_TYPE_EVENT value `idx` of `vset` as one result per event record."""
        from pcp._decode import events  # pylint: disable=import-outside-toplevel

        return events.unpack_event_records(vset, idx, False)

    @staticmethod
    def pmUnpackHighResEventRecords(vset: Any, idx: int = 0) -> List[LP_pmHighResResult]:
        """The PM_TYPE_HIGHRES_EVENT value `idx` of `vset`, one result per event record."""
        from pcp._decode import events  # pylint: disable=import-outside-toplevel

        return events.unpack_event_records(vset, idx, True)

    @staticmethod
    def pmFreeEventResult(results: Any) -> None:
        """Nothing to free: event results are ordinary Python objects."""

    @staticmethod
    def pmFreeHighResEventResult(results: Any) -> None:
        """Nothing to free: event results are ordinary Python objects."""

    def _event_name(self, pmid: int) -> Optional[str]:
        cache = self.__dict__.setdefault("_event_names", {})
        if pmid not in cache:
            try:
                cache[pmid] = self.pmNameID(pmid)
            except pmErr:
                cache[pmid] = None
        return cache[pmid]

    def event_records(self, vset: Any, idx: int = 0) -> "_events.Iterator[_events.EventRecord]":
        """Iterate over the events of value `idx` of an event metric's value set (either
        event type): EventRecord(sec, nsec, flags, missed, params), each parameter an
        EventParam(pmid, name, value) named through this context."""
        from pcp._decode import events  # pylint: disable=import-outside-toplevel

        return events.iter_event_records(vset, idx, self._event_name)

    def event_columns(self, results: Any, metrics: Any = None) -> "_events.EventColumns":
        """Every event of one result or a sequence of results (pmFetch, pmFetchArchive)
        as numpy columns, decoded by one C call; `metrics` (pmids or names) restricts
        the event metrics looked at."""
        if metrics is not None:
            if isinstance(metrics, (str, bytes, int)):
                metrics = [metrics]
            metrics = [self.pmLookupName(m)[0] if isinstance(m, (str, bytes)) else m
                       for m in metrics]
        from pcp._decode import events  # pylint: disable=import-outside-toplevel

        return events.event_columns(results, metrics, self._event_name)

    # ---- archives ----------------------------------------------------------------------

    def _archive_label_timespec(self) -> pmHighResLogLabel:
        """The archive label with a nanosecond start time (6.x's pmGetHighResArchiveLabel,
        7.x's pmGetArchiveLabel), for this package's own tools at every API level."""
        return self._fill_archive_label(_structs.pmHighResLogLabel())

    def _fill_archive_label(self, out: Any) -> Any:
        label = self._use().archive_label()
        out.magic = label.magic
        out.pid_t = label.pid
        out.start.tv_sec = label.stamp[0]
        out.start.tv_nsec = label.stamp[1]
        out.hostname = label.hostname[:c_api.PM_MAX_HOSTNAMELEN - 1]
        out.timezone = label.timezone[:c_api.PM_MAX_TIMEZONELEN - 1]
        out.zoneinfo = label.zoneinfo[:c_api.PM_MAX_ZONEINFOLEN - 1]
        return out

    def _archive_end_timespec(self) -> timespec:
        """The time of the archive's last record as a timespec (6.x's
        pmGetHighResArchiveEnd, 7.x's pmGetArchiveEnd), for this package's own tools."""
        sec, nsec = self._use().archive_end()
        ts = timespec()
        ts.tv_sec = sec
        ts.tv_nsec = nsec
        return ts

    def _fetch_archive_timespec(self) -> LP_pmHighResResult:
        """pmFetchArchive with a nanosecond timestamp, for this package's own tools at
        every API level."""
        flat = self._use().fetch_archive()
        return LP_pmHighResResult(_result_module.pmHighResResult(flat, flat.numpmid, 0))

    if _API_LEVEL >= (7, 2):
        def pmGetArchiveLabel(self) -> pmLogLabel:
            """The label of the archive (a pmLogLabel: magic, pid, start time as a
            timespec, host, time zone, zoneinfo)."""
            return self._fill_archive_label(pmLogLabel())

        def pmGetArchiveEnd(self) -> timespec:
            """The time of the archive's last record, as a timespec."""
            return self._archive_end_timespec()
    else:
        def pmGetArchiveLabel(self) -> pmLogLabel:
            """The label of the archive (a pmLogLabel: magic, pid, start time, host, time
            zone)."""
            label = self._use().archive_label()
            out = pmLogLabel()
            out.magic = label.magic
            out.pid_t = label.pid
            out.start.tv_sec = label.stamp[0]
            out.start.tv_usec = usec_of(label.stamp[1])
            out.hostname = label.hostname[:c_api.PM_LOG_MAXHOSTLEN - 1]
            out.tz = label.timezone[:c_api.PM_TZ_MAXLEN - 1]
            return out

        def pmGetHighResArchiveLabel(self) -> pmHighResLogLabel:
            """The archive label with a nanosecond start time (a pmHighResLogLabel)."""
            return self._archive_label_timespec()

        def pmGetArchiveEnd(self) -> timeval:
            """The time of the archive's last record, as a timeval."""
            sec, nsec = self._use().archive_end()
            tv = timeval()
            tv.tv_sec = sec
            tv.tv_usec = usec_of(nsec)
            return tv

        def pmGetHighResArchiveEnd(self) -> timespec:
            """The time of the archive's last record, as a timespec."""
            return self._archive_end_timespec()

    def pmGetInDomArchive(self, pmdescp: Any):
        """Every instance an instance domain has had anywhere in the archive: ([ids], [names])."""
        insts, names = self._use().instances_archive(get_indom(pmdescp))
        if not insts:
            return None, None
        return [int(i) for i in insts], [str(n.decode("ascii", "ignore")) for n in names]

    def pmLookupInDomArchive(self, pmdesc: Any, name: Any) -> int:
        """The instance id of an instance name anywhere in the archive."""
        arch = self._use()
        if not isinstance(name, bytes):
            name = name.encode("utf-8")
        return arch.lookup_instance_archive(get_indom(pmdesc), name)

    def pmNameInDomArchive(self, pmdesc: Any, inst: int) -> str:
        """The instance name of an instance id anywhere in the archive."""
        arch = self._use()
        name = arch.name_instance_archive(get_indom(pmdesc), c_int(inst).value)
        return str(name.decode("ascii", "ignore"))

    def pmFetchArchive(self):
        """The next record of the archive, whatever metrics it holds (FORW and BACK modes;
        at API level 7.2 with a timespec timestamp)."""
        flat = self._use().fetch_archive()
        return LP_pmResult(pmResult(flat, flat.numpmid, 0))

    if _API_LEVEL < (7, 2):
        def pmFetchHighResArchive(self):
            """pmFetchArchive with a nanosecond timestamp."""
            return self._fetch_archive_timespec()

    # ---- labels ------------------------------------------------------------------------

    def pmlabelset_to_dict(self, lset: Any, flags: int = 0xFF) -> dict:
        """A pmLabelSet as a dict of its labels (name: value), filtered by label flags."""
        if lset is None:
            return {}
        text = getattr(lset, "json", None)
        if not text:
            return {}
        return _json_loads(text.decode() if isinstance(text, bytes) else text)

    def _label_dict(self, ident: int, type_: int) -> dict:
        sets = self._use().labels(ident, type_)
        if not sets or sets[0].nlabels <= 0:
            return {}
        return _json_loads(sets[0].json.decode())

    def pmLookupLabels(self, pmid: int) -> dict:
        """Every label set that applies to a metric, merged as libpcp merges them, as a dict."""
        ret = {}
        desc = self.pmLookupDesc(pmid)
        lset = self.pmGetContextLabels()
        if lset:
            ret[c_api.PM_LABEL_CONTEXT] = lset
        lset = self.pmGetDomainLabels(self.pmID_domain(pmid))
        if lset:
            ret[c_api.PM_LABEL_DOMAIN] = lset
        if desc.contents.indom != c_api.PM_INDOM_NULL:
            lset = self.pmGetInDomLabels(desc.contents.indom)
            if lset:
                ret[c_api.PM_LABEL_INDOM] = lset
        lset = self.pmGetClusterLabels(pmid)
        if lset:
            ret[c_api.PM_LABEL_CLUSTER] = lset
        lset = self.pmGetItemLabels(pmid)
        if lset:
            ret[c_api.PM_LABEL_ITEM] = lset
        return ret

    def pmGetInstancesLabels(self, indom: int) -> dict:
        """The labels of each instance of an instance domain: {instance id: {name: value}}."""
        host = self._use()
        if indom == c_api.PM_INDOM_NULL:
            return {}
        out = {}
        for s in host.labels(indom, c_api.PM_LABEL_INSTANCES):
            if s.nlabels > 0:
                out[s.inst & 0xFFFFFFFF] = _json_loads(s.json.decode())
        return out

    def pmGetItemLabels(self, pmid: int) -> dict:
        """The labels of a metric item, as a dict."""
        return self._label_dict(pmid, c_api.PM_LABEL_ITEM)

    def pmGetClusterLabels(self, pmid: int) -> dict:
        """The labels of a metric's cluster, as a dict."""
        return self._label_dict(pmid, c_api.PM_LABEL_CLUSTER)

    def pmGetInDomLabels(self, indom: int) -> dict:
        """The labels of an instance domain, as a dict."""
        self._use()
        if indom == c_api.PM_INDOM_NULL:
            return {}
        return self._label_dict(indom, c_api.PM_LABEL_INDOM)

    def pmGetDomainLabels(self, domain: int) -> dict:
        """The labels of a metric's domain (its PMDA), as a dict."""
        return self._label_dict(domain, c_api.PM_LABEL_DOMAIN)

    def pmGetContextLabels(self) -> dict:
        """The labels of the context (host name and others), as a dict."""
        return self._label_dict(c_api.PM_IN_NULL, c_api.PM_LABEL_CONTEXT)

    @staticmethod
    def pmMergeLabels(labels: Any) -> str:
        """Merge JSON label strings, later ones overriding earlier ones, into one JSON string."""
        from pcp._libpcp import labels as _labels

        labelsL = labels if isinstance(labels, list) else [labels]
        return _labels.merge_labels(labelsL)

    @staticmethod
    def pmMergeLabelSets(labelSets: Any, callback: Any = None, arg: Any = None) -> str:
        """Merge pmLabelSets (lowest precedence first) into one JSON string, with an optional
        filter callback."""
        from pcp._libpcp import labels as _labels

        return _labels.merge_label_sets(labelSets, callback, arg)

    @staticmethod
    def pmFreeLabelSets(labelSets: Any, nsets: int = 1) -> None:
        """Nothing to free: label sets are ordinary Python objects."""

    # ---- ancillary services ------------------------------------------------------------

    @staticmethod
    def pmGetConfig(variable: _TUnion[str, bytes]) -> Optional[str]:
        """The value of a PCP configuration variable: the environment first, then pcp.conf."""
        from pcp._core import config as _config

        if isinstance(variable, bytes):
            variable = variable.decode()
        return _config.pmGetConfig(variable)

    @staticmethod
    def pmErrStr(code: int) -> str:
        """libpcp's text for an error code (PM_ERR_*, errno values and others)."""
        return _pmErrStr(code)

    @staticmethod
    def pmExtractValue(valfmt: int, vlist: Any, intype: int, outtype: int) -> pmAtomValue:
        """The value at a value list position converted from `intype` to `outtype`, as a
        pmAtomValue."""
        if type(vlist) is pmValue:
            r = vlist._r
            k = vlist._k
            column = r._vtype
            vt = (column if column is not None else r.vtype)[k]
            blocks = r._blocks
            if intype == outtype and (blocks is None or k not in blocks):
                # Fast paths for the common "extract as its own type" calls, reading
                # the decoded columns. The atom is a union: an integer stored through
                # its signed member of the same width reads back through the unsigned
                # one as libpcp's (ctypes keeps the low bits, as the C cast does).
                if vt < 0:
                    if intype == _PM_TYPE_32 or intype == _PM_TYPE_U32:
                        atom = pmAtomValue()
                        column = r._ival
                        atom.l = (column if column is not None else r.ival)[k]
                        return atom
                elif vt == intype:
                    if intype == _PM_TYPE_64 or intype == _PM_TYPE_U64:
                        atom = pmAtomValue()
                        column = r._ival
                        atom.ll = (column if column is not None else r.ival)[k]
                        return atom
                    if intype == _PM_TYPE_DOUBLE:
                        atom = pmAtomValue()
                        atom.d = r.dval[k]
                        return atom
                    if intype == _PM_TYPE_FLOAT:
                        atom = pmAtomValue()
                        atom.f = r.dval[k]
                        return atom
            if vt < 0:
                return _values.extract_value(valfmt, intype, outtype, r.ival[k], 0, b"")
            if blocks is not None and k in blocks:
                btype, payload = r.block_contents(k)
                return _values.extract_value(valfmt, intype, outtype, 0, btype, payload,
                                             host_order=True)
            return _values.extract_value(valfmt, intype, outtype, 0, vt, r.payload(k))
        # A pmValue the caller built with ctypes (official-binding style).
        if valfmt == c_api.PM_VAL_INSITU:
            return _values.extract_value(valfmt, intype, outtype, vlist.value.lval, 0, b"")
        block = vlist.value.pval.contents
        payload = ctypes.string_at(ctypes.addressof(block) + 4, max(block.vlen - 4, 0))
        # Blocks built in this process hold numbers in host order, not wire order.
        return _values.extract_value(valfmt, intype, outtype, 0, block.vtype, payload,
                                     host_order=True)

    @staticmethod
    def pmConvScale(inType: int, inAtom: Any, desc: Any, metric_idx: int, outUnits: Any) -> pmAtomValue:
        """A value converted from the descriptor's units (`desc`) to `outUnits`, as a
        pmAtomValue."""
        if isinstance(outUnits, int):
            pmunits = pmUnits()
            pmunits.dimSpace = 1
            pmunits.scaleSpace = outUnits
        else:
            pmunits = outUnits
        return _values.conv_scale_units(inType, inAtom, desc[metric_idx].contents.units, pmunits)

    @staticmethod
    def pmUnitsStr(units: Any) -> str:
        """Units as libpcp writes them, e.g. "Kbyte / sec" or "count x 10^6"."""
        return _units.pmUnitsStr(units)

    @staticmethod
    def pmNumberStr(value: float) -> str:
        """A number in at most 8 characters, as libpcp's pmNumberStr writes it."""
        return _strings.pmNumberStr(value)

    @staticmethod
    def pmID_build(d: int, c: int, i: int) -> int:
        """A pmID from its domain, cluster and item."""
        return _strings.pmID_build(d, c, i)

    @staticmethod
    def pmID_domain(pmid: int) -> int:
        """The domain of a pmID."""
        return _strings.pmID_domain(pmid)

    @staticmethod
    def pmID_cluster(pmid: int) -> int:
        """The cluster of a pmID."""
        return _strings.pmID_cluster(pmid)

    @staticmethod
    def pmID_item(pmid: int) -> int:
        """The item of a pmID."""
        return _strings.pmID_item(pmid)

    @staticmethod
    def pmIDStr(pmid: int) -> str:
        """A pmID as "domain.cluster.item" ("PM_ID_NULL" for the null id)."""
        return _strings.pmIDStr(pmid)

    @staticmethod
    def pmInDom_build(d: int, s: int) -> int:
        """An instance domain from its domain and serial."""
        return _strings.pmInDom_build(d, s)

    @staticmethod
    def pmInDom_domain(indom: int) -> int:
        """The domain of an instance domain."""
        return _strings.pmInDom_domain(indom)

    @staticmethod
    def pmInDom_serial(indom: int) -> int:
        """The serial of an instance domain."""
        return _strings.pmInDom_serial(indom)

    @staticmethod
    def pmInDomStr(pmdescp: Any) -> str:
        """An instance domain (of a descriptor) as "domain.serial" ("PM_INDOM_NULL" for none)."""
        return _strings.pmInDomStr(get_indom(pmdescp))

    @staticmethod
    def pmTypeStr(typed: int) -> str:
        """The name of a PM_TYPE_* value, e.g. "U64"."""
        return _strings.pmTypeStr(typed)

    @staticmethod
    def pmAtomStr(atom: Any, typed: int) -> str:
        """A pmAtomValue of a type as libpcp prints it."""
        return _strings.pmAtomStr(atom, typed)

    @staticmethod
    def pmSemStr(sem: int) -> str:
        """The name of a PM_SEM_* value, e.g. "counter"."""
        return _strings.pmSemStr(sem)

    @staticmethod
    def pmPrintValue(fileObj: Any, result: Any, ptype: Any, vset_idx: int, vlist_idx: int,
                     min_width: int) -> None:
        """Write one value of a result to a file as pmPrintValue(3) does, in a field of at
        least `min_width` characters: `ptype` is the metric's pmDesc (pointer)."""
        contents = result.contents
        valfmt = contents.get_valfmt(vset_idx)
        value = contents.get_vlist(vset_idx, vlist_idx)
        mtype = ptype.contents.type if hasattr(ptype, "contents") else ptype.type
        from pcp._libpcp import printvalue as _printvalue  # pylint: disable=import-outside-toplevel

        fileObj.write(_printvalue.value_text(valfmt, mtype, value, int(min_width),
                                             pmContext.pmExtractValue))
        fileObj.flush()

    @staticmethod
    def pmflush() -> int:
        """Write the text pmprintf collected to stderr (or $PCP_STDERR) and clear it."""
        return _errors.pmflush()

    @staticmethod
    def pmprintf(fmt: Any, *args: Any) -> None:
        """Collect formatted text for pmflush to write."""
        if isinstance(fmt, bytes):
            fmt = fmt.decode()
        _errors.pmprintf(fmt % args if args else fmt)

    if _API_LEVEL < (7, 2):
        @staticmethod
        def pmSortHighResInstances(result_p: Any) -> None:
            """Sort each value set of a pmHighResResult by instance id."""
            _sort_instances(result_p)

    @staticmethod
    def pmSortInstances(result_p: Any) -> None:
        """Sort each value set of a pmResult by instance id."""
        _sort_instances(result_p)

    if _API_LEVEL >= (7, 2):
        @staticmethod
        def pmParseInterval(interval: Any) -> Tuple[timespec, str]:
            """An interval specification ("10", "1.5 sec", "2min 30s") as (timespec, "");
            pmErr(-1, libpcp's message) when it is bad."""
            return (timespec.fromInterval(interval), "")
    else:
        @staticmethod
        def pmParseHighResInterval(interval: Any) -> Tuple[timespec, str]:
            """An interval specification ("10", "1.5 sec", "2min 30s") as (timespec, "");
            pmErr(-1, libpcp's message) when it is bad."""
            return (timespec.fromInterval(interval), "")

        @staticmethod
        def pmParseInterval(interval: Any) -> Tuple[timeval, str]:
            """An interval specification ("10", "1.5 sec", "2min 30s") as (timeval, "");
            pmErr(-1, libpcp's message) when it is bad."""
            return (timeval.fromInterval(interval), "")

    @staticmethod
    def pmParseMetricSpec(string: Any, isarch: int = 0, source: str = "") -> Tuple[Any, str]:
        """A metric specification parsed: (pointer to pmMetricSpec, "")."""
        return (pmMetricSpec.fromString(string, isarch, source), "")

    @staticmethod
    def pmParseUnitsStr(string: Any):
        """A units string ("Kbyte / sec", "count x 10^3") as (pmUnits, multiplier); pmErr with
        libpcp's code and message when it is bad."""
        return _units.pmParseUnitsStr(string)

    @staticmethod
    def pmtimespecSleep(spec: Any) -> None:
        """Sleep for the interval a timespec holds."""
        return spec.sleep()

    @staticmethod
    def pmtimevalSleep(tvp: Any) -> None:
        """Sleep for the interval a timeval holds."""
        return tvp.sleep()

    if _API_LEVEL >= (7, 2):
        @staticmethod
        def pmGetProgname() -> str:
            """The program name libpcp uses in its messages."""
            return _errors.pmGetProgname()

        @staticmethod
        def pmSetDebug(options: Any) -> int:
            """Set libpcp debug options by name ("pdu,fetch", "all"); 0, or pmErr
            PM_ERR_CONV for an unknown name (and then none is set)."""
            if not isinstance(options, bytes):
                options = options.encode("utf-8")
            status = _options().debug_options(options.decode("utf-8", "surrogateescape"), "set")
            if status < 0:
                raise pmErr(status)
            return status

        @staticmethod
        def pmDebug(options: Any) -> int:
            """1 when any of the named debug options (for "all": every option) is set,
            else 0; pmErr PM_ERR_CONV for an unknown name. pcp-native reports what
            pmSetDebug set, and prints no libpcp diagnostics."""
            if not isinstance(options, bytes):
                options = options.encode("utf-8")
            status = _options().debug_options(options.decode("utf-8", "surrogateescape"), "test")
            if status < 0:
                raise pmErr(status)
            return status
    else:
        @staticmethod
        def pmProgname() -> str:
            """The program name libpcp uses in its messages."""
            return _errors.pmGetProgname()

        @staticmethod
        def pmDebug(flags: int) -> bool:
            """Whether a debug flag is set (pcp-native keeps no libpcp debug bits: always
            False). The bits are tested as the official binding tests them, so flags that
            are not an int raise its TypeError."""
            return bool(0 & flags)

    # ---- helpers for tools written in Python (the official module's utilities) --------

    @staticmethod
    def get_current_tz(options: Any = None, set_dst: int = -1) -> str:
        """The local time zone as a POSIX TZ string ("AEST-10", "EST+5", "IST-5:30"):
        its name and its offset west of UTC, for the daylight-saving state of `set_dst`
        (>= 0), of the options' origin, or of now."""
        if set_dst >= 0:
            dst = 1 if set_dst else 0
        elif options:
            dst = time.localtime(options.pmGetOptionOrigin()).tm_isdst
        else:
            dst = time.localtime().tm_isdst
        west = time.altzone if dst else time.timezone     # seconds west of UTC
        text = time.tzname[dst]
        if west:
            hours, minutes = int(west / 3600.0), int(west % 3600 / 60)
            text += ("+" if west >= 0 else "") + str(hours)
            if minutes:
                text += ":" + str(minutes)
        return text

    @staticmethod
    def posix_tz_to_utc_offset(timezone: str) -> str:
        """A POSIX TZ string's offset as people write it: "EST+5" -> "UTC-5"."""
        if not timezone or ("+" not in timezone and "-" not in timezone):
            return "UTC+0"
        sign = "+" if "+" in timezone else "-"
        return "UTC" + ("-" if sign == "+" else "+") + timezone.split(sign)[1]

    @staticmethod
    def set_timezone(options: Any) -> None:
        """Set the process's TZ (and the reporting zone) from the options: -Z's zone, the
        metrics source's zone for -z, or the local zone."""
        zone = options.pmGetOptionTimezone()
        if zone:
            os.environ["TZ"] = zone
            time.tzset()
            pmContext.pmNewZone(zone)
        elif options.pmGetOptionHostZone():
            os.environ["TZ"] = pmContext.pmWhichZone()
            time.tzset()
        else:
            zone = pmContext.get_current_tz(options)
            os.environ["TZ"] = zone
            time.tzset()
            pmContext.pmNewZone(zone)

    @staticmethod
    def datetime_to_secs(value: Any, precision: int = c_api.PM_TIME_SEC) -> float:
        """A naive datetime as time since the epoch (local time) in seconds, or in
        milliseconds, microseconds or nanoseconds for PM_TIME_MSEC / USEC / NSEC."""
        delta = value - _datetime.datetime.fromtimestamp(0)
        usec = delta.microseconds + (delta.seconds + delta.days * 24.0 * 3600.0) * 10.0 ** 6
        if precision == c_api.PM_TIME_SEC:
            return usec / 10.0 ** 6
        if precision == c_api.PM_TIME_MSEC:
            return usec / 10.0 ** 3
        if precision == c_api.PM_TIME_USEC:
            return usec / 1.0
        if precision == c_api.PM_TIME_NSEC:
            return usec * 10.0 ** 3
        raise ValueError("Unsupported precision requested")

    @staticmethod
    def get_mode_step(archive: Any, interpol: Any, interval: Any) -> Tuple[int, Any]:
        """(mode, step) for pmSetModeHighRes (7.x: pmSetMode): PM_MODE_FORW and no step
        for raw archive reads, else PM_MODE_INTERP stepping by `interval` (a timeval; at
        API level 7.2 a timespec)."""
        if not interpol or archive:
            return c_api.PM_MODE_FORW, None
        if _API_LEVEL >= (7, 2):
            return c_api.PM_MODE_INTERP, timespec(interval.tv_sec, interval.tv_nsec)
        return c_api.PM_MODE_INTERP, timespec(interval.tv_sec, interval.tv_usec * 1000)

    def prepare_execute(self, options: Any, archive: Any, interpol: Any, interval: Any) -> None:
        """What a tool does before its fetch loop: the time zone from the options, and for
        an archive the mode, origin and step."""
        self._use()
        self.set_timezone(options)
        if self.type == c_api.PM_CONTEXT_ARCHIVE:
            mode, step = pmContext.get_mode_step(archive, interpol, interval)
            # the options object may be the tool's own: the official method names
            if _API_LEVEL >= (7, 2):
                self._set_mode_timespec(mode, options.pmGetOptionOrigin(), step)
            else:
                self._set_mode_timespec(mode, options.pmGetOptionHighResOrigin(), step)


def flat_of_numpmid(result: Any) -> int:
    """The number of value sets of a result (an LP_pmResult or a pmResult)."""
    contents = result.contents if isinstance(result, LP_pmResult) else result
    return contents.numpmid


def _pmns_loaded() -> bool:
    """Whether pmLoadNameSpace was called (pcp._libpcp.pmns, which it imports, keeps
    that): the name operations then go through the loaded PMNS, not the context's."""
    module = sys.modules.get("pcp._libpcp.pmns")
    return module is not None and module.ATTEMPTED


def _uint_arg(value: Any) -> int:
    """Argument check of the official binding's ctypes calls (c_uint parameters)."""
    if not isinstance(value, int):
        raise ctypes.ArgumentError("argument 1: TypeError: wrong type")
    return value & 0xFFFFFFFF


def _xtb_delta(mode: int, delta: int) -> Tuple[int, int]:
    """pmSetMode's int delta as (sec, nsec), computed as libpcp 6.0.3's pmSetMode does:
    milliseconds, or the unit an extended time base (PM_XTB_SET) names, in C int
    arithmetic (a product wraps at 32 bits), with its 360-second hour, and nanoseconds
    (PM_TIME_NSEC) and microseconds (PM_TIME_USEC) kept whole in the nsec field, not
    normalised (the interpolator's advance wraps their sum as libpcp does)."""
    unit = (mode >> 16) & 0xFF if mode & c_api.PM_XTB_FLAG else c_api.PM_TIME_MSEC
    if unit == c_api.PM_TIME_NSEC:
        return 0, delta
    if unit == c_api.PM_TIME_USEC:
        return 0, _wrap_int32(delta * 1000)
    if unit == c_api.PM_TIME_SEC:
        return delta, 0
    if unit == c_api.PM_TIME_MIN:
        return _wrap_int32(delta * 60), 0
    if unit == c_api.PM_TIME_HOUR:
        return _wrap_int32(delta * 360), 0
    # milliseconds, and any other unit: C's division and remainder truncate towards zero
    sec = abs(delta) // 1000 * (1 if delta >= 0 else -1)
    return sec, 1000000 * (delta - sec * 1000)


class pmOptions(object):
    """Command-line options of a PCP tool (libpcp's pmGetOptions), held process-wide as
    the official binding holds them: a new pmOptions resets them all."""

    mode = property(lambda self: self._mode, None, None, None)
    delta = property(lambda self: self._delta, None, None, None)
    need_reset = property(lambda self: self._need_reset,
                          lambda self, value: setattr(self, "_need_reset", value), None, None)

    def __init__(self, short_options: Optional[str] = None, short_usage: Optional[str] = None,
                 flags: int = 0) -> None:
        c_api.pmResetAllOptions()
        if short_options is not None:
            c_api.pmSetShortOptions(short_options)
        if short_usage is not None:
            c_api.pmSetShortUsage(short_usage)
        # scripts always want the archive's bounds evaluated unless they say otherwise
        c_api.pmSetOptionFlags(flags if flags != 0 else c_api.PM_OPTFLAG_BOUNDARIES)
        self._delta = 1                         # seconds, for pmSetMode on an archive
        self._mode = c_api.PM_MODE_INTERP
        self._need_reset = False

    def __del__(self) -> None:
        # not at the interpreter's exit: pcp._libpcp.options, imported after this
        # module, may have been torn down already, and nothing is left to reset for
        if getattr(self, "_need_reset", False) and not sys.is_finalizing():
            c_api.pmResetAllOptions()

    @staticmethod
    def daemonize() -> None:
        """Continue in the background, detached from the terminal."""
        return c_api.pmServerStart()

    # ---- declaring options -------------------------------------------------------------
    def pmGetOptionFlags(self) -> int:
        return c_api.pmGetOptionFlags()

    def pmSetOptionContext(self, context: int) -> None:
        return c_api.pmSetOptionContext(context)

    def pmSetOptionFlags(self, flags: int) -> None:
        return c_api.pmSetOptionFlags(flags)

    def pmGetOptionErrors(self) -> int:
        return c_api.pmGetOptionErrors()

    def pmSetOptionErrors(self) -> None:
        """Count one more error (the official method takes no count)."""
        return c_api.pmSetOptionErrors(c_api.pmGetOptionErrors() + 1)

    def pmSetShortUsage(self, short_usage: str) -> None:
        return c_api.pmSetShortUsage(short_usage)

    def pmSetShortOptions(self, short_options: str) -> None:
        return c_api.pmSetShortOptions(short_options)

    def pmSetOptionSamples(self, count: str) -> None:
        """Set the sample count from its text."""
        return c_api.pmSetOptionSamples(count)

    def pmSetOptionInterval(self, interval: str) -> None:
        """Set the sampling interval from its pmParseHighResInterval text."""
        return c_api.pmSetOptionInterval(interval)

    def pmGetOperands(self) -> Optional[List[str]]:
        """The words left after the options (None for none), once they are parsed."""
        return c_api.pmGetOperands()

    def pmGetNonOptionsFromList(self, argv: List[str]) -> Optional[List[str]]:
        """Deprecated form of pmGetOperands."""
        return c_api.pmGetNonOptionsFromList(argv)

    def pmNonOptionsFromList(self, argv: List[str]) -> Optional[List[str]]:
        """Deprecated form of pmGetOperands."""
        return c_api.pmGetNonOptionsFromList(argv)

    def pmSetOptionCallback(self, func: Callable[..., Any]) -> None:
        """func(option, optarg, index) for every option that is not a standard one (or
        that the override callback claimed); option is the short option character, or
        the long name of a long-only option."""
        return c_api.pmSetOptionCallback(func)

    def pmSetOverrideCallback(self, func: Callable[[str], int]) -> None:
        """func(option) before each option: non-zero to handle a standard option oneself."""
        return c_api.pmSetOverrideCallback(func)

    def pmSetLongOption(self, long_opt: str, has_arg: int, short_opt: Optional[str],
                        argname: str, message: str) -> int:
        """Declare an option: its long name, whether it takes an argument, its short
        form, and its argument's name and message for the usage text."""
        if short_opt is None:
            short_opt = ""
        return c_api.pmSetLongOption(long_opt, has_arg, short_opt, argname, message)

    def pmSetLongOptionHeader(self, heading: str) -> None:
        """Start a section of the usage message."""
        return c_api.pmSetLongOptionHeader(heading)

    def pmSetLongOptionText(self, text: str) -> None:
        """A line of descriptive text in the usage message."""
        return c_api.pmSetLongOptionText(text)

    def pmSetLongOptionAlign(self) -> int:
        return c_api.pmSetLongOptionAlign()

    def pmSetLongOptionArchive(self) -> int:
        return c_api.pmSetLongOptionArchive()

    def pmSetLongOptionDebug(self) -> int:
        return c_api.pmSetLongOptionDebug()

    def pmSetLongOptionGuiMode(self) -> None:
        """Not implemented by the official binding either."""
        return None

    def pmSetLongOptionHost(self) -> int:
        return c_api.pmSetLongOptionHost()

    def pmSetLongOptionHostsFile(self) -> int:
        return c_api.pmSetLongOptionHostsFile()

    def pmSetLongOptionSpecLocal(self) -> int:
        return c_api.pmSetLongOptionSpecLocal()

    def pmSetLongOptionLocalPMDA(self) -> int:
        return c_api.pmSetLongOptionLocalPMDA()

    def pmSetLongOptionOrigin(self) -> int:
        return c_api.pmSetLongOptionOrigin()

    def pmSetLongOptionGuiPort(self) -> None:
        """Not implemented by the official binding either."""
        return None

    def pmSetLongOptionStart(self) -> int:
        return c_api.pmSetLongOptionStart()

    def pmSetLongOptionSamples(self) -> int:
        return c_api.pmSetLongOptionSamples()

    def pmSetLongOptionFinish(self) -> int:
        return c_api.pmSetLongOptionFinish()

    def pmSetLongOptionInterval(self) -> int:
        return c_api.pmSetLongOptionInterval()

    def pmSetLongOptionVersion(self) -> int:
        return c_api.pmSetLongOptionVersion()

    def pmSetLongOptionTimeZone(self) -> int:
        return c_api.pmSetLongOptionTimeZone()

    def pmSetLongOptionHostZone(self) -> int:
        return c_api.pmSetLongOptionHostZone()

    def pmSetLongOptionHelp(self) -> int:
        return c_api.pmSetLongOptionHelp()

    def pmSetLongOptionArchiveList(self) -> int:
        return c_api.pmSetLongOptionArchiveList()

    def pmSetLongOptionArchiveFolio(self) -> int:
        return c_api.pmSetLongOptionArchiveFolio()

    def pmSetLongOptionContainer(self) -> int:
        return c_api.pmSetLongOptionContainer()

    def pmSetLongOptionHostList(self) -> int:
        return c_api.pmSetLongOptionHostList()

    # ---- what the options say ----------------------------------------------------------
    def pmGetOptionContext(self) -> Optional[int]:
        return c_api.pmGetOptionContext()

    def pmGetOptionHosts(self) -> Optional[List[str]]:
        return c_api.pmGetOptionHosts()

    def pmGetOptionArchives(self) -> Optional[List[str]]:
        return c_api.pmGetOptionArchives()

    def pmGetOptionAlignOptarg(self) -> Optional[str]:
        return c_api.pmGetOptionAlign_optarg()

    def pmGetOptionFinishOptarg(self) -> Optional[str]:
        return c_api.pmGetOptionFinish_optarg()

    def _origin_timespec(self) -> Optional[timespec]:
        """The -O origin as a timespec (6.x's pmGetOptionHighResOrigin, 7.x's
        pmGetOptionOrigin), for this package's own use at every API level."""
        return _timespec_of(c_api.pmGetOptionOrigin_sec(), c_api.pmGetOptionOrigin_nsec)

    def _alignment_timespec(self) -> Optional[timespec]:
        alignment = c_api.pmGetOptionAlign_optarg()
        if alignment is None:
            return None
        return timespec.fromInterval(alignment)

    if _API_LEVEL >= (7, 2):
        # 7.x's options give every time as a timespec, under the names of 6.x's timevals
        def pmGetOptionAlignment(self) -> Optional[timespec]:
            return self._alignment_timespec()

        def pmGetOptionStart(self) -> Optional[timespec]:
            return _timespec_of(c_api.pmGetOptionStart_sec(), c_api.pmGetOptionStart_nsec)

        def pmGetOptionFinish(self) -> Optional[timespec]:
            return _timespec_of(c_api.pmGetOptionFinish_sec(), c_api.pmGetOptionFinish_nsec)

        def pmGetOptionOrigin(self) -> Optional[timespec]:
            return self._origin_timespec()

        def pmGetOptionInterval(self) -> Optional[timespec]:
            return _timespec_of(c_api.pmGetOptionInterval_sec(),
                                c_api.pmGetOptionInterval_nsec)
    else:
        def pmGetOptionAlignment(self) -> Optional[timeval]:
            alignment = c_api.pmGetOptionAlign_optarg()
            if alignment is None:
                return None
            return timeval.fromInterval(alignment)

        def pmGetOptionHighResAlignment(self) -> Optional[timespec]:
            return self._alignment_timespec()

        def pmGetOptionStart(self) -> Optional[timeval]:
            return _timeval_of(c_api.pmGetOptionStart_sec(), c_api.pmGetOptionStart_usec)

        def pmGetOptionHighResStart(self) -> Optional[timespec]:
            return _timespec_of(c_api.pmGetOptionStart_sec(), c_api.pmGetOptionStart_nsec)

        def pmGetOptionFinish(self) -> Optional[timeval]:
            return _timeval_of(c_api.pmGetOptionFinish_sec(), c_api.pmGetOptionFinish_usec)

        def pmGetOptionHighResFinish(self) -> Optional[timespec]:
            return _timespec_of(c_api.pmGetOptionFinish_sec(), c_api.pmGetOptionFinish_nsec)

        def pmGetOptionOrigin(self) -> Optional[timeval]:
            return _timeval_of(c_api.pmGetOptionOrigin_sec(), c_api.pmGetOptionOrigin_usec)

        def pmGetOptionHighResOrigin(self) -> Optional[timespec]:
            return self._origin_timespec()

        def pmGetOptionInterval(self) -> Optional[timeval]:
            return _timeval_of(c_api.pmGetOptionInterval_sec(),
                               c_api.pmGetOptionInterval_usec)

        def pmGetOptionHighResInterval(self) -> Optional[timespec]:
            return _timespec_of(c_api.pmGetOptionInterval_sec(),
                                c_api.pmGetOptionInterval_nsec)

    def pmGetOptionSamples(self) -> Optional[int]:
        return c_api.pmGetOptionSamples()

    def pmGetOptionHostZone(self) -> bool:
        return c_api.pmGetOptionHostZone() != 0

    def pmGetOptionTimezone(self) -> Optional[str]:
        return c_api.pmGetOptionTimezone()

    def pmGetOptionContainer(self) -> Optional[str]:
        return c_api.pmGetOptionContainer()

    def pmGetOptionLocalPMDA(self) -> bool:
        return c_api.pmGetOptionLocalPMDA() != 0

    # ---- setting sources ---------------------------------------------------------------
    def pmSetOptionArchive(self, archive: str) -> None:
        return c_api.pmSetOptionArchive(archive)

    def pmSetOptionArchiveList(self, archives: str) -> None:
        return c_api.pmSetOptionArchiveList(archives)

    def pmSetOptionArchiveFolio(self, folio: str) -> None:
        return c_api.pmSetOptionArchiveFolio(folio)

    def pmSetOptionContainer(self, container: str) -> None:
        return c_api.pmSetOptionContainer(container)

    def pmSetOptionHost(self, host: str) -> None:
        return c_api.pmSetOptionHost(host)

    def pmSetOptionHostList(self, hosts: str) -> None:
        return c_api.pmSetOptionHostList(hosts)

    def pmSetOptionSpecLocal(self, spec: str) -> None:
        return c_api.pmSetOptionSpecLocal(spec)

    def pmSetOptionLocalPMDA(self) -> None:
        return c_api.pmSetOptionLocalPMDA()


def _timeval_of(sec: Optional[int], usec: Callable[[], Optional[int]]) -> Optional[timeval]:
    return None if sec is None else timeval(sec, usec())


def _timespec_of(sec: Optional[int], nsec: Callable[[], Optional[int]]) -> Optional[timespec]:
    return None if sec is None else timespec(sec, nsec())


def _set_context_options(handle: int, mode: int, delta: int) -> int:
    """cpmapi.pmSetContextOptions: libpcp's pmGetContextOptions against the context
    `handle` (zone, time window), then the archive's initial pmSetModeHighRes."""
    opts = _options().OPTIONS
    host = _registry.contexts.get(handle)
    if host is None:
        return c_api.PM_ERR_NOCONTEXT
    _registry.current = handle

    def label_and_end(ctx: Any) -> Tuple[Tuple[int, int], _TUnion[Tuple[int, int], int]]:
        try:
            end: _TUnion[Tuple[int, int], int] = ctx.archive_end()
        except pmErr as err:
            end = err.code          # pmGetArchiveEnd's error: warned about, not fatal
        return ctx.archive_label().stamp, end

    def bounds(index: int) -> Tuple[Tuple[int, int], _TUnion[Tuple[int, int], int]]:
        if index == 0 and len(opts.archives) <= 1:
            return label_and_end(host)
        from pcp._archive.context import ArchiveContext  # pylint: disable=import-outside-toplevel

        other = ArchiveContext(-1, opts.archives[index], 0)
        try:
            return label_and_end(other)
        finally:
            other.close()

    def context_zone() -> int:
        # a borrowed pmContext: it must not close the context when it goes
        wrapper = pmContext.__new__(pmContext)
        wrapper._host = host
        wrapper._ctx = handle
        try:
            return wrapper.pmNewContextZone()
        finally:
            wrapper._host = None

    status = _options().context_options(
        opts, host.host_name, context_zone,
        lambda tz: _zones().new_zone(tz), bounds)
    if status < 0:
        return status
    if opts.context == c_api.PM_CONTEXT_ARCHIVE and opts.flags & c_api.PM_OPTFLAG_BOUNDARIES:
        interval = opts.interval if opts.interval != (0, 0) else (delta, 0)
        direction = 1 if interval > (0, 0) else (-1 if interval < (0, 0) else 0)
        try:
            host.set_mode(mode, opts.origin, interval, direction)
        except pmErr as err:
            # (the binding names the call it made: 7.x's pmSetMode is 6.x's pmSetModeHighRes)
            _errors.pmprintf("%s: %s: %s\n" % (
                "pmSetMode" if _API_LEVEL >= (7, 2) else "pmSetModeHighRes",
                _errors.pmGetProgname(), _pmErrStr(err.code)))
            opts.flags |= c_api.PM_OPTFLAG_RUNTIME_ERR
            opts.errors += 1
            return err.code
    return status



class _GroupSource:
    """What a fetchgroup needs of its pmContext (pcp._libpcp.fetchgroup.GroupSource), through
    the context's own PMAPI methods, so that names, profiles and modes behave as they do
    for every other caller of the context."""

    def __init__(self, ctx: "pmContext") -> None:
        self.ctx = ctx
        self.is_archive = ctx.type & 0xFF == c_api.PM_CONTEXT_ARCHIVE

    def lookup_name(self, name: str) -> int:
        return int(self.ctx.pmLookupName(name)[0])

    def lookup_desc(self, pmid: int) -> Tuple[int, int, int, int]:
        _, type_, indom, sem, units = self.ctx._use().desc(pmid)
        return type_, indom, sem, units

    def lookup_instance(self, indom: int, name: str) -> int:
        insts, _ = self.ctx._use().instances(indom, c_api.PM_IN_NULL, _as_bytes(name))
        if len(insts) != 1:
            raise pmErr(c_api.PM_ERR_INST)
        return int(insts[0])

    def add_profile(self, indom: int, insts: List[int]) -> None:
        self.ctx._use().profile.add(indom, insts)

    def del_profile(self, indom: int) -> None:
        self.ctx._use().profile.delete(indom, [])

    def instances(self, indom: int) -> Tuple[List[int], List[bytes]]:
        return self.ctx._use().instances(indom)

    def fetch(self, pmids: List[int]) -> Tuple[Any, int]:
        return self.ctx._use().fetch(pmids, True)

    def position(self) -> Tuple[int, Tuple[int, int], Tuple[int, int], int]:
        host: Any = self.ctx._use()       # an archive context: its mode and position
        return host.mode, host.origin, host.delta, host.direction

    def archive_end(self) -> Tuple[int, int]:
        return self.ctx._use().archive_end()

    def set_mode(self, mode: int, origin: Tuple[int, int],
                 delta: Optional[Tuple[int, int]]) -> None:
        when = timespec()
        when.tv_sec, when.tv_nsec = origin
        interval = None
        if delta is not None:
            interval = timespec()
            interval.tv_sec, interval.tv_nsec = delta
        self.ctx.pmSetModeHighRes(mode, when, interval)

    @staticmethod
    def now() -> Tuple[int, int]:
        return divmod(time.time_ns(), 1000000000)


def _fetchgroup() -> Any:
    """pcp._libpcp.fetchgroup, imported with the first fetchgroup."""
    module = _late_modules.get("fetchgroup")
    if module is None:
        from pcp._libpcp import fetchgroup as module  # pylint: disable=import-outside-toplevel

        _late_modules["fetchgroup"] = module
    return module


class _FetchgroupClass:
    """A class attribute that is a class of pcp._libpcp.fetchgroup, read from it when
    first asked for."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return getattr(_fetchgroup(), self.name)


class fetchgroup(object):
    """A PMAPI fetchgroup (pmCreateFetchGroup and friends): metrics, instance domains,
    event fields and timestamps registered once, then all fetched, converted and
    rate-converted by each fetch(). Each extend_* call returns a callable that gives the
    value(s) of the last fetch, or raises pmErr with the reason there are none. The
    conversions are libpcp 6.0.3's, done in C for the whole group at each fetch."""

    # the official binding's nested classes, pcp._libpcp.fetchgroup's (imported with
    # the first use of a fetchgroup)
    fetchgroup_item = _FetchgroupClass("ItemValue")
    fetchgroup_indom = _FetchgroupClass("IndomValues")
    fetchgroup_event = _FetchgroupClass("EventValues")
    fetchgroup_timespec = _FetchgroupClass("TimeValue")
    fetchgroup_timeval = _FetchgroupClass("TimeValue")
    fetchgroup_timestamp = _FetchgroupClass("TimeValue")

    class pmContext_borrowed(pmContext):   # lgtm[py/missing-call-to-init]
        """The fetchgroup's own context, as get_context() hands it out."""

    def __init__(self, typed: int = c_api.PM_CONTEXT_HOST, target: Any = "local:") -> None:
        """A fetchgroup over a new context of type `typed` on `target`."""
        self.items: List[Any] = []
        if typed == c_api.PM_CONTEXT_LOCAL:
            target = None       # the official binding hands libpcp "", which LOCAL ignores
        try:
            ctx = fetchgroup.pmContext_borrowed(typed, target)
        except pmErr as e:
            raise pmErr(e.code)         # pmCreateFetchGroup's status alone
        self.ctx = ctx
        self._group = _fetchgroup().FetchGroup(_GroupSource(ctx))

    def get_context(self) -> "pmContext":
        """The fetchgroup's context. Changing it (its profile, its mode) changes what the
        fetchgroup fetches, as with libpcp."""
        return self.ctx

    def _type_of(self, name: Optional[str]) -> int:
        # a service of the official binding to dynamically-typed Python: the metric's type
        pmids = self.ctx.pmLookupName(name)
        return self.ctx.pmLookupDescs(pmids)[0].type

    def extend_item(self, metric: Optional[str] = None, mtype: Optional[int] = None,
                    scale: Optional[str] = None, instance: Optional[str] = None) -> Any:
        """Add one value: `metric` (of instance `instance` when it has an instance domain),
        as type `mtype` (the metric's own when None), rescaled to `scale` ("rate",
        "instant" or units such as "Kbyte/s"; counters become rates by default)."""
        if metric is None:
            raise pmErr(-errno.EINVAL)
        if mtype is None:
            mtype = self._type_of(metric)
        self.ctx._use()
        try:
            value = self._group.extend_item(metric, mtype, scale, instance)
        except pmErr as e:
            raise pmErr(e.code)         # pmExtendFetchGroup_item's status alone
        self.items.append(value)
        return value

    def extend_indom(self, metric: Optional[str] = None, mtype: Optional[int] = None,
                     scale: Optional[str] = None, maxnum: int = 100) -> Any:
        """Add every instance of `metric` (up to `maxnum`); calling the result gives a list
        of (instance id, instance name, value callable) in instance order."""
        if metric is None or maxnum < 0:
            raise pmErr(-errno.EINVAL)
        if mtype is None:
            mtype = self._type_of(metric)
        self.ctx._use()
        try:
            values = self._group.extend_indom(metric, mtype, scale, c_uint(maxnum).value)
        except pmErr as e:
            raise pmErr(e.code)
        self.items.append(values)
        return values

    def extend_timespec(self) -> Any:
        """Add the fetch's timestamp; calling the result gives a datetime (local time of
        the context's zone)."""
        stamp = self._group.extend_time(self.ctx._struct_time)
        self.items.append(stamp)
        return stamp

    def extend_timeval(self) -> Any:
        """The same as extend_timespec (microseconds are all a datetime holds)."""
        return self.extend_timespec()

    extend_timestamp = extend_timeval

    def extend_event(self, metric: Optional[str] = None, field: Optional[str] = None,
                     ftype: Optional[int] = None, scale: Optional[str] = None,
                     instance: Optional[str] = None, maxnum: int = 100) -> Any:
        """Add field `field` of the records of event metric `metric`; calling the result
        gives a list of (datetime, value callable), one per record that has the field."""
        if metric is None or maxnum < 0:
            raise pmErr(-errno.EINVAL)
        if ftype is None:
            ftype = self._type_of(field)
        if field is None:
            raise pmErr(-errno.EINVAL)
        self.ctx._use()
        try:
            values = self._group.extend_event(metric, field, ftype, scale, instance,
                                              c_uint(maxnum).value, self.ctx._struct_time)
        except pmErr as e:
            raise pmErr(e.code)
        self.items.append(values)
        return values

    def fetch(self) -> int:
        """Fetch every metric of the group and update every value; returns pmFetch's status
        (its PMCD_* change flags), or raises its error once the values are updated."""
        self.ctx._use()
        return self._group.fetch()

    def clear(self) -> None:
        """Remove every item, keeping the context: the objects handed out no longer change."""
        self.ctx._use()
        self._group.clear()
        self.items = []


class pmMetricSpec(ctypes.Structure):
    """A parsed metric specification ([host:]metric[[instances]] or
    [archive/]metric[[instances]]), as pmParseMetricSpec fills it."""

    _fields_ = [("isarch", c_int), ("source", c_char_p), ("metric", c_char_p),
                ("ninst", c_int), ("inst", ctypes.POINTER(c_char_p))]

    def __str__(self) -> str:
        insts = [str(self.inst[i]) for i in range(self.ninst)]
        return "pmMetricSpec@%#lx src=%s metric=%s insts=%s" % (
            ctypes.addressof(self), self.isarch, self.source, insts)

    @classmethod
    def fromString(cls, string: Any, isarch: int = 0, source: Any = "") -> Any:
        """Parse a specification; a pointer to the pmMetricSpec, or pmErr
        (PM_ERR_GENERIC, libpcp's message) when it is bad. `isarch` and `source` are
        the defaults when the specification names no host or archive."""
        text = string if isinstance(string, bytes) else string.encode("utf-8")
        src = source if isinstance(source, bytes) else source.encode("utf-8")
        from pcp._libpcp import metricspec as _metricspec  # pylint: disable=import-outside-toplevel

        try:
            kind, where, metric, insts = _metricspec.parse_metric_spec(text, isarch, src)
        except _metricspec.MetricSpecError as e:
            raise pmErr(c_api.PM_ERR_GENERIC, e.message) from None
        spec = cls()
        spec.isarch, spec.source, spec.metric, spec.ninst = kind, where, metric, len(insts)
        names = (c_char_p * max(len(insts), 1))(*insts)
        spec.inst = ctypes.cast(names, ctypes.POINTER(c_char_p))
        result = ctypes.pointer(spec)
        result.csbuffer = (names, where, metric, insts)  # keep the strings alive
        return result


pmValueSetPtr = pmValueSet
valueDref = _result_module.valueDref  # re-exported, as the official module defines it


def _fill_desc(desc: pmDesc, t: Tuple[int, int, int, int, int]) -> None:
    desc.pmid, desc.type, desc.indom, desc.sem = t[0], t[1], t[2], t[3]
    # pmUnits is a 32-bit bitfield struct whose in-memory word equals the wire word.
    ctypes.memmove(ctypes.addressof(desc.units), ctypes.byref(ctypes.c_uint32(t[4])), 4)


def _sort_instances(result: Any) -> None:
    """Order each value set by instance id, as pmSortInstances does."""
    flat = flat_of(result)
    if flat is None:
        return
    inst, vtype, ival, dval = flat.inst, flat.vtype, flat.ival, flat.dval
    boff, blen = flat.c.boff, flat.c.blen
    blocks = flat._blocks
    for i in range(flat.numpmid):
        n, first = flat.numval[i], flat.first[i]
        if n <= 1:
            continue
        order = sorted(range(first, first + n), key=lambda k: inst[k])
        for column in (inst, vtype, ival, dval):
            column[first:first + n] = [column[k] for k in order]
        offs = [(boff[k], blen[k]) for k in order]
        for j, (o, ln) in enumerate(offs):
            boff[first + j] = o
            blen[first + j] = ln
        if blocks:
            # Edited or materialised value blocks move with their values.
            moved = {first + j: blocks.pop(k) for j, k in enumerate(order) if k in blocks}
            blocks.update(moved)

def context_of(ctx: pmContext) -> Context:
    """The context behind a pmContext (pcp._core.abc.Context): for this package's own
    tools (the CLI), which read archive metadata the PMAPI does not hand out. Not part of
    the official module."""
    return ctx._use()


# ---------------------------------------------------------------------------
# What scripts see of the module, as the official module shows it
# ---------------------------------------------------------------------------
# More of the official module's names: Python 2's `long`, the C library's name and the
# ctypes prototypes of the libpcp callbacks (pmTraversePMNS, pmMergeLabelSets).
long = int
libc_name = "c" if sys.platform != "win32" else "msvcrt"
traverseCB_type = CFUNCTYPE(None, c_char_p)
mergeLabelSetsCB_type = CFUNCTYPE(c_int, POINTER(pmLabel), c_char_p, c_void_p)

# Names of the official module that cost a tool's start-up (json, ctypes.util's 17 ms)
# and that this module does not use itself: imported on first access.
_LAZY_NAMES = {"json": ("json", None), "find_library": ("ctypes.util", "find_library")}


def pyFileToCFile(fileObj: Any) -> Any:
    """The official module's helper, kept for scripts that call it: a read-mode file
    object on the same file descriptor as `fileObj` (a file object or a descriptor
    number; TypeError / ValueError as Python's PyObject_AsFileDescriptor gives them),
    which does not close the descriptor. The official pmPrintValue hands this object to
    ctypes as libpcp's FILE *, which ctypes refuses (ArgumentError); this package's
    pmPrintValue writes to the file it is given."""
    as_descriptor = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object)(
        ("PyObject_AsFileDescriptor", ctypes.pythonapi))
    return os.fdopen(as_descriptor(fileObj), "r", closefd=False)


def _libc() -> Any:
    """LIBC, the official module's ctypes handle on the C library (its LIBC.free frees
    what libpcp allocated there); loaded on first use, as finding it costs a tool's
    start-up. There is no LIBPCP: this package has no libpcp."""
    from ctypes.util import find_library  # pylint: disable=import-outside-toplevel
    return ctypes.CDLL(find_library("c" if sys.platform != "win32" else "msvcrt"))


_LAZY_VALUES = {"LIBC": _libc}


def __getattr__(name: str) -> Any:
    if name in _LAZY_VALUES:
        value = globals()[name] = _LAZY_VALUES[name]()
        return value
    if name in _LAZY_NAMES:
        import importlib  # pylint: disable=import-outside-toplevel
        module_name, attribute = _LAZY_NAMES[name]
        module = importlib.import_module(module_name)
        value = module if attribute is None else getattr(module, attribute)
        globals()[name] = value
        return value
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_LAZY_NAMES) | set(_LAZY_VALUES))


if _API_LEVEL >= (7, 2):
    # gone from 7.x's module: the Python 2 compatibility names and the HighRes types
    # (the floors below keep them for this package's own use)
    del integer_types, text_type, long, pyFileToCFile, pmHighResResult, pmHighResLogLabel


def _print_as_this_module() -> None:
    """The public types print as the official module's do (<class 'pcp.pmapi.pmDesc'>,
    <pcp.pmapi.LP_pmHighResResult object at ...>): PCP's QA scripts print them. They are
    defined in the floors below; ctypes pointer types take the module that first asked
    for them, so they are renamed too."""
    public = (pmErr, pmUsageErr, pmAtomValue, pmDesc, _structs.pmHighResLogLabel, pmLabel,
              pmLabelSet, pmLogLabel, pmUnits, pmValueBlock, timespec, timeval, tm,
              pmResult, _result_module.pmHighResResult, LP_pmResult, LP_pmHighResResult,
              pmValue, pmValueSet, valueDref, pmMetricSpec)
    if _API_LEVEL >= (7, 2):
        public += (_result_module.pmResult_v2,)
    for cls in public:
        cls.__module__ = __name__
        if issubclass(cls, (ctypes.Structure, ctypes.Union)):
            POINTER(cls).__module__ = __name__


_print_as_this_module()
