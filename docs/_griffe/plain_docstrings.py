"""A griffe extension for mkdocstrings: this package's docstrings are plain text, read as
Markdown by the API pages. Two habits of theirs need help there:

- "name   what it is" lists, a term at the left margin, its text after two blanks or more
  and continuation lines indented (ArchiveReader's parameters, MetricArray's fields):
  Markdown would run them together into one paragraph; they become a bulleted list.
- `<mark>`, `__arrow_c_stream__`, `PM_ERR_*` in running text: Markdown would take them for
  an HTML tag, bold or italics; outside code spans and indented code blocks they are
  escaped so that they show as written.
"""
from __future__ import annotations

import re
from typing import Any, List

import griffe

TERM = re.compile(r"^([A-Za-z_][\w.]*(?:, [A-Za-z_][\w.]*)*)( {2,})(\S.*)$")
SPECIAL = re.compile(r"([*_\\])")
CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)")


def _paragraphs(text: str) -> List[List[str]]:
    paragraphs: List[List[str]] = [[]]
    for line in text.split("\n"):
        if line.strip():
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    return [p for p in paragraphs if p]


def _is_code(lines: List[str]) -> bool:
    return all(line.startswith("    ") for line in lines)


def _is_term_list(lines: List[str]) -> bool:
    terms = [line for line in lines if TERM.match(line)]
    return (bool(TERM.match(lines[0])) and len(terms) >= 2
            and all(TERM.match(line) or line.startswith("  ") for line in lines))


def _escape_text(text: str) -> str:
    # Python-Markdown has no backslash escape for "<": an entity instead
    return SPECIAL.sub(r"\\\1", text).replace("<", "&lt;")


def _escape(line: str) -> str:
    """Markdown's special characters of running text escaped, code spans (`x`, ``x``) left
    alone."""
    out, at = [], 0
    for span in CODE_SPAN.finditer(line):
        out += [_escape_text(line[at:span.start()]), span.group(0)]
        at = span.end()
    escaped = "".join(out) + _escape_text(line[at:])
    return "\\" + escaped if escaped.startswith("#") else escaped


def _term_list(lines: List[str]) -> List[str]:
    items: List[List[str]] = []
    for line in lines:
        m = TERM.match(line)
        if m:
            items.append(["- `%s`: %s" % (m.group(1), _escape(m.group(3)))])
        else:
            items[-1].append("  " + _escape(line.strip()))
    return [line for item in items for line in item]


def markdown_of(text: str) -> str:
    """A plain-text docstring as Markdown that shows what it says."""
    out: List[str] = []
    for lines in _paragraphs(text):
        if _is_code(lines):
            out.extend(lines)
        elif _is_term_list(lines):
            out.extend(_term_list(lines))
        else:
            out.extend(_escape(line) for line in lines)
        out.append("")
    return "\n".join(out).rstrip("\n")


class PlainDocstrings(griffe.Extension):
    """Rewrites every docstring griffe loads (see the module docstring)."""

    def on_instance(self, *, node: Any, obj: griffe.Object, agent: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_of(obj.docstring.value)
