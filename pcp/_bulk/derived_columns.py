"""Derived metrics as columns of the bulk readers.

A derived metric (pmRegisterDerived, pmLoadDerivedConfig, PCP_DERIVED_CONFIG, the
machine's default configuration) is selected like any metric: by its name, or under a
PMNS prefix. It is bound in the archive as a DerivedContext over it binds it (its
descriptor from pcp._libpcp.derived.bind), its operand metrics are scanned as hidden
columns (or the selected ones reused, before any rate conversion), and each chunk's rows
are evaluated in C over the operands' matrices (pcp._libpcp.derived.chunks), each row
as the drop-in pmFetch in PM_MODE_FORW gives the derived metric at that record when the
reader's selection is fetched: rate(), delta() and instant() carry their state from row
to row and chunk to chunk, missing operands and changing instance domains give what
libpcp gives. A reader of some volumes only (volumes=, pcp.dask's partitions) starts
that state afresh, as it starts rates afresh. On a time grid (pcp._bulk.grid) the rows
are the grid's successful PM_MODE_INTERP fetches and the operands their interpolated
values; the same evaluation gives what the drop-in's INTERP pmFetch gives.

Known differences from a fetch: within a row the instances come in column order (the
metadata's instance order, instances met later after them) where a fetch has the
record's order, which only shows where libpcp pairs values by position (?: between
operands whose instances differ) or sums floats; matchinst() names an instance once, at
the first row it has a value, where libpcp may name it again after a hundred fetches.
Derived metrics whose tree holds strings or aggregates (but count() of them) are
evaluated row by row by pcp._libpcp.derived.evaluate instead, the drop-in's own
evaluator: correct, and slow only where such metrics are."""
from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from pcp._bulk.arrays import PAYLOAD_OFF_MASK, MetricArray
from pcp._bulk.rates import RateCarry, counter_rate
from pcp._bulk.selection import Selected, columns_in_window, instance_name, resolve as resolve_archive
from pcp._bulk.typed import BLOBS, CELL_DTYPES, NUMERIC
from pcp._core.constants import (PM_ERR_BADDERIVE, PM_ERR_NAME, PM_ERR_PMID, PM_ID_NULL,
                                 PM_INDOM_NULL, PM_SEM_COUNTER, PM_TYPE_AGGREGATE,
                                 PM_TYPE_STRING)
from pcp._core.errors import pmErr
from pcp._core.wire import PCP_COLS_REF_SHIFT, PM_IN_NULL_INT32
from pcp._libpcp.anon import is_derived
from pcp._libpcp.derived.chunks import ChunkProgram, Job, Operand, evaluable_in_c, evaluate_many
from pcp._libpcp.derived.context import DerivedContext
from pcp._libpcp.derived.evaluate import evaluate
from pcp._libpcp.derived.nodes import N, Node

# (name, pmid, bound tree for a derived metric or None)
Resolved = Tuple[str, int, Optional[Node]]


class DerivedSelected(Selected):
    """A selected derived metric: its descriptor and output columns, its bound tree and
    the pmids of its operands."""

    __slots__ = ("tree", "operands")


def _operand_pmids(np_: Optional[Node], out: List[int]) -> None:
    if np_ is None:
        return
    _operand_pmids(np_.left, out)
    _operand_pmids(np_.right, out)
    if np_.type == N.NAME and np_.pmid != PM_ID_NULL and np_.pmid not in out:
        out.append(np_.pmid)


def _usable(tree: Optional[Node]) -> Optional[str]:
    """Why a bound tree cannot be a column, or None."""
    if tree is None:
        return "cannot be bound in this archive (an operand is missing or a semantic error)"
    pmids: List[int] = []
    _operand_pmids(tree, pmids)
    if any(is_derived(p) for p in pmids):
        return "has derived metrics as operands, which derived columns do not evaluate"
    if any(n.type == N.NAME and n.desc[1] not in CELL_DTYPES for n in _nodes(tree)):
        return "has event records as operands, which are not read into columns"
    return None


def _nodes(np_: Optional[Node]) -> List[Node]:
    return [] if np_ is None else [np_] + _nodes(np_.left) + _nodes(np_.right)


def resolve(ctx: Any, metrics: Any, missing: Optional[List[str]] = None) -> List[Resolved]:
    """The selection's metrics in its order: archive leaves (selection.resolve's rules)
    and derived metrics, a name given or every derived metric under a PMNS prefix that
    can be a column. None selects the archive's metrics only. A name the archives do not
    have (PM_ERR_NAME, or a derived metric whose operands they lack: PM_ERR_BADDERIVE)
    is an error, or with a `missing` list is appended to it and left out."""
    meta = ctx.meta
    if metrics is None:
        return [(n, p, None) for n, p in resolve_archive(meta, None)]
    if isinstance(metrics, (str, bytes)):
        wanted = [metrics.decode() if isinstance(metrics, bytes) else metrics]
    else:
        wanted = [m.decode() if isinstance(m, bytes) else str(m) for m in metrics]
    dctx: Optional[DerivedContext] = None
    out: List[Resolved] = []
    seen_names: set = set()
    seen_pmids: set = set()
    for w in wanted:
        try:
            leaves = resolve_archive(meta, [w])
        except pmErr as e:
            if e.code != PM_ERR_NAME:
                raise
            leaves = None
        explicit = leaves is not None and len(leaves) == 1 and leaves[0][0] == w
        for name, pmid in leaves or ():
            if name in seen_names or (not explicit and pmid in seen_pmids):
                continue
            seen_names.add(name)
            seen_pmids.add(pmid)
            out.append((name, pmid, None))
        if explicit:
            continue
        if dctx is None:
            dctx = DerivedContext(ctx)
        try:
            found = _derived_under(dctx, w)
            if leaves is None and not found:
                raise pmErr(PM_ERR_NAME, w)
        except pmErr as e:
            if missing is None or e.code not in (PM_ERR_NAME, PM_ERR_BADDERIVE):
                raise
            missing.append(w)
            continue
        for name, pmid, tree in found:
            if name not in seen_names:
                seen_names.add(name)
                out.append((name, pmid, tree))
    return out


def _derived_under(dctx: DerivedContext, w: str) -> List[Resolved]:
    """The derived metrics called `w` or under it, bound; one called `w` that cannot be
    a column is an error, those under a prefix that cannot are left out."""
    key = w.encode()
    prefix = key + b"." if key else b""
    found: List[Resolved] = []
    for entry in list(dctx.opened()):
        metric = entry.metric
        if metric.anon:
            continue
        full = metric.name
        if full != key and not full.startswith(prefix):
            continue
        tree = dctx._bind(entry)
        why = _usable(tree)
        if why is not None:
            if full == key:
                if tree is None:
                    raise pmErr(PM_ERR_BADDERIVE)
                raise ValueError("%s %s" % (w, why))
            continue
        found.append((full.decode("utf-8", "replace"), metric.pmid, tree))
    found.sort()
    return found


def selected(name: str, pmid: int, tree: Node, meta: Any, start_ns: int, end_ns: int,
             rate: bool) -> DerivedSelected:
    """The Selected of a derived metric: descriptor from its bound tree, columns from
    the metadata's instances of its domain in the window (more as values come)."""
    m = DerivedSelected(name, (pmid,) + tuple(tree.desc[1:]))   # type: ignore[arg-type]
    m.tree = tree
    m.operands = []
    _operand_pmids(tree, m.operands)
    if m.indom == PM_INDOM_NULL:
        m.insts, m.inames = [PM_IN_NULL_INT32], [""]
    else:
        m.insts, m.inames = columns_in_window(meta, m.indom, start_ns, end_ns)
    m.rate = rate and m.sem == PM_SEM_COUNTER and m.type in NUMERIC
    return m


def _fresh(np_: Optional[Node]) -> Optional[Node]:
    """A copy of a bound tree with no evaluation state (one per scan)."""
    if np_ is None:
        return None
    new = copy.copy(np_)
    new.left, new.right, new.state = _fresh(np_.left), _fresh(np_.right), None
    return new


class _Column:
    """One derived metric in one scan: its program (the state of its fetches: C nodes,
    or a fresh tree for the Python evaluator when it holds strings or aggregates), its
    columns so far and its rate state."""

    def __init__(self, m: DerivedSelected, operand_index: List[int]) -> None:
        self.m = m
        self.static = (m.names[0], m.pmid, m.type, m.sem, m.units, m.indom)
        self.insts = list(m.insts)
        self.inames = list(m.inames)
        self.ids = np.array(self.insts, np.int32)
        self.operand_index = operand_index
        self.in_c = evaluable_in_c(m.tree)
        self.program = ChunkProgram(m.tree, m.operands) if self.in_c else None
        self.tree = None if self.in_c else _fresh(m.tree)
        self.carry = RateCarry(len(self.insts), CELL_DTYPES[m.type]) if m.rate else None


class _RowOperands:
    """One row of the operand matrices, as pcp._libpcp.derived.evaluate asks a fetch
    for its values (the Operands interface): numbers as Python numbers, strings and
    aggregates as their bytes (strings up to their NUL, as the scan keeps them)."""

    def __init__(self, ops: List[Operand], pmids: Sequence[int], types: Sequence[int],
                 staged: Optional[np.ndarray], chunks: "DerivedChunks") -> None:
        self.ops = ops
        self.types = types
        self.index = {p: k for k, p in enumerate(pmids)}
        self.staged = memoryview(staged) if staged is not None else None
        self.row = 0
        self.t_ns = 0
        self.stamp = (0, 0)
        self.chunks = chunks

    def at(self, row: int, t_ns: int) -> None:
        self.row, self.t_ns = row, t_ns
        self.stamp = (t_ns // 1000000000, t_ns % 1000000000)

    def values(self, pmid: int, type_: int) -> Tuple[int, List[int], List[Any]]:
        k = self.index.get(pmid)
        if k is None:
            return PM_ERR_PMID, [], []
        op = self.ops[k]
        cols = np.flatnonzero(op.present[self.row])
        insts = op.instances[cols].tolist()
        cells = op.values[self.row, cols]
        if self.types[k] not in BLOBS:
            return len(insts), insts, cells.tolist()
        staged = self.staged
        blobs = [bytes(staged[r & PAYLOAD_OFF_MASK:(r & PAYLOAD_OFF_MASK)
                              + (r >> PCP_COLS_REF_SHIFT)]) if staged is not None else b""
                 for r in cells.tolist()]
        if self.types[k] == PM_TYPE_STRING:
            return len(insts), insts, blobs
        return len(insts), insts, [(PM_TYPE_AGGREGATE, b) for b in blobs]

    def name_instance(self, indom: int, inst: int) -> Optional[bytes]:
        return self.chunks._name(indom, inst, self.t_ns)

    def lookup_instance(self, indom: int, name: bytes) -> Optional[int]:
        return self.chunks._lookup(indom, name, self.t_ns)


class DerivedChunks:
    """The derived columns of one scan: each chunk's derived matrices from the scan's
    raw operand matrices. What it asks of the scan (pcp._bulk.scan.Scan; a reader of
    another kind of rows, a time grid, provides the same): `metrics` (each with .pmid
    and .columns(), the instance ids of its columns), `drop_unknown`, `meta` (the
    archive metadata, for instance names) and `ctx` (the ArchiveContext, for
    pmLookupInDom's matching of names)."""

    def __init__(self, scan: Any, derived: Sequence[DerivedSelected]) -> None:
        self.scan = scan
        self.names_cache: Dict[int, Dict[int, str]] = {}
        self.snap_cache: Dict[Tuple[int, int, bytes], Optional[int]] = {}
        by_pmid = {m.pmid: i for i, m in enumerate(scan.metrics)}
        self.columns = [_Column(m, [by_pmid[p] for p in m.operands]) for m in derived]
        self.dropped = 0
        # where the fetch's context stands when libpcp evaluates a row, past the row's
        # time: in PM_MODE_INTERP one step on (pmLookupInDom of an instance filter
        # answers for that time); 0 in PM_MODE_FORW (the record's time)
        self.lookup_after_ns = 0

    def row_bytes(self) -> int:
        """About the bytes a row of every derived metric's matrices takes (the chunk's
        budget counts them)."""
        return sum(len(col.insts) * (CELL_DTYPES[col.m.type].itemsize + 1)
                   for col in self.columns)

    def evaluate(self, time_ns: np.ndarray, seg: np.ndarray,
                 raw: List[Tuple[np.ndarray, np.ndarray]],
                 staged: Optional[np.ndarray] = None, rates: bool = True
                 ) -> Dict[int, MetricArray]:
        """The chunk's MetricArray of every derived metric, by id() of the reader's
        DerivedSelected. raw: each scanned metric's (values, present) before rates (the
        references into `staged`, the chunk's string bytes, for strings and
        aggregates). rates=False leaves counters as they are (a grid rates them its own
        way, pcp._bulk.grid)."""
        jobs = []
        for col in self.columns:
            ops = []
            for i in col.operand_index:
                values, present = raw[i]
                ops.append(Operand(values, present, self.scan.metrics[i].columns()[0]))
            jobs.append(Job(col.program, ops, col.m.operands, self._candidates(col, ops)))
        in_c = [job for col, job in zip(self.columns, jobs) if col.in_c]
        results = iter(evaluate_many(time_ns, in_c, self._name, self._lookup))
        out = {}
        for col, job in zip(self.columns, jobs):
            got = next(results) if col.in_c else self._rows(col, job, time_ns, staged)
            out[id(col.m)] = self._one(col, job.out_instances, got, time_ns, seg, rates)
        return out

    def _rows(self, col: _Column, job: Job, time_ns: np.ndarray,
              staged: Optional[np.ndarray]) -> Tuple[np.ndarray, np.ndarray, int]:
        """A derived metric with strings or aggregates in its tree, evaluated row by row
        by pcp._libpcp.derived.evaluate (as the drop-in's fetch evaluates it)."""
        tree = col.tree
        types = [self.scan.metrics[i].type for i in col.operand_index]
        ops = _RowOperands(list(job.operands), col.m.operands, types, staged, self)
        nrows, ncand = len(time_ns), len(job.out_instances)
        where = {int(inst): k for k, inst in enumerate(job.out_instances.tolist())}
        dtype = CELL_DTYPES[col.m.type]
        values = np.full((nrows, ncand), None, object) if dtype == object else \
            np.zeros((nrows, ncand), dtype)
        present = np.zeros((nrows, ncand), bool)
        count = 0
        for r, t in enumerate(time_ns.tolist()):
            ops.at(r, t)
            numval = evaluate(tree, ops)
            if numval <= 0:
                continue
            for inst, v in zip(tree.state.insts[:numval], tree.state.vals[:numval]):
                k = where.get(inst)
                if k is None:
                    continue
                if col.m.type == PM_TYPE_STRING:
                    v = v.split(b"\0", 1)[0].decode("utf-8", "replace")
                elif col.m.type == PM_TYPE_AGGREGATE:
                    v = v[1]
                values[r, k] = v
                present[r, k] = True
                count += 1
        return values, present, count

    def _candidates(self, col: _Column, ops: List[Operand]) -> np.ndarray:
        """The output columns, then every other instance a value may have."""
        have = set(col.insts)
        extra: List[int] = []
        for op in ops:
            for inst in op.instances.tolist():
                if inst not in have:
                    have.add(inst)
                    extra.append(inst)
        if PM_IN_NULL_INT32 not in have:
            extra.append(PM_IN_NULL_INT32)
        return np.array(col.insts + extra, np.int32)

    def _one(self, col: _Column, cand: np.ndarray,
             got: Tuple[np.ndarray, np.ndarray, int], time_ns: np.ndarray,
             seg: np.ndarray, rates: bool) -> MetricArray:
        """The MetricArray of one derived metric from its evaluation over the candidate
        columns: the columns that got values beyond the known ones are added."""
        m = col.m
        values, present, count = got
        ncols = len(col.insts)
        more = np.flatnonzero(present[:, ncols:].any(axis=0)) + ncols if len(cand) > ncols \
            else np.zeros(0, np.int64)
        if len(more) and self.scan.drop_unknown:
            self.dropped += int(np.count_nonzero(present[:, more]))
            count -= int(np.count_nonzero(present[:, more]))
            more = more[:0]
        if len(more):
            new = cand[more].tolist()
            col.insts.extend(new)
            col.inames.extend(instance_name(self.scan.meta, m.indom, inst, self.names_cache)
                              if m.indom != PM_INDOM_NULL else str(inst) for inst in new)
            col.ids = np.array(col.insts, np.int32)
            keep = np.concatenate([np.arange(ncols), more])
            values, present = values[:, keep], present[:, keep]
        else:
            values, present = values[:, :ncols], present[:, :ncols]
        rate = m.rate and rates
        if rate:
            values, present = counter_rate(values, present, time_ns, seg, col.carry)
        name, pmid, type_, sem, units, indom = col.static
        return MetricArray(name, pmid, type_, sem, units, indom, values, present, col.ids,
                           list(col.inames), rate, None, None if rate else count)

    # ---- instance names at a row's time, as the fetch's context has them ----------------

    def _snapshot(self, indom: int, t_ns: int) -> Any:
        return self.scan.meta.indom_at(indom, (t_ns // 1000000000, t_ns % 1000000000))

    def _name(self, indom: int, inst: int, t_ns: int) -> Optional[bytes]:
        snap = self._snapshot(indom, t_ns)
        if snap is None:
            return None
        for i, n in zip(snap.insts, snap.names):
            if i == inst:
                return n or b""
        return None

    def _lookup(self, indom: int, name: bytes, t_ns: int) -> Optional[int]:
        t_ns += self.lookup_after_ns
        snap = self._snapshot(indom, t_ns)
        if snap is None:
            return None
        key = (id(snap), indom, name)      # the answer changes with the snapshot only
        if key not in self.snap_cache:
            self.snap_cache[key] = _instance_named(self.scan.ctx, indom, name, t_ns)
        return self.snap_cache[key]


def _instance_named(ctx: Any, indom: int, name: bytes, t_ns: int) -> Optional[int]:
    """The instance called `name` at t_ns, as the drop-in's fetch asks the archive
    context (pmLookupInDom's matching of names)."""
    saved = ctx.origin
    try:
        ctx.origin = (t_ns // 1000000000, t_ns % 1000000000)
        insts, _ = ctx.instances(indom, -1, name)
        return insts[0] if len(insts) == 1 else None
    except pmErr:
        return None
    finally:
        ctx.origin = saved
