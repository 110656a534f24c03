"""Performance Co-Pilot's PMDA API (``pcp.pmda``) without libpcp_pmda.

The same classes and methods as the official module (PMDA, MetricDispatch, pmdaMetric,
pmdaIndom, pmdaInstid, pmdaUnits, the indom cache, the callbacks), over ``cpmda``, which
speaks pmcd's PMDA protocol through this package's C codec. See README.md, "Writing a
PMDA with pcp.pmda".
"""
# pylint: disable=invalid-name,too-many-arguments
from __future__ import annotations

import os
import pwd
import sys as _sys
# the ctypes names the official module imports (scripts reach them through it)
from ctypes import (CDLL, POINTER, ArgumentError, Structure, addressof, byref,  # noqa: F401
                    c_char_p, c_int, c_long, c_void_p, cast)
from ctypes.util import find_library  # noqa: F401

TYPE_CHECKING = False      # typing's, without binding its names in the module (6.3's has none)
if TYPE_CHECKING:
    from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

import cpmapi
import cpmda
from pcp._core.errors import pmErr
from pcp._core.level import API_LEVEL as _API_LEVEL
from pcp._pmda import cache as _cache
from pcp._core.errors import pmErrStr as _pmErrStr
from pcp._pmda.agent import AGENT as _AGENT, LOG_ERR as _LOG_ERR, notify as _notify
from pcp.pmapi import pmContext as PCP
from pcp._libpcp.labels import add_labels
from pcp.pmapi import pmDesc, pmInDom, pmLabel, pmLabelSet, pmUnits

__all__ = ["pmdaMetric", "pmdaInstid", "pmdaIndom", "pmdaUnits", "MetricDispatch", "PMDA",
           "pmdaGetContext", "pmdaAddLabels", "pmdaAddLabelFlags", "pmdaAddNotes"]


def pmdaGetContext() -> int:
    """The pmcd client context of the request being answered (pmErr before any)."""
    if _AGENT.last_ctx < 0:
        raise pmErr(_AGENT.last_ctx)
    return _AGENT.last_ctx


def _label_set(label: Any, flags: int) -> Any:
    """A new pmLabelSet (ctypes, POINTER) from label JSON, as __pmAddLabels makes it."""
    if not isinstance(label, bytes):
        raise ArgumentError("argument 2: TypeError: wrong type")
    try:
        added = add_labels(None, label, flags)
    except pmErr as error:
        what = "pmdaAddNotes" if flags & cpmapi.PM_LABEL_OPTIONAL else "pmdaAddLabels"
        _notify(_LOG_ERR, "%s: %s (%s)\n" % (what, label.decode("utf-8", "replace"),
                                              _pmErrStr(error.args[0])))
        raise
    lset = pmLabelSet()
    entries = added.entries()
    array = (pmLabel * max(len(entries), 1))()
    for i, (name, namelen, lflags, value, valuelen) in enumerate(entries):
        array[i].name = name
        array[i].namelen = namelen
        array[i].flags = lflags
        array[i].value = value
        array[i].valuelen = valuelen
    lset.inst = cpmapi.PM_IN_NULL
    lset.nlabels = len(entries)
    lset.json = added.json
    lset.jsonlen = len(added.json)
    lset.labels = cast(array, POINTER(pmLabel))
    lset._keep = (array, added.json)           # the memory the pointers address
    pointer_to = POINTER(pmLabelSet)(lset)
    pointer_to._keep = lset
    return pointer_to


def pmdaAddLabels(label: bytes) -> Any:
    """A label set (POINTER(pmLabelSet)) parsed from label JSON."""
    return _label_set(label, 0)


def pmdaAddNotes(label: bytes) -> Any:
    """A label set of optional labels (notes) parsed from label JSON."""
    return _label_set(label, cpmapi.PM_LABEL_OPTIONAL)


def pmdaAddLabelFlags(labels: Any, flags: int) -> int:
    """Set `flags` on every label of a set; 1, or 0 for a NULL set."""
    if not labels:
        return 0
    lset = labels.contents
    for i in range(lset.nlabels):
        lset.labels[i].flags |= flags
    return 1


class pmdaMetric(Structure):
    """A metric's definition: its descriptor (and libpcp's unused user pointer)."""

    _fields_ = [("m_user", c_void_p),
                ("m_desc", pmDesc)]

    def __init__(self, pmid: int, typeof: int, indom: int, sem: int, units: pmUnits) -> None:
        Structure.__init__(self)
        self.m_user = None
        self.m_desc.pmid = pmid
        self.m_desc.type = typeof
        self.m_desc.indom = indom
        self.m_desc.sem = sem
        self.m_desc.units = units

    def __str__(self) -> str:
        return "pmdaMetric@%#lx pmid=%#lx type=%d" % (addressof(self), self.m_desc.pmid,
                                                     self.m_desc.type)


class pmdaInstid(Structure):
    """One instance of an array instance domain: its number and name."""

    _fields_ = [("i_inst", c_int),
                ("i_name", c_char_p)]

    def __init__(self, instid: int, name: str) -> None:
        Structure.__init__(self)
        self.i_inst = instid
        self.i_name = name.encode("utf-8")

    def __str__(self) -> str:
        return "pmdaInstid@%#lx index=%d name=%s" % (addressof(self), self.i_inst, self.i_name)


class pmdaIndom(Structure):
    """An instance domain: an array of pmdaInstid (a list) or the indom cache (a dict of
    name to a ctypes value)."""

    _fields_ = [("it_indom", pmInDom),
                ("it_numinst", c_int),
                ("it_set", POINTER(pmdaInstid))]

    def __init__(self, indom: int, insts: Union[None, List[pmdaInstid], Dict[str, Any]]) -> None:
        Structure.__init__(self)
        self.it_numinst = 0
        self.it_set = None
        self.it_indom = indom
        self._keep: Any = None
        self.load_indom(indom, insts)
        self.set_instances(indom, insts)

    def __iter__(self) -> Iterator[Tuple[int, str]]:
        if self.it_numinst <= 0:
            c = _cache.get(self.it_indom)
            c.walk_rewind()
            while True:
                inst = c.walk_next()
                if inst < 0:
                    break
                name = self.inst_name_lookup(inst)
                if name:
                    yield (inst, name)
        else:
            for i in range(self.it_numinst):
                inst = self.it_set[i].i_inst
                name = self.inst_name_lookup(inst)
                if name:
                    yield (inst, name)

    def inst_name_lookup(self, instance: int) -> Optional[str]:
        """The name of an instance (cache: only an active one)."""
        if self.it_numinst <= 0:
            entry = _cache.lookup(self.it_indom, instance)
            if entry is not None and entry.state == _cache.PMDA_CACHE_ACTIVE:
                return str(entry.name)
        elif self.it_numinst > 0:
            for i in range(self.it_numinst):
                if self.it_set[i].i_inst == instance:
                    return str(self.it_set[i].i_name.decode())
        return None

    def load_indom(self, indom: int, insts: Any) -> None:
        if isinstance(insts, dict):
            _cache.cache_op(indom, _cache.PMDA_CACHE_LOAD)

    def load(self) -> None:
        if self.it_numinst == -1:
            _cache.cache_op(self.it_indom, _cache.PMDA_CACHE_LOAD)

    def set_list_instances(self, insts: List[pmdaInstid]) -> None:
        count = len(insts)
        array = (pmdaInstid * count)()
        for i in range(count):
            array[i].i_inst = insts[i].i_inst
            array[i].i_name = insts[i].i_name
        self._keep = array
        self.it_set = array
        self.it_numinst = count
        cpmda.set_need_refresh()

    def set_dict_instances(self, indom: int, insts: Dict[str, Any]) -> None:
        _cache.cache_op(indom, _cache.PMDA_CACHE_INACTIVE)
        for key in insts.keys():
            value = insts[key]
            _cache.store(indom, _cache.PMDA_CACHE_ADD, key, (addressof(value), value))
        _cache.cache_op(indom, _cache.PMDA_CACHE_SAVE)
        self.it_numinst = -1

    def set_instances(self, indom: int, insts: Any) -> None:
        if insts is None:
            self.it_numinst = 0
        elif isinstance(insts, dict):
            self.it_numinst = -1
            self.set_dict_instances(indom, insts)
        else:
            self.it_numinst = len(insts)
            self.set_list_instances(insts)

    def __str__(self) -> str:
        return "pmdaIndom@%#lx indom=%#lx num=%d" % (addressof(self), self.it_indom,
                                                    self.it_numinst)

    def cache_load(self) -> None:
        """Load the cache file (PMDA_CACHE_LOAD)."""
        if self.it_numinst <= 0:
            sts = _cache.cache_op(self.it_indom, _cache.PMDA_CACHE_LOAD)
            if sts < 0:
                raise pmErr(sts)
        else:
            raise pmErr(cpmapi.PM_ERR_NYI)

    def cache_mark_active(self) -> None:
        if self.it_numinst <= 0:
            _cache.cache_op(self.it_indom, _cache.PMDA_CACHE_ACTIVE)
        else:
            raise pmErr(cpmapi.PM_ERR_NYI)

    def cache_mark_inactive(self) -> None:
        if self.it_numinst <= 0:
            _cache.cache_op(self.it_indom, _cache.PMDA_CACHE_INACTIVE)
        else:
            raise pmErr(cpmapi.PM_ERR_NYI)

    def cache_resize(self, maximum: int) -> None:
        if self.it_numinst <= 0:
            sts = _cache.resize(self.it_indom, maximum)
            if sts < 0:
                raise pmErr(sts)
        else:
            raise pmErr(cpmapi.PM_ERR_NYI)


class pmdaUnits(pmUnits):
    """pmUnits for PMDAs defining their metrics."""

    def __init__(self, dimS: int, dimT: int, dimC: int, scaleS: int, scaleT: int,
                 scaleC: int) -> None:
        pmUnits.__init__(self, dimS, dimT, dimC, scaleS, scaleT, scaleC)


class MetricDispatch:
    """The metric and instance tables of a PMDA, with their names and help texts.

    The dictionaries are shared with cpmda by reference (cleared in place, never
    rebound), as in the official module."""

    def __init__(self, domain: int, name: str, logfile: str, helpfile: str) -> None:
        self._indomtable: List[pmdaIndom] = []
        self._indoms: Dict[int, pmdaIndom] = {}
        self._indom_oneline: Dict[int, str] = {}
        self._indom_helptext: Dict[int, str] = {}
        self._metrictable: List[pmdaMetric] = []
        self._metrics: Dict[int, pmdaMetric] = {}
        self._metric_names: Dict[int, str] = {}
        self._metric_names_map: Dict[str, int] = {}
        self._metric_oneline: Dict[int, str] = {}
        self._metric_helptext: Dict[int, str] = {}
        cpmda.init_dispatch(domain, name, logfile, helpfile)

    def clear_indoms(self) -> None:
        del self._indomtable[:]
        self._indoms.clear()
        self._indom_oneline.clear()
        self._indom_helptext.clear()

    def clear_metrics(self) -> None:
        del self._metrictable[:]
        self._metrics.clear()
        self._metric_names.clear()
        self._metric_names_map.clear()
        self._metric_oneline.clear()
        self._metric_helptext.clear()

    def reset_metrics(self) -> None:
        self.clear_metrics()
        cpmda.set_need_refresh()

    def pmns_refresh(self) -> None:
        cpmda.pmns_refresh(self._metric_names)

    def connect_pmcd(self) -> None:
        cpmda.connect_pmcd()

    def add_metric(self, name: str, metric: pmdaMetric, oneline: str = "",
                   text: str = "") -> None:
        pmid = metric.m_desc.pmid
        if name in self._metric_names_map:
            raise KeyError("attempt to add_metric with an existing name=%s" % (name))
        if pmid in self._metrics:
            raise KeyError("attempt to add_metric with an existing PMID")
        self._metrictable.append(metric)
        self._metrics[pmid] = metric
        self._metric_names[pmid] = name
        self._metric_names_map[name] = pmid
        self._metric_oneline[pmid] = oneline
        self._metric_helptext[pmid] = text
        cpmda.set_need_refresh()

    def remove_metric(self, name: str, metric: pmdaMetric) -> None:
        pmid = metric.m_desc.pmid
        if name not in self._metric_names_map:
            raise KeyError("attempt to remove non-existant metric name=%s" % (name))
        if pmid not in self._metrics:
            raise KeyError("attempt to remove_metric with non-existant PMID")
        self._metrictable.remove(metric)
        self._metrics.pop(pmid)
        self._metric_names.pop(pmid)
        self._metric_names_map.pop(name)
        self._metric_oneline.pop(pmid)
        self._metric_helptext.pop(pmid)
        cpmda.set_need_refresh()

    def add_indom(self, indom: pmdaIndom, oneline: str = "", text: str = "") -> None:
        indomid = indom.it_indom
        for entry in self._indomtable:
            if entry.it_indom == indomid:
                raise KeyError("attempt to add_indom with an existing ID")
        self._indomtable.append(indom)
        self._indoms[indomid] = indom
        self._indom_oneline[indomid] = oneline
        self._indom_helptext[indomid] = text

    def replace_indom(self, indom: Union[int, pmdaIndom], insts: Any) -> None:
        if isinstance(indom, pmdaIndom):
            it_indom = indom.it_indom
            replacement = indom
        else:
            it_indom = indom
            replacement = pmdaIndom(it_indom, insts)
        if isinstance(insts, list):
            for i, entry in enumerate(self._indomtable):
                if entry.it_indom == it_indom:
                    self._indomtable[i] = replacement
                    break
        self._indoms[it_indom] = replacement

    def inst_lookup(self, indom: int, instance: int) -> Optional[c_void_p]:
        """The value stored with a cache instance (a pointer to it), else None."""
        entry = self._indoms[indom]
        if entry.it_numinst < 0:
            found = _cache.lookup(indom, instance)
            if found is not None and found.state == _cache.PMDA_CACHE_ACTIVE:
                return c_void_p(found.private[0] if found.private else None)
        return None

    def inst_name_lookup(self, indom: int, instance: int) -> Optional[str]:
        entry = self._indoms[indom]
        return entry.inst_name_lookup(instance)

    def pmid_name_lookup(self, cluster: int, item: int) -> Optional[str]:
        try:
            name = self._metric_names[cpmda.pmda_pmid(cluster, item)]
        except KeyError:
            name = None
        return name


class PMDA(MetricDispatch):
    """A performance metrics domain agent."""

    def read_name(self) -> str:
        return self._name

    def read_domain(self) -> int:
        return self._domain

    name = property(read_name, None, None, None)
    domain = property(read_domain, None, None, None)

    def __init__(self, name: str, domain: int, logfile: Optional[str] = None,
                 helpfile: Optional[str] = None) -> None:
        self._name = name
        self._domain = domain
        if not logfile:
            logfile = name + ".log"
        pmdaname = "pmda" + name
        if not helpfile:
            helpfile = "%s/%s/help" % (PCP.pmGetConfig("PCP_PMDAS_DIR"), name)
        MetricDispatch.__init__(self, domain, pmdaname, logfile, helpfile)

    def domain_probe(self) -> int:
        """Whether this PMDA could be activated, for pmcheck(1) (PCP 6.3): its exit status
        when run with PCP_PYTHON_PROBE set. 99 means unknown; a PMDA overrides it."""
        return 99

    def domain_write(self) -> None:
        """Print domain.h's line (Install)."""
        print("#define %s %d" % (self._name.upper(), self._domain))

    def pmns_write(self, root: str) -> None:
        """Print the PMNS entries of this PMDA's top-level names (Install)."""
        pmns = self._metric_names
        prefixes = {pmns[key].split(".")[0] for key in pmns}
        indent = (root == "root")
        lead = ""
        if indent:
            lead = "\t"
            print("root {")
        for prefix in prefixes:
            print("%s%s\t%d:*:*" % (lead, prefix, self._domain))
        if indent:
            print("}")

    def pmda_notready(self) -> None:
        cpmda.pmda_notready()

    def pmda_ready(self) -> None:
        cpmda.pmda_ready()

    def run(self) -> None:
        """pmcheck's probe (PCP_PYTHON_PROBE, from level 6.3), Install's domain or PMNS
        output, else serve pmcd until it closes the pipe."""
        if _API_LEVEL >= (6, 3) and "PCP_PYTHON_PROBE" in os.environ:
            # the probe's answer is the exit status (pmcheck(1)); anything but an int is 2
            result = self.domain_probe()
            if isinstance(result, int):
                _sys.exit(int(result))
            _sys.exit(2)
        elif "PCP_PYTHON_DOMAIN" in os.environ:
            self.domain_write()
        elif "PCP_PYTHON_PMNS" in os.environ:
            self.pmns_write(os.environ["PCP_PYTHON_PMNS"])
        else:
            self.pmns_refresh()
            cpmda.pmid_oneline_refresh(self._metric_oneline)
            cpmda.pmid_longtext_refresh(self._metric_helptext)
            cpmda.indom_oneline_refresh(self._indom_oneline)
            cpmda.indom_longtext_refresh(self._indom_helptext)
            cpmda.pmda_dispatch(self._indomtable, self._metrictable)

    # the official wrappers, parameter names and all (a keyword call names them)
    @staticmethod
    def set_fetch(fetch: Any) -> Any:
        return cpmda.set_fetch(fetch)

    @staticmethod
    def set_label(label: Any) -> Any:
        return cpmda.set_label(label)

    @staticmethod
    def set_notes(notes: Any) -> Any:
        return cpmda.set_notes(notes)

    @staticmethod
    def set_refresh(refresh: Any) -> Any:
        return cpmda.set_refresh(refresh)

    @staticmethod
    def set_instance(instance: Any) -> Any:
        return cpmda.set_instance(instance)

    @staticmethod
    def set_fetch_callback(fetch_callback: Any) -> Any:
        return cpmda.set_fetch_callback(fetch_callback)

    @staticmethod
    def set_label_callback(label_callback: Any) -> Any:
        return cpmda.set_label_callback(label_callback)

    @staticmethod
    def set_notes_callback(notes_callback: Any) -> Any:
        return cpmda.set_notes_callback(notes_callback)

    @staticmethod
    def set_attribute_callback(attribute_callback: Any) -> Any:
        return cpmda.set_attribute_callback(attribute_callback)

    @staticmethod
    def set_store_callback(store_callback: Any) -> Any:
        return cpmda.set_store_callback(store_callback)

    @staticmethod
    def set_endcontext_callback(endcontext_callback: Any) -> Any:
        return cpmda.set_endcontext_callback(endcontext_callback)

    @staticmethod
    def set_refresh_all(refresh_all: Any) -> Any:
        return cpmda.set_refresh_all(refresh_all)

    @staticmethod
    def set_refresh_metrics(refresh_metrics: Any) -> Any:
        return cpmda.set_refresh_metrics(refresh_metrics)


    @staticmethod
    def set_notify_change() -> None:
        cpmda.set_notify_change()

    @staticmethod
    def set_user(username: str) -> int:
        """pmSetProcessIdentity: become `username` (a no-op when already that user). A
        probe (level 6.3's PCP_PYTHON_PROBE) stays who it is and gets PM_ERR_NOTCONN."""
        if _API_LEVEL >= (6, 3) and "PCP_PYTHON_PROBE" in os.environ:
            return cpmapi.PM_ERR_NOTCONN
        entry = pwd.getpwnam(username)
        if os.geteuid() == entry.pw_uid:
            return 0
        os.setgid(entry.pw_gid)
        os.initgroups(username, entry.pw_gid)
        os.setuid(entry.pw_uid)
        return 0

    @staticmethod
    def pmid(cluster: int, item: int) -> int:
        return cpmda.pmda_pmid(cluster, item)

    @staticmethod
    def pmid_build(domain: int, cluster: int, item: int) -> int:
        return cpmda.pmid_build(domain, cluster, item)

    @staticmethod
    def pmid_cluster(cluster: int) -> int:
        return cpmda.pmid_cluster(cluster)

    @staticmethod
    def indom(serial: int) -> int:
        return cpmda.pmda_indom(serial)

    @staticmethod
    def indom_build(domain: int, serial: int) -> int:
        return cpmda.indom_build(domain, serial)

    @staticmethod
    def units(dim_space: int, dim_time: int, dim_count: int, scale_space: int,
              scale_time: int, scale_count: int) -> int:
        return cpmda.pmda_units(dim_space, dim_time, dim_count, scale_space, scale_time,
                                scale_count)

    @staticmethod
    def uptime(now: int) -> str:
        return cpmda.pmda_uptime(now)

    @staticmethod
    def set_comm_flags(flags: int) -> None:
        return cpmda.pmda_set_comm_flags(flags)

    @staticmethod
    def log(message: str) -> None:
        return cpmda.pmda_log(message)

    @staticmethod
    def dbg(message: str) -> None:
        return cpmda.pmda_dbg(message)

    @staticmethod
    def err(message: str) -> None:
        return cpmda.pmda_err(message)


if _API_LEVEL < (6, 3):
    # PCP 6.3 added the probe hook, and the sys import with it
    del PMDA.domain_probe
else:
    sys = _sys
