"""PCP QA's own Python scripts (package pcp-testsuite: $PCP_VAR_DIR/testsuite/src/*.python)
run on both bindings, with the arguments, environment and working directory PCP's QA
shell tests give them (the qa/NNN test named in each run id), and their outputs compared:
exit status, stdout and stderr, plus what the QA test checks afterwards with libpcp's own
tools (pmdumplog, pmlogcheck, pminfo of an archive the script wrote).

Only what truly varies between two runs is masked: memory addresses, unittest's timing,
the interpreter's own paths, process ids, and the times and values of live fetches (the
two sides fetch at different moments). Any other difference either is fixed in the
package or is listed with its reason in tests/corpus/known_differences.py, where the test
checks that it is exactly the listed one.

The scripts left out need root, a PMDA beyond sample and the default ones, or a service
this machine does not run: see NOT_RUN.
"""
import difflib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Dict, List, NamedTuple, Tuple

import pytest

from corpus import known_differences
from support import difftest, tool_archive

pytestmark = pytest.mark.reference

QA_DIR = os.environ.get("PCP_QA_DIR", "/var/lib/pcp/testsuite")
TIMEOUT = 120

# every script of src/*.python that is not run here, and why
NOT_RUN = {
    "bcc_netproc.python": "qa/1286: the bcc PMDA and root",
    "bcc_version_check.python": "qa/1155...: imports the bcc module (BPF), not PCP's",
    "fsstats.python": "qa/845: the mounts PMDA (installed by the test as root)",
    "pmproxy_load_test.python": "qa/1360, 1696: a pmproxy with a key server",
    "redis_proxy.python": "qa/1355: a Redis server",
    "sort_xml.python": "qa/1545: sorts XML with lxml; imports nothing of PCP",
    "test_mmv.python": "qa/704: the MMV PMDA and pcp.mmv (not part of this package); "
                       "the test restarts pmcd",
    "test_pmda_memleak.python": "Python 2 syntax (print statements); no QA test runs it",
    "test_webapi.python": "qa/662: pmproxy's REST API",
    "test_webcontainers.python": "qa/1032: pmproxy's REST API and containers",
    "test_webprocesses.python": "qa/1042: pmproxy's REST API",
}


class Run(NamedTuple):
    """One run of a script, as a QA test makes it."""
    id: str
    script: str                         # src/SCRIPT, or "NNN:$tmp.X": qa/NNN's own program
    argv: Tuple[str, ...] = ()
    env: Tuple[Tuple[str, str], ...] = ()
    cwd: str = "."                      # relative to the run's scratch directory
    live: bool = False                  # talks to pmcd
    masks: Tuple[str, ...] = ()         # names of MASKS, beyond the common ones
    writes: str = ""                    # an archive the script writes: checked after
    then: Tuple[Tuple[str, ...], ...] = ()  # libpcp tools run on it, as the QA test does
    verify_merge: bool = False          # qa/561: the merged labels given back to the script
    # reads the sample PMDA's event records, whose cycle is one for all its clients: the
    # sides run one after the other, each from the cycle's start (sample.event.reset)
    events: bool = False
    quiet: bool = False                 # prints nothing when all is well
    # mostly asleep (test_pcp.py sleeps ~6 s in pmtimespecSleep): started in the
    # background with the first test, so that others run meanwhile
    sleeps: bool = False


# ---------------------------------------------------------------------------
# The runs
# ---------------------------------------------------------------------------
def _merge_arguments() -> List[Tuple[str, ...]]:
    """The label sets qa/561 gives mergelabels.python, read from the test itself."""
    try:
        with open(os.path.join(QA_DIR, "561"), encoding="utf-8") as stream:
            text = stream.read().replace("\\\n", " ")
    except OSError:
        return [("qa/561 is not installed",)]
    return [tuple(shlex.split(line)[1:]) for line in map(str.strip, text.splitlines())
            if line.startswith("mergeHelper ")]


def _runs() -> List[Run]:
    runs = [
        Run("995-pmapi_exceptions", "pmapi_exceptions.python"),
        Run("567-mergelabelsets", "mergelabelsets.python"),
        Run("labelsets", "labelsets.python", live=True),    # no QA test: its defaults
        Run("1490-labelsets_memleak", "labelsets_memleak.python", live=True),
        Run("1813-labels_changing", "labels_changing.python", live=True),
        Run("1257-pmapi_daemon", "pmapi_daemon.python", masks=("daemon",)),
        Run("1082-procpid-encode", "procpid.python",
            ("--archive", "archives/procpid-encode", "proc.psinfo.pid")),
        Run("1082-procpid-encode2", "procpid.python",
            ("--archive", "archives/procpid-encode2", "proc.psinfo.cpusallowed")),
        Run("702-test_pcp-live", "test_pcp.python", live=True,
            masks=("live_conversions",), sleeps=True),
        Run("707-test_pcp-archive", "test_pcp.python", ("archives/pyapi.0",), sleeps=True),
        Run("737-test_pcp_time", "test_pcp_time.python", live=True),
        Run("741-test_pcp_getopts-archive", "test_pcp_getopts.python",
            ("-a", "archives/ace_v2", "-z")),
        Run("741-test_pcp_getopts-window", "test_pcp_getopts.python",
            ("-a", "archives/ace_v2", "-z", "--align=1 second",
             "--start=@ Mon Oct 30 14:25:10 1995", "--origin=@ Mon Oct 30 14:25:10 1995",
             "--finish=@ Mon Oct 30 14:25:15 1995")),
        Run("741-test_pcp_getopts-hosts", "test_pcp_getopts.python",
            ("-h", "local:", "-h", "local:"), live=True, masks=("live_window",)),
        Run("859-test_pmfg", "test_pmfg.python", live=True, masks=("live_times",),
            events=True),
        Run("979-test_pmcc-live", "test_pmcc.python", ("-t", "0.1", "-s", "2"), live=True,
            masks=("live_values",)),
        Run("980-test_pmcc-archive", "test_pmcc.python", ("-a", "archives/pcp-atop-log.0")),
        Run("904-test_pmnswalk", "test_pmnswalk.python", live=True),
        Run("708-test_pmi", "test_pmi.python", ("out/pmi",), writes="out/pmi",
            then=(("pminfo", "--desc", "--fetch", "-z", "-a", "out/pmi",
                   "hinv.ncpu", "kernel.all.load"),)),
        Run("710-check_import-v2", "check_import.python", ("out/import",),
            writes="out/import", masks=("written_now",),
            then=(("pmlogcheck", "out/import"), ("pmdumplog", "-dilmst", "out/import"))),
        Run("710-check_import-v3", "check_import.python", ("out/import3", "3"),
            writes="out/import3", masks=("written_now",),
            then=(("pmlogcheck", "out/import3"), ("pmdumplog", "-dilmst", "out/import3"))),
    ]
    options = [(), ("param1", "param2"), ("-a", "file", "param"), ("-h", "qa.r.us", "-z"),
               ("--timezone", "UTC"), ("--samples=5", "-t1"), ("--list", "/tmp", "--force"),
               ("-b",), ("param1", "-b", "param2"), ("-V",), ("--munchies",), ("--help",),
               ("--longonly",)]
    for argv in options:
        what = " ".join(argv) or "no-arguments"
        runs.append(Run("739-test_pcp_options %s" % what, "test_pcp_options.python", argv))
    sources = [("host", (("TEST_SET_HOST", "localhost"),), "."),
               ("hostlist", (("TEST_SET_HOSTLIST", "localhost"),), "."),
               ("hostlist-fail", (("TEST_SET_HOSTLIST", "localhost,unix:"),), "."),
               ("hostlist-multi", (("TEST_SET_MULTI", "1"),
                                   ("TEST_SET_HOSTLIST", "unix:,local:,localhost")), "."),
               ("container", (("TEST_SET_CONTAINER", "abc012345"),), "."),
               ("localpmda", (("TEST_SET_LOCALPMDA", "true"), ("TEST_SET_SPECLOCAL", "clear")),
                "."),
               ("localpmda-fail", (("TEST_SET_LOCALPMDA", "true"),
                                   ("TEST_SET_SPECLOCAL", "add,")), "."),
               ("archivelist", (("TEST_SET_ARCHIVELIST", "archives/pcp-atop"),), "."),
               ("archivelist-two", (("TEST_SET_ARCHIVELIST",
                                     "archives/pcp-free,archives/pcp-uptime"),), "."),
               ("folio", (("TEST_SET_ARCHIVEFOLIO", "pcp-atop.folio"),), "archives")]
    for what, env, cwd in sources:
        runs.append(Run("722-test_set_source %s" % what, "test_set_source.python", env=env,
                        cwd=cwd, live=True))
    # the programs QA tests write themselves ($tmp.py) and run
    runs += [Run("949-timespec-timeval", "949:$tmp.py"),
             Run("1048-fetchgroup-indom", "1048:$tmp.py", live=True),
             Run("729-units", "729:$tmp.units"),
             Run("729-parse", "729:$tmp.parse", live=True),
             Run("968-opts", "968:$tmp.opts", live=True),
             Run("968-mode", "968:$tmp.mode", quiet=True),
             Run("968-pmi", "968:$tmp.pmi", quiet=True),
             Run("968-derive", "968:$tmp.derive", live=True)]
    for number, labels in enumerate(_merge_arguments(), 1):
        runs.append(Run("561-mergelabels %d" % number, "mergelabels.python", labels,
                        verify_merge=True))
    return runs


RUNS = _runs()

# scripts that open no context: they reach nothing of the C core that the sanitizers
# check, so .ci/sanitize.sh's pass (slow Python start-ups) leaves them to the normal one
NO_CONTEXT = {"test_pcp_options.python", "mergelabels.python", "mergelabelsets.python",
              "pmapi_exceptions.python", "949:$tmp.py"}


# ---------------------------------------------------------------------------
# What is masked
# ---------------------------------------------------------------------------
_ADDRESS = re.compile(r"0x[0-9a-f]{6,}")
_UNITTEST_TIME = re.compile(r"^(Ran \d+ tests?) in [0-9.]+s$", re.MULTILINE)
# the interpreter's standard library (a warning names it): /usr/lib/python3.11/ for the
# official binding's interpreter, the venv's base (pyenv, say) for ours
_STDLIB = re.compile(r"\S*/lib/python3\.\d+/")


def _common(text: str) -> str:
    text = _ADDRESS.sub("0xADDR", text)
    text = _UNITTEST_TIME.sub(r"\1 in TIME", text)
    return _STDLIB.sub("STDLIB/", text)


def _daemon(text: str) -> str:
    return re.sub(r"^([AD]_P?PID)=\d+$", r"\1=PID", text, flags=re.MULTILINE)


def _daemon_check(stderr: str) -> str:
    """qa/1257's check of pmOptions.daemonize(): the process after it is another one,
    whose parent is another one too (the ids themselves are masked)."""
    ids = dict(re.findall(r"^([AD]_P?PID)=(\d+)$", stderr, re.MULTILINE))
    return "== daemonized: pid changed %s, parent changed %s" % (
        ids.get("A_PID") != ids.get("D_PID") and "D_PID" in ids,
        ids.get("A_PPID") != ids.get("D_PPID") and "D_PPID" in ids)


def _live_conversions(text: str) -> str:
    # test_pcp.py converts a live mem.util.free, which changes between the two runs
    text = re.sub(r"^(pmConvScale, (?:integer|pmUnits) arg) \S+ \S+$", r"\1 N N", text,
                  flags=re.MULTILINE)
    return re.sub(r"^(pmAtomStr) \S+$", r"\1 N", text, flags=re.MULTILINE)


def _live_window(text: str) -> str:
    # now, for a host context's start and origin
    return re.sub(r"^(Start|Origin): \d+\.\d+$", r"\1: NOW", text, flags=re.MULTILINE)


def _live_times(text: str) -> str:
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+", "TIME", text)


def _live_values(text: str) -> str:
    # pmcc's report lines "    metric [instance] value units": a number (not "?", the
    # first sample of a rate) changes between the two runs
    return re.sub(r"^(    \S+(?: \S*)?) -?[0-9][0-9.e+-]* (\S+)$", r"\1 N \2", text,
                  flags=re.MULTILINE)


def _written_now(text: str) -> str:
    # check_import.py stamps what it writes with the time it runs: pmdumplog's dates
    text = re.sub(r"[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d\.\d+ \d{4}", "DATE",
                  text)
    return re.sub(r"\b\d\d:\d\d:\d\d\.\d{6,9}\b", "TIME", text)


MASKS: Dict[str, Callable[[str], str]] = {
    "daemon": _daemon, "live_conversions": _live_conversions, "live_window": _live_window,
    "live_times": _live_times, "live_values": _live_values, "written_now": _written_now,
}


# ---------------------------------------------------------------------------
# Running a script on one side
# ---------------------------------------------------------------------------
def _scratch(ours: bool) -> str:
    """A directory of the run's own, where archives/ and src/ are the testsuite's (the
    QA tests run in the testsuite's directory) and out/ takes what the script writes."""
    root = tempfile.mkdtemp(prefix="qa-%s-" % ("ours" if ours else "ref"),
                            dir=difftest._cwd())
    for name in ("archives", "src"):
        os.symlink(os.path.join(QA_DIR, name), os.path.join(root, name))
    os.mkdir(os.path.join(root, "out"))
    return root


def inline_program(test: str, name: str, root: str) -> str:
    """The Python program qa/TEST writes to $tmp.NAME with a here-document, expanded as
    the shell would: $here is the run's directory (where archives/ is), $tmp a path in
    it. Programs needing any other expansion are not taken."""
    with open(os.path.join(QA_DIR, test), encoding="utf-8") as stream:
        text = stream.read()
    found = re.search(r"^\s*cat > ?\$tmp\.%s ?<< ?'?(\w+)'?\n(.*?)^\1$" % re.escape(name),
                      text, re.MULTILINE | re.DOTALL)
    assert found, "qa/%s writes no $tmp.%s" % (test, name)
    program = found.group(2)
    if not found.group(0).split("<<")[1].strip().startswith("'"):
        program = program.replace("$here", root).replace("$tmp", os.path.join(root, "tmp"))
        assert "$" not in program and "`" not in program, (
            "qa/%s's $tmp.%s needs the shell" % (test, name))
    return program


def _start(run: Run, ours: bool) -> Tuple[subprocess.Popen, str]:
    root = _scratch(ours)
    env = difftest._env(ours)
    env.update(dict(run.env))
    python = difftest.OUR_PYTHON if ours else difftest.REF_PYTHON
    if ":$tmp." in run.script:
        test, name = run.script.split(":$tmp.")
        script = os.path.join(root, "program.py")
        with open(script, "w", encoding="utf-8") as stream:
            stream.write(inline_program(test, name, root))
    else:
        script = os.path.join(QA_DIR, "src", run.script)
    proc = subprocess.Popen([python, script] + list(run.argv), cwd=os.path.join(root, run.cwd),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, errors="replace")
    return proc, root


def _finish(run: Run, proc: subprocess.Popen, root: str, ours: bool) -> str:
    """Everything the run shows, as one text: status, stdout, stderr, then the checks
    the QA test makes on what the script wrote."""
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        err += "\n[timed out after %ss]" % TIMEOUT
    masks = [_common] + [MASKS[name] for name in run.masks]

    def masked(text: str) -> str:
        text = text.replace(root, "$here")      # each side's own directory
        for mask in masks:
            text = mask(text)
        return text
    parts = ["== exit status %s" % proc.returncode,
             "== stdout", masked(out),
             # a traceback's frames are each binding's own code: down to the exception
             "== stderr", tool_archive.masked(masked(err))]
    if run.script == "pmapi_daemon.python":
        parts.append(_daemon_check(err))
    if run.verify_merge:
        # qa/561: the merged set, merged again with an empty one, must be accepted
        python = difftest.OUR_PYTHON if ours else difftest.REF_PYTHON
        again = subprocess.run([python, os.path.join(QA_DIR, "src", run.script), out.strip(),
                                "{}"], cwd=root, env=difftest._env(ours), capture_output=True,
                               text=True, timeout=TIMEOUT, check=False)
        parts += ["== merged again (status %d)" % again.returncode, again.stdout,
                  tool_archive.masked(_common(again.stderr))]
    if run.writes:
        # libpcp's tools on the archive each binding wrote, as the QA test runs them
        env = dict(difftest._env(False), PCP_DERIVED_CONFIG="")
        for argv in run.then:
            check = subprocess.run(list(argv), cwd=root, env=env, capture_output=True,
                                   text=True, timeout=TIMEOUT, check=False)
            parts += ["== %s (status %d)" % (" ".join(argv), check.returncode),
                      masked(check.stdout), masked(check.stderr)]
    if proc.returncode == 0 or ours:
        shutil.rmtree(root, ignore_errors=True)
    return "\n".join(parts)


def _restart_event_cycle() -> None:
    subprocess.run(["pmstore", "sample.event.reset", "0"], env=difftest._env(False),
                   capture_output=True, timeout=TIMEOUT, check=True)


def run_both(run: Run) -> Tuple[str, str]:
    """The run on the official binding and on ours, at the same time (two cores) unless
    they would share the sample PMDA's event cycle."""
    if run.events:
        _restart_event_cycle()
        ref = _finish(run, *_start(run, False), False)
        _restart_event_cycle()
        return ref, _finish(run, *_start(run, True), True)
    ref = _start(run, False)
    ours = _start(run, True)
    return _finish(run, *ref, False), _finish(run, *ours, True)


_BACKGROUND: Dict[str, "Future[Tuple[str, str]]"] = {}
_POOL: List[ThreadPoolExecutor] = []


def _start_sleepers(session: pytest.Session) -> None:
    """Start the selected runs that mostly sleep, once, in the background."""
    if _POOL:
        return
    _POOL.append(ThreadPoolExecutor(max_workers=2, thread_name_prefix="qa-sleeper"))
    selected = {item.callspec.params["run"].id for item in session.items
                if getattr(item, "callspec", None) is not None
                and "run" in item.callspec.params}
    for run in RUNS:
        if run.sleeps and run.id in selected:
            _BACKGROUND[run.id] = _POOL[0].submit(run_both, run)


def changed_lines(ref: str, ours: str) -> List[str]:
    """The lines that differ: "- " the reference's, "+ " ours, in ndiff's order."""
    return [line for line in difflib.ndiff(ref.splitlines(), ours.splitlines())
            if line.startswith(("- ", "+ "))]


# ---------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------
def test_every_script_is_run_or_has_a_reason():
    """A script PCP adds to its QA is either run here or said why not."""
    scripts = sorted(name for name in os.listdir(os.path.join(QA_DIR, "src"))
                     if name.endswith(".python"))
    assert len(scripts) >= 25, scripts
    run = {r.script for r in RUNS if ":$tmp." not in r.script}
    assert set(scripts) == run | set(NOT_RUN), (sorted(set(scripts) - run - set(NOT_RUN)),
                                                sorted((run | set(NOT_RUN)) - set(scripts)))
    assert not run & set(NOT_RUN)
    assert NO_CONTEXT <= {r.script for r in RUNS}


def test_changed_lines_are_what_a_listed_difference_pins():
    ref = "== exit status 0\n== stdout\nsame\nold value\nsame again\n== stderr\n"
    ours = "== exit status 0\n== stdout\nsame\nnew value\nsame again\n== stderr\nextra\n"
    assert changed_lines(ref, ours) == ["- old value", "+ new value", "+ extra"]
    assert changed_lines(ref, ref) == []


def test_listed_differences_name_runs():
    ids = {r.id for r in RUNS}
    assert set(known_differences.SCRIPTS) <= ids, set(known_differences.SCRIPTS) - ids
    assert set(known_differences.SCRIPT_CHANGES) == set(known_differences.SCRIPTS)


# Runs that restart the sample PMDA's event cycle share it with every other test that
# reads or resets it: one pytest-xdist worker runs them all (the pmcd_state group).
@pytest.mark.parametrize("run", [pytest.param(r, marks=pytest.mark.xdist_group("pmcd_state"))
                                 if r.events else r for r in RUNS],
                         ids=[r.id for r in RUNS])
def test_qa_script_prints_the_same(request, run):
    if run.script in NO_CONTEXT and os.environ.get("PCP_TEST_ASAN_PRELOAD"):
        pytest.skip("opens no context: nothing for the sanitizers (run in the normal pass)")
    if run.live:
        request.getfixturevalue("pmcd")
    if not os.path.isdir(os.path.join(QA_DIR, "src")):
        pytest.fail("pcp-testsuite is not installed (%s)" % QA_DIR)
    _start_sleepers(request.session)
    ref, ours = _BACKGROUND.pop(run.id).result() if run.id in _BACKGROUND else run_both(run)
    if run.script == "pmapi_daemon.python":
        assert "== daemonized: pid changed True, parent changed True" in ref
    changes = changed_lines(ref, ours)
    if run.id in known_differences.SCRIPTS:
        assert changes == known_differences.SCRIPT_CHANGES[run.id], (
            "%s: the listed difference (%s) is no longer the one seen:\n%s" % (
                run.id, known_differences.SCRIPTS[run.id], "\n".join(changes)))
        return
    assert not changes, "%s differs from the official binding:\n%s" % (
        run.id, "\n".join(difflib.unified_diff(ref.splitlines(), ours.splitlines(),
                                               "reference", "ours", lineterm="", n=2)))
    shown = [line for line in ref.splitlines() if line and not line.startswith("== ")]
    assert bool(shown) != run.quiet, (
        "the reference showed nothing: the comparison shows little" if not run.quiet else
        "a quiet run printed something: %r" % shown)
