"""The top-level usage and --help cost the interpreter's start and nothing more: they
import none of the PMAPI (pcp.pmapi, cpmapi, the archive and live layers), so that
`pcp-native --help` takes about as long as `python -c pass`."""
from __future__ import annotations

import subprocess
import sys

from support.cliutil import DEMO_ARCHIVE, our_env

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


HELP_PROGRAM = r'''
import contextlib, importlib, io, sys
from pcp.cli import main
words = sys.argv[1:]
with contextlib.redirect_stdout(io.StringIO()) as out, \
        contextlib.redirect_stderr(io.StringIO()) as err:
    status = main(words)
heavy = sorted(m for m in sys.modules if m in ("pcp.pmapi", "cpmapi", "numpy", "typing",
                                                "dataclasses", "pcp._native")
               or m.startswith(("pcp._archive", "pcp._live", "pcp._bulk", "pcp.cli._common")))
# the command's own path: its module's main, which reads the same words
from pcp.cli import _options
module = importlib.import_module("pcp.cli." + words[0])
with contextlib.redirect_stdout(io.StringIO()) as out2, \
        contextlib.redirect_stderr(io.StringIO()) as err2:
    try:
        status2 = module.main(words[1:])
    except _options.UsageExit as e:
        status2 = e.status
    finally:
        _options.reset()
print(repr((status, out.getvalue(), err.getvalue())) ==
      repr((status2, out2.getvalue(), err2.getvalue())), status, heavy,
      "Usage: pcp-native %s" % words[0] in err.getvalue())
'''


def test_a_commands_help_imports_no_pmapi_and_is_the_commands_usage():
    """`pcp-native COMMAND -?` and `--help` print the usage from the option tables alone
    (pcp.cli._tables): none of the PMAPI, numpy, typing or dataclasses imported, and the
    same status and text as the command's own main gives for those words."""
    for command in ("info", "dump", "fetch", "export"):
        for word in ("-?", "--help"):
            p = subprocess.run([sys.executable, "-c", HELP_PROGRAM, command, word],
                               capture_output=True, text=True, env=our_env(), timeout=60)
            assert p.returncode == 0, p.stderr
            assert p.stdout.strip() == "True 1 [] True", (command, word, p.stdout)


INFO_PROGRAM = r'''
import contextlib, io, sys
from pcp.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    status = main(sys.argv[1:])
print(status, sorted(m for m in sys.modules if m in ("typing", "json", "pcp._archive.interp")))
'''


def test_info_over_an_archive_imports_what_it_needs_alone():
    """`info -f -a` reads records as they are logged: no interpolator; typing is for type
    checkers alone, and json for a context without labels (info -l)."""
    for flags in (["-f"], ["-dmT"]):
        p = subprocess.run([sys.executable, "-c", INFO_PROGRAM, "info", "-a", DEMO_ARCHIVE]
                           + flags, capture_output=True, text=True, env=our_env(), timeout=60)
        assert p.returncode == 0, p.stderr
        assert p.stdout.strip() == "0 []", (flags, p.stdout)
