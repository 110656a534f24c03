"""pcp.pmi: write PCP archives (the Log Import API), a drop-in for the official module.

The same classes, methods, return values and exceptions as PCP's own ``pcp.pmi`` (the
wrapper of libpcp_import), without libpcp_import: the library's behaviour is reproduced by
``pcp._archive.writer`` and the records are encoded in C. Example::

    from pcp import pmi, pmapi

    log = pmi.pmiLogImport("loadtest")
    log.pmiSetHostname("www.abc.com")
    log.pmiSetTimezone("EST-10")
    pmid = log.pmiID(60, 2, 0)
    indom = log.pmiInDom(60, 2)
    units = log.pmiUnits(0, 0, 0, 0, 0, 0)
    log.pmiAddMetric("kernel.all.load", pmid, pmapi.PM_TYPE_FLOAT, indom,
                     pmapi.PM_SEM_INSTANT, units)
    log.pmiAddInstance(indom, "1 minute", 1)
    log.pmiPutValue("kernel.all.load", "1 minute", "0.01")
    log.pmiWrite(1700000000, 0)
    log.pmiEnd()

Beyond the official module: :func:`write_frame` writes a pandas DataFrame (as
``pcp.bulk.read_archive`` returns them) to an archive in one call.
"""

from __future__ import annotations

import ctypes as _ctypes
from ctypes import POINTER, c_char_p, c_int, c_longlong, c_uint, cast  # noqa: F401

from cpmi import PMI_MAXERRMSGLEN, pmiErrSymDict  # noqa: F401  (as the official module)
from pcp._core.level import API_LEVEL as _API_LEVEL
from pcp._core.units import units_to_int as _units_word
from pcp._decode.result import flat_of as _flat_of, store_arrays as _store_arrays
from pcp._decode.result import usec_of as _usec_of
from pcp._libpcp.strings import pmID_build as _pmID_build, pmInDom_build as _pmInDom_build
from pcp.pmapi import pmHighResResult, pmID, pmInDom, pmResult, pmUnits  # noqa: F401

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, Optional

# the names the official module imports: 6.0.3's the ctypes module, 6.3's these
if _API_LEVEL >= (6, 3):
    from ctypes import CDLL, create_string_buffer  # noqa: F401
    from ctypes.util import find_library  # noqa: F401
    from datetime import datetime
    from math import modf
else:
    ctypes = _ctypes

_writer_module: Any = None


def _writer() -> Any:
    """pcp._archive.writer, loaded when an archive is first written: a tool that only
    imports this module (pmrep does) does not pay for it."""
    global _writer_module
    if _writer_module is None:
        from pcp._archive import writer  # pylint: disable=import-outside-toplevel

        _writer_module = writer
    return _writer_module


def _int_arg(value: Any, position: int) -> int:
    """A C int / unsigned argument as ctypes converts it: any int, wrapped to 32 bits."""
    if not isinstance(value, int):
        raise _ctypes.ArgumentError("argument %d: TypeError: wrong type" % position)
    return value & 0xFFFFFFFF


def _signed(value: int) -> int:
    return value - (1 << 32) if value & 0x80000000 else value


def _longlong_arg(value: Any, position: int) -> int:
    if not isinstance(value, int):
        raise _ctypes.ArgumentError("argument %d: TypeError: wrong type" % position)
    value &= 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value & (1 << 63) else value


def _encoded(text: Any) -> bytes:
    return text if isinstance(text, bytes) else text.encode("utf-8")


class pmiErr(Exception):
    """A Log Import API error: ``code`` (also ``errno()``) is libpcp_import's status."""

    def __init__(self, *args: Any) -> None:
        super(pmiErr, self).__init__(*args)
        self.args = list(args)  # type: ignore[assignment]
        if args and isinstance(args[0], int):
            self.code = args[0]
        else:
            self.code = 0

    def __str__(self) -> str:
        try:
            symbol = pmiErrSymDict[self.code]
            text: Any = _writer().err_str(self.code).encode("utf-8")[:PMI_MAXERRMSGLEN - 1]
        except KeyError:
            symbol = text = ""
        return "%s %s" % (symbol, text)

    def errno(self) -> int:
        return self.code


class pmiLogImport(object):
    """A Log Import context: a PCP archive being created from an external source."""

    def read_path(self) -> bytes:
        """Property for archive path."""
        return self._path

    def read_ctx(self) -> int:
        """Property for log import context."""
        return self._ctx

    path = property(read_path, None, None, None)
    ctx = property(read_ctx, None, None, None)

    def __init__(self, path: Any, inherit: int = 0) -> None:
        if not isinstance(path, bytes):
            path = path.encode("utf-8")
        self._path = path
        self._ctx = _writer().start(path, _int_arg(inherit, 2))
        if self._ctx < 0:
            raise pmiErr(self._ctx)
        self._context = _writer().context_of(self._ctx)

    def __del__(self) -> None:
        # as the official binding: select this context (which fails once it has ended,
        # leaving another one current) and end whatever context is current
        # the module loaded by __init__ (at exit nothing can be imported any more)
        writer = _writer_module
        if getattr(self, "_ctx", None) is None or writer is None:
            return
        writer.use_context(self._ctx)
        writer.end()
        self._ctx = -1
        self._context = None

    def _select(self) -> None:
        status = _writer().select(self._ctx)
        if status < 0:
            raise pmiErr(status)

    @staticmethod
    def _check(status: int) -> int:
        if status < 0:
            raise pmiErr(status)
        return status

    def pmiSetHostname(self, hostname: Any) -> int:
        """PMI - set the source host name for a Log Import archive"""
        self._select()
        return self._check(_writer().set_hostname(_encoded(hostname)))

    def pmiSetTimezone(self, timezone: Any) -> int:
        """PMI - set the source timezone for a Log Import archive"""
        self._select()
        return self._check(_writer().set_timezone(_encoded(timezone)))

    def pmiSetVersion(self, version: Any) -> int:
        """PMI - set the output archive version (2 or 3)"""
        self._select()
        if not isinstance(version, int):
            version = 2
        return self._check(_writer().set_version(_signed(_int_arg(version, 1))))

    @staticmethod
    def pmiID(domain: int, cluster: int, item: int) -> int:
        """PMI - construct a pmID data structure (helper routine)"""
        return _pmID_build(_int_arg(domain, 1), _int_arg(cluster, 2), _int_arg(item, 3))

    @staticmethod
    def pmiCluster(domain: int, cluster: int) -> int:
        """PMI - construct a pmID data structure (helper routine)"""
        return _pmID_build(_int_arg(domain, 1), _int_arg(cluster, 2), 0)

    @staticmethod
    def pmiInDom(domain: int, serial: int) -> int:
        """PMI - construct a pmInDom data structure (helper routine)"""
        return _pmInDom_build(_int_arg(domain, 1), _int_arg(serial, 2))

    @staticmethod
    def pmiUnits(dim_space: int, dim_time: int, dim_count: int,
                 scale_space: int, scale_time: int, scale_count: int) -> pmUnits:
        """PMI - construct a pmiUnits data structure (helper routine)"""
        args = [_signed(_int_arg(v, i + 1)) for i, v in enumerate(
            (dim_space, dim_time, dim_count, scale_space, scale_time, scale_count))]
        return pmUnits(*args)

    def pmiAddMetric(self, name: Any, pmid: int, typed: int, indom: int, sem: int,
                     units: pmUnits) -> int:
        """PMI - add a new metric definition to a Log Import context"""
        self._select()
        name = _encoded(name)
        pmid, typed, indom, sem = (_int_arg(pmid, 2), _int_arg(typed, 3),
                                   _int_arg(indom, 4), _int_arg(sem, 5))
        if not isinstance(units, pmUnits):
            raise _ctypes.ArgumentError("argument 6: TypeError: expected pmUnits instance "
                                       "instead of %s" % type(units).__name__)
        return self._check(_writer().add_metric(name, pmid, _signed(typed), indom, _signed(sem),
                                         _units_word(units) & 0xFFFFFFFF))

    def pmiAddInstance(self, indom: int, instance: Any, instid: int) -> int:
        """PMI - add element to an instance domain in a Log Import context"""
        self._select()
        instance = _encoded(instance)
        return self._check(_writer().add_instance(_int_arg(indom, 1), instance,
                                           _signed(_int_arg(instid, 3))))

    def pmiPutValue(self, name: Any, inst: Any, value: Any) -> int:
        """PMI - add a value for a metric-instance pair"""
        status = _writer().put_value_in(self._context, self._ctx, name, inst, value)
        if status < 0:
            raise pmiErr(status)
        return status

    def pmiGetHandle(self, name: Any, inst: Any) -> int:
        """PMI - define a handle for a metric-instance pair"""
        self._select()
        name = _encoded(name)
        if inst is not None:
            inst = _encoded(inst)
        return self._check(_writer().get_handle(name, inst))

    def pmiPutValueHandle(self, handle: int, value: Any) -> int:
        """PMI - add a value for a metric-instance pair via a handle"""
        if handle.__class__ is not int or not -0x80000000 <= handle <= 0x7FFFFFFF:
            self._select()
            _encoded(value)
            handle = _signed(_int_arg(handle, 1))
        status = _writer().put_value_handle_in(self._context, self._ctx, handle, value)
        if status < 0:
            raise pmiErr(status)
        return status

    def pmiHighResWrite(self, sec: int, nsec: int) -> int:
        """PMI - flush data to a Log Import archive"""
        self._select()
        return self._check(_writer().write(_longlong_arg(sec, 1), _signed(_int_arg(nsec, 2))))

    def pmiWrite(self, sec: int, usec: int) -> int:
        """PMI - flush data to a Log Import archive"""
        self._select()
        return self._write_timeval(sec, usec)

    def _write_timeval(self, sec: Any, usec: Any) -> int:
        sec = _longlong_arg(sec, 1)
        usec = _signed(_int_arg(usec, 2))
        return self._check(_writer().write(sec, _signed((usec * 1000) & 0xFFFFFFFF)))

    def pmiPutMark(self) -> int:
        """PMI - write a <mark> record to a Log Import archive"""
        self._select()
        return self._check(_writer().put_mark())

    def put_result(self, result: Any) -> int:
        """PMI - add a data record to a Log Import archive"""
        self._select()
        return self._check(_put_result(result, highres=False))

    def put_highres_result(self, result: Any) -> int:
        """PMI - add a data record to a Log Import archive"""
        self._select()
        return self._check(_put_result(result, highres=True))

    def pmiPutText(self, typ: int, cls: int, ident: int, content: Any) -> int:
        """PMI - add a text record to a Log Import archive"""
        self._select()
        content = _encoded(content)
        return self._check(_writer().put_text(_int_arg(typ, 1), _int_arg(cls, 2),
                                       _int_arg(ident, 3), content))

    def pmiPutLabel(self, typ: int, ident: int, inst: int, name: Any, content: Any) -> int:
        """PMI - add a label record to a Log Import archive"""
        self._select()
        name = _encoded(name)
        content = _encoded(content)
        return self._check(_writer().put_label(_int_arg(typ, 1), _int_arg(ident, 2),
                                        _int_arg(inst, 3), name, content))

    @staticmethod
    def pmiDump() -> None:
        """PMI - dump the current Log Import contexts (diagnostic)"""
        _writer().dump()

    def pmiEnd(self) -> int:
        """PMI - close current context and finish a Log Import archive"""
        self._select()
        status = _writer().end()
        self._ctx = -1
        self._context = None
        return self._check(status)


def _put_result(result: Any, highres: bool) -> int:
    """pmiPutResult / pmiPutHighResResult for a result of this package's pmapi."""
    flat = _flat_of(result)
    if flat is None:
        raise _ctypes.ArgumentError("argument 1: TypeError: expected a pmResult of pcp.pmapi")
    contents = result.contents if hasattr(result, "contents") else result
    numpmid = contents.numpmid
    arrays = _store_arrays(flat, numpmid)
    sets = []
    k = 0
    for i in range(numpmid):
        numval = arrays["numvals"][i]
        values = []
        for _ in range(max(numval, 0)):
            off, n = arrays["poffs"][k], arrays["plens"][k]
            payload = arrays["payload"][off:off + n]
            values.append((arrays["insts"][k], arrays["lvals"][k], arrays["vtypes"][k],
                           4 + n, payload))
            k += 1
        sets.append((arrays["pmids"][i], numval, arrays["valfmts"][i], values))
    nsec = flat.nsec if highres else _usec_of(flat.nsec) * 1000
    return _writer().put_result_sets(sets, (flat.sec, nsec))


def write_frame(frame: Any, path: Any, form: Optional[str] = None, version: int = 3,
                hostname: Optional[str] = None, timezone: Optional[str] = None) -> int:
    """Beyond the official module: write a pandas DataFrame (or an Arrow table) to the
    archive `path` in one call, the reverse of ``pcp.bulk.read_archive(...).to_pandas(form)``
    (or ``.to_arrow(form)``).

    `form` is "wide" (a DatetimeIndex and a column per metric or "metric[instance]") or
    "long" (columns time, metric, instance, value and optionally text), guessed from the
    columns when None. Each row becomes one record; the metric types follow the column
    dtypes. The label's zone is `timezone`, else the zone of the frame's times (the
    archive zone pcp.bulk's indexes carry; UTC for naive times). Returns the number of
    records written."""
    from pcp._bulk.frame_writer import write_frame as _write_frame

    return _write_frame(frame, path, form=form, version=version, hostname=hostname,
                        timezone=timezone)


def _pmiWrite_63(self: pmiLogImport, sec: Any, usec: Any = None) -> int:
    """PMI - flush data to a Log Import archive: a time since the epoch as seconds and
    microseconds, or as a float or a (naive, UTC) datetime alone"""
    self._select()
    if sec and not usec:   # sic: 6.3's test, so sec=0 with usec=None is refused
        if isinstance(sec, datetime):
            sec = float((sec - _EPOCH).total_seconds())
        if isinstance(sec, float):
            fraction, whole = modf(sec)
            sec, usec = int(whole), int(fraction * 1000000)
        else:
            usec = 0
    return self._write_timeval(sec, usec)


if _API_LEVEL >= (6, 3):
    _EPOCH = datetime(1970, 1, 1)    # 6.3's datetime.utcfromtimestamp(0)
    _pmiWrite_63.__name__ = _pmiWrite_63.__qualname__ = "pmiWrite"
    pmiLogImport.pmiWrite = _pmiWrite_63  # type: ignore[method-assign]

