"""The optional extras (pandas, pyarrow, tqdm, polars, duckdb, dask) are imported with
importorskip by the columns, export and Dask tests, so a machine without them skips
those tests. In CI the test extra installs all of them: a missing one there is a broken
setup, and this test fails instead of letting those tests skip. The sanitizer pass runs
the suite under the system interpreter, which has none of them, and is exempt."""
import importlib
import os
import sys

import pytest

EXTRAS = ["pandas", "pyarrow", "pyarrow.parquet", "tqdm", "polars", "duckdb"]
if sys.version_info >= (3, 10):
    EXTRAS += ["dask.dataframe", "distributed"]


@pytest.mark.skipif(not os.environ.get("CI") or bool(os.environ.get("PCP_TEST_ASAN_PRELOAD")),
                    reason="only CI's main pass promises every extra")
@pytest.mark.parametrize("module", EXTRAS)
def test_extra_installed_in_ci(module):
    importlib.import_module(module)


USER_EXTRAS = {"pandas", "arrow", "polars", "duckdb", "progress", "dask"}


def test_extras_are_one_coherent_set():
    """The user-facing extras of issue 33, [all] = all of them, [test] = [all] and the test
    tools; no overlapping leftovers ([parquet] is [arrow], [secure] is scramp, a test need)."""
    tomllib = pytest.importorskip("tomllib")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "pyproject.toml"), "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    assert set(extras) == USER_EXTRAS | {"all", "test", "docs", "fuzz"}
    assert extras["all"] == ["pcp-native[pandas,arrow,polars,duckdb,progress,dask]"]
    assert "pcp-native[all]" in extras["test"]
    assert any(req.startswith("pyarrow") for req in extras["arrow"])      # Parquet included
