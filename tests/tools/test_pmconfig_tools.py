"""PCP's pmconfig-based tools (pmrep, pcp2csv, pcp-dstat) run unchanged on this package:
the installed tool started with the official binding's interpreter and with ours on the
same pmlogger archive (and, for values that do not change, the live pmcd); stdout,
stderr and exit status must be the same byte for byte. Derived metrics come from the
default configuration on both sides, as a user's machine has them."""
import os
import re

import pytest

from support import tool_archive

pytestmark = [pytest.mark.pmcd, pytest.mark.reference]

# {a} is the Linux archive, {d} a scratch directory for files a run writes
PMREP_RUNS = [
    ["-a", "{a}", "-t", "1", "kernel.all.load", "mem.util.free"],
    ["-a", "{a}", "-t", "1", ":vmstat"],
    ["-a", "{a}", "-t", "0.5", ":vmstat-w"],
    ["-a", "{a}", "-t", "1", ":vmstat-a"],
    ["-a", "{a}", "-t", "0.5", "-o", "csv", "disk.dev"],
    ["-a", "{a}", "-t", "0.5", "-o", "csv", "-k", "-P", "5", "-r", "kernel.all",
     "network.interface.in"],
    ["-a", "{a}", "-u", "-x", "kernel.all.cpu"],
    ["-a", "{a}", "-u", "-r", "kernel.all.cpu.user", "disk.dev.read"],
    ["-a", "{a}", "-t", "1", "-X", "-I", "-l|", "mem.util.free", "kernel.all.load"],
    ["-a", "{a}", "-t", "1", "-1", "-H", "-G", "mem.util.free", "kernel.all.load"],
    ["-a", "{a}", "-t", "1", "-i", "vda", "-v", "disk.dev.read_bytes", "disk.dev.write_bytes"],
    ["-a", "{a}", "-t", "1", "-r", "-i", "sd.*,vda", "disk.dev.read", "disk.dev.write"],
    ["-a", "{a}", "-t", "1", "-J", "3", "proc.psinfo.rss"],
    ["-a", "{a}", "-t", "1", "-J", "-2", "-8", "proc.psinfo.rss", "proc.psinfo.vsize"],
    ["-a", "{a}", "-t", "0.25", "-S", "+1", "-T", "+3", "-z", "network.interface.in.bytes"],
    ["-a", "{a}", "-t", "1", "-s", "2", "-q", "kbyte", "-b", "GB", "-y", "sec",
     "mem.util.free", "kernel.all.cpu.idle"],
    ["-a", "{a}", "-t", "1", "-o", "csv", "-j", "-x", "proc.psinfo.cmd"],
    ["-a", "{a}", "-t", "1", "-p", "-f", "%H:%M:%S.%f", "-w", "12", "-P", "1",
     "kernel.all.cpu.user", "kernel.all.cpu.sys"],
    ["-a", "{a}", "-t", "1", "-e", "kernel.all.load", "-E", "2", "hinv.ncpu"],
    ["-a", "{a}", "-O", "+2", "-t", "0.5", "-s", "3", "-C", "kernel.all.load"],
    ["-a", "{a}", "-t", "1", "-Z", "Asia/Tokyo", "-p", "kernel.all.load"],
    ["-a", "{a}", "--bogus"],
    ["-a", "{a}", "no.such.metric"],
    ["-a", "{a}", "-t", "1", "-i", "bogus", "disk.dev.read"],
    ["-a", "{a}", "-t", "1", ":no-such-set"],
    ["-a", "{a}", "-t", "0", "kernel.all.load"],
    ["-a", "{a}", "-t", "1", "-c", "/nonexistent.conf", "kernel.all.load"],
    ["--help"],
]
# live: metrics whose values do not change, and no report format that prints the time
LIVE_RUNS = [
    ["-s", "3", "-t", "0.1", "sample.long.one", "sample.ulong.hundred", "sample.bin",
     "sample.string.hullo"],
    ["-s", "2", "-t", "0.1", "-I", "-l,", "sample.double.bin", "sample.bin"],
    ["-s", "2", "-t", "0.1", "-r", "-U", "sample.long"],
]
DSTAT_RUNS = [
    ["-a", "{a}", "1"],
    ["-a", "{a}", "-cdngy", "1", "3"],
    ["-a", "{a}", "--time", "--mem", "--swap", "--load", "1"],
    ["-a", "{a}", "--top-cpu", "--top-mem", "1"],
    ["-a", "{a}", "--bogus"],
]


def _compare(tool, argv, env=None):
    path = tool_archive.tool_path(tool)
    if path is None:
        pytest.fail("%s is not installed (the pcp package installs it)" % tool)
    ref = tool_archive.run_tool(path, argv, False, env)
    ours = tool_archive.run_tool(path, argv, True, env)
    what = "%s %s" % (tool, " ".join(argv))
    assert ours["status"] == ref["status"], (what, ours["stderr"][-2000:], ref["stderr"][-2000:])
    assert tool_archive.masked(ours["stderr"]) == tool_archive.masked(ref["stderr"]), what
    assert ours["stdout"] == ref["stdout"], what
    return ref


def _argv(argv, tmp_path):
    base = tool_archive.linux_archive()
    return [word.format(a=base, d=str(tmp_path)) for word in argv]


@pytest.mark.parametrize("argv", PMREP_RUNS, ids=[" ".join(a) for a in PMREP_RUNS])
def test_pmrep_archive(reference_binding, argv, tmp_path):
    _compare("pmrep", _argv(argv, tmp_path))


@pytest.mark.parametrize("argv", PMREP_RUNS[:6], ids=[" ".join(a) for a in PMREP_RUNS[:6]])
def test_pcp2csv_archive(reference_binding, argv, tmp_path):
    _compare("pcp2csv", _argv(argv, tmp_path))


@pytest.mark.parametrize("argv", LIVE_RUNS, ids=[" ".join(a) for a in LIVE_RUNS])
def test_pmrep_live(reference_binding, argv):
    ref = _compare("pmrep", argv)
    assert ref["stdout"].count("\n") >= 3


@pytest.mark.parametrize("argv", DSTAT_RUNS, ids=[" ".join(a) for a in DSTAT_RUNS])
def test_pcp_dstat_archive(reference_binding, argv, tmp_path):
    _compare("pcp-dstat", _argv(argv, tmp_path))


def test_pmrep_writes_the_same_archive(reference_binding, tmp_path):
    """pmrep -o archive (through pcp.pmi): the archive each side writes dumps the same
    with pmdumplog, apart from the writing process's id in the label."""
    import subprocess

    dumps = []
    for ours in (False, True):
        out = os.path.join(str(tmp_path), "ours" if ours else "ref")
        argv = _argv(["-a", "{a}", "-t", "1", "-o", "archive", "-F", out, "kernel.all.load",
                      "disk.dev.read", "mem.util.free"], tmp_path)
        run = tool_archive.run_tool(tool_archive.tool_path("pmrep"), argv, ours)
        assert run["status"] == 0, run["stderr"]
        dump = subprocess.run(["pmdumplog", "-a", out], capture_output=True, text=True,
                              check=True).stdout
        dump = re.sub(r"PID for pmlogger: \d+", "PID for pmlogger: N", dump)
        dumps.append(dump.replace(out, "ARCHIVE"))
    assert dumps[1] == dumps[0]


# configuration directories of several files (each file is parsed once and merged as
# configparser's read merges it): {name: text}
_CONF_A = """[options]
timestamp = yes
interval = 2
width = 14

[set1]
free = mem.util.free
free.width = 12
used = mem.util.used
used.label = %(free)s

[shared]
load = kernel.all.load
"""
_CONF_B = """[options]
interval = 1
precision = 1

[set2]
cpu = kernel.all.cpu.user
cpu.label = us%%
cpu.width = 9

[shared]
cached = mem.util.cached
"""
CONFIG_DIRS = {
    "merged": ({"a.conf": _CONF_A, "b.conf": _CONF_B, "notes.txt": "[options]\nbogus = 1\n"},
               [["-a", "{a}", "-s", "3", ":set1", ":set2"],
                ["-a", "{a}", "-s", "2", "-o", "csv", ":shared", "kernel.all.load"],
                ["-a", "{a}", "-s", "2", "-G", ":set1"]]),
    "defaults": ({"a.conf": "[DEFAULT]\nbase = mem.util\n[set1]\nfree = %(base)s.free\n"},
                 [["-a", "{a}", "-s", "2", ":set1"]]),
    "bad interpolation": ({"a.conf": _CONF_A, "b.conf": "[set3]\nx = %(nothere)s\n"},
                          [["-a", "{a}", "-s", "2", ":set1"]]),
    "duplicate section": ({"a.conf": "[set1]\nfree = mem.util.free\n[set1]\nx = y\n"},
                          [["-a", "{a}", "-s", "2", ":set1"]]),
    "no section header": ({"a.conf": _CONF_A, "b.conf": "free = mem.util.free\n"},
                          [["-a", "{a}", "-s", "2", ":set1"]]),
    "empty value": ({"a.conf": "[set1]\nfree =\n"}, [["-a", "{a}", "-s", "2", ":set1"]]),
    "unknown option": ({"a.conf": "[options]\nbogus = 1\n"},
                       [["-a", "{a}", "-s", "2", "mem.util.free"]]),
}


@pytest.mark.parametrize("name", list(CONFIG_DIRS))
def test_pmrep_configuration_directory(reference_binding, name, tmp_path):
    files, runs = CONFIG_DIRS[name]
    confdir = tmp_path / "pmrep"
    confdir.mkdir()
    for filename, text in files.items():
        (confdir / filename).write_text(text)
    for argv in runs:
        _compare("pmrep", ["-c", str(confdir)] + _argv(argv, tmp_path))
