"""The one place where the corpus tests list what this package does differently from the
official binding on PCP's own QA material, each with its reason. A listed difference is
still checked: the test asserts that the outputs differ exactly as listed, no more, no
less.

SCRIPTS: PCP QA's Python scripts (tests/corpus/test_qa_scripts.py), run id -> reason.
SCRIPT_CHANGES: for each id of SCRIPTS, the changed lines of the masked outputs, "- "
the reference's and "+ " ours, as test_qa_scripts.changed_lines gives them.
"""

SCRIPTS = {
}

SCRIPT_CHANGES = {
}
