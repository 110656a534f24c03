"""The PMDAs behind LOCAL contexts: each one the daemon build of the DSO that the local
table names, run as a child process and spoken to over its stdin/stdout with pmcd's side
of the PMDA protocol (the same PDUs csrc/ frames for pcp.pmda's agent side).

libpcp dlopen()s the DSOs into the calling process; pcp-native has no libpcp to load them
into, so it starts ``$PCP_PMDAS_DIR/<name>/pmda<name> -d <domain>`` instead (the
executable PCP installs beside every ``pmda_<name>.so``). Children start on the first
request for their domain, are shared by every LOCAL context of the process, are started
again on the next request after one dies (the request that saw it die fails with
PM_ERR_NOAGENT, as pmcd answers for a dead agent), and leave when the process does (their
stdin closes; pmdaMain exits on end of file).

Thread safety: one request and its reply hold the agent's lock, so contexts of several
threads can share an agent; a context is serialized by its own lock (pcp._core.abc).
"""
from __future__ import annotations

import atexit
import os
import pwd
import select
import shutil
import struct
import subprocess
import tempfile
import threading
import time

from pcp._core import wire
from pcp._core.config import pmGetConfig
from pcp._core.constants import (PM_ERR_IPC, PM_ERR_NOAGENT, PM_ERR_PMDANOTREADY,
                                 PM_ERR_PMDAREADY, PMDA_ATTR_CONTAINER, PMDA_ATTR_GROUPID,
                                 PMDA_ATTR_PROCESSID, PMDA_ATTR_USERID)
from pcp._core.errors import pmErr, pmflush, pmprintf
from pcp._decode import pdu as codec
from pcp._pmda.wire import Request

TYPE_CHECKING = False      # typing's, without importing typing (a start's cost)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Tuple

# pmcd waits this long for a PMDA's reply (pmcd -t, default 5 s) before giving up on it
_DEFAULT_TIMEOUT = 5.0
# and for a new PMDA's credentials (pmcd -q, 3 s); a PMDA written in Python on a loaded
# machine can take longer to start, and a LOCAL client has no pmcd log to explain it
_START_TIMEOUT = 10.0
_HEADER = struct.Struct(">iii")


def agent_timeout() -> float:
    """Seconds to wait for a PMDA's reply: $PCP_NATIVE_AGENT_TIMEOUT, else pmcd's 5."""
    try:
        value = float(os.environ.get("PCP_NATIVE_AGENT_TIMEOUT", ""))
        return value if value > 0 else _DEFAULT_TIMEOUT
    except ValueError:
        return _DEFAULT_TIMEOUT


class AgentDied(Exception):
    """The child went away (or stopped answering) during an exchange."""


# Where a DSO differs from its daemon build in what reaches a client. The sample PMDA's
# DSO (sampledso) reads its help text from dsohelp, whose entries carry the DSO's domain,
# and names its dynamic metrics sampledso.*; the daemon reads help and says sample.*.
# The daemon is given a PMDAs directory in which sample/help.* are dsohelp.*, and the
# names it answers are renamed.
_PERSONALITY = {"sample": {"help": "dsohelp", "rename": (b"sample.", b"sampledso."),
                           "later": ("dynamic.indom",)}}
# Init routines that are not their DSO's own but that its daemon build serves under
# another program name: pmda_mmv.so's pmproxy_init is the MMV reader with the "pmproxy"
# prefix (pmproxy's own files under $PCP_TMP_DIR/pmproxy), which pmdammv's main() becomes
# when its program name is pmdapmproxy.
_PROGRAM_NAME_OF_INIT = {("mmv", "pmproxy_init"): "pmdapmproxy"}
# a command's argv[0] -> the file to run, where they differ (_PROGRAM_NAME_OF_INIT)
_EXECUTABLES: Dict[str, str] = {}


class Agent:
    """One PMDA child: started on demand, restarted after it dies."""

    def __init__(self, domain: int, label: str, argv: List[str], table_name: str = "") -> None:
        self.domain = domain
        self.label = label              # the DSO's path
        self.table_name = table_name or label   # the DSO as the local table names it
        self.argv = argv
        stem = _stem(label)
        personality = _PERSONALITY.get(stem, {})
        self.rename: Optional[Tuple[bytes, bytes]] = personality.get("rename")
        self._help = personality.get("help")
        self.lock = threading.RLock()
        self.proc: Optional[subprocess.Popen] = None
        self.flags = 0
        self.ready = True
        # (context, profile identity, profile version) the child was last sent
        self.profile_of: Optional[Tuple[int, int, int]] = None
        self._pending = bytearray()     # bytes read past the last whole PDU
        self._handshaken = False

    # ---- lifetime ----------------------------------------------------------------------

    @property
    def pid(self) -> Optional[int]:
        return self.proc.pid if self.proc is not None else None

    def _spawn(self) -> None:
        """Start the child; its credentials are read by _handshake."""
        logdir = _log_dir()
        log = open(os.path.join(logdir, "%s.stderr" % os.path.basename(self.argv[0])), "ab")
        env = None
        if self._help is not None:
            env = dict(os.environ, PCP_PMDAS_DIR=_dso_help_overlay(self.label, self._help))
        try:
            # cwd is the log directory: a PMDA's default log file name is relative, as
            # pmcd starts them from its own log directory
            self.proc = subprocess.Popen(self.argv, executable=_EXECUTABLES.get(self.argv[0]),
                                         stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=log, cwd=logdir,
                                         close_fds=True, bufsize=0, env=env)
        except OSError as err:
            raise pmErr(-(err.errno or 2)) from None
        finally:
            log.close()
        self._handshaken = False
        self._pending = bytearray()
        self.ready = True
        self.profile_of = None

    def _handshake(self, ctx: int) -> None:
        """The child's credentials, pmcd's answer, and the attributes it asks for."""
        try:
            ptype, pdu = self._read(max(agent_timeout(), _START_TIMEOUT))
            if ptype != wire.PDU_CREDS:
                raise AgentDied()
            creds = Request(pdu)
            self.flags = creds.b
            # pmcd's answer: its PDU version and the one flag it honours
            self._write(codec.encode_creds(os.getpid(), self.flags & wire.FEATURE_AUTH))
            if self.flags & wire.FEATURE_AUTH:    # it wants the clients' attributes
                for attr, value in _attributes():
                    self._write(codec.encode_attr(ctx, attr, value))
        except (AgentDied, pmErr):
            self.stop()
            raise pmErr(PM_ERR_NOAGENT) from None
        self._handshaken = True

    def prestart(self) -> None:
        """Start the child if it is not running (the caller holds `lock`): children a
        fetch needs start side by side, each handshake waits for its own."""
        if self.proc is None or self.proc.poll() is not None:
            self.stop()
            try:
                self._spawn()
            except pmErr:
                pass                    # send() tries again and reports it

    def stop(self) -> None:
        """End the child: end of file on its stdin, then a kill if it lingers."""
        proc, self.proc = self.proc, None
        self.profile_of = None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def _alive(self, ctx: int) -> None:
        if self.proc is None or self.proc.poll() is not None:
            self.stop()
            self._spawn()
        if not self._handshaken:
            self._handshake(ctx)

    # ---- the pipe ------------------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        fd = self.proc.stdin.fileno()
        view = memoryview(data)
        try:
            while view:
                n = os.write(fd, view)
                view = view[n:]
        except OSError:
            raise AgentDied() from None

    def _fill(self, need: int, deadline: float) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while len(self._pending) < need:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise AgentDied()
            try:
                chunk = os.read(fd, max(need - len(self._pending), 65536))
            except OSError:
                raise AgentDied() from None
            if not chunk:
                raise AgentDied()
            self._pending += chunk

    def _read(self, timeout: float) -> Tuple[int, bytes]:
        """One whole PDU from the child (its length checked before it is read)."""
        deadline = time.monotonic() + timeout
        self._fill(12, deadline)
        length, ptype, _ = _HEADER.unpack_from(self._pending)
        if length < 12 or length > wire.PDU_MAX_LEN:
            raise AgentDied()
        self._fill(length, deadline)
        pdu = bytes(self._pending[:length])
        del self._pending[:length]
        return ptype, pdu

    def _poll_ready(self) -> None:
        """A PMDA that answered PM_ERR_PMDANOTREADY says when it is ready again with an
        unsolicited ERROR PDU of PM_ERR_PMDAREADY: take any that has arrived."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while not self.ready and (self._pending or select.select([fd], [], [], 0)[0]):
            ptype, pdu = self._read(agent_timeout())
            if ptype == wire.PDU_ERROR and codec.decode_error(pdu) == PM_ERR_PMDAREADY:
                self.ready = True

    # ---- requests ------------------------------------------------------------------------

    def exchange(self, ctx: int, request: bytes,
                 profile: Optional[Tuple[Tuple[int, int, int], bytes]] = None) -> Tuple[int, bytes]:
        """Send `request` (after the context's profile, when the child has another one) and
        return the reply PDU (type, bytes); PM_ERR_NOAGENT when the child cannot be started
        or dies, PM_ERR_PMDANOTREADY while it says it is not ready."""
        with self.lock:
            self.send(ctx, request, profile)
            return self.receive()

    def send(self, ctx: int, request: bytes,
             profile: Optional[Tuple[Tuple[int, int, int], bytes]] = None) -> None:
        """The first half of exchange (the caller holds `lock` until receive): requests to
        several agents can be out at once, so their PMDAs work at the same time."""
        self._alive(ctx)
        try:
            if not self.ready:
                self._poll_ready()
                if not self.ready:
                    raise pmErr(PM_ERR_PMDANOTREADY)
            if profile is not None and self.profile_of != profile[0]:
                self._write(profile[1])
                self.profile_of = profile[0]
            self._write(request)
        except AgentDied:
            self.stop()
            raise pmErr(PM_ERR_NOAGENT) from None

    def receive(self) -> Tuple[int, bytes]:
        """The reply to the request send() wrote."""
        try:
            ptype, pdu = self._read(agent_timeout())
        except AgentDied:
            self.stop()
            raise pmErr(PM_ERR_NOAGENT) from None
        if ptype == wire.PDU_ERROR:
            try:
                code = codec.decode_error(pdu)
            except pmErr:
                self.stop()
                raise pmErr(PM_ERR_IPC) from None
            if code == PM_ERR_PMDANOTREADY:
                self.ready = False
        return ptype, pdu

    def forget_context(self, ctx: int) -> None:
        """A context closed: its handle may come back for another context's profile."""
        with self.lock:
            if self.profile_of is not None and self.profile_of[0] == ctx:
                self.profile_of = None


def _attributes() -> List[Tuple[int, bytes]]:
    """The connection attributes libpcp hands a DSO that asks for them (build_dsoattrs),
    as their NUL-terminated strings."""
    out = [(PMDA_ATTR_USERID, b"%d\0" % os.getuid()), (PMDA_ATTR_GROUPID, b"%d\0" % os.getgid()),
           (PMDA_ATTR_PROCESSID, b"%d\0" % os.getpid())]
    container = os.environ.get("PCP_CONTAINER")
    if container is not None:
        out.append((PMDA_ATTR_CONTAINER, container.encode() + b"\0"))
    return out


# ---- the process's children ----------------------------------------------------------------

_lock = threading.Lock()
_agents: Dict[Tuple[int, str], Agent] = {}
_logdir: Optional[str] = None
_own_logdir = False


def _log_dir() -> str:
    """Where the children's logs go: $PCP_NATIVE_LOCAL_LOGDIR (kept), else a private
    directory removed when the process exits."""
    global _logdir, _own_logdir  # pylint: disable=global-statement
    with _lock:
        if _logdir is None or not os.path.isdir(_logdir):
            chosen = os.environ.get("PCP_NATIVE_LOCAL_LOGDIR")
            if chosen:
                os.makedirs(chosen, exist_ok=True)
                _logdir, _own_logdir = chosen, False
            else:
                _logdir, _own_logdir = tempfile.mkdtemp(prefix="pcp-local-"), True
                # a PMDA that switches to the pcp user still has to reach the links in it
                os.chmod(_logdir, 0o711)
        return _logdir


def agent_for(domain: int, label: str, argv: List[str], table_name: str = "") -> Agent:
    """The process's agent for this table entry (made once, started on first use)."""
    key = (domain, " ".join(argv))
    with _lock:
        agent = _agents.get(key)
        if agent is None:
            agent = _agents[key] = Agent(domain, label, argv, table_name)
        return agent


def running() -> List[Agent]:
    with _lock:
        return [a for a in _agents.values() if a.proc is not None]


def forget_context(ctx: int) -> None:
    for agent in running():
        agent.forget_context(ctx)


def _forked() -> None:
    """In a child of fork(): the parent's PMDA children stay the parent's. Forget them
    (closing only this process's copies of their pipes), so this process starts its own
    on first need instead of reading replies meant for the parent."""
    global _lock  # pylint: disable=global-statement
    _lock = threading.Lock()
    for agent in _agents.values():
        agent.lock = threading.RLock()
        proc, agent.proc = agent.proc, None
        agent.profile_of = None
        if proc is not None:
            for stream in (proc.stdin, proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass


os.register_at_fork(after_in_child=_forked)


@atexit.register
def shutdown() -> None:
    """Stop every child (the process is leaving) and remove a private log directory."""
    global _logdir  # pylint: disable=global-statement
    with _lock:
        agents = list(_agents.values())
    for agent in agents:
        # a thread left in a request holds its agent: wait a little, then stop it anyway
        held = agent.lock.acquire(timeout=2)
        try:
            agent.stop()
        finally:
            if held:
                agent.lock.release()
    if _logdir is not None and _own_logdir:
        shutil.rmtree(_logdir, ignore_errors=True)
        _logdir = None


def _stem(dso: str) -> str:
    """"sample" of .../pmda_sample.so."""
    base = os.path.basename(dso)
    stem = base[:-3] if base.endswith(".so") else base
    return stem[5:] if stem.startswith("pmda_") else stem


def _dso_help_overlay(dso: str, help_name: str) -> str:
    """A PMDAs directory for a daemon that should read the DSO's help file: its own
    directory's entries linked, help.dir/help.pag linked to the DSO's."""
    real = os.path.dirname(dso)
    stem = _stem(dso)
    top = os.path.join(_log_dir(), "pmdas")
    mine = os.path.join(top, os.path.basename(real))
    if not os.path.isdir(mine):
        os.makedirs(mine)
        names = set(os.listdir(real)) | set(_PERSONALITY.get(stem, {}).get("later", ()))
        for name in names:
            target = os.path.join(real, name)
            if name in ("help.dir", "help.pag"):
                target = os.path.join(real, help_name + name[4:])
            os.symlink(target, os.path.join(mine, name))
        # the rest of $PCP_PMDAS_DIR as it is, for whatever else the PMDA reads there
        pmdas = pmGetConfig("PCP_PMDAS_DIR") or ""
        for name in os.listdir(pmdas) if os.path.isdir(pmdas) else ():
            if not os.path.exists(os.path.join(top, name)):
                os.symlink(os.path.join(pmdas, name), os.path.join(top, name))
    return top


def daemon_argv(domain: int, dso: str, init: Optional[str]) -> Optional[List[str]]:
    """The command that serves what the DSO at path `dso` (resolved) would: its daemon
    build, ``pmda<name>`` beside ``pmda_<name>.so``, with the DSO's domain. None (and
    libpcp's warning for a DSO it cannot attach, with the reason) when there is none, or
    the init routine is neither the DSO's own nor one its daemon serves under another
    program name (pmproxy_init in pmda_mmv.so: pmdammv run as pmdapmproxy)."""
    base = os.path.basename(dso)
    stem = _stem(dso)
    daemon = os.path.join(os.path.dirname(dso), "pmda" + stem)
    program_name = _PROGRAM_NAME_OF_INIT.get((stem, init or ""))
    reason = None
    if init is not None and init != stem + "_init" and program_name is None:
        reason = ("pcp-native runs %s as its daemon build, which cannot serve init "
                  "routine \"%s\"" % (base, init))
    elif not os.access(daemon, os.X_OK):
        reason = "pcp-native found no daemon build of this PMDA (%s)" % daemon
    if reason is not None:
        pmprintf("__pmConnectLocal: Warning: error attaching DSO \"%s\"\n%s\n\n" % (dso, reason))
        pmflush()
        return None
    argv = [daemon, "-d", str(domain)]
    if program_name is not None:
        argv[0] = os.path.join(os.path.dirname(dso), program_name)
        _EXECUTABLES[argv[0]] = daemon
    # a daemon PMDA switches to the pcp user (only root may); a DSO runs as its caller,
    # and reads what the caller may (an MMV file of root's in a private $PCP_TMP_DIR):
    # the daemon stays as we are
    try:
        argv += ["-U", pwd.getpwuid(os.getuid()).pw_name]
    except KeyError:
        pass
    return argv


def resolve_dso(name: Optional[str]) -> Optional[str]:
    """__pmConnectLocal's search for a DSO: the name, then under $PCP_PMDAS_DIR, each also
    with ".so"; None (and libpcp's warning) when none exists."""
    pmdas = pmGetConfig("PCP_PMDAS_DIR") or ""
    name = name or ""
    for path in (name, os.path.join(pmdas, name), os.path.join(pmdas, name) + ".so"):
        if name and os.access(path, os.F_OK):
            return path
    last = name + ".so"
    if name and os.access(last, os.F_OK):
        return last
    pmprintf("__pmConnectLocal: Warning: cannot find DSO at \"%s\" or \"%s\"\n" % (last, name))
    pmflush()
    return None
