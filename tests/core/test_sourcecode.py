"""The package's own rules, checked by reading its sources (as asyncpg's
tests/test__sourcecode.py does): the one door to the compiled module, numbers written
once and equal to C's, floors that import only downwards, no import circles. The layout
these rules keep is described in docs/architecture.md."""
from __future__ import annotations

import ast
import os
import pathlib
import re
from typing import Dict, Iterator, List, Set, Tuple

import pytest

from pcp._core import constants, wire

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pcp"
LIBPCP_HEADERS = [pathlib.Path("/usr/include/pcp/pmapi.h"), pathlib.Path("/usr/include/pcp/impl.h")]

# floor of each package folder; a module may import from its own floor and those below.
# _live and _archive stand side by side (neither imports the other); _local (LOCAL
# contexts) stands on _live's request methods and _pmda's PDU family, as _bulk on _archive.
FLOORS = {"_core": 0, "_decode": 1, "_libpcp": 2, "_live": 3, "_archive": 3, "_pmda": 3,
          "_bulk": 4, "_local": 4}
PUBLIC = 5      # pcp/*.py (pmapi, bulk, sampler, fleet, dask) and pcp/cli/


def _modules() -> Iterator[Tuple[str, pathlib.Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        name = ".".join(rel.parts)
        if name.endswith(".__init__"):
            name = name[: -len(".__init__")]
        yield name, path
    yield "cpmapi", ROOT / "cpmapi.py"


_MODULE_NAMES = {name for name, _ in _modules()}


def _floor(module: str) -> int:
    parts = module.split(".")
    if len(parts) >= 2 and parts[0] == "pcp" and parts[1] in FLOORS:
        return FLOORS[parts[1]]
    return PUBLIC


def _top_level_imports(tree: ast.Module) -> Iterator[Tuple[ast.AST, str]]:
    """(node, module) of every import; TYPE_CHECKING blocks are left out (annotations only)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                # "from pcp._bulk import export" imports the module pcp._bulk.export
                sub = node.module + "." + alias.name
                yield node, sub if sub in _MODULE_NAMES else node.module


def _parsed() -> Dict[str, ast.Module]:
    return {name: ast.parse(path.read_text(), str(path)) for name, path in _modules()}


def test_only_the_native_door_imports_the_compiled_module() -> None:
    offenders = []
    for name, tree in _parsed().items():
        for node, module in _top_level_imports(tree):
            if module.startswith("pcp._native") and name != "pcp._core.native":
                offenders.append("%s:%d" % (name, node.lineno))
    assert offenders == []


def test_the_public_floor_calls_no_c() -> None:
    offenders = []
    for name, tree in _parsed().items():
        if _floor(name) != PUBLIC:
            continue
        for node, module in _top_level_imports(tree):
            if module == "pcp._core.native":
                offenders.append("%s:%d" % (name, node.lineno))
    assert offenders == []


def test_floors_import_only_downwards() -> None:
    offenders = []
    for name, tree in _parsed().items():
        mine = _floor(name)
        for node, module in _top_level_imports(tree):
            if not module.startswith("pcp.") or module == "pcp._native":
                continue
            theirs = _floor(module)
            sideways = (mine == theirs == 3 and module.split(".")[1] != name.split(".")[1])
            if (theirs > mine and mine != PUBLIC) or sideways:
                offenders.append("%s:%d imports %s" % (name, node.lineno, module))
    assert offenders == []


def _graph() -> Dict[str, Set[str]]:
    graph: Dict[str, Set[str]] = {}
    names = {n for n, _ in _modules()}
    for name, tree in _parsed().items():
        deps = graph.setdefault(name, set())
        for node in tree.body:      # module level only: imports inside functions are late
            if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
                continue
            for _, module in _top_level_imports(ast.Module(body=[node], type_ignores=[])):
                while module and module not in names:
                    module = module.rpartition(".")[0]
                if module and module != name:
                    deps.add(module)
    return graph


def test_no_import_cycles() -> None:
    """Strongly connected components of the module-level import graph (Tarjan): each
    must be a single module. Packages' __init__ modules import nothing, so they are no
    part of a cycle."""
    graph = _graph()
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    cycles: List[List[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            connect(name)
    assert cycles == []


def _numbers(module) -> Dict[str, int]:
    return {k: v for k, v in vars(module).items()
            if k.isupper() and isinstance(v, int) and not isinstance(v, bool)}


def test_numbers_are_written_once() -> None:
    """No module assigns a number constants or wire define: it imports it."""
    known = set(_numbers(constants)) | set(_numbers(wire))
    copies = []
    for name, path in _modules():
        if name in ("pcp._core.constants", "pcp._core.wire"):
            continue
        for node in ast.parse(path.read_text()).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                for t in (target.elts if isinstance(target, ast.Tuple) else [target]):
                    if isinstance(t, ast.Name) and t.id in known:
                        copies.append("%s:%d %s" % (name, node.lineno, t.id))
    assert copies == []


def test_constants_and_wire_share_no_name() -> None:
    assert set(_numbers(constants)) & set(_numbers(wire)) == set()


_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Z][A-Z0-9_]*)\s+(.+?)\s*$")


def _c_defines(paths: List[pathlib.Path]) -> Dict[str, int]:
    """Integer #defines of C headers, evaluated in order (casts and suffixes dropped)."""
    values: Dict[str, int] = {}
    for path in paths:
        text = re.sub(r"/\*.*?\*/", " ", path.read_text(errors="replace"), flags=re.S)
        text = re.sub(r"//[^\n]*", " ", text)
        for line in text.splitlines():
            m = _DEFINE.match(line)
            if not m:
                continue
            name, expr = m.groups()
            expr = re.sub(r"\((?:int|unsigned int|unsigned|int32_t|uint32_t|__uint32_t|"
                          r"__int32_t|long|unsigned long)\)", "", expr)
            expr = re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b", r"\1", expr)
            expr = expr.replace("INT32_MAX", str(2**31 - 1))
            if not re.fullmatch(r"[\sA-Za-z0-9_()+\-*/<>|&~^]+", expr):
                continue
            try:
                value = eval(expr, {"__builtins__": {}}, dict(values))  # noqa: S307
            except Exception:   # names of other kinds, function-like uses
                continue
            if isinstance(value, int):
                values[name] = value
    return values


# The official cpmapi is built with PMAPI_VERSION 3; pmapi.h's default is 2.
_NOT_THE_HEADERS = {"PMAPI_VERSION"}


def _compare(c_values: Dict[str, int]) -> Tuple[int, List[str]]:
    ours = {k: v for k, v in {**_numbers(constants), **_numbers(wire)}.items()
            if k not in _NOT_THE_HEADERS}
    compared, differ = 0, []
    for name, value in ours.items():
        if name in c_values:
            compared += 1
            c_value = c_values[name]
            if value != c_value and value & 0xFFFFFFFF != c_value & 0xFFFFFFFF:
                differ.append("%s: ours %#x, C %#x" % (name, value, c_value))
    return compared, differ


def test_numbers_match_the_c_core() -> None:
    headers = sorted((ROOT / "csrc").glob("*.h"))
    compared, differ = _compare(_c_defines(headers))
    assert differ == []
    assert compared >= 40, "the C headers' numbers were not found"


def test_numbers_match_libpcp_headers() -> None:
    headers = [p for p in LIBPCP_HEADERS if p.exists()]
    if not headers:
        if os.environ.get("CI"):
            pytest.fail("libpcp3-dev's headers are missing (CI is set)")
        pytest.skip("libpcp3-dev's headers are not installed")
    compared, differ = _compare(_c_defines(headers))
    assert differ == []
    assert compared >= 150, "libpcp's numbers were not found"


def test_no_undefined_names() -> None:
    """Every name a module uses is defined (pyflakes): a merge that moves an import into a
    function, or drops one, otherwise fails only when that line first runs."""
    from pyflakes import api, reporter  # pylint: disable=import-outside-toplevel

    class Collect(reporter.Reporter):
        def __init__(self) -> None:
            super().__init__(None, None)
            self.found: List[str] = []

        def flake(self, message) -> None:
            if type(message).__name__ in ("UndefinedName", "UndefinedLocal",
                                          "UndefinedExport"):
                self.found.append(str(message))

        def unexpectedError(self, filename, msg) -> None:
            self.found.append("%s: %s" % (filename, msg))

        def syntaxError(self, filename, msg, lineno, offset, text) -> None:
            self.found.append("%s:%s: %s" % (filename, lineno, msg))

    collect = Collect()
    paths = [str(p) for _, p in _modules()] + [str(ROOT / (m + ".py")) for m in
                                               ("cpmapi", "cpmi", "cmmv", "cpmda")]
    for path in paths:
        api.checkPath(path, collect)
    assert not collect.found, "\n".join(collect.found)
