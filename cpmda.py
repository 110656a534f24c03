"""The ``cpmda`` module of PCP's Python binding, without libpcp_pmda.

The official ``cpmda`` is a C extension keeping one PMDA's dispatch table in module
globals; here the same functions drive ``pcp._pmda.agent.AGENT``, which speaks pmcd's
PMDA protocol through this package's C codec (csrc/pdu_agent.c).
"""
from __future__ import annotations

import operator as _operator

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List

from pcp._pmda import agent as _agent
from pcp._core.constants import (PMDA_FETCH_NOVALUES, PMDA_FETCH_STATIC,  # noqa: F401
                                 PMDA_FETCH_DYNAMIC, PMDA_CACHE_LOAD, PMDA_CACHE_ADD,
                                 PMDA_CACHE_HIDE, PMDA_CACHE_CULL, PMDA_CACHE_EMPTY,
                                 PMDA_CACHE_SAVE, PMDA_CACHE_ACTIVE, PMDA_CACHE_INACTIVE,
                                 PMDA_CACHE_SIZE, PMDA_CACHE_SIZE_ACTIVE,
                                 PMDA_CACHE_SIZE_INACTIVE, PMDA_CACHE_REUSE,
                                 PMDA_CACHE_WALK_REWIND, PMDA_CACHE_WALK_NEXT, PMDA_CACHE_CHECK,
                                 PMDA_CACHE_REORG, PMDA_CACHE_SYNC, PMDA_CACHE_DUMP,
                                 PMDA_CACHE_DUMP_ALL, PMDA_FLAG_AUTHORIZE, PMDA_FLAG_CONTAINER,
                                 PMDA_ATTR_USERNAME, PMDA_ATTR_USERID, PMDA_ATTR_GROUPID,
                                 PMDA_ATTR_PROCESSID, PMDA_ATTR_CONTAINER)
from pcp._core.constants import PM_ERR_PMDAREADY as _PM_ERR_PMDAREADY
from pcp._core.constants import PM_ERR_PMDANOTREADY as _PM_ERR_PMDANOTREADY
from pcp._core.constants import PMDA_EXT_LABEL_CHANGE as _LABEL_CHANGE
from pcp._core.constants import PMDA_EXT_NAMES_CHANGE as _NAMES_CHANGE

_AGENT = _agent.AGENT


def _checked_int(value: Any, name: str) -> int:
    """A C int argument as CPython's PyArg_Parse "i" takes it (same exceptions)."""
    number = _operator.index(value)
    if number > 0x7fffffff:
        raise OverflowError("signed integer is greater than maximum")
    if number < -0x80000000:
        raise OverflowError("signed integer is less than minimum")
    return number


def pmda_pmid(cluster: int, item: int) -> int:
    """The PMID of (cluster, item) in this PMDA's domain."""
    return _s32(((_AGENT.domain & 0x1ff) << 22) | ((_checked_int(cluster, "pmda_pmid") & 0xfff)
                                                   << 10) | (_checked_int(item, "pmda_pmid") & 0x3ff))


def pmid_build(domain: int, cluster: int, item: int) -> int:
    return _s32(((_checked_int(domain, "pmid_build") & 0x1ff) << 22) |
                ((_checked_int(cluster, "pmid_build") & 0xfff) << 10) |
                (_checked_int(item, "pmid_build") & 0x3ff))


def pmid_cluster(pmid: int) -> int:
    return (_checked_int(pmid, "pmid_cluster") >> 10) & 0xfff


def pmda_indom(serial: int) -> int:
    return _s32(((_AGENT.domain & 0x1ff) << 22) | (_checked_int(serial, "pmda_indom") & 0x3fffff))


def indom_build(domain: int, serial: int) -> int:
    return _s32(((_checked_int(domain, "indom_build") & 0x1ff) << 22) |
                (_checked_int(serial, "indom_build") & 0x3fffff))


def pmda_units(dim_time: int, dim_space: int, dim_count: int, scale_space: int,
               scale_time: int, scale_count: int) -> int:
    """The pmUnits word; like the official module the first argument lands in dimSpace."""
    word = (((dim_time & 0xf) << 28) | ((dim_space & 0xf) << 24) | ((dim_count & 0xf) << 20) |
            ((scale_space & 0xf) << 16) | ((scale_time & 0xf) << 12) | ((scale_count & 0xf) << 8))
    return _s32(word)


def pmda_uptime(seconds: int) -> str:
    now = _checked_int(seconds, "pmda_uptime")
    days, now = divmod(now, 86400)
    hours, now = divmod(now, 3600)
    mins, secs = divmod(now, 60)
    if days > 1:
        return "%ddays %02d:%02d:%02d" % (days, hours, mins, secs)
    if days == 1:
        return "%dday %02d:%02d:%02d" % (days, hours, mins, secs)
    return "%02d:%02d:%02d" % (hours, mins, secs)


def pmda_set_comm_flags(flags: int) -> None:
    _AGENT.comm_flags |= _checked_int(flags, "pmda_set_comm_flags")


def init_dispatch(domain: int, name: str, log: str, help: str) -> None:  # noqa: A002
    _AGENT.init_dispatch(domain, name, log, help)


def connect_pmcd() -> None:
    _AGENT.connect()


def pmda_dispatch(indoms: List[Any], metrics: List[Any]) -> None:
    if not isinstance(indoms, list) or not isinstance(metrics, list):
        _agent.notify(_agent.LOG_ERR,
                      "pmda_dispatch failed to get metrics/indoms (non-list types)\n")
        raise TypeError("pmda_dispatch failed to get metrics/indoms (non-list types)")
    _AGENT.dispatch(indoms, metrics)


def pmda_notready() -> None:
    _AGENT.send(_agent.wire.encode_error(_PM_ERR_PMDANOTREADY))


def pmda_ready() -> None:
    _AGENT.send(_agent.wire.encode_error(_PM_ERR_PMDAREADY))


def _dict_or_none(value: Any, what: str) -> Any:
    if not isinstance(value, dict):
        _agent.notify(_agent.LOG_ERR, "attempted to refresh %s with non-dict type\n" % what)
        return None
    return value


def pmns_refresh(metrics: Dict[int, str]) -> None:
    _AGENT.pmns_dict = _dict_or_none(metrics, "namespace")
    if _AGENT.pmns_dict is not None and _AGENT.need_refresh:
        _AGENT.pmns_rebuild()


def pmid_oneline_refresh(oneline: Dict[int, str]) -> None:
    _AGENT.texts["pmid_oneline"] = _dict_or_none(oneline, "pmid oneline help")


def pmid_longtext_refresh(longtext: Dict[int, str]) -> None:
    _AGENT.texts["pmid_longtext"] = _dict_or_none(longtext, "pmid long help")


def indom_oneline_refresh(oneline: Dict[int, str]) -> None:
    _AGENT.texts["indom_oneline"] = _dict_or_none(oneline, "indom oneline help")


def indom_longtext_refresh(longtext: Dict[int, str]) -> None:
    _AGENT.texts["indom_longtext"] = _dict_or_none(longtext, "indom long help")


def set_notify_change() -> None:
    _AGENT.ext_flags |= _LABEL_CHANGE | _NAMES_CHANGE


def set_need_refresh() -> None:
    _AGENT.need_refresh = True


def _setter(key: str) -> Callable[[Callable], None]:
    def set_callback(func: Callable) -> None:
        if not callable(func):
            raise TypeError("parameter must be callable")
        _AGENT.callbacks[key] = func
    set_callback.__name__ = "set_" + key
    set_callback.__doc__ = "Register the %s callback." % key
    return set_callback


set_fetch = _setter("fetch")
set_refresh = _setter("refresh")
set_instance = _setter("instance")
set_label = _setter("label")
set_notes = _setter("notes")
set_store_callback = _setter("store_callback")
set_fetch_callback = _setter("fetch_callback")
set_label_callback = _setter("label_callback")
set_notes_callback = _setter("notes_callback")
set_attribute_callback = _setter("attribute_callback")
set_endcontext_callback = _setter("endcontext_callback")
set_refresh_all = _setter("refresh_all")
set_refresh_metrics = _setter("refresh_metrics")


def pmda_log(message: str) -> None:
    _agent.notify(_agent.LOG_INFO, "%s\n" % message)


def pmda_dbg(message: str) -> None:
    _agent.notify(_agent.LOG_DEBUG, "%s\n" % message)


def pmda_err(message: str) -> None:
    _agent.notify(_agent.LOG_ERR, "%s\n" % message)


def _s32(v: int) -> int:
    v &= 0xffffffff
    return v - (1 << 32) if v & 0x80000000 else v


# the future import and the type checkers' flag bind names the official module lacks
del annotations, TYPE_CHECKING
