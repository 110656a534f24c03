"""An archive of the Linux metrics PCP's own tools report (disks, CPUs, memory, network,
processes), recorded once per test session with pmlogger from the live pmcd, and a runner
that starts an installed tool on the official binding and on this package.

The recording is short (a few seconds at 250 ms) but holds every process of the machine,
so it is made in a temporary directory and removed at exit, never committed. Derived
metrics are kept out of the recording (PCP_DERIVED_CONFIG=""), as pmlogger cannot log
the ones the default configuration defines over metrics that have no values here.
"""
import os
import re
import subprocess
import threading
from typing import List, Optional

from support import difftest, shared

CONFIG = """log mandatory on 250 msec {
  disk kernel mem swap network.interface network.tcp network.udp hinv proc tape
  filesys nfs nfs3 nfs4 vfs ipc pmcd.hostname
}
"""
SAMPLES = 12
TOOL_DIRS = ("/usr/bin", "/usr/lib/pcp/bin", "/usr/libexec/pcp/bin")

_lock = threading.Lock()


def linux_archive() -> str:
    """The base name of the session's Linux archive (recorded on first use, once for
    every worker of the session)."""
    with _lock:
        return shared.build_once("tool-archive", _record)["base"]


def _record(root: str) -> dict:
    base = os.path.join(root, "linux")
    env = dict(os.environ, PCP_DERIVED_CONFIG="")
    with open(base + ".config", "w", encoding="utf-8") as stream:
        stream.write(CONFIG)
    proc = subprocess.run(
        ["pmlogger", "-h", "local:", "-c", base + ".config", "-s", str(SAMPLES),
         "-l", base + ".log", base], capture_output=True, text=True, timeout=120,
        env=env, cwd=root, check=False)
    if proc.returncode != 0 or not os.path.exists(base + ".0"):
        raise RuntimeError("pmlogger failed (%s): %s" % (proc.returncode, proc.stderr))
    return {"base": base}


def tool_path(name: str) -> Optional[str]:
    """Where PCP installed a tool (None: not installed)."""
    for folder in TOOL_DIRS:
        path = os.path.join(folder, name)
        if os.path.exists(path):
            return path
    return None


def run_tool(path: str, argv: List[str], ours: bool, env: Optional[dict] = None,
             timeout: float = 300) -> dict:
    """Run an installed Python tool as `python TOOL ARGV...` on one side: its exit
    status, stdout and stderr."""
    full = difftest._env(ours)
    full.update(env or {})
    python = difftest.OUR_PYTHON if ours else difftest.REF_PYTHON
    proc = subprocess.run([python, path] + list(argv), cwd=difftest._cwd(), env=full,
                          capture_output=True, text=True, timeout=timeout, check=False)
    return {"status": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}


_ADDRESS = re.compile(r" at 0x[0-9a-f]+>")


def masked(text: str) -> str:
    """A tool's stderr with what two implementations cannot share masked: Python object
    addresses (repr() of a ctypes array in an error message), and a traceback's frames
    (the files and lines of each binding's own code) down to the exception it ends with,
    which must be the same."""
    text = _ADDRESS.sub(" at 0x...>", text)
    head, sep, tail = text.partition("Traceback (most recent call last):\n")
    if not sep:
        return text
    last = [line for line in tail.splitlines() if line and not line.startswith(" ")]
    return head + sep + "  ...\n" + "\n".join(last) + "\n"
