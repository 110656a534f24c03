"""The PMNS loader's short cut for usual lines (pmns._USUAL_LINE: a leaf, a non-leaf, a
block's start or end, tokens apart by blanks) against its lexer, which
tests/libpcp/test_pmns.py compares with libpcp: every file below, a small PMNS with one
odd line put in at several places, must load to the same tree, or fail with the same
error and the same messages (the line and its caret included), either way."""
from __future__ import annotations

import re

import pytest

from pcp._core.errors import pmErr
from pcp._libpcp import pmns

BASE = """root {
\tkernel
\tmmv\t70:*:*
\thinv
}

kernel {
\tall
\tuptime\t60:26:0
}

kernel.all {
\tload\t60:2:0
\tcpu
}

kernel.all.cpu {
\tuser\t60:0:20
\tsys  60:0:22 \t
}

hinv {
\tncpu\t60:0:32
\tndisk\t60:0:33
}
""".split("\n")

ODD_LINES = ["\tfoo 511:0:0", "\tfoo 1:4096:0", "\tfoo 1:0:1024", "\tfoo 511:*:*",
             "\tfoo 510:*:*", "x.y {", "x.y", "}", "{", "  ", "\tbar\t\t1:2:3  ",
             "\tbar 1:2:3 4", '# 12 "foo"', "#bad", "\tuptime 1:2:3", "root {", "\t_x 1:2:3",
             "\tbar 1::3", "\tbar 01:002:3", "\tbar \x0b1:2:3", "name{", "\tbar 1:2:3\r",
             "\tbar \u0661:2:3", "hinv {", "\tq 1:2", "} }", "kernel", "", "\tncpu 60:0:32"]
PLACES = [1, 2, 3, 8, 9, 13, 19, 23, len(BASE)]


def _load(path, dupok, messages):
    try:
        tree = pmns.read_tree(str(path), dupok)
    except pmErr as err:
        return ("error", err.args, messages[:])

    def shape(nodes):
        return [(n.name, n.pmid, n.marked, shape(n.children)) for n in nodes]
    return ("tree", shape(tree.root.children), tree.count,
            [[n.name for n in bucket] for bucket in tree.buckets], messages[:])


@pytest.mark.parametrize("dupok", [True, False])
def test_usual_lines_as_the_lexer_reads_them(tmp_path, monkeypatch, dupok):
    messages: list = []
    monkeypatch.setattr(pmns, "pmprintf", messages.append)
    usual = pmns._USUAL_LINE
    outcomes = set()
    for odd in ODD_LINES:
        for place in PLACES:
            for replace in (False, True):
                lines = list(BASE)
                lines[place:place + int(replace)] = [odd]
                path = tmp_path / "pmns"
                path.write_text("\n".join(lines))
                got = {}
                for short_cut in (True, False):
                    monkeypatch.setattr(pmns, "_USUAL_LINE", usual if short_cut
                                        else re.compile(r"(?!)"))
                    messages.clear()
                    got[short_cut] = _load(path, dupok, messages)
                assert got[True] == got[False], (odd, place, replace)
                outcomes.add(got[True][0])
    assert outcomes == {"tree", "error"}
