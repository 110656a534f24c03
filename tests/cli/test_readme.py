"""The Python examples of README.md run as written (against the bundled archive and the
local pmcd with the sample PMDA), so a reader can paste them. Examples fenced as ```py
need what only the reader has (a TLS pmcd of their own): they must compile, and they
are not run (they would reach for hosts outside this machine)."""
from __future__ import annotations

import contextlib
import io
import os
import re

import pytest

README = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "README.md")


def _blocks():
    with open(README) as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


def _sketches():
    with open(README) as f:
        return re.findall(r"```py\n(.*?)```", f.read(), re.S)


def test_the_readme_has_python_examples():
    assert len(_blocks()) >= 6


@pytest.mark.parametrize("index", range(len(_sketches())))
def test_readme_sketch_compiles(index):
    compile(_sketches()[index], "README.md sketch %d" % index, "exec")


@pytest.mark.pmcd
@pytest.mark.parametrize("index", range(len(_blocks())))
def test_readme_example_runs_as_written(index, tmp_path, monkeypatch):
    # the examples write files (cpu.parquet ...) where they run: not into the checkout
    monkeypatch.chdir(tmp_path)
    block = _blocks()[index]
    if "import polars" in block:
        pytest.importorskip("polars")
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(block, "README.md example %d" % index, "exec"), {})   # noqa: S102
