"""Paths that are not (whole) archives, made by the test itself, and the runner that
hands them to both bindings through not_archive_reader.py.

The QA-archive sweep (test_archive_sweep.py) feeds PCP's archives, good and bad; this
corpus feeds what a user types instead of an archive: names that do not exist,
directories with no archive in them, single files of an archive, truncated files,
symbolic links that lead nowhere or round in a loop, files and directories the user may
not read, FIFOs and devices, comma lists with one bad member, a directory mixing hosts,
names with spaces and with bytes that are not UTF-8.

Each case is built under a scratch directory from two small archives of the QA suite
(ok-foo, host gonzo; 20071023-08-06-36, another host) and named by an id. A case marked
``nonroot`` is read by both bindings as the user nobody (the tests run as root, who
reads every file whatever its mode), so its directory must be reachable by nobody.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from typing import Dict, List, NamedTuple, Optional, Sequence, Union

from support import difftest

HERE = os.path.dirname(os.path.abspath(__file__))
READER = os.path.join(HERE, "not_archive_reader.py")
TESTSUITE = os.environ.get("PCP_TESTSUITE_DIR", "/var/lib/pcp/testsuite")
GOOD = os.path.join(TESTSUITE, "archives", "ok-foo")               # host gonzo, 1 volume
MULTI = os.path.join(TESTSUITE, "archives", "ok-mv-foo")           # host gonzo, 3 volumes
OTHER_HOST = os.path.join(TESTSUITE, "archives", "20071023-08-06-36")
# the user the mode-000 cases run as, on both sides
NONROOT = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
# a reader stuck this long on one case (libpcp opening a FIFO waits for a writer) is
# interrupted by the reader's alarm and the case imaged as {"blocked": true}
CASE_SECONDS = 1


def as_user(nonroot: bool) -> List[str]:
    """The argv prefix that runs a command as nobody for a `nonroot` case: setpriv when
    the tests run as root, nothing when they already run as an ordinary user."""
    return NONROOT if nonroot and os.geteuid() == 0 else []


class Case(NamedTuple):
    id: str
    target: Union[str, bytes]
    nonroot: bool = False


def available() -> bool:
    return all(os.path.exists(a + ".meta") for a in (GOOD, MULTI, OTHER_HOST))


def _copy(archive: str, directory: str, base: Optional[str] = None,
          parts: Sequence[str] = ("meta", "index", "0")) -> str:
    """Copy the named files of `archive` into `directory` as `base`.*; the new base."""
    os.makedirs(directory, exist_ok=True)
    base = base or os.path.basename(archive)
    for part in parts:
        shutil.copyfile("%s.%s" % (archive, part), os.path.join(directory, "%s.%s" % (base, part)))
    return os.path.join(directory, base)


def _truncate(path: str, size: int) -> None:
    with open(path, "r+b") as f:
        f.truncate(size)


def build(root: str) -> List[Case]:
    """Make every case under `root` (which must be reachable by nobody); the cases."""
    cases: List[Case] = []

    def add(case_id: str, target: Union[str, bytes], nonroot: bool = False) -> None:
        cases.append(Case(case_id, target, nonroot))

    def where(name: str) -> str:
        return os.path.join(root, name)

    # names that do not exist, and names of things that are no archive
    add("nonexistent", where("nope"))
    add("nonexistent-dir", where("nodir/nope"))
    add("nonexistent-meta", where("nope.meta"))
    add("nonexistent-volume", where("nope.0"))
    add("empty-string", "")
    os.mkdir(where("empty"))
    add("empty-dir", where("empty"))
    add("empty-dir-slash", where("empty") + "/")
    os.mkdir(where("foreign"))
    with open(where("foreign/readme.txt"), "w") as f:
        f.write("not an archive\n")
    add("foreign-dir", where("foreign"))
    add("foreign-file-in-dir", where("foreign/readme.txt"))
    add("plain-file", where("foreign/readme.txt"))
    with open(where("plain"), "w") as f:
        f.write("plain\n")
    add("plain-file-no-dot", where("plain"))
    with open(where("fake.meta"), "w") as f:
        f.write("this is not metadata\n")
    add("fake-meta-alone", where("fake"))
    add("tmp", "/tmp")
    add("proc-self", "/proc/self")
    add("root", "/")
    add("dev-null", "/dev/null")

    # one file of an archive alone, or two of the three
    for parts in (("meta",), ("index",), ("0",), ("meta", "index"), ("index", "0"),
                  ("meta", "0")):
        tag = "+".join(parts)
        base = _copy(GOOD, where("only-" + tag), parts=parts)
        add("only-%s" % tag, base)
        add("only-%s-by-file" % tag, "%s.%s" % (base, parts[0]))
        add("only-%s-dir" % tag, os.path.dirname(base))
    # a .meta that is a directory, a volume that is a directory
    base = _copy(GOOD, where("meta-is-dir"), parts=("index", "0"))
    os.mkdir(base + ".meta")
    add("meta-is-dir", base)
    base = _copy(GOOD, where("volume-is-dir"), parts=("meta", "index"))
    os.mkdir(base + ".0")
    add("volume-is-dir", base)
    # multi-volume archives with a volume missing
    for missing in ("0", "1", "2"):
        kept = [p for p in ("meta", "index", "0", "1", "2") if p != missing]
        add("multi-without-%s" % missing, _copy(MULTI, where("mv-no" + missing), parts=kept))

    # truncated files: empty, inside the label, just after the label, inside a record
    for part, sizes in (("0", (0, 3, 100, 132, 200, 1000)), ("meta", (0, 3, 100, 132, 300)),
                        ("index", (0, 3, 100, 132, 150))):
        for size in sizes:
            base = _copy(GOOD, where("trunc-%s-%d" % (part, size)))
            _truncate("%s.%s" % (base, part), size)
            add("truncated-%s-%d" % (part, size), base)

    # symbolic links
    os.symlink(where("nowhere"), where("dangling"))
    add("dangling-symlink", where("dangling"))
    os.symlink(where("nowhere.meta"), where("dangling2.meta"))
    add("dangling-symlink-meta-name", where("dangling2"))
    base = _copy(GOOD, where("dangling-volume"), parts=("meta", "index"))
    os.symlink(where("nowhere.0"), base + ".0")
    add("dangling-volume", base)
    base = _copy(GOOD, where("dangling-meta"), parts=("index", "0"))
    os.symlink(where("nowhere.meta"), base + ".meta")
    add("dangling-meta", base)
    os.symlink(where("loop"), where("loop"))
    add("symlink-loop", where("loop"))
    os.mkdir(where("loopdir"))
    os.symlink("a.meta", where("loopdir/a.meta"))
    add("symlink-loop-meta-alone", where("loopdir/a"))
    for part in ("meta", "index", "0"):
        parts = [p for p in ("meta", "index", "0") if p != part]
        base = _copy(GOOD, where("loop-" + part), parts=parts)
        os.symlink(os.path.basename(base) + "." + part, base + "." + part)
        add("symlink-loop-%s" % part, base)
    os.symlink(where("loopy/x"), where("loopy"))
    add("symlink-loop-as-dir", where("loopy/x"))
    os.symlink(os.path.dirname(GOOD), where("qa-link"))
    add("symlink-to-qa-archive", os.path.join(where("qa-link"), "ok-foo"))

    # files and directories nobody may read (read as nobody)
    for part in ("meta", "index", "0"):
        base = _copy(GOOD, where("unreadable-" + part))
        os.chmod("%s.%s" % (base, part), 0)
        add("unreadable-%s" % part, base, nonroot=True)
        add("unreadable-%s-as-root" % part, base)
    base = _copy(GOOD, where("closed/inner"))
    os.chmod(where("closed/inner"), 0)
    add("unreadable-dir-archive", base, nonroot=True)
    add("unreadable-dir", where("closed/inner"), nonroot=True)
    base = _copy(GOOD, where("noexec/inner"))
    os.chmod(where("noexec/inner"), stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    add("unsearchable-dir-archive", base, nonroot=True)
    add("unsearchable-dir", where("noexec/inner"), nonroot=True)
    add("readable-as-nobody", _copy(GOOD, where("open")), nonroot=True)

    # FIFOs and devices in an archive's place
    os.mkfifo(where("fifo"))
    add("fifo-name", where("fifo"))
    for part in ("meta", "index", "0"):
        parts = [p for p in ("meta", "index", "0") if p != part]
        base = _copy(GOOD, where("fifo-" + part), parts=parts)
        os.mkfifo(base + "." + part)
        add("fifo-%s" % part, base)
        base = _copy(GOOD, where("null-" + part), parts=parts)
        os.symlink("/dev/null", base + "." + part)
        add("dev-null-%s" % part, base)
        base = _copy(GOOD, where("zero-" + part), parts=parts)
        os.symlink("/dev/zero", base + "." + part)
        add("dev-zero-%s" % part, base)

    # comma lists with one bad member; a directory and a list mixing hosts
    good = _copy(GOOD, where("good"))
    other = _copy(OTHER_HOST, where("other"))
    add("list-good-nonexistent", good + "," + where("nope"))
    add("list-nonexistent-good", where("nope") + "," + good)
    add("list-good-empty-dir", good + "," + where("empty"))
    add("list-empty-dir-good", where("empty") + "," + good)
    add("list-empty-dirs", where("empty") + "," + where("foreign"))
    add("list-good-truncated", good + "," + where("trunc-0-0/ok-foo"))
    add("list-good-only-meta", good + "," + where("only-meta/ok-foo"))
    add("list-trailing-comma", good + ",")
    add("list-leading-comma", "," + good)
    add("list-double-comma", good + ",," + good)
    add("list-comma-only", ",")
    add("list-same-twice", good + "," + good)
    add("list-mixed-hosts", good + "," + other)
    _copy(GOOD, where("mixed"))
    _copy(OTHER_HOST, where("mixed"))
    add("dir-mixed-hosts", where("mixed"))
    _copy(GOOD, where("dir-good-junk"))
    with open(where("dir-good-junk/junk.meta"), "w") as f:
        f.write("junk\n")
    add("dir-good-and-junk-meta", where("dir-good-junk"))
    _copy(GOOD, where("dir-meta-only"), parts=("meta",))
    add("dir-with-meta-only", where("dir-meta-only"))

    # names with spaces and with bytes that are not UTF-8
    add("spaces-good", _copy(GOOD, where("with space"), base="an archive"))
    add("spaces-nonexistent", where("with space/no archive"))
    os.mkdir(where("empty space"))
    add("spaces-empty-dir", where("empty space"))
    raw_dir = os.fsencode(root) + b"/raw\xff\xfedir"
    os.mkdir(raw_dir)
    for part in ("meta", "index", "0"):
        shutil.copyfile("%s.%s" % (GOOD, part), raw_dir + b"/arc\xe9." + part.encode())
    add("non-utf8-good-bytes", raw_dir + b"/arc\xe9")
    add("non-utf8-dir-bytes", raw_dir)
    add("non-utf8-nonexistent-bytes", raw_dir + b"/nope\xff")
    add("non-utf8-good-str", os.fsdecode(raw_dir + b"/arc\xe9"))
    add("utf8-name-nonexistent", where("ärchive"))
    return cases


def encode_target(target: Union[str, bytes]) -> object:
    """A case's target as JSON: a str as itself, bytes as {"bytes": hex}."""
    if isinstance(target, bytes):
        return {"bytes": target.hex()}
    return {"str": target}


def run_side(cases: Sequence[Case], root: str, reference: bool, calls: Sequence[str],
             timeout: float = 300) -> Dict[str, dict]:
    """Read `cases` (built under `root`, the readers' working directory) through one
    binding, in one process for the cases read as root and one for those read as nobody;
    {case id: {call: image}}. A reader that dies (libpcp does on some paths) is pinned to
    the case it was on, imaged {"died": signal or status}, and the rest goes on in a new
    process."""
    python = difftest.REF_PYTHON if reference else difftest.OUR_PYTHON
    out: Dict[str, dict] = {}
    for nonroot in (False, True):
        todo = [c for c in cases if c.nonroot == nonroot]
        while todo:
            request = json.dumps({"calls": list(calls), "seconds": CASE_SECONDS,
                                  "cases": [[c.id, encode_target(c.target)] for c in todo]})
            argv = as_user(nonroot) + [python, READER]
            proc = subprocess.run(argv, input=request, capture_output=True, text=True,
                                  errors="replace", env=difftest._env(not reference),
                                  cwd=root, timeout=timeout)
            current = None
            for line in proc.stdout.splitlines():
                if line.startswith("BEGIN "):
                    current = line[6:]
                elif line.startswith("{"):
                    got = json.loads(line)
                    out[got["id"]] = got["images"]
                    current = None
            if current is None:
                if proc.returncode != 0 or any(c.id not in out for c in todo):
                    raise AssertionError("%s reader failed (status %d):\n%s" % (
                        "reference" if reference else "our", proc.returncode,
                        proc.stderr[-3000:]))
                break
            out[current] = {"died": proc.returncode}
            ids = [c.id for c in todo]
            todo = todo[ids.index(current) + 1:]
    return out
