"""PCP's pmcc-based tools (pmiostat, pcp-iostat, pcp-mpstat, pcp-pidstat, pcp-ps,
pcp-tapestat, pcp-dmcache, pcp-lvmcache, pcp-verify) run unchanged on this package: the
installed tool started with the official binding's interpreter and with ours, on the same
pmlogger archive; stdout, stderr and exit status must be the same byte for byte."""
import pytest

from support import tool_archive

pytestmark = [pytest.mark.pmcd, pytest.mark.reference]

# (tool, arguments, extra environment); {a} is the archive. Interpolated (-t) and raw
# (-u) reads, extended options, device filters and aggregation, usage errors.
RUNS = [
    ("pmiostat", ["-a", "{a}", "-t", "1"], {}),
    ("pmiostat", ["-a", "{a}", "-t", "0.4", "-x", "t"], {}),
    ("pmiostat", ["-a", "{a}", "-u"], {}),
    ("pmiostat", ["-a", "{a}", "-u", "-x", "h", "-P", "3"], {}),
    ("pmiostat", ["-a", "{a}", "-t", "1", "-x", "noidle"], {}),   # may print nothing
    ("pmiostat", ["-a", "{a}", "-t", "0.5", "-G", "sum", "-R", "v.*"], {}),
    ("pmiostat", ["-a", "{a}", "-t", "0.5", "-x", "dm"], {}),
    ("pmiostat", ["-a", "{a}", "-P", "11"], {}),
    ("pmiostat", ["-a", "{a}", "-G", "median"], {}),
    ("pmiostat", ["-a", "{a}", "-S", "+1", "-T", "+2.5", "-t", "0.5", "-z"], {}),
    ("pmiostat", ["--help"], {}),
    ("pcp-iostat", ["-a", "{a}", "-t", "1"], {}),
    ("pcp-iostat", ["-a", "{a}", "-t", "0.5", "-x", "t"], {}),
    ("pcp-mpstat", ["-a", "{a}", "-t", "1"], {}),
    ("pcp-mpstat", ["-a", "{a}", "-t", "0.5", "-P", "ALL"], {}),
    ("pcp-mpstat", ["-a", "{a}", "-t", "1", "-A"], {}),
    ("pcp-pidstat", ["-a", "{a}", "-t", "1"], {}),
    ("pcp-pidstat", ["-a", "{a}", "-t", "1", "-r"], {}),
    ("pcp-pidstat", ["-a", "{a}", "-t", "1", "-l", "-k"], {}),
    ("pcp-ps", ["-e"], {"PCP_ARCHIVE": "{a}", "PCP_ORIGIN_TIME": "+1"}),
    ("pcp-ps", ["-ef"], {"PCP_ARCHIVE": "{a}", "PCP_ORIGIN_TIME": "+1"}),
    ("pcp-tapestat", ["-a", "{a}", "-t", "1"], {}),
    ("pcp-dmcache", ["-a", "{a}", "-t", "1"], {}),
    ("pcp-lvmcache", ["-a", "{a}", "-t", "1"], {}),
    ("pcp-verify", ["-a", "{a}", "-v"], {}),
]


@pytest.mark.parametrize("tool,argv,env", RUNS,
                         ids=["%s %s" % (t, " ".join(a)) for t, a, _ in RUNS])
def test_pmcc_tool_prints_the_same(reference_binding, tool, argv, env):
    path = tool_archive.tool_path(tool)
    if path is None:
        pytest.fail("%s is not installed (the pcp package installs it)" % tool)
    base = tool_archive.linux_archive()
    argv = [word.format(a=base) for word in argv]
    env = {k: v.format(a=base) for k, v in env.items()}
    ref = tool_archive.run_tool(path, argv, False, env)
    ours = tool_archive.run_tool(path, argv, True, env)
    what = "%s %s" % (tool, " ".join(argv))
    assert ours["status"] == ref["status"], (what, ours["stderr"], ref["stderr"])
    assert tool_archive.masked(ours["stderr"]) == tool_archive.masked(ref["stderr"]), what
    assert ours["stdout"] == ref["stdout"], what
    if (tool, tuple(w.replace(base, "{a}") for w in argv[-2:])) not in QUIET:
        assert ref["stdout"].strip(), "%s printed nothing: the comparison shows little" % what


# runs with nothing on stdout (no such devices in the recording, usage errors on stderr)
QUIET = {("pmiostat", ("--help",)), ("pmiostat", ("-x", "noidle")), ("pmiostat", ("-x", "dm")),
         ("pmiostat", ("-P", "11")), ("pmiostat", ("-G", "median")),
         ("pcp-tapestat", ("-t", "1")), ("pcp-dmcache", ("-t", "1")),
         ("pcp-lvmcache", ("-t", "1")), ("pcp-verify", ("{a}", "-v"))}
