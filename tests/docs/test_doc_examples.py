"""Every example of README.md and of the documentation site (docs/**/*.md) runs as written
and prints what the page shows, so a reader can paste it. The rules for writing one are in
docs/contributing.md ("Examples"); in short:

- ```python  runs (demo archive, QA archives, the local pmcd with the sample and mmv PMDAs)
  in a fresh namespace in a temporary directory; the ```text block after it is its output,
  compared exactly, or with numbers masked after `<!-- output: numbers vary -->`. One that
  starts `# file: NAME` is a file for the page's later console examples (compiled only).
- ```console  `$ ` lines, each followed by its output: `pcp-native ...` through the package's
  command line, other lines under bash in the directory holding the page's files.
- ```py  a sketch that needs what only the reader has: compiled, not run.
- ```sh  set-up commands: the extras and scripts they name must exist.
- An example that uses an optional package names its extra (`pcp-native[pandas]` ...).
"""
from __future__ import annotations

import contextlib
import glob
import io
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from typing import Dict, List, Optional

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGES = ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in
                               glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
NUMBERS_VARY = "<!-- output: numbers vary -->"
NUMBER = re.compile(r"0x[0-9a-f]+|nan|-?\d+\.?\d*(?:e[-+]?\d+)?")
FILE_BLOCK = re.compile(r"\A# file: (\S+)")

# what an example may import or call, and the extra that installs it
EXTRA_USES = {
    "pandas": re.compile(r"import pandas|to_pandas\(|pd\.DataFrame"),
    "arrow": re.compile(r"import pyarrow|to_arrow\(|to_parquet\(|\.parquet\b"),
    "polars": re.compile(r"import polars"),
    "duckdb": re.compile(r"import duckdb"),
    "dask": re.compile(r"pcp\.dask|from pcp import dask|import dask"),
    "progress": re.compile(r"progress=True|import tqdm"),
}
# an example that talks to a pmcd (the others read archives or write files)
LIVE = re.compile(r'"local:"|PM_CONTEXT_HOST|PM_CONTEXT_LOCAL|Sampler\(|fetch_many|Fleet\(|-h ')
EXTRA_MODULES = {"pandas": "pandas", "arrow": "pyarrow", "polars": "polars",
                 "duckdb": "duckdb", "dask": "dask.dataframe", "progress": "tqdm"}


@dataclass
class Example:
    page: str
    line: int
    lang: str
    code: str
    output: Optional[str]          # the ```text block after it
    numbers_vary: bool
    files: Dict[str, str]          # the `# file: NAME` blocks of the page before it

    @property
    def file_name(self) -> Optional[str]:
        m = FILE_BLOCK.match(self.code)
        return m.group(1) if m else None

    @property
    def id(self) -> str:
        return "%s:%d" % (self.page, self.line)


def _examples(page: str) -> List[Example]:
    with open(os.path.join(ROOT, page)) as f:
        text = f.read()
    found: List[Example] = []
    files: Dict[str, str] = {}
    fences = list(FENCE.finditer(text))
    for k, m in enumerate(fences):
        lang = m.group(1)
        if lang == "text":
            continue
        output = None
        # a console block's own marker stands before it, a python block's before its output
        vary = lang == "console" and text[:m.start()].rstrip().endswith(NUMBERS_VARY)
        if k + 1 < len(fences) and fences[k + 1].group(1) == "text":
            between = text[m.end():fences[k + 1].start()]
            if not between.replace(NUMBERS_VARY, "").strip():
                output, vary = fences[k + 1].group(2), NUMBERS_VARY in between
        example = Example(page, text.count("\n", 0, m.start()) + 1, lang, m.group(2),
                          output, vary, dict(files))
        if example.file_name:
            files[example.file_name] = example.code
        found.append(example)
    return found


EXAMPLES = [e for page in PAGES for e in _examples(page)]


def _of(lang: str) -> List[Example]:
    return [e for e in EXAMPLES if e.lang == lang]


def _same(got: str, want: str, numbers_vary: bool) -> None:
    got, want = got.rstrip("\n"), want.rstrip("\n")
    if numbers_vary:        # live values: numbers masked, and the blanks numpy aligns them with
        got, want = (re.sub(r"[ \t]+", "", NUMBER.sub("N", text)) for text in (got, want))
    assert got == want


def test_every_page_is_read():
    assert "docs/guide/bulk.md" in PAGES and "docs/architecture.md" in PAGES
    assert len(_of("python")) >= 20 and len(_of("console")) >= 3


def test_readme_is_a_landing_page():
    with open(os.path.join(ROOT, "README.md")) as f:
        assert len(f.read().splitlines()) < 250


def test_fences_are_known_languages():
    unknown = [(e.id, e.lang) for e in EXAMPLES if e.lang not in ("python", "py", "console", "sh")]
    assert unknown == []


@pytest.mark.parametrize("example", _of("python") + _of("py") + _of("console"),
                         ids=lambda e: e.id)
def test_example_names_its_extra(example):
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        pyproject = f.read()
    named = {extra for group in re.findall(r"pcp-native\[([\w,]+)\]", example.code)
             for extra in group.split(",")}
    for extra, use in EXTRA_USES.items():
        if use.search(example.code):
            assert extra in named or "all" in named, "%s needs %s" % (example.id, extra)
            assert re.search(r"^%s = \[" % extra, pyproject, re.M)


@pytest.mark.parametrize("example", _of("sh"), ids=lambda e: e.id)
def test_setup_commands_name_what_exists(example):
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        pyproject = f.read()
    for extras in re.findall(r"pcp-native\[([\w,]+)\]|\.\[([\w,]+)\]", example.code):
        for extra in ",".join(extras).split(","):
            if extra:
                assert re.search(r"^%s = \[" % extra, pyproject, re.M), extra
    missing = {script for script in re.findall(r"\b(scripts/\w+\.sh)\b", example.code)
               if not os.path.exists(os.path.join(ROOT, script))}
    if missing == {"scripts/demo.sh"}:
        pytest.xfail("scripts/demo.sh comes with issue 33's set-up part, not merged yet")
    assert missing == set()


@pytest.mark.parametrize("example", _of("py") + [e for e in _of("python") if e.file_name],
                         ids=lambda e: e.id)
def test_sketch_or_file_compiles(example):
    compile(example.code, example.id, "exec")


def _need_extras(code: str) -> None:
    for extra, use in EXTRA_USES.items():
        if use.search(code):
            pytest.importorskip(EXTRA_MODULES[extra])


def _params(examples: List[Example]):
    """Live examples need the pmcd (a failure under CI, a skip elsewhere without one)."""
    return [pytest.param(e, id=e.id, marks=[pytest.mark.pmcd] if LIVE.search(e.code) else [])
            for e in examples]


@pytest.mark.parametrize("example", _params([e for e in _of("python") if not e.file_name]))
def test_python_example_prints_what_the_page_shows(example, tmp_path, monkeypatch):
    # examples write files (cpu.parquet ...) where they run: not into the checkout
    monkeypatch.chdir(tmp_path)
    _need_extras(example.code)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(example.code, example.id, "exec"), {"__name__": "__doc_example__"})  # noqa: S102
    assert example.output is not None, "%s prints %r and the page shows no output" % (
        example.id, out.getvalue()[:200])
    _same(out.getvalue(), example.output, example.numbers_vary)


def _console_sessions(example: Example):
    """(command, expected output) of each `$ ` line of a console block."""
    sessions, command, lines = [], None, []
    for line in example.code.splitlines():
        if line.startswith("$ "):
            if command is not None:
                sessions.append((command, "\n".join(lines)))
            command, lines = line[2:], []
        else:
            lines.append(line)
    if command is not None:
        sessions.append((command, "\n".join(lines)))
    return sessions


def _cli() -> List[str]:
    script = os.path.join(os.path.dirname(sys.executable), "pcp-native")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "pcp"]


@pytest.mark.parametrize("example", _params(_of("console")))
def test_console_example_prints_what_the_page_shows(example, tmp_path):
    for name, code in example.files.items():
        (tmp_path / name).write_text(code)
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    for command, want in _console_sessions(example):
        argv = shlex.split(command)
        if argv[0] == "pcp-native":
            done = subprocess.run(_cli() + argv[1:], cwd=tmp_path, capture_output=True,
                                  text=True, timeout=60)
        else:       # a shell line (PCP's own tools on what the page wrote), this python first
            done = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True,
                                  text=True, timeout=60, env=env)
        _same(done.stdout + done.stderr, want, example.numbers_vary)
