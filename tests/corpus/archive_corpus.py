"""PCP's QA archives (package pcp-testsuite) and the runner that reads them through both
bindings with sweep_reader.py.

The corpus is every archive the package installs under $PCP_VAR_DIR/testsuite: each
archive of archives/ and badarchives/ (named by its base, compressed volumes too) and
each directory of archives there (read as one multi-archive context)."""

import json
import os
import re
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, NamedTuple, Optional, Sequence

from support import difftest

HERE = os.path.dirname(os.path.abspath(__file__))
READER = os.path.join(HERE, "sweep_reader.py")
TESTSUITE = os.environ.get("PCP_TESTSUITE_DIR", "/var/lib/pcp/testsuite")
_META = re.compile(r"^(.*)\.meta(\.(xz|gz|bz2|lzma|zst))?$")
# one reader process may take this long over its share before it is called hung
SHARD_TIMEOUT = float(os.environ.get("PCP_SWEEP_TIMEOUT", "900"))


def archives(root: str = TESTSUITE) -> List[str]:
    """Every archive base name and archive directory under archives/ and badarchives/,
    sorted; empty when the test suite is not installed."""
    found = set()
    for sub in ("archives", "badarchives"):
        top = os.path.join(root, sub)
        if not os.path.isdir(top):
            continue
        for name in os.listdir(top):
            path = os.path.join(top, name)
            if os.path.isdir(path):
                if any(_META.match(f) for f in os.listdir(path)):
                    found.add(path)
                continue
            m = _META.match(name)
            if m:
                found.add(os.path.join(top, m.group(1)))
    return sorted(found)


def name_of(path: str, root: str = TESTSUITE) -> str:
    """An archive's name relative to the test suite (archives/foo, badarchives/bar)."""
    return os.path.relpath(path, root)


def _size(path: str) -> int:
    base = os.path.dirname(path) if not os.path.isdir(path) else path
    stem = os.path.basename(path) + "." if not os.path.isdir(path) else ""
    total = 0
    for f in os.listdir(base):
        if f.startswith(stem):
            try:
                total += os.path.getsize(os.path.join(base, f))
            except OSError:
                pass
    return total


class Side(NamedTuple):
    """How one side of a sweep runs a reader: `argv` (the archives are appended), its
    environment, and the reader's text for stdin when argv reads it from there (a root's
    python3 under chroot, which cannot see this checkout)."""
    argv: List[str]
    env: Dict[str, str]
    stdin: Optional[str] = None


def binding(python: str, reference: bool, reader: str = READER) -> Side:
    """A reader run on the host: the official binding (reference) or this package."""
    return Side([python, reader], difftest._env(not reference))


def sample(keep: Sequence[str], max_bytes: int, nth: int) -> List[str]:
    """A quick sample of the corpus: the archives named in `keep` and every `nth` of
    those smaller than `max_bytes`, in corpus order."""
    every = archives()
    small = [a for a in every if _size(a) < max_bytes]
    return [a for a in every if name_of(a) in keep or
            (a in small and small.index(a) % nth == 0)]


def sweep_at_level(level, paths: Sequence[str], reader: str, env: Dict[str, str]
                   ) -> Dict[str, Dict[str, dict]]:
    """sweep() of a reader at an API level with a root (6.3, 7.2), once the root and its
    decompressors are there (levelref's checks: a failure under $CI, else a skip): the
    reference is the root's python3 with the reader on its stdin (the root cannot see
    this checkout), ours this package's interpreter at that level; `env` on both."""
    from support import levelref  # pylint: disable=import-outside-toplevel

    levelref.require(level)
    levelref.require_decompressors(level)
    with open(reader, encoding="utf-8") as stream:
        program = stream.read()
    sides = {"reference": Side(levelref.reference_argv(level, env) + ["-"], {}, program),
             "ours": Side([difftest.OUR_PYTHON, reader], levelref.our_env(level, env))}
    return sweep(paths, sides=sides)


def _run_shard(side: Side, paths: Sequence[str], out: Dict[str, dict]) -> None:
    """Read `paths` in one process into out[archive] = {"image": the JSON text, "close":
    "ok"}. A process that dies (libpcp does on some archives) is pinned to the archive
    it was on: while reading it, "crash" says how it died; while destroying its context,
    "close" does. The rest of the share goes on in a new process."""
    todo = list(paths)
    while todo:
        p = subprocess.run(side.argv + todo, input=side.stdin, capture_output=True,
                           text=True, errors="replace", env=side.env,
                           cwd=difftest._cwd(), timeout=SHARD_TIMEOUT)
        current = None
        for line in p.stdout.splitlines():
            if line.startswith("BEGIN "):
                current = line[6:]
                out[current] = {}
            elif line.startswith("{"):
                out[current]["image"] = line
            elif line.startswith("CLOSED "):
                out[current]["close"] = "ok"
                current = None
        if current is None:
            if p.returncode != 0:
                raise RuntimeError("sweep reader %s failed between archives (rc %d): %s"
                                   % (side.argv[0], p.returncode, p.stderr[-2000:]))
            break
        died = _crash(p)
        if "image" in out[current]:
            out[current]["close"] = died
        else:
            out[current]["crash"] = died
        todo = todo[todo.index(current) + 1:]


def _crash(p: subprocess.CompletedProcess) -> dict:
    tail = [line for line in p.stderr.splitlines() if line.strip()][-2:]
    return {"crash": p.returncode, "stderr": tail}


def outcome(entry: dict) -> dict:
    """One side's reading of an archive as one JSON value: the image's sections, plus
    "close" (how its context closed) and "crash" (how the reader died, if it did)."""
    image = json.loads(entry["image"]) if "image" in entry else {}
    image = dict(image.get("image", {}))
    for key in ("close", "crash"):
        if key in entry:
            image[key] = entry[key]
    return image


def sweep(paths: Sequence[str], our_python: Optional[str] = None, workers: int = 0,
          shard: int = 8, sides: Optional[Dict[str, Side]] = None
          ) -> Dict[str, Dict[str, dict]]:
    """{"reference": {archive: entry}, "ours": {...}} (entries as _run_shard makes
    them): each archive read by both `sides` (default: sweep_reader.py through the
    official binding and through this package), `workers` processes at a time (default:
    one per core), biggest archives first."""
    if sides is None:
        sides = {"reference": binding(difftest.REF_PYTHON, True),
                 "ours": binding(our_python or difftest.OUR_PYTHON, False)}
    workers = workers or os.cpu_count() or 1
    ordered = sorted(paths, key=_size, reverse=True)
    nshards = max(len(ordered) // shard, 1)
    shards = [ordered[i::nshards] for i in range(nshards)]
    results: Dict[str, Dict[str, dict]] = {name: {} for name in sides}
    lock = threading.Lock()

    def task(name: str, share: Sequence[str]) -> None:
        got: Dict[str, dict] = {}
        _run_shard(sides[name], share, got)
        with lock:
            results[name].update(got)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(task, name, share) for share in shards for name in sides]
        for f in futures:
            f.result()
    return results
