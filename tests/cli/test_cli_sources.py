"""With no source named, each command does what its PCP tool does (info reads the local
pmcd as pminfo does, fetch as pmval does, dump prints pmdumplog's usage and exits 1,
export asks for an archive); the bundled demo archive is read only when --demo names it."""
from __future__ import annotations

import pytest

from support.cliutil import DEMO_ARCHIVE, run_cli, run_tool


@pytest.mark.pmcd
def test_info_without_a_source_reads_the_local_pmcd_as_pminfo():
    argv = ["-f", "kernel.uname.release", "hinv.ncpu", "sample.long.one"]
    ref = run_tool("pminfo", *argv, check=True)
    got = run_cli("info", *argv)
    assert (got.status, got.out, got.err) == (0, ref.stdout, ref.stderr)


@pytest.mark.pmcd
def test_fetch_without_a_source_samples_the_local_pmcd_as_pmval():
    ref = run_tool("pmval", "-s", "1", "hinv.ncpu", check=True)
    got = run_cli("fetch", "-s", "1", "hinv.ncpu")
    assert got.status == 0, got.err
    assert got.out.splitlines()[:2] == ref.stdout.splitlines()[:2]    # metric:, host:


def test_dump_without_an_archive_prints_its_usage_and_fails_as_pmdumplog():
    for argv in ([], ["-l"], ["-dm"]):
        ref = run_tool("pmdumplog", *argv)
        got = run_cli("dump", *argv)
        assert got.status == ref.returncode == 1
        assert got.out == ref.stdout == ""
        assert got.err.startswith("Usage: ") and ref.stderr.startswith("Usage: pmdumplog ")
        assert "Log Label" not in got.out


def test_export_without_an_archive_asks_for_one():
    got = run_cli("export", "kernel.all.load")
    assert got.status == 1 and got.out == ""
    assert "-a ARCHIVE" in got.err and "--demo" in got.err


@pytest.mark.parametrize("command,argv", [
    ("info", ["-f", "kernel.uname.release"]), ("dump", ["-l"]),
    ("fetch", ["-s", "1", "kernel.all.load"]), ("export", ["kernel.all.load"])])
def test_demo_names_the_bundled_archive(command, argv):
    """--demo reads what naming DEMO_ARCHIVE reads (dump: its operand, pmdumplog's -a
    being "all"); with another source it is a usage error."""
    naming = ["--archive", DEMO_ARCHIVE] if command == "dump" else ["-a", DEMO_ARCHIVE]
    demo = run_cli(command, "--demo", *argv)
    named = run_cli(command, *naming, *argv)
    assert demo.status == 0, demo.err
    assert (demo.out, demo.err) == (named.out, named.err)
    both = run_cli(command, "--demo", *naming, *argv)
    assert both.status == 1 and "--demo" in both.err and both.out == ""
