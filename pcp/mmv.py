"""Memory Mapped Values without libpcp_mmv: instrument a Python application so that
pmcd's mmv PMDA serves its metrics.

The official binding's API, unchanged (``MemoryMappedValues``, ``mmv_metric``,
``mmv_indom``, ``mmv_instance``), writing the file libpcp_mmv 6.0.3 writes under
``$PCP_TMP_DIR/mmv``, byte for byte but for the generation number and process id. Its
quirks are kept, since they decide what the PMDA serves: ``mmv_metric`` and ``mmv_indom``
store neither the constructor's ``semantics`` nor its ``dimension`` and copy the one-line
text into the help text (fields set afterwards count); ``start()`` with a definition
libpcp_mmv refuses makes no file and says nothing; ``interval_start(mapping)`` raises
``ctypes.ArgumentError``.

Updates are stores into typed memoryviews of the mapped file: ``values.inc(mapping)``
costs one Python call and one store. Example::

    from pcp import mmv, pmapi
    import cmmv

    metric = mmv.mmv_metric(name="requests", item=1, typeof=cmmv.MMV_TYPE_U64,
                            semantics=cmmv.MMV_SEM_COUNTER, dimension=pmapi.pmUnits())
    metric.semantics = cmmv.MMV_SEM_COUNTER      # the constructor drops it, as in 6.0.3
    values = mmv.MemoryMappedValues("myapp")
    values.add_metrics([metric])
    values.start()
    requests = values.lookup_mapping("requests", None)
    values.inc(requests)

The Pythonic layer (counters, gauges, timers that keep their semantics, units and help
text) is ``pcp.mmv.Registry``.
"""
from __future__ import annotations

import ctypes
import os
import time
# the ctypes names the official module imports (scripts reach them through it)
from ctypes import (POINTER, Structure, c_char, c_char_p, c_double, c_int, c_long,  # noqa: F401
                    c_uint, c_void_p)
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from pcp._core.constants import MMV_NAMEMAX, MMV_TYPE_NOSUPPORT, MMV_VERSION3
from pcp._core.constants import MMV_INDOM_NULL as _MMV_INDOM_NULL
from pcp._core.level import API_LEVEL as _API_LEVEL
from pcp._core.structs import pmAtomValue
from pcp._core.units import pmUnits
from pcp._mmv import layout as _layout
from pcp._mmv import values as _values
from pcp._mmv.region import VIEW_FORMATS, MappedFile
from pcp._mmv.registry import (  # noqa: F401  (the Pythonic layer, re-exported)
    Counter, CounterValue, Gauge, GaugeValue, Registry, Text, TextValue, Timer, TimerValue,
)

__all__ = ["mmv_instance", "mmv_indom", "mmv_metric", "MemoryMappedValues",
           "Registry", "Counter", "Gauge", "Timer", "Text"]

Name = Union[str, bytes, None]


class mmv_instance(Structure):
    """Maps internal to external instance identifiers, within an instance domain."""
    _fields_ = [("internal", c_int),
                ("external", c_char * MMV_NAMEMAX)]

    def __init__(self, inst: int, name: Union[str, bytes]) -> None:
        Structure.__init__(self)
        if not isinstance(name, bytes):
            name = name.encode('utf-8')
        self.external = name
        self.internal = inst


class mmv_indom(Structure):
    """An instance domain: its serial, instances and help texts.

    As in the official binding, ``helptext`` is set to the one-line ``shorttext``:
    assign ``helptext`` afterwards for a different long text."""
    _fields_ = [("serial", c_uint),
                ("count", c_uint),
                ("instances", POINTER(mmv_instance)),
                ("shorttext", c_char_p),
                ("helptext", c_char_p)]

    def __init__(self, serial: int, shorttext: Union[str, bytes, None] = '',
                 helptext: Union[str, bytes, None] = '') -> None:
        Structure.__init__(self)
        if helptext is not None and not isinstance(helptext, bytes):
            helptext = helptext.encode('utf-8')
        if shorttext is not None and not isinstance(shorttext, bytes):
            shorttext = shorttext.encode('utf-8')
        self.shorttext = shorttext
        # sic: 6.0.3's binding stores the short text as the help text; 6.3 fixed it
        self.helptext = helptext if _API_LEVEL >= (6, 3) else shorttext
        self.serial = serial

    def set_instances(self, instances: List[mmv_instance]) -> None:
        """Update the instances and counts fields for this indom."""
        self.count = len(instances)
        instance_array = (mmv_instance * self.count)()
        for i in range(self.count):
            instance_array[i].internal = instances[i].internal
            instance_array[i].external = instances[i].external
        self.instances = instance_array


if _API_LEVEL >= (6, 3):
    MMV_INDOM_NULL = _MMV_INDOM_NULL    # 6.3's module imports it from cmmv
#: a metric's indom when none is given: 6.3's MMV_INDOM_NULL, 6.0.3's 0
_DEFAULT_INDOM = _MMV_INDOM_NULL if _API_LEVEL >= (6, 3) else 0


class mmv_metric(Structure):
    """One metric's definition: name, item, type, semantics, units, indom, texts.

    As in the official binding 6.0.3 the constructor stores neither ``semantics`` nor
    ``dimension`` (both stay 0) and sets ``helptext`` to ``shorttext``; assign the
    fields afterwards to have them in the file. 6.3's (API level 6.3) stores
    ``semantics`` and ``helptext``, and its ``indom`` defaults to MMV_INDOM_NULL."""
    _fields_ = [("name", c_char * MMV_NAMEMAX),
                ("item", c_int),
                ("typeof", c_int),
                ("semantics", c_int),
                ("dimension", pmUnits),
                ("indom", c_uint),
                ("shorttext", c_char_p),
                ("helptext", c_char_p)]

    def __init__(self, name: Union[str, bytes], item: int, typeof: int, semantics: int,
                 dimension: Any, indom: int = _DEFAULT_INDOM,
                 shorttext: Union[str, bytes, None] = '',
                 helptext: Union[str, bytes, None] = '') -> None:  # pylint: disable=R0913
        Structure.__init__(self)
        if not isinstance(name, bytes):
            name = name.encode('utf-8')
        if helptext is not None and not isinstance(helptext, bytes):
            helptext = helptext.encode('utf-8')
        if shorttext is not None and not isinstance(shorttext, bytes):
            shorttext = shorttext.encode('utf-8')
        self.shorttext = shorttext
        if _API_LEVEL >= (6, 3):
            self.helptext = helptext
            self.semantics = semantics
        else:
            self.helptext = shorttext   # sic, and semantics/dimension unused: as 6.0.3
        self.typeof = typeof
        self.indom = indom
        self.item = item
        self.name = name


_LP_pmAtomValue = POINTER(pmAtomValue)


class LP_pmAtomValue:
    """A value's place in the mapped file, as ``lookup_mapping`` returns it.

    It stands for the official binding's ctypes pointer: false when nothing was found,
    ``contents`` is the pmAtomValue in the file, and it converts to a real
    ``POINTER(pmAtomValue)`` wherever ctypes wants one. The underscored fields are what
    the update methods store through."""

    __slots__ = ("_view", "_addview", "_slot", "_file", "_offset", "_type", "_string",
                 "_address")

    def __init__(self, file: Optional[MappedFile] = None, slot: Any = None,
                 address: int = 0) -> None:
        self._file = file
        self._address = address
        if file is None or slot is None:
            self._view = self._addview = None
            self._slot = self._offset = self._string = 0
            self._type = MMV_TYPE_NOSUPPORT
            return
        self._offset = slot.offset
        self._type = slot.type
        self._string = slot.string_offset
        fmt = VIEW_FORMATS.get(slot.type)
        if fmt is None:
            # elapsed, string and unknown types: not a plain store, the slow path decides
            self._view = self._addview = None
            self._slot = 0
        else:
            view = file.views[fmt]
            self._view = view
            # a float's add is a single-precision addition, and a 32-bit signed add
            # first casts the number to 32 bits (-2**31 - 1 is INT_MIN, not 1 less):
            # the slow path does both as libpcp_mmv does
            self._addview = None if fmt in ("f", "i") else view
            self._slot = slot.offset // view.itemsize

    def __bool__(self) -> bool:
        return self._file is not None

    def __repr__(self) -> str:
        return "<pcp.mmv.LP_pmAtomValue object at %#x>" % id(self)

    @property
    def contents(self) -> pmAtomValue:
        """The value word in the mapped file (ValueError once the file is unmapped)."""
        if self._file is None or not self._file.live:
            raise ValueError("NULL pointer access")
        return pmAtomValue.from_address(self._address)

    @property
    def _as_parameter_(self) -> Any:
        if self._file is None or not self._file.live:
            return _LP_pmAtomValue()
        return ctypes.cast(self._address, _LP_pmAtomValue)


_NULL = LP_pmAtomValue()
_LOOKUP_CACHE_MAX = 4096    # names looked up by a program are few; a runaway set is not


def _check_mapping(mapping: Any, position: int) -> None:
    """The ctypes argument check of a POINTER(pmAtomValue) parameter."""
    if mapping is None or isinstance(mapping, (LP_pmAtomValue, _LP_pmAtomValue)):
        return
    raise ctypes.ArgumentError("argument %d: TypeError: expected LP_pmAtomValue instance "
                               "instead of %s" % (position, type(mapping).__name__))


def _check_chars(value: Any, position: int) -> None:
    """The ctypes argument check of a c_char_p parameter."""
    try:
        c_char_p.from_param(value)
    except Exception as exc:    # noqa: BLE001 - ctypes' own message, whatever the type
        raise ctypes.ArgumentError("argument %d: %s: %s"
                                   % (position, type(exc).__name__, exc)) from None


def _c_string(value: Optional[bytes]) -> Optional[bytes]:
    return None if value is None else value.split(b"\0", 1)[0]


def _now_usec() -> float:
    """pmtimevalNow as mmv_stats_interval_* use it: seconds * 1e6 + microseconds."""
    sec, nsec = divmod(time.time_ns(), 1_000_000_000)
    return sec * 1e6 + nsec // 1000


class MemoryMappedValues(object):
    """Defines a set of PCP Memory Mapped Value (MMV) metrics.

    Creates PCP metrics from an instrumented python script via pmdammv."""

    def __init__(self, name: Union[str, bytes], flags: int = 0, cluster: int = 42) -> None:
        if not isinstance(name, bytes):
            name = name.encode('utf-8')
        self._name = name
        self._cluster = cluster  # PMID cluster number (domain is MMV)
        self._flags = flags      # MMV_FLAGS_* flags
        self._metrics: List[Any] = []
        self._indoms: List[Any] = []
        self._handle: Optional[MappedFile] = None
        self._mappings: Dict[bytes, List[Tuple[bool, Optional[bytes], LP_pmAtomValue]]] = {}
        self._lookups: Dict[Any, Dict[Any, LP_pmAtomValue]] = {}
        self._cached = 0

    # -- the file ---------------------------------------------------------------------

    def _definitions(self) -> Tuple[List[_layout.MetricDef], List[_layout.IndomDef]]:
        metrics = [_layout.MetricDef(m.name, m.item, m.typeof, m.semantics,
                                     bytes(m.dimension), m.indom, m.shorttext, m.helptext)
                   for m in self._metrics]
        indoms = [_layout.IndomDef(d.serial, [(d.instances[j].internal, d.instances[j].external)
                                              for j in range(d.count)],
                                   d.shorttext, d.helptext)
                  for d in self._indoms]
        return metrics, indoms

    def _open(self, metrics: List[_layout.MetricDef], indoms: List[_layout.IndomDef],
              long_names: bool, labels: Any = ()) -> None:
        """mmv_stats_init / mmv_stats_start: check, lay out, create; a refusal leaves the
        handle None and says nothing, as libpcp_mmv's NULL does."""
        self._lookups = {}
        self._cached = 0
        self._mappings = {}
        version = _layout.check(metrics, indoms, long_names)
        if version < 0:
            self._handle = None
            return
        if labels:
            version = MMV_VERSION3
        sec, nsec = divmod(time.time_ns(), 1_000_000_000)
        generation = ((sec & 0xFFFFFFFF) << 32) | (nsec // 1000)
        built = _layout.build(version, self._cluster, self._flags, os.getpid(), generation,
                              metrics, indoms, labels)
        self._handle = MappedFile.create(self._name, built, self._flags)
        if self._handle is None:
            return
        base = ctypes.c_char.from_buffer(self._handle.map)
        address = ctypes.addressof(base)
        del base        # no buffer export may outlive this: stop() must be able to unmap
        for slot in built.values:
            mapping = LP_pmAtomValue(self._handle, slot, address + slot.offset)
            self._mappings.setdefault(slot.metric_name, []).append(
                (slot.singular, slot.instance_name, mapping))

    def start(self) -> None:
        """Initialise the metrics/instances; on completion they are visible to pmdammv."""
        self._open(*self._definitions(), long_names=False)

    def stop(self) -> None:
        """Shut down the mapping: no further updates (a MMV_FLAG_PROCESS file goes)."""
        if self._handle is not None:
            self._handle.close()
        self._handle = None
        self._lookups = {}
        self._cached = 0
        self._mappings = {}

    def restart(self) -> None:
        """Cleanly stop-if-running and restart MMV export services."""
        self.stop()
        self.start()

    def started(self) -> int:
        """Property flagging an active memory mapping."""
        if self._handle is None:
            return 0
        return 1

    def add_indoms(self, indoms: List[mmv_indom]) -> None:
        """Make a list of instance domains visible to the MMV export."""
        self._indoms = indoms
        if self.started():
            self.restart()

    def add_indom(self, indom: mmv_indom) -> None:
        """Make an additional instance domain visible to the MMV export."""
        self._indoms.append(indom)
        self.add_indoms(self._indoms)

    def add_metrics(self, metrics: List[mmv_metric]) -> None:
        """Make a list of metrics visible to the MMV export."""
        self._metrics = metrics
        if self.started():
            self.restart()

    def add_metric(self, metric: mmv_metric) -> None:
        """Make an additional metric visible to the MMV export."""
        self._metrics.append(metric)
        self.add_metrics(self._metrics)

    # -- lookups ----------------------------------------------------------------------

    def _find(self, name: Optional[bytes], inst: Optional[bytes]) -> LP_pmAtomValue:
        """mmv_lookup_value_desc: the first value, in file order, of a metric of that
        name; for a metric with instances, of the instance of that name (none at all
        when no instance is named)."""
        if self._handle is None or name is None:
            return _NULL
        inst = _c_string(inst)
        for is_singular, instance_name, mapping in self._mappings.get(_c_string(name), ()):
            if is_singular:
                return mapping
            if inst is None:
                return _NULL
            if instance_name == inst:
                return mapping
        return _NULL

    def _lookup(self, name: Name, inst: Name) -> LP_pmAtomValue:
        """The cached lookup of the lookup_* methods; arguments converted as the
        official binding converts them (its exceptions included)."""
        try:
            return self._lookups[name][inst]
        except (KeyError, TypeError):
            pass
        raw_name, raw_inst = name, inst
        if name is not None and not isinstance(name, bytes):
            name = name.encode('utf-8')
        if inst is not None and not isinstance(inst, bytes):
            inst = inst.encode('utf-8')
        found = self._find(name, inst)
        if self._cached < _LOOKUP_CACHE_MAX:
            try:
                self._lookups.setdefault(raw_name, {})[raw_inst] = found
                self._cached += 1
            except TypeError:
                pass
        return found

    def lookup_mapping(self, name: Name, inst: Name) -> LP_pmAtomValue:
        """Find the memory mapping for a given metric name and instance.

        The handle it returns is the preferred way to update a value (inc, add, set,
        set_string, interval_end); a name that is not found gives a false handle, on
        which updates do nothing."""
        if name is not None and not isinstance(name, bytes):
            name = name.encode('utf-8')
        if inst is not None and not isinstance(inst, bytes):
            inst = inst.encode('utf-8')
        return self._find(name, inst)

    # -- updates through a mapping ----------------------------------------------------

    def _add_slow(self, mapping: Any, value: Any, position: int) -> None:
        """mmv_inc_value for every case the direct store does not cover."""
        self._update_slow(mapping, value, position, _values.add)

    def _set_slow(self, mapping: Any, value: Any, position: int) -> None:
        """mmv_set_value for every case the direct store does not cover."""
        self._update_slow(mapping, value, position, _values.set_value)

    def _update_slow(self, mapping: Any, value: Any, position: int,
                     update: Callable[[Any, int, int, float], None]) -> None:
        _check_mapping(mapping, 2)
        number = _values.as_double(value, position)
        if self._handle is None or not mapping:
            return
        if not isinstance(mapping, LP_pmAtomValue):
            mapping = self._foreign(mapping)
            if mapping is None:
                return
        if mapping._file.live:
            update(mapping._file.map, mapping._offset, mapping._type, number)

    def _foreign(self, pointer: Any) -> Optional[LP_pmAtomValue]:
        """A plain ctypes POINTER(pmAtomValue) into this file's values, as ours."""
        address = ctypes.addressof(pointer.contents)
        for entries in self._mappings.values():
            for _, _, mapping in entries:
                if mapping._address == address:
                    return mapping
        return None

    def add(self, mapping: Any, value: Union[int, float]) -> None:
        """Increment the mapped metric by a given value."""
        try:
            # integers a double holds exactly add as libpcp_mmv adds them; the others
            # (and floats into integer values, wrap-arounds, ...) take the slow path
            if -9007199254740992 <= value <= 9007199254740992:
                mapping._addview[mapping._slot] += value
                return
        except Exception:       # noqa: BLE001 - every failure is decided by the slow path
            pass
        self._add_slow(mapping, value, 3)

    def inc(self, mapping: Any) -> None:
        """Increment the mapped metric by one."""
        try:
            mapping._view[mapping._slot] += 1
        except Exception:       # noqa: BLE001 - wrap-around, elapsed, string, stale, NULL
            self._add_slow(mapping, 1, 3)

    def set(self, mapping: Any, value: Union[int, float]) -> None:
        """Set the mapped metric to a given value."""
        try:
            if -9007199254740992 <= value <= 9007199254740992:
                mapping._view[mapping._slot] = value
                return
        except Exception:       # noqa: BLE001
            pass
        self._set_slow(mapping, value, 3)

    def set_string(self, mapping: Any, value: Union[str, bytes]) -> None:
        """Set the string mapped metric to a given value."""
        if value is not None and not isinstance(value, bytes):
            value = value.encode('utf-8')
        size = len(value)
        _check_mapping(mapping, 2)
        _check_chars(value, 3)
        self._set_string(mapping, value, size)

    def _set_string(self, mapping: Any, value: Optional[bytes], size: int) -> None:
        if self._handle is None or not mapping or value is None:
            return
        if not isinstance(mapping, LP_pmAtomValue):
            mapping = self._foreign(mapping)
            if mapping is None:
                return
        if mapping._file.live:
            _values.set_string(mapping._file.map, mapping._offset, mapping._type,
                               mapping._string, value, size)

    def interval_start(self, mapping: Any) -> LP_pmAtomValue:
        """Start a timed interval for the mapped metric.

        As in the official binding this raises ctypes.ArgumentError (it hands libpcp_mmv
        a 0 where a string is wanted): start intervals with lookup_interval_start."""
        _check_mapping(mapping, 2)
        raise ctypes.ArgumentError("argument 3: TypeError: wrong type")

    def interval_end(self, mapping: Any) -> None:
        """End a timed interval, the metric's time is increased by the interval."""
        _check_mapping(mapping, 2)
        if mapping and self._handle is not None:
            self._add_slow(mapping, _now_usec(), 3)

    # -- updates by name --------------------------------------------------------------

    def lookup_add(self, name: Name, inst: Name, value: Union[int, float]) -> None:
        """Lookup the named metric[instance] and add a value to it."""
        mapping = self._lookup(name, inst)
        try:
            if -9007199254740992 <= value <= 9007199254740992:
                mapping._addview[mapping._slot] += value
                return
        except Exception:       # noqa: BLE001
            pass
        self._add_slow(mapping, value, 4)

    def lookup_inc(self, name: Name, inst: Name) -> None:
        """Lookup the named metric[instance] and add one to it."""
        try:
            # two lookups by name, then instance: cheaper than hashing a (name, inst)
            mapping = self._lookups[name][inst]
        except (KeyError, TypeError):
            mapping = self._lookup(name, inst)
        try:
            mapping._view[mapping._slot] += 1
        except Exception:       # noqa: BLE001
            self._add_slow(mapping, 1, 4)

    def lookup_set(self, name: Name, inst: Name, value: Union[int, float]) -> None:
        """Lookup the named metric[instance] and set its value."""
        mapping = self._lookup(name, inst)
        try:
            if -9007199254740992 <= value <= 9007199254740992:
                mapping._view[mapping._slot] = value
                return
        except Exception:       # noqa: BLE001
            pass
        self._set_slow(mapping, value, 4)

    def lookup_interval_start(self, name: Name, inst: Name) -> LP_pmAtomValue:
        """Lookup the named metric[instance] and start an interval.

        The handle returned is passed to interval_end()."""
        mapping = self._lookup(name, inst)
        if self._handle is not None and mapping:
            self._add_slow(mapping, -_now_usec(), 2)
        return mapping

    def lookup_set_string(self, name: Name, inst: Name, s: Union[str, bytes]) -> None:
        """Lookup the named metric[instance] and set its string value."""
        if name is not None and not isinstance(name, bytes):
            name = name.encode('utf-8')
        if inst is not None and not isinstance(inst, bytes):
            inst = inst.encode('utf-8')
        if not isinstance(s, bytes):
            s = s.encode('utf-8')
        self._set_string(self._lookup(name, inst), s, len(s))

    def lookup_add_fallback(self, name: Name, inst: Name, fall: Optional[bytes],
                            value: Union[int, float]) -> None:
        """Lookup the named metric[instance] and add a value to it if found; if the
        instance is not found, fall back to a second instance (bytes, as in the
        official binding: a str raises ctypes.ArgumentError)."""
        if name is not None and not isinstance(name, bytes):
            name = name.encode('utf-8')
        if inst is not None and not isinstance(inst, bytes):
            inst = inst.encode('utf-8')
        _check_chars(fall, 4)
        inc = _values.as_double(value, 5)
        mapping = self._lookup(name, inst)
        if not mapping:
            mapping = self._lookup(name, fall)
        self._add_slow(mapping, inc, 5)

    def lookup_inc_fallback(self, name: Name, inst: Name, fallback: Optional[bytes]) -> None:
        """Lookup the named metric[instance] and increment it if found, else increment
        the fallback instance (bytes, as in the official binding)."""
        if name is not None and not isinstance(name, bytes):
            name = name.encode('utf-8')
        if inst is not None and not isinstance(inst, bytes):
            inst = inst.encode('utf-8')
        _check_chars(fallback, 4)
        mapping = self._lookup(name, inst)
        if not mapping:
            mapping = self._lookup(name, fallback)
        self._add_slow(mapping, 1, 4)
