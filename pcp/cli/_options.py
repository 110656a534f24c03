"""The subcommands' command lines, read the way the PCP tool each one mirrors reads its
own: libpcp's pmGetOptions (pcp._libpcp.options) over the tool's option table, so the
standard options (-a, -h, -S, -T, -O, -A, -t, -s, -Z, -z, -n, -D, -V ...) mean what
libpcp makes them mean, a tool's own letters override them where the PCP tool's do
(pmdumplog's -a is "all", pminfo's -t/-T are help text), and a bad option prints
libpcp's message and that subcommand's usage. The time window and the reporting zone
are finished against the open context with pmGetContextOptions's rules."""
from __future__ import annotations

import sys

from pcp._core.constants import (PM_CONTEXT_ARCHIVE, PM_CONTEXT_HOST, PM_CONTEXT_LOCAL,
                                 PM_OPTFLAG_DONE, PM_OPTFLAG_EXIT)
from pcp._core.errors import pmErr, pmflush, pmGetProgname, pmprintf, pmSetProgname
from pcp._libpcp import options as _libopts
from pcp._libpcp.getopt import EOF, LongOption
# what the program calls itself in usage and messages (`pcp` is PCP's own command)
from pcp.cli._name import PROGRAM

# typing's names without importing typing, nor dataclasses (a command's -? imports this
# module and the option tables, and should cost little more than the interpreter's start)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple, Union
    Stamp = Tuple[int, int]

STANDARD = _libopts.STANDARD


def header(text: str) -> LongOption:
    """A section header of the usage message (PMAPI_OPTIONS_HEADER)."""
    return LongOption("", 0, "-", None, text)


def own(long_opt: str, short_opt: str, message: str, argname: Optional[str] = None
        ) -> LongOption:
    """One of a tool's own options: with an argument when it names one."""
    return LongOption(long_opt, 1 if argname else 0, short_opt, argname, message)


class Tool:
    """One subcommand's option table, as a PCP tool declares its pmOptions: the short
    option string, the long options (which the usage message lists in this order), the
    usage line, and the standard letters the tool claims for itself (its override).
    `watch`: standard letters whose presence the tool notes (they are still applied by
    libpcp's rules: pmval tells "-s 0" from no -s); `context_for_hosts`: pminfo finishes
    the options against archives only, pmval and pmdumplog always."""

    def __init__(self, name: str, short_options: str, long_options: List[LongOption],
                 short_usage: str, overrides: str = "", watch: str = "", flags: int = 0,
                 context_for_hosts: bool = True) -> None:
        self.name = name
        self.short_options = short_options
        self.long_options = long_options
        self.short_usage = short_usage
        self.overrides = overrides
        self.watch = watch
        self.flags = flags
        self.context_for_hosts = context_for_hosts


class Parsed:
    """A command line read: libpcp's pmOptions (the standard options' results), each of
    the tool's own options by long name (or letter) with the arguments it was given in
    order (None for a flag), and the operands left."""

    def __init__(self, opts: _libopts.Options) -> None:
        self.opts = opts
        self.given: Dict[str, List[Optional[str]]] = {}
        self.operands: List[str] = []

    def count(self, key: str) -> int:
        """How many times a flag was given (pmdumplog's -x, -xx, -xxx)."""
        return len(self.given.get(key, ()))

    def flag(self, key: str) -> bool:
        return key in self.given

    def value(self, key: str, default: Optional[str] = None) -> Optional[str]:
        """The last argument given to an option (getopt's last one wins)."""
        values = self.given.get(key)
        return values[-1] if values else default


class UsageExit(Exception):
    """The command line asked for the usage text or was wrong: the text is already
    written (libpcp's pmUsageMessage) and `status` is the exit status."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def parse(tool: Tool, argv: Sequence[str]) -> Parsed:
    """Read argv (the words after the subcommand) with pmGetOptions over the tool's
    table. Raises UsageExit after printing the usage (or -V's version) when the words
    are wrong or ask for it, with the status the PCP tool exits with."""
    opts = _libopts.Options(short_options=tool.short_options,
                            long_options=list(tool.long_options),
                            short_usage=tool.short_usage, flags=tool.flags | PM_OPTFLAG_DONE)
    claimed = frozenset(ord(c) for c in tool.overrides)
    watched = frozenset(ord(c) for c in tool.watch)
    parsed = Parsed(opts)

    def override(c: int) -> int:
        if c in watched:
            parsed.given.setdefault(chr(c), []).append(opts.optarg)
        return int(c in claimed)

    opts.override = override
    words = [PROGRAM + " " + tool.name] + list(argv)
    while True:
        c = _libopts.get_options(words, opts)
        if c == EOF:
            break
        if c == 0:
            key = opts.long_options[opts.index].long_opt
        else:
            key = _key_of(tool, chr(c))
        parsed.given.setdefault(key, []).append(opts.optarg)
    parsed.operands = words[opts.optind:]
    return parsed


def _key_of(tool: Tool, short: str) -> str:
    """A tool's option by its long name when it has one, else its letter."""
    for option in tool.long_options:
        if option.short_opt == short and option.long_opt:
            return option.long_opt
    return short


def demo_option() -> LongOption:
    """pcp-native's --demo: the small archive bundled with the package, chosen by name
    (no command reads it unless asked)."""
    return LongOption("demo", 0, "", None, "read the demo archive bundled with pcp-native")


def finish(parsed: Parsed, default: Optional[str]) -> None:
    """Settle the metrics source as libpcp's __pmEndOptions does: --demo is the bundled
    archive; when the words named no source, `default` "host" is the local pmcd (local:,
    as pminfo and pmval do) and None leaves the command without one (pmdumplog's usage,
    export's refusal). Then the checks that need all the options. Raises UsageExit (with
    the usage printed) for a wrong command line, -? and -V."""
    opts = parsed.opts
    named = bool(opts.archives or opts.hosts or opts.Lflag)
    if parsed.flag("demo"):
        if named:
            pmprintf("%s: --demo names the bundled archive: not with -a, -h or -L\n"
                     % pmGetProgname())
            opts.errors += 1
        else:
            from pcp.data import DEMO_ARCHIVE
            _libopts.add_archive(opts, DEMO_ARCHIVE)
    elif not named and default == "host" and opts.origin_optarg is None:
        # -O alone: libpcp's local pmlogger archive
        _libopts.add_host(opts, "local:")
    opts.flags &= ~PM_OPTFLAG_DONE
    _libopts.end_options(opts)
    _STATE.namespace = _STATE.namespace or bool(opts.nsflag)
    if opts.errors or opts.flags & PM_OPTFLAG_EXIT:
        usage(opts)
        raise UsageExit(0 if opts.flags & PM_OPTFLAG_EXIT and not opts.errors else 1)


def usage_error(parsed: Parsed, message: str) -> None:
    """A usage error found after the options were read (pmprintf'd before the usage,
    as pmval does for "too many arguments")."""
    pmprintf("%s: %s\n" % (pmGetProgname(), message))
    usage(parsed.opts)
    raise UsageExit(1)


def usage(opts: _libopts.Options) -> None:
    """pmUsageMessage for this subcommand."""
    _libopts.usage_message(opts)


# the host of a local context (-L): libpcp's metric specs write it "@"
LOCAL_SOURCE = "@"


def source(opts: _libopts.Options) -> Tuple[Optional[str], Optional[str]]:
    """(archive, host) the options name: one of them (host LOCAL_SOURCE for -L)."""
    if opts.context == PM_CONTEXT_LOCAL or opts.Lflag:
        return None, LOCAL_SOURCE
    if opts.context == PM_CONTEXT_ARCHIVE and opts.archives:
        return opts.archives[0], None
    if opts.context == PM_CONTEXT_HOST and opts.hosts:
        return None, opts.hosts[0]
    return None, "local:"


def context_options(tool: Tool, parsed: Parsed, ctx: object, is_archive: bool) -> Optional[str]:
    """pmGetContextOptions against an open context: the reporting zone of -z / -Z (with
    the note the PCP tools print) and the time window of -S/-T/-A/-O resolved against the
    archive's bounds, into parsed.opts (start, finish, origin). Returns the zone to
    report in (None: the local one); raises UsageExit(1) with libpcp's message when the
    window cannot be read."""
    from pcp._libpcp import zones

    opts = parsed.opts
    if not is_archive and not tool.context_for_hosts:
        return None

    def bounds(index: int) -> Tuple[Stamp, Union[Stamp, int]]:
        label = ctx._archive_label_timespec()       # type: ignore[attr-defined]
        start = (int(label.start.tv_sec), int(label.start.tv_nsec))
        try:
            end = ctx._archive_end_timespec()       # type: ignore[attr-defined]
        except pmErr as e:
            # an end that cannot be found (a damaged last record): its error code,
            # which libpcp warns of and reads on past
            return start, e.code
        return start, (int(end.tv_sec), int(end.tv_nsec))

    def host_name() -> str:
        return ctx.pmGetContextHostName()            # type: ignore[attr-defined]

    def context_zone() -> int:
        return ctx.pmNewContextZone()                # type: ignore[attr-defined]

    if _libopts.context_options(opts, host_name, context_zone, zones.new_zone, bounds) < 0:
        pmflush()
        raise UsageExit(1)
    return zones.which_zone()


class _State:
    """What a subcommand changed for the whole process."""
    namespace = False       # -n / -N loaded a PMNS file


_STATE = _State()


def reset() -> None:
    """Put the program name, the reporting zone and the PMNS (after -n) back after a
    subcommand (the tests run several in one process). The zone and PMNS modules are
    reset only when something imported them (a usage message does not)."""
    pmSetProgname(None)
    zones = sys.modules.get("pcp._libpcp.zones")
    if zones is not None:
        zones.reset()
    if _STATE.namespace:
        from pcp._libpcp import pmns

        pmns.unload()
        _STATE.namespace = False
