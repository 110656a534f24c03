"""PCP 6.3.8's and 7.2.2's own Python tools (pmrep and its CSV output, pcp2csv, pmiostat,
pcp-mpstat, pcp-pidstat, pcp-ps, pcp-uptime, pcp-free), taken from the trixie and sid roots,
run on QA archives: under the root's python3 with that version's binding, and on the host
under this package's interpreter at that level (PCP_NATIVE_API_LEVEL; the tool found through
its path, this package first on sys.path, the root's tool configuration through
$PCP_SYSCONF_DIR). Exit status, stdout and stderr must be the same byte for byte. The runs on
7.x's extra units (temperature, power, voltage) are 7.2's only.

Each side is one subprocess: a driver that starts every tool in turn and prints all the
answers as JSON. $PCP_DERIVED_CONFIG is empty on both sides: each version's stock derived
metrics are compared in tests/libpcp/test_derived_levels.py.
"""
import glob
import json
import os
import shutil
import tempfile

import pytest

from support import roots, tool_archive

pytestmark = [pytest.mark.reference]

LEVELS = ((6, 3), (7, 2))
QA = roots.QA_ARCHIVES + "/archives/"
BIN = "/usr/lib/pcp/bin/"
#: this machine's recording of the Linux metrics (support/tool_archive), copied into the
#: level's root and seen at the same path on both sides
LINUX = "@LINUX@"
#: an archive of metrics in 7.x's extra units (temperature, power), written by 7.2.2's own
#: pcp.pmi in the root: pcp.pmconfig's is_extra and the units' text and conversions
EXTRA = "@EXTRA@"
EXTRA_WRITER = r"""
import json, sys
from pcp import pmapi, pmi
import cpmapi as c
log = pmi.pmiLogImport(sys.argv[1])
log.pmiSetHostname("sensors")
log.pmiSetTimezone("UTC")
log.pmiAddMetric("sensor.temp", log.pmiID(245, 0, 1), c.PM_TYPE_DOUBLE, log.pmiInDom(245, 0),
                 c.PM_SEM_INSTANT, pmapi.pmUnits(0, 0, 0, 0, 0, 0, c.PM_UNIT_TEMPERATURE,
                                                 c.PM_TEMPERATURE_C))
log.pmiAddMetric("sensor.energy", log.pmiID(245, 0, 2), c.PM_TYPE_U64, c.PM_INDOM_NULL,
                 c.PM_SEM_COUNTER, pmapi.pmUnits(0, 1, 0, 0, 3, 0, c.PM_UNIT_POWER,
                                                 c.PM_POWER_mW))
log.pmiAddMetric("sensor.volts", log.pmiID(245, 0, 3), c.PM_TYPE_FLOAT, c.PM_INDOM_NULL,
                 c.PM_SEM_INSTANT, pmapi.pmUnits(0, 0, 0, 0, 0, 0, c.PM_UNIT_VOLTAGE,
                                                 c.PM_VOLTAGE_mV))
for inst, name in ((0, "cpu"), (1, "gpu")):
    log.pmiAddInstance(log.pmiInDom(245, 0), name, inst)
for k in range(6):
    log.pmiPutValue("sensor.temp", "cpu", "%.2f" % (40.5 + k * 1.25))
    log.pmiPutValue("sensor.temp", "gpu", "%.2f" % (55 - k * 0.5))
    log.pmiPutValue("sensor.energy", None, "%d" % (1000 * k * k))
    log.pmiPutValue("sensor.volts", None, "%.1f" % (1200 + 15 * k))
    log.pmiWrite(1700000000 + k, 0)
log.pmiEnd()
print(json.dumps("ok"))
"""

#: (tool path inside the root, arguments, extra environment)
RUNS = [
    ("/usr/bin/pmrep", ["-a", QA + "20180102", "-u", "-o", "csv", "kernel.all.load",
                        "hinv.ncpu"], {}),
    ("/usr/bin/pmrep", ["-a", QA + "20180102", "-u", "-s", "6", "-p", "kernel.all.load"], {}),
    ("/usr/bin/pmrep", ["-a", QA + "pcp-free", "-z", "-u", "-o", "csv", "-U",
                        "mem.util.used", "mem.physmem", "mem.util.free"], {}),
    ("/usr/bin/pmrep", ["-a", QA + "pcp-mpstat", "-z", "-u", "-s", "4", "-x",
                        "kernel.all.cpu.user", "kernel.all.cpu.sys"], {}),
    ("/usr/bin/pmrep", ["-a", QA + "pcp-mpstat", "-z", "-t", "2", "-s", "3", "-o", "csv",
                        "-k", "kernel.percpu.cpu.idle"], {}),
    ("/usr/bin/pmrep", ["-a", QA + "20180102", "no.such.metric", "kernel.all.load"], {}),
    ("/usr/bin/pmrep", ["-a", QA + "20180102", "-u", "-o", "csv", "-r", "-l", ";",
                        "kernel.all.load"], {}),
    ("/usr/bin/pcp2csv", ["-a", QA + "20180102", "-u", "kernel.all.load"], {}),
    ("/usr/bin/pcp2csv", ["-V"], {}),           # the version libpcp reports
    ("/usr/bin/pcp2csv", ["-a", QA + "pcp-free", "-z", "-u", "-s", "3", "mem"], {}),
    (BIN + "pcp-iostat", ["-a", QA + "pmiostat_mark", "-z", "-u", "-x", "t", "-s", "8"], {}),
    (BIN + "pcp-iostat", ["-a", QA + "pmiostat_mark", "-z", "-t", "15m", "-x", "t"], {}),
    # (the QA archives lack metrics 7.2.2's pcp-mpstat needs (kernel.all.cpu.vuser ...):
    # its error, then this machine's recording)
    (BIN + "pcp-mpstat", ["-a", QA + "pcp-mpstat", "-s", "3"], {}),
    (BIN + "pcp-mpstat", ["-a", LINUX, "-s", "3"], {}),
    (BIN + "pcp-mpstat", ["-a", LINUX, "-s", "2", "-P", "ALL", "-u"], {}),
    (BIN + "pcp-mpstat", ["-a", LINUX, "-s", "2", "-I", "SUM"], {}),
    (BIN + "pcp-iostat", ["-a", LINUX, "-z", "-x", "t", "-s", "3"], {}),
    (BIN + "pcp-pidstat", ["-a", LINUX, "-s", "2", "-l"], {}),
    (BIN + "pcp-pidstat", ["-a", QA + "pcp-pidstat", "-z", "-s", "3"], {}),
    (BIN + "pcp-pidstat", ["-a", QA + "pcp-pidstat", "-z", "-s", "2", "-r", "-U"], {}),
    (BIN + "pcp-ps", ["-e"], {"PCP_ARCHIVE": QA + "pcp-pidstat"}),
    (BIN + "pcp-ps", ["-e"], {"PCP_ARCHIVE": LINUX}),
    (BIN + "pcp-ps", ["-e", "-o", "all"], {"PCP_ARCHIVE": LINUX}),
    (BIN + "pcp-free", ["-m"], {"PCP_ARCHIVE": LINUX}),
    (BIN + "pcp-uptime", [], {"PCP_ARCHIVE": LINUX}),
    ("/usr/bin/pmrep", ["-a", LINUX, "-u", "-o", "csv", "disk.dev.read", "mem.util.used",
                        "kernel.percpu.cpu.user"], {}),
    ("/usr/bin/pmrep", ["-a", EXTRA, "-u", "sensor"], {}),
    ("/usr/bin/pmrep", ["-a", EXTRA, "-u", "-o", "csv", "-U", "sensor.temp", "sensor.energy",
                        "sensor.volts"], {}),
    ("/usr/bin/pmrep", ["-a", EXTRA, "-u", "-r", "-x", "sensor"], {}),
    ("/usr/bin/pmrep", ["-a", EXTRA, "-u", "-z", "sensor.temp,,,temperature (F)",
                        "sensor.volts,,,voltage (V)"], {}),
    ("/usr/bin/pmrep", ["-a", EXTRA, "-u", "sensor.temp,,,temperature (K)",
                        "sensor.energy,,,power (W) sec"], {}),
    ("/usr/bin/pmrep", ["-a", EXTRA, "-u", "sensor.energy,,,power (W)"], {}),
    ("/usr/bin/pcp2csv", ["-a", EXTRA, "-u", "sensor"], {}),
    (BIN + "pcp-uptime", [], {"PCP_ARCHIVE": QA + "pcp-free"}),
    (BIN + "pcp-free", [], {"PCP_ARCHIVE": QA + "pcp-free"}),
    (BIN + "pcp-free", ["-m", "-t", "-c", "2"], {"PCP_ARCHIVE": QA + "pcp-free"}),
]
#: The runs of each level: 6.3 has no extra units
RUNS_OF = {(7, 2): RUNS, (6, 3): [run for run in RUNS if EXTRA not in run[1]]}


DRIVER = r'''
import json, os, subprocess, sys
python, prefix, runs, common = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
answers = []
for path, argv, extra in runs:
    env = dict(common)
    env.update(extra)
    proc = subprocess.run([python, prefix + path] + argv, env=env, capture_output=True,
                          text=True, timeout=120, cwd="/")
    answers.append({"status": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr})
print(json.dumps(answers))
'''

COMMON = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8",
          "HOME": "/root", "TZ": "UTC", "PCP_DERIVED_CONFIG": "", "PYTHONDONTWRITEBYTECODE": "1"}


def _run_side(level, ours: bool, linux: str, extra: str):
    root = roots.root_dir(level)
    runs = json.dumps(RUNS_OF[level]).replace(LINUX, linux).replace(EXTRA, extra)
    if ours:
        env = dict(COMMON, PCP_NATIVE_API_LEVEL=roots.level_text(level),
                   PCP_SYSCONF_DIR=os.path.join(root, "etc/pcp"))
        argv = [roots.difftest.OUR_PYTHON, "-c", DRIVER, roots.difftest.OUR_PYTHON, root,
                runs, json.dumps(env)]
        import subprocess  # pylint: disable=import-outside-toplevel
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False)
        return json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 \
            else {"__crash__": proc.stderr[-3000:]}
    code = "import sys\nsys.argv = %r\n" % ["driver", "/usr/bin/python3", "", runs,
                                             json.dumps(COMMON)] + DRIVER
    return roots.run_reference(level, code, timeout=900)


_OUTPUTS = {}


def _archives(level):
    """(the Linux recording, the extra units' archive (7.2 only)): their base names, the
    same on the host and in the level's root (a scratch folder of the root, which a symbolic
    link of the same name shows on the host), and what removes them."""
    roots.require_level(level)
    root = roots.root_dir(level)
    source = tool_archive.linux_archive()
    folder = tempfile.mkdtemp(prefix="pcp-native-tools72-", dir=os.path.join(root, "tmp"))
    in_root = "/tmp/" + os.path.basename(folder)
    for name in glob.glob(source + ".*"):
        shutil.copy(name, folder)
    os.symlink(folder, in_root)
    if level >= (7, 2):
        written = roots.run_reference(level, "import sys\nsys.argv = ['w', %r]\n" % (
            os.path.join(in_root, "extra"),) + EXTRA_WRITER)
        assert written == "ok", written

    def remove():
        os.unlink(in_root)
        shutil.rmtree(folder, ignore_errors=True)
    return (os.path.join(in_root, os.path.basename(source)), os.path.join(in_root, "extra")), remove


def _outputs(level):
    """Both sides' answers for every run of level, made once per level."""
    if level not in _OUTPUTS:
        from concurrent.futures import ThreadPoolExecutor  # pylint: disable=import-outside-toplevel
        archives, remove = _archives(level)
        try:
            with ThreadPoolExecutor(max_workers=2) as pool:
                ref = pool.submit(_run_side, level, False, *archives)
                ours = pool.submit(_run_side, level, True, *archives)
                _OUTPUTS[level] = {"ref": ref.result(), "ours": ours.result()}
        finally:
            remove()
    out = _OUTPUTS[level]
    assert isinstance(out["ref"], list), out["ref"]
    assert isinstance(out["ours"], list), out["ours"]
    return out


def _id(run):
    path, argv, extra = run
    return " ".join([os.path.basename(path)] + [os.path.basename(a) for a in argv]
                    + ["%s=%s" % (k, os.path.basename(v)) for k, v in extra.items()])


@pytest.mark.parametrize("level,index", [(level, i) for level in LEVELS
                                          for i in range(len(RUNS_OF[level]))],
                         ids=["%s-%s" % (roots.level_text(level), _id(run)) for level in LEVELS
                              for run in RUNS_OF[level]])
def test_tool_prints_what_its_version_prints(level, index):
    outputs = _outputs(level)
    ref, ours = outputs["ref"][index], outputs["ours"][index]
    what = _id(RUNS_OF[level][index])
    assert ours["status"] == ref["status"], (what, ours["stderr"], ref["stderr"])
    assert tool_archive.masked(ours["stderr"]) == tool_archive.masked(ref["stderr"]), what
    assert ours["stdout"] == ref["stdout"], what
    assert ref["stdout"] or ref["stderr"], "%s printed nothing: the comparison shows little" % what
