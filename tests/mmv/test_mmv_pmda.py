"""Acceptance against the real mmv PMDA (pmda_mmv.so, domain 70): the official binding and
ours run the same program, each against a private pmcd of its own that has only the mmv
PMDA and a private $PCP_TMP_DIR; what pmcd serves from each file (``pminfo -dfTtl``, the
package's own pmapi client), what the PMDA writes to pmcd's log about it, and how pmcd
ends must be the same through updates, strings, intervals, a restart and a stop, and
for the files it refuses.

Private, not the machine's pmcd: a metric of type 7 or 8, which libpcp_mmv 6.0.3 accepts,
makes pmcd 6.0.3 die of a SIGSEGV (exit status 11) on the first fetch of its value."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from support import difftest
from support.mmvdiff import EPILOGUE, PRELUDE, REGISTRY_ADAPTER
from support.pmcdpath import private_pmcd

PMCD = "/usr/lib/pcp/bin/pmcd"
MMV_DSO = "/var/lib/pcp/pmdas/mmv/pmda_mmv.so"

pytestmark = [pytest.mark.pmcd, pytest.mark.reference]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrivatePmcd:
    """A pmcd of this test's own: the mmv PMDA alone, over a private $PCP_TMP_DIR."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.tmp = os.path.join(root, "tmp")
        os.makedirs(os.path.join(self.tmp, "mmv"))
        self.conf = os.path.join(root, "pmcd.conf")
        with open(self.conf, "w") as f:
            f.write("mmv\t70\tdso\tmmv_init\t%s\n" % MMV_DSO)
        self.log = os.path.join(root, "pmcd.log")
        self.port = _free_port()
        env = dict(os.environ, PCP_TMP_DIR=self.tmp, PCP_RUN_DIR=root,
                   PCP_PMCDCONF_PATH=self.conf)
        env.pop("LD_PRELOAD", None)     # never the sanitizer runtime in pmcd
        self.proc = subprocess.Popen(
            [private_pmcd(root), "-f", "-A", "-i", "127.0.0.1", "-p", str(self.port), "-s",
             os.path.join(root, "pmcd.socket"), "-c", self.conf, "-l", self.log, "-U", "root"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            probe = subprocess.run(["pminfo", "-h", self.host, "-f", "mmv.control.files"],
                                   capture_output=True, text=True)
            if probe.returncode == 0:
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("the private pmcd did not answer: %s" % probe.stderr)

    @property
    def host(self) -> str:
        return "127.0.0.1:%d" % self.port

    def stop(self) -> object:
        """Stop it; how it ended if it had died already (its exit status), else None."""
        died = self.proc.poll()
        if died is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return died


@pytest.fixture(scope="module")
def private_pmcd_possible(pmcd):
    """pmcd and the mmv PMDA installed, and root to run pmcd as root: or a failure under
    CI, else a skip."""
    why = None
    if not (os.path.exists(PMCD) and os.path.exists(MMV_DSO) and shutil.which("pminfo")):
        why = "pmcd, pminfo or the mmv PMDA is not installed"
    elif os.geteuid() != 0:
        why = "a private pmcd needs root here"
    if why:
        if os.environ.get("CI"):
            pytest.fail(why + " (CI is set)")
        pytest.skip(why)


def _run_side(program: str, ours: bool, prelude: str = PRELUDE) -> object:
    root = tempfile.mkdtemp(prefix="pcp-mmv-pmcd-")
    try:
        server = PrivatePmcd(root)
        try:
            answer = difftest.run_program(
                prelude + program + EPILOGUE, ours=ours, timeout=120,
                env={"PCP_TMP_DIR": server.tmp, "MMV_TEST_PATH": os.path.join(root, "x"),
                     "MMV_TEST_NAME": "acme", "MMV_TEST_HOST": server.host,
                     "MMV_TEST_LOG": server.log})
        finally:
            died = server.stop()
        if isinstance(answer, dict):
            answer["pmcd_died"] = died
        return answer
    finally:
        shutil.rmtree(root, ignore_errors=True)


PMDA_PRELUDE = r'''
import re, subprocess
NAME = os.environ["MMV_TEST_NAME"]
HOST = os.environ["MMV_TEST_HOST"]
CLUSTER = 321

PMINFO_ENV = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}  # no sanitizer

def pminfo(*args):
    p = subprocess.run(["pminfo", "-h", HOST] + list(args), capture_output=True, text=True,
                       env=PMINFO_ENV)
    return [p.returncode, p.stdout, p.stderr]

def log_lines():
    """What the PMDA wrote to pmcd's log about our file (times and pids cut)."""
    with open(os.environ["MMV_TEST_LOG"], errors="replace") as f:
        lines = f.read().splitlines()
    return [re.sub(r"^\[[^]]*\] pmcd\(\d+\) ", "", l) for l in lines if NAME in l]

def files():
    return os.path.join(os.environ["PCP_TMP_DIR"], "mmv", NAME)

def client(names):
    """The binding's own client: names, descriptors and values fetched from pmcd."""
    ctx = pmapi.pmContext(cpmapi.PM_CONTEXT_HOST, HOST)
    out = []
    for name in names:
        try:
            pmids = ctx.pmLookupName(name)
            descs = ctx.pmLookupDescs(pmids)
            result = ctx.pmFetch(pmids)
            res = result.contents
            values = []
            for j in range(res.get_numval(0)):
                atom = ctx.pmExtractValue(res.get_valfmt(0), res.get_vlist(0, j),
                                          descs[0].type, descs[0].type)
                value = atom.dref(descs[0].type)
                if isinstance(value, bytes):
                    value = value.decode()
                values.append([res.get_inst(0, j), value])
            out.append([name, descs[0].type, descs[0].sem, pmapi.pmUnits.__str__(
                descs[0].units), sorted(values)])
            ctx.pmFreeResult(result)
        except pmapi.pmErr as exc:
            out.append([name, "error", exc.args[0]])
    return out
'''

PMDA_PROGRAM = PMDA_PRELUDE + r'''
try:
    insts = [mmv.mmv_instance(0, "Anvils"), mmv.mmv_instance(1, "Rockets"),
             mmv.mmv_instance(7, "Giant_Rubber_Bands")]
    indoms = [mmv.mmv_indom(serial=61, shorttext="Acme products")]
    indoms[0].set_instances(insts)
    indoms[0].helptext = b"Most popular products produced by the Acme Corporation"

    def metric(name, item, kind, sem, units, indom=0, short="", help=None):
        m = mmv.mmv_metric(name=name, item=item, typeof=kind, semantics=sem,
                           dimension=units, indom=indom, shorttext=short)
        m.semantics = sem
        m.dimension = units
        if help is not None:
            m.helptext = help.encode()
        return m

    count = pmapi.pmUnits(0, 0, 1, 0, 0, cpmapi.PM_COUNT_ONE)
    usec = pmapi.pmUnits(0, 1, 0, 0, cpmapi.PM_TIME_USEC, 0)
    metrics = [
        metric("products.count", 7, cmmv.MMV_TYPE_U64, cmmv.MMV_SEM_COUNTER, count, 61,
               "Acme factory product throughput", "Monotonic increasing counter"),
        metric("products.time", 8, cmmv.MMV_TYPE_ELAPSED, cmmv.MMV_SEM_COUNTER, usec, 61,
               "Machine time spent producing Acme products"),
        metric("status", 9, cmmv.MMV_TYPE_STRING, cmmv.MMV_SEM_DISCRETE, pmapi.pmUnits(),
               0, "Current status"),
        metric("ratio", 10, cmmv.MMV_TYPE_FLOAT, cmmv.MMV_SEM_INSTANT, pmapi.pmUnits(), 61),
        metric("level", 11, cmmv.MMV_TYPE_DOUBLE, cmmv.MMV_SEM_INSTANT, pmapi.pmUnits()),
        metric("delta", 12, cmmv.MMV_TYPE_I32, cmmv.MMV_SEM_INSTANT, pmapi.pmUnits()),
        metric("small", 13, cmmv.MMV_TYPE_U32, cmmv.MMV_SEM_COUNTER, count),
        # the constructor alone: no semantics, no units, help = one-line text
        mmv.mmv_metric(name="plain", item=14, typeof=cmmv.MMV_TYPE_I64,
                       semantics=cmmv.MMV_SEM_COUNTER, dimension=count, shorttext="Plain"),
    ]
    prefix = "mmv." + NAME
    leaves = [prefix + "." + n for n in ("products.count", "status", "ratio", "level",
                                         "delta", "small", "plain")]
    values = mmv.MemoryMappedValues(NAME, cluster=CLUSTER)
    values.add_indoms(indoms)
    values.add_metrics(metrics)
    values.start()
    RESULT["start"] = pminfo("-dfTtl", prefix)

    anvils = values.lookup_mapping("products.count", "Anvils")
    for _ in range(5):
        values.inc(anvils)
    values.add(anvils, 37)
    values.lookup_add("products.count", "Rockets", 12)
    values.lookup_inc_fallback("products.count", "Coyote", b"Giant_Rubber_Bands")
    values.lookup_set("ratio", "Rockets", 0.25)
    values.lookup_add("ratio", "Anvils", 1.5)
    values.lookup_set("level", None, -12.125)
    values.lookup_set("delta", None, -42)
    values.lookup_set("small", None, 2 ** 32 - 1)
    values.lookup_inc("small", None)
    values.lookup_set("plain", None, 2 ** 40)
    RESULT["updates"] = pminfo("-f", prefix)
    RESULT["client"] = client(leaves)

    status = values.lookup_mapping("status", None)
    values.set_string(status, "running")
    RESULT["string"] = pminfo("-f", prefix + ".status")
    values.lookup_set_string("status", None, "r" * 254)
    RESULT["long_string"] = pminfo("-f", prefix + ".status")
    values.lookup_set_string("status", None, "x" * 255)     # too long: unchanged
    RESULT["too_long_string"] = pminfo("-f", prefix + ".status")

    mark = values.lookup_interval_start("products.time", "Rockets")
    # an open interval is served as the time since its start: a number that varies
    served = pminfo("-f", prefix + ".products.time")
    running = re.search(r'Rockets"\] value (\d+)', served[1])
    RESULT["interval_open"] = [running is not None and int(running.group(1)) < 10000000,
                               re.sub(r'(Rockets"\] value )\d+', r"\1N", served[1])]
    time.sleep(0.02)
    values.interval_end(mark)
    served = pminfo("-f", prefix + ".products.time")
    elapsed = mark.contents.ll
    RESULT["interval"] = [str(elapsed) in served[1], 20000 <= elapsed < 10000000,
                          served[1].replace(str(elapsed), "ELAPSED")]

    values.add_metric(metric("late", 15, cmmv.MMV_TYPE_U64, cmmv.MMV_SEM_COUNTER, count))
    RESULT["restart"] = pminfo("-dfTtl", prefix)
    values.lookup_inc("late", None)
    values.lookup_set_string("status", None, "restarted")
    values.stop()
    RESULT["stopped"] = [values.started(), pminfo("-f", prefix)]
    RESULT["stopped_client"] = client(leaves + [prefix + ".late"])
    os.unlink(files())

    values = mmv.MemoryMappedValues(NAME, flags=cmmv.MMV_FLAG_PROCESS, cluster=CLUSTER)
    values.add_metrics(metrics[4:6])
    values.start()
    values.lookup_set("level", None, 3.5)
    RESULT["process"] = pminfo("-f", prefix)
    values.stop()
    RESULT["process_stopped"] = [os.path.exists(files()), pminfo("-f", prefix)]

    # MMV_FLAG_NOPREFIX: the names go straight under mmv.
    values = mmv.MemoryMappedValues(NAME, flags=cmmv.MMV_FLAG_NOPREFIX, cluster=CLUSTER)
    values.add_metrics([metric("acme_unprefixed.hits", 1, cmmv.MMV_TYPE_U64, 1, count)])
    values.start()
    values.lookup_add("acme_unprefixed.hits", None, 9)
    RESULT["noprefix"] = [pminfo("-f", "mmv.acme_unprefixed"), pminfo("-f", prefix)[0]]
    values.stop()
    os.unlink(files())

    # files the PMDA refuses, or parts of them: too many metrics, bad names, items
    many = [mmv.mmv_metric(name="m%d" % i, item=i + 1, typeof=cmmv.MMV_TYPE_U32,
                           semantics=1, dimension=count) for i in range(1100)]
    values = mmv.MemoryMappedValues(NAME, cluster=CLUSTER)
    values.add_metrics(many)
    values.start()
    RESULT["too_many"] = [values.started(), pminfo("-f", prefix + ".m1")]
    values.stop()
    odd = [metric("unsupported", 1, cmmv.MMV_TYPE_NOSUPPORT, 1, count),
           metric("fine", 2, cmmv.MMV_TYPE_U64, 1, count),
           metric("bad-name", 3, cmmv.MMV_TYPE_U64, 1, count),
           metric("dup", 2, cmmv.MMV_TYPE_U64, 1, count),
           metric("big", 5000, cmmv.MMV_TYPE_U64, 1, count)]
    values = mmv.MemoryMappedValues(NAME, cluster=CLUSTER)
    values.add_metrics(odd)
    values.start()
    values.lookup_inc("fine", None)
    RESULT["odd"] = pminfo("-dfTtl", prefix)
    values.stop()
    values = mmv.MemoryMappedValues(NAME, cluster=5000)    # beyond the 12-bit cluster
    values.add_metrics(odd[1:2])
    values.start()
    RESULT["big_cluster"] = pminfo("-f", prefix)
    values.stop()
    # last: type 7 (accepted by libpcp_mmv 6.0.3) kills pmcd on the first fetch
    values = mmv.MemoryMappedValues(NAME, cluster=CLUSTER)
    values.add_metrics([metric("seven", 1, 7, 1, count)])
    values.start()
    RESULT["seven"] = pminfo("-f", prefix)
    time.sleep(0.5)
    RESULT["after_seven"] = pminfo("-f", "mmv.control.files")[0]
    RESULT["log"] = log_lines()
finally:
    try:
        os.unlink(files())
    except OSError:
        pass
'''


def test_the_pmda_serves_both_files_the_same(private_pmcd_possible):
    difftest.require_reference()
    ref = _run_side(PMDA_PROGRAM, ours=False)
    assert not (isinstance(ref, dict) and "__crash__" in ref), ref
    ours = _run_side(PMDA_PROGRAM, ours=True)
    difftest.assert_equal(ours, ref)
    # the program did reach the PMDA: values served, refusals seen, pmcd killed by type 7
    assert ref["updates"][0] == 0 and "value 42" in ref["updates"][1]
    assert "running" in ref["string"][1] and ref["too_many"][1][0] != 0
    assert ref["pmcd_died"] == 11 and ref["interval"][:2] == [True, True]
    assert "value 9" in ref["noprefix"][0][1]


REGISTRY_PROGRAM = PMDA_PRELUDE + r"""
try:
    CASE = os.environ["MMV_TEST_CASE"]
    reg = REG(NAME, CLUSTER, 0)
    reg.add_indom(5, "five", "the instance domain five")
    reg.add_instance(5, 1, "one")
    reg.add_instance(5, 2, "i" * 70)
    reg.add_metric("m" * 100, 1, cmmv.MMV_TYPE_U64, cmmv.MMV_SEM_COUNTER,
                   U(0, 0, 1, 0, 0, 0), 5, "a counter", "a counter with a long name")
    reg.add_metric("text", 2, cmmv.MMV_TYPE_STRING, cmmv.MMV_SEM_DISCRETE, U(), 0, "text")
    if CASE == "v3":
        reg.add_registry_label("app", '"acme"', cmmv.MMV_STRING_TYPE, 0)
        reg.add_indom_label(5, "kind", "42", cmmv.MMV_NUMBER_TYPE, 1)
        reg.add_metric_label(1, "flag", "true", cmmv.MMV_BOOLEAN_TYPE, 0)
        reg.add_instance_label(5, 2, "tags", '["a","b"]', cmmv.MMV_ARRAY_TYPE, 0)
    reg.start()
    RESULT["version"] = open(files(), "rb").read()[4]
    RESULT["served"] = pminfo("-dfTtl", "mmv." + NAME)
    RESULT["log"] = log_lines()
finally:
    try:
        os.unlink(files())
    except OSError:
        pass
"""


@pytest.mark.parametrize("case", ["v2", "v3"])
def test_the_pmda_serves_registry_files_the_same(private_pmcd_possible, case):
    """Long names (version 2) and labels (version 3), as libpcp_mmv's registry writes
    them and as pcp.mmv.Registry does: served the same, labels included."""
    difftest.require_reference()
    os.environ["MMV_TEST_CASE"] = case
    try:
        ref = _run_side(REGISTRY_PROGRAM, ours=False, prelude=PRELUDE + REGISTRY_ADAPTER)
        assert not (isinstance(ref, dict) and "__crash__" in ref), ref
        ours = _run_side(REGISTRY_PROGRAM, ours=True, prelude=PRELUDE + REGISTRY_ADAPTER)
    finally:
        del os.environ["MMV_TEST_CASE"]
    difftest.assert_equal(ours, ref)
    assert ref["version"] == (3 if case == "v3" else 2) and ref["served"][0] == 0
    assert "m" * 100 in ref["served"][1]
    if case == "v3":
        assert '"flag":true' in ref["served"][1] and '"app":"acme"' in ref["served"][1]
