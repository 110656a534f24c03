"""The Pythonic side of pcp.mmv: a ``Registry`` of metrics as libpcp_mmv's registry API
(mmv_stats_registry, mmv_stats_add_metric/indom/instance/*_label, mmv_stats_start)
builds them, so long names (a version 2 file) and labels (version 3) work, and metric
objects bound to their values: ``Counter``, ``Gauge``, ``Timer`` (with a context manager
timing a block) and ``Text``.

Unlike the official binding's ``mmv_metric``, a metric made here keeps the semantics,
units and help text it is given, and a definition libpcp_mmv refuses raises (ValueError
when it is added, OSError from ``start()``) instead of leaving no file behind silently.
"""
from __future__ import annotations

import errno
import json
import os
import re
import time
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from pcp._core.constants import (
    MMV_ARRAY_TYPE, MMV_BOOLEAN_TYPE, MMV_LABELMAX, MMV_MAP_TYPE, MMV_NULL_TYPE,
    MMV_NUMBER_TYPE, MMV_SEM_COUNTER, MMV_SEM_DISCRETE, MMV_SEM_INSTANT, MMV_STRING_TYPE,
    MMV_STRINGMAX, MMV_TYPE_DOUBLE, MMV_TYPE_STRING, MMV_TYPE_U64, MMV_VERSION3,
    PM_IN_NULL, PM_LABEL_CLUSTER, PM_LABEL_INDOM, PM_LABEL_INSTANCES, PM_LABEL_ITEM,
    PM_LABEL_OPTIONAL, PM_TIME_USEC,
)
from pcp._core.errors import pmErr
from pcp._core.units import pmParseUnitsStr, pmUnits
from pcp._libpcp.labels import parse_label_set
from pcp._mmv import layout as _layout
from pcp._mmv import values as _values
from pcp._mmv.region import VIEW_FORMATS, MappedFile

Units = Union[pmUnits, str, None]
LabelValue = Union[str, int, float, bool, None]


def _text(value: Union[str, bytes, None]) -> Optional[bytes]:
    if value is None or isinstance(value, bytes):
        return value
    return value.encode("utf-8")


def _units(units: Units) -> pmUnits:
    if units is None:
        return pmUnits()
    if isinstance(units, str):
        parsed, multiplier = pmParseUnitsStr(units)
        if multiplier != 1:
            raise ValueError("units %r: a scale factor of %g has no pmUnits form"
                             % (units, multiplier))
        return parsed
    return units


# what glibc's strtod reads to the end (C locale): blanks, a sign, then a decimal or
# hexadecimal number, inf/infinity or nan/nan(...)
_STRTOD_WHOLE = re.compile(
    r"[ \t\n\v\f\r]*[+-]?(?:0x(?:[0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(?:p[+-]?[0-9]+)?"
    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?|inf(?:inity)?|nan(?:\([0-9a-z_]*\))?)\Z",
    re.IGNORECASE | re.ASCII)


def label_payload(name: str, value: str, kind: int) -> bytes:
    """get_label of libpcp_mmv: the label {"name":value} checked as it checks it (the
    name as pmLookupLabel names, the value by its MMV_*_TYPE); ValueError when it
    refuses (E2BIG for a label beyond MMV_LABELMAX)."""
    if len(name.encode("utf-8", "surrogateescape")) + len(
            value.encode("utf-8", "surrogateescape")) + 5 > MMV_LABELMAX:      # strlen()s
        raise ValueError(errno.E2BIG, "label %r is too long" % name)
    if not name or not name[0].isascii() or not name[0].isalpha() or not all(
            c.isascii() and (c.isalnum() or c == "_") for c in name[1:]):
        raise ValueError(errno.EINVAL, "bad label name %r" % name)
    if kind == MMV_NULL_TYPE:
        value = "null"
    elif kind == MMV_BOOLEAN_TYPE:
        ok = value in ("true", "false")
    elif kind == MMV_MAP_TYPE:
        ok = len(value) >= 2 and value[0] == "{" and value[-1] == "}"
    elif kind == MMV_ARRAY_TYPE:
        ok = len(value) >= 2 and value[0] == "[" and value[-1] == "]"
    elif kind == MMV_STRING_TYPE:
        ok = len(value) >= 2 and value[0] == '"' and value[-1] == '"'
    elif kind == MMV_NUMBER_TYPE:
        ok = _STRTOD_WHOLE.match(value) is not None
    else:
        ok = False
    if kind != MMV_NULL_TYPE and not ok:
        raise ValueError(errno.EINVAL, "bad label value %r for type %d" % (value, kind))
    text = ('{"%s":%s}' % (name, value)).encode("utf-8", "surrogateescape")
    try:
        parse_label_set(text)               # __pmParseLabelSet: libpcp's label rules
    except pmErr as exc:
        raise ValueError(-exc.args[0], "label %r refused by libpcp's label parser"
                         % text) from None
    return text + b"\0"


def _typed_label(value: LabelValue) -> tuple:
    """A Python value as a label's JSON text and MMV_*_TYPE."""
    if value is None:
        return "null", MMV_NULL_TYPE
    if isinstance(value, bool):
        return ("true" if value else "false"), MMV_BOOLEAN_TYPE
    if isinstance(value, (int, float)):
        return repr(value), MMV_NUMBER_TYPE
    return json.dumps(str(value)), MMV_STRING_TYPE


class BoundValue:
    """One metric[instance] value of a started registry: stores go to the file."""

    __slots__ = ("_view", "_slot", "_file", "_offset", "_type", "_string", "metric",
                 "instance")

    def __init__(self, metric: "Metric", instance: Optional[str]) -> None:
        self.metric = metric
        self.instance = instance
        self._unbind()

    def _unbind(self) -> None:
        self._view = None
        self._slot = 0
        self._file: Optional[MappedFile] = None
        self._offset = self._string = 0
        self._type = self.metric.type

    def _bind(self, file: MappedFile, slot: _layout.ValueSlot) -> None:
        fmt = VIEW_FORMATS.get(slot.type)
        self._file = file
        self._offset = slot.offset
        self._string = slot.string_offset
        if fmt is None or fmt in ("f", "i"):
            # float sums round to single precision, signed 32-bit ones wrap: slow path
            self._view = None
            self._slot = 0
        else:
            self._view = file.views[fmt]
            self._slot = slot.offset // self._view.itemsize

    def _add(self, amount: Union[int, float]) -> None:
        """The exact add the direct store could not do: wrap-around, float into an
        integer value (truncated as C does), single precision; nothing once stopped."""
        file = self._file
        if file is None or not file.live:
            return
        if isinstance(amount, int) and self._type in _INTEGER_WIDTH:
            bits = _INTEGER_WIDTH[self._type]
            fmt = VIEW_FORMATS[self._type]
            view = file.views[fmt]
            slot = self._offset // view.itemsize
            total = (view[slot] + amount) & ((1 << bits) - 1)
            if fmt in ("i", "q") and total >= 1 << (bits - 1):
                total -= 1 << bits
            view[slot] = total
        else:
            _values.add(file.map, self._offset, self._type, float(amount))

    def _set(self, value: Union[int, float]) -> None:
        file = self._file
        if file is None or not file.live:
            return
        _values.set_value(file.map, self._offset, self._type, float(value))

    @property
    def value(self) -> Union[int, float, str, None]:
        """The value in the file now (None before start() and after stop())."""
        file = self._file
        if file is None or not file.live:
            return None
        if self._type == MMV_TYPE_STRING:
            raw = bytes(file.map[self._string:self._string + MMV_STRINGMAX])
            return raw.split(b"\0", 1)[0].decode("utf-8", "replace")
        fmt = VIEW_FORMATS.get(self._type, "q")
        view = file.views[fmt]
        return view[self._offset // view.itemsize]


_INTEGER_WIDTH = {0: 32, 1: 32, 2: 64, 3: 64}


class CounterValue(BoundValue):
    """A counter's value: it only goes up."""

    __slots__ = ()

    def inc(self, amount: Union[int, float] = 1) -> None:
        """Add ``amount`` (1 by default)."""
        try:
            self._view[self._slot] += amount
        except Exception:       # noqa: BLE001 - wrap-around, float, not started: exact path
            self._add(amount)


class GaugeValue(BoundValue):
    """A gauge's value: set, or moved up and down."""

    __slots__ = ()

    def set(self, value: Union[int, float]) -> None:
        """Set the value."""
        try:
            self._view[self._slot] = value
        except Exception:       # noqa: BLE001
            self._set(value)

    def inc(self, amount: Union[int, float] = 1) -> None:
        """Add ``amount`` (1 by default)."""
        try:
            self._view[self._slot] += amount
        except Exception:       # noqa: BLE001
            self._add(amount)

    def dec(self, amount: Union[int, float] = 1) -> None:
        """Subtract ``amount`` (1 by default)."""
        self.inc(-amount)


class _Timing:
    """``with timer.time():`` - adds the block's duration, in microseconds."""

    __slots__ = ("_target", "_start")

    def __init__(self, target: "TimerValue") -> None:
        self._target = target
        self._start = 0

    def __enter__(self) -> "_Timing":
        self._start = time.perf_counter_ns()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._target.inc((time.perf_counter_ns() - self._start) // 1000)


class TimerValue(CounterValue):
    """Time spent, in microseconds (a counter: its rate is the busy fraction)."""

    __slots__ = ()

    def add(self, seconds: float) -> None:
        """Add a duration given in seconds."""
        self.inc(int(seconds * 1e6))

    def time(self) -> _Timing:
        """A context manager adding the duration of its block."""
        return _Timing(self)


class TextValue(BoundValue):
    """A string value (at most 254 bytes of UTF-8, as libpcp_mmv allows)."""

    __slots__ = ()

    def set(self, text: Union[str, bytes]) -> None:
        """Set the text."""
        data = _text(text) or b""
        if len(data) >= MMV_STRINGMAX - 1:
            raise ValueError("an MMV string holds at most %d bytes, not %d"
                             % (MMV_STRINGMAX - 2, len(data)))
        file = self._file
        if file is not None and file.live:
            _values.set_string(file.map, self._offset, self._type, self._string, data,
                               len(data))


class Metric:
    """A metric of a Registry that has instances: ``metric[name]`` is one instance's
    value. (A metric without instances is handed out as its one value object.)"""

    value_class = BoundValue

    def __init__(self, registry: "Registry", name: str, item: int, type: int,
                 semantics: int, units: pmUnits, serial: int,
                 instances: Sequence[str]) -> None:
        self.registry = registry
        self.name = name
        self.item = item
        self.type = type
        self.semantics = semantics
        self.units = units
        self.serial = serial
        self.values: Dict[Optional[str], BoundValue] = {}
        for instance in (instances or [None]):
            self.values[instance] = self.value_class(self, instance)

    def __getitem__(self, instance: str) -> Any:
        return self.values[instance]

    def __repr__(self) -> str:
        return "<%s %s>" % (type(self).__name__, self.name)


class Counter(Metric):
    """A counter (MMV_SEM_COUNTER) with instances."""

    value_class = CounterValue



class Gauge(Metric):
    """An instantaneous value (MMV_SEM_INSTANT)."""

    value_class = GaugeValue



class Timer(Metric):
    """Time spent in microseconds (a counter); ``with timer.time(): ...``."""

    value_class = TimerValue



class Text(Metric):
    """A string (MMV_SEM_DISCRETE)."""

    value_class = TextValue



class Registry:
    """An application's metrics in one mmv file, as libpcp_mmv's registry writes it.

    ``counter``/``gauge``/``timer``/``text`` make bound metric objects;
    ``add_metric``/``add_indom``/``add_instance``/``add_*label`` are the registry
    calls of libpcp_mmv, for full control. ``start()`` writes the file (names of 64
    bytes or more make it version 2, labels version 3); ``stop()`` unmaps it."""

    def __init__(self, name: Union[str, bytes], cluster: int = 42, flags: int = 0) -> None:
        self.name = _text(name)
        self.cluster = cluster
        self.flags = flags
        self._metrics: List[_layout.MetricDef] = []
        self._indoms: List[_layout.IndomDef] = []
        self._labels: List[_layout.LabelDef] = []
        self._objects: List[Metric] = []
        self._file: Optional[MappedFile] = None
        self._next_item = 1
        self._next_serial = 1

    # -- libpcp_mmv's registry calls ----------------------------------------------------

    def add_metric(self, name: Union[str, bytes], item: int, type: int, semantics: int,
                   units: Units = None, serial: int = 0,
                   shorttext: Union[str, bytes, None] = None,
                   helptext: Union[str, bytes, None] = None) -> None:
        """mmv_stats_add_metric."""
        self._metrics.append(_layout.MetricDef(
            _text(name) or b"", item, type, semantics, bytes(_units(units)), serial,
            _text(shorttext), _text(helptext)))
        self._next_item = max(self._next_item, item + 1)

    def add_indom(self, serial: int, shorttext: Union[str, bytes, None] = None,
                  helptext: Union[str, bytes, None] = None) -> None:
        """mmv_stats_add_indom."""
        self._indoms.append(_layout.IndomDef(serial, [], _text(shorttext), _text(helptext)))
        self._next_serial = max(self._next_serial, serial + 1)

    def add_instance(self, serial: int, internal: int, external: Union[str, bytes]) -> None:
        """mmv_stats_add_instance: into every domain of that serial; ValueError (EINVAL)
        when there is none."""
        found = False
        for indom in self._indoms:
            if indom.serial == serial:
                indom.instances.append((internal, _text(external) or b""))
                found = True
        if not found:
            raise ValueError(errno.EINVAL, "no instance domain %d" % serial)

    def _label(self, flags: int, identity: int, internal: int, name: str, value: str,
               kind: int, optional: bool) -> None:
        flags |= PM_LABEL_OPTIONAL if optional else 0
        self._labels.append(_layout.LabelDef(flags, identity, internal,
                                             label_payload(name, value, kind)))

    def add_registry_label(self, name: str, value: str, kind: int,
                           optional: bool = False) -> None:
        """mmv_stats_add_registry_label: a label of every metric of the file."""
        self._label(PM_LABEL_CLUSTER, self.cluster, PM_IN_NULL, name, value, kind, optional)

    def add_indom_label(self, serial: int, name: str, value: str, kind: int,
                        optional: bool = False) -> None:
        """mmv_stats_add_indom_label."""
        self._label(PM_LABEL_INDOM, serial, PM_IN_NULL, name, value, kind, optional)

    def add_metric_label(self, item: int, name: str, value: str, kind: int,
                         optional: bool = False) -> None:
        """mmv_stats_add_metric_label."""
        self._label(PM_LABEL_ITEM, item, PM_IN_NULL, name, value, kind, optional)

    def add_instance_label(self, serial: int, internal: int, name: str, value: str,
                           kind: int, optional: bool = False) -> None:
        """mmv_stats_add_instance_label."""
        self._label(PM_LABEL_INSTANCES, serial, internal, name, value, kind, optional)

    # -- metric objects ---------------------------------------------------------------

    def _make(self, cls: type, name: str, kind: int, semantics: int, units: Units,
              help: str, instances: Optional[Iterable[str]],
              labels: Optional[Dict[str, LabelValue]]) -> Any:
        if self.started:
            raise RuntimeError("add metrics before start() (or stop() first)")
        names = list(instances or [])
        serial = 0
        if names:
            serial = self._next_serial
            self.add_indom(serial, "instances of %s" % name)
            for internal, instance in enumerate(names):
                self.add_instance(serial, internal, instance)
        item = self._next_item
        lines = help.strip().splitlines() or [""]
        self.add_metric(name, item, kind, semantics, units, serial, lines[0] or None,
                        help.strip() or None)
        for key, value in (labels or {}).items():
            text, label_kind = _typed_label(value)
            self.add_metric_label(item, key, text, label_kind)
        metric = cls(self, name, item, kind, semantics, _units(units), serial, names)
        self._objects.append(metric)
        # without instances the caller gets the value itself: one attribute fewer on
        # every update
        return metric if names else metric.values[None]

    def counter(self, name: str, help: str = "", *, units: Units = "count",
                instances: Optional[Iterable[str]] = None, type: int = MMV_TYPE_U64,
                labels: Optional[Dict[str, LabelValue]] = None) -> Any:
        """A counter (semantics counter, units "count" unless given): a CounterValue,
        or with ``instances`` a Counter whose ``[instance]`` are."""
        return self._make(Counter, name, type, MMV_SEM_COUNTER, units, help, instances,
                          labels)

    def gauge(self, name: str, help: str = "", *, units: Units = None,
              instances: Optional[Iterable[str]] = None, type: int = MMV_TYPE_DOUBLE,
              labels: Optional[Dict[str, LabelValue]] = None) -> Any:
        """An instantaneous value (a double unless ``type`` says otherwise): a
        GaugeValue, or with ``instances`` a Gauge of them."""
        return self._make(Gauge, name, type, MMV_SEM_INSTANT, units, help, instances, labels)

    def timer(self, name: str, help: str = "", *,
              instances: Optional[Iterable[str]] = None,
              labels: Optional[Dict[str, LabelValue]] = None) -> Any:
        """Time spent, in microseconds, as a 64-bit counter: a TimerValue (``with
        timer.time(): ...``), or with ``instances`` a Timer of them."""
        return self._make(Timer, name, MMV_TYPE_U64, MMV_SEM_COUNTER,
                          pmUnits(0, 1, 0, 0, PM_TIME_USEC, 0), help, instances, labels)

    def text(self, name: str, help: str = "", *,
             instances: Optional[Iterable[str]] = None,
             labels: Optional[Dict[str, LabelValue]] = None) -> Any:
        """A string value: a TextValue, or with ``instances`` a Text of them."""
        return self._make(Text, name, MMV_TYPE_STRING, MMV_SEM_DISCRETE, None, help,
                          instances, labels)

    def label(self, name: str, value: LabelValue) -> None:
        """A label of every metric of this registry."""
        text, kind = _typed_label(value)
        self.add_registry_label(name, text, kind)

    # -- the file -----------------------------------------------------------------------

    @property
    def started(self) -> bool:
        return self._file is not None

    @property
    def path(self) -> Optional[str]:
        """The file's path once started."""
        return None if self._file is None else os.fsdecode(self._file.path)

    def start(self) -> "Registry":
        """mmv_stats_start: write the file and bind every metric object to it."""
        if self._file is not None:
            self.stop()
        version = _layout.check(self._metrics, self._indoms, long_names=True)
        if version < 0:
            raise OSError(-version, "libpcp_mmv refuses these definitions: %s"
                          % os.strerror(-version))
        if self._labels:
            version = MMV_VERSION3
        sec, nsec = divmod(time.time_ns(), 1_000_000_000)
        generation = ((sec & 0xFFFFFFFF) << 32) | (nsec // 1000)
        built = _layout.build(version, self.cluster, self.flags, os.getpid(), generation,
                              self._metrics, self._indoms, self._labels)
        file = MappedFile.create(self.name or b"", built, self.flags)
        if file is None:
            raise OSError(errno.ENOENT, "cannot create the mmv file %r"
                          % os.fsdecode(self.name or b""))
        self._file = file
        slots: Dict[tuple, _layout.ValueSlot] = {}
        for slot in built.values:
            slots.setdefault((slot.metric_name, slot.instance_name), slot)
        for metric in self._objects:
            stored = _layout.stored_name(metric.name.encode("utf-8"), version)
            for instance, value in metric.values.items():
                key = (stored, None if instance is None else
                       _layout.stored_name(instance.encode("utf-8"), version))
                if key in slots:
                    value._bind(file, slots[key])
        return self

    def stop(self) -> None:
        """Unmap the file (a MMV_FLAG_PROCESS file is also removed); the metric objects
        then ignore updates until the next start()."""
        if self._file is None:
            return
        for metric in self._objects:
            for value in metric.values.values():
                value._unbind()
        self._file.close()
        self._file = None

    def __enter__(self) -> "Registry":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
