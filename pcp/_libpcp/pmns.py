"""PMNS files (PMNS(5)) as libpcp 6.0.3 loads them: pmLoadNameSpace (the file as it is),
pmLoadASCIINameSpace (through pmcpp's preprocessing: comments, #define, #undef, #ifdef,
#ifndef, #else, #endif, #include), pmUnloadNameSpace, and the name operations that
answer from a loaded PMNS instead of the context's source (PMNS_LOCAL).

The grammar: blocks ``path { child [pmid] ... }`` whose non-terminal children are
defined by blocks of their own, ``root`` at the top; PMIDs are ``domain:cluster:item``
or ``domain:*:*`` for the root of a dynamic subtree. Errors give libpcp's messages
(``[file:line] Error Parsing ASCII PMNS: ...`` with the line and a caret), written out
at once as libpcp does, and PM_ERR_PMNS.
"""
from __future__ import annotations

import operator
import os
import re
import threading

from pcp._core.config import pmGetConfig
from pcp._core.constants import (PM_ERR_DUPPMNS, PM_ERR_GENERIC, PM_ERR_NAME, PM_ERR_NONLEAF,
                                 PM_ERR_NOPMNS, PM_ERR_PMID, PM_ERR_PMNS, PM_ID_NULL)
from pcp._core.errors import pmErr, pmflush, pmprintf
from pcp._core.wire import DYNAMIC_DOMAIN
from pcp._libpcp import anon as _anon

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Dict, Iterable, Iterator, List, Optional, Tuple

NAME, PATH, PMID, LBRACE, RBRACE, BOGUS = 1, 2, 3, 4, 5, 10
_C_SPACE = " \t\n\v\f\r"
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# what the lexer's character loops find, matched in one step each
_SPACE_RUN = re.compile(r"([ \t\n\v\f\r])[ \t\n\v\f\r]*")
_SPACE_BY_COLON = re.compile(r"[ \t\n\v\f\r]:|:[ \t\n\v\f\r]")
_TOKEN = re.compile(r"[^ \t\n\v\f\r]+")
_NAME_OR_PATH = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")
_ASCII_PMID_CHARS = re.compile(r"[0-9:*]+")
_PMID_TRIPLE = re.compile(r"^(\d+):(\d+):(\d+)")
_PMID_DOMAIN = re.compile(r"^(\d+):")
_first_of_run = operator.itemgetter(1)      # a _SPACE_RUN match's first blank
# The lines of a usual PMNS (pmnsmerge's output), recognised whole: a leaf with its PMID
# (groups 1-5) or dynamic domain (1, 6-7), a non-leaf child (1 alone), a block's start
# (8), a block's end (9), a blank line (none). Tokens apart by blanks and tabs only, the
# numbers ASCII: what the lexer would classify without a message (the range checks are
# made in tokens()); any other line goes through _collapse and _classify.
_USUAL_LINE = re.compile(r"[ \t]*(?:([A-Za-z][A-Za-z0-9_]*)(?:[ \t]+(?:(([0-9]+):([0-9]+):"
                         r"([0-9]+))|(([0-9]+):\*:\*)))?|([A-Za-z][A-Za-z0-9_.]*)[ \t]+\{|(\}))"
                         r"?[ \t]*")


class Node:
    """A PMNS node: children in file order, a pmid for a leaf (PM_ID_NULL otherwise)."""

    __slots__ = ("name", "pmid", "children", "parent", "marked")

    def __init__(self, name: str, pmid: int = PM_ID_NULL) -> None:
        self.name = name
        self.pmid = pmid
        self.children: List["Node"] = []
        self.parent: Optional["Node"] = None
        # libpcp's mark bit is the top bit of the pmid field, which PM_ID_NULL has: a
        # non-leaf node cannot be found by name until indexing clears it on every path
        # from a leaf to the root (so a load that fails before that hides them all)
        self.marked = True

    def child(self, name: str) -> Optional["Node"]:
        for node in self.children:
            if node.name == name and not _hidden(node):
                return node
        return None


def is_dynamic_root(pmid: int) -> bool:
    return pmid != PM_ID_NULL and (pmid >> 22) & 0x1FF == DYNAMIC_DOMAIN


# ---------------------------------------------------------------------------
# pmcpp: the preprocessing pmLoadASCIINameSpace applies
# ---------------------------------------------------------------------------
class PreprocessError(Exception):
    """pmcpp refused the input (libpcp then reports a non-zero exit status)."""


def preprocess(path: str, macros: Optional[Dict[str, str]] = None,
               depth: int = 0) -> Iterator[Tuple[str, int, str]]:
    """(file, line number, text) of each line pmcpp passes on: C comments removed,
    directives obeyed, macros expanded in whole words."""
    macros = {} if macros is None else macros
    if depth > 10:
        raise PreprocessError("#include nesting too deep")
    try:
        with open(path, "rb") as stream:
            text = stream.read().decode("utf-8", "surrogateescape")
    except OSError as err:
        raise PreprocessError("cannot open %s: %s" % (path, err.strerror)) from None
    active: List[bool] = []
    in_comment = False
    for number, raw in enumerate(text.split("\n"), start=1):
        line, in_comment = _strip_comments(raw, in_comment)
        stripped = line.strip()
        if stripped.startswith("#"):
            words = stripped[1:].split(None, 2)
            directive = words[0] if words else ""
            live = all(active)
            if directive in ("ifdef", "ifndef"):
                if len(words) < 2:
                    raise PreprocessError("%s:%d: missing macro name" % (path, number))
                defined = words[1] in macros
                active.append(defined if directive == "ifdef" else not defined)
            elif directive == "else":
                if not active:
                    raise PreprocessError("%s:%d: #else without #if" % (path, number))
                active[-1] = not active[-1]
            elif directive == "endif":
                if not active:
                    raise PreprocessError("%s:%d: #endif without #if" % (path, number))
                active.pop()
            elif not live:
                pass
            elif directive == "define":
                if len(words) < 2:
                    raise PreprocessError("%s:%d: missing macro name" % (path, number))
                macros[words[1]] = words[2].strip() if len(words) > 2 else ""
            elif directive == "undef":
                if len(words) >= 2:
                    macros.pop(words[1], None)
            elif directive == "include":
                target = stripped[1:].split(None, 1)[1].strip() if len(words) > 1 else ""
                if len(target) < 2 or target[0] + target[-1] not in ('""', "<>"):
                    raise PreprocessError("%s:%d: bad #include" % (path, number))
                name = target[1:-1]
                if not name.startswith("/"):
                    name = os.path.join(os.path.dirname(path), name)
                yield from preprocess(name, macros, depth + 1)
            else:
                # pmcpp passes a line it does not know on as it is
                if all(active):
                    yield path, number, line
            continue
        if all(active):
            yield path, number, _expand(line, macros)
    if active:
        raise PreprocessError("%s: unterminated #if" % path)
    if in_comment:
        raise PreprocessError("%s: unterminated comment" % path)


def _strip_comments(line: str, in_comment: bool) -> Tuple[str, bool]:
    out = []
    i = 0
    while i < len(line):
        if in_comment:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), True
            i = end + 2
            in_comment = False
            out.append(" ")
        else:
            start = line.find("/*", i)
            if start < 0:
                out.append(line[i:])
                break
            out.append(line[i:start])
            i = start + 2
            in_comment = True
    return "".join(out), in_comment


def _expand(line: str, macros: Dict[str, str]) -> str:
    if not macros:
        return line
    for _ in range(16):         # macros may name macros
        expanded = _WORD.sub(lambda m: macros.get(m.group(0), m.group(0)), line)
        if expanded == line:
            break
        line = expanded
    return line


# ---------------------------------------------------------------------------
# The lexer and the two passes of libpcp's loader
# ---------------------------------------------------------------------------
def _collapse(line: str) -> str:
    """libpcp's line clean-up: runs of blanks become one (their first), blanks around ':'
    go. A line with no blank next to a ':' (every line of a usual PMNS) is cleaned by one
    substitution; the others a character at a time, as libpcp does it."""
    if ":" not in line or _SPACE_BY_COLON.search(line) is None:
        return _SPACE_RUN.sub(_first_of_run, line.lstrip(_C_SPACE))
    return _collapse_by_character(line)


def _collapse_by_character(line: str) -> str:
    out: List[str] = []
    inspace = False
    for ch in line:
        if ch in _C_SPACE:
            if not inspace:
                if out and out[-1] != ":":
                    out.append(ch)
                inspace = True
        elif ch == ":":
            if inspace and out:
                out.pop()
            inspace = False
            out.append(ch)
        else:
            out.append(ch)
            inspace = False
    return "".join(out)


class _Loader:
    def __init__(self, lines: Iterable[Tuple[str, int, str]]) -> None:
        self.lines = lines
        self.where = ("", -1)
        self.line = ""
        # where the last token started (libpcp's linep, None before the first): the
        # caret of a message, even on a later line
        self.token_at: Optional[int] = None
        self.tree: Optional["Tree"] = None     # set by pass 2, even when it then fails
        # a usual line skips the lexer's clean-up: line is then its raw text, and the
        # last token is known by its line and index; _settle works out what the lexer
        # would have left in line and token_at, when a message needs them
        self._raw_line: Optional[str] = None
        self._token_source: Optional[Tuple[str, int]] = None

    def _settle(self) -> None:
        """line and token_at as the lexer leaves them, after usual lines that skipped it."""
        if self._raw_line is not None:
            if self.line is self._raw_line:     # not since replaced (a line marker's)
                self.line = _collapse(self._raw_line)
            self._raw_line = None
        if self._token_source is not None:
            raw, index = self._token_source
            self._token_source = None
            self.token_at = [m.start() for m in _TOKEN.finditer(_collapse(raw))][index]

    def error(self, message: str, in_buffer: bool = False) -> None:
        """libpcp's err(): the message, then the line buffer and a caret under the last
        token. libpcp formats some messages into that same buffer (in_buffer), and the
        caret is drawn into it too, so a second message shows what the first left."""
        self._settle()
        fname, lineno = self.where
        if in_buffer:
            self.line = message
        text = "[%s:%d] " % (fname, lineno) if lineno > 0 else ""
        text += "Error Parsing ASCII PMNS: %s\n" % message
        if lineno > 0:
            text += "    %s" % self.line
            if not self.line.endswith("\n"):
                text += "\n"
            if self.token_at is not None:
                pointer = "".join(c if c in _C_SPACE else " "
                                  for c in self.line[:self.token_at])
                self.line = pointer + "^\n"
                text += "    %s" % self.line
        pmprintf(text)
        pmflush()

    def tokens(self) -> Iterator[Tuple[int, str, int]]:
        renumber: Optional[Tuple[str, int]] = None      # after a marker: (file, offset)
        for fname, lineno, raw in self.lines:
            if renumber is not None:
                fname, lineno = renumber[0], lineno + renumber[1]
            usual = _USUAL_LINE.fullmatch(raw)
            tokens = self._usual_tokens(usual) if usual is not None else None
            if tokens is not None:
                self.where = (fname, lineno)
                self.line = self._raw_line = raw
                for index, token in enumerate(tokens):
                    self._token_source = (raw, index)
                    yield token
                continue
            self._settle()
            line = _collapse(raw)
            if line.startswith("#"):
                # a "#" line pmcpp passed on: libpcp takes it as a line marker
                m = re.match(r'#\s*(-?\d+)\s*"(\S*)', line)
                if m is None:
                    self.where = (fname, lineno - 1)
                    self.line = line
                    self.error("Illegal line number control number")
                    raise pmErr(PM_ERR_PMNS)
                name = m.group(2)[:-1] if m.group(2).endswith('"') else m.group(2)
                renumber = (name, int(m.group(1)) - 1 - lineno + (renumber[1] if renumber else 0))
                continue
            self.where = (fname, lineno)
            self.line = line
            for match in _TOKEN.finditer(line):
                self.token_at = match.start()
                word = match.group()
                yield self._classify(word) + (word,)  # type: ignore[operator]
        self.where = ("", -1)

    @staticmethod
    def _usual_tokens(usual: "re.Match[str]") -> Optional[List[Tuple[int, int, str]]]:
        """The tokens of a usual line (see _USUAL_LINE) as _classify gives them, or None
        for a PMID out of range (the lexer's message is for _classify to give)."""
        name, pmid, domain, cluster, item, dynamic, dyn_domain, block, end = usual.groups()
        if name is not None:
            if pmid is not None:
                d, c, i = int(domain), int(cluster), int(item)
                if d > 510 or c > 4095 or i > 1023:
                    return None
                return [(NAME, 0, name), (PMID, (d << 22) | (c << 10) | i, pmid)]
            if dynamic is not None:
                d = int(dyn_domain)
                if d > 510:
                    return None
                return [(NAME, 0, name), (PMID, (DYNAMIC_DOMAIN << 22) | (d << 10), dynamic)]
            return [(NAME, 0, name)]
        if block is not None:
            return [(PATH if "." in block else NAME, 0, block), (LBRACE, 0, "{")]
        if end is not None:
            return [(RBRACE, 0, "}")]
        return []

    def _classify(self, word: str) -> Tuple[int, int]:
        if word == "{":
            return LBRACE, 0
        if word == "}":
            return RBRACE, 0
        if _NAME_OR_PATH.fullmatch(word) is not None:
            return (PATH if "." in word else NAME), 0
        if word.count(":") > 3 or (
                _ASCII_PMID_CHARS.fullmatch(word) is None
                and any(not (c.isdigit() or c in ":*") for c in word)):
            return BOGUS, 0
        m = _PMID_TRIPLE.match(word)
        if m:
            d, c, i = (int(x) for x in m.groups())
            if d > 510:
                self.error("Illegal domain field in PMID")
                return BOGUS, 0
            if c > 4095:
                self.error("Illegal cluster field in PMID")
                return BOGUS, 0
            if i > 1023:
                self.error("Illegal item field in PMID")
                return BOGUS, 0
            return PMID, (d << 22) | (c << 10) | i
        colon = word.find(":")
        if colon >= 0 and word[colon + 1:] != "*:*":
            self.error("Illegal PMID")
            return BOGUS, 0
        m = _PMID_DOMAIN.match(word)
        if not m:
            self.error("Illegal PMID")
            return BOGUS, 0
        d = int(m.group(1))
        if d > 510:
            self.error("Illegal domain field in dynamic PMID")
            return BOGUS, 0
        return PMID, (DYNAMIC_DOMAIN << 22) | (d << 10)

    def load(self, dupok: bool) -> "Tree":
        seen: List[Tuple[str, Node]] = []       # the blocks, newest first
        state = 0
        block: Optional[Node] = None
        leaf: Optional[Node] = None
        count = 0
        for kind, value, word in self.tokens():
            if state == 0:
                if kind not in (NAME, PATH):
                    self.error("Expected NAME or PATH")
                    raise pmErr(PM_ERR_PMNS)
                block = Node(word)
                seen.insert(0, (word, block))
                count += 1
                state = 1
            elif state == 1:
                if kind != LBRACE:
                    self.error("{ expected")
                    raise pmErr(PM_ERR_PMNS)
                state = 2
            elif state in (2, 3):
                if kind == NAME:
                    leaf = Node(word)
                    assert block is not None
                    block.children.append(leaf)
                    count += 1
                    state = 3
                elif kind == PMID and state == 3:
                    assert leaf is not None
                    leaf.pmid = value
                    state = 2
                elif kind == RBRACE:
                    state = 0
                    assert block is not None
                    names = [n.name for n in block.children]
                    if len(set(names)) == len(names):
                        continue            # no duplicate: the usual block
                    for i, name in enumerate(names):
                        if name in names[i + 1:]:
                            self.error('Duplicate name "%s" in subtree for "%s"\n'
                                       % (name, block.name), True)
                            raise pmErr(PM_ERR_PMNS)
                else:
                    self.error("Expected NAME or }" if state == 2
                               else "Expected NAME, PMID or }")
                    raise pmErr(PM_ERR_PMNS)
        return self._pass2(seen, count, dupok)

    def _pass2(self, seen: List[Tuple[str, Node]], count: int, dupok: bool) -> "Tree":
        self.where = ("", -1)
        # libpcp makes the tree the process's PMNS before pass 2 checks anything: a
        # failure from here on leaves what was built in use (load() takes self.tree)
        tree = Tree(None, count)
        self.tree = tree
        # libpcp searches the blocks (newest first) for a name's first; by name here
        by_name: Dict[str, List[int]] = {}
        for at in range(len(seen) - 1, -1, -1):
            by_name.setdefault(seen[at][0], []).append(at)
        taken = [False] * len(seen)

        def take(name: str) -> Optional[Node]:
            places = by_name.get(name)
            if not places:
                return None
            at = places.pop()
            taken[at] = True
            return seen[at][1]

        root = take("root")
        if root is None:
            self.error('No name space entry for "root"')
            raise pmErr(PM_ERR_PMNS)
        tree.root = root
        if take("root") is not None:
            self.error('Multiple name space entries for "root"')
            raise pmErr(PM_ERR_PMNS)

        def attach(base: str, node: Node) -> None:
            for child in node.children:
                if child.pmid != PM_ID_NULL:
                    continue
                path = child.name if not base else base + "." + child.name
                sub = take(path)
                if sub is None:
                    self.error('Cannot find definition for non-terminal node "%s" in name space'
                               % path, True)
                    raise pmErr(PM_ERR_PMNS)
                child.children = sub.children
                attach(path, child)

        attach("", root)
        blocks = [block for at, block in enumerate(seen) if not taken[at]]
        if blocks:
            for key, _ in blocks:
                self.error('Disconnected subtree ("%s") in name space' % key, True)
            raise pmErr(PM_ERR_PMNS)
        tree.index(dupok, self)
        return tree


class Tree:
    """A loaded PMNS: the nodes, and libpcp's hash of leaves by pmid (whose chains give
    the order of a pmid's names)."""

    def __init__(self, root: Optional[Node], count: int) -> None:
        self.root = root
        self.count = count
        self.buckets: List[List[Node]] = []     # none until the tree is indexed

    def index(self, dupok: bool, loader: Optional["_Loader"] = None) -> None:
        size = self.count // 5
        if size % 2 == 0:
            size += 1
        if size % 3 == 0:
            size += 2
        if size % 5 == 0:
            size += 2
        buckets: List[List[Node]] = [[] for _ in range(size)]
        self.buckets = buckets

        def link(node: Node) -> None:
            for child in node.children:
                child.parent = node
                if child.pmid != PM_ID_NULL:
                    chain = buckets[child.pmid % size]
                    if not dupok:
                        for other in chain:
                            if other.pmid == child.pmid and not is_dynamic_root(other.pmid):
                                if loader is not None:
                                    loader.error(
                                        'Duplicate metric id (%s) in name space for metrics '
                                        '"%s" and "%s"\n' % (_pmid_str(child.pmid),
                                                             full_name(child), full_name(other)),
                                        True)
                                raise pmErr(PM_ERR_PMNS)
                    chain.insert(0, child)
                link(child)
        assert self.root is not None
        link(self.root)
        for chain in buckets:
            for leaf in chain:
                node: Optional[Node] = leaf
                # a node found unmarked had its whole path to the root unmarked then
                while node is not None and node.marked:
                    node.marked = False
                    node = node.parent

    # ---- the name operations of PMNS_LOCAL ---------------------------------------------

    def locate(self, name: str) -> Optional[Node]:
        node: Optional[Node] = self.root
        if not name or node is None:
            return node
        for part in name.split("."):
            node = node.child(part) if node is not None else None
            if node is None:
                return None
        return node

    def lookup(self, names: List[str]) -> Tuple[List[int], int]:
        """(pmids, status) for pmLookupName: PM_ID_NULL where a name is not a leaf;
        status PM_ERR_NONLEAF for a single non-leaf name. A name below the root of a
        dynamic subtree gets that root's pmid, which pmcd takes as "ask the PMDA"."""
        pmids: List[int] = []
        status = 0
        for name in names:
            node = self.locate(name) if name else None
            if node is not None:
                if not node.children:
                    pmids.append(node.pmid)
                else:
                    if len(names) == 1 and node.children:
                        status = PM_ERR_NONLEAF
                    pmids.append(PM_ID_NULL)
                continue
            pmids.append(PM_ID_NULL)
            prefix = name
            while "." in prefix:
                prefix = prefix.rsplit(".", 1)[0]
                base = self.locate(prefix)
                if base is not None and not base.children and is_dynamic_root(base.pmid):
                    pmids[-1] = base.pmid
                    break
        return pmids, status

    def children(self, name: str) -> Tuple[List[str], List[int]]:
        node = self.locate(name)
        if node is None:
            raise pmErr(PM_ERR_NAME)
        kids = [c for c in node.children if not _hidden(c)]
        # the root of a dynamic subtree counts as a non-leaf
        return [c.name for c in kids], [
            1 if c.children or is_dynamic_root(c.pmid) else 0 for c in kids]

    def traverse(self, name: str) -> List[str]:
        node = self.locate(name)
        if node is None:
            raise pmErr(PM_ERR_NAME)
        out: List[str] = []
        if not node.children:
            out.append(name)
        else:
            self._walk(node, name, out)
        return out

    def _walk(self, node: Node, prefix: str, out: List[str]) -> None:
        for child in node.children:
            if _hidden(child):
                continue
            full = prefix + "." + child.name if prefix else child.name
            if child.children:
                self._walk(child, full, out)
            else:
                out.append(full)

    def names_of(self, pmid: int) -> List[str]:
        if not self.buckets:
            raise pmErr(PM_ERR_PMID)
        names = [full_name(node) for node in self.buckets[pmid % len(self.buckets)]
                 if node.pmid == pmid and not is_dynamic_root(pmid)]
        if not names:
            raise pmErr(PM_ERR_PMID)
        return names


def _hidden(node: Node) -> bool:
    return node.marked and node.pmid == PM_ID_NULL


def full_name(node: Node) -> str:
    parts = []
    while node.parent is not None:
        parts.append(node.name)
        node = node.parent
    return ".".join(reversed(parts))


def _pmid_str(pmid: int) -> str:
    return "%d.%d.%d" % ((pmid >> 22) & 0x1FF, (pmid >> 10) & 0xFFF, pmid & 0x3FF)


# ---------------------------------------------------------------------------
# The process's loaded PMNS
# ---------------------------------------------------------------------------
_lock = threading.Lock()
LOADED: Optional[Tree] = None
# libpcp's havePmLoadCall: a load was asked for (even one that failed, which leaves the
# process with no PMNS at all: every name operation fails with PM_ERR_NOPMNS)
ATTEMPTED = False


def default_file() -> Optional[str]:
    """$PMNS_DEFAULT, else $PCP_VAR_DIR/pmns/root."""
    if "PMNS_DEFAULT" in os.environ:
        return os.environ["PMNS_DEFAULT"]
    var_dir = pmGetConfig("PCP_VAR_DIR")
    return None if var_dir is None else os.path.join(var_dir, "pmns", "root")


def load(filename: Optional[str], dupok: bool, use_cpp: bool) -> int:
    """pmLoadNameSpace (use_cpp False) / pmLoadASCIINameSpace: make `filename` (None:
    the default PMNS) the process's PMNS. 0, or raises pmErr."""
    global ATTEMPTED, LOADED  # pylint: disable=global-statement
    with _lock:
        ATTEMPTED = True
        if LOADED is not None:
            raise pmErr(PM_ERR_DUPPMNS)
        path = default_file() if filename is None else filename
        if path is None:
            raise pmErr(PM_ERR_GENERIC)
        if filename is None:
            use_cpp = False
        loader = _Loader([])
        if not os.access(path, os.R_OK):
            code = -2
            try:
                os.stat(path)
                code = -13
            except OSError as err:
                code = -(err.errno or 2)
            loader.error('Cannot open "%s"' % path)
            raise pmErr(code)
        if use_cpp:
            try:
                loader.lines = list(preprocess(path))
            except PreprocessError as err:
                pmprintf("pmcpp: %s\n" % err)
                loader.error("pmcpp returned non-zero exit status")
                raise pmErr(PM_ERR_PMNS) from None
        else:
            loader.lines = _plain_lines(path, loader)
        try:
            loader.load(dupok)
        finally:
            if loader.tree is not None:
                LOADED = loader.tree
        return 0


def read_tree(path: Optional[str], dupok: bool) -> Tree:
    """A PMNS file read as it is (no pmcpp), kept apart from the process's loaded PMNS:
    what a LOCAL context uses when nothing was loaded (libpcp's LoadDefault)."""
    if path is None:
        raise pmErr(PM_ERR_GENERIC)
    loader = _Loader([])
    if not os.access(path, os.R_OK):
        loader.error('Cannot open "%s"' % path)
        raise pmErr(PM_ERR_NOPMNS)
    loader.lines = _plain_lines(path, loader)
    return loader.load(dupok)


def _plain_lines(path: str, loader: _Loader) -> Iterator[Tuple[str, int, str]]:
    """The file read as libpcp reads it without pmcpp, line by line: "#" lines must be
    line markers; libpcp counts from 2 until the first marker."""
    with open(path, "rb") as stream:
        text = stream.read().decode("utf-8", "surrogateescape")
    fname, lineno = path, 1
    for raw in text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"):
        if raw.startswith("#"):
            m = re.match(r'#\s*(-?\d+)\s*"(\S*)', _collapse(raw))
            if m is None:
                loader.where = (fname, lineno)
                loader.line = _collapse(raw)
                loader.error("Illegal line number control number")
                raise pmErr(PM_ERR_PMNS)
            lineno = int(m.group(1)) - 1
            fname = m.group(2)[:-1] if m.group(2).endswith('"') else m.group(2)
            continue
        lineno += 1
        yield fname, lineno, raw


def unload() -> None:
    """pmUnloadNameSpace: back to each context's own PMNS."""
    global LOADED, ATTEMPTED  # pylint: disable=global-statement
    with _lock:
        LOADED = None
        ATTEMPTED = False


class LocalNames:
    """A context's name operations answered from the loaded PMNS (PMNS_LOCAL), with the
    anonymous event metrics libpcp adds to every PMNS."""

    def __init__(self, tree: Optional[Tree]) -> None:
        self.tree = tree            # None after a load that failed: no PMNS at all

    def lookup_names(self, names: List[bytes]) -> Tuple[int, List[int]]:
        text = [n.decode("utf-8", "surrogateescape") for n in names]
        if self.tree is None:
            pmids = [_anon.ANON[n][0] if n in _anon.ANON else PM_ID_NULL for n in names]
            resolved = len(pmids) - pmids.count(PM_ID_NULL)
            if resolved < len(pmids):       # only names outside any PMNS can be found
                raise pmErr(PM_ERR_NOPMNS)
            return resolved, pmids
        pmids, status = self.tree.lookup(text)
        for i, name in enumerate(names):
            if pmids[i] == PM_ID_NULL and name in _anon.ANON:
                pmids[i] = _anon.ANON[name][0]
        resolved = len(pmids) - pmids.count(PM_ID_NULL)
        if status == PM_ERR_NONLEAF and resolved == 0:
            raise pmErr(PM_ERR_NONLEAF, pmids)
        return resolved, pmids

    def children(self, name: bytes, with_status: bool) -> Tuple[List[bytes], Optional[List[int]]]:
        text = name.decode("utf-8", "surrogateescape")
        if self.tree is None:
            raise pmErr(PM_ERR_NOPMNS)
        try:
            kids, status = self.tree.children(text)
        except pmErr:
            kids, status = [], []
            if not _anon.children(name) and name not in _anon.ANON:
                raise
        out = [k.encode("utf-8", "surrogateescape") for k in kids]
        for child, st in _anon.children(name):
            if child not in out:
                out.append(child)
                status.append(st)
        return out, (status if with_status else None)

    def traverse(self, name: bytes) -> List[bytes]:
        text = name.decode("utf-8", "surrogateescape")
        if self.tree is None:
            raise pmErr(PM_ERR_NOPMNS)
        code = PM_ERR_NAME
        try:
            found = [n.encode("utf-8", "surrogateescape") for n in self.tree.traverse(text)]
        except pmErr as err:
            found = []
            code = err.code
        found += [n for n in _anon.leaves(name) if n not in found]
        if not found:
            raise pmErr(code)
        return found

    def name_all(self, pmid: int) -> List[bytes]:
        if pmid in _anon.BY_PMID:
            return [_anon.BY_PMID[pmid]]
        if self.tree is None:
            raise pmErr(PM_ERR_NOPMNS)
        return [n.encode("utf-8", "surrogateescape") for n in self.tree.names_of(pmid)]
