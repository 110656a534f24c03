"""The JSON tokenizer of libpcp's label code (the jsonsl library's behaviour): it walks
label JSON byte by byte, with jsonsl's nesting limits and error points, and calls the
label parser (pcp._libpcp.labels) at each element, so labels are accepted and refused
exactly where libpcp 6.0.3 accepts and refuses them."""
from __future__ import annotations

from errno import EINVAL

TYPE_CHECKING = False      # typing's, without importing typing (a start's cost)
if TYPE_CHECKING:
    from typing import Any, List

_MAX_RECURSION_DEPTH = 256      # jsonsl stack size
MAX_DESCENT_LEVEL = 64         # no callbacks at or beyond this level

# jsonsl state types (only identity matters here)
T_ROOT, T_STRING, T_HKEY, T_OBJECT, T_LIST, T_SPECIAL = range(6)

# jsonsl "special" (bareword) sub-type flags
_SP_SIGNED = 1 << 0
_SP_UNSIGNED = 1 << 1
_SP_TRUE = 1 << 2
_SP_FALSE = 1 << 3
_SP_NULL = 1 << 4
_SP_FLOAT = 1 << 5
_SP_EXPONENT = 1 << 6
_SP_INF = 1 << 9
_SP_ZERO = (1 << 11) | _SP_UNSIGNED
_SP_DASH = 1 << 12
_SP_NUMERIC = _SP_SIGNED | _SP_UNSIGNED

_SPECIAL_START = {ord('-'): _SP_DASH, ord('0'): _SP_ZERO,
                  ord('f'): _SP_FALSE, ord('n'): _SP_NULL, ord('t'): _SP_TRUE}
for _d in b"123456789":
    _SPECIAL_START[_d] = _SP_UNSIGNED
_SPECIAL_END = frozenset(b'\t\n\r ",:[\\]{}')
_WHITESPACE = frozenset(b"\t\n\r ")
_ESCAPES = frozenset(b'"/\\bfnrtu')
# bytes that stop the fast scan through a string body
_STRING_STOP = frozenset(list(range(0x00, 0x14)) + [ord('"'), ord('\\')])
_DIGITS = frozenset(b"0123456789")


class ParseError(Exception):
    """Raised inside the simulation with a negative errno-style code."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class _State:
    __slots__ = ("kind", "level", "nelem", "special", "speclen", "pos_begin")

    def __init__(self, level: int) -> None:
        self.kind = T_ROOT
        self.level = level
        self.nelem = 0
        self.special = 0
        self.speclen = 0
        self.pos_begin = 0


def tokenize(data: bytes, parser: Any) -> None:
    """Feed ``data`` through a jsonsl-compatible tokenizer.

    Raises ParseError(-EINVAL) where jsonsl would report an error (the
    libpcp error handler stops the parse); simply returns at end of input,
    whatever state the tokenizer is in (Q9).
    """
    stack = [_State(0)]
    level = 0
    can_insert = True
    expecting = 0
    tok_last = 0
    in_escape = False
    n = len(data)
    i = 0

    def fail() -> None:
        raise ParseError(-EINVAL)

    def callback_ok(st: _State) -> bool:
        return st.level < MAX_DESCENT_LEVEL

    while i < n:
        st = stack[level]
        c = data[i]
        goto = None
        if st.kind in (T_STRING, T_HKEY):
            if in_escape:
                in_escape = False
                if c not in _ESCAPES:
                    fail()
                i += 1
                continue
            while i < n and data[i] not in _STRING_STOP:
                i += 1
            if i >= n:
                return
            c = data[i]
            if c == 0x22:
                goto = "quote"
            elif c == 0x5C:
                goto = "escape"
            else:
                fail()
        elif st.kind == T_SPECIAL:
            flags = st.special
            numeric_entry = False
            if flags in (_SP_UNSIGNED, _SP_SIGNED):
                while i < n and data[i] in _DIGITS:
                    i += 1
                if i >= n:
                    return
                c = data[i]
                numeric_entry = True
            elif flags == _SP_DASH:
                if c not in _DIGITS:
                    fail()
                st.special = (_SP_ZERO | _SP_SIGNED) if c == 0x30 else _SP_SIGNED
                i += 1
                continue
            elif flags == _SP_ZERO:
                if c in _DIGITS:
                    fail()
                st.special = _SP_UNSIGNED
                numeric_entry = True
            elif (flags & _SP_NUMERIC) and not (flags & _SP_INF):
                numeric_entry = True
            pop_now = False
            if numeric_entry:
                if c in _DIGITS:
                    tok_last = ord('1')
                    i += 1
                    continue
                if c == 0x2E:
                    if st.special & _SP_FLOAT:
                        fail()
                    st.special |= _SP_FLOAT
                    tok_last = ord('.')
                    i += 1
                    continue
                if c in (0x65, 0x45):
                    if st.special & _SP_EXPONENT:
                        fail()
                    st.special |= _SP_EXPONENT
                    tok_last = ord('e')
                    i += 1
                    continue
                if c in (0x2D, 0x2B):
                    if tok_last != ord('e'):
                        fail()
                    tok_last = ord('-')
                    i += 1
                    continue
                if c not in _SPECIAL_END:
                    fail()
                pop_now = True
            if not pop_now and c not in _SPECIAL_END:
                st.speclen += 1
                lit = {_SP_TRUE: b"true", _SP_FALSE: b"false",
                       _SP_NULL: b"null"}.get(st.special)
                if lit is not None:
                    k = i - st.pos_begin
                    if k >= len(lit) or c != lit[k]:
                        fail()
                i += 1
                continue
            # special value ends at data[i]
            can_insert = False
            fl = st.special
            if fl in (_SP_UNSIGNED, _SP_SIGNED):
                pass
            elif fl in (_SP_ZERO, _SP_ZERO | _SP_SIGNED):
                st.special = _SP_UNSIGNED
            elif fl == _SP_DASH:
                fail()
            elif fl & _SP_NUMERIC:
                if tok_last != ord('1'):
                    fail()
            elif fl == _SP_TRUE or fl == _SP_NULL:
                if st.speclen != 4:
                    fail()
            elif fl == _SP_FALSE:
                if st.speclen != 5:
                    fail()
            if callback_ok(st):
                parser.pop(T_SPECIAL, st.level, i)
            level -= 1
            st = stack[level]
            expecting = ord(',')
            tok_last = 0
            if c in _WHITESPACE:
                i += 1
                continue
            goto = "structural"
        elif c in _WHITESPACE:
            i += 1
            continue
        elif c in _SPECIAL_START:
            goto = "special_begin"

        if goto is None:
            if c == 0x22:
                goto = "quote"
            elif c == 0x5C:
                goto = "escape"
            else:
                goto = "structural"

        if goto == "quote":
            can_insert = False
            kind = st.kind
            if kind in (T_STRING, T_HKEY):
                if callback_ok(st):
                    parser.pop(kind, st.level, i)
                level -= 1
            elif kind == T_OBJECT:
                st.nelem += 1
                if (st.nelem - 1) % 2:
                    if tok_last != ord(':'):
                        fail()
                    expecting = ord(',')
                    tok_last = 0
                    level = _push(stack, level, T_STRING, i)
                    if callback_ok(stack[level]):
                        parser.push(T_STRING, i)
                else:
                    if expecting != 0x22:
                        fail()
                    tok_last = 0
                    expecting = ord(':')
                    level = _push(stack, level, T_HKEY, i)
                    if callback_ok(stack[level]):
                        parser.push(T_HKEY, i)
            elif kind == T_LIST:
                st.nelem += 1
                level = _push(stack, level, T_STRING, i)
                expecting = ord(',')
                tok_last = 0
                if callback_ok(stack[level]):
                    parser.push(T_STRING, i)
            else:
                fail()
            i += 1
            continue
        if goto == "escape":
            if st.kind not in (T_STRING, T_HKEY):
                fail()
            in_escape = True
            i += 1
            continue

        # structural token (or the start of a special value)
        if goto == "structural" and c == 0x3A:          # ':'
            if expecting != c:
                fail()
            tok_last = c
            can_insert = True
            expecting = 0x22
            i += 1
            continue
        if goto == "structural" and c == 0x2C:          # ','
            if expecting != c:
                fail()
            if st.kind != T_OBJECT:
                can_insert = True
            tok_last = c
            expecting = 0x22
            i += 1
            continue
        if goto == "structural" and c in (0x7B, 0x5B):  # '{' '['
            if not can_insert:
                fail()
            if st.nelem % 2 == 0 and st.kind == T_OBJECT:
                fail()
            st.nelem += 1
            kind = T_OBJECT if c == 0x7B else T_LIST
            level = _push(stack, level, kind, i)
            stack[level].nelem = 0
            can_insert = True
            if kind == T_OBJECT:
                expecting = 0x22
            if callback_ok(stack[level]):
                parser.push(kind, i)
            tok_last = 0
            i += 1
            continue
        if goto == "structural" and c in (0x7D, 0x5D):  # '}' ']'
            if tok_last == 0x2C:
                fail()                      # trailing comma
            can_insert = False
            expecting = ord(',')
            tok_last = 0
            if level == 0:
                fail()                      # bracket mismatch at the root
            if c == 0x5D:
                if st.kind != T_LIST:
                    fail()
            else:
                if st.kind != T_OBJECT:
                    fail()
                if st.nelem and st.nelem % 2:
                    fail()
            level -= 1
            if callback_ok(st):
                parser.pop(st.kind, st.level, i)
            i += 1
            continue
        # special value start
        if st.kind != T_SPECIAL:
            sflags = _SPECIAL_START.get(c, 0)
            if not sflags:
                fail()
            if st.nelem % 2 == 0 and st.kind == T_OBJECT:
                fail()
            st.nelem += 1
            if not can_insert:
                fail()
            level = _push(stack, level, T_SPECIAL, i)
            ns = stack[level]
            ns.special = sflags
            ns.speclen = 1
            tok_last = ord('1') if sflags == _SP_UNSIGNED else ord('-')
            ns.nelem = 0
            if callback_ok(ns):
                parser.push(T_SPECIAL, i)
        i += 1


def _push(stack: List[_State], level: int, kind: int, pos: int) -> int:
    if level >= _MAX_RECURSION_DEPTH - 1:
        raise ParseError(-EINVAL)
    level += 1
    if level == len(stack):
        stack.append(_State(level))
    st = stack[level]
    st.kind = kind
    st.pos_begin = pos
    st.nelem = 0
    st.special = 0
    st.speclen = 0
    return level
