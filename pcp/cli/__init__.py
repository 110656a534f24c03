"""The pcp-native command line: `python -m pcp` or the `pcp-native` console script.

    python -m pcp info  [-a ARCHIVE | -h HOST] [-dfmtTl] [NAME ...]     like pminfo
    python -m pcp dump  [-a ARCHIVE] [-dilLm] [-z] [NAME ...]           like pmdumplog
    python -m pcp export [-a ARCHIVE] [-o FILE.csv|FILE.parquet] [NAME ...]  to a table
    python -m pcp fetch [-h HOST | -a ARCHIVE] [-t SEC] [-s N] METRIC ... like pmval

Without -a or -h, info, dump and export read the small archive bundled with the package
(pcp/data/demo.*), so they run without a pmcd; fetch samples the local pmcd.
"""
from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from pcp.cli import _common

COMMANDS = ("info", "dump", "export", "fetch")


def _module(name: str):
    import importlib

    return importlib.import_module("pcp.cli." + name)


def _version_text() -> str:
    import pcp
    from pcp import pmapi

    return "%s %s (pcp.pmapi from %s; no libpcp)" % (pcp.__implementation__, pcp.__version__,
                                                     pmapi.__file__)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pcp", add_help=False,
        description="pcp-native tools: PCP archives and pmcds without libpcp.",
        epilog="Without -a/-h, info, dump and export read the bundled demo archive (%s); "
        "fetch samples the local pmcd."
        % _common.DEMO_ARCHIVE)
    parser.add_argument("--help", "-?", action="help", help="show this help and exit")
    parser.add_argument("--version", "-V", action="version", version=_version_text(),
                        help="say which implementation and version this is, and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        _module(name).add_parser(sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    try:
        return _module(args.command).run(args)
    except _common.CliError as e:
        return _common.fail(str(e))
    except BrokenPipeError:
        # output piped into head & co: stop quietly, as C tools do on SIGPIPE (and
        # keep the interpreter's final flush from failing again)
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        return 130
