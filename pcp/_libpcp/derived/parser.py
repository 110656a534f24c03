"""The grammar of libpcp 6.0.3's derived metric expressions (derive_parser.y), by
recursive descent over the same precedence table, with libpcp's syntax errors.

libpcp's parser is an LALR machine whose error productions name what was expected
after the construct being parsed ("Arithmetic expression expected to follow PLUS"); the
message of a syntax error is the one of the innermost construct still open when the
error is found, and the position is the start of the token that could not be used.
Here each construct that has such an error production pushes its message on a stack
while it is open (`_frame`), and tokens are read only when libpcp's parser would read
them, so the same message and the same position come out. Constructs with no error
production (numbers, mkconst(), defined()) push nothing: their errors report the
enclosing construct, or no message at all."""
from __future__ import annotations

from pcp._core.constants import (PM_INDOM_NULL, PM_SEM_COUNTER, PM_SEM_DISCRETE,
                                 PM_SEM_INSTANT, PM_TYPE_32, PM_TYPE_64, PM_TYPE_DOUBLE,
                                 PM_TYPE_FLOAT, PM_TYPE_U32, PM_TYPE_U64)
from pcp._core.errors import pmErr
from pcp._core.units import pmParseUnitsStr, unit_fields
from pcp._libpcp.derived import lexer as L
from pcp._libpcp.derived.nodes import Node, N, TYPE_NAMES

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import List, Optional, Tuple

# binary operators: precedence level (all left associative, as %left in libpcp)
_BINARY = {L.QUEST: 1, L.AND: 2, L.OR: 2, L.LT: 4, L.LEQ: 4, L.EQ: 4, L.GEQ: 4, L.GT: 4,
           L.NEQ: 4, L.PLUS: 5, L.MINUS: 5, L.STAR: 6, L.SLASH: 6}
_NOT_LEVEL, _NEG_OPERAND_LEVEL = 3, 6
_NODE_OF = {L.PLUS: N.PLUS, L.MINUS: N.MINUS, L.STAR: N.STAR, L.SLASH: N.SLASH,
            L.LT: N.LT, L.LEQ: N.LEQ, L.EQ: N.EQ, L.GEQ: N.GEQ, L.GT: N.GT, L.NEQ: N.NEQ,
            L.AND: N.AND, L.OR: N.OR}
_SIMPLE_FUNCTIONS = {"AVG": N.AVG, "COUNT": N.COUNT, "DELTA": N.DELTA, "MAX": N.MAX,
                     "MIN": N.MIN, "SUM": N.SUM, "RATE": N.RATE, "INSTANT": N.INSTANT,
                     "DEFINED": N.DEFINED}
_EXPR_START = {L.LPAREN, L.NAME, L.INTEGER, L.DOUBLE, L.MINUS, L.NOT, "MKCONST", "ANON",
               "RESCALE", "MATCHINST", "SCALAR", *_SIMPLE_FUNCTIONS}
# what may follow a metric name (the lookaheads of libpcp's reduction of a NAME)
_NAME_FOLLOW = {L.EOS, L.COLON, L.RPAREN, L.LPAREN, L.COMMA, *_BINARY}
# operators whose appearance as the first token is reported as "Unexpected initial"
_INITIAL = {L.PLUS, L.STAR, L.SLASH, L.LPAREN, L.RPAREN, L.LT, L.LEQ, L.EQ, L.GEQ, L.GT,
            L.NEQ, L.AND, L.OR, L.QUEST, L.COLON}

_AEXPR, _BEXPR = "Arithmetic expression", "Boolean expression"
_OP_STR = "Arithmetic or relational or boolean operator"


def _follow(phrase: str, what: str) -> str:
    return "%s expected to follow %s" % (phrase, what)


def _binary_frame(kind: str) -> str:
    phrase = _BEXPR if kind in (L.AND, L.OR) else _AEXPR
    return _follow(phrase, TYPE_NAMES[N.QUEST if kind == L.QUEST else _NODE_OF[kind]])


class SyntaxErr(Exception):
    """A syntax error: byte offset of the token where it was found (libpcp's
    `lexicon`, -1 for an empty expression) and the message (None when libpcp has
    none to give)."""

    def __init__(self, pos: int, msg: Optional[str]) -> None:
        super().__init__(pos, msg)
        self.pos = pos
        self.msg = msg


class _Frame:
    """A grammar construct open while its body is parsed: its message is the error of a
    token that fits nothing inside it (no frame when msg is None or empty)."""

    __slots__ = ("frames", "msg")

    def __init__(self, frames: List[str], msg: Optional[str]) -> None:
        self.frames = frames
        self.msg = msg

    def __enter__(self) -> None:
        if self.msg:
            self.frames.append(self.msg)

    def __exit__(self, *exc: object) -> None:
        if self.msg:
            self.frames.pop()


class _Parser:
    def __init__(self, text: bytes, regex_compile) -> None:
        self.lex = L.Lexer(text)
        self.tok: Optional[Tuple[str, bytes]] = None
        self.frames: List[str] = []
        self.regex_compile = regex_compile

    # ---- tokens
    def peek(self) -> str:
        if self.tok is None:
            self.tok = self.lex.next()
        return self.tok[0]

    def take(self) -> bytes:
        self.peek()
        assert self.tok is not None
        text = self.tok[1]
        self.tok = None
        return text

    def _frame(self, msg: Optional[str]) -> _Frame:
        return _Frame(self.frames, msg)

    def fail(self) -> SyntaxErr:
        """The error for the token in hand: the scanner's own complaint if it had one,
        else the innermost open construct's."""
        self.peek()
        msg = self.lex.errmsg or (self.frames[-1] if self.frames else None)
        return SyntaxErr(self.lex.lexicon, msg)

    def action_error(self, msg: str) -> SyntaxErr:
        """An error found by a grammar action (bad type, units or regex), reported at
        the token most recently read."""
        return SyntaxErr(self.lex.lexicon, self.lex.errmsg or msg)

    def expect(self, kind: str) -> bytes:
        if self.peek() != kind:
            raise self.fail()
        return self.take()

    def need_expr_start(self) -> None:
        if self.peek() not in _EXPR_START:
            raise self.fail()

    # ---- grammar
    def defn(self) -> Node:
        first = self.peek()
        if first in _INITIAL and first != L.LPAREN:
            self.take()
            with self._frame("Unexpected initial '%s'" % first):
                raise self.fail()
        tree = self.expr(0, initial=True)
        kind = self.peek()
        if kind == L.EOS:
            return tree
        if kind in (L.LPAREN, L.RPAREN):
            self.take()
            with self._frame("Unexpected '%s'" % kind):
                raise self.fail()
        raise self.fail()

    def expr(self, level: int, initial: bool = False) -> Node:
        left = self.unary(initial)
        while True:
            kind = self.peek()
            prec = _BINARY.get(kind)
            if prec is None or prec < level:
                return left
            self.take()
            with self._frame(_binary_frame(kind)):
                self.need_expr_start()
                if kind == L.QUEST:
                    middle = self.expr(0)
                    self.expect(L.COLON)
                    with self._frame(_follow(_AEXPR, TYPE_NAMES[N.COLON])):
                        self.need_expr_start()
                        right = self.expr(prec + 1)
                    left = Node(N.QUEST, left, Node(N.COLON, middle, right))
                else:
                    right = self.expr(prec + 1)
                    left = Node(_NODE_OF[kind], left, right)

    def unary(self, initial: bool) -> Node:
        kind = self.peek()
        if kind == L.MINUS:
            self.take()
            with self._frame(_follow(_AEXPR, TYPE_NAMES[N.NEG])):
                self.need_expr_start()
                return Node(N.NEG, self.expr(_NEG_OPERAND_LEVEL))
        if kind == L.NOT:
            self.take()
            with self._frame(_follow(_BEXPR, TYPE_NAMES[N.NOT])):
                self.need_expr_start()
                return Node(N.NOT, self.expr(_NOT_LEVEL + 1))
        if kind == L.LPAREN:
            self.take()
            frame = "Unexpected initial '('" if initial else None
            with self._frame(frame):
                self.need_expr_start()
                inner = self.expr(0)
                self.expect(L.RPAREN)
            if self.peek() == L.INSTNAME:
                # libpcp marks (expr)[name] as a regular expression filter whose
                # expression it never compiles: keep the text, filter as it does
                return Node(N.FILTERINST, Node.pattern(self.take(), regex=True, compiled=None),
                            inner)
            return inner
        if kind == L.NAME:
            name = self.take()
            after = self.peek()
            if after == L.INSTNAME:
                inst = self.take()
                return Node(N.FILTERINST, Node.pattern(inst, regex=False), Node.name(name))
            if after not in _NAME_FOLLOW:
                with self._frame(_follow(_OP_STR, TYPE_NAMES[N.NAME])):
                    raise self.fail()
            return Node.name(name)
        if kind == L.INTEGER:
            return Node.constant(N.INTEGER, self.take(), PM_TYPE_U32)
        if kind == L.DOUBLE:
            return Node.constant(N.DOUBLE, self.take(), PM_TYPE_DOUBLE)
        if kind == "MKCONST":
            return self.mkconst()
        if kind in _SIMPLE_FUNCTIONS or kind == "ANON":
            return self.simple_function(kind)
        if kind == "RESCALE":
            return self.rescale()
        if kind == "MATCHINST":
            return self.matchinst()
        if kind == "SCALAR":
            fname = self.take().decode()
            self.take()
            with self._frame(_follow("<expr>", fname + "(")):
                self.need_expr_start()
                inner = self.expr(0)
                self.expect(L.RPAREN)
            return Node(N.SCALAR, inner)
        raise self.fail()

    def simple_function(self, kind: str) -> Node:
        fname = self.take().decode()
        self.take()                                   # the "(" the scanner saw
        frame = None if kind == "DEFINED" else _follow("Metric name", fname + "(")
        with self._frame(frame):
            name = self.expect(L.NAME)
            self.expect(L.RPAREN)
        if kind == "ANON":
            return Node.anon(name)
        node = Node(_SIMPLE_FUNCTIONS[kind], Node.name(name))
        if kind in ("DELTA", "RATE"):
            node.left.save_last = True
        return node

    def rescale(self) -> Node:
        fname = self.take().decode()
        self.take()
        with self._frame(_follow(_OP_STR, fname + "(")):
            self.need_expr_start()
            inner = self.expr(0)
            self.expect(L.COMMA)
        with self._frame(_follow("Units string", fname + "(<expr>,")):
            text = self.expect(L.STRING)
            self.expect(L.RPAREN)
        try:
            units, _ = pmParseUnitsStr(text)
        except pmErr as e:
            raise self.action_error("Illegal units: '%s'" % _message_of(e))
        return Node(N.RESCALE, inner, Node.scale(int(units)))

    def matchinst(self) -> Node:
        fname = self.take().decode()
        self.take()
        with self._frame(_follow("<filter>, <expr>)", fname + "(")):
            invert = False
            if self.peek() == L.NOT:
                self.take()
                invert = True
            text = self.expect(L.PATTERN)
        compiled, err = self.regex_compile(text)
        if err is not None:
            raise self.action_error("bad regular expression: '%s'" % err)
        pattern = Node.pattern(text, regex=True, compiled=compiled, invert=invert)
        with self._frame(_follow(", <expr>)", fname + "(<filter>")):
            self.expect(L.COMMA)
        with self._frame(_follow("<expr>)", fname + "(<filter>,")):
            self.need_expr_start()
            inner = self.expr(0)
            self.expect(L.RPAREN)
        L.STATE.in_matchinst = False
        return Node(N.FILTERINST, pattern, inner)

    def mkconst(self) -> Node:
        self.take()
        self.take()
        kind = self.peek()
        if kind not in (L.INTEGER, L.DOUBLE):
            raise self.fail()
        text = self.take()
        self.expect(L.COMMA)
        ctype = PM_TYPE_U32 if kind == L.INTEGER else PM_TYPE_DOUBLE
        sem, units = PM_SEM_DISCRETE, 0
        while True:
            tag = self.peek()
            if tag not in (L.TYPE, L.SEMANTICS, L.UNITS):
                raise self.fail()
            self.take()
            self.expect(L.ASSIGN)
            if self.peek() not in (L.STRING, L.NAME, L.INTEGER):
                raise self.fail()
            value = self.take().decode("latin-1")
            if tag == L.TYPE:
                ctype = _SPEC_TYPES.get(value.upper(), -1)
                if ctype < 0:
                    raise self.action_error("Unrecognized value for type '%s'" % value)
            elif tag == L.SEMANTICS:
                sem = _SPEC_SEMS.get(value.lower(), -1)
                if sem < 0:
                    raise self.action_error("Unrecognized value for semantics '%s'" % value)
            else:
                try:
                    parsed, _ = pmParseUnitsStr(value.encode("latin-1"))
                except pmErr as e:
                    raise self.action_error("Illegal units: '%s'" % _message_of(e))
                units = int(parsed) & 0xFFFFFFFF
            if self.peek() == L.RPAREN:
                self.take()
                break
            self.expect(L.COMMA)
        if kind == L.DOUBLE and ctype not in (PM_TYPE_DOUBLE, PM_TYPE_FLOAT):
            raise self.action_error("Incompatible floating point constant and type '%s'"
                                    % _TYPE_STR[ctype])
        node = Node.constant(N.INTEGER if kind == L.INTEGER else N.DOUBLE, text, ctype)
        node.desc = (node.desc[0], ctype, PM_INDOM_NULL, sem, units)
        return node


_SPEC_TYPES = {"32": PM_TYPE_32, "U32": PM_TYPE_U32, "64": PM_TYPE_64, "U64": PM_TYPE_U64,
               "FLOAT": PM_TYPE_FLOAT, "DOUBLE": PM_TYPE_DOUBLE}
_SPEC_SEMS = {"counter": PM_SEM_COUNTER, "instant": PM_SEM_INSTANT, "discrete": PM_SEM_DISCRETE}
_TYPE_STR = {PM_TYPE_32: "32", PM_TYPE_U32: "U32", PM_TYPE_64: "64", PM_TYPE_U64: "U64",
             PM_TYPE_FLOAT: "FLOAT", PM_TYPE_DOUBLE: "DOUBLE"}


def _message_of(e: pmErr) -> str:
    return e.args[1] if len(e.args) > 1 and isinstance(e.args[1], str) else str(e)


def parse(text: bytes, regex_compile) -> Node:
    """The expression tree of `text`, or SyntaxErr. `regex_compile(pattern bytes)`
    gives (compiled, None) or (None, regerror's message)."""
    return _Parser(text, regex_compile).defn()


def unit_dims(units: int) -> Tuple[int, int, int, int, int, int]:
    """(dimSpace, dimTime, dimCount, scaleSpace, scaleTime, scaleCount) of a units word."""
    return unit_fields(units)
