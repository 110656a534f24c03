"""The top-level usage and --help cost the interpreter's start and nothing more: they
import none of the PMAPI (pcp.pmapi, cpmapi, the archive and live layers), so that
`pcp-native --help` takes about as long as `python -c pass`."""
from __future__ import annotations

import subprocess
import sys

from support.cliutil import our_env

PROGRAM = r'''
import contextlib, io, sys
from pcp.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):
    statuses = [main(["--help"]), main([]), main(["bogus"])]
# pcp.cli._name holds the program's name and nothing else
heavy = sorted(m for m in sys.modules if m in ("pcp.pmapi", "cpmapi") or
               m.startswith(("pcp._archive", "pcp._live", "pcp._libpcp", "pcp.cli._"))
               and m != "pcp.cli._name")
print(statuses, heavy, out.getvalue().startswith("Usage: pcp-native COMMAND"))
'''


def test_top_level_help_imports_no_pmapi():
    p = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                       env=our_env(), timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[0, 2, 2] [] True"
