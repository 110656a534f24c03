"""Derived metrics compiled for pmFetch (csrc/derived_program.c): a bound numeric
expression becomes, once, a flat array of C nodes in post-order that keeps its values
between fetches (csrc/derived_node.h; the bulk readers' chunks, pcp._libpcp.derived.chunks,
run the same programs over rows), and a request's derived metrics are evaluated by one C
call per fetch over the fetched result (a Plan, made once per request), so a fetch costs
no Python per node or per value. Python answers only what C cannot know: the instance
of metric[name] and the names of instances matchinst() has not seen (the evaluation
stops at that node and resumes there once answered)."""
from __future__ import annotations

from pcp._core.constants import PM_ERR_PMID, PM_INDOM_NULL
from pcp._core.errors import pmErr
from pcp._core.native import ffi, lib
from pcp._core.units import unit_fields
from pcp._decode.result import FlatResult
from pcp._libpcp.derived.bind import PROMOTE
from pcp._libpcp.derived.evaluate import _constant, _time_scale
from pcp._libpcp.derived.kernels import _MEMBER
from pcp._libpcp.derived.nodes import BOOLEAN, RELATIONAL, N, Node
from pcp._libpcp.derived.regex import matches
from pcp._libpcp.values import scale_factors

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, List, Optional, Protocol, Sequence, Tuple
else:
    Protocol = object   # the classes below are interfaces for type checkers only


class Instances(Protocol):
    """What the evaluation asks of the context (pcp._libpcp.derived.context)."""

    def derived_instance_name(self, indom: int, inst: int,
                              stamp: Tuple[int, int]) -> Optional[bytes]:
        """The name of instance `inst` of `indom` at time `stamp` (None: unknown)."""

    def derived_instance_id(self, indom: int, name: bytes) -> Optional[int]:
        """The instance of `indom` named `name` (None: none, or several)."""


def _post_order(np: Node, out: List[Node]) -> None:
    if np.left is not None:
        _post_order(np.left, out)
    if np.right is not None:
        _post_order(np.right, out)
    out.append(np)


class Program:
    """One bound numeric expression as C nodes (pcp_dprogram), with its evaluation
    state; `nodes[i]` is the tree node C node i (c_nodes[i]) was made from."""

    __slots__ = ("c", "nodes", "c_nodes", "_one")

    def __init__(self, tree: Node) -> None:
        nodes: List[Node] = []
        _post_order(tree, nodes)
        self.nodes = nodes
        where = {id(np): i for i, np in enumerate(nodes)}
        c_nodes = ffi.new("pcp_dnode[]", len(nodes))
        for i, np in enumerate(nodes):
            self._define(c_nodes[i], np, where)
            for child in (np.left, np.right):
                if child is not None:
                    c_nodes[where[id(child)]].parent = i
        c_nodes[len(nodes) - 1].parent = -1
        prog = ffi.new("pcp_dprogram *")
        prog.nnodes = len(nodes)
        prog.nodes = c_nodes
        sts = lib.pcp_derived_program_check(prog)
        if sts < 0:
            raise pmErr(sts)            # not a tree this compiler makes
        # the buffers C allocated go with the program (c_nodes kept alive until then)
        self.c = ffi.gc(prog, lambda p, keep=c_nodes: lib.pcp_derived_program_free(p))
        self.c_nodes = c_nodes
        self._one: Any = None

    @staticmethod
    def _define(d: Any, np: Node, where: dict) -> None:
        t = np.type
        d.op = t
        d.type = np.desc[1]
        d.left = where[id(np.left)] if np.left is not None else -1
        d.right = where[id(np.right)] if np.right is not None else -1
        d.parent = -1
        d.indom_null = int(np.desc[2] == PM_INDOM_NULL)
        d.mul, d.div = np.mul, np.div
        d.time_scale = 1.0
        if t == N.NAME:
            d.pmid = np.pmid & 0xFFFFFFFF
            d.save_last = int(np.save_last)
        elif t in (N.INTEGER, N.DOUBLE):
            setattr(d.constant, _MEMBER[np.desc[1]], _constant(np))
        elif t == N.DEFINED:
            d.constant.ul = np.defined
        elif t == N.RATE:
            fields = unit_fields(np.left.desc[4])
            if fields[1] == 1:
                d.time_scale = _time_scale(fields[4])
        elif t == N.RESCALE:
            try:
                d.scale_mult, d.scale_div = scale_factors(np.left.desc[4], np.right.desc[4])
            except pmErr as e:
                d.error = e.code
        elif t == N.FILTERINST:
            d.filter = lib.PCP_DFILTER_REGEX if np.left.regex else lib.PCP_DFILTER_EXACT
        elif t in RELATIONAL or t in BOOLEAN:
            d.otype = PROMOTE[np.left.desc[1]][np.right.desc[1]]
            d.relational = 1
        else:
            d.otype = np.desc[1]

    def answer(self, k: int, instances: Instances, flat: FlatResult) -> None:
        """What node `k` stopped for in the fetch of `flat`: the instance of
        metric[name], the names of the instances matchinst() has not seen, or the error
        of a rescale()."""
        d = self.c_nodes[k]
        np = self.nodes[k]
        if d.need == lib.PCP_DNODE_RAISE:
            raise pmErr(d.error)
        indom = np.right.desc[2]
        pattern = np.left
        if d.need == lib.PCP_DNODE_NEED_INSTANCE:
            found = instances.derived_instance_id(indom, pattern.value)
            if found is None:
                d.exact_state = lib.PCP_DEXACT_MISSING
            else:
                d.exact_inst = found
                d.exact_state = lib.PCP_DEXACT_KNOWN
            return
        stamp = (flat.sec, flat.nsec)
        for inst in ffi.unpack(d.unknown, d.nunknown):
            name = instances.derived_instance_name(indom, inst, stamp)
            match = False
            if name is not None and pattern.compiled is not None:
                match = matches(pattern.compiled, name.split(b" ", 1)[0])
                match = (not match) if pattern.invert else match
            sts = lib.pcp_derived_table_add(self.c_nodes + k, inst, int(match))
            if sts < 0:
                raise pmErr(sts)

    def evaluate(self, flat: FlatResult,
                 instances: Instances) -> Tuple[int, List[int], List[Any]]:
        """This program alone over one fetch: (numval, instances, values)."""
        if self._one is None:
            self._one = _Arrays(1)
            self._one.progs[0] = self.c
        one = self._one
        at = one.at
        at[0] = at[1] = 0
        while True:
            sts = lib.pcp_derived_plan_eval(flat.c, 1, one.progs, one.numvals, one.vecs, at)
            if sts == 0:
                break
            if sts < 0:
                raise pmErr(sts)
            self.answer(at[1], instances, flat)
        numval = one.numvals[0]
        if numval <= 0:
            return numval, [], []
        vec = one.vecs[0]
        member = _MEMBER[self.nodes[-1].desc[1]]
        return numval, list(ffi.unpack(vec.inst, numval)), \
            [getattr(vec.val[i], member) for i in range(numval)]


class _Arrays:
    """The C arrays of one evaluation call (pcp_derived_plan_eval) over `n` sets."""

    __slots__ = ("n", "progs", "numvals", "vecs", "at")

    def __init__(self, n: int) -> None:
        self.n = n
        self.progs = ffi.new("pcp_dprogram *[]", max(n, 1))
        self.numvals = ffi.new("int32_t[]", max(n, 1))
        self.vecs = ffi.new("pcp_dvec *[]", max(n, 1))
        self.at = ffi.new("int32_t[2]")


# Result columns are written in full by the assembly before anything reads them.
_raw_alloc = ffi.new_allocator(should_clear_after_alloc=False)


class Plan:
    """A pmFetch request whose derived metrics are all numeric, each asked for once:
    the request sent to the context (the pmids, then the operands not among them) and
    the C plan (pcp_dplan) that evaluates the derived metrics and assembles the result
    in two C calls per fetch."""

    __slots__ = ("request", "programs", "c", "_keep", "buf", "buflen")

    def __init__(self, pmids: Sequence[int], request: Sequence[int],
                 programs: Sequence[Optional[Program]], unbound: Sequence[bool],
                 types: Sequence[int]) -> None:
        n = len(pmids)
        self.request = tuple(request)
        self.programs = list(programs)
        arrays = _Arrays(n)
        c_pmids = ffi.new("uint32_t[]", [p & 0xFFFFFFFF for p in pmids] or [0])
        c_src = ffi.new("int32_t[]", max(n, 1))
        c_types = ffi.new("int32_t[]", list(types) or [0])
        for j, prog in enumerate(programs):
            c_src[j] = -1 if prog is not None or unbound[j] else j
            if prog is not None:
                arrays.progs[j] = prog.c
            elif unbound[j]:
                arrays.numvals[j] = PM_ERR_PMID
        plan = ffi.new("pcp_dplan *")
        plan.nsets = n
        plan.pmids = c_pmids
        plan.src_set = c_src
        plan.types = c_types
        plan.progs = arrays.progs
        plan.numvals = arrays.numvals
        plan.vecs = arrays.vecs
        self.c = plan
        self._keep = (arrays, c_pmids, c_src, c_types)
        self.buflen = 256                 # the payloads of a fetch, copied out each time
        self.buf = ffi.new("uint8_t[]", self.buflen)

    def result(self, flat: FlatResult, instances: Instances) -> FlatResult:
        """The result for the pmids asked for, from the result of the request."""
        plan = self.c
        data = flat.pdu
        sts = lib.pcp_derived_plan_start(plan, flat.c, data, len(data), 0)
        while sts == 1:
            self.programs[plan.at[0]].answer(plan.at[1], instances, flat)
            sts = lib.pcp_derived_plan_start(plan, flat.c, data, len(data), 1)
        if sts < 0:
            raise pmErr(sts)
        nbytes = plan.nbytes
        if nbytes > self.buflen:
            self.buflen = 2 * nbytes
            self.buf = ffi.new("uint8_t[]", self.buflen)
        mem = _raw_alloc("int64_t[]", (plan.memsize + 7) // 8)
        c = ffi.new("pcp_result *")
        sts = lib.pcp_derived_plan_fill(plan, flat.c, data, len(data), c, mem, self.buf)
        if sts < 0:
            raise pmErr(sts)
        return FlatResult.wrap(c, mem, ffi.buffer(self.buf, nbytes)[:])
