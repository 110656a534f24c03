"""Each command's help lists what it does (an option PCP's tool has and pcp-native does
not do is not offered, and is refused as an unknown option); the program calls itself
pcp-native in its usage and messages (`pcp` is PCP's own command)."""
from __future__ import annotations

import pytest

from support.cliutil import DEMO_ARCHIVE, run_cli, run_module, run_tool

# the options of PCP's tools pcp-native does not do: not in the help, refused by getopt
NOT_OFFERED = {"info": (["-s"], ["-x"], ["-C"], ["--container=x"]),
               "fetch": (["-d"], ["-g"], ["-p", "1"], ["-v"], ["-x", "1"], ["-X"],
                         ["--container=x"]),
               "export": (["-h", "local:"],)}


@pytest.mark.parametrize("command", sorted(NOT_OFFERED))
def test_help_lists_no_option_that_is_refused(command):
    text = run_cli(command, "--help").err
    assert text.startswith("Usage: pcp-native %s " % command)
    for argv in NOT_OFFERED[command]:
        option = argv[0].split("=")[0]
        listed = ("  %s," % option) in text or ("  %s " % option) in text or \
            ("  %s=" % option) in text
        assert not listed, (command, option)
        got = run_cli(command, *argv, "--demo", "kernel.all.load")
        assert got.status == 1 and got.out == ""
        assert "Usage: pcp-native %s" % command in got.err
        assert "not implemented" not in got.err


def test_derived_options_listed_are_done(tmp_path):
    """pminfo -c FILE and pmval --derived FILE load derived metrics (in a process of
    their own: the definitions are global)."""
    conf = tmp_path / "derived.conf"
    conf.write_text("my.twice = 2 * sample.long.one\n")
    for ours, theirs in ((["info", "--demo", "-c", str(conf), "-f", "my.twice"],
                          ["pminfo", "-a", DEMO_ARCHIVE, "-c", str(conf), "-f", "my.twice"]),
                         (["fetch", "-U", DEMO_ARCHIVE, "--derived", str(conf), "-s", "2",
                           "my.twice"],
                          ["pmval", "-U", DEMO_ARCHIVE, "--derived", str(conf), "-s", "2",
                           "my.twice"])):
        ref = run_tool(*theirs, check=True)
        got = run_module(*ours)
        assert (got.returncode, got.stdout) == (0, ref.stdout)
        assert "Derived metric definition failed" not in ref.stdout
    # pminfo: a configuration that cannot be read is reported, and is not fatal
    ref = run_tool("pminfo", "-a", DEMO_ARCHIVE, "-c", str(tmp_path / "none"), "hinv.ncpu")
    got = run_module("info", "--demo", "-c", str(tmp_path / "none"), "hinv.ncpu")
    assert (got.returncode, got.stdout) == (ref.returncode, ref.stdout) == (0, "hinv.ncpu\n")
    assert got.stderr == ref.stderr.replace("pminfo:", "pcp-native info:")


def test_the_program_calls_itself_pcp_native():
    top = run_cli("--help")
    assert top.out.startswith("Usage: pcp-native COMMAND")
    assert "python -m pcp info" not in top.out
    assert run_cli("bogus").err.startswith("pcp-native: unknown command 'bogus'")
    for command, argv in (("info", ["-a", "/nonexistent/x"]), ("dump", ["/nonexistent/x"]),
                          ("fetch", ["-a", "/nonexistent/x", "hinv.ncpu"]),
                          ("export", ["-a", "/nonexistent/x"])):
        got = run_cli(command, *argv)
        assert got.status == 1
        assert got.err.startswith("pcp-native %s: " % command), got.err
        assert "pcp:" not in got.err
