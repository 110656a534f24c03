"""The grammar of libpcp's derived metric expressions (derive_parser.y) at API_LEVEL, by
recursive descent over the same precedence table, with libpcp's syntax errors.

6.3 added novalue() (only as one branch of a ternary), mkconst()'s and novalue()'s
meta=<metric>, values of type=/semantics= without quotes, delta(), rate() and
instant() of any expression, and (expr)[name] as an exact instance filter (a regular
expression never compiled until then); 7.x added indom=D.S and floating point values
in those lists.

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

from pcp._core.constants import (PM_ID_NULL, PM_INDOM_NULL, PM_SEM_COUNTER, PM_SEM_DISCRETE,
                                 PM_SEM_INSTANT, PM_TYPE_32, PM_TYPE_64, PM_TYPE_DOUBLE,
                                 PM_TYPE_FLOAT, PM_TYPE_U32, PM_TYPE_U64)
from pcp._core.errors import pmErr
from pcp._core.level import API_LEVEL
from pcp._core.units import pmParseUnitsStr, unit_fields
from pcp._libpcp.derived import lexer as L
from pcp._libpcp.derived.nodes import (META_INDOM, META_SEM, META_TYPE, META_UNITS, N, Node,
                                       TYPE_NAMES)

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
_LEVEL_6_3 = API_LEVEL >= (6, 3)
_LEVEL_7 = API_LEVEL >= (7, 2)
# 6.3: these take any expression, not only a metric name
_EXPR_FUNCTIONS = {"DELTA", "RATE", "INSTANT"} if _LEVEL_6_3 else set()
# the keywords of mkconst()'s and novalue()'s lists, and the tokens a value may be
_SPEC_KEYWORDS = {L.TYPE, L.SEMANTICS, L.UNITS}
_SPEC_VALUES = {L.STRING, L.NAME, L.INTEGER}
if _LEVEL_6_3:
    _SPEC_KEYWORDS.add(L.META)
if _LEVEL_7:
    _SPEC_KEYWORDS.add(L.INDOM)
    _SPEC_VALUES.add(L.DOUBLE)
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
                if kind == L.QUEST:
                    middle = self.branch(0)
                    self.expect(L.COLON)
                    with self._frame(_follow(_AEXPR, TYPE_NAMES[N.COLON])):
                        right = self.branch(prec + 1)
                    if middle.type == N.NOVALUE and right.type == N.NOVALUE:
                        raise self.action_error(
                            "novalue() may appear at most once in a ternary expression")
                    left = Node(N.QUEST, left, Node(N.COLON, middle, right))
                else:
                    self.need_expr_start()
                    right = self.expr(prec + 1)
                    left = Node(_NODE_OF[kind], left, right)

    def branch(self, level: int) -> Node:
        """A ternary's branch: an expression, or (6.3) novalue()."""
        if _LEVEL_6_3 and self.peek() == "NOVALUE":
            return self.novalue()
        self.need_expr_start()
        return self.expr(level)

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
                # libpcp before 6.3 marks (expr)[name] as a regular expression filter
                # whose expression it never compiles: keep the text, filter as it does;
                # 6.3 made it an exact instance name
                return Node(N.FILTERINST, Node.pattern(self.take(), regex=not _LEVEL_6_3,
                                                       compiled=None), inner)
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
        if kind in _EXPR_FUNCTIONS:
            with self._frame(_follow("<expr>", fname + "(")):
                self.need_expr_start()
                operand = self.expr(0)
                self.expect(L.RPAREN)
        else:
            frame = None if kind == "DEFINED" else _follow("Metric name", fname + "(")
            with self._frame(frame):
                name = self.expect(L.NAME)
                self.expect(L.RPAREN)
            if kind == "ANON":
                return Node.anon(name)
            operand = Node.name(name)
        node = Node(_SIMPLE_FUNCTIONS[kind], operand)
        if kind in ("DELTA", "RATE") or kind in _EXPR_FUNCTIONS:
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
        fname = self.take().decode()
        self.take()
        kind = self.peek()
        if kind not in (L.INTEGER, L.DOUBLE):
            raise self.fail()
        text = self.take()
        frame = (_follow("metadata keyword", fname + "(type")
                 if _LEVEL_6_3 and kind == L.INTEGER else None)
        ctype = PM_TYPE_U32 if kind == L.INTEGER else PM_TYPE_DOUBLE
        node = Node.constant(N.INTEGER if kind == L.INTEGER else N.DOUBLE, text, ctype)
        # 6.3's error production after an integer covers the whole list
        with self._frame(frame):
            self.expect(L.COMMA)
            _SPEC.desc = node.desc
            self.speclist(node)
        if kind == L.DOUBLE and node.desc[1] not in (PM_TYPE_DOUBLE, PM_TYPE_FLOAT):
            raise self.action_error("Incompatible floating point constant and type '%s'"
                                    % _TYPE_STR[node.desc[1]])
        return node

    def novalue(self) -> Node:
        """6.3's novalue(<speclist>): a branch of a ternary with a descriptor and no
        values (by default a 32-bit discrete number with no instance domain)."""
        fname = self.take().decode()
        self.take()
        node = Node.constant(N.NOVALUE, b"", PM_TYPE_32)
        if _LEVEL_7:
            _SPEC.desc = node.desc
        if self.peek() == L.RPAREN:
            self.take()
            return node
        with self._frame(_follow("metadata keyword", fname + "(")):
            self.speclist(node)
        return node

    def speclist(self, node: Node) -> None:
        """The "keyword=value, ..." of mkconst() and novalue() up to its ")": the parts
        given, marked in node.flags, and (6.3) node.meta, over libpcp's `specdesc` (what
        mkconst() starts from its defaults; 6.3's novalue(<list>) from whatever the last
        list left there), and node.desc what results."""
        _, ctype, indom, sem, units = _SPEC.desc
        while True:
            tag = self.peek()
            if tag not in _SPEC_KEYWORDS:
                raise self.fail()
            self.take()
            self.expect(L.ASSIGN)
            if tag == L.META:
                node.meta = Node.name(self.expect(L.NAME))
            else:
                if self.peek() not in _SPEC_VALUES:
                    raise self.fail()
                value = self.take().decode("latin-1")
                if tag == L.TYPE:
                    ctype = _SPEC_TYPES.get(value.upper(), -1)
                    if ctype < 0:
                        raise self.action_error("Unrecognized value for type '%s'" % value)
                    node.flags |= META_TYPE
                elif tag == L.SEMANTICS:
                    sem = _SPEC_SEMS.get(value.lower(), -1)
                    if sem < 0:
                        raise self.action_error("Unrecognized value for semantics '%s'"
                                                % value)
                    node.flags |= META_SEM
                elif tag == L.INDOM:
                    indom = _indom_value(value)
                    if indom is None:
                        raise self.action_error("Illegal indom: '%s'" % value)
                    node.flags |= META_INDOM
                else:
                    try:
                        parsed, _ = pmParseUnitsStr(value.encode("latin-1"))
                    except pmErr as e:
                        raise self.action_error("Illegal units: '%s'" % _message_of(e))
                    units = int(parsed) & 0xFFFFFFFF
                    node.flags |= META_UNITS
                _SPEC.desc = (PM_ID_NULL, ctype, indom, sem, units)
            if self.peek() == L.RPAREN:
                self.take()
                break
            self.expect(L.COMMA)
        node.desc = (PM_ID_NULL, ctype, indom, sem, units)


class _Spec:
    """libpcp's static `specdesc`, which outlives a parse (zeros until a list is read)."""
    desc = (0, 0, 0, 0, 0)


_SPEC = _Spec()


def _indom_value(text: str) -> Optional[int]:
    """7.x's indom=: "null" or D.S (domain below 511, serial below 2^22), else None."""
    if text.lower() == "null":
        return PM_INDOM_NULL
    domain, dot, serial = text.partition(".")
    if not dot or not domain.isdigit() or not serial.isdigit():
        return None
    d, s = int(domain), int(serial)
    if d >= 511 or s >= 1 << 22:
        return None
    return (d << 22) | s


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
