"""Derived metrics in a context: a Context (pcp._core.abc) over a host or archive context
that adds the global derived metrics to its PMNS, descriptors, help text and fetches, as
libpcp 6.0.3 does in every context it makes (derive.c's __dm* hooks). It asks nothing of
the context it wraps beyond the Protocol, so both kinds get the same behaviour."""
from __future__ import annotations

import sys
from collections import namedtuple

from pcp._core.constants import (PMNS_LOCAL, PMNS_REMOTE, PM_ERR_BADDERIVE, PM_ERR_NAME,
                                 PM_ERR_PMID, PM_ERR_TEXT, PM_ID_NULL, PM_TEXT_DIRECT,
                                 PM_TEXT_HELP, PM_TEXT_ONELINE, PM_VAL_DPTR, PM_VAL_SPTR)
from pcp._core.errors import pmErr
from pcp._core.level import API_LEVEL
from pcp._core.wire import FEATURE_DESCS
from pcp._decode.result import FlatResult
from pcp._libpcp import anon as _anon
from pcp._libpcp.anon import is_derived, stitch_children
from pcp._libpcp.derived.nodes import N, Node
from pcp._libpcp.derived.registry import REGISTRY, Metric
# The machinery of binding and evaluating (bind, kernels, evaluate, program: 2 ms of
# imports) comes with the first derived metric a context binds or fetches.

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

    from pcp._libpcp.derived.program import Program


class _Entry:
    """One global derived metric as this context sees it: bound on first use."""

    __slots__ = ("metric", "bound", "tree", "operands", "numeric", "program")

    def __init__(self, metric: Metric) -> None:
        self.metric = metric
        self.bound = False
        self.tree: Optional[Node] = None
        self.operands: List[int] = []      # the pmids a fetch of it needs
        self.numeric = False                # every node numeric: evaluated in C
        self.program: Optional[Program] = None


def _operand_pmids(np: Optional[Node], out: List[int]) -> None:
    if np is None:
        return
    _operand_pmids(np.left, out)
    _operand_pmids(np.right, out)
    if np.type == N.NAME and np.pmid != PM_ID_NULL:
        out.append(np.pmid)


class DerivedContext:
    """A context with libpcp's global derived metrics added; every other operation is the
    wrapped context's own."""

    # set by pcp.pmapi when the context is destroyed: pmContext objects that share it
    # (unpickled copies) then answer PM_ERR_NOCONTEXT
    destroyed = False

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self._lock = inner._lock
        REGISTRY.init()
        self._open()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _open(self) -> None:
        """__dmopencontext: this context's copy of the registry, nothing bound yet."""
        self.entries: List[_Entry] = []
        self.by_name: Dict[bytes, _Entry] = {}
        self.by_pmid: Dict[int, _Entry] = {}
        self.limit = REGISTRY.limit     # 7.2's context_limit (control.py), kept only
        self._plans: Dict[Tuple[int, ...], Any] = {}
        # the last request and its plan: a fetch loop asks with the same tuple again,
        # found without hashing its hundreds of pmids (forgotten with the plans)
        self._last_plan: Tuple[Any, Any] = (None, None)
        # _derived_children's answers by name, until an entry is added or bound
        self._children_memo: Dict[bytes, Optional[List[Tuple[bytes, int]]]] = {}
        # libpcp copies the registry into every context it opens; here the copy of the
        # metrics registered by now is made when first needed (most contexts of a
        # process never ask for a derived metric): opened() or _refresh()
        self._opened_with = len(REGISTRY.metrics)

    def opened(self) -> List[_Entry]:
        """This context's entries: at least those of the metrics registered when it was
        opened (a pmFetch takes in no later ones, as libpcp's __dmprefetch)."""
        if len(self.entries) < self._opened_with:
            self._take_in(self._opened_with)
        return self.entries

    def _refresh(self) -> None:
        """Take in global metrics registered since (libpcp's refresh())."""
        count = len(REGISTRY.metrics)
        if len(self.entries) != count:
            self._take_in(count)

    def _take_in(self, count: int) -> None:
        """Entries for the global metrics from the last one taken in up to `count`."""
        self._plans.clear()             # a pmid asked for may be a new derived metric
        self._last_plan = (None, None)
        self._children_memo.clear()
        for metric in REGISTRY.snapshot()[len(self.entries):count]:
            entry = _Entry(metric)
            self.entries.append(entry)
            if metric.anon:
                continue            # the wrapped context answers event.flags/missed
            self.by_name[metric.name] = entry
            self.by_pmid[metric.pmid] = entry

    def _names(self) -> Any:
        """What answers the PMNS part of a name operation: the PMNS loaded with
        pmLoadNameSpace when there is one (libpcp's PMNS_LOCAL, for every context), else
        the wrapped context. The derived metrics are added to either, as libpcp's
        pmns.c adds them whatever the PMNS location."""
        # pcp._libpcp.pmns is imported by pmLoadNameSpace: not there, nothing was loaded
        pmns = sys.modules.get("pcp._libpcp.pmns")
        if pmns is not None and pmns.ATTEMPTED:
            return pmns.LocalNames(pmns.LOADED)
        return self.inner

    # ---- binding
    def _bind(self, entry: _Entry) -> Optional[Node]:
        if entry.bound:
            return entry.tree
        entry.bound = True          # set first: a definition that names itself fails
        try:
            return self._bind_tree(entry)
        finally:
            self._children_memo.clear()     # a metric that binds to nothing is no child

    def _bind_tree(self, entry: _Entry) -> Optional[Node]:
        # pylint: disable-next=import-outside-toplevel
        from pcp._libpcp.derived import bind as _bind, kernels as _kernels
        from pcp._libpcp.derived.program import Program  # pylint: disable=import-outside-toplevel

        metric = entry.metric
        try:
            _, ids = self._names().lookup_names([metric.name])
            if ids and ids[0] != PM_ID_NULL and not is_derived(ids[0]):
                return None         # a real metric of that name wins
        except pmErr:
            pass
        entry.tree = _bind.bind(metric.name, metric.pmid, metric.tree, self._lookup_one,
                                self.desc)
        _operand_pmids(entry.tree, entry.operands)
        entry.numeric = entry.tree is not None and _kernels.all_numeric(entry.tree)
        if entry.numeric:
            entry.program = Program(entry.tree)
        return entry.tree

    def _lookup_one(self, name: bytes) -> int:
        _, ids = self.lookup_names([name])
        if not ids or ids[0] == PM_ID_NULL:
            raise pmErr(PM_ERR_NAME)
        return ids[0]

    def _entry(self, pmid: int) -> Optional[_Entry]:
        if not is_derived(pmid):
            return None
        self._refresh()
        return self.by_pmid.get(pmid)

    # ---- lifetime
    def reconnect(self) -> int:
        sts = self.inner.reconnect()
        with self._lock:
            self._open()
        return sts

    def duplicate(self, handle: int) -> "DerivedContext":
        return DerivedContext(self.inner.duplicate(handle))

    def close(self) -> None:
        self.inner.close()

    # ---- names
    def lookup_names(self, names: Sequence[bytes]) -> Tuple[int, List[int]]:
        with self._lock:
            try:
                resolved, pmids = self._names().lookup_names(names)
            except pmErr as e:
                return self.complete_names(names, 0, (), e)
            if PM_ID_NULL not in pmids:
                return resolved, list(pmids)
            return self.complete_names(names, resolved, pmids, None)

    def complete_names(self, names: Sequence[bytes], resolved: int, pmids: Sequence[int],
                       failure: Optional[pmErr]) -> Tuple[int, List[int]]:
        """lookup_names after the PMNS's answer (`resolved` of `pmids`, or its `failure`):
        the derived metrics' pmIDs where it found none. pcp.pmapi calls it itself after
        asking the wrapped context, when that answer is not complete."""
        with self._lock:
            if failure is not None:
                e = failure
                filled = e.args[1] if len(e.args) > 1 and isinstance(e.args[1], list) else None
                if filled is None or len(filled) != len(names):
                    filled = [PM_ID_NULL] * len(names)
                pmids, resolved = list(filled), 0
            else:
                pmids = list(pmids)
            if PM_ID_NULL not in pmids:
                return resolved, pmids
            self._refresh()
            for i, name in enumerate(names):
                if pmids[i] == PM_ID_NULL:
                    entry = self.by_name.get(name)
                    if entry is not None:
                        pmids[i] = entry.metric.pmid
            unresolved = pmids.count(PM_ID_NULL)
            if failure is not None:
                if unresolved:
                    raise pmErr(failure.code, pmids)
                return len(pmids), pmids
            return len(pmids) - unresolved, pmids

    def name_all(self, pmid: int) -> List[bytes]:
        with self._lock:
            entry = self._entry(pmid)
            if entry is not None:
                return [entry.metric.name]
            return self._names().name_all(pmid)

    def children(self, name: bytes, with_status: bool) -> Tuple[List[bytes], Optional[List[int]]]:
        with self._lock:
            failure: Optional[pmErr] = None
            try:
                names, status = self._names().children(name, with_status)
            except pmErr as e:
                if e.code != PM_ERR_NAME:
                    raise
                failure, names, status = e, [], ([] if with_status else None)
            self._refresh()
            extra = self._derived_children(name)
            if extra is None:
                if failure is not None:
                    raise failure
                return names, status
            # copies to stitch into: the source's lists may be its own (a cache)
            return stitch_children(list(names), list(status) if status is not None else None,
                                   extra, with_status)

    def _derived_children(self, name: bytes) -> Optional[List[Tuple[bytes, int]]]:
        """__dmchildren: (child, status) pairs, [] when `name` is a derived leaf, None
        when no derived metric lies below it (the list is shared: not to be changed)."""
        memo = self._children_memo
        if not memo:
            self._walk_derived_children(memo)
        return memo.get(name)

    def _walk_derived_children(self, memo: Dict[bytes, Optional[List[Tuple[bytes, int]]]]) -> None:
        """Fill `memo` in one pass over the registry: for each name with a derived
        metric below it, its children in registry order ([] for a derived leaf); a
        traversal asks for every node, each once."""
        leaves = set()
        found: Dict[bytes, List[Tuple[bytes, int]]] = {}
        seen: Dict[bytes, set] = {}
        for entry in self.entries:
            metric = entry.metric
            full = metric.name
            if metric.anon:
                # counted as libpcp counts them; the wrapped context lists them
                pass
            elif entry.bound and entry.tree is None:
                continue
            elif _BIND_CHILDREN and self._bind(entry) is None:
                continue                # 7.x binds each child first, and leaves out failures
            leaves.add(full)
            parts = full.split(b".")
            for depth in range(len(parts)):
                node = b".".join(parts[:depth])
                head = parts[depth]
                heads = seen.setdefault(node, set())
                if head not in heads:
                    heads.add(head)
                    found.setdefault(node, []).append((head, 1 if depth + 1 < len(parts) else 0))
        memo.update(found)
        for leaf in leaves:
            if leaf:
                memo[leaf] = []
        memo.setdefault(b"", None)      # filled: the empty memo means "not built"

    def traverse(self, name: bytes) -> List[bytes]:
        source = self._names()
        if source is not self.inner or self.inner.pmns_location != PMNS_REMOTE:
            # libpcp walks a local (loaded or archive) PMNS node by node through
            # pmGetChildren, derived children included, unbound ones too
            with self._lock:
                out: List[bytes] = []
                # a LOCAL context's walk ends at the first failure (a dynamic subtree
                # whose PMDA is not there), the names found so far still reported
                strict = source is self.inner and self.inner.pmns_location == PMNS_LOCAL
                try:
                    self._walk(name, out, strict)
                except pmErr as e:
                    raise pmErr(e.code, out) from None
                return out
        with self._lock:
            failure: Optional[pmErr] = None
            try:
                names = list(source.traverse(name))
            except pmErr as e:
                if e.code != PM_ERR_NAME:
                    raise
                failure, names = e, []
            self._refresh()
            for entry in self.entries:
                metric = entry.metric
                if metric.anon:
                    continue
                full = metric.name
                if name and not (full == name or full.startswith(name + b".")):
                    continue
                if self._bind(entry) is None:
                    continue
                names.append(full)
            if not names:
                raise failure or pmErr(PM_ERR_NAME)
            return names

    def _walk(self, name: bytes, out: List[bytes], strict: bool = False) -> None:
        children, _ = self.children(name, False)
        if not children:
            out.append(name)
            return
        for child in children:
            try:
                self._walk(name + b"." + child if name else child, out, strict)
            except pmErr:
                if strict:
                    raise
                return

    # ---- descriptors, text
    def desc(self, pmid: int) -> Tuple[int, int, int, int, int]:
        with self._lock:
            entry = self._entry(pmid)
            if entry is None:
                return self.inner.desc(pmid)
            tree = self._bind(entry)
            if tree is None:
                raise pmErr(PM_ERR_BADDERIVE)
            return tree.desc

    def descs(self, pmids: Sequence[int]) -> List[Tuple[int, int, int, int, int]]:
        """pmLookupDescs: the context's answers, with the derived metrics' own. libpcp
        does not ask pmcd when every pmid is derived: failures are then left zeroed."""
        with self._lock:
            entries = [self._entry(p) for p in pmids]
            if all(e is None for e in entries):
                return self.inner.descs(pmids)
            if all(is_derived(p) for p in pmids) and self.inner.features & FEATURE_DESCS:
                base = []
                for pmid, entry in zip(pmids, entries):
                    try:
                        base.append((0, 0, 0, 0, 0) if entry is not None else self.inner.desc(pmid))
                    except pmErr:
                        base.append((0, 0, 0, 0, 0))
            else:
                base = list(self.inner.descs(pmids))
            for i, entry in enumerate(entries):
                if entry is None:
                    continue
                tree = self._bind(entry)
                if tree is not None:
                    base[i] = tree.desc
                elif len(pmids) == 1:
                    raise pmErr(PM_ERR_BADDERIVE)
            return base

    def text(self, ident: int, level: int, indom: bool) -> bytes:
        if indom or not is_derived(ident):
            return self.inner.text(ident, level, indom)
        metric = REGISTRY.by_pmid.get(ident)
        if metric is None:
            raise pmErr(PM_ERR_PMID)
        text: Optional[bytes] = b""
        if level & PM_TEXT_ONELINE:
            text = metric.oneline
        elif level & PM_TEXT_HELP:
            text = metric.helptext
            if text is None and not level & PM_TEXT_DIRECT:
                text = metric.oneline
        if text is None:
            raise pmErr(PM_ERR_TEXT)
        return text

    # ---- values
    def fetch(self, pmids: Sequence[int], highres: bool) -> Tuple[Any, int]:
        key = pmids if type(pmids) is tuple else tuple(pmids)
        with self._lock:
            # no refresh here: libpcp's __dmprefetch sees the global metrics registered
            # since this context last took them in (a name operation does) as unknown
            last = self._last_plan
            if last[0] is key:
                plan, anon_at = last[1]
            else:
                planned = self._plans.get(key)
                if planned is None:
                    planned = self._plan(key)
                self._last_plan = (key, planned)
                plan, anon_at = planned
            if plan is _NO_DERIVED:
                return self.inner.fetch(pmids, highres)
            if plan is _ANON_ONLY:
                flat, changes = self.inner.fetch(pmids, highres)
                flat.copied_blocks()
            else:
                flat, changes = self.inner.fetch(plan.request, highres)
                if type(plan) is not _PythonPlan:
                    flat = plan.result(flat, self)
                else:
                    flat = self._rewrite_python(flat, key, plan)
            if anon_at:
                # event.flags / event.missed evaluate to no values in libpcp's rewrite,
                # whatever the source said of them (an archive's INTERP: not logged)
                flat.no_values(anon_at)
            return flat, changes

    def _plan(self, pmids: Tuple[int, ...]) -> Tuple[Any, Tuple[int, ...]]:
        """How a request is fetched (made on its first fetch, kept until the registry or
        the connection changes): (_NO_DERIVED, _ANON_ONLY, a Plan (numeric derived
        metrics, in C) or a _PythonPlan; the positions of event.flags / event.missed)."""
        self.opened()
        if len(self._plans) >= _MAX_PLANS:
            self._plans.clear()
            self._last_plan = (None, None)
        anon_at = tuple(i for i, p in enumerate(pmids) if p in _anon.BY_PMID)
        wanted = [self.by_pmid.get(p) if is_derived(p) else None for p in pmids]
        trees = [self._bind(entry) if entry is not None else None for entry in wanted]
        if all(tree is None for tree in trees):
            # __dmprefetch's fetch_has_dm: no derived metric asked for binds here, so
            # libpcp fetches the request as it is and returns that result unrewritten
            # (the derived pmids get what the server or the archive gives them), unless
            # it names event.flags / event.missed, anonymous derived metrics that always
            # bind: then the rewrite copies every block
            planned: Tuple[Any, Tuple[int, ...]] = (_ANON_ONLY if anon_at else _NO_DERIVED,
                                                    anon_at)
            self._plans[pmids] = planned
            return planned
        listed = set(pmids)
        request = list(pmids)
        for entry, tree in zip(wanted, trees):
            if tree is None:
                continue
            for pmid in entry.operands:
                if pmid not in listed:
                    listed.add(pmid)
                    request.append(pmid)
        derived = [p for p, e in zip(pmids, wanted) if e is not None]
        if (all(e is None or e.tree is None or e.numeric for e in wanted)
                and len(set(derived)) == len(derived)):
            from pcp._libpcp.derived.program import Plan  # pylint: disable=import-outside-toplevel

            plan: Any = Plan(pmids, request,
                             [e.program if e is not None and e.tree is not None else None
                              for e in wanted],
                             [e is not None and e.tree is None for e in wanted],
                             [t.desc[1] if t is not None else 0 for t in trees])
        else:
            plan = _PythonPlan(tuple(request), wanted, trees)
        self._plans[pmids] = planned = (plan, anon_at)
        return planned

    def derived_instance_name(self, indom: int, inst: int,
                              stamp: Tuple[int, int]) -> Optional[bytes]:
        """The name of an instance at the time of a fetch (matchinst())."""
        inner = self.inner
        saved = getattr(inner, "origin", None)
        if saved is not None:
            inner.origin = stamp          # an archive names instances at the result's time
        try:
            _, names = inner.instances(indom, inst)
            return names[0] if names else None
        except pmErr:
            return None
        finally:
            if saved is not None:
                inner.origin = saved

    def derived_instance_id(self, indom: int, name: bytes) -> Optional[int]:
        """The one instance of that name (metric[name])."""
        try:
            insts, _ = self.inner.instances(indom, -1, name)
        except pmErr:
            return None
        return insts[0] if len(insts) == 1 else None

    def _profiled_instances(self, indom: int):
        """pmGetInDom's instances within the instance profile, or its error code."""
        try:
            insts, _ = self.inner.instances(indom)
        except pmErr as e:
            return e.code
        profile = self.inner.profile
        return [inst for inst in insts if profile.includes(indom, inst)]

    def _rewrite_python(self, flat: FlatResult, pmids: Sequence[int],
                        plan: "_PythonPlan") -> FlatResult:
        """__dmpostfetch assembled value by value (a derived string or aggregate is asked
        for, or a derived metric twice: each is evaluated where it is asked for)."""
        # pylint: disable-next=import-outside-toplevel
        from pcp._libpcp.derived.evaluate import Operands, encode, evaluate

        stamp = (flat.sec, flat.nsec)
        ops = Operands(flat, lambda indom, inst: self.derived_instance_name(indom, inst, stamp),
                       self.derived_instance_id, self._profiled_instances)
        sets: List[Tuple[int, int, int]] = []
        values: List[tuple] = []
        for j, pmid in enumerate(pmids):
            entry, tree = plan.wanted[j], plan.trees[j]
            if entry is not None:
                if tree is None:
                    sets.append((pmid, PM_ERR_PMID, 0))
                    continue
                if entry.numeric:
                    numval, insts, vals = entry.program.evaluate(flat, self)
                else:
                    numval = evaluate(tree, ops)
                    insts, vals = (tree.state.insts[:numval], tree.state.vals[:numval]) \
                        if numval > 0 else ([], [])
                if numval > 0:
                    valfmt, encoded = encode(tree.desc[1], insts, vals)
                    values.extend(encoded)
                    sets.append((pmid, len(encoded), valfmt))
                else:
                    sets.append((pmid, numval, 0))
                continue
            numval = flat.numval[j]
            # libpcp copies each block, so a PM_VAL_SPTR set comes back PM_VAL_DPTR
            valfmt = flat.valfmt[j]
            sets.append((pmid, numval, PM_VAL_DPTR if valfmt == PM_VAL_SPTR else valfmt))
            if numval > 0:
                first = flat.first[j]
                for k in range(first, first + numval):
                    values.append((flat.inst[k], flat.vtype[k], flat.ival[k], flat.dval[k],
                                   flat.payload(k)))
        return FlatResult.assemble((flat.sec, flat.nsec), sets, values)


class _PythonPlan(namedtuple("_PythonPlan", ("request", "wanted", "trees"))):
    """A request fetched through _rewrite_python: what is sent (a tuple of pmids), and
    per pmid asked for its derived metric (None for the others) and bound tree."""

    __slots__ = ()


_BIND_CHILDREN = API_LEVEL >= (7, 2)   # __dmchildren binds before it lists (7.x)


def fetches_plain(pmids: Sequence[int]) -> bool:
    """Whether DerivedContext.fetch passes this request to the wrapped context as it is,
    whatever the registry holds: it names no derived metric (one that does not bind is
    planned as _NO_DERIVED too, but binding depends on the registry) and neither of the
    anonymous event.flags / event.missed. pcp.pmapi then skips the layer."""
    by_pmid = _anon.BY_PMID
    for pmid in pmids:
        if is_derived(pmid) or pmid in by_pmid:
            return False
    return True


_NO_DERIVED = object()          # a request without derived metrics: the context's own
_ANON_ONLY = object()           # only event.flags/missed: the context's own, blocks copied
_MAX_PLANS = 256                # requests remembered per context (a tool asks a few)
