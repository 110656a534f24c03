"""PM_CONTEXT_LOCAL: the PMDAs of the local table (pmcd.conf's DSO lines, pmcd's own left
out, the linux PMDA put in, -K edits applied) answer the context directly, with the
local PMNS for names; no pmcd is involved.

Each PMAPI request goes to the PMDA of its domain as libpcp's LOCAL paths call the DSO:
the same request PDUs a host context sends pmcd (HostContext builds them), sent to the
agent child of that domain instead (pcp._local.agents). A fetch is split by domain and
the agents' value sets are put back in request order under one timestamp
(__pmFetchLocal); names come from the default PMNS, and below the root of a dynamic
subtree from the PMDA that owns it; context labels are made here (pcp._local.labels).
"""
from __future__ import annotations

import socket
import threading
import time

from pcp._core import wire
from pcp._core.abc import locks_itself, serialized
from pcp._core.constants import (PM_ERR_IPC, PM_ERR_MODE, PM_ERR_NAME, PM_ERR_NOAGENT,
                                 PM_ERR_NONLEAF, PM_ERR_NOPMNS, PM_ERR_PMID, PM_ERR_TOOSMALL,
                                 PM_ERR_VALUE,
                                 PM_ID_NULL, PM_LABEL_CONTEXT, PM_LABEL_DOMAIN,
                                 PM_LABEL_INSTANCES, PMNS_LOCAL)
from pcp._core.errors import pmErr
from pcp._core.wire import FEATURE_HIGHRES, FEATURE_LABELS
from pcp._decode import pdu as codec
from pcp._decode.result import FlatResult
from pcp._libpcp import anon as _anon
from pcp._libpcp import pmns as _pmns
from pcp._libpcp.options import local_table
from pcp._libpcp.profile import Profile
from pcp._live.context import HostContext
from pcp._local import agents as _agents
from pcp._pmda.wire import Request

TYPE_CHECKING = False      # typing's, without importing typing (a start's cost)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple


def _domain(ident: int) -> int:
    """The domain of a pmID or a pmInDom (the same 9 bits)."""
    return (ident >> 22) & 0x1FF


# ---- the local table ---------------------------------------------------------------------

_table_lock = threading.Lock()
# (domain, DSO name, init) -> (the DSO's path, the child's command), or None when it
# cannot be served; an entry is looked at once per process, as libpcp attaches each DSO once
_resolved: Dict[Tuple[int, Optional[str], Optional[str]], Optional[Tuple[str, List[str]]]] = {}


def _agents_of_table() -> Dict[int, _agents.Agent]:
    """Domain -> agent for the local table as it is now (the first entry of a domain
    wins, as __pmLookupDSO finds it)."""
    out: Dict[int, _agents.Agent] = {}
    with _table_lock:
        for entry in local_table():
            if entry not in _resolved:
                domain, name, init = entry
                path = _agents.resolve_dso(name)
                argv = None if path is None else _agents.daemon_argv(domain, path, init)
                _resolved[entry] = None if argv is None or path is None else (path, argv)
            found = _resolved[entry]
            if found is not None and entry[0] not in out:
                out[entry[0]] = _agents.agent_for(entry[0], found[0], found[1], entry[1] or "")
    return out


# ---- the local PMNS ------------------------------------------------------------------------

_pmns_lock = threading.Lock()
_default_tree: List[Optional[_pmns.Tree]] = []          # [] until loaded, [None] failed


def _local_tree() -> _pmns.Tree:
    """The default PMNS (PMNS_DEFAULT or $PCP_VAR_DIR/pmns/root, duplicates allowed, no
    pmcpp), loaded once for the process's LOCAL contexts as libpcp's LoadDefault does."""
    with _pmns_lock:
        if not _default_tree:
            try:
                _default_tree.append(_pmns.read_tree(_pmns.default_file(), True))
            except pmErr:
                _default_tree.append(None)
        tree = _default_tree[0]
    if tree is None:
        raise pmErr(PM_ERR_NOPMNS)
    return tree


def _dynamic_root(tree: _pmns.Tree, name: str) -> Optional[int]:
    """The domain owning `name` when a prefix of it is the root of a dynamic subtree."""
    prefix = name
    while "." in prefix:
        prefix = prefix.rsplit(".", 1)[0]
        node = tree.locate(prefix)
        if node is not None and not node.children and _pmns.is_dynamic_root(node.pmid):
            return (node.pmid >> 10) & 0xFFF
    return None


@serialized
class LocalContext(HostContext):
    """A PMAPI local context: the request methods of a host context, answered by the
    agents of the local table instead of pmcd."""

    pmns_location = PMNS_LOCAL

    # pylint: disable-next=super-init-not-called
    def __init__(self, handle: int, ctx_flags: int = 0) -> None:
        # no connection to make: HostContext's __init__ would connect to pmcd
        self._lock = threading.RLock()
        self.handle = handle
        self.spec = None
        self.ctx_flags = ctx_flags
        self.profile = Profile()
        self.conn = None
        self._conn_host = None
        self.agents = _agents_of_table()
        self._profile_pdu: Tuple[Tuple[int, int, int], bytes] = ((-1, -1, -1), b"")
        # request pmids -> [(domain, positions, FETCH PDU)]: a fetch loop asks again
        self._plans: Dict[Tuple[int, ...], list] = {}

    # ---- lifetime ----------------------------------------------------------------------

    @property
    def features(self) -> int:
        return FEATURE_LABELS | FEATURE_HIGHRES

    def close(self) -> None:
        _agents.forget_context(self.handle)

    def reconnect(self) -> int:
        """pmReconnectContext: the table is looked at again; children start on demand."""
        self.agents = _agents_of_table()
        self.profile.sent = False
        return self.handle

    def duplicate(self, handle: int) -> "LocalContext":
        dup = LocalContext(handle, self.ctx_flags)
        dup.profile = self.profile.copy()
        return dup

    def host_name(self) -> str:
        return socket.gethostname()

    def set_mode(self, mode: int, when: Optional[Tuple[int, int]], delta: Tuple[int, int],
                 direction: int) -> None:
        """pmSetMode on a local context: libpcp refuses every mode, PM_MODE_LIVE too."""
        raise pmErr(PM_ERR_MODE)

    # ---- one request to one agent ------------------------------------------------------

    def _agent(self, domain: int) -> _agents.Agent:
        agent = self.agents.get(domain)
        if agent is None:
            raise pmErr(PM_ERR_NOAGENT)
        return agent

    def _profile(self) -> Tuple[Tuple[int, int, int], bytes]:
        key = (self.handle, id(self.profile), self.profile.version)
        if self._profile_pdu[0] != key:
            self._profile_pdu = (key, self.profile.encode(self.handle))
        return self._profile_pdu

    def _ask(self, domain: int, request: bytes, expect: int, with_profile: bool = False) -> bytes:
        ptype, pdu = self._agent(domain).exchange(self.handle, request,
                                                  self._profile() if with_profile else None)
        if ptype == expect:
            return pdu
        if ptype == wire.PDU_ERROR:
            code = codec.decode_error(pdu)
            if code < 0:
                raise pmErr(code)
        raise pmErr(PM_ERR_IPC)

    def _exchange(self, request: bytes, expect: int) -> bytes:
        """HostContext's requests (descriptor, instances, text), to their domain's agent."""
        return self._ask(_domain(Request(request).ident), request, expect)

    def _request(self, request: bytes, expect: int, decode, *extra):
        return decode(self._exchange(request, expect), *extra)

    # ---- names -------------------------------------------------------------------------

    def _pmid_of(self, domain: int, name: bytes) -> Tuple[int, int]:
        """A name below a dynamic root, asked of its PMDA: (status, pmid)."""
        try:
            pdu = self._ask(domain, codec.encode_pmns_names(self.handle, [name]),
                            wire.PDU_PMNS_IDS)
            sts, ids = codec.decode_pmns_ids(pdu)
        except pmErr as e:
            return e.code, PM_ID_NULL
        if sts < 0 or len(ids) != 1 or ids[0] == PM_ID_NULL:
            return (sts if sts < 0 else PM_ERR_NAME), PM_ID_NULL
        return 0, ids[0]

    def lookup_names(self, names: Sequence[bytes]) -> Tuple[int, List[int]]:
        if len(names) < 1:
            raise pmErr(PM_ERR_TOOSMALL)
        tree = _local_tree()
        single = len(names) == 1
        pmids: List[int] = []
        status = 0
        for name in names:
            text = name.decode("utf-8", "surrogateescape")
            node = tree.locate(text) if text else None
            if node is not None:
                if not node.children:
                    pmids.append(node.pmid)
                else:
                    if single:
                        status = PM_ERR_NONLEAF
                    pmids.append(PM_ID_NULL)
                continue
            if name in _anon.ANON:
                pmids.append(_anon.ANON[name][0])
                continue
            domain = _dynamic_root(tree, text)
            pmid = PM_ID_NULL
            if domain is not None:
                if domain not in self.agents:
                    code = PM_ERR_NOAGENT
                else:
                    code, pmid = self._pmid_of(domain, name)
                if code < 0 and single:
                    status = code
            pmids.append(pmid)
        if status < 0:
            raise pmErr(status, pmids)
        return len(pmids) - pmids.count(PM_ID_NULL), pmids

    def name_all(self, pmid: int) -> List[bytes]:
        if pmid in _anon.BY_PMID:
            return [_anon.BY_PMID[pmid]]
        tree = _local_tree()
        if _pmns.is_dynamic_root(pmid):
            raise pmErr(PM_ERR_PMID)
        try:
            return [n.encode("utf-8", "surrogateescape") for n in tree.names_of(pmid)]
        except pmErr:
            pass
        domain = _domain(pmid)
        if domain not in self.agents:
            raise pmErr(PM_ERR_NOAGENT)
        try:
            pdu = self._ask(domain, codec.encode_ids(self.handle, wire.PDU_PMNS_IDS, 0, [pmid]),
                            wire.PDU_PMNS_NAMES)
            names, _ = codec.decode_pmns_names(pdu)
        except pmErr:
            names = []
        rename = self.agents[domain].rename
        if rename is not None:
            old, new = rename
            names = [new + n[len(old):] if n.startswith(old) else n for n in names]
        if not names:
            raise pmErr(PM_ERR_PMID)    # libpcp keeps its own code when the PMDA fails
        return names

    def _children(self, name: str, with_status: bool) -> Tuple[List[bytes], List[int]]:
        """libpcp's getchildren for a LOCAL context: the PMNS, and the PMDA for a dynamic
        subtree (the root itself, or any name below it)."""
        tree = _local_tree()
        node = tree.locate(name)
        domain = None
        if node is None:
            domain = _dynamic_root(tree, name)
            if domain is None:
                raise pmErr(PM_ERR_NAME)
        elif not node.children:
            if not _pmns.is_dynamic_root(node.pmid):
                return [], []
            domain = (node.pmid >> 10) & 0xFFF
        if domain is not None:
            if domain not in self.agents:
                raise pmErr(PM_ERR_NOAGENT)
            request = codec.encode_pmns_node(self.handle, wire.PDU_PMNS_CHILD, 1, name.encode(
                "utf-8", "surrogateescape"))
            names, status = codec.decode_pmns_names(self._ask(domain, request, wire.PDU_PMNS_NAMES))
            return names, list(status) if status is not None else [0] * len(names)
        kids, status = tree.children(name)
        return [k.encode("utf-8", "surrogateescape") for k in kids], status

    def children(self, name: bytes, with_status: bool) -> Tuple[List[bytes], Optional[List[int]]]:
        extra = _anon.children(name)
        try:
            names, status = self._children(name.decode("utf-8", "surrogateescape"), with_status)
        except pmErr as e:
            if e.code != PM_ERR_NAME or not extra:
                raise
            names, status = [], []
        return _anon.stitch_children(names, status if with_status else None, extra, with_status)

    def traverse(self, name: bytes) -> List[bytes]:
        """TraversePMNS_local: children, depth first, down to the leaves (through the
        PMDAs for dynamic subtrees); the first error ends it."""
        out: List[bytes] = []

        def walk(path: str) -> None:
            kids, _ = self._children(path, False)
            if not kids:
                out.append(path.encode("utf-8", "surrogateescape"))
                return
            for kid in kids:
                child = kid.decode("utf-8", "surrogateescape")
                walk(child if not path else path + "." + child)

        extra = _anon.leaves(name)
        try:
            walk(name.decode("utf-8", "surrogateescape"))
        except pmErr as e:
            if e.code != PM_ERR_NAME or not extra:
                raise
        return out + [n for n in extra if n not in out]

    # ---- labels ------------------------------------------------------------------------

    def labels(self, ident: int, type_: int) -> List[codec.LabelSetData]:
        if type_ & PM_LABEL_CONTEXT:
            from pcp._local.labels import context_labels  # pylint: disable=import-outside-toplevel
            found = context_labels()
            return [] if found is None else [found]
        domain = ident if type_ & PM_LABEL_DOMAIN else _domain(ident)
        request = codec.encode_label_req(self.handle, ident, type_)
        pdu = self._ask(domain, request, wire.PDU_LABEL,
                        with_profile=bool(type_ & PM_LABEL_INSTANCES))
        _, _, sets = codec.decode_labels(pdu)
        if not sets and type_ & PM_LABEL_DOMAIN:
            # a PMDA of an interface before labels answers none: libpcp then gives the
            # DSO's own (local_domain_labels), named by the table entry
            from pcp._local.labels import domain_labels  # pylint: disable=import-outside-toplevel
            return [domain_labels(self.agents[domain].table_name)]
        return sets

    # ---- fetch and store ---------------------------------------------------------------

    @locks_itself
    def fetch(self, pmids: Sequence[int], highres: bool) -> Tuple[FlatResult, int]:
        """__pmFetchLocal: each domain's pmids to its agent (after the context's profile,
        when the agent last had another), the value sets back in request order; a domain
        with no agent, or whose agent fails, gives its sets that error as numval. The
        requests go out to every agent before the first reply is read, so the PMDAs
        work at the same time; their locks are taken in domain order."""
        with self._lock:
            if len(pmids) < 1:
                raise pmErr(PM_ERR_TOOSMALL)
            key = tuple(pmids)
            plan = self._plans.get(key)
            if plan is None:
                groups: Dict[int, List[int]] = {}
                for k, pmid in enumerate(pmids):
                    groups.setdefault(_domain(pmid), []).append(k)
                plan = [(domain, where, codec.encode_fetch(self.handle, False, self.handle,
                                                           [pmids[k] for k in where]))
                        for domain, where in sorted(groups.items())]
                if len(self._plans) > 64:
                    self._plans.clear()
                self._plans[key] = plan
            replies = self._fetch_domains(plan)
            now = time.time_ns()
            stamp = (now // 1_000_000_000, now % 1_000_000_000)
            if len(plan) == 1 and replies[0][0] is not None:
                flat = replies[0][0]
                flat.c.sec, flat.c.nsec = stamp
                flat.sec, flat.nsec = stamp
            else:
                parts: List[Tuple[Optional[FlatResult], int, int]] = [(None, 0, 0)] * len(pmids)
                for (_, where, _), (flat, code) in zip(plan, replies):
                    for j, k in enumerate(where):
                        parts[k] = (flat, j, code)
                flat = FlatResult.gather(stamp, pmids, parts)
            _anon.fix_client_side_sets(flat)
            return flat, 0

    def _fetch_domains(self, plan) -> List[Tuple[Optional[FlatResult], int]]:
        """Each domain's RESULT (or None and the error its sets get), in plan order."""
        profile = self._profile()
        agents = [self.agents.get(domain) for domain, _, _ in plan]
        held = [a for a in agents if a is not None]
        for agent in held:
            agent.lock.acquire()
        try:
            for agent in held:
                agent.prestart()
            sent: List[int] = []
            for agent, (_, _, request) in zip(agents, plan):
                if agent is None:
                    sent.append(PM_ERR_NOAGENT)
                    continue
                try:
                    agent.send(self.handle, request, profile)
                    sent.append(0)
                except pmErr as e:
                    sent.append(e.code)
            out: List[Tuple[Optional[FlatResult], int]] = []
            for agent, code, (_, where, _) in zip(agents, sent, plan):
                if code < 0:
                    out.append((None, code))
                    continue
                out.append(self._result_of(agent.receive, len(where)))
            return out
        finally:
            for agent in held:
                agent.lock.release()

    @staticmethod
    def _result_of(receive, count: int) -> Tuple[Optional[FlatResult], int]:
        try:
            ptype, pdu = receive()
            if ptype == wire.PDU_ERROR:
                code = codec.decode_error(pdu)
                return None, code if code < 0 else PM_ERR_IPC
            if ptype != wire.PDU_RESULT:
                return None, PM_ERR_IPC
            flat = FlatResult(pdu, False)
        except pmErr as e:
            return None, e.code
        if flat.numpmid != count:
            return None, PM_ERR_IPC
        return flat, 0

    def store(self, arrays: dict, sec: int, usec: int) -> int:
        """pmStore as libpcp's LOCAL store: set by set, each one's first value to its
        domain's agent, stopping at the first failure."""
        pmids = arrays["pmids"]
        if len(pmids) < 1:
            raise pmErr(PM_ERR_TOOSMALL)
        if any(nv < 1 for nv in arrays["numvals"]):
            raise pmErr(PM_ERR_VALUE)
        first = 0
        for n, pmid in enumerate(pmids):
            one = {"pmids": [pmid], "numvals": [1], "valfmts": [arrays["valfmts"][n]],
                   "payload": arrays["payload"]}
            for column in ("insts", "lvals", "vtypes", "poffs", "plens"):
                one[column] = [arrays[column][first]]
            first += arrays["numvals"][n]
            pdu = self._ask(_domain(pmid), codec.encode_store(self.handle, sec, usec, one),
                            wire.PDU_ERROR)
            code = codec.decode_error(pdu)
            if code < 0:
                raise pmErr(code)
        return 0
