"""A private pmcd running one PCP Python PMDA under a chosen interpreter (the official
binding's /usr/bin/python3, or a python with this package), its own port, pmcd.conf,
PMNS with a dynamic root for the PMDA, log, run, PMDA and var directories."""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

from support.pmcdpath import private_pmcd

PMCD = "/usr/lib/pcp/bin/pmcd"
PMDAS = Path("/var/lib/pcp/pmdas")
OURS = sys.executable
OFFICIAL = "/usr/bin/python3"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _asan_runtime() -> str:
    """The sanitizer runtime .ci/sanitize.sh preloads (tests/conftest.py keeps it in
    PCP_TEST_ASAN_PRELOAD), or ''."""
    return os.environ.get("PCP_TEST_ASAN_PRELOAD") or os.environ.get("LD_PRELOAD") or ""


def _our_env() -> Dict[str, str]:
    """PYTHONPATH so the PMDA's python imports this checkout's pcp, cpmapi and cpmda."""
    root = str(Path(__file__).resolve().parents[2])
    inherited = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": root + (os.pathsep + inherited if inherited else "")}


class PrivatePmcd:
    """pmcd -f on a free port with one PMDA, started and stopped by its process id."""

    def __init__(self, base: Path, pmda: str, domain: int, interpreter: str,
                 files: Optional[Dict[str, str]] = None, source: Optional[Path] = None,
                 env: Optional[Dict[str, str]] = None, ipc: str = "binary",
                 args: str = "", connect: Optional[str] = None) -> None:
        """connect: pmcd.conf's "socket inet PORT" or "socket unix PATH" in place of
        "pipe binary" (ipc)."""
        self.base = base
        self.pmda = pmda
        self.domain = domain
        self.port = free_port()
        base.mkdir(parents=True, exist_ok=True)
        self.pmdadir = base / "pmdas" / pmda
        self.pmdadir.mkdir(parents=True, exist_ok=True)
        script = "pmda%s.python" % pmda
        local = Path(__file__).resolve().parent / "pmdas" / script
        if source is None:
            source = local if local.exists() else PMDAS / pmda / script
        shutil.copy(source, self.pmdadir / script)
        for name, text in (files or {}).items():
            (self.pmdadir / name).write_text(text)
        self.script = self.pmdadir / script
        self.interpreter = interpreter
        (base / "var" / "config" / "pmda").mkdir(parents=True, exist_ok=True)
        command = "%s %s%s" % (interpreter, self.pmdadir / script, " " + args if args else "")
        if interpreter != OFFICIAL and _asan_runtime():
            # under .ci/sanitize.sh: the sanitizer runtime for this package's PMDA only,
            # never for pmcd or the official binding
            sanitizer = " ".join(["LD_PRELOAD=" + _asan_runtime()] +
                                 ["%s=%s" % (k, os.environ[k]) for k in
                                  ("ASAN_OPTIONS", "UBSAN_OPTIONS", "PYTHONMALLOC")
                                  if os.environ.get(k)])
            command = "/usr/bin/env %s %s" % (sanitizer, command)
        (base / "pmcd.conf").write_text("%s\t%d\t%s\t\t%s\n"
                                        % (pmda, domain, connect or "pipe\t" + ipc, command))
        (base / "root").write_text("root {\n\t%s\t%d:*:*\n}\n" % (pmda, domain))
        self.env = dict(os.environ, PCP_RUN_DIR=str(base), PCP_LOG_DIR=str(base / "log"),
                        PCP_PMDAS_DIR=str(base / "pmdas"), PCP_VAR_DIR=str(base / "var"),
                        PCP_USER="root", PCP_GROUP="root",
                        PCP_PMCDCONF_PATH=str(base / "pmcd.conf"))
        # the official binding's interpreter must not see this package (.ci/sanitize.sh
        # points PYTHONPATH at its sanitized copy); ours finds it through PYTHONPATH
        self.env.pop("PYTHONPATH", None)
        if interpreter != OFFICIAL:
            self.env.update(_our_env())
        for key, value in (env or {}).items():
            if key == "PYTHONPATH" and self.env.get("PYTHONPATH"):
                value = self.env["PYTHONPATH"] + os.pathsep + value
            self.env[key] = value
        # the sanitizer runtime must not reach pmcd or the official interpreter
        self.env.pop("LD_PRELOAD", None)
        self.proc: Optional[subprocess.Popen] = None

    def install_steps(self) -> Dict[str, str]:
        """What the PMDA's Install (pmdaproc.sh) has the PMDA and newhelp write: domain.h
        and the PMNS from the PMDA itself, the help files from PCP's help source."""
        out = {}
        for var, value, name in (("PCP_PYTHON_DOMAIN", "1", "domain.h.python"),
                                 ("PCP_PYTHON_PMNS", "root", "pmns.python")):
            env = dict(self.env, **{var: value})
            if self.interpreter != OFFICIAL and _asan_runtime():
                env["LD_PRELOAD"] = _asan_runtime()
            done = subprocess.run([self.interpreter, str(self.script)], env=env,
                                  cwd=str(self.pmdadir), capture_output=True, text=True,
                                  timeout=60)
            out[name] = "\n".join(masked_log(done.stdout + done.stderr))
            (self.pmdadir / name).write_text(done.stdout)
        source = PMDAS / self.pmda
        if (source / "help").exists():
            for name in ("help", "root", "pmns", "domain.h"):
                if (source / name).exists():
                    shutil.copy(source / name, self.pmdadir / name)
            symbol = self.pmda.upper()
            text = re.sub(r"^@ %s\." % symbol, "@ %d." % self.domain,
                          (source / "help").read_text(), flags=re.M)
            subprocess.run(["/usr/lib/pcp/bin/newhelp", "-n", "root", "-o", "help"],
                           input=text, text=True, cwd=str(self.pmdadir), env=os.environ,
                           capture_output=True, check=True, timeout=60)
        return out

    def start(self) -> None:
        argv = [private_pmcd(self.base), "-f", "-p", str(self.port), "-c", str(self.base / "pmcd.conf"),
                "-n", str(self.base / "root"), "-s", str(self.base / "pmcd.sock"),
                "-l", str(self.base / "pmcd.log"), "-U", "root",
                # a sanitized or busy PMDA may start slowly: the same patience for both
                "-q", "30", "-t", "30"]
        self.proc = subprocess.Popen(argv, cwd=str(self.base), env=self.env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        # ready once pmcd lists the PMDA's names: names and PMIDs only, no fetch, so the
        # PMDA sees the same requests on both bindings however long it took to start
        ready = re.compile(r"PMID: %d\.\d+\.\d+" % self.domain)
        while time.time() < deadline:
            out = self.run(["pminfo", "-m", "%s" % self.pmda], check=False)
            if ready.search(out):
                return
            time.sleep(0.2)
        raise RuntimeError("private pmcd did not come up: %s" % self.log("pmcd.log"))

    def client_env(self) -> Dict[str, str]:
        env = dict(os.environ, PMCD_PORT=str(self.port))
        env.pop("LD_PRELOAD", None)
        env.pop("PYTHONPATH", None)
        return env

    def run(self, argv: List[str], check: bool = True) -> str:
        """A client tool on this pmcd: over TCP, or its unix socket when argv[0] ends
        in "@unix" (pmcd then sends the client's credentials to PMDAs that ask)."""
        host = "localhost"
        if argv[0].endswith("@unix"):
            host = "unix:" + str(self.base / "pmcd.sock")
            argv = [argv[0][:-5]] + argv[1:]
        argv = [argv[0], "-h", host] + argv[1:]
        done = subprocess.run(argv, env=self.client_env(), capture_output=True, text=True,
                              timeout=30)
        if check and done.returncode not in (0, 1):
            raise RuntimeError("%s: %s" % (argv, done.stderr))
        return done.stdout + done.stderr

    def record(self, root: str, pmval_metrics: List[str], samples: int = 3) -> Dict[str, str]:
        """pmval over `samples` samples of each of pmval_metrics, and pmdumplog of a
        pmlogger archive of as many samples of the PMDA's subtree `root`: its
        metadata (descs, indoms, labels, help text) and its values. Times, pmlogger's
        pid and the numbers of values are masked (they move between runs); types and
        instance sets stay."""
        out: Dict[str, str] = {}
        env = self.client_env()
        tmp = self.base / "tmp"
        tmp.mkdir(exist_ok=True)
        env["PCP_TMP_DIR"] = str(tmp)      # pmlogger's control file: not the machine's
        pmval = []
        for metric in pmval_metrics:
            done = subprocess.run(["pmval", "-h", "localhost", "-s", str(samples), "-t", "0.1",
                                   metric], env=env, capture_output=True, text=True,
                                  timeout=60)
            pmval.append(mask_samples(done.stdout + done.stderr))
        out["pmval"] = "\n".join(pmval)
        config = self.base / "pmlogger.config"
        config.write_text("log mandatory on 250 msec {\n\t%s\n}\n" % root)
        archive = self.base / "archive"
        done = subprocess.run(["pmlogger", "-c", str(config), "-s", str(samples),
                               "-h", "localhost", "-l", str(self.base / "pmlogger.log"),
                               str(archive)],
                              env=env, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError("pmlogger: %s %s" % (done.stderr, self.log("pmlogger.log")))
        meta = subprocess.run(["pmdumplog", "-d", "-i", "-e", "-h", str(archive)],
                              env=env, capture_output=True, text=True, timeout=60)
        data = subprocess.run(["pmdumplog", str(archive), root], env=env,
                              capture_output=True, text=True, timeout=60)
        out["logmeta"] = mask_archive(meta.stdout + meta.stderr)
        out["logdata"] = mask_archive(data.stdout + data.stderr, values=True)
        return out

    def log(self, name: str) -> str:
        path = self.base / name
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
            self._wait_for_log_footer()

    def _wait_for_log_footer(self) -> None:
        """The PMDA sees EOF and writes its log's footer last: wait for that however
        loaded the machine is (a fixed pause cut the log short under the sanitizers),
        or until the log has not grown for a second (a PMDA that died writes none)."""
        deadline = time.time() + 20
        last, still_since = None, time.time()
        while time.time() < deadline:
            text = self.log("%s.log" % self.pmda)
            if "\nLog finished" in text:
                return
            if text != last:
                last, still_since = text, time.time()
            elif time.time() - still_since > 1.0:
                return
            time.sleep(0.05)


def masked_log(text: str) -> List[str]:
    """A PMDA log with times, pids and the host masked, line by line."""
    text = re.sub(r"\[\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d\]", "[TIME]", text)
    text = re.sub(r"\(\d+\) ", "(PID) ", text)
    text = re.sub(r" at 0x[0-9a-f]+>", " at ADDR>", text)
    text = re.sub(r"(started|finished) \w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}", r"\1 TIME",
                  text)
    text = re.sub(r"^Log for (\S+) on \S+", r"Log for \1 on HOST", text, flags=re.M)
    lines = text.splitlines()
    # The footer is written at exit, which pmcd's SIGTERM at shutdown may pre-empt on
    # either binding (a race, not a difference): compared only through its shape.
    while lines and (lines[-1] == "" or lines[-1].startswith("Log finished")):
        lines.pop()
    return lines


_TIME = re.compile(r"\d\d:\d\d:\d\d\.\d+")
_NUMBER = r"-?\d+(\.\d+)?(e[-+]?\d+)?"


def mask_samples(text: str) -> str:
    """pmval's output with the numbers of its sample rows masked."""
    lines = []
    for line in text.splitlines():
        if re.fullmatch(r"[\s\d.eE+-]+", line) and re.search(r"\d", line):
            # the numbers, and the widths they are printed in
            line = " ".join(re.sub(_NUMBER, "N", line).split())
        lines.append(_TIME.sub("TIME", line))
    return "\n".join(lines)


def mask_archive(text: str, values: bool = False) -> str:
    """pmdumplog's output with times and pmlogger's pid (its pmcd.pmlogger instance)
    masked, and with values=True every number a value line holds."""
    text = _TIME.sub("TIME", text)
    text = re.sub(r'\b(\d+) or "\1"', 'PID or "PID"', text)
    text = re.sub(r"(commencing|ending) .*", r"\1 DATE", text)
    # a label set's size, whose text (compared) may hold each side's own paths
    text = re.sub(r"labels \(\d+ bytes\)", "labels (SIZE)", text)
    text = re.sub(r"(name|value)\(\d+,\d+\)", r"\1(OFFSET,LENGTH)", text)
    if values:
        text = re.sub(r"(value )" + _NUMBER, r"\1N", text)
    return text


def on_both(session):
    """session(side, interpreter) for the official binding ("ref") and this package
    ("ours") at once, each with its own private pmcd: (ref's result, ours)."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=2) as pool:
        ref = pool.submit(session, "ref", OFFICIAL)
        ours = pool.submit(session, "ours", OURS)
        return ref.result(), ours.result()
