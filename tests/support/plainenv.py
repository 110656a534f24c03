"""An interpreter that sees what a plain ``pip install pcp-native`` gives and nothing more.

A fresh venv (no pip, no system site) whose site-packages holds links to the package
(the ``pcp`` being tested and the top-level modules pyproject installs) and to the
distributions of its declared dependencies, followed through their own Requires-Dist
(cffi brings pycparser); no extra. Links, not an install: nothing is downloaded or built,
and the C core is the one under test (the sanitized build under .ci/sanitize.sh).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib import metadata
from typing import Iterable, List, Set

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOP_LEVEL_MODULES = ("cpmapi.py", "cpmi.py", "cmmv.py", "cpmda.py")


def declared_dependencies() -> List[str]:
    """The distribution names of pyproject's [project] dependencies."""
    with open(os.path.join(REPO, "pyproject.toml")) as f:
        text = f.read()
    block = re.search(r"(?m)^dependencies\s*=\s*\[(.*?)\]", text, re.S)
    assert block, "pyproject.toml has no [project] dependencies"
    return [_name(req) for req in re.findall(r'"([^"]+)"', block.group(1))]


def _name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9._-]+", requirement).group(0)


def _closure(names: Iterable[str]) -> Set[str]:
    """The names and everything they require, markers evaluated loosely: a requirement
    carrying an ``extra ==`` marker is left out, any other kept when it is installed."""
    seen: Set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for req in requires:
            if "extra ==" in req.replace("extra==", "extra =="):
                continue
            dep = _name(req)
            try:
                metadata.distribution(dep)
            except metadata.PackageNotFoundError:
                continue        # a marker that does not apply here
            todo.append(dep)
    return seen


def _top_level_paths(dist_name: str) -> Set[str]:
    dist = metadata.distribution(dist_name)
    paths = set()
    for f in dist.files or ():
        top = f.parts[0]
        if top == ".." or top.endswith(".pth") or top == "__pycache__":
            continue
        paths.add(os.path.join(str(dist.locate_file("")), top))
    return {p for p in paths if os.path.exists(p)}


def make_plain_env(root: str) -> str:
    """Make the venv under root; the path of its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", root], check=True,
                   capture_output=True)
    python = os.path.join(root, "bin", "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    import pcp
    package_dir = os.path.dirname(os.path.abspath(pcp.__file__))
    links = {package_dir}
    links.update(os.path.join(os.path.dirname(package_dir), m) for m in TOP_LEVEL_MODULES)
    for dist in _closure(declared_dependencies()):
        links.update(_top_level_paths(dist))
    for path in links:
        target = os.path.join(site, os.path.basename(path))
        if not os.path.exists(target):
            os.symlink(path, target)
    return python
