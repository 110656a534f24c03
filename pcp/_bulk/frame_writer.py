"""A pandas DataFrame (wide or long, as pcp.bulk.read_archive's to_pandas makes them)
written to a PCP archive in one call: the reverse of the bulk reader.

Wide: a DatetimeIndex (or a "time" column) and a column per metric ("name") or per
metric and instance ("name[instance]"); the metric's type comes from the column dtype
(int32 / Int32 -> PM_TYPE_32, uint32 -> U32, int64 -> 64, uint64 -> U64, float32 ->
FLOAT, float64 -> DOUBLE, strings -> STRING); missing values (NaN, <NA>, None) are left
out of the record. Long: columns time, metric, instance (NaN for singular metrics),
value (float64 -> DOUBLE) and optionally text (strings -> STRING).

Each row becomes one data record at its time; metric descriptors and instance domains
are written before the first record, index entries and volumes as libpcp_import places
them. Metrics get pmIDs as pmiAddMetric gives them to PM_ID_NULL (domain 245) and
metrics with the same instance names share an instance domain (245.n), instances
numbered in column order. The value columns are encoded in C (csrc/archive_write.c,
pcp_archive_write_frame), a block of rows per call, without a Python object per value
except for strings.

A frame pcp.bulk made (to_pandas, to_arrow, a Parquet file of either or of the CLI's
export) carries its archive's facts (pcp._bulk.carried): its metrics are then written
with their own pmIDs, types, semantics, units, instance domains and instance ids, the
label with the archive's host, zone and start, each instance-domain record at its time
and each <mark> where it was, so that the archive comes back as it was. A column the
facts do not describe (added by the user, renamed, or a rate) is written as above."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from pcp._archive import writer
from pcp._bulk import carried
from pcp._core.constants import (
    PM_TYPE_AGGREGATE, PM_ID_NULL, PM_IN_NULL, PM_INDOM_NULL, PM_SEM_INSTANT, PM_TYPE_32, PM_TYPE_64,
    PM_TYPE_DOUBLE, PM_TYPE_FLOAT, PM_TYPE_STRING, PM_TYPE_U32, PM_TYPE_U64,
)
from pcp._core.wire import PM_IN_NULL_INT32
from pcp._core.native import ffi, lib

_ROWS_PER_CALL = 4096
_raw_alloc = ffi.new_allocator(should_clear_after_alloc=False)


class pmErr(ValueError):
    """A libpcp_import status the frame could not be written with (its code and text)."""

    def __init__(self, code: int, what: str = "") -> None:
        super().__init__("%d: %s%s" % (code, writer.err_str(code), " (%s)" % what if what else ""))
        self.code = code
# "metric[instance]", or "metric[instance] (id)" where read_archive made two instances
# of one name distinct (the writer keeps "instance (id)" as the name: names must differ)
_COLUMN = re.compile(r"^(?P<metric>[^\[]+)\[(?P<instance>.*)\](?P<id> \(-?\d+\))?$")
_NUMPY_OF_TYPE = {PM_TYPE_32: np.int32, PM_TYPE_U32: np.uint32, PM_TYPE_64: np.int64,
                  PM_TYPE_U64: np.uint64, PM_TYPE_FLOAT: np.float32,
                  PM_TYPE_DOUBLE: np.float64}
_TYPE_OF_KIND = {("i", 4): PM_TYPE_32, ("u", 4): PM_TYPE_U32, ("i", 8): PM_TYPE_64,
                 ("u", 8): PM_TYPE_U64, ("f", 4): PM_TYPE_FLOAT, ("f", 8): PM_TYPE_DOUBLE,
                 ("i", 2): PM_TYPE_32, ("i", 1): PM_TYPE_32, ("u", 2): PM_TYPE_U32,
                 ("u", 1): PM_TYPE_U32, ("b", 1): PM_TYPE_U32}


class _Metric:
    """One metric's values over all rows: values[rows, ncol] and present[rows, ncol]
    (or strings as per-cell objects)."""

    def __init__(self, name: str, type_: int, instances: List[Optional[str]],
                 values: Any, present: np.ndarray) -> None:
        self.name = name
        self.type = type_
        self.instances = instances          # [None] for a singular metric
        self.values = values
        self.present = present
        self.pmid = PM_ID_NULL
        self.indom = PM_INDOM_NULL
        self.sem = PM_SEM_INSTANT
        self.units = 0
        self.inst_ids: Optional[List[int]] = None     # the archive's ids, when carried
        self.alias = False          # another name of a carried metric: no values of its own
        self.names = [name]         # every name of a carried metric, the archive's order


def _pm_type(dtype: Any) -> int:
    """The PM_TYPE_* of a pandas / numpy column dtype."""
    numpy_dtype = getattr(dtype, "numpy_dtype", dtype)
    try:
        kind, size = np.dtype(numpy_dtype).kind, np.dtype(numpy_dtype).itemsize
    except TypeError:
        return PM_TYPE_STRING
    if kind in "OSUT":
        return PM_TYPE_STRING
    type_ = _TYPE_OF_KIND.get((kind, size))
    if type_ is None:
        raise TypeError("no PCP metric type for column dtype %s" % dtype)
    return type_


def _times_ns(frame: Any, pd: Any) -> np.ndarray:
    if isinstance(frame.index, pd.DatetimeIndex):
        times = frame.index
    elif "time" in frame.columns:
        times = pd.DatetimeIndex(frame["time"])
    else:
        raise ValueError("the frame needs a DatetimeIndex or a 'time' column")
    if times.tz is not None:
        times = times.tz_convert("UTC").tz_localize(None)
    return times.asi8.astype(np.int64)


def _holds_bytes(parts: List[Tuple[Any, np.ndarray]]) -> bool:
    for values, present in parts:
        for v, p in zip(values, present):
            if p:
                return isinstance(v, (bytes, bytearray, memoryview))
    return False


def _wide_metrics(frame: Any, pd: Any, column_types: Dict[str, int]) -> List[_Metric]:
    """The frame's columns grouped by metric, converted a dtype at a time (one numpy
    conversion per distinct column dtype, not per column)."""
    groups: Dict[str, List[Tuple[Optional[str], int]]] = {}
    skip_time = not isinstance(frame.index, pd.DatetimeIndex)
    for position, column in enumerate(frame.columns):
        if skip_time and column == "time":
            continue
        match = _COLUMN.match(str(column))
        metric, inst = (match.group("metric"),
                        match.group("instance") + (match.group("id") or "")) if match \
            else (str(column), None)
        groups.setdefault(metric, []).append((inst, position))
    dtypes = list(frame.dtypes)
    # every distinct dtype's columns as one 2-D array (and its missing-value mask)
    blocks: Dict[Any, Dict[int, int]] = {}
    for cols in groups.values():
        for _, position in cols:
            where = blocks.setdefault(dtypes[position], {})
            where[position] = len(where)
    converted: Dict[Any, Tuple[Any, np.ndarray, Dict[int, int]]] = {}
    for dtype, where in blocks.items():
        positions = list(where)
        sub = frame if len(positions) == len(dtypes) else frame.iloc[:, positions]
        type_ = _pm_type(dtype)
        if type_ == PM_TYPE_STRING:
            values = sub.to_numpy(dtype=object)
            missing = sub.isna().to_numpy()
        elif isinstance(dtype, np.dtype):
            # plain numpy columns: only floats can be missing (NaN)
            values = sub.to_numpy(dtype=_NUMPY_OF_TYPE[type_])
            missing = np.isnan(values) if dtype.kind == "f" else np.zeros(values.shape, bool)
        else:
            fill = np.nan if type_ in (PM_TYPE_FLOAT, PM_TYPE_DOUBLE) else 0
            values = sub.to_numpy(dtype=_NUMPY_OF_TYPE[type_], na_value=fill)
            missing = sub.isna().to_numpy()
        converted[dtype] = (values, missing, where)
    metrics = []
    for name, cols in groups.items():
        dtype = dtypes[cols[0][1]]
        type_ = _pm_type(dtype)
        if all(dtypes[p] == dtype for _, p in cols):
            values, missing, where = converted[dtype]
            index = [where[p] for _, p in cols]
            picked = values[:, index]
            present = np.ascontiguousarray(~missing[:, index])
        elif all(_pm_type(dtypes[p]) == type_ == PM_TYPE_STRING for _, p in cols):
            # text columns of several kinds (object, pandas strings): one at a time
            parts = [(converted[dtypes[p]][0][:, converted[dtypes[p]][2][p]],
                      converted[dtypes[p]][1][:, converted[dtypes[p]][2][p]]) for _, p in cols]
            picked = np.stack([v for v, _ in parts], axis=1)
            present = np.ascontiguousarray(~np.stack([m for _, m in parts], axis=1))
        else:
            raise TypeError("the columns of metric %s differ in dtype" % name)
        if type_ == PM_TYPE_STRING and (
                _holds_bytes([(picked.ravel(), present.ravel())])
                or column_types.get(str(frame.columns[cols[0][1]])) == PM_TYPE_AGGREGATE):
            type_ = PM_TYPE_AGGREGATE       # read_archive's aggregates are bytes objects
        if type_ not in (PM_TYPE_STRING, PM_TYPE_AGGREGATE):
            picked = np.ascontiguousarray(picked)
        instances = [inst for inst, _ in cols]
        if len(instances) > 1 and None in instances:
            raise ValueError("metric %s has both a plain and an instance column" % name)
        metrics.append(_Metric(name, type_, instances, picked, present))
    return metrics


def _long_metrics(frame: Any, pd: Any) -> Tuple[np.ndarray, List[_Metric]]:
    times = pd.DatetimeIndex(frame["time"])
    if times.tz is not None:
        times = times.tz_convert("UTC").tz_localize(None)
    ns = times.asi8.astype(np.int64)
    rows_ns, row_of = np.unique(ns, return_inverse=True)
    metric = frame["metric"]
    names = list(metric.cat.categories) if hasattr(metric, "cat") else list(dict.fromkeys(metric))
    texts = None
    if "text" in frame.columns:
        text = frame["text"].astype(object)
        texts = text.where(text.notna(), None).to_numpy(dtype=object)
    values = frame["value"].to_numpy(dtype=np.float64, na_value=np.nan)
    inst_col = frame["instance"]
    rank = ({str(n): k for k, n in enumerate(inst_col.cat.categories)}
            if hasattr(inst_col, "cat") else None)
    metrics = []
    mvals = metric.to_numpy(dtype=object)
    ivals = inst_col.to_numpy(dtype=object)
    for name in names:
        rows = np.nonzero(mvals == name)[0]
        if len(rows) == 0:          # a metric without values: defined all the same
            metrics.append(_Metric(name, PM_TYPE_DOUBLE, [None],
                                   np.zeros((len(rows_ns), 1)), np.zeros((len(rows_ns), 1), bool)))
            continue
        insts = ivals[rows]
        singular = bool(pd.isna(insts).all())     # None, NaN or pandas' NA
        if singular:
            inames: List[Optional[str]] = [None]
            col_of = np.zeros(len(rows), np.int64)
        else:
            # columns in the order of the instance categories (the order read_archive's
            # long form lists them in), else in order of appearance
            order = list(dict.fromkeys(str(i) for i in insts))
            if rank is not None:
                order.sort(key=lambda n: rank.get(n, len(rank)))
            where = {n: k for k, n in enumerate(order)}
            inames = list(order)
            col_of = np.array([where[str(i)] for i in insts], np.int64)
        is_text = texts is not None and any(t is not None for t in texts[rows])
        shape = (len(rows_ns), len(inames))
        present = np.zeros(shape, bool)
        present[row_of[rows], col_of] = True
        if is_text:
            cells = np.full(shape, None, object)
            cells[row_of[rows], col_of] = texts[rows]
            present &= cells != None  # noqa: E711  (elementwise)
            kind = PM_TYPE_AGGREGATE if _holds_bytes([(cells.ravel(), present.ravel())]) \
                else PM_TYPE_STRING
            metrics.append(_Metric(name, kind, inames, cells, present))
        else:
            cells = np.zeros(shape, np.float64)
            cells[row_of[rows], col_of] = values[rows]
            present[row_of[rows], col_of] &= ~np.isnan(values[rows])
            metrics.append(_Metric(name, PM_TYPE_DOUBLE, inames, cells, present))
    return rows_ns, metrics


_NUMERIC_TYPES = set(_NUMPY_OF_TYPE)
_TEXT_TYPES = {PM_TYPE_STRING, PM_TYPE_AGGREGATE}


def _apply_facts(metrics: List[_Metric], facts: Dict[str, Any]) -> None:
    """Give each metric the archive's descriptor and instance ids the frame carries for
    it, when its columns are still the archive's: every instance column known, values
    of the same kind (numbers or text). The values are converted to the carried type
    (the long form holds numbers as float64)."""
    described = facts.get("metrics") or {}
    used_pmids: Dict[int, _Metric] = {}
    for m in metrics:
        desc = described.get(m.name)
        if not isinstance(desc, dict):
            continue
        first = used_pmids.get(desc["pmid"])
        if first is not None:
            # a metric of several names: the first name's values, the others as names
            m.alias = first.instances == m.instances and first.type == desc["type"]
            if m.alias:
                m.pmid = first.pmid
            continue
        if desc.get("empty") and not m.present.any():
            # no value in the archive's rows (the long form lists it all the same)
            m.instances, m.values, m.present = [], m.values[:, :0], m.present[:, :0]
        type_ = desc["type"]
        if not ((type_ in _NUMERIC_TYPES and m.type in _NUMERIC_TYPES)
                or (type_ in _TEXT_TYPES and m.type in _TEXT_TYPES)):
            continue
        if not m.instances:
            inst_ids = []           # _valueless: no column
        elif desc["indom"] == PM_INDOM_NULL:
            if m.instances != [None]:
                continue
            inst_ids = [PM_IN_NULL_INT32]
        else:
            ids = carried.instance_ids(desc)
            if None in m.instances or any(str(i) not in ids for i in m.instances):
                continue
            inst_ids = [ids[str(i)] for i in m.instances]
        if type_ == PM_TYPE_AGGREGATE and m.type == PM_TYPE_STRING:
            # the long Arrow form writes aggregates as hex text
            try:
                m.values = np.array([bytes.fromhex(v) if p and isinstance(v, str) else v
                                     for v, p in zip(m.values.ravel(), m.present.ravel())],
                                    object).reshape(m.values.shape)
            except ValueError:
                continue
        if type_ != m.type and type_ in _NUMERIC_TYPES:
            values = np.where(m.present, m.values, 0) if m.type in (PM_TYPE_FLOAT,
                                                                    PM_TYPE_DOUBLE) else m.values
            m.values = np.ascontiguousarray(values.astype(_NUMPY_OF_TYPE[type_]))
        m.type, m.pmid, m.sem, m.units, m.indom = (type_, desc["pmid"], desc["sem"],
                                                   desc["units"], desc["indom"])
        m.inst_ids = inst_ids
        used_pmids[desc["pmid"]] = m
        m.names = list(desc.get("names") or [m.name])


def _valueless(facts: Dict[str, Any], metrics: List[_Metric], nrows: int) -> List[_Metric]:
    """The carried metrics that had no value in the rows read, and so may have no
    column (the long form, the CLI's export, an instance domain with no instances):
    their descriptors and instance domains are the archive's too."""
    have = {m.name for m in metrics}
    out = []
    for name, desc in (facts.get("metrics") or {}).items():
        if name not in have and isinstance(desc, dict) and desc.get("empty"):
            out.append(_Metric(name, desc["type"], [], np.zeros((nrows, 0)),
                               np.zeros((nrows, 0), bool)))
    return out


def _define(metrics: List[_Metric], history: Dict[int, List[Any]]) -> None:
    """pmiAddMetric / pmiAddInstance for every metric (one indom per instance list; a
    carried indom with a history is written by _Timeline instead)."""
    indoms: Dict[Tuple[str, ...], int] = {}
    for m in metrics:
        if m.alias:
            continue
        if m.pmid != PM_ID_NULL:
            if m.indom != PM_INDOM_NULL and m.indom not in history:
                # carried, but the frame has no record of the indom: its columns
                history[m.indom] = [[None, m.inst_ids, [str(i) for i in m.instances]]]
            sts = writer.add_metric(m.name.encode("utf-8"), m.pmid, m.type, m.indom, m.sem,
                                    m.units, any_type=True)
            if sts < 0:
                raise pmErr(sts, m.name)
            if len(m.names) > 1 and m.name in m.names:
                sts = writer.set_names(m.pmid, [n.encode("utf-8") for n in m.names])
                if sts < 0:
                    raise pmErr(sts, m.name)
            continue
        if m.instances != [None]:
            key = tuple(str(i) for i in m.instances)
            indom = indoms.get(key)
            if indom is None:
                indom = (245 << 22) | len(indoms)
                indoms[key] = indom
                for inst, name in enumerate(key):
                    sts = writer.add_instance(indom, name.encode("utf-8"), inst)
                    if sts < 0:
                        raise pmErr(sts)
            m.indom = indom
        sts = writer.add_metric(m.name.encode("utf-8"), PM_ID_NULL, m.type, m.indom,
                                PM_SEM_INSTANT, 0, any_type=True)
        if sts < 0:
            raise pmErr(sts, m.name)
        m.pmid = writer.current().metrics[-1].pmid


def _c_metric(m: _Metric, lo: int, hi: int, keep: List[Any]) -> Any:
    """The pcp_frame_metric of rows [lo, hi) of one metric (buffers kept alive in keep)."""
    c = ffi.new("pcp_frame_metric *")
    ncol = len(m.instances)
    c.pmid = m.pmid
    c.type = m.type
    c.ncol = ncol
    if m.inst_ids is not None:
        inst = ffi.new("int32_t[]", m.inst_ids)
    else:
        inst = ffi.new("int32_t[]", [PM_IN_NULL - (1 << 32)] if m.instances == [None]
                       else list(range(ncol)))
    present = np.ascontiguousarray(m.present[lo:hi], dtype=np.uint8)
    keep += [inst, present]
    c.inst = inst
    c.present = ffi.from_buffer("uint8_t[]", present)
    if m.type in (PM_TYPE_STRING, PM_TYPE_AGGREGATE):
        cells = m.values[lo:hi].ravel()
        pres = present.ravel()
        encoded = [(v.encode("utf-8") if isinstance(v, str) else bytes(v)) if p else b""
                   for v, p in zip(cells, pres)]
        lengths = np.fromiter((len(e) for e in encoded), np.int64, len(encoded))
        offsets = np.zeros(len(encoded) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        data = b"".join(encoded) or b"\0"
        keep += [offsets, data]
        c.str_off = ffi.from_buffer("int64_t[]", offsets)
        c.str_data = ffi.from_buffer("uint8_t[]", data)
        c.values = ffi.NULL
    else:
        values = np.ascontiguousarray(m.values[lo:hi])
        keep.append(values)
        c.values = ffi.from_buffer(values)
    return c


def _encode_rows(metrics: List[_Metric], lo: int, hi: int, secs: np.ndarray,
                 nsecs: np.ndarray, version: int) -> Tuple[Any, np.ndarray]:
    keep: List[Any] = []
    cms = [_c_metric(m, lo, hi, keep) for m in metrics]
    array = ffi.new("pcp_frame_metric[]", len(cms))
    for k, cm in enumerate(cms):
        array[k] = cm[0]
    n = hi - lo
    sec = np.ascontiguousarray(secs[lo:hi], dtype=np.int64)
    nsec = np.ascontiguousarray(nsecs[lo:hi], dtype=np.int32)
    reclen = np.zeros(n, np.int64)
    args = (array, len(cms), n, version, ffi.from_buffer("int64_t[]", sec),
            ffi.from_buffer("int32_t[]", nsec))
    total = lib.pcp_archive_write_frame(*args, ffi.NULL, 0, ffi.from_buffer("int64_t[]", reclen))
    if total < 0:
        raise pmErr(total)
    out = _raw_alloc("uint8_t[]", max(total, 1))     # every byte is written by C
    got = lib.pcp_archive_write_frame(*args, out, total, ffi.from_buffer("int64_t[]", reclen))
    if got != total:
        raise pmErr(got if got < 0 else -12444)
    return ffi.buffer(out, total), reclen


def _arrow_to_pandas(table: Any) -> Tuple[Any, Dict[str, int]]:
    """An Arrow table as the pandas frame of the same form: integer columns become
    pandas nullable integers (not float64) so the metric types survive; binary columns
    are aggregates (returned as column name -> type, as an all-null one shows nothing)."""
    import pandas as pd
    import pyarrow as pa

    nullable = {pa.int32(): pd.Int32Dtype(), pa.uint32(): pd.UInt32Dtype(),
                pa.int64(): pd.Int64Dtype(), pa.uint64(): pd.UInt64Dtype()}
    binary = {f.name: PM_TYPE_AGGREGATE for f in table.schema
              if pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)}
    return table.to_pandas(types_mapper=nullable.get), binary


def _frame_zone(frame: Any, pd: Any) -> str:
    """The zone of a frame's times as a label's TZ: a zoneinfo key (or the POSIX rule
    of a zone pcp.bulk made from one), "UTC" for naive or UTC times."""
    if isinstance(frame.index, pd.DatetimeIndex):
        tz = frame.index.tz
    elif "time" in frame.columns:
        tz = getattr(pd.DatetimeIndex(frame["time"]), "tz", None)
    else:
        tz = None
    key = getattr(tz, "key", None)
    return key if isinstance(key, str) and key else "UTC"


def _timeline(ns: np.ndarray, history: Dict[int, List[Any]],
              marks: List[int]) -> Dict[int, List[Tuple[Any, ...]]]:
    """What comes before row k (k == len(ns): after the last): ("mark",) for a <mark>
    the rows followed, ("indom", stamp, indom, ids, names) for each instance-domain
    record of the history, at the first row at or after its time (a record with no
    time: the first row's)."""
    events: Dict[int, List[Tuple[Any, ...]]] = {}
    for t in marks:
        k = int(np.searchsorted(ns, t))
        if 0 < k < len(ns) and ns[k] == t:
            events.setdefault(k, []).append(("mark",))
    records = []
    for indom, snaps in history.items():
        for t, ids, names in snaps:
            t = int(ns[0]) if t is None else int(t)
            records.append((t, indom, ids, names))
    for t, indom, ids, names in sorted(records, key=lambda r: r[0]):
        k = int(np.searchsorted(ns, t))
        events.setdefault(k, []).append(("indom", divmod(t, 1000000000), indom, ids, names))
    return events


def _happen(events: List[Tuple[Any, ...]]) -> None:
    for event in events:
        if event[0] == "mark":
            sts = writer.put_mark()
        else:
            _, stamp, indom, ids, names = event
            sts = writer.put_indom(indom, stamp, [int(i) for i in ids],
                                   [str(n).encode("utf-8") for n in names])
        if sts < 0:
            raise pmErr(sts)


def write_frame(frame: Any, path: Any, form: Optional[str] = None,
                version: Optional[int] = None, hostname: Optional[str] = None,
                timezone: Optional[str] = None) -> int:
    """Write `frame` (a pandas DataFrame or an Arrow table) to the archive `path` (base
    name); returns the records written. The label's zone is `timezone`, else the zone
    the frame carries from its archive, else the zone of the frame's times (what
    pcp.bulk's indexes carry), UTC for naive times; its host `hostname`, else the
    archive's, else this machine's; its version `version`, else the archive's, else 3."""
    import pandas as pd

    facts = carried.of_frame(frame)
    column_types: Dict[str, int] = {}
    if not isinstance(frame, pd.DataFrame) and hasattr(frame, "schema") \
            and hasattr(frame, "to_pandas"):
        frame, column_types = _arrow_to_pandas(frame)

    if form is None:
        form = "long" if {"time", "metric", "value"} <= set(map(str, frame.columns)) \
            else "wide"
    if form == "wide":
        ns = _times_ns(frame, pd)
        metrics = _wide_metrics(frame, pd, column_types)
    elif form == "long":
        ns, metrics = _long_metrics(frame, pd)
    else:
        raise ValueError("form must be 'wide' or 'long'")
    if len(ns) and np.any(np.diff(ns) < 0):
        raise ValueError("the frame's times must not go backwards")
    label: Dict[str, Any] = {}
    history: Dict[int, List[Any]] = {}
    marks: List[int] = []
    if facts is not None:
        metrics += _valueless(facts, metrics, len(ns))
        _apply_facts(metrics, facts)
        label = facts.get("label") or {}
        used = {m.indom for m in metrics if m.pmid != PM_ID_NULL}
        history = {int(k): v for k, v in (facts.get("indoms") or {}).items()
                   if int(k) in used and v}
        marks = list(facts.get("marks") or [])
    if hostname is None:
        hostname = label.get("hostname") or None
    if version is None:
        version = label.get("version") if label.get("version") in (2, 3) else 3
    zoneinfo = None
    if timezone is None:
        # the archive's zone, unless its zoneinfo would be lost in a v2 label: then the
        # zone the frame's times are shown in (which is that zoneinfo)
        if label.get("timezone") and (version == 3 or not label.get("zoneinfo")):
            timezone, zoneinfo = label["timezone"], label.get("zoneinfo") or None
        else:
            timezone = _frame_zone(frame, pd)
    start = label.get("start")
    label_stamp = divmod(int(start), 1000000000) \
        if isinstance(start, int) and len(ns) and start <= ns[0] else None
    secs, nsecs = np.divmod(ns, 1000000000)
    base = path.encode() if isinstance(path, str) else bytes(path)
    number = writer.start(base, 0)
    try:
        for call, arg in ((writer.set_version, version),
                          (writer.set_hostname, None if hostname is None else hostname.encode()),
                          (writer.set_timezone, None if timezone is None else timezone.encode())):
            if arg is not None:
                sts = call(arg)
                if sts < 0:
                    raise pmErr(sts)
        writer.set_label_extras(None if zoneinfo is None else zoneinfo.encode(), label_stamp)
        _define(metrics, history)
        events = _timeline(ns, history, marks) if len(ns) else {}
        pmids = [m.pmid for m in metrics if not m.alias]
        metrics = [m for m in metrics if not m.alias and m.instances]
        bounds = sorted(set(range(0, len(ns), _ROWS_PER_CALL))
                        | {k for k in events if k < len(ns)}) + [len(ns)]
        written = 0
        for lo, hi in zip(bounds, bounds[1:]):
            _happen(events.get(lo, []))
            records, reclen = _encode_rows(metrics, lo, hi, secs, nsecs, writer.current().version)
            sts = writer.put_records(records, reclen, secs[lo:hi], nsecs[lo:hi], pmids)
            if sts < 0:
                raise pmErr(sts)
            written += int(np.count_nonzero(reclen))
        _happen(events.get(len(ns), []))
    finally:
        writer.use_context(number)
        writer.end()
    return written
