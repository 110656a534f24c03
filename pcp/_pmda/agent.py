"""One PMDA's state and main loop, as libpcp_pmda and the official cpmda keep it: the
metric and instance tables, the callbacks, the PMNS of its names, the last profile,
and the dispatch of each request pmcd sends (pipe: stdin/stdout)."""
from __future__ import annotations

import atexit
import ctypes
import gc
from array import array
from itertools import repeat
import os
import socket
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

from pcp._core import constants as C
from pcp._core import wire as W
from pcp._core.errors import pmErr, pmErrStr, pmSetProgname, pmGetProgname
from pcp._libpcp.strings import pmIDStr, pmInDomStr
from pcp._pmda import cache
from pcp._pmda import wire

LOG_CRIT, LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG = 2, 3, 4, 6, 7
_LEVELS = {2: "Critical", 3: "Error", 4: "Warning", 5: "Notice", 6: "Info", 7: "Debug"}
EAGAIN, EINVAL, ENOTSUP = 11, 22, 95
from pcp._core.constants import (PMCD_LABEL_CHANGE, PMCD_NAMES_CHANGE,  # noqa: E402
                                 PMDA_EXT_LABEL_CHANGE, PMDA_EXT_NAMES_CHANGE,
                                 PMDA_FETCH_DYNAMIC, PMDA_FETCH_NOVALUES, PMDA_FETCH_STATIC,
                                 PMNS_LEAF_STATUS, PMNS_NONLEAF_STATUS)
from pcp._core.level import API_LEVEL  # noqa: E402

#: the variables under which a PMDA runs without serving pmcd: Install's two, and from
#: level 6.3 pmcheck's probe (libpcp_pmda 6.3 opens no log for any of them)
_NOT_SERVING = ("PCP_PYTHON_PMNS", "PCP_PYTHON_DOMAIN") + (
    ("PCP_PYTHON_PROBE",) if API_LEVEL >= (6, 3) else ())
_I32 = (-(1 << 31), (1 << 31) - 1)
_I64 = (-(1 << 63), (1 << 63) - 1)


def notify(priority: int, message: str) -> None:
    """pmNotifyErr: one line on stderr (the PMDA's log once opened)."""
    stamp = time.strftime("%a %b %d %H:%M:%S", time.localtime())
    text = "[%s] %s(%d) %s: %s" % (stamp, pmGetProgname(), os.getpid(),
                                   _LEVELS.get(priority, "???"), message)
    sys.stderr.write(text)
    sys.stderr.flush()


def _ctime() -> str:
    return time.strftime("%a %b %d %H:%M:%S %Y", time.localtime())


CONNECT_ENV = "PCP_PYTHON_PMDA_CONNECT"


def socket_fd(how: str) -> int:
    """The socket forms of libpcp_pmda's pmdaConnect (its -i, -6 and -u options, which
    the official Python binding never parses): "inet:PORT" and "ipv6:PORT" (a number or
    a service name) listen on the loopback address, "unix:PATH" on a unix socket, for
    the one connection pmcd makes (pmcd.conf "socket inet PORT" / "socket unix PATH");
    its file descriptor. Failures end the PMDA as libpcp_pmda ends it, exit status 1."""
    kind, _, where = how.partition(":")
    if kind not in ("inet", "ipv6", "unix") or not where:
        notify(LOG_CRIT, "pmdaConnect: %s=%s: expected inet:PORT, ipv6:PORT, unix:PATH or "
               "pipe\n" % (CONNECT_ENV, how))
        sys.exit(1)
    if kind == "unix":
        return _unix_socket_fd(where)
    family = socket.AF_INET if kind == "inet" else socket.AF_INET6
    if where.isdigit():
        port = int(where)
    else:
        try:
            port = socket.getservbyname(where)
        except OSError as exc:
            notify(LOG_CRIT, "__pmdaOpenSocket: getservbyname(%s): %s\n" % (where, exc))
            sys.exit(1)
    what = "__pmdaOpenSocket(%s,%d,%d)" % ("" if where.isdigit() else where, port, family)
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1" if family == socket.AF_INET else "::1", port))
        listener.listen(1)          # pmcd is the one client
        conn, _ = listener.accept()
    except OSError as exc:
        notify(LOG_CRIT, "%s: %s\n" % (what, os.strerror(exc.errno or 0)))
        sys.exit(1)
    finally:
        listener.close()
    return conn.detach()


def _unix_socket_fd(path: str) -> int:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        os.unlink(path)
        notify(LOG_WARNING, "__pmdaOpenUnix(%s): socket exists, unlinked it\n" % path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        notify(LOG_CRIT, "__pmdaOpenUnix(%s): unlink() failed: %s\n"
               % (path, os.strerror(exc.errno or 0)))
        sys.exit(1)
    try:
        listener.bind(path)
    except OSError as exc:
        notify(LOG_CRIT, "__pmdaOpenUnix(%s): bind() failed: %s\n"
               % (path, os.strerror(exc.errno or 0)))
        sys.exit(1)
    # pmcd may run as PCP_USER by now: the socket is its too
    try:
        os.chmod(path, 0o660)
        import pwd
        from pcp._core.config import pmGetConfig
        user = pwd.getpwnam(pmGetConfig("PCP_USER") or "pcp")
        os.chown(path, user.pw_uid, user.pw_gid)
    except (OSError, KeyError):
        pass
    try:
        listener.listen(5)
        conn, _ = listener.accept()
    except OSError as exc:
        notify(LOG_CRIT, "__pmdaOpenUnix(%s): accept() failed: %s\n"
               % (path, os.strerror(exc.errno or 0)))
        sys.exit(1)
    finally:
        listener.close()
    return conn.detach()


class _Node:
    """A PMNS node of libpcp's tree: children in front-inserted order."""
    __slots__ = ("name", "pmid", "children", "parent")

    def __init__(self, name: str, parent: Optional["_Node"]) -> None:
        self.name = name
        self.pmid = C.PM_ID_NULL
        self.children: List[_Node] = []
        self.parent = parent

    def nonleaf(self) -> bool:
        """libpcp's NONLEAF: no pmid, or the root of a dynamic subtree (domain 511,
        item 0), which a PMDA may put in its own names."""
        return self.pmid == C.PM_ID_NULL or (self.pmid >> 22 == 511 and self.pmid & 0x3ff == 0)

    def full(self) -> str:
        parts = []
        node: Optional[_Node] = self
        while node is not None and node.parent is not None:
            parts.append(node.name)
            node = node.parent
        return ".".join(reversed(parts))


class Tree:
    """pmdaTree*: the names of a PMDA's metrics."""

    def __init__(self) -> None:
        self.root = _Node("", None)
        self.by_pmid: Dict[int, List[_Node]] = {}

    def insert(self, pmid: int, name: str) -> int:
        node = self.root
        parts = name.split(".")
        for i, part in enumerate(parts):
            for child in node.children:
                if child.name == part:
                    break
            else:
                child = _Node(part, node)
                node.children.insert(0, child)
            node = child
        if node.pmid != C.PM_ID_NULL and node.pmid != pmid:
            return C.PM_ERR_PMID
        node.pmid = pmid
        self.by_pmid.setdefault(pmid, []).append(node)
        return 0

    def lookup(self, name: str) -> Optional[_Node]:
        """pmdaNodeLookup: a leaf ends the walk (no name continues below it)."""
        node = self.root
        for part in name.split("."):
            if node is not self.root and not node.nonleaf():
                return None
            for child in node.children:
                if child.name == part:
                    node = child
                    break
            else:
                return None
        return node if node is not self.root else None

    def pmid(self, name: str) -> Tuple[int, int]:
        node = self.lookup(name)
        if node is None or node.nonleaf():
            return C.PM_ERR_NAME, 0
        return 0, node.pmid

    def names(self, pmid: int) -> List[str]:
        return [n.full() for n in self.by_pmid.get(pmid, [])]

    def children(self, name: str, traverse: bool) -> Tuple[int, List[str], List[int]]:
        node = self.lookup(name) if name else None
        if node is None:
            return C.PM_ERR_NAME, [], []
        if not traverse:
            kids = node.children
            return (len(kids), [k.name for k in kids],
                    [PMNS_NONLEAF_STATUS if k.nonleaf() else PMNS_LEAF_STATUS for k in kids])
        leaves: List[str] = []

        def walk(n: _Node) -> None:
            if n.nonleaf():
                for k in n.children:
                    walk(k)
            else:
                leaves.append(n.full())
        walk(node)
        return len(leaves), leaves, [PMNS_LEAF_STATUS] * len(leaves)


class Metric:
    __slots__ = ("pmid", "type", "indom", "sem", "units", "cluster", "item")

    def __init__(self, pmid: int, type_: int, indom: int, sem: int, units: int) -> None:
        self.pmid = pmid
        self.type = type_
        self.indom = indom
        self.sem = sem
        self.units = units
        self.cluster = (pmid >> 10) & 0xfff
        self.item = pmid & 0x3ff


class Agent:
    """What cpmda's module globals and libpcp_pmda's pmdaExt hold for one PMDA."""

    def __init__(self) -> None:
        self.domain = 0
        self.name = "pmda"
        self.logfile: Optional[str] = None
        self.helpfile: Optional[str] = None
        self.help_text = None       # help-file texts, when a help file is readable
        self.use_help_file = False
        self.need_refresh = False
        self.connected = False
        self.comm_flags = 0
        self.ext_flags = 0
        self.infd = -1             # set by connect (pipe: stdin, stdout)
        self.outfd = -1
        self.context = -1          # the sender of the request being answered
        self.last_ctx = -1         # pmdaGetContext: set where libpcp_pmda sets it
        self.profile: Optional[Tuple[int, Dict[int, Tuple[int, set]]]] = None
        self.pmns_dict: Optional[Dict[int, str]] = None
        self.texts: Dict[str, Optional[Dict[int, str]]] = {}
        self.indom_list: Optional[list] = None
        self.metric_list: Optional[list] = None
        self.metrics: Dict[int, Metric] = {}
        self.indoms: Dict[int, List[Tuple[int, str]]] = {}
        self.indom_insts: Dict[int, List[int]] = {}
        self.plans: Dict[int, Any] = {}       # fetch_plan's, per indom
        self.plans_generation = -1            # cache.generation they were made at
        self.callbacks: Dict[str, Optional[Callable]] = {}
        self.pmns_tree: Optional[Tree] = None
        self._reader = bytearray()
        self.pending: Optional[str] = None   # an exception cpmda would leave set
        self.debug_pdu = False
        self.failure = ""

    # -- set up ----------------------------------------------------------------------
    @staticmethod
    def generating() -> bool:
        """Whether the PMDA runs for Install (its domain.h or PMNS) or, from level 6.3,
        for pmcheck's probe: no log file then, its output and errors on the terminal."""
        return any(v in os.environ for v in _NOT_SERVING)

    def init_dispatch(self, domain: int, pmdaname: str, logfile: str, helpfile: str) -> None:
        self.domain = domain
        self.name = pmdaname
        pmSetProgname(pmdaname)
        self.logfile = logfile
        self.helpfile = helpfile
        self.use_help_file = os.access(helpfile, os.R_OK)
        debug = os.environ.get("PCP_PYTHON_DEBUG", "")
        self.debug_pdu = any(opt.strip().lower() in ("libpmda", "all")
                             for opt in debug.replace("|", ",").split(","))
        if not self.generating():
            self.open_log()

    def open_log(self) -> None:
        """pmOpenLog: stderr (fd 2, so tracebacks too) reopened on the log file."""
        if self.logfile != "-":
            try:
                os.unlink(self.logfile)
            except OSError:
                pass
            try:
                fd = os.open(self.logfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
            except OSError as exc:
                sys.stderr.write("%s: cannot open log \"%s\" for writing : %s\n"
                                 % (self.name, self.logfile, os.strerror(exc.errno)))
                fd = -1
            if fd >= 0:
                sys.stderr.flush()
                os.dup2(fd, 2)
                os.close(fd)
                sys.stderr = open(2, "w", buffering=1, closefd=False, encoding="utf-8",
                                  errors="backslashreplace")
        sys.stderr.write("Log for %s on %s started %s\n\n" % (self.name, socket.gethostname(),
                                                              _ctime()))
        sys.stderr.flush()
        atexit.register(self._log_footer)

    @staticmethod
    def _log_footer() -> None:
        try:
            sys.stderr.write("\nLog finished %s\n" % _ctime())
            sys.stderr.flush()
        except (OSError, ValueError):
            pass

    def connect(self) -> None:
        """pmdaConnect: a pipe PMDA's stdin and stdout, or (PCP_PYTHON_PMDA_CONNECT, see
        socket_fd) the socket pmcd connects to; then our CREDS, then pmcd's."""
        if self.generating() or self.connected:
            if self.connected:
                notify(LOG_CRIT, "pmdaConnect: called more than once\n")
            return
        how = os.environ.get(CONNECT_ENV, "")
        if how and how != "pipe":
            self.infd = self.outfd = socket_fd(how)
        else:
            self.infd, self.outfd = sys.stdin.fileno(), sys.stdout.fileno()
        self.send(wire.encode_creds(os.getpid(), self.comm_flags))
        pdu = self.read_pdu()
        if pdu is None:
            notify(LOG_CRIT, "__pmdaSetupPDU: PMDA %s getting creds: %s\n"
                   % (self.name, pmErrStr(C.PM_ERR_EOF)))
            return
        req = wire.Request(pdu)
        if req.type != W.PDU_CREDS:
            notify(LOG_CRIT, "__pmdaSetupPDU: PMDA %s: version exchange failure, got PDU type "
                   "%s expecting PDU_CREDS)\n" % (self.name, _pdu_name(req.type)))
        self.connected = True

    # -- I/O ------------------------------------------------------------------------
    def send(self, pdu: bytes) -> None:
        if self.outfd < 0:
            return                 # not connected: libpcp's send to fd -1 fails quietly
        view = memoryview(pdu)
        while view:
            n = os.write(self.outfd, view)
            view = view[n:]

    def _fill(self, need: int) -> bool:
        while len(self._reader) < need:
            try:
                chunk = os.read(self.infd, max(65536, need - len(self._reader)))
            except OSError as exc:
                # a socket PMDA's pmcd may reset rather than close: libpcp's -errno
                raise pmErr(-(exc.errno or C.PM_ERR_IPC)) from None
            if not chunk:
                return False
            self._reader += chunk
        return True

    def read_pdu(self) -> Optional[bytes]:
        if not self._fill(12):
            return None
        length = int.from_bytes(self._reader[0:4], "big")
        if length < 12 or length > (1 << 30):
            raise pmErr(C.PM_ERR_IPC)
        if not self._fill(length):
            return None
        pdu = bytes(self._reader[:length])
        del self._reader[:length]
        return pdu

    # -- tables ---------------------------------------------------------------------
    def refresh_tables(self) -> None:
        """Copy the Python metric and indom tables, as cpmda's buffers are copied."""
        if self.indom_list is None or self.metric_list is None:
            return
        metrics = {}
        for m in self.metric_list:
            d = m.m_desc
            units = _units_word(d.units)
            metrics[d.pmid] = Metric(d.pmid, d.type, d.indom, d.sem, units)
        indoms = {}
        for it in self.indom_list:
            insts: List[Tuple[int, str]] = []
            for i in range(max(it.it_numinst, 0)):
                entry = it.it_set[i]
                raw = entry.i_name
                insts.append((entry.i_inst, raw.decode("utf-8", "surrogateescape")
                              if raw is not None else ""))
            indoms[it.it_indom] = insts
        self.metrics = metrics
        self.indoms = indoms
        self.indom_insts: Dict[int, List[int]] = {}
        self.plans = {}

    def pmns_rebuild(self) -> None:
        if self.pmns_dict is None:
            return
        tree = Tree()
        for pmid, name in list(self.pmns_dict.items()):
            sts = tree.insert(pmid, name)
            if sts < 0:
                notify(LOG_ERR, "failed to add metric %s(%s) to namespace: %s\n"
                       % (name, pmIDStr(pmid), pmErrStr(sts)))
        self.pmns_tree = tree

    def refresh_if_needed(self) -> None:
        if self.need_refresh:
            self.pmns_rebuild()
            self.refresh_tables()
            self.need_refresh = False

    def maybe_refresh_all(self) -> None:
        func = self.callbacks.get("refresh_metrics")
        if func is not None:
            ok, _ = self.call(func)
            if not ok:
                self.print_failure()
        self.refresh_if_needed()

    def callback_error(self, name: str) -> int:
        notify(LOG_ERR, "%s: callback failed\n" % name)
        self.print_failure()
        return -EAGAIN

    def print_failure(self) -> None:
        """PyErr_Print of the last callback's failure."""
        if self.failure:
            sys.stderr.write(self.failure)
            sys.stderr.flush()
        self.failure = ""

    # -- instances ------------------------------------------------------------------
    def instances(self, indom: int, use_profile: bool = True) -> List[int]:
        """__pmdaStartInst / __pmdaNextInst: an indom's instances in the profile."""
        if cache.check(indom):
            insts = [e.inst for e in cache.get(indom).active()]
        elif indom in self.indoms:
            insts = self.indom_insts.get(indom)
            if insts is None:
                insts = self.indom_insts[indom] = [_s32(i) for i, _ in self.indoms[indom]]
        else:
            return []
        if use_profile and self.profile is not None:
            g_state, entries = self.profile
            entry = entries.get(indom)
            if entry is None:
                return insts if g_state == 0 else []
            state, listed = entry
            if state == 0:
                insts = [i for i in insts if i not in listed]
            else:
                insts = [i for i in insts if i in listed]
        return insts

    def count_instances(self, indom: int) -> int:
        """__pmdaCntInst."""
        if indom == C.PM_INDOM_NULL:
            return 1
        if cache.check(indom):
            return len(cache.get(indom).active())
        if indom in self.indoms:
            return len(self.indoms[indom])
        notify(LOG_WARNING, "__pmdaCntInst: unknown indom %s\n" % pmInDomStr(indom))
        return 0

    # -- requests -------------------------------------------------------------------
    def fetch(self, pmids: List[int]) -> bytes:
        self.maybe_refresh_all()
        prefetch = self.callbacks.get("fetch")
        if prefetch is not None:
            if not self.call(prefetch)[0]:
                return wire.encode_error(self.callback_error("prefetch"))
        refresh_all = self.callbacks.get("refresh_all")
        refresh = self.callbacks.get("refresh")
        if refresh_all is not None or refresh is not None:
            clusters: List[int] = []
            for pmid in pmids:
                cl = (pmid >> 10) & 0xfff
                if cl not in clusters:
                    clusters.append(cl)
            sts = 0
            if refresh_all is not None:
                if not self.call(refresh_all, list(clusters))[0]:
                    sts |= self.callback_error("refresh_all_clusters")
            if refresh is not None:
                for cl in clusters:
                    if not self.call(refresh, cl)[0]:
                        sts |= self.callback_error("refresh_cluster")
            self.refresh_if_needed()
            if sts < 0:
                return wire.encode_error(sts)
        # A set's replies stay alive together (cpmda frees each before the next call):
        # a thousand new lists would start the cyclic collector, which then walks
        # the PMDA's whole heap, on every fetch. They are all freed when pmda_fetch
        # returns, so the collector's count is back where it was.
        collecting = gc.isenabled()
        if collecting:
            gc.disable()
        try:
            return self.pmda_fetch(pmids)
        finally:
            if collecting:
                gc.enable()

    def fetch_plan(self, indom: int) -> Optional[Tuple[List[int], List[int], array]]:
        """An indom's instances in the profile for a fetch: (as the wire's signed ints,
        as the callback gets them (unsigned, as cpmda builds them with "I"), the
        RESULT's instance column), or None when none. Kept until the profile, the
        tables or a pmdaCache (cache.generation) change."""
        plan = self.plans.get(indom, _NO_PLAN)
        if plan is not _NO_PLAN:
            return plan
        insts = self.instances(indom)
        if not insts:
            plan = None
        else:
            uinsts = insts if min(insts) >= 0 else [i & 0xffffffff for i in insts]
            plan = (insts, uinsts, array("i", insts))
        self.plans[indom] = plan
        return plan

    def pmda_fetch(self, pmids: List[int]) -> bytes:
        """pmdaFetch: each pmid's instances in the profile, one callback call each. A
        set whose replies are all plain [value, 1] lists goes straight to one typed
        array (array.array converts each value as cpmda's PyArg_Parse format does);
        any other set is read reply by reply, as cpmda reads it."""
        self.last_ctx = self.context
        stamp = 0
        if self.ext_flags & PMDA_EXT_LABEL_CHANGE:
            stamp |= PMCD_LABEL_CHANGE
        if self.ext_flags & PMDA_EXT_NAMES_CHANGE:
            stamp |= PMCD_NAMES_CHANGE
        callback = self.callbacks.get("fetch_callback")
        if self.plans_generation != cache.generation:
            self.plans = {}
            self.plans_generation = cache.generation
        numval: List[int] = []
        vtypes: List[int] = []
        inst_parts: list = []       # per set: the instance column of its values
        value_parts: list = []      # per numeric set: its values as one typed array
        slen: List[int] = []
        strings: List[bytes] = []
        metrics = self.metrics
        for pmid in pmids:
            m = metrics.get(pmid)
            if m is None:
                # libpcp_pmda asks the desc callback, which refreshes first
                self.maybe_refresh_all()
                metrics = self.metrics
                m = metrics.get(pmid)
            if m is None:
                numval.append(C.PM_ERR_PMID)
                vtypes.append(0)
                continue
            mtype = m.type
            if m.indom == C.PM_INDOM_NULL:
                plan = _SINGULAR
            else:
                plan = self.fetch_plan(m.indom)
                if plan is None:
                    numval.append(0)
                    vtypes.append(mtype)
                    continue
            insts, uinsts, inst_column = plan
            results = None
            if callback is not None and self.pending is None:
                results = self._call_all(callback, m, uinsts)
                typecode = _TYPECODES.get(mtype)
                values = None
                if typecode is not None and set(map(type, results)) == _LISTS:
                    try:
                        # unpacking refuses a list of another length; _BAD (not a
                        # number) stops the conversion: then read one by one
                        values = array(typecode, [v if c is _ONE else _BAD
                                                  for v, c in results])
                    except Exception:      # pylint: disable=broad-except
                        values = None
                    if values is not None:
                        value_parts.append(values)
                        inst_parts.append(inst_column)
                        numval.append(len(values))
                        vtypes.append(mtype)
                        continue
            count = 0
            sts = 0
            kept: List[int] = []
            got: list = []
            for k, inst in enumerate(insts):
                if results is not None and self.pending is None:
                    sts, value = self.read_reply(m, results[k])
                else:
                    sts, value = self.fetch_one(callback, m, inst)
                if sts < 0:
                    self.log_fetch_error(sts, m.pmid, inst)
                    continue
                if sts == 0:
                    continue
                got.append(value)
                kept.append(inst)
                count += 1
            if count:
                inst_parts.append(array("i", kept))
                if mtype == C.PM_TYPE_STRING:
                    slen.extend(map(len, got))
                    strings.extend(got)
                else:
                    value_parts.append(array(_STORED[mtype], got))
            numval.append(count if count else sts)
            vtypes.append(mtype)
        inst_col = inst_parts[0] if len(inst_parts) == 1 else b"".join(inst_parts)
        values = value_parts[0] if len(value_parts) == 1 else b"".join(value_parts)
        pdu = wire.encode_result(stamp, pmids, numval, vtypes, inst_col, values, slen,
                                 b"".join(strings))
        self.ext_flags &= ~(PMDA_EXT_LABEL_CHANGE | PMDA_EXT_NAMES_CHANGE)
        return pdu

    def _call_all(self, callback: Callable, m: Metric, uinsts: List[int]) -> list:
        """The callback's reply for every instance (uinsts: as the callback gets them),
        in instance order; a call that raised is a _Failed in its place (the caller
        reports it as cpmda does, and the calls after it were made one by one, as cpmda
        makes them)."""
        cluster, item = m.cluster, m.item
        count = len(uinsts)
        results: list = []
        try:
            # map in C, one call per instance; extend keeps the replies made before a
            # callback raises
            results.extend(map(callback, repeat(cluster, count), repeat(item, count), uinsts))
        except Exception as exc:      # pylint: disable=broad-except
            tb = exc.__traceback__.tb_next if exc.__traceback__ else None
            failure = "".join(traceback.format_exception(type(exc), exc, tb))
            # finish value by value from the failed one on
            append = results.append
            append(_Failed(failure))
            for inst in uinsts[len(results):]:
                if self.pending is not None:
                    ok, res = self.call(callback, cluster, item, inst)
                    append(res if ok else _Failed(self.failure))
                    continue
                try:
                    append(callback(cluster, item, inst))
                except Exception as exc2:      # pylint: disable=broad-except
                    tb = exc2.__traceback__.tb_next if exc2.__traceback__ else None
                    append(_Failed("".join(traceback.format_exception(type(exc2), exc2, tb))))
        return results

    def fetch_one(self, callback: Optional[Callable], m: Metric, inst: int) -> Tuple[int, Any]:
        """cpmda's fetch_callback and pmdaFetch's reading of its status: (status, value)."""
        if callback is None:
            return C.PM_ERR_VALUE, None
        ok, result = self.call(callback, m.cluster, m.item, inst & 0xffffffff)
        if not ok:
            return self.callback_error("fetch_callback"), None
        return self.read_reply(m, result)

    def read_reply(self, m: Metric, result: Any) -> Tuple[int, Any]:
        """One fetch callback reply as cpmda reads it: (status, value)."""
        if isinstance(result, _Failed):
            self.failure = result.text
            return self.callback_error("fetch_callback"), None
        if self.pending is not None:
            # the call ran with an exception left set: CPython turned its result into
            # a SystemError (see call)
            target = getattr(self.callbacks.get("fetch_callback"), "__func__",
                             self.callbacks.get("fetch_callback"))
            self.failure = (self.pending + "\nThe above exception was the direct cause of the "
                            "following exception:\n\nSystemError: %r returned a result with an "
                            "exception set\n" % (target,))
            self.pending = None
            return self.callback_error("fetch_callback"), None
        if result is None or isinstance(result, tuple):
            return PMDA_FETCH_NOVALUES, None
        mtype = m.type
        value = _fast_value(result, mtype)
        if value is not None:
            return (PMDA_FETCH_DYNAMIC if mtype == C.PM_TYPE_STRING else PMDA_FETCH_STATIC), value
        fmt = _FORMATS.get(mtype)
        if fmt is None:
            notify(LOG_ERR, "unsupported metric type in fetch callback\n")
            return -ENOTSUP, None
        try:
            value, code = cparse(result, fmt, mtype)
            parsed = True
        except Exception:      # pylint: disable=broad-except
            parsed, value, code = False, None, 0
        if parsed and code:
            return (PMDA_FETCH_DYNAMIC if mtype == C.PM_TYPE_STRING else PMDA_FETCH_STATIC), value
        # not a value: an error code pair such as [PM_ERR_INST, 0]
        try:
            sts, code = cparse(result, b"(ii):fetch_cb_error", C.PM_TYPE_32)
        except Exception as exc:      # pylint: disable=broad-except
            # cpmda clears only the first parse's exception: this one stays set and the
            # next callback call fails with a SystemError chained to it
            self.pending = "".join(traceback.format_exception_only(type(exc), exc))
            notify(LOG_ERR, "extracting error code in fetch callback\n")
            return -EINVAL, None
        if code == 1:
            notify(LOG_ERR, "forcing error code in fetch callback\n")
            return C.PM_ERR_TYPE, None
        if sts > 0:
            if not parsed:
                return C.PM_ERR_VALUE, None
            if sts == PMDA_FETCH_DYNAMIC and mtype != C.PM_TYPE_STRING:
                notify(LOG_WARNING, "pmdaFetch: Attempt to free value for metric %s of wrong "
                       "type %s\n" % (pmIDStr(m.pmid), _type_str(mtype)))
        return sts, value

    def call(self, func: Callable, *args: Any) -> Tuple[bool, Any]:
        """PyObject_Call: (True, result), or (False, None) with the failure kept for
        callback_error to print as PyErr_Print would."""
        try:
            result = func(*args)
        except Exception as exc:      # pylint: disable=broad-except
            tb = exc.__traceback__.tb_next if exc.__traceback__ else None
            self.failure = "".join(traceback.format_exception(type(exc), exc, tb))
            if self.pending is not None:
                self.failure = (self.pending + "\nDuring handling of the above exception, "
                                "another exception occurred:\n\n" + self.failure)
                self.pending = None
            return False, None
        if self.pending is not None:
            target = getattr(func, "__func__", func)
            self.failure = (self.pending + "\nThe above exception was the direct cause of the "
                            "following exception:\n\nSystemError: %r returned a result with an "
                            "exception set\n" % (target,))
            self.pending = None
            return False, None
        return True, result

    @staticmethod
    def log_fetch_error(sts: int, pmid: int, inst: int) -> None:
        ident = pmIDStr(pmid)
        if sts == C.PM_ERR_PMID:
            notify(LOG_ERR, "pmdaFetch: PMID %s not handled by fetch callback\n" % ident)
        elif sts in (C.PM_ERR_INST, C.PM_ERR_VALUE, C.PM_ERR_APPVERSION, C.PM_ERR_PERMISSION,
                     C.PM_ERR_AGAIN, C.PM_ERR_NYI):
            pass
        else:
            notify(LOG_ERR, "pmdaFetch: Fetch callback error from metric PMID %s[%d]: %s\n"
                   % (ident, _s32(inst), pmErrStr(sts)))

    def desc(self, pmid: int) -> bytes:
        self.maybe_refresh_all()
        self.last_ctx = self.context      # pmdaDesc
        m = self.metrics.get(pmid)
        if m is None:
            return wire.encode_error(C.PM_ERR_PMID)
        return wire.encode_desc(m.pmid, m.type, m.indom, m.sem, m.units)

    def instance(self, indom: int, inst: int, name: Optional[bytes]) -> bytes:
        self.maybe_refresh_all()
        func = self.callbacks.get("instance")
        if func is not None:
            if not self.call(func, indom & 0x3fffff)[0]:
                return wire.encode_error(self.callback_error("preinstance"))
        have_cache = cache.check(indom)
        if not have_cache and indom not in self.indoms:
            return wire.encode_error(C.PM_ERR_INDOM)
        if name is None and inst == C.PM_IN_NULL:
            if have_cache:
                pairs = [(e.inst, e.name) for e in cache.get(indom).active()]
            else:
                pairs = self.indoms[indom]
            return wire.encode_instance(indom, [i for i, _ in pairs],
                                        [n.encode("utf-8", "surrogateescape") for _, n in pairs])
        if name is None:
            found: Optional[str] = None
            if have_cache:
                e = cache.lookup(indom, _s32(inst))
                if e is not None and e.state == cache.PMDA_CACHE_ACTIVE:
                    found = e.name
            else:
                for i, n in self.indoms[indom]:
                    if i == _s32(inst):
                        found = n
                        break
            if found is None:
                return wire.encode_error(C.PM_ERR_INST)
            return wire.encode_instance(indom, [C.PM_IN_NULL - (1 << 32)],
                                        [found.encode("utf-8", "surrogateescape")])
        if inst == C.PM_IN_NULL and name:
            text = name.decode("utf-8", "surrogateescape")
            got: Optional[int] = None
            if have_cache:
                e = cache.lookup_name(indom, text)
                if e is not None and e.state == cache.PMDA_CACHE_ACTIVE:
                    got = e.inst
            else:
                for i, n in self.indoms[indom]:
                    if n == text:
                        got = i
                        break
                    if " " not in text:
                        space = n.find(" ")
                        if space >= 0 and n[:space] == text:
                            got = i
                            break
            if got is None:
                return wire.encode_error(C.PM_ERR_INST)
            return wire.encode_instance(indom, [got], [b""])
        return wire.encode_error(C.PM_ERR_INST)

    def text(self, ident: int, type_: int) -> bytes:
        if self.use_help_file:
            self.last_ctx = self.context  # pmdaText
            found = None
            if self.help_text is not None:
                if type_ & C.PM_TEXT_PMID:
                    found = self.help_text.pmid_text(ident, type_)
                else:
                    found = self.help_text.indom_text(ident, type_)
            if found is None:
                return wire.encode_error(C.PM_ERR_TEXT)
            return wire.encode_text(ident, found)
        self.maybe_refresh_all()
        if type_ & C.PM_TEXT_PMID:
            key = "pmid_oneline" if type_ & C.PM_TEXT_ONELINE else "pmid_longtext"
        else:
            key = "indom_oneline" if type_ & C.PM_TEXT_ONELINE else "indom_longtext"
        table = self.texts.get(key)
        if table is None:
            return wire.encode_error(C.PM_ERR_TEXT)
        value = table.get(_s32(ident), table.get(ident))
        if value is None:
            return wire.encode_error(C.PM_ERR_TEXT)
        return wire.encode_text(ident, str(value).encode("utf-8", "surrogateescape"))

    def _add_labels(self, current: Any, text: str, flags: int) -> Tuple[Any, Optional[int]]:
        """cpmda's ``if (!empty_labelset(s) && (sts = __pmAddLabels(lp, s, type)) < 0)``:
        (the set, the status), the status None for an empty text (cpmda's sts is then
        left as it was: a refused label set stays refused after empty notes)."""
        from pcp._libpcp.labels import add_labels
        if len(text) < 2 or text.startswith("{}"):
            return current, None
        try:
            added = add_labels(current, text.encode("utf-8"), flags)
            return added, len(added.labels)
        except pmErr as exc:
            code = exc.args[0] if exc.args else C.PM_ERR_GENERIC
            # 6.0.3's message (the text and "(optional)" came later)
            notify(LOG_ERR, "__pmAddLabels failed: %s\n" % pmErrStr(code))
            return current, code

    def label(self, ident: int, type_: int) -> bytes:
        label_func = self.callbacks.get("label")
        notes_func = self.callbacks.get("notes")
        current = None
        sts = 0
        if label_func is not None or notes_func is not None:
            ident_arg = (ident >> 10) & 0xfff if type_ == C.PM_LABEL_CLUSTER else _s32(ident)
            results = []
            for func in (label_func, notes_func):
                if func is None:
                    results.append(None)
                    continue
                ok, res = self.call(func, ident_arg, type_)
                results.append(("ok", res) if ok else ("err", self.failure))
                self.failure = ""
            for which, func, res in (("labels", label_func, results[0]),
                                     ("notes", notes_func, results[1])):
                if func is None:
                    continue
                if res[0] == "err":
                    sys.stderr.write(res[1])
                    return wire.encode_error(-EAGAIN)
                if not isinstance(res[1], str):
                    notify(LOG_ERR, "bad %s result (expected string)\n" % which)
                    return wire.encode_error(-EINVAL)
                flags = type_ if which == "labels" else type_ | C.PM_LABEL_OPTIONAL
                current, added = self._add_labels(current, res[1], flags)
                sts = sts if added is None else added
            if sts < 0:
                return wire.encode_error(sts)
        self.last_ctx = self.context      # pmdaLabel, after the Python callbacks
        base = type_ & ~(0x40 | C.PM_LABEL_OPTIONAL)
        if base in (C.PM_LABEL_CONTEXT, C.PM_LABEL_DOMAIN, C.PM_LABEL_INDOM,
                    C.PM_LABEL_CLUSTER, C.PM_LABEL_ITEM):
            if current is None:
                if base == C.PM_LABEL_DOMAIN:
                    agent = self.name[4:] if self.name.startswith("pmda") else self.name
                    current, _ = self._add_labels(None, '{"agent":"%s"}' % agent,
                                                  C.PM_LABEL_DOMAIN)
                elif base == C.PM_LABEL_CONTEXT:
                    current = None
                if current is None:
                    return wire.encode_labels(ident, type_, [])
            return wire.encode_labels(ident, type_, [(C.PM_IN_NULL - (1 << 32),
                                                      len(current.labels), current.json,
                                                      _with_flags(current, base))])
        if base == C.PM_LABEL_INSTANCES:
            indom = ident
            insts = ([C.PM_IN_NULL - (1 << 32)] if indom == C.PM_INDOM_NULL
                     else self.instances(indom))
            if self.count_instances(indom) <= 0:
                return wire.encode_labels(ident, type_, [])
            sets = []
            for inst in insts:
                sets.append(self.instance_labels(indom, inst))
            return wire.encode_labels(ident, type_, sets)
        return wire.encode_error(C.PM_ERR_TYPE)

    def instance_labels(self, indom: int, inst: int) -> Tuple[int, int, bytes, list]:
        """cpmda's label_callback for one instance of pmdaLabel's INSTANCES walk."""
        label_cb = self.callbacks.get("label_callback")
        notes_cb = self.callbacks.get("notes_callback")
        sts = 0
        # pmdaLabel hands the callbacks an allocated, empty set: __pmAddLabels merges
        # into it, so the set's JSON comes out in name order
        from pcp._libpcp.labels import AddedLabels
        current: Any = AddedLabels(b"", [], None)
        if label_cb is None and notes_cb is None:
            sts = C.PM_ERR_VALUE
        else:
            for which, func in (("label", label_cb), ("notes", notes_cb)):
                if func is None or sts < 0:
                    continue
                ok, res = self.call(func, indom, inst & 0xffffffff)
                if not ok:
                    self.print_failure()
                    sts = -EAGAIN
                    continue
                if not isinstance(res, str):
                    notify(LOG_ERR, "bad %s callback result (expected string)\n" % which)
                    sts = -EINVAL
                    continue
                flags = C.PM_LABEL_INSTANCES | (C.PM_LABEL_OPTIONAL if which == "notes" else 0)
                current, added = self._add_labels(current, res, flags)
                sts = sts if added is None else added
        if sts < 0:
            notify(LOG_DEBUG, "pmdaLabel: InDom %s[%d]: %s\n"
                   % (pmInDomStr(indom), _s32(inst), pmErrStr(sts)))
        if sts <= 0 or not current.labels:
            return (inst, sts if sts < 0 else 0, b"", [])
        return (inst, len(current.labels), current.json,
                _with_flags(current, C.PM_LABEL_INSTANCES))

    def store(self, pdu: bytes) -> int:
        from pcp._decode.result import FlatResult
        from pcp._libpcp.values import extract_value
        self.maybe_refresh_all()
        callback = self.callbacks.get("store_callback")
        if callback is None:
            return C.PM_ERR_PERMISSION
        self.last_ctx = self.context      # pmdaStore, before the callbacks
        result = FlatResult(pdu, False)
        pmid_col, numval_col, valfmt_col = result.pmid, result.numval, result.valfmt
        first_col, inst_col, ival_col = result.first, result.inst, result.ival
        by_item = {(m.cluster, m.item): m for m in self.metrics.values()}
        for i in range(result.numpmid):
            pmid = pmid_col[i]
            m = by_item.get(((pmid >> 10) & 0xfff, pmid & 0x3ff))
            if m is None:
                return C.PM_ERR_PMID
            first = first_col[i]
            for k in range(first, first + max(numval_col[i], 0)):
                valfmt = valfmt_col[i]
                try:
                    if valfmt == C.PM_VAL_INSITU:
                        atom = extract_value(valfmt, m.type, m.type, word=ival_col[k])
                    else:
                        vtype, payload = result.vtype[k], result.payload(k)
                        atom = extract_value(valfmt, m.type, m.type, vtype=vtype,
                                             payload=payload)
                except pmErr as exc:
                    return exc.args[0]
                except (KeyError, IndexError):
                    return C.PM_ERR_CONV
                value = _atom_value(atom, m.type)
                if value is None:
                    notify(LOG_ERR, "unsupported type in store callback\n")
                    return -EINVAL
                ok, result = self.call(callback, m.cluster, m.item,
                                       inst_col[k] & 0xffffffff, value)
                if not ok:
                    return self.callback_error("store_callback")
                try:
                    code = cparse(result, b"i:store_callback", C.PM_TYPE_32, single=True)
                except Exception as exc:      # pylint: disable=broad-except
                    self.pending = "".join(traceback.format_exception_only(type(exc), exc))
                    notify(LOG_ERR, "store callback gave bad status (int expected)\n")
                    return -EINVAL
                if code < 0:
                    return code
        return 0

    def attribute(self, ctx: int, attr: int, value: bytes) -> None:
        func = self.callbacks.get("attribute_callback")
        if func is None:
            return
        text = value[:-1] if value.endswith(b"\0") else value
        if not self.call(func, ctx, attr, text.decode("utf-8", "surrogateescape"))[0]:
            sts = self.callback_error("attribute")
            notify(LOG_ERR, "%s: Failed to set attribute: %s\n" % (self.name, pmErrStr(sts)))

    def end_context(self, ctx: int) -> None:
        func = self.callbacks.get("endcontext_callback")
        if func is None:
            return
        if not self.call(func, ctx)[0]:
            self.callback_error("endcontext")

    # -- the loop -------------------------------------------------------------------
    def init_tables(self, indoms: list, metrics: list) -> bool:
        """pmdaInit's checks on the tables."""
        self.indom_list = indoms
        self.metric_list = metrics
        self.refresh_tables()
        serials = {i & 0x3fffff for i in self.indoms}
        for m in self.metric_list:
            d = m.m_desc
            if d.indom != C.PM_INDOM_NULL and self.indoms is not None and self.indom_list:
                if (d.indom & 0x3fffff) not in serials:
                    notify(LOG_CRIT, "pmdaInit: PMDA %s: Undefined instance domain serial (%d) "
                           "specified for metric %s (e_metrics[%d])\n"
                           % (self.name, d.indom & 0x3fffff, pmIDStr(d.pmid),
                              self.metric_list.index(m)))
                    return False
        if self.use_help_file:
            from pcp._pmda.helpfile import open_help
            texts, err = open_help(self.helpfile or "")
            if err < 0:
                notify(LOG_WARNING, "pmdaInit: PMDA %s: Unable to open help text file(s) from "
                       "\"%s\": %s\n" % (self.name, self.helpfile, pmErrStr(err)))
            else:
                self.help_text = texts
        return True

    def dispatch(self, indoms: list, metrics: list) -> None:
        ok = self.init_tables(indoms, metrics)
        if not self.connected:
            self.connect()
        if not ok:
            notify(LOG_ERR, "PMDA Initialisation Failed\n")
            return
        while True:
            try:
                pdu = self.read_pdu()
            except pmErr as exc:
                notify(LOG_ERR, "IPC Error: %s\n\n" % pmErrStr(exc.args[0]))
                return
            if pdu is None:
                return
            self.handle(pdu)

    def handle(self, pdu: bytes) -> None:
        try:
            req = wire.Request(pdu)
        except pmErr:
            req = None
        if req is None:
            ptype = int.from_bytes(pdu[4:8], "big")
            if ptype in (W.PDU_PROFILE, W.PDU_ATTR, W.PDU_ERROR, W.PDU_CREDS):
                return
            self.send(wire.encode_error(C.PM_ERR_IPC))
            return
        self.context = req.sender
        t = req.type
        if self.debug_pdu and t not in (W.PDU_CREDS,):
            # libpcp_pmda 6.0.3's lines under pmDebugOptions.libpmda
            notify(LOG_DEBUG, "Received PDU_%s\n" % _pdu_name(t))
        reply: Optional[bytes] = None
        if t == W.PDU_ERROR:
            if req.a == C.PM_ERR_NOTCONN:
                self.end_context(self.context)
            else:
                notify(LOG_ERR, "%s: unexpected error pdu from pmcd: %s?\n"
                       % (self.name, pmErrStr(req.a)))
        elif t == W.PDU_PROFILE:
            g_state, entries = wire.decode_profile(req)
            self.profile = (g_state, {ind: (st, {_s32(i) for i in insts})
                                      for ind, st, insts in entries})
            self.plans = {}
        elif t == W.PDU_FETCH:
            reply = self.fetch(wire.decode_fetch(req))
        elif t == W.PDU_PMNS_NAMES:
            names = wire.decode_names(pdu)
            if len(names) != 1:
                reply = wire.encode_error(C.PM_ERR_IPC)
            else:
                self.maybe_refresh_all()
                sts, pmid = (self.pmns_tree.pmid(names[0].decode("utf-8", "surrogateescape"))
                             if self.pmns_tree else (C.PM_ERR_NAME, 0))
                reply = wire.encode_error(sts) if sts < 0 else wire.encode_ids(sts, pmid)
        elif t in (W.PDU_PMNS_CHILD, W.PDU_PMNS_TRAVERSE):
            self.maybe_refresh_all()
            name = (req.name or b"").decode("utf-8", "surrogateescape")
            traverse = t == W.PDU_PMNS_TRAVERSE
            if self.pmns_tree is None:
                reply = wire.encode_error(C.PM_ERR_NAME)
            else:
                sts, kids, status = self.pmns_tree.children(name, traverse)
                if sts < 0:
                    reply = wire.encode_error(sts)
                else:
                    with_status = (not traverse) and req.a != 0
                    reply = wire.encode_names([k.encode("utf-8") for k in kids],
                                              status if with_status else None)
        elif t == W.PDU_PMNS_IDS:
            self.maybe_refresh_all()
            names = self.pmns_tree.names(req.ident) if self.pmns_tree else []
            if not names:
                reply = wire.encode_error(C.PM_ERR_PMID)
            else:
                reply = wire.encode_names([n.encode("utf-8") for n in names], None)
        elif t == W.PDU_DESC_REQ:
            reply = self.desc(req.ident)
        elif t == W.PDU_LABEL_REQ:
            reply = self.label(req.ident, req.a)
        elif t == W.PDU_INSTANCE_REQ:
            reply = self.instance(req.ident, req.a & 0xffffffff, req.name)
        elif t == W.PDU_TEXT_REQ:
            reply = self.text(req.ident, req.a)
        elif t == W.PDU_RESULT:
            try:
                sts = self.store(pdu)
            except pmErr as exc:
                sts = exc.args[0]
            reply = wire.encode_error(sts)
        elif t == W.PDU_ATTR:
            self.attribute(self.context, req.a, req.name or b"")
        elif t == W.PDU_CREDS:
            pass
        else:
            notify(LOG_ERR, "%s: Unrecognised pdu type: %s?\n" % (self.name, _pdu_name(t)))
        if reply is not None:
            self.send(reply)


class _Failed:
    """A fetch callback call that raised, with its traceback text."""
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


_ONE = 1        # CPython's one small-int object: `is _ONE` is an exact int 1, not True/1.0
_BAD = object()
_LISTS = {list}


# A numeric metric type's array.array typecode whose conversion of a reply's value is
# cpmda's PyArg_Parse format for that type ("i", "I", "L", "K", "f", "d"): the same value
# where the array accepts it; where it refuses (a negative U32, say), the set is read one
# reply at a time.
_TYPECODES = {C.PM_TYPE_32: "i", C.PM_TYPE_U32: "I", C.PM_TYPE_64: "q", C.PM_TYPE_U64: "Q",
              C.PM_TYPE_FLOAT: "f", C.PM_TYPE_DOUBLE: "d"}
# The typecode of values read one by one (read_reply gives a U64 as its signed bits).
_STORED = {C.PM_TYPE_32: "i", C.PM_TYPE_U32: "I", C.PM_TYPE_64: "q", C.PM_TYPE_U64: "q",
           C.PM_TYPE_FLOAT: "f", C.PM_TYPE_DOUBLE: "d"}
assert [array(t).itemsize for t in "iIqQfd"] == [4, 4, 8, 8, 4, 8]
_SINGULAR = ([-1], [0xffffffff], array("i", [-1]))
_NO_PLAN = object()

_FORMATS = {C.PM_TYPE_32: b"(ii):fetch_cb_s32", C.PM_TYPE_U32: b"(Ii):fetch_cb_u32",
            C.PM_TYPE_64: b"(Li):fetch_cb_s64", C.PM_TYPE_U64: b"(Ki):fetch_cb_u64",
            C.PM_TYPE_FLOAT: b"(fi):fetch_cb_float", C.PM_TYPE_DOUBLE: b"(di):fetch_cb_double",
            C.PM_TYPE_STRING: b"(si):fetch_cb_string"}
_CTYPES = {C.PM_TYPE_32: ctypes.c_int, C.PM_TYPE_U32: ctypes.c_uint,
           C.PM_TYPE_64: ctypes.c_longlong, C.PM_TYPE_U64: ctypes.c_ulonglong,
           C.PM_TYPE_FLOAT: ctypes.c_float, C.PM_TYPE_DOUBLE: ctypes.c_double,
           C.PM_TYPE_STRING: ctypes.c_char_p}


def cparse(obj: Any, fmt: bytes, mtype: int, single: bool = False) -> Any:
    """CPython's own PyArg_Parse with cpmda's format, for exactly its conversions and
    exception texts (the fast path, _fast_value, covers the plain cases). Returns
    (value, code), or the one value when single; raises what PyArg_Parse raises."""
    value = _CTYPES[mtype]()
    if single:
        _PyArg_Parse(ctypes.py_object(obj), fmt, ctypes.byref(value))
        return value.value
    code = ctypes.c_int()
    _PyArg_Parse(ctypes.py_object(obj), fmt, ctypes.byref(value), ctypes.byref(code))
    got = value.value
    if mtype == C.PM_TYPE_U64 and got > _I64[1]:
        got -= 1 << 64
    return got, code.value


_PyArg_Parse = ctypes.pythonapi.PyArg_Parse
_PyArg_Parse.restype = ctypes.c_int


def _fast_value(result: Any, mtype: int) -> Any:
    """The value of a plain [value, 1] reply, converted as PyArg_Parse would, or None
    when anything about it is not plain (then cparse decides)."""
    if type(result) is not list or len(result) != 2 or result[1] != 1 or type(result[1]) is not int:
        return None
    value = result[0]
    kind = type(value)
    if mtype == C.PM_TYPE_32:
        if kind is int and _I32[0] <= value <= _I32[1]:
            return value
    elif mtype == C.PM_TYPE_U32:
        if kind is int:
            return value & 0xffffffff
    elif mtype == C.PM_TYPE_64:
        if kind is int and _I64[0] <= value <= _I64[1]:
            return value
    elif mtype == C.PM_TYPE_U64:
        if kind is int:
            value &= 0xffffffffffffffff
            return value - (1 << 64) if value > _I64[1] else value
    elif mtype == C.PM_TYPE_DOUBLE:
        if kind is float:
            return value
    elif mtype == C.PM_TYPE_STRING:
        if kind is str and "\0" not in value:
            try:
                return value.encode("utf-8")
            except UnicodeEncodeError:
                return None
    return None


def _type_str(mtype: int) -> str:
    from pcp._libpcp.strings import pmTypeStr
    return pmTypeStr(mtype)


def _with_flags(labels: Any, flags: int) -> list:
    return [(n, nl, f | flags, v, vl) for n, nl, f, v, vl in labels.entries()]


def _s32(v: int) -> int:
    v &= 0xffffffff
    return v - (1 << 32) if v & 0x80000000 else v


def _units_word(units: Any) -> int:
    """pmUnits (ctypes bitfields) as its 32-bit wire word."""
    if isinstance(units, int):
        return units & 0xffffffff
    return (((units.dimSpace & 0xf) << 28) | ((units.dimTime & 0xf) << 24) |
            ((units.dimCount & 0xf) << 20) | ((units.scaleSpace & 0xf) << 16) |
            ((units.scaleTime & 0xf) << 12) | ((units.scaleCount & 0xf) << 8))


def _atom_value(atom: Any, mtype: int) -> Any:
    if mtype == C.PM_TYPE_32:
        return atom.l
    if mtype == C.PM_TYPE_U32:
        return atom.ul
    if mtype == C.PM_TYPE_64:
        return atom.ll
    if mtype == C.PM_TYPE_U64:
        return atom.ull
    if mtype == C.PM_TYPE_FLOAT:
        return atom.f
    if mtype == C.PM_TYPE_DOUBLE:
        return atom.d
    if mtype == C.PM_TYPE_STRING:
        raw = atom.cp
        return raw.decode("utf-8", "surrogateescape") if isinstance(raw, bytes) else str(raw)
    return None


def _pdu_name(t: int) -> str:
    for name in dir(W):
        if name.startswith("PDU_") and getattr(W, name) == t:
            return name[4:]
    return "TYPE-%d" % t


AGENT = Agent()
