"""Paths that are not (whole) archives, beside the QA-archive sweep: every case of
not_archive_corpus.py (nonexistent names, empty and foreign directories, single files of
an archive, truncated files, dangling and looping symbolic links, unreadable files and
directories read as nobody, FIFOs and devices, comma lists with one bad member,
directories and lists mixing hosts, names with spaces and non-UTF-8 bytes) opened through
pmNewContext, pmContext.fromOptions (-a, and -a with -S), pmcc, the bulk readers, Dask
and `pcp-native info -a`, on libpcp 6.0.3 (the official binding, pminfo for the command)
and on this package, call by call.

The official binding's answer is the spec: its pmErr code and text, what libpcp wrote on
stderr, or the summary of the archive it opened. The bulk readers and Dask must raise the
pmErr that pmNewContext raises; the command must print pminfo's line (with its own
program name) and exit with pminfo's status. The differences accepted are in
DIFFERENCES, each with its reason; a listed difference that no longer shows fails.

libpcp's rules that the corpus pins down (src/libpcp/src/logutil.c __pmLogFindOpen,
context.c expandArchiveList and initarchive, io.c __pmFopen): a directory given as the
name stands for the archives of its .meta files, and none is PM_ERR_LOGFILE; the .index
and .meta files are opened while the directory is read, so the first that cannot be
opened ends the search with its errno (EACCES, ELOOP, ENOENT for a dangling link);
data volumes are opened by __pmFopen, which looks for a compressed file only when the
name does not exist (ENOENT), so a looping or unreadable volume is ELOOP or EACCES."""
import os
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import _unavailable

from corpus import not_archive_corpus as corpus

pytestmark = [pytest.mark.reference, pytest.mark.timeout(600)]

CALLS = ("context", "options", "window", "pmcc")     # both bindings, compared whole
READERS = ("bulk_read", "bulk_reader", "scan", "dask")   # ours: pmNewContext's pmErr
COMMANDS = ("cli_info", "cli_dump", "cli_export", "cli_fetch")   # ours: pminfo's line
# the bulk calls that read the records too: on an archive that opens (a truncated
# volume) their errors="raise" reports a damaged record libpcp's fetches also meet
READING = ("bulk_read", "scan", "dask")

FIFO_CASES = ("fifo-meta", "fifo-index", "fifo-0")
# case -> calls -> reason (None: every call); the reference's answer differs on purpose
DIFFERENCES = {
    **{case: {None: "libpcp's fopen of a FIFO waits for a writer (for ever); this "
                    "package opens it without waiting and reads what is there: nothing, "
                    "as libpcp would once a writer came and went (PM_ERR_NODATA)"}
       for case in FIFO_CASES},
    "list-comma-only": {None: "libpcp 6.0.3 dies (SIGSEGV): initarchive dereferences the "
                              "NULL archive of a list of nothing but commas; this package "
                              "raises PM_ERR_LOGFILE, as for a list with no archive"},
    **{case: {"dask": "pcp.dask reads a fleet: archives of several hosts are its "
                      "purpose (a host column), not PM_ERR_LOGHOST",
              "cli_export": "export of several archives groups them by host (a host "
                            "column after time, issue 36), not PM_ERR_LOGHOST"}
       for case in ("list-mixed-hosts", "dir-mixed-hosts")},
}
STATS = {"cases": 0, "calls": 0, "listed": 0}


@pytest.fixture(scope="module")
def swept():
    if not corpus.available():
        _unavailable("PCP's QA archives are not installed (Debian package pcp-testsuite)")
    from support import difftest

    difftest.require_reference()
    # not tmp_path: the cases read as nobody need every directory above them searchable
    root = tempfile.mkdtemp(prefix="pcp-not-archives-")
    os.chmod(root, 0o755)
    t0 = time.monotonic()
    try:
        cases = corpus.build(root)
        calls = CALLS + READERS + COMMANDS
        with ThreadPoolExecutor(max_workers=2) as pool:
            ref = pool.submit(corpus.run_side, cases, root, True, calls)
            ours = pool.submit(corpus.run_side, cases, root, False, calls)
            tools = {c.id: _pminfo(c, root) for c in cases}
            results = {"cases": cases, "reference": ref.result(), "ours": ours.result(),
                       "pminfo": tools}
        seconds = time.monotonic() - t0
        yield results
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", root], check=False)
        shutil.rmtree(root, ignore_errors=True)
    print("\nnot-archive corpus: %d cases, %d calls compared, %d listed differences, %.0f s"
          % (STATS["cases"], STATS["calls"], STATS["listed"], seconds))


def _pminfo(case, root):
    """pminfo -a on the case (as nobody when the case says so): status and stderr."""
    if case.id in FIFO_CASES:
        return None             # it waits for a writer, as the binding does (listed)
    argv = corpus.as_user(case.nonroot) + ["pminfo", "-a", case.target]
    proc = subprocess.run(argv, capture_output=True, cwd=root, timeout=60,
                          env=dict(os.environ, LC_ALL="C.UTF-8"))
    return {"status": proc.returncode,
            "stderr": proc.stderr.decode("utf-8", "replace")}


# what libpcp's pmGetContextOptions prints when an archive's end cannot be found (pmval,
# pmrep and pmdumplog print it too, then read on)
END_WARNING = ["", "WARNING: This archive is sufficiently damaged that it may not be possible to",
               "         produce complete information.  Continuing and hoping for the best."]


def _after_end_warning(lines, command):
    """stderr's lines without that warning, where the command printed it first, and the
    blank lines around it."""
    program = "pcp-native %s: Cannot locate end of archive " % command[len("cli_"):]
    if lines and lines[0].startswith(program) and lines[1:4] == END_WARNING:
        return [line for line in lines[4:] if line]
    return lines


def _listed(case_id, call):
    reasons = DIFFERENCES.get(case_id, {})
    return reasons.get(call) or reasons.get(None)


def test_corpus_covers_the_class(swept):
    ids = {c.id for c in swept["cases"]}
    assert len(ids) == len(swept["cases"]) >= 100
    assert set(DIFFERENCES) <= ids, set(DIFFERENCES) - ids
    assert any(c.nonroot for c in swept["cases"])
    # the cases meant to show each of libpcp's answers do show them
    ref = swept["reference"]
    codes = {ref[i]["context"].get("error") for i in ids if "context" in ref[i]}
    for code in (-12375, -2, -13, -40, -21, -12372, -12354, -12402):
        assert code in codes, code


@pytest.mark.parametrize("call", CALLS)
def test_calls_answer_as_libpcp(swept, call):
    bad = []
    for case in swept["cases"]:
        ref = swept["reference"][case.id]
        ours = swept["ours"][case.id]
        if call not in ref and "died" not in ref:
            continue                    # a bytes name: argv holds str only
        got = ours.get(call)
        want = ref.get(call)
        reason = _listed(case.id, call)
        if reason:
            assert want != got, "%s %s: listed but no longer differs" % (case.id, call)
            assert got is not None and "error" in got, (case.id, call, got)
            STATS["listed"] += 1
            continue
        STATS["calls"] += 1
        if got != want:
            bad.append("%s:\n    libpcp: %s\n    ours:   %s" % (case.id, want, got))
    STATS["cases"] = len(swept["cases"])
    assert not bad, "%s: %d cases differ from libpcp:\n%s" % (call, len(bad), "\n".join(bad))


@pytest.mark.parametrize("call", READERS)
def test_bulk_readers_raise_pmNewContexts_error(swept, call):
    bad = []
    for case in swept["cases"]:
        ref = swept["reference"][case.id].get("context", {"died": True})
        got = swept["ours"][case.id][call]
        reason = _listed(case.id, call)
        if reason or "died" in swept["reference"][case.id] or "blocked" in ref:
            # the listed cases, and where libpcp gives no answer: a pmErr all the same
            assert "error" in got or (reason and "ok" in got), (case.id, call, got)
            STATS["listed"] += 1
            continue
        STATS["calls"] += 1
        if case.id == "empty-string":
            # the official pmContext hands "" to ctypes, which refuses a str; libpcp's
            # own answer to an empty name (initarchive) is PM_ERR_LOGFILE
            ref = {"error": -12375}
        if "error" in ref:
            if got.get("error") != ref["error"]:
                bad.append("%s: libpcp %s, ours %s" % (case.id, ref, got))
        elif "ok" not in got and not (call in READING and "error" in got):
            bad.append("%s: libpcp opens it, ours %s" % (case.id, got))
    assert not bad, "%s: %d cases differ:\n%s" % (call, len(bad), "\n".join(bad))


@pytest.mark.parametrize("command", COMMANDS)
def test_commands_say_what_pminfo_says(swept, command):
    """Where pminfo cannot open the archive, each command prints pminfo's line (its own
    program name first) and exits 1; where pminfo can, info exits 0 as pminfo does, and
    the commands that read every record (dump, export, fetch) either do or stop at the
    damaged record with one line."""
    bad = []
    for case in swept["cases"]:
        tool = swept["pminfo"][case.id]
        got = swept["ours"][case.id][command]
        lines = got["stderr"].splitlines()
        if tool is None or _listed(case.id, command):
            assert "blocked" not in got and "exception" not in got, (case.id, got)
            continue
        STATS["calls"] += 1
        status = got.get("ok", {}).get("status")
        if tool["status"] != 0:
            program = "pcp-native %s: " % command[len("cli_"):]
            want = tool["stderr"].replace("pminfo: ", program, 1).splitlines()
            if status != tool["status"] or lines != want[:1]:
                bad.append("%s:\n    pminfo: %d %r\n    ours:   %s %r"
                           % (case.id, tool["status"], want, status, lines))
        elif command == "cli_info" and status != 0:
            bad.append("%s: pminfo exits 0, ours %s (%s)" % (case.id, status, got))
        elif status != 0 and (status != 1 or len(_after_end_warning(lines, command)) != 1
                              or "Traceback" in got["stderr"]):
            bad.append("%s: pminfo exits 0, ours %s %r" % (case.id, status, lines))
    assert not bad, "%s: %d cases differ from pminfo:\n%s" % (command, len(bad),
                                                                "\n".join(bad))
