"""What a table read from an archive carries of it, so that pcp.pmi.write_frame can give
the archive back: each metric's descriptor (pmID, type, semantics, units, instance
domain) and instance identity (ids beside the names), the label a reader sees (host,
zone, zoneinfo, format version, start), the instance domains' history (every record of
them in the window: instances that come and go) and where the <mark>s were.

It travels as one JSON text under the key "pcp": in a pandas frame's ``attrs["pcp"]``
(a text, not a dict: pandas copies attrs deeply at every operation), in an Arrow
schema's metadata (b"pcp"; Parquet keeps it, and b"PANDAS_ATTRS" beside it gives
``pandas.read_parquet`` the same attrs). Wide Arrow columns also carry their own
metric's facts as readable field metadata (pcp.pmid "60.1.1", pcp.units "Kbyte", ...),
for readers; write_frame reads the JSON.

A metric converted to rates, or a derived metric, carries nothing: its values are no
longer the archive's, and write_frame writes it as any user-built column. A frame
without the key (user-built) is written as it always was."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import numpy as np

from pcp._bulk.selection import decode_name, stamp_ns
from pcp._core.constants import PM_INDOM_NULL
from pcp._core.units import pmUnitsStr
from pcp._libpcp.anon import is_derived
from pcp._libpcp.strings import pmIDStr, pmInDomStr, pmSemStr, pmTypeStr

if TYPE_CHECKING:
    from pcp._bulk.arrays import ArchiveColumns

KEY = "pcp"
FORMAT = 1
PANDAS_ATTRS = b"PANDAS_ATTRS"       # pandas' own key for DataFrame.attrs in Parquet



def source_of(ctx: Any, selected: List[Any], start_ns: int, end_ns: int) -> Dict[str, Any]:
    """The archive-level facts of a reader's selection (its Selected metrics): the
    label, every name of a metric that has several (libpcp's order), and the history of
    their instance domains in [start_ns, end_ns] (the record in force at start, then
    each later one), oldest first, as [stamp ns, [ids], [names]]."""
    label = ctx.archive_label()
    names: Dict[str, List[str]] = {}
    for m in selected:
        if not is_derived(m.pmid):
            all_names = ctx.meta.names_of(m.pmid)
            if len(all_names) > 1:
                names[str(m.pmid)] = [decode_name(n) for n in all_names]
    indoms: Dict[str, List[Any]] = {}
    for indom in (m.indom for m in selected):
        if indom == PM_INDOM_NULL or str(indom) in indoms:
            continue
        kept = []
        for snap in ctx.meta.indom_chain(indom) or ():          # newest first
            t = stamp_ns(snap.stamp)
            if t > end_ns:
                continue
            kept.append([t, list(snap.insts), [decode_name(n) for n in snap.names]])
            if t <= start_ns:
                break
        indoms[str(indom)] = kept[::-1]
    return {"label": {"hostname": ctx.host_name(),
                      "timezone": label.timezone.decode("utf-8", "replace"),
                      "zoneinfo": label.zoneinfo.decode("utf-8", "replace"),
                      "version": int(label.version & 0xFF),
                      "start": stamp_ns(label.stamp)},
            "names": names, "indoms": indoms}


def _carries(m: Any) -> bool:
    return not m.rate and not is_derived(m.pmid)


def describe(source: Optional[Dict[str, Any]], metrics: Any, time: Any = None,
             after_mark: Any = None) -> Optional[Dict[str, Any]]:
    """The JSON-able facts of a read: `source` (a reader's source_of), its metrics
    ((name, MetricArray or reader metric) pairs) and, when the rows are known, their
    times and after-<mark> flags. None when there is no archive behind it."""
    if not source:
        return None
    carried_metrics = {}
    for name, m in metrics:
        if _carries(m):
            carried_metrics[name] = {"pmid": int(m.pmid), "type": int(m.type),
                                     "sem": int(m.sem), "units": int(m.units),
                                     "indom": int(m.indom),
                                     "instances": [int(i) for i in m.instances],
                                     "instance_names": list(m.instance_names),
                                     "names": source["names"].get(str(m.pmid), [name]),
                                     # no value in the rows: no column may hold it
                                     "empty": time is not None and m.count == 0}
    used = {str(d["indom"]) for d in carried_metrics.values()}
    marks: List[int] = []
    if time is not None and len(time) > 1:
        after = np.asarray(after_mark, bool)
        marks = time.view(np.int64)[1:][after[1:]].tolist()
    return {"format": FORMAT, "label": source["label"], "metrics": carried_metrics,
            "indoms": {k: v for k, v in source["indoms"].items() if k in used},
            "marks": marks}


def text(cols: "ArchiveColumns") -> Optional[str]:
    """The facts of a read's rows as the JSON text frames and schemas carry (None:
    nothing to carry)."""
    return dumps(describe(cols.source, cols.items(), cols.time, cols.after_mark))


def dumps(facts: Optional[Dict[str, Any]]) -> Optional[str]:
    return None if facts is None else json.dumps(facts, separators=(",", ":"))


def schema_metadata(facts_text: Optional[str]) -> Dict[bytes, bytes]:
    """The Arrow schema metadata of a table carrying `facts_text`."""
    if facts_text is None:
        return {}
    return {KEY.encode(): facts_text.encode(),
            PANDAS_ATTRS: json.dumps({KEY: facts_text}).encode()}


def field_metadata(m: Any, j: int) -> Optional[Dict[bytes, bytes]]:
    """Readable facts of a wide column (instance column j of metric m), or None."""
    if not _carries(m):
        return None
    meta = {b"pcp.pmid": pmIDStr(m.pmid).encode(), b"pcp.type": pmTypeStr(m.type).encode(),
            b"pcp.semantics": pmSemStr(m.sem).encode(),
            b"pcp.units": pmUnitsStr(m.units).encode()}
    if m.indom != PM_INDOM_NULL:
        meta[b"pcp.indom"] = pmInDomStr(m.indom).encode()
        meta[b"pcp.inst"] = b"%d" % int(m.instances[j])
        meta[b"pcp.instance"] = str(m.instance_names[j]).encode()
    return meta


def of_frame(frame: Any) -> Optional[Dict[str, Any]]:
    """The facts a pandas frame (attrs) or Arrow table (schema metadata) carries, or
    None (none, or not a form this version reads)."""
    raw: Any = None
    attrs = getattr(frame, "attrs", None)
    if isinstance(attrs, dict):
        raw = attrs.get(KEY)
    schema = getattr(frame, "schema", None)
    if raw is None and schema is not None and getattr(schema, "metadata", None):
        raw = schema.metadata.get(KEY.encode())
    if raw is None:
        return None
    try:
        facts = json.loads(raw) if isinstance(raw, (str, bytes)) else raw
    except ValueError:
        return None
    if not isinstance(facts, dict) or facts.get("format") != FORMAT:
        return None
    return _checked(facts)


def _ints(value: Any) -> bool:
    return isinstance(value, list) and all(type(v) is int for v in value)


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _checked(facts: Dict[str, Any]) -> Dict[str, Any]:
    """The facts with whatever is not of its form left out (a frame's attrs can be
    edited: what is left out is written as a user-built frame's)."""
    metrics = {}
    for name, desc in (facts.get("metrics") or {}).items() \
            if isinstance(facts.get("metrics"), dict) else ():
        if isinstance(desc, dict) \
                and all(type(desc.get(k)) is int for k in ("pmid", "type", "sem", "units",
                                                           "indom")) \
                and _ints(desc.get("instances")) and _texts(desc.get("instance_names")) \
                and len(desc["instances"]) == len(desc["instance_names"]) \
                and _texts(desc.get("names", [])):
            metrics[name] = desc
    indoms = {}
    for key, snaps in (facts.get("indoms") or {}).items() \
            if isinstance(facts.get("indoms"), dict) else ():
        if isinstance(key, str) and key.isdigit() and isinstance(snaps, list) and all(
                isinstance(s, list) and len(s) == 3 and type(s[0]) is int and _ints(s[1])
                and _texts(s[2]) and len(s[1]) == len(s[2]) for s in snaps):
            indoms[key] = snaps
    label = facts.get("label") if isinstance(facts.get("label"), dict) else {}
    label = {k: v for k, v in label.items()
             if (k in ("hostname", "timezone", "zoneinfo") and isinstance(v, str))
             or (k in ("version", "start") and type(v) is int)}
    marks = facts.get("marks") if _ints(facts.get("marks")) else []
    return {"format": FORMAT, "label": label, "metrics": metrics, "indoms": indoms,
            "marks": marks}


def instance_ids(desc: Dict[str, Any]) -> Dict[str, int]:
    """A carried metric's instance column names (as to_pandas names them, "name" and,
    for a name that repeats, "name (id)") -> instance id."""
    out: Dict[str, int] = {}
    for inst, name in zip(desc["instances"], desc["instance_names"]):
        out.setdefault(name, inst)
        out["%s (%d)" % (name, inst)] = inst
    return out

