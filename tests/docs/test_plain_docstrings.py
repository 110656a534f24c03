"""The API pages' docstring conversion (docs/_griffe/plain_docstrings.py): the package's
plain-text docstrings shown as written once Markdown has read them."""
from __future__ import annotations

import importlib.util
import inspect
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def markdown_of():
    pytest.importorskip("griffe")          # the [docs] extra
    spec = importlib.util.spec_from_file_location(
        "plain_docstrings", os.path.join(ROOT, "docs", "_griffe", "plain_docstrings.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.markdown_of


def test_a_term_list_becomes_a_bulleted_list(markdown_of):
    from pcp._bulk.arrays import MetricArray
    text = markdown_of(inspect.getdoc(MetricArray))
    assert "- `values`: 2-D array, rows x instance columns" in text
    assert "\n  uint32, int64" in text                # its continuation stays in the item
    assert "- `instance_names`: instance name of each column" in text
    assert text.endswith("(np.ascontiguousarray makes a copy that is).")


def test_tags_and_emphasis_of_running_text_are_escaped(markdown_of):
    assert markdown_of("after a <mark> record, __arrow_c_stream__ and PM_ERR_*") == \
        r"after a &lt;mark> record, \_\_arrow\_c\_stream\_\_ and PM\_ERR\_\*"


def test_code_spans_and_indented_code_are_left_alone(markdown_of):
    doc = "The `<mark>` and `__x__` spans.\n\n    for chunk in scan(name):   # a_b <c>\n        pass"
    assert markdown_of(doc) == doc


def test_prose_with_two_blanks_is_not_a_list(markdown_of):
    doc = "One sentence.  Another one\nand a third line."
    assert markdown_of(doc) == doc


def test_double_backtick_spans_are_code_too(markdown_of):
    doc = "``__implementation__`` is \"pcp-native\", `a_b` and ``x`y`` too"
    assert markdown_of(doc) == doc
