"""`python -m pcp info` and `dump` against pminfo and pmdumplog: on the bundled archive
(no pmcd needed), on the pmlogger test corpus (v2/v3, compressed, multi-volume, marks,
event records) and on the live pmcd. The outputs must be identical, byte for byte."""
from __future__ import annotations

import os
import subprocess
import sys
from typing import List

import pytest

import cpmapi as c_api
from pcp import pmapi

from support.cliutil import (BAD_QA_ARCHIVES, DEMO_ARCHIVE, QA_ARCHIVES, need_qa_archive,
                             need_tool, our_env, run_cli, run_module, run_tool, tool_env)


def _files(base):
    d = os.path.dirname(base)
    return sorted(f for f in os.listdir(d) if f.startswith(os.path.basename(base) + "."))


# ---- the bundled archive ---------------------------------------------------------------

def test_bundled_archive_is_shipped_small_and_readable():
    files = _files(DEMO_ARCHIVE)
    assert files == ["demo.0.xz", "demo.index", "demo.meta.xz"]
    total = sum(os.path.getsize(os.path.join(os.path.dirname(DEMO_ARCHIVE), f)) for f in files)
    assert total < 64 * 1024
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, DEMO_ARCHIVE)
    assert ctx.pmGetArchiveLabel().get_hostname()
    n = 0
    while True:
        try:
            ctx.pmFetchArchive()
        except pmapi.pmErr as e:
            assert e.args[0] == c_api.PM_ERR_EOL
            break
        n += 1
    assert n >= 10
    # counters, instance domains and strings are all there
    names = ["sample.seconds", "kernel.all.cpu.user", "kernel.all.load",
             "network.interface.in.bytes", "kernel.uname.release", "sample.string.hullo"]
    descs = ctx.pmLookupDescs(ctx.pmLookupName(names))
    sems = [d.contents.sem for d in descs]
    assert sems[0] == sems[1] == c_api.PM_SEM_COUNTER
    assert descs[2].contents.indom != c_api.PM_INDOM_NULL
    assert descs[4].contents.type == c_api.PM_TYPE_STRING


DUMP_CASES = [
    ([], []),
    (["--all"], ["-a"]),
    (["-l"], ["-l"]),
    (["-L"], ["-L"]),
    (["-d"], ["-d"]),
    (["-i"], ["-i"]),
    (["-t"], ["-t"]),
    (["-h"], ["-h"]),
    (["-s"], ["-s"]),
    (["-r"], ["-r"]),
    (["-z", "-dim"], ["-z", "-dim"]),
    (["-Z", "EST5EDT", "-l"], ["-Z", "EST5EDT", "-l"]),
    # time windows in libpcp's forms, applied as pmdumplog applies them
    (["-S", "+1", "-T", "+2"], ["-S", "+1", "-T", "+2"]),
    (["-T", "-1.5"], ["-T", "-1.5"]),
    (["-S", "+0.25sec", "-T", "+1500ms"], ["-S", "+0.25sec", "-T", "+1500ms"]),
    (["-r", "-S", "+0.5", "-T", "+2.5"], ["-r", "-S", "+0.5", "-T", "+2.5"]),
    (["-r", "-T", "+1"], ["-r", "-T", "+1"]),
    (["-S", "+1000"], ["-S", "+1000"]),
    (["-z", "-S", "+1", "-T", "+1"], ["-z", "-S", "+1", "-T", "+1"]),
    (["-T", "5min"], ["-T", "5min"]),
    (["-S", "@06:14:52", "-T", "@06:14:55"], ["-S", "@06:14:52", "-T", "@06:14:55"]),
    # pmdumplog's own options: -a is "all", -x dates, -e label sets, -M <mark>s
    (["-a"], ["-a"]),
    (["-x"], ["-x"]),
    (["-xx", "-r"], ["-xx", "-r"]),
    (["-xxx", "-lLt"], ["-xxx", "-lLt"]),
    (["-xt"], ["-xt"]),
    (["-xxi"], ["-xxi"]),
    (["-e"], ["-e"]),
    (["-xxxe", "-Z", "UTC"], ["-xxxe", "-Z", "UTC"]),
    (["-M"], ["-M"]),
    (["-I"], ["-I"]),
    (["-xxI"], ["-xxI"]),
]


@pytest.mark.parametrize("ours,theirs", DUMP_CASES, ids=[" ".join(c[1]) or "default" for c in DUMP_CASES])
def test_dump_bundled_matches_pmdumplog(ours, theirs):
    ref = run_tool("pmdumplog", *theirs, DEMO_ARCHIVE, check=True)
    got = run_cli("dump", "--demo", *ours)
    assert got.status == 0, got.err
    assert got.out == ref.stdout


@pytest.mark.parametrize("names", [["sample.colour", "kernel.all.load"], ["sample"],
                                   ["network", "sample.long.one"]])
def test_dump_bundled_selected_metrics_match_pmdumplog(names):
    for flags in ([], ["-r"], ["-s"]):
        ref = run_tool("pmdumplog", *flags, DEMO_ARCHIVE, *names, check=True)
        got = run_cli("dump", "--demo", *flags, *names)
        assert got.status == 0, got.err
        assert got.out == ref.stdout


def test_dump_bad_time_window_reports_as_pmdumplog():
    """pmdumplog's message for a time libpcp cannot read, under our program name."""
    ref = run_tool("pmdumplog", "-S", "@bogus", DEMO_ARCHIVE)
    got = run_cli("dump", "--demo", "-S", "@bogus")
    assert got.status == ref.returncode == 1
    assert got.err.replace("pcp-native dump:", "pmdumplog:", 1) == ref.stderr


# the PCP tools' options pcp-native does not do: its usage does not list them
NOT_DONE = {"pminfo": ("--container", "-s, --series", "-x, --events"),
            "pmval": ("-g, --guimode", "-p N, --guiport", "--container", "-d, --delay",
                      "-v, --verbose", "-x VALUE, --filter", "-X, --timestamp"),
            "pmdumplog": ()}


def _usage(text: str, ours: str, theirs: str) -> str:
    """Our usage text as the PCP tool's: its name, and without our own section."""
    text = text.replace("pcp-native %s" % ours, theirs)
    return text.split("\npcp-native options:\n", 1)[0]


def _usage_we_do(text: str, theirs: str) -> str:
    """A PCP tool's usage text without the options pcp-native does not do (an entry and
    its continuation line)."""
    kept: List[str] = []
    dropping = False
    for line in text.splitlines(True):
        if line.startswith("  ") and not line.startswith("   "):
            dropping = line.strip().startswith(NOT_DONE[theirs])
        elif not line.startswith("   "):
            dropping = False
        if not dropping:
            kept.append(line)
    return "".join(kept)


USAGE_CASES = [("dump", "pmdumplog", ["-q"]), ("dump", "pmdumplog", ["-?"]),
               ("dump", "pmdumplog", ["--bogus"]), ("dump", "pmdumplog", ["-Z", "UTC", "-z"]),
               ("info", "pminfo", ["-q"]), ("info", "pminfo", ["-?"]),
               ("info", "pminfo", ["--bogus=1"]), ("info", "pminfo", ["-b", "x"]),
               ("fetch", "pmval", ["-q", "sample.seconds"]), ("fetch", "pmval", ["-?"]),
               ("fetch", "pmval", ["-t", "soon", "sample.seconds"]),
               ("fetch", "pmval", ["-f", "-1", "sample.seconds"]),
               ("fetch", "pmval", ["-w", "x", "sample.seconds"]), ("fetch", "pmval", [])]


@pytest.mark.parametrize("ours,theirs,argv", USAGE_CASES,
                         ids=["%s %s" % (c[0], " ".join(c[2])) for c in USAGE_CASES])
def test_bad_options_print_the_subcommands_usage_as_the_pcp_tool_does(ours, theirs, argv):
    """An unknown or wrong option: libpcp's message, then this subcommand's usage (the
    PCP tool's option table, plus pcp-native's own section), and the tool's status."""
    archive = ["-U", DEMO_ARCHIVE] if theirs == "pmval" else \
        ["-a", DEMO_ARCHIVE] if theirs == "pminfo" else [DEMO_ARCHIVE]
    ref = run_tool(theirs, *argv, *archive)
    got = run_cli(ours, *argv)
    assert got.status == ref.returncode != 0
    assert got.out == ref.stdout == ""
    assert _usage(got.err, ours, theirs) == _usage_we_do(ref.stderr, theirs)
    assert "Usage: pcp-native %s [options]" % ours in got.err
    assert "pcp-native COMMAND" not in got.err        # not the top-level usage


@pytest.mark.parametrize("suffix", [".0.xz", ".index", ".meta.xz"])
def test_dump_raw_hex_as_pmdumplog(suffix):
    """-v FILE: the physical file's records in hex (compressed files as they are)."""
    ref = run_tool("pmdumplog", "-v", DEMO_ARCHIVE + suffix, check=True)
    got = run_cli("dump", "-v", DEMO_ARCHIVE + suffix)
    assert got.status == 0, got.err
    assert got.out == ref.stdout
    assert run_cli("dump", "-v", DEMO_ARCHIVE + suffix, "extra").status == 1   # as pmdumplog


def test_an_alternative_namespace_as_pmdumplog_and_pminfo_read_it(tmp_path, monkeypatch):
    """-n FILE (libpcp's standard option): names from that PMNS, the archive's culled,
    with the default configuration's derived metrics added to it as libpcp adds them."""
    monkeypatch.delenv("PCP_DERIVED_CONFIG", raising=False)
    pmns = tmp_path / "pmns"
    pmns.write_text("root {\n    foo\n}\nfoo {\n    load\t60:2:0\n    one\t29:0:1\n}\n")
    for flags in (["-d"], ["-m"], ["-dm", "foo"]):
        ref = run_tool("pmdumplog", "-n", str(pmns), *flags[:1], DEMO_ARCHIVE, *flags[1:],
                       check=True)
        got = run_cli("dump", "-n", str(pmns), *flags[:1], DEMO_ARCHIVE, *flags[1:])
        assert got.status == 0, got.err
        assert got.out == ref.stdout
    for flags in ([], ["-f"], ["-dm", "foo.load"], ["foo.one", "foo.load"]):
        ref = run_tool("pminfo", "-n", str(pmns), "-a", DEMO_ARCHIVE, *flags)
        got = run_cli("info", "--demo", "-n", str(pmns), *flags)
        assert got.status == ref.returncode, got.err
        assert got.out == ref.stdout and got.err == ref.stderr


@pytest.mark.pmcd
def test_info_live_verify_and_full_indoms_as_pminfo():
    for flags in (["-v", "sample"], ["-I", "sample.bin", "sample.colour"],
                  ["-d", "2.0.24", "29.1", "sample.colour", "29.2"],
                  ["-tTl", "29.1", "2.1", "hinv.ncpu"]):
        ref = run_tool("pminfo", "-h", "local:", *flags, check=True)
        got = run_cli("info", "-h", "local:", *flags)
        assert got.out == ref.stdout


@pytest.mark.pmcd
def test_info_live_zone_as_pminfo():
    """pminfo finishes the options against archives only: no note for a host's -z."""
    for flags in (["-z"], ["-Z", "EST5EDT"]):
        ref = run_tool("pminfo", "-h", "local:", *flags, "-f", "hinv.ncpu", check=True)
        got = run_cli("info", "-h", "local:", *flags, "-f", "hinv.ncpu")
        assert got.out == ref.stdout


def test_dump_unknown_metric_fails():
    got = run_cli("dump", "--demo", "no.such.metric")
    assert got.status == 1
    assert "No metric names can be translated" in got.err


def test_dump_record_limit():
    got = run_cli("dump", "--demo", "--records", "2")
    assert got.out.count(" metrics\n") == 2


INFO_CASES = [[], ["-m"], ["-M", "-t"], ["-d"], ["-f"], ["-T"], ["-l"], ["-dfmtTl"],
              ["-f", "sample", "kernel.all"], ["-l", "kernel.all.load", "hinv.ncpu"],
              ["-dt", "sample.colour", "network"], ["-fM", "pmcd"], ["-z", "-f", "hinv"],
              ["-Z", "UTC", "-m", "kernel"],
              # pminfo's -O: values and labels at that time of the archive
              ["-O", "+3", "-f"], ["-O", "-2", "-l", "kernel.all.load"],
              ["-O", "@06:14:52", "-f", "kernel.all.load"], ["-b", "3", "-f", "sample"],
              # -I: instance domains in decimal too; -v: only what cannot be fetched
              ["-I"], ["-IdtT", "kernel.all"], ["-v"], ["-vf", "sample"],
              # pminfo's operands: a pmid (by its name), an instance domain, bad ones
              ["60.2"], ["-tT", "60.2"], ["-It", "60.2", "60.0.20", "kernel.all.load"],
              ["-l", "29.1"], ["-f", "60.2.0", "29.2"], ["-d", "60.0.20", "60.1", "29.1"],
              ["-v", "60.2", "60.2.0"]]


@pytest.mark.parametrize("flags", INFO_CASES, ids=[" ".join(c) or "default" for c in INFO_CASES])
def test_info_bundled_matches_pminfo(flags):
    ref = run_tool("pminfo", "-a", DEMO_ARCHIVE, *flags, check=True)
    got = run_cli("info", "--demo", *flags)
    assert got.status == 0, got.err
    assert got.out == ref.stdout


def test_info_bad_pmid_and_indom_operands_report_as_pminfo():
    for argv in (["60.2.999"], ["60"], ["60.x"]):
        ref = run_tool("pminfo", "-a", DEMO_ARCHIVE, *argv)
        got = run_cli("info", "--demo", *argv)
        assert (got.status, got.out, got.err) == (ref.returncode, ref.stdout, ref.stderr)


def test_info_unknown_name_reports_and_fails():
    ref = run_tool("pminfo", "-a", DEMO_ARCHIVE, "-f", "sample.nope", "sample.long.one")
    got = run_cli("info", "--demo", "-f", "sample.nope", "sample.long.one")
    assert got.status == ref.returncode == 1
    assert got.out == ref.stdout
    assert "sample.nope: Unknown metric name" in got.err


def test_source_errors_are_one_line():
    got = run_cli("info", "-a", "/nonexistent/archive")
    assert got.status == 1
    assert got.err.startswith("pcp-native info: Cannot open archive")
    assert "Traceback" not in got.err


def test_module_and_console_script_run():
    p = run_module("dump", "--demo", "-l")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("Log Label (Log Format Version 3)")
    p = run_module("--help")
    assert p.returncode == 0 and "info" in p.stdout and "dump" in p.stdout
    script = os.path.join(os.path.dirname(sys.executable), "pcp-native")
    if os.path.exists(script):
        p = subprocess.run([script, "info", "--demo", "hinv.ncpu"], capture_output=True, text=True,
                           env=our_env())
        assert p.returncode == 0 and p.stdout == "hinv.ncpu\n"


def test_broken_pipe_is_quiet():
    p = subprocess.run("%s -m pcp dump --demo --all | head -1" % sys.executable, shell=True,
                       capture_output=True, text=True, env=our_env())
    assert p.stdout == "Log Label (Log Format Version 3)\n"
    assert "Traceback" not in p.stderr and "Error" not in p.stderr


# ---- the pmlogger corpus ---------------------------------------------------------------

CORPUS = ["v2", "v3native", "marks", "marks3", "mv3", "xz_all", "bz2_v3", "noindex"]


@pytest.fixture(scope="module")
def corpus(pmcd):
    from support import archives

    return archives.get_corpus()


@pytest.mark.pmcd
@pytest.mark.parametrize("name", CORPUS)
def test_dump_corpus_matches_pmdumplog(corpus, name):
    path = corpus[name]
    for ours, theirs in ((["--all"], ["-a"]), (["-r", "-z"], ["-r", "-z"]),
                         (["-m"], ["-m"]), (["-exx"], ["-exx"]), (["-Ii"], ["-Ii"])):
        ref = run_tool("pmdumplog", *theirs, path, check=True)
        got = run_cli("dump", "--archive", path, *ours)
        assert got.status == 0, got.err
        assert got.out == ref.stdout, (name, ours)
    for suffix in (".meta", ".0", ".index"):     # the raw files, where uncompressed
        if os.path.exists(path + suffix):
            ref = run_tool("pmdumplog", "-v", path + suffix, check=True)
            assert run_cli("dump", "-v", path + suffix).out == ref.stdout, (name, suffix)
    for flags in (["-M"], []):          # <mark>s among the chosen metrics' records, or not
        ref = run_tool("pmdumplog", *flags, path, "sample.seconds", check=True)
        got = run_cli("dump", *flags, path, "sample.seconds")
        assert got.out == ref.stdout, (name, flags)


@pytest.mark.pmcd
@pytest.mark.parametrize("name", ["v2", "v3native", "marks", "mv3"])
def test_info_corpus_matches_pminfo(corpus, name):
    path = corpus[name]
    ref = run_tool("pminfo", "-a", path, "-dfmtTlM", check=True)
    got = run_cli("info", "-a", path, "-dfmtTlM")
    assert got.status == 0, got.err
    assert got.out == ref.stdout


# ---- PCP's QA archives: values found in one pass -----------------------------------------
# pminfo asks an archive for each metric's values by itself, from the start; info answers
# those fetches from one pass over the records, and looks up instance names and labels at
# the time of each answer: instance changes, marks, event records, a truncated volume, a
# metric first logged in the last records (20180102's sample.dynamic.meta.metric), a list
# of archives as one source

QA_INFO = ["20180102", "changeinst", "eventrec", "count-mark",
           "20101004-trunc", "540117-short", "arch_a,arch_b"]


@pytest.mark.parametrize("names", QA_INFO)
def test_info_qa_archive_values_match_pminfo(names):
    source = ",".join(need_qa_archive(n) for n in names.split(","))
    for flags in (["-fd"], ["-v"], ["-O", "+30", "-flT"]):
        ref = run_tool("pminfo", "-a", source, *flags)
        got = run_cli("info", "-a", source, *flags)
        assert (got.status, got.out, got.err) == (ref.returncode, ref.stdout, ref.stderr), flags


def test_info_qa_archive_mixed_operands_match_pminfo():
    """Names, an instance domain (printed where it stands), a pmid, an unknown name and
    derived metrics (fetched one by one) among the values found in one pass."""
    argv = ["-f", "kernel.all.load", "60.2", "sample.nope", "kernel.all.cpu.user", "60.0.20",
            "disk.dev.await", "kernel.cpu.util.user", "hinv.ncpu", "sample.dynamic.meta"]
    source = need_qa_archive("20180102")
    ref = run_tool("pminfo", "-a", source, *argv)
    got = run_cli("info", "-a", source, *argv)
    assert (got.status, got.out, got.err) == (ref.returncode, ref.stdout, ref.stderr)


def test_info_qa_archive_gone_instances_with_fetchall_as_pminfo():
    """pminfo -F names an instance gone from the instance domain in force DISAPPEARED and
    leaves its value out (-f reports pmNameIndom's error and the value):
    540117-short's pmcd.pmlogger instance 19559."""
    source = need_qa_archive("540117-short")
    for flags in (["-F"], ["-F", "pmcd.pmlogger"]):
        ref = run_tool("pminfo", "-a", source, *flags)
        got = run_cli("info", "-a", source, *flags)
        assert (got.status, got.out, got.err) == (ref.returncode, ref.stdout, ref.stderr), flags
        assert 'inst [19559 "DISAPPEARED"]' in got.out


def test_info_instance_names_past_ascii_as_pminfo():
    """Instance names print as their bytes (UTF-8 here: procpid-encode's "1µsec"), not as
    the binding's pmGetInDom gives them (ASCII only)."""
    source = need_qa_archive("procpid-encode")
    for flags in (["-f", "proc.psinfo.pid"], ["-O", "+1", "-f", "proc.psinfo.pid"]):
        ref = run_tool("pminfo", "-a", source, *flags)
        got = run_cli("info", "-a", source, *flags)
        assert (got.status, got.out, got.err) == (ref.returncode, ref.stdout, ref.stderr), flags
        assert "1\u00b5sec" in got.out


# badlog-4: records before the label's start time, which pminfo's fetch from its unset
# origin (time zero) reads first; logsummary-bug: a 64-bit value block of a 32-bit
# metric, printed as libpcp leaves it after swapping the block by its own type
BAD_INFO = ["badlog-4", "logsummary-bug"]


@pytest.mark.parametrize("name", BAD_INFO)
def test_info_damaged_archive_values_match_pminfo(name):
    source = need_qa_archive(name, BAD_QA_ARCHIVES)
    for flags in (["-F"], ["-v"], ["-O", "+1", "-f"]):
        ref = run_tool("pminfo", "-a", source, *flags)
        got = run_cli("info", "-a", source, *flags)
        assert (got.status, got.out, got.err) == (ref.returncode, ref.stdout, ref.stderr), flags


def test_info_negative_nan_as_pminfo():
    """all-sles9-sp1's filesys.full of /dev/hda is a NaN with its sign bit set: printf
    writes "-nan"."""
    source = need_qa_archive("all-sles9-sp1")
    ref = run_tool("pminfo", "-f", "-a", source, "filesys.full")
    got = run_cli("info", "-f", "-a", source, "filesys.full")
    assert (got.status, got.out, got.err) == (ref.returncode, ref.stdout, ref.stderr)
    assert "value -nan" in got.out


def test_dump_value_block_of_another_type_matches_pmdumplog():
    source = need_qa_archive("logsummary-bug", BAD_QA_ARCHIVES)
    ref = run_tool("pmdumplog", "-a", source)
    got = run_cli("dump", "-a", source)
    assert (got.status, got.out, got.err) == (ref.returncode, ref.stdout, ref.stderr)


def _on_a_terminal(argv, env):
    """What a command writes to a terminal (stdout and stderr on one pseudo-terminal,
    each shown as it is written), with the terminal's CR LF made LF."""
    import pty

    main_fd, term_fd = pty.openpty()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=term_fd,
                                stderr=term_fd, env=env)
    finally:
        os.close(term_fd)
    out = b""
    while True:
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:         # EIO: the command has closed its end
            break
        if not chunk:
            break
        out += chunk
    os.close(main_fd)
    proc.wait(timeout=120)
    return out.replace(b"\r\n", b"\n")


def test_info_qa_archive_errors_show_in_place_on_a_terminal():
    """The errors of an operand show after what the operands before it printed, as
    pminfo's do, although info finds the values of many operands in one pass."""
    argv = ["-f", "-a", need_qa_archive("20180102"), "kernel.all.load", "sample.nope",
            "hinv.ncpu", "60.x", "kernel.all.cpu.user"]
    ref = _on_a_terminal([need_tool("pminfo")] + argv, tool_env())
    got = _on_a_terminal([sys.executable, "-m", "pcp", "info"] + argv, our_env())
    assert ref.index(b"sample.nope") > ref.index(b"kernel.all.load")
    assert got == ref.replace(b"pminfo", b"pcp-native info")


# ---- live ------------------------------------------------------------------------------

@pytest.mark.pmcd
def test_info_live_metadata_matches_pminfo():
    ref = run_tool("pminfo", "-h", "local:", "-dmtT", "sample", "kernel.all", "hinv", check=True)
    got = run_cli("info", "-h", "local:", "-dmtT", "sample", "kernel.all", "hinv")
    assert got.status == 0, got.err
    assert got.out == ref.stdout


@pytest.mark.pmcd
def test_info_live_values_match_pminfo():
    stable = ["sample.long", "sample.ulong", "sample.longlong", "sample.float", "sample.double",
              "sample.string.hullo", "sample.bin", "sample.aggregate.hullo", "sample.noinst",
              "sample.bad.novalues", "hinv.ncpu"]
    ref = run_tool("pminfo", "-h", "local:", "-f", *stable, check=True)
    got = run_cli("info", "-h", "local:", "-f", *stable)
    assert got.status == 0, got.err
    assert got.out == ref.stdout


@pytest.mark.pmcd
def test_info_live_fetchall_names_the_instances_as_pminfo():
    """pminfo -F asks again, with every instance pmGetInDom lists, for a metric whose
    instances must be named (sample.needprofile: PM_ERR_PROFILE); -f reports the error."""
    names = ["sample.needprofile", "sample.long"]
    for flag in ("-F", "-f"):
        ref = run_tool("pminfo", "-h", "local:", flag, *names, check=True)
        got = run_cli("info", "-h", "local:", flag, *names)
        assert (got.status, got.out) == (0, ref.stdout), flag


def test_info_archive_fetchall_reports_pmgetindom_as_pminfo():
    """In an archive that logged PM_ERR_PROFILE for sample.needprofile and no instance
    domain for it, pminfo -F reports pmGetIndom's failure instead of the value's error."""
    source = need_qa_archive("chartqa1")
    for flags in (["-F"], ["-F", "sample.needprofile"]):
        ref = run_tool("pminfo", "-a", source, *flags)
        got = run_cli("info", "-a", source, *flags)
        assert (got.status, got.out, got.err) == (ref.returncode, ref.stdout, ref.stderr), flags


# ---- days 1 to 9 of a month: ctime's space-padded day ----------------------------------

def _early_day_archive(tmp_path, version: int) -> str:
    from support import archive_bytes as ab

    return ab.early_day_archive(str(tmp_path / ("early%d" % version)), version)


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("flags", [["-l"], ["-L"], [], ["-x"], ["-xx"], ["-xxxl"]],
                         ids=["-l", "-L", "values", "-x", "-xx", "-xxxl"])
def test_dump_days_one_to_nine_match_pmdumplog(tmp_path, version, flags):
    base = _early_day_archive(tmp_path, version)
    ref = run_tool("pmdumplog", *flags, base, check=True)
    assert "Jan  5" in ref.stdout or flags == []
    got = run_cli("dump", *flags, base)
    assert got.status == 0, got.err
    assert got.out == ref.stdout


@pytest.mark.parametrize("flags", [[], ["-l"], ["-dim"]], ids=["values", "-l", "-dim"])
def test_dump_takes_the_archive_first_as_pmdumplog_does(flags):
    for names in ([], ["sample.long.one", "kernel.all.load"]):
        ref = run_tool("pmdumplog", *flags, DEMO_ARCHIVE, *names, check=True)
        got = run_cli("dump", *flags, DEMO_ARCHIVE, *names)
        assert got.status == 0, got.err
        assert got.out == ref.stdout
    # the first operand is the archive even when it reads like a metric name
    assert run_cli("dump", "sample.long.one").status == \
        run_tool("pmdumplog", "sample.long.one").returncode == 1


def test_dump_looks_instance_names_up_once_per_record_and_domain(monkeypatch):
    """The instance-domain record in force is found once per record and domain, not once
    per value (that lookup was most of the time a large archive's dump took): the same
    output with a quarter of the lookups on the bundled archive (on 20180102 a hundredth)."""
    from pcp._archive import meta

    calls = []
    real = meta.Metadata.indom_at

    def counted(self, indom, stamp):
        calls.append(indom)
        return real(self, indom, stamp)

    monkeypatch.setattr(meta.Metadata, "indom_at", counted)
    got = run_cli("dump", "--demo")
    assert got.status == 0 and got.out == run_tool("pmdumplog", DEMO_ARCHIVE).stdout
    named = got.out.count(' inst [')
    assert named > 200 and len(calls) * 3 < named, (len(calls), named)   # 286 before


# old v2 archives whose value blocks have type 0 (strings, 64-bit and double values):
# pmdumplog prints each by its descriptor's type, as pmExtractValue reads such a block
UNTYPED_BLOCK_ARCHIVES = ["541380_v2", "951127.23.01_v2", "960624.08.17_v2",
                          "babylon.pmview_v2", "bozo.client_v2"]


@pytest.mark.parametrize("name", UNTYPED_BLOCK_ARCHIVES)
def test_dump_untyped_value_blocks_of_old_v2_archives_as_pmdumplog(name):
    from support.cliutil import need_qa_archive

    path = need_qa_archive(name)
    ref = run_tool("pmdumplog", "-a", path, check=True)
    got = run_cli("dump", "--all", "-a", path)
    assert got.status == 0, got.err
    assert got.out == ref.stdout


def _dump_bytes(argv):
    """pmdumplog's and `python -m pcp dump`'s (status, stdout, stderr) as bytes, our
    program's name put as pmdumplog's: in subprocesses, since an archive's text need not
    be UTF-8 and both print its bytes as they are."""
    ref = subprocess.run([need_tool("pmdumplog")] + argv, capture_output=True, env=tool_env(),
                         timeout=120)
    got = subprocess.run([sys.executable, "-m", "pcp", "dump"] + argv, capture_output=True,
                         env=our_env(), timeout=120)
    ours = (got.returncode, got.stdout, got.stderr.replace(b"pcp-native dump:", b"pmdumplog:"))
    return (ref.returncode, ref.stdout, ref.stderr), ours


# what pmdumplog prints of QA archives (good and damaged) that the other tests do not
# reach, as bytes: (directory, archive, flags[, metrics])
QA_DUMP_CASES = [
    # instance names and string values that are not UTF-8 (Latin-1 and other encodings
    # in a process's arguments and environment): pmdumplog prints their bytes
    (QA_ARCHIVES, "procpid-encode", ["-a"]),
    (QA_ARCHIVES, "procpid-encode2", ["-a"]),
    (QA_ARCHIVES, "procpid-encode2", ["-I"]),
    # the temporal index checked: an offset past the end of its volume, time going back
    (QA_ARCHIVES, "binning", ["-t"]),
    (QA_ARCHIVES, "chartqa1", ["-t"]),
    # a last record that cannot be read: the end UNKNOWN, libpcp's warning, pmFetch's error
    (BAD_QA_ARCHIVES, "badlen-2", ["-a"]),
    (BAD_QA_ARCHIVES, "archive-20150417.131733", ["-lt"]),
    # a temporal index naming volume -1 and illegal times: each entry's checks, and the
    # records found from the archive's start as pmdumplog positions itself there
    (BAD_QA_ARCHIVES, "badti-2", ["-a"]),
    # in-situ values of 64-bit metrics (damaged records): the word in the unknown
    # type's form, as pmPrintValue writes a value pmExtractValue refuses
    (BAD_QA_ARCHIVES, "archive-20141125-000009", ["-z"],
     ["mem.numa.alloc.other_node", "kernel.all.cpu.wait.total"]),
]


@pytest.mark.parametrize("case", QA_DUMP_CASES,
                         ids=["%s%s" % (c[1], "".join(c[2])) for c in QA_DUMP_CASES])
def test_dump_qa_archives_as_pmdumplog(case):
    where, name, flags = case[:3]
    metrics = list(case[3]) if len(case) > 3 else []
    path = need_qa_archive(name, where)
    ref, got = _dump_bytes(flags + [path] + metrics)
    assert got == ref, flags
