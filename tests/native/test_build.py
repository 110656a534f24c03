"""The built extension is self-contained: no libpcp, only libc-level dependencies."""
import pathlib
import subprocess

import pcp._native


def _extension() -> pathlib.Path:
    return pathlib.Path(pcp._native.__file__)


def test_extension_links_no_libpcp():
    deps = subprocess.run(["ldd", str(_extension())], capture_output=True, text=True, check=True).stdout
    assert "libpcp" not in deps, deps


def test_extension_imports_no_pcp_symbols():
    undefined = subprocess.run(["nm", "-D", "--undefined-only", str(_extension())],
                               capture_output=True, text=True, check=True).stdout
    pm_symbols = [line for line in undefined.splitlines() if " pm" in line or "__pm" in line]
    assert pm_symbols == []


def test_cpmapi_and_pmapi_come_from_this_package():
    import cpmapi
    from pcp import pmapi

    root = _extension().parent.parent
    assert pathlib.Path(cpmapi.__file__).resolve().parent == root.resolve()
    assert pathlib.Path(pmapi.__file__).resolve().parent == _extension().parent.resolve()
