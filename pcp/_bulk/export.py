"""pandas and Arrow forms of archive columns (pcp/_bulk/columns.py); pandas and pyarrow are
optional dependencies, imported only here.

Wide: a "time" column (or DatetimeIndex) and one column per metric and instance,
named "metric" for a singular metric and "metric[instance name]" otherwise; numeric
types are kept (integers as pandas nullable integers / Arrow integers with nulls),
absent values are NaN / null. Long: one row per value present, columns time, metric,
instance (null for singular metrics), value (float64) and, only when strings or
aggregates are selected, text (their values; value is then null on those rows). Long
rows are grouped by metric, in time order within each metric of a chunk.

Both forms carry the archive's facts (pcp._bulk.carried: descriptors, instance ids,
label, instance-domain history, <mark>s) for pcp.pmi.write_frame: pandas in
attrs["pcp"], Arrow in the schema's metadata and, wide, in each column's field metadata."""
from __future__ import annotations

import copyreg
import datetime
import io
import struct
import zoneinfo as _zoneinfo
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import numpy as np

from pcp._bulk import carried
from pcp._bulk.typed import BLOBS, CELL_DTYPES
from pcp._core.constants import PM_INDOM_NULL, PM_TYPE_AGGREGATE

if TYPE_CHECKING:
    from pcp._bulk.arrays import ArchiveColumns, MetricArray


def need(module: str, extra: str) -> Any:
    """An optional dependency, or an ImportError that says how to install it."""
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError("%s is needed for this: pip install 'pcp-native[%s]' (%s)"
                          % (module.split(".")[0], extra, e)) from e


def _check_form(form: str) -> None:
    if form not in ("wide", "long"):
        raise ValueError("form must be 'wide' or 'long'")


def _unique(names: List[str], ids) -> List[str]:
    """Column names made unique (two instances with one name): "name (id)"."""
    if len(set(names)) == len(names):
        return names
    seen: Dict[str, int] = {}
    for n in names:
        seen[n] = seen.get(n, 0) + 1
    return [n if seen[n] == 1 else "%s (%d)" % (n, int(i)) for n, i in zip(names, ids)]


def column_names(name: str, indom: int, instance_names: List[str]) -> List[str]:
    """"metric" for a singular metric, else "metric[instance name]" per column."""
    if indom == PM_INDOM_NULL and len(instance_names) == 1:
        return [name]
    return ["%s[%s]" % (name, n) for n in instance_names]


def wide_names(m: MetricArray) -> List[str]:
    return _unique(m.column_names(), m.instances)


def _has_blobs(metrics) -> bool:
    return any(m.type in BLOBS and not m.rate for m in metrics)


# --------------------------------------------------------------------------------------
# pandas


def to_pandas(cols: ArchiveColumns, form: str = "wide"):
    _check_form(form)
    pd = need("pandas", "pandas")
    frame = _long_pandas(pd, cols) if form == "long" else _wide_pandas(pd, cols)
    if cols.missing:
        # which archives of a collection lacked which of the selected metrics
        frame.attrs["pcp_missing"] = {k: list(v) for k, v in cols.missing.items()}
    facts = carried.text(cols)
    if facts is not None:
        frame.attrs[carried.KEY] = facts
    return frame


def _wide_pandas(pd: Any, cols: ArchiveColumns):
    data: Dict[str, Any] = {}
    for m in cols.metrics.values():
        vt = np.ascontiguousarray(m.values.T)
        pt = np.ascontiguousarray(m.present.T)
        for j, cname in enumerate(wide_names(m)):
            data[cname] = _pandas_column(pd, m, vt[j], pt[j])
    index = zoned_index(pd, cols.time, cols.timezone, cols.zoneinfo)
    if not data:
        return pd.DataFrame(index=index)
    return pd.DataFrame(data, index=index, copy=False)


def pandas_tz(timezone: str, zoneinfo: str = "") -> Any:
    """The tzinfo of an archive label's zone for pandas: the zoneinfo name of a v3 label
    (":Europe/Berlin", or a path under a zoneinfo directory), else the TZ string as a
    zoneinfo key ("UTC", "EST5EDT") or as a POSIX TZ rule ("AEST-10AEDT,M10.1.0,M4.1.0/3",
    which libc would read: a zoneinfo zone made of the rule alone); UTC when none of
    them can be read."""
    names = []
    if zoneinfo:
        key = zoneinfo.lstrip(":")
        names.append(key.split("zoneinfo/", 1)[1] if "zoneinfo/" in key else key)
    if timezone:
        names.append(timezone.lstrip(":"))
    for name in names:
        try:
            return _zoneinfo.ZoneInfo(name)
        except (ValueError, _zoneinfo.ZoneInfoNotFoundError, OSError):
            continue
    if timezone:
        return rule_zone(timezone)
    return datetime.timezone.utc


_RULE_ZONES: Dict[str, Any] = {}


def rule_zone(rule: str) -> Any:
    """The zone of a POSIX TZ rule (one object per rule: equal pandas dtypes), or UTC
    when the rule cannot be read. A zone read from a file stream cannot be pickled as
    a zoneinfo key is, so these pickle as their rule (_pickle_zone): frames indexed by
    them travel to dask workers."""
    zone = _RULE_ZONES.get(rule)
    if zone is None:
        try:
            zone = _zoneinfo.ZoneInfo.from_file(io.BytesIO(_tzif_of_rule(rule)), key=rule)
        except (ValueError, OSError, UnicodeError):
            zone = datetime.timezone.utc
        _RULE_ZONES[rule] = zone
    return zone


def _pickle_zone(zone: Any) -> Any:
    """copyreg's reduction of ZoneInfo: a rule zone by its rule, any other as ZoneInfo
    itself reduces it."""
    if _RULE_ZONES.get(zone.key) is zone:
        return (rule_zone, (zone.key,))
    return zone.__reduce__()


copyreg.pickle(_zoneinfo.ZoneInfo, _pickle_zone)


def _tzif_of_rule(rule: str) -> bytes:
    """A TZif file (RFC 8536, version 2) with no transitions whose footer is the POSIX
    TZ rule: zoneinfo then applies the rule at every time."""
    def block() -> bytes:
        counts = struct.pack(">6l", 0, 0, 0, 0, 1, 4)   # one local time type, 4 chars
        return b"TZif2" + b"\0" * 15 + counts + struct.pack(">lBB", 0, 0, 0) + b"UTC\0"
    return block() + block() + b"\n" + rule.encode("ascii") + b"\n"


def zoned_index(pd: Any, times: np.ndarray, timezone: str, zoneinfo: str = "") -> Any:
    """A DatetimeIndex "time" of UTC datetime64 times, shown in the archive's zone."""
    index = pd.DatetimeIndex(times, name="time").tz_localize("UTC")
    return index.tz_convert(pandas_tz(timezone, zoneinfo))


def _pandas_column(pd, m: MetricArray, v: np.ndarray, p: np.ndarray):
    kind = v.dtype.kind
    if kind in "iu":
        return pd.arrays.IntegerArray(v, ~p)
    if kind == "f":
        if p.all():
            return v
        out = v.copy()
        out[~p] = np.nan
        return out
    return v


class _Long:
    """The long form's columns: a row per present value, metric by metric (rows in time
    order): time, metric codes into `names`, instance codes into `inames` (-1 for a
    singular metric), values as float64 (NaN for strings and aggregates) and, when the
    selection has any, their values as objects in `texts` (None elsewhere)."""

    def __init__(self, cols: ArchiveColumns) -> None:
        inst_codes: Dict[str, int] = {}
        times, mcodes, icodes, vals = [], [], [], []
        texts: List[Tuple[int, np.ndarray]] = []
        at = 0
        for k, m in enumerate(cols.metrics.values()):
            rr, cc = np.nonzero(m.present)
            if m.singular and len(m.instance_names) == 1:
                codes = np.full(len(cc), -1, np.int32)
            else:
                table = np.array([inst_codes.setdefault(n, len(inst_codes))
                                  for n in m.instance_names], np.int32)
                codes = table[cc] if len(cc) else np.zeros(0, np.int32)
            v = m.values[rr, cc]
            if v.dtype == object:
                texts.append((at, v))
                v = np.full(len(rr), np.nan)
            times.append(cols.time[rr])
            mcodes.append(np.full(len(rr), k, np.int32))
            icodes.append(codes)
            vals.append(v.astype(np.float64))
            at += len(rr)
        self.names = list(cols.metrics)
        self.inames = list(inst_codes)
        cat = np.concatenate
        self.time = cat(times) if times else np.zeros(0, "datetime64[ns]")
        self.mcodes = cat(mcodes) if mcodes else np.zeros(0, np.int32)
        self.icodes = cat(icodes) if icodes else np.zeros(0, np.int32)
        self.vals = cat(vals) if vals else np.zeros(0)
        self.texts: Optional[np.ndarray] = None
        if _has_blobs(cols.metrics.values()):
            self.texts = np.full(at, None, object)
            for start, v in texts:
                self.texts[start:start + len(v)] = v


def _long_pandas(pd, cols: ArchiveColumns):
    lf = _Long(cols)
    data = {"time": zoned_index(pd, lf.time, cols.timezone, cols.zoneinfo),
            "metric": pd.Categorical.from_codes(lf.mcodes, categories=lf.names),
            "instance": pd.Categorical.from_codes(lf.icodes, categories=lf.inames),
            "value": lf.vals}
    if lf.texts is not None:
        data["text"] = lf.texts
    return pd.DataFrame(data)


# --------------------------------------------------------------------------------------
# Arrow


def _arrow_type(pa, type_: int, rate: bool):
    if rate:
        return pa.float64()
    if type_ == PM_TYPE_AGGREGATE:
        return pa.large_binary()
    if type_ in BLOBS:
        return pa.large_string()
    return pa.from_numpy_dtype(CELL_DTYPES[type_])


def wide_schema(pa, metrics: List[Any], facts: Optional[str] = None):
    """Schema of the wide table: metrics as (name, MetricArray or reader metric); each
    column's field metadata its metric's facts, the schema's `facts` (carried.text)."""
    fields = [pa.field("time", pa.timestamp("ns"), nullable=False)]
    for m in metrics:
        for j, cname in enumerate(wide_names(m)):
            fields.append(pa.field(cname, _arrow_type(pa, m.type, m.rate),
                                   metadata=carried.field_metadata(m, j)))
    return pa.schema(fields, metadata=carried.schema_metadata(facts))


def long_schema(pa, metric_names: List[str], blobs: bool, facts: Optional[str] = None):
    fields = [pa.field("time", pa.timestamp("ns"), nullable=False),
              pa.field("metric", pa.dictionary(pa.int32(), pa.string()), nullable=False),
              pa.field("instance", pa.dictionary(pa.int32(), pa.string())),
              pa.field("value", pa.float64())]
    if blobs:
        fields.append(pa.field("text", pa.string()))
    return pa.schema(fields, metadata=carried.schema_metadata(facts))


def _wide_arrays(pa, cols: ArchiveColumns) -> List[Any]:
    arrays = [pa.array(cols.time.view(np.int64), pa.int64()).view(pa.timestamp("ns"))]
    for m in cols.metrics.values():
        atype = _arrow_type(pa, m.type, m.rate)
        if m.blobs is not None:
            arrays.extend(_blob_arrays(pa, m, atype))
            continue
        vt = np.ascontiguousarray(m.values.T)
        pt = np.ascontiguousarray(m.present.T)
        for j in range(vt.shape[0]):
            if m.dtype == object:
                arrays.append(pa.array(vt[j], atype))
            elif pt[j].all():
                arrays.append(pa.array(vt[j], atype))
            else:
                arrays.append(pa.array(vt[j], atype, mask=~pt[j]))
    return arrays


def _blob_arrays(pa, m: MetricArray, atype) -> List[Any]:
    """Arrow string / binary columns straight from the packed bytes (no objects)."""
    assert m.blobs is not None
    nrows, ncols = m.present.shape
    offsets, data = m.blobs.pack()
    obuf = pa.py_buffer(offsets)
    dbuf = pa.py_buffer(data)
    pres = np.ascontiguousarray(m.present.T).ravel()
    vbuf = pa.py_buffer(np.packbits(pres, bitorder="little"))
    out = []
    for j in range(ncols):
        nulls = nrows - int(np.count_nonzero(pres[j * nrows:(j + 1) * nrows]))
        out.append(pa.Array.from_buffers(atype, nrows, [vbuf if nulls else None, obuf, dbuf],
                                         null_count=nulls, offset=j * nrows))
    return out


def wide_batch(pa, cols: ArchiveColumns, schema=None):
    if schema is None:
        schema = wide_schema(pa, list(cols.metrics.values()), carried.text(cols))
    return pa.RecordBatch.from_arrays(_wide_arrays(pa, cols), schema=schema)


def long_batch(pa, cols: ArchiveColumns, schema=None):
    lf = _Long(cols)
    if schema is None:
        schema = long_schema(pa, lf.names, lf.texts is not None, carried.text(cols))
    arrays = [
        pa.array(lf.time.view(np.int64), pa.int64()).view(pa.timestamp("ns")),
        pa.DictionaryArray.from_arrays(pa.array(lf.mcodes, pa.int32()),
                                       pa.array(lf.names, pa.string())),
        pa.DictionaryArray.from_arrays(pa.array(lf.icodes, pa.int32(), mask=lf.icodes < 0),
                                       pa.array(lf.inames, pa.string())),
        pa.array(lf.vals, pa.float64(), mask=np.isnan(lf.vals) if lf.texts is not None else None),
    ]
    if lf.texts is not None:
        # aggregates as hex: the column is text
        arrays.append(pa.array([v if v is None or isinstance(v, str) else bytes(v).hex()
                                for v in lf.texts.tolist()], pa.string()))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def to_arrow(cols: ArchiveColumns, form: str = "wide"):
    _check_form(form)
    pa = need("pyarrow", "arrow")
    batch = wide_batch(pa, cols) if form == "wide" else long_batch(pa, cols)
    return pa.Table.from_batches([batch])


# --------------------------------------------------------------------------------------
# readers: streams of chunks


class _Meta:
    """What wide_schema needs of a reader's metric before any chunk exists."""

    def __init__(self, name, m) -> None:
        self.name = name
        self.pmid = m.pmid
        self.sem = m.sem
        self.units = m.units
        self.type = m.type
        self.rate = m.rate
        self.indom = m.indom
        self.instances = np.array(m.insts, np.int32)
        self.instance_names = list(m.inames)

    @property
    def singular(self) -> bool:
        return self.indom == PM_INDOM_NULL

    def column_names(self) -> List[str]:
        return column_names(self.name, self.indom, self.instance_names)


def batch_reader(reader, form: str = "wide"):
    _check_form(form)
    pa = need("pyarrow", "arrow")
    metas = [_Meta(n, m) for n, m in reader._names]
    # the rows are not known yet: the facts of the stream have no <mark>s
    facts = carried.dumps(carried.describe(reader.source, zip(reader.metric_names, metas)))
    if form == "wide":
        schema = wide_schema(pa, metas, facts)
        make = wide_batch
    else:
        schema = long_schema(pa, reader.metric_names, _has_blobs(metas), facts)
        make = long_batch

    def batches():
        for chunk in reader.chunks(drop_unknown=True):
            yield make(pa, chunk, schema)

    return pa.RecordBatchReader.from_batches(schema, batches())


def reader_to_pandas(reader, form: str = "wide"):
    _check_form(form)
    return to_pandas(reader.read(), form)


def write_parquet(reader, path: Any, form: str = "wide", **kwargs: Any) -> None:
    pq = need("pyarrow.parquet", "arrow")
    stream = batch_reader(reader, form)
    with pq.ParquetWriter(path, stream.schema, **kwargs) as writer:
        for batch in stream:
            writer.write_batch(batch)
