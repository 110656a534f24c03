"""The pcp-native command line: the `pcp-native` console script, or `python -m pcp`.

    pcp-native info   [pminfo's options] [NAME | PMID | INDOM ...]
    pcp-native dump   [pmdumplog's options] ARCHIVE [NAME ...]
    pcp-native fetch  [pmval's options, -U ARCHIVE too] METRIC ...
    pcp-native export -a ARCHIVE [-o csv|parquet] [-F FILE] [-r] [-S/-T/-Z/-z] [NAME ...]
                      (pmrep's forms)

The program calls itself pcp-native in its usage and messages: `pcp` is PCP's own
command (/usr/bin/pcp).

Each command reads its options with libpcp's rules (pcp/cli/_options.py).

With no source, each command does what its PCP tool does: info and fetch read the local
pmcd (as pminfo and pmval), dump prints its usage and exits 1 (as pmdumplog), export
asks for an archive. --demo names the small archive bundled with the package
(pcp/data/demo.*), which needs no pmcd.
"""
from __future__ import annotations

import sys

TYPE_CHECKING = False      # typing's names without importing typing (start-up)
if TYPE_CHECKING:
    from typing import List, Optional

# the usage and --help need the program's name and nothing more: they import nothing
# else (the PMAPI is a tenth of a second away)
from pcp.cli._name import PROGRAM
COMMANDS = ("info", "dump", "export", "fetch")


def _module(name: str):
    import importlib

    return importlib.import_module("pcp.cli." + name)


def _version_text() -> str:
    import pcp
    from pcp import pmapi

    return "%s %s (pcp.pmapi from %s; no libpcp)" % (pcp.__implementation__, pcp.__version__,
                                                     pmapi.__file__)


USAGE = """Usage: pcp-native COMMAND [options] [operands]    (or: python -m pcp ...)

pcp-native tools: PCP archives and pmcds without libpcp. Each command takes the
options of the PCP tool it mirrors, read by libpcp's rules (pmGetOptions):

  info    metric names, descriptors, help text and values   (pminfo)
  dump    an archive's label, metadata and records           (pmdumplog)
  fetch   sample metrics at an interval, counters as rates   (pmval)
  export  an archive's values as a CSV or Parquet table      (pmrep's options)

  pcp-native COMMAND -?      that command's options
  pcp-native --version       which implementation this is

With no -a/-h, info and fetch read the local pmcd (as pminfo and pmval do);
dump and export need an archive. --demo names the archive bundled with
pcp-native (%s), to try the commands without a pmcd:

  pcp-native dump --demo -l
  pcp-native info --demo -f kernel.uname.release
"""


def usage_text() -> str:
    from pcp.data import DEMO_ARCHIVE

    return USAGE % DEMO_ARCHIVE


def main(argv: Optional[List[str]] = None) -> int:
    """Run one command line (sys.argv[1:] by default); returns the exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    if not words or words[0] in ("--help", "-?", "help"):
        sys.stdout.write(usage_text())
        return 0 if words else 2
    if words[0] in ("--version", "-V"):
        sys.stdout.write(_version_text() + "\n")
        return 0
    command = words[0]
    if command not in COMMANDS:
        sys.stderr.write("%s: unknown command %r\n" % (PROGRAM, command))
        sys.stderr.write(usage_text())
        return 2
    if words[1:] in (["-?"], ["--help"]):
        # the usage alone, from the command's option table: none of its imports
        from pcp.cli import _options, _tables

        try:
            _options.finish(_options.parse(_tables.TOOLS[command], words[1:]),
                            _tables.DEFAULT_SOURCE[command])
        except _options.UsageExit as e:
            return e.status
        finally:
            _options.reset()
    from pcp.cli import _common, _options

    try:
        return _module(command).main(words[1:])
    except _options.UsageExit as e:
        return e.status
    except _common.CliError as e:
        return _common.fail(str(e))
    except _common.pmErr as e:
        # a PCP error no command reports in its tool's words: its one line, never a
        # traceback
        return _common.fail(_common.pmErrStr(e.code))
    except BrokenPipeError:
        # output piped into head & co: stop quietly, as C tools do on SIGPIPE (and
        # keep the interpreter's final flush from failing again)
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        return 130
    finally:
        _options.reset()
