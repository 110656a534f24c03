"""Every difference the corpus sweeps accept between the official binding (over libpcp
6.0.3) and this package, each with its reason. The sweeps read this file: a difference
not listed here fails, and so does a listed one that no longer shows (fixed, or moved).

ARCHIVES: archive name (relative to the test suite) -> {section of the image: reason}.
The section's whole value may differ; every other section must read the same.
"""

_DESTROY_CRASH = ("libpcp 6.0.3 aborts in pmDestroyContext of this archive (glibc: %s): "
                  "every reading call before it gives the same as here, so the image is "
                  "compared; closing the context here works")

ARCHIVES = {
    "archives/20150105.17.57-00": {"close": _DESTROY_CRASH % "free(): invalid size"},
    "archives/pcpcmd": {"close": _DESTROY_CRASH % "double free or corruption"},
    "archives/tricky_4_507": {"close": _DESTROY_CRASH % "SIGSEGV"},
    "badarchives/badti-2": {"close": _DESTROY_CRASH % "SIGSEGV"},
}
