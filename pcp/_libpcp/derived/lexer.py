"""The lexical scanner of libpcp's derived metric language (derive_lex), at API_LEVEL.

It works on the expression's bytes, one token per call, because the parser's error
positions are byte offsets of the token being looked at, and because one piece of the
scanner's state outlives a parse: after "matchinst" a "/" starts a pattern, until the
parser has reduced the matchinst() call (libpcp never resets that flag after a syntax
error, so the next expression parsed sees it too; we keep that behaviour)."""
from __future__ import annotations

import re

from pcp._core.level import API_LEVEL

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Optional, Tuple

# token kinds (the parser compares these strings)
EOS, ERROR = "EOS", "ERROR"
INTEGER, DOUBLE, NAME, STRING, INSTNAME, PATTERN = (
    "INTEGER", "DOUBLE", "NAME", "STRING", "INSTNAME", "PATTERN")
PLUS, MINUS, STAR, SLASH, QUEST, COLON, LPAREN, RPAREN, COMMA, ASSIGN = (
    "+", "-", "*", "/", "?", ":", "(", ")", ",", "=")
LT, LEQ, EQ, GEQ, GT, NEQ, AND, OR, NOT = "<", "<=", "==", ">=", ">", "!=", "&&", "||", "!"
TYPE, SEMANTICS, UNITS, META, INDOM = "TYPE", "SEMANTICS", "UNITS", "META", "INDOM"

# name( is a function call only for these names, with no space before the "("
FUNCTIONS = ("avg", "count", "delta", "max", "min", "sum", "anon", "rate", "instant",
             "mkconst", "rescale", "defined", "matchinst", "scalar")
KEYWORDS = {b"type": TYPE, b"semantics": SEMANTICS, b"units": UNITS}
if API_LEVEL >= (6, 3):
    # 6.3: novalue() and the meta=<metric> of mkconst() and novalue() ("meta(" is
    # libpcp's function token for it too)
    FUNCTIONS += ("meta", "novalue")
    KEYWORDS[b"meta"] = META
if API_LEVEL >= (7, 2):
    KEYWORDS[b"indom"] = INDOM             # 7.x: mkconst(..., indom=D.S), novalue(indom=)

_SINGLE = {ord("+"): PLUS, ord("-"): MINUS, ord("*"): STAR, ord("("): LPAREN,
           ord(")"): RPAREN, ord("?"): QUEST, ord(":"): COLON, ord(","): COMMA}

_PAIRS = {ord("<"): (ord("="), LEQ, LT), ord(">"): (ord("="), GEQ, GT),
          ord("="): (ord("="), EQ, ASSIGN), ord("!"): (ord("="), NEQ, NOT),
          ord("&"): (ord("&"), AND, None), ord("|"): (ord("|"), OR, None)}

# what the scanner's character loops consume, matched in one step
_SPACES = re.compile(rb"[ \t\n\v\f\r]*")
_NAME_REST = re.compile(rb"[A-Za-z0-9_.]*")

_EOF = -1


class _State:
    """Scanner state that survives from one parse to the next, as libpcp's statics do."""
    in_matchinst = False


STATE = _State()


def _isalpha(c: int) -> bool:
    return 65 <= c <= 90 or 97 <= c <= 122


def _isdigit(c: int) -> bool:
    return 48 <= c <= 57


class Lexer:
    """Tokens of one expression. `lexicon` is the byte offset where the last token
    started (libpcp's error position)."""

    def __init__(self, text: bytes) -> None:
        nul = text.find(b"\0")
        self.text = text if nul < 0 else text[:nul]
        self.pos = 0
        self.lexicon = 0
        self.errmsg: Optional[str] = None

    def _get(self) -> int:
        if self.pos >= len(self.text):
            return _EOF
        c = self.text[self.pos]
        self.pos += 1
        return c

    def _unget(self, c: int) -> None:
        if c > 0:
            self.pos -= 1

    def _error(self, msg: str) -> Tuple[str, bytes]:
        self.errmsg = msg
        return ERROR, b""

    def next(self) -> Tuple[str, bytes]:
        """(kind, text) of the next token; text is the value of names, numbers,
        strings (unquoted), instance names and patterns (unescaped)."""
        self.pos = _SPACES.match(self.text, self.pos).end()
        c = self._get()
        self.lexicon = self.pos - 1
        if c == _EOF:
            return EOS, b""
        start = self.pos - 1
        if _isdigit(c):
            return self._number(start, False)
        if c == ord("."):
            return self._number(start, True)
        if _isalpha(c):
            return self._name(start)
        kind = _SINGLE.get(c)
        if kind is not None:
            return kind, b""
        if c == ord("/"):
            if not STATE.in_matchinst:
                return SLASH, b""
            return self._delimited(ord("/"), PATTERN, "unterminated pattern", True)
        if c == ord('"'):
            return self._delimited(ord('"'), STRING, "unterminated STRING", False)
        if c == ord("["):
            return self._delimited(ord("]"), INSTNAME, "unterminated instance name", True)
        if c in _PAIRS:
            second, both, alone = _PAIRS[c]
            d = self._get()
            if d == second:
                return both, b""
            self._unget(d)
            if alone is None:
                return self._error("Illegal character")
            return alone, b""
        return self._error("Illegal character")

    def _number(self, start: int, is_double: bool) -> Tuple[str, bytes]:
        while True:
            c = self._get()
            if not is_double and c == ord("."):
                is_double = True
                continue
            if c != _EOF and _isdigit(c):
                continue
            self._unget(c)
            text = self.text[start:self.pos]
            if is_double:
                return DOUBLE, text
            if int(text) > 0xFFFFFFFF:
                return self._error("Constant value too large")
            return INTEGER, text

    def _name(self, start: int) -> Tuple[str, bytes]:
        end = self.pos = _NAME_REST.match(self.text, self.pos).end()
        text = self.text[start:end]
        if end < len(self.text) and self.text[end] == 40:        # "(": maybe a call
            name = text.decode("latin-1")
            if name in FUNCTIONS:
                if name == "matchinst":
                    STATE.in_matchinst = True
                return name.upper(), text
        keyword = KEYWORDS.get(text)
        if keyword is not None:
            return keyword, text
        return NAME, text

    def _delimited(self, end: int, kind: str, unterminated: str,
                   escapes: bool) -> Tuple[str, bytes]:
        out = bytearray()
        while True:
            c = self._get()
            if c == _EOF:
                return self._error(unterminated)
            if escapes and c == ord("\\"):
                c = self._get()
                if c == _EOF:
                    return self._error(unterminated)
                out.append(c)
                continue
            if c == end:
                return kind, bytes(out)
            out.append(c)
