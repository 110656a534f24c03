"""PCP's tools written on pcp.pmapi alone (pcp-free, pcp-uptime, pcp-ipcs, pcp-numastat,
pcp-ss) run unchanged on this package: the installed tool started with the official
binding's interpreter and with ours on the same pmlogger archive (through $PCP_ARCHIVE,
as these tools take no archive option); stdout, stderr and exit status must be the same
byte for byte."""
import pytest

from support import tool_archive

pytestmark = [pytest.mark.pmcd, pytest.mark.reference]

# (tool, arguments): several samples, every unit and layout option, usage errors
RUNS = [
    ("pcp-free", []),
    ("pcp-free", ["-m", "-t"]),
    ("pcp-free", ["-b", "-l", "-o"]),
    ("pcp-free", ["-g", "-w"]),
    ("pcp-free", ["-k", "-c", "3", "-s", "1"]),
    ("pcp-free", ["-r", "--total", "--samples=2", "--interval=0.5"]),
    ("pcp-free", ["-V"]),
    ("pcp-free", ["-x"]),
    ("pcp-uptime", []),
    ("pcp-uptime", ["--help"]),
    ("pcp-ipcs", []),
    ("pcp-ipcs", ["-l"]),
    ("pcp-ipcs", ["-u"]),
    ("pcp-numastat", []),
    ("pcp-ss", ["-t", "-a"]),        # no socket metrics in the recording: its error
]
# runs whose stdout is empty on both sides (usage and version go to stderr; no IPC
# objects on the recording machine)
QUIET = {("pcp-ipcs", ()), ("pcp-free", ("-V",)), ("pcp-free", ("-x",)), ("pcp-uptime", ("--help",)),
         ("pcp-ss", ("-t", "-a"))}


@pytest.mark.parametrize("tool,argv", RUNS, ids=["%s %s" % (t, " ".join(a)) for t, a in RUNS])
def test_pmapi_tool_prints_the_same(reference_binding, tool, argv):
    path = tool_archive.tool_path(tool)
    if path is None:
        pytest.fail("%s is not installed (the pcp package installs it)" % tool)
    env = {"PCP_ARCHIVE": tool_archive.linux_archive()}
    ref = tool_archive.run_tool(path, argv, False, env)
    ours = tool_archive.run_tool(path, argv, True, env)
    what = "%s %s" % (tool, " ".join(argv))
    assert ours["status"] == ref["status"], (what, ours["stderr"], ref["stderr"])
    assert tool_archive.masked(ours["stderr"]) == tool_archive.masked(ref["stderr"]), what
    assert ours["stdout"] == ref["stdout"], what
    if (tool, tuple(argv)) not in QUIET:
        assert ref["stdout"].strip(), "%s printed nothing: the comparison shows little" % what
