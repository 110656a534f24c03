"""libpcp's command-line services (pmGetOptions, pmUsageMessage and the pmOptions
structure behind them), as libpcp 6.0.3 and the official binding's cpmapi module keep
them: one process-wide pmOptions (`OPTIONS`), reset by pmResetAllOptions, filled in by
the pmSet* calls, the PCP_* environment and the command line, read by the getters.

What needs a context (the time window against the archives' bounds, the reporting
zone) is finished by `context_options`, given the context's bounds and zone as
callables, so this floor needs no context code.
"""
from __future__ import annotations

import os
import sys

from pcp._core.cint import wrap_int32
from pcp._core.config import pmGetConfig
from pcp._core.constants import (PM_CONTEXT_ARCHIVE, PM_CONTEXT_HOST, PM_CONTEXT_LOCAL,
                                 PM_ERR_APPVERSION, PM_ERR_CONV, PM_ERR_GENERIC, PM_ERR_INDOM,
                                 PM_OPTFLAG_BOUNDARIES, PM_OPTFLAG_DONE, PM_OPTFLAG_ENV_ONLY,
                                 PM_OPTFLAG_EXIT, PM_OPTFLAG_INIT, PM_OPTFLAG_MIXED,
                                 PM_OPTFLAG_MULTI, PM_OPTFLAG_NOFLUSH, PM_OPTFLAG_RUNTIME_ERR,
                                 PM_OPTFLAG_STDOUT_TZ, PM_OPTFLAG_USAGE_ERR, PMAPI_VERSION_2,
                                 PMAPI_VERSION_3)
from pcp._core.errors import (pmErr, pmErrStr, pmflush, pmGetProgname, pmprintf, pmSetProgname,
                              print_callback_error)
# PCP_VERSION: the release whose behaviour (and "-V" text) this process reproduces
from pcp._core.level import API_LEVEL, PCP_VERSION
from pcp._libpcp import getopt as _getopt
from pcp._libpcp.getopt import EOF, GetoptState, LongOption, set_fields

# pcp._core.intervals (re) and pcp._libpcp.timewindow (zones, ctypes) are imported where
# an option needs them: a usage message (`-?`) and most command lines need neither
TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, Callable, List, Optional, Set, Tuple, Union
    Stamp = Tuple[int, int]
    # (label start, end) of archive i; the end is pmGetArchiveEnd's error code (an int)
    # when it fails
    Bounds = Callable[[int], Tuple[Stamp, Union[Stamp, int]]]

PMAPI_OPTIONS = "A:a:D:gh:n:O:p:S:s:T:t:VZ:z?"

# libpcp's standard options (pmapi.h's PMOPT_*), by the name of their setter
STANDARD = {
    "Align": LongOption("align", 1, "A", "TIME", "align sample times on natural boundaries"),
    "Archive": LongOption("archive", 1, "a", "FILE",
                          "metrics source is a PCP archive" if API_LEVEL >= (7, 2)
                          else "metrics source is a PCP log archive"),
    # 7.x's usage message shows -D (6.x's hides it)
    "Debug": LongOption("debug", 1, "D", "DBG", "set debug options, see pmdbg(1)"
                        if API_LEVEL >= (7, 2) else None),
    "GuiMode": LongOption("guimode", 0, "g", None, "start in GUI mode with new time control"),
    "Host": LongOption("host", 1, "h", "HOST", "metrics source is PMCD on host"),
    "HostsFile": LongOption("hostsfile", 1, "H", "FILE", "read metric source hosts from a file"),
    "SpecLocal": LongOption("spec-local", 1, "K", "SPEC",
                            "optional additional PMDA spec for local connection"),
    "LocalPMDA": LongOption("local-PMDA", 0, "L", None,
                            "metrics source is local connection to a PMDA"),
    "Namespace": LongOption("namespace", 1, "n", "FILE", "use an alternative PMNS"),
    "UniqNames": LongOption("uniqnames", 1, "N", "FILE",
                            "like -n but only one name allowed for each PMID"),
    "Origin": LongOption("origin", 1, "O", "TIME", "initial sample time within the time window"),
    "GuiPort": LongOption("guiport", 1, "p", "N", "port for connection to existing time control"),
    "Start": LongOption("start", 1, "S", "TIME", "start of the time window"),
    "Samples": LongOption("samples", 1, "s", "N", "terminate after this many samples"),
    "Finish": LongOption("finish", 1, "T", "TIME", "end of the time window"),
    "Interval": LongOption("interval", 1, "t", "DELTA", "sampling interval"),
    "Version": LongOption("version", 0, "V", None, "display version number and exit"),
    "TimeZone": LongOption("timezone", 1, "Z", "TZ", "set reporting timezone"),
    "HostZone": LongOption("hostzone", 0, "z", None,
                           "set reporting timezone to local time of metrics source"),
    "Help": LongOption("help", 0, "?", None, "show this usage message and exit"),
    "ArchiveList": LongOption("archive-list", 1, "", "FILES",
                              "comma-separated list of metric source archives"),
    "ArchiveFolio": LongOption("archive-folio", 1, "", "FILE",
                               "read metric source archives from a folio"),
    "HostList": LongOption("host-list", 1, "", "HOSTS",
                           "comma-separated list of metric source hosts"),
    "Container": LongOption("container", 1, "", "NAME",
                            "specify an individual container to be queried"),
    "Derived": LongOption("derived", 1, "", "FILE", "load derived metric definitions from FILE(s)"),
}

# the name libpcp's -t and the binding's pmSetOptionInterval give their interval parser in
# their messages: 7.x's pmParseInterval gives the timespec 6.x's pmParseHighResInterval gave
INTERVAL_PARSER = "pmParseInterval" if API_LEVEL >= (7, 2) else "pmParseHighResInterval"

# libpcp's debug option names (pmdbg -l), for checking -D / PCP_DEBUG
DEBUG_NAMES = frozenset((
    "pdu", "fetch", "profile", "value", "context", "indom", "pdubuf", "log", "logmeta",
    "optfetch", "af", "appl0", "appl1", "appl2", "pmns", "libpmda", "timecontrol", "pmc",
    "derive", "lock", "interp", "config", "pmapi", "fault", "auth", "discovery", "attr",
    "http", "desperate", "deprecated", "exec", "labels", "series", "libweb", "alloc",
    "services", "appl3", "appl4", "appl5", "access", "qa", "search", "query", "compress",
    "dev0", "dev1", "dev2", "pmlc", "appl6", "appl7", "appl8", "appl9", "tls")
    + (("misc", "qed", "getopt") if API_LEVEL >= (7, 2) else ()))

# The debug options pmSetDebug has set (7.x's binding: pmSetDebug, pmDebug(names))
DEBUG_ENABLED: Set[str] = set()


def debug_options(spec: str, action: str) -> int:
    """libpcp 7.x's pmSetDebug ("set"), pmClearDebug ("clear") and pmDebug ("test") on
    a comma-separated list of option names (any case) or "all": "test" gives 1 when any
    named option (for "all": every option) is set, else 0; the others give 0, or
    PM_ERR_CONV for an unknown name, and then change nothing."""
    global DEBUG_ENABLED  # pylint: disable=global-statement
    state = set(DEBUG_ENABLED)
    p = 0
    while p < len(spec):
        end = spec.find(",", p)
        end = len(spec) if end < 0 else end
        name = spec[p:end].lower()
        if name == "all":
            if action == "test":
                return int(DEBUG_ENABLED >= DEBUG_NAMES)
            state = set(DEBUG_NAMES) if action == "set" else set()
        elif name in DEBUG_NAMES:
            if action == "test" and name in DEBUG_ENABLED:
                return 1
            if action == "set":
                state.add(name)
            else:
                state.discard(name)
        else:
            return PM_ERR_CONV
        p = end + 1 if end < len(spec) else end
    if action != "test":
        DEBUG_ENABLED = state
    return 0


class Options(GetoptState):
    """libpcp's pmOptions: what the caller declares, getopt's state, and the results.
    Any field may be given by keyword (a plain class: dataclasses costs milliseconds of
    start-up in every tool)."""

    def __init__(self, **fields: Any) -> None:
        super().__init__()
        self.version = PMAPI_VERSION_3
        self.short_usage: Optional[str] = None
        self.override: Optional[Callable[[int], int]] = None
        self.errors = 0
        self.context = 0
        self.hosts: List[str] = []
        self.archives: List[str] = []
        self.start: Stamp = (0, 0)
        self.finish: Stamp = (0, 0)
        self.origin: Stamp = (0, 0)
        self.interval: Stamp = (0, 0)
        self.align_optarg: Optional[str] = None
        self.start_optarg: Optional[str] = None
        self.finish_optarg: Optional[str] = None
        self.origin_optarg: Optional[str] = None
        self.guiport_optarg: Optional[str] = None
        self.timezone: Optional[str] = None
        self.samples = 0
        self.guiport = 0
        self.guiflag = 0
        self.tzflag = 0
        self.Lflag = 0
        self.nsflag = 0
        self.argv: List[str] = []
        set_fields(self, fields)


def strtol_int(text: str) -> Tuple[int, bool]:
    """(int)strtol(text, &end, 10) and whether the whole text was read (libpcp's check)."""
    from pcp._core.intervals import strtol_prefix

    end, value = strtol_prefix(text, 0)
    return wrap_int32(value), end == len(text)


# ---------------------------------------------------------------------------
# The option handlers (libpcp's __pmSet* / __pmAddOpt*)
# ---------------------------------------------------------------------------
def _debug_spec_ok(spec: str) -> bool:
    """libpcp's pmSetDebug check: comma-separated option names (any case), "all", or
    numbers (old-style bit fields); an empty item or an unknown name is refused."""
    from pcp._core.intervals import strtol_prefix

    p = 0
    while p < len(spec):
        k, _ = strtol_prefix(spec, p)
        if k > p:                       # a number
            if spec[k:k + 1] == ",":
                p = k + 1
                continue
            return k == len(spec)
        end = spec.find(",", p)
        end = len(spec) if end < 0 else end
        name = spec[p:end].lower()
        if name != "all" and name not in DEBUG_NAMES:
            return False
        p = end + 1 if end < len(spec) else end
    return True


def set_debug(opts: Options, spec: str) -> None:
    """-D / --debug / PCP_DEBUG."""
    if not _debug_spec_ok(spec):
        pmprintf("%s: unrecognized debug options specification (%s)\n" % (pmGetProgname(), spec))
        opts.errors += 1


def _set_gui_mode(opts: Options) -> None:
    if opts.guiport_optarg is not None:
        pmprintf("%s: at most one of -g and -p allowed\n" % pmGetProgname())
        opts.errors += 1
    else:
        opts.guiflag = 1


def _set_gui_port(opts: Options, arg: str) -> None:
    if opts.guiflag:
        pmprintf("%s: at most one of -g and -p allowed\n" % pmGetProgname())
        opts.errors += 1
    else:
        opts.guiport_optarg = arg
        port, whole = strtol_int(arg)
        opts.guiport = port if whole and port >= 0 else 0


def _add_archive_name(opts: Options, arg: str) -> None:
    """One archive, no duplicates: a list of names with PM_OPTFLAG_MULTI, else one
    comma-separated list (one context over several archives)."""
    if opts.flags & PM_OPTFLAG_MULTI:
        if arg not in opts.archives:
            opts.archives.append(arg)
        return
    if not opts.archives:
        opts.archives = [arg]
        return
    joined = opts.archives[0]
    found = joined.find(arg)
    if found >= 0 and (found == 0 or joined[found - 1] == ","):
        after = joined[found + len(arg):found + len(arg) + 1]
        if after in (",", ""):
            return          # libpcp checks only the first place the name occurs
    opts.archives[0] = joined + "," + arg


def add_archive(opts: Options, arg: str) -> None:
    """-a / --archive / PCP_ARCHIVE / pmSetOptionArchive."""
    if opts.hosts and not opts.flags & PM_OPTFLAG_MIXED:
        pmprintf("%s: only one host or archive allowed\n" % pmGetProgname())
        opts.errors += 1
    else:
        _add_archive_name(opts, arg)


def add_archive_path(opts: Options) -> None:
    """The local host's pmlogger directory, for -O with no archive named."""
    logdir = pmGetConfig("PCP_ARCHIVE_DIR") or "/var/log/pcp/pmlogger"
    try:
        hostname = os.uname().nodename
    except OSError:
        hostname = "localhost"
    _add_archive_name(opts, "%s/%s" % (logdir, hostname))


def add_archive_list(opts: Options, arg: str) -> None:
    """--archive-list / PCP_ARCHIVE_LIST / pmSetOptionArchiveList."""
    if opts.hosts and not opts.flags & PM_OPTFLAG_MIXED:
        pmprintf("%s: only one of hosts or archives allowed\n" % pmGetProgname())
        opts.errors += 1
        return
    if not opts.flags & PM_OPTFLAG_MULTI:
        add_archive(opts, arg)
        return
    for name in arg.split(",") if arg else []:
        add_archive(opts, name)


def add_archive_folio(opts: Options, arg: Optional[str]) -> None:
    """--archive-folio / PCP_FOLIO / pmSetOptionArchiveFolio: the archives a PCPFolio file
    lists, relative to the folio's directory."""
    if opts.hosts and not opts.flags & PM_OPTFLAG_MIXED:
        pmprintf("%s: only one of hosts or archives allowed\n" % pmGetProgname())
        opts.errors += 1
        return
    if arg is None:
        pmprintf("%s: cannot open empty archive folio name\n" % pmGetProgname())
        opts.flags |= PM_OPTFLAG_RUNTIME_ERR
        opts.errors += 1
        return
    try:
        with open(arg, "rb") as folio:
            lines = folio.read().decode("utf-8", "surrogateescape").splitlines(True)
    except OSError as err:
        pmprintf("%s: cannot open archive folio %s: %s\n"
                 % (pmGetProgname(), arg, pmErrStr(-(err.errno or 1))))
        opts.flags |= PM_OPTFLAG_RUNTIME_ERR
        opts.errors += 1
        return
    problem = None
    if not lines:
        problem = "archive folio %s has no header" % arg
    elif not lines[0].startswith("PCPFolio"):
        problem = "archive folio %s has bad magic" % arg
    elif len(lines) < 2:
        problem = "archive folio %s has no version" % arg
    elif not lines[1].startswith("Version: 1"):
        problem = "unknown version archive folio %s" % arg
    directory = os.path.dirname(arg) or "."
    for number, line in enumerate(lines[2:] if problem is None else [], start=3):
        if not line.startswith("Archive:"):
            continue
        words = line.split()
        if len(words) < 2:
            problem = "missing host on archive folio line %d" % number
            break
        if len(words) < 3:
            problem = "missing path on archive folio line %d" % number
            break
        path = words[2]
        add_archive(opts, path if path.startswith("/") else "%s/%s" % (directory, path))
    if problem is not None:
        pmprintf("%s: %s\n" % (pmGetProgname(), problem))
        opts.flags |= PM_OPTFLAG_RUNTIME_ERR
        opts.errors += 1
        return
    if len(opts.archives) > 1 and not opts.flags & PM_OPTFLAG_MULTI:
        pmprintf("%s: too many archives requested: %s\n" % (pmGetProgname(), arg))
        opts.errors += 1


def add_host(opts: Options, arg: str) -> None:
    """-h / --host / PCP_HOST / pmSetOptionHost."""
    if opts.hosts and not opts.flags & PM_OPTFLAG_MULTI:
        pmprintf("%s: too many hosts requested: %s\n" % (pmGetProgname(), arg))
        opts.errors += 1
    elif opts.archives and not opts.flags & PM_OPTFLAG_MIXED:
        pmprintf("%s: only one host or archive allowed\n" % pmGetProgname())
        opts.errors += 1
    else:
        opts.hosts.append(arg)


def add_host_file(opts: Options, arg: str) -> None:
    """-H / --hostsfile: one host per line, blank lines and # comments skipped."""
    if opts.archives and not opts.flags & PM_OPTFLAG_MIXED:
        pmprintf("%s: only one of hosts or archives allowed\n" % pmGetProgname())
        opts.errors += 1
        return
    try:
        with open(arg, "rb") as hostsfile:
            lines = hostsfile.read().decode("utf-8", "surrogateescape").splitlines()
    except OSError as err:
        pmprintf("%s: cannot open hosts file %s: %s\n"
                 % (pmGetProgname(), arg, os.strerror(err.errno or 1)))
        opts.flags |= PM_OPTFLAG_RUNTIME_ERR
        opts.errors += 1
        return
    for line in lines:
        text = line.lstrip()
        if not text or text[0] == "#":
            continue
        if opts.hosts and not opts.flags & PM_OPTFLAG_MULTI:
            pmprintf("%s: too many hosts requested: %s\n" % (pmGetProgname(), arg))
            opts.errors += 1
            break
        opts.hosts.append(text.split("#", 1)[0].split()[0])


def add_host_list(opts: Options, arg: str) -> None:
    """--host-list / PCP_HOST_LIST / pmSetOptionHostList."""
    if opts.archives and not opts.flags & PM_OPTFLAG_MIXED:
        pmprintf("%s: only one of hosts or archives allowed\n" % pmGetProgname())
        opts.errors += 1
    else:
        opts.hosts.extend(name for name in arg.split(",") if name)
    if len(opts.hosts) > 1 and not opts.flags & PM_OPTFLAG_MULTI:
        pmprintf("%s: too many hosts requested: %s\n" % (pmGetProgname(), arg))
        opts.errors += 1


def set_container(opts: Options, arg: Optional[str]) -> None:
    """--container / pmSetOptionContainer: libpcp passes it on through $PCP_CONTAINER."""
    os.environ["PCP_CONTAINER"] = arg or ""


def spec_local_error(spec: str) -> Optional[str]:
    """libpcp's pmSpecLocalPMDA check of "add,DOMAIN,PATH,INIT", "del,DOMAIN[,PATH]" or
    "clear": None, or its complaint."""
    from pcp._core.intervals import strtol_prefix

    if spec.startswith("add"):
        op, rest = "add", spec[3:]
    elif spec.startswith("del"):
        op, rest = "del", spec[3:]
    elif spec.startswith("clear"):
        if spec != "clear":
            return "unexpected text after clear op in spec"
        _LOCAL_PMDAS.change("clear", -1, None)
        return None
    else:
        return "bad op in spec"
    if not rest.startswith(","):
        return "expected , after op in spec"
    rest = rest[1:]
    if rest == "":
        return "missing domain in spec"
    domain = -1
    if not rest.startswith(","):
        end, domain = strtol_prefix(rest, 0)
        if rest[end:end + 1] not in (",", "") or not 0 <= domain <= 510:
            return "bad domain in spec"
        rest = rest[end + 1:] if rest[end:end + 1] == "," else ""
    else:
        if op != "del":
            return "missing domain in spec"
        rest = rest[1:]
    path = init = None
    if rest.startswith(","):
        init = rest[1:] or None         # no path; an init routine alone is allowed
    elif rest:
        path, comma, init = rest.partition(",")
        if (not comma or not init) and op != "del":
            return "missing init-routine in spec"
        init = init or None
    elif op != "del":
        return "missing dso-path in spec"
    if domain == -1 and path is None:
        return "missing domain and dso-path in spec"
    sts = _LOCAL_PMDAS.change(op, domain, path, init)
    if sts < 0:
        return "__pmLocalPMDA: %s" % pmErrStr(sts)
    return None


class _LocalPMDAs:
    """libpcp's table of DSO PMDAs for a local context: pmcd.conf's "dso" lines (pmcd's
    own left out, the linux PMDA's DSO put in), then what -K adds, deletes and clears."""

    def __init__(self) -> None:
        self.table: Optional[List[List[Any]]] = None  # [domain, path, init], unread yet

    def _build(self) -> None:
        """build_dsotab: the table from pmcd.conf, once. A file that cannot be read
        fails the first local context (-errno) and leaves the table empty, not unread
        (libpcp sets its count before it opens the file, so later contexts open)."""
        table: List[List[Any]] = []
        self.table = table
        path = pmGetConfig("PCP_PMCDCONF_PATH")
        pmdas = pmGetConfig("PCP_PMDAS_DIR")
        if path is None or pmdas is None:
            raise pmErr(PM_ERR_GENERIC)
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as conf:
                lines = conf.read().split("\n")
        except OSError as err:
            raise pmErr(-(err.errno or 2)) from None
        for line in lines:
            if line.startswith("#") or line.startswith("pmcd"):
                continue
            if line.startswith("linux"):
                table.append([60, "%s/linux/pmda_linux.so" % pmdas, "linux_init"])
                continue
            words = line.split()
            if len(words) >= 5 and words[2].startswith("dso"):
                domain, _ = strtol_int(words[1])
                table.append([domain, words[4], words[3]])

    def entries(self) -> List[Tuple[int, Optional[str], Optional[str]]]:
        """The table as a local context sees it: (domain, DSO path, init routine) of each
        entry not deleted, in table order (pmcd.conf's first)."""
        if self.table is None:
            self._build()
        assert self.table is not None
        return [(e[0], e[1], e[2]) for e in self.table if e[0] != -1]

    def change(self, op: str, domain: int, path: Optional[str],
               init: Optional[str] = None) -> int:
        """Apply one "add" / "del" / "clear": 0, PM_ERR_INDOM when a "del" matched
        nothing, or why the table could not be read."""
        if op == "clear":
            self.table = []
            return 0
        if self.table is None:
            try:
                self._build()
            except pmErr as err:
                return err.code
        assert self.table is not None
        if op == "add":
            self.table.append([domain, path, init])
            return 0
        found = False
        for entry in self.table:
            if (domain != -1 and entry[0] == domain) or (path is not None and entry[1] == path):
                entry[0] = -1
                found = True
        return 0 if found else PM_ERR_INDOM


_LOCAL_PMDAS = _LocalPMDAs()


def local_table() -> List[Tuple[int, Optional[str], Optional[str]]]:
    """(domain, DSO path, init routine) of each PMDA a local context has, in table order."""
    return _LOCAL_PMDAS.entries()


def set_local_table(opts: Options, arg: str) -> None:
    """-K / --spec-local / PCP_SPECLOCAL: checked as libpcp checks the specification,
    then applied to the table of PMDAs local contexts use."""
    problem = spec_local_error(arg)
    if problem is not None:
        pmprintf("%s: pmSpecLocalPMDA failed: %s\n" % (pmGetProgname(), problem))
        opts.errors += 1


def set_local_flag(opts: Options) -> None:
    """-L / --local-PMDA / PCP_LOCALPMDA / pmSetOptionLocalPMDA."""
    if opts.context and not opts.flags & PM_OPTFLAG_MULTI:
        pmprintf("%s: at most one of -a, -h and -L allowed\n" % pmGetProgname())
        opts.errors += 1
    else:
        opts.Lflag = 1


def _set_namespace(opts: Options, arg: str, dupok: int) -> None:
    """-n / -N / PCP_NAMESPACE / PCP_UNIQNAMES: load a PMNS file (through pmcpp) for
    every name operation of the process; -N refuses a pmid with two names."""
    try:
        from pcp._libpcp import pmns  # pylint: disable=import-outside-toplevel

        pmns.load(arg, bool(dupok), True)
    except pmErr as err:
        pmprintf('%s: Cannot load namespace from "%s": %s\n'
                 % (pmGetProgname(), arg, pmErrStr(err.code)))
        opts.flags |= PM_OPTFLAG_RUNTIME_ERR
        opts.errors += 1
    else:
        opts.nsflag = 1


def load_derived_config(arg: str) -> int:
    """pmLoadDerivedConfig of a file, a directory or a colon list of them: its status."""
    from pcp._libpcp.derived import registry    # here: most tools never take --derived

    registry.REGISTRY.init(with_context=False)     # (7.2: PCP_DERIVED_CONFIG comes later)
    return registry.load_path(registry.REGISTRY, arg.encode("utf-8", "surrogateescape"),
                              recover=False)


def load_derived(opts: Options, arg: str) -> None:
    """--derived: pmLoadDerivedConfig of the argument (files, directories, a colon
    list); a failure is counted as an option error, with libpcp's message."""
    sts = load_derived_config(arg)
    if sts < 0:
        pmprintf("%s: pmLoadDerivedConfig failed: %s\n" % (pmGetProgname(), pmErrStr(sts)))
        opts.errors += 1


def set_samples(opts: Options, arg: str) -> None:
    """-s / --samples / PCP_SAMPLES."""
    opts.samples, whole = strtol_int(arg)
    if not whole or opts.samples < 0:
        pmprintf("%s: -s requires a positive numeric argument\n" % pmGetProgname())
        opts.errors += 1


def set_interval(opts: Options, arg: str) -> None:
    """-t / --interval / PCP_INTERVAL."""
    from pcp._core.intervals import IntervalError, interval_timespec

    try:
        opts.interval = interval_timespec(arg)
    except IntervalError as err:
        pmprintf("%s: -t argument not in %s(3) format:\n" % (pmGetProgname(),
                                                            INTERVAL_PARSER))
        pmprintf("%s\n" % err.message)
        opts.errors += 1


def set_timezone(opts: Options, arg: str) -> None:
    """-Z / --timezone / PCP_TIMEZONE."""
    if opts.tzflag:
        pmprintf("%s: at most one of -Z and -z allowed\n" % pmGetProgname())
        opts.errors += 1
    else:
        opts.timezone = arg


def set_hostzone(opts: Options) -> None:
    """-z / --hostzone / PCP_HOSTZONE."""
    if opts.timezone is not None:
        pmprintf("%s: at most one of -Z and -z allowed\n" % pmGetProgname())
        opts.errors += 1
    else:
        opts.tzflag = 1


def set_version(opts: Options) -> None:
    """-V / --version: the tool prints this and exits (PM_OPTFLAG_EXIT)."""
    opts.flags |= PM_OPTFLAG_EXIT
    pmprintf("%s version %s\n" % (pmGetProgname(), PCP_VERSION))


def _set(name: str) -> Callable[[Options, Optional[str]], None]:
    def setter(opts: Options, arg: Optional[str]) -> None:
        setattr(opts, name, arg)
    return setter


def _no_arg(handler: Callable[[Options], None]) -> Callable[[Options, Optional[str]], None]:
    return lambda opts, arg: handler(opts)


# the standard options by short character, and by long name for the long-only ones
_BY_SHORT = {
    "A": _set("align_optarg"), "a": add_archive, "D": set_debug, "g": _no_arg(_set_gui_mode),
    "H": add_host_file, "h": add_host, "K": set_local_table, "L": _no_arg(set_local_flag),
    "N": lambda o, a: _set_namespace(o, a, 0), "n": lambda o, a: _set_namespace(o, a, 1),
    "O": _set("origin_optarg"), "p": _set_gui_port, "S": _set("start_optarg"),
    "s": set_samples, "T": _set("finish_optarg"), "t": set_interval,
    "V": _no_arg(set_version), "Z": set_timezone, "z": _no_arg(set_hostzone),
}
_BY_LONG = {
    "align": _BY_SHORT["A"], "archive": add_archive, "archive-list": add_archive_list,
    "archive-folio": add_archive_folio, "container": set_container, "debug": set_debug,
    "derived": load_derived, "guimode": _BY_SHORT["g"], "host": add_host,
    "hostsfile": add_host_file, "spec-local": set_local_table, "local-PMDA": _BY_SHORT["L"],
    "namespace": _BY_SHORT["n"], "uniqnames": _BY_SHORT["N"], "guiport": _set_gui_port,
    "host-list": add_host_list, "interval": set_interval, "origin": _BY_SHORT["O"],
    "samples": set_samples, "start": _BY_SHORT["S"], "finish": _BY_SHORT["T"],
    "timezone": set_timezone, "hostzone": _BY_SHORT["z"], "version": _BY_SHORT["V"],
}
# the environment libpcp reads before the command line, in its order of checking
_BY_ENV = {
    "ALIGN_TIME": _BY_SHORT["A"], "ARCHIVE": add_archive, "ARCHIVE_LIST": add_archive_list,
    "FOLIO": add_archive_folio, "GUIMODE": _BY_SHORT["g"], "HOST": add_host,
    "HOST_LIST": add_host_list, "SPECLOCAL": set_local_table, "LOCALMODE": _BY_SHORT["L"],
    "LOCALPMDA": _BY_SHORT["L"], "NAMESPACE": _BY_SHORT["n"], "UNIQNAMES": _BY_SHORT["N"],
    "ORIGIN": _BY_SHORT["O"], "ORIGIN_TIME": _BY_SHORT["O"], "GUIPORT": _set_gui_port,
    "START_TIME": _BY_SHORT["S"], "SAMPLES": set_samples, "FINISH_TIME": _BY_SHORT["T"],
    "INTERVAL": set_interval, "TIMEZONE": set_timezone, "HOSTZONE": _BY_SHORT["z"],
}


def start_options(opts: Options) -> None:
    """libpcp's __pmStartOptions: defaults from PCP_* variables, once."""
    if opts.flags & PM_OPTFLAG_INIT:
        return
    if "PCP_DEBUG" in os.environ:
        set_debug(opts, os.environ["PCP_DEBUG"])
    for key, value in list(os.environ.items()):
        if key.startswith("PCP_") and key[4:] in _BY_ENV:
            _BY_ENV[key[4:]](opts, value)
    opts.flags |= PM_OPTFLAG_INIT


def _long_only(opts: Options) -> bool:
    """libpcp's __pmGetLongOptions: a standard option known by its long name only; False
    for one the caller handles."""
    handler = _BY_LONG.get(opts.long_options[opts.index].long_opt)
    if handler is None:
        return False
    handler(opts, opts.optarg)
    return True


def get_options(argv: List[str], opts: Options) -> int:
    """pmGetOptions: the next option the caller handles (or EOF when all are read), the
    standard ones applied on the way; argv is permuted in place as libpcp does."""
    if not opts.flags & PM_OPTFLAG_INIT:
        pmSetProgname(argv[0])
        opts.initialized = 1
        start_options(opts)
    if opts.flags & PM_OPTFLAG_ENV_ONLY:
        end_options(opts)
        return EOF
    c = EOF
    while True:
        c = _getopt.getopt(argv, opts)
        if c != EOF and opts.override is not None and opts.override(c):
            break
        if c == EOF:
            break
        char = chr(c) if 0 < c < 0x110000 else ""
        if char in _BY_SHORT:
            _BY_SHORT[char](opts, opts.optarg)
        elif char == "?":
            opts.errors += 1
        elif c == 0:
            if not _long_only(opts):
                break
        else:
            break
    if c == EOF:
        end_options(opts)
    return c


def end_options(opts: Options) -> None:
    """libpcp's __pmEndOptions: the context type the options imply, and the checks that
    need all of them."""
    if opts.flags & PM_OPTFLAG_DONE:
        return
    if opts.version not in (PMAPI_VERSION_2, PMAPI_VERSION_3):
        opts.version = PMAPI_VERSION_3
    if not opts.context:
        if opts.Lflag:
            opts.context = PM_CONTEXT_LOCAL
        elif opts.hosts and not opts.archives:
            opts.context = PM_CONTEXT_HOST
        elif opts.archives and not opts.hosts:
            opts.context = PM_CONTEXT_ARCHIVE
        elif opts.origin_optarg is not None:
            opts.context = PM_CONTEXT_ARCHIVE
            add_archive_path(opts)
    if ((opts.start_optarg is not None or opts.align_optarg is not None
         or opts.origin_optarg is not None) and opts.context != PM_CONTEXT_ARCHIVE):
        pmprintf("%s: time window options are supported for archives only\n" % pmGetProgname())
        opts.errors += 1
    if opts.tzflag and opts.context not in (PM_CONTEXT_ARCHIVE, PM_CONTEXT_HOST):
        pmprintf("%s: use of timezone from metric source requires a source\n" % pmGetProgname())
        opts.errors += 1
    if opts.errors and not opts.flags & PM_OPTFLAG_RUNTIME_ERR:
        opts.flags |= PM_OPTFLAG_USAGE_ERR
    opts.flags |= PM_OPTFLAG_DONE


def usage_message(opts: Options) -> None:
    """pmUsageMessage: "Usage: prog short_usage", then each documented long option, its
    message at column 24 (or on the next line when the option is wider); only the text
    already buffered (a version or an error) when the tool is to exit."""
    if not opts.flags & (PM_OPTFLAG_RUNTIME_ERR | PM_OPTFLAG_EXIT):
        pmprintf("Usage: %s %s\n" % (pmGetProgname(), opts.short_usage if opts.short_usage
                                     is not None else "[options]"))
        for option in opts.long_options:
            if option.message is None:
                continue
            if option.short_opt == "-":
                pmprintf("\n%s:\n" % option.message)
                continue
            if option.short_opt == "|":
                pmprintf("%s\n" % option.message)
                continue
            arg = option.argname if option.argname is not None else "?"
            if option.long_opt:
                if option.short_opt and option.has_arg:
                    text = "  -%s %s, --%s=%s" % (option.short_opt, arg, option.long_opt, arg)
                elif option.short_opt:
                    text = "  -%s, --%s" % (option.short_opt, option.long_opt)
                elif option.has_arg:
                    text = "  --%s=%s" % (option.long_opt, arg)
                else:
                    text = "  --%s" % option.long_opt
            elif option.has_arg:
                text = "  -%s %s" % (option.short_opt, arg)
            else:
                text = "  -%s" % option.short_opt
            width = len(text.encode("utf-8", "surrogateescape"))
            if width < 24:
                pmprintf("%s%s%s\n" % (text, " " * (24 - width), option.message))
            else:
                pmprintf("%s\n%24s%s\n" % (text, "", option.message))
    if not opts.flags & PM_OPTFLAG_NOFLUSH:
        pmflush()


# ---------------------------------------------------------------------------
# After the context is open: zone and time window (pmGetContextOptions)
# ---------------------------------------------------------------------------


def context_options(opts: Options, host_name: Callable[[], str], context_zone: Callable[[], int],
                    new_zone: Callable[[str], int], bounds: Bounds) -> int:
    """pmGetContextOptions: set the reporting zone (-z from the context, -Z a name), then
    resolve the time window against the archives' bounds; `bounds(i)` gives the (label
    start, end) of archive i (0 the open context) or raises pmErr. 0, or PM_ERR_GENERIC
    with the messages buffered."""
    window = (opts.start_optarg is not None or opts.finish_optarg is not None
              or opts.align_optarg is not None or opts.origin_optarg is not None
              or bool(opts.flags & PM_OPTFLAG_BOUNDARIES))
    if opts.tzflag:
        hostname = host_name()
        try:
            context_zone()
        except Exception as err:        # pylint: disable=broad-except
            pmprintf("%s: Cannot set context timezone: %s\n"
                     % (pmGetProgname(), pmErrStr(getattr(err, "code", PM_ERR_GENERIC))))
            opts.errors += 1
        else:
            if opts.flags & PM_OPTFLAG_STDOUT_TZ:
                print('Note: timezone set to local timezone of host "%s"%s\n'
                      % (hostname, "" if opts.context != PM_CONTEXT_ARCHIVE
                         else " from archive"))
    elif opts.timezone is not None:
        new_zone(opts.timezone)
        if opts.flags & PM_OPTFLAG_STDOUT_TZ:
            print('Note: timezone set to "TZ=%s"\n' % opts.timezone)
    if not opts.errors and window:
        boundaries = _boundaries(opts, bounds)
        if boundaries is None:
            opts.errors += 1
        else:
            from pcp._libpcp import timewindow

            try:
                _, opts.start, opts.finish, opts.origin, _ = timewindow.parse_window(
                    opts.start_optarg, opts.finish_optarg, opts.align_optarg,
                    opts.origin_optarg, boundaries[0], boundaries[1])
            except timewindow.TimeError as err:
                pmprintf("%s: invalid time window.\n%s\n" % (pmGetProgname(), err.message))
                opts.errors += 1
    if opts.errors:
        if not opts.flags & PM_OPTFLAG_USAGE_ERR:
            opts.flags |= PM_OPTFLAG_RUNTIME_ERR
        return PM_ERR_GENERIC
    return 0


def _boundaries(opts: Options, bounds: Bounds) -> Optional[Tuple[Stamp, Stamp]]:
    """The window the archives span (the earliest start to the latest end), or now to
    the end of time for a live source; None when an archive cannot be read."""
    from pcp._core.intervals import PM_MAX_TIME_T

    if opts.context != PM_CONTEXT_ARCHIVE:
        import time as _time  # pylint: disable=import-outside-toplevel
        now = _time.time_ns()
        return (now // 1000000000, now % 1000000000), (PM_MAX_TIME_T, 0)
    begin = end = (0, 0)
    for i in range(len(opts.archives) if len(opts.archives) > 1 else 1):
        name = opts.archives[i] if i < len(opts.archives) else ""
        try:
            start, finish = bounds(i)
        except Exception as err:        # pylint: disable=broad-except
            code = getattr(err, "code", PM_ERR_GENERIC)
            if i == 0 and len(opts.archives) <= 1:
                pmprintf("%s: Cannot get archive %s label record: %s\n"
                         % (pmGetProgname(), name, pmErrStr(code)))
            else:
                pmprintf("%s: Cannot open archive %s: %s\n" % (pmGetProgname(), name,
                                                               pmErrStr(code)))
            return None
        if isinstance(finish, int):
            # __pmUpdateBounds (libpcp's getopt.c): an archive whose end cannot be found
            # (a truncated volume) is read to the end of time, after this warning
            # written straight to stderr
            sys.stdout.flush()
            sys.stderr.write(
                "%s: Cannot locate end of archive %s: %s\n\nWARNING: This archive is "
                "sufficiently damaged that it may not be possible to\n         produce "
                "complete information.  Continuing and hoping for the best.\n\n"
                % (pmGetProgname(), name, pmErrStr(finish)))
            sys.stderr.flush()
            finish = (PM_MAX_TIME_T, 0)
        if i == 0:
            begin, end = start, finish
        else:
            begin = min(begin, start)
            end = max(end, finish)
    return begin, end


# ---------------------------------------------------------------------------
# The process-wide options of the official binding's cpmapi module
# ---------------------------------------------------------------------------
OPTIONS = Options()


class _Callbacks:
    """The Python callbacks of pmSetOptionCallback and pmSetOverrideCallback (kept across
    pmResetAllOptions, as the official module keeps them). (pmSetContextOptions is
    pcp.pmapi's, which keeps the context table: cpmapi finds it there.)"""
    option: Optional[Callable[..., Any]] = None
    override: Optional[Callable[[str], Any]] = None


CALLBACKS = _Callbacks()


def reset() -> None:
    """pmResetAllOptions: a fresh pmOptions."""
    global OPTIONS  # pylint: disable=global-statement
    OPTIONS = Options()


def _call_override(c: int) -> int:
    """The override callback for option c: its int, or -EAGAIN after printing the
    exception it raised (the official module's way)."""
    if not c or CALLBACKS.override is None:
        return 0
    try:
        answer = CALLBACKS.override(chr(c))
    except BaseException as err:       # pylint: disable=broad-except
        print_callback_error(err)       # the official module's PyErr_Print
        return -11
    return int(answer)


def _call_option(c: int) -> None:
    opts = OPTIONS
    if c == 0 and opts.index < len(opts.long_options):
        name = opts.long_options[opts.index].long_opt
    else:
        name = chr(c)
    if CALLBACKS.option is None:
        raise TypeError("'NoneType' object is not callable")
    try:
        CALLBACKS.option(name, opts.optarg, opts.index)
    except BaseException as err:       # pylint: disable=broad-except
        print_callback_error(err)       # the official module's PyErr_Print


def options_from_list(argv: List[str]) -> int:
    """The official pmGetOptionsFromList: parse argv with pmGetOptions, passing each
    option that is not a standard one to the option callback; the error count, or
    PM_ERR_APPVERSION after -V."""
    if not argv:
        return 0
    opts = OPTIONS
    opts.argv = [str(word) for word in argv]
    if CALLBACKS.override is not None:
        opts.override = _call_override
    while True:
        c = get_options(opts.argv, opts)
        if c == EOF:
            break
        _call_option(c)
    if opts.flags & PM_OPTFLAG_EXIT:
        return PM_ERR_APPVERSION
    return opts.errors


def operands() -> Optional[List[str]]:
    """pmGetOperands: the words from optind on (None for none); RuntimeError before the
    options are parsed."""
    opts = OPTIONS
    if not opts.flags & PM_OPTFLAG_DONE:
        raise RuntimeError("pmGetOptions is not yet done")
    rest = opts.argv[opts.optind:] if opts.argv else []
    return rest if rest else None


def print_usage() -> None:
    """The official pmUsageMessage: the usage text (or the buffered version / error text),
    then exit(0) when the options asked for an exit."""
    usage_message(OPTIONS)
    if OPTIONS.flags & PM_OPTFLAG_EXIT:
        sys.exit(0)


def daemonize() -> None:
    """libpcp's __pmServerStart: fork, the parent exits, the child starts a new session
    with its standard input from /dev/null."""
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork() != 0:
        os._exit(0)     # pylint: disable=protected-access
    os.setsid()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
