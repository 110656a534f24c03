"""The one place where the corpus tests list what this package does differently from the
official binding on PCP's own QA material, each with its reason. A listed difference is
still checked: a difference not listed here fails, and so does a listed one that no
longer shows (fixed, or moved).

ARCHIVES: the archive sweep (tests/corpus/test_archive_sweep.py), archive name relative
to the test suite -> {section of the image: reason}. The section's whole value may
differ; every other section must read the same.
SCRIPTS: PCP QA's Python scripts (tests/corpus/test_qa_scripts.py), run id -> reason.
SCRIPT_CHANGES: for each id of SCRIPTS, the changed lines of the masked outputs, "- "
the reference's and "+ " ours, as test_qa_scripts.changed_lines gives them: the test
asserts that the outputs differ exactly so.
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

SCRIPTS = {
}

SCRIPT_CHANGES = {
}
