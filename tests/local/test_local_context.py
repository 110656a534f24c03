"""PM_CONTEXT_LOCAL against the official binding, which dlopen()s the DSO PMDAs: the same
local table (a pmcd.conf of the test's, -K edits), read through every call a client makes
(local_reader.py), must give the same image on both sides, and what the reader writes on
stderr (libpcp's warnings for DSOs it cannot attach) must be the same too."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import difftest, tool_archive

pytestmark = [pytest.mark.reference, pytest.mark.timeout(300)]

HERE = Path(__file__).resolve().parent
READER = (HERE / "local_reader.py").read_text()
PMDAS = "/var/lib/pcp/pmdas"

CONF = """\
# a local table of the test's: pmcd's own is left out, the linux line means its DSO
pmcd\t2\tdso\tpmcd_init\t{p}/pmcd/pmda_pmcd.so
sampledso\t30\tdso\tsample_init\t{p}/sample/pmda_sample.so
linux\t60\tpipe\tbinary\t\t{p}/linux/pmdalinux
""".format(p=PMDAS)

# sampledso's metrics whose values do not move, and the linux PMDA's hardware inventory
STATIC = ["sampledso.long.one", "sampledso.long.ten", "sampledso.long.hundred",
          "sampledso.long.million", "sampledso.long.write_me", "sampledso.long.bin",
          "sampledso.ulong.one", "sampledso.ulong.hundred", "sampledso.ulong.bin",
          "sampledso.longlong.one", "sampledso.longlong.million", "sampledso.ulonglong.ten",
          "sampledso.float.one", "sampledso.float.hundred", "sampledso.double.ten",
          "sampledso.double.bin", "sampledso.string.hullo", "sampledso.string.write_me",
          "sampledso.colour", "sampledso.bin", "sampledso.darkness", "sampledso.noinst",
          "sampledso.dupnames.two.bin", "hinv.ncpu", "hinv.pagesize", "hinv.physmem",
          "hinv.ndisk", "hinv.ninterface", "hinv.map.cpu_num", "hinv.cpu.vendor"]

FULL = {
    "subtrees": ["sampledso.long", "sampledso.ulong", "sampledso.longlong", "sampledso.float",
                 "sampledso.double", "sampledso.string", "sampledso.aggregate",
                 "sampledso.colour", "sampledso.bin", "sampledso.darkness", "sampledso.noinst",
                 "sampledso.dupnames", "sampledso.secret", "sampledso.ghosts",
                 "sampledso.event.type", "sampledso.event.param_string", "hinv"],
    "walk": ["sampledso", "kernel.all", "disk", "nosuch"],
    "names": ["sample.long.one", "sampledso.no.such", "sampledso.long", "event.flags",
              "event.missed", "pmcd.version", "sampledso.secret.nope",
              "sampledso.secret.foo.bar.max.redirect", "kernel.all.load", ""],
    "values": STATIC,
    "children": ["", "sampledso", "sampledso.secret", "sampledso.secret.foo",
                 "sampledso.secret.foo.bar", "sampledso.long.one", "sampledso.ghosts",
                 "sampledso.secret.nope", "nosuch", "event"],
    "pmids": [(30 << 22) | 10, (30 << 22) | (7 << 10) | 99, (29 << 22) | 10, 1,
              (60 << 22) | (0 << 10) | 32, (511 << 22) | (30 << 10)],
    "fetch_all": ["sampledso.long.one", "hinv.ncpu", "sample.long.one", "sampledso.string.hullo",
                  "event.missed", "sampledso.colour", "hinv.pagesize", "sampledso.long.one",
                  "pmcd.version", "sampledso.bin", "hinv.ndisk"],
    "store": [["sampledso.long.write_me", 42], ["sampledso.ulong.write_me", 7],
              ["sampledso.long.one", 5], ["sample.long.write_me", 3]],
}


def _run(ours: bool, spec: dict, conf: Path, extra_env=None):
    env = difftest._env(ours)
    env.update({"PCP_PMCDCONF_PATH": str(conf), "LOCAL_READER_SPEC": json.dumps(spec)})
    env.update(extra_env or {})
    python = difftest.OUR_PYTHON if ours else difftest.REF_PYTHON
    proc = subprocess.run([python, "-c", READER], cwd=difftest._cwd(), env=env,
                          capture_output=True, text=True, timeout=180, check=False)
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0 and lines, ("ours" if ours else "reference",
                                           proc.returncode, proc.stderr[-3000:])
    return json.loads(lines[-1]), proc.stderr


def _both(spec: dict, conf: Path, extra_env=None):
    difftest.require_reference()
    ref = _run(False, spec, conf, extra_env)
    ours = _run(True, spec, conf, extra_env)
    return ours, ref


@pytest.fixture
def conf(tmp_path):
    path = tmp_path / "pmcd.conf"
    path.write_text(CONF)
    return path


def test_sampledso_and_linux_read_as_the_dsos(conf):
    """Names, descriptors, one-line and help text, labels, instances and their labels,
    values of the static metrics, dynamic names (sampledso.secret, ghosts) through the
    PMDA, PMNS walks, pmNameAll, errors for metrics of PMDAs not in the table, a fetch
    across domains with a duplicate, stores allowed and refused."""
    (ours, our_err), (ref, ref_err) = _both(FULL, conf)
    difftest.assert_equal(ours, ref)
    assert our_err == ref_err == ""
    metrics = ref["metrics"]
    # the image is not empty: values, text, dynamic names and errors are all in it
    assert metrics["sampledso.long.hundred"]["values"] == [[-1, 100]]
    assert metrics["sampledso.bin"]["indom"][1][0] == "bin-100"
    assert "hullo" in metrics["sampledso.string.hullo"]["values"][0][1]
    assert metrics["hinv.ncpu"]["values"][0][1] >= 1
    assert b"constant value 1" in metrics["sampledso.long.one"]["help"].encode() or \
        "constant value 1" in metrics["sampledso.long.one"]["help"]
    assert "sampledso.secret.foo.bar.three" in metrics["traverse sampledso.secret"]["leaves"]
    assert metrics["sample.long.one"]["numval"] == -12386          # PM_ERR_NOAGENT
    assert len(metrics["walk kernel.all"]["leaves"]) > 10
    assert ref["stores"][0][3] == "ok" and ref["stores"][0][4] == [[-1, 42]]
    assert ref["stores"][3][3] == {"pmErr": -12351}       # PM_ERR_VALUE: no value to store


def _spec_with(options):
    return {"options": options, "subtrees": ["sampledso.long", "hinv.ncpu"],
            "names": ["sample.long.ten", "sample.string.hullo", "sample.secret.foo.one",
                      "hinv.pagesize", "sampledso.colour"],
            "values": ["sampledso.long.one", "sampledso.long.ten", "hinv.ncpu", "hinv.pagesize",
                       "sample.long.ten", "sample.string.hullo", "sample.secret.foo.one",
                       "sampledso.colour"],
            "walk": ["sample.secret", "sampledso.secret"],
            "pmids": [(29 << 22) | (0 << 10) | 1000],
            "fetch_all": ["sample.long.ten", "sampledso.long.ten", "hinv.ncpu"]}


K_CASES = {
    "-L": ["-L"],
    "del 30": ["-L", "-K", "del,30"],
    "del by path": ["-L", "-K", "del,,%s/sample/pmda_sample.so" % PMDAS],
    "del linux": ["-L", "-K", "del,60"],
    "clear": ["-L", "-K", "clear"],
    "clear, add sample 29": ["-L", "-K", "clear", "-K",
                             "add,29,%s/sample/pmda_sample.so,sample_init" % PMDAS],
    "add relative to PCP_PMDAS_DIR": ["-L", "-K", "clear", "-K",
                                      "add,29,sample/pmda_sample.so,sample_init"],
}


@pytest.mark.parametrize("options", list(K_CASES.values()), ids=list(K_CASES))
def test_spec_local_edits_the_table_as_libpcp(conf, options):
    ours, ref = _both(_spec_with(options), conf)
    difftest.assert_equal(ours[0], ref[0])
    assert ours[1] == ref[1]


def _sampledso_parts(image):
    """Take out of a reader image what belongs to sampledso (domain 30)."""
    out = {k: image["metrics"].pop(k) for k in list(image["metrics"])
           if k.startswith(("sampledso", "traverse sampledso", "walk sampledso"))}
    out["fetch"] = image["fetch_all"].pop(1)
    return out


def test_the_same_dso_twice(conf):
    """-K add of pmda_sample.so (no suffix: found with ".so" under PCP_PMDAS_DIR) as
    domain 29 beside sampledso: libpcp dlopen()s the one image again and initialises it
    as domain 29, after which its domain-30 metrics are gone (a libpcp quirk); pcp-native
    runs a second child, so sampledso keeps working. Everything else is the same."""
    ours, ref = _both(_spec_with(["-L", "-K", "add,29,sample/pmda_sample,sample_init"]), conf)
    theirs, mine = _sampledso_parts(ref[0]), _sampledso_parts(ours[0])
    assert theirs["fetch"][1] == 0 and mine["fetch"] == [(30 << 22) | 11, 1, [[-1, 10]]]
    assert theirs["sampledso.colour"]["desc"][0] == 0xFFFFFFFF
    assert mine["sampledso.colour"]["desc"][0] == (30 << 22) | 5
    assert ref[0]["metrics"]["sample.long.ten"]["values"] == [[-1, 10]]
    difftest.assert_equal(ours[0], ref[0])
    assert ours[1] == ref[1]


def test_a_dso_that_cannot_be_found_is_left_out_with_libpcps_warning(tmp_path, conf):
    path = tmp_path / "pmcd2.conf"
    path.write_text(CONF + "bogus\t77\tdso\tbogus_init\t/nonexistent/pmda_bogus.so\n")
    spec = {"fetch_all": ["sampledso.long.one", "hinv.ncpu"], "pmids": [(77 << 22) | 1]}
    ours, ref = _both(spec, path)
    difftest.assert_equal(ours[0], ref[0])
    assert "cannot find DSO" in ref[1]
    assert ours[1] == ref[1]


def test_the_machines_own_table(tmp_path):
    """The stock pmcd.conf (sampledso, mmv, jbd2, the linux DSO, pmproxy's mmv DSO): the
    whole PMNS walked, and every DSO's metrics read, pmproxy_init's among them (pmdammv
    run under the program name pmdapmproxy): the same names, values and stderr."""
    conf = Path("/etc/pcp/pmcd/pmcd.conf")
    spec = {"walk": ["", "sampledso", "jbd2", "mmv", "pmproxy"],
            "subtrees": ["jbd2.njournals", "mmv.control", "sampledso.long", "pmproxy"],
            "values": ["jbd2.njournals", "mmv.control.reload", "mmv.control.debug",
                       "sampledso.long.one", "pmproxy.control.files",
                       "pmproxy.control.debug", "pmproxy.control.reload"],
            "fetch_all": ["jbd2.njournals", "pmproxy.control.files", "sampledso.long.hundred",
                          "hinv.ncpu", "mmv.control.files"]}
    ours, ref = _both(spec, conf)
    pmproxy = ref[0]["metrics"]["walk pmproxy"]
    assert pmproxy["count"] == 3 and pmproxy["sts"] is None, pmproxy
    fetched = ref[0]["fetch_all"][1]
    assert fetched[0] == (4 << 22) | 2 and fetched[1] == 1, fetched
    difftest.assert_equal(ours[0], ref[0])
    assert ours[1] == ref[1] == ""


PMPROXY_MMV = r'''
import os
from pcp import mmv
reg = mmv.Registry(os.path.join(os.environ["PCP_TMP_DIR"], "pmproxy", "pmproxy"), cluster=5)
total = reg.counter("requests.total", "Requests\nAll of them.")
queue = reg.gauge("queue", "Depth", instances=["a", "b"])
state = reg.text("state", "State", labels={"role": "proxy"})
reg.start()
total.inc(7)
queue["b"].set(3)
state.set("up")
'''


def test_pmproxy_serves_pmproxys_own_mmv_file(tmp_path):
    """pmproxy_init reads $PCP_TMP_DIR/pmproxy (never mmv's files): a registry written
    there with pcp.mmv is served as pmproxy.* with its help, labels, instances and
    values; mmv.* sees only its own directory."""
    tmpdir = tmp_path / "tmp"
    for sub in ("pmproxy", "mmv"):
        (tmpdir / sub).mkdir(parents=True)
    env = {"PCP_TMP_DIR": str(tmpdir)}
    written = difftest.run_program(PMPROXY_MMV + "print(1)\n", True, env)
    assert written == 1, written
    conf = tmp_path / "pmcd.conf"
    conf.write_text("pmproxy\t4\tdso\tpmproxy_init\t%s/mmv/pmda_mmv.so\n"
                    "mmv\t70\tdso\tmmv_init\t%s/mmv/pmda_mmv.so\n" % (PMDAS, PMDAS))
    # the file's metrics are named prefix.file.metric
    spec = {"walk": ["", "pmproxy", "mmv"], "subtrees": ["pmproxy", "mmv"],
            "values": ["pmproxy.pmproxy.requests.total", "pmproxy.pmproxy.state",
                       "pmproxy.pmproxy.queue", "pmproxy.control.files", "mmv.control.files"],
            "fetch_all": ["pmproxy.pmproxy.requests.total", "mmv.control.files",
                          "pmproxy.pmproxy.queue"]}
    ours, ref = _both(spec, conf, env)
    metrics = ref[0]["metrics"]
    assert metrics["pmproxy.pmproxy.requests.total"]["values"] == [[-1, 7]], metrics
    assert metrics["pmproxy.control.files"]["values"] == [[-1, 1]]
    assert metrics["mmv.control.files"]["values"] == [[-1, 0]]
    assert metrics["walk mmv"]["count"] == 3           # mmv's controls alone
    difftest.assert_equal(ours[0], ref[0])
    assert ours[1] == ref[1]


PMREP_RUNS = [
    ["-L", "-s", "3", "-t", "0.1", "sampledso.long.one", "sampledso.ulong.hundred",
     "sampledso.bin", "sampledso.string.hullo", "hinv.ncpu"],
    ["-L", "-K", "del,60", "-s", "2", "-t", "0.1", "sampledso.long.one", "hinv.ncpu"],
    ["-L", "-K", "clear", "-K", "add,29,sample/pmda_sample.so,sample_init", "-s", "2",
     "-t", "0.1", "sample.long.ten", "sample.string.hullo", "sample.bin"],
    ["-L", "-s", "2", "-t", "0.1", "-r", "-U", "sampledso.double.bin", "hinv.pagesize"],
]


@pytest.mark.parametrize("argv", PMREP_RUNS, ids=[" ".join(a) for a in PMREP_RUNS])
def test_pmrep_local(conf, argv):
    """pmrep -L (pmconfig, fetchgroup) prints the same on both bindings."""
    difftest.require_reference()
    path = tool_archive.tool_path("pmrep")
    env = {"PCP_PMCDCONF_PATH": str(conf)}
    ref = tool_archive.run_tool(path, argv, False, env)
    ours = tool_archive.run_tool(path, argv, True, env)
    assert (ours["status"], ours["stderr"]) == (ref["status"], ref["stderr"])
    assert ours["stdout"] == ref["stdout"]
    assert ref["stdout"].count("\n") >= 3 or ref["status"] != 0


INFO_RUNS = [
    ["-L", "-f", "sampledso.long", "sampledso.bin", "hinv.ncpu"],
    ["-L", "-dTtl", "sampledso.colour", "sampledso.string.hullo"],
    ["-L", "-K", "del,30", "-f", "sampledso.long.one", "hinv.pagesize"],
    ["-L", "-m", "sampledso.secret"],
    ["-L", "-f", "sample.long.one", "nosuch.metric"],
]


@pytest.mark.parametrize("argv", INFO_RUNS, ids=[" ".join(a) for a in INFO_RUNS])
def test_pcp_info_local_prints_what_pminfo_prints(conf, argv):
    """`pcp info -L` (pminfo's command line) against the real pminfo -L."""
    env = dict(os.environ, PCP_PMCDCONF_PATH=str(conf))
    ref = subprocess.run(["pminfo"] + argv, capture_output=True, text=True, env=env,
                         timeout=60, check=False)
    env = dict(difftest._env(True), PCP_PMCDCONF_PATH=str(conf))
    ours = subprocess.run([sys.executable, "-m", "pcp", "info"] + argv, capture_output=True,
                          text=True, env=env, timeout=60, check=False, cwd=difftest._cwd())
    assert ours.stdout == ref.stdout
    assert ours.returncode == ref.returncode


def test_pmrep_and_pcp_info_on_the_machines_own_table():
    """The stock pmcd.conf, pmproxy's DSO in it: pmrep -L and `pcp info -L` print what
    the official tools print, stderr included (no warning for pmproxy_init)."""
    difftest.require_reference()
    argv = ["-L", "-s", "2", "-t", "0.1", "pmproxy.control.files", "sampledso.long.one"]
    path = tool_archive.tool_path("pmrep")
    ref = tool_archive.run_tool(path, argv, False, {})
    ours = tool_archive.run_tool(path, argv, True, {})
    assert (ours["status"], ours["stderr"], ours["stdout"]) == \
        (ref["status"], ref["stderr"], ref["stdout"])
    assert ref["status"] == 0 and ref["stdout"].count("\n") >= 3
    argv = ["-L", "-f", "pmproxy", "sampledso.long.one"]
    ref = subprocess.run(["pminfo"] + argv, capture_output=True, text=True, timeout=60,
                         check=False)
    ours = subprocess.run([sys.executable, "-m", "pcp", "info"] + argv, capture_output=True,
                          text=True, env=difftest._env(True), timeout=60, check=False,
                          cwd=difftest._cwd())
    assert (ours.stdout, ours.stderr, ours.returncode) == \
        (ref.stdout, ref.stderr, ref.returncode)
    assert "pmproxy.control.files" in ref.stdout


UNREADABLE = r'''
import json
from pcp import pmapi
import cpmapi as c_api
out = []
for _ in range(2):
    try:
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_LOCAL, None)
        r = ctx.pmFetch(ctx.pmLookupName(["hinv.ncpu"]))
        out.append(["open", r.contents.get_numval(0)])
    except pmapi.pmErr as e:
        out.append(["pmErr", e.args[0], str(e)])
print(json.dumps(out))
'''


def test_an_unreadable_table_fails_the_first_context_only(tmp_path):
    """pmcd.conf missing: the first pmNewContext fails with -ENOENT; libpcp has by then
    counted its table as read (empty), so the next one opens, with no PMDA at all."""
    difftest.require_reference()
    env = {"PCP_PMCDCONF_PATH": str(tmp_path / "nonexistent.conf")}
    ours = difftest.run_program(UNREADABLE, True, env)
    ref = difftest.run_program(UNREADABLE, False, env)
    assert ref == [["pmErr", -2, "No such file or directory [None]"], ["open", -12386]]
    difftest.assert_equal(ours, ref)
