"""Label set merging without libpcp: ``pmMergeLabels`` and ``pmMergeLabelSets``.

libpcp (6.0.3) does not use a conventional JSON parser for labels.  It
drives the streaming "jsonsl" tokenizer and turns its push/pop events into
a whitespace-free copy of the text (called JSONB below) plus an index of
(name offset, name length, flags, value offset, value length) records.
Merging then walks two sorted indexes side by side and prints
``"name":value,`` pairs into the result buffer.

The official binding's answers come straight out of that machinery, so
this module re-implements it as a small simulation instead of using the
``json`` module: a tokenizer with jsonsl's acceptance rules and event
order, the label-index builder fed by those events, the sorted merge, and
the buffer handling of the callers.  The observable quirks that fall out
of libpcp's code are kept on purpose (each one has a test):

Q1  Compound names are compared by their *leaf* length.  A nested label
    ``{"a":{"x":3}}`` has name length 1 ("x", printed as "a.x") while an
    already flattened ``"a.x"`` has length 3, so the merge never sees them
    as the same label and prints both:
    ``['{"b":1,"a":{"x":1,"y":2}}','{"a":{"x":3},"c":"s"}']`` gives
    ``{"a.x":3,"a.x":1,"a.y":2,"b":1,"c":"s"}``.
Q2  The compound-name stack counts the terminating NUL of its first
    component in its length, so a second nesting level is appended after
    that NUL and lost: ``{"a":{"b":{"c":1}}}`` gives ``{"a.c":1}``.
Q3  Leaving a second nesting level throws the whole stack away (no dot is
    visible in the C string), so a later sibling is named with a NULL
    stack, which glibc prints as "(null)", cut to the name length + 1.
Q4  An array's value length is measured in the *input* text, but its
    value offset is taken in the whitespace-free output, so whitespace
    inside an array shifts the printed value to the left:
    ``{"a":[1, 2]}`` gives ``{"a"::[1,2]}``.
Q5  An array nested directly in an array loses the outer array's start
    (libpcp then does arithmetic on a NULL pointer); the value printed is
    undefined memory.  We print an empty value, which is what the
    reference prints in practice (``{"a":[[1]]}`` gives ``{"a":}``).
Q6  An object inside an array adds the array's name as a prefix:
    ``{"a":[1,{"b":2}]}`` gives ``{"a.b":2}``.
Q7  Successive results are copied back with ``memcpy`` without their
    terminating NUL, so when a merge result is shorter than the previous
    one the tail of the older text is re-parsed as trailing garbage, which
    normally makes the next step fail with -EINVAL.
Q8  Input that produces no labels at all (``{}``, ``[1]``, ``1``, or an
    unterminated ``{"a":1``) leaves the result buffer untouched, so the
    answer is the empty string, not ``{}``.
Q9  jsonsl is a streaming tokenizer: end of input inside a container is
    not an error, values completed before the end still count
    (``{"a":"x"`` gives ``{"a":"x"}``), and several top-level objects
    separated by commas are all read.
Q10 Non-ASCII bytes are dropped from the answer (the binding decodes the
    result as ASCII with errors ignored) and are not letters in names.
Q11 ``-01`` is accepted as a number (``01`` is not), ``1.e5`` is accepted,
    ``\\u`` escapes are not checked for hex digits; numbers keep their
    original spelling because values are copied as text.
"""
from __future__ import annotations

import ctypes
import functools
import json as _json
import operator
from errno import E2BIG, EINVAL

from pcp._core.constants import PM_MAXLABELJSONLEN, PM_MAXLABELS
from pcp._core.cint import wrap_int32
from pcp._core.errors import pmErr, report_unraisable
from pcp._core.level import API_LEVEL
from pcp._core.wire import PM_LABEL_COMPOUND
from pcp._libpcp.label_json import T_HKEY, T_LIST, T_OBJECT, T_STRING, ParseError, tokenize

TYPE_CHECKING = False      # typing's, without importing typing (a start's cost)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

MAXLABELNAMELEN = (1 << 8) - 1
# 7.x: a label name may start with a digit or "_", and a label whose name is invalid is
# left out (with its value) instead of failing the whole set
_SKIP_INVALID = API_LEVEL >= (7, 2)
MAXLABELSET = PM_MAXLABELS * 6

# ---------------------------------------------------------------------------
# compound-name hash (models libpcp's __pmHash for same-key ordering)

class _NameHash:
    """Offset-keyed compound names.

    libpcp may store two names under one key (a dotted name inside a nested
    object); a lookup returns the newest, except that each table growth
    re-links chains and so reverses the order of same-key entries.  Only
    that ordering is modelled; bucket layout is otherwise irrelevant.
    """

    __slots__ = ("hsize", "nodes", "table")

    def __init__(self) -> None:
        self.hsize = 0
        self.nodes = 0
        self.table: Dict[int, List[bytes]] = {}

    def add(self, key: int, name: bytes) -> None:
        self.nodes += 1
        if self.hsize == 0:
            self.hsize = 1
        elif self.nodes // 4 > self.hsize:
            size = self.hsize * 2
            if size % 2:
                size += 1
            if size % 3:
                size += 2
            if size % 5:
                size += 2
            self.hsize = size
            for chain in self.table.values():
                chain.reverse()
        self.table.setdefault(key, []).insert(0, name)

    def get(self, key: int) -> Optional[bytes]:
        chain = self.table.get(key)
        return chain[0] if chain else None

    def clear(self) -> None:
        self.table.clear()
        self.nodes = 0


def _cstr(buf: bytes, off: int, limit: Optional[int] = None) -> bytes:
    """C string at ``buf[off]`` (up to NUL), at most ``limit`` bytes."""
    if off >= len(buf):
        return b""
    end = len(buf) if limit is None else min(len(buf), off + max(limit, 0))
    nul = buf.find(b"\0", off, end)
    return bytes(buf[off:end if nul < 0 else nul])


def _strncmp(a: bytes, b: bytes, n: int) -> int:
    a, b = a[:n], b[:n]
    return (a > b) - (a < b)


class _Label:
    """One pmLabel record (bit-field widths as in pmapi.h)."""

    __slots__ = ("name", "namelen", "flags", "value", "valuelen")

    def __init__(self, name: int, namelen: int, flags: int,
                 value: int, valuelen: int) -> None:
        self.name = name & 0xFFFF
        self.namelen = namelen & 0xFF
        self.flags = flags & 0xFF
        self.value = value & 0xFFFF
        self.valuelen = valuelen & 0xFFFF


def _label_name(lp: Any, json: bytes, hsh: Optional[_NameHash]) -> Tuple[bytes, int]:
    """(name C string, its length) as label_name_length() would see it."""
    if (lp.flags & PM_LABEL_COMPOUND) and hsh is not None:
        full = hsh.get(lp.name)
        if full is not None:
            return full, len(full)
    return _cstr(json, lp.name, lp.namelen), lp.namelen


def _namecmp(a: Any, ajson: bytes, ah: Optional[_NameHash],
             b: Any, bjson: bytes, bh: Optional[_NameHash]) -> int:
    # Q1: the length that decides which side is "longer" is the pmLabel
    # namelen (the leaf name for compound labels), not the printed name.
    if a.namelen > b.namelen:
        bname, blen = _label_name(b, bjson, bh)
        sts = _strncmp(_label_name(a, ajson, ah)[0], bname, blen)
        return sts if sts else 1
    aname, alen = _label_name(a, ajson, ah)
    bname = _label_name(b, bjson, bh)[0]
    if a.namelen < b.namelen:
        sts = _strncmp(aname, bname, alen)
        return sts if sts else -1
    return _strncmp(aname, bname, alen)


# ---------------------------------------------------------------------------
# the label parser (jsonsl tokenizer + libpcp's event handler)

class _Parsed:
    """Result of parsing one label string: JSONB text, index and names."""

    __slots__ = ("json", "labels", "hash", "size")

    def __init__(self, json: bytes, labels: List[_Label],
                 hsh: _NameHash, size: int) -> None:
        self.json = json
        self.labels = labels
        self.hash = hsh
        self.size = size


class _LabelParser:
    """State of libpcp's label parser while jsonsl feeds it events."""

    def __init__(self, text: bytes, flags: int, maxlabels: int,
                 buflen: int) -> None:
        self.text = text
        self.out = bytearray(PM_MAXLABELJSONLEN + 1)
        self.bp = 0                 # write offset in out
        self.buflen = buflen        # bytes left in out
        self.flags = flags
        self.maxlabels = maxlabels
        self.labels: List[_Label] = []
        self.hash = _NameHash()
        self.error = 0
        self.comma = False
        self.token = -1             # input offset of the current token
        self.array: Optional[int] = None
        self.name = 0               # 0: no active name
        self.namelen = 0
        self.namelevel = 0
        self.compound_style = False
        self.stackdepth = 0
        self.stack: Optional[bytearray] = None
        self.stacklen = 0
        # 7.x: depth inside a label being left out, labels left out, and the output
        # state before the current name (put back when it is left out)
        self.skipping = 0
        self.skipped = 0
        self.rewind = (0, 0, False)

    # -- output buffer ------------------------------------------------------
    def _stash(self, data: bytes) -> None:
        n = len(data)
        if n >= self.buflen or n == 0:
            return              # libpcp ignores the -E2BIG here
        self.out[self.bp:self.bp + n] = data
        self.out[self.bp + n] = 0
        self.bp += n
        self.buflen -= n

    # -- compound name stack ------------------------------------------------
    def _push_name(self) -> None:
        if not self.name:
            self.compound_style = False
            return
        leaf = bytes(self.out[self.name:self.name + self.namelen])
        if self.stack is None:
            size = self.namelen + 1
            self.stack = bytearray(leaf[:size - 1] + b"\0")
        else:
            # Q2: stacklen may still count the first component's NUL.
            size = self.namelen + 1 + self.stacklen + 1
            piece = (b"." + leaf)[:size - self.stacklen - 1] + b"\0"
            del self.stack[self.stacklen:]
            self.stack.extend(piece)
            if len(self.stack) < size:
                self.stack.extend(b"\0" * (size - len(self.stack)))
        self.stacklen = size
        self.compound_style = True
        self.stackdepth += 1

    def _pop_name(self) -> None:
        if self.stackdepth > 1:
            self.compound_style = True
            self.stackdepth -= 1
        else:
            self.compound_style = False
            self.stackdepth = 0
        if self.stack is None:
            return
        visible = _cstr(self.stack, 0)
        dot = visible.rfind(b".")
        if dot >= 0:
            self.stack[dot] = 0
            self.stacklen = dot
        else:
            # Q3: the whole stack goes, even if stackdepth says otherwise
            self.stack = None
            self.stacklen = 0

    def _add_value(self, valuelen: int, noop: bool) -> None:
        if len(self.labels) >= self.maxlabels:
            self.error = -E2BIG
        else:
            if not noop and self.compound_style:
                size = self.stacklen + 1 + self.namelen + 1
                prefix = b"(null)" if self.stack is None else _cstr(self.stack, 0)
                leaf = bytes(self.out[self.name:self.name + self.namelen])
                full = (prefix + b"." + leaf)[:size - 1]
                self.hash.add(self.name, full)
            flags = self.flags | (PM_LABEL_COMPOUND if self.compound_style else 0)
            value = (self.bp - valuelen) & 0xFFFFFFFF
            self.labels.append(_Label(self.name, self.namelen, flags,
                                      value, valuelen))
        self.name = self.namelen = 0

    # -- jsonsl events --------------------------------------------------------
    def push(self, kind: int, pos: int) -> None:
        if self.skipping:
            if kind in (T_OBJECT, T_LIST):
                self.skipping += 1
            return
        if kind == T_HKEY:
            self.rewind = (self.bp, self.buflen, self.comma)
        if kind == T_OBJECT:
            if self.comma:
                self._stash(b",")
            self._stash(b"{")
            self._push_name()
            self.comma = False
        elif kind == T_LIST:
            if self.comma:
                self._stash(b",")
            self._stash(b"[")
            self.array = pos
            self.comma = False
        elif kind == T_HKEY:
            if self.comma:
                self._stash(b",")
            self.token = pos
            self.comma = False
        else:                       # string or special
            if self.comma:
                self._stash(b",")
            self.token = pos
            self.comma = True

    def pop(self, kind: int, level: int, at: int) -> None:
        if self.skipping:
            if kind in (T_OBJECT, T_LIST):
                self.skipping -= 1
                if self.skipping == 1:
                    self.skipping = 0
            elif kind != T_HKEY:
                if self.skipping == 1:
                    self.skipping = 0
                self.token = -1
            return
        if kind == T_OBJECT:
            self._stash(b"}")
            if self.namelevel == level and self.name:
                self._add_value(2, True)        # empty map "{}"
            self._pop_name()
            self.comma = True
        elif kind == T_LIST:
            self._stash(b"]")
            if self.array is None:
                # Q5: libpcp subtracts a NULL pointer; model as "unknown"
                length = -1
            else:
                length = at - self.array + 1
            if self.namelevel == level and self.name:
                if length < 0:
                    self._add_garbage()
                else:
                    self._add_value(length, False)
            self.array = None
            self.comma = True
        elif kind == T_HKEY:
            start = self.token + 1
            length = at - start
            nested = bool(self.flags & PM_LABEL_COMPOUND)
            sts = _verify_name(self.text[start:at], nested)
            if sts < 0 and _SKIP_INVALID:
                self.skipping = 1
                self.skipped += 1
                self.bp, self.buflen, self.comma = self.rewind
                self.token = -1
                return
            if sts < 0:
                self.error = sts
            self.name = self.bp + 1
            if sts > 0:
                self.hash.add(self.name, bytes(self.text[start:at]))
            self.namelen = length
            self.namelevel = level
            self._stash(self.text[self.token:at])
            self._stash(b'":')
            self.token = -1
        else:                                   # string or special
            length = at - self.token
            if kind == T_STRING:
                length += 1
            self._stash(self.text[self.token:self.token + length])
            if self.namelevel == level and self.name:
                self._add_value(length, False)
            self.token = -1

    def _add_garbage(self) -> None:
        # Point the value at a never-written NUL byte near the end of the
        # buffer, so it prints as nothing (see Q5).
        self._add_value(0, False)
        self.labels[-1].value = PM_MAXLABELJSONLEN - 1
        self.labels[-1].valuelen = 1


def _verify_name(name: bytes, nested: bool) -> int:
    if not name:
        return -EINVAL
    if len(name) >= MAXLABELNAMELEN:
        return -E2BIG
    first = name[0]
    if not _SKIP_INVALID and not (0x41 <= first <= 0x5A or 0x61 <= first <= 0x7A):
        return -EINVAL
    sts = 0
    for ch in name[0 if _SKIP_INVALID else 1:]:
        if 0x30 <= ch <= 0x39 or 0x41 <= ch <= 0x5A or 0x61 <= ch <= 0x7A \
                or ch == 0x5F:
            continue
        if ch == 0x2E and nested:
            sts = 1
            continue
        return -EINVAL
    return sts


def _parse(text: bytes, flags: int, maxlabels: int = MAXLABELSET,
           buflen: int = PM_MAXLABELJSONLEN) -> _Parsed:
    """__pmParseLabels: JSONB text, sorted label index, compound names."""
    parser = _LabelParser(text, flags, maxlabels, buflen)
    try:
        tokenize(text, parser)
    except ParseError as exc:
        parser.error = exc.code
    if parser.error:
        raise ParseError(parser.error)
    out = bytes(parser.out)
    if not parser.labels:
        if parser.skipped:
            raise ParseError(-EINVAL)       # 7.x: every label left out
        return _Parsed(b"", [], _NameHash(), 0)
    hsh = parser.hash

    def cmp(a: _Label, b: _Label) -> int:
        return _namecmp(a, out, hsh, b, out, hsh)

    labels = sorted(parser.labels, key=functools.cmp_to_key(cmp))
    for a, b in zip(labels, labels[1:]):
        if cmp(a, b) == 0:
            raise ParseError(-EINVAL)      # duplicate label name
    return _Parsed(out, labels, hsh, buflen - parser.buflen)


# ---------------------------------------------------------------------------
# merging

class _Output:
    """The caller's result buffer plus the write position and space left."""

    def __init__(self, buf: bytearray, buflen: int) -> None:
        self.buf = buf
        self.bp = 0
        self.left = buflen

    def write(self, data: bytes) -> None:
        n = min(len(data), max(self.left - 1, 0))
        self.buf[self.bp:self.bp + n] = data[:n]
        if self.left > 0:
            self.buf[self.bp + n] = 0
        self.bp += n
        self.left -= n


def _stash_label(lp: Any, json: bytes, hsh: Optional[_NameHash],
                 olabels: Optional[List[_Label]], out: _Output,
                 filt: Optional[Callable[[Any, bytes], int]]) -> None:
    if filt is not None and filt(lp, json) == 0:
        return
    name, namelen = _label_name(lp, json, hsh)
    name = name[:namelen]
    if namelen + 2 + 1 + lp.valuelen + 1 >= out.left:
        raise ParseError(-E2BIG)
    start = out.bp
    if lp.valuelen:
        value = _cstr(json, lp.value, lp.valuelen)
        valuelen = lp.valuelen
    else:
        value = b"null"
        valuelen = 4
    out.write(b'"' + name + b'":' + value + b",")
    if olabels is not None:
        olabels.append(_Label(start + 1, namelen, lp.flags,
                              start + 1 + namelen + 2, valuelen))


def _merge_sets(alabels: Sequence[Any], ajson: bytes, ah: Optional[_NameHash],
                blabels: Sequence[Any], bjson: bytes, bh: Optional[_NameHash],
                olabels: Optional[List[_Label]], out: _Output,
                filt: Optional[Callable[[Any, bytes], int]]) -> int:
    """__pmMergeLabelSets: b-group values win over a-group ones."""
    na, nb = len(alabels), len(blabels)
    if out.left <= 1:
        raise ParseError(-E2BIG)
    out.write(b"{")
    i = j = 0
    while i < na or j < nb:
        if i < na:
            if j >= nb:
                if j and _namecmp(alabels[i], ajson, ah,
                                  blabels[j - 1], bjson, bh) == 0:
                    i += 1
                else:
                    i += 1
                    _stash_label(alabels[i - 1], ajson, ah, olabels, out, filt)
            elif _namecmp(alabels[i], ajson, ah, blabels[j], bjson, bh) < 0:
                if j and _namecmp(alabels[i], ajson, ah,
                                  blabels[j - 1], bjson, bh) == 0:
                    i += 1
                else:
                    i += 1
                    _stash_label(alabels[i - 1], ajson, ah, olabels, out, filt)
        if j < nb:
            if i >= na or _namecmp(alabels[i], ajson, ah,
                                   blabels[j], bjson, bh) >= 0:
                j += 1
                _stash_label(blabels[j - 1], bjson, bh, olabels, out, filt)
    if na or nb:
        # overwrite the final comma (libpcp does this even when the filter
        # dropped every label, eating the "{"); libpcp counts the space left
        # down, not up, when it steps back, so a result within three bytes of
        # the buffer's end is refused
        out.bp -= 1
        out.left -= 1
    if 2 >= out.left:
        raise ParseError(-E2BIG)
    out.write(b"}")
    return out.bp


def _merge_two(a: bytes, b: bytes, result: bytearray, buflen: int,
               flags: int) -> int:
    """__pmMergeLabels for two label strings into ``result``."""
    pa = _parse(a, flags) if a else None
    pb = _parse(b, flags) if b else None
    if not (pa and pa.size) and not (pb and pb.size):
        return 0
    empty = _Parsed(b"", [], _NameHash(), 0)
    pa = pa or empty
    pb = pb or empty
    return _merge_sets(pa.labels, pa.json, pa.hash, pb.labels, pb.json,
                       pb.hash, None, _Output(result, buflen), None)


def _to_cbytes(label: Any) -> bytes:
    """What ``c_char_p(label.encode('utf-8'))`` hands to C."""
    data = label.encode("utf-8")
    nul = data.find(b"\0")
    return data if nul < 0 else data[:nul]


def _answer(buf: bytearray) -> str:
    nul = buf.find(b"\0")
    raw = bytes(buf if nul < 0 else buf[:nul])
    return raw.decode("ascii", "ignore")         # Q10


def merge_labels(labels: Any) -> str:
    """pmMergeLabels: merge label JSON strings, later ones taking precedence.

    Raises pmErr(-EINVAL) for an empty list or unparseable input and
    pmErr(-E2BIG) when the result does not fit in PM_MAXLABELJSONLEN.
    """
    sets = labels if isinstance(labels, list) else [labels]
    encoded = [_to_cbytes(s) for s in sets]       # AttributeError like ref
    if not encoded:
        raise pmErr(-EINVAL)
    buflen = PM_MAXLABELJSONLEN
    result = bytearray(buflen)
    work = bytearray(PM_MAXLABELJSONLEN)
    used = 0
    try:
        for text in encoded:
            if used:
                # Q7: copied without the NUL; an older, longer tail remains
                work[:used] = result[:used]
            used = _merge_two(_cstr(work, 0), text, result, buflen,
                              PM_LABEL_COMPOUND)
            if used >= buflen or used >= PM_MAXLABELJSONLEN:
                raise ParseError(-E2BIG)
    except ParseError as exc:
        raise pmErr(exc.code) from None
    return _answer(result)


# ---------------------------------------------------------------------------
# label sets

class _SetView:
    """A label set reduced to what the merge needs."""

    __slots__ = ("json", "labels", "hash", "source")

    def __init__(self, json: bytes, labels: List[Any],
                 hsh: Optional[_NameHash], source: Any) -> None:
        self.json = json
        self.labels = labels
        self.hash = hsh
        self.source = source


def parse_label_set(text: Any, flags: int = 0) -> Tuple[bytes, List[Tuple[int, int, int, int, int]], Dict[int, bytes]]:
    """Parse a label JSON string the way libpcp builds a pmLabelSet.

    Returns (JSONB bytes without trailing NULs, [(name, namelen, flags,
    value, valuelen), ...] sorted, {name offset: compound name}).  Raises
    pmErr on invalid input.  Offered to other modules that build
    pmLabelSet structures from label text.
    """
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    try:
        parsed = _parse(data, flags)
    except ParseError as exc:
        raise pmErr(exc.code) from None
    names = {k: v[0] for k, v in parsed.hash.table.items() if v}
    return (parsed.json[:parsed.size],
            [(l.name, l.namelen, l.flags, l.value, l.valuelen)
             for l in parsed.labels], names)


def _dict_to_view(mapping: Dict[Any, Any]) -> _SetView:
    parts = []
    for name, value in mapping.items():
        parts.append(_json.dumps(str(name)) + ":" +
                     _json.dumps(value, separators=(",", ":")))
    text = ("{" + ",".join(parts) + "}").encode("utf-8")
    parsed = _parse(text, 0)
    return _SetView(parsed.json, list(parsed.labels), parsed.hash, mapping)


def _object_to_view(obj: Any) -> Optional[_SetView]:
    nlabels = int(getattr(obj, "nlabels", 0))
    if nlabels < 0:
        return None                                 # skipped, as in libpcp
    json = getattr(obj, "json", None)
    if json is None:
        json = b""
    elif isinstance(json, str):
        json = json.encode("utf-8")
    raw = getattr(obj, "labels", None)
    labels = []
    for k in range(nlabels):
        lp = raw[k]
        labels.append(_Label(int(lp.name), int(lp.namelen), int(lp.flags),
                             int(lp.value), int(lp.valuelen)))
    hsh = None
    names = getattr(obj, "_compound_names", None)
    if names and getattr(obj, "compound", 1):
        hsh = _NameHash()
        for key, full in names.items():
            if isinstance(full, str):
                full = full.encode("utf-8")
            hsh.add(int(key), bytes(full))
    return _SetView(bytes(json), labels, hsh, obj)


def _make_label_arg(label: _Label) -> Any:
    try:
        from pcp._core.structs import pmLabel  # sibling module
    except ImportError:                         # pragma: no cover
        return label
    lab = pmLabel()
    lab.name = label.name
    lab.namelen = label.namelen
    lab.flags = label.flags
    lab.value = label.value
    lab.valuelen = label.valuelen
    return ctypes.pointer(lab)


def _ctypes_callback_int(callback: Callable[..., Any], *args: Any) -> int:
    """The official binding's filter is a ctypes CFUNCTYPE(c_int, ...) callback called
    from libpcp: its answer is stored as a C int (any __index__ value, cut to 32 bits:
    2**40 is 0); an exception it raises, or an answer that is no integer, goes to
    sys.unraisablehook and libpcp sees what the C return slot held, which on x86-64
    with 6.0.3 keeps the label (measured: every label kept)."""
    try:
        answer = callback(*args)
    except BaseException as err:  # pylint: disable=broad-except
        report_unraisable("Exception ignored on calling ctypes callback function",
                          callback, err)
        return 1
    try:
        return wrap_int32(operator.index(answer))
    except TypeError as err:
        report_unraisable("Exception ignored on converting result of ctypes callback "
                          "function", callback, err, from_callback=False)
        return 1


def merge_label_sets(labelSets: Any, callback: Optional[Callable[[Any, Any, Any], int]] = None,
                     arg: Any = None) -> str:
    """pmMergeLabelSets: merge label sets, later ones taking precedence.

    ``labelSets`` is None (gives "{}"), one label set, or a list whose
    items are label sets, lists of label sets, or None.  A label set is a
    pmLabelSet structure (or any object with inst/nlabels/json/labels and
    optionally a ``_compound_names`` {name offset: "a.b"} mapping) or a
    dict {name: value}.  ``callback(label, json, arg)`` sees every label
    considered for output (a POINTER(pmLabel), the JSON bytes it indexes,
    and ``arg`` passed like the reference does: the address of a C copy of
    a bytes ``arg``, or None); returning 0 drops the label.
    """
    if labelSets is None:
        return "{}"
    if not isinstance(labelSets, list):
        flat = [labelSets]
    else:
        flat = []
        for item in labelSets:
            if isinstance(item, list):
                flat.extend(item)
            elif item is not None:
                flat.append(item)
    keep = ctypes.c_char_p(arg)                 # TypeError for str, like ref
    carg = ctypes.cast(keep, ctypes.c_void_p).value

    if callback is not None:
        def filt(label: Any, json: bytes) -> int:
            nul = json.find(b"\0")
            text = json if nul < 0 else json[:nul]
            return _ctypes_callback_int(callback, _make_label_arg(label), text or None, carg)
    else:
        filt = None

    try:
        if not flat:
            raise ParseError(-EINVAL)
        views = []
        for item in flat:
            if isinstance(item, dict):
                views.append(_dict_to_view(item))
            else:
                views.append(_object_to_view(item))
        buflen = PM_MAXLABELJSONLEN
        result = bytearray(buflen)
        olabels: List[_Label] = []
        used = 0
        for view in views:
            if view is None:
                continue
            if used > 0:
                work = bytes(result[:used])
                working = list(olabels)
            else:
                work = b""
                working = []
            olabels = []
            used = _merge_sets(working, work, _NameHash(), view.labels,
                               view.json, view.hash, olabels,
                               _Output(result, buflen), filt)
            if used >= buflen or used >= PM_MAXLABELJSONLEN:
                raise ParseError(-E2BIG)
    except ParseError as exc:
        raise pmErr(exc.code) from None
    return _answer(result)


class _ParsedLabelSet:
    """pmLabelSet look-alike built by label_set_from_json()."""

    def __init__(self, text: Any, flags: int = 0) -> None:
        json, labels, names = parse_label_set(text, flags)
        self.inst = 0xFFFFFFFF                  # PM_IN_NULL
        self.nlabels = len(labels)
        self.json = json if labels else None
        self.jsonlen = len(json) if labels else 0
        self.compound = 1 if names else 0
        self.labels = [_Label(*t) for t in labels]
        self._compound_names = names

    def __str__(self) -> str:
        return "{}" if self.json is None else self.json.decode()


def label_set_from_json(text: Any, flags: int = 0) -> Any:
    """A label set parsed like libpcp's __pmParseLabelSet (for merging)."""
    return _ParsedLabelSet(text, flags)


# ---------------------------------------------------------------------------
# growing one label set (archive writers)

class AddedLabels:
    """The pmLabelSet libpcp's __pmAddLabels builds up: JSONB text and its sorted
    pmLabel entries as (name offset, name length, flags, value offset, value length)."""

    __slots__ = ("json", "labels", "hash")

    def __init__(self, json: bytes, labels: List[_Label], hsh: Optional[_NameHash]) -> None:
        self.json = json
        self.labels = labels
        self.hash = hsh

    def entries(self) -> List[Tuple[int, int, int, int, int]]:
        return [(l.name, l.namelen, l.flags, l.value, l.valuelen) for l in self.labels]


def add_labels(current: Optional[AddedLabels], extras: bytes, flags: int) -> AddedLabels:
    """__pmAddLabels: parse `extras` (label JSON) with `flags` on every label and merge it
    into `current` (None for a new set), the new values winning. Raises pmErr with
    libpcp's code (-E2BIG, -EINVAL ...) when it cannot."""
    if len(extras) + 1 >= PM_MAXLABELJSONLEN:
        raise pmErr(-E2BIG)
    try:
        parsed = _parse(extras, flags, PM_MAXLABELS)
        if current is None:
            return AddedLabels(parsed.json[:parsed.size], list(parsed.labels), parsed.hash)
        olabels: List[_Label] = []
        out = _Output(bytearray(PM_MAXLABELJSONLEN), PM_MAXLABELJSONLEN)
        size = _merge_sets(current.labels, current.json, current.hash, parsed.labels,
                           parsed.json, parsed.hash, olabels, out, None)
    except ParseError as exc:
        raise pmErr(exc.code) from None
    if size >= PM_MAXLABELJSONLEN:
        raise pmErr(-E2BIG)
    # libpcp frees the new text's compound names right after the merge, so the set keeps
    # the names of the text it was created from, keyed by offsets into that text's JSONB:
    # a later merge can find a stale name at a label's new offset, and prints that.
    return AddedLabels(bytes(out.buf[:size]), olabels, current.hash)


# ---------------------------------------------------------------------------
# printing label sets (pmPrintLabelSets)

_LABEL_TYPE_TEXT = {0x01: "context", 0x02: "domain", 0x04: "indom", 0x08: "cluster",
                    0x10: "pmid", 0x20: "instances"}


def label_flag_string(flags: int) -> str:
    """__pmLabelFlagString: the label's class, then ",compound" and ",optional"."""
    text = _LABEL_TYPE_TEXT.get(flags & ~(PM_LABEL_COMPOUND | 0x80) & 0xFF, "?")
    if flags & PM_LABEL_COMPOUND:
        text += ",compound"
    if flags & 0x80:
        text += ",optional"
    return text


def label_ident_string(ident: int, type_: int) -> str:
    """__pmLabelIdentString: "Domain 60", "InDom 60.1", "Cluster 60.2", "PMID 60.2.0",
    "Context"."""
    from pcp._libpcp.strings import pmIDStr, pmInDomStr

    kind = type_ & ~(PM_LABEL_COMPOUND | 0x80)
    if kind == 0x02:
        return "Domain %u" % (ident & 0xFFFFFFFF)
    if kind in (0x04, 0x20):
        return "InDom %s" % pmInDomStr(ident)
    if kind == 0x08:
        return "Cluster %s" % pmIDStr(ident).rsplit(".", 1)[0]
    if kind == 0x10:
        return "PMID %s" % pmIDStr(ident)
    if kind == 0x01:
        return "Context"
    return ""


def label_set_lines(ident: int, type_: int, inst: int, json: bytes,
                    labels: Sequence[Tuple[int, int, int, int, int]]) -> List[str]:
    """pmPrintLabelSets' lines for one label set (without newlines)."""
    what = label_ident_string(ident, type_)
    text = json.decode("utf-8", "replace")
    if type_ & 0x20:
        lines = ["    %s[%u] labels (%u bytes): %s" % (what, inst & 0xFFFFFFFF, len(json), text)]
    else:
        lines = ["    %s labels (%u bytes): %s" % (what, len(json), text)]
    for i, (name, namelen, flags, value, valuelen) in enumerate(labels):
        lines.append("        [%d] name(%d,%d) : value(%d,%d) [%s]" % (
            i, name, namelen, value, valuelen, label_flag_string(flags)))
    return lines
