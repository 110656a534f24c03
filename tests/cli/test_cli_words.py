"""PCP's words and semantics: the messages for a source that cannot be opened, dump's
lines for metric names it cannot translate, and fetch on an archive (pmval -a
interpolates at -t, one second without it or with -t 0; -U replays the records), each
compared with the PCP tool run on the same command line."""
from __future__ import annotations

import pytest

from support.cliutil import DEMO_ARCHIVE, run_cli, run_tool


def _as_tool(text, command, tool):
    return text.replace("pcp-native %s:" % command, tool + ":")


@pytest.mark.parametrize("command,tool,argv", [
    ("info", "pminfo", ["-a", "/nonexistent/archive", "hinv.ncpu"]),
    ("info", "pminfo", ["-h", "no-such-host.invalid", "hinv.ncpu"]),
    ("fetch", "pmval", ["-a", "/nonexistent/archive", "hinv.ncpu"]),
    ("fetch", "pmval", ["-U", "/nonexistent/archive", "hinv.ncpu"]),
    ("fetch", "pmval", ["-h", "no-such-host.invalid", "hinv.ncpu"]),
    ("dump", "pmdumplog", ["/nonexistent/archive"]),
    ("dump", "pmdumplog", ["kernel.all.load"]),          # the archive operand comes first
])
def test_a_source_that_cannot_be_opened_in_pcps_words(command, tool, argv):
    ref = run_tool(tool, *argv)
    got = run_cli(command, *argv)
    assert (got.status, got.out) == (ref.returncode, ref.stdout)
    assert _as_tool(got.err, command, tool) == ref.stderr


@pytest.mark.parametrize("names", [["no.such.metric"], ["no.such.metric", "kernel.all.load"],
                                   ["sample.nope", "sample.colour", "no.such"],
                                   ["kernel.all.nope", "kernel.all"]])
def test_dump_names_it_cannot_translate_as_pmdumplog(names):
    ref = run_tool("pmdumplog", DEMO_ARCHIVE, *names)
    got = run_cli("dump", DEMO_ARCHIVE, *names)
    assert (got.status, got.out) == (ref.returncode, ref.stdout)
    assert _as_tool(got.err, "dump", "pmdumplog") == ref.stderr


@pytest.mark.parametrize("argv", [["sample.seconds"], ["-t", "0", "kernel.all.load"],
                                  ["-t", "0", "-r", "kernel.all.cpu.user"],
                                  ["-s", "4", "sample.colour"],
                                  ["-T", "+5", "network.interface.in.bytes"]])
def test_fetch_on_an_archive_interpolates_as_pmval(argv):
    """pmval -a: one value a second (no -t, or -t 0) from the archive's start."""
    ref = run_tool("pmval", "-a", DEMO_ARCHIVE, *argv, check=True)
    got = run_cli("fetch", "-a", DEMO_ARCHIVE, *argv)
    assert (got.status, got.out, got.err) == (0, ref.stdout, ref.stderr)
    ref = run_tool("pmval", "-U", DEMO_ARCHIVE, *argv, check=True)
    got = run_cli("fetch", "-U", DEMO_ARCHIVE, *argv)
    assert (got.status, got.out, got.err) == (0, ref.stdout, ref.stderr)
