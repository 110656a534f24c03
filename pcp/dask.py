"""Archives as a Dask DataFrame: one partition per archive (or per data volume), read on
the workers by pcp.bulk.ArchiveReader, so thousands of hosts' archives are one call.

    from pcp import dask as pcpdask
    ddf = pcpdask.read_archives(glob.glob("/var/log/pcp/pmlogger/*/2026*.meta"),
                                metrics=["kernel.all.load", "disk.dev"], rate=True)
    ddf.groupby(["host", "metric"]).value.mean().compute()

Forms: "long" (default; index time, columns host, metric, instance, value and text
(strings and aggregates, else null): the same schema whatever the hosts) or "wide"
(index time, a host column and one column per metric and instance, the union over every
archive's metadata, absent where an archive has no such instance; building the schema
opens every archive's metadata before the graph is made).

A fleet's archives never all carry the same metrics, and some are damaged: an archive
that lacks a selected metric gives no rows for it, and one that cannot be read is what
`errors` says ("raise", or "skip" / "stop": left out, as are its damaged records), both
said in a MissingMetricsWarning and in the computed frame's attrs ("pcp_missing":
{archive: names}, "pcp_unreadable": {archive: error}); missing="raise" makes a lacking
metric an error before anything is computed.

Divisions come from the archive labels (and, per volume, each volume's first record)
when the partitions' time ranges follow one another (one host's archives); for a fleet,
whose archives overlap in time, they are unknown. Column projection reaches the reader:
selecting wide columns reads only their metrics. Needs dask[dataframe]
(pip install 'pcp-native[dask]').
"""
from __future__ import annotations

import glob as _glob
import os
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd
import dask.dataframe as dd

from pcp._archive.reader import Archive
from pcp._archive.files import expand_names, spec_text
from pcp._bulk.arrays import MissingMetricsWarning
from pcp._bulk.columns import ArchiveReader
from pcp._core.constants import PM_ERR_NAME
from pcp._core.errors import pmErr, pmErrStr
from pcp._bulk.selection import NS_MAX, NS_MIN, TimeLike, to_ns, window_ns
from pcp._bulk import export as _columns_export

__all__ = ["read_archives", "archive_partitions"]

Part = Tuple[str, Optional[int], str]       # (archive, volume or None, host)


def _names(paths: Union[str, Sequence[str]]) -> List[str]:
    """Archive names: a list of them, a comma-separated list, a directory (every archive
    in it) or a glob pattern (matching .meta files or archive names)."""
    if isinstance(paths, (list, tuple)):
        out: List[str] = []
        for p in paths:
            out.extend(_names(p))
        return out
    spec = spec_text(paths)
    if any(c in spec for c in "*?["):
        found = []
        for path in sorted(_glob.glob(spec)):
            base = path
            for suffix in (".xz", ".lzma", ".bz2", ".bz", ".gz", ".Z", ".z", ".zst"):
                if base.endswith(suffix):
                    base = base[:-len(suffix)]
            if base.endswith(".meta"):
                found.append(base[:-len(".meta")])
            elif os.path.isdir(base) or not os.path.splitext(base)[1][1:].isdigit():
                found.append(base)
        return sorted(set(found))
    try:
        return expand_names(spec)
    except pmErr as e:
        raise pmErr(e.code, [spec]) from None    # as pmNewContext's error names it


def archive_partitions(paths: Union[str, Sequence[str]], split: str = "archive",
                       start: TimeLike = None, end: TimeLike = None
                       ) -> Tuple[List[Part], Optional[List[int]]]:
    """The partitions of read_archives (sorted by start time) and their divisions in
    nanoseconds (None when partitions overlap in time or a time is unknown). Archives
    wholly outside the window are left out."""
    parts, divisions, _, _ = _partitions(paths, split, start, end)
    return parts, divisions


def _partitions(paths: Union[str, Sequence[str]], split: str, start: TimeLike, end: TimeLike,
                unreadable: Optional[Dict[str, str]] = None
                ) -> Tuple[List[Part], Optional[List[int]], Tuple[int, int], Tuple[str, str]]:
    """archive_partitions, also the window in nanoseconds (PCP's time forms read against
    the span of all the archives) and the zone every archive's label shares (UTC's
    when they differ). With `unreadable`, an archive whose label or index cannot be
    read is left out and noted there (archive -> error) instead of raising."""
    if split not in ("archive", "volume"):
        raise ValueError("split must be 'archive' or 'volume'")
    found: List[Tuple[int, int, Part]] = []
    zones = set()
    for name in _names(paths):
        arch = None
        try:
            arch = Archive(name, 0)
            arch.open()                 # label and index: the metadata is not loaded
        except (pmErr, OSError) as e:
            if arch is not None:
                arch.close()
            if unreadable is None:
                if isinstance(e, pmErr):
                    raise pmErr(e.code, [name]) from None    # as pmNewContext's error names it
                raise
            unreadable[name] = _error_text(e)
            continue
        try:
            host = arch.label.hostname.decode("utf-8", "replace")
            zones.add((arch.label.timezone.decode("utf-8", "replace"),
                       arch.label.zoneinfo.decode("utf-8", "replace")))
            first = arch.label.stamp[0] * 1000000000 + arch.label.stamp[1]
            try:
                sec, nsec = arch.end()
                last = sec * 1000000000 + nsec
            except Exception:
                last = NS_MAX
            if split == "archive":
                found.append((first, last, (arch.name, None, host)))
                continue
            vols = []
            for vol in range(arch.minvol, arch.maxvol + 1):
                t = arch.first_record_ns(vol)
                if t is not None:
                    vols.append((t, vol))
            for k, (t, vol) in enumerate(vols):
                stop = vols[k + 1][0] - 1 if k + 1 < len(vols) else last
                found.append((t, stop, (arch.name, vol, host)))
        finally:
            arch.close()
    zone = zones.pop() if len(zones) == 1 else ("UTC", "")
    lo, hi = to_ns(None, NS_MIN), to_ns(None, NS_MAX)
    if found:
        lo, hi = window_ns(start, end, min(f[0] for f in found),
                           max(f[1] for f in found if f[1] != NS_MAX) if any(
                               f[1] != NS_MAX for f in found) else NS_MAX, zone[0])
    spans = [f for f in found if not (f[1] < lo or f[0] > hi)]
    spans.sort(key=lambda s: (s[0], s[2][0], -1 if s[2][1] is None else s[2][1]))
    parts = [s[2] for s in spans]
    divisions: Optional[List[int]] = None
    if spans and all(a[1] < b[0] for a, b in zip(spans, spans[1:])) and \
            spans[-1][1] != NS_MAX:
        divisions = [max(s[0], lo) for s in spans] + [min(spans[-1][1], hi)]
        if any(a >= b for a, b in zip(divisions, divisions[1:])):
            divisions = None
    return parts, divisions, (lo, hi), zone


class _ReadPartition:
    """Reads one partition: (archive, volume, host) -> pandas DataFrame. Dask passes the
    columns the graph needs (column projection): the wide form then reads only their
    metrics."""

    def __init__(self, options: Dict[str, Any], meta: pd.DataFrame,
                 wide_metric: Optional[Dict[str, str]] = None) -> None:
        self.options = options
        self.meta = meta
        self.wide_metric = wide_metric

    def metrics(self, columns: List[str]) -> Any:
        """The metrics the columns need (the selection itself for the long form)."""
        if self.wide_metric is None:
            return self.options["metrics"]
        need = []
        for c in columns:
            m = self.wide_metric.get(c)
            if m is not None and m not in need:
                need.append(m)
        return need

    def __call__(self, part: Part, columns: Optional[List[str]] = None) -> pd.DataFrame:
        name, vol, host = part
        o = self.options
        columns = list(self.meta.columns) if columns is None else list(columns)
        meta = self.meta[columns]
        metrics = self.metrics(columns)
        with warnings.catch_warnings():
            # what each archive lacks was said once, when the graph was made
            warnings.simplefilter("ignore", MissingMetricsWarning)
            if self.wide_metric is not None and not metrics:
                cols = None
            elif o.get("interval") is not None:
                cols = _grid_partition(name, vol, metrics, o)
            else:
                reader = ArchiveReader(name, metrics, o["start"], o["end"], o["rate"],
                                       chunk_bytes=o["chunk_bytes"], progress=False,
                                       volumes=None if vol is None else [vol],
                                       errors=o["errors"], missing="skip")
                cols = reader.read()
        if cols is None or len(cols) == 0 or not cols.metrics:
            return meta.iloc[:0].copy()
        if self.wide_metric is None:
            df = _long_frame(cols)
        else:
            df = cols.to_pandas("wide")
            df = df.reindex(columns=[c for c in columns if c != "host"])
        df["host"] = host
        df = df[columns]
        df.index = df.index.tz_convert(meta.index.tz)     # a fleet's zones differ
        df = df.astype(meta.dtypes.to_dict())
        df.attrs = dict(meta.attrs)         # pandas' concat keeps attrs all parts share
        return df


def _grid_partition(name: str, vol: Optional[int], metrics: Any, o: Dict[str, Any]):
    """A partition of a regular-grid read: the archive's grid (ArchiveReader(...,
    interval=)), whole, or for a volume the grid times from its first record up to the
    next volume's, read from the whole archive with one grid step before them (so that
    counters after a <mark> and rates come out as in a read of the whole grid)."""
    reader = ArchiveReader(name, metrics, o["start"], o["end"], o["rate"],
                           chunk_bytes=o["chunk_bytes"], progress=False,
                           interval=o["interval"], align=o["align"], missing="skip")
    if vol is not None:
        arch = Archive(name, 0)
        try:
            arch.open()
            firsts = {v: arch.first_record_ns(v) for v in range(arch.minvol, arch.maxvol + 1)}
        finally:
            arch.close()
        mine = firsts.get(vol)
        later = sorted(t for v, t in firsts.items() if t is not None and mine is not None
                       and v != vol and t > mine)
        if mine is None:
            return None
        step = reader.interval_ns
        origin = reader.start_ns
        first = origin + max(-(-(mine - origin) // step), 0) * step
        last = reader.end_ns if not later else min(reader.end_ns, later[0] - 1)
        if last < first:
            return None
        lead = 1 if first > origin else 0
        reader.start_ns, reader.end_ns = first - lead * step, last
        reader.grid_lead = lead
    return reader.read()


def _long_frame(cols) -> pd.DataFrame:
    df = cols.to_pandas("long")
    if "text" not in df.columns:
        df["text"] = None
    df["metric"] = df["metric"].astype(object)
    df["instance"] = df["instance"].astype(object).where(df["instance"].notna(), None)
    df = df.sort_values("time", kind="stable").set_index("time")
    return df


def _empty_index(tz: Any) -> pd.DatetimeIndex:
    return _columns_export.zoned_index(pd, np.zeros(0, "datetime64[ns]"), "UTC").tz_convert(tz)


def _long_meta(tz: Any) -> pd.DataFrame:
    data = {"host": pd.Series([], dtype=object), "metric": pd.Series([], dtype=object),
            "instance": pd.Series([], dtype=object), "value": pd.Series([], dtype=np.float64),
            "text": pd.Series([], dtype=object)}
    return pd.DataFrame(data, index=_empty_index(tz))


def _error_text(e: BaseException) -> str:
    return pmErrStr(e.code) if isinstance(e, pmErr) else str(e)


def _survey(parts: List[Part], options: Dict[str, Any], unreadable: Dict[str, str]
            ) -> Tuple[Dict[str, ArchiveReader], Dict[str, List[str]]]:
    """Each archive's metadata against the selection, before the graph: its reader, and
    archive -> the selected names it lacks. An archive whose metadata cannot be read
    raises (errors="raise") or is noted in `unreadable`."""
    readers: Dict[str, ArchiveReader] = {}
    lacking: Dict[str, List[str]] = {}
    for name, _, _ in parts:
        if name in readers or name in unreadable:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MissingMetricsWarning)
                reader = ArchiveReader(name, options["metrics"], options["start"],
                                       options["end"], options["rate"], progress=False,
                                       interval=options.get("interval"),
                                       align=options.get("align"), missing="skip")
        except (pmErr, OSError) as e:
            if options["errors"] == "raise":
                raise
            unreadable[name] = _error_text(e)
            continue
        readers[name] = reader
        if reader.missing:
            lacking[name] = list(reader.missing)
    return readers, lacking


def _wide_meta(readers: Dict[str, ArchiveReader], tz: Any
               ) -> Tuple[pd.DataFrame, Dict[str, str]]:
    """The union of every archive's wide columns (metadata only), and column -> metric."""
    dtypes: Dict[str, Any] = {}
    metric_of: Dict[str, str] = {}
    for reader in readers.values():
        empty = reader._empty()
        frame = empty.to_pandas("wide")
        for mname, m in empty.items():
            for cname in _columns_export.wide_names(m):
                metric_of.setdefault(cname, mname)
        for cname in frame.columns:
            dtypes.setdefault(cname, frame.dtypes[cname])
    data = {"host": pd.Series([], dtype=object)}
    for cname, dtype in dtypes.items():
        data[cname] = pd.Series([], dtype=dtype)
    meta = pd.DataFrame(data, index=_empty_index(tz))
    return meta, metric_of


def _note_left_out(meta: pd.DataFrame, lacking: Dict[str, List[str]],
                   unreadable: Dict[str, str]) -> None:
    """Say what the frame leaves out: a warning, and the attrs every partition carries."""
    if lacking:
        meta.attrs["pcp_missing"] = lacking
    if unreadable:
        meta.attrs["pcp_unreadable"] = unreadable
    said = ["%s lacks %s" % (a, ", ".join(n)) for a, n in lacking.items()]
    said += ["%s cannot be read (%s)" % (a, why) for a, why in unreadable.items()]
    if said:
        warnings.warn(MissingMetricsWarning("left out: " + "; ".join(said)), stacklevel=3)


def read_archives(paths: Union[str, Sequence[str]], metrics: Any = None,
                  start: TimeLike = None, end: TimeLike = None, rate: bool = False,
                  form: str = "long", split: str = "archive",
                  chunk_bytes: int = 32 << 20, interval: Union[None, float, str] = None,
                  align: Union[None, float, str] = None, errors: str = "raise",
                  missing: str = "skip") -> "dd.DataFrame":
    """A Dask DataFrame of archives: `paths` is a list of archive names, a directory, a
    comma-separated list or a glob pattern; metrics, start, end and rate as for
    pcp.bulk.ArchiveReader; form "long" or "wide"; split "archive" (a partition per
    archive) or "volume" (per data volume). Every partition has a "host" column (the
    archive label's host name) and a "time" index, sorted within the partition, in the
    archives' zone (UTC when their labels' zones differ). start / end in PCP's forms
    ("@13:30", "-5min") are read against the span of all the archives. With an
    `interval` (and `align`) each archive is read on its regular grid, as
    ArchiveReader(..., interval=) reads it (from start if given, else from the archive's
    own start); split "volume" then gives each volume's time range of that grid.

    errors: at a damaged record or an archive that cannot be read, "raise", or "skip"
    (read on where libpcp's reader would; an unreadable archive left out) or "stop"
    (end that volume there; an unreadable archive left out). missing: an archive that
    lacks a selected metric (or a derived metric's operands) gives no rows for it
    ("skip") or is an error raised here, before any compute ("raise"). What was left
    out is said in a MissingMetricsWarning and in the attrs of the computed frame (and
    of its meta): "pcp_missing" {archive: names}, "pcp_unreadable" {archive: error}."""
    if form not in ("long", "wide"):
        raise ValueError("form must be 'long' or 'wide'")
    if errors not in ("raise", "skip", "stop"):
        raise ValueError("errors must be 'raise', 'skip' or 'stop'")
    if missing not in ("raise", "skip"):
        raise ValueError("missing must be 'raise' or 'skip'")
    unreadable: Dict[str, str] = {}
    parts, divisions, (lo, hi), zone = _partitions(
        paths, split, start, end, None if errors == "raise" else unreadable)
    if not parts:
        raise ValueError("no archive in %r has data in the window" % (paths,))
    # the window resolved once, against all the archives (PCP's forms are relative)
    options = {"metrics": metrics, "start": None if start is None else np.datetime64(lo, "ns"),
               "end": None if end is None else np.datetime64(hi, "ns"), "rate": rate,
               "chunk_bytes": chunk_bytes, "interval": interval, "align": align,
               "errors": errors}
    tz = _columns_export.pandas_tz(*zone)
    readers: Dict[str, ArchiveReader] = {}
    lacking: Dict[str, List[str]] = {}
    if metrics is not None or form == "wide":
        readers, lacking = _survey(parts, options, unreadable)
        if unreadable:
            parts = [p for p in parts if p[0] not in unreadable]
            divisions = None if divisions is None or len(parts) + 1 != len(divisions) \
                else divisions
        if lacking and missing == "raise":
            raise pmErr(PM_ERR_NAME, "; ".join("%s lacks %s" % (a, ", ".join(n))
                                               for a, n in lacking.items()))
    if not parts:
        raise ValueError("no archive in %r can be read" % (paths,))
    if form == "long":
        meta = _long_meta(tz)
        func = _ReadPartition(options, meta)
    else:
        meta, metric_of = _wide_meta(readers, tz)
        func = _ReadPartition(options, meta, metric_of)
    _note_left_out(meta, lacking, unreadable)
    div = None
    if divisions is not None:
        div = tuple(pd.Timestamp(d, tz="UTC").tz_convert(tz) for d in divisions)
    return dd.from_map(func, parts, meta=meta, divisions=div, label="pcp-archives",
                       enforce_metadata=False)
