"""Shared pytest configuration for pcp-native.

* ``pmcd`` (session fixture): a pmcd with the sample PMDA must be reachable.
  Missing pmcd -> skip locally, but FAIL when the ``CI`` env var is set.
  Applied automatically to every test marked ``pmcd``.
* Tests marked ``reference`` need the official binding importable by
  /usr/bin/python3; missing -> skip locally, FAIL under CI.
"""

import os
import shutil
import socket
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# Under .ci/sanitize.sh this interpreter runs with the ASan runtime preloaded (it is
# already loaded by now). The system Python running the official binding must not
# inherit it (it aborts: "munmap_chunk(): invalid pointer"); difftest gives it back to
# the subprocesses that run our (sanitized) extension.
if "libasan" in os.environ.get("LD_PRELOAD", ""):
    os.environ["PCP_TEST_ASAN_PRELOAD"] = os.environ.pop("LD_PRELOAD")

from support import difftest, roots, shared  # noqa: E402

PMCD_UNIX_SOCKETS = ("/run/pcp/pmcd.socket", "/var/run/pcp/pmcd.socket")
PMCD_TCP = ("127.0.0.1", int(os.environ.get("PMCD_PORT", "44321").split(",")[0]))


def _in_ci():
    return bool(os.environ.get("CI"))


def _unavailable(why):
    if _in_ci():
        pytest.fail("%s (CI is set: this is a failure, not a skip)" % why,
                    pytrace=False)
    pytest.skip(why)


def _socket_ok():
    for path in PMCD_UNIX_SOCKETS:
        if os.path.exists(path):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(3)
            try:
                s.connect(path)
                return True
            except OSError:
                pass
            finally:
                s.close()
    try:
        s = socket.create_connection(PMCD_TCP, timeout=3)
        s.close()
        return True
    except OSError:
        return False


def _pmcd_status():
    """Return None when pmcd + sample PMDA answer, else a reason string."""
    if not _socket_ok():
        return "pmcd is not reachable (unix socket %s or tcp %s:%d)" % (
            PMCD_UNIX_SOCKETS[0], PMCD_TCP[0], PMCD_TCP[1])
    pmprobe = shutil.which("pmprobe")
    if pmprobe:
        try:
            p = subprocess.run([pmprobe, "-h", "local:", "sample.long.one"],
                               capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired) as e:
            return "pmprobe failed: %s" % e
        fields = p.stdout.split()
        if p.returncode != 0 or len(fields) < 2 or fields[1] != "1":
            return "pmcd is up but the sample PMDA does not answer: %r %r" % (
                p.stdout.strip(), p.stderr.strip())
    return None


def pytest_configure(config):
    """The controlling process makes the session's shared directory (support.shared)
    before pytest-xdist starts the workers, which inherit it through the environment."""
    if not hasattr(config, "workerinput"):
        config._pcp_session_dir = shared.make_session_dir()
        if os.environ.get("PCP_TEST_ASAN_PRELOAD") and config.getoption("numprocesses", None):
            # this process runs no test: its workers need the ASan runtime preloaded to
            # import the sanitized extension (each takes it out again, as above)
            os.environ["LD_PRELOAD"] = os.environ["PCP_TEST_ASAN_PRELOAD"]


@pytest.hookimpl(tryfirst=True)     # before pytest-xdist's, which reads the groups
def pytest_collection_modifyitems(session, config, items):
    """Under pytest-xdist (--dist loadgroup) a module's tests stay on one worker, so its
    module- and session-scoped fixtures (the reference's facts about an archive, the QA
    sweep itself) are computed once, not once per worker. Tests that change the shared
    pmcd's state say so with their own group (pmcd_state), which keeps them together
    across modules."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))


def pytest_sessionfinish(session, exitstatus):
    """Under .ci/sanitize.sh the C core counts what runs (gcov): write this process's
    counts before pytest-xdist ends the worker without exit handlers."""
    from pcp._core.native import lib
    flush = getattr(lib, "pcp_coverage_flush", None)
    if flush is not None:
        flush()


def pytest_unconfigure(config):
    folder = getattr(config, "_pcp_session_dir", None)
    if folder and not os.environ.get("PCP_KEEP_TEST_ARCHIVES"):
        shutil.rmtree(folder, True)


_PMCD = {}
_REF = {}


@pytest.fixture(scope="session")
def pmcd():
    if "status" not in _PMCD:
        _PMCD["status"] = _pmcd_status()
    if _PMCD["status"] is not None:
        _unavailable(_PMCD["status"])
    return "local:"


def _reference_status():
    try:
        p = subprocess.run([difftest.REF_PYTHON, "-c", "from pcp import pmapi"],
                           capture_output=True, text=True, timeout=60,
                           cwd=difftest._cwd(), env=difftest._env(False))
    except (OSError, subprocess.TimeoutExpired) as e:
        return "cannot run %s: %s" % (difftest.REF_PYTHON, e)
    if p.returncode != 0:
        return "official binding not importable by %s: %s" % (
            difftest.REF_PYTHON, p.stderr.strip()[-500:])
    return None


@pytest.fixture(scope="session")
def reference_binding():
    if "status" not in _REF:
        _REF["status"] = _reference_status()
    if _REF["status"] is not None:
        _unavailable(_REF["status"])
    return difftest.REF_PYTHON


@pytest.fixture(autouse=True)
def _apply_markers(request):
    """Marker-driven requirements (pmcd, reference) for every test."""
    if request.node.get_closest_marker("reference") is not None:
        request.getfixturevalue("reference_binding")
    if request.node.get_closest_marker("pmcd") is not None:
        request.getfixturevalue("pmcd")


@pytest.fixture(autouse=True)
def _global_derived_metrics_restored():
    """Global derived metrics are process-wide, as in libpcp: a test that registers
    some (pmRegisterDerived) must not change what later tests see (pminfo's listing of
    an archive, say), so the registry is put back as it was after every test."""
    from pcp._libpcp.derived.registry import REGISTRY
    with REGISTRY.lock:
        saved = (list(REGISTRY.metrics), dict(REGISTRY.by_name), dict(REGISTRY.by_pmid),
                 REGISTRY.cluster, REGISTRY.item, REGISTRY.need_init, REGISTRY.need_config)
    yield
    with REGISTRY.lock:
        (REGISTRY.metrics, REGISTRY.by_name, REGISTRY.by_pmid,
         REGISTRY.cluster, REGISTRY.item, REGISTRY.need_init, REGISTRY.need_config) = saved


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Say why tests were skipped, grouped by reason, so that the skips made by design
    (most of them: damaged archives the reference refuses to open, whose other sections
    have nothing to compare) do not read as coverage missing."""
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    reasons: dict = {}
    for report in skipped:
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = reason.replace("Skipped: ", "", 1)
        reasons[reason] = reasons.get(reason, 0) + 1
    terminalreporter.section("skipped, by reason")
    for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1]):
        terminalreporter.write_line("%6d  %s" % (count, reason))


# the references of the API levels (tests/versions): a fixture fails under CI (never skips)
# when a reference it needs cannot run; a missing root is a skip elsewhere

@pytest.fixture(scope="session")
def all_levels():
    """Every level's reference (6.0.3 on the host, 6.3.8 and 7.2.2 in their roots)."""
    for level in roots.LEVELS:
        roots.require_level(level)
    return roots.LEVELS


@pytest.fixture(scope="module")
def sid_scratch(request):
    """A scratch folder inside the sid root (7.2.2's reference), one per test module and
    removed after it: (its path on the host, its path in the root)."""
    import tempfile                 # pylint: disable=import-outside-toplevel
    level = (7, 2)
    roots.require_level(level)
    prefix = "pcp-native-%s-" % request.module.__name__.rsplit(".", 1)[-1]
    folder = tempfile.mkdtemp(prefix=prefix, dir=os.path.join(roots.root_dir(level), "tmp"))
    yield folder, "/tmp/" + os.path.basename(folder)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def levels_60_63():
    """The references of levels 6.0 and 6.3."""
    for level in ((6, 0), (6, 3)):
        roots.require_level(level)
    return ((6, 0), (6, 3))


@pytest.fixture(scope="session")
def level_63():
    """Level 6.3's reference: Debian trixie's python3-pcp 6.3.8, in its root."""
    roots.require_level((6, 3))
    return (6, 3)
