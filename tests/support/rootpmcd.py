"""A pmcd of a reference root's own PCP (7.2.2 in sid), private to a test: its own port,
run folder, configuration (pmcd's own metrics, the sample and linux PMDAs) and PMNS, all in
a scratch folder inside the root; the machine's pmcd is not touched.

The root's pmlogger and pmlogextract record archives from it (`record`), so a test reads
archives that PCP 7.2.2 wrote, as well as fetching from its pmcd. start() can give it TLS
(certificates copied into the scratch folder, named by its own tls.conf, PCP_TLSCONF_PATH),
SASL (its own SASL configuration folder, PCP_SASL2_CONFIG_PATH, with the sasldb copied in)
and more command-line options (`-Q`, `-S`).
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Dict, List, Optional, Sequence

from . import roots
from .securepmcd import free_port

_PMDAS = "/var/lib/pcp/pmdas"
_CONFIG = ("pmcd\t2\tdso\tpmcd_init\t{p}/pmcd/pmda_pmcd.so\n"
           "sample\t29\tpipe\tbinary\t{p}/sample/pmdasample -d 29\n"
           "linux\t60\tpipe\tbinary\t{p}/linux/pmdalinux\n").format(p=_PMDAS)


class RootPmcd:
    """pmcd of the root of `level`, started by start(), on 127.0.0.1:port."""

    def __init__(self, level) -> None:
        self.root = roots.root_dir(level)
        self.on_host = tempfile.mkdtemp(prefix="pcp-native-pmcd-", dir=os.path.join(self.root, "tmp"))
        self.in_root = "/tmp/" + os.path.basename(self.on_host)
        self.port = 0
        self._proc: Optional[subprocess.Popen] = None

    def _argv(self, *argv: str, **env: str) -> List[str]:
        base = {"PATH": "/usr/bin:/bin:/usr/lib/pcp/bin", "LC_ALL": "C.UTF-8", "TZ": "UTC",
                "PCP_RUN_DIR": self.in_root, "PCP_PMCDCONF_PATH": self.in_root + "/pmcd.conf",
                "PCP_TLSCONF_PATH": self.in_root + "/tls.conf",
                "PCP_SASL2_CONFIG_PATH": self.in_root + "/sasl", "HOME": "/root"}
        base.update(env)
        return (["chroot", self.root, "/usr/bin/env", "-i"] +
                ["%s=%s" % item for item in sorted(base.items())] + list(argv))

    def _run(self, *argv: str) -> None:
        proc = subprocess.run(self._argv(*argv), capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError("%s: %s %s" % (argv[0], proc.stdout[-1500:], proc.stderr[-1500:]))

    def start(self, tls: Optional[Dict[str, str]] = None, args: Sequence[str] = (),
              sasl: Optional[Dict[str, str]] = None) -> "RootPmcd":
        """Start pmcd; tls maps tls.conf's keys to files on the host (copied into the root,
        see write_tlsconf) or to plain values; sasl likewise the keys of pmcd's SASL
        configuration (mech_list, sasldb_path); args: more pmcd options."""
        with open(os.path.join(self.on_host, "pmcd.conf"), "w") as f:
            f.write(_CONFIG)
        self.write_tlsconf("tls.conf", tls or {})
        # cyrus reads <application>.conf, pmcd's being pmcd.conf, from its own folder
        os.mkdir(os.path.join(self.on_host, "sasl"))
        self._write_settings("sasl/pmcd.conf", sasl or {}, ": ")
        # the default PMNS with the sample PMDA's names added (pmcd loads a PMNS file)
        self._run("/usr/lib/pcp/bin/pmnsmerge", "/var/lib/pcp/pmns/root",
                  _PMDAS + "/sample/root", self.in_root + "/root")
        self.port = free_port()
        self._proc = subprocess.Popen(
            self._argv(self._private_pmcd(), "-f", "-A", "-i", "127.0.0.1", "-p", str(self.port),
                       "-s", self.in_root + "/pmcd.socket", "-c", self.in_root + "/pmcd.conf",
                       "-l", self.in_root + "/pmcd.log", "-n", self.in_root + "/root", "-U", "root",
                       *args),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError("the root's pmcd exited: %s" % self.log()[-2000:])
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.settimeout(2)
                    if len(s.recv(20)) == 20:           # pmcd's greeting
                        return self
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("the root's pmcd did not start: %s" % self.log()[-2000:])

    def write_tlsconf(self, name: str, settings: Dict[str, str]) -> str:
        """A tls.conf `name` in the scratch folder; a value that is a file on the host is
        copied there and named by its path inside the root. Its path inside the root."""
        return self._write_settings(name, settings, " = ")

    def _write_settings(self, name: str, settings: Dict[str, str], separator: str) -> str:
        """The file `name` of `key<separator>value` lines in the scratch folder, host files
        copied as write_tlsconf says; its path inside the root."""
        lines = []
        for key, value in settings.items():
            if os.path.isfile(value):
                shutil.copy(value, self.on_host)
                value = "%s/%s" % (self.in_root, os.path.basename(value))
            lines.append("%s%s%s\n" % (key, separator, value))
        with open(os.path.join(self.on_host, name), "w") as f:
            f.writelines(lines)
        return "%s/%s" % (self.in_root, name)

    def _private_pmcd(self) -> str:
        # started through a link of its own, so that /etc/init.d/pmcd on the host does not
        # take it for the machine's pmcd (support/pmcdpath.py); the path inside the root
        os.symlink("/usr/lib/pcp/bin/pmcd", os.path.join(self.on_host, "pmcd"))
        return self.in_root + "/pmcd"

    @property
    def host(self) -> str:
        return "127.0.0.1:%d" % self.port

    def log(self) -> str:
        try:
            with open(os.path.join(self.on_host, "pmcd.log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def record(self, name: str, config: str, samples: int, interval: str) -> str:
        """An archive written by the root's pmlogger from this pmcd; its base name inside the
        root (the same file is on the host under on_host)."""
        with open(os.path.join(self.on_host, name + ".config"), "w") as f:
            f.write(config)
        self._run("/usr/lib/pcp/bin/pmlogger", "-h", self.host, "-c",
                  "%s/%s.config" % (self.in_root, name), "-s", str(samples), "-t", interval,
                  "-l", "%s/%s.log" % (self.in_root, name), "%s/%s" % (self.in_root, name))
        return "%s/%s" % (self.in_root, name)

    def extract(self, source: str, name: str, *args: str) -> str:
        """pmlogextract -V 3 of an archive inside the root (args: its other options)."""
        self._run("/usr/bin/pmlogextract", "-V", "3", *args, source, "%s/%s" % (self.in_root, name))
        return "%s/%s" % (self.in_root, name)

    def host_path(self, in_root_path: str) -> str:
        return self.root + in_root_path

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        shutil.rmtree(self.on_host, ignore_errors=True)
