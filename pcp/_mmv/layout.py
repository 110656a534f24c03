"""The mmv(5) file, laid out as libpcp_mmv 6.0.3 lays it out.

A file is built whole in memory (``build``) from plain definitions, then copied into
the mapped file by ``pcp._mmv.region``. The sections come in libpcp_mmv's order: header,
table of contents, instance domains, instances, metrics, values, strings, labels. Every
section's entry has a fixed size (so every offset is a multiple of 8, and a value's
64-bit word can be stored in one aligned write).

Version 1 keeps metric and instance names in fixed 64-byte fields; version 2 keeps them
in the string section (names of 64 bytes or more need it); version 3 adds labels. The
checks (``check``) are those of libpcp_mmv's mmv_check (the official Python binding's
mmv_stats_init) and mmv_check2 (the registry and mmv_stats2_init): a definition they
refuse makes no file at all, and the reason is an errno.
"""
from __future__ import annotations

import errno
import struct
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

from pcp._core.constants import (
    MMV_NAMEMAX, MMV_STRINGMAX, MMV_TOC_INDOMS, MMV_TOC_INSTANCES, MMV_TOC_LABELS,
    MMV_TOC_METRICS, MMV_TOC_STRINGS, MMV_TOC_VALUES, MMV_TYPE_ELAPSED, MMV_TYPE_NOSUPPORT,
    MMV_TYPE_STRING, MMV_VERSION1, MMV_VERSION2, MMV_VERSION3, PM_INDOM_NULL,
)

# On-disk records (mmv_dev.h), little-endian as libpcp_mmv writes them on this host.
HEADER = struct.Struct("<4siQQiiii")            # magic version g1 g2 tocs flags process cluster
TOC = struct.Struct("<iiQ")                     # type count offset
INDOM = struct.Struct("<IIQQQ")                 # serial count offset shorttext helptext
INSTANCE1 = struct.Struct("<QIi64s")            # indom padding internal external[64]
INSTANCE2 = struct.Struct("<QIiQ")              # indom padding internal external(offset)
METRIC1 = struct.Struct("<64sIii4siIQQ")        # name[64] item type sem units indom pad short help
METRIC2 = struct.Struct("<QIii4siIQQ")          # name(offset) item type sem units indom pad ...
VALUE = struct.Struct("<8sqQQ")                 # value extra metric instance
LABEL = struct.Struct("<IIi244s")               # flags identity internal payload[244]
STRING_SIZE = MMV_STRINGMAX

HEADER_G2_OFFSET = 16       # where the second generation number goes, written last
VALUE_EXTRA_OFFSET = 8      # a value's "extra": elapsed start time, or its string's offset


@dataclass
class MetricDef:
    """One metric as libpcp_mmv is given it (mmv_metric_t / mmv_metric2_t)."""
    name: bytes
    item: int
    type: int
    semantics: int
    dimension: bytes            # the pmUnits word's 4 bytes, copied as they are
    indom: int
    shorttext: Optional[bytes]
    helptext: Optional[bytes]


@dataclass
class IndomDef:
    """One instance domain with its (internal, external) instances."""
    serial: int
    instances: List[Tuple[int, bytes]]
    shorttext: Optional[bytes]
    helptext: Optional[bytes]


@dataclass
class LabelDef:
    """One label record of a version 3 file (payload: the JSONB text with its NUL)."""
    flags: int
    identity: int
    internal: int
    payload: bytes


@dataclass
class ValueSlot:
    """Where one metric[instance] value lives, and the names a lookup compares."""
    offset: int                 # of the mmv_disk_value_t in the file
    type: int
    metric_name: bytes          # as stored in the file (a lookup compares these)
    singular: bool
    instance_name: Optional[bytes]
    string_offset: int = 0      # the string slot of a MMV_TYPE_STRING value


@dataclass
class Layout:
    """A whole file's bytes (g2 still 0) and its value slots in file order."""
    version: int
    content: bytearray
    generation: int
    values: List[ValueSlot] = field(default_factory=list)


def singular(indom: int) -> bool:
    """mmv_singular: serial 0 and PM_INDOM_NULL both mean "no instance domain"."""
    indom &= 0xFFFFFFFF
    return indom == 0 or indom == PM_INDOM_NULL


def _find_indom(serial: int, indoms: Sequence[IndomDef]) -> Optional[int]:
    """Index of the first domain with this serial (a repeated serial: the first wins)."""
    serial &= 0xFFFFFFFF
    for index, indom in enumerate(indoms):
        if indom.serial & 0xFFFFFFFF == serial:
            return index
    return None


def check(metrics: Sequence[MetricDef], indoms: Sequence[IndomDef], long_names: bool) -> int:
    """The file version these definitions need, or a negative errno when libpcp_mmv
    refuses them. ``long_names`` False is mmv_check (the official binding's path: names
    are fixed fields, instances unchecked), True is mmv_check2 (names of 64 bytes or more
    move the file to version 2)."""
    version = MMV_VERSION1
    for indom in indoms:
        if singular(indom.serial):
            return -errno.ESRCH
        for text in (indom.shorttext, indom.helptext):
            if text is not None and len(text) >= MMV_STRINGMAX:
                return -errno.E2BIG
        if long_names:
            for _, external in indom.instances:
                if not external:
                    return -errno.EINVAL
                if len(external) >= MMV_STRINGMAX:
                    return -errno.E2BIG
                if len(external) >= MMV_NAMEMAX:
                    version = MMV_VERSION2
    for metric in metrics:
        if metric.type < MMV_TYPE_NOSUPPORT or metric.type > MMV_TYPE_ELAPSED or not metric.name:
            return -errno.EINVAL
        if len(metric.name) >= MMV_STRINGMAX:
            return -errno.E2BIG
        if long_names and len(metric.name) >= MMV_NAMEMAX:
            version = MMV_VERSION2
        if not singular(metric.indom) and _find_indom(metric.indom, indoms) is None:
            return -errno.ESRCH
    return version


def _fixed(text: bytes, size: int) -> bytes:
    """strncpy into a char[size] whose last byte is then forced to NUL (a C string
    ends at its first NUL)."""
    return text.split(b"\0", 1)[0][:size - 1]


def stored_name(name: bytes, version: int) -> bytes:
    """A metric or instance name as the file keeps it (and a lookup compares it)."""
    if version in (MMV_VERSION2, MMV_VERSION3):
        return _fixed(name, MMV_STRINGMAX)
    return _fixed(name, MMV_NAMEMAX)


def build(version: int, cluster: int, flags: int, pid: int, generation: int,
          metrics: Sequence[MetricDef], indoms: Sequence[IndomDef],
          labels: Sequence[LabelDef] = ()) -> Layout:
    """Lay out a file as libpcp_mmv's mmv_init does, for definitions ``check`` accepted."""
    names_in_strings = version in (MMV_VERSION2, MMV_VERSION3)
    instance_rec = INSTANCE2 if names_in_strings else INSTANCE1
    metric_rec = METRIC2 if names_in_strings else METRIC1

    ninstances = sum(len(i.instances) for i in indoms)
    nstrings = 0
    nvalues = 0
    for indom in indoms:
        if names_in_strings:
            nstrings += len(indom.instances)
        nstrings += (indom.shorttext is not None) + (indom.helptext is not None)
    for metric in metrics:
        if names_in_strings:
            nstrings += 1
        nstrings += (metric.shorttext is not None) + (metric.helptext is not None)
        count = 1 if singular(metric.indom) else len(indoms[_find_indom(metric.indom, indoms)].instances)
        if metric.type == MMV_TYPE_STRING:
            nstrings += count
        nvalues += count

    ntocs = 2 + (2 if indoms else 0) + (1 if nstrings else 0) + (1 if labels else 0)
    indoms_offset = HEADER.size + TOC.size * ntocs
    instances_offset = indoms_offset + INDOM.size * len(indoms)
    metrics_offset = instances_offset + instance_rec.size * ninstances
    values_offset = metrics_offset + metric_rec.size * len(metrics)
    strings_offset = values_offset + VALUE.size * nvalues
    labels_offset = strings_offset + STRING_SIZE * nstrings
    size = labels_offset + LABEL.size * len(labels)

    buf = bytearray(size)
    HEADER.pack_into(buf, 0, b"MMV\0", version, generation, 0, ntocs, flags, pid, cluster)
    tocs = []
    if indoms:
        tocs.append((MMV_TOC_INDOMS, len(indoms), indoms_offset))
        tocs.append((MMV_TOC_INSTANCES, ninstances, instances_offset))
    tocs.append((MMV_TOC_METRICS, len(metrics), metrics_offset))
    tocs.append((MMV_TOC_VALUES, nvalues, values_offset))
    if nstrings:
        tocs.append((MMV_TOC_STRINGS, nstrings, strings_offset))
    if labels:
        tocs.append((MMV_TOC_LABELS, len(labels), labels_offset))
    for index, (kind, count, offset) in enumerate(tocs):
        TOC.pack_into(buf, HEADER.size + TOC.size * index, kind, count, offset)

    strings = _StringSection(buf, strings_offset)

    # instance domains and their instances; names of v2/v3 go first in the strings
    indom_first_instance = []
    position = instances_offset
    instance_names = []
    for index, indom in enumerate(indoms):
        indom_first_instance.append(position)
        for internal, external in indom.instances:
            indom_record = indoms_offset + INDOM.size * index
            if names_in_strings:
                INSTANCE2.pack_into(buf, position, indom_record, 0, internal, 0)
            else:
                INSTANCE1.pack_into(buf, position, indom_record, 0, internal,
                                    _fixed(external, MMV_NAMEMAX))
            instance_names.append((position, external))
            position += instance_rec.size
    stored_instance_name = {}
    for position, external in instance_names:
        if names_in_strings:
            text_offset = strings.add(external)
            struct.pack_into("<Q", buf, position + 16, text_offset)
            stored_instance_name[position] = _fixed(external, MMV_STRINGMAX)
        else:
            stored_instance_name[position] = _fixed(external, MMV_NAMEMAX)

    stored_metric_name = []
    for index, metric in enumerate(metrics):
        position = metrics_offset + metric_rec.size * index
        common = (metric.item & 0xFFFFFFFF, metric.type, metric.semantics, metric.dimension,
                  _int32(metric.indom), 0, 0, 0)
        if names_in_strings:
            METRIC2.pack_into(buf, position, 0, *common)
            stored_metric_name.append(_fixed(metric.name, MMV_STRINGMAX))
        else:
            METRIC1.pack_into(buf, position, _fixed(metric.name, MMV_NAMEMAX), *common)
            stored_metric_name.append(_fixed(metric.name, MMV_NAMEMAX))
    if names_in_strings:
        for index, metric in enumerate(metrics):
            struct.pack_into("<Q", buf, metrics_offset + metric_rec.size * index,
                             strings.add(metric.name))

    # values: one per metric, or one per instance of its domain, in domain order
    values: List[ValueSlot] = []
    position = values_offset
    for index, metric in enumerate(metrics):
        metric_record = metrics_offset + metric_rec.size * index
        if singular(metric.indom):
            VALUE.pack_into(buf, position, bytes(8), 0, metric_record, 0)
            values.append(ValueSlot(position, metric.type, stored_metric_name[index], True, None))
            position += VALUE.size
            continue
        which = _find_indom(metric.indom, indoms)
        first = indom_first_instance[which]
        for k in range(len(indoms[which].instances)):
            instance_record = first + instance_rec.size * k
            VALUE.pack_into(buf, position, bytes(8), 0, metric_record, instance_record)
            values.append(ValueSlot(position, metric.type, stored_metric_name[index], False,
                                    stored_instance_name[instance_record]))
            position += VALUE.size
    for slot in values:
        if slot.type == MMV_TYPE_STRING:
            slot.string_offset = strings.reserve()
            struct.pack_into("<q", buf, slot.offset + VALUE_EXTRA_OFFSET, slot.string_offset)

    for index, metric in enumerate(metrics):
        position = metrics_offset + metric_rec.size * index
        text_fields = metric_rec.size - 16         # shorttext, then helptext: the last 16 bytes
        if metric.shorttext is not None:
            struct.pack_into("<Q", buf, position + text_fields, strings.add(metric.shorttext))
        if metric.helptext is not None:
            struct.pack_into("<Q", buf, position + text_fields + 8, strings.add(metric.helptext))
    for index, indom in enumerate(indoms):
        position = indoms_offset + INDOM.size * index
        shorttext = strings.add(indom.shorttext) if indom.shorttext is not None else 0
        helptext = strings.add(indom.helptext) if indom.helptext is not None else 0
        INDOM.pack_into(buf, position, indom.serial & 0xFFFFFFFF, len(indom.instances),
                        indom_first_instance[index], shorttext, helptext)

    for index, label in enumerate(labels):
        LABEL.pack_into(buf, labels_offset + LABEL.size * index, label.flags & 0xFFFFFFFF,
                        label.identity & 0xFFFFFFFF, _int32(label.internal), label.payload)

    return Layout(version, buf, generation, values)


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


class _StringSection:
    """The string section's slots, handed out in order as libpcp_mmv fills them."""

    def __init__(self, buf: bytearray, offset: int) -> None:
        self._buf = buf
        self._next = offset

    def reserve(self) -> int:
        offset = self._next
        self._next += STRING_SIZE
        return offset

    def add(self, text: bytes) -> int:
        offset = self.reserve()
        text = _fixed(text, STRING_SIZE)
        self._buf[offset:offset + len(text)] = text
        return offset
