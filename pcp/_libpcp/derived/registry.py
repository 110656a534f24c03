"""The process-wide list of global derived metrics, as libpcp 6.0.3 keeps it: the two
anonymous event metrics first, then the configuration named by PCP_DERIVED_CONFIG
(loaded once, when the first context is made), then whatever the program registers.
Each metric gets the next pmID of domain 511 (cluster 0, item 1 up).

At 7.2 the registry also holds the control options (control.py): $PCP_DERIVED_CONTROL is
applied with the anonymous metrics, "#control" lines as their file is read, and libpcp's
initialisation has two phases: a load of a configuration before any context
(pmLoadDerivedConfig of --derived) comes before PCP_DERIVED_CONFIG's, which waits for the
first context.

The configuration a first context loads is usually the same from one process to the
next (PCP's own files), and parsing its 64 expressions costs more than the rest of a
short program's start: a configuration found clean (every line registered, nothing
reported, no control option) is remembered by `pcp._libpcp.derived.config_cache`, and
the next process that reads the same bytes registers the same metrics without parsing
them; each expression is parsed when its metric is first used. A configuration with any
error is parsed in full every time, so its messages come out when and as libpcp prints
them."""
from __future__ import annotations

import os
import stat
import threading

from pcp._core.config import pmGetConfig
from pcp._core.errors import pmflush, pmprintf
from pcp._core.level import API_LEVEL
from pcp._core.wire import DYNAMIC_DOMAIN
from pcp._libpcp.derived import control
# the parser (and its lexer's regular expressions) comes with the first expression parsed

# 6.3: a configuration line ending in "\\" continues on the next one
_CONTINUATION = API_LEVEL >= (6, 3)
# 7.2: control options ("#control" lines, $PCP_DERIVED_CONTROL) and the two-phase start
_CONTROL = API_LEVEL >= (7, 2)

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, List, Optional, Tuple, Union as _TUnion

    from pcp._libpcp.derived.nodes import Node

_ANON = ((b"event.flags", b"Flags for event records",
          b"An anonymous derived metric that is used to encode the event flags\n"
          b"associated with event records.   See pmUnpackEventRecords(3)."),
         (b"event.missed", b"Count of missed event records",
          b"An anonymous derived metric that is used to encode the number of\n"
          b"event records missed because either the PMDA could not keep up\n"
          b"or the PMAPI client did not collect the event records fast\n"
          b"enough.  See pmUnpackEventRecords(3)."))


def _parse(expr: bytes) -> Node:
    """parse(expr) with the regular expressions of matchinst() compiled; SyntaxErr."""
    # pylint: disable-next=import-outside-toplevel
    from pcp._libpcp.derived import parser
    from pcp._libpcp.derived.regex import compile_pattern  # pylint: disable=import-outside-toplevel

    return parser.parse(expr, compile_pattern)


def _scanner_in_matchinst() -> bool:
    """The scanner state a parse leaves behind (lexer.STATE); False before any parse."""
    import sys  # pylint: disable=import-outside-toplevel

    lexer = sys.modules.get("pcp._libpcp.derived.lexer")
    return lexer is not None and lexer.STATE.in_matchinst


class Metric:
    """One global derived metric: its name, pmID, parsed expression and help text. The
    expression of a metric known to parse (a remembered clean configuration, or the
    anonymous metrics) is parsed when `tree` is first read."""

    __slots__ = ("name", "pmid", "_tree", "_source", "anon", "oneline", "helptext")

    def __init__(self, name: bytes, pmid: int, tree: Optional[Node], anon: bool,
                 source: Optional[bytes] = None) -> None:
        self.name = name
        self.pmid = pmid
        self._tree = tree
        self._source = source       # the expression, until parsed
        self.anon = anon
        self.oneline: Optional[bytes] = None
        self.helptext: Optional[bytes] = None

    @property
    def tree(self) -> Node:
        tree = self._tree
        if tree is None:
            assert self._source is not None
            with REGISTRY.lock:
                if self._tree is None:
                    self._tree = _parse_known_good(self._source)
                    self._source = None
                tree = self._tree
        return tree


def _parse_known_good(expr: bytes) -> Node:
    """The tree of an expression already known to parse from a clean scanner state,
    parsed from that state whatever a later failed parse left (a "/" after an
    unreduced matchinst( starts a pattern), and that state given back afterwards."""
    from pcp._libpcp.derived import lexer  # pylint: disable=import-outside-toplevel

    left = lexer.STATE.in_matchinst
    lexer.STATE.in_matchinst = False
    try:
        return _parse(expr)
    finally:
        lexer.STATE.in_matchinst = left


class Registry:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.metrics: List[Metric] = []
        self.by_name = {}
        self.by_pmid = {}
        self.cluster, self.item = 0, 0
        self.need_init = True
        self.clean_start = True
        self.need_config = True
        self._errmsg = threading.local()
        # control options (7.2): control.py's
        self.limit = control.UNLIMITED
        self.map2novalue = False
        self.control_state = [control.NOT_SET] * (len(control.OPTIONS) + 1)

    # ---- pmDerivedErrStr: the last error, per thread
    @property
    def errmsg(self) -> Optional[str]:
        return getattr(self._errmsg, "text", None)

    @errmsg.setter
    def errmsg(self, text: Optional[str]) -> None:
        self._errmsg.text = text

    def _next_pmid(self) -> Optional[int]:
        if not self.metrics:
            self.cluster, self.item = 0, 1
        elif self.item < 1023:
            self.item += 1
        elif self.cluster < 2047:
            self.cluster, self.item = self.cluster + 1, 1
        else:
            return None
        return (DYNAMIC_DOMAIN << 22) | (self.cluster << 10) | self.item

    def register(self, name: bytes, expr: bytes, anon: bool = False,
                 parsed_later: bool = False) -> Optional[int]:
        """registerderived(): None on success, else the byte offset in `expr` where the
        error was found (-1 before its start) with the message in `errmsg`.
        `parsed_later`: `expr` is known to parse (see Metric.tree)."""
        with self.lock:
            if _CONTROL and self.limit != control.UNLIMITED and \
                    sum(not metric.anon for metric in self.metrics) >= self.limit:
                self.errmsg = "Too many global derived metrics"
                return 0
            if name in self.by_name:
                self.errmsg = "Duplicate global derived metric name"
                return 0
            self.errmsg = None
            tree: Optional[Node] = None
            if not parsed_later:
                # pylint: disable-next=import-outside-toplevel
                from pcp._libpcp.derived.parser import SyntaxErr
                try:
                    tree = _parse(expr)
                except SyntaxErr as e:
                    self.errmsg = e.msg
                    return e.pos
            saved = (self.cluster, self.item)
            pmid = self._next_pmid()
            if pmid is None:
                self.cluster, self.item = saved
                self.errmsg = "global PMID space exhausted"
                return 0
            metric = Metric(name, pmid, tree, anon, expr if parsed_later else None)
            self.metrics.append(metric)
            self.by_name[name] = metric
            self.by_pmid[pmid] = metric
            return None

    def snapshot(self) -> List[Metric]:
        with self.lock:
            return list(self.metrics)

    # ---- __dminit
    def init(self, with_context: bool = True) -> None:
        """Register the anonymous metrics and load PCP_DERIVED_CONFIG, once. At 7.2 the
        configuration waits for the first context (with_context) and
        $PCP_DERIVED_CONTROL is applied with the anonymous metrics."""
        with self.lock:
            if self.need_init:
                self.need_init = False
                # a parse leaves no state behind when it succeeds: the known-good
                # expressions parse as if here and now only when none has failed before
                self.clean_start = not _scanner_in_matchinst()
                for name, oneline, helptext in _ANON:
                    if self.register(name, b"anon(PM_TYPE_U32)", anon=True,
                                     parsed_later=self.clean_start) is None:
                        self.by_name[name].oneline = oneline
                        self.by_name[name].helptext = helptext
                env = os.environ.get("PCP_DERIVED_CONTROL") if _CONTROL else None
                if env is not None:
                    # no context has derived metrics yet: context_limit fails
                    control.apply_controls(self, None, env.encode("utf-8", "surrogateescape"))
            if self.need_config and (with_context or not _CONTROL):
                self.need_config = False
                self._load_global_config()

    def _load_global_config(self) -> None:
        """PCP_DERIVED_CONFIG's files, else $PCP_VAR_DIR/config/derived."""
        path = os.environ.get("PCP_DERIVED_CONFIG")
        if path is None:
            default = "%s/config/derived" % (pmGetConfig("PCP_VAR_DIR") or "")
            if os.path.exists(default):
                path = default
        if path:
            self._load_config(path.encode("utf-8", "surrogateescape"))

    def _controls_unset(self) -> bool:
        """No control option given yet (7.2): the state a remembered load started from."""
        return (self.limit == control.UNLIMITED and not self.map2novalue
                and all(s == control.NOT_SET for s in self.control_state))

    def _load_config(self, path: bytes) -> None:
        """__dminit's load of the configuration (errors reported, never returned): from
        the remembered journal when the files read are the ones it was made from."""
        from pcp._libpcp.derived import config_cache  # pylint: disable=import-outside-toplevel

        files = config_files(path)
        # only from the start a remembered load had: no failed parse left the scanner
        # inside a matchinst(), no metric registered before (a --derived load), no
        # control option set, none in the files
        clean = (self.clean_start and self._controls_unset()
                 and all(m.anon for m in self.metrics)
                 and not (_CONTROL and any(isinstance(data, bytes) and b"#control" in data.lower()
                                           for _, data in files)))
        journal = config_cache.recall(path, files) if clean else None
        if journal is not None:
            for entry in journal:
                if len(entry) == 2:
                    self.register(entry[0], entry[1], parsed_later=True)
                else:
                    self.set_attribute(*entry)
            return
        journal = []
        for fname, data in files:
            if isinstance(data, bytes):
                loader = _ConfigFile(self, fname, data, journal=journal)
                loader.run()
                clean = clean and loader.clean
        if clean:
            config_cache.remember(path, files, journal)

    def set_attribute(self, name: bytes, attr: bytes, value: bytes) -> int:
        """setattr(): 0, or -1 no such metric, -2 unknown attribute, -3 already set."""
        metric = self.by_name.get(name)
        if metric is None:
            return -1
        if attr == b"oneline":
            if metric.oneline is not None:
                return -3
            metric.oneline = value
            return 0
        if attr == b"helptext":
            if metric.helptext is not None:
                return -3
            metric.helptext = value
            return 0
        return -2


REGISTRY = Registry()


def error_message(name: bytes, expr: bytes, pos: int, errmsg: Optional[str]) -> str:
    """pmRegisterDerivedMetric's message for an error at byte `pos` of `expr`."""
    head = b'Error: pmRegisterDerivedMetric("' + name + b'", ...)\n' + expr + b"\n"
    if pos == 0:
        text = head + b"^\n"
    else:
        text = head + b" " * max(abs(pos), 1) + b"^\n"
    out = text.decode("utf-8", "surrogateescape")
    if errmsg:
        out += errmsg + "\n"
    return out


# ---- configuration files (__dminit_component, __dminit_parse, __dminit_configfile)

def load_path(reg: Registry, path: bytes, recover: bool, context: Any = None) -> int:
    """Load a colon-separated list of files and directories; the number of metrics
    registered, or a negative errno (never, when `recover`). context: the current
    context with derived metrics, for 7.2's "#control context_limit" (None: none)."""
    total = 0
    parts = path.split(b":")
    if parts and parts[-1] == b"":
        parts.pop()
    for part in parts:
        sts = _load_component(reg, part, recover, context)
        if sts < 0:
            return sts
        total += sts
    return total


def config_files(path: bytes) -> List[Tuple[bytes, _TUnion[bytes, int]]]:
    """The files of a colon-separated list of files and directories, in the order libpcp
    reads them (a directory's entries in readdir's order, recursively): (name, contents)
    or, where a name cannot be read, (name, negative errno)."""
    parts = path.split(b":")
    if parts and parts[-1] == b"":
        parts.pop()
    out: List[Tuple[bytes, _TUnion[bytes, int]]] = []
    for part in parts:
        _collect(part, out)
    return out


def _collect(name: bytes, out: List[Tuple[bytes, _TUnion[bytes, int]]]) -> None:
    try:
        st = os.stat(name)
    except OSError as e:
        out.append((name, -(e.errno or 1)))
        return
    if stat.S_ISREG(st.st_mode):
        try:
            with open(name, "rb") as f:
                out.append((name, f.read()))
        except OSError as e:
            out.append((name, -(e.errno or 1)))
    elif stat.S_ISDIR(st.st_mode):
        try:
            entries = [e.name for e in os.scandir(name)]
        except OSError as e:
            out.append((name, -(e.errno or 1)))
            return
        for entry in entries:
            _collect(name + b"/" + entry, out)


def _load_component(reg: Registry, name: bytes, recover: bool, context: Any) -> int:
    """__dminit_component: the metrics registered from a file or directory, or (unless
    `recover`) the first error met."""
    sts = 0
    files: List[Tuple[bytes, _TUnion[bytes, int]]] = []
    _collect(name, files)
    for fname, data in files:
        if isinstance(data, int):
            if not recover:
                return data
            continue
        sts += _ConfigFile(reg, fname, data, context).run()
    return 0 if recover else sts


def _isspace(c: int) -> bool:
    return c in (32, 9, 10, 11, 12, 13)


def _checkname(name: bytes) -> bool:
    first = True
    for c in name:
        if first:
            first = False
            if not (65 <= c <= 90 or 97 <= c <= 122):
                return False
        elif 65 <= c <= 90 or 97 <= c <= 122 or 48 <= c <= 57 or c == 95:
            continue
        elif c == 46:
            first = True
        else:
            return False
    return True


def _out(fname: bytes, lineno: int, text: str) -> None:
    pmprintf("[%s:%d] %s" % (fname.decode("utf-8", "surrogateescape"), lineno, text))


def _s(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


class _ConfigFile:
    """One configuration file: lines "<name> = <expr>" and "<name>(<attr>) = <value>",
    read as libpcp reads them (a last line with no newline is ignored). `journal`, when
    given, gets what was registered: (name, expression) and (name, attribute, value);
    `clean` stays True while nothing was reported."""

    def __init__(self, reg: Registry, fname: bytes, data: bytes, context: Any = None,
                 journal: Optional[List[tuple]] = None) -> None:
        self.reg = reg
        self.context = context
        self.journal = journal
        self.clean = True
        self.fname = fname
        self.data = data
        self.pos = 0
        self.lineno = 1
        self.deferred = 0       # 6.3's clineno: lines to count once the line is done
        self.count = 0

    def _getc(self) -> int:
        if self.pos >= len(self.data):
            return -1
        c = self.data[self.pos]
        self.pos += 1
        return c

    def _physical_line(self) -> Optional[bytes]:
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            return None                      # a last line with no newline: never read
        line = self.data[self.pos:end]
        self.pos = end + 1
        return line

    def run(self) -> int:
        # libpcp reads a character at a time; a line's "=" is its first, and "(" and
        # ")" count only before it: found here a line at a time, the same positions.
        # A quoted attribute value may read on over the next lines (_quoted's _getc).
        # From 6.3 a line ending in "\" goes on on the next one (the "\" and the
        # newline dropped; an empty line ends it), and errors name the first line.
        while True:
            buf = self._physical_line()
            if buf is None:
                break
            line = buf
            while _CONTINUATION and line.endswith(b"\\"):
                line = self._physical_line()
                if line is None:
                    return self.count
                buf = buf[:-1] + line
                self.deferred += 1
            if buf and buf[0] != 35:         # not empty, not a "#" comment
                eq = buf.find(b"=")
                head = buf if eq == -1 else buf[:eq]
                self._line(buf, eq, head.find(b"("), head.find(b")"))
            elif _CONTROL and buf[:8].lower() == b"#control":
                # the options start after "#control" and one more character, whatever
                # it is (after a bare "#control" libpcp reads what an earlier line left
                # in its buffer: here, nothing)
                control.apply_controls(self.reg, self.context, buf[9:], self.fname,
                                       self.lineno)
            self.lineno += 1 + self.deferred
            self.deferred = 0
        return self.count

    def _error(self, text: str) -> None:
        self.clean = False
        _out(self.fname, self.lineno, text)
        pmflush()

    def _line(self, buf: bytes, eq: int, lp: int, rp: int) -> None:
        if eq == -1:
            self._error("Error: pmLoadDerivedConfig: missing ``='' after derived metric name\n%s\n"
                        % _s(buf))
            return
        name = buf[:lp] if lp != -1 else buf[:eq]
        name = name.strip(b" \t\n\v\f\r")
        if not name:
            self._error("Error: pmLoadDerivedConfig: derived metric name missing\n%s\n" % _s(buf))
            return
        if not _checkname(name):
            self._error("Error: pmLoadDerivedConfig: illegal derived metric name (%s)\n" % _s(name))
            return
        if lp >= 0 and rp == -1:
            self._error("Error: pmLoadDerivedConfig: missing ')' after attribute\n%s\n" % _s(buf))
            return
        if rp >= 0 and lp == -1:
            self._error("Error: pmLoadDerivedConfig: missing '(' before attribute\n%s\n" % _s(buf))
            return
        if lp == -1:
            self._expression(buf, eq, name)
        else:
            self._attribute(buf, eq, lp, rp, name)

    def _expression(self, buf: bytes, eq: int, name: bytes) -> None:
        start = eq + 1
        while start < len(buf) and _isspace(buf[start]):
            start += 1
        if start >= len(buf):
            self._error("Error: pmLoadDerivedConfig: expression missing\n%s\n" % _s(buf))
            return
        pos = self.reg.register(name, buf[start:])
        if pos is None:
            self.count += 1
            if self.journal is not None:
                self.journal.append((name, buf[start:]))
            return
        self.clean = False
        at = start + pos                     # the error's offset within buf
        rest = buf[eq + 1:]
        marks = bytes((ord("^") if eq + 1 + i == at else (c if _isspace(c) else 32))
                      for i, c in enumerate(rest))
        _out(self.fname, self.lineno,
             "Error: pmRegisterDerived(%s, ...) syntax error\n" % _s(name))
        pmprintf("%s\n" % _s(rest))
        pmprintf("%s\n" % _s(marks))
        if self.reg.errmsg is not None:
            pmprintf("%s\n" % self.reg.errmsg)
        pmflush()

    def _attribute(self, buf: bytes, eq: int, lp: int, rp: int, name: bytes) -> None:
        # the attribute runs from after "(" to ")" (or, when ")" came first, to "=")
        attr = buf[lp + 1:rp if rp > lp else eq].strip(b" \t\n\v\f\r")
        if not attr:
            self._error("Error: pmLoadDerivedConfig: attribute name missing\n%s\n" % _s(buf))
            return
        vp = eq + 1
        while vp < len(buf) and _isspace(buf[vp]):
            vp += 1
        delim = 0
        if vp < len(buf) and buf[vp] in (ord('"'), ord("'")):
            delim = buf[vp]
            vp += 1
        if vp >= len(buf):
            self._error("Error: pmLoadDerivedConfig: attribute value missing\n%s\n" % _s(buf))
            return
        rest = buf[vp:]
        if delim == 0:
            value: Optional[bytes] = rest
        else:
            value = self._quoted(rest, delim)
        if value is None:
            return
        sts = self.reg.set_attribute(name, attr, value)
        if sts == 0 and self.journal is not None:
            self.journal.append((name, attr, value))
        if sts < 0:
            self.clean = False
            if sts == -1:
                text = "cannot set attribute, derived metric (%s) not defined" % _s(name)
            elif sts == -2:
                text = "attribute (%s) is unknown for metric (%s)" % (_s(attr), _s(name))
            else:
                text = "duplicate value for attribute (%s) of metric (%s)" % (_s(attr), _s(name))
            _out(self.fname, self.lineno, "Error: pmLoadDerivedConfig: %s\n" % text)
            pmprintf("%s\n" % _s(buf))
            pmflush()

    def _quoted(self, rest: bytes, delim: int) -> Optional[bytes]:
        """A delimited value with \\ escapes, possibly over several lines."""
        # libpcp reads the rest of the line, its newline, then on in the file, a
        # character at a time; here the same stream is searched for the delimiter and
        # the backslashes (an escaped character is kept, an escaped newline dropped).
        stream = rest + b"\n" + self.data[self.pos:]
        out = bytearray()
        i = 0
        c = -1
        while True:
            at_delim = stream.find(delim, i)
            at_escape = stream.find(92, i, at_delim if at_delim >= 0 else len(stream))
            if at_escape >= 0:
                out += stream[i:at_escape]
                if at_escape + 1 >= len(stream):
                    i = len(stream)              # an escape, then the end of the file
                    break
                if stream[at_escape + 1] != 10:
                    out.append(stream[at_escape + 1])
                i = at_escape + 2
                continue
            if at_delim < 0:
                out += stream[i:]
                i = len(stream)
                break
            out += stream[i:at_delim]
            i = at_delim + 1
            c = delim
            break
        xtralines = stream.count(b"\n", 0, i)
        if i > len(rest) + 1:
            self.pos += i - len(rest) - 1
        i = min(i, len(rest))
        if xtralines > 1:
            if _CONTINUATION:
                self.deferred += xtralines - 1
            else:
                self.lineno += xtralines - 1
        if c < 0:
            self._error("Error: pmLoadDerivedConfig: missing termination (%c) for value\n"
                        % delim)
            return None
        tail = rest[i:]
        if tail:
            stripped = tail.lstrip(b" \t\n\v\f\r")
            if stripped:
                self._error("Warning: pmLoadDerivedConfig: extra text (%s) after attribute "
                            "value will be ignored\n" % _s(stripped))
        elif xtralines != 0:
            c = self._getc()
            while c >= 0 and c != ord("\n"):
                c = self._getc()
                if not _isspace(c):
                    break
            if c >= 0 and c != ord("\n"):
                extra = bytearray([c])
                c = self._getc()
                while c >= 0 and c != ord("\n"):
                    extra.append(c)
                    c = self._getc()
                self._error("Warning: pmLoadDerivedConfig: extra text (%s) after attribute "
                            "value will be ignored\n" % _s(bytes(extra)))
        return bytes(out)
