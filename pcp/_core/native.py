"""The one door to the compiled C core: the only module of the package that imports
``pcp._native`` (built from ``csrc/`` by ``csrc/build_ffi.py``). Every other module
takes ``ffi`` and ``lib`` from here, so what the Python side asks of C is in one place
to find, and a test (tests/core/test_sourcecode.py) keeps it that way."""
from pcp._native import ffi, lib  # noqa: F401  (re-exported)

__all__ = ["ffi", "lib"]
