"""PCP's PMDAs that read their sources from files, run with sources the test writes:
pmdazswap (a fake zswap stats directory, ZSWAP_STATS_PATH) and pmdajson (JSON metadata
and data, with array metrics on its indom caches), under a private pmcd on the official
binding and on this package: pminfo -dfTtlm, instances, log lines and cache files."""
from __future__ import annotations

import importlib.util
import os
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.pmda.pmcdrun import OFFICIAL, OURS, PMDAS, PrivatePmcd, masked_log, on_both
from tests.pmda.test_pmda_acceptance import RECORDED, _needs_private_pmcd

pytestmark = [pytest.mark.pmcd, pytest.mark.reference,
              # these PMDAs reach the agent's C codec through the paths test_pmda_edges
              # and test_pmda_acceptance take under the sanitizer too; CI's time budget
              pytest.mark.skipif(bool(os.environ.get("PCP_TEST_ASAN_PRELOAD")),
                                 reason="same C paths as test_pmda_edges (sanitizer pass)")]


def _run(tmp, interpreter, pmda, domain, steps, env=None, files=None, between=None,
         ipc="binary", record=None, prepare=None):
    """steps on a private pmcd, then (record: (subtree, [metric])) pmval and a short
    pmlogger archive of the PMDA (PrivatePmcd.record); prepare(server) first."""
    server = PrivatePmcd(tmp, pmda, domain, interpreter, files=files, env=env, ipc=ipc)
    if prepare is not None:
        prepare(server)
    out = {}
    try:
        out.update(server.install_steps())
        server.start()
        for key, argv in steps:
            if between is not None:
                between(key)
            out[key] = server.run(argv)
        if record is not None:
            out.update(server.record(*record))
    finally:
        server.stop()
    out["log"] = masked_log(server.log("%s.log" % pmda))
    cache_dir = tmp / "var" / "config" / "pmda"
    out["cache"] = {p.name: [line.split(" ", 2)[::2] for line in p.read_text().splitlines()]
                    for p in sorted(cache_dir.iterdir())}     # stamps left out
    return out


def _recorded(side: dict, root: str) -> None:
    """The recording holds something to compare: values and the subtree's descs."""
    assert "(%s." % root in side["logmeta"] and "Data Type" in side["logmeta"]
    assert re.search(r"value (N|\")", side["logdata"])
    assert "samples:   3" in side["pmval"] or not side["pmval"]


def _zswap_stats(where: Path) -> Path:
    stats = where / "zswap"
    stats.mkdir(parents=True)
    for k, name in enumerate(["pool_limit_hit", "reject_reclaim_fail", "reject_alloc_fail",
                              "reject_kmemcache_fail", "reject_compress_poor",
                              "written_back_pages", "duplicate_entry", "pool_pages",
                              "stored_pages", "same_filled_pages"]):
        (stats / name).write_text("%d\n" % (k * 1000 + 7))
    (stats / "pool_total_size").write_text("not a number\n")     # the PMDA logs it
    return stats


@pytest.mark.skipif(not (PMDAS / "zswap").is_dir(), reason="no pmdazswap")
def test_pmdazswap_on_a_fake_stats_directory(tmp_path):
    _needs_private_pmcd()
    steps = [("pminfo", ["pminfo", "-dfTtlm", "zswap"]),
             ("again", ["pminfo", "-f", "zswap.pool_pages", "zswap.pool_total_size"]),
             ("store", ["pmstore", "zswap.pool_pages", "1"])]
    def session(side, interpreter):
        stats = _zswap_stats(tmp_path / ("stats-" + side))
        return _run(tmp_path / side, interpreter, "zswap", 125, steps,
                    env={"ZSWAP_STATS_PATH": str(stats), "ZSWAP_PAGESIZE": "4096"},
                    record=("zswap", ["zswap.pool_pages"]))
    ref, ours = on_both(session)
    _recorded(ref, "zswap")
    assert "value 28700672" in ref["pminfo"]       # pool_pages 7007 * 4096
    for key in ["pminfo", "again", "store", "log", "cache", "domain.h.python",
                "pmns.python", *RECORDED]:
        want = str(ref[key]).replace(str(tmp_path / "stats-ref"), "STATS")
        got = str(ours[key]).replace(str(tmp_path / "stats-ours"), "STATS")
        assert got == want, key


def _json_sources(root: Path) -> None:
    app = root / "app"
    app.mkdir(parents=True)
    (app / "metadata.json").write_text(json.dumps({
        "prefix": "app",
        "metrics": [
            {"name": "greeting", "pointer": "/greeting", "type": "string",
             "description": "A string"},
            {"name": "reads", "pointer": "/reads", "type": "integer", "units": "count",
             "semantics": "counter", "description": "Times values read"},
            {"name": "ratio", "pointer": "/ratio", "type": "double"},
            {"name": "disks", "pointer": "/disks", "type": "array", "index": "/name",
             "description": "Per disk", "metrics": [
                 {"name": "bytes", "pointer": "/bytes", "type": "integer", "units": "bytes",
                  "semantics": "counter", "description": "Bytes moved"},
                 {"name": "model", "pointer": "/model", "type": "string"}]},
        ]}))
    (app / "data.json").write_text(json.dumps({
        "greeting": "h\u00e9llo, 1, 2, 3", "reads": 42, "ratio": 0.25,
        "disks": [{"name": "sda", "bytes": 1 << 40, "model": "fast"},
                  {"name": "sdb", "bytes": 7, "model": "slow"}]}))


def _module_dir(tmp: Path) -> Path:
    """jsonpointer and six, which pmdajson imports, for the official interpreter too."""
    where = tmp / "pymods"
    where.mkdir(exist_ok=True)
    for name in ("jsonpointer", "six"):
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            pytest.fail("pmdajson needs %s (a test dependency)" % name)
        shutil.copy(spec.origin, where / Path(spec.origin).name)
    return where


@pytest.mark.skipif(not (PMDAS / "json").is_dir(), reason="no pmdajson")
def test_pmdajson_on_sources_the_test_writes(tmp_path):
    _needs_private_pmcd()
    steps = [("pminfo", ["pminfo", "-dfTtlm", "json"]),
             ("instances", ["pminfo", "-f", "json.app.disks.bytes"]),
             ("profile", ["pmval", "-s", "1", "-i", "sdb", "json.app.disks.model"]),
             ("store", ["pmstore", "json.app.reads", "1"])]
    pymods = _module_dir(tmp_path)
    def session(side, interpreter):
        sources = tmp_path / ("sources-" + side)
        _json_sources(sources)
        config = json.dumps({"directory_list": [], "trusted_directory_list": [str(sources)]})
        return _run(tmp_path / side, interpreter, "json", 137, steps,
                    env={"PYTHONPATH": str(pymods)}, files={"config.json": config},
                    record=("json", ["json.app.disks.bytes"]))
    ref, ours = on_both(session)
    _recorded(ref, "json")
    assert 'value "fast"' in ref["pminfo"] and "sdb" in ref["instances"]
    for key in ["pminfo", "instances", "profile", "store", "log", "cache",
                "domain.h.python", "pmns.python", *RECORDED]:
        want = str(ref[key]).replace(str(tmp_path / "sources-ref"), "SOURCES")
        got = str(ours[key]).replace(str(tmp_path / "sources-ours"), "SOURCES")
        want = want.replace(str(tmp_path / "ref"), "RUN")
        got = got.replace(str(tmp_path / "ours"), "RUN")
        assert got == want, key


OPENMETRICS = """\
# HELP http_requests_total The total number of HTTP requests.
# TYPE http_requests_total counter
http_requests_total{method="post",code="200"} 1027
http_requests_total{method="post",code="400"} 3
# HELP room_temperature Current temperature.
# TYPE room_temperature gauge
room_temperature{room="kitchen"} 21.5
room_temperature{room="hall"} 19.25
# TYPE build_info gauge
build_info{version="1.2.3",branch="main"} 1
"""


def _mask_control(text: str) -> str:
    """openmetrics.control's call counts and times depend on how often pmcd was asked
    for names while the PMDA started: compared by shape."""
    blocks = text.split("\n\n")
    for i, block in enumerate(blocks):
        if block.startswith(("openmetrics.control.calls", "openmetrics.control.fetch_time",
                             "openmetrics.control.parse_time")):
            blocks[i] = re.sub(r"value \d+", "value NUM", block)
    return "\n\n".join(blocks)


def _openmetrics_on_both(tmp_path: Path, text: str, steps, record=None):
    """pmdaopenmetrics reading `text` from a file source (app.url) under a private pmcd,
    on both bindings: (reference, ours) with the PMDA's timings masked."""
    _needs_private_pmcd()
    for python in (OFFICIAL, OURS):
        # pmdaopenmetrics imports requests: python3-requests and the test extras
        found = subprocess.run([python, "-c", "import requests"], capture_output=True)
        if found.returncode != 0:
            why = "requests is missing for %s" % python
            if os.environ.get("CI"):
                pytest.fail(why)
            pytest.skip(why)

    def session(side, interpreter):
        source = tmp_path / ("metrics-" + side + ".txt")
        source.write_text(text)
        run = tmp_path / side
        (run / "pmdas" / "openmetrics" / "config.d").mkdir(parents=True)
        (run / "pmdas" / "openmetrics" / "config.d" / "app.url").write_text(
            "file://%s\n" % source)
        return _run(run, interpreter, "openmetrics", 144, steps, ipc="binary notready",
                    record=record)
    ref, ours = on_both(session)
    for side in (ref, ours):
        # the PMDA's own timings, and its log footer: pmcd's SIGTERM at shutdown may
        # reach the threaded PMDA before it has left (then no footer) on either binding
        side["log"] = [re.sub(r"in \d+\.\d+s", "in SECONDS", line) for line in side["log"]
                       if line and not line.startswith("Log finished")]
        for key in ("domain.h.python", "pmns.python"):
            side[key] = re.sub(r"in \d+\.\d+s", "in SECONDS", side[key])
    return ref, ours


def _assert_same(tmp_path: Path, ref: dict, ours: dict, keys) -> None:
    for key in keys:
        want = _mask_control(str(ref[key]).replace(str(tmp_path / "metrics-ref.txt"), "SOURCE"))
        got = _mask_control(str(ours[key]).replace(str(tmp_path / "metrics-ours.txt"), "SOURCE"))
        want = want.replace(str(tmp_path / "ref"), "RUN")
        got = got.replace(str(tmp_path / "ours"), "RUN")
        assert got == want, key


@pytest.mark.skipif(not (PMDAS / "openmetrics").is_dir(), reason="no pmdaopenmetrics")
def test_pmdaopenmetrics_on_file_sources(tmp_path):
    steps = [("pminfo", ["pminfo", "-dfTtlm", "openmetrics"]),
             ("instances", ["pminfo", "-f", "openmetrics.app.http_requests_total"]),
             ("labels", ["pminfo", "-l", "openmetrics.app.room_temperature"]),
             ("store", ["pmstore", "openmetrics.control.debug", "0"]),
             ("store_refused", ["pmstore", "openmetrics.app.room_temperature", "1"])]
    ref, ours = _openmetrics_on_both(tmp_path, OPENMETRICS, steps,
                                     ("openmetrics", ["openmetrics.app.http_requests_total"]))
    _recorded(ref, "openmetrics")
    assert "1027" in ref["instances"] and "kitchen" in ref["labels"]
    _assert_same(tmp_path, ref, ours, ["pminfo", "instances", "labels", "store",
                                       "store_refused", "log", "cache", "domain.h.python",
                                       "pmns.python", *RECORDED])


PROM_EXAMPLE = Path("/var/lib/pcp/testsuite/openmetrics/samples/"
                    "prom-exposition-formats-example1.txt")


@pytest.mark.skipif(not (PMDAS / "openmetrics").is_dir(), reason="no pmdaopenmetrics")
@pytest.mark.skipif(not PROM_EXAMPLE.exists() and not os.environ.get("CI"),
                    reason="no pcp-testsuite")
def test_pmdaopenmetrics_labels_libpcp_refuses(tmp_path):
    """PCP's QA sample prom-exposition-formats-example1: the item labels of
    msdos_file_access_time_seconds (escaped backslashes, quotes and a newline, which
    the PMDA writes unescaped) are refused by __pmAddLabels (-EINVAL), the other
    metrics' labels served: the same answers and log on both bindings (before, this
    package answered an empty set)."""
    metric = "openmetrics.app.msdos_file_access_time_seconds"
    # pminfo -l leaves a failed label request out: a client of the official binding
    # (run as a tool: "-h HOST" follows argv[0]) asks for the item labels themselves
    client = tmp_path / "item_labels.py"
    client.write_text(ITEM_LABELS_CLIENT)
    client.chmod(0o755)
    steps = [("labels", ["pminfo", "-l", metric, "openmetrics.app.http_requests_total"]),
             ("values", ["pminfo", "-f", metric]),
             ("item_labels", [str(client), metric, "openmetrics.app.http_requests_total"])]
    ref, ours = _openmetrics_on_both(tmp_path, PROM_EXAMPLE.read_text(), steps)
    assert any("__pmAddLabels failed: Invalid argument" in line for line in ref["log"])
    assert ref["item_labels"].splitlines()[0] == "-22", ref["item_labels"]
    _assert_same(tmp_path, ref, ours, ["labels", "values", "item_labels", "log"])


ITEM_LABELS_CLIENT = """#!%s
import sys
from pcp import pmapi
import cpmapi as c_api
ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, sys.argv[2])
for name in sys.argv[3:]:
    try:
        print(ctx.pmGetItemLabels(ctx.pmLookupName([name])[0]))
    except pmapi.pmErr as e:
        print(e.args[0])
""" % OFFICIAL


NFS_QA = Path("/var/lib/pcp/testsuite/nfsclient")


@pytest.mark.skipif(not (PMDAS / "nfsclient").is_dir(), reason="no pmdanfsclient")
@pytest.mark.parametrize("qa", ["mountstats-el8.7-rdma.qa"])
def test_pmdanfsclient_on_pcp_qa_mountstats(tmp_path, qa):
    _needs_private_pmcd()
    if not (NFS_QA / qa).exists():
        why = "PCP's QA data (pcp-testsuite) is not installed"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    steps = [("pminfo", ["pminfo", "-dfTtlm", "nfsclient"]),
             ("instances", ["pminfo", "-f", "nfsclient.options.string"]),
             ("profile", ["pmprobe", "-v", "nfsclient.bytes.read.normal"]),
             ("store", ["pmstore", "nfsclient.options.proto", "1"])]
    ref, ours = on_both(lambda side, python: _run(
        tmp_path / side, python, "nfsclient", 62, steps,
        env={"NFSCLIENT_MOUNTSTATS_PATH": str(NFS_QA / qa)},
        record=("nfsclient", ["nfsclient.bytes.read.normal"])))
    _recorded(ref, "nfsclient")
    assert "nfsclient.bytes.read.normal" in ref["pminfo"] and "inst [" in ref["pminfo"]
    for key in ["pminfo", "instances", "profile", "store", "log", "cache",
                "domain.h.python", "pmns.python", *RECORDED]:
        assert str(ours[key]) == str(ref[key]), key


QA = Path("/var/lib/pcp/testsuite")


def _need_qa(folder: str) -> Path:
    where = QA / folder
    if not where.is_dir():
        why = "PCP's QA data (pcp-testsuite) is not installed"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    return where


@pytest.mark.skipif(not (PMDAS / "unbound").is_dir(), reason="no pmdaunbound")
def test_pmdaunbound_on_pcp_qa_stats(tmp_path):
    _needs_private_pmcd()
    stats = _need_qa("unbound") / "unbound-control-stats-002"
    steps = [("pminfo", ["pminfo", "-dfTtlm", "unbound"]),
             ("again", ["pmprobe", "-v", "unbound.queries.cachehits", "unbound.time.up"]),
             ("store", ["pmstore", "unbound.queries.cachehits", "1"])]
    ref, ours = on_both(lambda side, python: _run(
        tmp_path / side, python, "unbound", 132, steps,
        env={"UNBOUND_STATS": "/bin/cat %s" % stats},
        record=("unbound", ["unbound.total.num.cachehits"])))
    _recorded(ref, "unbound")
    assert "value" in ref["pminfo"]
    for key in ["pminfo", "again", "store", "log", "cache", "domain.h.python", "pmns.python",
                *RECORDED]:
        assert str(ours[key]) == str(ref[key]), key


@pytest.mark.skipif(not (PMDAS / "gluster").is_dir(), reason="no pmdagluster")
def test_pmdagluster_on_pcp_qa_volumes(tmp_path):
    _needs_private_pmcd()
    home = _need_qa("gluster")
    steps = [("pminfo", ["pminfo", "-dfTtlm", "gluster"]),
             ("instances", ["pminfo", "-f", "gluster.volume.dist.count"]),
             ("start", ["pmstore", "gluster.volume.profile", "1"]),
             ("stop", ["pmstore", "gluster.volume.profile", "0"]),
             ("bad", ["pmstore", "gluster.volume.dist.count", "3"])]

    def session(side, python):
        marks = tmp_path / ("marks-" + side)
        marks.mkdir()
        script = "/bin/sh %s/test.sh" % home
        out = _run(tmp_path / side, python, "gluster", 118, steps, env={
            "GLUSTER_HOME": str(home),
            "GLUSTER_VOL_INFO": script + " info info-single",
            "GLUSTER_VOL_STATS": script + " stats profile-%s-info",
            "GLUSTER_VOL_STOP": script + " stop %%s 1 %s/stop" % marks,
            "GLUSTER_VOL_START": script + " start %%s 1 %s/start" % marks},
            record=("gluster", ["gluster.volume.dist.count"]))
        out["marks"] = sorted((p.name, p.read_text()) for p in marks.iterdir())
        return out
    ref, ours = on_both(session)
    _recorded(ref, "gluster")
    assert "gv0" in ref["instances"] and ref["marks"]
    for key in ["pminfo", "instances", "start", "stop", "bad", "marks", "log", "cache",
                "domain.h.python", "pmns.python", *RECORDED]:
        want = str(ref[key]).replace(str(tmp_path / "marks-ref"), "MARKS")
        assert str(ours[key]).replace(str(tmp_path / "marks-ours"), "MARKS") == want, key


NETCHECK_CONF = """[pmda]
modules = port_open,dns_lookup
hosts = 127.0.0.1,localhost
background_check = False
check_hosts_parallel = False
check_interval = 1sec
align_interval = False
module_failure_fatal = True

[port_open]
ports = %d

[dns_lookup]
timeout = 1
family = ipv4
"""


def _netcheck_tree(server) -> None:
    """What the PMDA's Install leaves: its modules beside it, each module file also
    under a .py name (its pyprep), and a configuration of checks that stay on this
    machine: pmcd's own port open, localhost's name and address looked up."""
    source = PMDAS / "netcheck"
    shutil.copy(source / "pmdautil.python", server.pmdadir)
    shutil.copytree(source / "modules", server.pmdadir / "modules")
    for folder in (server.pmdadir, server.pmdadir / "modules"):
        for module in folder.glob("*.python"):
            if module.name != "pmdanetcheck.python":
                os.symlink(module.name, folder / (module.name[:-len(".python")] + ".py"))
    (server.pmdadir / "netcheck.conf").write_text(NETCHECK_CONF % server.port)


@pytest.mark.skipif(not (PMDAS / "netcheck").is_dir(), reason="no pmdanetcheck")
def test_pmdanetcheck_on_loopback_checks(tmp_path):
    _needs_private_pmcd()
    # every fetch runs the checks, each in a multiprocessing Manager (about 0.4 s):
    # few fetches, no pmval
    steps = [("pminfo", ["pminfo", "-dfTtlm", "netcheck"])]
    ports = {}

    def session(side, python):
        def prepare(server):
            ports[side] = server.port
            _netcheck_tree(server)
        return _run(tmp_path / side, python, "netcheck", 152, steps, ipc="binary notready",
                    prepare=prepare, record=("netcheck", [], 2))
    ref, ours = on_both(session)
    _recorded(ref, "netcheck")
    assert "netcheck.port.status" in ref["pminfo"] and 'value "127.0.0.1"' in ref["pminfo"]

    def masked(side: str, text: str) -> str:
        text = text.replace(str(ports[side]), "PORT")
        # the connection times move
        return re.sub(r"value \d+\.\d+(e[-+]\d+)?", "value FLOAT", text)
    for key in ["pminfo", "log", "cache", "domain.h.python", "pmns.python", *RECORDED]:
        assert masked("ours", str(ours[key])) == masked("ref", str(ref[key])), key
